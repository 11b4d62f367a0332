"""Algorithm 1 of "Clustered Federated Learning via Generalized Total Variation Minimization" on one instance, as
``fedcheck run gtv`` and the Python API run it (docs/papers/gtv.md).

The instance of a user's arrays (:func:`gtv_arrays_instance`) or of a synthetic graph with the data of the paper's
model (39) (:func:`gtv_synthetic_instance`), its logistic variant (:func:`as_logistic`) and the run's JSON document
(:func:`gtv_run_document`). Bad settings raise ``ValueError`` naming the argument of the record that refused them.
"""

from __future__ import annotations

import math

__all__ = ["as_logistic", "gtv_arrays_instance", "gtv_run_costs", "gtv_run_document", "gtv_synthetic_instance",
           "synthetic_graph_size"]


def synthetic_graph_size(generator: str, graph: dict) -> tuple[int, float]:
    """``(nodes, expected edges)`` of the synthetic graph :func:`gtv_synthetic_instance` draws, before it is drawn.

    ValueError names the setting of ``graph`` that leaves a node without an edge or is out of range: an SBM with
    ``p_in = p_out = 0``, a probability in (0, 1e-15) (networkx skips by log(1 - p), which is 0 there), ``weights``
    not ``[lo, hi]``, more ``n_inter`` than inter-cluster pairs, ``N < 2`` for the dense clusters.
    """
    g = graph
    if generator == "sbm":
        sizes = g["sizes"]
        if g["p_in"] == 0 and g["p_out"] == 0:
            raise ValueError("p_in: with p_in = p_out = 0 the SBM has no edge (Algorithm 1 needs every node on an "
                             "edge); give p_in > 0")
        for key in ("p_in", "p_out"):
            if 0 < g[key] < 1e-15:
                raise ValueError(f"{key} must be 0 or at least 1e-15 (below, 1 - p rounds to 1 in double precision), "
                                 f"got {g[key]!r}")
        w = g["weights"]
        if w is not None and not w[0] <= w[1]:
            raise ValueError(f"weights must be a list [lo, hi] of reals, 0 < lo <= hi, got {w}")
        n = sum(sizes)
        return n, sum(g["p_in"] * s * (s - 1) / 2 for s in sizes) + g["p_out"] * (n * n - sum(s * s for s in sizes)) / 2
    if generator == "chain":
        return 2 * g["n"], 2 * g["n"] - 1
    if generator == "dense":
        N, k = g["N"], g["k"]
        most = N * N * k * (k - 1) // 2
        n_inter = g["n_inter"] if k >= 2 else 0  # one cluster has no inter-cluster pairs: the default is moot
        if n_inter > most:
            raise ValueError(f"n_inter must be an integer in [0, N^2 k (k - 1) / 2 = {most}] (the inter-cluster "
                             f"pairs), got {g['n_inter']}")
        if N < 2:
            raise ValueError(f"N must be an integer >= 2 (a complete cluster needs an edge), got {N}")
        return N * k, k * N * (N - 1) / 2 + n_inter
    return max(max(e) for e in g["edges"]) + 1, len(g["edges"])


def gtv_run_costs(generator: str | None, graph: dict | None, *, n: int, edges: float, d: int, m: int,
                  iterations: int, element_work: float) -> dict:
    """``(memory, work)`` of each phase of a run before anything is drawn: ``graph`` and ``data`` (the SBM's from
    :func:`reference_impl.gtv.data.estimate_sbm_cost`, else ``element_work`` per node and edge of the graph and 10
    operations per data entry), ``solves`` (the per-node n x d^2 systems) and ``iterations`` (n m d + |E| d + n d^2
    each); ``edges`` the expected edges. ``generator`` None: a user's arrays (``n``, ``edges``, ``d``, ``m`` from
    them)."""
    out = {"edges": edges, "solves": (float(n) * d * d, float(n) * d ** 3),
           "iterations": (0.0, float(iterations) * (n * m * d + edges * d + n * d * d))}
    if generator == "sbm":
        from reference_impl.gtv.data import estimate_sbm_cost

        sbm = estimate_sbm_cost(graph["sizes"], graph["p_in"], graph["p_out"], d, m)
        alone = estimate_sbm_cost(graph["sizes"], graph["p_in"], graph["p_out"], 1, 1)  # the graph alone
        return dict(out, edges=sbm.expected_edges, graph=(alone.peak_elements, alone.work),
                    data=(sbm.peak_elements, max(sbm.work - alone.work, 0.0)))
    return dict(out, graph=(2.0 * edges + n, (edges + n) * element_work),
                data=(float(n) * m * d, float(n) * m * d * 10))


def gtv_arrays_instance(arrays: dict, *, loss: str, gamma: float | None, lam: float, penalty: str, Q=None):
    """The :class:`theory.gtv.GTVInstance` of the arrays ``X`` (n, m_max, d), ``y``, ``m``, ``edges``, ``A`` and
    optionally ``clusters`` of a user's ``.npz``."""
    from theory.gtv import GTVInstance

    a = arrays
    return GTVInstance(n=a["X"].shape[0], edges=a["edges"], A=a["A"], X=a["X"], y=a["y"], m=a["m"], loss=loss,
                       gamma=gamma or 0.0, clusters=a.get("clusters"), lam=lam, penalty=penalty, Q=Q)


