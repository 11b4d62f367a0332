"""RFF feature covariances (theory.msd.classes_rff) and the classes route on them equal to the unreduced route."""

import numpy as np
import pytest

from reference_impl.paofed.data import rff_features
from theory.msd import PAOFedInstance, msd_steady_state
from theory.msd.classes import class_grouping, classes_msd_steady_state, expand_classes
from theory.msd.classes_rff import LITERAL_LAGS, rff_covariance, rff_group_covariances
from verify.tolerance import GMRES_RTOL, MSD_AGREEMENT_RTOL

#: Monte-Carlo draws for the closed form; each z_i z_j lies in [-2/D, 2/D], so its standard error is <= 2/(D sqrt(n))
DRAWS = 200_000
#: six standard errors: a per-entry failure probability ~1e-9, union over the D^2 = 25 entries still negligible
SIGMAS = 6.0


def test_closed_form_equals_monte_carlo():
    rng = np.random.default_rng(0)
    D, L = 5, 4                                                     # small enough for a tight Monte-Carlo check
    V, b = rng.standard_normal((D, L)) / 1.5, rng.uniform(0.0, 2.0 * np.pi, D)
    h = np.abs(np.subtract.outer(np.asarray(LITERAL_LAGS), np.asarray(LITERAL_LAGS)))
    mean, cov = np.full(L, 0.1), 0.7 * 0.6 ** h                  # an AR(1) lag vector: sigma_u^2 theta^|h|
    x = rng.multivariate_normal(mean, cov, size=DRAWS)
    z = rff_features(x[None], V[None], b[None])[0]
    emp = z.T @ z / DRAWS
    R = rff_covariance(V, b, mean, cov)
    assert np.max(np.abs(emp - R)) <= SIGMAS * 2.0 / (D * np.sqrt(DRAWS))
    assert np.min(np.linalg.eigvalsh(R)) >= -1e-12 * np.max(np.abs(R))   # PSD up to rounding of the cosines


def test_bad_input():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="ridge"):
        rff_group_covariances(4, 2, rng, ridge=-1.0)
    with pytest.raises(ValueError, match="sigma_kappa"):
        rff_group_covariances(4, 2, rng, sigma_kappa=0.0)
    with pytest.raises(ValueError, match="V must be"):
        rff_covariance(np.ones((3, 2)), np.ones(2), np.zeros(2), np.eye(2))


@pytest.mark.parametrize("model", ["seed", "exact"])
def test_classes_route_equals_structured_on_rff(model):
    """K = 6 in two groups of three sharing an RFF covariance (sigma_kappa = 5, ridge 1e-2 as the benchmark)."""
    D, l_max = 4, 2                                                 # N = 76: the unreduced route is exact and fast
    R, s2 = rff_group_covariances(D, 2, np.random.default_rng(3), ridge=1e-2)
    labels = np.array([0, 1, 0, 1, 1, 0])
    inst = PAOFedInstance(K=6, D=D, l_max=l_max, m=1, selection="window", p=np.array([0.8, 0.3])[labels], delta=0.3,
                          alpha=0.5 ** np.arange(l_max + 1), sigma2_eta=s2[labels], R=R[labels], w_star=np.ones(D),
                          mu=0.4)
    ref = msd_steady_state(inst, model, rtol=GMRES_RTOL)
    g = class_grouping(inst)
    for method in ("dense", "bicgstab"):
        red = classes_msd_steady_state(inst, model, method=method, rtol=GMRES_RTOL)
        assert red.residual <= 10 * GMRES_RTOL
        assert red.msd == pytest.approx(ref.msd, rel=MSD_AGREEMENT_RTOL)
        C = expand_classes(inst, red.state, g)
        assert np.max(np.abs(C - ref.C)) <= MSD_AGREEMENT_RTOL * np.max(np.abs(ref.C))
