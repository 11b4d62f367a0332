r"""PGFL client local subproblem (4): the exact minimiser, certified by its gradient residual.

Client :math:`k \in \mathcal C_{s,(q)}` at iteration :math:`n` solves (seed 000_133b71fd0aa99eb4.txt,
eq. (4), line 67; seed 004_180cd372987d137b.txt, eq. (5.4))

.. math::

    w_k^{(n)} = \arg\min_w\; F(w), \qquad
    F(w) = \frac{1}{D_k}\sum_{i=1}^{D_k} \ell(x_{k,i}, y_{k,i}; w) + \frac{\lambda}{|\mathcal C_s|}\lVert w\rVert^2
           - \langle \varphi_k^{(n-1)}, w - w_{s,(q)}^{(n-1)}\rangle
           + \frac{\rho}{2}\lVert w - w_{s,(q)}^{(n-1)}\rVert^2,

with :math:`R(w) = \lVert w\rVert^2` (shared/spec/pgfl.md 2.1; the classification regulariser is
unspecified in the seeds, this is the spec's default). Two per-sample losses, both generalised linear
in :math:`a = x^\top w`:

* ``"logistic"``: :math:`\ell = \log(1 + e^{a}) - y a`, :math:`y \in [0, 1]` (seed 000 eqs. (54)-(55));
  :math:`\nabla_w\ell = (\sigma(a) - y)x`, so :math:`\lVert\nabla_w\ell\rVert \le \lVert x\rVert`.
* ``"huber"``: :math:`\ell = h_\kappa(a - y)` with :math:`h_\kappa(r) = r^2/2` for :math:`|r| \le \kappa`
  and :math:`\kappa(|r| - \kappa/2)` otherwise; :math:`\nabla_w\ell = \operatorname{clip}(a-y, \pm\kappa)\,x`,
  so :math:`\lVert\nabla_w\ell\rVert \le \kappa\lVert x\rVert`. (Not in the seeds: the loss of
  shared/spec/pgfl.md Review note R-c, for which Lemma 1's bound is attained.)

:math:`F` is :math:`(\rho + \mu)`-strongly convex with :math:`\mu = 2\lambda/|\mathcal C_s|`, so the
minimiser is unique and any point :math:`\hat w` satisfies

.. math:: \lVert \hat w - w^\star\rVert \le \lVert\nabla F(\hat w)\rVert / (\rho + \mu).

:func:`solve_client_subproblem` runs a damped Newton method (generalised Hessian for Huber) until the
gradient norm, *including a counted bound on the rounding error of its evaluation*, is at most
``gtol``; :attr:`ClientSolution.error_bound` is the resulting certified distance to the exact
minimiser. Clients are rows of a leading batch axis: every array may carry batch dimensions
``(..., D, d)`` and all of them are solved together. The solver is deterministic (no randomness).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from theory._rounding import UNIT_ROUNDOFF, gamma
from theory._validate import real_scalar

__all__ = [
    "DEFAULT_GTOL",
    "LOSSES",
    "ClientSolution",
    "ClientSubproblem",
    "loss_derivatives",
    "solve_client_subproblem",
    "subproblem_gradient",
    "subproblem_gradient_rounding",
    "subproblem_hessian",
    "subproblem_objective",
]

LOSSES = ("logistic", "huber")
#: Gradient-norm tolerance of the solve (shared/spec/pgfl.md R3.2).
DEFAULT_GTOL = 1e-11


def _array(name: str, value, ndim_min: int) -> np.ndarray:
    try:
        x = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of real numbers, got {value!r}") from exc
    if x.ndim < ndim_min:
        raise ValueError(f"{name} must have at least {ndim_min} dimension(s), got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite, got a non-finite entry")
    return x


@dataclass(frozen=True, kw_only=True)
class ClientSubproblem:
    r"""One instance (or a batch of instances) of the client subproblem (4).

    Attributes
    ----------
    X : ndarray, shape (..., D, d)
        Features :math:`x_{k,i}` as rows; ``D >= 1``, ``d >= 1``.
    y : ndarray, shape (..., D)
        Responses: in :math:`[0, 1]` for the logistic loss, any real for Huber.
    w_server : ndarray, shape broadcastable to (..., d)
        Server model :math:`w_{s,(q)}^{(n-1)}` (conditioning input).
    phi_dual : ndarray, shape broadcastable to (..., d)
        Client dual :math:`\varphi_k^{(n-1)}` (conditioning input; not the zCDP parameter).
    rho : float
        ADMM penalty :math:`\rho > 0`.
    lam : float
        Regularisation weight :math:`\lambda \ge 0`.
    n_server_clients : int
        :math:`|\mathcal C_s| \ge 1`, the number of clients of the client's server.
    loss : {"logistic", "huber"}
    huber_threshold : float
        :math:`\kappa > 0` of the Huber loss (ignored for logistic).

    Arrays are stored as read-only float64 copies, ``w_server`` and ``phi_dual`` broadcast to the
    batch shape.
    """

    X: np.ndarray
    y: np.ndarray
    w_server: np.ndarray
    phi_dual: np.ndarray
    rho: float
    lam: float
    n_server_clients: int
    loss: str = "logistic"
    huber_threshold: float = 1.0

    def __post_init__(self) -> None:
        X = _array("X", self.X, 2)
        D, d = X.shape[-2:]
        if D < 1 or d < 1:
            raise ValueError(f"X must have D >= 1 rows and d >= 1 columns, got shape {X.shape}")
        batch = X.shape[:-2]
        y = _array("y", self.y, 1)
        if y.shape != batch + (D,):
            raise ValueError(f"y must have shape {batch + (D,)} to match X {X.shape}, got {y.shape}")
        arrays = {}
        for name in ("w_server", "phi_dual"):
            v = _array(name, getattr(self, name), 0)
            try:
                arrays[name] = np.array(np.broadcast_to(v, batch + (d,)))
            except ValueError as exc:
                raise ValueError(f"{name} must broadcast to shape {batch + (d,)}, got {v.shape}") from exc
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        if self.loss == "logistic" and (np.any(y < 0.0) or np.any(y > 1.0)):
            raise ValueError(f"y must lie in [0, 1] for the logistic loss, got min {y.min()!r}, max {y.max()!r}")
        rho = real_scalar("rho", self.rho, "(0, inf)")
        lam = real_scalar("lam", self.lam, "[0, inf)")
        kappa = real_scalar("huber_threshold", self.huber_threshold, "(0, inf)")
        n = self.n_server_clients
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n_server_clients must be an integer >= 1, got {n!r}")
        for name, value in (("X", X), ("y", y), *arrays.items()):
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "rho", rho)
        object.__setattr__(self, "lam", lam)
        object.__setattr__(self, "huber_threshold", kappa)
        object.__setattr__(self, "n_server_clients", int(n))

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self.X.shape[:-2]

    @property
    def n_samples(self) -> int:
        """:math:`D_k`."""
        return self.X.shape[-2]

    @property
    def dim(self) -> int:
        return self.X.shape[-1]

    @property
    def mu(self) -> float:
        r"""Curvature of the regulariser term, :math:`\mu = 2\lambda/|\mathcal C_s|`."""
        return 2.0 * self.lam / self.n_server_clients

    @property
    def strong_convexity(self) -> float:
        r""":math:`\rho + \mu`, a strong-convexity modulus of :math:`F` (both losses are convex)."""
        return self.rho + self.mu

    @property
    def loss_slope_bound(self) -> float:
        r"""Bound on :math:`|\partial\ell/\partial a|`: 1 (logistic, :math:`y \in [0,1]`) or :math:`\kappa` (Huber)."""
        return 1.0 if self.loss == "logistic" else self.huber_threshold

    @property
    def prox_center(self) -> np.ndarray:
        r""":math:`(\rho w_{s,(q)} + \varphi_k)/(\rho + \mu)`, the minimiser of :math:`F` without its data term."""
        return (self.rho * self.w_server + self.phi_dual) / self.strong_convexity

    def replace_last_sample(self, x_new, y_new) -> ClientSubproblem:
        """The replace-one neighbour: the same conditioning inputs, the last sample swapped.

        ``x_new`` has shape (..., d) and ``y_new`` shape (...,), broadcast to the batch shape.
        """
        X = np.array(self.X)
        y = np.array(self.y)
        X[..., -1, :] = np.broadcast_to(np.asarray(x_new, dtype=np.float64), self.batch_shape + (self.dim,))
        y[..., -1] = np.broadcast_to(np.asarray(y_new, dtype=np.float64), self.batch_shape)
        return ClientSubproblem(X=X, y=y, w_server=self.w_server, phi_dual=self.phi_dual, rho=self.rho,
                                lam=self.lam, n_server_clients=self.n_server_clients, loss=self.loss,
                                huber_threshold=self.huber_threshold)


def _loss_terms(problem: ClientSubproblem, a: np.ndarray):
    y = problem.y
    if problem.loss == "logistic":
        s = expit(a)
        return np.logaddexp(0.0, a) - y * a, s - y, s * expit(-a)
    kappa = problem.huber_threshold
    r = a - y
    inside = np.abs(r) <= kappa
    value = np.where(inside, 0.5 * r * r, kappa * (np.abs(r) - 0.5 * kappa))
    return value, np.clip(r, -kappa, kappa), inside.astype(np.float64)


def _margins(problem: ClientSubproblem, w: np.ndarray) -> np.ndarray:
    return np.einsum("...ij,...j->...i", problem.X, w)


def loss_derivatives(problem: ClientSubproblem, w) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Per-sample :math:`\ell`, :math:`\partial\ell/\partial a`, :math:`\partial^2\ell/\partial a^2` at :math:`a_i = x_i^\top w`.

    Each has shape (..., D). For Huber the second derivative is the generalised one,
    :math:`\mathbb 1\{|a - y| \le \kappa\}`.
    """
    return _loss_terms(problem, _margins(problem, np.asarray(w, dtype=np.float64)))


