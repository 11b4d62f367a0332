r"""Exchangeable client groups with white features: the state reduced to per-group self and cross blocks.

Clients that share :math:`(p_k, R_k = v_kI, \sigma^2_{\eta,k})` are exchangeable: every operator of the white
reduction (:mod:`theory.msd.white`, one :math:`N_b \times N_b` problem per component) commutes with the
permutations of the clients inside a class (applied to all delays at once). A matrix :math:`S` invariant under
them is

.. math:: S = U X U^T + E(Z), \qquad E(Z)_{(l,k),(l',k')} = \delta_{kk'} [Z_{c(k)}]_{ll'},

with :math:`U` the :math:`N_b \times (1 + (l_{\max}+1)C)` class indicator (server block kept), :math:`X` the
cross blocks (any two clients of classes :math:`c, c'`, server included) and :math:`Z_c` the extra self block
of a client of class :math:`c`. Congruences :math:`S \mapsto TST^T` whose client part acts per client
(:math:`E[A]`, :math:`I - \mu R`, :math:`E[B]`) keep this form; the remaining terms of :math:`\mathcal F_c`
are scalar functionals placed on diagonal entries. The reduced operator has
:math:`(1 + (l_{\max}+1)C)^2 + C(l_{\max}+1)^2` unknowns (2509 at the paper's scale, four classes): no
:math:`K`, no :math:`D`.

* MSD: the noise and hence :math:`C_\infty` are invariant, so (S2) is solved on the reduced space (dense LU).
* :math:`\rho(\mathcal F)`: the invariant subspace alone may miss the non-trivial isotypic components of the
  client permutation group. Splitting two clients of every class off as singletons gives a subgroup :math:`H`
  whose fixed space meets every irreducible component that occurs in :math:`\mathbb R^{N_b \times N_b}`
  (trivial, standard, :math:`(n-2,2)`, :math:`(n-2,1,1)` of one class, standard :math:`\otimes` standard of
  two; each has an :math:`S_{n-2}`- resp. :math:`S_{n-1}`-fixed vector), so
  :math:`\rho(\mathcal F_c) = \rho(\mathcal F_c|_{\mathrm{Fix}(H)})`: the refined grouping, still
  independent of :math:`K`.

References
----------
.. [1] docs/papers/paofed.md#mean-square, docs/papers/paofed.md#structured (F_exact, (S2)); theory.msd.white (the white
       components).
.. [2] seed 004_180cd372987d137b.txt, Ch. (4.26)-(4.34) lines 1016-1072.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, lu_factor, lu_solve
from threadpoolctl import threadpool_limits

from theory.msd.expectations import AnalysisMoments, analysis_moments
from theory.msd.krylov import generic_start, top_eigenpair
from theory.msd.structured import MODELS
from theory.msd.white import WhiteComponent, is_white, krylov_solve, white_components

__all__ = [
    "Grouping",
    "GroupedSteadyState",
    "apply_F_grouped",
    "client_grouping",
    "compress_grouped",
    "expand_grouped",
    "grouped_msd_steady_state",
    "grouped_psd_margin",
    "grouped_spectral_radius",
    "grouping_from_labels",
    "refined_grouping",
    "split_class_pairs",
]

#: Reduced problems up to this many unknowns are solved by dense LU, larger ones by GMRES.
DENSE_MAX = 4000


def _as_moments(x) -> AnalysisMoments:
    return x if isinstance(x, AnalysisMoments) else analysis_moments(x)


def _check(model: str) -> None:
    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}, got {model!r}")


@dataclass(frozen=True)
class Grouping:
    r"""A partition of the clients into classes: ``labels[k]`` is the class of client ``k``, ``sizes[c]`` its count."""

    labels: np.ndarray
    sizes: np.ndarray

    @property
    def C(self) -> int:
        """Number of classes."""
        return int(self.sizes.size)


def grouping_from_labels(labels) -> Grouping:
    """The :class:`Grouping` of integer class labels (one per client; classes renumbered 0..C-1)."""
    labels = np.asarray(labels, dtype=np.int64)
    _, labels = np.unique(labels, return_inverse=True)   # classes numbered by first appearance order of value
    sizes = np.bincount(labels)
    labels.setflags(write=False)
    sizes.setflags(write=False)
    return Grouping(labels, sizes)


def client_grouping(x) -> Grouping:
    r"""Classes of exchangeable clients: equal :math:`(p_k, v_k, \sigma^2_{\eta,k})` (exact equality).

    Raises
    ------
    ValueError
        If R is not white, or the staleness moments are not invariant under the classes (they are whenever
        the classes share :math:`p_k`: :func:`theory.msd.expectations.beta_moments` is exchangeable).

    Examples
    --------
    >>> import numpy as np
    >>> from theory.msd.instance import PAOFedInstance
    >>> inst = PAOFedInstance(K=4, D=2, l_max=1, m=1, selection="subset", p=np.array([0.5, 0.9, 0.5, 0.9]),
    ...                       delta=0.3, alpha=np.array([1.0, 0.5]), sigma2_eta=np.full(4, 0.01),
    ...                       R=np.stack([np.eye(2)] * 4), w_star=np.ones(2), mu=0.1)
    >>> client_grouping(inst).labels.tolist()
    [0, 1, 0, 1]
    """
    m = _as_moments(x)
    if not is_white(m):
        raise ValueError("R must be white (every R_k a multiple v_k I of the identity) for the grouped reduction")
    keys = np.stack([m.p, m.R[:, 0, 0], m.sigma2_eta], axis=1)
    _, labels = np.unique(keys, axis=0, return_inverse=True)
    g = grouping_from_labels(labels.ravel())
    perm_ok = all(np.array_equal(m.beta_bar[k], m.beta_bar[_first(g, g.labels[k])]) for k in range(m.K))
    if not perm_ok or not _second_invariant(m, g):
        raise ValueError("beta moments are not invariant under the client classes (unequal delay laws?)")
    return g


def _first(g: Grouping, c: int) -> int:
    return int(np.flatnonzero(g.labels == c)[0])


def _second_invariant(m: AnalysisMoments, g: Grouping) -> bool:
    cx, cs = split_class_pairs(m.beta_second, g)
    full = cx[:, g.labels][:, :, g.labels] + np.eye(m.K)[None] * cs[:, g.labels][:, None, :]
    scale = max(1.0, float(np.max(np.abs(m.beta_second))))
    return bool(np.max(np.abs(full - m.beta_second)) <= 64 * np.finfo(float).eps * scale)


def split_class_pairs(P: np.ndarray, g: Grouping) -> tuple[np.ndarray, np.ndarray]:
    """P[l, k, k'] = cx[l, c, c'] + delta_kk' cs[l, c] read from representatives (cx[l, c, c] = 0 for singletons)."""
    reps = [np.flatnonzero(g.labels == c) for c in range(g.C)]
    first = np.array([r[0] for r in reps])
    second = np.array([r[1] if r.size > 1 else r[0] for r in reps])
    cx = P[:, first][:, :, first].copy()
    diag = P[:, first, first]
    same = P[:, first, second]
    single = g.sizes == 1
    same = np.where(single[None, :], 0.0, same)
    idx = np.arange(g.C)
    cx[:, idx, idx] = same
    return cx, diag - same


