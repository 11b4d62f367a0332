r"""The one certified Newton solver for proximal generalised-linear problems (logistic, Huber).

Problem, batched over a leading shape ``...`` (clients, runs, clusters):

.. math:: F(w) = \sum_{i=1}^{n} c_i\,\ell(x_i^\top w; y_i) + \tfrac{m}{2}\lVert w - v\rVert^2,

with sample weights :math:`c_i \ge 0` (``1/D`` for a mean, 0 on padding), the curvature :math:`m \ge 0` of the
proximal term (ridge share plus ADMM penalty) and its centre :math:`v` (a ridge term plus a linear term
:math:`\frac\mu2\lVert w\rVert^2 + \frac\rho2\lVert w - w_s\rVert^2 - \varphi^\top w` is this with
:math:`m = \mu + \rho`,
:math:`v = (\rho w_s + \varphi)/m`, up to a constant; the centre form keeps the rounding of :math:`v` common to
neighbouring problems). Losses: ``"logistic"``,
:math:`\ell = \log(1 + e^a) - y a` with :math:`y \in [0, 1]`; ``"huber"``, :math:`\ell = h_\kappa(a - y)`.
Both are convex, so :math:`F` is :math:`m`-strongly convex and any :math:`\hat w` satisfies
:math:`\lVert\hat w - w^\star\rVert \le \lVert\nabla F(\hat w)\rVert / m`.

:func:`solve_proximal_newton` runs damped Newton (Armijo backtracking; generalised Hessian for Huber) until the
*certified* gradient norm (computed norm plus a counted bound on the rounding of its evaluation) is at most the
caller's ``gtol``, with an iteration cap. It returns a :class:`NewtonSolution` (the certificate: gradient norm,
iterations, per-instance ``converged``) and raises :class:`NewtonNotConverged` when an instance did not converge
(``strict=False`` returns the flagged solution instead). Callers: :mod:`reference_impl.pgfl` (client step (4)),
:mod:`reference_impl.pgfl.client` (Lemma 1's certified subproblem), :mod:`theory.pgfl.optima` (cluster optima).

References
----------
.. [1] seed 000_133b71fd0aa99eb4.txt, eqs. (4), (54)-(55); docs/papers/pgfl.md#algorithm-1,
       docs/papers/pgfl.md#erratum-r-c (Huber).
.. [2] Boyd & Vandenberghe, *Convex Optimization*, sec. 9.5 (damped Newton, backtracking line search).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from theory._rounding import UNIT_ROUNDOFF, gamma
from theory._validate import finite_array, positive_int, real_scalar

__all__ = [
    "DEFAULT_MAX_ITER",
    "LOSSES",
    "GLMData",
    "NewtonNotConverged",
    "NewtonSolution",
    "ProximalGLM",
    "gradient_rounding",
    "loss_terms",
    "proximal_gradient",
    "proximal_hessian",
    "proximal_objective",
    "sigmoid",
    "solve_proximal_newton",
]

LOSSES = ("logistic", "huber")
#: Newton iterations before giving up (from a warm or prox-centre start the solves take 3-15).
DEFAULT_MAX_ITER = 100
#: Armijo sufficient-decrease constant and backtracking halvings per Newton step (Boyd & Vandenberghe 9.2).
_ARMIJO = 1e-4
_MAX_HALVINGS = 60


def sigmoid(a):
    r""":math:`\sigma(a) = 1/(1 + e^{-a})`, overflow-free for every finite ``a`` (scipy's ``expit``).

    >>> bool(sigmoid(-800.0) == 0.0 and sigmoid(800.0) == 1.0 and sigmoid(0.0) == 0.5)
    True
    """
    return expit(a)


@dataclass(frozen=True, kw_only=True)
class GLMData:
    r"""The samples of a (batch of) generalised-linear data term :math:`\sum_i c_i\,\ell(x_i^\top w; y_i)`.

    Attributes
    ----------
    X : ndarray, shape (..., n, d)
        Features as rows, ``n >= 1``, ``d >= 1``; the batch shape may be smaller than the solve's (it broadcasts).
    y : ndarray, shape (..., n)
        Responses: in [0, 1] for the logistic loss, any real for Huber.
    weights : ndarray, shape (..., n)
        Sample weights :math:`c_i \ge 0`.
    loss : {"logistic", "huber"}
    huber_threshold : float
        :math:`\kappa > 0` of the Huber loss (ignored for logistic).

    Arrays are read-only float64 copies.
    """

    X: np.ndarray
    y: np.ndarray
    weights: np.ndarray
    loss: str = "logistic"
    huber_threshold: float = 1.0

    def __post_init__(self) -> None:
        X = finite_array("X", self.X, 2)
        if X.shape[-2] < 1 or X.shape[-1] < 1:
            raise ValueError(f"X must have n >= 1 rows and d >= 1 columns, got shape {X.shape}")
        y = finite_array("y", self.y, 1)
        c = finite_array("weights", self.weights, 1)
        for name, value in (("y", y), ("weights", c)):
            if value.shape != X.shape[:-1]:
                raise ValueError(f"{name} must have shape {X.shape[:-1]} to match X {X.shape}, got {value.shape}")
        if np.any(c < 0.0):
            raise ValueError(f"weights must be >= 0, got min {float(c.min())!r}")
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        if self.loss == "logistic" and (np.any(y < 0.0) or np.any(y > 1.0)):
            raise ValueError(f"y must lie in [0, 1] for the logistic loss, got min {y.min()!r}, max {y.max()!r}")
        kappa = real_scalar("huber_threshold", self.huber_threshold, "(0, inf)")
        for name, value in (("X", X), ("y", y), ("weights", c)):
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "huber_threshold", kappa)

    @property
    def n_samples(self) -> int:
        return self.X.shape[-2]

    @property
    def dim(self) -> int:
        return self.X.shape[-1]

    @functools.cached_property
    def abs_X(self) -> np.ndarray:
        """|X| (for the rounding bounds), computed once."""
        return np.abs(self.X)

    @functools.cached_property
    def gram(self) -> np.ndarray:
        """:math:`XX^\\top`, shape (..., n, n): the Woodbury Newton step when n < d, computed once."""
        return self.X @ np.swapaxes(self.X, -1, -2)

    @property
    def slope_bound(self) -> float:
        r"""Bound on :math:`|\partial\ell/\partial a|`: 1 (logistic, :math:`y \in [0, 1]`) or :math:`\kappa` (Huber)."""
        return 1.0 if self.loss == "logistic" else self.huber_threshold


@dataclass(frozen=True, kw_only=True)
class ProximalGLM:
    r""":math:`F(w) = \sum_i c_i\ell(x_i^\top w; y_i) + \frac m2\lVert w - v\rVert^2` for a batch.

    Attributes
    ----------
    data : GLMData
    curvature : float or ndarray broadcastable to the batch shape
        :math:`m \ge 0`, the strong-convexity modulus of :math:`F`.
    center : ndarray, shape (..., d)
        :math:`v`.
    center_error : float or ndarray broadcastable to (..., d)
        Componentwise bound on :math:`|v - v_{\text{exact}}|` when ``center`` was computed in floating point from
        the caller's exact data (e.g. :math:`(\rho w_s + \varphi)/(\rho + \mu)`); :math:`m` times it enters the
        certified gradient norm. Default 0.
    """

    data: GLMData
    curvature: np.ndarray | float
    center: np.ndarray
    center_error: np.ndarray | float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.data, GLMData):
            raise TypeError(f"data must be a GLMData, got {type(self.data).__name__}")
        m = finite_array("curvature", self.curvature, 0)
        if np.any(m < 0.0):
            raise ValueError(f"curvature must be >= 0, got min {float(m.min())!r}")
        v = finite_array("center", self.center, 1)
        if v.shape[-1] != self.data.dim:
            raise ValueError(f"center must have last dimension d = {self.data.dim}, got shape {v.shape}")
        err = finite_array("center_error", self.center_error, 0)
        if np.any(err < 0.0):
            raise ValueError(f"center_error must be >= 0, got min {float(err.min())!r}")
        try:
            shape = np.broadcast_shapes(self.data.X.shape[:-2], m.shape, v.shape[:-1], err.shape[:-1])
        except ValueError as exc:
            raise ValueError(f"X {self.data.X.shape}, curvature {m.shape}, center {v.shape} and center_error "
                             f"{err.shape} must broadcast to one batch shape") from exc
        for name, value in (("curvature", m), ("center", v), ("center_error", err)):
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_batch_shape", shape)

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self._batch_shape

    @property
    def dim(self) -> int:
        return self.data.dim

    def start(self) -> np.ndarray:
        """The default Newton start: :math:`v`, the minimiser without the data term, as a batch + (d,) array."""
        return np.array(np.broadcast_to(self.center, self.batch_shape + (self.dim,)))


def _margins(data: GLMData, w: np.ndarray) -> np.ndarray:
    return (data.X @ w[..., None])[..., 0]


def loss_terms(data: GLMData, a) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Per-sample :math:`\ell`, :math:`\ell' = \partial\ell/\partial a` and :math:`\ell''` at the margins ``a``.

    Logistic: :math:`\sigma(a) - y` and :math:`\sigma(a)\sigma(-a)` (no cancellation at large :math:`|a|`).
    Huber: :math:`\operatorname{clip}(a - y, \pm\kappa)` and the generalised :math:`\mathbb 1\{|a - y| \le \kappa\}`.
    """
    y = data.y
    if data.loss == "logistic":
        s = expit(a)
        return np.logaddexp(0.0, a) - y * a, s - y, s * expit(-a)
    kappa = data.huber_threshold
    r = a - y
    inside = np.abs(r) <= kappa
    value = np.where(inside, 0.5 * r * r, kappa * (np.abs(r) - 0.5 * kappa))
    return value, np.clip(r, -kappa, kappa), inside.astype(np.float64)


def _curvature(problem: ProximalGLM) -> np.ndarray:
    return np.broadcast_to(problem.curvature, problem.batch_shape)


def _objective_and_scale(problem: ProximalGLM, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    value, _, _ = loss_terms(problem.data, _margins(problem.data, w))
    c, diff = problem.data.weights, w - problem.center
    data_term = np.sum(c * value, axis=-1)
    quad = 0.5 * _curvature(problem) * np.sum(diff * diff, axis=-1)
    return data_term + quad, np.sum(c * np.abs(value), axis=-1) + quad


def proximal_objective(problem: ProximalGLM, w) -> np.ndarray:
    """:math:`F(w)`, shape ``batch_shape``."""
    return _objective_and_scale(problem, np.asarray(w, dtype=np.float64))[0]


def proximal_gradient(problem: ProximalGLM, w) -> np.ndarray:
    r""":math:`\nabla F(w) = X^\top(c \odot \ell'(Xw)) + m(w - v)`, shape (..., d)."""
    w = np.asarray(w, dtype=np.float64)
    _, d1, _ = loss_terms(problem.data, _margins(problem.data, w))
    data = (np.swapaxes(problem.data.X, -1, -2) @ (problem.data.weights * d1)[..., None])[..., 0]
    return data + _curvature(problem)[..., None] * (w - problem.center)


def proximal_hessian(problem: ProximalGLM, w) -> np.ndarray:
    r""":math:`X^\top\operatorname{diag}(c \odot \ell''(Xw))X + mI`, shape (..., d, d) (generalised for Huber)."""
    w = np.asarray(w, dtype=np.float64)
    _, _, d2 = loss_terms(problem.data, _margins(problem.data, w))
    Xt = np.swapaxes(problem.data.X, -1, -2)
    H = (Xt * (problem.data.weights * d2)[..., None, :]) @ problem.data.X
    return H + _curvature(problem)[..., None, None] * np.eye(problem.dim)


def gradient_rounding(problem: ProximalGLM, w) -> np.ndarray:
    r"""Counted bound on :math:`\lVert\mathrm{fl}(\nabla F(w)) - \nabla F(w)\rVert_2`, shape ``batch_shape``.

    Componentwise (Higham's :math:`\gamma_n`, :func:`theory._rounding.gamma`): the margins carry at most
    :math:`\gamma_{d+1}|x_i|^\top|w|`, which the slope passes on with Lipschitz constant 1/4 (logistic) or 1
    (Huber); evaluating the slope adds :math:`\gamma_4(\sigma(a_i) + |y_i|)` (logistic) or
    :math:`\gamma_2(|a_i| + |y_i|)` (Huber); the weighted sum over the ``n`` samples, the weights' own rounding
    and the term :math:`m(w - v)` add :math:`\gamma_{n+16}` times the sum of the absolute values of the terms;
    :math:`m` times ``center_error`` is added.
    """
    w = np.asarray(w, dtype=np.float64)
    data = problem.data
    a = _margins(data, w)
    _, d1, _ = loss_terms(data, a)
    absXt = np.swapaxes(data.abs_X, -1, -2)
    err_a = gamma(data.dim + 1) * (data.abs_X @ np.abs(w)[..., None])[..., 0]
    if data.loss == "logistic":
        err_d1 = 0.25 * err_a + gamma(4) * (expit(a) + np.abs(data.y))
    else:
        err_d1 = err_a + gamma(2) * (np.abs(a) + np.abs(data.y))
    c = data.weights
    propagated = (absXt @ (c * err_d1)[..., None])[..., 0]
    m = _curvature(problem)[..., None]
    terms = (absXt @ (c * np.abs(d1))[..., None])[..., 0] + m * np.abs(w - problem.center)
    return np.linalg.norm(propagated + gamma(data.n_samples + 16) * terms + m * problem.center_error, axis=-1)


def _certificate(problem: ProximalGLM, w: np.ndarray, g: np.ndarray, gtol: float):
    """(certified gradient norm, still worth a Newton step): an instance is done when it is certified at ``gtol``
    or when its computed gradient is already below the rounding floor and that floor exceeds ``gtol`` (no step
    can certify it: reported as not converged instead of spinning to the cap)."""
    computed = np.linalg.norm(g, axis=-1) * (1.0 + gamma(problem.dim + 2))
    floor = gradient_rounding(problem, w)
    norm = computed + floor
    return norm, (norm > gtol) & ~((floor > gtol) & (computed <= floor))


def _newton_direction(problem: ProximalGLM, w: np.ndarray, g: np.ndarray) -> np.ndarray:
    r""":math:`-H^{-1}g`. With n < d and m > 0 through Woodbury: :math:`H = mI + UU^\top`, :math:`U = X^\top S`,
    :math:`S = \operatorname{diag}(\sqrt{c\ell''})`, so :math:`H^{-1}g = (g - U(mI + S XX^\top S)^{-1}U^\top g)/m`
    (an n x n solve instead of d x d); otherwise the dense Hessian."""
    data = problem.data
    m = _curvature(problem)
    if data.n_samples < data.dim and np.all(m > 0):
        _, _, d2 = loss_terms(data, _margins(data, w))
        s = np.sqrt(data.weights * d2)                                          # (..., n)
        inner = s[..., :, None] * data.gram * s[..., None, :] + m[..., None, None] * np.eye(data.n_samples)
        rhs = s * _margins(data, g)                                             # S X g
        z = np.linalg.solve(inner, rhs[..., None])[..., 0]
        correction = (np.swapaxes(data.X, -1, -2) @ (s * z)[..., None])[..., 0]
        return -(g - correction) / m[..., None]
    return -np.linalg.solve(proximal_hessian(problem, w), g[..., None])[..., 0]


@dataclass(frozen=True, kw_only=True)
class NewtonSolution:
    r"""A solution of :class:`ProximalGLM` with its certificate.

    Attributes
    ----------
    w : ndarray, shape batch + (d,)
        The computed minimiser :math:`\hat w`.
    grad_norm : ndarray, shape batch
        Upper bound on :math:`\lVert\nabla F(\hat w)\rVert_2` in exact arithmetic (computed norm times
        :math:`1 + \gamma_{d+2}`, plus :func:`gradient_rounding`).
    strong_convexity : float or ndarray, shape batch
        :math:`m`.
    iterations : int
        Newton iterations used (over the whole batch).
    converged : ndarray of bool, shape batch
        ``grad_norm <= gtol``.
    gtol : float
        The tolerance the caller asked for.
    """

    w: np.ndarray
    grad_norm: np.ndarray
    strong_convexity: np.ndarray | float
    iterations: int
    converged: np.ndarray
    gtol: float

    @property
    def error_bound(self) -> np.ndarray:
        r"""Certified :math:`\lVert\hat w - w^\star\rVert_2 \le \lVert\nabla F(\hat w)\rVert/m` (inf where m = 0)."""
        with np.errstate(divide="ignore"):
            return self.grad_norm / self.strong_convexity

    @property
    def all_converged(self) -> bool:
        return bool(np.all(self.converged))


class NewtonNotConverged(ArithmeticError):
    """Some instance did not reach ``gtol``; ``.solution`` holds the flagged :class:`NewtonSolution`."""

    def __init__(self, message: str, solution: NewtonSolution):
        super().__init__(message)
        self.solution = solution


def solve_proximal_newton(problem: ProximalGLM, *, gtol: float, max_iter: int = DEFAULT_MAX_ITER, w0=None,
                          strict: bool = True) -> NewtonSolution:
    r"""Minimise :class:`ProximalGLM` by damped Newton until the certified gradient norm is at most ``gtol``.

    Parameters
    ----------
    problem : ProximalGLM
        One instance or a batch, solved in lock-step (vectorised); converged instances stop moving.
    gtol : float
        Target for the exact-arithmetic gradient norm; the caller names it (no default here).
    max_iter : int
        Newton iterations before giving up.
    w0 : array, optional
        Start, broadcast to batch + (d,); default the centre :math:`v`.
    strict : bool
        Raise :class:`NewtonNotConverged` if some instance did not converge (default); ``False`` returns the
        solution with ``converged`` False there.

    Notes
    -----
    Backtracking (Armijo, factor 1/2) on :math:`F`, accepting a step whose increase is within the rounding level
    of :math:`F` so that the final quadratically convergent steps are not rejected for noise. An instance whose
    line search finds no acceptable step in 60 halvings keeps its point (never an ascent step) and is reported
    as not converged, as is one whose computed gradient is below its rounding floor while that floor exceeds
    ``gtol`` (no further step can certify it). For Huber the generalised Hessian is used (semismooth Newton).

    Examples
    --------
    The certificate bounds the gradient actually computed at the returned point:

    >>> data = GLMData(X=[[1.0, 0.0], [0.5, 2.0]], y=[1.0, 0.0], weights=[0.5, 0.5])
    >>> problem = ProximalGLM(data=data, curvature=2.0, center=[1.25, 2.0])
    >>> sol = solve_proximal_newton(problem, gtol=1e-12)
    >>> bool(sol.all_converged and np.linalg.norm(proximal_gradient(problem, sol.w)) <= sol.grad_norm <= 1e-12)
    True
    """
    if not isinstance(problem, ProximalGLM):
        raise TypeError(f"problem must be a ProximalGLM, got {type(problem).__name__}")
    gtol = real_scalar("gtol", gtol, "(0, inf)")
    max_iter = positive_int("max_iter", max_iter)
    shape = problem.batch_shape + (problem.dim,)
    if w0 is None:
        w = problem.start()
    else:
        start = finite_array("w0", w0, 1)
        try:
            w = np.array(np.broadcast_to(start, shape))
        except ValueError as exc:
            raise ValueError(f"w0 must broadcast to shape {shape}, got {start.shape}") from exc
    g = proximal_gradient(problem, w)
    gn, active = _certificate(problem, w, g, gtol)
    iterations = 0
    while active.any() and iterations < max_iter:
        iterations += 1
        step = np.where(active[..., None], _newton_direction(problem, w, g), 0.0)
        f0, scale = _objective_and_scale(problem, w)
        slope = np.sum(g * step, axis=-1)
        noise = 64.0 * UNIT_ROUNDOFF * (scale + 1.0)
        t = np.ones(problem.batch_shape)
        pending = active.copy()
        w_new = w.copy()
        for _ in range(_MAX_HALVINGS):
            trial = w + t[..., None] * step
            ok = proximal_objective(problem, trial) <= f0 + _ARMIJO * t * slope + noise
            w_new = np.where((pending & ok)[..., None], trial, w_new)
            pending &= ~ok
            if not pending.any():
                break
            t = np.where(pending, 0.5 * t, t)
        w = w_new
        g = proximal_gradient(problem, w)
        gn, worth = _certificate(problem, w, g, gtol)
        active = worth & ~pending                # a failed line search stops that instance (reported below)
    converged = gn <= gtol
    for array in (w, gn, converged):
        array.setflags(write=False)
    solution = NewtonSolution(w=w, grad_norm=gn, strong_convexity=problem.curvature, iterations=iterations,
                              converged=converged, gtol=gtol)
    if strict and not solution.all_converged:
        floor = float(np.max(gradient_rounding(problem, w)))
        raise NewtonNotConverged(
            f"Newton did not reach gtol={gtol:g} for {int(np.sum(~converged))} of {converged.size} instance(s) in "
            f"{iterations} iteration(s) (max_iter={max_iter}): certified gradient norm {float(np.max(gn)):.3g} "
            f"(rounding floor {floor:.3g})", solution)
    return solution
