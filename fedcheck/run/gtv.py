"""``fedcheck run gtv CONFIG.toml``: Algorithm 1 of the GTV clustered-FL paper (seed 002) on a configuration.

See ``docs/papers/gtv.md``. ``--json`` prints ``{"status", "n", "d", "edges", "penalty", "loss", "lam", "theta",
"iterations", "converged", "models", "objective": {"iterations", "values"}, "residual", "kkt": {"node", "edge"},
"clusters"}``; ``clusters`` (when the partition is known) holds the labels, the clustering errors delta^(i) of
(11), the per-cluster deviation from the oracle and the spread, and for synthetic data the MSE (41). Non-finite
numbers are null and ``status`` says why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from fedcheck.run._api import ConfigError, Cost, Field, NotConverged, Option, Schema, Section, read_npz
from fedcheck.run._budget import GRAPH_ELEMENT_WORK

NAME = "gtv"
TITLE = "Algorithm 1 of GTV clustered FL (seed 002) from a TOML configuration"

GENERATORS = ("sbm", "chain", "dense", "edges")
PENALTIES = ("l2", "l1", "mocha", "quad")
LOSSES = ("squared", "logistic")
NPZ_KEYS = ("X", "y", "m", "edges", "A")


def _one_of(key, kinds) -> str:
    return f"{key} = {kinds[0]!r}" if len(kinds) == 1 else f"{key} is " + " or ".join(repr(k) for k in kinds)


def _gen(*kinds):
    return dict(applies=lambda v: v["graph.generator"] in kinds, when=_one_of("graph.generator", kinds))


_SYN = dict(applies=lambda v: v["data.source"] == "synthetic", when="data.source = 'synthetic'")

SCHEMA = Schema(sections=(
    Section(name="data", doc="Synthetic data of the paper's model (39) on the [graph], or your data set.", fields=(
        Field(name="source", kind="choice", choices=("synthetic", "npz"), default="synthetic",
              doc="'synthetic': y = w_c^T x + noise N(0, 1), x ~ N(0, I), w_c in {0, 0.5}^d (39); 'npz': the arrays "
                  "of data.path (which also hold the graph)"),
        Field(name="path", kind="str", required=True, applies=lambda v: v["data.source"] == "npz",
              when="data.source = 'npz'",
              doc="an .npz (relative to the config) with X (n, m_max, d), y (n, m_max), m (n,), edges (E, 2), A (E,) "
                  "and optionally clusters (n,); rows r >= m[i] of X and y must be zero"),
        Field(name="d", kind="int", lo=1, default=10, doc="model dimension d", **_SYN),
        Field(name="m", kind="int", lo=1, default=10, doc="samples per node", **_SYN),
        Field(name="noise", kind="real", lo=0.0, default=1e-3, doc="label noise sigma", **_SYN),
        Field(name="rho", kind="real", lo=0.0, hi=1.0, lo_open=True, default=1.0,
              applies=lambda v: v["data.source"] == "synthetic" and v.raw("graph.generator", "sbm") == "chain",
              when="graph.generator = 'chain'", doc="fraction of the chain's nodes that hold data"),
        Field(name="seed", kind="int", lo=0, default=0, option="--seed", doc="seed of the graph and data", **_SYN),
    )),
    Section(name="graph", doc="The empirical graph (synthetic data only; an .npz holds its own).", **_SYN, fields=(
        Field(name="generator", kind="choice", choices=GENERATORS, default="sbm",
              doc="'sbm' (stochastic block model), 'chain' (2n nodes, one inter-cluster edge), 'dense' (complete "
                  "clusters joined by light edges) or 'edges' (your list)"),
        Field(name="sizes", kind="ints", lo=2, default=[100, 100], doc="cluster sizes", **_gen("sbm")),
        Field(name="p_in", kind="real", lo=0.0, hi=1.0, default=0.5, doc="edge probability inside a cluster",
              **_gen("sbm")),
        Field(name="p_out", kind="real", lo=0.0, hi=1.0, default=0.01, doc="edge probability between clusters",
              **_gen("sbm")),
        Field(name="weights", kind="reals", lo=0.0, lo_open=True, length=2,
              doc="[lo, hi]: uniform random edge weights (default: every A_e = 1)", **_gen("sbm")),
        Field(name="n", kind="int", lo=1, default=50, doc="nodes per cluster of the chain (2n nodes)",
              **_gen("chain")),
        Field(name="eps", kind="real", lo=0.0, default=0.1,
              doc="inter-cluster edge weight (chain: 0 removes the edge; dense: > 0)", **_gen("chain", "dense")),
        Field(name="N", kind="int", lo=1, default=20, doc="nodes per cluster", **_gen("dense")),
        Field(name="k", kind="int", lo=1, default=2, doc="clusters", **_gen("dense")),
        Field(name="n_inter", kind="int", lo=0, default=10, doc="random inter-cluster edges", **_gen("dense")),
        Field(name="edges", kind="pairs", required=True, doc="node pairs (nodes 0..n-1, every node on an edge)",
              **_gen("edges")),
        Field(name="A", kind="reals", lo=0.0, lo_open=True, length=lambda v: len(v["graph.edges"]),
              length_text="len(graph.edges)", doc="edge weights (default: all 1)", **_gen("edges")),
        Field(name="clusters", kind="ints", lo=0, required=True, doc="cluster label of each node (0..k-1)",
              **_gen("edges")),
    )),
    Section(name="model", doc="The GTV problem (16).", fields=(
        Field(name="penalty", kind="choice", choices=PENALTIES, default="l2",
              doc="'l2' (nLasso), 'l1', 'mocha' (1/2 ||v||^2) or 'quad' (1/2 v^T Q v)"),
        Field(name="loss", kind="choice", choices=LOSSES, default="squared",
              doc="'squared' (40) or 'logistic' (labels = the sign of the synthetic y; ridge gamma)"),
        Field(name="lam", kind="real", lo=0.0, lo_open=True, default=1e-2, doc="GTV regularisation lambda"),
        Field(name="Q", kind="matrix", required=True, applies=lambda v: v["model.penalty"] == "quad",
              when="model.penalty = 'quad'", doc="the symmetric positive semidefinite d x d matrix of 'quad'"),
        Field(name="gamma", kind="real", lo=0.0, default=0.01, applies=lambda v: v["model.loss"] == "logistic",
              when="model.loss = 'logistic'", doc="ridge term of the logistic loss"),
    )),
    Section(name="algorithm", doc="Algorithm 1's steps and stopping rule.", fields=(
        Field(name="theta", kind="real", lo=0.0, lo_open=True, default=1.0,
              doc="step rescaling tau_i = theta/|N(i)|, sigma_e = 1/(2 theta) (1: the paper's)"),
        Field(name="iterations", kind="int", lo=1, default=2000, option="--iterations", doc="iteration cap R"),
        Field(name="tol", kind="real", lo=0.0, default=1e-10,
              doc="stop when the fixed-point residual <= tol max(1, ||grad f(0)||) (0: run all R)"),
        Field(name="record_every", kind="int", lo=0, default=1, doc="record the objective every this many "
                                                                    "iterations (0: never)"),
    )),
))

OPTIONS = (
    Option(flag="--iterations", field="algorithm.iterations", doc="iteration cap R"),
    Option(flag="--seed", field="data.seed", lo=0, metavar="S", doc="seed of the synthetic graph and data"),
)


@dataclass(frozen=True, kw_only=True)
class Setup:
    """A validated GTV run (the graph and data not yet drawn, or the arrays of data.path)."""

    v: Any
    arrays: dict | None
    n: int
    d: int
    m: int
    edges: float
    seed: int


def load(v) -> Setup:
    arrays = None
    if v["data.source"] == "npz":
        path, arrays = read_npz(v, "data.path")
        missing = [k for k in NPZ_KEYS if k not in arrays]
        if missing:
            raise ConfigError(f"data.path {str(path)!r} must hold arrays {', '.join(NPZ_KEYS)}; missing "
                              f"{', '.join(missing)}")
        X = arrays["X"]
        if X.ndim != 3:
            raise ConfigError(f"data.path {str(path)!r}: X must have shape (n, m_max, d), got {X.shape}")
        n, m, d, E = X.shape[0], X.shape[1], X.shape[2], float(arrays["edges"].size / 2)
        return Setup(v=v, arrays=arrays, n=n, d=d, m=m, edges=E, seed=0)
    gen, d, m = v["graph.generator"], v["data.d"], v["data.m"]
    if gen == "sbm":
        sizes = v["graph.sizes"]
        if v["graph.p_in"] == 0 and v["graph.p_out"] == 0:
            raise ConfigError("graph.p_in: with p_in = p_out = 0 the SBM has no edge (Algorithm 1 needs every node on "
                              "an edge); give p_in > 0")
        for key in ("graph.p_in", "graph.p_out"):
            if 0 < v[key] < 1e-15:  # networkx skips by log(1 - p), which is 0 there
                raise ConfigError(f"{key} must be 0 or at least 1e-15 (below, 1 - p rounds to 1 in double precision), "
                                  f"got {v[key]!r}")
        w = v["graph.weights"]
        if w is not None and not w[0] <= w[1]:
            raise ConfigError(f"graph.weights must be a list [lo, hi] of reals, 0 < lo <= hi, got {w}")
        n = sum(sizes)
        E = sum(v["graph.p_in"] * s * (s - 1) / 2 for s in sizes) + v["graph.p_out"] * (n * n - sum(
            s * s for s in sizes)) / 2
    elif gen == "chain":
        n, E = 2 * v["graph.n"], 2 * v["graph.n"] - 1
    elif gen == "dense":
        N, k = v["graph.N"], v["graph.k"]
        if v["graph.eps"] <= 0:
            raise ConfigError(f"graph.eps must be a real > 0 with graph.generator = 'dense', got {v['graph.eps']!r}")
        if k == 1 and v.given("graph.n_inter"):
            raise ConfigError("graph.n_inter does not apply here (it applies only when graph.k >= 2)")
        most = N * N * k * (k - 1) // 2
        n_inter = v["graph.n_inter"] if k >= 2 else 0  # one cluster has no inter-cluster pairs: the default is moot
        if n_inter > most:
            raise ConfigError(f"graph.n_inter must be an integer in [0, N^2 k (k - 1) / 2 = {most}] (the "
                              f"inter-cluster pairs), got {v['graph.n_inter']}")
        if N < 2:
            raise ConfigError(f"graph.N must be an integer >= 2 (a complete cluster needs an edge), got {N}")
        n, E = N * k, k * N * (N - 1) / 2 + n_inter
    else:
        n = max(max(e) for e in v["graph.edges"]) + 1
        E = len(v["graph.edges"])
        if len(v["graph.clusters"]) != n:
            raise ConfigError(f"graph.clusters must be a list of n = {n} cluster labels 0..k-1 (one per node of "
                              f"graph.edges), got {len(v['graph.clusters'])}")
    if v["model.penalty"] == "quad" and gen in ("chain", "dense"):
        raise ConfigError(f"model.penalty: 'quad' needs graph.generator 'sbm' or 'edges' (or data.source = 'npz'), "
                          f"got graph.generator = {gen!r}")
    if v["model.penalty"] == "quad" and v["model.Q"].shape != (d, d):
        raise ConfigError(f"model.Q must be a symmetric d x d = {d} x {d} matrix, got shape {v['model.Q'].shape}")
    return Setup(v=v, arrays=None, n=n, d=d, m=m, edges=float(E), seed=v["data.seed"])


def estimate(s: Setup) -> list[Cost]:
    """The graph and data (the SBM's from :func:`reference_impl.gtv.data.estimate_sbm_cost`), the per-node solves and
    the iterations."""
    v, n, d, m, E = s.v, s.n, s.d, s.m, s.edges
    src = "data.path" if s.arrays is not None else None
    gen = None if s.arrays is not None else v["graph.generator"]
    gfield = src or {"sbm": "graph.sizes", "chain": "graph.n", "dense": "graph.N", "edges": "graph.edges"}[gen]
    if gen == "sbm":
        from reference_impl.gtv.data import estimate_sbm_cost

        sbm = estimate_sbm_cost(v["graph.sizes"], v["graph.p_in"], v["graph.p_out"], d, m)
        graph = estimate_sbm_cost(v["graph.sizes"], v["graph.p_in"], v["graph.p_out"], 1, 1)  # the graph alone
        costs = [Cost(phase=f"the SBM graph ({n} nodes, about {sbm.expected_edges:.3g} edges; estimate_sbm_cost)",
                      field=gfield, memory=graph.peak_elements, work=graph.work),
                 Cost(phase="the SBM's data n x m x d with its graph (estimate_sbm_cost)",
                      field="data.d" if d >= m else "data.m", memory=sbm.peak_elements,
                      work=max(sbm.work - graph.work, 0.0))]
    else:
        costs = [Cost(phase=f"the graph ({n} nodes, about {E:.3g} edges)", field=gfield, memory=2.0 * E + n,
                      work=(E + n) * GRAPH_ELEMENT_WORK),
                 Cost(phase="the data n x m x d", field=src or "data.d", memory=float(n) * m * d,
                      work=float(n) * m * d * 10)]
    costs.append(Cost(phase="the per-node solves n x d^2", field=src or "data.d", memory=float(n) * d * d,
                      work=float(n) * d ** 3))
    R = v["algorithm.iterations"]
    costs.append(Cost(phase="the work iterations x (n m d + |E| d + n d^2)", field=v.label("algorithm.iterations"),
                      work=float(R) * (n * m * d + E * d + n * d * d), steps=R))
    return costs


def _instance(s: Setup, rng):
    import numpy as np

    from reference_impl.gtv.data import chain_instance, dense_clusters_instance, sbm_instance
    from theory.gtv import GTVInstance

    v = s.v
    model = dict(lam=v["model.lam"], penalty=v["model.penalty"], Q=v["model.Q"])
    if s.arrays is not None:
        a = s.arrays
        with SCHEMA.blame("data", **{k: "data.path" for k in ("X", "y", "m", "edges", "A", "clusters", "n")}):
            inst = GTVInstance(n=a["X"].shape[0], edges=a["edges"], A=a["A"], X=a["X"], y=a["y"], m=a["m"],
                               loss=v["model.loss"], gamma=v["model.gamma"] or 0.0, clusters=a.get("clusters"),
                               **model)
        return inst, None
    common = dict(d=v["data.d"], m=v["data.m"], noise=v["data.noise"], lam=model["lam"], penalty=model["penalty"])
    gen = v["graph.generator"]
    with SCHEMA.blame("graph", d="data.d", m="data.m", noise="data.noise", rho="data.rho"):
        if gen == "sbm":
            w = v["graph.weights"]
            inst, w_true = sbm_instance(rng, sizes=tuple(v["graph.sizes"]), p_in=v["graph.p_in"],
                                        p_out=v["graph.p_out"], Q=model["Q"], weights=None if w is None else tuple(w),
                                        **common)
        elif gen == "chain":
            inst, w_true = chain_instance(rng, n=v["graph.n"], eps=v["graph.eps"], rho=v["data.rho"], **common)
        elif gen == "dense":
            inst, w_true = dense_clusters_instance(rng, N=v["graph.N"], k=v["graph.k"],
                                                   n_inter=v["graph.n_inter"] if v["graph.k"] >= 2 else 0,
                                                   eps=v["graph.eps"], **common)
        else:
            e = np.sort(np.array(v["graph.edges"]), axis=1)
            n, d, m = s.n, v["data.d"], v["data.m"]
            labels = np.array(v["graph.clusters"])
            A = np.asarray(v["graph.A"] if v["graph.A"] is not None else [1.0] * len(e), dtype=np.float64)
            w_bar = 0.5 * rng.integers(0, 2, size=(int(labels.max()) + 1, d))
            w_true = w_bar[labels]
            X = rng.normal(size=(n, m, d))
            y = np.einsum("nrj,nj->nr", X, w_true) + v["data.noise"] * rng.normal(size=(n, m))
            inst = GTVInstance(n=n, edges=e, A=A, X=X, y=y, m=np.full(n, m), lam=model["lam"],
                               penalty=model["penalty"], Q=model["Q"], clusters=labels)
    if v["model.loss"] == "logistic":
        with SCHEMA.blame("model"):
            inst = inst.with_(loss="logistic", y=np.where(inst.y > 0, 1.0, -1.0) * inst.row_mask,
                              gamma=v["model.gamma"])
        w_true = None
    return inst, w_true


def make_rng(s: Setup):
    import numpy as np

    return np.random.default_rng(s.seed)


def run(s: Setup, rng) -> dict:
    import numpy as np

    from reference_impl.gtv import mse, run_algorithm1
    from theory.gtv import cluster_constants, cluster_deviation
    from theory.logistic import NewtonNotConverged

    v = s.v
    inst, w_true = _instance(s, rng)
    try:
        with SCHEMA.blame("algorithm"):
            run_ = run_algorithm1(inst, theta=v["algorithm.theta"], max_iterations=v["algorithm.iterations"],
                                  tol=v["algorithm.tol"], record_every=v["algorithm.record_every"])
    except NewtonNotConverged as exc:
        raise NotConverged(f"Algorithm 1's logistic proximal step: {' '.join(str(exc).split())}") from None
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


def summarize(s: Setup, r: dict):
    rows = [("status", f"{r['status']} after {r['iterations']} iterations"),
            ("fixed-point residual", r["residual"][-1] if r["residual"] else None),
            ("KKT residual (node, edge)", [r["kkt"]["node"], r["kkt"]["edge"]])]
    if r["objective"]["values"]:
        rows.append(("objective (16)", r["objective"]["values"][-1]))
    c = r["clusters"] or {}
    if "mse" in c:
        rows.append(("MSE (41) against the generating parameters", c["mse"]))
    if "deviation_from_oracle" in c:
        rows += [("max deviation from the oracle, per cluster", c["deviation_from_oracle"]),
                 ("spread, per cluster", c["spread"])]
    rows.append(("models and curves", "use --json"))
    return (f"GTV Algorithm 1: n = {r['n']}, |E| = {r['edges']}, d = {r['d']}, penalty {r['penalty']}, loss "
            f"{r['loss']}, lam = {r['lam']:g}, theta = {r['theta']:g}"), rows


def figures(s: Setup, r: dict) -> list:
    """``--plot``: the objective (16) at its recorded iterations, and the fixed-point residual (log scale)."""
    import numpy as np

    from fedcheck._plot import figure_spec, series

    out = []
    if r["objective"]["values"]:
        values = np.asarray([np.nan if v is None else v for v in r["objective"]["values"]], dtype=np.float64)
        scale = "log" if np.all(values[np.isfinite(values)] > 0) else "linear"
        out.append(figure_spec("gtv_objective", f"GTV: objective (n = {r['n']}, lambda = {r['lam']:.4g})",
                               "iteration k", "objective (16)",
                               [series("objective", r["objective"]["iterations"], values)], yscale=scale))
    if r["residual"]:
        residual = np.asarray(r["residual"], dtype=np.float64)
        scale = "log" if np.all(residual[np.isfinite(residual)] > 0) else "linear"
        out.append(figure_spec("gtv_residual", "GTV: fixed-point residual", "iteration k", "residual",
                               [series("fixed-point residual", range(1, residual.size + 1), residual)],
                               yscale=scale))
    return out
