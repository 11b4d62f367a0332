r"""Accounting of DP-SGD-style schedules: ``steps`` releases of the Poisson-subsampled Gaussian mechanism.

Each step samples every record independently with probability :math:`q` (the *sampling rate*) and releases the
sum of the sampled records' contributions (:math:`\ell_2` sensitivity :math:`\Delta`) plus :math:`\mathcal N(0,
\sigma^2 I)`; the *noise multiplier* is :math:`z = \sigma/\Delta`. This is how DP practitioners state a training run:
:math:`(q, z, T, \delta)`.

fedcheck's own account is the Rényi DP of one step at integer orders (exact for add/remove-one adjacency,
:func:`theory.privacy.subsampled.rdp_poisson_subsampled_gaussian`), composed additively over the steps and
converted to :math:`(\varepsilon, \delta)` by the improved conversion :func:`rdp_to_approx_dp_improved`. The
dp-accounting library's RDP and PLD accountants are independent oracles for it
(:func:`epsilon_rdp_accountant_subsampled`, :func:`epsilon_pld_accountant_subsampled`); the PLD accountant
(pessimistic discretisation) is the tightest of the three.

:func:`calibrate_noise_multiplier_subsampled` and :func:`calibrate_steps_subsampled` invert the account by
bisection: the smallest noise multiplier, or the largest number of steps, whose :math:`\varepsilon` by the chosen
accountant is at most the target (never above it).

References
----------
.. [1] I. Mironov, K. Talwar, L. Zhang, "Rényi differential privacy of the sampled Gaussian mechanism",
   arXiv:1908.10530, 2019, Section 3.3 (integer orders).
.. [2] C. Canonne, G. Kamath, T. Steinke, "The discrete Gaussian for differential privacy", arXiv:2004.00010,
   Proposition 12 (v4); B. Balle et al., "Hypothesis testing interpretations and Rényi differential privacy",
   AISTATS 2020, Theorem 21: the conversion of :func:`rdp_to_approx_dp_improved`.
.. [3] M. Abadi et al., "Deep learning with differential privacy", CCS 2016 (the (q, z, T) parametrisation).
"""

from __future__ import annotations

import math

import numpy as np

from theory._validate import real_scalar
from theory.privacy.quiet import quiet_dp_accounting
from theory.privacy.subsampled import _orders, rdp_poisson_subsampled_gaussian

__all__ = [
    "SUBSAMPLED_ACCOUNTANTS",
    "SUBSAMPLED_ORDERS",
    "calibrate_noise_multiplier_subsampled",
    "calibrate_steps_subsampled",
    "epsilon_fedcheck_rdp_subsampled",
    "epsilon_pld_accountant_subsampled",
    "epsilon_rdp_accountant_subsampled",
    "rdp_to_approx_dp_improved",
]

#: Integer Rényi orders of fedcheck's account: every order up to 128, then a geometric grid up to 8192 (large orders
#: matter for few steps at a small sampling rate).
SUBSAMPLED_ORDERS = tuple(sorted(set(range(2, 129)) | {int(round(v)) for v in np.geomspace(128, 8192, 25)}))


def _steps(steps) -> int:
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ValueError(f"steps must be an integer >= 1, got {steps!r}")
    return int(steps)


