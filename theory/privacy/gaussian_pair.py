r"""Exact hockey-stick divergence between two isotropic Gaussians with possibly different variances.

A Gaussian mechanism whose noise scale depends on the data (FedPDM-DP's :math:`\sigma_{i,t}` through the adaptive
:math:`Q_i^t` of rule (11)) releases :math:`N(\mu_1, \sigma_1^2 I_d)` on one data set and :math:`N(\mu_2, \sigma_2^2
I_d)` on its neighbour. It is :math:`(\varepsilon, \delta)`-DP for that pair iff :math:`\delta` is at least the
hockey-stick divergence in both directions (Dwork & Roth 2014, Def. 2.4; Balle & Wang 2018, Thm. 5 for the equal
variance case, which :func:`theory.privacy.conversions.gaussian_delta_exact` computes).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from theory.privacy.conversions import gaussian_delta_exact

__all__ = ["gaussian_pair_delta", "gaussian_pair_delta_one_way"]


def _validate(mu1, sigma1, mu2, sigma2, epsilon) -> tuple[np.ndarray, np.ndarray]:
    m1 = np.atleast_1d(np.asarray(mu1, dtype=np.float64))
    m2 = np.atleast_1d(np.asarray(mu2, dtype=np.float64))
    if m1.ndim != 1 or m1.shape != m2.shape:
        raise ValueError(f"mu1 and mu2 must be vectors of one length, got shapes {m1.shape} and {m2.shape}")
    if not (np.all(np.isfinite(m1)) and np.all(np.isfinite(m2))):
        raise ValueError("mu1 and mu2 must be finite")
    for name, value in (("sigma1", sigma1), ("sigma2", sigma2)):
        if not (math.isfinite(value) and value > 0.0):
            raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    if not (math.isfinite(epsilon) and epsilon >= 0.0):
        raise ValueError(f"epsilon must be finite and >= 0, got {epsilon!r}")
    return m1, m2


def _ball_probability(radius2: float, centre: np.ndarray, mu: np.ndarray, sigma: float, inside: bool) -> float:
    """P(||Y - centre||^2 < radius2) (inside) or > radius2, Y ~ N(mu, sigma^2 I_d): a (non-central) chi-square."""
    d = mu.size
    if radius2 <= 0.0:
        return 0.0 if inside else 1.0
    x = radius2 / sigma**2
    nc = float(np.sum((mu - centre) ** 2)) / sigma**2
    dist = stats.chi2(d) if nc == 0.0 else stats.ncx2(d, nc)
    return float(dist.cdf(x) if inside else dist.sf(x))


def gaussian_pair_delta_one_way(mu1, sigma1: float, mu2, sigma2: float, epsilon: float) -> float:
    r"""Hockey-stick divergence :math:`\sup_S P_1(S) - e^\varepsilon P_2(S)` of :math:`P_j = N(\mu_j, \sigma_j^2 I_d)`.

    .. math::
        \delta_{1\|2}(\varepsilon) = P_1(L > \varepsilon) - e^{\varepsilon} P_2(L > \varepsilon),\qquad
        L(y) = \log\frac{p_1(y)}{p_2(y)} = A\lVert y - c\rVert^2 + K,

    with :math:`A = 1/(2\sigma_2^2) - 1/(2\sigma_1^2)`, :math:`c = v/A`,
    :math:`v = \mu_2/(2\sigma_2^2) - \mu_1/(2\sigma_1^2)` and
    :math:`K = d\log(\sigma_2/\sigma_1) - \lVert v\rVert^2/A + \lVert\mu_2\rVert^2/(2\sigma_2^2)
    - \lVert\mu_1\rVert^2/(2\sigma_1^2)`. The event :math:`L > \varepsilon` is the outside (:math:`A > 0`) or the
    inside (:math:`A < 0`) of a ball around :math:`c`, whose probabilities under :math:`P_j` are non-central
    chi-square distribution functions with :math:`d` degrees of freedom and non-centrality
    :math:`\lVert\mu_j - c\rVert^2/\sigma_j^2`. Equal variances reduce to the Gaussian privacy profile
    :math:`\delta_G(\varepsilon; \lVert\mu_1 - \mu_2\rVert/\sigma)`.

    Parameters
    ----------
    mu1, mu2 : array_like
        Means (vectors of one length :math:`d`).
    sigma1, sigma2 : float
        Noise standard deviations, :math:`> 0`.
    epsilon : float
        :math:`\varepsilon \ge 0`.

    Returns
    -------
    float
        :math:`\delta \in [0, 1]` (evaluated with SciPy's chi-square functions; accurate to their relative precision).

    References
    ----------
    Dwork & Roth (2014), Def. 2.4 ((epsilon, delta)-DP); Balle & Wang (2018), ICML, Thm. 5 (equal variances).

    Examples
    --------
    Equal variances give the Gaussian profile; a larger second variance makes the divergence positive even with equal
    means:

    >>> import math
    >>> from theory.privacy.conversions import gaussian_delta_exact
    >>> math.isclose(gaussian_pair_delta_one_way([0.0], 1.0, [1.0], 1.0, 0.5), gaussian_delta_exact(0.5, 1.0))
    True
    >>> gaussian_pair_delta_one_way([0.0], 1.0, [0.0], 1.9, 0.0) > 0.2
    True
    """
    m1, m2 = _validate(mu1, sigma1, mu2, sigma2, epsilon)
    if sigma1 == sigma2:
        return float(gaussian_delta_exact(epsilon, float(np.linalg.norm(m1 - m2)) / sigma1))
    d = m1.size
    A = 0.5 / sigma2**2 - 0.5 / sigma1**2
    v = m2 / (2.0 * sigma2**2) - m1 / (2.0 * sigma1**2)
    c = v / A
    K = (d * math.log(sigma2 / sigma1) - float(v @ v) / A + float(m2 @ m2) / (2.0 * sigma2**2)
         - float(m1 @ m1) / (2.0 * sigma1**2))
    radius2 = (epsilon - K) / A
    inside = A < 0.0          # A < 0: L > eps inside the ball; A > 0: outside
    if not inside and radius2 <= 0.0:
        p1, p2 = 1.0, 1.0
    else:
        p1 = _ball_probability(radius2, c, m1, sigma1, inside)
        p2 = _ball_probability(radius2, c, m2, sigma2, inside)
    return float(min(1.0, max(0.0, p1 - math.exp(epsilon) * p2)))


def gaussian_pair_delta(mu1, sigma1: float, mu2, sigma2: float, epsilon: float) -> float:
    r"""The smallest :math:`\delta` for which releasing :math:`N(\mu_1, \sigma_1^2 I)` vs :math:`N(\mu_2,
    \sigma_2^2 I)` is :math:`(\varepsilon, \delta)`-indistinguishable: the larger of the two one-way divergences
    (:func:`gaussian_pair_delta_one_way`).

    Examples
    --------
    >>> both = gaussian_pair_delta([0.0], 1.0, [0.0], 1.9, 1.0)
    >>> both == max(gaussian_pair_delta_one_way([0.0], 1.0, [0.0], 1.9, 1.0),
    ...             gaussian_pair_delta_one_way([0.0], 1.9, [0.0], 1.0, 1.0))
    True
    """
    return max(gaussian_pair_delta_one_way(mu1, sigma1, mu2, sigma2, epsilon),
               gaussian_pair_delta_one_way(mu2, sigma2, mu1, sigma1, epsilon))
