r"""Algorithm 1 of the GTV paper (primal-dual message passing), its CVXPY ground truth and the §5 baselines.

shared/spec/gtv.md sections 2.5, 4 and 5 (seed 002_26677b31336d654c.txt, Algorithm 1 at L37-63, (32)-(34)).

Algorithm 1 is the Chambolle-Pock iteration with diagonal preconditioners, read with the corrections E1-E2:

.. math::

    \hat w_{k+1} = PU\{\hat w_k - T D^T\hat u_k\},\qquad
    \hat u_{k+1} = DU\{\hat u_k + \Sigma D(2\hat w_{k+1} - \hat w_k)\}

with :math:`T = \mathrm{diag}(\theta/|N^{(i)}|)`, :math:`\Sigma = \mathrm{diag}(1/(2\theta))` (θ = 1 is the seed's
choice; θ-rescaling [ext] keeps :math:`\lVert\Sigma^{1/2}DT^{1/2}\rVert^2` unchanged). Every node and edge moves
at once: :math:`D^T u` and :math:`Dw` are sparse / fancy-indexed array operations, the primal update is a
batched solve, the dual update a row-wise closed form; there is no Python loop over nodes or edges.

Stopping: the PDHG fixed-point residual :math:`\lVert T^{-1}(\hat w_{k+1}-\hat w_k)\rVert +
\lVert\Sigma^{-1}(\hat u_{k+1}-\hat u_k)\rVert` (review note R4) below ``tol`` times
:math:`\max(1, \lVert\nabla f(0)\rVert)`, with an iteration cap and a ``converged`` flag. The gap (34) is
available through :func:`theory.gtv.duality_gap` with an explicit domain tolerance, never used as a stopping
rule (E15).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from theory._rounding import gamma
from theory.gtv import (
    GTVInstance,
    cluster_oracles,
    dual_update,
    kkt_residuals,
    loss_gradients,
    loss_values,
    primal_objective,
)

__all__ = [
    "ARMS",
    "CLARABEL_DEFAULT_TOL",
    "Algorithm1Run",
    "GTVSolution",
    "fedavg",
    "ifca",
    "mse",
    "oracle_clusterwise",
    "pooled_solution",
    "preconditioned_norm_squared",
    "primal_update",
    "run_algorithm1",
    "sbm_arm_curve",
    "solve_gtv_cvxpy",
    "solve_gtv_dual_cvxpy",
    "step_sizes",
    "table1_replicate",
]


# --- step sizes ----------------------------------------------------------------------------------------------
def step_sizes(inst: GTVInstance, theta: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""θ-rescaled seed step sizes :math:`\tau_i = \theta/|N^{(i)}|`, :math:`\sigma_e = 1/(2\theta)` (L43-44, spec 2.5)."""
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
class _PrimalUpdate:
    r"""PU^{(i)}\{v\} = \arg\min_z L_i(z) + \frac{1}{2\tau_i}\lVert v - z\rVert^2 for all nodes at once."""

    def __init__(self, inst: GTVInstance, tau: np.ndarray, *, newton_tol: float = 1e-12, newton_max: int = 100):
        self.inst, self.rho = inst, 1.0 / tau
        self.newton_tol, self.newton_max = newton_tol, newton_max
        self.warm = None
        self.last_residual = 0.0      # max_i ||grad of the prox objective|| at the last inexact (Newton) update
        self.woodbury = inst.loss == "squared" and inst.X.shape[1] < inst.d
        if inst.loss == "squared" and self.woodbury:
            # (rho I + (2/m) X^T X)^-1 = (1/rho) [I - X^T (rho m/2 I + X X^T)^-1 X]: an m_max x m_max solve per node
            _, self.b, _ = inst.quadratic
            half_m = np.where(inst.m > 0, inst.m, 1) / 2.0
            K = np.matmul(inst.X, inst.X.transpose(0, 2, 1)) + (self.rho * half_m)[:, None, None] * np.eye(inst.X.shape[1])
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
            Hs = np.einsum("nr,nrj,nrk->njk", wts, inst.X, inst.X)
            Hs += (rho + inst.gamma * (inst.m > 0))[:, None, None] * eye
            step = np.linalg.solve(Hs, g[..., None])[..., 0]
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
            if np.all(np.linalg.norm(t[:, None] * step, axis=1) <= 4 * np.finfo(float).eps * (1 + np.linalg.norm(z, axis=1))):
                self.warm = z
                self.last_residual = float(np.linalg.norm(loss_gradients(inst, z) + rho[:, None] * (z - v), axis=1).max())
                return z                                    # round-off level: no further progress possible
        raise RuntimeError(f"logistic primal update: Newton did not reach {self.newton_tol} in {self.newton_max} steps")