def rdp_to_approx_dp_improved(rdp, orders, delta) -> tuple[float, int]:
    r"""The improved RDP :math:`\to (\varepsilon, \delta)` conversion over a grid of orders.

    .. math::

        \varepsilon(\delta) = \max\Bigl(0, \min_{\alpha}\Bigl[\varepsilon_{\rm RDP}(\alpha)
            + \log\bigl(1 - \tfrac1\alpha\bigr) - \frac{\log(\delta\alpha)}{\alpha - 1}\Bigr]\Bigr)

    and :math:`\varepsilon = 0` at an order where :math:`\delta^2 > 1 - e^{-\varepsilon_{\rm RDP}(\alpha)}` (then the
    KL divergence alone bounds :math:`\delta` by Pinsker's inequality).

    Parameters
    ----------
    rdp : array_like of float
        RDP values :math:`\varepsilon_{\rm RDP}(\alpha) \ge 0` of the composed mechanism (``inf`` allowed).
    orders : sequence of int
        The matching integer orders :math:`\alpha \ge 2`.
    delta : float
        :math:`\delta \in (0, 1)`.

    Returns
    -------
    (epsilon, order) : tuple of (float, int)
        The smallest :math:`\varepsilon` over the grid (``inf`` when every order is infinite) and its order.

    Notes
    -----
    Valid for every mechanism with these RDP values (Canonne, Kamath & Steinke 2020, Prop. 12; Balle et al. 2020,
    Thm. 21); it is never above the standard conversion :func:`theory.privacy.subsampled.rdp_to_approx_dp` (the
    difference :math:`\log(1-1/\alpha) - \log(\alpha)/(\alpha-1) < 0`), and a finite grid errs upward. It is the rule
    of dp-accounting's ``compute_epsilon``, so the two agree on the same orders.

    References
    ----------
    .. [1] C. Canonne, G. Kamath, T. Steinke, arXiv:2004.00010, Proposition 12 (v4).

    Examples
    --------
    Never above the standard conversion:

    >>> from theory.privacy.subsampled import rdp_to_approx_dp
    >>> orders = np.arange(2, 200)
    >>> rdp = orders / 8.0  # a Gaussian mechanism with noise multiplier 2
    >>> rdp_to_approx_dp_improved(rdp, orders, 1e-5)[0] <= rdp_to_approx_dp(rdp, orders, 1e-5)[0]
    True
    """
    alphas = _orders(orders)
    values = np.array(rdp, dtype=np.float64, ndmin=1)
    if values.shape != alphas.shape:
        raise ValueError(f"rdp must have the shape of orders {alphas.shape}, got {values.shape}")
    bad = np.isnan(values) | (values < 0.0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"rdp[{i}] must be a real in [0, inf], got {float(values[i])!r}")
    delta = real_scalar("delta", delta, "(0, 1)")
    a = alphas.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        eps = values + np.log1p(-1.0 / a) - np.log(delta * a) / (a - 1.0)
        kl = delta * delta + np.expm1(-values) > 0.0
    eps = np.where(kl, 0.0, eps)
    i = int(np.argmin(eps))
    return max(0.0, float(eps[i])), int(alphas[i])


def _check(noise_multiplier, sampling_rate, steps, delta) -> tuple[float, float, int, float]:
    return (real_scalar("noise_multiplier", noise_multiplier, "(0, inf)"),
            real_scalar("sampling_rate", sampling_rate, "(0, 1]"), _steps(steps), real_scalar("delta", delta, "(0, 1)"))


def epsilon_fedcheck_rdp_subsampled(noise_multiplier, sampling_rate, steps, delta, *,
                                    orders=SUBSAMPLED_ORDERS) -> tuple[float, int]:
    r"""fedcheck's :math:`\varepsilon(\delta)` of ``steps`` Poisson-subsampled Gaussian releases.

    .. math::

        \varepsilon(\delta) = \min_\alpha\Bigl[T\,\varepsilon_{\rm RDP}^{q, z}(\alpha)
            + \log\bigl(1 - \tfrac1\alpha\bigr) - \frac{\log(\delta\alpha)}{\alpha - 1}\Bigr]

    with :math:`\varepsilon_{\rm RDP}^{q,z}` the exact RDP of one step at integer orders
    (:func:`theory.privacy.subsampled.rdp_poisson_subsampled_gaussian`) and :math:`T` = ``steps``.

    Parameters
    ----------
    noise_multiplier : float
        :math:`z = \sigma/\Delta > 0`.
    sampling_rate : float
        :math:`q \in (0, 1]` (1: no subsampling, the Gaussian mechanism).
    steps : int
        :math:`T \ge 1`.
    delta : float
        :math:`\delta \in (0, 1)`.
    orders : sequence of int
        The integer orders of the grid (default :data:`SUBSAMPLED_ORDERS`).

    Returns
    -------
    (epsilon, order) : tuple of (float, int)

    Notes
    -----
    Add/remove-one adjacency; the composition is exact in RDP; the conversion and the finite grid err upward, so the
    value is an upper bound on the true :math:`\varepsilon(\delta)`. Cost independent of ``steps``.

    References
    ----------
    .. [1] Mironov, Talwar & Zhang 2019, arXiv:1908.10530, Section 3.3; Canonne, Kamath & Steinke 2020,
       arXiv:2004.00010, Proposition 12.

    Examples
    --------
    At :math:`q = 1` it is the Gaussian mechanism: :math:`T` steps at :math:`z` are one step at :math:`z/\sqrt T`.

    >>> a = epsilon_fedcheck_rdp_subsampled(2.0, 1.0, 4, 1e-5)[0]
    >>> b = epsilon_fedcheck_rdp_subsampled(1.0, 1.0, 1, 1e-5)[0]
    >>> bool(abs(a - b) <= 1e-12 * b)
    True
    """
    z, q, T, delta = _check(noise_multiplier, sampling_rate, steps, delta)
    one = rdp_poisson_subsampled_gaussian(q, z, orders)
    with np.errstate(over="ignore"):
        return rdp_to_approx_dp_improved(T * one, orders, delta)


