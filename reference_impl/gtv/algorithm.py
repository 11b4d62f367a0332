r"""Algorithm 1 of the GTV paper: primal-dual message passing (Chambolle-Pock with diagonal steps).

docs/papers/gtv.md#algorithm-1, docs/papers/gtv.md#instances (seed 002_26677b31336d654c.txt, Algorithm 1 at L37-63,
(32)-(34)).

Algorithm 1 is the Chambolle-Pock iteration with diagonal preconditioners, read with the corrections
errata E1-E2 (docs/papers/gtv.md#erratum-e1 to #erratum-e2):

.. math::

    \hat w_{k+1} = PU\{\hat w_k - T D^T\hat u_k\},\qquad
    \hat u_{k+1} = DU\{\hat u_k + \Sigma D(2\hat w_{k+1} - \hat w_k)\}

with :math:`T = \mathrm{diag}(\theta/|N^{(i)}|)`, :math:`\Sigma = \mathrm{diag}(1/(2\theta))` (θ = 1 is the seed's
choice; θ-rescaling choice (docs/papers/gtv.md#choices) keeps :math:`\lVert\Sigma^{1/2}DT^{1/2}\rVert^2` unchanged).
Every node and edge moves at once: :math:`D^T u` and :math:`Dw` are sparse / fancy-indexed array operations, the primal
update is a batched solve, the dual update a row-wise closed form; there is no Python loop over nodes or edges.

Stopping: the PDHG fixed-point residual :math:`\lVert T^{-1}(\hat w_{k+1}-\hat w_k)\rVert +
\lVert\Sigma^{-1}(\hat u_{k+1}-\hat u_k)\rVert` (docs/papers/gtv.md#review-r4) below ``tol`` times
:math:`\max(1, \lVert\nabla f(0)\rVert)`, with an iteration cap and a ``converged`` flag. The gap (34) is
available through :func:`theory.gtv.duality_gap` with an explicit domain tolerance, never used as a stopping
rule (erratum E15, docs/papers/gtv.md#erratum-e15).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from theory._rounding import gamma
from theory.gtv import (
    GTVInstance,
    dual_update,
    kkt_residuals,
    loss_gradients,
    loss_values,
    primal_objective,
)

__all__ = ["Algorithm1Run", "PrimalUpdate", "preconditioned_norm_squared", "primal_update", "run_algorithm1",
           "step_sizes"]


# --- step sizes ----------------------------------------------------------------------------------------------
def step_sizes(inst: GTVInstance, theta: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""θ-rescaled seed step sizes :math:`\tau_i = \theta/|N^{(i)}|`, :math:`\sigma_e = 1/(2\theta)`
    (L43-44, docs/papers/gtv.md#algorithm-1)."""
    if isinstance(theta, bool) or not isinstance(theta, (int, float)) or not math.isfinite(theta) or theta <= 0:
        raise ValueError(f"theta must be a finite real > 0, got {theta!r}")
    return theta / inst.degree.astype(np.float64), np.full(inst.n_edges, 1.0 / (2.0 * theta))


def preconditioned_norm_squared(inst: GTVInstance, tau, sigma) -> float:
    r""":math:`\lVert\Sigma^{1/2}DT^{1/2}\rVert_2^2` (Pock-Chambolle 2011): the largest eigenvalue of
    :math:`T^{1/2}D^T\Sigma DT^{1/2}` (dense symmetric eigensolver up to n = 3000, ARPACK above)."""
    tau = np.broadcast_to(np.asarray(tau, dtype=np.float64), (inst.n,))
    sigma = np.broadcast_to(np.asarray(sigma, dtype=np.float64), (inst.n_edges,))
    B = sp.diags(np.sqrt(sigma)) @ inst.incidence @ sp.diags(np.sqrt(tau))
    M = (B.T @ B).tocsr()
    if inst.n <= 3000:
        return float(np.linalg.eigvalsh(M.toarray())[-1])
    from scipy.sparse.linalg import eigsh

    return float(eigsh(M, k=1, which="LA", return_eigenvectors=False, tol=1e-12)[0])


