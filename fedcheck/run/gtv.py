"""``fedcheck run gtv CONFIG.toml``: Algorithm 1 of the GTV clustered-FL paper (seed 002) on a configuration.

See ``docs/papers/gtv.md``. ``--json`` prints the document of :func:`reference_impl.gtv.run_report.gtv_run_document`
(the models, the objective and residual curves, the KKT residuals and, when the partition is known, the clustering
errors, the deviation from the oracle and the MSE (41)). Non-finite numbers are null and ``status`` says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from fedcheck.run._api import ConfigError, Cost, Field, NotConverged, Option, RunSetup, Schema, Section, read_npz
from fedcheck.run._budget import GRAPH_ELEMENT_WORK
from fedcheck.run._output import Line, Plot, Row
from fedcheck.run._schema import applies_when

NAME = "gtv"
TITLE = "Algorithm 1 of GTV clustered FL (seed 002) from a TOML configuration"

GENERATORS = ("sbm", "chain", "dense", "edges")
PENALTIES = ("l2", "l1", "mocha", "quad")
LOSSES = ("squared", "logistic")
NPZ_KEYS = ("X", "y", "m", "edges", "A")


_gen = partial(applies_when, "graph.generator")
_SYN = applies_when("data.source", "synthetic")

SCHEMA = Schema(sections=(
    Section(name="data", doc="Synthetic data of the paper's model (39) on the [graph], or your data set.", fields=(
        Field(name="source", kind="choice", choices=("synthetic", "npz"), default="synthetic",
              doc="'synthetic': y = w_c^T x + noise N(0, 1), x ~ N(0, I), w_c in {0, 0.5}^d (39); 'npz': the arrays "
                  "of data.path (which also hold the graph)"),
        Field(name="path", kind="str", required=True, **applies_when("data.source", "npz"),
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
        Field(name="Q", kind="matrix", required=True, **applies_when("model.penalty", "quad"),
              doc="the symmetric positive semidefinite d x d matrix of 'quad'"),
        Field(name="gamma", kind="real", lo=0.0, default=0.01, **applies_when("model.loss", "logistic"),
              doc="ridge term of the logistic loss"),
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
class Setup(RunSetup):
    """A validated GTV run (the graph and data not yet drawn, or the arrays of data.path)."""

    arrays: dict | None
    n: int
    d: int
    m: int
    edges: float


def load(v) -> Setup:
    arrays = None
    if v["data.source"] == "npz":
        path, arrays = read_npz(v, "data.path", require=NPZ_KEYS, allowed=(*NPZ_KEYS, "clusters"),
                                integer_keys=("edges", "m", "clusters"))
        X = arrays["X"]
        if X.ndim != 3:
            raise ConfigError(f"data.path {str(path)!r}: X must have shape (n, m_max, d), got {X.shape}")
        n, m, d, E = X.shape[0], X.shape[1], X.shape[2], float(arrays["edges"].size / 2)
        return Setup(v=v, arrays=arrays, n=n, d=d, m=m, edges=E, iterations=v["algorithm.iterations"])
    from reference_impl.gtv.run_report import synthetic_graph_size

    gen, d, m = v["graph.generator"], v["data.d"], v["data.m"]
    if gen == "dense" and v["graph.eps"] <= 0:
        raise ConfigError(f"graph.eps must be a real > 0 with graph.generator = 'dense', got {v['graph.eps']!r}")
    if gen == "dense" and v["graph.k"] == 1 and v.given("graph.n_inter"):
        raise ConfigError("graph.n_inter does not apply here (it applies only when graph.k >= 2)")
    with SCHEMA.blame("graph"):
        n, E = synthetic_graph_size(gen, v.section("graph"))
    if gen == "edges" and len(v["graph.clusters"]) != n:
        raise ConfigError(f"graph.clusters must be a list of n = {n} cluster labels 0..k-1 (one per node of "
                          f"graph.edges), got {len(v['graph.clusters'])}")
    if v["model.penalty"] == "quad" and gen in ("chain", "dense"):
        raise ConfigError(f"model.penalty: 'quad' needs graph.generator 'sbm' or 'edges' (or data.source = 'npz'), "
                          f"got graph.generator = {gen!r}")
    if v["model.penalty"] == "quad" and v["model.Q"].shape != (d, d):
        raise ConfigError(f"model.Q must be a symmetric d x d = {d} x {d} matrix, got shape {v['model.Q'].shape}")
    return Setup(v=v, arrays=None, n=n, d=d, m=m, edges=float(E), seed=v["data.seed"],
                 iterations=v["algorithm.iterations"])


def estimate(s: Setup) -> list[Cost]:
    """The graph and data, the per-node solves and the iterations (:func:`reference_impl.gtv.run_report.
    gtv_run_costs`), each named by the field that drives it."""
    from reference_impl.gtv.run_report import gtv_run_costs

    v, n, d, m = s.v, s.n, s.d, s.m
    src = "data.path" if s.arrays is not None else None
    gen = None if s.arrays is not None else v["graph.generator"]
    c = gtv_run_costs(gen, None if gen is None else v.section("graph"), n=n, edges=s.edges, d=d, m=m,
                      iterations=s.iterations, element_work=GRAPH_ELEMENT_WORK)
    gfield = src or {"sbm": "graph.sizes", "chain": "graph.n", "dense": "graph.N", "edges": "graph.edges"}[gen]
    sbm = gen == "sbm"
    return [Cost(phase=f"the SBM graph ({n} nodes, about {c['edges']:.3g} edges; estimate_sbm_cost)" if sbm else
                 f"the graph ({n} nodes, about {c['edges']:.3g} edges)", field=gfield, memory=c["graph"][0],
                 work=c["graph"][1]),
            Cost(phase="the SBM's data n x m x d with its graph (estimate_sbm_cost)" if sbm else "the data n x m x d",
                 field=("data.d" if d >= m else "data.m") if sbm else src or "data.d", memory=c["data"][0],
                 work=c["data"][1]),
            Cost(phase="the per-node solves n x d^2", field=src or "data.d", memory=c["solves"][0],
                 work=c["solves"][1]),
            Cost(phase="the work iterations x (n m d + |E| d + n d^2)", field=v.label("algorithm.iterations"),
                 work=c["iterations"][1], steps=s.iterations)]


def build_instance(s: Setup, rng):
    """``(instance, w_true)`` of the setup (:mod:`reference_impl.gtv.run_report`); ConfigError names the field."""
    from reference_impl.gtv.run_report import as_logistic, gtv_arrays_instance, gtv_synthetic_instance

    v = s.v
    model = dict(lam=v["model.lam"], penalty=v["model.penalty"], Q=v["model.Q"])
    if s.arrays is not None:
        with SCHEMA.blame("data", **{k: "data.path" for k in ("X", "y", "m", "edges", "A", "clusters", "n")}):
            return gtv_arrays_instance(s.arrays, loss=v["model.loss"], gamma=v["model.gamma"], **model), None
    data = {k: v[f"data.{k}"] for k in ("d", "m", "noise", "rho")}
    with SCHEMA.blame("graph", d="data.d", m="data.m", noise="data.noise", rho="data.rho"):
        inst, w_true = gtv_synthetic_instance(rng, v["graph.generator"], v.section("graph"), **data, **model)
    if v["model.loss"] == "logistic":
        with SCHEMA.blame("model"):
            inst = as_logistic(inst, v["model.gamma"])
        w_true = None
    return inst, w_true


def run(s: Setup, rng) -> dict:
    from reference_impl.gtv.run_report import gtv_run_document
    from theory.logistic import NewtonNotConverged

    v = s.v
    inst, w_true = build_instance(s, rng)
    try:
        with SCHEMA.blame("algorithm"):
            return gtv_run_document(inst, w_true, theta=v["algorithm.theta"], iterations=v["algorithm.iterations"],
                                    tol=v["algorithm.tol"], record_every=v["algorithm.record_every"])
    except NewtonNotConverged as exc:
        raise NotConverged(f"Algorithm 1's logistic proximal step: {' '.join(str(exc).split())}") from None


SUMMARY_TITLE = ("GTV Algorithm 1: n = {r[n]}, |E| = {r[edges]}, d = {r[d]}, penalty {r[penalty]}, loss {r[loss]}, "
                 "lam = {r[lam]:g}, theta = {r[theta]:g}")
SUMMARY = (
    Row(label="status", text="{r[status]} after {r[iterations]} iterations"),
    Row(label="fixed-point residual", key="residual", show="last"),
    Row(label="KKT residual (node, edge)", key=lambda s, r: [r["kkt"]["node"], r["kkt"]["edge"]]),
    Row(label="objective (16)", key="objective.values", show="last", optional=True),
    Row(label="MSE (41) against the generating parameters", key="clusters.mse", optional=True),
    Row(label="max deviation from the oracle, per cluster", key="clusters.deviation_from_oracle", optional=True),
    Row(label="spread, per cluster", key="clusters.spread", optional=True),
    Row(label="models and curves", text="use --json"),
)
#: ``--plot``: the objective (16) at its recorded iterations, and the fixed-point residual (log scale).
FIGURES = (
    Plot(name="gtv_objective", title="GTV: objective (n = {r[n]}, lambda = {r[lam]:.4g})", xlabel="iteration k",
         ylabel="objective (16)", lines=(Line(label="objective", key="objective.values", x="objective.iterations"),),
         yscale="log-if-positive", optional=True),
    Plot(name="gtv_residual", title="GTV: fixed-point residual", xlabel="iteration k", ylabel="residual",
         lines=(Line(label="fixed-point residual", key="residual", x0=1),), yscale="log-if-positive", optional=True),
)
