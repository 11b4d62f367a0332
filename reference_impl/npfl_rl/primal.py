r"""The primal map of one NPFL iteration: the corrected closed form (6.11) in the eigenbasis of
:math:`H_k`, the validation value :math:`V_v` (6.12) and :math:`\frac{d}{da}V_v(P(a))`, batched over runs and clients.

.. math::

    P_k(a) = (H_k + (c_k + \omega_k a) I)^{-1}(b_k + a m_k + s_k), \qquad
    c_k = \lambda/|C_{(q)}| + \rho|N_k\cap C_{(q)}|

(corrected, erratum D3 (docs/papers/npfl_rl.md#erratum-d3); ``diagonal="printed"`` uses :math:`\rho|N_k|`).

References
----------
.. [1] seed 004_180cd372987d137b.txt, thesis Chapter 6, eqs. (6.5)-(6.14), Algorithm 6, lines 1637-1722;
   Publication 7, eqs. (5)-(14), Algorithm 1, lines 3489-3562.
.. [2] docs/papers/npfl_rl.md: the algorithm as fedcheck runs it, errata D1-D4 (docs/papers/npfl_rl.md#erratum-d1 to
       #erratum-d4) and errata D11-D14 (docs/papers/npfl_rl.md#erratum-d11 to #erratum-d14), readings C-npfl-1..9.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from reference_impl.npfl_rl.config import NPFLConfig
from reference_impl.npfl_rl.data import NPFLProblem

__all__ = ["Structure", "build_structure", "graph_product", "primal_at", "solve_shifted", "validation_value",
           "value_derivative"]


@dataclass(frozen=True)
class Structure:
    """Per-run arrays of a batch of R instances of K clients (leading axis R).

    The graph operators are block diagonal over the runs, (R K, R K) ``scipy.sparse.csr_array`` of float64 with one
    stored entry per directed edge they use: time and memory linear in the edges (:func:`graph_product`).
    """

    U: np.ndarray        # (R, K, d, d) eigenvectors of H_k
    Lam: np.ndarray      # (R, K, d) eigenvalues of H_k
    b: np.ndarray        # (R, K, d)
    A_in: sp.csr_array   # (R K, R K) consensus neighbours (same cluster; all for NFL), entries 1
    deg_in: np.ndarray   # (R, K)
    B: sp.csr_array      # (R K, R K) inter-cluster averaging, m = B w
    omega: np.ndarray    # (R, K)
    lam_k: np.ndarray    # (R, K) lambda/|C_q| (lambda/K for NFL)
    c: np.ndarray        # (R, K)
    Hv: np.ndarray
    bv: np.ndarray
    cv: np.ndarray


def _block_diagonal(blocks, K: int) -> sp.csr_array:
    """The (R K, R K) block-diagonal float64 CSR of R canonical (K, K) sparse blocks (no dense block is formed)."""
    R = len(blocks)
    data = np.concatenate([np.asarray(blk.data, dtype=np.float64) for blk in blocks])
    indices = np.concatenate([blk.indices.astype(np.int64) + r * K for r, blk in enumerate(blocks)])
    indptr = np.zeros(R * K + 1, dtype=np.int64)
    np.cumsum(np.concatenate([np.diff(blk.indptr) for blk in blocks]), out=indptr[1:])
    M = sp.csr_array((data, indices, indptr), shape=(R * K, R * K))
    M.has_sorted_indices = True
    return M


def graph_product(M: sp.csr_array, w: np.ndarray) -> np.ndarray:
    r"""Apply a block-diagonal graph operator of :class:`Structure` (``A_in`` or ``B``, (R K, R K)) to ``w`` (R, K, d).

    One sparse product on the (R K, d) view of ``w``: :math:`(Mw)_k = \sum_{l} M_{kl} w_l` over the stored entries
    only (work proportional to the stored entries times d; a client with no entry in its row gets 0).

    >>> A = _block_diagonal([sp.csr_array(np.array([[0.0, 1.0], [1.0, 0.0]]))] * 2, 2)
    >>> graph_product(A, np.arange(8.0).reshape(2, 2, 2)).tolist()
    [[[2.0, 3.0], [0.0, 1.0]], [[6.0, 7.0], [4.0, 5.0]]]
    """
    R, K, d = w.shape
    return (M @ np.reshape(w, (R * K, d))).reshape(R, K, d)


def build_structure(problems: tuple[NPFLProblem, ...], config: NPFLConfig) -> Structure:
    r"""The per-run arrays of ``problems`` (same K and d) under ``config``: eigendecompositions of :math:`H_k`, the
    shifts :math:`c_k`, :math:`\omega_k`, and the sparse block-diagonal graph operators (time and memory linear in
    K d^2 and the edges)."""
    K, d = problems[0].K, problems[0].d
    for p in problems:
        if (p.K, p.d) != (K, d):
            raise ValueError(f"problems must share K and d to be stacked, got {(p.K, p.d)} and {(K, d)}")
    nfl = config.algorithm == "nfl"
    A_in, B, omega, lam_k, deg_all = [], [], [], [], []
    for p in problems:  # once per run, before the iterations
        if nfl:
            A_in.append(p.graph)
            B.append(sp.csr_array((K, K), dtype=np.float64))
            omega.append(np.zeros(K))
            lam_k.append(np.full(K, p.lam / K))
        else:
            A_in.append(p.same_cluster_graph)
            om, Bm = p.inter_cluster_weights(config.convention)
            B.append(Bm)
            omega.append(om.sum(axis=1))
            lam_k.append(p.lam / p.cluster_sizes)
        deg_all.append(p.degrees)
    deg_in = np.stack([np.diff(a.indptr) for a in A_in]).astype(np.float64)
    A_in, B = _block_diagonal(A_in, K), _block_diagonal(B, K)
    omega, lam_k = np.stack(omega), np.stack(lam_k)
    deg_diag = np.stack(deg_all).astype(np.float64) if config.diagonal == "printed" else deg_in
    # H_k is PSD; eigh rounding can give -1e-17, clipped at 0 (NPFLProblem.H_eigen, once per instance)
    Lam = np.stack([p.H_eigen[0] for p in problems])
    U = np.stack([p.H_eigen[1] for p in problems])

    def stack(name):
        return np.stack([getattr(p, name) for p in problems])

    return Structure(U=U, Lam=Lam, b=stack("b"), A_in=A_in, deg_in=deg_in, B=B, omega=omega, lam_k=lam_k,
                      c=lam_k + config.rho * deg_diag, Hv=stack("Hv"), bv=stack("bv"), cv=stack("cv"))


def solve_shifted(S: Structure, shift, v):
    """(H + shift I)^{-1} v in the eigenbasis: shift (R, K), v (R, K, d)."""
    coef = np.einsum("rkij,rki->rkj", S.U, v) / (S.Lam + shift[..., None])
    return np.einsum("rkij,rkj->rki", S.U, coef)


def primal_at(S: Structure, m, s, a):
    return solve_shifted(S, S.c + S.omega * a, S.b + a[..., None] * m + s)


def validation_value(S: Structure, w):
    quad = np.einsum("rki,rkij,rkj->rk", w, S.Hv, w)
    return quad - 2.0 * np.einsum("rki,rki->rk", S.bv, w) + S.cv + S.lam_k * np.einsum("rki,rki->rk", w, w)


def value_derivative(S: Structure, m, s, a, *, P=None):
    """d/da V_v(P(a)) and P(a) (``P``: P(a) if already computed, from :func:`primal_at`)."""
    P = primal_at(S, m, s, a) if P is None else P
    grad = 2.0 * np.einsum("rkij,rkj->rki", S.Hv, P) - 2.0 * S.bv + 2.0 * S.lam_k[..., None] * P
    dP = solve_shifted(S, S.c + S.omega * a, m - S.omega[..., None] * P)
    return np.einsum("rki,rki->rk", grad, dP), P
