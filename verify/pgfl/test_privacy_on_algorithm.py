"""Property test: the reference Algorithm 2 releases noise with the calibrated variance."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from reference_impl.pgfl import PGFLConfig, synthetic_regression
from verify.budget import examples
from verify.pgfl.privacy_on_algorithm import released_noise
from verify.tolerance import CHI2_ALPHA


@pytest.mark.claim("pgfl.privacy_on_algorithm")
@settings(max_examples=examples("some"))
@given(seed=st.integers(0, 2**30), zeta=st.floats(min_value=0.8, max_value=1.0), phi0=st.floats(min_value=1e-4,
                                                                                                max_value=1.0),
       scheduled=st.integers(1, 4), convention=st.sampled_from(["I", "II"]))
def test_released_noise_is_calibrated(seed, zeta, phi0, scheduled, convention):
    """Property: for any phi0 > 0, zeta in (0, 1], scheduling and noise convention, the normalised noise of all
    releases passes a two-sided chi-square test at alpha = 1e-6 (Theorem III's variance is what is injected)."""
    problem = synthetic_regression(np.random.default_rng(seed), servers=2, clients_per_server=4, d=3, clusters=2)
    cfg = PGFLConfig(rho=0.3 * problem.max_curvature, algorithm="alg2", phi0=phi0, zeta=zeta, C=0.5,
                     scheduled=scheduled, noise_convention=convention)
    noise, releases = released_noise(problem, cfg, 10, seed, 10)
    assert releases.sum() == 10 * 10 * 2 * min(scheduled, 4)
    lo, hi = stats.chi2.ppf([CHI2_ALPHA / 2, 1 - CHI2_ALPHA / 2], noise.size)
    assert lo <= float(np.sum(noise**2)) <= hi
