"""``fedcheck run npfl-rl CONFIG.toml``: one arm of NPFL-RL (thesis ch. 6) on generated instances.

See ``docs/papers/npfl_rl.md``. The arm is NFL, NPFL with a fixed tau, or NPFL-RL/BRL with the DPG or SAC
controller ([algorithm]); the instances follow the generator I0 (docs/papers/npfl_rl.md#instance-i0) ([instance]). Run r
(r = 0..R-1) is the instance of replicate seed S + r; the runs are vectorised. ``--json`` prints ``{"label",
"iterations", "runs", "seed", "status", "test_mse_db": [N+1], "nmsd_db": [N+1], "test_mse_db_runs": [R][N+1], "tau":
{"clients": [R][3], "D_k": [R][3], "trajectories": [R][3][N+1]}, "tau_final": [R][K], "ill_posed_evaluations": [R],
"config": {...}}``: the Test MSE (6.15) as printed (denominator ||w_q||) and with ||w_q||^2, averaged over the runs in
the linear domain then in dB; the tau trajectories of the clients with the largest, median and smallest D_k; ``status``
"ok", "ill_posed" (some evaluation of P(a) was not positive definite: unprojected mode) or "diverged"; non-finite values
are null.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from fedcheck.run._api import ConfigError, Cost, Field, Option, Schema, Section
from fedcheck.run._budget import DRAW_MARGIN, connected_er

NAME = "npfl-rl"
TITLE = "NPFL-RL / NPFL / NFL (thesis ch. 6) from a TOML configuration"

#: Draws of the generator's graph tried until an admissible one (its own cap).
MAX_DRAWS = 10_000
_CONTROLLER = dict(applies=lambda v: v["algorithm.policy"] != "fixed", when="algorithm.policy is 'dpg' or 'sac'")
_NPFL = dict(applies=lambda v: v["algorithm.algorithm"] == "npfl", when="algorithm.algorithm = 'npfl'")

SCHEMA = Schema(sections=(
    Section(name="simulation", doc="The run's length.", fields=(
        Field(name="iterations", kind="int", lo=1, default=300, option="--iterations", doc="iterations N"),
    )),
    Section(name="instance", doc="The generator I0 (docs/papers/npfl_rl.md#instance-i0): each replicate seed draws its "
                                 "own graph, labels, models and data.",
            fields=(
        Field(name="K", kind="int", lo=2, default=30, doc="clients K"),
        Field(name="Q", kind="int", lo=1, hi=lambda v: v["instance.K"], hi_text="instance.K", default=3,
              doc="clusters Q (labels uniform, all non-empty)"),
        Field(name="d", kind="int", lo=1, default=60, doc="features / model size d"),
        Field(name="mean_degree", kind="real", lo=0.0, lo_open=True, hi=lambda v: v["instance.K"] - 1,
              hi_text="instance.K - 1", default=6.0,
              doc="Erdos-Renyi with p = mean_degree / (K - 1), redrawn until connected"),
        Field(name="D_min", kind="int", lo=1, default=5, doc="fewest training samples D_k"),
        Field(name="D_max", kind="int", lo=lambda v: v["instance.D_min"], lo_text="instance.D_min", default=35,
              doc="most training samples D_k (validation and test sets: D_k each)"),
        Field(name="noise_min", kind="real", lo=0.0, default=0.005, doc="smallest noise variance"),
        Field(name="noise_max", kind="real", lo=lambda v: v["instance.noise_min"], lo_text="instance.noise_min",
              default=0.03, doc="largest noise variance (client k's ~ U(noise_min, noise_max))"),
        Field(name="lam", kind="real", lo=0.0, lo_open=True, default=0.1, doc="lambda"),
        Field(name="delta_half_width", kind="real", lo=0.0, default=0.5,
              doc="delta_q ~ U(-w, w); w_q = (1 + delta_q) w_0, w_0 ~ N(0, I_d)"),
        Field(name="delta_kind", kind="choice", choices=("scalar", "elementwise"), default="scalar",
              doc="delta_q a scalar (as printed) or a vector"),
    )),
    Section(name="algorithm", doc="The arm.", fields=(
        Field(name="algorithm", kind="choice", choices=("npfl", "nfl"), default="npfl",
              doc="'npfl' (NPFL / NPFL-RL) or 'nfl' (the single-model baseline)"),
        Field(name="rho", kind="real", lo=0.0, lo_open=True, default=3.0, doc="ADMM penalty rho"),
        Field(name="policy", kind="choice", choices=("fixed", "dpg", "sac"), default="fixed",
              applies=_NPFL["applies"], when=_NPFL["when"],
              doc="'fixed' (NPFL with tau_k = tau0), 'dpg' (6.13) or 'sac' (6.14)"),
        Field(name="tau0", kind="real", lo=0.0, default=0.05, doc="the fixed tau, or the controllers' tau_k^(0)",
              **_NPFL),
        Field(name="delta", kind="real", lo=0.0, lo_open=True, default=0.001,
              doc="policy rate: delta_DPG (0.001 RL, 0.003 BRL) or delta_SAC (0.1 RL, 0.04 BRL)", **_CONTROLLER),
        Field(name="nu", kind="real", lo=0.0, lo_open=True, default=0.05,
              applies=lambda v: v["algorithm.policy"] == "sac", when="algorithm.policy = 'sac'",
              doc="SAC exploration width nu_SAC (alpha ~ U[-nu/2, nu/2])"),
        Field(name="epochs", kind="int", lo=1, default=1, doc="inner policy steps per iteration (1 = RL, 3 = BRL)",
              **_CONTROLLER),
        Field(name="projection", kind="bool", default=True,
              doc="project tau onto [0, tau_max] (false: the literal, unprojected mode)", **_NPFL),
        Field(name="tau_max", kind="real", lo=0.0, lo_open=True, default=1.0,
              applies=lambda v: v["algorithm.algorithm"] == "npfl" and v["algorithm.projection"],
              when="algorithm.projection = true", doc="upper end of the projection"),
        Field(name="clip_candidates", kind="bool", default=False,
              applies=lambda v: v["algorithm.policy"] == "sac" and v["algorithm.projection"],
              when="algorithm.policy = 'sac' and algorithm.projection = true",
              doc="also project the SAC candidate tau + alpha"),
        Field(name="timing", kind="choice", choices=("literal", "online"), default="literal",
              doc="'literal': tau^(n) from the cached map P^(n-1); 'online': from P^(n)", **_CONTROLLER),
        Field(name="convention", kind="choice", choices=("E0", "E1"), default="E0",
              doc="empty N_k^(r): 'E0' drop the cluster, keep 1/(Q-1); 'E1' renormalise", **_NPFL),
        Field(name="dual_sign", kind="choice", choices=("corrected", "printed"), default="corrected",
              doc="'corrected' (w_k - w_l); 'printed' is the erratum mode of (6.6), it diverges"),
        Field(name="diagonal", kind="choice", choices=("corrected", "printed"), default="corrected",
              doc="'corrected' rho|N_k cap C_q|; 'printed' rho|N_k| is the erratum mode of (6.11)"),
    )),
))

OPTIONS = (
    Option(flag="--iterations", field="simulation.iterations", doc="iterations"),
    Option(flag="--runs", default=1, doc="independent instances, replicate seeds S..S+R-1"),
    Option(flag="--seed", default=0, lo=0, metavar="S", doc="first replicate seed"),
)


@dataclass(frozen=True, kw_only=True)
class Setup:
    """A validated NPFL run: the generator's arguments, the arm, the sizes."""

    instance: dict
    config: Any
    iterations: int
    runs: int
    seed: int
    v: Any


