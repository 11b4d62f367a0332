r"""Exchangeable client classes with non-white features: (S2) on per-class self and cross blocks of size D x D.

Clients that share :math:`(p_k, R_k, \sigma^2_{\eta,k})` (any :math:`R_k`, e.g. Toeplitz) are exchangeable: the
maps :math:`\mathcal A`, :math:`\mathcal R_\mu`, :math:`\mathcal B` of (S2) (:mod:`theory.msd.structured`)
commute with the permutations :math:`P \otimes I_D` of the clients inside a class (all delay blocks at once).
As in :mod:`theory.msd.grouped` (white R) the invariant state is

.. math:: C = (U \otimes I_D)\,X\,(U \otimes I_D)^T + E(Z), \qquad
          E(Z)_{(l,k),(l',k')} = \delta_{kk'}[Z_{c(k)}]_{ll'},

:math:`X` of :math:`(1 + (l_{\max}+1)C)^2` and each :math:`Z_c` of :math:`(l_{\max}+1)^2` blocks of size
:math:`D \times D` (2509 blocks at the paper's scale, four classes; no :math:`K`). The MSD needs only this invariant
part (the noise and hence :math:`C_\infty` are invariant); :math:`\rho(\mathcal F)` needs more
(:mod:`theory.msd.classes_stability`). :math:`\rho(\mathcal M)` of the mean recursion is
:func:`classes_mean_spectral_radius`.

Modules: :mod:`theory.msd.classes_operator` (layout, :math:`\mathcal F` in place, expand / compress),
:mod:`theory.msd.classes_preconditioner` (exact solve of the stiff part), :mod:`theory.msd.classes_solver` (packed
symmetric storage, BiCGSTAB), :mod:`theory.msd.classes_stability` (:math:`\rho(\mathcal F)` by the refined grouping,
the exact model's positive-definiteness certificate), :mod:`theory.msd.classes_rff` (RFF covariances
of docs/papers/paofed.md's inputs); this module is the route's entry point and re-exports the operator's public names.

References
----------
.. [1] docs/papers/paofed.md#mean-square, docs/papers/paofed.md#structured (F_exact, (S2), block formulas of A, R_mu,
       B).
.. [2] seed 004_180cd372987d137b.txt, Ch. (4.26)-(4.34) lines 1016-1072.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import lu_factor, lu_solve
from threadpoolctl import threadpool_limits

from theory.msd.classes_operator import (
    ClassLayout,
    apply_F_classes,
    apply_F_inplace,
    as_moments,
    check_model,
    class_grouping,
    class_unknowns,
    client_index,
    compress_classes,
    expand_classes,
    noise_term_inplace,
)
from theory.msd.classes_preconditioner import StiffPartSolver
from theory.msd.classes_solver import PackedClasses, packed_bicgstab
from theory.msd.grouped import Grouping
from theory.msd.krylov import generic_start, top_eigenpair
from theory.msd.white import krylov_solve

__all__ = [
    "ClassSteadyState",
    "DENSE_MAX",
    "apply_F_classes",
    "class_grouping",
    "class_unknowns",
    "classes_mean_spectral_radius",
    "classes_msd_steady_state",
    "classes_peak_bytes",
    "compress_classes",
    "expand_classes",
]

#: Reduced problems up to this many scalar unknowns are solved by dense LU of the explicit operator.
DENSE_MAX = 3000

#: :func:`classes_mean_spectral_radius`: dense eigenvalues of M_sym up to this order, Krylov-Schur above it.
MEAN_DENSE_MAX = 2000
#: Krylov-Schur subspace for rho(M_sym). At small mu the top of its spectrum is a cluster 1 - mu lambda_i(...) whose
#: gaps shrink with mu, and 20 vectors are far too few: the paper's federation at mu = 0.004 (n = 9000) took
#: ARPACK(20) 24-66 s from a random start, one start in four hit 3000 restarts, and Krylov-Schur(20) from the generic
#: start did too; 40 vectors converge to 1e-13 in 4694 matvecs (26 s at load 10), 60 in 3428 (21 s), 120 in 3031
#: (41 s). The basis is (ncv + 1) x n, n ~ 10^4 here: a few MB.
MEAN_NCV = 60

#: Ritz-residual tolerance of a *shown* rho(M_sym) (``fedcheck msd``'s report) when 1e-13 is not reached within the
#: cap: far below the six digits printed (e.g. the paper's federation with RFF covariances per class and a ridge of
#: 1e-2 at mu = 0.004: 5.9e-10 after 3000 restarts at tol 1e-13). Threshold searches never use it.
MEAN_FALLBACK_TOL = 1e-9

#: Peak memory of one packed BiCGSTAB (S2) solve, in full reduced states of 8-byte scalars: six half-size vectors,
#: one full work state, the solution and the operator's temporaries. Measured: 3.63 GB peak RSS at the paper's scale
#: (K = 256 in 4 classes, D = 200, l_max = 10: 1.0036e8 unknowns, i.e. 4.52 states), both models.
PEAK_STATES = 4.6


def classes_peak_bytes(x, grouping: Grouping | None = None) -> float:
    """Estimated peak memory (bytes) of one model's :func:`classes_msd_steady_state` (:data:`PEAK_STATES` reduced
    states; the dense path below :data:`DENSE_MAX` unknowns is small either way)."""
    m = as_moments(x)
    g = class_grouping(m) if grouping is None else grouping
    return PEAK_STATES * 8.0 * class_unknowns(m.l_max, g.C, m.D)[1]


@dataclass(frozen=True)
class ClassSteadyState:
    r"""(S2) on the class reduction: :math:`C_\infty` = :func:`expand_classes` of ``state``.

    Attributes
    ----------
    msd : float
        :math:`\mathrm{tr}(X_{00}) = \mathrm{tr}([C_\infty]_{00})`.
    state : array
        The reduced vector.
    residual : float
        :math:`\lVert s - \mathcal F(s) - q\rVert / \lVert q\rVert` on the reduced vectors, recomputed after the solve.
    method : str
    iterations : int
    unknowns : int
        Scalar unknowns of the reduced problem.
    """

    msd: float
    state: np.ndarray
    residual: float
    method: str
    iterations: int
    unknowns: int


def _unpacked_solve(lay: ClassLayout, model: str, mu: float, method: str, *, rtol: float, maxiter: int,
                    restart: int, precondition: bool, progress, coarse: bool = True):
    """Dense LU, or GMRES / BiCGSTAB of :func:`theory.msd.white.krylov_solve` on full reduced vectors (small n)."""
    q = np.empty(lay.n)
    noise_term_inplace(lay, *lay.split(q), mu)

    def op(s):
        out = np.array(s, dtype=np.float64, copy=True)
        apply_F_inplace(lay, *lay.split(out), model, mu)
        return np.subtract(s, out, out=out)

    if method == "dense":
        A = np.empty((lay.n, lay.n))
        for j in range(lay.n):
            e = np.zeros(lay.n)
            e[j] = 1.0
            A[:, j] = op(e)
        return lu_solve(lu_factor(A, check_finite=False), q, check_finite=False), 0, "dense LU", q
    pre = None
    if precondition:
        solver = StiffPartSolver(lay, model, mu, coarse=coarse)

        def pre(r):
            out = np.array(r, dtype=np.float64, copy=True)
            solver(*lay.split(out))
            return out

    s, its = krylov_solve(op, q, rtol=rtol, method=method, maxiter=maxiter, restart=restart, progress=progress,
                          precondition=pre)
    return s, its, f"{'preconditioned ' if pre else ''}{method} ({its} iterations)", q


def classes_msd_steady_state(x, model: str = "seed", *, grouping: Grouping | None = None, mu: float | None = None,
                             rtol: float = 1e-12, maxiter: int = 5000, restart: int = 20, method: str = "auto",
                             precondition: bool = True, coarse: bool = True, noise=None,
                             progress=None) -> ClassSteadyState:
    r"""Steady-state MSD of either model for exchangeable classes with any :math:`R_k` (reduced (S2)).

    Dense LU of the explicit reduced operator up to :data:`DENSE_MAX` scalar unknowns (or ``method="dense"``),
    else capped BiCGSTAB (``"bicgstab"``, the default above :data:`DENSE_MAX`) on packed symmetric states
    (:func:`theory.msd.classes_solver.packed_bicgstab`: six half-size vectors and one full work state, peak
    RSS 3.6 GB at the paper's scale with D = 200), right-preconditioned (``precondition``) by an exact solve of the
    stiff part of :math:`I - \mathcal F` (:class:`theory.msd.classes_preconditioner.StiffPartSolver`) plus, with
    ``coarse`` (default), a correction of the slow consensus states (at small steps on nearly singular :math:`R_c`
    it cuts the iterations several fold), with up
    to three restarts from the recomputed residual; or GMRES(``restart``) (``"gmres"``) on full reduced vectors
    (:func:`theory.msd.white.krylov_solve`, small instances). The solve does not decide stability; a residual
    above ``10 rtol`` raises.

    ``noise``: per-class matrices ``(C, D, D)`` (symmetric positive semi-definite, in the classes' order) that
    replace :math:`\sigma^2_{\eta,c}R_c` in the right side :math:`\mathcal B(\mu^2\,\mathrm{diag}(\cdot))`; the MSD
    is linear in them, and with class-invariant dynamics only their class means matter
    (:func:`theory.msd.per_client.class_mean_msd_estimate` passes each class's mean of :math:`\sigma^2_{\eta,k}R_k`).

    Raises
    ------
    ValueError
        On a bad model / method / mu, or if the residual stays above ``10 rtol`` (e.g. :math:`\rho(\mathcal F) \ge 1`).
    """
    m = as_moments(x)
    check_model(model)
    if method not in ("auto", "dense", "gmres", "bicgstab"):
        raise ValueError(f"method must be one of auto, dense, gmres, bicgstab, got {method!r}")
    mu = m.mu if mu is None else float(mu)
    if not (math.isfinite(mu) and mu > 0):
        raise ValueError(f"mu must be a finite real > 0, got {mu!r}")
    g = class_grouping(m) if grouping is None else grouping
    lay = ClassLayout(m, g)
    if noise is not None:
        noise = np.asarray(noise, dtype=np.float64)
        if noise.shape != (g.C, m.D, m.D) or not np.all(np.isfinite(noise)):
            raise ValueError(f"noise must be {g.C} finite {m.D} x {m.D} matrices (one per class), got shape "
                             f"{noise.shape}")
        if np.max(np.abs(noise - np.swapaxes(noise, 1, 2)), initial=0.0) > 1e-12 * max(1.0, np.max(np.abs(noise))):
            raise ValueError("noise must be symmetric")
        lay.noise = noise
    if (not np.any(lay.sigma2) if noise is None else not np.any(noise)) or not np.any(lay.R):
        return ClassSteadyState(0.0, np.zeros(lay.n), 0.0, "none", 0, lay.n)
    with threadpool_limits(1):  # small batched products: threaded BLAS only contends on the shared machine
        if method == "gmres" or method == "dense" or (method == "auto" and lay.n <= DENSE_MAX):
            kind = "dense" if method == "auto" else method
            s, its, name, q = _unpacked_solve(lay, model, mu, kind, rtol=rtol, maxiter=maxiter, restart=restart,
                                              precondition=precondition, progress=progress, coarse=coarse)
            out = np.array(s, dtype=np.float64, copy=True)
            apply_F_inplace(lay, *lay.split(out), model, mu)
            np.subtract(s, out, out=out)
            residual = float(np.linalg.norm(out - q) / np.linalg.norm(q))
        else:
            s = np.empty(lay.n)
            work = lay.split(s)
            pre = StiffPartSolver(lay, model, mu, coarse=coarse) if precondition else (lambda X, Z: None)
            its, residual = packed_bicgstab(
                PackedClasses(lay), work, lambda X, Z: apply_F_inplace(lay, X, Z, model, mu), pre,
                lambda X, Z: noise_term_inplace(lay, X, Z, mu), rtol=rtol, maxiter=maxiter, progress=progress)
            name = f"{'preconditioned ' if precondition else ''}bicgstab ({its} iterations)"
    if not residual <= 10 * rtol:
        raise ValueError(f"class-reduced (S2) not solved: relative residual {residual:.3g} > 10 rtol = "
                         f"{10 * rtol:.3g} ({name}; is rho(F) < 1 at mu = {mu!r}?)")
    X, _ = lay.split(s)
    return ClassSteadyState(float(np.trace(X[0, 0])), s, residual, name, its, lay.n)


def classes_mean_spectral_radius(x, mu: float | None = None, *, grouping: Grouping | None = None,
                                 tol: float = 1e-13, maxiter: int = 3000, fallback_tol: float | None = None,
                                 info: dict | None = None) -> float:
    r""":math:`\rho(\mathcal M(\mu))` of the mean recursion by the class decomposition (any :math:`R_k`).

    :math:`\mathcal M` commutes with the permutations inside the classes, so :math:`\mathbb R^N` splits into the
    class-symmetric vectors (:math:`w_{l,k} = u_{l,c(k)}`, dimension :math:`(1 + (l_{\max}+1)C)D`) and the vectors
    summing to zero over each class at every delay. On the latter the server row vanishes (its weights are equal
    within a class) and each client's delay chain is block triangular with diagonal :math:`(1 - c_c)(I - \mu R_c)`
    and zeros, so :math:`\rho = \max(\rho(\mathcal M_{sym}), \max_{c: n_c \ge 2}(1 - c_c)\max_i|1 - \mu
    \lambda_i(R_c)|)`; :math:`\mathcal M_{sym} = (U^TU)^{-1}U^T\mathcal MU` from the sparse
    :func:`theory.msd.expectations.mean_operator`, its radius dense up to :data:`MEAN_DENSE_MAX` unknowns, else by
    Krylov-Schur (:func:`theory.msd.krylov.top_eigenpair`, :data:`MEAN_NCV` vectors) from the fixed
    :func:`theory.msd.krylov.generic_start`, on one BLAS thread: the same number on every call, whatever calls it.
    To a Ritz residual of ``tol``. A caller that only shows the value (not a threshold search, which decides sides of
    1) may pass ``fallback_tol`` (e.g. :data:`MEAN_FALLBACK_TOL`): where a tight cluster at the top keeps ``tol`` out
    of reach within ``maxiter`` restarts, a second run from the same start stops at ``fallback_tol``, and
    ``info["ritz_tol"]`` says so.

    Raises
    ------
    ValueError
        If Krylov-Schur does not converge within ``maxiter`` restarts (at ``fallback_tol`` too, when given; the message
        starts with ``rho(M_sym) at mu = ...``).
    """
    import scipy.sparse as sp

    from theory.msd.expectations import mean_operator

    m = as_moments(x)
    mu = m.mu if mu is None else float(mu)
    g = class_grouping(m) if grouping is None else grouping
    lay = ClassLayout(m, g)
    D, nE = m.D, lay.nE
    cls = client_index(m, lay)
    cols = (cls[:, None] * D + np.arange(D)[None, :]).ravel()
    U = sp.csr_matrix((np.ones(m.N), (np.arange(m.N), cols)), shape=(m.N, nE * D))
    counts = np.bincount(cls, minlength=nE).astype(np.float64)
    Ms = sp.diags(np.repeat(1.0 / counts, D)) @ (U.T @ (mean_operator(m, mu) @ U))
    n = Ms.shape[0]
    with threadpool_limits(1):  # the same arithmetic whatever the caller's BLAS threads
        if n <= MEAN_DENSE_MAX:
            rho_sym = float(np.max(np.abs(np.linalg.eigvals(Ms.toarray()))))
        else:
            Ms = Ms.tocsr()
            what = f"rho(M_sym) at mu = {mu!r}"
            try:
                res = top_eigenpair(Ms.dot, n, generic_start(n), tol=tol, ncv=min(MEAN_NCV, n - 1), maxiter=maxiter,
                                    what=what)
            except ValueError as exc:
                # a tight cluster at the top (nearly singular R_c: 1 - mu lambda_i with lambda_i near the ridge for
                # most i) can keep the Ritz residual above tol; a caller that only shows the value may accept less
                if fallback_tol is None or fallback_tol <= tol or "did not converge" not in str(exc):
                    raise
                res = top_eigenpair(Ms.dot, n, generic_start(n), tol=fallback_tol, ncv=min(MEAN_NCV, n - 1),
                                    maxiter=maxiter, what=f"{what} (also at the fallback tol {fallback_tol:g})")
                if info is not None:
                    info["ritz_tol"] = fallback_tol
            rho_sym = float(abs(res.value))
    lam = np.linalg.eigvalsh(lay.R)                                   # (C, D)
    diff = (1.0 - lay.c)[:, None] * np.abs(1.0 - mu * lam)
    rho_diff = float(np.max(diff[~lay.single])) if np.any(~lay.single) else 0.0
    return max(rho_sym, rho_diff)