def subproblem_objective(problem: ClientSubproblem, w) -> np.ndarray:
    """:math:`F(w)` of (4), shape ``batch_shape``."""
    w = np.asarray(w, dtype=np.float64)
    value, _, _ = _loss_terms(problem, _margins(problem, w))
    diff = w - problem.w_server
    return (value.mean(axis=-1) + 0.5 * problem.mu * np.sum(w * w, axis=-1) - np.sum(problem.phi_dual * diff, axis=-1)
            + 0.5 * problem.rho * np.sum(diff * diff, axis=-1))


def subproblem_gradient(problem: ClientSubproblem, w) -> np.ndarray:
    r""":math:`\nabla F(w) = \frac1{D}X^\top\ell'(Xw) + \mu w - \varphi + \rho(w - w_{s,(q)})`, shape (..., d)."""
    w = np.asarray(w, dtype=np.float64)
    _, d1, _ = _loss_terms(problem, _margins(problem, w))
    data = np.einsum("...ij,...i->...j", problem.X, d1) / problem.n_samples
    return data + problem.mu * w - problem.phi_dual + problem.rho * (w - problem.w_server)


def subproblem_hessian(problem: ClientSubproblem, w) -> np.ndarray:
    r""":math:`\frac1{D}X^\top \operatorname{diag}(\ell''(Xw)) X + (\rho + \mu)I`, shape (..., d, d).

    For Huber, :math:`\ell''` is the generalised second derivative :math:`\mathbb 1\{|a - y| \le \kappa\}`.
    """
    w = np.asarray(w, dtype=np.float64)
    _, _, d2 = _loss_terms(problem, _margins(problem, w))
    H = np.einsum("...ij,...i,...ik->...jk", problem.X, d2, problem.X) / problem.n_samples
    return H + problem.strong_convexity * np.eye(problem.dim)


