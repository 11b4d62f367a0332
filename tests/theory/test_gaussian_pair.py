"""theory.privacy.gaussian_pair: exact divergence of two isotropic Gaussians, against quadrature and Monte Carlo."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from theory.privacy.conversions import gaussian_delta_exact
from theory.privacy.gaussian_pair import gaussian_pair_delta, gaussian_pair_delta_one_way


def _quadrature(m1, s1, m2, s2, eps):
    def integrand(y):
        return max(0.0, stats.norm.pdf(y, m1, s1) - math.exp(eps) * stats.norm.pdf(y, m2, s2))
    lo, hi = min(m1, m2) - 40 * max(s1, s2), max(m1, m2) + 40 * max(s1, s2)
    # +-40 sigma holds all but ~1e-300 of the mass; quad to absolute 1e-13, four decades below the 1e-9 compared
    return integrate.quad(integrand, lo, hi, points=[m1, m2], limit=500, epsabs=1e-13)[0]


@pytest.mark.parametrize("m1, s1, m2, s2, eps", [(0.0, 1.0, 0.3, 1.9, 1.0), (0.2, 2.0, -0.1, 0.7, 0.5),
                                                 (0.0, 1.0, 0.0, 1.0001, 0.0), (0.0, 0.04, 0.0036, 0.076, 0.5),
                                                 (1.0, 1.0, 0.0, 3.0, 2.0), (0.0, 1.0, 2.0, 1.0, 0.3)])
def test_one_dimension_matches_quadrature(m1, s1, m2, s2, eps):
    assert gaussian_pair_delta_one_way([m1], s1, [m2], s2, eps) == pytest.approx(_quadrature(m1, s1, m2, s2, eps),
                                                                                 abs=1e-9)  # quad's accuracy x1e4


def test_three_dimensions_match_monte_carlo():
    rng = np.random.default_rng(0)
    m1, m2, s1, s2, eps = np.array([0.1, 0.0, 0.2]), np.array([0.0, 0.3, 0.0]), 1.0, 1.5, 0.7
    y = rng.normal(size=(400_000, 3)) * s1 + m1  # 4e5 draws: standard error 2.2e-4 on delta ~ 0.1
    loss = (-((y - m1) ** 2).sum(1) / (2 * s1**2) + ((y - m2) ** 2).sum(1) / (2 * s2**2) + 3 * math.log(s2 / s1))
    samples = np.maximum(0.0, 1.0 - np.exp(eps - loss))
    se = samples.std() / math.sqrt(samples.size)
    assert abs(gaussian_pair_delta_one_way(m1, s1, m2, s2, eps) - samples.mean()) <= 5 * se  # false alarm < 1e-6


def test_equal_variances_reduce_to_the_gaussian_profile_and_pair_is_symmetric():
    assert gaussian_pair_delta([0.0, 0.0], 2.0, [1.0, 1.0], 2.0, 0.4) == pytest.approx(
        gaussian_delta_exact(0.4, math.sqrt(2.0) / 2.0), rel=1e-12)  # two evaluations of one closed form
    assert gaussian_pair_delta([0.0], 1.0, [0.5], 2.0, 0.3) == gaussian_pair_delta([0.5], 2.0, [0.0], 1.0, 0.3)


@pytest.mark.parametrize("args, match", [(([0.0], 0.0, [0.0], 1.0, 0.1), "sigma1"),
                                         (([0.0], 1.0, [0.0], math.inf, 0.1), "sigma2"),
                                         (([0.0], 1.0, [0.0], 1.0, -0.1), "epsilon"),
                                         (([0.0, 1.0], 1.0, [0.0], 1.0, 0.1), "mu1 and mu2"),
                                         (([math.nan], 1.0, [0.0], 1.0, 0.1), "finite")])
def test_bad_input_names_the_parameter(args, match):
    with pytest.raises(ValueError, match=match):
        gaussian_pair_delta(*args)
