"""Instances of the GTV checks, rebuilt deterministically from small parameter dicts (counterexamples reproduce)."""

from __future__ import annotations

import functools

import numpy as np

from reference_impl.gtv.data import chain_instance, dense_clusters_instance, sbm_instance
from theory.gtv import GTVInstance, cluster_constants

__all__ = ["chain_case", "convergence_case", "well_connected_case"]


def convergence_case(p: dict) -> GTVInstance:
    """docs/papers/gtv.md#instances, docs/papers/gtv.md#convergence: SBM 2 x ``size`` nodes, p_in 0.6, p_out 0.1, d = 4,
    m in {2, 6}, weights U[0.3, 2], noise 0.1."""
    rng = np.random.default_rng(p["seed"])
    d = p.get("d", 4)
    Q = None
    if p["penalty"] == "quad":
        B = rng.normal(size=(d, 2))
        Q = B @ B.T
    inst, _ = sbm_instance(rng, sizes=(p.get("size", 6),) * 2, p_in=0.6, p_out=0.1, d=d, m=p["m"], noise=0.1,
                           lam=p["lam"], penalty=p["penalty"], Q=Q, weights=(0.3, 2.0))
    if p.get("loss", "squared") == "logistic":
        inst = inst.with_(loss="logistic", y=np.where(inst.y > 0, 1.0, -1.0) * inst.row_mask, gamma=0.01)
    return inst


def well_connected_case(p: dict) -> GTVInstance:
    r"""Dense clusters :math:`K_N` with a light boundary, built to satisfy (35) (unless ``eps``/``lam`` are given).

    With :math:`b_i` the demands of (35): λ = ``lam_factor`` · 3 max δ (so δ/λ <= 1/3) and
    ε = κ (2/3) / max_i(n_out_i + β_i n_C/α_c) (n_out, n_C: boundary edge counts), so :math:`b_i < 2κ/3 + 1/3 < 1`;
    in :math:`K_N` every non-empty :math:`A \subseteq C\setminus\{i_0\}` has cut
    :math:`|A|(N-|A|) \ge |A| > \sum_A b_i`.
    """
    rng = np.random.default_rng(p["seed"])
    inst, _ = dense_clusters_instance(rng, N=p["N"], k=p["k"], d=p["d"], m=p["m"], noise=p["noise"],
                                      n_inter=p["n_inter"], eps=1.0, lam=1.0, penalty=p.get("penalty", "l2"))
    c = inst.clusters
    cross = c[inst.edges[:, 0]] != c[inst.edges[:, 1]]
    if "eps" in p:
        eps = p["eps"]
    else:
        k1 = cluster_constants(inst)                        # eps = 1: boundary = edge counts
        per_node = k1.out_degree + k1.beta * k1.boundary[c] / k1.alpha[c]
        eps = p["kappa"] * (2.0 / 3.0) / per_node.max()
    A = np.where(cross, eps, 1.0)
    inst = inst.with_(A=A)
    if "lam" in p:
        lam = p["lam"]
    else:
        delta = cluster_constants(inst).delta.max()
        lam = p["lam_factor"] * 3.0 * delta if delta > 0 else p["lam_factor"] * 0.1
    return inst.with_(lam=lam)


@functools.lru_cache(maxsize=64)
def _chain(n: int, m: int, eps: float, lam: float, seed: int) -> GTVInstance:
    rng = np.random.default_rng(seed)
    inst, _ = chain_instance(rng, n=n, eps=eps, d=1, m=m, noise=0.0, rho=1.0, lam=lam,
                             w_bar=np.array([[0.0], [1.0]]) + rng.normal(size=(2, 1)) * 0.1)
    return inst


def chain_case(p: dict) -> GTVInstance:
    """docs/papers/gtv.md#instances chain recipe: d = 1, noiseless, 2 x n nodes, boundary edge ε, cluster means 0 and 1
    (+ jitter)."""
    return _chain(p["n"], p["m"], p["eps"], p["lam"], p["seed"])