def primal_update(inst: GTVInstance, v: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """PU (32) for every node: the proximal map of L_i with weight 1/tau_i (spec 2.4)."""
    return _PrimalUpdate(inst, np.asarray(tau, dtype=np.float64))(np.asarray(v, dtype=np.float64))


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
                   extrapolate: bool = True, monitor=None) -> Algorithm1Run:
    r"""Algorithm 1 (corrected per E1-E2) from :math:`\hat w_0 = 0, \hat u_0 = 0`.

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
    du = dual_update if dual_update_fn is None else dual_update_fn
    pu = _PrimalUpdate(inst, tau)
    DT = inst.incidence.T.tocsr()
    head, tail = inst.edges[:, 0], inst.edges[:, 1]
    w = np.zeros((inst.n, inst.d)) if w0 is None else np.array(w0, dtype=np.float64)
    u = np.zeros((inst.n_edges, inst.d)) if u0 is None else np.array(u0, dtype=np.float64)
    scale = max(1.0, float(np.linalg.norm(loss_gradients(inst, np.zeros((inst.n, inst.d))))))
    inv_tau, inv_sigma = 1.0 / tau[:, None], 1.0 / sigma[:, None]
    residuals = np.empty(max_iterations)
    objectives, obj_iters = [], []
    monitored = []
    if record_every:
        objectives.append(primal_objective(inst, w))
        obj_iters.append(0)
        if monitor is not None:
            monitored.append(float(monitor(w)))
    converged = False
    k = 0
    for k in range(1, max_iterations + 1):
        w_new = pu(w - tau[:, None] * (DT @ u))                       # steps 3-4
        z = 2.0 * w_new - w if extrapolate else w_new
        u_new = du(inst, u + sigma[:, None] * (z[head] - z[tail]), sigma)  # steps 7-8 (E1, E2)
        res = float(np.linalg.norm((w_new - w) * inv_tau) + np.linalg.norm((u_new - u) * inv_sigma))
        residuals[k - 1] = res
        w, u = w_new, u_new
        if record_every and k % record_every == 0:
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


# --- CVXPY ground truth --------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class GTVSolution:
    """A CVXPY solution of the primal (16) or the dual (19)/(24): value, iterate and solver status."""

    value: float
    w: np.ndarray | None
    u: np.ndarray | None
    status: str
    solver_tol: float              # the Clarabel tolerance at which the status was 'optimal'


def _stacked(inst: GTVInstance):
    """Valid rows stacked: sparse block features (sum m, n d), labels, the node of each row."""
    node, row = np.nonzero(inst.row_mask)
    Xr = inst.X[node, row]                                   # (R, d)
    cols = node[:, None] * inst.d + np.arange(inst.d)[None, :]
    Xs = sp.csr_matrix((Xr.ravel(), (np.repeat(np.arange(len(node)), inst.d), cols.ravel())),
                       shape=(len(node), inst.n * inst.d))
    return Xs, inst.y[node, row], node


#: Clarabel's default gap and feasibility tolerances (Clarabel 0.x settings: tol_gap_abs = tol_gap_rel = tol_feas).
CLARABEL_DEFAULT_TOL = 1e-8


def _solve(prob, solver_tol: float | None):
    """Solve with Clarabel at ``solver_tol``; where Clarabel stalls short of it ('optimal_inaccurate': its
    feasibility residual stagnates near 1e-8 on the second-order-cone forms) fall back to its defaults.
    Returns (solved problem, the tolerance at which its status was 'optimal'); RuntimeError otherwise."""
    import warnings

    import cvxpy as cp

    for tol in ([solver_tol] if solver_tol is not None else []) + [None]:
        kw = {} if tol is None else dict(tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol)
        attempt = cp.Problem(prob.objective, prob.constraints)   # a fresh problem: no state of a failed solve
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            attempt.solve(solver=cp.CLARABEL, **kw)
        if attempt.status == cp.OPTIMAL:
            return attempt, (CLARABEL_DEFAULT_TOL if tol is None else float(tol))
    raise RuntimeError(f"CVXPY/Clarabel status {attempt.status!r} (need 'optimal')")


def solve_gtv_cvxpy(inst: GTVInstance, *, solver_tol: float | None) -> GTVSolution:
    """The primal (16) by CVXPY/Clarabel (``solver_tol`` for gap and feasibility; None: Clarabel's defaults)."""
    import cvxpy as cp

    n, d, E = inst.n, inst.d, inst.n_edges
    x = cp.Variable(n * d)
    Xs, yv, node = _stacked(inst)
    inv_m = 1.0 / inst.m[node]
    if inst.loss == "squared":
        loss = cp.sum_squares(cp.multiply(np.sqrt(inv_m), Xs @ x - yv)) if len(yv) else 0
    else:
        loss = cp.sum(cp.multiply(inv_m, cp.logistic(-cp.multiply(yv, Xs @ x))))
        acc = np.repeat(inst.m > 0, d)
        loss = loss + 0.5 * inst.gamma * cp.sum_squares(x[np.flatnonzero(acc)])
    Dk = sp.kron(inst.incidence, sp.eye(d), format="csr")
    U = cp.reshape(Dk @ x, (E, d), order="C")
    lamA = inst.lam * inst.A
    if inst.penalty == "l2":
        pen = lamA @ cp.norm(U, 2, axis=1)
    elif inst.penalty == "l1":
        pen = lamA @ cp.sum(cp.abs(U), axis=1)
    elif inst.penalty == "mocha":
        pen = 0.5 * lamA @ cp.sum(cp.square(U), axis=1)
    else:
        ev, V = np.linalg.eigh(inst.Q)
        L = V * np.sqrt(np.maximum(ev, 0.0))
        pen = 0.5 * cp.sum_squares(cp.multiply(np.sqrt(lamA)[:, None], U @ L))
    prob = cp.Problem(cp.Minimize(loss + pen))
    prob, used = _solve(prob, solver_tol)
    w = np.asarray(x.value).reshape(n, d)
    return GTVSolution(value=float(prob.value), w=w, u=None, status=prob.status, solver_tol=used)


def solve_gtv_dual_cvxpy(inst: GTVInstance, *, solver_tol: float | None) -> GTVSolution:
    r"""The dual (24) by CVXPY/Clarabel, squared loss, with :math:`L_i^*(s) = \min\{\frac{m_i}4\lVert\mu\rVert^2
    + y_i^T\mu : X_i^T\mu = s\}` (spec 2.4 (a); valid for :math:`m_i < d` and :math:`m_i = 0`)."""
    import cvxpy as cp

    if inst.loss != "squared":
        raise ValueError(f"loss must be 'squared' for the CVXPY dual, got {inst.loss!r}")
    d, E = inst.d, inst.n_edges
    Xs, yv, node = _stacked(inst)
    lamA = inst.lam * inst.A
    if inst.penalty == "quad":
        ev, V = np.linalg.eigh(inst.Q)
        keep = ev > d * np.finfo(np.float64).eps * max(ev[-1], 0.0)
        T = cp.Variable((E, int(keep.sum())))
        U = T @ V[:, keep].T
        gstar = cp.sum(cp.multiply(1.0 / (2.0 * lamA)[:, None], cp.square(T) / ev[keep][None, :]))
        cons = []
    else:
        U = cp.Variable((E, d))
        gstar = 0
        if inst.penalty == "l2":
            cons = [cp.norm(U, 2, axis=1) <= lamA]
        elif inst.penalty == "l1":
            cons = [cp.max(cp.abs(U), axis=1) <= lamA]
        else:
            cons = []
            gstar = cp.sum(cp.multiply(1.0 / (2.0 * lamA), cp.sum(cp.square(U), axis=1)))
    DkT = sp.kron(inst.incidence.T, sp.eye(d), format="csr")
    s = DkT @ cp.reshape(U, (E * d,), order="C")
    mu = cp.Variable(len(yv))
    cons.append(Xs.T @ mu == -s)
    conj = cp.sum(cp.multiply(inst.m[node] / 4.0, cp.square(mu))) + yv @ mu
    prob = cp.Problem(cp.Maximize(-conj - gstar), cons)
    prob, used = _solve(prob, solver_tol)
    u_val = np.asarray(U.value).reshape(E, d)
    return GTVSolution(value=float(prob.value), w=None, u=u_val, status=prob.status, solver_tol=used)


# --- baselines (spec 5.5) ------------------------------------------------------------------------------------
def _require_squared(inst):
    if inst.loss != "squared":
        raise ValueError(f"loss must be 'squared' for this baseline, got {inst.loss!r}")


def pooled_solution(inst: GTVInstance) -> np.ndarray:
    r"""The FedAvg fixed point :math:`\arg\min_w\sum_iL_i(w)` (min-norm if singular), broadcast to every node."""
    _require_squared(inst)
    H, b, _ = inst.quadratic
    w = np.linalg.lstsq(H.sum(axis=0), b.sum(axis=0), rcond=None)[0]
    return np.broadcast_to(w, (inst.n, inst.d)).copy()


def oracle_clusterwise(inst: GTVInstance, clusters=None) -> np.ndarray:
    r"""FedAvgC / the cluster oracle: :math:`\bar w^{(c(i))}` at every node (9)."""
    c = inst.clusters if clusters is None else np.asarray(clusters)
    return cluster_oracles(inst, c)[c]


def fedavg(inst: GTVInstance, *, rounds: int, local_steps: int = 5, lr: float | None = None,
           monitor=None) -> np.ndarray:
    r"""Server FedAvg [14] (E14): every round each node runs ``local_steps`` GD steps from the global model and the
    server averages with weights :math:`m_i/\sum_jm_j`; lr defaults to :math:`1/\max_i\lambda_{\max}(H_i)`.
    Returns the final global model broadcast to all nodes (``monitor(w_nodes)`` is called after every round)."""
    _require_squared(inst)
    H, b, _ = inst.quadratic
    lr = 1.0 / max(np.linalg.eigvalsh(H)[:, -1].max(), 1e-300) if lr is None else lr
    p = inst.m / inst.m.sum()
    w = np.zeros(inst.d)
    for _ in range(rounds):
        local = np.broadcast_to(w, (inst.n, inst.d)).copy()
        for _ in range(local_steps):
            local -= lr * (np.matmul(H, local[..., None])[..., 0] - b)
        w = p @ local
        if monitor is not None:
            monitor(np.broadcast_to(w, (inst.n, inst.d)))
    return np.broadcast_to(w, (inst.n, inst.d)).copy()


def ifca(inst: GTVInstance, rng: np.random.Generator, *, k: int, rounds: int, local_steps: int = 5,
         lr: float | None = None, init_scale: float = 1.0, monitor=None) -> np.ndarray:
    r"""IFCA [19], model-averaging variant: k models N(0, init_scale² I); each round node i picks
    :math:`\arg\min_jL_i(\theta_j)`, runs local GD from it, the server averages per model (weights m_i); an
    empty model is kept. Returns :math:`\theta_{\hat j(i)}` per node."""
    _require_squared(inst)
    H, b, c = inst.quadratic
    lr = 1.0 / max(np.linalg.eigvalsh(H)[:, -1].max(), 1e-300) if lr is None else lr
    theta = init_scale * rng.normal(size=(k, inst.d))
    m = inst.m.astype(np.float64)

    def assign(theta):
        losses = 0.5 * np.einsum("kj,njl,kl->nk", theta, H, theta) - b @ theta.T + c[:, None]
        return np.argmin(losses, axis=1)

    for _ in range(rounds):
        j = assign(theta)
        local = theta[j].copy()
        for _ in range(local_steps):
            local -= lr * (np.matmul(H, local[..., None])[..., 0] - b)
        onehot = np.zeros((inst.n, k))
        onehot[np.arange(inst.n), j] = m
        mass = onehot.sum(axis=0)
        avg = (onehot.T @ local) / np.where(mass > 0, mass, 1.0)[:, None]
        theta = np.where((mass > 0)[:, None], avg, theta)
        if monitor is not None:
            monitor(theta[assign(theta)])
    return theta[assign(theta)]


def mse(w: np.ndarray, w_true: np.ndarray) -> float:
    r"""(41): :math:`\frac1{|V|}\sum_i\lVert\hat w^{(i)} - \bar w^{(i)}\rVert_2^2` (no division by d)."""
    return float(np.mean(np.sum((np.asarray(w) - np.asarray(w_true)) ** 2, axis=1)))


#: Arms of the section 5.1 / 5.2 comparisons (spec 5.5): Algorithm 1, server FedAvg, IFCA, the pooled LS fixed
#: point of FedAvg and the oracle cluster-wise solution (FedAvgC's fixed point).
ARMS = ("algorithm1", "fedavg", "ifca", "pooled", "oracle")


def sbm_arm_curve(arm: str, seed: int, *, iterations: int = 2000, theta: float = 1.0, record_every: int = 10,
                  local_steps: int = 5, **sbm) -> tuple[np.ndarray, np.ndarray]:
    r"""One arm on one replicate of the SBM experiment (§5.1; §5.2 with ``sizes`` of k clusters): the MSE (41)
    curve ``(iterations_or_rounds, mse)``. Replicate ``seed`` fixes graph, data and IFCA's initialisation, so all
    arms of one seed see the same instance (common random numbers). ``pooled`` and ``oracle`` are constant curves.
    Algorithm 1 uses the seed's steps unless ``theta`` says otherwise (the paper's R = 1000 with θ = 1 has not
    converged: E9). ``sbm`` overrides :func:`reference_impl.gtv_data.sbm_instance` keywords."""
    from reference_impl.gtv_data import sbm_instance

    if arm not in ARMS:
        raise ValueError(f"arm must be one of {', '.join(ARMS)}, got {arm!r}")
    rng = np.random.default_rng(seed)
    inst, w_true = sbm_instance(rng, **sbm)
    arm_rng = np.random.default_rng([seed, 1])
    if arm == "algorithm1":
        run = run_algorithm1(inst, theta=theta, max_iterations=iterations, tol=0.0, record_every=record_every,
                             monitor=lambda w: mse(w, w_true))
        return run.objective_iterations, run.meta["monitor"]
    if arm in ("pooled", "oracle"):
        w = pooled_solution(inst) if arm == "pooled" else oracle_clusterwise(inst)
        return np.array([0, iterations]), np.full(2, mse(w, w_true))
    curve = []
    record = lambda w: curve.append(mse(w, w_true))
    if arm == "fedavg":
        fedavg(inst, rounds=iterations, local_steps=local_steps, monitor=record)
    else:
        ifca(inst, arm_rng, k=int(inst.clusters.max()) + 1, rounds=iterations, local_steps=local_steps, monitor=record)
    return np.arange(1, iterations + 1), np.array(curve)


def table1_replicate(seed: int, *, theta: float = 10.0, max_iterations: int = 3000, tol: float = 1e-9,
                     baseline_rounds: int = 200, **sbm) -> dict:
    r"""One replicate of Table I (§5.1): Algorithm 1 (nLasso, λ = 1e-2), FedAvg, the pooled LS fixed point, IFCA
    and the oracle cluster-wise solution on the paper's SBM; returns the MSE (41) of each method and the iterations
    Algorithm 1 needed. ``sbm`` overrides :func:`reference_impl.gtv_data.sbm_instance` keywords."""
    from reference_impl.gtv_data import sbm_instance

    rng = np.random.default_rng(seed)
    inst, w_true = sbm_instance(rng, **sbm)
    run = run_algorithm1(inst, theta=theta, max_iterations=max_iterations, tol=tol, record_every=0)
    k = int(inst.clusters.max()) + 1
    return {"algorithm1": mse(run.w, w_true), "algorithm1_iterations": run.iterations,
            "algorithm1_converged": run.converged,
            "fedavg": mse(fedavg(inst, rounds=baseline_rounds), w_true),
            "pooled": mse(pooled_solution(inst), w_true),
            "ifca": mse(ifca(inst, rng, k=k, rounds=baseline_rounds), w_true),
            "oracle": mse(oracle_clusterwise(inst), w_true),
            "inter_cluster_edges": int(np.sum(inst.clusters[inst.edges[:, 0]] != inst.clusters[inst.edges[:, 1]]))}
