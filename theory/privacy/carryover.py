r"""Privacy loss of a mechanism whose rounds share hidden state: Gaussian mixtures over inclusion patterns.

A client of FedPDM-DP keeps its primal and dual variables :math:`(x_i, \lambda_i)` from one participation to the
next, so a record that entered a mini-batch in one round moves every later upload of that client. When every upload
is affine in the noise and in the data (a linear or quadratic loss), the client's :math:`T` uploads, written in
noise-standardised coordinates after subtracting what both neighbours share given the released history, are

.. math::

    P = \sum_k w_k\,\mathcal N(a_k, I_T), \qquad Q = \sum_l v_l\,\mathcal N(b_l, I_T),

one component per inclusion pattern of the record (which rounds' batches, at which local step, held it): the
privacy-loss distribution of a pair of Gaussian mixtures. This module is the pure mathematics of that pair:

* :class:`GaussianMixturePair` (validated, read-only);
* :func:`mixture_privacy_loss`: the privacy loss :math:`L(y) = \ln p(y) - \ln q(y)` at given points;
* :func:`hockey_stick_terms` and :func:`hockey_stick_bracket`: :math:`\delta(\varepsilon) = E_P[(1 - e^{\varepsilon
  - L})_+]` from samples of :math:`L` under :math:`P`, as a certified bracket (empirical Bernstein) at a stated
  failure probability;
* :func:`projected_delta_lower_bound`: a deterministic certified lower bound on :math:`\delta(\varepsilon)`, the
  exact hockey-stick divergence of a one-dimensional projection (data processing);
* :func:`gaussian_composition_mu`: the :math:`\mu` of a composition of Gaussian mechanisms.

The samples themselves are drawn in :mod:`reference_impl.fedpdm.carryover` (this layer has no randomness).

References
----------
.. [1] Li, Huang, Wang, Chi, Quek, "Privacy-Preserving Federated Primal-Dual Learning for Non-Convex Problems with
   Non-Smooth Regularization", Algorithm 1 and eqs. (10a)-(10d), (18)-(20); docs/papers/fedpdm.md.
.. [2] A. Maurer and M. Pontil, "Empirical Bernstein bounds and sample variance penalization", COLT 2009, Theorem 4.
.. [3] B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for differential privacy", ICML 2018 (the
   hockey-stick divergence :math:`\delta(\varepsilon) = \int (p - e^\varepsilon q)_+`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from theory._rounding import gamma
from theory._validate import readonly, real_scalar

__all__ = [
    "GaussianMixturePair",
    "gaussian_composition_mu",
    "hockey_stick_bracket",
    "hockey_stick_terms",
    "mixture_privacy_loss",
    "projected_delta_lower_bound",
]

#: Largest number of (components x points) evaluated at once by :func:`mixture_privacy_loss` (memory, not accuracy).
_BLOCK = 2_000_000


def _mixture(name: str, weights, means) -> tuple[np.ndarray, np.ndarray]:
    try:
        w = np.array(weights, dtype=np.float64, ndmin=1)
        m = np.array(means, dtype=np.float64, ndmin=2)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"weights_{name} and means_{name} must be real arrays") from exc
    if w.ndim != 1 or m.ndim != 2 or m.shape[0] != w.size or w.size == 0 or m.shape[1] == 0:
        raise ValueError(f"means_{name} must have shape (len(weights_{name}), T) with T >= 1 and at least one "
                         f"component, got weights {w.shape} and means {m.shape}")
    if not (np.all(np.isfinite(w)) and np.all(w >= 0.0)):
        raise ValueError(f"weights_{name} must be finite and >= 0, got min {float(np.min(w))!r}")
    total = float(math.fsum(w))
    if abs(total - 1.0) > gamma(w.size + 1):
        raise ValueError(f"weights_{name} must sum to 1 (to rounding, gamma_{w.size + 1}), got sum {total!r}")
    if not np.all(np.isfinite(m)):
        raise ValueError(f"means_{name} must be finite")
    return w, m


@dataclass(frozen=True, kw_only=True)
class GaussianMixturePair:
    r"""Two Gaussian mixtures with identity covariance: :math:`P = \sum_k w_k\mathcal N(a_k, I)`, :math:`Q = \sum_l
    v_l\mathcal N(b_l, I)` on :math:`\mathbb R^T`.

    Attributes
    ----------
    weights_p, means_p : (K,) and (K, T) arrays
        Mixture weights :math:`w_k \ge 0` (summing to 1) and means :math:`a_k` of :math:`P`, in units of the noise
        standard deviation of each coordinate.
    weights_q, means_q : (L,) and (L, T) arrays
        The same for :math:`Q`.

    Notes
    -----
    Components with weight 0 are allowed (they never contribute). Arrays are stored read-only.
    """

    weights_p: np.ndarray
    means_p: np.ndarray
    weights_q: np.ndarray
    means_q: np.ndarray

    def __post_init__(self) -> None:
        wp, mp = _mixture("p", self.weights_p, self.means_p)
        wq, mq = _mixture("q", self.weights_q, self.means_q)
        if mp.shape[1] != mq.shape[1]:
            raise ValueError(f"means_p and means_q must have the same number of coordinates T, got {mp.shape[1]} "
                             f"and {mq.shape[1]}")
        for name, value in (("weights_p", wp), ("means_p", mp), ("weights_q", wq), ("means_q", mq)):
            object.__setattr__(self, name, readonly(value))

    @property
    def T(self) -> int:
        """Number of coordinates (released rounds)."""
        return int(self.means_p.shape[1])

    def swapped(self) -> GaussianMixturePair:
        """The pair with :math:`P` and :math:`Q` exchanged (the other direction of the neighbouring relation)."""
        return GaussianMixturePair(weights_p=self.weights_q, means_p=self.means_q, weights_q=self.weights_p,
                                   means_q=self.means_p)


def _kernel(weights: np.ndarray, means: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""The components of positive weight and :math:`\ln w_k - \lVert a_k\rVert^2/2` (the y-free part of the log
    density)."""
    keep = weights > 0.0
    m = means[keep]
    return m, np.log(weights[keep]) - 0.5 * np.einsum("kt,kt->k", m, m)