def refined_grouping(g: Grouping) -> Grouping:
    r"""Split two clients of every class off as singletons (the subgroup whose fixed space sees every component)."""
    labels = np.array(g.labels, dtype=np.int64) * 3
    for c in range(g.C):
        members = np.flatnonzero(g.labels == c)
        labels[members[:1]] += 1
        labels[members[1:2]] += 2
    return grouping_from_labels(labels)


class _Layout:
    """Index bookkeeping of the reduced state for one grouping."""

    def __init__(self, m: AnalysisMoments, g: Grouping):
        self.g = g
        self.C = g.C
        self.L1 = m.l_max + 1
        self.nE = 1 + self.L1 * self.C
        self.n = self.nE ** 2 + self.C * self.L1 ** 2
        self.sizes = g.sizes.astype(np.float64)
        self.single = g.sizes == 1
        first = np.array([_first(g, c) for c in range(g.C)])
        self.first = first
        self.loc = 1 + np.arange(self.C)                     # E indices of (l = 0, c)
        # per-class coefficients, computed once (an apply is then O(nE^3) with no K-sized work)
        self.p_m = m.p_m
        self.p = m.p[first]
        self.c = self.p * m.p_m
        self.v = m.R[first, 0, 0]
        self.bw = m.p_m * m.beta_bar[first].T                # B's server-row weights w[l, c]
        self.s = float(np.sum(self.bw * self.sizes[None, :]))
        self.shift = np.tile(np.eye(self.L1, k=-1), (self.C, 1, 1))
        self.shift[:, 0, 0] = 1.0
        cov = m.beta_second - np.einsum("kl,jl->lkj", m.beta_bar, m.beta_bar)
        self.cx, self.cs = split_class_pairs(cov, g)
        self.bsd = np.einsum("lkk->lk", m.beta_second)[:, first]
        self.rs = self.cx @ self.sizes + self.cs             # (L1, C) row sums of cov per class

    def split(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v = np.asarray(v, dtype=np.float64)
        b = v.shape[:-1]
        X = v[..., :self.nE ** 2].reshape(*b, self.nE, self.nE)
        Z = v[..., self.nE ** 2:].reshape(*b, self.C, self.L1, self.L1)
        return X, Z

    def join(self, X: np.ndarray, Z: np.ndarray) -> np.ndarray:
        b = X.shape[:-2]
        return np.concatenate([X.reshape(*b, -1), Z.reshape(*b, -1)], axis=-1)

    def canonical(self, X: np.ndarray, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Fold the cross block of singleton classes into their self block (a unique representation)."""
        for c in np.flatnonzero(self.single):
            idx = 1 + np.arange(self.L1) * self.C + c
            Z[..., c, :, :] += X[..., idx[:, None], idx[None, :]]
            X[..., idx[:, None], idx[None, :]] = 0.0
        return X, Z

    def congruence(self, X, Z, T00: float, w: np.ndarray, t: np.ndarray, Tc: np.ndarray):
        r""":math:`TST^T` for :math:`T` with :math:`T_{00}`, row weights ``w[l, c]`` (per client), column ``t[l, c]``
        and per-client delay blocks ``Tc[c]``."""
        C, L1, nE = self.C, self.L1, self.nE
        Tr = np.zeros((nE, nE))
        Tr[0, 0] = T00
        Tr[0, 1:] = (w * self.sizes[None, :]).ravel()
        Tr[1:, 0] = t.ravel()
        li = np.arange(L1)
        for c in range(C):
            idx = 1 + li * C + c
            Tr[idx[:, None], idx[None, :]] = Tc[c]
        Xn = Tr @ X @ Tr.T
        Zn = Tc @ Z @ np.swapaxes(Tc, -1, -2)
        wc = w.T                                             # (C, L1)
        row = np.einsum("cl,...clm,cpm->...cp", wc, Z, Tc)    # (T_c Z_c^T w_c)[p]
        col = np.einsum("cpl,...clm,cm->...cp", Tc, Z, wc)    # (T_c Z_c w_c)[p]
        Xn[..., 0, 1:] += np.swapaxes(row, -1, -2).reshape(*row.shape[:-2], -1)
        Xn[..., 1:, 0] += np.swapaxes(col, -1, -2).reshape(*col.shape[:-2], -1)
        Xn[..., 0, 0] += np.einsum("c,cl,...clm,cm->...", self.sizes, wc, Z, wc)
        return Xn, Zn


def _apply_B(lay: _Layout, X, Z, pi: float):
    C, L1 = lay.C, lay.L1
    n = lay.sizes
    p_m = lay.p_m
    # the (0, 0) correction from Y (before the shift)
    corr = 0.0
    for ell in range(L1):
        idx = 1 + ell * C + np.arange(C)
        Xll = X[..., idx[:, None], idx[None, :]]
        Xd = np.diagonal(Xll, axis1=-2, axis2=-1)
        Zd = Z[..., :, ell, ell]
        cx, cs, rs = lay.cx[ell], lay.cs[ell], lay.rs[ell]
        hat = (((n[:, None] * cx * n[None, :]) * Xll).sum((-2, -1)) + (Xd * (n * cs)).sum(-1)
               + (Zd * (n * (np.diagonal(cx) + cs))).sum(-1)
               - (X[..., idx, 0] * (n * rs)).sum(-1) - (X[..., 0, idx] * (n * rs)).sum(-1)
               + float(n @ rs) * X[..., 0, 0])
        diag_hat = Xd + Zd - X[..., idx, 0] - X[..., 0, idx] + X[..., 0, 0][..., None]
        corr = corr + p_m ** 2 * hat + (pi - p_m ** 2) * (diag_hat * (n * lay.bsd[ell])).sum(-1)
    Xn, Zn = lay.congruence(X, Z, 1.0 - lay.s, lay.bw, np.zeros((L1, C)), lay.shift)
    Xn[..., 0, 0] += corr
    return Xn, Zn


def _apply(lay: _Layout, comp: WhiteComponent, v: np.ndarray, model: str, mu: float):
    C, L1 = lay.C, lay.L1
    X, Z = lay.split(v)
    loc = lay.loc
    # A: rows/columns of the local blocks mix with the server block; diagonal correction from delta_k(S)
    delta = (X[..., 0, 0][..., None] - X[..., 0, loc] - X[..., loc, 0] + X[..., loc, loc] + Z[..., :, 0, 0])
    t = np.zeros((L1, C))
    t[0] = lay.c
    Tc = np.tile(np.eye(L1), (C, 1, 1))
    Tc[:, 0, 0] = 1.0 - lay.c
    X1, Z1 = lay.congruence(X, Z, 1.0, np.zeros((L1, C)), t, Tc)
    Z1[..., :, 0, 0] += (lay.p * comp.pi - lay.c ** 2) * delta
    # R_mu: (I - mu R) congruence (exact) or minus mu^2 R X R (seed); Gaussian diagonal factor
    mv = mu * lay.v
    Tc = np.tile(np.eye(L1), (C, 1, 1))
    Tc[:, 0, 0] = 1.0 - mv
    zero = np.zeros((L1, C))
    X2, Z2 = lay.congruence(X1, Z1, 1.0, zero, zero, Tc)
    if model == "exact":
        xkk = X1[..., loc, loc] + Z1[..., :, 0, 0]
        Z2[..., :, 0, 0] += (comp.gauss - 1.0) * mv ** 2 * xkk
    else:
        Dc = np.zeros((C, L1, L1))
        Dc[:, 0, 0] = mv
        X3, Z3 = lay.congruence(X1, Z1, 0.0, zero, zero, Dc)
        X2, Z2 = X2 - X3, Z2 - Z3
    X4, Z4 = _apply_B(lay, X2, Z2, comp.pi)
    return lay.join(*lay.canonical(X4, Z4))


def apply_F_grouped(x, comp: WhiteComponent, v: np.ndarray, grouping: Grouping, model: str = "seed",
                    mu: float | None = None) -> np.ndarray:
    r""":math:`\mathcal F_c` on reduced vectors ``v`` (last axis; any leading batch axes), see the module.

    Equal to :func:`theory.msd.white.apply_F_component` on :func:`expand_grouped` of ``v``.
    """
    m = _as_moments(x)
    _check(model)
    mu = m.mu if mu is None else float(mu)
    lay = _Layout(m, grouping)
    v = np.asarray(v, dtype=np.float64)
    if v.shape[-1] != lay.n:
        raise ValueError(f"v must have last axis {lay.n} (the reduced size), got shape {v.shape}")
    with threadpool_limits(1):
        return _apply(lay, comp, v, model, mu)


def expand_grouped(x, v: np.ndarray, grouping: Grouping) -> np.ndarray:
    r"""The :math:`N_b \times N_b` matrix :math:`UXU^T + E(Z)` of a reduced vector."""
    m = _as_moments(x)
    lay = _Layout(m, grouping)
    X, Z = lay.split(v)
    K, C, L1 = m.K, lay.C, lay.L1
    cls = np.concatenate([[0], 1 + (np.arange(L1)[:, None] * C + grouping.labels[None, :]).ravel()])
    S = X[cls[:, None], cls[None, :]].copy()
    for ell in range(L1):
        for lp in range(L1):
            ks = np.arange(K)
            S[1 + ell * K + ks, 1 + lp * K + ks] += Z[grouping.labels, ell, lp]
    return S


def compress_grouped(x, S: np.ndarray, grouping: Grouping) -> np.ndarray:
    r"""The reduced vector of an :math:`N_b \times N_b` matrix invariant under the classes (read from
    representatives)."""
    m = _as_moments(x)
    lay = _Layout(m, grouping)
    K, C, L1 = m.K, lay.C, lay.L1
    g = grouping
    reps = [np.flatnonzero(g.labels == c) for c in range(C)]
    a = np.array([r[0] for r in reps])
    b = np.array([r[1] if r.size > 1 else r[0] for r in reps])
    ia = np.concatenate([[0], 1 + (np.arange(L1)[:, None] * K + a[None, :]).ravel()])
    ib = np.concatenate([[0], 1 + (np.arange(L1)[:, None] * K + b[None, :]).ravel()])
    X = S[ia[:, None], ib[None, :]].copy()
    Z = np.empty((C, L1, L1))
    for c in range(C):
        rows = 1 + np.arange(L1) * K + a[c]
        own = 1 + np.arange(L1) * C + c
        Z[c] = S[rows[:, None], rows[None, :]] - X[own[:, None], own[None, :]]
    return lay.join(*lay.canonical(X, Z))


@dataclass(frozen=True)
class GroupedSteadyState:
    r"""(S2) on the grouped reduction of the identity component: :math:`C_\infty = S \otimes I_D`.

    Attributes
    ----------
    msd : float
        :math:`D\,S_{00}`.
    state : array
        The reduced vector of :math:`S` (see :func:`expand_grouped`).
    residual : float
        Relative residual of the reduced (S2) (equal to that of the full (S2) up to the class weights).
    method : str
    unknowns : int
    """

    msd: float
    state: np.ndarray
    residual: float
    method: str
    unknowns: int


def grouped_msd_steady_state(x, model: str = "seed", *, grouping: Grouping | None = None, mu: float | None = None,
                             rtol: float = 1e-12, maxiter: int = 5000, progress=None) -> GroupedSteadyState:
    r"""Steady-state MSD of either model for white R with exchangeable classes (identity component, reduced).

    Dense LU of the explicit reduced operator up to :data:`DENSE_MAX` unknowns, else capped GMRES. The solve does
    not decide stability (LU solves (S2) for any :math:`\mu` with :math:`1 \notin \mathrm{spec}\,\mathcal F`):
    :func:`theory.msd.routes.mean_square_analysis` certifies :math:`\rho(\mathcal F) < 1` first.

    Raises
    ------
    ValueError
        If R is not white, or the residual stays above ``10 rtol`` (e.g. :math:`\rho(\mathcal F) \ge 1`).
    """
    m = _as_moments(x)
    _check(model)
    mu = m.mu if mu is None else float(mu)
    if not (math.isfinite(mu) and mu > 0):
        raise ValueError(f"mu must be a finite real > 0, got {mu!r}")
    g = client_grouping(m) if grouping is None else grouping
    lay = _Layout(m, g)
    comp = white_components(m, model)[0]
    X0 = np.zeros((lay.nE, lay.nE))
    Z0 = np.zeros((lay.C, lay.L1, lay.L1))
    v = m.R[lay.first, 0, 0]
    Z0[:, 0, 0] = m.sigma2_eta[lay.first] * (mu * v) * mu
    Q = lay.join(*lay.canonical(*_apply_B(lay, X0, Z0, comp.pi)))
    qnorm = float(np.linalg.norm(Q))
    if qnorm == 0.0:
        return GroupedSteadyState(0.0, np.zeros(lay.n), 0.0, "none", lay.n)

    def op(s):
        return s - _apply(lay, comp, s, model, mu)

    with threadpool_limits(1):  # small dense products: threaded BLAS only contends on a shared machine
        if lay.n <= DENSE_MAX:
            A = np.empty((lay.n, lay.n))
            for j in range(0, lay.n, 256):                        # columns op(e_j), in chunks (bounded memory)
                A[:, j:j + 256] = op(np.eye(lay.n)[j:j + 256]).T
            s = lu_solve(lu_factor(A, check_finite=False), Q, check_finite=False)
            method = "dense LU"
        else:
            s, its = krylov_solve(op, Q, rtol=rtol, method="gmres", maxiter=maxiter, restart=60, progress=progress)
            method = f"gmres ({its} iterations)"
        residual = float(np.linalg.norm(op(s) - Q) / qnorm)
    if not residual <= 10 * rtol:
        raise ValueError(f"grouped (S2) not solved: relative residual {residual:.3g} > 10 rtol = {10 * rtol:.3g} "
                         f"({method}; is rho(F) < 1 at mu = {mu!r}?)")
    return GroupedSteadyState(float(m.D * s[0]), s, residual, method, lay.n)


def grouped_spectral_radius(x, comp: WhiteComponent, model: str = "seed", *, grouping: Grouping | None = None,
                            mu: float | None = None, tol: float = 1e-10, ncv: int = 20, maxiter: int = 3000,
                            v0: np.ndarray | None = None, decide: float = 0.0) -> tuple[float, np.ndarray | None]:
    r""":math:`\rho(\mathcal F_c)` on the refined grouping (every isotypic component, see the module).

    Returns ``(rho, a real vector of the top eigenvector's invariant subspace)`` (for warm starts). Krylov-Schur
    (:func:`theory.msd.krylov.top_eigenpair`) capped at ``maxiter`` restarts, to Ritz residual ``tol`` or, with
    ``decide > 0``, ``decide`` :math:`|\rho - 1|` (enough for the side of 1); non-convergence raises ``ValueError``.
    """
    m = _as_moments(x)
    _check(model)
    mu = m.mu if mu is None else float(mu)
    g = refined_grouping(client_grouping(m) if grouping is None else grouping)
    lay = _Layout(m, g)
    n = lay.n
    start = np.ones(n) if v0 is None or v0.shape != (n,) or not np.all(np.isfinite(v0)) else v0
    # Krylov-Schur (theory.msd.krylov: a complex top pair is kept together in the real Schur form, and the Ritz pair is
    # accepted on its explicitly recomputed residual). Near a threshold the top of the seed model's spectrum can be
    # clustered: retry once with a 3x wider basis from a generic start, same tolerance and cap.
    tries = ((min(ncv, n - 1), start), (min(3 * ncv, n - 1), generic_start(n)))
    what = f"rho(F_{model}) of the grouped component {comp.name} at mu = {mu!r}"
    for attempt, (width, v_start) in enumerate(tries):
        try:
            with threadpool_limits(1):
                res = top_eigenpair(lambda s: _apply(lay, comp, s, model, mu), n, v_start, tol=tol, ncv=width,
                                    maxiter=maxiter, what=what, decide=decide)
            break
        except ValueError:
            if attempt == len(tries) - 1:
                raise
    return float(abs(res.value)), res.vector


def grouped_psd_margin(x, state: np.ndarray, grouping: Grouping) -> float | None:
    r"""Smallest :math:`\epsilon \in \{10^{-14}, \dots, 10^{-6}\}` with :math:`S + \epsilon\max_i|S_{ii}|I \succ 0`
    for :math:`S` = :func:`expand_grouped` of ``state``, from the reduced pieces: :math:`S` restricted to the
    orthonormal basis :math:`UN^{-1/2}` of the class sums (:math:`N^{1/2}XN^{1/2} + \mathrm{blockdiag}(Z_c)`) and
    to the within-class zero-sum vectors (:math:`Z_c`, classes of two or more). None if none is."""
    m = _as_moments(x)
    lay = _Layout(m, grouping)
    X, Z = lay.split(state)
    X = 0.5 * (X + X.T)
    Z = 0.5 * (Z + np.swapaxes(Z, 1, 2))
    nsq = np.sqrt(np.concatenate([[1.0], np.tile(lay.sizes, lay.L1)]))
    M = nsq[:, None] * X * nsq[None, :]
    li = np.arange(lay.L1)
    for c in range(lay.C):
        idx = 1 + li * lay.C + c
        M[idx[:, None], idx[None, :]] += Z[c]
    pieces = [M] + [Z[c] for c in range(lay.C) if lay.sizes[c] > 1]
    diag = np.concatenate([[X[0, 0]], (np.diagonal(X)[1:].reshape(lay.L1, lay.C).T
                                       + np.diagonal(Z, axis1=1, axis2=2)).ravel()])
    scale = float(np.max(np.abs(diag)))
    if scale == 0.0:
        return None
    for eps in (1e-14, 1e-12, 1e-10, 1e-8, 1e-6):
        try:
            for P in pieces:
                cho_factor(P + eps * scale * np.eye(P.shape[0]), check_finite=False)
            return eps
        except np.linalg.LinAlgError:
            continue
    return None
