"""``fedcheck run fedpdm CONFIG.toml``: FedPDM-DP (seed 001, Algorithm 1) or a reconstructed DP baseline.

See ``docs/papers/fedpdm.md``. ``--json`` prints the document of
:func:`reference_impl.fedpdm.run_report.fedpdm_run_document`: the curves (means over runs for t = 0..T), the certified
smoothness bracket, the noise, the privacy block and notes on why a finite run did not learn. Non-finite values are
null and ``status`` says why.

``privacy`` of FedPDM-DP is :func:`reference_impl.fedpdm.account_run` under ``algorithm.privacy_model`` for run 0
(``model``, ``is_bound``, ``status``, ``delta``, ``q``, ``participations``, ``epsilon_per_client``, ``epsilon_max``,
``worst_client``, ``mu_per_client``): by default ``history_gaussian``, a proven bound for the algorithm as run;
beside it ``paper``, the paper's subsampled accountant, labelled as not a bound (the client keeps its state across
rounds: fedcheck claim ``fedpdm.theorem2_carryover``). A baseline's ``privacy`` is dp-accounting's per-client totals
(RDP for every client, PLD for the busiest; Poisson-subsampled Gaussian at q = E b/|D_i|) under the
independent-rounds model, labelled as such.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from types import SimpleNamespace
from typing import Any

from fedcheck.run._api import RUNS_SEED_OPTIONS, ConfigError, Cost, Field, Option, RunSetup, Schema, Section, read_npz
from fedcheck.run._output import Line, Plot, Row, fmt_bracket, fmt_real
from fedcheck.run._schema import applies_when, blame_file

NAME = "fedpdm"
TITLE = "FedPDM-DP (or a DP baseline) from a TOML configuration"

SOURCES = ("nc", "digits", "mnist_like", "mnist_npz")
ARMS = ("fedpdm", "fedavg", "fedprox", "scaffold")
#: Noise multipliers beyond this are refused before dp-accounting sees them (its RDP orders overflow there).
MAX_NOISE_MULTIPLIER = 1e6
#: Smallest delta accepted: a normal double (subnormal deltas break the accountants' logarithms).
MIN_DELTA = 1e-300
#: The accounting models of ``algorithm.privacy_model`` (reference_impl.fedpdm.PRIVACY_MODELS).
PRIVACY_MODELS = ("history_gaussian", "paper")


_src = partial(applies_when, "problem.source")
_DP = applies_when("algorithm.noise", "dp")

SCHEMA = Schema(sections=(
    Section(name="problem", doc="The data and the objective (24).", fields=(
        Field(name="source", kind="choice", choices=SOURCES, default="nc",
              doc="'nc' (synthetic l1-logistic), 'digits' (scikit-learn's 8x8 digits, loss (25)), 'mnist_like' "
                  "(synthetic MNIST-shaped data) or 'mnist_npz' (your Keras-layout MNIST .npz)"),
        Field(name="path", kind="str", required=True, doc="the MNIST .npz (x_train, y_train, x_test, y_test), "
                                                          "relative to the config", **_src("mnist_npz")),
        Field(name="N", kind="int", lo=1, default=lambda v: 10 if v["problem.source"] in ("nc", "digits") else 100,
              doc="clients; the training set is split IID into N equal parts (remainder dropped)"),
        Field(name="n", kind="int", lo=1, default=60, doc="samples per client", **_src("nc")),
        Field(name="d", kind="int", lo=1, default=20, doc="features", **_src("nc")),
        Field(name="n_train", kind="int", lo=lambda v: v["problem.N"], lo_text="problem.N", default=60_000,
              doc="training images", **_src("mnist_like")),
        Field(name="n_test", kind="int", lo=1, default=10_000, doc="test images", **_src("mnist_like")),
        Field(name="beta", kind="real", lo=0.0, default=lambda v: 0.1 if v["problem.source"] == "nc" else 1e-2,
              doc="weight of the non-convex term beta sum X^2/(1 + X^2)"),
        Field(name="gamma", kind="real", lo=0.0, default=lambda v: 0.01 if v["problem.source"] == "nc" else 1e-4,
              doc="l1 weight of h = gamma ||X||_1"),
        Field(name="data_seed", kind="int", lo=0, default=0, doc="seed of the split (and of the synthetic data)"),
    )),
    Section(name="algorithm", doc="Algorithm 1's inputs and its noise.", fields=(
        Field(name="K", kind="int", lo=1, hi=lambda v: v["problem.N"], hi_text="problem.N", required=True,
              doc="clients sampled per round t >= 1"),
        Field(name="rounds", kind="int", lo=1, required=True, option="--rounds", doc="rounds T"),
        Field(name="batch_size", kind="int", lo=1, required=True, doc="batch size b"),
        Field(name="batch_rule", kind="choice", choices=("disjoint", "fresh"), default="disjoint",
              doc="'disjoint' (one permutation per round; Q_max b <= |D_i|) or 'fresh' (each step its own batch)"),
        Field(name="rho", kind="real", lo=0.0, lo_open=True, required=True, doc="penalty rho (Theorem 3: rho > 4L)"),
        Field(name="eta0", kind="real", lo=0.0, lo_open=True, required=True, doc="step-size scale eta0"),
        Field(name="eta_schedule", kind="choice", choices=("inv_sqrt", "constant"), default="inv_sqrt",
              doc="eta^t = eta0/sqrt(1 + t) ('inv_sqrt') or eta0 ('constant')"),
        Field(name="nu", kind="real", lo=0.0, required=True, doc="stopping threshold of (11) on ||g||^2 (0: always "
                                                                 "Q_max steps)"),
        Field(name="Q_max", kind="int", lo=1, required=True, doc="cap on the local steps"),
        Field(name="local_start", kind="choice", choices=("warm", "global"), default="warm",
              doc="x_i^{t,0}: 'warm' (x_i^t) or 'global' (x_0^t)"),
        Field(name="init", kind="choice", choices=("zeros", "normal"), default="zeros",
              doc="x_0^0 = 0, or N(0, init_scale^2 I)"),
        Field(name="init_scale", kind="real", lo=0.0, default=0.0, applies=lambda v: v["algorithm.init"] == "normal",
              when="algorithm.init = 'normal'", doc="standard deviation of the normal start"),
        Field(name="first_round_all", kind="bool", default=True, doc="S_0 = [N] (every client in round 0)"),
        Field(name="noise", kind="choice", choices=("dp", "none", "fixed"), default="dp",
              doc="'dp' (sigma = z s of (18)-(19)), 'none' (no noise) or 'fixed' (sigma on every upload)"),
        Field(name="sigma", kind="real", lo=0.0, default=0.0, applies=lambda v: v["algorithm.noise"] == "fixed",
              when="algorithm.noise = 'fixed'", doc="per-coordinate noise standard deviation"),
        Field(name="dp_calibration", kind="choice", choices=("per_round_eps", "target_total_eps_bound",
                                                             "target_total_eps"),
              default="per_round_eps", doc="'per_round_eps': z = sqrt(2 ln(1.25/delta))/epsilon (18); "
                                           "'target_total_eps_bound': the smallest z for which every client's "
                                           "history_gaussian total (a bound for the algorithm as run) is "
                                           "epsilon_total at delta (needs nu = 0 or Q_max = 1); "
                                           "'target_total_eps': the smallest z whose total under the paper's "
                                           "subsampled accountant at the busiest client's realised participation "
                                           "count is epsilon_total (NOT a bound for the algorithm as run)", **_DP),
        Field(name="epsilon", kind="real", lo=0.0, lo_open=True, default=1.0,
              applies=lambda v: v["algorithm.noise"] == "dp" and v["algorithm.dp_calibration"] == "per_round_eps",
              when="algorithm.noise = 'dp' and dp_calibration = 'per_round_eps'", doc="per-round epsilon"),
        Field(name="epsilon_total", kind="real", lo=0.0, lo_open=True, default=7.0,
              applies=lambda v: v["algorithm.noise"] == "dp" and v["algorithm.dp_calibration"] in (
                  "target_total_eps", "target_total_eps_bound"),
              when="algorithm.noise = 'dp' and dp_calibration is 'target_total_eps_bound' or 'target_total_eps'",
              doc="target total epsilon at delta"),
        Field(name="delta", kind="real", lo=MIN_DELTA, hi=1.0, hi_open=True, default=1e-5,
              doc="per-round delta and the accounting target", **_DP),
        Field(name="noise_Q", kind="choice", choices=("adaptive", "cap"), default="cap",
              doc="Q in (19): the realised Q_i^t ('adaptive') or Q_max ('cap')", **_DP),
        Field(name="G", kind="real", lo=0.0, lo_open=True,
              doc="the gradient bound of A3 (default: the certified max ||a|| + (3 sqrt 3/8) beta sqrt d)", **_DP),
        Field(name="prox_threshold_factor", kind="real", lo=0.0, default=1.0,
              doc="threshold factor x gamma/rho of the proximal step (1: the seed's (13))"),
        Field(name="sensitivity_model", kind="choice", choices=("eq19", "history"), default="eq19",
              doc="'eq19': sigma = z s; 'history': sigma = z kappa_n s with the client's history factor "
                  "(needs noise_Q = 'cap')", **_DP),
        Field(name="privacy_model", kind="choice", choices=PRIVACY_MODELS, default="history_gaussian",
              applies=lambda v: v.raw("arm.name", "fedpdm") == "fedpdm", when="arm.name = 'fedpdm'",
              doc="how the run's privacy totals are accounted: 'history_gaussian' (a proven bound for Algorithm 1 as "
                  "run: each upload a Gaussian mechanism of sensitivity kappa_n s_n given the released history, "
                  "composed exactly, no subsampling amplification; a bound only with a fixed number of local steps, "
                  "nu = 0 or Q_max = 1) or 'paper' (Theorem 2's subsampled accountant, reported as NOT a bound: the "
                  "client keeps (x_i, lambda_i) across rounds)"),
    )),
    Section(name="arm", doc="FedPDM-DP or a reconstructed DP baseline.", fields=(
        Field(name="name", kind="choice", choices=ARMS, default="fedpdm",
              doc="'fedpdm' or a reconstructed baseline 'fedavg', 'fedprox', 'scaffold'"),
        Field(name="local_steps", kind="int", lo=1, applies=lambda v: v["arm.name"] != "fedpdm",
              when="arm.name is a baseline", doc="E local SGD steps (default Q_max)"),
        Field(name="eta_cap", kind="real", lo=0.0, lo_open=True, default=0.1,
              applies=lambda v: v["arm.name"] != "fedpdm", when="arm.name is a baseline",
              doc="the eta^t schedule capped at this value"),
        Field(name="mu", kind="real", lo=0.0, default=0.1, applies=lambda v: v["arm.name"] == "fedprox",
              when="arm.name = 'fedprox'", doc="FedProx's proximal weight"),
    )),
))

OPTIONS = (
    Option(flag="--rounds", field="algorithm.rounds", doc="rounds T"),
    *RUNS_SEED_OPTIONS,
)

@dataclass(frozen=True, kw_only=True)
class Setup(RunSetup):
    """A validated FedPDM run (the data not yet built): the records and the problem's sizes (``problem_sizes``)."""

    config: Any
    baseline: Any
    arrays: dict | None
    path: str | None
    N: int
    n: int
    n_features: int
    n_classes: int
    n_test: int


