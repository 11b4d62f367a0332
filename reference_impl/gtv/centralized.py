r"""Ground truth of GTV minimisation (docs/papers/gtv.md#problem, docs/papers/gtv.md#instances): the primal (16) and the
dual (24) in CVXPY.

Clarabel at the caller's tolerance (falling back to its defaults where it stalls short of it), status checked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from theory.gtv import GTVInstance

__all__ = ["CLARABEL_DEFAULT_TOL", "GTVSolution", "solve_gtv_cvxpy", "solve_gtv_dual_cvxpy"]


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
    + y_i^T\mu : X_i^T\mu = s\}` (docs/papers/gtv.md#operators; valid for :math:`m_i < d` and :math:`m_i = 0`)."""
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

