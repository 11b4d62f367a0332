"""Route selection, capped solves, small steps and the fast certified thresholds (theory.msd.routes)."""

import numpy as np
import pytest

from theory.msd import (
    PAOFedInstance,
    mean_square_threshold,
    mean_threshold,
    msd_steady_state,
    msd_steady_state_naive,
    reference_instance,
    spectral_radius_F,
)
from theory.msd.routes import (
    STABILITY_MARGIN,
    choose_route,
    fast_threshold_bracket,
    mean_square_analysis,
    mean_threshold_fast,
)
from verify.tolerance import THRESHOLD_RTOL


@pytest.mark.parametrize("model", ["seed", "exact"])
def test_fast_threshold_is_certified_and_matches_the_slow_search(model):
    inst = reference_instance()
    slow = mean_square_threshold(inst, model)
    rhos = []
    fast = fast_threshold_bracket(lambda mu: rhos.append(mu) or spectral_radius_F(inst, model, mu=mu),
                                  inst.lambda_max, start=0.5 / inst.lambda_max)
    assert fast.rho_lo < 1.0 - STABILITY_MARGIN and fast.rho_hi >= 1.0 - STABILITY_MARGIN
    assert max(fast.lo, slow.lo) <= min(fast.hi, slow.hi) + 2 * THRESHOLD_RTOL * slow.hi  # the brackets overlap
    assert min(rhos) >= 0.25 / inst.lambda_max  # never evaluated at tiny mu


def test_mean_threshold_fast_matches():
    inst = reference_instance()
    a, b = mean_threshold(inst), mean_threshold_fast(inst)
    assert max(a.lo, b.lo) <= min(a.hi, b.hi) + 2 * THRESHOLD_RTOL * a.hi  # the brackets overlap


@pytest.mark.parametrize("mu", [1e-4, 0.003 / 3.1029710])
def test_small_mu_answers_and_equals_naive(mu):
    """A valid small step answers (capped Krylov, naive LU otherwise); MSD scales like mu."""
    inst = reference_instance().with_mu(mu)
    for model in ("seed", "exact"):
        res = mean_square_analysis(inst, model)
        naive = msd_steady_state_naive(inst, model, solver="sparse")
        # at small mu I - F is ill-conditioned (condition ~ 1/mu): 10 x MSD_AGREEMENT_RTOL
        assert res.msd is not None and abs(res.msd / naive - 1) <= 1e-9
    half = mean_square_analysis(reference_instance().with_mu(mu / 2), "exact").msd
    assert 1.8 <= res.msd / half <= 2.2  # MSD ~ mu for small mu: ratio 2 within 10 %


def test_capped_gmres_raises_with_a_message():
    inst = reference_instance(0.1)
    with pytest.raises(ValueError, match="not solved"):
        msd_steady_state(inst, "exact", rtol=1e-14, maxiter=3, restart=3, refinements=0)  # 3 steps cannot reach 1e-14


def test_singular_R_has_no_certified_stable_step():
    """All-ones R: rho(F) = 1 for every mu (directions outside range(R) never contract)."""
    K, D = 2, 2
    inst = PAOFedInstance(K=K, D=D, l_max=0, m=1, selection="subset", p=np.array([0.9, 0.5]), delta=0.3,
                          alpha=np.array([1.0]), sigma2_eta=np.array([0.01, 0.02]),
                          R=np.ones((K, D, D)), w_star=np.ones(D), mu=0.01)
    res = mean_square_analysis(inst, "exact")
    assert res.msd is None and res.threshold.lo == 0.0


def test_route_choice():
    inst = reference_instance()
    assert choose_route(inst) == "structured"
    white = PAOFedInstance(K=2, D=3, l_max=1, m=2, selection="subset", p=np.array([0.9, 0.5]), delta=0.3,
                           alpha=np.array([1.0, 0.5]), sigma2_eta=np.array([0.01, 0.02]),
                           R=np.stack([np.eye(3), 2 * np.eye(3)]), w_star=np.ones(3), mu=0.1)
    assert choose_route(white) == "white"
    with pytest.raises(ValueError, match="needs white"):
        choose_route(inst, "white")
    res = mean_square_analysis(white, "exact")
    assert res.route == "white" and abs(res.msd / msd_steady_state(white, "exact", rtol=1e-13).msd - 1) <= 1e-10


@pytest.mark.parametrize("model", ["seed", "exact"])
def test_consensus_start_finds_the_top_eigenvalue(model):
    """The structured route's cold Krylov start (consensus covariance + identity + generic) gives rho(F) of the explicit
    F, at the threshold search's first step and at a small step, on Toeplitz clients (packed size 3,081: Krylov)."""
    from scipy.sparse import linalg as spla

    from theory.msd.expectations import analysis_moments
    from theory.msd.instance import toeplitz_covariances
    from theory.msd.naive import f_matrix
    from theory.msd.routes import consensus_start, threshold_start, warm_spectral_radius
    from theory.msd.structured import SymmetricPacking

    inst = PAOFedInstance(K=4, D=6, l_max=2, m=3, selection="subset", p=np.array([0.9, 0.6, 0.4, 0.2]), delta=0.3,
                          alpha=0.5 ** np.arange(3), sigma2_eta=np.full(4, 0.01),
                          R=toeplitz_covariances(np.array([0.1, 0.3, 0.5, 0.7]), 6), w_star=np.ones(6), mu=0.01)
    m = analysis_moments(inst)
    start = consensus_start(m, SymmetricPacking(m.N))
    assert start @ SymmetricPacking(m.N).pack(np.eye(m.N)) > 0  # overlaps every PD (Perron) direction
    for mu in (threshold_start(m, model), 0.02 / m.lambda_max):
        radius = warm_spectral_radius(m, model)(mu)
        F = f_matrix(m, model, mu, dense=False)
        dense = abs(spla.eigs(F, k=1, which="LM", return_eigenvectors=False, tol=1e-13)[0])
        assert abs(radius - dense) <= 1e-9 * dense  # both solved to 1e-10 Ritz residual or better