def load(v) -> Setup:
    from reference_impl.fedpdm import BaselineConfig, FedPDMConfig
    from reference_impl.fedpdm.run_report import problem_sizes

    arrays = path = None
    src, N = v["problem.source"], v["problem.N"]
    if src == "mnist_npz":
        from fedcheck.run._api import check_mnist_layout

        path, arrays = read_npz(v, "problem.path")
        check_mnist_layout(path, arrays, "problem.path")
    sizes = problem_sizes(src, N, **{k: v[f"problem.{k}"] for k in ("n", "d", "n_train", "n_test")}, arrays=arrays)
    train = sizes.pop("train")
    if train is not None and N > train:
        where = "the digits' training images" if src == "digits" else "the training images of problem.path"
        raise ConfigError(f"problem.N must be an integer in [1, {train}] ({where}), got {N}")
    with SCHEMA.blame("algorithm"):
        config = FedPDMConfig(**v.section("algorithm", drop_none=True))
    with SCHEMA.blame("algorithm", K="algorithm.K", batch_size="algorithm.batch_size"):
        config.validate_for(SimpleNamespace(N=N, n=sizes["n"]))
    if config.noise == "dp" and config.dp_calibration == "per_round_eps":
        z = math.sqrt(2.0 * math.log(1.25 / config.delta)) / config.epsilon
        if not z <= MAX_NOISE_MULTIPLIER:
            raise ConfigError(f"algorithm.epsilon: the noise multiplier z = sqrt(2 ln(1.25/delta))/epsilon = {z:.3g} "
                              f"of (18) is above {MAX_NOISE_MULTIPLIER:g}, where the accountants overflow (epsilon = "
                              f"{config.epsilon:g}, delta = {config.delta:g}); use a larger epsilon")
    baseline = None
    if v["arm.name"] != "fedpdm":
        with SCHEMA.blame("arm"):
            baseline = BaselineConfig(name=v["arm.name"], local_steps=v["arm.local_steps"], eta_cap=v["arm.eta_cap"],
                                      mu=v["arm.mu"] if v["arm.mu"] is not None else 0.1)
    return Setup(v=v, config=config, baseline=baseline, arrays=arrays, path=None if path is None else str(path),
                 **sizes, iterations=config.rounds, runs=v.options["runs"], seed=v.options["seed"])


