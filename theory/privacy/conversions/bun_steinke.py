r"""Bun & Steinke 2016, Proposition 1.3: zCDP to (epsilon, delta)-DP and its inverse (closed forms)."""

from __future__ import annotations

import math

from theory._validate import real_scalar
from theory.privacy.conversions._roots import _log_l

__all__ = ['zcdp_to_approx_dp_bun_steinke', 'approx_dp_to_zcdp_bun_steinke']


# --------------------------------------------------------------------------------------------------
# Bun & Steinke 2016, Proposition 1.3


def zcdp_to_approx_dp_bun_steinke(rho, delta):
    r""":math:`\varepsilon` of the Bun-Steinke conversion: :math:`\rho`-zCDP implies :math:`(\varepsilon, \delta)`-DP.

    .. math::

        \varepsilon_{\mathrm{BS}}(\rho, \delta) = \rho + 2\sqrt{\rho \log(1/\delta)} .

    Parameters
    ----------
    rho : float
        zCDP parameter :math:`\rho \ge 0` of the mechanism (for a composition: the sum of the
        per-step parameters).
    delta : float
        Target :math:`\delta \in (0, 1)`.

    Returns
    -------
    float
        :math:`\varepsilon \ge 0`; exactly 0 when :math:`\rho = 0`.

    Raises
    ------
    ValueError
        If ``rho`` is not in [0, inf) or ``delta`` is not in (0, 1).

    Notes
    -----
    Hypotheses: the mechanism is :math:`\rho`-zCDP (no approximate-zCDP slack
    :math:`\xi`; for :math:`(\xi, \rho)`-zCDP add :math:`\xi`). Valid for every such mechanism.
    It is Mironov's RDP conversion :math:`\alpha\rho + \log(1/\delta)/(\alpha-1)` [M17] at its
    optimal order :math:`\alpha^\ast = 1 + \sqrt{\log(1/\delta)/\rho}`. Closed form: relative
    rounding error of a few ulps. Equivalent :math:`\delta` form (for
    :math:`\varepsilon \ge \rho`): :math:`\delta = \exp(-(\varepsilon-\rho)^2/(4\rho))`.

    References
    ----------
    .. [1] Bun & Steinke 2016 (arXiv:1605.02065), Proposition 1.3.
    .. [2] seed 000_133b71fd0aa99eb4.txt (PGFL), eq. (51), line 402: the same formula with
       :math:`\rho` the total of Theorem IV (cited there as "[38, Theorem 3]").
    .. [3] seed 004_180cd372987d137b.txt, Chapter 3 Corollary, lines 608-610 (cited as
       "[38, Proposition 1.3]").

    Examples
    --------
    The :math:`\delta` form recovers :math:`\delta`:

    >>> rho, delta = 0.2, 1e-5
    >>> eps = zcdp_to_approx_dp_bun_steinke(rho, delta)
    >>> abs(math.exp(-(eps - rho) ** 2 / (4 * rho)) - delta) <= 1e-14 * delta
    True
    """
    rho = real_scalar("rho", rho, "[0, inf)")
    delta = real_scalar("delta", delta, "(0, 1)")
    if rho == 0.0:
        return 0.0
    return rho + 2.0 * math.sqrt(rho * _log_l(delta))


def approx_dp_to_zcdp_bun_steinke(epsilon, delta):
    r"""Largest :math:`\rho` whose Bun-Steinke conversion gives :math:`(\varepsilon, \delta)`-DP.

    Inverse of :func:`zcdp_to_approx_dp_bun_steinke` in :math:`\rho`, with :math:`L = \log(1/\delta)`:

    .. math::

        \rho_{\mathrm{BS}}(\varepsilon, \delta) = \bigl(\sqrt{L + \varepsilon} - \sqrt{L}\bigr)^2
            = \frac{\varepsilon^2}{\bigl(\sqrt{L + \varepsilon} + \sqrt{L}\bigr)^2} .

    Parameters
    ----------
    epsilon : float
        Target :math:`\varepsilon \ge 0`.
    delta : float
        Target :math:`\delta \in (0, 1)`.

    Returns
    -------
    float
        :math:`\rho \ge 0` (0 when :math:`\varepsilon = 0`).

    Raises
    ------
    ValueError
        If ``epsilon`` is not in [0, inf) or ``delta`` is not in (0, 1).

    Notes
    -----
    The second form is used: it has no cancellation, so the relative rounding error is a few
    ulps. The map :math:`\rho \mapsto \varepsilon_{\mathrm{BS}}` is strictly increasing, so this
    is the largest admissible :math:`\rho`.

    References
    ----------
    .. [1] Bun & Steinke 2016, Proposition 1.3 (solved for :math:`\rho`); docs/papers/dp.md#conversions.

    Examples
    --------
    >>> rho = approx_dp_to_zcdp_bun_steinke(1.0, 1e-5)
    >>> abs(zcdp_to_approx_dp_bun_steinke(rho, 1e-5) - 1.0) <= 1e-15
    True
    """
    epsilon = real_scalar("epsilon", epsilon, "[0, inf)")
    delta = real_scalar("delta", delta, "(0, 1)")
    big_l = _log_l(delta)
    return epsilon**2 / (math.sqrt(big_l + epsilon) + math.sqrt(big_l)) ** 2
