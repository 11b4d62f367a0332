r"""Lean Krylov solvers for operators on long vectors (the structured route's :math:`N^2`-long covariances).

ARPACK's ``eigs`` and SciPy's ``gmres`` spend more time in their own bookkeeping than in :math:`\mathcal F` when
the vectors are :math:`N^2`-long (profiled at :math:`N = 980`: 1.7x the matvec time in ARPACK, 2x in GMRES). Both
solvers here keep the Krylov basis in one preallocated ``(m + 1, n)`` array and orthogonalise with classical
Gram-Schmidt (two matrix-vector products with the basis per step instead of a loop of dot products; repeated
when cancellation demands it, the DGKS criterion, in GMRES; always twice in Arnoldi, whose steps nearly all
cancel, with the middle two passes fused chunk by chunk), so one step costs two to three passes over the basis
plus the matvec; what certifies a result is a residual recomputed from the operator, never the basis alone.

* :func:`top_eigenpair`: the eigenvalue of largest magnitude by Krylov-Schur (Stewart 2001): the Ritz pair's
  residual is estimated after every step (a warm start from a nearby eigenvector stops after a few matvecs) and
  recomputed explicitly before it is accepted; a restart keeps the Schur vectors of the ``ncv // 2`` largest
  Ritz values;
* :func:`gmres`: restarted GMRES with Givens rotations, the true residual recomputed at every restart.

References
----------
.. [1] G. W. Stewart, "A Krylov-Schur algorithm for large eigenproblems", SIAM J. Matrix Anal. Appl. 23 (2001).
.. [2] Y. Saad and M. H. Schultz, "GMRES", SIAM J. Sci. Stat. Comput. 7 (1986); Saad, Iterative Methods for
   Sparse Linear Systems, 2nd ed., Alg. 6.9 and Sec. 6.5.3 (Givens rotations).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import linalg as sla

__all__ = ["EigenResult", "FUSED_CHUNK", "generic_start", "gmres", "top_eigenpair"]


def generic_start(n: int) -> np.ndarray:
    """A fixed, generic Krylov start vector of length ``n`` (standard normal, seed 0): unlike all ones it is not
    invariant under any permutation of the coordinates, so it reaches every invariant subspace of a symmetric
    operator (e.g. the modes that differ within a class of exchangeable clients)."""
    return np.random.default_rng(0).standard_normal(n)


#: Daniel-Gragg-Kaufman-Stewart reorthogonalisation threshold of the classical textbook rule (ARPACK: 0.717).
DGKS_ETA = 0.7071
#: Reorthogonalise only on severe cancellation (norm below this fraction of its start): GMRES only, whose result
#: is certified by the true residual recomputed at every restart. Not for Arnoldi: with one pass the basis of a
#: Krylov-Schur run lost all orthogonality on a 144 x 144 F (spurious Ritz values); the DGKS 0.7071 kept it.
LEAN_ETA = 0.1


def _orthogonalise(V: np.ndarray, j: int, w: np.ndarray, eta: float = DGKS_ETA) -> tuple[np.ndarray, float]:
    """w minus its projection on the rows 0..j of V (in place): classical Gram-Schmidt, repeated once when the
    norm drops below ``eta`` of its start (Daniel-Gragg-Kaufman-Stewart); returns the coefficients and the norm."""
    B = V[:j + 1]
    before = float(np.linalg.norm(w))
    h = B @ w
    w -= h @ B
    after = float(np.linalg.norm(w))
    if after < eta * before:
        h2 = B @ w
        w -= h2 @ B
        h += h2
        after = float(np.linalg.norm(w))
    return h, after


#: Columns per chunk of the fused Gram-Schmidt pass: a (ncv + 1) x 4096 block of the basis (<= 0.7 MB at ncv 20)
#: stays in cache between its two uses.
FUSED_CHUNK = 4096


def _orthogonalise_twice(V: np.ndarray, j: int, w: np.ndarray) -> tuple[np.ndarray, float]:
    """Classical Gram-Schmidt applied twice (CGS2) to w against the rows 0..j of V, in place, in three passes over
    the basis instead of four: the first update ``w -= h @ B`` and the second projection ``B @ w`` run chunk by
    chunk of columns, so each chunk of B is read from memory once for both (same arithmetic as two separate CGS
    passes up to the order of the sums). Returns the summed coefficients and the final norm.

    Arnoldi on a converging Krylov space cancels heavily at every step (``F v`` nearly in the span), so the
    DGKS test of :func:`_orthogonalise` asks for the second pass at nearly every step anyway (184 of 186 steps
    measured on the structured F at N = 250)."""
    B = V[:j + 1]
    h = B @ w
    h2 = np.zeros_like(h)
    for s in range(0, w.shape[0], FUSED_CHUNK):
        wc, Bc = w[s:s + FUSED_CHUNK], B[:, s:s + FUSED_CHUNK]
        wc -= h @ Bc
        h2 += Bc @ wc
    w -= h2 @ B
    return h + h2, float(np.linalg.norm(w))


@dataclass(frozen=True)
class EigenResult:
    """Largest-magnitude eigenvalue ``value`` (complex), a real start vector for the next solve, the Ritz
    residual ``||F x - value x|| / |value|`` (``||x|| = 1``) and the matvec count."""

    value: complex
    vector: np.ndarray | None
    residual: float
    matvecs: int


def _combine_rows(V: np.ndarray, M: np.ndarray, m: int, chunk: int = 8192) -> None:
    """``V[:p] = M @ V[:m]`` (``M`` is p x m, p <= m) in place, column chunk by chunk: no (p, n) temporary (at
    N^2 = 10^6 a 77 MB array freshly paged in at every restart)."""
    p = M.shape[0]
    for s in range(0, V.shape[1], chunk):
        V[:p, s:s + chunk] = M @ V[:m, s:s + chunk]


def _explicit_residual(matvec, theta: complex, y: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, float, int]:
    """Ritz vector ``y @ B`` (unit norm, real part of a real pair), ``||F x - theta x|| / |theta|`` and the matvecs."""
    if theta.imag == 0.0:
        x = np.real(y) @ B
        x /= np.linalg.norm(x)
        r = np.asarray(matvec(x), dtype=np.float64) - theta.real * x
        return x, float(np.linalg.norm(r)) / max(abs(theta), 1e-300), 1
    xr, xi = np.real(y) @ B, np.imag(y) @ B
    scale = math.hypot(float(np.linalg.norm(xr)), float(np.linalg.norm(xi)))
    fr = np.array(matvec(xr), dtype=np.float64)  # a copy: matvec may reuse its output buffer
    fi = np.asarray(matvec(xi), dtype=np.float64)
    a, b = theta.real, theta.imag
    res = math.hypot(float(np.linalg.norm(fr - a * xr + b * xi)), float(np.linalg.norm(fi - b * xr - a * xi)))
    x = xr + xi  # a real start vector in the pair's invariant subspace (for warm starts)
    return x / np.linalg.norm(x), res / (scale * max(abs(theta), 1e-300)), 2


def top_eigenpair(matvec: Callable[[np.ndarray], np.ndarray], n: int, v0: np.ndarray | None = None, *,
                  tol: float = 1e-10, ncv: int = 20, maxiter: int = 3000, what: str = "top eigenvalue",
                  decide: float = 0.0) -> EigenResult:
    r"""Eigenvalue of largest magnitude of the linear map ``matvec`` on :math:`\mathbb R^n` (Krylov-Schur).

    Stops when the Ritz pair :math:`(\theta, x)` of largest :math:`|\theta|` has
    :math:`\lVert Fx - \theta x\rVert \le` ``tol`` :math:`|\theta|\,\lVert x\rVert` (ARPACK's criterion), or, with
    ``decide > 0``, below ``decide`` :math:`\bigl||\theta| - 1\bigr|` (enough to tell on which side of 1 the spectral
    radius lies, far from 1; near 1 this is the tighter rule). The Hessenberg estimate of the residual is checked
    after every step; once it passes, the residual is recomputed explicitly (one or two more matvecs) and that
    value, returned as ``residual``, must pass too (otherwise the iteration goes on with a ten times smaller
    estimate required). ``matvec`` may return a buffer it reuses.

    A cold start (``v0`` None, zero or not finite) is :func:`generic_start`.

    Raises
    ------
    ValueError
        If ``maxiter`` restarts do not reach ``tol`` (the message starts with ``what``).
    """
    if not 4 <= ncv < n:
        raise ValueError(f"ncv must be in [4, n) = [4, {n}), got {ncv}")
    V = np.empty((ncv + 1, n))
    H = np.zeros((ncv + 1, ncv))
    # a cold start is generic, never all ones: a start with (almost) no component along the top eigenvector lets the
    # decide-side stop accept a lower eigenvalue (seed F at N = 980, mu = 0.1973: 0.85199 from all ones, rho 0.85793)
    start = generic_start(n) if v0 is None or not np.all(np.isfinite(v0)) or not np.any(v0) else np.asarray(v0, float)
    V[0] = start / np.linalg.norm(start)
    p, matvecs, residual, strict = 0, 0, math.inf, 1.0
    for _restart in range(maxiter):
        for j in range(p, ncv):
            w = V[j + 1]  # the new basis vector is built in place
            w[:] = matvec(V[j])
            matvecs += 1
            h, beta = _orthogonalise_twice(V, j, w)
            H[:j + 1, j] = h
            H[j + 1, :j + 1] = 0.0
            H[j + 1, j] = beta
            vals, vecs = np.linalg.eig(H[:j + 1, :j + 1])
            i = int(np.argmax(np.abs(vals)))
            theta, y = vals[i], vecs[:, i]
            if abs(theta.imag) <= 1e-10 * abs(theta):
                theta, y = complex(theta.real, 0.0), np.real(y)
            residual = float(abs(H[j + 1, :j + 1] @ y)) / max(abs(theta), 1e-300)
            goal = max(tol, decide * abs(abs(theta) - 1.0))
            breakdown = beta <= 1e-14 * max(abs(theta), 1e-300)  # an invariant subspace: the Ritz pair is exact
            if residual <= strict * goal or breakdown:
                x, residual, used = _explicit_residual(matvec, theta, y, V[:j + 1])
                matvecs += used
                if residual <= goal:
                    return EigenResult(complex(theta), x, residual, matvecs)
                if breakdown:
                    break
                strict *= 0.1  # the estimate was optimistic (rounding in the basis): go on
            w /= beta
        else:
            # Krylov-Schur restart: keep the Schur vectors of the ncv // 2 largest-magnitude Ritz values
            Hm = H[:ncv, :ncv]
            cut = np.sort(np.abs(np.linalg.eigvals(Hm)))[::-1][ncv // 2 - 1]
            T, Z, sdim = sla.schur(Hm, output="real", sort=lambda re, im: math.hypot(re, im) >= cut * (1 - 1e-12))
            p = int(min(sdim, ncv - 2))
            if p < sdim and T[p, p - 1] != 0.0:  # do not split a 2 x 2 block (complex pair) of the real Schur form
                p -= 1
            b = H[ncv, :ncv] @ Z[:, :p]
            _combine_rows(V, Z[:, :p].T, ncv)
            V[p] = V[ncv]
            H[:] = 0.0
            H[:p, :p] = T[:p, :p]
            H[p, :p] = b
            continue
        break
    raise ValueError(f"{what}: Krylov-Schur did not converge to tol {tol:g} within {maxiter} restarts "
                     f"({matvecs} matvecs, Ritz residual {residual:.2e})")


def gmres(matvec: Callable[[np.ndarray], np.ndarray], b: np.ndarray, *, rtol: float, restart: int = 40,
          maxiter: int = 5000, x0: np.ndarray | None = None, eta: float = DGKS_ETA,
          callback: Callable[[int, float], None] | None = None) -> tuple[np.ndarray, int, float]:
    r"""Restarted GMRES for :math:`Ax = b` (``matvec`` = :math:`A`), stopping at :math:`\lVert b - Ax\rVert \le`
    ``rtol`` :math:`\lVert b\rVert` (true residual, recomputed at each restart) or after ``maxiter`` steps.

    Returns ``(x, steps, relative true residual)``; the caller decides what a residual above ``rtol`` means.
    ``callback(step, residual estimate)`` is called after every step; ``eta``: reorthogonalisation threshold
    (``LEAN_ETA``: one Gram-Schmidt pass unless the cancellation is severe; the true residual at each restart
    certifies the result either way). ``matvec`` may return a buffer it reuses.
    """
    n = b.shape[0]
    bnorm = float(np.linalg.norm(b))
    x = np.zeros(n) if x0 is None else np.array(x0, dtype=np.float64)
    if bnorm == 0.0:
        return x, 0, 0.0
    r = b - matvec(x) if x0 is not None else b.copy()
    rnorm = float(np.linalg.norm(r))
    m = max(1, min(restart, n))
    V = np.empty((m + 1, n))
    steps = 0
    while rnorm > rtol * bnorm and steps < maxiter:
        H = np.zeros((m + 1, m))
        cs, sn = np.zeros(m), np.zeros(m)
        g = np.zeros(m + 1)
        g[0] = rnorm
        V[0] = r / rnorm
        k = 0
        for j in range(m):
            w = V[j + 1]  # the new basis vector is built in place
            w[:] = matvec(V[j])
            steps += 1
            h, beta = _orthogonalise(V, j, w, eta)
            col = np.append(h, beta)
            for i in range(j):  # previous rotations
                col[i], col[i + 1] = cs[i] * col[i] + sn[i] * col[i + 1], -sn[i] * col[i] + cs[i] * col[i + 1]
            d = math.hypot(col[j], col[j + 1])
            cs[j], sn[j] = (1.0, 0.0) if d == 0.0 else (col[j] / d, col[j + 1] / d)
            col[j], col[j + 1] = d, 0.0
            g[j + 1] = -sn[j] * g[j]
            g[j] = cs[j] * g[j]
            H[:j + 2, j] = col
            k = j + 1
            if callback is not None:
                callback(steps, abs(g[j + 1]) / bnorm)
            if abs(g[j + 1]) <= rtol * bnorm or beta <= 1e-300 or steps >= maxiter:
                break
            w /= beta
        yk = sla.solve_triangular(H[:k, :k], g[:k])
        x += yk @ V[:k]
        r = b - matvec(x)
        rnorm = float(np.linalg.norm(r))
    return x, steps, rnorm / bnorm
