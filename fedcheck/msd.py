"""``fedcheck msd CONFIG.toml``: the theoretical MSD of PAO-Fed (thesis ch. 4) before running anything.

Reads the ``[instance]`` section of a PAO-Fed configuration (the schema of
``fedcheck/examples/paofed_reference.toml``; other sections are accepted and ignored) and reports the
paper's step-size bounds, the exact stability thresholds, rho(F) and the steady-state MSD for the seed's
truncated F and/or the exact F (Gaussian regressors), and optionally the transient curve, a simulation beside the
theory (``--simulate RUNS``, :mod:`fedcheck.msd_simulation`) and their figure (``--plot FILE``).
"""

from __future__ import annotations

import csv
import math
import os
import sys
from pathlib import Path

from fedcheck._errors import ConfigError, NotConverged

__all__ = ["add_msd_parser", "load_instance", "msd_report", "run_msd"]


def add_msd_parser(sub) -> None:
    msd = sub.add_parser("msd", help="theoretical MSD of PAO-Fed for a configuration (no simulation)")
    msd.add_argument("config", type=Path, metavar="CONFIG.toml")
    msd.add_argument("--model", choices=("seed", "exact", "both"), default="both",
                     help="seed: the paper's F (mu^2 term dropped); exact: with the Gaussian mu^2 term (default both)")
    msd.add_argument("--method", choices=("auto", "naive", "structured", "white", "grouped", "classes", "class-mean"),
                     default="auto",
                     help="naive forms F explicitly (N <= 100); structured never forms it; white reduces R_k = v_k I "
                          "to N_b^2 problems; grouped also reduces classes of clients sharing (p, v, sigma2) to "
                          "per-class blocks; classes does so for any R_k (D x D blocks; the MSD only, no rho(F) or "
                          "thresholds) (default auto: the cheapest that applies, reported as 'route'); class-mean "
                          "analyses the dynamics with each R_k replaced by its mean over the clients of equal p_k "
                          "(each client's noise kept): an uncertified ESTIMATE for per-client R_k, which no exact "
                          "route answers at scale (docs/msd.md#per-client); --simulate then simulates the per-client "
                          "federation")
    msd.add_argument("--certify-stability", action="store_true",
                     help="classes route: decide the exact model's mean-square stability by solving S - F(S) = I on "
                          "the "
                          "client classes (S positive definite iff stable; one more solve of the MSD's size); other "
                          "routes decide it by rho(F) anyway")
    msd.add_argument("--progress", action="store_true", help="report each stage on stderr (default when a terminal)")
    msd.add_argument("--transient", type=int, default=None, metavar="N", help="also the MSD curve for n = 0..N")
    msd.add_argument("--csv", type=Path, default=None, metavar="FILE", help="write the transient curve as CSV")
    msd.add_argument("--simulate", type=_runs, default=None, metavar="RUNS",
                     help="also simulate the algorithm RUNS >= 2 times (faithful, steps P1-P9) and set its "
                          "steady-state MSD and 95 %% interval beside each model")
    msd.add_argument("--seed", type=_seed, default=None, metavar="S", help="seed of the simulation (default 0)")
    msd.add_argument("--plot", type=Path, default=None, metavar="FILE",
                     help="draw the transient (--transient) or the simulation beside the theory (--simulate) to FILE "
                          "(.png or .svg)")
    msd.add_argument("--force", action="store_true",
                     help="let --csv or --plot replace an existing FILE that fedcheck did not write")
    msd.add_argument("--quiet", action="store_true", help="no progress on stderr")
    msd.add_argument("--json", action="store_true", help="print JSON")
    msd.set_defaults(subparser=msd)


