"""``fedcheck run paofed CONFIG.toml``: the reference PAO-Fed (thesis ch. 4) or a baseline on a configuration.

See ``docs/papers/paofed.md``. Two simulations:

* ``[data] source = "linear"`` (default): SIM-F (docs/papers/paofed.md#choice-simulators), the faithful algorithm on
  linear Gaussian data of the analysis instance ``[instance]`` (every field defaults to the reference instance); metric:
  the server MSD.
* ``[data] source = "synthetic-rff"``: SIM-E (docs/papers/paofed.md#choice-simulators), the paper's nonlinear data in
  the RFF space with the asynchronous environment ``[environment]``; metric: MSE-test.

``--algorithm`` picks a PAO-Fed variant or a baseline; the ``[algorithm]`` fields of the other algorithms do not
apply. ``--json`` prints the document of :func:`reference_impl.paofed.run_report.paofed_run_document` (values
beyond the double range are null). The ``[instance]`` section (:data:`INSTANCE`, :func:`build_instance`) is also
``fedcheck msd``'s input.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from fedcheck.run._api import RUNS_SEED_OPTIONS, ConfigError, Cost, Field, Option, RunSetup, Schema, Section, read_npy
from fedcheck.run._output import Line, Plot, Row
from fedcheck.run._schema import applies_when

NAME = "paofed"
TITLE = ("PAO-Fed (SIM-F (docs/papers/paofed.md#choice-simulators) on linear data, "
         "SIM-E (docs/papers/paofed.md#choice-simulators) on RFF data) or a baseline from a TOML configuration")

#: Largest staleness weight accepted: the second moments hold products of squared weights.
ALPHA_MAX = 1e100
ALGORITHMS = ("paofed-u1", "paofed-c0", "paofed-u0", "paofed-c1", "paofed-c2", "paofed-u2", "online-fed",
              "online-fedsgd", "pso-fed", "signsgd")
SELECTIONS = ("window", "subset", "bernoulli")
# the reference instance (theory.msd.instance.reference_instance) at its default mu lambda_max = 0.1
_REF = dict(K=4, D=5, l_max=2, m=2, selection="subset", p=[0.9, 0.6, 0.4, 0.2], delta=0.3, alpha=[1.0, 0.5, 0.25],
            sigma2_eta=[0.01, 0.02, 0.015, 0.03], toeplitz_rho=[0.1, 0.3, 0.5, 0.7],
            w_star=[1.0, -0.5, 0.25, 0.0, 0.5])
_COVARIANCES = ("toeplitz_rho", "white_variances", "R", "R_npy")


def _no_groups(v) -> bool:
    return v["instance.group"] is None


def _ref_if(key: str, size_key: str):
    """The reference instance's value of ``key`` when the size ``size_key`` is the reference's (else no default)."""
    def default(v):
        return list(_REF[key]) if v[f"instance.{size_key}"] == _REF[size_key] else None

    return default


def _needs(size_key: str):
    return lambda v: v[f"instance.{size_key}"] != _REF[size_key]


_PER_CLIENT = dict(applies=_no_groups, when="[[instance.group]] is absent")
_K = dict(length=lambda v: v["instance.K"], length_text="K")

GROUP = Field(name="group", kind="tables", doc="clients as groups sharing (p, sigma2_eta, R): one [[instance.group]] "
              "table per group, clients numbered group by group; replaces K, p, sigma2_eta and the covariances", sub=(
    Field(name="count", kind="int", lo=1, required=True, doc="clients in the group"),
    Field(name="p", kind="real", lo=0.0, hi=1.0, lo_open=True, required=True, doc="participation probability"),
    Field(name="sigma2_eta", kind="real", lo=0.0, default=0.01, doc="observation-noise variance"),
    Field(name="white_variance", kind="real", lo=0.0, lo_open=True, doc="R_k = white_variance I (or toeplitz_rho)"),
    Field(name="toeplitz_rho", kind="real", lo=-1.0, hi=1.0, lo_open=True, hi_open=True,
          doc="R_k = Toeplitz(toeplitz_rho^|i-j|) (or white_variance)"),
))

INSTANCE = Section(name="instance", doc="The analysis instance (linear data; the reference instance by default). "
                                        "Also the input of `fedcheck msd`.", fields=(
    GROUP,
    Field(name="K", kind="int", lo=1, default=lambda v: _REF["K"] if _no_groups(v) else
          sum(g["count"] for g in v["instance.group"]), doc="clients K (with groups: their total, may be omitted)"),
    Field(name="D", kind="int", lo=1, default=_REF["D"], doc="feature dimension D"),
    Field(name="l_max", kind="int", lo=0, default=_REF["l_max"], doc="largest delay in rounds l_max"),
    Field(name="m", kind="int", lo=1, hi=lambda v: v["instance.D"], hi_text="instance.D", default=_REF["m"],
          doc="entries per message m (p_m = m / D)"),
    Field(name="selection", kind="choice", choices=SELECTIONS, default=_REF["selection"],
          doc="which m entries a message carries: a cyclic 'window' at a uniform offset, a uniform m-'subset', or "
              "each entry with probability m / D ('bernoulli')"),
    Field(name="p", kind="reals", lo=0.0, hi=1.0, lo_open=True, default=_ref_if("p", "K"), required=_needs("K"),
          doc="participation probabilities p_k", **_K, **_PER_CLIENT),
    Field(name="delta", kind="real", lo=0.0, hi=1.0, hi_open=True, default=_REF["delta"],
          doc="message delays: P(delay >= l) = delta^l, truncated at l_max"),
    Field(name="alpha", kind="reals", lo=0.0, hi=ALPHA_MAX, default=_ref_if("alpha", "l_max"),
          required=_needs("l_max"), length=lambda v: v["instance.l_max"] + 1, length_text="l_max + 1",
          doc="staleness weights alpha_0..alpha_{l_max} (alpha_0 = 1)"),
    Field(name="sigma2_eta", kind="reals", lo=0.0, default=_ref_if("sigma2_eta", "K"), required=_needs("K"),
          doc="observation-noise variances", **_K, **_PER_CLIENT),
    Field(name="toeplitz_rho", kind="reals", lo=-1.0, hi=1.0, lo_open=True, hi_open=True,
          doc="R_k = Toeplitz(rho_k^|i-j|) (the default covariances; give one of toeplitz_rho, white_variances, R, "
              "R_npy)", **_K, **_PER_CLIENT),
    Field(name="white_variances", kind="reals", lo=0.0, lo_open=True, doc="R_k = v_k I", **_K, **_PER_CLIENT),
    Field(name="R", kind="matrix", shape=lambda v: (v["instance.K"], v["instance.D"], v["instance.D"]),
          shape_text="K x D x D", doc="the covariances R_k written out", **_PER_CLIENT),
    Field(name="R_npy", kind="str", doc="a .npy of shape (K, D, D) holding the covariances (relative to the config)",
          **_PER_CLIENT),
    Field(name="w_star", kind="reals", default=_ref_if("w_star", "D"), required=_needs("D"),
          length=lambda v: v["instance.D"], length_text="D", doc="the true model w* (it does not enter the MSD)"),
    Field(name="mu", kind="real", lo=0.0, lo_open=True, doc="step size mu (or mu_times_lambda_max; default "
                                                            "mu lambda_max = 0.1)"),
    Field(name="mu_times_lambda_max", kind="real", lo=0.0, lo_open=True, doc="the step as mu lambda_max"),
))

_LINEAR = applies_when("data.source", "linear")
_RFF = applies_when("data.source", "synthetic-rff")


def _algorithm_is(*names, prefix: str = ""):
    def applies(v):
        name = v.options["algorithm"]
        return name in names or (prefix and name.startswith(prefix))

    return applies


SCHEMA = Schema(sections=(
    Section(name="simulation", doc="The run's length.", fields=(
        Field(name="iterations", kind="int", lo=1, default=2000, option="--iterations", doc="iterations N"),
    )),
    Section(name="data", doc="SIM-F (docs/papers/paofed.md#choice-simulators) (linear data of [instance]) or "
                             "SIM-E (docs/papers/paofed.md#choice-simulators) (the paper's nonlinear RFF data).",
            fields=(
        Field(name="source", kind="choice", choices=("linear", "synthetic-rff"), default="linear",
              doc="'linear' (SIM-F) or 'synthetic-rff' (SIM-E)"),
        Field(name="K", kind="int", lo=1, default=256, doc="clients", **_RFF),
        Field(name="D", kind="int", lo=1, default=200, doc="RFF dimension", **_RFF),
        Field(name="sigma_kappa", kind="real", lo=0.0, lo_open=True, default=5.0, doc="RFF kernel width", **_RFF),
        Field(name="test_size", kind="int", lo=1, default=500, doc="test samples of MSE-test", **_RFF),
        Field(name="input_order", kind="choice", choices=("literal", "consecutive"), default="literal",
              doc="order of the AR inputs", **_RFF),
        Field(name="bracket", kind="choice", choices=("classical", "literal"), default="classical",
              doc="reading of the data model's bracket", **_RFF),
        Field(name="ar_clock", kind="choice", choices=("sample", "iteration"), default="sample",
              doc="the AR process advances per sample or per iteration", **_RFF),
        Field(name="horizon", kind="int", lo=1, default=2000, doc="iterations over which a client gets its samples",
              **_RFF),
        Field(name="data_groups", kind="ints", lo=0, hi=lambda v: v["data.horizon"], hi_text="data.horizon",
              default=[500, 1000, 1500, 2000], doc="samples per client of each data group", **_RFF),
    )),
    Section(name="environment", doc="SIM-E's asynchronous environment.", applies=_RFF["applies"], when=_RFF["when"],
            fields=(
        Field(name="p_groups", kind="reals", lo=0.0, hi=1.0, default=[0.25, 0.1, 0.025, 0.005],
              doc="participation probability of each availability group"),
        Field(name="delta", kind="real", lo=0.0, hi=1.0, hi_open=True, default=0.2,
              doc="P(delay >= l) = delta^l"),
        Field(name="l_max", kind="int", lo=0, default=10, doc="largest delay"),
        Field(name="delay_step", kind="int", lo=1, default=1, doc="delay unit in iterations"),
        Field(name="delay_tail", kind="choice", choices=("discard", "cap"), default="discard",
              doc="a message later than l_max is discarded or delivered at l_max"),
    )),
    replace(INSTANCE, **_LINEAR),
    Section(name="algorithm", doc="The algorithm's choices; the baseline fields apply to their --algorithm only.",
            fields=(
        Field(name="mu", kind="real", lo=0.0, lo_open=True, default=0.4, doc="step size (SIM-F: [instance])", **_RFF),
        Field(name="m", kind="int", lo=1, hi=lambda v: v["data.D"], hi_text="data.D", default=4,
              doc="entries per message (SIM-F: [instance])", **_RFF),
        Field(name="schedule", kind="choice", choices=("instance", "circshift", *SELECTIONS),
              default=lambda v: "instance" if v["data.source"] == "linear" else "circshift",
              applies=_algorithm_is("pso-fed", prefix="paofed-"), when="--algorithm is a PAO-Fed variant or pso-fed",
              doc="entry selection: 'instance' (the instance's law; SIM-F (docs/papers/paofed.md#choice-simulators) "
                  "only) or 'circshift' (the experiments')"),
        Field(name="staleness", kind="choice", choices=("instance", "variant"),
              default=lambda v: "instance" if v["data.source"] == "linear" else "variant",
              applies=_algorithm_is("pso-fed", prefix="paofed-"), when="--algorithm is a PAO-Fed variant or pso-fed",
              doc="staleness weights: 'instance' (alpha of [instance]; SIM-F (docs/papers/paofed.md#choice-simulators) "
                  "only) or 'variant' (the variant's)"),
        Field(name="overlap_rule", kind="choice", choices=("none", "most_recent"), default="none",
              doc="'none' (the analysis) or 'most_recent' (the paper's rule)"),
        Field(name="full_downlink", kind="bool", default=False, doc="send the full model downlink"),
        Field(name="online_fed_fraction", kind="real", lo=0.0, hi=1.0, lo_open=True, default=0.02,
              applies=_algorithm_is("online-fed"), when="--algorithm online-fed",
              doc="Online-Fed's server sub-sampling s"),
        Field(name="pso_fed_m", kind="int", lo=1, applies=_algorithm_is("pso-fed"), when="--algorithm pso-fed",
              doc="PSO-Fed's entries per message (default: m)"),
        Field(name="pso_fed_fraction", kind="real", lo=0.0, hi=1.0, lo_open=True, default=0.5,
              applies=_algorithm_is("pso-fed"), when="--algorithm pso-fed", doc="PSO-Fed's server sub-sampling s"),
        Field(name="sign_step", kind="real", lo=0.0, lo_open=True, default=1e-3, applies=_algorithm_is("signsgd"),
              when="--algorithm signsgd", doc="SignSGD's server step gamma"),
        Field(name="sign_noise", kind="real", lo=0.0, hi=1e300, default=0.0, applies=_algorithm_is("signsgd"),
              when="--algorithm signsgd", doc="SignSGD's stochastic-sign noise bound B (0: deterministic)"),
        Field(name="sign_aggregation", kind="choice", choices=("sign_majority", "sign_mean"), default="sign_majority",
              applies=_algorithm_is("signsgd"), when="--algorithm signsgd", doc="SignSGD's aggregation"),
        Field(name="baseline_aggregation", kind="choice", choices=("average", "partial"), default="average",
              applies=_algorithm_is("online-fed", "online-fedsgd"), when="--algorithm online-fed or online-fedsgd",
              doc="Online-Fed(SGD) with delays: 'average' (choice A) or 'partial' (choice B)"),
    )),
))

OPTIONS = (
    Option(flag="--iterations", field="simulation.iterations", doc="iterations"),
    *RUNS_SEED_OPTIONS,
    Option(flag="--algorithm", default="paofed-u1", choices=ALGORITHMS, lo=None, metavar="NAME",
           doc="one of " + ", ".join(ALGORITHMS)),
)


@dataclass(frozen=True, kw_only=True)
class InstanceSpec:
    """The checked ``[instance]`` fields (the covariances not yet formed)."""

    fields: dict[str, Any]
    R_npy: Any
    K: int
    D: int
    l_max: int


def instance_spec(v) -> InstanceSpec:
    """The ``[instance]`` fields of ``v`` after the checks between fields; reads ``R_npy`` (guarded)."""
    from reference_impl.paofed.run_report import expand_groups

    sec = {k.split(".", 1)[1]: v[k] for k in v if k.startswith("instance.")}
    K, D = sec["K"], sec["D"]
    groups = sec["group"]
    if groups is not None:
        if v.given("instance.K") and K != sum(g["count"] for g in groups):
            raise ConfigError(f"instance.K = {K} differs from the clients of [[instance.group]] (sum of counts "
                              f"{sum(g['count'] for g in groups)}); omit K or make them agree")
        # the groups' counts make K: its sizes are checked before the per-client lists are formed (a count of 1e12
        # used to allocate until the machine ran out of memory)
        from fedcheck.run import _budget

        big = max(range(len(groups)), key=lambda i: groups[i]["count"])
        _budget.check([replace(c, field=f"instance.group[{big}].count")
                       for c in _instance_sizes(K, D, sec["l_max"])])
        with SCHEMA.blame("instance"):
            sec.update(expand_groups(groups))
    given = [f for f in _COVARIANCES if sec.get(f) is not None]
    if len(given) > 1:
        raise ConfigError(f"instance.{given[1]}: give at most one of instance.R, toeplitz_rho, white_variances, R_npy")
    if not given:
        if K != _REF["K"]:
            raise ConfigError(f"instance.toeplitz_rho must be given (a list of K = {K} reals in (-1, 1)) when K != 4 "
                              f"(or one of white_variances, R, R_npy)")
        sec["toeplitz_rho"] = list(_REF["toeplitz_rho"])
    if sec["mu"] is not None and sec["mu_times_lambda_max"] is not None:
        raise ConfigError("instance.mu: give at most one of instance.mu and instance.mu_times_lambda_max")
    R_npy = None
    if sec.get("R_npy") is not None:
        path, R_npy = read_npy(v, "instance.R_npy")
        from fedcheck._files import real_array

        R_npy = real_array(R_npy, f"instance.R_npy {str(path)!r}", shape=(K, D, D))
    return InstanceSpec(fields=sec, R_npy=R_npy, K=K, D=D, l_max=sec["l_max"])


def instance_costs(spec: InstanceSpec) -> list[Cost]:
    """The covariances K D^2 and the extended state (1 + K (l_max + 1)) D of an instance."""
    return _instance_sizes(spec.K, spec.D, spec.l_max)


def _instance_sizes(K: int, D: int, L: int) -> list[Cost]:
    return [Cost(phase="the covariances K D^2", field="instance.D", memory=float(K) * D * D, work=float(K) * D ** 3),
            Cost(phase="the extended state (1 + K (l_max + 1)) D", field="instance.l_max",
                 memory=(1.0 + K * (L + 1)) * D)]


def build_instance(spec: InstanceSpec, *, min_mu_lambda: float = 0.0, max_mu_lambda: float = math.inf):
    """The :class:`theory.msd.instance.PAOFedInstance` of ``spec`` (:func:`reference_impl.paofed.run_report.
    paofed_instance`, whose ``min_mu_lambda``/``max_mu_lambda`` bound mu lambda_max); ConfigError names the field."""
    from reference_impl.paofed.run_report import paofed_instance

    with SCHEMA.blame("instance"):
        return paofed_instance(spec.fields, spec.R_npy, min_mu_lambda=min_mu_lambda, max_mu_lambda=max_mu_lambda)


@dataclass(frozen=True, kw_only=True)
class Setup(RunSetup):
    """A validated PAO-Fed run."""

    spec: InstanceSpec | None
    algorithm: str
    K: int
    D: int
    l_max: int


def load(v) -> Setup:
    spec = None
    if v["data.source"] == "linear":
        spec = instance_spec(v)
        K, D, l_max = spec.K, spec.D, spec.l_max
    else:
        K, D, l_max = v["data.K"], v["data.D"], v["environment.l_max"]
        cells = len(v["data.data_groups"]) * len(v["environment.p_groups"])
        if K < cells:
            raise ConfigError(f"data.K = {K} is fewer than the data groups x availability groups = "
                              f"{len(v['data.data_groups'])} x {len(v['environment.p_groups'])} = {cells} (the clients "
                              f"are split evenly over them: some group would have no client)")
    name = v.options["algorithm"]
    for key in ("schedule", "staleness"):
        if v[f"algorithm.{key}"] == "instance" and spec is None:
            raise ConfigError(f"algorithm.{key}: 'instance' needs data.source = 'linear'")
    return Setup(v=v, spec=spec, algorithm=name, iterations=v["simulation.iterations"], runs=v.options["runs"],
                 seed=v.options["seed"], K=K, D=D, l_max=l_max)


def estimate(s: Setup) -> list[Cost]:
    K, D = s.K, s.D
    costs = instance_costs(s.spec) if s.spec is not None else [
        Cost(phase="the client models K x D", field="data.D", memory=float(K) * D),
        Cost(phase="the sample schedule K x horizon", field="data.horizon", memory=float(K) * s.v["data.horizon"]),
        Cost(phase="the test set test_size x D", field="data.test_size", memory=float(s.v["data.test_size"]) * D)]
    if s.spec is not None:
        # measured: the instance's and the simulation's eigendecompositions of the K covariances (symmetry and PSD
        # checks, the regressor factors) took 37 CPU-s at K = 256, D = 200, about 20 K D^3 operations at 1e9 / s
        costs.append(Cost(phase="the eigendecompositions of the K covariances D x D", field="instance.D",
                          work=20.0 * K * D ** 3))
    costs.append(Cost(phase="the state runs x K x D x (l_max + 1)", field="argument --runs",
                      memory=float(s.runs) * K * D * (s.l_max + 1)))
    costs.append(Cost(phase="the work iterations x runs x K x D", field=s.v.label("simulation.iterations"),
                      work=float(s.iterations) * s.runs * K * D, steps=s.iterations))
    return costs


def _algorithm(s: Setup, instance):
    from reference_impl.paofed.run_report import paofed_algorithm

    with SCHEMA.blame("algorithm"):
        return paofed_algorithm(s.algorithm, s.v.section("algorithm"), s.D, instance)


def simulation(s: Setup):
    """``(env, config, data, label)`` of the setup (allocates the instance or the RFF environment)."""
    from reference_impl.paofed.run_report import linear_simulation, rff_data, rff_environment

    v = s.v
    if s.spec is not None:
        inst = build_instance(s.spec)
        env, data, label = linear_simulation(inst)
        return env, _algorithm(s, inst), data, label
    with SCHEMA.blame("environment", K="data.K", D="data.D", data_groups="data.data_groups", horizon="data.horizon"):
        env = rff_environment(K=s.K, D=s.D, data_groups=v["data.data_groups"], horizon=v["data.horizon"],
                              **v.section("environment"))
    with SCHEMA.blame("data"):
        data, label = rff_data(K=s.K, D=s.D, **{k: v[f"data.{k}"] for k in ("sigma_kappa", "test_size", "input_order",
                                                                             "bracket", "ar_clock")})
    return env, _algorithm(s, None), data, label


def run(s: Setup, rng) -> dict:
    from reference_impl.paofed.run_report import paofed_run_document

    env, config, data, label = simulation(s)
    return paofed_run_document(env, config, data, s.iterations, rng, runs=s.runs, label=label)


def _drift_text(r) -> str:
    w = r["window"]
    if w["drift"] is None:
        return w["note"]
    if w["drift_interval"] is None:
        return f"{100 * w['drift']:+.3g} %: {w['note']}"
    low, high = w["drift_interval"]
    return f"{100 * w['drift']:+.3g} % [{100 * low:+.3g}, {100 * high:+.3g}] (95 %, {r['runs']} runs): {w['note']}"


SUMMARY_TITLE = "{r[algorithm]} ({r[_summary][label]}): K = {s.K}, D = {s.D}, {s.iterations} iterations, " \
                "{s.runs} run(s), seed {s.seed}"
SUMMARY = (
    Row(label="status", text="diverged (the learning curve is not finite: try a smaller step mu)",
        when=lambda s, r: r["status"] == "diverged"),
    Row(label="status", text="diverging: {r[warning]}", when=lambda s, r: r["status"] == "diverging"),
    Row(label="{r[_summary][name]} after the last iteration (dB)", key="curve_db", show="last"),
    Row(label="mean over n = {r[_summary][half]}..{s.iterations} (dB)", key="_summary.steady_db"),
    Row(label="drift in that window (older minus newer half, % of their mean)", key=lambda s, r: _drift_text(r),
        when=lambda s, r: "window" in r),
    Row(label="communication", when=lambda s, r: bool(r["_summary"].get("messages")), text="{r[_summary][messages]} "
        "exchanges, {r[_summary][entries]} of D = {s.D} entries per message; savings uplink "
        "{r[_summary][uplink_pct]:.1f} %, downlink {r[_summary][downlink_pct]:.1f} %, load {r[_summary][load]:.0f} "
        "bits per exchanging client and iteration"),
    Row(label="learning curve", text="use --json for all values"),
)
#: ``--plot``: the learning curve (mean over the runs, dB) with the mean over the second half (marked when the window
#: has not settled: :func:`reference_impl.paofed.run_report.window_drift`).
FIGURES = (Plot(name="paofed_run", title="{r[algorithm]}: learning curve (K = {s.K}, D = {s.D})", xlabel="iteration n",
                ylabel="{r[_summary][name]} (dB)", lines=(
    Line(label="{r[algorithm]}: {r[_summary][name]}, mean over {s.runs} run(s)", key="curve_db"),
    Line(label="mean over n = {r[_summary][half]}..{s.iterations}: {r[_summary][steady_db]:.2f} dB"
               "{r[_summary][window_tag]}",
         key=lambda s, r: [r["_summary"]["steady_db"]] * 2, x=lambda s, r: [r["_summary"]["half"], s.iterations],
         style="dashed", when=lambda s, r: r["_summary"].get("steady_db") is not None))),)