def _event(z: float, q: float):
    import dp_accounting

    gaussian = dp_accounting.GaussianDpEvent(z)
    return gaussian if q == 1.0 else dp_accounting.PoissonSampledDpEvent(q, gaussian)


def epsilon_rdp_accountant_subsampled(noise_multiplier, sampling_rate, steps, delta, *, orders=None) -> float:
    r"""dp-accounting's RDP accountant on ``steps`` compositions of ``PoissonSampledDpEvent(q, GaussianDpEvent(z))``
    (a plain ``GaussianDpEvent`` at :math:`q = 1`): an independent oracle for
    :func:`epsilon_fedcheck_rdp_subsampled`, which it equals on the same integer ``orders`` (default: the
    library's grid, which has fractional orders too)."""
    from dp_accounting import rdp

    z, q, T, delta = _check(noise_multiplier, sampling_rate, steps, delta)
    accountant = rdp.RdpAccountant() if orders is None else rdp.RdpAccountant(orders=[float(a) for a in orders])
    with quiet_dp_accounting():
        accountant.compose(_event(z, q), T)
        return float(accountant.get_epsilon(delta))


def epsilon_pld_accountant_subsampled(noise_multiplier, sampling_rate, steps, delta, *,
                                      value_discretization_interval: float = 1e-4) -> float:
    r"""dp-accounting's PLD accountant (pessimistic discretisation: an upper bound) on ``steps`` compositions of the
    Poisson-subsampled Gaussian, composed by the library's self-composition (one FFT power, not ``steps`` products).

    The tightest of the three accounts; ``inf`` for a :math:`\delta` below the tail mass dp-accounting truncates.
    """
    from dp_accounting import pld

    z, q, T, delta = _check(noise_multiplier, sampling_rate, steps, delta)
    accountant = pld.PLDAccountant(value_discretization_interval=value_discretization_interval)
    with quiet_dp_accounting():
        accountant.compose(_event(z, q), T)
        return float(accountant.get_epsilon(delta))


def _fedcheck(z, q, T, delta) -> float:
    return epsilon_fedcheck_rdp_subsampled(z, q, T, delta)[0]


#: The accountants of a subsampled schedule, by the key of their epsilon (``fedcheck privacy account --json``).
SUBSAMPLED_ACCOUNTANTS = {
    "fedcheck_rdp": _fedcheck,
    "rdp_accountant": epsilon_rdp_accountant_subsampled,
    "pld_accountant": epsilon_pld_accountant_subsampled,
}


def _accountant(name: str):
    if name not in SUBSAMPLED_ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {', '.join(SUBSAMPLED_ACCOUNTANTS)}, got {name!r}")
    return SUBSAMPLED_ACCOUNTANTS[name]


