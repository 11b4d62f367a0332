r"""FedPDM-DP Theorem 2: total privacy loss of a subsampled Gaussian mechanism over many participations.

The seed (001_322f61f9958f64f9.txt, Theorem 2, eq. (20), lines 199-207) states

.. math:: \bar\varepsilon_i^T = c_0\, q_i^2\, \varepsilon \sqrt{\frac{p_i T}{1 - q_i}}

with an unspecified :math:`c_0` "dependent upon :math:`\delta`", for a client that adds noise
calibrated by (5)/(18) (noise multiplier :math:`z = \sqrt{2\ln(1.25/\delta)}/\varepsilon`) and whose
rounds use a fraction :math:`q_i` of its data, for :math:`p_i T` expected participations. The proof is
"by the moments accountant" (Abadi et al. 2016), whose log moment scales as :math:`q^2`, so the
total loss scales as :math:`\sqrt{q^2} = q`: the printed :math:`q^2` is a suspected erratum
(docs/papers/fedpdm.md#theorem-2, docs/papers/fedpdm.md#erratum-e7). This module gives both readings, the Abadi-style
constant, and an in-house Rényi-DP accountant for the Poisson-subsampled Gaussian mechanism (integer orders,
Mironov, Talwar & Zhang 2019) with the standard RDP :math:`\to (\varepsilon, \delta)` conversion, so
that the scaling can be tested against an accountant (``verify/fedpdm/theorem2_total.py``, which
cross-checks it against ``dp-accounting``).

References
----------
.. [Seed] seed 001_322f61f9958f64f9.txt, Lemma 1 eq. (5) (lines 74-82), Theorem 1 eq. (18)
   (lines 187-195), Theorem 2 eq. (20) (lines 199-207).
.. [ACG16] M. Abadi et al., "Deep learning with differential privacy", CCS 2016, Lemma 3 and Theorem 1.
.. [MTZ19] I. Mironov, K. Talwar and L. Zhang, "Rényi differential privacy of the sampled Gaussian
   mechanism", arXiv:1908.10530, Section 3.3 (integer orders).
.. [M17] I. Mironov, "Rényi differential privacy", CSF 2017, Proposition 3.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from theory._rounding import gamma as _gamma
from theory._validate import real_scalar

__all__ = [
    "abadi_constant_c0",
    "noise_multiplier_fedpdm",
    "rdp_poisson_subsampled_gaussian",
    "rdp_to_approx_dp",
    "total_epsilon_fedpdm_linear",
    "total_epsilon_fedpdm_printed",
]


def _positive_count(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def noise_multiplier_fedpdm(epsilon, delta):
    r"""Noise multiplier of the seed's calibration (5)/(18), as printed: :math:`z = \sigma/s`.

    .. math:: z = \frac{\sqrt{2\ln(1.25/\delta)}}{\varepsilon}

    Parameters
    ----------
    epsilon : float
        Per-round target :math:`\varepsilon > 0`. The seed applies (5) for every
        :math:`\varepsilon > 0`; Dwork & Roth's Theorem A.1 covers only :math:`\varepsilon < 1`
        (docs/papers/fedpdm.md#erratum-e1), so for :math:`\varepsilon \ge 1` this is the seed's formula, not a DP
        guarantee.
    delta : float
        Target :math:`\delta \in (0, 1)`.

    Returns
    -------
    float
        :math:`z > 0`.

    Raises
    ------
    ValueError
        If ``epsilon`` is not in (0, inf) or ``delta`` is not in (0, 1), or if :math:`z` exceeds the double range
        (``epsilon`` below about 1e-307).

    Notes
    -----
    For a subnormal ``delta`` (where :math:`1.25/\delta` overflows) the logarithm is taken as
    :math:`\ln 1.25 - \ln\delta`; otherwise as printed. ``theory.privacy.conversions.gaussian_sigma_classical`` is
    this formula times the sensitivity, restricted to :math:`\varepsilon < 1`; this function is the formula itself,
    because the seed (and fedcheck's check of its Lemma 1) needs it outside that range. Closed form, relative error a
    few ulps.

    References
    ----------
    .. [1] seed 001_322f61f9958f64f9.txt, Lemma 1, eq. (5), lines 74-82; Theorem 1, eq. (18), line 191.

    Examples
    --------
    It solves :math:`z^2\varepsilon^2 = 2\ln(1.25/\delta)`:

    >>> import math
    >>> z = noise_multiplier_fedpdm(10.0, 1e-5)
    >>> abs((z * 10.0) ** 2 / (2 * math.log(1.25 / 1e-5)) - 1) < 1e-15
    True
    """
    epsilon = real_scalar("epsilon", epsilon, "(0, inf)")
    delta = real_scalar("delta", delta, "(0, 1)")
    ratio = 1.25 / delta
    log_ratio = math.log(ratio) if math.isfinite(ratio) else math.log(1.25) - math.log(delta)  # subnormal delta
    z = math.sqrt(2.0 * log_ratio) / epsilon
    if not math.isfinite(z):
        raise ValueError(f"epsilon = {epsilon!r} is too small: the noise multiplier sqrt(2 ln(1.25/delta))/epsilon "
                         f"exceeds the double range (epsilon must be >= {math.sqrt(2.0 * log_ratio) / 1e308:.3g})")
    return z


def _total_epsilon(epsilon, q, p, T, c0, power: int) -> float:
    epsilon = real_scalar("epsilon", epsilon, "(0, inf)")
    q = real_scalar("q", q, "(0, 1)")
    p = real_scalar("p", p, "(0, 1]")
    T = _positive_count("T", T)
    c0 = real_scalar("c0", c0, "(0, inf)")
    return c0 * q**power * epsilon * math.sqrt(p * T / (1.0 - q))


def total_epsilon_fedpdm_printed(epsilon, q, p, T, c0):
    r"""Total privacy loss of FedPDM-DP Theorem 2, eq. (20), as printed (quadratic in :math:`q`).

    .. math:: \bar\varepsilon_i^T = c_0\, q_i^2\, \varepsilon \sqrt{\frac{p_i T}{1 - q_i}}

    Parameters
    ----------
    epsilon : float
        Per-round :math:`\varepsilon > 0` (each upload is calibrated by (18)).
    q : float
        Data fraction per round :math:`q_i = Q_i b/|\mathcal D_i| \in (0, 1)`.
    p : float
        Participation fraction :math:`p_i = K/N \in (0, 1]`.
    T : int
        Number of rounds :math:`T \ge 1`.
    c0 : float
        The seed's unspecified constant :math:`c_0 > 0` ("dependent upon :math:`\delta`").

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If a parameter is outside the ranges above.

    Notes
    -----
    The :math:`q^2` is a suspected erratum for :math:`q` (docs/papers/fedpdm.md#erratum-e7; see
    :func:`total_epsilon_fedpdm_linear`). Hypotheses the seed omits: the moments-accountant regime
    (per-round :math:`\varepsilon \lesssim 1`, small :math:`q`), :math:`q_i < 1`, :math:`Q_i^t` fixed in
    advance. :math:`p_i T` stands for the number of participations (the realised count, not its
    expectation, for a per-client guarantee).

    References
    ----------
    .. [1] seed 001_322f61f9958f64f9.txt, Theorem 2, eq. (20), lines 199-207.

    Examples
    --------
    Halving :math:`q` divides the printed total by :math:`4\sqrt{(1-q/2)/(1-q)}`:

    >>> a = total_epsilon_fedpdm_printed(1.0, 0.02, 0.05, 300, 1.0)
    >>> b = total_epsilon_fedpdm_printed(1.0, 0.01, 0.05, 300, 1.0)
    >>> abs(a / b - 4 * math.sqrt(0.99 / 0.98)) < 1e-14
    True
    """
    return _total_epsilon(epsilon, q, p, T, c0, 2)


def total_epsilon_fedpdm_linear(epsilon, q, p, T, c0):
    r"""Corrected reading of FedPDM-DP Theorem 2: total privacy loss linear in :math:`q`.

    .. math:: \bar\varepsilon_i^T = c_0\, q_i\, \varepsilon \sqrt{\frac{p_i T}{1 - q_i}}

    Parameters
    ----------
    epsilon, q, p, T, c0 : float, float, float, int, float
        As in :func:`total_epsilon_fedpdm_printed`.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If a parameter is outside the ranges of :func:`total_epsilon_fedpdm_printed`.

    Notes
    -----
    Derivation (docs/papers/fedpdm.md#theorem-2): after :math:`n = pT` participations the moments accountant gives
    :math:`\alpha_{\rm tot}(\lambda) \approx n q^2\lambda^2/((1-q) z^2)`; minimising
    :math:`(\alpha_{\rm tot}(\lambda) + \ln(1/\delta))/\lambda` gives
    :math:`2q\sqrt{n\ln(1/\delta)/(1-q)}/z`, and :math:`z = \sqrt{2\ln(1.25/\delta)}/\varepsilon` gives
    this form with :math:`c_0` = :func:`abadi_constant_c0`. The cited FedSPD-DP [6] states
    :math:`O(q\varepsilon\sqrt{pT})`. This corrects the :math:`q^2` of eq. (20). Asymptotic: valid in
    the moments-accountant regime only (many participations, per-round :math:`\varepsilon \lesssim 1`).

    References
    ----------
    .. [1] seed 001_322f61f9958f64f9.txt, Theorem 2, eq. (20), lines 199-207 (corrected).
    .. [2] Abadi et al. 2016, Theorem 1; docs/papers/fedpdm.md#theorem-2, docs/papers/fedpdm.md#erratum-e7.

    Examples
    --------
    The corrected form is the printed one divided by :math:`q`:

    >>> lin = total_epsilon_fedpdm_linear(0.5, 0.1, 0.05, 300, 1.4)
    >>> abs(lin * 0.1 - total_epsilon_fedpdm_printed(0.5, 0.1, 0.05, 300, 1.4)) < 1e-15
    True
    """
    return _total_epsilon(epsilon, q, p, T, c0, 1)


def abadi_constant_c0(delta):
    r"""The constant of the moments-accountant closed form: :math:`c_0 = \sqrt{2\ln(1/\delta)/\ln(1.25/\delta)}`.

    Parameters
    ----------
    delta : float
        Target :math:`\delta \in (0, 0.8)` (so that both logarithms are positive).

    Returns
    -------
    float
        :math:`c_0 > 0`; 1.4007 at :math:`\delta = 10^{-5}`, tending to :math:`\sqrt2` as :math:`\delta \to 0`.

    Raises
    ------
    ValueError
        If ``delta`` is not in (0, 0.8).

    Notes
    -----
    Leading-order constant only (see :func:`total_epsilon_fedpdm_linear`); it drops the
    :math:`O(q^3\lambda^3/z^3)` terms of Abadi et al.'s Lemma 3, so it is not a certified bound.

    References
    ----------
    .. [1] docs/papers/fedpdm.md#theorem-2 (derivation), 4.3.

    Examples
    --------
    >>> abadi_constant_c0(1e-300) < math.sqrt(2) and abs(abadi_constant_c0(1e-300) - math.sqrt(2)) < 1e-3
    True
    """
    delta = real_scalar("delta", delta, "(0, 1)")
    if delta >= 0.8:
        raise ValueError(f"delta must be a finite real in (0, 0.8), got {delta!r}")
    return math.sqrt(2.0 * -math.log(delta) / math.log(1.25 / delta))


def _orders(orders) -> np.ndarray:
    try:
        a = np.array(orders, ndmin=1)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"orders must be a sequence of integers, got {orders!r}") from exc
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"orders must be a non-empty 1-D sequence, got shape {a.shape}")
    if not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"orders must be integers >= 2, got dtype {a.dtype}")
    if (a < 2).any():
        i = int(np.flatnonzero(a < 2)[0])
        raise ValueError(f"orders[{i}] must be an integer >= 2, got {int(a[i])}")
    return a.astype(np.int64)


def rdp_poisson_subsampled_gaussian(q, z, orders):
    r"""Rényi DP of one Poisson-subsampled Gaussian mechanism at integer orders.

    .. math::

        A_\alpha = \sum_{k=0}^{\alpha} \binom{\alpha}{k} (1-q)^{\alpha-k} q^k
                   \exp\Bigl(\frac{k^2 - k}{2 z^2}\Bigr), \qquad
        \varepsilon_{\rm RDP}(\alpha) = \frac{\ln A_\alpha}{\alpha - 1}.

    Parameters
    ----------
    q : float
        Sampling probability :math:`q \in (0, 1]` (each record enters independently).
    z : float
        Noise multiplier :math:`z = \sigma/\Delta > 0` (:math:`\ell_2` sensitivity :math:`\Delta`, add/remove-one).
    orders : sequence of int
        Rényi orders :math:`\alpha \ge 2`.

    Returns
    -------
    numpy.ndarray
        :math:`\varepsilon_{\rm RDP}(\alpha)` for each order (float64).

    Raises
    ------
    ValueError
        If ``q`` is not in (0, 1], ``z`` not in (0, inf) or an order is not an integer >= 2.

    Notes
    -----
    Exact for integer orders (Mironov, Talwar & Zhang 2019, Sec. 3.3), for add/remove-one adjacency.
    Each term is formed in log space (a table of :math:`\ln m!` from ``gammaln``, ``log1p``) and
    summed relative to its largest term (a log-sum-exp, vectorised over all orders), so nothing
    overflows; the absolute error of :math:`\ln A_\alpha` is about :math:`u` times the largest log-term
    magnitude (:math:`\lesssim \alpha\ln\alpha + \alpha|\ln q| + \alpha^2/(2z^2)`) plus
    :math:`\gamma_{\alpha+1}` from the sum, divided by :math:`\alpha - 1` in the result. Where the result is within
    that error of 0 (a huge :math:`z`, where the sum could round to a tiny negative value) it is recomputed as
    :math:`\ln A_\alpha = \operatorname{log1p}(\sum_k P_k\,\operatorname{expm1}((k^2-k)/(2z^2)))`, accurate and
    :math:`\ge 0` there. At :math:`q = 1` it is the Gaussian RDP :math:`\alpha/(2z^2)`. RDP composes additively over
    rounds.

    References
    ----------
    .. [1] Mironov, Talwar & Zhang 2019, arXiv:1908.10530, Section 3.3.
    .. [2] docs/papers/fedpdm.md#theorem-2.

    Examples
    --------
    Without subsampling it is the Gaussian mechanism's :math:`\alpha/(2z^2)`:

    >>> r = rdp_poisson_subsampled_gaussian(1.0, 2.0, [2, 10, 100])
    >>> bool(np.allclose(r, np.array([2, 10, 100]) / 8.0, rtol=1e-12, atol=0))
    True
    """
    q = real_scalar("q", q, "(0, 1]")
    z = real_scalar("z", z, "(0, inf)")
    alphas = _orders(orders)
    log_q = math.log(q)
    log_1mq = math.log1p(-q) if q < 1.0 else -math.inf
    # All orders at once: segment i holds k = 0..alpha_i; a segmented log-sum-exp via reduceat.
    sizes = alphas + 1
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    alpha_int = np.repeat(alphas, sizes)
    k_int = np.arange(int(sizes.sum())) - np.repeat(starts, sizes)
    log_factorial = special.gammaln(np.arange(int(alphas.max()) + 1, dtype=np.float64) + 1.0)  # ln m!, one table
    log_binom = log_factorial[alpha_int] - log_factorial[k_int] - log_factorial[alpha_int - k_int]
    alpha, k = alpha_int.astype(np.float64), k_int.astype(np.float64)
    with np.errstate(invalid="ignore"):
        log_1mq_part = np.where(k < alpha, (alpha - k) * log_1mq, 0.0)  # (1-q)^0 = 1 also at q = 1
    log_terms = log_binom + log_1mq_part + k * log_q + (k * k - k) / (2.0 * z * z)
    peak = np.maximum.reduceat(log_terms, starts)
    sums = np.add.reduceat(np.exp(log_terms - np.repeat(peak, sizes)), starts)
    out = (peak + np.log(sums)) / (alphas - 1.0)
    # Where the result is within its own rounding error of 0 (a huge z: A_alpha = 1 + tiny), the sum above can come
    # out slightly negative. There the cancellation-free form ln A = log1p(sum_k P(k) expm1((k^2 - k)/(2 z^2))) (the
    # binomial probabilities P(k) sum to 1) is accurate and >= 0; elsewhere the values are left exactly as computed.
    magnitude = np.maximum.reduceat(np.where(np.isfinite(log_terms), np.abs(log_terms), 0.0), starts)
    allowance = (_gamma(8) * magnitude + np.array([_gamma(int(a) + 2) for a in alphas])) / (alphas - 1.0)
    flat = np.abs(out) <= allowance
    if flat.any():
        with np.errstate(over="ignore", invalid="ignore"):  # only the flat orders' (small) terms are used
            excess = np.exp(log_binom + log_1mq_part + k * log_q) * np.expm1((k * k - k) / (2.0 * z * z))
            exact = np.log1p(np.add.reduceat(excess, starts)) / (alphas - 1.0)
        out = np.where(flat, exact, out)
    return out


def rdp_to_approx_dp(rdp, orders, delta):
    r"""Standard RDP :math:`\to (\varepsilon, \delta)` conversion over a grid of orders (Mironov 2017, Prop. 3).

    .. math::

        \varepsilon(\delta) = \min_{\alpha} \Bigl[\varepsilon_{\rm RDP}(\alpha) + \frac{\ln(1/\delta)}{\alpha - 1}\Bigr]

    Parameters
    ----------
    rdp : array_like of float
        RDP values :math:`\varepsilon_{\rm RDP}(\alpha) \ge 0` of the whole (composed) mechanism.
    orders : sequence of int
        The matching orders :math:`\alpha \ge 2`.
    delta : float
        Target :math:`\delta \in (0, 1)`.

    Returns
    -------
    (epsilon, order) : tuple of (float, int)
        The smallest :math:`\varepsilon` over the grid and the order attaining it.

    Raises
    ------
    ValueError
        If the lengths differ, an RDP value is negative or not finite, an order is not an integer
        >= 2, or ``delta`` is not in (0, 1).

    Notes
    -----
    Valid for every mechanism with these RDP values; a finite grid errs upward (conservative). The
    improved conversion of Balle et al. 2020 (used by ``dp-accounting``'s ``get_epsilon``) is
    tighter; fedcheck uses this one to compare accountants on the same conversion (docs/papers/fedpdm.md#theorem-2).

    References
    ----------
    .. [1] Mironov 2017, Proposition 3.

    Examples
    --------
    For a Gaussian mechanism (RDP :math:`\alpha/(2z^2)`) the grid optimum is at most the
    Bun-Steinke value :math:`\rho + 2\sqrt{\rho\ln(1/\delta)}` (the continuous optimum) and exceeds it only by the
    grid's discretisation:

    >>> orders = np.arange(2, 2000)
    >>> eps, order = rdp_to_approx_dp(orders / 8.0, orders, 1e-5)
    >>> rho = 1 / 8.0
    >>> rho + 2 * math.sqrt(rho * math.log(1e5)) <= eps <= rho + 2 * math.sqrt(rho * math.log(1e5)) + 1e-2
    True
    """
    alphas = _orders(orders)
    values = np.array(rdp, dtype=np.float64, ndmin=1)
    if values.shape != alphas.shape:
        raise ValueError(f"rdp must have the shape of orders {alphas.shape}, got {values.shape}")
    bad = ~(np.isfinite(values) & (values >= 0.0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"rdp[{i}] must be a finite real in [0, inf), got {float(values[i])!r}")
    delta = real_scalar("delta", delta, "(0, 1)")
    eps = values + -math.log(delta) / (alphas - 1.0)
    i = int(np.argmin(eps))
    return float(eps[i]), int(alphas[i])