def estimate(s: Setup) -> list[Cost]:
    """The data, the smoothness bracket (:func:`reference_impl.fedpdm.estimate_smoothness_cost`), the schedule, the
    state and the rounds."""
    from reference_impl.fedpdm import estimate_smoothness_cost

    c, N, n, nf, m = s.config, s.N, s.n, s.n_features, s.n_classes
    smooth = estimate_smoothness_cost(N, n, nf, m)
    d = nf * m
    src = s.v["problem.source"]
    data_field = {"nc": "problem.n", "digits": "problem.N", "mnist_like": "problem.n_train",
                  "mnist_npz": "problem.path"}[src]
    data = float(N) * n * nf
    if src == "mnist_like":
        data = float(s.v["problem.n_train"] + s.n_test) * (nf - 1)
    T, R = c.rounds, s.runs
    rounds_label = s.v.label("algorithm.rounds")
    per_round = float(c.K) * c.Q_max * c.batch_size * d * 4 + (float(N) * n + s.n_test) * d * 2 + N * d * 4
    return [Cost(phase="the data", field=data_field, memory=data * 2, work=data * 10),
            Cost(phase="the certified smoothness bracket of L (estimate_smoothness_cost, every client's rows in one "
                       "class at worst)", field="problem.d" if src == "nc" else data_field,
                 memory=smooth.peak_elements, work=smooth.work),
            Cost(phase="the participation schedule runs x rounds x N", field=rounds_label, memory=3.0 * R * T * N,
                 work=float(R) * T * N * 30),
            Cost(phase="the state runs x N x d", field="argument --runs", memory=4.0 * R * N * d),
            Cost(phase="the work runs x rounds x (local steps + observers)", field=rounds_label,
                 work=float(R) * T * per_round, steps=float(T) * (c.Q_max + 4))]


