"""``fedcheck run pgfl CONFIG.toml``: the reference PGFL (seed 000, Algorithms 1-2) on a configuration.

See ``docs/papers/pgfl.md``. ``--json`` prints the document of :func:`reference_impl.pgfl.run_report.pgfl_run_document`
(the models averaged over the runs, the NMSD curve when the true cluster models are known; non-finite values are null).
"""

from __future__ import annotations

from dataclasses import dataclass

from fedcheck.run._api import ConfigError, Cost, Field, Option, RunSetup, Schema, Section, read_npz, runs_seed_options
from fedcheck.run._budget import connected_gnm
from fedcheck.run._output import Line, Plot, Row
from fedcheck.run._schema import applies_when, blame_file

NAME = "pgfl"
TITLE = "PGFL (Algorithms 1-2 of seed 000) from a TOML configuration"

_SYN = applies_when("data.source", "synthetic")
_POS = dict(kind="int", lo=1)

SCHEMA = Schema(sections=(
    Section(name="data", doc="The federation and its data: synthetic regression (seed 000's regression setting) or "
                             "your own arrays.", fields=(
        Field(name="source", kind="choice", choices=("synthetic", "npz"), default="synthetic",
              doc="'synthetic': the regression data of the paper's experiment; 'npz': the arrays of data.path"),
        Field(name="path", kind="str", required=True, **applies_when("data.source", "npz"),
              doc="an .npz (relative to the config) with X_0..X_{K-1} (D_k, d), y_0..y_{K-1} (D_k,), client_server "
                  "and client_cluster (K,) integers, optionally adjacency (S, S) 0/1 and true_models (Q, d)"),
        Field(name="servers", default=10, doc="servers S", **_POS, **_SYN),
        Field(name="clients_per_server", default=15, doc="clients per server", **_POS, **_SYN),
        Field(name="d", default=60, doc="model dimension d", **_POS, **_SYN),
        Field(name="clusters", default=3, doc="clusters Q", **_POS, **_SYN),
        Field(name="samples_min", default=2, doc="fewest samples D_k of a client", **_POS, **_SYN),
        Field(name="samples_max", kind="int", default=9, lo=lambda v: v["data.samples_min"],
              lo_text="data.samples_min", doc="most samples D_k of a client (D_k uniform in [min, max])", **_SYN),
        Field(name="gamma", kind="real", default=0.15, lo=0.0, hi=1e300,
              doc="cluster spread: w_q = (1 + gamma_q) w_0, gamma_q uniform in (-gamma, gamma)", **_SYN),
        Field(name="noise_variance", kind="real", default=0.1, lo=0.0, doc="observation-noise variance", **_SYN),
        Field(name="average_degree", kind="real", default=3.0, lo=0.0, hi=lambda v: v["data.servers"] - 1,
              hi_text="data.servers - 1",
              doc="mean degree of the connected random server graph (round(average_degree S / 2) edges)", **_SYN),
        Field(name="seed", kind="int", default=0, lo=0, doc="seed of the synthetic data and server graph", **_SYN),
    )),
    Section(name="model", doc="The local objective.", fields=(
        Field(name="loss", kind="choice", choices=("ridge", "logistic"), default="ridge",
              doc="'ridge' (squared loss) or 'logistic' (labels in {0, 1}; needs data.source = 'npz')"),
        Field(name="lam", kind="real", default=1.0, lo=0.0, doc="ridge weight lambda"),
    )),
    Section(name="algorithm", doc="Algorithm 1 (non-private) or 2 (privacy-preserving) and their step sizes.",
            fields=(
        Field(name="name", kind="choice", choices=("alg1", "alg2"), default="alg1",
              doc="'alg1' (non-private) or 'alg2' (privacy-preserving; needs [privacy])"),
        Field(name="rho", kind="real", lo=0.0, lo_open=True, doc="ADMM penalty rho (give rho or rho_over_Lmax)"),
        Field(name="rho_over_Lmax", kind="real", lo=0.0, lo_open=True,
              doc="rho as a multiple of the largest curvature L_max of the local losses"),
        Field(name="tau", kind="real", lo=0.0, hi=1.0, doc="constant inter-cluster weight tau (default 0)"),
        Field(name="tau0", kind="real", lo=0.0, hi=1.0, doc="first tau of the geometric schedule tau0 tau_decay^n"),
        Field(name="tau_decay", kind="real", lo=0.0, hi=1.0, default=1.0,
              applies=lambda v: v["algorithm.tau0"] is not None, when="algorithm.tau0 is given",
              doc="ratio of the geometric tau schedule"),
        Field(name="taus", kind="reals", lo=0.0, hi=1.0,
              doc="the tau of each iteration (at most --iterations values; the last one is kept)"),
        Field(name="dual_ref", kind="choice", choices=("local_aggregate", "server_model"), default="local_aggregate",
              applies=lambda v: v["algorithm.name"] == "alg2", when="algorithm.name = 'alg2'",
              doc="Algorithm 2's dual-update reference (the literal reading: 'local_aggregate')"),
        Field(name="scheduled", kind="int", lo=1,
              doc="clients per server per iteration, at most the fewest clients of a server (omit: all)"),
        Field(name="aggregation", kind="choice", choices=("cache", "fresh"), default="cache",
              applies=lambda v: v["algorithm.scheduled"] is not None, when="algorithm.scheduled is given",
              doc="with scheduling, average the last message of every client that has sent ('cache') or only "
                  "this iteration's ('fresh')"),
    )),
    Section(name="privacy", doc="The noise of Algorithm 2.", **applies_when("algorithm.name", "alg2"), fields=(
        Field(name="phi0", kind="real", lo=0.0, lo_open=True, required=True, doc="first-release zCDP budget phi_0"),
        Field(name="zeta", kind="real", lo=0.0, hi=1.0, lo_open=True, default=1.0, doc="noise decay zeta"),
        Field(name="C", kind="real", lo=0.0, lo_open=True, default=1.0, doc="gradient bound C_k of the sensitivity"),
        Field(name="convention", kind="choice", choices=("I", "II"), default="I",
              doc="'I': release n uses zeta^n delta2(0); 'II': zeta^(n-1) delta2(0)"),
    )),
), renames={"noise_convention": "privacy.convention", "samples": "data.samples_min", "algorithm": "algorithm.name"})

