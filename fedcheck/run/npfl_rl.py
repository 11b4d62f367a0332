"""``fedcheck run npfl-rl CONFIG.toml``: one arm of NPFL-RL (thesis ch. 6) on generated instances.

See ``docs/papers/npfl_rl.md``. The arm ([algorithm]) is NFL, NPFL with a fixed tau, or NPFL-RL/BRL with the DPG or SAC
controller on instances of the generator I0 ([instance]). ``--json`` prints the document of
:func:`reference_impl.npfl_rl.run_report.npfl_run_document` (non-finite values are null).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from fedcheck.run._api import ConfigError, Cost, Field, Option, RunSetup, Schema, Section, runs_seed_options
from fedcheck.run._budget import DRAW_MARGIN, connected_er
from fedcheck.run._output import Line, Plot, Row, fmt_real
from fedcheck.run._schema import applies_when

NAME = "npfl-rl"
TITLE = "NPFL-RL / NPFL / NFL (thesis ch. 6) from a TOML configuration"

#: The run's generator is default_rng([seed, 1]); replicate r's instance draws from default_rng([seed + r, 0]).
RNG_STREAM = 1
_CONTROLLER = dict(applies=lambda v: v["algorithm.policy"] != "fixed", when="algorithm.policy is 'dpg' or 'sac'")
_NPFL = applies_when("algorithm.algorithm", "npfl")

SCHEMA = Schema(sections=(
    Section(name="simulation", doc="The run's length.", fields=(
        Field(name="iterations", kind="int", lo=1, default=300, option="--iterations", doc="iterations N"),
    )),
    Section(name="instance", doc="The generator I0 (docs/papers/npfl_rl.md#instance-i0): each replicate seed draws its "
                                 "own graph, labels, models and data.", fields=(
        Field(name="K", kind="int", lo=2, default=30, doc="clients K"),
        Field(name="Q", kind="int", lo=1, hi=lambda v: v["instance.K"], hi_text="instance.K", default=3,
              doc="clusters Q (labels uniform, all non-empty)"),
        Field(name="d", kind="int", lo=1, default=60, doc="features / model size d"),
        Field(name="mean_degree", kind="real", lo=0.0, lo_open=True, hi=lambda v: v["instance.K"] - 1, default=6.0,
              hi_text="instance.K - 1", doc="Erdos-Renyi with p = mean_degree / (K - 1), redrawn until connected"),
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
        Field(name="policy", kind="choice", choices=("fixed", "dpg", "sac"), default="fixed", **_NPFL,
              doc="'fixed' (NPFL with tau_k = tau0), 'dpg' (6.13) or 'sac' (6.14)"),
        Field(name="tau0", kind="real", lo=0.0, default=0.05, doc="the fixed tau, or the controllers' tau_k^(0)",
              **_NPFL),
        Field(name="delta", kind="real", lo=0.0, lo_open=True, default=0.001,
              doc="policy rate: delta_DPG (0.001 RL, 0.003 BRL) or delta_SAC (0.1 RL, 0.04 BRL)", **_CONTROLLER),
        Field(name="nu", kind="real", lo=0.0, lo_open=True, default=0.05, **applies_when("algorithm.policy", "sac"),
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
    *runs_seed_options(runs_doc="independent instances, replicate seeds S..S+R-1", seed_doc="first replicate seed"),
)


@dataclass(frozen=True, kw_only=True)
class Setup(RunSetup):
    """A validated NPFL run: the generator's arguments and the arm."""

    instance: dict
    config: Any


def load(v) -> Setup:
    from reference_impl.npfl_rl import NPFLConfig
    from reference_impl.npfl_rl.run_report import generator_kwargs

    with SCHEMA.blame("algorithm"):
        config = NPFLConfig(**v.section("algorithm", drop_none=True))
    return Setup(v=v, instance=generator_kwargs(**v.section("instance")), config=config,
                 iterations=v["simulation.iterations"], runs=v.options["runs"], seed=v.options["seed"])


#: How the user names each size of :data:`reference_impl.npfl_rl.run_report.SIZE_DEFAULTS`.
_SIZE_FIELDS = {"K": "instance.K", "d": "instance.d", "D_max": "instance.D_max", "iterations": "simulation.iterations",
                "runs": "argument --runs", "epochs": "algorithm.epochs"}


