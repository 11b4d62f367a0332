"""``fedcheck run pgfl CONFIG.toml``: the reference PGFL (seed 000, Algorithms 1-2) on a configuration.

See ``docs/papers/pgfl.md``. ``--json`` prints ``{"iterations", "runs", "status", "server_models": [S][Q][d],
"client_models": [K][d], "nmsd_db": [...]}``: models averaged over the runs, ``nmsd_db`` only when the true
cluster models are known, ``status`` "ok" or "diverged" (some values are not finite and are null).
"""

from __future__ import annotations

from dataclasses import dataclass

from fedcheck.run._api import ConfigError, Cost, Field, Option, Schema, Section, read_npz
from fedcheck.run._budget import connected_gnm
from fedcheck.run._schema import clean_message

NAME = "pgfl"
TITLE = "PGFL (Algorithms 1-2 of seed 000) from a TOML configuration"

_SYN = dict(applies=lambda v: v["data.source"] == "synthetic", when="data.source = 'synthetic'")
_POS = dict(kind="int", lo=1)

SCHEMA = Schema(sections=(
    Section(name="data", doc="The federation and its data: synthetic regression (seed 000's regression setting) or "
                             "your own arrays.", fields=(
        Field(name="source", kind="choice", choices=("synthetic", "npz"), default="synthetic",
              doc="'synthetic': the regression data of the paper's experiment; 'npz': the arrays of data.path"),
        Field(name="path", kind="str", required=True, applies=lambda v: v["data.source"] == "npz",
              when="data.source = 'npz'",
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
    Section(name="privacy", doc="The noise of Algorithm 2.", applies=lambda v: v["algorithm.name"] == "alg2",
            when="algorithm.name = 'alg2'", fields=(
        Field(name="phi0", kind="real", lo=0.0, lo_open=True, required=True, doc="first-release zCDP budget phi_0"),
        Field(name="zeta", kind="real", lo=0.0, hi=1.0, lo_open=True, default=1.0, doc="noise decay zeta"),
        Field(name="C", kind="real", lo=0.0, lo_open=True, default=1.0, doc="gradient bound C_k of the sensitivity"),
        Field(name="convention", kind="choice", choices=("I", "II"), default="I",
              doc="'I': release n uses zeta^n delta2(0); 'II': zeta^(n-1) delta2(0)"),
    )),
), renames={"noise_convention": "privacy.convention", "samples": "data.samples_min", "algorithm": "algorithm.name"})

OPTIONS = (
    Option(flag="--iterations", default=300, doc="iterations"),
    Option(flag="--runs", default=1, doc="Monte-Carlo runs"),
    Option(flag="--seed", default=0, lo=0, metavar="S", doc="seed of scheduling and noise"),
)


@dataclass(frozen=True, kw_only=True)
class Setup:
    """A validated PGFL run: the data (or how to draw it), the algorithm's keyword arguments and the sizes."""

    arrays: dict | None
    data_path: str | None
    synthetic: dict | None
    loss: str
    lam: float
    algorithm: dict
    rho_over_Lmax: float | None
    tau0: tuple[float, float] | None
    iterations: int
    runs: int
    seed: int
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

    if v["algorithm.tau0"] is not None:  # one value for now: the schedule's length comes after the estimate
        schedule = PGFLConfig.geometric_tau(v["algorithm.tau0"], v["algorithm.tau_decay"], 1)
    elif taus is not None:
        schedule = tuple(taus)
    else:
        schedule = (v["algorithm.tau"] if v["algorithm.tau"] is not None else 0.0,)
    algorithm = dict(rho=rho, taus=schedule, algorithm=v["algorithm.name"], scheduled=v["algorithm.scheduled"])
    for key, name in (("algorithm.dual_ref", "dual_ref"), ("algorithm.aggregation", "aggregation"),
                      ("privacy.phi0", "phi0"), ("privacy.zeta", "zeta"), ("privacy.C", "C"),
                      ("privacy.convention", "noise_convention")):
        if v[key] is not None:
            algorithm[name] = v[key]
    arrays = synthetic = data_path = None
    if v["data.source"] == "npz":
        data_path, arrays = read_npz(v, "data.path", bool_keys=("adjacency",))
        K = sum(1 for k in arrays if k.startswith("X_"))
        X = [arrays.get(f"X_{k}") for k in range(K)]
        if any(x is None or x.ndim != 2 for x in X) or not X:
            d = 1
        else:
            d = X[0].shape[1]
        data_size = sum(x.size for x in X if x is not None)
        S = int(arrays["client_server"].max()) + 1 if arrays.get("client_server") is not None and \
            arrays["client_server"].size else 1
        Q = int(arrays["client_cluster"].max()) + 1 if arrays.get("client_cluster") is not None and \
            arrays["client_cluster"].size else 1
        sizes = dict(K=K, S=max(S, 1), Q=max(Q, 1), d=d, data=data_size, field="data.path")
    else:
        if v["model.loss"] != "ridge":
            raise ConfigError("model.loss must be 'ridge' for data.source = 'synthetic' (regression data)")
        S, per, d = v["data.servers"], v["data.clients_per_server"], v["data.d"]
        if v["data.clusters"] > S * per:
            raise ConfigError(f"data.clusters must be an integer in [1, K = servers x clients_per_server = {S * per}] "
                              f"(a cluster needs a client), got {v['data.clusters']}")
        synthetic = dict(servers=S, clients_per_server=per, d=d, clusters=v["data.clusters"],
                         samples=(v["data.samples_min"], v["data.samples_max"]), gamma=v["data.gamma"],
                         noise_variance=v["data.noise_variance"], average_degree=v["data.average_degree"],
                         seed=v["data.seed"])
        sizes = dict(K=S * per, S=S, Q=v["data.clusters"], d=d, data=S * per * v["data.samples_max"] * d,
                     field="data.d")
    if v["algorithm.scheduled"] is not None and arrays is None:
        if v["algorithm.scheduled"] > v["data.clients_per_server"]:
            raise ConfigError(f"algorithm.scheduled must be an integer in [1, {v['data.clients_per_server']}] (the "
                              f"fewest clients of a server), got {v['algorithm.scheduled']}")
    if rho is not None:
        with SCHEMA.blame("algorithm"):
            PGFLConfig(**algorithm)
    return Setup(arrays=arrays, data_path=None if data_path is None else str(data_path), synthetic=synthetic,
                 loss=v["model.loss"], lam=v["model.lam"], algorithm=algorithm,
                 tau0=(v["algorithm.tau0"], v["algorithm.tau_decay"]) if v["algorithm.tau0"] is not None else None,
                 rho_over_Lmax=rho_rel, iterations=iterations, runs=runs, seed=v.options["seed"], sizes=sizes)


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


def _problem(s: Setup):
    import numpy as np

    from reference_impl.pgfl import pgfl_problem_from_arrays, synthetic_regression

    if s.arrays is not None:
        try:
            return pgfl_problem_from_arrays(s.arrays, loss=s.loss, lam=s.lam)
        except ValueError as exc:
            raise ConfigError(f"data.path {s.data_path!r}: {clean_message(exc)}") from None
    opts = dict(s.synthetic)
    seed = opts.pop("seed")
    with SCHEMA.blame("data"):
        return synthetic_regression(np.random.default_rng(seed), lam=s.lam, **opts)


def _config(s: Setup, problem):
    from reference_impl.pgfl import PGFLConfig

    kwargs = dict(s.algorithm)
    if s.tau0 is not None:
        kwargs["taus"] = PGFLConfig.geometric_tau(*s.tau0, s.iterations)
    smallest = int(problem.clients_per_server.min())
    if kwargs["scheduled"] is not None and kwargs["scheduled"] > smallest:
        raise ConfigError(f"algorithm.scheduled must be an integer in [1, {smallest}] (the fewest clients of a "
                          f"server), got {kwargs['scheduled']}")
    if s.rho_over_Lmax is not None:
        rho = s.rho_over_Lmax * problem.max_curvature
        if not (rho > 0 and rho < float("inf")):
            raise ConfigError(f"algorithm.rho_over_Lmax: rho = rho_over_Lmax x L_max = {s.rho_over_Lmax:g} x "
                              f"{problem.max_curvature:g} is not a finite real > 0")
        kwargs["rho"] = rho
    with SCHEMA.blame("algorithm"):
        return PGFLConfig(**kwargs)


def run(s: Setup, rng) -> dict:
    import numpy as np

    from reference_impl.pgfl import nmsd_observer, run_pgfl

    problem = _problem(s)
    config = _config(s, problem)
    observe = nmsd_observer(problem) if problem.true_models is not None else None
    result = run_pgfl(problem, config, s.iterations, rng, runs=s.runs, observe=observe)
    servers, clients = result.state.w_servers.mean(axis=0), result.state.w_clients.mean(axis=0)
    nmsd_db = 10.0 * np.log10(result.observations.mean(axis=1)) if observe is not None else None
    finite = bool(np.all(np.isfinite(servers)) and np.all(np.isfinite(clients))
                  and (nmsd_db is None or np.all(np.isfinite(nmsd_db))))
    out = {"iterations": s.iterations, "runs": s.runs, "status": "ok" if finite else "diverged",
           "server_models": servers.tolist(), "client_models": clients.tolist()}
    if nmsd_db is not None:
        out["nmsd_db"] = nmsd_db.tolist()
    return out


def summarize(s: Setup, r: dict):
    rows = [("status", r["status"] if r["status"] == "ok" else
             "diverged (some models are not finite: try a smaller step, i.e. a larger rho)")]
    if "nmsd_db" in r:
        rows.append(("NMSD after the last iteration (dB)", r["nmsd_db"][-1]))
    rows.append(("server models (mean over runs)", f"{len(r['server_models'])} servers x "
                 f"{len(r['server_models'][0]) if r['server_models'] else 0} clusters (use --json for the values)"))
    return (f"PGFL {s.algorithm['algorithm']}: {s.iterations} iterations, {s.runs} run(s), seed {s.seed}"), rows


def plot_unavailable(s: Setup) -> str | None:
    """Why ``--plot`` has nothing to draw for this setup (None: it has)."""
    if s.arrays is not None and s.arrays.get("true_models") is None:
        return ("the learning curve (NMSD) needs the true cluster models: true_models in data.path's .npz, or "
                "data.source = 'synthetic'")
    return None


def figures(s: Setup, r: dict) -> list:
    """``--plot``: the NMSD learning curve (dB, mean over the runs)."""
    from fedcheck._plot import figure_spec, series

    values = r.get("nmsd_db") or []
    return [figure_spec("pgfl_run", f"PGFL: learning curve ({s.runs} run(s))", "iteration n", "NMSD (dB)",
                        [series("NMSD, mean over runs", range(len(values)), values)])]
