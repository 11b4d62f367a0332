r"""Right preconditioner of the class-reduced (S2): an exact solve of its stiff part, in place.

:math:`\mathcal F_0` keeps the stiff part of :math:`\mathcal F` (:mod:`theory.msd.classes_operator`): the diagonal
scalings of :math:`E[A_e]` (:math:`1 - c_c` on local rows), the :math:`I - \mu R_c` congruence (with the seed's
:math:`-\mu^2RXR` or the exact Gaussian :math:`\mu^2(RS^TR + \mathrm{tr}(RS)R)` on the self block), the server's
:math:`1 - s` and the delay shift; it drops the server-row sums, the selection (Hadamard) terms and the
self-to-server transfer. :math:`(I - \mathcal F_0)Y = r` is solved exactly: Stein equations on the undelayed
blocks, diagonal in the eigenbases of the :math:`R_c` (Sherman-Morrison for the trace term), then forward
substitution along the delay chain, level by level (the lower block triangle; the upper one by symmetry).

That solve treats the consensus states (every block equal) as fast, but in :math:`\mathcal F` they are the slowest
modes: the mixing of :math:`\mathcal A` and :math:`\mathcal B` leaves them fixed, so they decay only at the rate
:math:`\mu(\lambda_i + \lambda_j)` of the covariances' eigenvalues, which is tiny for nearly singular :math:`R_c`
at a small step (the paper's RFF covariances have numerical rank 5-7; with a ridge of 1e-2 and
:math:`\mu = 0.004` the slowest decays at :math:`8 \times 10^{-5}` per iteration). A coarse correction adds them
back (``coarse=True``): the residual's consensus part :math:`\rho = \ell(r)` is taken with the stationary weights
:math:`\psi` of the mixing's first-moment chain on the blocks (:math:`\ell(X) = \sum_{ab}\psi_a\psi_bX_{ab}`,
self blocks included), the slow dynamics are modelled by the Lyapunov operator
:math:`\Sigma \mapsto \mu(\tilde R\Sigma + \Sigma\tilde R)` with :math:`\tilde R` the clients' average covariance,
solved in :math:`\tilde R`'s eigenbasis, and its solution is added to every block. The preconditioner stays linear
and symmetric-state preserving; it is no longer an exact inverse of anything, which a right preconditioner need not
be: the answer is the Krylov solve's, checked by its residual. Measured (``benchmarks/bench_paofed_msd_groups.py
--covariance rff --mu 0.004 --models exact --coarse both``: RFF covariances per group, ridge 1e-2, the paper's four
groups of 64 clients, l_max = 10): BiCGSTAB iterations 558 -> 97 at D = 20, 176 -> 74 at D = 200 (456 -> 206
CPU-s); Toeplitz covariances (no near-singular directions) 21 -> 21 at D = 40; the paper's step
:math:`\mu = 0.4`: 14 -> 14.
"""

from __future__ import annotations

import numpy as np

from theory.msd.classes_operator import ClassLayout

__all__ = ["StiffPartSolver"]