def build_problem(s: Setup):
    """The problem of the setup (:func:`reference_impl.fedpdm.run_report.fedpdm_run_problem`); ConfigError names the
    field."""
    import numpy as np

    from reference_impl.fedpdm.run_report import fedpdm_run_problem

    v, src = s.v, s.v["problem.source"]
    kwargs = {k: x for k, x in v.section("problem").items() if k not in ("source", "path", "N", "data_seed")}
    with SCHEMA.blame("problem") if src != "mnist_npz" else blame_file("problem.path", s.path):
        return fedpdm_run_problem(src, np.random.default_rng(v["problem.data_seed"]), N=s.N, path=s.path,
                                  **kwargs)


def run(s: Setup, rng) -> dict:
    from reference_impl.fedpdm.run_report import fedpdm_run_document

    problem = build_problem(s)
    renames = {"mu": "arm.mu"} if s.baseline is not None else {}   # FedProx's weight: the algorithm has no mu
    with SCHEMA.blame("algorithm", **renames):
        return fedpdm_run_document(problem, s.config, s.baseline, rng, runs=s.runs, seed=s.seed,
                                   source=s.v["problem.source"])


def _smoothness(s: Setup, r: dict) -> str:
    sm = r["problem"]["smoothness"]
    shown = fmt_bracket(sm["L_lower"], sm["L_smooth"])
    return (shown + (" (both ends)" if not shown.startswith("[") else "")
            + ("" if sm["converged"] else "; not converged: the upper end is still certified"))