def _check_steps(inst, tau, sigma) -> float:
    if np.any(~np.isfinite(tau)) or np.any(tau <= 0) or np.any(~np.isfinite(sigma)) or np.any(sigma <= 0):
        raise ValueError("tau and sigma must be finite and > 0")
    norm2 = preconditioned_norm_squared(inst, tau, sigma)
    limit = 1.0 + gamma(10 * inst.n)     # eigensolver rounding: the bipartite seed steps sit exactly at 1
    if norm2 > limit:
        raise ValueError(f"step sizes violate ||Sigma^1/2 D T^1/2||^2 <= 1: got {norm2!r} (allowed <= {limit!r})")
    return norm2


# --- primal update PU (32) ---------------------------------------------------------------------------------
class PrimalUpdate:
    r"""PU^{(i)}\{v\} = \arg\min_z L_i(z) + \frac{1}{2\tau_i}\lVert v - z\rVert^2 for all nodes at once."""

    #: Newton directions of the logistic PU: ``"woodbury"`` (an r x r solve per node), ``"hessian"`` (the d x d
    #: Hessian), ``"auto"`` (Woodbury when a node has fewer sample rows r than features d).
    DIRECTIONS = ("auto", "woodbury", "hessian")

    def __init__(self, inst: GTVInstance, tau: np.ndarray, *, newton_tol: float = 1e-12, newton_max: int = 100,
                 direction: str = "auto"):
        if direction not in self.DIRECTIONS:
            raise ValueError(f"direction must be one of {self.DIRECTIONS}, got {direction!r}")
        self.inst, self.rho = inst, 1.0 / tau
        self.newton_tol, self.newton_max = newton_tol, newton_max
        self.by_rows = direction == "woodbury" or (direction == "auto" and inst.X.shape[1] < inst.d)
        self.warm = None
        self.last_residual = 0.0      # max_i ||grad of the prox objective|| at the last inexact (Newton) update
        self.woodbury = inst.loss == "squared" and inst.X.shape[1] < inst.d
        if inst.loss == "squared" and self.woodbury:
            # (rho I + (2/m) X^T X)^-1 = (1/rho) [I - X^T (rho m/2 I + X X^T)^-1 X]: an m_max x m_max solve per node
            _, self.b, _ = inst.quadratic
            half_m = np.where(inst.m > 0, inst.m, 1) / 2.0
            K = (np.matmul(inst.X, inst.X.transpose(0, 2, 1))
                 + (self.rho * half_m)[:, None, None] * np.eye(inst.X.shape[1]))
            self.Kinv = np.linalg.inv(K)
        elif inst.loss == "squared":
            H, b, _ = inst.quadratic
            Minv = np.linalg.inv(H + self.rho[:, None, None] * np.eye(inst.d)[None])
            self.Mb = np.matmul(Minv, b[..., None])[..., 0]
            self.Mrho = Minv * self.rho[:, None, None]

    def __call__(self, v: np.ndarray) -> np.ndarray:
        if self.inst.loss == "squared" and self.woodbury:
            r = self.b + self.rho[:, None] * v
            t = np.matmul(self.inst.X, r[..., None])
            return (r - np.matmul(self.inst.X.transpose(0, 2, 1), np.matmul(self.Kinv, t))[..., 0]) / self.rho[:, None]
        if self.inst.loss == "squared":
            return self.Mb + np.matmul(self.Mrho, v[..., None])[..., 0]
        return self._newton(v)

    def _direction(self, wts, g, c, eye):
        r"""Newton direction :math:`(cI + X^TWX)^{-1}g` per node (W = diag(``wts``)). By rows (Woodbury) it is
        :math:`(g - B^T(cI_r + BB^T)^{-1}Bg)/c`, :math:`B = W^{1/2}X`: an r x r solve per node instead of forming
        and factorising the d x d Hessian (the paper-size digits: r = 10, d = 65)."""
        X = self.inst.X
        if self.by_rows:
            B = np.sqrt(wts)[:, :, None] * X
            K = np.matmul(B, B.transpose(0, 2, 1))
            K += c[:, None, None] * np.eye(X.shape[1])[None]
            t = np.linalg.solve(K, np.matmul(B, g[..., None]))
            return (g - np.matmul(B.transpose(0, 2, 1), t)[..., 0]) / c[:, None]
        Hs = np.einsum("nr,nrj,nrk->njk", wts, X, X)
        Hs += c[:, None, None] * eye
        return np.linalg.solve(Hs, g[..., None])[..., 0]

    def _newton(self, v):
        """Damped Newton on the rho-strongly convex prox objective, all nodes together (step halving per node)."""
        inst, rho = self.inst, self.rho
        eye = np.eye(inst.d)[None]

        def obj(z):
            return loss_values(inst, z) + 0.5 * rho * np.sum((z - v) ** 2, axis=1)

        z = v.copy() if self.warm is None else self.warm.copy()     # warm start: the previous output
        g0 = np.linalg.norm(loss_gradients(inst, np.zeros_like(v)), axis=1)
        scale = np.maximum(np.maximum(1.0, rho * np.linalg.norm(v, axis=1)), g0)
        for _ in range(self.newton_max):
            g = loss_gradients(inst, z) + rho[:, None] * (z - v)
            gnorm = np.linalg.norm(g, axis=1)
            if np.all(gnorm <= self.newton_tol * scale):
                self.warm, self.last_residual = z, float(gnorm.max())
                return z
            margins = np.einsum("nrj,nj->nr", inst.X, z)
            s = 0.5 * (1.0 + np.tanh(0.5 * margins))
            wts = np.where(inst.row_mask, s * (1.0 - s), 0.0) / np.maximum(inst.m, 1)[:, None]
            step = self._direction(wts, g, rho + inst.gamma * (inst.m > 0), eye)
            t = np.ones(inst.n)
            f0 = obj(z)
            slack = 64 * np.finfo(float).eps * np.maximum(1.0, np.abs(f0))   # rounding of the objective itself
            for _ in range(60):
                cand = z - t[:, None] * step
                bad = obj(cand) > f0 + slack
                if not bad.any():
                    break
                t = np.where(bad, 0.5 * t, t)
            z = z - t[:, None] * step
            moved = np.linalg.norm(t[:, None] * step, axis=1)
            if np.all(moved <= 4 * np.finfo(float).eps * (1 + np.linalg.norm(z, axis=1))):
                self.warm = z
                self.last_residual = float(
                    np.linalg.norm(loss_gradients(inst, z) + rho[:, None] * (z - v), axis=1).max())
                return z                                    # round-off level: no further progress possible
        raise RuntimeError(f"logistic primal update: Newton did not reach {self.newton_tol} in {self.newton_max} steps")