def gtv_synthetic_instance(rng, generator: str, graph: dict, *, d: int, m: int, noise: float, rho: float | None,
                           lam: float, penalty: str, Q=None):
    """``(instance, w_true)`` on the synthetic graph ``generator`` ('sbm', 'chain', 'dense' or 'edges') with the
    settings ``graph`` (its fields: ``sizes``, ``p_in``, ``p_out``, ``weights``; ``n``, ``eps``; ``N``, ``k``,
    ``n_inter``; ``edges``, ``A``, ``clusters``) and the data of the paper's model (39): ``m`` samples per node of
    dimension ``d``, label noise ``noise``, cluster models in {0, 0.5}^d; ``rho`` the chain's fraction of nodes with
    data."""
    import numpy as np

    from reference_impl.gtv.data import chain_instance, dense_clusters_instance, sbm_instance
    from theory.gtv import GTVInstance

    common = dict(d=d, m=m, noise=noise, lam=lam, penalty=penalty)
    g = graph
    if generator == "sbm":
        w = g["weights"]
        return sbm_instance(rng, sizes=tuple(g["sizes"]), p_in=g["p_in"], p_out=g["p_out"], Q=Q,
                            weights=None if w is None else tuple(w), **common)
    if generator == "chain":
        return chain_instance(rng, n=g["n"], eps=g["eps"], rho=rho, **common)
    if generator == "dense":
        return dense_clusters_instance(rng, N=g["N"], k=g["k"], n_inter=g["n_inter"] if g["k"] >= 2 else 0,
                                       eps=g["eps"], **common)
    e = np.sort(np.array(g["edges"]), axis=1)
    labels = np.array(g["clusters"])
    n = int(e.max()) + 1
    A = np.asarray(g["A"] if g["A"] is not None else [1.0] * len(e), dtype=np.float64)
    w_bar = 0.5 * rng.integers(0, 2, size=(int(labels.max()) + 1, d))
    w_true = w_bar[labels]
    X = rng.normal(size=(n, m, d))
    y = np.einsum("nrj,nj->nr", X, w_true) + noise * rng.normal(size=(n, m))
    return GTVInstance(n=n, edges=e, A=A, X=X, y=y, m=np.full(n, m), lam=lam, penalty=penalty, Q=Q,
                       clusters=labels), w_true


def as_logistic(inst, gamma: float):
    """``inst`` with the logistic loss (ridge ``gamma``) on the labels sign(y) (the same graph and features)."""
    import numpy as np

    return inst.with_(loss="logistic", y=np.where(inst.y > 0, 1.0, -1.0) * inst.row_mask, gamma=gamma)


def gtv_run_document(inst, w_true, *, theta: float, iterations: int, tol: float, record_every: int) -> dict:
    """Run Algorithm 1 and return ``{"status", "n", "d", "edges", "penalty", "loss", "lam", "theta", "iterations",
    "converged", "models", "objective": {"iterations", "values"}, "residual", "kkt": {"node", "edge"}, "clusters"}``;
    ``clusters`` (when the partition is known) holds the labels, the clustering errors delta^(i) of (11), the
    per-cluster deviation from the oracle and the spread, and with ``w_true`` the MSE (41). ``status`` says whether it
    converged, reached the iteration cap or produced non-finite values. The logistic proximal step raises
    :class:`theory.logistic.NewtonNotConverged` when Newton's method does not converge."""
    import numpy as np

    from reference_impl.gtv.algorithm import run_algorithm1
    from reference_impl.gtv.baselines import mse
    from theory.gtv import cluster_constants, cluster_deviation

    run_ = run_algorithm1(inst, theta=theta, max_iterations=iterations, tol=tol, record_every=record_every)
    node, edge = run_.kkt(inst)
    clusters = None
    if inst.clusters is not None:
        clusters = {"labels": inst.clusters.tolist()}
        if inst.loss == "squared" and inst.penalty in ("l2", "l1"):
            try:
                k = cluster_constants(inst)
                dev, spread = cluster_deviation(run_.w, k)
                clusters.update({"clustering_error_delta": k.delta.tolist(), "deviation_from_oracle": dev.tolist(),
                                 "spread": spread.tolist(), "boundary": k.boundary.tolist(), "alpha": k.alpha.tolist()})
            except ValueError as exc:           # singular cluster features: no oracle
                clusters["oracle_status"] = str(exc)
        if w_true is not None:
            clusters["mse"] = mse(run_.w, w_true)
    values = [float(x) for x in run_.objectives]
    finite_ok = all(math.isfinite(x) for x in values) and bool(np.all(np.isfinite(run_.w)))
    status = ("converged" if run_.converged else "iteration cap reached") if finite_ok else "non-finite values (null)"
    return {"status": status, "n": inst.n, "d": inst.d, "edges": inst.n_edges, "penalty": inst.penalty,
            "loss": inst.loss, "lam": inst.lam, "theta": run_.theta, "iterations": run_.iterations,
            "converged": run_.converged, "models": run_.w,
            "objective": {"iterations": run_.objective_iterations.tolist(), "values": values},
            "residual": [float(r) for r in run_.residuals], "kkt": {"node": float(node), "edge": float(edge)},
            "clusters": clusters}
