r"""A certified upper bound on the sensitivity of PGFL's client update (4) for the logistic loss (Lemma 1).

For the exact minimiser :math:`w` of (4) and :math:`w'` on a replace-one neighbouring data set, with the same
conditioning inputs, strong monotonicity gives :math:`\lVert w - w'\rVert \le \lVert\nabla\ell_{new}(w') -
\nabla\ell_{old}(w')\rVert/((\rho+\mu)D_k) \le \operatorname{diam} G(w')/((\rho+\mu)D_k)` with
:math:`G(v) = \{\nabla_w\ell(x, y; v)\}`, and :math:`w'` lies in the ball of radius :math:`B/(\rho+\mu)` about the
prox centre :math:`(\rho w_{s,(q)} + \varphi_k)/(\rho+\mu)`. Since :math:`\nabla\ell(x, 1; v) = \nabla\ell(-x, 0; v)`,
:math:`G(v) = \{\sigma(v^\top x)x : \lVert x\rVert \le B\}`, a body of revolution whose profile is
:math:`M(\theta)(\cos\theta, \sin\theta)`, :math:`M(\theta) = \max_{\beta\in[0,1]}\beta\sigma(\kappa\beta\cos\theta)`
in closed form (:math:`\kappa = B\lVert v\rVert`; :math:`M = \sigma(a)` for :math:`a = \kappa\cos\theta \ge -t^*`,
else :math:`W/|a|`, with :math:`t^*\sigma(t^*) = 1`, :math:`W = t^* - 1`). Its diameter is bounded in
:func:`logistic_gradient_diameter`. ``problem`` arguments are :class:`reference_impl.pgfl.client.ClientSubproblem`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize
from scipy.special import expit

from theory._rounding import UNIT_ROUNDOFF, gamma

__all__ = ["certified_logistic_sensitivity", "check_feature_radius", "logistic_gradient_diameter"]

# t* solves t sigma(t) = 1; W = max_t t sigma(-t) = t* sigma(-t*) = t* - 1 (rounded up: the max is
# flat at t*, so the bisection error enters squared; 1e-14 covers the rounding of expit).
_T_STAR = optimize.brentq(lambda t: t * expit(t) - 1.0, 1.0, 2.0, xtol=1e-15)


_W_UPPER = _T_STAR * float(expit(-_T_STAR)) + 1e-14


def _profile_envelope(theta: np.ndarray, kappa: float) -> np.ndarray:
    r""":math:`\max_{\beta\in[0,1]}\beta\sigma(\kappa\beta\cos\theta)` (or above it by rounding only)."""
    a = kappa * np.cos(theta)
    m = expit(a)
    return np.where(a < 0.0, np.maximum(m, _W_UPPER / np.maximum(-a, _T_STAR)), m)


def _theta_grid(kappa: float, tol: float) -> np.ndarray:
    r"""A :math:`\theta` grid on :math:`[0, \pi]` on which the profile curve moves at most ``tol`` per cell.

    The curve :math:`E(\theta) = M(\theta)(\cos\theta, \sin\theta)` has local speed at most
    :math:`1 + |M'|`, and with :math:`a = \kappa\cos\theta`, :math:`|M'| \le \kappa\max(\min(1/4, e^{-|a|}),
    W/\max(a^2, t^{*2}))` (:math:`\sigma' \le \min(1/4, e^{-|a|})` on the :math:`\sigma` branch,
    :math:`|d(W/|a|)/d\theta| \le W\kappa/a^2` on the other). That bound decreases in :math:`|a|`, so on each
    cell between the breakpoints :math:`|a| \in \{0, t^*, 1, 2, 4, \dots\}` it is taken at the end nearest
    :math:`\pi/2`; the cell gets a uniform grid with spacing ``tol / speed``. The number of points is
    about :math:`(\pi + 3)/\mathrm{tol}`, whatever :math:`\kappa`.
    """
    levels = [_T_STAR] + [2.0 ** j for j in range(0, 64) if 2.0 ** j < kappa]
    breaks = {0.0, math.pi / 2.0, math.pi}
    for level in levels:
        if level < kappa:
            breaks.update((math.acos(level / kappa), math.acos(-level / kappa)))
    breaks = sorted(breaks)
    pieces = []
    for lo, hi in zip(breaks[:-1], breaks[1:], strict=True):
        nearest = min(abs(math.cos(lo)), abs(math.cos(hi))) if (lo - math.pi / 2) * (hi - math.pi / 2) > 0 else 0.0
        a_min = kappa * nearest
        speed = 1.0 + kappa * max(min(0.25, math.exp(-a_min)), _W_UPPER / max(a_min * a_min, _T_STAR * _T_STAR))
        n = int(math.ceil((hi - lo) * speed / tol)) + 1
        pieces.append(np.linspace(lo, hi, n))
    return np.unique(np.concatenate(pieces))


def logistic_gradient_diameter(kappa_lo: float, kappa_hi: float, *, tol: float = 1e-3,
                               directions: int = 256) -> tuple[float, float]:
    r"""Diameter of the logistic gradient set, over a range of :math:`\kappa = B\lVert v\rVert`, divided by :math:`B`.

    .. math::

        \sup_{\kappa\in[\kappa_{lo}, \kappa_{hi}]}\operatorname{diam}\{\sigma(\kappa\,\hat v^\top\xi)\,\xi :
        \lVert\xi\rVert \le 1\} \;\le\; \text{upper}.

    Returns
    -------
    (estimate, upper) : tuple of float
        ``estimate`` is the largest width of the discretised profile; ``upper`` is certified: widths
        in ``directions`` directions bound the diameter within the factor :math:`1/\cos(\pi/2K)`; the
        :math:`\theta` grid of :func:`_theta_grid` (built for :math:`\kappa_{hi}`, whose speed bound
        dominates) misses no point of the curve by more than ``tol``/2, so the diameter by at most
        ``tol``; for fixed :math:`(\beta, \theta)` the gradient moves monotonically along a ray as
        :math:`\kappa` grows, so the union over the range lies in the convex hull of the profiles at the
        two ends. 64 u covers the rounding of the widths (all coordinates are at most 1).

    Examples
    --------
    At :math:`\kappa = 0` the set is the ball of radius 1/2:

    >>> est, up = logistic_gradient_diameter(0.0, 0.0)
    >>> abs(est - 1.0) < 1e-6 and 1.0 <= up <= 1.0 + 2e-3
    True
    """
    if not 0.0 <= kappa_lo <= kappa_hi < math.inf:
        raise ValueError(f"need 0 <= kappa_lo <= kappa_hi < inf, got kappa_lo={kappa_lo!r}, kappa_hi={kappa_hi!r}")
    if not 0.0 < tol < 1.0:
        raise ValueError(f"tol must be in (0, 1), got {tol!r}")
    if isinstance(directions, bool) or not isinstance(directions, int) or directions < 2:
        raise ValueError(f"directions must be an integer >= 2, got {directions!r}")
    theta = _theta_grid(kappa_hi, tol)
    m = np.maximum(_profile_envelope(theta, kappa_lo), _profile_envelope(theta, kappa_hi))
    z, r = m * np.cos(theta), m * np.sin(theta)
    points = np.concatenate([np.stack([z, r]), np.stack([z, -r]), np.zeros((2, 1))], axis=1)
    angles = (np.arange(directions) + 0.5) * math.pi / directions
    width = 0.0
    for chunk in np.array_split(angles, max(1, directions // 32)):
        proj = np.stack([np.cos(chunk), np.sin(chunk)], axis=1) @ points
        width = max(width, float(np.max(proj.max(axis=1) - proj.min(axis=1))))
    upper = width / math.cos(math.pi / (2 * directions)) + tol + 64.0 * UNIT_ROUNDOFF
    return width, upper


def certified_logistic_sensitivity(problem, feature_radius: float) -> dict[str, float]:
    r"""Certified upper bound on :math:`\max\lVert w - w'\rVert` over all replace-one neighbours, logistic loss.

    .. math::

        \Delta_{k,2} \le \frac{B\,\overline{\mathrm{diam}}}{(\rho+\mu) D_k}, \qquad
        \kappa \in [B(\lVert c\rVert - r)_+,\; B(\lVert c\rVert + r)], \quad
        c = \frac{\rho w_{s,(q)} + \varphi_k}{\rho+\mu}, \; r = \frac{B}{\rho+\mu}

    for every data set with :math:`\lVert x\rVert \le B`, :math:`y \in [0,1]` (the strong-monotonicity
    argument of the module docstring). ``ratio`` divides it by :math:`2B/(\rho D_k)`.
    """
    if problem.loss != "logistic" or problem.batch_shape:
        raise ValueError("certified_logistic_sensitivity needs a single (unbatched) logistic instance")
    B = float(feature_radius)
    check_feature_radius(problem.X, B, "X")
    modulus = problem.strong_convexity
    slack = gamma(problem.dim + 8)
    centre = float(np.linalg.norm(problem.prox_center))
    radius = B / modulus
    kappa_hi = B * (centre + radius) * (1.0 + slack)
    kappa_lo = max(0.0, B * (centre - radius) * (1.0 - slack))
    # The certificate decides the claim when diameter < 2 (rho + mu)/rho; if the default grid is too
    # coarse to decide (large kappa), refine it once (grid spacing and directions) to a quarter of the gap.
    decisive = 2.0 * modulus / problem.rho
    estimate, diameter = logistic_gradient_diameter(kappa_lo, kappa_hi)
    if diameter >= decisive > estimate:
        gap = decisive - estimate
        directions = int(min(8192, max(256, math.ceil(math.pi / (2.0 * math.sqrt(gap / 8.0))))))
        estimate, diameter = logistic_gradient_diameter(kappa_lo, kappa_hi, tol=max(gap / 4.0, 1e-6),
                                                        directions=directions)
    upper = B * diameter / (modulus * problem.n_samples) * (1.0 + gamma(4))
    claimed = 2.0 * B / (problem.rho * problem.n_samples)
    return {"upper": upper, "ratio": upper / claimed, "diameter_estimate": estimate, "diameter_upper": diameter,
            "kappa_lo": kappa_lo, "kappa_hi": kappa_hi}


def check_feature_radius(X, B: float, name: str) -> None:
    """Assumption 3 with C_k from B needs every feature in the ball of radius B (up to rounding)."""
    norms = np.linalg.norm(np.atleast_2d(X), axis=-1)
    limit = B * (1.0 + gamma(np.shape(X)[-1] + 2))
    if np.any(norms > limit):
        raise ValueError(f"{name} must lie in the ball of radius feature_radius={B!r}, got a feature of norm "
                         f"{float(norms.max())!r}")
