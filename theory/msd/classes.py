r"""Exchangeable client classes with non-white features: (S2) on per-class self and cross blocks of size D x D.

Clients that share :math:`(p_k, R_k, \sigma^2_{\eta,k})` (any :math:`R_k`, e.g. Toeplitz) are exchangeable: the
maps :math:`\mathcal A`, :math:`\mathcal R_\mu`, :math:`\mathcal B` of (S2) (:mod:`theory.msd.structured`)
commute with the permutations :math:`P \otimes I_D` of the clients inside a class (all delay blocks at once).
The same argument as :mod:`theory.msd.grouped` (white R) then gives the invariant state

.. math:: C = (U \otimes I_D)\,X\,(U \otimes I_D)^T + E(Z), \qquad
          E(Z)_{(l,k),(l',k')} = \delta_{kk'}[Z_{c(k)}]_{ll'},

now with :math:`X` made of :math:`(1 + (l_{\max}+1)C)^2` and each :math:`Z_c` of :math:`(l_{\max}+1)^2` blocks of
size :math:`D \times D`: :math:`(1 + (l_{\max}+1)C)^2 + C(l_{\max}+1)^2` block unknowns (2509 at the paper's
scale, four classes), no :math:`K`. Congruences whose client part acts per client (:math:`E[A_e]`,
:math:`I - \mu R_e`, :math:`E[B_e]`) keep this form; the Hadamard terms :math:`(p_k\Pi - c_k^211^T)\circ\cdot`
(:math:`\mathcal A`), :math:`(\Pi - p_m^211^T)\circ\cdot` (:math:`\mathcal B`'s server block) and the Gaussian
fourth moment :math:`R_kX_{kk}^TR_k + \mathrm{tr}(R_kX_{kk})R_k` act on single blocks. One application costs
:math:`O(C\,n_E D^3 + n_E^2D^2)` (:math:`n_E = 1 + (l_{\max}+1)C`), batched matmuls over the block axis.

The MSD needs only the invariant part (the noise and hence :math:`C_\infty` are invariant). :math:`\rho(\mathcal F)`
and the thresholds are not computed here (the invariant space may miss the dominant mode, see
:mod:`theory.msd.grouped`).

References
----------
.. [1] shared/spec/paofed.md 3.5-3.6 (F_exact, (S2), block formulas of A, R_mu, B).
.. [2] seed 004_180cd372987d137b.txt, Ch. (4.26)-(4.34) lines 1016-1072.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import lu_factor, lu_solve
from threadpoolctl import threadpool_limits

from theory.msd.expectations import AnalysisMoments, analysis_moments
from theory.msd.grouped import Grouping, grouping_from_labels, split_class_pairs
from theory.msd.structured import MODELS
from theory.msd.white import krylov_solve

__all__ = [
    "ClassSteadyState",
    "DENSE_MAX",
    "apply_F_classes",
    "class_grouping",
    "class_unknowns",
    "classes_mean_spectral_radius",
    "classes_msd_steady_state",
    "compress_classes",
    "expand_classes",
]

#: Reduced problems up to this many scalar unknowns are solved by dense LU of the explicit operator.
DENSE_MAX = 3000


def _as_moments(x) -> AnalysisMoments:
    return x if isinstance(x, AnalysisMoments) else analysis_moments(x)


def _check(model: str) -> None:
    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}, got {model!r}")


def class_grouping(x) -> Grouping:
    r"""Classes of exchangeable clients: equal :math:`(p_k, R_k, \sigma^2_{\eta,k})` (exact equality, any R).

    Raises
    ------
    ValueError
        If the staleness moments are not invariant under the classes (they are when the classes share
        :math:`p_k`; :func:`theory.msd.expectations.beta_moments` is exchangeable).

    Examples
    --------
    >>> import numpy as np
    >>> from theory.msd.instance import PAOFedInstance, toeplitz_covariances
    >>> inst = PAOFedInstance(K=4, D=2, l_max=1, m=1, selection="subset", p=np.array([0.5, 0.9, 0.5, 0.9]),
    ...                       delta=0.3, alpha=np.array([1.0, 0.5]), sigma2_eta=np.full(4, 0.01),
    ...                       R=toeplitz_covariances([0.3, 0.6, 0.3, 0.6], 2), w_star=np.ones(2), mu=0.1)
    >>> class_grouping(inst).labels.tolist()
    [0, 1, 0, 1]
    """
    m = _as_moments(x)
    keys = np.concatenate([m.p[:, None], m.R.reshape(m.K, -1), m.sigma2_eta[:, None]], axis=1)
    _, labels = np.unique(keys, axis=0, return_inverse=True)
    g = grouping_from_labels(labels.ravel())
    first = np.array([np.flatnonzero(g.labels == c)[0] for c in range(g.C)])
    cx, cs = split_class_pairs(m.beta_second, g)
    full = cx[:, g.labels][:, :, g.labels] + np.eye(m.K)[None] * cs[:, g.labels][:, None, :]
    scale = max(1.0, float(np.max(np.abs(m.beta_second))))
    if (not np.array_equal(m.beta_bar, m.beta_bar[first[g.labels]])
            or np.max(np.abs(full - m.beta_second)) > 64 * np.finfo(float).eps * scale):
        raise ValueError("beta moments are not invariant under the client classes (unequal delay laws?)")
    return g


def class_unknowns(l_max: int, C: int, D: int) -> tuple[int, int]:
    r"""``(block unknowns, scalar unknowns)`` of the reduction: :math:`(1 + (l_{\max}+1)C)^2 + C(l_{\max}+1)^2`
    blocks of :math:`D^2` entries.

    >>> class_unknowns(10, 4, 200)
    (2509, 100360000)
    """
    nb = (1 + (l_max + 1) * C) ** 2 + C * (l_max + 1) ** 2
    return nb, nb * D * D


class _Layout:
    """Index bookkeeping and per-class coefficients of the reduced state (E index of (l, c) is 1 + l C + c)."""

    def __init__(self, m: AnalysisMoments, g: Grouping):
        self.g = g
        C = self.C = g.C
        L1 = self.L1 = m.l_max + 1
        D = self.D = m.D
        self.nE = 1 + L1 * C
        self.nX = self.nE ** 2 * D * D
        self.n = self.nX + C * L1 * L1 * D * D
        self.sizes = g.sizes.astype(np.float64)
        self.single = g.sizes == 1
        first = np.array([np.flatnonzero(g.labels == c)[0] for c in range(C)])
        self.first = first
        self.p_m = m.p_m
        self.p = m.p[first]
        self.c = self.p * m.p_m
        self.R = np.ascontiguousarray(m.R[first])
        self.sigma2 = m.sigma2_eta[first]
        self.Pi = np.asarray(m.Pi)
        self.bw = m.p_m * m.beta_bar[first].T                # B's server-row weights bw[l, c] (per client)
        self.wr = (self.bw * self.sizes[None, :]).ravel()    # the same summed over a class, in E order
        self.s = float(np.sum(self.wr))
        self.src = np.concatenate([[0], np.arange(L1 - 1)])  # delay block l takes l - 1 (0 keeps 0)
        cov = m.beta_second - np.einsum("kl,jl->lkj", m.beta_bar, m.beta_bar)
        self.cx, self.cs = split_class_pairs(cov, g)
        self.bsd = np.einsum("lkk->lk", m.beta_second)[:, first]
        self.rs = self.cx @ self.sizes + self.cs             # (L1, C) row sums of cov per class

    def split(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        D, nE = self.D, self.nE
        X = v[:self.nX].reshape(nE, nE, D, D)
        Z = v[self.nX:].reshape(self.C, self.L1, self.L1, D, D)
        return X, Z

    def canonical(self, X: np.ndarray, Z: np.ndarray) -> None:
        """Fold the cross block of singleton classes into their self block (in place: a unique representation)."""
        for c in np.flatnonzero(self.single):
            idx = 1 + np.arange(self.L1) * self.C + c
            Z[c] += X[idx[:, None], idx[None, :]]
            X[idx[:, None], idx[None, :]] = 0.0


def _apply_A(lay: _Layout, X: np.ndarray, Z: np.ndarray) -> None:
    r""":math:`\mathcal A` in place: :math:`E[A_e]` congruence plus :math:`(p_c\Pi - c_c^211^T)\circ\delta_c`."""
    C = lay.C
    c = lay.c[:, None, None]
    loc = slice(1, 1 + C)
    delta = X[0, 0][None] - X[0, loc] - X[loc, 0] + np.einsum("ccij->cij", X[loc, loc]) + Z[:, 0, 0]
    X[loc] *= (1.0 - c)[:, None]
    X[loc] += c[:, None] * X[0][None]
    X[:, loc] *= (1.0 - c)[None]
    X[:, loc] += c[None] * X[:, 0][:, None]
    Z[:, 0] *= (1.0 - c)[:, None]
    Z[:, :, 0] *= (1.0 - c)[:, None]
    Z[:, 0, 0] += (lay.p[:, None, None] * lay.Pi[None] - c ** 2) * delta


def _apply_R(lay: _Layout, X: np.ndarray, Z: np.ndarray, model: str, mu: float) -> None:
    r""":math:`\mathcal R_\mu` in place: the :math:`(I - \mu R_c)` congruence of the local rows/columns, minus
    :math:`\mu^2 R_cX R_{c'}` (seed) or plus the Gaussian :math:`\mu^2(R_cS^TR_c + \mathrm{tr}(R_cS)R_c)` on the
    local diagonal blocks :math:`S` (exact)."""
    C = lay.C
    loc = slice(1, 1 + C)
    muR = mu * lay.R
    T = np.eye(lay.D)[None] - muR
    Tt = np.swapaxes(T, 1, 2)
    if model == "exact":
        S = np.einsum("ccij->cij", X[loc, loc]) + Z[:, 0, 0]
        extra = (np.einsum("cab,cdb,cde->cae", muR, S, muR, optimize=True)
                 + np.einsum("cab,cba->c", muR, S)[:, None, None] * muR)
    else:
        extra_x = np.einsum("cab,cdbe,def->cdaf", muR, X[loc, loc], muR, optimize=True)
        extra_z = np.einsum("cab,cbe,cef->caf", muR, Z[:, 0, 0], muR, optimize=True)
    X[loc] = np.matmul(T[:, None], X[loc])
    X[:, loc] = np.matmul(X[:, loc], Tt[None])
    Z[:, 0] = np.matmul(T[:, None], Z[:, 0])
    Z[:, :, 0] = np.matmul(Z[:, :, 0], Tt[:, None])
    if model == "exact":
        Z[:, 0, 0] += extra
    else:
        X[loc, loc] -= extra_x
        Z[:, 0, 0] -= extra_z


def _apply_B(lay: _Layout, X: np.ndarray, Z: np.ndarray, W: np.ndarray) -> np.ndarray:
    r""":math:`\mathcal B`: :math:`E[B_e]` congruence (server row, delay shift), the transfer of the self blocks
    to the server row, and the (0, 0) correction of the random weights and selections. ``X`` is overwritten with
    the new cross blocks (``W`` is a work array of its shape); returns the new self blocks."""
    C, L1, nE = lay.C, lay.L1, lay.nE
    n = lay.sizes
    corr = np.zeros((lay.D, lay.D))
    dsum = np.zeros((lay.D, lay.D))
    for l in range(L1):
        sl = slice(1 + l * C, 1 + (l + 1) * C)
        Xll = X[sl, sl]
        Xd = np.einsum("ccij->cij", Xll)
        Zd = Z[:, l, l]
        cx, cs, rs = lay.cx[l], lay.cs[l], lay.rs[l]
        hat = (np.einsum("cd,cdij->ij", n[:, None] * cx * n[None, :], Xll) + np.einsum("c,cij->ij", n * cs, Xd)
               + np.einsum("c,cij->ij", n * (np.diagonal(cx) + cs), Zd)
               - np.einsum("c,cij->ij", n * rs, X[sl, 0] + X[0, sl]) + float(n @ rs) * X[0, 0])
        diag_hat = Xd + Zd - X[sl, 0] - X[0, sl] + X[0, 0][None]
        corr += lay.p_m ** 2 * hat
        dsum += np.einsum("c,cij->ij", n * lay.bsd[l], diag_hat)
    corr += (lay.Pi - lay.p_m ** 2) * dsum
    # rows: W = B-bar X (server row = weighted sum; delay rows shift; local rows stay)
    W[0] = (1.0 - lay.s) * X[0] + np.tensordot(lay.wr, X[1:], axes=(0, 0))
    W[1:1 + C] = X[1:1 + C]
    W[1 + C:] = X[1:nE - C]
    # columns: X = W B-bar^T
    for a in range(nE):  # row by row: W[a, 1:] is contiguous (a tensordot over axis 1 would copy all of W)
        X[a, 0] = (1.0 - lay.s) * W[a, 0] + np.tensordot(lay.wr, W[a, 1:], axes=(0, 0))
    X[:, 1:1 + C] = W[:, 1:1 + C]
    X[:, 1 + C:] = W[:, 1:nE - C]
    # self blocks: shift, and their share of the server row / column / corner
    src = lay.src
    Zn = Z[:, src][:, :, src]
    bw = lay.bw.T                                         # (C, L1)
    row = np.einsum("cl,clpij->pcij", bw, Z[:, :, src])   # server row: sum_l bw[l, c] Z_c[l, src(p)]
    col = np.einsum("cplij,cl->pcij", Z[:, src], bw)
    X[0, 1:] += row.reshape(nE - 1, lay.D, lay.D)
    X[1:, 0] += col.reshape(nE - 1, lay.D, lay.D)
    X[0, 0] += np.einsum("c,cl,clmij,cm->ij", n, bw, Z, bw, optimize=True) + corr
    return Zn


def _apply(lay: _Layout, v: np.ndarray, model: str, mu: float, W: np.ndarray | None = None) -> np.ndarray:
    out = np.array(v, dtype=np.float64, copy=True)
    X, Z = lay.split(out)
    W = np.empty_like(X) if W is None else W
    _apply_A(lay, X, Z)
    _apply_R(lay, X, Z, model, mu)
    Z[...] = _apply_B(lay, X, Z, W)
    lay.canonical(X, Z)
    return out


def apply_F_classes(x, v: np.ndarray, grouping: Grouping, model: str = "seed", mu: float | None = None
                    ) -> np.ndarray:
    r""":math:`\mathcal B\mathcal R_\mu\mathcal A` on a reduced vector ``v`` (see the module).

    Equal to :func:`theory.msd.structured.apply_F` on :func:`expand_classes` of ``v``.
    """
    m = _as_moments(x)
    _check(model)
    mu = m.mu if mu is None else float(mu)
    lay = _Layout(m, grouping)
    v = np.asarray(v, dtype=np.float64)
    if v.shape != (lay.n,):
        raise ValueError(f"v must have shape ({lay.n},) (the reduced size), got {v.shape}")
    with threadpool_limits(1):
        return _apply(lay, v, model, mu)


def _client_index(m: AnalysisMoments, lay: _Layout) -> np.ndarray:
    """E index of every block of the extended state (server 0, then (l, k) in the structured layout)."""
    return np.concatenate([[0], 1 + (np.arange(lay.L1)[:, None] * lay.C + lay.g.labels[None, :]).ravel()])


def expand_classes(x, v: np.ndarray, grouping: Grouping) -> np.ndarray:
    r"""The :math:`N \times N` matrix :math:`(U \otimes I)X(U \otimes I)^T + E(Z)` of a reduced vector."""
    m = _as_moments(x)
    lay = _Layout(m, grouping)
    X, Z = lay.split(np.asarray(v, dtype=np.float64))
    K, L1 = m.K, lay.L1
    cls = _client_index(m, lay)
    S = X[cls[:, None], cls[None, :]].copy()               # (N_b, N_b, D, D)
    ks = np.arange(K)
    for l in range(L1):
        for lp in range(L1):
            S[1 + l * K + ks, 1 + lp * K + ks] += Z[grouping.labels, l, lp]
    return S.transpose(0, 2, 1, 3).reshape(m.N, m.N)


def compress_classes(x, C: np.ndarray, grouping: Grouping) -> np.ndarray:
    r"""The reduced vector of an :math:`N \times N` matrix invariant under the classes (read from representatives)."""
    m = _as_moments(x)
    lay = _Layout(m, grouping)
    K, L1, D, nb = m.K, lay.L1, m.D, m.n_blocks
    S = np.asarray(C, dtype=np.float64).reshape(nb, D, nb, D).transpose(0, 2, 1, 3)
    g = grouping
    reps = [np.flatnonzero(g.labels == c) for c in range(lay.C)]
    a = np.array([r[0] for r in reps])
    b = np.array([r[1] if r.size > 1 else r[0] for r in reps])
    ia = np.concatenate([[0], 1 + (np.arange(L1)[:, None] * K + a[None, :]).ravel()])
    ib = np.concatenate([[0], 1 + (np.arange(L1)[:, None] * K + b[None, :]).ravel()])
    out = np.zeros(lay.n)
    X, Z = lay.split(out)
    X[...] = S[ia[:, None], ib[None, :]]
    li = np.arange(L1)
    for c in range(lay.C):
        rows = 1 + li * K + a[c]
        Z[c] = S[rows[:, None], rows[None, :]] - X[1 + li[:, None] * lay.C + c, 1 + li[None, :] * lay.C + c]
    lay.canonical(X, Z)
    return out


class _Preconditioner:
    r"""Approximate :math:`(I - \mathcal F)^{-1}` for a right preconditioner (linear, on symmetric states).

    :math:`\mathcal F_0` keeps the stiff part of :math:`\mathcal F`: the diagonal scalings of :math:`E[A_e]`
    (:math:`1 - c_c` on local rows), the :math:`I - \mu R_c` congruence (with the seed's :math:`-\mu^2RXR` or the
    exact Gaussian :math:`\mu^2(RS^TR + \mathrm{tr}(RS)R)` on the self block), the server's :math:`1 - s` and the
    delay shift; it drops the server-row sums, the selection (Hadamard) terms and the self-to-server transfer.
    :math:`(I - \mathcal F_0)Y = r` is solved exactly: Stein equations on the undelayed blocks, diagonal in the
    eigenbases of the :math:`R_c` (Sherman-Morrison for the trace term), then forward substitution along the
    delay chain, level by level (the lower block triangle; the upper one by symmetry).
    """

    def __init__(self, lay: _Layout, model: str, mu: float):
        self.lay, self.model, self.mu = lay, model, mu
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

    def __call__(self, r: np.ndarray) -> np.ndarray:
        lay, V = self.lay, self.V
        C, L1, nE = lay.C, lay.L1, lay.nE
        out = np.zeros_like(r)
        R, Rz = lay.split(r)
        Y, Yz = lay.split(out)
        Y[0, 0] = R[0, 0] / self.den_00
        for c in range(C):
            e = 1 + c
            Y[0, e] = ((R[0, e] @ V[c]) / self.den_0l[c][None, :]) @ V[c].T
            Y[e, 0] = Y[0, e].T
            for cp in range(c + 1):
                f = 1 + cp
                y = (V[c].T @ R[e, f] @ V[cp]) / self.den_ll[c, :, cp, :]
                Y[e, f] = V[c] @ y @ V[cp].T
                Y[f, e] = Y[e, f].T
            z = V[c].T @ Rz[c, 0, 0] @ V[c] / self.den_self[c]
            if self.model == "exact":   # trace term: rank one on the diagonal (Sherman-Morrison)
                lam, dd = self.lam[c], np.diag(self.den_self[c])
                u = self.a[c] ** 2 * self.mu ** 2 * lam
                zd = np.diag(V[c].T @ Rz[c, 0, 0] @ V[c]) / dd
                z[np.diag_indices(lay.D)] = zd + (u / dd) * (lam @ zd) / (1.0 - lam @ (u / dd))
            Yz[c, 0, 0] = V[c] @ z @ V[c].T
        src = np.concatenate([[0], np.arange(1, 1 + C), np.arange(1, nE - C)])
        bf = np.ones(nE)
        bf[0] = 1.0 - lay.s
        G_ll = np.empty((C, C, lay.D, lay.D))
        for c in range(C):
            for cp in range(C):
                G_ll[c, cp] = self._G_local(Y[1 + c, 1 + cp], c, cp)
        for d in range(1, L1):
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
            Y[rows[:, None], cols[None, :]] = R[rows[:, None], cols[None, :]] + B
            Y[cols[:-C, None], rows[None, :]] = np.swapaxes(Y[rows[:, None], cols[None, :-C]], 0, 1).swapaxes(2, 3)
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
                    Yz[c, d, lp] = Rz[c, d, lp] + B
                    if lp < d:
                        Yz[c, lp, d] = Yz[c, d, lp].T
        lay.canonical(Y, Yz)
        return out


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


def classes_msd_steady_state(x, model: str = "seed", *, grouping: Grouping | None = None, mu: float | None = None,
                             rtol: float = 1e-12, maxiter: int = 5000, restart: int = 20, method: str = "auto",
                             precondition: bool = True, progress=None) -> ClassSteadyState:
    r"""Steady-state MSD of either model for exchangeable classes with any :math:`R_k` (reduced (S2)).

    Dense LU of the explicit reduced operator up to :data:`DENSE_MAX` scalar unknowns (or ``method="dense"``),
    else capped BiCGSTAB (``"bicgstab"``, the default above :data:`DENSE_MAX`: about ten stored vectors, 8 GB at
    the paper's scale with D = 200) or GMRES(``restart``) (``"gmres"``, ``restart`` + 1 stored vectors) with
    iterative refinement (:func:`theory.msd.white.krylov_solve`), right-preconditioned (``precondition``) by an
    exact solve of the stiff part of :math:`I - \mathcal F`. The solve does not decide stability; a residual
    above ``10 rtol`` raises.

    Raises
    ------
    ValueError
        On a bad model / method / mu, or if the residual stays above ``10 rtol`` (e.g. :math:`\rho(\mathcal F) \ge 1`).
    """
    m = _as_moments(x)
    _check(model)
    if method not in ("auto", "dense", "gmres", "bicgstab"):
        raise ValueError(f"method must be one of auto, dense, gmres, bicgstab, got {method!r}")
    mu = m.mu if mu is None else float(mu)
    if not (math.isfinite(mu) and mu > 0):
        raise ValueError(f"mu must be a finite real > 0, got {mu!r}")
    g = class_grouping(m) if grouping is None else grouping
    lay = _Layout(m, g)
    noise = np.zeros(lay.n)
    X0, Z0 = lay.split(noise)
    Z0[:, 0, 0] = (mu * mu * lay.sigma2)[:, None, None] * lay.R
    Xq, Zq = lay.split(noise)
    Zq[...] = _apply_B(lay, Xq, Zq, np.empty_like(Xq))
    lay.canonical(Xq, Zq)
    q = noise
    qnorm = float(np.linalg.norm(q))
    if qnorm == 0.0:
        return ClassSteadyState(0.0, np.zeros(lay.n), 0.0, "none", 0, lay.n)
    W = np.empty((lay.nE, lay.nE, lay.D, lay.D))

    def op(s):
        out = _apply(lay, s, model, mu, W)
        return np.subtract(s, out, out=out)  # in place: one state-sized temporary less at D = 200 (800 MB)

    its = 0
    with threadpool_limits(1):  # small batched products: threaded BLAS only contends on the shared machine
        if method == "dense" or (method == "auto" and lay.n <= DENSE_MAX):
            A = np.empty((lay.n, lay.n))
            for j in range(lay.n):
                e = np.zeros(lay.n)
                e[j] = 1.0
                A[:, j] = op(e)
            s = lu_solve(lu_factor(A, check_finite=False), q, check_finite=False)
            name = "dense LU"
        else:
            kind = "bicgstab" if method == "auto" else method
            pre = _Preconditioner(lay, model, mu) if precondition else None
            s, its = krylov_solve(op, q, rtol=rtol, method=kind, maxiter=maxiter, restart=restart, progress=progress,
                                  precondition=pre)
            name = f"{'preconditioned ' if pre else ''}{kind} ({its} iterations)"
        residual = float(np.linalg.norm(op(s) - q) / qnorm)
    if not residual <= 10 * rtol:
        raise ValueError(f"class-reduced (S2) not solved: relative residual {residual:.3g} > 10 rtol = "
                         f"{10 * rtol:.3g} ({name}; is rho(F) < 1 at mu = {mu!r}?)")
    X, _ = lay.split(s)
    return ClassSteadyState(float(np.trace(X[0, 0])), s, residual, name, its, lay.n)


def classes_mean_spectral_radius(x, mu: float | None = None, *, grouping: Grouping | None = None,
                                 tol: float = 1e-13, maxiter: int = 3000) -> float:
    r""":math:`\rho(\mathcal M(\mu))` of the mean recursion by the class decomposition (any :math:`R_k`).

    :math:`\mathcal M` commutes with the permutations inside the classes, so :math:`\mathbb R^N` splits into the
    class-symmetric vectors (:math:`w_{l,k} = u_{l,c(k)}`, dimension :math:`(1 + (l_{\max}+1)C)D`) and the vectors
    summing to zero over each class at every delay. On the latter the server row vanishes (its weights are equal
    within a class) and each client's delay chain is block triangular with diagonal :math:`(1 - c_c)(I - \mu R_c)`
    and zeros, so :math:`\rho = \max(\rho(\mathcal M_{sym}), \max_{c: n_c \ge 2}(1 - c_c)\max_i|1 - \mu
    \lambda_i(R_c)|)`; :math:`\mathcal M_{sym} = (U^TU)^{-1}U^T\mathcal MU` from the sparse
    :func:`theory.msd.expectations.mean_operator`, its radius by Arnoldi (dense below 2000 unknowns).

    Raises
    ------
    ValueError
        If Arnoldi does not converge within ``maxiter`` restarts.
    """
    import scipy.sparse as sp
    from scipy.sparse import linalg as spla

    from theory.msd.expectations import mean_operator

    m = _as_moments(x)
    mu = m.mu if mu is None else float(mu)
    g = class_grouping(m) if grouping is None else grouping
    lay = _Layout(m, g)
    D, nE = m.D, lay.nE
    cls = _client_index(m, lay)
    cols = (cls[:, None] * D + np.arange(D)[None, :]).ravel()
    U = sp.csr_matrix((np.ones(m.N), (np.arange(m.N), cols)), shape=(m.N, nE * D))
    counts = np.bincount(cls, minlength=nE).astype(np.float64)
    Ms = sp.diags(np.repeat(1.0 / counts, D)) @ (U.T @ (mean_operator(m, mu) @ U))
    if Ms.shape[0] <= 2000:
        rho_sym = float(np.max(np.abs(np.linalg.eigvals(Ms.toarray()))))
    else:
        try:
            vals = spla.eigs(Ms.tocsr(), k=1, which="LM", tol=tol, maxiter=maxiter, return_eigenvectors=False)
        except spla.ArpackNoConvergence as exc:
            raise ValueError(f"rho(M_sym) at mu = {mu!r}: Arnoldi did not converge within {maxiter} restarts"
                             ) from exc
        rho_sym = float(np.abs(vals[0]))
    lam = np.linalg.eigvalsh(lay.R)                                   # (C, D)
    diff = (1.0 - lay.c)[:, None] * np.abs(1.0 - mu * lam)
    rho_diff = float(np.max(diff[~lay.single])) if np.any(~lay.single) else 0.0
    return max(rho_sym, rho_diff)
