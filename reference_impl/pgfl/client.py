r"""PGFL client local subproblem (4): the exact minimiser, certified by its gradient residual.

Client :math:`k \in \mathcal C_{s,(q)}` at iteration :math:`n` solves (seed 000_133b71fd0aa99eb4.txt,
eq. (4), line 67; seed 004_180cd372987d137b.txt, eq. (5.4))

.. math::

    w_k^{(n)} = \arg\min_w\; F(w), \qquad
    F(w) = \frac{1}{D_k}\sum_{i=1}^{D_k} \ell(x_{k,i}, y_{k,i}; w) + \frac{\lambda}{|\mathcal C_s|}\lVert w\rVert^2
           - \langle \varphi_k^{(n-1)}, w - w_{s,(q)}^{(n-1)}\rangle
           + \frac{\rho}{2}\lVert w - w_{s,(q)}^{(n-1)}\rVert^2,

with :math:`R(w) = \lVert w\rVert^2` (docs/papers/pgfl.md#algorithm-1; the classification regulariser is
unspecified in the seeds, this is docs/papers/pgfl.md's default). Two per-sample losses, both generalised linear
in :math:`a = x^\top w`:

* ``"logistic"``: :math:`\ell = \log(1 + e^{a}) - y a`, :math:`y \in [0, 1]` (seed 000 eqs. (54)-(55));
  :math:`\nabla_w\ell = (\sigma(a) - y)x`, so :math:`\lVert\nabla_w\ell\rVert \le \lVert x\rVert`.
* ``"huber"``: :math:`\ell = h_\kappa(a - y)` with :math:`h_\kappa(r) = r^2/2` for :math:`|r| \le \kappa`
  and :math:`\kappa(|r| - \kappa/2)` otherwise; :math:`\nabla_w\ell = \operatorname{clip}(a-y, \pm\kappa)\,x`,
  so :math:`\lVert\nabla_w\ell\rVert \le \kappa\lVert x\rVert`. (Not in the seeds: the loss of
  docs/papers/pgfl.md#erratum-r-c, for which Lemma 1's bound is attained.)

:math:`F` is :math:`(\rho + \mu)`-strongly convex with :math:`\mu = 2\lambda/|\mathcal C_s|`, so the
minimiser is unique and any point :math:`\hat w` satisfies

.. math:: \lVert \hat w - w^\star\rVert \le \lVert\nabla F(\hat w)\rVert / (\rho + \mu).

Up to a constant, :math:`F` is the :class:`theory.logistic.ProximalGLM` with weights :math:`1/D`, curvature
:math:`\rho + \mu` and centre :math:`(\rho w_s + \varphi)/(\rho + \mu)`; :func:`solve_client_subproblem` hands it to
the one certified Newton solver
(:func:`theory.logistic.solve_proximal_newton`), which stops when the gradient norm *including a counted bound
on the rounding of its evaluation* is at most ``gtol``; :attr:`ClientSolution.error_bound` is the resulting
certified distance to the exact minimiser. Every array may carry batch dimensions ``(..., D, d)``; all of them
are solved together. Deterministic (no randomness).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from theory._rounding import gamma
from theory._validate import finite_array, real_scalar
from theory.logistic import (
    LOSSES,
    GLMData,
    NewtonSolution,
    ProximalGLM,
    gradient_rounding,
    loss_terms,
    proximal_gradient,
    proximal_hessian,
    proximal_objective,
    solve_proximal_newton,
)

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

#: Gradient-norm tolerance handed to the solve (docs/papers/pgfl.md#lemma-1), certified (rounding included).
DEFAULT_GTOL = 1e-11
#: The certified solution of (4): :class:`theory.logistic.NewtonSolution` (``w``, ``grad_norm``, ``error_bound``,
#: ``iterations``, ``converged``).
ClientSolution = NewtonSolution


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
        X = finite_array("X", self.X, 2)
        D, d = X.shape[-2:]
        if D < 1 or d < 1:
            raise ValueError(f"X must have D >= 1 rows and d >= 1 columns, got shape {X.shape}")
        batch = X.shape[:-2]
        y = finite_array("y", self.y, 1)
        if y.shape != batch + (D,):
            raise ValueError(f"y must have shape {batch + (D,)} to match X {X.shape}, got {y.shape}")
        arrays = {}
        for name in ("w_server", "phi_dual"):
            v = finite_array(name, getattr(self, name), 0)
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

    @functools.cached_property
    def glm(self) -> ProximalGLM:
        """(4) as a :class:`theory.logistic.ProximalGLM` (``center_error`` bounds the rounding of the prox centre)."""
        data = GLMData(X=self.X, y=self.y, weights=np.full(self.y.shape, 1.0 / self.n_samples), loss=self.loss,
                       huber_threshold=self.huber_threshold)
        m = self.strong_convexity
        return ProximalGLM(data=data, curvature=m, center=self.prox_center,
                           center_error=gamma(6) * (self.rho * np.abs(self.w_server) + np.abs(self.phi_dual)) / m)

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


def loss_derivatives(problem: ClientSubproblem, w) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Per-sample :math:`\ell`, :math:`\partial\ell/\partial a`, :math:`\partial^2\ell/\partial a^2` at
    :math:`a_i = x_i^\top w`.

    Each has shape (..., D). For Huber the second derivative is the generalised one,
    :math:`\mathbb 1\{|a - y| \le \kappa\}` (:func:`theory.logistic.loss_terms`).
    """
    w = np.asarray(w, dtype=np.float64)
    return loss_terms(problem.glm.data, np.einsum("...ij,...j->...i", problem.X, w))


