"""The diagonal (white-feature) reduction equals the full structured computation (docs/papers/paofed.md#structured)."""

import numpy as np
import pytest

from theory.msd import (
    PAOFedInstance,
    diagonal_msd_steady_state,
    diagonal_msd_transient,
    msd_steady_state,
    msd_transient,
    reference_instance,
    scalar_problems,
)
from verify.tolerance import GMRES_RTOL


@pytest.fixture(scope="module")
def diag_instance():
    rng = np.random.default_rng(1)
    R = np.stack([np.diag(rng.choice([0.5, 1.0, 1.5], 4)) for _ in range(3)])
    return PAOFedInstance(K=3, D=4, l_max=2, m=2, selection="window", p=np.array([0.9, 0.5, 0.3]), delta=0.3,
                          alpha=np.array([1.0, 0.5, 0.25]), sigma2_eta=np.array([0.01, 0.02, 0.03]), R=R,
                          w_star=rng.standard_normal(4), mu=0.1)


def test_steady_state_and_transient_match(diag_instance):
    full = msd_steady_state(diag_instance, "seed", rtol=GMRES_RTOL).msd
    red, residual = diagonal_msd_steady_state(diag_instance, method="bicgstab", rtol=GMRES_RTOL)
    # 10 rtol: the solver's acceptance limit; two solves at GMRES_RTOL times condition numbers ~1e2 -> 1e-11
    assert residual <= 1e-12 and abs(red / full - 1) <= 1e-11
    a = msd_transient(diag_instance, 60, "seed")
    b = diagonal_msd_transient(diag_instance, 60)
    assert np.max(np.abs(a - b)) <= 1e-14  # the same recursion restricted to the diagonal: rounding only


def test_identical_coordinates_collapse():
    inst = PAOFedInstance(K=2, D=5, l_max=1, m=2, selection="subset", p=np.array([0.9, 0.4]), delta=0.3,
                          alpha=np.array([1.0, 0.5]), sigma2_eta=np.array([0.01, 0.02]),
                          R=np.stack([np.eye(5), 2 * np.eye(5)]), w_star=np.arange(5.0), mu=0.1)
    probs = scalar_problems(inst)
    assert len(probs) == 1 and probs[0].coordinates == (0, 1, 2, 3, 4)
    assert abs(diagonal_msd_steady_state(inst, method="gmres", rtol=GMRES_RTOL)[0]
               / msd_steady_state(inst, "seed", rtol=GMRES_RTOL).msd - 1) <= 1e-11  # as above


def test_refusals():
    with pytest.raises(ValueError, match="R must be diagonal"):
        scalar_problems(reference_instance())
    inst = PAOFedInstance(K=2, D=2, l_max=0, m=1, selection="subset", p=np.array([0.9, 0.4]), delta=0.3,
                          alpha=np.array([1.0]), sigma2_eta=np.array([0.01, 0.02]), R=np.stack([np.eye(2)] * 2),
                          w_star=np.ones(2), mu=0.1)
    with pytest.raises(ValueError, match="model must be 'seed'"):
        scalar_problems(inst, "exact")
