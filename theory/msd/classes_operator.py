r"""The class-reduced :math:`\mathcal F = \mathcal B\mathcal R_\mu\mathcal A` of (S2), applied in place.

The reduced state of exchangeable client classes (:mod:`theory.msd.classes`) is :math:`X` (:math:`n_E \times n_E`
blocks, :math:`n_E = 1 + (l_{\max}+1)C`, E index of (l, c) is :math:`1 + lC + c`) and :math:`Z_c`
(:math:`(l_{\max}+1)^2` blocks per class), all :math:`D \times D`. :func:`apply_F_inplace` overwrites a work state
with :math:`\mathcal F` of it without any state-sized temporary (the largest is one block row, :math:`n_E D^2`).
Hadamard terms act on single blocks; congruences whose client part acts per client keep the form.

References
----------
.. [1] docs/papers/paofed.md#mean-square, docs/papers/paofed.md#structured (F_exact, (S2), block formulas of A, R_mu,
       B).
.. [2] seed 004_180cd372987d137b.txt, Ch. (4.26)-(4.34) lines 1016-1072.
"""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

from theory.msd.expectations import AnalysisMoments, analysis_moments
from theory.msd.grouped import Grouping, grouping_from_labels, split_class_pairs
from theory.msd.structured import MODELS

__all__ = ["ClassLayout", "apply_F_classes", "apply_F_inplace", "as_moments", "check_model", "class_grouping",
           "class_unknowns", "compress_classes", "expand_classes", "noise_term_inplace"]


def as_moments(x) -> AnalysisMoments:
    """``x`` if it already is :class:`AnalysisMoments`, else :func:`analysis_moments` of the instance."""
    return x if isinstance(x, AnalysisMoments) else analysis_moments(x)


def check_model(model: str) -> None:
    """Raise ``ValueError`` unless ``model`` is one of :data:`theory.msd.structured.MODELS`."""
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
    m = as_moments(x)
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


class ClassLayout:
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
        #: per-class noise matrices replacing sigma2_c R_c in (S2)'s right side (None: sigma2_c R_c); see
        #: :func:`theory.msd.classes.classes_msd_steady_state`'s ``noise``
        self.noise: np.ndarray | None = None
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
        """Views ``X`` (nE, nE, D, D) and ``Z`` (C, L1, L1, D, D) of a reduced vector."""
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


def _apply_A(lay: ClassLayout, X: np.ndarray, Z: np.ndarray) -> None:
    r""":math:`\mathcal A` in place: :math:`E[A_e]` congruence plus :math:`(p_c\Pi - c_c^211^T)\circ\delta_c`."""
    C = lay.C
    loc = slice(1, 1 + C)
    c3 = lay.c[:, None, None]
    delta = X[0, 0][None] - X[0, loc] - X[loc, 0] + np.einsum("ccij->cij", X[loc, loc]) + Z[:, 0, 0]
    for c in range(C):                                   # one block row / column at a time (no state temporaries)
        e, cc = 1 + c, float(lay.c[c])
        X[e] *= 1.0 - cc
        X[e] += cc * X[0]
    for c in range(C):
        e, cc = 1 + c, float(lay.c[c])
        X[:, e] *= 1.0 - cc
        X[:, e] += cc * X[:, 0]
    Z[:, 0] *= (1.0 - c3)[:, None]
    Z[:, :, 0] *= (1.0 - c3)[:, None]
    Z[:, 0, 0] += (lay.p[:, None, None] * lay.Pi[None] - c3 ** 2) * delta