def subproblem_gradient_rounding(problem: ClientSubproblem, w) -> np.ndarray:
    r"""Counted bound on :math:`\lVert \mathrm{fl}(\nabla F(w)) - \nabla F(w)\rVert_2`, shape ``batch_shape``.

    Componentwise (Higham's :math:`\gamma_n`, :func:`theory._rounding.gamma`): the margins
    :math:`a_i = x_i^\top w` carry at most :math:`\gamma_{d}\,|x_i|^\top|w|`, which the loss slope passes
    on with Lipschitz constant :math:`L'` (1/4 logistic, 1 Huber); evaluating the slope adds
    :math:`\gamma_4(|\sigma(a_i)| + |y_i|)` (logistic) or :math:`\gamma_2(|a_i| + |y_i|)` (Huber); the
    remaining sums and products add :math:`\gamma_{D+8}` times the sum of the absolute values of the
    terms of :math:`\nabla F`.
    """
    w = np.asarray(w, dtype=np.float64)
    a = _margins(problem, w)
    _, d1, _ = _loss_terms(problem, a)
    absX = np.abs(problem.X)
    err_a = gamma(problem.dim + 1) * np.einsum("...ij,...j->...i", absX, np.abs(w))
    if problem.loss == "logistic":
        err_d1 = 0.25 * err_a + gamma(4) * (expit(a) + np.abs(problem.y))
    else:
        err_d1 = err_a + gamma(2) * (np.abs(a) + np.abs(problem.y))
    D = problem.n_samples
    propagated = np.einsum("...ij,...i->...j", absX, err_d1) / D
    terms = (np.einsum("...ij,...i->...j", absX, np.abs(d1)) / D + problem.mu * np.abs(w) + np.abs(problem.phi_dual)
             + problem.rho * (np.abs(w) + np.abs(problem.w_server)))
    return np.linalg.norm(propagated + gamma(D + 8) * terms, axis=-1)


