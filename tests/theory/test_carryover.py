"""theory.privacy.carryover: the Gaussian-mixture pair, its privacy loss, the hockey-stick brackets and the projection
lower bound, against dp-accounting (independent rounds) and direct numerical integration."""

import functools
import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as dpa_pld
from scipy import stats

from theory.privacy.carryover import (
    GaussianMixturePair,
    gaussian_composition_mu,
    hockey_stick_bracket,
    hockey_stick_terms,
    mixture_privacy_loss,
    projected_delta_lower_bound,
)
from theory.privacy.conversions import gaussian_delta_exact
from theory.privacy.quiet import quiet_dp_accounting


def _subsampled_single_round(q, z):
    """The accountant's one-round pair: (1 - q) N(0, 1) + q N(1/z, 1) against N(0, 1)."""
    return GaussianMixturePair(weights_p=[1 - q, q], means_p=[[0.0], [1.0 / z]], weights_q=[1.0], means_q=[[0.0]])


def _product(pair, T):
    """The T-fold independent composition of a one-round pair (the independent-rounds model)."""
    import itertools

    wp, mp = np.asarray(pair.weights_p), np.asarray(pair.means_p)[:, 0]
    idx = np.array(list(itertools.product(range(wp.size), repeat=T)))
    return GaussianMixturePair(weights_p=np.prod(wp[idx], axis=1), means_p=mp[idx], weights_q=[1.0],
                               means_q=np.zeros((1, T)))


@functools.lru_cache(maxsize=8)
def _pld(q, z, T):
    """dp-accounting's optimistic and pessimistic PLDs of T Poisson-subsampled Gaussian rounds (add/remove)."""
    with quiet_dp_accounting():
        return tuple(dpa_pld.from_gaussian_mechanism(z, sampling_prob=q, value_discretization_interval=1e-3,
                                                     pessimistic_estimate=pessimistic, use_connect_dots=pessimistic)
                     .self_compose(T) for pessimistic in (False, True))


def _pld_delta(q, z, T, eps):
    return [pld.get_delta_for_epsilon(eps) for pld in _pld(q, z, T)]


def test_pair_validation_names_the_field():
    with pytest.raises(ValueError, match="weights_p must sum to 1"):
        GaussianMixturePair(weights_p=[0.5, 0.4], means_p=[[0.0], [1.0]], weights_q=[1.0], means_q=[[0.0]])
    with pytest.raises(ValueError, match="same number of coordinates"):
        GaussianMixturePair(weights_p=[1.0], means_p=[[0.0, 1.0]], weights_q=[1.0], means_q=[[0.0]])
    with pytest.raises(ValueError, match="weights_q must be finite and >= 0"):
        GaussianMixturePair(weights_p=[1.0], means_p=[[0.0]], weights_q=[1.5, -0.5], means_q=[[0.0], [1.0]])
    pair = _subsampled_single_round(0.3, 1.0)
    assert not pair.means_p.flags.writeable and pair.swapped().swapped().means_p.tolist() == pair.means_p.tolist()


def test_privacy_loss_equals_the_log_ratio_of_densities():
    rng = np.random.default_rng(0)
    wp, wq = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(3))
    mp, mq = rng.standard_normal((5, 3)), rng.standard_normal((3, 3))
    pair = GaussianMixturePair(weights_p=wp, means_p=mp, weights_q=wq, means_q=mq)
    y = 2.0 * rng.standard_normal((50, 3))
    p = sum(w * stats.multivariate_normal(m, np.eye(3)).pdf(y) for w, m in zip(wp, mp, strict=True))
    q = sum(w * stats.multivariate_normal(m, np.eye(3)).pdf(y) for w, m in zip(wq, mq, strict=True))
    np.testing.assert_allclose(mixture_privacy_loss(pair, y), np.log(p / q), rtol=0, atol=1e-12)


def _one_round_delta(q, z, eps):
    """Closed form of both directions of the one-round pair (a single threshold each): (remove, add)."""
    mu, phi = 1.0 / z, stats.norm.cdf
    x = (math.log((math.exp(eps) - (1 - q)) / q) + mu * mu / 2) / mu  # p/q > e^eps  iff  y > x
    remove = (1 - q) * stats.norm.sf(x) + q * stats.norm.sf(x - mu) - math.exp(eps) * stats.norm.sf(x)
    if math.exp(-eps) <= 1 - q:
        return remove, 0.0
    x = (math.log((math.exp(-eps) - (1 - q)) / q) + mu * mu / 2) / mu  # q/p > e^eps  iff  y < x
    return remove, phi(x) - math.exp(eps) * ((1 - q) * phi(x) + q * phi(x - mu))