def _runs(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 2 (runs), got {text!r}") from None
    if value < 2:
        raise argparse.ArgumentTypeError(f"must be an integer >= 2 (runs: an interval needs two), got {text!r}")
    return value


def _seed(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return value


#: Smallest mu lambda_max ``fedcheck msd`` accepts: below it rho(F) = 1 - O(mu lambda_max) cannot be told from 1
#: in double precision (the stability verdict and the MSD would be noise).
MSD_MIN_MU_LAMBDA = 1e-8
#: Largest mu lambda_max ``fedcheck msd`` accepts: the exact F's rho grows like (mu lambda_max)^2 and its
#: eigensolver breaks down beyond about 1e150 (ARPACK cannot build a factorization of such a matrix).
MSD_MAX_MU_LAMBDA = 1e100


def _write_csv_atomically(path: Path, report: dict, models, transient: int, *, force: bool) -> None:
    """The transient curve as CSV, written to a temporary file next to ``path`` and moved into place; an existing file
    only with ``force`` (a CSV carries no mark of fedcheck), checked again at the write
    (:func:`fedcheck._files.write_new_or_replace`)."""
    from fedcheck._files import write_new_or_replace

    def write(fh) -> None:
        writer = csv.writer(fh)
        writer.writerow(["n"] + [f"msd_db_{m}" for m in models])
        for n in range(transient + 1):
            writer.writerow([n] + [report["models"][m]["transient_db"][n] for m in models])

    write_new_or_replace(path, write, may_replace=lambda _p: force, option="--csv", binary=False)


def _db(x: float) -> float:
    return 10.0 * math.log10(x) if x > 0 else -math.inf


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _analyse(job):
    """``mean_square_analysis`` of one model (module level, so a worker process can run it)."""
    from theory.msd.routes import mean_square_analysis

    instance, model, route, progress, certify, noise = job
    return mean_square_analysis(instance, model, route=route, progress=progress, certify_stability=certify,
                                noise=noise)


def _say(message: str) -> None:
    print(f"fedcheck msd: {message}", file=sys.stderr, flush=True)


#: Below this many unknowns N = N_b D the models are analysed one after the other in this process (a worker
#: process costs more to start than such an analysis).
PARALLEL_MIN_N = 2000


def _analyses(instance, models, route: str, progress, workers: int, certify: bool = False, noise=None) -> list:
    """mean_square_analysis of each model; with ``workers > 1`` the models run side by side on the process pool of
    :mod:`verify.executor` (one model per process). Each model's computation is the same sequence of operations
    either way, so the results are identical.

    Processes rather than threads: the solves are numpy passes over long vectors, but the Krylov bookkeeping between
    them (small eigenproblems, block loops) holds the GIL, and two threads serialised on it: at N = 980 two threads
    took 20.7 s wall (34.7 CPU-s) where two processes take 14.7 s (29 CPU-s) and one model alone 12.1 s."""
    jobs = [(instance, model, route, progress, certify, noise) for model in models]
    if workers <= 1 or len(models) <= 1 or instance.n_blocks * instance.D < PARALLEL_MIN_N:
        return [_analyse(job) for job in jobs]
    from verify.executor import ProcessExecutor

    with ProcessExecutor(min(workers, len(models))) as pool:
        return pool.map(_analyse, jobs)


def _available_memory() -> float | None:
    """MemAvailable of /proc/meminfo in bytes (None where there is no such file)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024.0
    except OSError:
        return None
    return None


#: Parallel models may use at most this fraction of the available memory (the rest: the OS, the caller).
PARALLEL_MEMORY_FRACTION = 0.8


def _workers_that_fit(instance, route: str, workers: int, say) -> int:
    """``workers``, or 1 when that many classes-route solves at once would not fit in memory (each holds a few
    reduced states: 3.6 GB at the paper's scale), said through ``say``."""
    if workers <= 1 or route != "classes":
        return workers
    from theory.msd.classes import classes_peak_bytes

    need, avail = workers * classes_peak_bytes(instance), _available_memory()
    if avail is None or need <= PARALLEL_MEMORY_FRACTION * avail:
        return workers
    say(f"the models one after the other: {workers} at once would need about {need / 1e9:.1f} GB, "
        f"{avail / 1e9:.1f} GB are available")
    return 1


def route_memory_budget() -> float:
    """The memory a route may plan for: :data:`theory.msd.routes.MEMORY_BUDGET`, or less where 80 % of the machine's
    available memory is less."""
    from theory.msd.routes import MEMORY_BUDGET

    avail = _available_memory()
    return MEMORY_BUDGET if avail is None else min(MEMORY_BUDGET, PARALLEL_MEMORY_FRACTION * avail)


def msd_report(instance, models, method: str = "auto", transient: int | None = None, progress=None,
               workers: int | None = None, certify_stability: bool = False) -> dict:
    """Bounds, thresholds, rho(F) and MSD for ``instance`` (a :class:`theory.msd.PAOFedInstance`).

    The route (grouped, white, structured or naive) is chosen by :func:`theory.msd.routes.choose_route` unless
    ``method`` forces one; ``progress(message)`` receives one line per stage. The models are analysed in parallel
    processes, up to ``workers`` (default: the cores available to the process, at most one per model); the results do
    not depend on it.
    """
    return msd_report_and_analyses(instance, models, method, transient, progress, workers, certify_stability)[0]


def _fourth_moment_note(instance, model: str, bracket) -> str:
    """Why the exact model is unstable where the seed's is not (said in the output, not only in a docs page)."""
    if model != "exact" or not bracket.lo > 0:
        return ""
    import numpy as np

    trace = float(np.max(np.trace(instance.R, axis1=1, axis2=2)))
    return (f"; the exact F keeps the mu^2 fourth-moment term of Gaussian regressors (2 R X R + tr(R X) R, with "
            f"tr R_k up to {trace:.4g}), which the seed's truncated F drops: it limits mu to below "
            f"{bracket.lo:.3g} (about 2/(tr R + 2 lambda_max) = {2.0 / (trace + 2.0 * instance.lambda_max):.3g}), "
            f"so at this mu only the seed's model has a steady state; set mu below {bracket.lo:.3g} for both")


def msd_report_and_analyses(instance, models, method: str = "auto", transient: int | None = None, progress=None,
                            workers: int | None = None, certify_stability: bool = False) -> tuple[dict, dict]:
    """:func:`msd_report` and the :class:`theory.msd.routes.MeanSquareAnalysis` of each model (model -> analysis),
    which ``--simulate`` hands on rather than solving again."""
    from theory.msd import msd_transient, msd_transient_naive, paper_mean_bound, paper_mean_square_bound
    from theory.msd.classes import MEAN_FALLBACK_TOL
    from theory.msd.routes import choose_route, mean_spectral_radius, mean_threshold_fast

    N = instance.n_blocks * instance.D
    estimate = noise = None
    if method == "class-mean":  # every number below is the class-mean dynamics', with the clients' own noise
        instance, noise, estimate = _class_mean(instance)
        method = "classes"
    route = choose_route(instance, method, memory_budget=route_memory_budget())
    say = progress or (lambda _msg: None)
    say(f"route: {route} (N = {N})" + ("" if estimate is None else ", on the class means (an uncertified estimate)"))
    mean_bracket = mean_threshold_fast(instance)
    radius_state: dict = {}
    mean_radius = mean_spectral_radius(instance, state=radius_state, fallback_tol=MEAN_FALLBACK_TOL)
    out = {
        "mu": instance.mu, "lambda_max": instance.lambda_max, "mu_times_lambda_max": instance.mu * instance.lambda_max,
        "N": N, "method": route if estimate is None else "class-mean",
        "route": route if estimate is None else f"class-mean estimate ({route})",
        "paper_bounds": {"mean": paper_mean_bound(instance), "mean_square": paper_mean_square_bound(instance)},
        "thresholds": {"mean": [mean_bracket.lo, mean_bracket.hi]},
        "mean_spectral_radius": mean_radius,
        "models": {},
    }
    if "ritz_tol" in radius_state:  # a cluster at the top kept Krylov-Schur from 1e-13: said with the value
        out["mean_spectral_radius_ritz_tol"] = radius_state["ritz_tol"]
    if estimate is not None:
        out["class_mean_estimate"] = estimate
    workers = _cores() if workers is None else int(workers)
    workers = _workers_that_fit(instance, route, min(workers, len(models)), say)
    analyses = _analyses(instance, models, route, progress, workers, certify_stability, noise)
    for model, res in zip(models, analyses, strict=True):
        bracket, radius = res.threshold, res.spectral_radius
        out["thresholds"][model] = [bracket.lo, bracket.hi]
        # an (S2) solution alone does not show rho(F) < 1 (it exists whenever 1 is not an eigenvalue of F)
        cert = res.stability_certificate
        decided = math.isfinite(radius) or (res.msd is None and cert is None)
        stable = (res.msd is not None) if decided else (cert["stable"] if cert is not None else None)
        entry = {"spectral_radius": radius, "stable": stable,
                 "threshold_mu": [bracket.lo, bracket.hi],
                 "threshold_mu_times_lambda_max": [bracket.lo * instance.lambda_max, bracket.hi * instance.lambda_max],
                 "route": res.route, "seconds": res.seconds}
        if res.radius_residual is not None:  # rho(F) at mu to the precision the report needs (Ritz residual)
            entry["spectral_radius_residual"] = res.radius_residual
        if cert is not None:
            entry["stability_certificate"] = cert
        if stable is None:
            entry["stability"] = (f"not decided on the {res.route} route: rho(F) is not computed there; the MSD is the "
                                  "solution of (S2), the steady state if mu is mean-square stable")
        if res.notes:
            entry["notes"] = list(res.notes)
        if res.msd is not None:
            entry.update(msd=res.msd, msd_db=_db(res.msd), solver=res.solver)
            if res.residual is not None:
                entry["residual"] = res.residual
            if res.psd_certificate is not None:
                entry["psd_certificate"] = res.psd_certificate
        elif cert is not None and cert["stable"] is False:
            entry["msd_db"] = None
            entry["status"] = "unstable (certificate): no steady state"
            smallest = min(v for v in (cert["lambda_min_symmetric"], cert["lambda_min_difference"]) if v is not None)
            entry["note"] = (f"mu = {instance.mu:.6g} is outside the mean-square stable range of the {model} model: "
                             f"S - F(S) = I has no positive definite solution (smallest eigenvalue "
                             f"{smallest:.6g}"
                             f"); rho(F) and the threshold are not computed on the {res.route} route")
        else:
            entry["msd_db"] = None
            where = (f"stable for mu < {bracket.lo:.6g}" if bracket.lo > 0 else
                     f"no stable step size found down to mu = {bracket.hi:.6g}")
            entry["note"] = (f"mu = {instance.mu:.6g} is outside the mean-square stable range of the {model} model: "
                             f"rho(F) = {radius:.6g} is not below 1 (margin 1e-9); {where}"
                             f"{_fourth_moment_note(instance, model, bracket)}")
        if transient is not None:
            naive = route == "naive"
            curve = (msd_transient_naive(instance, transient, model) if naive
                     else msd_transient(instance, transient, model))
            entry["transient_db"] = [_db(float(v)) for v in curve]
        out["models"][model] = entry
    return out, dict(zip(models, analyses, strict=True))


#: What the class-mean estimate's error was measured to be (docs/msd.md#per-client), said with every estimate.
CLASS_MEAN_MEASURED = ("0.07 dB on small per-client RFF federations (4 to 32 clients, the paper's noise variances, "
                       "mu lambda_max up to 0.4)")


def _class_mean(instance):
    """The class-mean federation of ``instance`` and the report's description of what it estimates."""
    import numpy as np

    from theory.msd.per_client import class_mean_instance, class_mean_noise, class_mean_spread

    mean = class_mean_instance(instance)
    spread = class_mean_spread(instance, mean=mean)
    return mean, class_mean_noise(instance, mean=mean), {
        "certified": False, "classes": int(np.unique(instance.p).size), "spread": spread,
        "note": ("every number of this report is that of the class-mean dynamics (each R_k replaced by its mean over "
                 "the clients of equal p_k; each client's noise sigma2_eta_k R_k kept, which the MSD sees exactly "
                 "against those dynamics); its MSD estimates the per-client MSD with an error that is not bounded "
                 "(measured up to " + CLASS_MEAN_MEASURED + ", of either sign: docs/msd.md#per-client)"
                 + ("" if spread > 0.0 else "; here every class is homogeneous, so the estimate is the exact answer")),
    }


def load_instance(path, *, min_mu_lambda: float = 0.0, max_mu_lambda: float = math.inf):
    """The analysis instance of the ``[instance]`` section of the PAO-Fed configuration at ``path``.

    The other sections are not used, but the whole file is checked as ``fedcheck run paofed`` checks it (a config for
    it is accepted as it is; a misspelt key or section, a bad value or another paper's ``paper`` line anywhere in it
    is refused, not ignored); a config without ``[instance]`` or with ``data.source = "synthetic-rff"`` is refused.
    The covariances K D^2 and the extended state are checked against the limits before they are formed. ConfigError
    names the field.
    """
    from fedcheck.run import load as load_run
    from fedcheck.run import paofed as plugin
    from fedcheck.run import read_table
    from fedcheck.run._budget import check

    path = Path(path)
    table = read_table(path)
    source = table.get("data", {}).get("source", "linear") if isinstance(table.get("data"), dict) else "linear"
    if source != "linear":
        raise ConfigError(f"data.source = {source!r}: fedcheck msd analyses the linear model of [instance] "
                          f"(SIM-F, docs/papers/paofed.md#choice-simulators, data.source = 'linear'); "
                          f"SIM-E (docs/papers/paofed.md#choice-simulators) has no closed-form MSD")
    if "instance" not in table:
        raise ConfigError("instance: CONFIG has no [instance] section; fedcheck msd needs one (write an empty "
                          "[instance] for the reference instance)")
    # the whole file as `fedcheck run paofed` checks it (other sections never ignored); its setup holds the checked
    # [instance] fields, so they are parsed (and an R_npy read) once
    spec = load_run("paofed", path)[2].spec
    check(plugin.instance_costs(spec))
    return plugin.build_instance(spec, min_mu_lambda=min_mu_lambda, max_mu_lambda=max_mu_lambda)


def _not_converged(message: str) -> bool:
    return "did not converge" in message or "not converge" in message


def _check_outputs(args, parser) -> None:
    """The options' combinations and the output paths, before any work (never overwrite a file silently)."""
    from fedcheck._plot import check_plot_path

    if args.transient is not None and args.transient < 0:
        parser.error(f"argument --transient: must be an integer >= 0, got {args.transient}")
    if args.csv is not None and args.transient is None:
        parser.error("argument --csv: needs --transient N")
    if args.plot is not None and args.transient is None and args.simulate is None:
        parser.error("argument --plot: needs --transient N or --simulate RUNS (the curves it draws)")
    if args.force and args.csv is None and args.plot is None:
        parser.error("argument --force: only allowed with --csv or --plot")
    if args.seed is not None and args.simulate is None:
        parser.error("argument --seed: only allowed with --simulate")
    from fedcheck._files import same_file

    for option, out in (("--csv", args.csv), ("--plot", args.plot)):
        if out is not None and same_file(out, args.config):
            parser.error(f"argument {option}: {str(out)!r} is the configuration itself (an output never replaces an "
                         f"input, even with --force)")
    if args.csv is not None and args.plot is not None and same_file(args.csv, args.plot):
        parser.error(f"argument --plot: the same file as --csv ({str(args.csv)!r}); give two files")
    if args.csv is not None:
        if args.csv.is_dir():
            parser.error(f"argument --csv: {str(args.csv)!r} is a directory")
        if (args.csv.exists() or args.csv.is_symlink()) and not args.force:
            parser.error(f"argument --csv: {str(args.csv)!r} exists; add --force to replace it")
        if not args.csv.parent.is_dir():
            parser.error(f"argument --csv: the directory {str(args.csv.parent)!r} does not exist")
    check_plot_path(args.plot, force=args.force)  # ConfigError: exit 2, one line


def run_msd(args) -> int:
    """``fedcheck msd``: exit 0, 2 on a bad input, 3 when a solver did not converge on a valid input (one line)."""
    from concurrent.futures.process import BrokenProcessPool

    from scipy.sparse.linalg import ArpackError, ArpackNoConvergence

    from fedcheck._files import MAX_WORK, check_budget

    parser = args.subparser
    _check_outputs(args, parser)
    instance = load_instance(args.config, min_mu_lambda=MSD_MIN_MU_LAMBDA,
                             max_mu_lambda=MSD_MAX_MU_LAMBDA)  # ConfigError: exit 2, one line
    if args.transient is not None:
        n_state = (instance.n_blocks * instance.D) ** 2
        check_budget("the transient work N^2 x (transient + 1)", n_state * (args.transient + 1), MAX_WORK,
                     "--transient")
    if args.simulate is not None:  # the shortest simulation's cost, before the theory's work
        from fedcheck.msd_simulation import simulation_cost
        from fedcheck.run._budget import check

        check(simulation_cost(instance, args.simulate, 500))
    models = ("seed", "exact") if args.model == "both" else (args.model,)
    progress = _say if not args.quiet and (args.progress or sys.stderr.isatty()) else None
    try:
        report, analyses = msd_report_and_analyses(instance, models, args.method, args.transient, progress=progress,
                                                   certify_stability=args.certify_stability)
    except NotConverged:
        raise
    except (ArpackError, ArpackNoConvergence) as exc:  # the eigensolver failed on a valid instance
        raise NotConverged(f"instance: ARPACK: {' '.join(str(exc).split())}") from None
    except (ValueError, ArithmeticError) as exc:
        text = " ".join(str(exc).split())
        if _not_converged(text):  # valid input, the solver stopped at its cap: exit 3
            raise NotConverged(f"instance: {text}") from None
        # blame --method only for what it decides (the naive size limit)
        parser.error(text if text.startswith("--method") else f"instance: {text}")
    except BrokenProcessPool as exc:  # a model's worker process was killed (e.g. out of memory)
        print(f"fedcheck msd: error: a model's worker process ended without a result (killed, or out of memory?): "
              f"{' '.join(str(exc).split()) or type(exc).__name__}", file=sys.stderr)
        return 1
    except RuntimeError as exc:  # not the input's fault, not a solver cap: an internal failure
        print(f"fedcheck msd: error: the analysis failed: {' '.join(str(exc).split()) or type(exc).__name__}",
              file=sys.stderr)
        return 1
    tvs = None
    if args.simulate is not None:
        from fedcheck.msd_simulation import simulate, simulation_json, simulation_plan

        iterations, skipped = simulation_plan(instance, report, analyses, args.simulate)
        if skipped is not None:  # minutes of simulation that could decide nothing
            report["simulation"] = skipped
        else:
            if progress is not None:
                progress(f"simulating {args.simulate} runs of {iterations} iterations (faithful)")
            seed = 0 if args.seed is None else args.seed
            tvs = simulate(instance, report, analyses, args.simulate, seed, quiet=args.quiet,
                           iterations=iterations)
            report["simulation"] = simulation_json(tvs, seed)
    if args.csv is not None:
        _write_csv_atomically(args.csv, report, models, args.transient, force=args.force)
    if args.plot is not None:
        from fedcheck._plot import write_plot
        from fedcheck.msd_simulation import msd_figures

        write_plot(args.plot, msd_figures(report, tvs), force=args.force)
    if args.json:
        from fedcheck._config import strict_json

        for entry in report["models"].values():  # strict JSON: say why a value is null
            if entry.get("msd_db") is None:
                entry.setdefault("status", "unstable: rho(F) >= 1, no steady state")
            elif not math.isfinite(entry["msd_db"]):
                entry.setdefault("status", "msd = 0: msd_db is -infinity (null)")
        sys.stdout.write(strict_json(report, indent=2, default=_plain) + "\n")
        return 0
    _print_text(report, tvs)
    return 0


def _plain(value):
    """numpy arrays and scalars for JSON."""
    return value.tolist() if hasattr(value, "tolist") else float(value)


def _print_text(report: dict, tvs) -> None:
    from fedcheck.run._output import fmt_bracket

    lam = report["lambda_max"]
    print(f"PAO-Fed instance: N = {report['N']}, mu = {report['mu']:.6g} "
          f"(mu lambda_max = {report['mu_times_lambda_max']:.4g}),"
          f" lambda_max = {lam:.6g}; route: {report['route']}")
    if "class_mean_estimate" in report:
        est = report["class_mean_estimate"]
        print(f"NOT CERTIFIED: {est['note']}; {est['classes']} classes, largest relative spread of R_k in a class "
              f"{est['spread']:.3g}")
    print(f"paper bounds: mean mu < 2/lambda_max = {report['paper_bounds']['mean']:.6g}; "
          f"mean square mu < 1/lambda_max = {report['paper_bounds']['mean_square']:.6g}")
    lo, hi = report["thresholds"]["mean"]
    ritz = report.get("mean_spectral_radius_ritz_tol")
    print(f"exact mean threshold: mu* = {fmt_bracket(lo, hi, 6)} ({lo * lam:.5g}/lambda_max); rho(M) = "
          f"{report['mean_spectral_radius']:.6g}"
          + ("" if ritz is None else f" (to a Ritz residual of {ritz:g}: a cluster of eigenvalues at the top)"))
    for model, entry in report["models"].items():
        lo, hi = entry["threshold_mu"]
        if entry["spectral_radius"] is None or not math.isfinite(entry["spectral_radius"]):
            decided = {None: "stability not decided", True: "stable by its certificate",
                       False: "unstable by its certificate"}[entry["stable"]]
            line = f"{model} F: rho(F) and threshold not computed ({entry['route']} route, {decided}); "
        else:
            line = (f"{model} F: rho(F) = {entry['spectral_radius']:.6g}, threshold mu* = {fmt_bracket(lo, hi, 6)} "
                    f"({lo * lam:.5g}/lambda_max); ")
        if entry["msd_db"] is None:
            line += entry["note"]
        elif math.isfinite(entry["msd_db"]):
            line += f"MSD_inf = {entry['msd_db']:.3f} dB"
        else:
            line += "MSD_inf = 0 (-inf dB)"
        print(line)
    if tvs is not None:
        from fedcheck.msd_simulation import simulation_lines

        for line in simulation_lines(tvs):
            print(line)
    elif report.get("simulation", {}).get("skipped"):
        print(f"simulation NOT RUN: {report['simulation']['settlement']['note']}")
