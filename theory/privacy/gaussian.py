r"""The Gaussian mechanism in zero-concentrated differential privacy (zCDP).

Notation follows docs/papers/dp.md#notation: ``rho`` here is the zCDP parameter
(the papers write :math:`\phi` or :math:`\varphi`), never the ADMM penalty.
"""

from __future__ import annotations

import math

from theory._validate import real_scalar

__all__ = ["gaussian_sigma_for_zcdp", "gaussian_zcdp", "renyi_divergence_gaussians"]


def _noise_scale(name: str, value: object) -> float:
    """Validate a noise standard deviation in (0, inf]; ``inf`` means "release nothing"."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == math.inf:
        return math.inf
    return real_scalar(name, value, "(0, inf)")


def gaussian_zcdp(sensitivity, sigma):
    r"""zCDP parameter of the Gaussian mechanism.

    Releasing :math:`q(D) + \mathcal N(0, \sigma^2 I_d)` for a query of :math:`\ell_2`
    sensitivity :math:`\Delta` is :math:`\rho`-zCDP with

    .. math::

        \rho = \frac{\Delta^2}{2\sigma^2},

    and no smaller :math:`\rho` holds: the Rényi divergence of two neighbouring outputs at
    distance :math:`\Delta` is exactly :math:`\alpha\rho` for every order :math:`\alpha > 1`
    (see :func:`renyi_divergence_gaussians`).

    Parameters
    ----------
    sensitivity : float
        :math:`\ell_2` sensitivity :math:`\Delta \ge 0` of the released query.
    sigma : float
        Noise standard deviation :math:`\sigma > 0` per coordinate. ``math.inf`` is accepted and
        gives :math:`\rho = 0` (the release carries no information).

    Returns
    -------
    float
        :math:`\rho \ge 0`.

    Raises
    ------
    ValueError
        If ``sensitivity`` is negative or not finite, or ``sigma`` is not in (0, inf].

    Notes
    -----
    Computed as :math:`\tfrac12(\Delta/\sigma)^2` so that it neither overflows nor underflows
    when :math:`\Delta` and :math:`\sigma` are both extreme. Relative error at most :math:`3u`.
    The papers use it per iteration with :math:`\sigma^2` the noise variance of that iteration
    (PGFL Theorem III; zCDP-NFL Theorem I); their totals add these values (adaptive composition,
    Bun & Steinke 2016, Lemma 2.3).

    References
    ----------
    .. [1] M. Bun and T. Steinke, "Concentrated differential privacy: simplifications,
       extensions, and lower bounds", TCC 2016-B (arXiv:1605.02065), Proposition 1.6.
    .. [2] seed 000_133b71fd0aa99eb4.txt, Theorem III, eq. (46); seed 004_180cd372987d137b.txt,
       Chapter 3 Theorem I and eq. (5.32).

    Examples
    --------
    Inverse of :func:`gaussian_sigma_for_zcdp`:

    >>> rho = gaussian_zcdp(2.0, 3.0)
    >>> abs(gaussian_sigma_for_zcdp(2.0, rho) - 3.0) <= 4e-16 * 3.0
    True
    """
    delta = real_scalar("sensitivity", sensitivity, "[0, inf)")
    scale = _noise_scale("sigma", sigma)
    if scale == math.inf:
        return 0.0
    ratio = delta / scale
    return 0.5 * (ratio * ratio)  # inf (no privacy) rather than OverflowError past ~1e154


def gaussian_sigma_for_zcdp(sensitivity, rho):
    r"""Noise standard deviation that makes the Gaussian mechanism exactly :math:`\rho`-zCDP.

    .. math::

        \sigma = \frac{\Delta}{\sqrt{2\rho}} .

    Parameters
    ----------
    sensitivity : float
        :math:`\ell_2` sensitivity :math:`\Delta \ge 0`.
    rho : float
        Target zCDP parameter :math:`\rho > 0`.

    Returns
    -------
    float
        :math:`\sigma \ge 0` (zero when :math:`\Delta = 0`: no noise is needed).

    Raises
    ------
    ValueError
        If ``sensitivity`` is negative or not finite, or ``rho`` is not in (0, inf).

    References
    ----------
    .. [1] Bun & Steinke 2016, Proposition 1.6 (inverted); seed 004_180cd372987d137b.txt,
       Chapter 3, eq. (3.12) form :math:`\sigma^2 = \Delta^2/(2\varphi)`.

    Examples
    --------
    >>> gaussian_sigma_for_zcdp(1.0, 0.5)
    1.0
    """
    delta = real_scalar("sensitivity", sensitivity, "[0, inf)")
    rho = real_scalar("rho", rho, "(0, inf)")
    return delta / math.sqrt(2.0 * rho)


def renyi_divergence_gaussians(mean_distance, sigma, alpha):
    r"""Rényi divergence of order :math:`\alpha` between two isotropic Gaussians of equal variance.

    .. math::

        D_\alpha\bigl(\mathcal N(\mu, \sigma^2 I_d) \,\|\, \mathcal N(\nu, \sigma^2 I_d)\bigr)
            = \frac{\alpha \lVert \mu - \nu \rVert_2^2}{2\sigma^2} .

    Parameters
    ----------
    mean_distance : float
        :math:`\lVert \mu - \nu \rVert_2 \ge 0`.
    sigma : float
        Common standard deviation :math:`\sigma > 0`.
    alpha : float
        Order :math:`\alpha > 1` (zCDP quantifies over :math:`(1, \infty)`; the KL limit
        :math:`\alpha \to 1` has the same formula).

    Returns
    -------
    float

    References
    ----------
    .. [1] Bun & Steinke 2016, Lemma 2.4 (cited as "[36, Lemma 17]" in seed 000, line 381, and
       as "[20, Lemma 17]" in seed 004, line 2261).

    Examples
    --------
    It is :math:`\alpha` times the zCDP parameter of :func:`gaussian_zcdp`:

    >>> renyi_divergence_gaussians(1.5, 2.0, 4.0) == 4.0 * gaussian_zcdp(1.5, 2.0)
    True
    """
    distance = real_scalar("mean_distance", mean_distance, "[0, inf)")
    scale = real_scalar("sigma", sigma, "(0, inf)")
    order = real_scalar("alpha", alpha, "(1, inf)")
    ratio = distance / scale
    return order * (0.5 * (ratio * ratio))
