"""``fedcheck check CONFIG.toml``: decide every claim of a paper that can be evaluated on a user's configuration.

The configuration is the one ``fedcheck run <slug>`` reads (``docs/configuration.md``). The paper is the file's own
declaration, a top-level ``paper = "<slug>"`` (removed before the run layer validates the rest), else ``--paper``,
else the one paper whose configuration schema accepts the file. The claims are decided by the public checking API
:mod:`verify.instance` (hypotheses met or not with their values and allowed ranges, bounds on the instance, short
simulations unless ``--no-simulate``); every other claim of the paper is listed with the reason it cannot be
evaluated on a user instance.

Exit status: 0 when every evaluable claim holds; 1 when a claim that the project has not refuted is violated on the
instance or one of its hypotheses is not met (a refuted claim is reported with its status and decides only through
its corrected statement); 2 for bad input (one line naming the field or option); 3 when a solver did not converge
(and nothing is violated). Output: a table, ``--json`` (strict JSON, schema ``fedcheck.check/1``) or ``--html DIR``
(a one-paper report written by :mod:`reports`: atomic, never over a file fedcheck did not write).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fedcheck._errors import ConfigError, NotConverged

__all__ = ["SLUGS", "add_check_parser", "load_instance", "paper_of", "run_check"]

#: Paper slug -> the ``fedcheck run`` sub-command of its plug-in.
SLUGS = {"pgfl": "pgfl", "paofed": "paofed", "zcdp_nfl": "zcdp-nfl", "gtv": "gtv", "fedpdm": "fedpdm",
         "npfl_rl": "npfl-rl"}


def _slug(text: str) -> str:
    slug = str(text).strip().lower().replace("-", "_")
    if slug not in SLUGS:
        raise ValueError(f"must be one of {', '.join(SLUGS)}, got {text!r}")
    return slug


def add_check_parser(sub) -> None:
    """Register ``check`` on the dispatcher's sub-parsers."""
    p = sub.add_parser("check", help="decide the claims of a paper on your configuration (exit 1 if one fails)")
    p.add_argument("config", type=Path, metavar="CONFIG.toml")
    p.add_argument("--paper", default=None, metavar="SLUG",
                   help=f"the paper when the file does not declare it (one of {', '.join(SLUGS)})")
    p.add_argument("--json", action="store_true", help="print the outcomes as strict JSON")
    p.add_argument("--html", type=Path, default=None, metavar="DIR", help="also write a one-paper report to DIR")
    p.add_argument("--simulate", action=argparse.BooleanOptionalAction, default=True,
                   help="run the short simulations a claim needs (default: on)")
    p.add_argument("--quiet", action="store_true", help="no summary line on stderr")
    p.set_defaults(subparser=p)


def _schema_values(name: str, table: dict, config: Path):
    """Validate ``table`` for the ``run`` plug-in ``name`` (as ``fedcheck run`` does): (plugin, setup)."""
    from fedcheck.run import plugin

    mod = plugin(name)
    plain = {opt.dest: opt.default for opt in mod.OPTIONS if opt.field is None}
    values = mod.SCHEMA.parse(table, {}, plain)
    values.base_dir = config.parent
    with mod.SCHEMA.blame():
        setup = mod.load(values)
    return mod, setup


def paper_of(table: dict, config: Path, given: str | None) -> str:
    """The paper of a configuration: its ``paper`` key, else ``given`` (``--paper``), else the one schema that fits.

    A declaration and ``--paper`` that disagree, or a file that several schemas (or none) accept, raise ConfigError.
    """
    declared = table.get("paper")
    if declared is not None:
        if not isinstance(declared, str):
            raise ConfigError(f"paper must be a string, one of {', '.join(SLUGS)}, got {declared!r}")
        try:
            slug = _slug(declared)
        except ValueError as exc:
            raise ConfigError(f"paper {exc}") from None
        if given is not None and _slug(given) != slug:
            raise ConfigError(f"argument --paper: {given!r} differs from the file's declaration paper = {declared!r}")
        return slug
    if given is not None:
        return _slug(given)
    fits = []
    for slug, name in SLUGS.items():
        try:
            _schema_values(name, dict(table), config)
        except (ConfigError, ValueError, TypeError):
            continue
        fits.append(slug)
    if len(fits) == 1:
        return fits[0]
    which = f"the sections of several papers ({', '.join(fits)})" if fits else "no paper's configuration"
    raise ConfigError(f"argument --paper: CONFIG {str(config)!r} does not declare its paper (a top-level "
                      f"paper = \"<slug>\") and fits {which}; give --paper, one of {', '.join(SLUGS)}")


def load_instance(config, paper: str | None = None):
    """The :class:`verify.instance.UserInstance` of a configuration file (ConfigError names a bad field)."""
    from fedcheck.run import _budget, read_table

    config = Path(config)
    table = read_table(config)
    slug = paper_of(table, config, paper)
    table = {k: v for k, v in table.items() if k != "paper"}
    mod, setup = _schema_values(SLUGS[slug], table, config)
    _budget.check(list(mod.estimate(setup)))
    return _BUILDERS[slug](setup, config)