@dataclass(frozen=True, kw_only=True)
class ClientSolution:
    r"""Solution of (4) with its certificate.

    Attributes
    ----------
    w : ndarray, shape (..., d)
        Computed minimiser :math:`\hat w`.
    grad_norm : ndarray, shape batch
        Upper bound on :math:`\lVert\nabla F(\hat w)\rVert_2` in exact arithmetic: the computed norm
        (times :math:`1 + \gamma_{d+2}`) plus :func:`subproblem_gradient_rounding`.
    strong_convexity : float
        :math:`\rho + \mu`.
    iterations : int
        Newton iterations used (over the whole batch).
    """

    w: np.ndarray
    grad_norm: np.ndarray
    strong_convexity: float
    iterations: int

    @property
    def error_bound(self) -> np.ndarray:
        r"""Certified :math:`\lVert\hat w - w^\star\rVert_2 \le \lVert\nabla F(\hat w)\rVert/(\rho + \mu)`."""
        return self.grad_norm / self.strong_convexity


def _certified_grad_norm(problem: ClientSubproblem, w: np.ndarray, g: np.ndarray) -> np.ndarray:
    return np.linalg.norm(g, axis=-1) * (1.0 + gamma(problem.dim + 2)) + subproblem_gradient_rounding(problem, w)


def solve_client_subproblem(problem: ClientSubproblem, *, gtol: float = DEFAULT_GTOL, max_iter: int = 100,
                            w0=None) -> ClientSolution:
    r"""Minimise (4) by damped Newton until the certified gradient norm is at most ``gtol``.

    Parameters
    ----------
    problem : ClientSubproblem
        One instance or a batch; the batch is solved in lock-step (vectorised).
    gtol : float
        Target for the exact-arithmetic gradient norm (computed norm plus its rounding bound).
    max_iter : int
        Newton iterations before giving up.
    w0 : array, optional
        Starting point; default :attr:`ClientSubproblem.prox_center`.

    Returns
    -------
    ClientSolution

    Raises
    ------
    RuntimeError
        If some instance has not reached ``gtol`` after ``max_iter`` iterations (for example because
        the rounding floor of its gradient exceeds ``gtol`` at extreme scales). Nothing is returned
        uncertified.

    Notes
    -----
    Backtracking (Armijo, factor 1/2) on :math:`F`, accepting a step whose increase is within the
    rounding level of :math:`F` so that the final quadratically convergent steps are not rejected
    for noise. For Huber the generalised Hessian is used (semismooth Newton); on the region where
    every residual keeps its piece, :math:`F` is quadratic and one step is exact.

    Examples
    --------
    With one sample at :math:`x = 0` the data term is constant, so the minimiser is the prox centre:

    >>> p = ClientSubproblem(X=[[0.0, 0.0]], y=[1.0], w_server=[1.0, 2.0], phi_dual=[0.5, 0.0], rho=2.0,
    ...                      lam=0.0, n_server_clients=1)
    >>> sol = solve_client_subproblem(p)
    >>> bool(np.all(np.abs(sol.w - [1.25, 2.0]) <= sol.error_bound))
    True
    """
    gtol = real_scalar("gtol", gtol, "(0, inf)")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1, got {max_iter!r}")
    w = np.array(np.broadcast_to(problem.prox_center if w0 is None else np.asarray(w0, dtype=np.float64),
                                 problem.batch_shape + (problem.dim,)))
    g = subproblem_gradient(problem, w)
    gn = _certified_grad_norm(problem, w, g)
    iterations = 0
    while np.any(gn > gtol):
        if iterations == max_iter:
            worst = float(np.max(gn))
            raise RuntimeError(f"Newton did not reach gtol={gtol:g} in max_iter={max_iter} iterations: "
                               f"certified gradient norm {worst:.3g} (rounding floor "
                               f"{float(np.max(subproblem_gradient_rounding(problem, w))):.3g})")
        iterations += 1
        active = gn > gtol
        step = -np.linalg.solve(subproblem_hessian(problem, w), g[..., None])[..., 0]
        step = np.where(active[..., None], step, 0.0)
        f0 = subproblem_objective(problem, w)
        slope = np.sum(g * step, axis=-1)
        noise = 64.0 * UNIT_ROUNDOFF * (np.abs(f0) + problem.rho * np.sum(w * w + problem.w_server ** 2, axis=-1) + 1.0)
        t = np.ones(problem.batch_shape)
        pending = active.copy()
        w_new = w.copy()
        for _ in range(60):
            trial = w + t[..., None] * step
            ok = subproblem_objective(problem, trial) <= f0 + 1e-4 * t * slope + noise
            accept = pending & ok
            w_new = np.where(accept[..., None], trial, w_new)
            pending &= ~ok
            if not pending.any():
                break
            t = np.where(pending, 0.5 * t, t)
        w = w_new
        g = subproblem_gradient(problem, w)
        gn = _certified_grad_norm(problem, w, g)
    w.setflags(write=False)
    gn.setflags(write=False)
    return ClientSolution(w=w, grad_norm=gn, strong_convexity=problem.strong_convexity, iterations=iterations)
