r"""GMRES with deflated restarting (GMRES-DR, Morgan 2002): the (S2) solve that also leaves the slow modes behind.

Restarted GMRES forgets its Krylov space at every restart. GMRES-DR(m, k) keeps the ``k`` harmonic Ritz vectors of
:math:`A` of smallest magnitude together with the residual, in an Arnoldi-like relation
:math:`AV_k = V_{k+1}\bar H_k` (the harmonic residuals are parallel to the GMRES residual, so the kept space holds
it), and extends it to ``m`` vectors again. For :math:`A = I - \mathcal F` the kept vectors approximate the top
eigenvectors of :math:`\mathcal F`, the modes that make (S2) slow; at the end the relation
:math:`AV_j = V_{j+1}\bar H_j` is returned, i.e. :math:`\mathcal F V_j = V_{j+1}(\bar I - \bar H_j)`, a Krylov
decomposition of :math:`\mathcal F` from which :func:`theory.msd.krylov.top_eigenpair` continues (``basis=``):
measured at N = 980 (exact F), 102 further matvecs for :math:`\rho(\mathcal F)` to Ritz residual 1e-6 where a
Krylov-Schur run from the (S2) solution needs 223, with the (S2) solve itself 120 steps against GMRES(40)'s 117.

Every basis vector is orthogonalised twice (classical Gram-Schmidt, CGS2:
:func:`theory.msd.krylov.orthogonalise_twice`): the relation is used as a Krylov
decomposition afterwards, which needs an orthonormal basis. The result is certified by the true residual
:math:`\lVert b - Ax\rVert` recomputed at the end; above ``rtol`` the solve goes on from it (plain restart).

References
----------
.. [1] R. B. Morgan, "GMRES with deflated restarting", SIAM J. Sci. Comput. 24 (2002), 20-37.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import linalg as sla

from theory.msd.krylov import combine_rows, orthogonalise_twice

__all__ = ["DeflatedSolve", "gmres_dr"]


@dataclass(frozen=True)
class DeflatedSolve:
    """``x`` with relative true residual ``residual`` after ``steps`` matvecs; ``basis`` (j + 1, n) with orthonormal
    rows and ``hessenberg`` (j + 1, j) such that ``A @ basis[:j].T = basis.T @ hessenberg`` (None if j = 0)."""

    x: np.ndarray
    steps: int
    residual: float
    basis: np.ndarray | None
    hessenberg: np.ndarray | None


def _harmonic_vectors(H: np.ndarray, m: int, k: int) -> np.ndarray:
    r"""Real basis (m x k', k' <= k + 1) of the harmonic Ritz vectors of the ``k`` smallest-magnitude harmonic Ritz
    values of :math:`\bar H` ((m + 1) x m): eigenvectors of :math:`H_m + h_{m+1,m}^2 H_m^{-T}e_me_m^T`; a complex pair
    contributes its real and imaginary parts (both, so a pair is never split)."""
    Hm = H[:m, :m]
    em = np.zeros(m)
    em[-1] = 1.0
    G = Hm.copy()
    G[:, -1] += H[m, m - 1] ** 2 * sla.solve(Hm.T, em)
    theta, Y = np.linalg.eig(G)
    cols: list[np.ndarray] = []
    taken: set[int] = set()
    for i in np.argsort(np.abs(theta), kind="stable"):
        if len(cols) >= k:
            break
        if i in taken:
            continue
        taken.add(int(i))
        if abs(theta[i].imag) > 1e-12 * abs(theta[i]):
            conj = int(np.argmin(np.abs(theta - np.conj(theta[i])) + (np.arange(m) == i)))  # its partner
            taken.add(conj)
            cols += [Y[:, i].real, Y[:, i].imag]
        else:
            cols.append(Y[:, i].real)
    return np.array(cols).T


def gmres_dr(matvec: Callable[[np.ndarray], np.ndarray], b: np.ndarray, *, rtol: float, m: int = 30, k: int = 10,
             maxiter: int = 5000, callback: Callable[[int, float], None] | None = None) -> DeflatedSolve:
    r"""GMRES-DR(m, k) for :math:`Ax = b` (``matvec`` = :math:`A`, may return a buffer it reuses), from :math:`x = 0`.

    Stops at a least-squares residual below ``rtol / 2`` :math:`\lVert b\rVert`, then recomputes the true residual;
    above ``rtol`` it goes on (a plain restart from it) until ``maxiter`` steps. ``callback(step, residual estimate)``
    after every step. The caller decides what a residual above ``rtol`` means.

    Raises
    ------
    ValueError
        If not ``1 <= k <= m - 2`` (a complex pair may make k + 1 kept vectors) and ``m < n``, or ``rtol`` is
        not in (0, 1).
    """
    n = b.shape[0]
    if not (1 <= k <= m - 2 and m < n):
        raise ValueError(f"GMRES-DR needs 1 <= k <= m - 2 and m < n, got k = {k}, m = {m}, n = {n}")
    if not 0.0 < rtol < 1.0:
        raise ValueError(f"rtol must be in (0, 1), got {rtol!r}")
    bnorm = float(np.linalg.norm(b))
    x = np.zeros(n)
    if bnorm == 0.0:
        return DeflatedSolve(x, 0, 0.0, None, None)
    V = np.empty((m + 1, n))
    H = np.zeros((m + 1, m))
    r = np.array(b, dtype=np.float64)
    steps, p = 0, 0
    c = np.zeros(m + 1)
    while True:
        if p == 0:  # a plain (re)start from the residual r
            rnorm = float(np.linalg.norm(r))
            V[0] = r / rnorm
            H[:] = 0.0
            c[:] = 0.0
            c[0] = rnorm
        j_end, stop = m, False
        d = np.zeros(0)
        for j in range(p, m):
            w = V[j + 1]
            w[:] = matvec(V[j])
            steps += 1
            h, beta = orthogonalise_twice(V, j, w)
            H[:j + 1, j] = h
            H[j + 1, j] = beta
            d = np.linalg.lstsq(H[:j + 2, :j + 1], c[:j + 2], rcond=None)[0]
            estimate = float(np.linalg.norm(c[:j + 2] - H[:j + 2, :j + 1] @ d))
            if callback is not None:
                callback(steps, estimate / bnorm)
            if estimate <= 0.5 * rtol * bnorm or beta <= 1e-14 * max(1.0, float(np.abs(h).max())) or steps >= maxiter:
                j_end, stop = j + 1, True
                if beta > 0.0:
                    w /= beta
                break
            w /= beta
        x += d @ V[:j_end]
        if stop:
            r = b - matvec(x)
            residual = float(np.linalg.norm(r)) / bnorm
            if residual <= rtol or steps >= maxiter or not math.isfinite(residual):
                return DeflatedSolve(x, steps, residual, V[:j_end + 1], H[:j_end + 1, :j_end].copy())  # a view
            p = 0  # the estimate was optimistic (rounding): restart plainly from the true residual
            continue
        # deflated restart: keep the harmonic Ritz vectors and the residual s (both in span V_{m+1})
        s = c - H @ d
        Y = _harmonic_vectors(H, m, k)
        q = Y.shape[1]
        P = np.zeros((m + 1, q + 1))
        P[:m, :q] = np.linalg.qr(Y)[0]
        for _ in range(2):  # s orthogonalised against the kept vectors, twice
            s = s - P[:, :q] @ (P[:, :q].T @ s)
        P[:, q] = s / np.linalg.norm(s)
        Hq = P.T @ H @ P[:m, :q]
        c_new = P.T @ (c - H @ d)
        combine_rows(V, np.ascontiguousarray(P.T), m + 1)  # the new basis, in place (no (q + 1) x n temporary)
        H[:] = 0.0
        H[:q + 1, :q] = Hq
        c[:] = 0.0
        c[:q + 1] = c_new
        p = q