OPTIONS = (
    Option(flag="--iterations", default=300, doc="iterations"),
    *runs_seed_options(seed_doc="seed of scheduling and noise"),
)


@dataclass(frozen=True, kw_only=True)
class Setup(RunSetup):
    """A validated PGFL run: the data (or how to draw it), the algorithm's keyword arguments and the sizes."""

    arrays: dict | None
    data_path: str | None
    synthetic: dict | None
    algorithm: dict
    sizes: dict


def load(v) -> Setup:
    iterations, runs = v.options["iterations"], v.options["runs"]
    rho, rho_rel = v["algorithm.rho"], v["algorithm.rho_over_Lmax"]
    if (rho is None) == (rho_rel is None):
        raise ConfigError("algorithm.rho: give exactly one of algorithm.rho and algorithm.rho_over_Lmax")
    if sum(v[k] is not None for k in ("algorithm.tau", "algorithm.tau0", "algorithm.taus")) > 1:
        raise ConfigError("algorithm.tau: give at most one of tau, tau0 (with tau_decay) and taus")
    taus = v["algorithm.taus"]
    if taus is not None and len(taus) > iterations:
        raise ConfigError(f"algorithm.taus must be a non-empty list of at most --iterations = {iterations} reals "
                          f"in [0, 1], got {len(taus)} values")
    from reference_impl.pgfl import PGFLConfig
    from reference_impl.pgfl.run_report import npz_sizes, pgfl_algorithm_kwargs, synthetic_sizes

    algorithm = pgfl_algorithm_kwargs(**v.section("algorithm"), **v.section("privacy"))
    arrays = synthetic = data_path = None
    if v["data.source"] == "npz":
        data_path, arrays = read_npz(v, "data.path", bool_keys=("adjacency",))
        sizes = dict(npz_sizes(arrays), field="data.path")
    else:
        if v["model.loss"] != "ridge":
            raise ConfigError("model.loss must be 'ridge' for data.source = 'synthetic' (regression data)")
        synthetic = {k: x for k, x in v.section("data").items() if k not in ("source", "path")}
        sizes = dict(synthetic_sizes(synthetic), field="data.d")
        if synthetic["clusters"] > sizes["K"]:
            raise ConfigError(f"data.clusters must be an integer in [1, K = servers x clients_per_server = "
                              f"{sizes['K']}] (a cluster needs a client), got {synthetic['clusters']}")
    if arrays is None and (v["algorithm.scheduled"] or 0) > v["data.clients_per_server"]:
        raise ConfigError(f"algorithm.scheduled must be an integer in [1, {v['data.clients_per_server']}] (the "
                          f"fewest clients of a server), got {v['algorithm.scheduled']}")
    if rho is not None:
        with SCHEMA.blame("algorithm"):
            PGFLConfig(**algorithm)
    return Setup(v=v, arrays=arrays, data_path=None if data_path is None else str(data_path), synthetic=synthetic,
                 algorithm=algorithm, iterations=iterations, runs=runs, seed=v.options["seed"], sizes=sizes)