def _log_sum_exp_rows(scores: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    r"""Row-wise :math:`\ln\sum_k e^{s_{ik} + c_k}`, in place on ``scores`` (max-shifted, so nothing overflows)."""
    scores += offsets
    peak = scores.max(axis=1)
    scores -= peak[:, None]
    np.exp(scores, out=scores)
    return peak + np.log(scores.sum(axis=1))


def mixture_privacy_loss(pair: GaussianMixturePair, y) -> np.ndarray:
    r"""Privacy loss :math:`L(y) = \ln p(y) - \ln q(y)` of the pair at points ``y``.

    .. math::

        L(y) = \operatorname{LSE}_k\bigl(\ln w_k + a_k^\top y - \tfrac12\lVert a_k\rVert^2\bigr)
             - \operatorname{LSE}_l\bigl(\ln v_l + b_l^\top y - \tfrac12\lVert b_l\rVert^2\bigr)

    (the common factor :math:`e^{-\lVert y\rVert^2/2}` cancels).

    Parameters
    ----------
    pair : GaussianMixturePair
    y : array_like, shape (n, T)
        Points in the pair's noise-standardised coordinates.

    Returns
    -------
    numpy.ndarray, shape (n,)
        :math:`L(y)`; ``+inf`` / ``-inf`` where only one density is positive in floating point.

    Notes
    -----
    Log-sum-exp over components, in blocks of at most 2e6 (points x components). Rounding: each exponent carries
    an absolute error of about :math:`\gamma_{T+2}(|a_k^\top y| + \lVert a_k\rVert^2)`, so :math:`L` is accurate to
    that absolute level (far below the Monte-Carlo error it feeds).

    Examples
    --------
    A single component each is the Gaussian privacy loss :math:`\mu y - \mu^2/2`:

    >>> pair = GaussianMixturePair(weights_p=[1.0], means_p=[[1.5]], weights_q=[1.0], means_q=[[0.0]])
    >>> bool(np.allclose(mixture_privacy_loss(pair, [[0.0], [2.0]]), [-1.125, 1.875], rtol=0, atol=1e-15))
    True
    """
    y = np.array(y, dtype=np.float64, ndmin=2)
    if y.ndim != 2 or y.shape[1] != pair.T:
        raise ValueError(f"y must have shape (n, {pair.T}), got {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError("y must be finite")
    (mp, kp), (mq, kq) = _kernel(pair.weights_p, pair.means_p), _kernel(pair.weights_q, pair.means_q)
    out = np.empty(y.shape[0])
    step = max(1, _BLOCK // max(mp.shape[0], mq.shape[0]))
    for start in range(0, y.shape[0], step):
        block = y[start:start + step]
        out[start:start + step] = _log_sum_exp_rows(block @ mp.T, kp) - _log_sum_exp_rows(block @ mq.T, kq)
    return out


def hockey_stick_terms(losses, epsilon) -> np.ndarray:
    r""":math:`(1 - e^{\varepsilon - L})_+` for privacy-loss samples :math:`L` (each in [0, 1]).

    Their mean under :math:`L \sim P` is :math:`\delta_{P\Vert Q}(\varepsilon) = \int (p - e^{\varepsilon} q)_+`.
    ``expm1`` keeps the small values accurate; ``L = +inf`` gives 1, ``-inf`` gives 0.

    >>> hockey_stick_terms([0.0, 1.0, math.inf], 0.5).tolist()
    [0.0, 0.3934693402873666, 1.0]
    """
    epsilon = real_scalar("epsilon", epsilon, "[0, inf)")
    losses = np.asarray(losses, dtype=np.float64)
    if np.any(np.isnan(losses)):
        raise ValueError("losses must not contain nan")
    with np.errstate(over="ignore"):
        return np.maximum(-np.expm1(epsilon - losses), 0.0)


def hockey_stick_bracket(terms, alpha) -> tuple[float, float, float]:
    r"""Certified bracket of :math:`E[X]` from i.i.d. samples :math:`X_i \in [0, 1]`: ``(lower, estimate, upper)``.

    .. math::

        \bar X \mp \Bigl(\sqrt{\frac{2 V_n \ln(4/\alpha)}{n}} + \frac{7\ln(4/\alpha)}{3(n-1)}\Bigr)

    with :math:`V_n` the unbiased sample variance: both sides hold together with probability at least
    :math:`1 - \alpha` (Maurer & Pontil 2009, Theorem 4, at :math:`\alpha/2` per side), clipped to [0, 1].

    Parameters
    ----------
    terms : array_like
        Samples in [0, 1] (e.g. :func:`hockey_stick_terms` of privacy-loss samples under :math:`P`).
    alpha : float
        Failure probability of the bracket, in (0, 1).

    Returns
    -------
    (lower, estimate, upper) : tuple of float

    Raises
    ------
    ValueError
        If fewer than 2 samples, a sample outside [0, 1], or ``alpha`` outside (0, 1).

    Notes
    -----
    The variance-adaptive width makes a small :math:`\delta` bracket narrow: :math:`V_n \le \bar X`, so the width is
    :math:`O(\sqrt{\bar X/n} + 1/n)`, not Hoeffding's :math:`O(1/\sqrt n)`. Sums with ``math.fsum``.

    Examples
    --------
    Constant samples give a bracket of width :math:`\tfrac{14}{3}\ln(4/\alpha)/(n-1)`:

    >>> lo, est, hi = hockey_stick_bracket([0.5] * 1001, 0.01)
    >>> est == 0.5 and abs((hi - lo) - 14 / 3 * math.log(400) / 1000) < 1e-12
    True
    """
    x = np.asarray(terms, dtype=np.float64).ravel()
    alpha = real_scalar("alpha", alpha, "(0, 1)")
    if x.size < 2:
        raise ValueError(f"terms must hold at least 2 samples, got {x.size}")
    if not (np.all(x >= 0.0) and np.all(x <= 1.0)):
        raise ValueError("terms must lie in [0, 1]")
    n = x.size
    mean = math.fsum(x) / n
    variance = max(math.fsum((x - mean) ** 2) / (n - 1), 0.0)
    log_term = math.log(4.0 / alpha)
    width = math.sqrt(2.0 * variance * log_term / n) + 7.0 * log_term / (3.0 * (n - 1))
    return max(mean - width, 0.0), mean, min(mean + width, 1.0)


def _mixture_interval_mass(weights: np.ndarray, means: np.ndarray, lo: float, hi: float) -> float:
    """:math:`\\sum_k w_k [\\Phi(hi - m_k) - \\Phi(lo - m_k)]`, each difference formed on the side of the median
    where it does not cancel (survival functions to the right)."""
    a, b = lo - means, hi - means
    right = a > 0.0
    with np.errstate(invalid="ignore"):
        diff = np.where(right, special.ndtr(-a) - special.ndtr(-b), special.ndtr(b) - special.ndtr(a))
    return float(math.fsum(weights * np.maximum(diff, 0.0)))


def _merge(weights: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Components of positive weight with equal projected means merged (weights summed): the same mixture."""
    keep = weights > 0.0
    values, inverse = np.unique(values[keep], return_inverse=True)
    return np.bincount(inverse.ravel(), weights=weights[keep], minlength=values.size), values


def projected_delta_lower_bound(pair: GaussianMixturePair, epsilon, direction, *, grid: int = 4001) -> float:
    r"""Certified lower bound on :math:`\delta_{P\Vert Q}(\varepsilon)`: the exact hockey stick of a 1-D projection.

    For a unit vector :math:`w`, :math:`w^\top Y` is the one-dimensional mixture pair
    :math:`p_w = \sum_k w_k\mathcal N(w^\top a_k, 1)`, :math:`q_w = \sum_l v_l\mathcal N(w^\top b_l, 1)`; by data
    processing :math:`\delta_{p_w\Vert q_w}(\varepsilon) \le \delta_{P\Vert Q}(\varepsilon)`, and for every set
    :math:`S`, :math:`p_w(S) - e^\varepsilon q_w(S) \le \delta_{p_w\Vert q_w}(\varepsilon)`. The set used is the union
    of the intervals where :math:`\ln p_w - \ln q_w > \varepsilon`, located on a grid and refined by Brent's method
    (an inexact endpoint only lowers the value: it stays a lower bound).

    Parameters
    ----------
    pair : GaussianMixturePair
    epsilon : float
        :math:`\varepsilon \ge 0`.
    direction : array_like, shape (T,)
        The projection :math:`w` (normalised here; must be non-zero and finite).
    grid : int
        Grid points over [min mean - 40, max mean + 40] (>= 101; 4001 by default, then Brent to 1e-13).

    Returns
    -------
    float
        A value :math:`\le \delta_{P\Vert Q}(\varepsilon)`: the interval masses summed with ``math.fsum``, minus
        :math:`\gamma_{K+L+8}(p_w(S) + e^\varepsilon q_w(S))` for rounding, and never below 0.

    Notes
    -----
    For :math:`T = 1` (and ``direction = [1]``) it is the exact :math:`\delta` up to the endpoint tolerance. Outside
    the grid the sign at each end is kept to infinity (the half-line is included only if the end point is in
    :math:`S`), which again can only lower the value.

    Examples
    --------
    One Gaussian against another is the Gaussian mechanism's exact profile:

    >>> from theory.privacy.conversions import gaussian_delta_exact
    >>> pair = GaussianMixturePair(weights_p=[1.0], means_p=[[1.2]], weights_q=[1.0], means_q=[[0.0]])
    >>> value = projected_delta_lower_bound(pair, 0.5, [1.0])
    >>> value <= gaussian_delta_exact(0.5, 1.2) and abs(value - gaussian_delta_exact(0.5, 1.2)) < 1e-12
    True
    """
    epsilon = real_scalar("epsilon", epsilon, "[0, inf)")
    w = np.array(direction, dtype=np.float64, ndmin=1)
    if w.shape != (pair.T,) or not np.all(np.isfinite(w)) or not np.any(w):
        raise ValueError(f"direction must be a finite non-zero vector of length {pair.T}, got {direction!r}")
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or grid < 101:
        raise ValueError(f"grid must be an integer >= 101, got {grid!r}")
    w = w / np.linalg.norm(w)
    wp, mp = _merge(pair.weights_p, pair.means_p @ w)
    wq, mq = _merge(pair.weights_q, pair.means_q @ w)
    lwp, lwq = np.log(wp), np.log(wq)

    def excess(x):
        x = np.asarray(x, dtype=np.float64)
        lp = special.logsumexp(lwp - 0.5 * (x[..., None] - mp) ** 2, axis=-1)
        lq = special.logsumexp(lwq - 0.5 * (x[..., None] - mq) ** 2, axis=-1)
        return lp - lq - epsilon

    lo = float(min(mp.min(), mq.min())) - 40.0
    hi = float(max(mp.max(), mq.max())) + 40.0
    xs = np.linspace(lo, hi, int(grid))
    with np.errstate(invalid="ignore"):
        g = excess(xs)
    inside = np.where(np.isnan(g), False, g > 0.0)
    if not inside.any():
        return 0.0
    edges = np.flatnonzero(np.diff(inside.astype(np.int8)))
    points = []
    for i in edges:  # a root between xs[i] and xs[i + 1]; keep the side of the interval that is inside S
        try:
            root = optimize.brentq(lambda x: float(excess(x)), xs[i], xs[i + 1], xtol=1e-13)
        except ValueError:  # sign not bracketed in floating point: fall back to the grid point inside S
            root = xs[i + 1] if inside[i + 1] else xs[i]
        points.append(root)
    bounds = ([-math.inf] if inside[0] else []) + points + ([math.inf] if inside[-1] else [])  # enter/leave S
    mass_p = mass_q = 0.0
    terms = []
    for a, b in zip(bounds[0::2], bounds[1::2], strict=True):
        if b <= a:
            continue
        p_ab = _mixture_interval_mass(wp, mp, a, b)
        q_ab = _mixture_interval_mass(wq, mq, a, b)
        mass_p += p_ab
        mass_q += q_ab
        terms.append(p_ab - math.exp(epsilon) * q_ab)
    value = math.fsum(terms)
    allowance = gamma(wp.size + wq.size + 8) * (mass_p + math.exp(epsilon) * mass_q)
    return max(value - allowance, 0.0)


def gaussian_composition_mu(sensitivities, sigmas) -> float:
    r""":math:`\mu = \sqrt{\sum_m (\Delta_m/\sigma_m)^2}` of an adaptive composition of Gaussian mechanisms.

    A sequence of Gaussian releases whose :math:`m`-th mean can move by at most :math:`\Delta_m` between neighbours
    given everything released before, with noise :math:`\mathcal N(0, \sigma_m^2 I)`, is exactly
    :math:`\mu`-GDP (Dong, Roth & Su 2022, Corollary 3.3): its privacy profile is
    :func:`theory.privacy.conversions.gaussian_delta_exact` at this :math:`\mu`.

    Parameters
    ----------
    sensitivities : array_like
        :math:`\Delta_m \ge 0` (``inf`` allowed: the result is then ``inf``).
    sigmas : array_like
        :math:`\sigma_m > 0`, same length.

    Returns
    -------
    float
        :math:`\mu \ge 0` (``inf`` when a ratio or the sum overflows).

    Examples
    --------
    >>> gaussian_composition_mu([3.0, 4.0], [1.0, 1.0])
    5.0
    """
    d = np.array(sensitivities, dtype=np.float64, ndmin=1)
    s = np.array(sigmas, dtype=np.float64, ndmin=1)
    if d.ndim != 1 or d.shape != s.shape or d.size == 0:
        raise ValueError(f"sensitivities and sigmas must be 1-D of the same non-zero length, got {d.shape} and "
                         f"{s.shape}")
    if np.any(np.isnan(d)) or np.any(d < 0.0):
        raise ValueError("sensitivities must be >= 0 (inf allowed)")
    if not (np.all(np.isfinite(s)) and np.all(s > 0.0)):
        raise ValueError("sigmas must be finite and > 0")
    with np.errstate(over="ignore"):
        ratio = d / s
        return float(math.hypot(*ratio)) if np.all(np.isfinite(ratio)) else math.inf
