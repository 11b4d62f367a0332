"""rho(F) on the classes route (refined grouping) and the exact model's positive-definiteness certificate."""

from functools import cache

import numpy as np
import pytest

from theory.msd import PAOFedInstance
from theory.msd.classes_stability import classes_spectral_radius, classes_stability_certificate
from theory.msd.instance import toeplitz_covariances
from theory.msd.naive import spectral_radius_naive
from verify.tolerance import MSD_AGREEMENT_RTOL

#: two classes of four (the refinement splits each into 1 + 1 + 2): N = 34, the dense F has 1156^2 entries
LABELS = np.array([0, 1, 0, 1, 1, 0, 0, 1])
#: all eigenvalues by LAPACK on both sides: agreement to a few hundred ulps of rho
EIG_RTOL = 1024 * np.finfo(float).eps


@cache
def _naive_rho(mu, p, model):
    return spectral_radius_naive(_instance(mu, p), model)


def _instance(mu, p=(0.8, 0.3), selection="window"):
    D, l_max = 2, 1
    return PAOFedInstance(K=8, D=D, l_max=l_max, m=1, selection=selection, p=np.array(p)[LABELS], delta=0.3,
                          alpha=0.5 ** np.arange(l_max + 1), sigma2_eta=np.full(8, 0.01),
                          R=toeplitz_covariances(np.array([0.3, -0.6])[LABELS], D), w_star=np.ones(2), mu=mu)


@pytest.mark.parametrize("model,mu", [("seed", 0.1), ("exact", 0.1), ("exact", 0.5)])   # stable; exact unstable
def test_spectral_radius_equals_dense(model, mu):
    rho, cert = classes_spectral_radius(_instance(mu), model)
    assert cert == 0.0                                      # dense eigenvalues at this size
    assert rho == pytest.approx(_naive_rho(mu, (0.8, 0.3), model), rel=EIG_RTOL)


@pytest.mark.parametrize("mu", [0.1, 0.5])       # rho(F_exact) = 0.875 / 1.128 (the dense radii cached above)
def test_certificate_decides_like_rho(mu):
    p = (0.8, 0.3)
    inst = _instance(mu, p=p)
    rho = _naive_rho(mu, p, "exact")
    try:
        cert = classes_stability_certificate(inst, rtol=1e-12)   # below MSD_AGREEMENT_RTOL: a clean S
    except ValueError:
        assert rho >= 1.0                                   # no converged solve only beyond the threshold
        return
    assert cert.stable == (rho < 1.0) and cert.perturbation < 1.0 and cert.residual <= MSD_AGREEMENT_RTOL
