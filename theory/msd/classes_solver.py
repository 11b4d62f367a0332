r"""Packed symmetric storage of the class-reduced state and a BiCGSTAB on it with the fewest stored vectors.

The class-reduced (S2) state is symmetric (:math:`X_{ab} = X_{ba}^T`, :math:`Z_c[l, l'] = Z_c[l', l]^T`): the
recursion maps symmetric states to symmetric states and the noise is symmetric, so the steady state is the solution
on the symmetric subspace. :class:`PackedClasses` stores the diagonal blocks, then the blocks above the diagonal
(row by row, each a contiguous slice of the full state): about half the full reduced vector (1299 instead of 2509
blocks at the paper's scale), with the inner product weighted so that it equals the full reduced one.

:func:`packed_bicgstab` is right-preconditioned BiCGSTAB on :math:`(I - \mathcal F)M` in the preconditioned variable
``y`` (the solution is :math:`x = My`): six packed vectors (y, r = s, r-hat, p, v, t) plus one full work state, all
updates in place (BLAS axpy / scal, no temporaries of state size).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import blas

from theory.msd.classes_operator import ClassLayout

__all__ = ["PackedClasses", "packed_bicgstab"]


class PackedClasses:
    r"""Pack / unpack the symmetric reduced state of a :class:`ClassLayout` (block arrays ``(n_blocks, D, D)``)."""

    def __init__(self, lay: ClassLayout):
        self.lay = lay
        nE, C, L1 = lay.nE, lay.C, lay.L1
        self.n_diag = nE + C * L1
        self.n_blocks = self.n_diag + nE * (nE - 1) // 2 + C * L1 * (L1 - 1) // 2
        rows = []                                  # (packed start, which, c, row) of every off-diagonal row
        k = self.n_diag
        for a in range(nE - 1):
            rows.append((k, "X", 0, a))
            k += nE - 1 - a
        for c in range(C):
            for ell in range(L1 - 1):
                rows.append((k, "Z", c, ell))
                k += L1 - 1 - ell
        self.rows = rows

    def empty(self) -> np.ndarray:
        return np.empty((self.n_blocks, self.lay.D, self.lay.D))

    def _pieces(self, X, Z):
        """(packed slice, full view) pairs: the diagonal blocks, then each off-diagonal row segment."""
        lay = self.lay
        nE = lay.nE
        D, L1 = lay.D, lay.L1
        yield slice(0, nE), X.reshape(nE * nE, D, D)[::nE + 1]        # views (the work state is contiguous)
        for c in range(lay.C):
            s = nE + c * L1
            yield slice(s, s + L1), Z[c].reshape(L1 * L1, D, D)[::L1 + 1]
        for k, which, c, a in self.rows:
            if which == "X":
                yield slice(k, k + nE - 1 - a), X[a, a + 1:]
            else:
                yield slice(k, k + lay.L1 - 1 - a), Z[c, a, a + 1:]

    def pack(self, X, Z, out: np.ndarray) -> np.ndarray:
        for sl, full in self._pieces(X, Z):
            out[sl] = full
        return out

    def subtract(self, X, Z, out: np.ndarray) -> np.ndarray:
        """``out -= pack(X, Z)`` in place."""
        for sl, full in self._pieces(X, Z):
            np.subtract(out[sl], full, out=out[sl])
        return out

    def add(self, X, Z, out: np.ndarray) -> np.ndarray:
        """``out += pack(X, Z)`` in place."""
        for sl, full in self._pieces(X, Z):
            np.add(out[sl], full, out=out[sl])
        return out

    def unpack(self, v: np.ndarray, X, Z) -> None:
        """Write the symmetric state of ``v`` into the full views ``X``, ``Z`` (both triangles)."""
        for sl, full in self._pieces(X, Z):
            full[...] = v[sl]
        for _k, which, c, a in self.rows:
            if which == "X":
                X[a + 1:, a] = np.swapaxes(X[a, a + 1:], 1, 2)
            else:
                Z[c, a + 1:, a] = np.swapaxes(Z[c, a, a + 1:], 1, 2)

    def dot(self, u: np.ndarray, v: np.ndarray) -> float:
        """The full reduced inner product: diagonal blocks once, off-diagonal blocks twice."""
        nd = self.n_diag
        d = float(np.dot(u[:nd].ravel(), v[:nd].ravel()))
        return d + 2.0 * float(np.dot(u[nd:].ravel(), v[nd:].ravel()))

    def norm(self, u: np.ndarray) -> float:
        return math.sqrt(max(self.dot(u, u), 0.0))


def _axpy(a: float, x: np.ndarray, y: np.ndarray) -> None:
    """y += a x in place (BLAS daxpy on the flat views; no temporary)."""
    blas.daxpy(x.reshape(-1), y.reshape(-1), a=a)


def _scal(a: float, x: np.ndarray) -> None:
    blas.dscal(a, x.reshape(-1))


def packed_bicgstab(pk: PackedClasses, work, apply_F, precondition, set_rhs, *, rtol: float, maxiter: int,
                    refinements: int = 3, progress=None):
    r"""Solve :math:`(I - \mathcal F)x = q` on packed symmetric states by right-preconditioned BiCGSTAB.

    Parameters
    ----------
    pk : PackedClasses
    work : tuple (X, Z)
        Views of one full reduced work state; on return it holds the solution :math:`x = My`.
    apply_F, precondition : callables ``f(X, Z)``
        Overwrite the work state with :math:`\mathcal F` of it / :math:`M` of it.
    set_rhs : callable ``f(X, Z)``
        Overwrite the work state with :math:`q` (rebuilt on demand instead of stored).
    rtol, maxiter, refinements
        Target :math:`\lVert q - (I - \mathcal F)x\rVert \le` ``rtol`` :math:`\lVert q\rVert` (the recurrence aims at
        half of it); at most ``maxiter`` iterations per round, and ``refinements`` restarts from the recomputed
        residual (also after a breakdown).

    Returns
    -------
    (iterations, true relative residual of the returned x)
    """
    X, Z = work

    def A(src: np.ndarray, dst: np.ndarray) -> None:     # dst = (I - F) M src
        pk.unpack(src, X, Z)
        precondition(X, Z)
        pk.pack(X, Z, dst)
        apply_F(X, Z)
        pk.subtract(X, Z, dst)

    set_rhs(X, Z)
    r = pk.pack(X, Z, pk.empty())
    qnorm = pk.norm(r)
    y = np.zeros_like(r)
    rhat, p, v, t = pk.empty(), pk.empty(), pk.empty(), pk.empty()
    total = 0
    goal = 0.5 * rtol * qnorm
    for round_ in range(refinements + 1):
        if round_ > 0:   # recompute the true residual r = q - A y
            A(y, r)
            set_rhs(X, Z)
            _scal(-1.0, r)
            pk.add(X, Z, r)
        rn = pk.norm(r)
        if rn <= goal:
            break
        rhat[...] = r
        p[...] = r
        rho = pk.dot(rhat, r)
        for _ in range(maxiter):
            total += 1
            A(p, v)
            den = pk.dot(rhat, v)
            if den == 0.0 or not math.isfinite(den):
                break
            alpha = rho / den
            _axpy(alpha, p, y)
            _axpy(-alpha, v, r)                        # r is now s
            if pk.norm(r) <= goal:
                break
            A(r, t)
            tt = pk.dot(t, t)
            omega = pk.dot(t, r) / tt if tt > 0 else 0.0
            if omega == 0.0 or not math.isfinite(omega):
                break
            _axpy(omega, r, y)
            _axpy(-omega, t, r)
            rn = pk.norm(r)
            if progress is not None and total % 10 == 0:
                progress(total, rn / qnorm)
            if rn <= goal:
                break
            rho_new = pk.dot(rhat, r)
            if rho_new == 0.0 or not math.isfinite(rho_new):
                break
            beta = (rho_new / rho) * (alpha / omega)
            rho = rho_new
            _axpy(-omega, v, p)
            _scal(beta, p)
            _axpy(1.0, r, p)
        if not np.all(np.isfinite(y)):
            break
    del rhat, p, v
    # x = M y in the work state; its true residual
    A(y, t)                                              # t = (I - F) M y; the work state now holds F M y
    set_rhs(X, Z)
    _scal(-1.0, t)
    pk.add(X, Z, t)
    res = pk.norm(t) / qnorm
    pk.unpack(y, X, Z)
    precondition(X, Z)
    return total, res