class _ConsensusCorrection:
    r"""The coarse correction of :class:`StiffPartSolver` (module docstring): restriction of a residual to its
    consensus part and the Lyapunov model of the consensus dynamics."""

    def __init__(self, lay: ClassLayout, mu: float):
        C, L1, nE = lay.C, lay.L1, lay.nE
        # first-moment chain of the mixing on class-symmetric block values (F = B R A at mu = 0, mean weights)
        chain_a, chain_b = np.eye(nE), np.zeros((nE, nE))
        for c in range(C):
            chain_a[1 + c, 1 + c], chain_a[1 + c, 0] = 1.0 - lay.c[c], lay.c[c]
            chain_b[1 + c, 1 + c] = 1.0
            for ell in range(1, L1):
                chain_b[1 + ell * C + c, 1 + (ell - 1) * C + c] = 1.0
        chain_b[0, 0], chain_b[0, 1:] = 1.0 - lay.s, lay.wr
        vals, vecs = np.linalg.eig((chain_b @ chain_a).T)
        psi = np.real(vecs[:, np.argmin(np.abs(vals - 1.0))])
        self.psi = psi / psi.sum()
        level = 1 + np.arange(L1)[:, None] * C + np.arange(C)[None, :]           # (L1, C) E indices
        self.psi_self = np.einsum("lc,mc->clm", self.psi[level], self.psi[level]) / lay.sizes[:, None, None]
        average = np.einsum("c,cij->ij", lay.sizes, lay.R) / lay.sizes.sum()
        self.lam, self.Q = np.linalg.eigh(average)
        pair = self.lam[:, None] + self.lam[None, :]
        self.den = mu * pair
        # directions no covariance excites (numerically singular average): left to the stiff-part solve
        self.den[pair <= 1e-10 * max(float(pair.max()), 0.0)] = np.inf

    def restrict(self, Y: np.ndarray, Yz: np.ndarray) -> np.ndarray:
        return (np.einsum("a,b,abij->ij", self.psi, self.psi, Y, optimize=True)
                + np.einsum("clm,clmij->ij", self.psi_self, Yz, optimize=True))

    def solve(self, rho: np.ndarray) -> np.ndarray:
        Q = self.Q
        sym = 0.5 * (rho + rho.T)
        return Q @ ((Q.T @ sym @ Q) / self.den) @ Q.T