def load(v) -> Setup:
    from reference_impl.npfl_rl import NPFLConfig

    i = {k.split(".", 1)[1]: v[k] for k in v if k.startswith("instance.")}
    instance = {"K": i["K"], "Q": i["Q"], "d": i["d"], "mean_degree": i["mean_degree"],
                "D_range": (i["D_min"], i["D_max"]), "noise_range": (i["noise_min"], i["noise_max"]),
                "lam": i["lam"], "delta_half_width": i["delta_half_width"], "delta_kind": i["delta_kind"]}
    a = {k.split(".", 1)[1]: v[k] for k in v if k.startswith("algorithm.") and v[k] is not None}
    with SCHEMA.blame("algorithm"):
        config = NPFLConfig(**a)
    return Setup(instance=instance, config=config, iterations=v["simulation.iterations"], runs=v.options["runs"],
                 seed=v.options["seed"], v=v)


#: The sizes that drive a run's cost -> (their default, how the user names them); a refusal names the one that lifts
#: the cost furthest above what it would be at its default.
_DRIVERS = {"K": (30, "instance.K"), "d": (60, "instance.d"), "D_max": (35, "instance.D_max"),
            "iterations": (300, "simulation.iterations"), "runs": (1, "--runs"), "epochs": (1, "algorithm.epochs")}