def _apply_R(lay: ClassLayout, X: np.ndarray, Z: np.ndarray, model: str, mu: float) -> None:
    r""":math:`\mathcal R_\mu` in place: the :math:`(I - \mu R_c)` congruence of the local rows/columns, minus
    :math:`\mu^2 R_cX R_{c'}` (seed) or plus the Gaussian :math:`\mu^2(R_cS^TR_c + \mathrm{tr}(R_cS)R_c)` on the
    local diagonal blocks :math:`S` (exact)."""
    C = lay.C
    loc = slice(1, 1 + C)
    muR = mu * lay.R
    T = np.eye(lay.D)[None] - muR
    if model == "exact":
        S = np.einsum("ccij->cij", X[loc, loc]) + Z[:, 0, 0]
        extra = (np.einsum("cab,cdb,cde->cae", muR, S, muR, optimize=True)
                 + np.einsum("cab,cba->c", muR, S)[:, None, None] * muR)
    else:
        extra_x = np.einsum("cab,cdbe,def->cdaf", muR, X[loc, loc], muR, optimize=True)
        extra_z = np.einsum("cab,cbe,cef->caf", muR, Z[:, 0, 0], muR, optimize=True)
    buf = np.empty((lay.nE, lay.D, lay.D))
    for c in range(C):
        e = 1 + c
        np.matmul(T[c], X[e], out=buf)
        X[e] = buf
    for c in range(C):
        e = 1 + c
        np.matmul(X[:, e], T[c].T, out=buf)
        X[:, e] = buf
    Z[:, 0] = np.matmul(T[:, None], Z[:, 0])
    Z[:, :, 0] = np.matmul(Z[:, :, 0], np.swapaxes(T, 1, 2)[:, None])
    if model == "exact":
        Z[:, 0, 0] += extra
    else:
        X[loc, loc] -= extra_x
        Z[:, 0, 0] -= extra_z


def _apply_B(lay: ClassLayout, X: np.ndarray, Z: np.ndarray) -> None:
    r""":math:`\mathcal B` in place: :math:`E[B_e]` congruence (server row, delay shift), the transfer of the self
    blocks to the server row, and the (0, 0) correction of the random weights and selections."""
    C, L1, nE, D = lay.C, lay.L1, lay.nE, lay.D
    n = lay.sizes
    corr = np.zeros((D, D))
    dsum = np.zeros((D, D))
    for ell in range(L1):
        sl = slice(1 + ell * C, 1 + (ell + 1) * C)
        Xll = X[sl, sl]
        Xd = np.einsum("ccij->cij", Xll)
        Zd = Z[:, ell, ell]
        cx, cs, rs = lay.cx[ell], lay.cs[ell], lay.rs[ell]
        hat = (np.einsum("cd,cdij->ij", n[:, None] * cx * n[None, :], Xll) + np.einsum("c,cij->ij", n * cs, Xd)
               + np.einsum("c,cij->ij", n * (np.diagonal(cx) + cs), Zd)
               - np.einsum("c,cij->ij", n * rs, X[sl, 0] + X[0, sl]) + float(n @ rs) * X[0, 0])
        diag_hat = Xd + Zd - X[sl, 0] - X[0, sl] + X[0, 0][None]
        corr += lay.p_m ** 2 * hat
        dsum += np.einsum("c,cij->ij", n * lay.bsd[ell], diag_hat)
    corr += (lay.Pi - lay.p_m ** 2) * dsum
    # the self blocks' share of the server row / column / corner (from the old Z)
    bw = lay.bw.T                                                   # (C, L1)
    zrow = np.einsum("cl,clpij->cpij", bw, Z)                       # sum_l bw[c, l] Z_c[l, p]
    zcol = np.einsum("cplij,cl->cpij", Z, bw)                       # sum_l Z_c[p, l] bw[c, l]
    corner = np.einsum("c,cl,clmij,cm->ij", n, bw, Z, bw, optimize=True) + corr
    # rows: X <- B-bar X (server row = weighted sum; delay rows shift down by one level; local rows stay)
    buf = np.empty((nE, D, D))
    np.multiply(X[0], 1.0 - lay.s, out=buf)
    buf += np.tensordot(lay.wr, X[1:], axes=(0, 0))
    for j in range(nE - 1, C, -1):
        X[j] = X[j - C]
    X[0] = buf
    # columns: X <- X B-bar^T
    for a in range(nE):
        row = X[a]
        head = (1.0 - lay.s) * row[0] + np.tensordot(lay.wr, row[1:], axes=(0, 0))
        row[1 + C:] = row[1:nE - C]                  # overlapping: numpy copies through a row-sized buffer
        row[0] = head
    # self blocks: the delay shift Z_c[l, l'] <- Z_c[src l, src l'] (in place, descending; src l <= l)
    src = lay.src
    for ell in range(L1 - 1, -1, -1):
        for lp in range(L1 - 1, -1, -1):
            if (src[ell], src[lp]) != (ell, lp):
                Z[:, ell, lp] = Z[:, src[ell], src[lp]]
    X[0, 1:] += zrow[:, src].transpose(1, 0, 2, 3).reshape(nE - 1, D, D)
    X[1:, 0] += zcol[:, src].transpose(1, 0, 2, 3).reshape(nE - 1, D, D)
    X[0, 0] += corner