def estimate(s: Setup) -> list[Cost]:
    """The graph draws (refused near ``max_draws``) and the run (:func:`reference_impl.npfl_rl.run_report.
    npfl_run_costs`: sparse graph operators, no K x K array); a phase over a limit names its driving size."""
    from reference_impl.npfl_rl.run_report import MAX_DRAWS, npfl_run_costs

    K, Q, c = s.instance["K"], s.instance["Q"], s.instance["mean_degree"]
    cost = npfl_run_costs(K=K, Q=Q, d=s.instance["d"], mean_degree=c, D_max=s.instance["D_range"][1],
                          iterations=s.iterations, runs=s.runs, policy=s.config.policy, epochs=s.config.epochs)
    if cost.log_labels < math.log(DRAW_MARGIN / MAX_DRAWS):
        raise ConfigError(f"instance.Q: a draw of K = {K} uniform labels uses all Q = {Q} clusters with probability "
                          f"about 10^{cost.log_labels / math.log(10):.3g}, too unlikely in {MAX_DRAWS} draws; use "
                          f"fewer clusters or more clients")
    label = {k: s.v.label(f) if k != "runs" else f for k, f in _SIZE_FIELDS.items()}
    return [connected_er(K, c, "instance.mean_degree" if s.v.given("instance.mean_degree") else "instance.K",
                         max_draws=MAX_DRAWS, what="G(K, p)", log_p_other=cost.log_labels,
                         other=f"every one of Q = {Q} cluster labels used", draw_work=cost.draw_work * s.runs,
                         draw_memory=cost.draw_memory),
            Cost(phase="the instances, set-up, state and records of the runs (estimate_run_cost: K d^2 and the edges "
                       "per run)", field=label[cost.memory_driver], memory=cost.memory),
            Cost(phase="the work iterations x runs x (K d^2 + |E| d) x (1 + epochs) (estimate_run_cost)",
                 field=label[cost.work_driver], work=cost.work, steps=cost.steps)]  # the runs are vectorised


def run(s: Setup, rng) -> dict:
    from reference_impl.npfl_rl.run_report import npfl_run_document, npfl_run_problems

    try:
        with SCHEMA.blame("instance", D_range="instance.D_min", noise_range="instance.noise_min"):
            problems = npfl_run_problems(s.instance, s.seed, s.runs)
    except RuntimeError as exc:
        raise ConfigError(f"instance.mean_degree: {' '.join(str(exc).split())}") from None
    return npfl_run_document(problems, s.config, s.iterations, rng, seed=s.seed)


SUMMARY_TITLE = ("{r[label]}: K = {s.instance[K]}, d = {s.instance[d]}, {s.iterations} iterations, {s.runs} run(s), "
                 "replicate seeds {r[_summary][seeds]}; status {r[status]}")
_CONTROLLED = dict(when=lambda s, r: s.config.policy != "fixed")
SUMMARY = (
    Row(label="status", text="diverging: {r[warning]}", when=lambda s, r: r["status"] == "diverging"),
    Row(label="Test MSE (6.15) after the last iteration, dB", key=lambda s, r: f"{fmt_real(r['test_mse_db'][-1])} "
        f"(printed ||w_q|| denominator), {fmt_real(r['nmsd_db'][-1])} (||w_q||^2)"),
    Row(label="tau at the end: min, median, max", key="_summary.tau_ends", **_CONTROLLED),
    Row(label="ill-posed primal steps", when=lambda s, r: r["status"] == "ill_posed", text="{r[_summary][ill_posed]} "
        "evaluations of P(a) with c_k + omega_k a <= 0 (unprojected mode; set algorithm.projection = true)"),
    Row(label="curves and tau trajectories", text="use --json for all values"),
)
#: ``--plot``: the Test MSE (6.15) in dB (both denominators), and with a controller the tau trajectories of the first
#: run's clients with the largest, median and smallest D_k.
FIGURES = (
    Plot(name="npfl_rl_mse", title="{r[label]}: Test MSE (6.15), mean over {s.runs} run(s)", xlabel="iteration n",
         ylabel="Test MSE (dB)", lines=(Line(label="denominator ||w_q|| (as printed)", key="test_mse_db"),
                                        Line(label="denominator ||w_q||^2", key="nmsd_db", style="dashed"))),
    Plot(name="npfl_rl_tau", title="{r[label]}: tau trajectories (run 0)", xlabel="iteration n", ylabel="tau_k",
         lines=tuple(Line(label=f"client {{r[tau][clients][0][{i}]}} ({which} D_k = {{r[tau][D_k][0][{i}]}})",
                          key=f"tau.trajectories.0.{i}") for i, which in enumerate(("largest", "median", "smallest"))),
         **_CONTROLLED),
)