def _edges_upper(K: int, mean_degree: float) -> int:
    """An upper value of the edges of G(K, p = mean_degree / (K - 1)): the mean plus six standard deviations."""
    pairs = K * (K - 1) // 2
    p = min(mean_degree / (K - 1), 1.0)
    return int(min(pairs, math.ceil(pairs * p + 6.0 * math.sqrt(pairs * p * (1.0 - p)))))


def _run_cost(sizes: dict, mean_degree: float, policy: str):
    from reference_impl.npfl_rl import estimate_run_cost

    return estimate_run_cost(sizes["K"], sizes["d"], _edges_upper(sizes["K"], mean_degree),
                             iterations=sizes["iterations"], runs=sizes["runs"], policy=policy,
                             epochs=sizes["epochs"], D_max=sizes["D_max"])


def _driver(s: Setup, sizes: dict, measure) -> str:
    """The size whose value lifts ``measure`` (of the run's cost) furthest above its value at that size's default;
    named as the user named it."""
    c, policy = s.instance["mean_degree"], s.config.policy
    full = measure(_run_cost(sizes, c, policy))
    ratios = {}
    for key, (default, field) in _DRIVERS.items():
        if key == "epochs" and policy == "fixed":
            continue
        at_default = dict(sizes, **{key: default})
        if key == "K":
            at_default["K"] = max(default, 2)
            degree = min(c, at_default["K"] - 1)
        else:
            degree = c
        ratios[field] = full / max(measure(_run_cost(at_default, degree, policy)), 1.0)
    field = max(ratios, key=ratios.get)
    return "argument --runs" if field == "--runs" else s.v.label(field)


def estimate(s: Setup) -> list[Cost]:
    """The graph draws (:func:`reference_impl.npfl_rl.data.estimate_graph_draws`, refused near ``max_draws``) and the
    run by :func:`reference_impl.npfl_rl.estimate_run_cost` (the instances, the set-up, the iterations; sparse
    graph operators, no K x K array), with the edges taken at their mean plus six standard deviations. A phase over
    a limit names the size that lifts its cost furthest above the cost at that size's default."""
    from reference_impl.npfl_rl.data import PAIRS_SAMPLER_MAX_PAIRS

    K, Q, d, c = s.instance["K"], s.instance["Q"], s.instance["d"], s.instance["mean_degree"]
    log_labels = Q * math.log1p(-math.exp(min(K * math.log1p(-1.0 / Q), 0.0))) if Q > 1 else 0.0
    if log_labels < math.log(DRAW_MARGIN / MAX_DRAWS):
        raise ConfigError(f"instance.Q: a draw of K = {K} uniform labels uses all Q = {Q} clusters with probability "
                          f"about 10^{log_labels / math.log(10):.3g}, too unlikely in {MAX_DRAWS} draws; use fewer "
                          f"clusters or more clients")
    pairs = K * (K - 1) / 2.0
    edges = K * c / 2.0
    if pairs <= PAIRS_SAMPLER_MAX_PAIRS:   # one uniform per pair, the K x K mask and the pair indices (16 bytes each)
        draw_work, draw_memory = 10.0 * pairs + 20.0 * (K + edges), 2.5 * pairs + K * K / 8.0
    else:                                  # only the edges (geometric gaps) and a breadth-first search
        draw_work, draw_memory = 60.0 * (K + edges), 8.0 * (K + edges)
    graph = connected_er(K, c, "instance.mean_degree" if s.v.given("instance.mean_degree") else "instance.K",
                         max_draws=MAX_DRAWS, what="G(K, p)", log_p_other=log_labels,
                         other=f"every one of Q = {Q} cluster labels used", draw_work=draw_work * s.runs,
                         draw_memory=draw_memory)
    cfg = s.config
    epochs = cfg.epochs if cfg.policy != "fixed" else 1
    sizes = {"K": K, "d": d, "D_max": s.instance["D_range"][1], "iterations": s.iterations, "runs": s.runs,
             "epochs": epochs}
    full = _run_cost(sizes, c, cfg.policy)
    inner = 1 + (epochs if cfg.policy != "fixed" else 0)
    return [
        graph,
        Cost(phase="the instances, set-up, state and records of the runs (estimate_run_cost: K d^2 and the edges "
                   "per run)", field=_driver(s, sizes, lambda r: float(r.peak_elements)),
             memory=float(full.peak_elements)),
        Cost(phase="the work iterations x runs x (K d^2 + |E| d) x (1 + epochs) (estimate_run_cost)",
             field=_driver(s, sizes, lambda r: r.work), work=full.work,
             steps=float(s.iterations) * inner),  # Python-level steps; the runs are vectorised
    ]