@pytest.mark.parametrize(("q", "z", "eps"), [(0.25, 1.0, 1.0), (0.05, 0.7, 0.5), (0.5, 2.0, 0.2), (0.5, 2.0, 0.01)])
def test_one_round_projection_is_the_exact_delta_and_matches_dp_accounting(q, z, eps):
    """T = 1: the projection on the only coordinate is the exact hockey stick (closed form of the single-threshold
    pair, both directions), and the larger direction lies in dp-accounting's optimistic/pessimistic PLD bracket
    (add/remove adjacency)."""
    pair = _subsampled_single_round(q, z)
    both = [projected_delta_lower_bound(p, eps, [1.0]) for p in (pair, pair.swapped())]
    for value, exact in zip(both, _one_round_delta(q, z, eps), strict=True):
        assert value <= exact + 1e-15 and exact - value <= 1e-12 * max(exact, 1e-3), (value, exact)
    lo, hi = _pld_delta(q, z, 1, eps)
    assert lo - 1e-6 <= max(both) <= hi + 1e-6


def test_independent_rounds_monte_carlo_agrees_with_dp_accounting():
    """The stateless limit: the T-fold product of the accountant's pair, both directions, by Monte Carlo of the
    privacy loss, brackets dp-accounting's composed PLD (the two brackets overlap)."""
    q, z, T = 0.25, 1.0, 4
    pair = _product(_subsampled_single_round(q, z), T)
    rng = np.random.default_rng(1)
    for eps in (0.5, 1.0, 2.0):
        brackets = []
        for p in (pair, pair.swapped()):
            k = rng.choice(p.weights_p.size, size=60_000, p=p.weights_p)
            y = p.means_p[k] + rng.standard_normal((k.size, T))
            brackets.append(hockey_stick_bracket(hockey_stick_terms(mixture_privacy_loss(p, y), eps), 1e-4))
        lo, _, hi = (max(b[i] for b in brackets) for i in range(3))
        pld_lo, pld_hi = _pld_delta(q, z, T, eps)
        assert lo <= pld_hi + 1e-6 and pld_lo - 1e-6 <= hi, (eps, lo, hi, pld_lo, pld_hi)


def test_bracket_width_and_validation():
    lo, est, hi = hockey_stick_bracket(np.r_[np.zeros(9_000), np.ones(1_000)], 1e-3)
    assert lo < est == 0.1 < hi and hi - lo < 0.03
    with pytest.raises(ValueError, match="terms must lie in \\[0, 1\\]"):
        hockey_stick_bracket([0.5, 1.5], 0.1)
    with pytest.raises(ValueError, match="alpha must be a finite real in \\(0, 1\\)"):
        hockey_stick_bracket([0.5, 0.5], 1.0)
    assert hockey_stick_terms([-math.inf, math.inf], 1.0).tolist() == [0.0, 1.0]


def test_bracket_covers_the_mean_at_its_level():
    """Coverage: 400 brackets at alpha = 0.05 of Bernoulli(0.02) samples miss the mean at most 20 + 4 sd times (the
    empirical-Bernstein bracket is conservative: far fewer misses are expected)."""
    rng = np.random.default_rng(2)
    misses = 0
    for _ in range(400):
        lo, _, hi = hockey_stick_bracket((rng.random(500) < 0.02).astype(float), 0.05)
        misses += not lo <= 0.02 <= hi
    assert misses <= 20 + 4 * math.sqrt(400 * 0.05 * 0.95)


def test_projection_bound_never_exceeds_the_monte_carlo_upper_limit():
    rng = np.random.default_rng(3)
    w = rng.dirichlet(np.ones(8))
    pair = GaussianMixturePair(weights_p=w, means_p=rng.uniform(0, 2, (8, 3)), weights_q=[1.0],
                               means_q=np.zeros((1, 3)))
    k = rng.choice(8, size=200_000, p=w)
    losses = mixture_privacy_loss(pair, pair.means_p[k] + rng.standard_normal((k.size, 3)))
    for eps in (0.0, 0.5, 1.5):
        _, _, hi = hockey_stick_bracket(hockey_stick_terms(losses, eps), 1e-4)
        for direction in ([1.0, 1.0, 1.0], [1.0, 0.0, 0.0], [0.3, -1.0, 2.0]):
            assert projected_delta_lower_bound(pair, eps, direction) <= hi


def test_projection_of_one_gaussian_pair_is_the_gaussian_profile():
    pair = GaussianMixturePair(weights_p=[1.0], means_p=[[0.6, 0.8]], weights_q=[1.0], means_q=[[0.0, 0.0]])
    for eps in (0.0, 0.3, 2.0):
        exact = gaussian_delta_exact(eps, 1.0)
        value = projected_delta_lower_bound(pair, eps, [0.6, 0.8])
        assert value <= exact and exact - value < 1e-11
    with pytest.raises(ValueError, match="direction must be a finite non-zero vector of length 2"):
        projected_delta_lower_bound(pair, 0.5, [0.0, 0.0])


def test_gaussian_composition_mu():
    assert gaussian_composition_mu([3.0, 4.0], [1.0, 1.0]) == 5.0
    assert gaussian_composition_mu([math.inf, 1.0], [1.0, 1.0]) == math.inf
    with pytest.raises(ValueError, match="sigmas must be finite and > 0"):
        gaussian_composition_mu([1.0], [0.0])