class StiffPartSolver:
    r"""``solver(X, Z)`` overwrites a symmetric reduced state :math:`r` with :math:`M r`: with ``coarse=False``
    :math:`(I - \mathcal F_0)^{-1}r` (exact up to rounding), by default that plus the consensus correction of the
    module docstring.

    Linear on symmetric states; every block is read before it is written, so the solve needs no state-sized buffer.
    """

    def __init__(self, lay: ClassLayout, model: str, mu: float, *, coarse: bool = True):
        self.lay, self.model, self.mu = lay, model, mu
        self.coarse = _ConsensusCorrection(lay, mu) if coarse else None
        lam, V = np.linalg.eigh(lay.R)                            # (C, D), (C, D, D)
        self.lam, self.V = lam, V
        a = 1.0 - lay.c
        self.aT = a[:, None, None] * (np.eye(lay.D)[None] - mu * lay.R)
        t = 1.0 - mu * lam
        self.t, self.a = t, a
        if model == "exact":
            g = t[:, :, None, None] * t[None, None, :, :]         # (C, D, C, D)
        else:
            g = 1.0 - mu * (lam[:, :, None, None] + lam[None, None, :, :])
        self.den_ll = 1.0 - a[:, None, None, None] * a[None, None, :, None] * g
        self.den_0l = 1.0 - (1.0 - lay.s) * a[:, None] * t            # server x local, eigen-coordinates
        self.den_00 = 1.0 - (1.0 - lay.s) ** 2
        d = np.einsum("cicj->cij", g) * (a ** 2)[:, None, None]     # self block (c, c)
        if model == "exact":
            d = d + (a ** 2)[:, None, None] * mu ** 2 * lam[:, :, None] * lam[:, None, :]
        self.den_self = 1.0 - d

    def _G_local(self, Y, c, cp):
        """G on a (local c, local c') pair (the self form is handled by the caller)."""
        G = self.aT[c] @ Y @ self.aT[cp].T
        if self.model == "seed":
            G -= self.a[c] * self.a[cp] * self.mu ** 2 * self.lay.R[c] @ Y @ self.lay.R[cp]
        return G

    def _G_self(self, Z, c):
        G = self._G_local(Z, c, c)
        if self.model == "exact":
            muR = self.mu * self.lay.R[c]
            G += self.a[c] ** 2 * (muR @ Z.T @ muR + np.trace(muR @ Z) * muR)
        return G

    def _undelayed(self, Y: np.ndarray, Yz: np.ndarray) -> None:
        """The Stein equations of the server and undelayed local blocks, in the eigenbases of the R_c."""
        lay, V = self.lay, self.V
        Y[0, 0] /= self.den_00
        for c in range(lay.C):
            e = 1 + c
            Y[0, e] = ((Y[0, e] @ V[c]) / self.den_0l[c][None, :]) @ V[c].T
            Y[e, 0] = Y[0, e].T
            for cp in range(c + 1):
                f = 1 + cp
                y = (V[c].T @ Y[e, f] @ V[cp]) / self.den_ll[c, :, cp, :]
                Y[e, f] = V[c] @ y @ V[cp].T
                Y[f, e] = Y[e, f].T
            rz = V[c].T @ Yz[c, 0, 0] @ V[c]
            z = rz / self.den_self[c]
            if self.model == "exact":   # trace term: rank one on the diagonal (Sherman-Morrison)
                lam, dd = self.lam[c], np.diag(self.den_self[c])
                u = self.a[c] ** 2 * self.mu ** 2 * lam
                zd = np.diag(rz) / dd
                z[np.diag_indices(lay.D)] = zd + (u / dd) * (lam @ zd) / (1.0 - lam @ (u / dd))
            Yz[c, 0, 0] = V[c] @ z @ V[c].T

    def __call__(self, Y: np.ndarray, Yz: np.ndarray) -> None:
        rho = self.coarse.restrict(Y, Yz) if self.coarse is not None else None
        self._stiff(Y, Yz)
        if rho is not None:
            Y += self.coarse.solve(rho)          # the same D x D matrix on every block: a consensus state
            self.lay.canonical(Y, Yz)

    def _stiff(self, Y: np.ndarray, Yz: np.ndarray) -> None:
        lay = self.lay
        C, L1, nE = lay.C, lay.L1, lay.nE
        self._undelayed(Y, Yz)
        src = np.concatenate([[0], np.arange(1, 1 + C), np.arange(1, nE - C)])
        bf = np.ones(nE)
        bf[0] = 1.0 - lay.s
        G_ll = np.empty((C, C, lay.D, lay.D))
        for c in range(C):
            for cp in range(C):
                G_ll[c, cp] = self._G_local(Y[1 + c, 1 + cp], c, cp)
        for d in range(1, L1):   # level d reads the final blocks of level d - 1 and its own right side
            rows = np.arange(1 + d * C, 1 + (d + 1) * C)
            cols = np.arange(0, 1 + (d + 1) * C)
            B = Y[(rows - C)[:, None], src[cols][None, :]]          # (C, ncols, D, D)
            loc_cols = (src[cols] >= 1) & (src[cols] <= C)
            if d == 1:
                B = np.matmul(self.aT[:, None], B)
                B[:, loc_cols] = G_ll[:, src[cols][loc_cols] - 1]
            idx = np.flatnonzero(loc_cols if d > 1 else np.zeros_like(loc_cols))
            if idx.size:
                cls = src[cols][idx] - 1
                B[:, idx] = np.matmul(B[:, idx], np.swapaxes(self.aT[cls], 1, 2)[None])
            B *= bf[cols][None, :, None, None]
            B += Y[rows[:, None], cols[None, :]]
            Y[rows[:, None], cols[None, :]] = B
            Y[cols[:-C, None], rows[None, :]] = np.swapaxes(B[:, :-C], 0, 1).swapaxes(2, 3)
        for c in range(C):
            Gz = self._G_self(Yz[c, 0, 0], c)
            for d in range(1, L1):
                for lp in range(d + 1):
                    sl = 0 if lp == 0 else lp - 1
                    if d == 1 and sl == 0:
                        B = Gz
                    elif d == 1:
                        B = self.aT[c] @ Yz[c, 0, sl]
                    elif sl == 0:
                        B = Yz[c, d - 1, 0] @ self.aT[c].T
                    else:
                        B = Yz[c, d - 1, sl]
                    Yz[c, d, lp] += B
                    if lp < d:
                        Yz[c, lp, d] = Yz[c, d, lp].T
        lay.canonical(Y, Yz)