def make_rng(s: Setup):
    import numpy as np

    return np.random.default_rng([s.seed, 1])


def run(s: Setup, rng) -> dict:
    import numpy as np

    from reference_impl.npfl_rl import run_npfl
    from reference_impl.npfl_rl.data import synthetic_problem

    problems = []
    for r in range(s.runs):
        try:
            with SCHEMA.blame("instance", D_range="instance.D_min", noise_range="instance.noise_min"):
                problems.append(synthetic_problem(np.random.default_rng([s.seed + r, 0]), **s.instance)[0])
        except RuntimeError as exc:
            raise ConfigError(f"instance.mean_degree: {' '.join(str(exc).split())}") from None
    result = run_npfl(problems, s.config, s.iterations, rng)
    with np.errstate(divide="ignore", invalid="ignore"):
        mse_db = 10.0 * np.log10(np.mean(result.test_mse, axis=0))
        nmsd_db = 10.0 * np.log10(np.mean(result.nmsd, axis=0))
        runs_db = 10.0 * np.log10(result.test_mse)
    tracked = [np.argsort(p.D, kind="stable")[[-1, p.K // 2, 0]] for p in problems]  # largest, median, smallest D_k
    finite = bool(result.finite.all()) and bool(np.all(np.isfinite(mse_db)))
    status = "diverged" if not finite else ("ill_posed" if int(result.ill_posed.sum()) else "ok")
    return {"label": s.config.label, "iterations": s.iterations, "runs": s.runs, "seed": s.seed, "status": status,
            "test_mse_db": mse_db, "nmsd_db": nmsd_db, "test_mse_db_runs": runs_db,
            "tau": {"clients": [t.tolist() for t in tracked],
                    "D_k": [p.D[t].tolist() for p, t in zip(problems, tracked, strict=True)],
                    "trajectories": [result.tau[r][:, t].T for r, t in enumerate(tracked)]},
            "tau_final": result.tau[:, -1], "ill_posed_evaluations": result.ill_posed, "config": asdict(s.config)}


def summarize(s: Setup, r: dict):
    import numpy as np

    rows = [("Test MSE (6.15) after the last iteration, dB", f"{_g(r['test_mse_db'][-1])} (printed ||w_q|| "
             f"denominator), {_g(r['nmsd_db'][-1])} (||w_q||^2)")]
    if s.config.policy != "fixed":
        final = np.asarray(r["tau_final"], dtype=np.float64)
        rows.append(("tau at the end: min, median, max", [float(np.min(final)), float(np.median(final)),
                                                           float(np.max(final))]))
    if r["status"] == "ill_posed":
        rows.append(("ill-posed primal steps", f"{int(np.sum(r['ill_posed_evaluations']))} evaluations of P(a) with "
                     "c_k + omega_k a <= 0 (unprojected mode; set algorithm.projection = true)"))
    rows.append(("curves and tau trajectories", "use --json for all values"))
    return (f"{r['label']}: K = {s.instance['K']}, d = {s.instance['d']}, {s.iterations} iterations, {s.runs} run(s), "
            f"replicate seeds {s.seed}..{s.seed + s.runs - 1}; status {r['status']}"), rows


def _g(x) -> str:
    return "not finite" if x is None or not math.isfinite(float(x)) else f"{float(x):.4g}"


def figures(s: Setup, r: dict) -> list:
    """``--plot``: the Test MSE (6.15) in dB (both denominators), and with a controller the tau trajectories of the
    first run's clients with the largest, median and smallest D_k."""
    from fedcheck._plot import figure_spec, series

    n = range(len(r["test_mse_db"]))
    out = [figure_spec("npfl_rl_mse", f"{r['label']}: Test MSE (6.15), mean over {s.runs} run(s)", "iteration n",
                       "Test MSE (dB)", [series("denominator ||w_q|| (as printed)", n, r["test_mse_db"]),
                                         series("denominator ||w_q||^2", n, r["nmsd_db"], style="dashed")])]
    if s.config.policy != "fixed":
        clients, sizes, paths = r["tau"]["clients"][0], r["tau"]["D_k"][0], r["tau"]["trajectories"][0]
        curves = [series(f"client {k} ({which} D_k = {d})", range(len(path)), path)
                  for k, d, path, which in zip(clients, sizes, paths, ("largest", "median", "smallest"), strict=True)]
        out.append(figure_spec("npfl_rl_tau", f"{r['label']}: tau trajectories (run 0)", "iteration n", "tau_k",
                               curves))
    return out
