"""Route choice refuses, at once, a route whose memory would exceed the budget (per-client R_k at scale)."""

import numpy as np
import pytest

from theory.msd.classes import PEAK_STATES, class_unknowns
from theory.msd.classes_rff import rff_client_covariances
from theory.msd.instance import PAOFedInstance
from theory.msd.routes import MEMORY_BUDGET, choose_route, route_peak_bytes


def _per_client(K=8, D=6, l_max=2):
    R, s2 = rff_client_covariances(D, K, np.random.default_rng(1), ridge=1e-2)
    return PAOFedInstance(K=K, D=D, l_max=l_max, m=2, selection="window", p=np.linspace(0.2, 0.8, K), delta=0.2,
                          alpha=0.2 ** np.arange(l_max + 1), sigma2_eta=s2, R=R, w_star=np.ones(D) / D, mu=0.05)


def test_a_route_that_would_not_fit_is_refused_with_its_size_and_the_classes():
    inst = _per_client()
    need = route_peak_bytes(inst, "structured")
    assert need == pytest.approx(38 * 8 * inst.n_blocks * inst.D * (inst.n_blocks * inst.D + 1) / 2)
    assert choose_route(inst, memory_budget=2 * need) == "structured"
    assert choose_route(inst, memory_budget=None) == "structured"
    with pytest.raises(ValueError, match=r"structured route would need about .* GB .* 8 clients form 8 classes"):
        choose_route(inst, memory_budget=need / 2)
    with pytest.raises(ValueError, match="classes route would need"):
        choose_route(inst, "classes", memory_budget=route_peak_bytes(inst, "classes") / 2)


def test_the_paper_federation_in_four_classes_fits_the_default_budget():
    """Four classes at K = 256, D = 200, l_max = 10: 4.6 reduced states of 1.0036e8 scalars (3.7 GB)."""
    need = PEAK_STATES * 8.0 * class_unknowns(10, 4, 200)[1]
    assert 3.6e9 < need < 3.8e9 < MEMORY_BUDGET


@pytest.mark.parametrize("method", ["gmres", "gmres-dr"])
def test_the_structured_solve_refuses_a_basis_beyond_the_budget(monkeypatch, method):
    """Called directly, msd_steady_state allocated its Krylov basis whatever its size: a per-client federation at the
    paper's K = 256, l_max = 10 with D = 2 (N = 5,634) asked numpy for 23.8 GB and died with a MemoryError. Now a
    ValueError names restart, the size and the largest restart that fits (here with the budget lowered)."""
    import theory.msd.structured as structured
    from theory.msd import reference_instance
    from theory.msd.structured import msd_steady_state

    assert structured.MEMORY_BUDGET == MEMORY_BUDGET  # one budget: theory.msd.routes re-exports it
    monkeypatch.setattr(structured, "MEMORY_BUDGET", 1e6)
    with pytest.raises(ValueError, match=r"^restart: the Krylov basis of \d+ packed states of N = \d+ .* more than "
                                         r"the 0.001 GB budget; pass a smaller restart"):
        msd_steady_state(reference_instance(0.2), "seed", method=method)