def _paofed(setup, config):
    from fedcheck.run.paofed import build_instance, simulation
    from verify.instance import UserInstance

    inst = build_instance(setup.spec) if setup.spec is not None else None
    sim = None
    if inst is not None:
        env, cfg, data, _label = simulation(setup)
        sim = (env, cfg, data)
    step = f", mu lambda_max = {inst.mu * inst.lambda_max:.4g}" if inst is not None else ", RFF data"
    what = f"K = {setup.K}, D = {setup.D}, l_max = {setup.l_max}{step}"
    return UserInstance(paper="paofed", description=f"{config.name}: {what}",
                        parts={"instance": inst, "simulation": sim, "setup": setup},
                        settings={"iterations": setup.iterations, "runs": setup.runs, "algorithm": setup.algorithm,
                                  "seed": setup.seed})


def _zcdp_nfl(setup, config):
    from fedcheck.run.zcdp_nfl import build_config, build_problem
    from verify.instance import UserInstance

    problem, label = build_problem(setup)
    nfl = build_config(setup.v)
    return UserInstance(paper="zcdp_nfl", description=f"{config.name}: {problem.objective} on {label}, P = {setup.P}, "
                                                      f"M = {setup.M}, T = {setup.iterations}",
                        parts={"problem": problem, "config": nfl, "setup": setup},
                        settings={"iterations": setup.iterations, "runs": setup.runs, "seed": setup.seed,
                                  "method": setup.v["algorithm.method"]})


def _fedpdm(setup, config):
    from fedcheck.run.fedpdm import build_problem
    from verify.instance import UserInstance

    problem = build_problem(setup)
    c = setup.config
    arm = setup.v["arm.name"]
    what = (f"{setup.v['problem.source']} data, N = {problem.N}, K = {c.K}, T = {c.rounds}, rho = {c.rho:g}, "
            f"noise = {c.noise!r}" + ("" if arm == "fedpdm" else f", arm {arm}"))
    return UserInstance(paper="fedpdm", description=f"{config.name}: {what}",
                        parts={"problem": problem, "config": c, "setup": setup},
                        settings={"seed": setup.seed, "runs": setup.runs, "arm": arm})


def _pgfl(setup, config):
    from fedcheck.run.pgfl import build_config, build_problem
    from verify.instance import UserInstance

    problem = build_problem(setup)
    cfg = build_config(setup, problem)
    what = (f"{problem.loss}, S = {problem.S}, K = {len(problem.X)}, Q = {problem.n_clusters}, d = {problem.d}, "
            f"{cfg.algorithm}, rho = {cfg.rho:.4g} ({cfg.rho / problem.max_curvature:.4g} L_max), "
            f"N = {setup.iterations}")
    return UserInstance(paper="pgfl", description=f"{config.name}: {what}",
                        parts={"problem": problem, "config": cfg, "setup": setup},
                        settings={"iterations": setup.iterations, "runs": setup.runs, "seed": setup.seed})


def _gtv(setup, config):
    import numpy as np

    from fedcheck.run.gtv import build_instance
    from verify.instance import UserInstance

    inst, _ = build_instance(setup, np.random.default_rng(setup.seed))  # the run's generator
    v = setup.v
    k = "no clusters" if inst.clusters is None else f"{int(inst.clusters.max()) + 1} clusters"
    what = (f"{v['graph.generator']} graph, n = {inst.n}, {inst.n_edges} edges, {k}, d = {inst.d}, {inst.loss} loss, "
            f"{inst.penalty} penalty, lam = {inst.lam:g}, theta = {v['algorithm.theta']:g}")
    return UserInstance(paper="gtv", description=f"{config.name}: {what}", parts={"instance": inst, "setup": setup},
                        settings={"theta": v["algorithm.theta"], "iterations": v["algorithm.iterations"],
                                  "tol": v["algorithm.tol"], "seed": setup.seed})


def _npfl_rl(setup, config):
    import numpy as np

    from fedcheck.run.npfl_rl import SCHEMA
    from reference_impl.npfl_rl.data import synthetic_problem
    from verify.instance import UserInstance

    try:
        with SCHEMA.blame("instance", D_range="instance.D_min", noise_range="instance.noise_min"):
            problem, draws = synthetic_problem(np.random.default_rng([setup.seed, 0]), **setup.instance)
    except RuntimeError as exc:
        raise ConfigError(f"instance.mean_degree: {' '.join(str(exc).split())}") from None
    c = setup.config
    what = (f"K = {problem.K}, Q = {setup.instance['Q']}, d = {problem.d}, {c.label}, rho = {c.rho:g}, "
            f"N = {setup.iterations} (replicate seed {setup.seed})")
    return UserInstance(paper="npfl_rl", description=f"{config.name}: {what}",
                        parts={"problem": problem, "draws": draws, "config": c, "setup": setup},
                        settings={"iterations": setup.iterations, "runs": setup.runs, "seed": setup.seed,
                                  "delta_kind": setup.instance["delta_kind"]})


