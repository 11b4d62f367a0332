"""Property test: Monte-Carlo hockey-stick divergence vs the exact Gaussian privacy profile."""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats

from theory.privacy import gaussian_delta_exact
from verify.budget import examples
from verify.dp.privacy_profile import hockey_stick_moments


@pytest.mark.claim("dp.gaussian_privacy_profile")
@settings(max_examples=examples("many"))
@given(mu=st.floats(min_value=0.3, max_value=3.0), quantile=st.floats(min_value=0.05, max_value=0.8),
       seed=st.integers(0, 2**30))
@example(mu=1.0, quantile=0.5, seed=0)
def test_monte_carlo_matches_the_exact_profile(mu, quantile, seed):
    """Property: for mu in [0.3, 3] and eps chosen so that delta is moderate, the Monte-Carlo estimate of
    E[(1 - e^(eps - Z))_+] lies within a two-sided 1 - 1e-6 interval of the Balle-Wang closed form."""
    eps = quantile * (mu * mu / 2.0 + 2.0 * mu)   # inside the bulk of the privacy loss N(mu^2/2, mu^2)
    n = 200_000
    (s1, s2), = hockey_stick_moments(np.random.default_rng(seed), n, grid=((mu, (eps,)),))
    mean = s1 / n
    se = math.sqrt(max(s2 / n - mean * mean, 0.0) / (n - 1))
    assert abs(mean - gaussian_delta_exact(eps, mu)) <= stats.norm.ppf(1 - 0.5e-6) * se
