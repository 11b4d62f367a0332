"""The white-feature reduction (R_k = v_k I) equals the unreduced structured route, component by component."""

import numpy as np
import pytest

from theory.msd import (
    PAOFedInstance,
    analysis_moments,
    apply_F,
    msd_steady_state,
    reference_instance,
    spectral_radius_F,
)
from theory.msd.white import (
    apply_F_component,
    is_white,
    white_components,
    white_msd_steady_state,
    white_spectral_radius,
)
from verify.tolerance import GMRES_RTOL, MSD_AGREEMENT_RTOL


def _white(selection, D=5, K=3, l_max=2, m=2, mu=0.1):
    rng = np.random.default_rng(D * 7 + K)
    return PAOFedInstance(K=K, D=D, l_max=l_max, m=m, selection=selection, p=np.linspace(0.9, 0.3, K), delta=0.3,
                          alpha=0.5 ** np.arange(l_max + 1), sigma2_eta=np.linspace(0.01, 0.03, K),
                          R=np.stack([v * np.eye(D) for v in np.linspace(0.5, 1.5, K)]),
                          w_star=rng.standard_normal(D), mu=mu)


def _basis(comp, D, Pi):
    """A basis matrix E of the component (see the module's table)."""
    if comp.name == "identity":
        return np.eye(D)
    if comp.name == "diagonal":
        E = np.zeros((D, D))
        E[0, 0], E[1, 1] = 1.0, -1.0
        return E
    i, j = np.argwhere(np.isclose(np.triu(Pi, 1), comp.pi) & (np.triu(np.ones((D, D)), 1) > 0))[0]
    E = np.zeros((D, D))
    E[i, j] = 1.0
    E[j, i] = 1.0 if comp.name.startswith("symmetric") else -1.0
    return E


@pytest.mark.parametrize("selection", ["subset", "window", "bernoulli"])
@pytest.mark.parametrize("model", ["seed", "exact"])
def test_component_operator_is_the_restriction_of_F(selection, model):
    """F(S (x) E) = F_c(S) (x) E for a basis matrix E of every component, random non-symmetric S."""
    inst = _white(selection, D=6, m=3)
    m = analysis_moments(inst)
    rng = np.random.default_rng(0)
    S = rng.standard_normal((m.n_blocks, m.n_blocks))
    comps = white_components(m, "exact")  # unmerged enough to test every factor
    assert sum(c.dimension for c in comps) == m.D ** 2
    for comp in comps:
        E = _basis(comp, m.D, m.Pi)
        full = apply_F(m, np.kron(S, E), model)
        red = np.kron(apply_F_component(m, comp, S, model), E)
        assert np.max(np.abs(full - red)) <= 1e-13 * np.max(np.abs(full))  # same products, other order: ~100 ulps


@pytest.mark.parametrize("selection", ["subset", "window", "bernoulli"])
@pytest.mark.parametrize("model", ["seed", "exact"])
def test_msd_and_rho_equal_the_structured_route(selection, model):
    inst = _white(selection)
    full = msd_steady_state(inst, model, rtol=GMRES_RTOL)
    red = white_msd_steady_state(inst, model, rtol=GMRES_RTOL)
    assert red.residual <= 1e-12  # the solver's own acceptance limit, 10 rtol
    assert abs(red.msd / full.msd - 1) <= MSD_AGREEMENT_RTOL
    C = np.kron(red.S, np.eye(inst.D))
    assert np.max(np.abs(C - full.C)) <= MSD_AGREEMENT_RTOL * np.max(np.abs(full.C))
    rho_full = spectral_radius_F(inst, model)
    rho_red, _ = white_spectral_radius(inst, model)
    assert abs(rho_red - rho_full) <= 1e-10  # two routes' eigen-solves (ARNOLDI_TOL) x conditioning


def test_rho_is_attained_off_the_noise_component():
    """With a large step the exact model's radius can come from a non-identity component; still equal."""
    inst = _white("window", D=4, m=3, mu=0.45)
    rho_full = spectral_radius_F(inst, "exact")
    rho_red, _ = white_spectral_radius(inst, "exact")
    assert abs(rho_red - rho_full) <= 1e-10  # as above


def test_refuses_non_white_and_counts_components():
    assert not is_white(reference_instance())
    with pytest.raises(ValueError, match="R must be white"):
        white_components(reference_instance())
    inst = _white("subset", D=4)
    # uniform subsets, D = 4 (white_components docstring): four exact components, two of the seed's; each sums to D^2
    assert [c.dimension for c in white_components(inst, "seed")] == [4, 12]
    assert [c.dimension for c in white_components(inst, "exact")] == [1, 3, 6, 6]


def test_capped_solve_reports_non_convergence():
    inst = _white("subset", D=4, K=4, l_max=2)
    with pytest.raises(ValueError, match="not solved"):
        white_msd_steady_state(inst, "exact", rtol=1e-14, maxiter=2)  # 2 iterations cannot reach 1e-14