def _privacy_rows(s: Setup, r: dict) -> list:
    from reference_impl.fedpdm.run_report import BASELINE_MODEL

    p = r["privacy"]
    if p.get("model") == "independent_rounds":
        if "epsilon_rdp_max_client" not in p:
            return [("privacy", p["status"])]
        return [("busiest client's participations", f"{p['max_count']} (pT = {p['pT']:.3g})"),
                (f"its epsilon at delta = {p['delta']:g}: RDP, PLD",
                 [p["epsilon_rdp_max_client"], p.get("epsilon_pld_max_client")]), ("privacy model", BASELINE_MODEL)]
    bound = "a bound" if p["is_bound"] else "NOT a bound"
    why = p["status"].split(": ", 1)[1] if not p["is_bound"] and ": " in p["status"] else ""
    rows = [(f"privacy ({p['model']})", bound + (f" ({why})" if why else ""))]
    if p["epsilon_max"] is not None:
        worst = p["worst_client"]
        rows.append((f"epsilon_max at delta = {p['delta']:g}",
                     f"{fmt_real(p['epsilon_max'])} (client {worst}, {p['participations'][worst]} participations)"))
    if "paper" in p and p["paper"]["epsilon_max"] is not None:
        rows.append(("the paper's accountant (NOT a bound)", f"epsilon_max {fmt_real(p['paper']['epsilon_max'])}"))
    return rows


SUMMARY_TITLE = ("{r[arm]} on {r[problem][source]}: N = {r[problem][N]}, |D_i| = {r[problem][n]}, d = {r[problem][d]}, "
                 "T = {r[rounds]}, {r[runs]} run(s), seed {r[seed]}")
SUMMARY = (
    Row(label="training loss F(x_0)", key="curves.loss", show="first->last"),
    Row(label="test accuracy", key="curves.accuracy", show="last", optional=True),
    Row(label="smoothness L (certified bracket)", key=_smoothness),
    Row(label="noise multiplier z ({r[noise][mode]})", key="noise.z"),
    _privacy_rows,
    lambda s, r: [("note", note) for note in r.get("notes", [])],
    Row(label="status", key="status", when=lambda s, r: r["status"] != "ok"),
    Row(label="curves and per-client privacy", text="use --json"),
)
#: ``--plot``: the global loss and (when recorded) the test accuracy per round, mean over the runs.
FIGURES = tuple(Plot(name=f"fedpdm_{name}", title=f"{{r[arm]}}: {title} ({{s.runs}} run(s))", xlabel="round t",
                     ylabel=ylabel, optional=True, lines=(Line(label=f"{name}, mean over runs", key=f"curves.{name}"),))
                for name, title, ylabel in (("loss", "global objective (loss)", "loss"),
                                            ("accuracy", "test accuracy", "accuracy")))