_BUILDERS = {"paofed": _paofed, "zcdp_nfl": _zcdp_nfl, "pgfl": _pgfl, "gtv": _gtv,
             "fedpdm": _fedpdm, "npfl_rl": _npfl_rl}


def _table(result) -> str:
    lines = [f"fedcheck check: {result.paper} on {result.description}"
             + ("" if result.simulate else " (simulations off)")]
    width = max(len(o.claim_id) for o in result.outcomes)
    order = ("violated", "hypotheses_not_met", "not_converged", "holds", "not_applicable", "not_evaluable")
    for status in order:
        for o in (o for o in result.outcomes if o.status == status):
            mark = "FAIL" if o.fails else status
            summary = o.evaluation.summary
            if o.refuted_in_general:
                summary += (f" [refuted in general: decided through {o.corrected_by}]" if o.corrected_by
                            else " [refuted in general: does not decide]")
            lines.append(f"{mark:<18}  {o.claim_id:<{width}}  {summary}")
            for h in o.evaluation.hypotheses:
                lines.append(f"{'':<18}  {'':<{width}}    hypothesis {h.line()}")
    counts = ", ".join(f"{n} {k}" for k, n in result.counts().items() if n)
    lines.append(f"{len(result.outcomes)} claims: {counts}; exit status {result.exit_status}")
    return "\n".join(lines) + "\n"


def _as_check_results(result):
    """The outcomes as :class:`verify.records.CheckResult` for the report writer (holds -> confirmed, a failure ->
    refuted with the instance as counterexample, anything else -> not_checkable)."""
    from verify.records import CheckResult, Verdict

    out = []
    for o in result.outcomes:
        e = o.evaluation
        if o.status == "holds":
            verdict = Verdict.CONFIRMED
        elif o.status in ("violated", "hypotheses_not_met"):
            verdict = Verdict.REFUTED
        else:
            verdict = Verdict.NOT_CHECKABLE
        counter = {"instance": result.description, "status": o.status,
                   **{h.name: h.value for h in e.hypotheses}} if verdict is Verdict.REFUTED else None
        out.append(CheckResult(claim_id=o.claim_id, verdict=verdict, summary=f"on {result.description}: {e.summary}",
                               quantity=e.quantity, measured=e.value, bound=e.bound,
                               margin=None if e.value is None or e.bound is None else e.bound - e.value,
                               counterexample=counter, details={"status": o.status, "hypotheses": [
                                   h.line() for h in e.hypotheses]}))
    return out


def run_check(args) -> int:
    """``fedcheck check``: load, decide, print; the exit status of the outcomes (errors raise; see fedcheck.cli)."""
    import numpy as np

    from verify.instance import CheckOptions, check_instance

    html_dir = args.html
    if html_dir is not None:  # before any work: an unusable DIR must not cost the check
        from reports import OutputError, prepare_out_dir

        try:
            prepare_out_dir(html_dir)
        except OutputError as exc:
            raise ConfigError(f"argument --html: {exc}") from None
    if args.paper is not None:
        try:
            _slug(args.paper)
        except ValueError as exc:
            raise ConfigError(f"argument --paper: {exc}") from None
    user = load_instance(args.config, args.paper)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        result = check_instance(user, CheckOptions(simulate=args.simulate, seed=int(user.settings.get("seed", 0))))
    if html_dir is not None:
        from reports import OutputError, build_report
        from verify.registry import select_claims

        claims = select_claims([user.paper])
        meta = {"profile": "thorough", "seed": int(user.settings.get("seed", 0)), "executor": "serial",
                "only": [user.paper], "instance": user.description}
        try:
            build_report(claims, _as_check_results(result), html_dir, meta)
        except (OutputError, OSError) as exc:
            raise ConfigError(f"argument --html: could not write the report to {str(html_dir)!r}: "
                              f"{getattr(exc, 'strerror', None) or exc}") from None
    if args.json:
        from fedcheck._config import strict_json

        sys.stdout.write(strict_json(result.to_json(), indent=2) + "\n")
    else:
        sys.stdout.write(_table(result))
    if result.exit_status == 3 and not args.quiet:
        stuck = next(o for o in result.outcomes if o.status == "not_converged")
        raise NotConverged(f"{stuck.claim_id}: {stuck.evaluation.summary}")
    if result.failures and not args.quiet:
        first = result.failures[0]
        e = first.evaluation
        value = "" if e.value is None else f" ({e.quantity} = {e.value:.6g}, bound {e.bound:.6g})" \
            if e.bound is not None else f" ({e.quantity} = {e.value:.6g})"
        print(f"fedcheck check: {len(result.failures)} claim(s) fail on this instance; first: {first.claim_id}: "
              f"{first.status}{value}", file=sys.stderr)
    return result.exit_status