def apply_F_inplace(lay: ClassLayout, X: np.ndarray, Z: np.ndarray, model: str, mu: float) -> None:
    r"""Overwrite the reduced state ``(X, Z)`` with :math:`\mathcal F` of it (canonical singleton fold included)."""
    _apply_A(lay, X, Z)
    _apply_R(lay, X, Z, model, mu)
    _apply_B(lay, X, Z)
    lay.canonical(X, Z)


def noise_term_inplace(lay: ClassLayout, X: np.ndarray, Z: np.ndarray, mu: float) -> None:
    r"""Overwrite ``(X, Z)`` with the right side :math:`q = \mathcal B(\mu^2\,\mathrm{diag}(\sigma^2_c R_c))` of
    (S2) (``lay.noise`` in place of :math:`\sigma^2_c R_c` when set)."""
    X[...] = 0.0
    Z[...] = 0.0
    if lay.noise is None:
        Z[:, 0, 0] = (mu * mu * lay.sigma2)[:, None, None] * lay.R
    else:
        Z[:, 0, 0] = (mu * mu) * lay.noise
    _apply_B(lay, X, Z)
    lay.canonical(X, Z)


def apply_F_classes(x, v: np.ndarray, grouping: Grouping, model: str = "seed", mu: float | None = None
                    ) -> np.ndarray:
    r""":math:`\mathcal B\mathcal R_\mu\mathcal A` on a reduced vector ``v`` (a new array).

    Equal to :func:`theory.msd.structured.apply_F` on :func:`expand_classes` of ``v``.
    """
    m = as_moments(x)
    check_model(model)
    mu = m.mu if mu is None else float(mu)
    lay = ClassLayout(m, grouping)
    v = np.asarray(v, dtype=np.float64)
    if v.shape != (lay.n,):
        raise ValueError(f"v must have shape ({lay.n},) (the reduced size), got {v.shape}")
    out = v.copy()
    with threadpool_limits(1):
        apply_F_inplace(lay, *lay.split(out), model, mu)
    return out


def client_index(m: AnalysisMoments, lay: ClassLayout) -> np.ndarray:
    """E index of every block of the extended state (server 0, then (l, k) in the structured layout)."""
    return np.concatenate([[0], 1 + (np.arange(lay.L1)[:, None] * lay.C + lay.g.labels[None, :]).ravel()])


def expand_classes(x, v: np.ndarray, grouping: Grouping) -> np.ndarray:
    r"""The :math:`N \times N` matrix :math:`(U \otimes I)X(U \otimes I)^T + E(Z)` of a reduced vector."""
    m = as_moments(x)
    lay = ClassLayout(m, grouping)
    X, Z = lay.split(np.asarray(v, dtype=np.float64))
    K, L1 = m.K, lay.L1
    cls = client_index(m, lay)
    S = X[cls[:, None], cls[None, :]].copy()               # (N_b, N_b, D, D)
    ks = np.arange(K)
    for ell in range(L1):
        for lp in range(L1):
            S[1 + ell * K + ks, 1 + lp * K + ks] += Z[grouping.labels, ell, lp]
    return S.transpose(0, 2, 1, 3).reshape(m.N, m.N)


def compress_classes(x, C: np.ndarray, grouping: Grouping) -> np.ndarray:
    r"""The reduced vector of an :math:`N \times N` matrix invariant under the classes (read from representatives)."""
    m = as_moments(x)
    lay = ClassLayout(m, grouping)
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
