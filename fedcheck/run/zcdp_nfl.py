"""``fedcheck run zcdp-nfl CONFIG.toml``: the reference zCDP-NFL (thesis ch. 3, P2 Algorithm 1) on a configuration.

See ``docs/papers/zcdp_nfl.md``. Of the baselines of the paper's experiments, eps_delta_dp_nfl is the paper's own
(zCDP-NFL with conventional (eps, delta)-DP rules; its split and composition theorem are choices), zcdp_grad_nfl and
p_admm are labelled reconstructions: the paper gives none of their rules. ``--json`` prints the document of
:func:`reference_impl.zcdp_nfl.run_report.zcdp_run_document` (NE(n) is the normalised error against the CVXPY optimum,
mean over runs); non-finite values are null with a status.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any

from fedcheck.run._api import ConfigError, Cost, Field, NotConverged, Option, RunSetup, Schema, Section, read_npz
from fedcheck.run._budget import GRAPH_DRAWS, connected_er
from fedcheck.run._graphs import GENERATORS, check_params, generator_cost
from fedcheck.run._output import Line, Plot, Row
from fedcheck.run._schema import applies_when, clean_message

NAME = "zcdp-nfl"
TITLE = "zCDP-NFL (P2 Algorithm 1) on a graph and data from a TOML configuration"

OBJECTIVES = ("elastic_net", "lad", "ridge")
METHODS = ("zcdp_nfl", "eps_delta_dp_nfl", "zcdp_grad_nfl", "p_admm")
STEPS = ("constant", "inv_sqrt", "inv", "inv_square", "growing")


_src = partial(applies_when, "graph.source")
_SYN = applies_when("data.source", "synthetic")
_NOISY = applies_when("privacy.schedule", "S1", "S2")
_ADMM_STEP = dict(applies=lambda v: not (v["algorithm.method"] == "zcdp_grad_nfl" and v["algorithm.mu"] is not None),
                  when="the method is not zcdp_grad_nfl with its own algorithm.mu")

SCHEMA = Schema(sections=(
    Section(name="data", doc="The local data: synthetic (the paper's generator) or your arrays.", fields=(
        Field(name="source", kind="choice", choices=("synthetic", "npz"), default="synthetic",
              doc="'synthetic': x ~ N(0, I_P) rescaled to ||x|| <= 1, y = x^T w_k + N(0, noise_std^2); 'npz': the "
                  "arrays of data.path"),
        Field(name="path", kind="str", required=True, **applies_when("data.source", "npz"),
              doc="an .npz (relative to the config) with X (K, M, P) and y (K, M)"),
        Field(name="P", kind="int", lo=1, default=8, doc="features P", **_SYN),
        Field(name="M", kind="int", lo=1, default=50, doc="samples per node M", **_SYN),
        Field(name="noise_std", kind="real", lo=0.0, default=0.1, doc="label-noise standard deviation", **_SYN),
        Field(name="heterogeneity", kind="real", lo=0.0, default=0.0,
              doc="client truths w_k = w_o + heterogeneity N(0, I_P)", **_SYN),
        Field(name="zero_coordinates", kind="int", lo=0, hi=lambda v: v["data.P"], hi_open=True, hi_text="data.P",
              default=0, doc="the first entries of w_o set to 0", **_SYN),
        Field(name="seed", kind="int", lo=0, default=0, doc="seed of the synthetic data", **_SYN),
    )),
    Section(name="graph", doc="The network: a connected Erdos-Renyi graph, a networkx generator or an edge list.",
            fields=(
        Field(name="source", kind="choice", choices=("erdos_renyi", "generator", "edges"), default="erdos_renyi",
              doc="'erdos_renyi' (connected G(K, m), m = round(K mean_degree / 2), redrawn until connected), "
                  "'generator' (a networkx generator) or 'edges' (an edge list)"),
        Field(name="K", kind="int", lo=2, doc="nodes (default 50, or the K of data.path)", **_src("erdos_renyi")),
        Field(name="mean_degree", kind="real", lo=0.0, lo_open=True, default=3.0, doc="mean degree",
              **_src("erdos_renyi")),
        Field(name="generator", kind="choice", choices=tuple(GENERATORS), required=True,
              doc="the networkx generator", **_src("generator")),
        Field(name="params", kind="table", default={}, doc="the generator's parameters, e.g. { d = 3, n = 50 }",
              **_src("generator")),
        Field(name="edges", kind="pairs", required=True, doc="[[k, l], ...] on nodes 0..K-1 (K = largest + 1)",
              **_src("edges")),
        Field(name="seed", kind="int", lo=0, default=0,
              applies=lambda v: v["graph.source"] == "erdos_renyi" or (
                  v["graph.source"] == "generator" and GENERATORS[v["graph.generator"]].seeded),
              when="graph.source = 'erdos_renyi' or a random generator", doc="graph seed"),
    )),
    Section(name="model", doc="The objective F(w) = sum_k f_k(w).", fields=(
        Field(name="objective", kind="choice", choices=OBJECTIVES, default="lad",
              doc="'elastic_net' (squared loss + lam (lam1 ||w||_1 + lam2 ||w||^2)), 'lad' (|x^T w - y|, bounded "
                  "subgradients) or 'ridge' (squared loss + lam ||w||^2)"),
        Field(name="lam", kind="real", lo=0.0, default=1.0, applies=lambda v: v["model.objective"] != "lad",
              when="model.objective is 'elastic_net' or 'ridge'", doc="regularisation weight lambda"),
        Field(name="lam1", kind="real", lo=0.0, **applies_when("model.objective", "elastic_net"),
              doc="l1 weight (default 0.001 ||X^T y||_inf)"),
        Field(name="lam2", kind="real", lo=0.0, default=1.0, **applies_when("model.objective", "elastic_net"),
              doc="l2 weight"),
        Field(name="clip", kind="real", lo=0.0, lo_open=True, applies=lambda v: v["model.objective"] != "lad",
              when="model.objective is 'elastic_net' or 'ridge'",
              doc="per-sample gradient clipping at c1 (without it the privacy is not certified)"),
    )),
    Section(name="privacy", doc="The noise schedule and the accounting.", fields=(
        Field(name="schedule", kind="choice", choices=("none", "S1", "S2"), default="S2",
              doc="'none'; 'S2' (privacy-first: phi(n) = phi1 tau^-(n-1)); 'S1' (variance-first: sigma^2(n) = "
                  "sigma2_0 tau^n)"),
        Field(name="phi1", kind="real", lo=0.0, lo_open=True, default=1e-3,
              applies=lambda v: v["privacy.schedule"] == "S2", when="privacy.schedule = 'S2'",
              doc="first-round zCDP budget phi^(1)"),
        Field(name="tau", kind="real", lo=0.0, hi=1.0, lo_open=True, default=0.99, doc="schedule ratio tau", **_NOISY),
        Field(name="sigma2_0", kind="real", lo=0.0, lo_open=True, default=0.01,
              applies=lambda v: v["privacy.schedule"] == "S1", when="privacy.schedule = 'S1'",
              doc="initial noise variance sigma^2(0)"),
        Field(name="c1", kind="real", lo=0.0, lo_open=True, default=1.0,
              doc="the per-sample gradient bound of the calibration", **_NOISY),
        Field(name="delta", kind="real", lo=0.0, hi=1.0, lo_open=True, hi_open=True, default=1e-5,
              doc="delta of the accounted (epsilon, delta)", **_NOISY),
    )),
    Section(name="algorithm", doc="zCDP-NFL or a baseline.", fields=(
        Field(name="method", kind="choice", choices=METHODS, default="zcdp_nfl",
              doc="'zcdp_nfl' (the paper's algorithm), the paper's baseline 'eps_delta_dp_nfl' (zCDP-NFL with the "
                  "classical Gaussian per round, composed by algorithm.composition; needs S1 or S2), or a "
                  "reconstructed baseline: 'zcdp_grad_nfl' (private subgradient descent), 'p_admm' (zCDP-NFL with "
                  "the constant step eta0)"),
        Field(name="mu", kind="real", lo=0.0, lo_open=True, applies=lambda v: v["algorithm.method"] == "zcdp_grad_nfl",
              when="algorithm.method = 'zcdp_grad_nfl'",
              doc="zcdp_grad_nfl's step (default: matched to zCDP-NFL's noise-free NE at n = 10)"),
        Field(name="split", kind="choice", choices=("dynamic", "constant"), default="dynamic",
              applies=lambda v: v["algorithm.method"] == "eps_delta_dp_nfl",
              when="algorithm.method = 'eps_delta_dp_nfl'",
              doc="the budget split over rounds: 'dynamic' (eps_n ~ tau^-(n-1)/2) or 'constant' (eps/T)"),
        Field(name="composition", kind="choice", choices=("basic", "advanced", "moments"), default="basic",
              applies=lambda v: v["algorithm.method"] == "eps_delta_dp_nfl",
              when="algorithm.method = 'eps_delta_dp_nfl'",
              doc="how the rounds' privacy adds up to the total: 'basic' ((eps_n, delta_n) sum), 'advanced' (Dwork & "
                  "Roth Thm. 3.20, heterogeneous form, delta' = delta/2) or 'moments' (the moments accountant: Renyi "
                  "budgets add up; with the dynamic split, zCDP-NFL's own noise)"),
        Field(name="rho", kind="real", lo=0.0, lo_open=True, default=1.0, doc="ADMM penalty rho", **_ADMM_STEP),
        Field(name="step", kind="choice", choices=STEPS, default="constant",
              applies=lambda v: _ADMM_STEP["applies"](v) and v["algorithm.method"] != "p_admm",
              when="the method is not p_admm (constant step) nor zcdp_grad_nfl with its own algorithm.mu",
              doc="step schedule eta(n): constant, inv_sqrt (eta0/sqrt(n)), inv, inv_square, growing (eta0 n^2)"),
        Field(name="eta0", kind="real", lo=0.0, lo_open=True, default=0.5, doc="step scale eta0", **_ADMM_STEP),
    )),
    Section(name="simulation", doc="Length, runs and the noise seed.", fields=(
        Field(name="iterations", kind="int", lo=1, default=200, option="--iterations", doc="iterations T"),
        Field(name="runs", kind="int", lo=1, default=1, option="--runs", doc="Monte-Carlo runs"),
        Field(name="seed", kind="int", lo=0, default=0, option="--seed", doc="noise seed"),
    )),
), renames={"kind": "privacy.schedule", "objective": "model.objective"})

OPTIONS = (
    Option(flag="--iterations", field="simulation.iterations", doc="iterations"),
    Option(flag="--runs", field="simulation.runs", doc="Monte-Carlo runs"),
    Option(flag="--seed", field="simulation.seed", lo=0, metavar="S", doc="noise seed"),
)


@dataclass(frozen=True, kw_only=True)
class Setup(RunSetup):
    """A validated zCDP-NFL run (the graph and data not yet drawn)."""

    X: Any
    y: Any
    K: int
    P: int
    M: int
    graph_params: dict | None


def load(v) -> Setup:
    X = y = None
    if v["data.source"] == "npz":
        from fedcheck._files import real_array

        path, arrays = read_npz(v, "data.path", require=("X", "y"), require_text="X (K, M, P) and y (K, M)",
                                allowed=("X", "y"))

        X = real_array(arrays["X"], f"data.path {str(path)!r} array 'X'")
        y = real_array(arrays["y"], f"data.path {str(path)!r} array 'y'")
        if X.ndim != 3 or min(X.shape) < 1 or y.shape != X.shape[:2]:
            raise ConfigError(f"data.path {str(path)!r}: X must be (K, M, P) and y (K, M), got {X.shape} and "
                              f"{y.shape}")
    src, params = v["graph.source"], None
    if src == "erdos_renyi":
        K = v["graph.K"] if v["graph.K"] is not None else (50 if X is None else X.shape[0])
    elif src == "edges":
        K = max(max(e) for e in v["graph.edges"]) + 1
    else:
        params = check_params(v["graph.generator"], v["graph.params"])
        K = generator_cost(v["graph.generator"], params)[1]
    if X is not None and X.shape[0] != K:
        field = "graph.K" if v.given("graph.K") else f"graph.{'edges' if src == 'edges' else 'params'}"
        raise ConfigError(f"data.path: X has {X.shape[0]} clients but the graph has K = {K} nodes ({field})")
    if K < 2:
        raise ConfigError(f"graph: the graph must have at least 2 nodes, got {K}")
    if v["algorithm.method"] == "eps_delta_dp_nfl" and v["privacy.schedule"] == "none":
        raise ConfigError("algorithm.method 'eps_delta_dp_nfl' is matched to zCDP-NFL's accounted (epsilon, delta): "
                          "privacy.schedule must be 'S1' or 'S2'")
    T = v["simulation.iterations"]
    _check_privacy_total(v, T)
    P, M = (v["data.P"], v["data.M"]) if X is None else (X.shape[2], X.shape[1])
    return Setup(v=v, X=X, y=y, K=K, P=P, M=M, graph_params=params, iterations=T, runs=v["simulation.runs"],
                 seed=v["simulation.seed"])


def _check_privacy_total(v, T: int) -> None:
    """Refuse a schedule whose per-round budget leaves the double range within the run (no finite privacy)."""
    from reference_impl.zcdp_nfl.run_report import privacy_overflow_iteration

    kind, label = v["privacy.schedule"], v.label("simulation.iterations")
    n0 = privacy_overflow_iteration(kind, v["privacy.tau"], sigma2_0=v["privacy.sigma2_0"], phi1=v["privacy.phi1"])
    if n0 is not None and n0 <= T:
        what, fix = (("the noise variance sigma2_0 tau^n underflows to 0", "a larger sigma2_0") if kind == "S1" else
                     ("the per-round budget phi1 tau^-(n-1) exceeds 1e300", "a smaller phi1"))
        raise ConfigError(f"privacy.tau: with schedule {kind} {what} from iteration n = {math.ceil(n0)} on ({label} = "
                          f"{T}), so the total zCDP overflows: no finite privacy guarantee; use tau closer to 1, {fix} "
                          f"or fewer iterations")


def _check_accounting(v, problem, config, T: int) -> None:
    """The per-round sensitivities and the accounted total must be finite before the run (they are closed forms)."""
    from reference_impl.zcdp_nfl.run_report import accounting_overflow

    what = accounting_overflow(problem, config, T)
    if what == "sensitivity":
        raise ConfigError(f"privacy.c1: the sensitivity Delta = 2 c1/(M (2 rho d + 1/eta)) of Lemma I overflows for "
                          f"c1 = {config.privacy.c1:g}; use a smaller privacy.c1")
    if what == "total":
        field = "privacy.sigma2_0" if config.privacy.kind == "S1" else "privacy.phi1"
        raise ConfigError(f"{field}: the accounted total zCDP max_k sum_n phi_k(n) overflows (no finite privacy "
                          f"guarantee over {v.label('simulation.iterations')} = {T}); use a smaller budget")


#: Defaults of the sizes (the field that drives a phase is the one furthest above its default).
_SIZE_DEFAULTS = {"K": 50, "M": 50, "P": 8}


def _n_edges(s: Setup) -> int:
    """Undirected edges of the configured graph (its expected count for a generator), in [K - 1, K(K - 1)/2]."""
    v, K = s.v, s.K
    src = v["graph.source"]
    if src == "erdos_renyi":
        m = int(round(K * v["graph.mean_degree"] / 2.0))
    elif src == "edges":
        m = len({tuple(sorted(e)) for e in v["graph.edges"]})
    else:
        m = int(min(GENERATORS[v["graph.generator"]].size(s.graph_params)[1], 2.0**62))
    return min(max(m, K - 1), K * (K - 1) // 2)


def estimate(s: Setup) -> list[Cost]:
    """The graph, the CVXPY ground truth, and the run by :func:`reference_impl.zcdp_nfl.estimate_run_cost`."""
    from reference_impl.zcdp_nfl.run_report import zcdp_run_costs

    v, K, P, M = s.v, s.K, s.P, s.M
    src = v["graph.source"]
    kfield = {"erdos_renyi": "graph.K", "edges": "graph.edges", "generator": "graph.params"}[src]
    if src == "erdos_renyi":
        m = int(round(K * v["graph.mean_degree"] / 2.0))
        if not K - 1 <= m <= K * (K - 1) // 2:
            raise ConfigError(f"graph.mean_degree must give between K - 1 and K(K - 1)/2 edges for K = {K}, got "
                              f"{v['graph.mean_degree']!r}")
        graph = connected_er(K, 2.0 * m / K, "graph.mean_degree" if v.given("graph.mean_degree") else "graph.K",
                             max_draws=GRAPH_DRAWS, what="G(K, m)")
    elif src == "edges":
        graph = Cost(phase="the edge list", field="graph.edges", work=len(v["graph.edges"]) * 10)
    else:
        graph = generator_cost(v["graph.generator"], s.graph_params)[0]
    c = zcdp_run_costs(K, M, P, _n_edges(s), iterations=s.iterations, runs=s.runs, clip=v["model.clip"] is not None)
    sizes = {"K": (K, kfield), "M": (M, "data.M"), "P": (P, "data.P")}
    size_field = "data.path" if s.X is not None else sizes[max(sizes, key=lambda k: sizes[k][0] / _SIZE_DEFAULTS[k])][1]
    its = v.label("simulation.iterations")
    return [graph,
            Cost(phase="the instance and one run (data K x M x P, sparse adjacency; estimate_run_cost)",
                 field=size_field, memory=c["one"].peak_elements, work=c["data"]),
            Cost(phase="the ground truth (CVXPY on K M rows of P features)", field=kfield if s.X is None else
                 "data.path", memory=c["truth_memory"], work=c["truth_work"]),
            Cost(phase="the schedules T x K and the states runs x K x (P, M) (estimate_run_cost)",
                 field=v.label("simulation.runs") if c["runs_dominate"] else its, memory=c["full"].peak_elements),
            Cost(phase="the work iterations x runs x (K M P + |E| P) (estimate_run_cost)", field=its,
                 work=c["full"].work, steps=s.iterations)]


def _graph(v, K):
    from reference_impl.zcdp_nfl.run_report import zcdp_graph

    gen = v["graph.generator"]
    with SCHEMA.blame("graph", graph="graph"):
        return zcdp_graph(v["graph.source"], K=K, mean_degree=v["graph.mean_degree"], seed=v["graph.seed"],
                          edges=v["graph.edges"], generator=gen, params=v["graph.params"],
                          seeded=gen is not None and GENERATORS[gen].seeded)


def build_problem(s: Setup):
    from reference_impl.zcdp_nfl.run_report import arrays_zcdp_problem, model_kwargs, synthetic_zcdp_problem

    v = s.v
    graph, label = _graph(v, s.K)
    model = model_kwargs(**{k.split(".", 1)[1]: v[k] for k in v if k.startswith("model.")})
    if s.X is not None:
        with SCHEMA.blame("model", X="data.path", y="data.path"):
            return arrays_zcdp_problem(graph, s.X, s.y, model), label
    data = {k: v[f"data.{k}"] for k in ("seed", "P", "M", "noise_std", "heterogeneity", "zero_coordinates")}
    with SCHEMA.blame("data", K="graph.K"):
        return synthetic_zcdp_problem(graph, model, **data), label


def build_config(v):
    from reference_impl.zcdp_nfl.run_report import nfl_config, privacy_schedule

    with SCHEMA.blame("privacy"):
        privacy = privacy_schedule(kind=v["privacy.schedule"], **{k: v[f"privacy.{k}"] for k in (
            "phi1", "tau", "c1", "delta", "sigma2_0")})
    with SCHEMA.blame("algorithm"):
        return nfl_config(privacy, rho=v["algorithm.rho"], step=v["algorithm.step"], eta0=v["algorithm.eta0"])


def run(s: Setup, rng) -> dict:
    from cvxpy.error import SolverError

    from reference_impl.zcdp_nfl import centralized_optimum
    from reference_impl.zcdp_nfl.run_report import BudgetError, zcdp_run_document

    v = s.v
    problem, label = build_problem(s)
    config = build_config(v)
    _check_accounting(v, problem, config, s.iterations)
    try:
        truth = centralized_optimum(problem)
    except (ArithmeticError, SolverError) as exc:  # the solver stopped without an optimum on a valid problem
        raise NotConverged(f"the ground truth (CVXPY/Clarabel): {' '.join(str(exc).split())}") from None
    try:
        return zcdp_run_document(problem, config, truth, v["algorithm.method"], s.iterations, rng, runs=s.runs,
                                 seed=s.seed, label=label, split=v["algorithm.split"], mu=v["algorithm.mu"],
                                 composition=v["algorithm.composition"])
    except BudgetError as exc:
        raise ConfigError(f"privacy.phi1: {clean_message(exc)}") from None


_CONVERGED = dict(when=lambda s, r: r["status"] != "diverged")
_NOISY_RUN = dict(when=lambda s, r: r["privacy"]["schedule"] != "none")
SUMMARY_TITLE = ("{r[_summary][name]} ({r[objective]}) on {r[graph]}: K = {r[K]}, P = {r[P]}, M = {r[M]}, "
                 "{s.iterations} iterations, {s.runs} run(s), seed {s.seed}")
SUMMARY = (
    Row(label="ground truth F* (CVXPY/Clarabel)", key="ground_truth.F_star"),
    Row(label="{r[ground_truth][certificate]}", key="ground_truth.residual"),
    Row(label="status", text="diverged (an iterate exceeded 1e150); NE after divergence is not defined",
        when=lambda s, r: r["status"] == "diverged"),
    Row(label="status", text="diverging: {r[warning]}", when=lambda s, r: r["status"] == "diverging"),
    Row(label="NE(0)", key="ne_curve", show="first", **_CONVERGED),
    Row(label="NE({s.iterations}), mean over runs", key="ne_final", **_CONVERGED),
    Row(label="total zCDP", key="privacy.total_zcdp", **_NOISY_RUN),
    Row(label="epsilon at delta = {r[privacy][delta]:g} ({r[_summary][rule]})", key="privacy.epsilon", **_NOISY_RUN),
    Row(label="privacy", key="privacy.status"),
    Row(label="error curve", text="use --json for all values"),
)
#: ``--plot``: the normalised error NE(n) against the CVXPY optimum (mean over the runs; log scale).
FIGURES = (Plot(name="zcdp_nfl_run", title="{r[algorithm]}: normalised error ({r[objective]}, K = {r[K]})",
                xlabel="iteration n", ylabel="NE(n)", yscale="log-if-some-positive",
                lines=(Line(label="NE(n), mean over {s.runs} run(s)", key="ne_curve"),)),)
