"""``fedcheck run paofed CONFIG.toml``: run the reference PAO-Fed (or a baseline) on a user's configuration.

Two simulations (shared/spec/paofed.md 4.2):

* ``[data] source = "linear"`` (default): **SIM-F** -- the faithful algorithm on linear Gaussian data of an
  analysis instance (section ``[instance]``; every field defaults to the reference instance of spec 4.1).
  Metric: the server MSD.
* ``[data] source = "synthetic-rff"``: **SIM-E** -- the nonlinear data of spec 1.3 in the RFF space with the
  asynchronous environment of spec 5 (sections ``[data]``, ``[environment]``). Metric: MSE-test.

``--algorithm`` picks one of :data:`reference_impl.paofed.ALGORITHMS`; the ``[algorithm]`` section holds the
[CHOICE]s of spec 2 (baseline fractions, SignSGD step, overlap rule, ...). The learning curve is printed in
dB (``--json``: ``{"algorithm", "iterations", "runs", "curve_db", "metric"}``, ``curve_db[n]`` for the server
model ``w_n``, n = 0..iterations). A bad field exits with status 2 and one line naming ``section.field``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from fedcheck._config import ConfigError, load_table
from fedcheck._config import reals as _reals
from fedcheck._config import scalar as _scalar

__all__ = ["ConfigError", "PAOFedSetup", "add_run_parser", "load_paofed_config", "run_paofed"]

_SECTIONS = {
    "simulation": {"iterations"},
    "instance": {"K", "D", "l_max", "m", "selection", "p", "delta", "alpha", "sigma2_eta", "toeplitz_rho", "R",
                 "R_npy", "white_variances", "w_star", "mu", "mu_times_lambda_max", "group"},
    "data": {"source", "K", "D", "sigma_kappa", "test_size", "input_order", "bracket", "ar_clock", "data_groups",
             "horizon"},
    "environment": {"p_groups", "delta", "l_max", "delay_step", "delay_tail"},
    "algorithm": {"mu", "m", "schedule", "staleness", "overlap_rule", "full_downlink", "online_fed_fraction",
                  "pso_fed_m", "pso_fed_fraction", "sign_step", "sign_noise", "sign_aggregation",
                  "baseline_aggregation"},
}

#: Largest staleness weight accepted: the second moments hold products of squared weights, which must stay
#: finite in double precision.
ALPHA_MAX = 1e100
_SOURCES = ("linear", "synthetic-rff")


@dataclass(frozen=True)
class PAOFedSetup:
    """What a configuration describes: environment, algorithm, data, iterations and a label."""

    env: object
    config: object
    data: object
    iterations: int
    simulation: str


def _load_table(path: Path) -> dict:
    return load_table(path, _SECTIONS)


def _prefixed(section: str, exc: ValueError) -> ConfigError:
    """Errors of the validated records start with the field name: prefix the section."""
    return ConfigError(f"{section}.{exc}".replace("\n", " "))


_GROUP_FIELDS = ("count", "p", "sigma2_eta", "white_variance", "toeplitz_rho")
_GROUP_EXPANDS = ("p", "sigma2_eta", "white_variances", "toeplitz_rho", "R", "R_npy")


def _expand_groups(table: dict) -> dict:
    """``[[instance.group]]`` (count, p, sigma2_eta, white_variance or toeplitz_rho) written out per client.

    Returns a copy of ``table`` whose ``[instance]`` has K, p, sigma2_eta and white_variances or toeplitz_rho
    (clients in group order); the per-client fields themselves must then be absent.
    """
    sec = table.get("instance", {})
    groups = sec.get("group")
    if groups is None:
        return table
    if not isinstance(groups, list) or not groups or not all(isinstance(g, dict) for g in groups):
        raise ConfigError(f"instance.group must be an array of tables [[instance.group]], got {groups!r}"[:200])
    clash = [f for f in _GROUP_EXPANDS if f in sec]
    if clash:
        raise ConfigError(f"instance.{clash[0]}: give either [[instance.group]] or the per-client fields "
                          f"({', '.join(_GROUP_EXPANDS)}), not both")
    p, s2, kinds, values = [], [], set(), []
    for i, g in enumerate(groups):
        name = f"instance.group[{i}]"
        unknown = sorted(set(g) - set(_GROUP_FIELDS))
        if unknown:
            raise ConfigError(f"{name}.{unknown[0]} is not a field (allowed: {', '.join(_GROUP_FIELDS)})")
        t = {name: g}
        count = _scalar(t, name, "count", int, check=lambda v: v >= 1, allowed="an integer >= 1")
        if count is None:
            raise ConfigError(f"{name}.count must be given (an integer >= 1)")
        pk = _scalar(t, name, "p", float, check=lambda v: 0 < v <= 1, allowed="a real in (0, 1]")
        if pk is None:
            raise ConfigError(f"{name}.p must be given (a real in (0, 1])")
        sk = _scalar(t, name, "sigma2_eta", float, 0.01, check=lambda v: v >= 0, allowed="a real >= 0")
        spec = [f for f in ("white_variance", "toeplitz_rho") if f in g]
        if len(spec) != 1:
            raise ConfigError(f"{name}: give exactly one of white_variance (a real > 0) and toeplitz_rho "
                              f"(a real in (-1, 1)), got {spec or 'neither'}")
        check = (lambda v: v > 0) if spec[0] == "white_variance" else (lambda v: -1 < v < 1)
        value = _scalar(t, name, spec[0], float, check=check,
                        allowed="a real > 0" if spec[0] == "white_variance" else "a real in (-1, 1)")
        kinds.add(spec[0])
        if len(kinds) > 1:
            raise ConfigError(f"{name}.{spec[0]}: every group must describe R the same way (all white_variance or "
                              f"all toeplitz_rho)")
        p += [pk] * count
        s2 += [sk] * count
        values += [value] * count
    K = sec.get("K", len(p))
    if K != len(p):
        raise ConfigError(f"instance.K = {K!r} differs from the clients of [[instance.group]] (sum of counts "
                          f"{len(p)}); omit K or make them agree")
    out = dict(table)
    body = {k: v for k, v in sec.items() if k != "group"}
    key = "white_variances" if kinds == {"white_variance"} else "toeplitz_rho"
    body.update(K=len(p), p=p, sigma2_eta=s2, **{key: values})
    out["instance"] = body
    return out


def _instance(table, base_dir: Path = Path("."), *, min_mu_lambda: float = 0.0):
    """The analysis instance of ``[instance]`` (defaults: the reference instance of spec 4.1).

    ``min_mu_lambda``: smallest accepted mu lambda_max (``fedcheck msd`` needs rho(F) = 1 - O(mu) to be
    resolvable in double precision). The state K D^2 is capped by :data:`fedcheck._files.MAX_STATE_ELEMENTS`.
    """
    import numpy as np

    from fedcheck._files import MAX_STATE_ELEMENTS, check_budget, load_npy, real_array
    from theory.msd.instance import SELECTION_LAWS, PAOFedInstance, reference_instance, toeplitz_covariances

    table = _expand_groups(table)
    ref = reference_instance()
    sec = "instance"
    pos = dict(check=lambda v: v >= 1, allowed="an integer >= 1")
    K = _scalar(table, sec, "K", int, ref.K, **pos)
    D = _scalar(table, sec, "D", int, ref.D, **pos)
    l_max = _scalar(table, sec, "l_max", int, ref.l_max, check=lambda v: v >= 0, allowed="an integer >= 0")
    check_budget("the covariances K D^2", K * D * D, MAX_STATE_ELEMENTS, "instance.D (with instance.K)")
    check_budget("the extended state (1 + K (l_max + 1)) D", (1 + K * (l_max + 1)) * D, MAX_STATE_ELEMENTS,
                 "instance.l_max (with instance.K, instance.D)")
    m = _scalar(table, sec, "m", int, ref.m, check=lambda v: 1 <= v <= D, allowed=f"an integer in [1, D = {D}]")
    selection = _scalar(table, sec, "selection", str, ref.selection, check=lambda v: v in SELECTION_LAWS,
                        allowed=" or ".join(repr(s) for s in SELECTION_LAWS))
    given = [f for f in ("R", "toeplitz_rho", "white_variances", "R_npy") if f in table.get(sec, {})]
    if len(given) > 1:
        raise ConfigError(f"instance.{given[1]}: give at most one of instance.R, toeplitz_rho, white_variances, R_npy")
    if "R_npy" in table.get(sec, {}):
        path = _scalar(table, sec, "R_npy", str, allowed="a path to a .npy file of shape (K, D, D)")
        R = load_npy(base_dir / path, "instance.R_npy")  # FileError names the file
        R = real_array(R, f"instance.R_npy {str(base_dir / path)!r}", shape=(K, D, D))
    elif "white_variances" in table.get(sec, {}):
        v = _reals(table, sec, "white_variances", None, allowed=f"a list of K = {K} reals > 0")
        if v.shape != (K,) or np.any(v <= 0):
            raise ConfigError(f"instance.white_variances must be a list of K = {K} reals > 0, got {v.tolist()}")
        R = v[:, None, None] * np.eye(D)[None]
    elif "R" in table.get(sec, {}):
        R = _reals(table, sec, "R", None, allowed=f"a K x D x D = {K} x {D} x {D} nested list of reals")
        if R.shape != (K, D, D):
            raise ConfigError(f"instance.R must be a K x D x D = {K} x {D} x {D} nested list, got shape {R.shape}")
    else:
        rho = _reals(table, sec, "toeplitz_rho", [0.1, 0.3, 0.5, 0.7] if K == ref.K else None,
                     allowed=f"a list of K = {K} reals in (-1, 1)")
        if rho is None:
            raise ConfigError(f"instance.toeplitz_rho must be given (a list of K = {K} reals in (-1, 1)) when K != 4")
        if rho.shape != (K,) or np.any(np.abs(rho) >= 1):
            raise ConfigError(f"instance.toeplitz_rho must be a list of K = {K} reals in (-1, 1), got {rho.tolist()}")
        R = toeplitz_covariances(rho, D)
    w_star = _reals(table, sec, "w_star", ref.w_star.tolist() if D == ref.D else None,
                    allowed=f"a list of D = {D} reals")
    if w_star is None:
        raise ConfigError(f"instance.w_star must be given (a list of D = {D} reals) when D != 5")
    kwargs = dict(K=K, D=D, l_max=l_max, m=m, selection=selection, R=R, w_star=w_star,
                  p=_reals(table, sec, "p", ref.p.tolist()), delta=_scalar(table, sec, "delta", float, ref.delta, check=lambda v: 0 <= v < 1,
                                                             allowed="a real in [0, 1)"),
                  alpha=_reals(table, sec, "alpha", ref.alpha.tolist()),
                  sigma2_eta=_reals(table, sec, "sigma2_eta", ref.sigma2_eta.tolist()))
    mu = _scalar(table, sec, "mu", float, check=lambda v: v > 0, allowed="a real > 0")
    scale = _scalar(table, sec, "mu_times_lambda_max", float, check=lambda v: v > 0, allowed="a real > 0")
    if mu is not None and scale is not None:
        raise ConfigError("instance.mu: give at most one of instance.mu and instance.mu_times_lambda_max")
    if np.any(kwargs["p"] <= 0) or np.any(kwargs["p"] > 1) or kwargs["p"].shape != (K,):
        raise ConfigError(f"instance.p must be a list of K = {K} reals in (0, 1], got {kwargs['p'].tolist()}")
    if not 0 <= kwargs["delta"] < 1:
        raise ConfigError(f"instance.delta must be a real in [0, 1), got {kwargs['delta']!r}")
    alpha = np.asarray(kwargs["alpha"], dtype=np.float64)
    if alpha.size and np.max(np.abs(alpha)) > ALPHA_MAX:  # its squares enter the second moments
        raise ConfigError(f"instance.alpha entries must be at most {ALPHA_MAX:g} in magnitude (their squares enter the "
                          f"second moments and must stay finite), got {np.max(np.abs(alpha)):g}")
    try:
        inst = PAOFedInstance(**kwargs, mu=1.0)
    except ValueError as exc:
        raise _prefixed(sec, exc) from None
    lam_max = inst.lambda_max
    source = next((f for f in ("R", "R_npy", "white_variances", "toeplitz_rho") if f in table.get(sec, {})), "R")
    if not lam_max > 0:
        raise ConfigError(f"instance.{source}: every covariance R_k is zero (lambda_max = 0); the regressors must "
                          f"have some variance")
    if mu is None:
        mu = (0.1 if scale is None else scale) / lam_max
        if not 0 < mu < float("inf"):
            raise ConfigError(f"instance.mu_times_lambda_max: mu = mu_times_lambda_max / lambda_max = "
                              f"{0.1 if scale is None else scale:g} / {lam_max:g} is not a finite real > 0")
    if mu * lam_max < min_mu_lambda:
        field = "mu" if scale is None else "mu_times_lambda_max"
        raise ConfigError(f"instance.{field}: mu lambda_max = {mu * lam_max:.3g} is below {min_mu_lambda:g}, where "
                          f"rho(F) = 1 - O(mu) is not resolvable in double precision")
    return inst.with_mu(mu)


def _algorithm(table, name, *, source, instance):
    from reference_impl.paofed import SCHEDULES, algorithm_config

    sec = "algorithm"
    unit = dict(check=lambda v: 0 < v <= 1, allowed="a real in (0, 1]")
    overrides = {
        "overlap_rule": _scalar(table, sec, "overlap_rule", str, "none", check=lambda v: v in ("none", "most_recent"),
                                allowed="'none' or 'most_recent'"),
        "full_downlink": _scalar(table, sec, "full_downlink", bool, False, allowed="true or false"),
        "sign_step": _scalar(table, sec, "sign_step", float, 1e-3, check=lambda v: v > 0, allowed="a real > 0"),
        "sign_noise": _scalar(table, sec, "sign_noise", float, 0.0, check=lambda v: v >= 0, allowed="a real >= 0"),
    }
    online_fraction = _scalar(table, sec, "online_fed_fraction", float, 0.02, **unit)
    pso_fraction = _scalar(table, sec, "pso_fed_fraction", float, 0.5, **unit)
    pso_m = _scalar(table, sec, "pso_fed_m", int, None, check=lambda v: v >= 1, allowed="an integer >= 1")
    sign_agg = _scalar(table, sec, "sign_aggregation", str, "sign_majority",
                       check=lambda v: v in ("sign_majority", "sign_mean"), allowed="'sign_majority' or 'sign_mean'")
    base_agg = _scalar(table, sec, "baseline_aggregation", str, "average", check=lambda v: v in ("average", "partial"),
                       allowed="'average' (choice A) or 'partial' (choice B)")
    if source == "linear":
        for field in ("mu", "m"):
            if field in table.get(sec, {}):
                raise ConfigError(f"algorithm.{field}: with data.source = 'linear' the step and m come from [instance]")
        mu, m = instance.mu, instance.m
        default_schedule, default_staleness = "instance", "instance"
    else:
        mu = _scalar(table, sec, "mu", float, 0.4, check=lambda v: v > 0, allowed="a real > 0")
        m = _scalar(table, sec, "m", int, 4, check=lambda v: v >= 1, allowed="an integer >= 1")
        default_schedule, default_staleness = "circshift", "variant"
    schedules = ("instance",) + tuple(s for s in SCHEDULES if s != "full")
    schedule = _scalar(table, sec, "schedule", str, default_schedule, check=lambda v: v in schedules,
                       allowed=" or ".join(repr(s) for s in schedules))
    staleness = _scalar(table, sec, "staleness", str, default_staleness, check=lambda v: v in ("instance", "variant"),
                        allowed="'instance' or 'variant'")
    if instance is None and "instance" in (schedule, staleness):
        raise ConfigError(f"algorithm.{'schedule' if schedule == 'instance' else 'staleness'}: 'instance' needs "
                          f"data.source = 'linear'")
    if name.startswith("paofed-") or name == "pso-fed":
        overrides["schedule"] = instance.selection if schedule == "instance" else schedule
        if staleness == "instance":
            overrides["alpha"] = tuple(instance.alpha)
    if name == "online-fed":
        overrides["server_fraction"] = online_fraction
    if name == "pso-fed":
        overrides["server_fraction"] = pso_fraction
        m = pso_m if pso_m is not None else (m if source == "linear" else None)
    if name in ("online-fed", "online-fedsgd"):
        overrides["aggregation"] = base_agg
        if base_agg == "partial":
            overrides["alpha"] = None
            overrides["staleness_decay"] = 1.0
    if name == "signsgd":
        overrides["aggregation"] = sign_agg
    try:
        return algorithm_config(name, mu=mu, m=m, **overrides)
    except ValueError as exc:
        raise _prefixed(sec, exc) from None


def load_paofed_config(path, algorithm: str = "paofed-u1", *, iterations: int | None = None,
                       runs: int = 1) -> PAOFedSetup:
    """Parse CONFIG.toml into a :class:`PAOFedSetup`; ConfigError names the offending ``section.field``.

    The state runs x K x D x (l_max + 1) and the work iterations x runs x K x D are capped
    (:data:`fedcheck._files.MAX_STATE_ELEMENTS`, :data:`fedcheck._files.MAX_WORK`) before anything is allocated.
    """
    import numpy as np

    from fedcheck._files import MAX_STATE_ELEMENTS, MAX_WORK, check_budget
    from reference_impl.paofed import ALGORITHMS, AsyncEnvironment, LinearData, experiment_environment
    from reference_impl.paofed.data import SyntheticRFFData

    if algorithm not in ALGORITHMS:
        raise ConfigError(f"--algorithm must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}")
    table = _load_table(Path(path))
    n_iter = _scalar(table, "simulation", "iterations", int, 2000, check=lambda v: v >= 1, allowed="an integer >= 1")
    if iterations is not None:
        n_iter = iterations
    source = _scalar(table, "data", "source", str, "linear", check=lambda v: v in _SOURCES,
                     allowed=" or ".join(repr(s) for s in _SOURCES))
    if source == "linear":
        for sec in ("environment",):
            if sec in table:
                raise ConfigError(f"{sec}: the [{sec}] section needs data.source = 'synthetic-rff' "
                                  f"(SIM-F takes p, delta, l_max from [instance])")
        extra = set(table.get("data", {})) - {"source"}
        if extra:
            raise ConfigError(f"data.{sorted(extra)[0]} needs data.source = 'synthetic-rff'")
        inst = _instance(table, Path(path).parent)
        env = AsyncEnvironment(K=inst.K, D=inst.D, p=inst.p, delta=inst.delta, l_max=inst.l_max)
        data = LinearData.from_instance(inst)
        config = _algorithm(table, algorithm, source=source, instance=inst)
        label = "SIM-F: linear data of the instance"
    else:
        if "instance" in table:
            raise ConfigError("instance: the [instance] section needs data.source = 'linear'")
        sec = "data"
        pos = dict(check=lambda v: v >= 1, allowed="an integer >= 1")
        K = _scalar(table, sec, "K", int, 256, **pos)
        D = _scalar(table, sec, "D", int, 200, **pos)
        horizon = _scalar(table, sec, "horizon", int, 2000, **pos)
        check_budget("the client models K x D", K * D, MAX_STATE_ELEMENTS, "data.D (with data.K)")
        check_budget("the sample schedule K x horizon", K * horizon, MAX_STATE_ELEMENTS, "data.horizon (with data.K)")
        check_budget("the test set test_size x D", _scalar(table, sec, "test_size", int, 500, **pos) * D,
                     MAX_STATE_ELEMENTS, "data.test_size (with data.D)")
        groups = _reals(table, sec, "data_groups", [500, 1000, 1500, 2000],
                        allowed=f"a list of integer sample counts in [0, horizon = {horizon}]")
        if np.any(groups < 0) or np.any(groups > horizon) or np.any(groups != np.round(groups)):
            raise ConfigError(f"data.data_groups must be a list of integer sample counts in [0, horizon = {horizon}], "
                              f"got {groups.tolist()}")
        env_sec = "environment"
        p_groups = _reals(table, env_sec, "p_groups", [0.25, 0.1, 0.025, 0.005], allowed="a list of reals in [0, 1]")
        if np.any(p_groups < 0) or np.any(p_groups > 1):
            raise ConfigError(f"environment.p_groups must be a list of reals in [0, 1], got {p_groups.tolist()}")
        try:
            env = experiment_environment(
                K=K, D=D, p_groups=tuple(p_groups), data_groups=tuple(groups), horizon=horizon,
                delta=_scalar(table, env_sec, "delta", float, 0.2, check=lambda v: 0 <= v < 1, allowed="a real in [0, 1)"),
                l_max=_scalar(table, env_sec, "l_max", int, 10, check=lambda v: v >= 0, allowed="an integer >= 0"),
                delay_step=_scalar(table, env_sec, "delay_step", int, 1, **pos),
                delay_tail=_scalar(table, env_sec, "delay_tail", str, "discard",
                                   check=lambda v: v in ("discard", "cap"), allowed="'discard' or 'cap'"))
        except ValueError as exc:
            if isinstance(exc, ConfigError):
                raise
            raise _prefixed(env_sec, exc) from None
        try:
            data = SyntheticRFFData(
                K=K, D=D, sigma_kappa=_scalar(table, sec, "sigma_kappa", float, 5.0, check=lambda v: v > 0,
                                              allowed="a real > 0"),
                test_size=_scalar(table, sec, "test_size", int, 500, **pos),
                input_order=_scalar(table, sec, "input_order", str, "literal"),
                bracket=_scalar(table, sec, "bracket", str, "classical"),
                ar_clock=_scalar(table, sec, "ar_clock", str, "sample"))
        except ValueError as exc:
            if isinstance(exc, ConfigError):
                raise
            raise _prefixed(sec, exc) from None
        config = _algorithm(table, algorithm, source=source, instance=None)
        if config.schedule != "full" and config.m > D:
            raise ConfigError(f"algorithm.m must be an integer in [1, D = {D}], got {config.m}")
        label = "SIM-E: nonlinear data of spec 1.3 in the RFF space"
    l_max = getattr(env, "l_max", 0) or 0
    check_budget("the state runs x K x D x (l_max + 1)", runs * env.K * env.D * (l_max + 1), MAX_STATE_ELEMENTS,
                 "--runs (with K, D, l_max)")
    check_budget("the work iterations x runs x K x D", n_iter * runs * env.K * env.D, MAX_WORK,
                 "--iterations (with --runs, K, D)")
    return PAOFedSetup(env=env, config=config, data=data, iterations=n_iter, simulation=label)


def add_run_parser(run_subparsers, int_at_least) -> None:
    """Add ``paofed`` to the sub-commands of ``fedcheck run`` (``run_subparsers``: the ``add_subparsers`` object)."""
    from reference_impl.paofed import ALGORITHMS

    p = run_subparsers.add_parser("paofed", help="PAO-Fed (SIM-F on linear data, SIM-E on RFF data) from a TOML file")
    p.add_argument("config", type=Path, metavar="CONFIG.toml")
    p.add_argument("--runs", type=int_at_least(1), default=1, metavar="R", help="Monte-Carlo runs (default 1)")
    p.add_argument("--seed", type=int_at_least(0), default=0, metavar="S", help="root seed (default 0)")
    p.add_argument("--iterations", type=int_at_least(1), default=None, metavar="N",
                   help="iterations (default: [simulation] iterations, else 2000)")
    p.add_argument("--algorithm", dest="paofed_algorithm", choices=ALGORITHMS, default="paofed-u1", metavar="NAME",
                   help="one of " + ", ".join(ALGORITHMS) + " (default paofed-u1)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(subparser=p, handler=run_paofed)


def run_paofed(args) -> int:
    """Run the configured simulation and print the learning curve in dB (exit status 0)."""
    import numpy as np

    from fedcheck._config import strict_json
    from reference_impl.paofed import run_paofed as simulate

    parser = args.subparser
    try:
        setup = load_paofed_config(args.config, args.paofed_algorithm, iterations=args.iterations, runs=args.runs)
    except ValueError as exc:
        parser.error(str(exc))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        run = simulate(setup.env, setup.config, setup.data, setup.iterations, np.random.default_rng(args.seed),
                       runs=args.runs)
        curve_db = run.curve_db()
    finite = bool(np.all(np.isfinite(curve_db)))
    if args.json:
        # status "diverged": the curve left the double range; those values are null
        sys.stdout.write(strict_json({"algorithm": setup.config.name, "iterations": setup.iterations,
                                      "runs": args.runs, "status": "ok" if finite else "diverged",
                                      "curve_db": [float(v) for v in curve_db], "metric": run.metric}) + "\n")
        return 0
    if not finite:
        print("status: diverged (the learning curve is not finite: try a smaller step mu)")
    cfg, env = setup.config, setup.env
    entries = env.D if cfg.schedule == "full" else cfg.m
    print(f"{cfg.name} ({setup.simulation}): K = {env.K}, D = {env.D}, {setup.iterations} iterations, "
          f"{args.runs} run(s), seed {args.seed}")
    half = setup.iterations // 2
    steady = 10.0 * np.log10(np.mean(run.curve[half:]))
    print(f"{run.metric.upper()} after the last iteration: {curve_db[-1]:.3f} dB; mean over n = {half}.."
          f"{setup.iterations}: {steady:.3f} dB")
    comm = run.communication
    if int(np.sum(comm.messages)):
        up, down = comm.savings(env.D)
        print(f"communication: {int(np.sum(comm.messages))} exchanges, {entries} of D = {env.D} entries per message; "
              f"savings uplink {100 * up:.1f} %, downlink {100 * down:.1f} %, load {comm.load_bits():.0f} bits "
              f"per exchanging client and iteration")
    print("learning curve: use --json for all values")
    return 0
