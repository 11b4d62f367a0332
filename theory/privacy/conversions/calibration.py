r"""Gaussian-mechanism noise calibrations for (epsilon, delta)-DP: classical (Dwork & Roth 2014, Thm. A.1)
and analytic (Balle & Wang 2018)."""

from __future__ import annotations

from theory._validate import real_scalar
from theory.privacy.conversions._roots import _step_until_valid
from theory.privacy.conversions.exact_gaussian import (
    _delta_gaussian,
    _mu_exact,
)

__all__ = ['gaussian_sigma_classical', 'gaussian_sigma_analytic']


# --------------------------------------------------------------------------------------------------
# Gaussian-mechanism calibrations for (epsilon, delta)-DP


def gaussian_sigma_classical(sensitivity, epsilon, delta):
    r"""Classical Gaussian-mechanism noise for :math:`(\varepsilon, \delta)`-DP (Dwork & Roth, Thm. A.1).

    .. math::

        \sigma = \frac{\Delta\sqrt{2\log(1.25/\delta)}}{\varepsilon}, \qquad \varepsilon \in (0, 1) .

    Parameters
    ----------
    sensitivity : float
        :math:`\ell_2` sensitivity :math:`\Delta \ge 0`.
    epsilon : float
        Target :math:`\varepsilon \in (0, 1)`: the theorem does not cover :math:`\varepsilon \ge 1`.
    delta : float
        Target :math:`\delta \in (0, 1)`.

    Returns
    -------
    float
        :math:`\sigma \ge 0` (0 when :math:`\Delta = 0`).

    Raises
    ------
    ValueError
        If ``sensitivity`` is not in [0, inf), ``epsilon`` not in (0, 1) or ``delta`` not in (0, 1).

    Notes
    -----
    Sufficient, not tight: :func:`gaussian_sigma_analytic` is smaller. Outside
    :math:`\varepsilon < 1` the formula is no theorem (numerically it still gives
    :math:`(\varepsilon,\delta)`-DP up to :math:`\varepsilon \approx 8.42` at :math:`\delta = 10^{-5}`,
    then fails); this function refuses it rather than clamp. Closed form, a few ulps.

    References
    ----------
    .. [1] Dwork & Roth 2014, *The Algorithmic Foundations of Differential Privacy*, Theorem A.1.
    .. [2] docs/papers/dp.md#classical-calibration (fedcheck's choice for the seed's unspecified
       "(epsilon, delta) rules", erratum DB-9 (docs/papers/dp.md#erratum-db-9)).

    Examples
    --------
    The calibration is (ε, δ)-DP by the exact profile:

    >>> from theory.privacy.conversions import gaussian_delta_exact
    >>> sigma = gaussian_sigma_classical(1.0, 0.5, 1e-5)
    >>> gaussian_delta_exact(0.5, 1.0 / sigma) <= 1e-5
    True
    """
    sensitivity = real_scalar("sensitivity", sensitivity, "[0, inf)")
    epsilon = real_scalar("epsilon", epsilon, "(0, 1)")
    # one definition of the printed formula; this function adds the theorem's condition eps < 1
    from theory.privacy.subsampled import noise_multiplier_fedpdm

    return sensitivity * noise_multiplier_fedpdm(epsilon, delta)


def gaussian_sigma_analytic(sensitivity, epsilon, delta):
    r"""Smallest Gaussian-mechanism noise that is :math:`(\varepsilon, \delta)`-DP (analytic Gaussian mechanism).

    .. math::

        \sigma = \min\{\sigma > 0 : \delta_G(\varepsilon; \Delta/\sigma) \le \delta\}
               = \Delta/\mu^\ast(\varepsilon, \delta) .

    Parameters
    ----------
    sensitivity : float
        :math:`\ell_2` sensitivity :math:`\Delta \ge 0`.
    epsilon : float
        Target :math:`\varepsilon \ge 0` (no upper limit, unlike the classical calibration).
    delta : float
        Target :math:`\delta \in (0, 1)`.

    Returns
    -------
    float
        :math:`\sigma \ge 0` (0 when :math:`\Delta = 0`).

    Raises
    ------
    ValueError
        If ``sensitivity`` or ``epsilon`` is not in [0, inf) or ``delta`` is not in (0, 1).

    Notes
    -----
    Tight (necessary and sufficient). :math:`\mu^\ast` as in :func:`approx_dp_to_zcdp_exact_gaussian`;
    :math:`\sigma` is then increased by ulps until :math:`\delta_G(\varepsilon; \Delta/\sigma) \le \delta`
    holds as evaluated, so numerical error makes :math:`\sigma` larger (conservative).

    References
    ----------
    .. [1] Balle & Wang 2018 (arXiv:1805.06530), Theorem 8 and Algorithm 1 (solved here by
       root-finding instead of their closed-form reparametrisation).

    Examples
    --------
    Admissible, minimal to 1e-9, and below the classical calibration:

    >>> from theory.privacy.conversions import gaussian_delta_exact
    >>> sigma = gaussian_sigma_analytic(1.0, 0.5, 1e-5)
    >>> gaussian_delta_exact(0.5, 1.0 / sigma) <= 1e-5 < gaussian_delta_exact(0.5, 1.0 / (sigma * (1 - 1e-9)))
    True
    >>> sigma < gaussian_sigma_classical(1.0, 0.5, 1e-5)
    True
    """
    sensitivity = real_scalar("sensitivity", sensitivity, "[0, inf)")
    epsilon = real_scalar("epsilon", epsilon, "[0, inf)")
    delta = real_scalar("delta", delta, "(0, 1)")
    if sensitivity == 0.0:
        return 0.0
    return _step_until_valid(sensitivity / _mu_exact(epsilon, delta),
                             lambda sigma: _delta_gaussian(epsilon, sensitivity / sigma) <= delta, toward=+1)
