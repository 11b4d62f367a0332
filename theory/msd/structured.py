r"""Structured (matrix-free) mean-square analysis of PAO-Fed: the covariance recursion (S1)/(S2).

With :math:`C_n = E[\tilde w_{e,n}\tilde w_{e,n}^T]` (:math:`N \times N`) and hypotheses
I1-I5 (docs/papers/paofed.md#assumption-i1 to #assumption-i5),
:math:`\mathrm{bvec}(C_{n+1}) = \mathcal F\,\mathrm{bvec}(C_n) + \mu^2 h`, i.e.

.. math::

    C_{n+1} &= \mathcal B(\mathcal R_\mu(\mathcal A(C_n))) + \mu^2\mathcal B(E[\Phi]),
    \qquad C_0 = w_e^\star w_e^{\star T},\qquad \mathrm{MSD}_n = \mathrm{tr}([C_n]_{00}) \qquad (S1)\\
    C_\infty &= \mathcal B\mathcal R_\mu\mathcal A(C_\infty) + \mu^2\mathcal B(E[\Phi]),
    \qquad \mathrm{MSD}_\infty = \mathrm{tr}([C_\infty]_{00}) \qquad (S2)

with :math:`\mathcal A(X) = E[A_eXA_e^T]`, :math:`\mathcal B(Y) = E[B_eYB_e^T]`,
:math:`\mathcal R_\mu(X) = X - \mu(R_eX + XR_e)` (the seed's :math:`\mathcal F`, Assumption A5) plus
:math:`\mu^2E[Z_eZ_e^TXZ_eZ_e^T]` for the exact :math:`\mathcal F` (zero-mean Gaussian regressors:
:math:`RXR + RX^TR + \mathrm{tr}(RX)R` on local diagonal blocks, :math:`R_kXR_{k'}` off the diagonal).
:math:`\mathcal F` itself, :math:`(N_bD)^2 \times (N_bD)^2`, is never formed.

This module solves the recursions; the maps :math:`\mathcal A, \mathcal R_\mu, \mathcal B, \mathcal F` live in
:mod:`theory.msd.maps` and the packed symmetric operator in :mod:`theory.msd.packing` (both re-exported here).

Models: ``"seed"`` = Ch. (4.26) / P4 (28) (the :math:`\mu^2` term dropped); ``"exact"`` = the
:math:`\mathcal F_{exact}` of docs/papers/paofed.md with Gaussian regressors :math:`z_{k,n} \sim N(0, R_k)`.

References
----------
.. [1] seed 004_180cd372987d137b.txt, Ch. (4.23)-(4.34) lines 1004-1072, P4 (25)-(38) lines 2698-2785
   (with errata E12-E14 (docs/papers/paofed.md#erratum-e12 to #erratum-e14) of docs/papers/paofed.md).
.. [2] docs/papers/paofed.md (F_exact, the noise term, the block formulas of A, R_mu, B; (S1), (S2)).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.sparse import linalg as spla

from theory.msd.expectations import _moments
from theory.msd.krylov import LEAN_ETA, arpack_eigs, gmres
from theory.msd.maps import MODELS, _check_model, apply_A, apply_B, apply_F, apply_R
from theory.msd.packing import SymmetricPacking, f_matvec

__all__ = [
    "MEMORY_BUDGET",
    "MODELS",
    "SteadyState",
    "apply_A",
    "apply_B",
    "apply_F",
    "SymmetricPacking",
    "f_matvec",
    "apply_R",
    "initial_covariance",
    "msd_steady_state",
    "msd_transient",
    "noise_covariance",
    "spectral_radius_F",
]

#: Default cap on the Krylov steps of one (S2) solve round and on the Arnoldi restarts of one rho(F).
KRYLOV_MAXITER = 5000
ARNOLDI_MAXITER = 3000

#: Harmonic Ritz vectors kept at each restart of the ``gmres-dr`` (S2) solve (the slow modes of I - F).
DEFLATED_VECTORS = 10


def noise_covariance(x) -> np.ndarray:
    r""":math:`E[\Phi] = \mathrm{blockdiag}(0_D, \sigma^2_{\eta,1}R_1, \dots, \sigma^2_{\eta,K}R_K, 0_{DKl_{\max}})`.

    References
    ----------
    .. [1] seed 004_180cd372987d137b.txt, P4 (30)-(32) lines 2730-2748 (erratum E4, docs/papers/paofed.md#erratum-e4,
           erratum E12 (docs/papers/paofed.md#erratum-e12)); docs/papers/paofed.md.
    """
    m = _moments(x)
    P = np.zeros((m.n_blocks, m.D, m.n_blocks, m.D))
    k = np.arange(1, m.K + 1)
    P[k, :, k] = m.sigma2_eta[:, None, None] * m.R
    return P.reshape(m.N, m.N)


def initial_covariance(x) -> np.ndarray:
    r""":math:`C_0 = w_e^\star w_e^{\star T}`, :math:`w_e^\star = 1_{N_b} \otimes w^\star` (all models start at 0)."""
    m = _moments(x)
    we = np.tile(m.w_star, m.n_blocks)
    return np.outer(we, we)


def msd_transient(x, n_iter: int, model: str = "seed", *, mu: float | None = None) -> np.ndarray:
    r"""Transient :math:`\mathrm{MSD}_n = E\lVert w^\star - w_n\rVert^2`, :math:`n = 0..n_{iter}`, by (S1).

    Returns
    -------
    (n_iter + 1,) array, entry 0 is :math:`\lVert w^\star\rVert^2`.

    References
    ----------
    .. [1] seed 004_180cd372987d137b.txt, Ch. (4.32)-(4.33) lines 1058-1066, P4 (35), (37)
           (erratum E13, docs/papers/paofed.md#erratum-e13);
    docs/papers/paofed.md (S1).

    Examples
    --------
    >>> import numpy as np
    >>> from theory.msd.instance import reference_instance
    >>> inst = reference_instance(0.1)
    >>> msd = msd_transient(inst, 3)
    >>> bool(np.isclose(msd[0], inst.w_star @ inst.w_star)) and bool(msd[3] < msd[0])
    True
    """
    m = _moments(x)
    _check_model(model)
    if isinstance(n_iter, bool) or not isinstance(n_iter, (int, np.integer)) or n_iter < 0:
        raise ValueError(f"n_iter must be an integer >= 0, got {n_iter!r}")
    mu = m.mu if mu is None else float(mu)
    Q = mu * (mu * apply_B(m, noise_covariance(m)))
    C = initial_covariance(m)
    out = np.empty(int(n_iter) + 1)
    D = m.D
    out[0] = np.trace(C[:D, :D])
    nxt = np.empty_like(C)
    work = (np.empty_like(C), np.empty_like(C))  # reused buffers: no N x N allocation per step
    for n in range(1, int(n_iter) + 1):
        apply_F(m, C, model, mu, out=nxt, work=work)
        nxt += Q
        C, nxt = nxt, C
        out[n] = np.trace(C[:D, :D])
    return out


@dataclass(frozen=True)
class SteadyState:
    r"""Solution of (S2).

    Attributes
    ----------
    msd : float
        :math:`\mathrm{MSD}_\infty = \mathrm{tr}([C_\infty]_{00})`.
    C : (N, N) array
        :math:`C_\infty`.
    residual : float
        :math:`\lVert C - \mathcal B\mathcal R_\mu\mathcal A(C) - Q\rVert_F / \lVert Q\rVert_F`, recomputed
        after the solve (the certificate of (S2)).
    iterations : int
    method : str
    tolerance : float
        The relative tolerance handed to the solver.
    krylov : (basis, H) or None
        ``method="gmres-dr"`` only: a Krylov decomposition of :math:`\mathcal F` on packed symmetric matrices
        (:class:`SymmetricPacking`), ``F @ basis[:j].T = basis.T @ H``, orthonormal rows, holding the slow modes the
        solve met: :func:`theory.msd.krylov.top_eigenpair` continues from it (``basis=``); None after fewer than
        three steps.
    """

    msd: float
    C: np.ndarray
    residual: float
    iterations: int
    method: str
    tolerance: float
    krylov: tuple[np.ndarray, np.ndarray] | None = None

    def __repr__(self) -> str:  # brief: shapes and summary numbers, never the arrays
        return (f"SteadyState(msd={self.msd:.6g}, C=<{self.C.shape[0]}x{self.C.shape[1]}>, "
                f"residual={self.residual:.3g}, iterations={self.iterations}, method={self.method!r})")


def _s2_residual(m, C, Q, model, mu) -> float:
    r = C - apply_F(m, C, model, mu) - Q
    return float(np.linalg.norm(r) / np.linalg.norm(Q))


#: Memory one model's analysis may plan for (bytes): the project machine has 24 GB, shared by the two models and the
#: caller. theory.msd.routes re-exports it (its route choice refuses a route whose estimated peak exceeds it);
#: :func:`msd_steady_state` refuses a Krylov basis beyond it.
MEMORY_BUDGET = 20e9


def _check_basis(N: int, vectors: int, size: int) -> None:
    """Refuse a Krylov basis of ``vectors`` packed states that exceeds :data:`MEMORY_BUDGET` (a ValueError naming
    ``restart``, instead of numpy's MemoryError or the machine's swap)."""
    need = 8.0 * vectors * size
    if need > MEMORY_BUDGET:
        raise ValueError(f"restart: the Krylov basis of {vectors} packed states of N = {N} ({size} unknowns each) "
                         f"would need {need / 1e9:.3g} GB, more than the {MEMORY_BUDGET / 1e9:g} GB budget; pass a "
                         f"smaller restart (at most {int(MEMORY_BUDGET // (8.0 * size)) - 2}), or use "
                         "theory.msd.routes.mean_square_analysis, which plans a route that fits")


def msd_steady_state(x, model: str = "seed", *, mu: float | None = None, method: str = "gmres",
                     rtol: float = 1e-13, maxiter: int | None = None, refinements: int = 3,
                     restart: int = 200, progress: Callable[[int, float], None] | None = None) -> SteadyState:
    r"""Steady-state :math:`\mathrm{MSD}_\infty` by solving (S2) without forming :math:`\mathcal F`.

    .. math:: C - \mathcal B\mathcal R_\mu\mathcal A(C) = \mu^2\mathcal B(E[\Phi]),
              \qquad \mathrm{MSD}_\infty = \mathrm{tr}([C]_{00}) = \mu^2 h^T(I - \mathcal F^T)^{-1}\sigma_J

    Parameters
    ----------
    method : {"gmres", "gmres-dr", "bicgstab", "fixed_point"}
        GMRES (:func:`theory.msd.krylov.gmres`) / BiCGSTAB (scipy.sparse.linalg) on the vectorised operator,
        with up to ``refinements`` further rounds on the recomputed residual; GMRES with deflated restarting
        (:func:`theory.msd.gmres_dr.gmres_dr`, m = ``restart``, k = :data:`DEFLATED_VECTORS`; it also returns the
        Krylov decomposition of :math:`\mathcal F` it built, ``SteadyState.krylov``); or the fixed-point iteration
        :math:`C \leftarrow \mathcal B\mathcal R_\mu\mathcal A(C) + Q` (converges iff
        :math:`\rho(\mathcal F) < 1`, at rate :math:`\rho(\mathcal F)`).
    rtol : float
        Relative residual tolerance
        :math:`\lVert C - \mathcal B\mathcal R_\mu\mathcal A(C) - Q\rVert_F / \lVert Q\rVert_F`
        (stopping rule of all methods; for the fixed point the step size, which equals this residual).
    maxiter, refinements, restart : int
        Iteration cap (default :data:`KRYLOV_MAXITER` Krylov steps per round; 100000 for the fixed point),
        further rounds when a round stops above ``rtol`` (GMRES restarted from its iterate, BiCGSTAB by
        iterative refinement), GMRES restart length (memory: ``restart + 1`` vectors of length :math:`N^2`).
    progress : callable, optional
        ``progress(step, residual estimate)`` after every GMRES step.

    Raises
    ------
    ValueError
        On a bad model/method/tolerance, or if the solver does not reach ``rtol`` (e.g. when
        :math:`\rho(\mathcal F) \ge 1`, where no steady state exists).

    Notes
    -----
    Requires :math:`\rho(\mathcal F) < 1` (docs/papers/paofed.md). Exact under
    I1-I5 (docs/papers/paofed.md#assumption-i1 to #assumption-i5); see erratum E15 (docs/papers/paofed.md#erratum-e15)
    of docs/papers/paofed.md for how the real algorithm departs from them.

    References
    ----------
    .. [1] seed 004_180cd372987d137b.txt, Ch. (4.34) + line 1072, P4 (38) + line 2785
           (erratum E14, docs/papers/paofed.md#erratum-e14); docs/papers/paofed.md
    (S2).
    """
    m = _moments(x)
    _check_model(model)
    if method not in ("gmres", "gmres-dr", "bicgstab", "fixed_point"):
        raise ValueError(f"method must be one of gmres, gmres-dr, bicgstab, fixed_point, got {method!r}")
    if not (isinstance(rtol, float) and 0.0 < rtol < 1.0):
        raise ValueError(f"rtol must be a float in (0, 1), got {rtol!r}")
    mu = m.mu if mu is None else float(mu)
    if not (math.isfinite(mu) and mu > 0):
        raise ValueError(f"mu must be a finite real > 0, got {mu!r}")
    N = m.N
    Q = mu * (mu * apply_B(m, noise_covariance(m)))
    qnorm = float(np.linalg.norm(Q))
    if qnorm == 0.0:
        C = np.zeros((N, N))
        return SteadyState(0.0, C, 0.0, 0, method, rtol)
    iterations, krylov = 0, None
    if method == "fixed_point":
        maxiter = 100000 if maxiter is None else int(maxiter)
        C = Q.copy()
        C_new = np.empty_like(C)
        work = (np.empty_like(C), np.empty_like(C))
        for iterations in range(1, maxiter + 1):  # noqa: B007 -- the count is reported after the loop
            apply_F(m, C, model, mu, out=C_new, work=work)
            C_new += Q
            C -= C_new
            step = float(np.linalg.norm(C))
            C, C_new = C_new, C
            if step <= rtol * qnorm or not math.isfinite(step):
                break
    elif method == "gmres-dr":  # deflated restarts on packed symmetric matrices; the relation of F is kept
        from theory.msd.gmres_dr import gmres_dr

        sym = SymmetricPacking(N)
        m_dr = min(restart, sym.size - 1)
        _check_basis(N, m_dr + 2, sym.size)
        sol = gmres_dr(f_matvec(m, model, mu, identity_minus=True, packing=sym), sym.pack(0.5 * (Q + Q.T)),
                       rtol=0.5 * rtol, m=m_dr, k=min(DEFLATED_VECTORS, m_dr - 2),
                       maxiter=KRYLOV_MAXITER if maxiter is None else int(maxiter), callback=progress)
        iterations = sol.steps
        C = sym.unpack(sol.x)
        # (I - F) V_j = V_{j+1} H  <=>  F V_j = V_{j+1} (I_bar - H); kept from 3 steps on (top_eigenpair's minimum)
        if sol.basis is not None and sol.hessenberg.shape[1] >= 3:
            j = sol.hessenberg.shape[1]
            H = -sol.hessenberg
            H[:j, :j] += np.eye(j)
            krylov = (sol.basis, H)
    elif method == "gmres":  # lean restarted GMRES (theory.msd.krylov) on packed symmetric matrices
        cap = KRYLOV_MAXITER if maxiter is None else int(maxiter)
        sym = SymmetricPacking(N)
        _check_basis(N, min(sym.size, restart) + 1, sym.size)
        x, b = None, sym.pack(0.5 * (Q + Q.T))
        mv = f_matvec(m, model, mu, identity_minus=True, packing=sym)
        for _ in range(refinements + 1):
            x, steps, res = gmres(mv, b, rtol=0.5 * rtol, restart=min(sym.size, restart), maxiter=cap, x0=x,
                                  callback=progress, eta=LEAN_ETA)
            iterations += steps
            if res <= rtol:
                break
        C = sym.unpack(x)
    else:
        op = spla.LinearOperator((N * N, N * N), dtype=np.float64,
                                 matvec=lambda v: (v.reshape(N, N) - apply_F(m, v.reshape(N, N), model, mu)).ravel())
        C = np.zeros((N, N))
        rhs = Q.ravel()
        for _ in range(refinements + 1):
            r = rhs - op.matvec(C.ravel())
            if np.linalg.norm(r) <= rtol * qnorm:
                break
            counter = [0]

            def cb(_x, counter=counter):
                counter[0] += 1

            # inner tolerance relative to the current residual, so that the refined residual meets rtol
            inner = min(0.5, 0.5 * rtol * qnorm / float(np.linalg.norm(r)))
            # iteration cap (scipy's default, 10 N^2, is unbounded in practice): maxiter Krylov steps per round
            cap = KRYLOV_MAXITER if maxiter is None else int(maxiter)
            dx, _info = spla.bicgstab(op, r, rtol=inner, atol=0.0, maxiter=cap, callback=cb)
            iterations += counter[0]
            C = C + dx.reshape(N, N)
    residual = _s2_residual(m, C, Q, model, mu)
    if not (residual <= 10 * rtol):
        raise ValueError(f"(S2) not solved: relative residual {residual:.3g} > 10 rtol = {10 * rtol:.3g} after "
                         f"{iterations} {method} iterations (is rho(F) < 1 at mu = {mu!r}?)")
    return SteadyState(float(np.trace(C[:m.D, :m.D])), C, residual, iterations, method, rtol, krylov)


def spectral_radius_F(x, model: str = "seed", *, mu: float | None = None, tol: float = 1e-12,
                      ncv: int | None = None) -> float:
    r""":math:`\rho(\mathcal F)`: spectral radius of :math:`C \mapsto \mathcal B\mathcal R_\mu\mathcal A(C)`.

    Arnoldi (``scipy.sparse.linalg.eigs``, largest magnitude) on the matrix-free operator; for
    :math:`N^2 \le 64` the operator is materialised column by column and all eigenvalues computed.

    References
    ----------
    .. [1] docs/papers/paofed.md (rho(F) < 1 is the mean-square stability criterion) and 3.6.
    """
    m = _moments(x)
    _check_model(model)
    mu = m.mu if mu is None else float(mu)
    N = m.N
    n2 = N * N

    def mv(v):
        return apply_F(m, v.reshape(N, N), model, mu).ravel()

    if n2 <= 64:
        F = np.column_stack([mv(e) for e in np.eye(n2)])
        return float(np.max(np.abs(np.linalg.eigvals(F))))
    op = spla.LinearOperator((n2, n2), matvec=mv, dtype=np.float64)
    ncv = min(n2 - 1, 40) if ncv is None else ncv
    v0 = np.ones(n2) / math.sqrt(n2)
    try:
        vals = arpack_eigs(op, k=1, which="LM", tol=tol, ncv=ncv, v0=v0, return_eigenvectors=False,
                         maxiter=ARNOLDI_MAXITER)
    except spla.ArpackNoConvergence as exc:
        raise ValueError(f"rho(F_{model}) at mu = {mu!r}: Arnoldi did not converge to tol {tol:g} within "
                         f"{ARNOLDI_MAXITER} restarts (eigenvalues cluster near 1 at small mu)") from exc
    return float(np.max(np.abs(vals)))