def subproblem_objective(problem: ClientSubproblem, w) -> np.ndarray:
    """:math:`F(w)` of (4), shape ``batch_shape``."""
    v, m = problem.prox_center, problem.strong_convexity
    constant = (np.sum(problem.phi_dual * problem.w_server, axis=-1)
                + 0.5 * (problem.rho * np.sum(problem.w_server**2, axis=-1) - m * np.sum(v * v, axis=-1)))
    return proximal_objective(problem.glm, w) + constant


def subproblem_gradient(problem: ClientSubproblem, w) -> np.ndarray:
    r""":math:`\nabla F(w) = \frac1{D}X^\top\ell'(Xw) + \mu w - \varphi + \rho(w - w_{s,(q)})`, shape (..., d)."""
    return proximal_gradient(problem.glm, w)


def subproblem_hessian(problem: ClientSubproblem, w) -> np.ndarray:
    r""":math:`\frac1{D}X^\top \operatorname{diag}(\ell''(Xw)) X + (\rho + \mu)I`, shape (..., d, d).

    For Huber, :math:`\ell''` is the generalised second derivative :math:`\mathbb 1\{|a - y| \le \kappa\}`.
    """
    return proximal_hessian(problem.glm, w)


def subproblem_gradient_rounding(problem: ClientSubproblem, w) -> np.ndarray:
    r"""Counted bound on :math:`\lVert \mathrm{fl}(\nabla F(w)) - \nabla F(w)\rVert_2`, shape ``batch_shape``
    (:func:`theory.logistic.gradient_rounding`, including the rounding of the prox centre)."""
    return gradient_rounding(problem.glm, w)


def solve_client_subproblem(problem: ClientSubproblem, *, gtol: float = DEFAULT_GTOL, max_iter: int = 100,
                            w0=None) -> ClientSolution:
    r"""Minimise (4) until the certified gradient norm is at most ``gtol``
    (:func:`theory.logistic.solve_proximal_newton`).

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
    theory.logistic.NewtonNotConverged
        (an ArithmeticError) If some instance has not reached ``gtol`` after ``max_iter`` iterations (for example
        because the rounding floor of its gradient exceeds ``gtol`` at extreme scales). Nothing is returned
        uncertified.

    Examples
    --------
    With one sample at :math:`x = 0` the data term is constant, so the minimiser is the prox centre:

    >>> p = ClientSubproblem(X=[[0.0, 0.0]], y=[1.0], w_server=[1.0, 2.0], phi_dual=[0.5, 0.0], rho=2.0,
    ...                      lam=0.0, n_server_clients=1)
    >>> sol = solve_client_subproblem(p)
    >>> bool(np.all(np.abs(sol.w - [1.25, 2.0]) <= sol.error_bound))
    True
    """
    return solve_proximal_newton(problem.glm, gtol=gtol, max_iter=max_iter, w0=w0)
