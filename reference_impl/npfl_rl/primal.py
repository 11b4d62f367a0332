r"""The primal map of one NPFL iteration (spec 3-4): the corrected closed form (6.11) in the eigenbasis of
:math:`H_k`, the validation value :math:`V_v` (6.12) and :math:`\frac{d}{da}V_v(P(a))`, batched over runs and clients.

.. math::

    P_k(a) = (H_k + (c_k + \omega_k a) I)^{-1}(b_k + a m_k + s_k), \qquad
    c_k = \lambda/|C_{(q)}| + \rho|N_k\cap C_{(q)}|

(corrected, D3; ``diagonal="printed"`` uses :math:`\rho|N_k|`).

References
----------
.. [1] seed 004_180cd372987d137b.txt, thesis Chapter 6, eqs. (6.5)-(6.14), Algorithm 6, lines 1637-1722;
   Publication 7, eqs. (5)-(14), Algorithm 1, lines 3489-3562.
.. [2] shared/spec/npfl_rl.md 3-6 and 9 (errata D1-D4, D11-D14) and its Review notes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reference_impl.npfl_rl.config import NPFLConfig
from reference_impl.npfl_rl.data import NPFLProblem

__all__ = ["Structure", "build_structure", "primal_at", "solve_shifted", "validation_value", "value_derivative"]


@dataclass(frozen=True)
class Structure:
    """Per-run arrays of a batch of instances (leading axis R)."""

    U: np.ndarray        # (R, K, d, d) eigenvectors of H_k
    Lam: np.ndarray      # (R, K, d) eigenvalues of H_k
    b: np.ndarray        # (R, K, d)
    A_in: np.ndarray     # (R, K, K) consensus neighbours (same cluster; all for NFL)
    deg_in: np.ndarray   # (R, K)
    B: np.ndarray        # (R, K, K) inter-cluster averaging, m = B w
    omega: np.ndarray    # (R, K)
    lam_k: np.ndarray    # (R, K) lambda/|C_q| (lambda/K for NFL)
    c: np.ndarray        # (R, K)
    Hv: np.ndarray
    bv: np.ndarray
    cv: np.ndarray


def build_structure(problems: tuple[NPFLProblem, ...], config: NPFLConfig) -> Structure:
    K, d = problems[0].K, problems[0].d
    for p in problems:
        if (p.K, p.d) != (K, d):
            raise ValueError(f"problems must share K and d to be stacked, got {(p.K, p.d)} and {(K, d)}")
    nfl = config.algorithm == "nfl"
    A_in, B, omega, lam_k, deg_all = [], [], [], [], []
    for p in problems:  # once per run, before the iterations
        if nfl:
            A_in.append(p.adjacency.astype(np.float64))
            B.append(np.zeros((K, K)))
            omega.append(np.zeros(K))
            lam_k.append(np.full(K, p.lam / K))
        else:
            A_in.append(p.same_cluster_adjacency.astype(np.float64))
            om, Bm = p.inter_cluster_weights(config.convention)
            B.append(Bm)
            omega.append(om.sum(axis=1))
            lam_k.append(p.lam / p.cluster_sizes)
        deg_all.append(p.adjacency.sum(axis=1))
    A_in, B, omega, lam_k = (np.stack(v) for v in (A_in, B, omega, lam_k))
    deg_in = A_in.sum(axis=-1)
    deg_diag = np.stack(deg_all).astype(np.float64) if config.diagonal == "printed" else deg_in
    H = np.stack([p.H for p in problems])
    Lam, U = np.linalg.eigh(H)
    Lam = np.maximum(Lam, 0.0)  # H_k is PSD; eigh rounding can give -1e-17
    stack = lambda name: np.stack([getattr(p, name) for p in problems])
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


def value_derivative(S: Structure, m, s, a):
    """d/da V_v(P(a)) (spec 4) and P(a)."""
    P = primal_at(S, m, s, a)
    grad = 2.0 * np.einsum("rkij,rkj->rki", S.Hv, P) - 2.0 * S.bv + 2.0 * S.lam_k[..., None] * P
    dP = solve_shifted(S, S.c + S.omega * a, m - S.omega[..., None] * P)
    return np.einsum("rki,rki->rk", grad, dP), P
