r"""Exhaustive enumeration of the random matrices :math:`A_{e,n}`, :math:`B_{e,n}` (the independent oracle).

Builds every outcome of (availability, downlink selection) per client and of (delivery indicator,
uplink selection) per (client, delay group) under hypotheses I4-I5 (docs/papers/paofed.md#assumption-i4 to
#assumption-i5) of docs/papers/paofed.md#assumptions, forms
:math:`A_e` and :math:`B_e` literally from their definitions (docs/papers/paofed.md#extended-state: P4 (16)-(17), (21)
with erratum E2 (docs/papers/paofed.md#erratum-e2) corrected) and averages :math:`A_e`, :math:`B_e`, :math:`A_e
\otimes_b A_e`, :math:`B_e \otimes_b B_e` and
:math:`A_eXA_e^T`, :math:`B_eYB_e^T` with the exact outcome probabilities. Exponential in K(l_max+1):
meant for K = 2, D = 3, l_max = 1 (docs/papers/paofed.md#expectations).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from theory.msd import PAOFedInstance, block_kron

__all__ = ["enumerate_moments", "selection_outcomes"]


def selection_outcomes(D: int, m: int, law: str) -> list[tuple[np.ndarray, float]]:
    """Every diagonal of a selection matrix with its probability, for the three laws
    of docs/papers/paofed.md#mean-square."""
    if law == "subset":
        subsets = list(itertools.combinations(range(D), m))
        out = []
        for s in subsets:
            v = np.zeros(D)
            v[list(s)] = 1.0
            out.append((v, 1.0 / len(subsets)))
        return out
    if law == "window":
        out = []
        for offset in range(D):
            v = np.zeros(D)
            v[[(offset + j) % D for j in range(m)]] = 1.0
            out.append((v, 1.0 / D))
        return out
    if law == "bernoulli":
        p = m / D
        return [(np.array(bits, dtype=float), math.prod(p if b else 1.0 - p for b in bits))
                for bits in itertools.product((0, 1), repeat=D)]
    raise ValueError(f"law must be subset, window or bernoulli, got {law!r}")


def _a_outcomes(inst: PAOFedInstance):
    """Per client: (a M diagonal, probability), a = 0 collapsing the selection."""
    sel = selection_outcomes(inst.D, inst.m, inst.selection)
    per_client = []
    for k in range(inst.K):
        pk = float(inst.p[k])
        per_client.append([(np.zeros(inst.D), 1.0 - pk)] + [(v, pk * pr) for v, pr in sel])
    return per_client


def _b_outcomes(inst: PAOFedInstance):
    """Per q = (l, k): (b, S diagonal, probability)."""
    sel = selection_outcomes(inst.D, inst.m, inst.selection)
    pi = inst.delay_pmf
    per_q = []
    for ell in range(inst.l_max + 1):
        for k in range(inst.K):
            r = float(inst.p[k] * pi[ell])
            per_q.append([(0, np.zeros(inst.D), 1.0 - r)] + [(1, v, r * pr) for v, pr in sel])
    return per_q


def _A_matrix(inst: PAOFedInstance, diags) -> np.ndarray:
    D, nb = inst.D, 1 + inst.K * (inst.l_max + 1)
    A = np.eye(nb * D)
    for k in range(1, inst.K + 1):
        u = np.diag(diags[k - 1])
        A[k * D:(k + 1) * D, :D] = u
        A[k * D:(k + 1) * D, k * D:(k + 1) * D] = np.eye(D) - u
    return A


def _B_matrix(inst: PAOFedInstance, outcome) -> np.ndarray:
    K, L, D = inst.K, inst.l_max, inst.D
    nb = 1 + K * (L + 1)
    B = np.zeros((nb * D, nb * D))
    server = np.eye(D)
    for ell in range(L + 1):
        group = outcome[ell * K:(ell + 1) * K]
        size = sum(b for b, _, _ in group)
        for k, (b, s, _) in enumerate(group, start=1):
            beta = inst.alpha[ell] * b / max(1, size)
            col = (ell * K + k) * D
            B[:D, col:col + D] = beta * np.diag(s)
            server -= beta * np.diag(s)
    B[:D, :D] = server
    for i in range(1, nb):  # block row i copies block src(i) (docs/papers/paofed.md#extended-state: locals stay, delay
    # group l takes l - 1)
        src = i if i <= K else i - K
        B[i * D:(i + 1) * D, src * D:(src + 1) * D] = np.eye(D)
    return B


def enumerate_moments(inst: PAOFedInstance, X: np.ndarray | None = None) -> dict[str, np.ndarray | int]:
    r"""Exact :math:`E[A_e]`, :math:`E[B_e]`, :math:`\mathcal Q_A`, :math:`\mathcal Q_B` (and :math:`E[A_eXA_e^T]`,
    :math:`E[B_eXB_e^T]` if ``X`` is given) by summing over all outcomes.

    Returns a dict with keys ``EA``, ``EB``, ``QA``, ``QB``, ``AXA``, ``BXB``, ``n_A``, ``n_B`` (outcome
    counts), ``prob_A``, ``prob_B`` (total probability, 1 up to rounding) and ``max_term`` (for each
    quantity the largest absolute entry of a summed outcome, which scales the rounding error of the sum).
    """
    D = inst.D
    N = (1 + inst.K * (inst.l_max + 1)) * D
    out: dict[str, np.ndarray | int] = {"EA": np.zeros((N, N)), "EB": np.zeros((N, N)),
                                        "QA": np.zeros((N * N, N * N)), "QB": np.zeros((N * N, N * N)),
                                        "AXA": np.zeros((N, N)), "BXB": np.zeros((N, N))}
    big = {key: 0.0 for key in ("EA", "EB", "QA", "QB", "AXA", "BXB")}

    def add(key, prob, term):
        out[key] += prob * term
        big[key] = max(big[key], float(np.max(np.abs(term))))

    n_a = 0
    total_a = 0.0
    for combo in itertools.product(*_a_outcomes(inst)):
        prob = math.prod(pr for _, pr in combo)
        if prob == 0.0:
            continue
        A = _A_matrix(inst, [v for v, _ in combo])
        add("EA", prob, A)
        add("QA", prob, block_kron(A, A, D))
        if X is not None:
            add("AXA", prob, A @ X @ A.T)
        n_a += 1
        total_a += prob
    n_b = 0
    total_b = 0.0
    for combo in itertools.product(*_b_outcomes(inst)):
        prob = math.prod(pr for _, _, pr in combo)
        if prob == 0.0:
            continue
        B = _B_matrix(inst, combo)
        add("EB", prob, B)
        add("QB", prob, block_kron(B, B, D))
        if X is not None:
            add("BXB", prob, B @ X @ B.T)
        n_b += 1
        total_b += prob
    out.update(n_A=n_a, n_B=n_b, prob_A=total_a, prob_B=total_b, max_term=big)
    return out