def estimate(s: Setup) -> list[Cost]:
    K, S, Q, d, data = (s.sizes[k] for k in ("K", "S", "Q", "d", "data"))
    state = K * d + S * Q * d
    costs = [Cost(phase="the data K x samples_max x d", field=s.sizes["field"], memory=data, work=data)]
    if s.synthetic is not None:
        edges = min(int(round(s.synthetic["average_degree"] * S / 2)), S * (S - 1) // 2)
        costs.append(connected_gnm(S, edges, "data.average_degree" if S > 1 else "data.servers",
                                   what="server graph G(S, m)"))
        costs.append(Cost(phase="the synthetic clients (one draw per client)", field="data.clients_per_server",
                          steps=K / 100))
    costs.append(Cost(phase="the state runs x (K d + S Q d)", field="argument --runs", memory=s.runs * state))
    costs.append(Cost(phase="the work iterations x runs x (data + state)", field="argument --iterations",
                      work=float(s.iterations) * s.runs * (data + state), steps=s.iterations))
    return costs


def build_problem(s: Setup):
    """The problem of the setup (:func:`reference_impl.pgfl.run_report.pgfl_run_problem`); ConfigError names the
    field."""
    from reference_impl.pgfl.run_report import pgfl_run_problem

    with SCHEMA.blame("data") if s.arrays is None else blame_file("data.path", s.data_path):
        return pgfl_run_problem(arrays=s.arrays, synthetic=s.synthetic, **s.v.section("model"))


def build_config(s: Setup, problem):
    from reference_impl.pgfl.run_report import pgfl_run_config

    with SCHEMA.blame("algorithm"):
        return pgfl_run_config(problem, s.algorithm, s.iterations, rho_over_Lmax=s.v["algorithm.rho_over_Lmax"],
                               tau0=None if s.v["algorithm.tau0"] is None else (s.v["algorithm.tau0"],
                                                                                  s.v["algorithm.tau_decay"]))


def run(s: Setup, rng) -> dict:
    from reference_impl.pgfl.run_report import pgfl_run_document

    problem = build_problem(s)
    return pgfl_run_document(problem, build_config(s, problem), s.iterations, rng, runs=s.runs)


SUMMARY_TITLE = "PGFL {s.algorithm[algorithm]}: {s.iterations} iterations, {s.runs} run(s), seed {s.seed}"
SUMMARY = (
    Row(label="status", key=lambda s, r: r["status"] if r["status"] == "ok" else
        f"diverging: {r['warning']}" if r["status"] == "diverging" else
        "diverged (some models are not finite: try a smaller step, i.e. a larger rho)"),
    Row(label="NMSD after the last iteration (dB)", key="nmsd_db", show="last", optional=True),
    Row(label="server models (mean over runs)", key=lambda s, r: f"{len(r['server_models'])} servers x "
        f"{len(r['server_models'][0]) if r['server_models'] else 0} clusters (use --json for the values)"),
)
#: ``--plot``: the NMSD learning curve (dB, mean over the runs).
FIGURES = (Plot(name="pgfl_run", title="PGFL: learning curve ({s.runs} run(s))", xlabel="iteration n",
                ylabel="NMSD (dB)", lines=(Line(label="NMSD, mean over runs", key="nmsd_db"),), optional=True),)


def plot_unavailable(s: Setup) -> str | None:
    """Why ``--plot`` has nothing to draw for this setup (None: it has)."""
    if s.arrays is not None and s.arrays.get("true_models") is None:
        return ("the learning curve (NMSD) needs the true cluster models: true_models in data.path's .npz, or "
                "data.source = 'synthetic'")
    return None