def calibrate_noise_multiplier_subsampled(epsilon, delta, sampling_rate, steps, *, accountant: str = "fedcheck_rdp",
                                          z_max: float = 1e6, rtol: float = 1e-9) -> tuple[float, float]:
    r"""The smallest noise multiplier :math:`z` (to relative precision ``rtol``, rounded up) whose
    :math:`\varepsilon(\delta)` by ``accountant`` is at most ``epsilon``: ``(z, epsilon_achieved)``.

    Bisection on :math:`\log z` (every accountant's :math:`\varepsilon` decreases as :math:`z` grows); the returned
    :math:`z` is the upper end of the last bracket, whose :math:`\varepsilon` was evaluated and meets the target.

    Raises
    ------
    ValueError
        On a bad argument, or when even ``z_max`` does not meet the target.

    Examples
    --------
    >>> z, achieved = calibrate_noise_multiplier_subsampled(1.0, 1e-5, 0.01, 1000)
    >>> bool(achieved <= 1.0 and epsilon_fedcheck_rdp_subsampled(z * (1 - 1e-6), 0.01, 1000, 1e-5)[0] > 1.0)
    True
    """
    epsilon = real_scalar("epsilon", epsilon, "(0, inf)")
    delta = real_scalar("delta", delta, "(0, 1)")
    q, T = real_scalar("sampling_rate", sampling_rate, "(0, 1]"), _steps(steps)
    z_max = real_scalar("z_max", z_max, "(0, inf)")
    account = _accountant(accountant)
    hi, eps_hi = z_max, account(z_max, q, T, delta)
    if not eps_hi <= epsilon:
        raise ValueError(f"epsilon = {epsilon!r} is not met at delta = {delta!r} even by noise multiplier {z_max:g} "
                         f"(epsilon {eps_hi:.6g} there): ask for a larger epsilon or delta, or fewer steps")
    lo = hi / 10.0
    while True:  # walk down by decades to a z that misses the target
        eps_lo = account(lo, q, T, delta)
        if eps_lo > epsilon:
            break
        hi, eps_hi = lo, eps_lo
        if hi < 1e-12:  # every noise multiplier meets it (a huge epsilon): no meaningful smallest one
            return hi, eps_hi
        lo = hi / 10.0
    while hi - lo > rtol * hi:
        mid = math.sqrt(lo * hi)
        eps_mid = account(mid, q, T, delta)
        if eps_mid <= epsilon:
            hi, eps_hi = mid, eps_mid
        else:
            lo = mid
    return hi, eps_hi


def calibrate_steps_subsampled(epsilon, delta, noise_multiplier, sampling_rate, *, accountant: str = "fedcheck_rdp",
                               max_steps: int = 10**7) -> tuple[int, float]:
    r"""The largest number of steps (at most ``max_steps``) whose :math:`\varepsilon(\delta)` by ``accountant`` is at
    most ``epsilon``: ``(steps, epsilon_achieved)`` (every accountant's :math:`\varepsilon` grows with the steps).

    Raises
    ------
    ValueError
        On a bad argument, or when a single step already exceeds the target.

    Examples
    --------
    >>> T, achieved = calibrate_steps_subsampled(2.0, 1e-5, 1.0, 0.01)
    >>> bool(achieved <= 2.0 < epsilon_fedcheck_rdp_subsampled(1.0, 0.01, T + 1, 1e-5)[0])
    True
    """
    epsilon = real_scalar("epsilon", epsilon, "(0, inf)")
    z, q, _, delta = _check(noise_multiplier, sampling_rate, 1, delta)
    max_steps = _steps(max_steps)
    account = _accountant(accountant)
    eps_one = account(z, q, 1, delta)
    if not eps_one <= epsilon:
        raise ValueError(f"a single step at noise multiplier {z:g} and sampling rate {q:g} already has epsilon "
                         f"{eps_one:.6g} > {epsilon:g} at delta = {delta:g}: use more noise or a larger epsilon")
    eps_max = account(z, q, max_steps, delta)
    if eps_max <= epsilon:
        return max_steps, eps_max
    lo, eps_lo, hi = 1, eps_one, max_steps   # eps(lo) <= epsilon < eps(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        eps_mid = account(z, q, mid, delta)
        if eps_mid <= epsilon:
            lo, eps_lo = mid, eps_mid
        else:
            hi = mid
    return lo, eps_lo