def primal_update(inst: GTVInstance, v: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """PU (32) for every node: the proximal map of L_i with weight 1/tau_i (docs/papers/gtv.md#operators)."""
    return PrimalUpdate(inst, np.asarray(tau, dtype=np.float64))(np.asarray(v, dtype=np.float64))


# --- dual step on the edges (steps 7-8) ----------------------------------------------------------------------
class _EdgeStep:
    r"""Steps 7-8 and the dual part of the R4 (docs/papers/gtv.md#review-r4) residual, computed block by block of edges.

    Returns :math:`u_{k+1} = DU\{u_k + \Sigma(z^{(e_+)} - z^{(e_-)})\}` and
    :math:`\lVert\Sigma^{-1}(u_{k+1} - u_k)\rVert` by the same floating-point operations as
    ``dual_update(inst, u + sigma[:, None] * (z[head] - z[tail]), sigma)`` and
    ``np.linalg.norm((u_new - u) * (1 / sigma[:, None]))``, so with the same bits (tests/reference_impl/test_gtv.py).
    At the paper's size the (E, d) arrays outgrow the caches and the iteration is bound by memory traffic; here the
    nLasso step runs over blocks of ``block_bytes`` (every row's arithmetic is independent of the blocking, row norms
    as ``np.linalg.norm(v, axis=1)`` computes them), a constant σ (θ-rescaled steps) multiplies as a scalar, rows
    inside the ball multiplied by 1 (exactly, as there), the iterate alternates between two preallocated
    buffers (no fresh pages per iteration) and only the final residual norm reads the whole residual array. Other
    penalties and an injected ``dual_update_fn`` call the function on whole arrays.
    """

    def __init__(self, inst: GTVInstance, sigma: np.ndarray, u: np.ndarray, dual_update_fn=None, *,
                 block_bytes: int = 1 << 20):
        self.inst, self.sigma = inst, sigma
        constant = sigma.size > 0 and bool(np.all(sigma == sigma[0]))
        self.sigma_col = sigma[:, None]
        self.inv_sigma_col = 1.0 / sigma[:, None]
        self.sigma_mul = sigma[0] if constant else None
        self.inv_sigma = self.inv_sigma_col[0, 0] if constant else None
        self.head, self.tail = inst.edges[:, 0], inst.edges[:, 1]
        self.du = dual_update if dual_update_fn is None else dual_update_fn
        self.in_place = dual_update_fn is None and inst.penalty == "l2"
        self.cap = inst.lam * inst.A
        self.b = np.empty_like(u)
        self.buffers = (np.empty_like(u), np.empty_like(u)) if self.in_place else ()
        rows = max(1, block_bytes // (8 * max(1, u.shape[1])))
        self.blocks = [slice(r, min(r + rows, inst.n_edges)) for r in range(0, inst.n_edges, rows)]

    def __call__(self, z: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, float]:
        b = self.b
        if not self.in_place:
            a = z[self.head] - z[self.tail]
            a *= self.sigma_col if self.sigma_mul is None else self.sigma_mul
            a += u
            u_new = self.du(self.inst, a, self.sigma)
            np.subtract(u_new, u, out=b)
            b *= self.inv_sigma_col if self.inv_sigma is None else self.inv_sigma
            return u_new, float(np.linalg.norm(b))
        u_new = self.buffers[0] if self.buffers[0] is not u else self.buffers[1]
        with np.errstate(divide="ignore", invalid="ignore"):     # as theory.gtv.dual_update
            for blk in self.blocks:
                a = u_new[blk]
                np.take(z, self.head[blk], axis=0, out=a)
                a -= z[self.tail[blk]]                                   # D z
                a *= self.sigma_col[blk] if self.sigma_mul is None else self.sigma_mul
                ub = u[blk]
                a += ub                                                  # u + Sigma D z
                norm = np.sqrt(np.add.reduce(a * a, axis=1))             # theory.gtv.dual_update (nLasso)
                cap = self.cap[blk]
                a *= np.where(norm > cap, cap / np.where(norm > 0, norm, 1.0), 1.0)[:, None]
                bb = b[blk]
                np.subtract(a, ub, out=bb)
                bb *= self.inv_sigma_col[blk] if self.inv_sigma is None else self.inv_sigma
        return u_new, float(np.linalg.norm(b))


# --- Algorithm 1 ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Algorithm1Run:
    """Output of :func:`run_algorithm1`: final iterates, convergence flag and the recorded curves."""

    w: np.ndarray
    u: np.ndarray
    iterations: int
    converged: bool
    residuals: np.ndarray          # fixed-point residual after each iteration k = 1..iterations
    objectives: np.ndarray         # P(w_k) at the recorded iterations
    objective_iterations: np.ndarray
    theta: float
    tau: np.ndarray
    sigma: np.ndarray
    norm_squared: float            # ||Sigma^1/2 D T^1/2||^2
    tol: float
    residual_scale: float
    meta: dict = field(default_factory=dict)   # "pu_residual": stationarity error of the last (Newton) PU

    def kkt(self, inst: GTVInstance) -> tuple[float, float]:
        """(node, edge) KKT residuals of the final pair (:func:`theory.gtv.kkt_residuals`)."""
        return kkt_residuals(inst, self.w, self.u)


def run_algorithm1(inst: GTVInstance, **kwargs) -> Algorithm1Run:
    """Algorithm 1; see :func:`_run_algorithm1` for the parameters. Runs with one BLAS thread: the batched
    small solves are slower with threads competing on a shared machine."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        return _run_algorithm1(inst, **kwargs)


def _run_algorithm1(inst: GTVInstance, *, theta: float = 1.0, tau=None, sigma=None, max_iterations: int = 10_000,
                   tol: float = 1e-10, record_every: int = 1, w0=None, u0=None, dual_update_fn=None,
                   extrapolate: bool = True, monitor=None, record_objective: bool = True) -> Algorithm1Run:
    r"""Algorithm 1 (corrected per errata E1-E2 (docs/papers/gtv.md#erratum-e1 to #erratum-e2)) from :math:`\hat w_0 =
    0, \hat u_0 = 0`.

    Parameters
    ----------
    theta : float
        Step rescaling (τ = θ/|N|, σ = 1/(2θ)); ignored where ``tau`` / ``sigma`` are given.
    tau, sigma : array_like, optional
        Explicit step sizes; ValueError unless :math:`\lVert\Sigma^{1/2}DT^{1/2}\rVert^2 \le 1` (plus eigensolver
        rounding).
    max_iterations : int
        Iteration cap R; the run reports ``converged = False`` if the residual test never passed.
    tol : float
        Relative fixed-point residual at which to stop (0 runs exactly ``max_iterations``).
    record_every : int
        Record :math:`P(\hat w_k)` every this many iterations (0: never).
    monitor : callable, optional
        ``monitor(w) -> float`` recorded with the objective (e.g. the MSE (41)); in ``run.meta["monitor"]``.
    record_objective : bool
        Record :math:`P(\hat w_k)` every ``record_every`` iterations (False: only the monitor; an objective costs
        about ten iterations at the paper's size).
    dual_update_fn, extrapolate
        Error-injection hooks for mutation tests: a replacement ``f(inst, v, sigma)`` for DU, and
        ``extrapolate=False`` for the garbled step 7 without :math:`2\hat w_{k+1} - \hat w_k`.
    """
    if isinstance(max_iterations, bool) or not isinstance(max_iterations, (int, np.integer)) or max_iterations < 1:
        raise ValueError(f"max_iterations must be an integer >= 1, got {max_iterations!r}")
    if not (isinstance(tol, (int, float)) and math.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol must be a finite real >= 0, got {tol!r}")
    if isinstance(record_every, bool) or not isinstance(record_every, (int, np.integer)) or record_every < 0:
        raise ValueError(f"record_every must be an integer >= 0, got {record_every!r}")
    tau0, sigma0 = step_sizes(inst, theta)
    tau = tau0 if tau is None else np.broadcast_to(np.asarray(tau, dtype=np.float64), (inst.n,)).copy()
    sigma = sigma0 if sigma is None else np.broadcast_to(np.asarray(sigma, dtype=np.float64), (inst.n_edges,)).copy()
    norm2 = _check_steps(inst, tau, sigma)
    pu = PrimalUpdate(inst, tau)
    DT = inst.incidence.T.tocsr()
    w = np.zeros((inst.n, inst.d)) if w0 is None else np.array(w0, dtype=np.float64)
    u = np.zeros((inst.n_edges, inst.d)) if u0 is None else np.array(u0, dtype=np.float64)
    scale = max(1.0, float(np.linalg.norm(loss_gradients(inst, np.zeros((inst.n, inst.d))))))
    inv_tau = 1.0 / tau[:, None]
    residuals = np.empty(max_iterations)
    objectives, obj_iters = [], []
    monitored = []
    if record_every:
        if record_objective:
            objectives.append(primal_objective(inst, w))
            obj_iters.append(0)
        if monitor is not None:
            monitored.append(float(monitor(w)))
    step = _EdgeStep(inst, sigma, u, dual_update_fn)
    converged = False
    k = 0
    for k in range(1, max_iterations + 1):
        w_new = pu(w - tau[:, None] * (DT @ u))                       # steps 3-4
        z = 2.0 * w_new - w if extrapolate else w_new
        u_new, res_u = step(z, u)                                     # steps 7-8
        # (erratum E1, docs/papers/gtv.md#erratum-e1, erratum E2 (docs/papers/gtv.md#erratum-e2))
        res = float(np.linalg.norm((w_new - w) * inv_tau) + res_u)
        residuals[k - 1] = res
        w, u = w_new, u_new
        if record_every and k % record_every == 0:
            if record_objective:
                objectives.append(primal_objective(inst, w))
                obj_iters.append(k)
            if monitor is not None:
                monitored.append(float(monitor(w)))
        if tol > 0 and res <= tol * scale:
            converged = True
            break
    return Algorithm1Run(w=w, u=u, iterations=k, converged=converged, residuals=residuals[:k].copy(),
                         objectives=np.array(objectives), objective_iterations=np.array(obj_iters, dtype=np.int64),
                         theta=float(theta), tau=tau, sigma=sigma, norm_squared=norm2, tol=float(tol),
                         residual_scale=scale, meta={"pu_residual": pu.last_residual,
                                                                "monitor": np.array(monitored)})

