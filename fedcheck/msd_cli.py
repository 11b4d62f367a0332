"""``fedcheck msd CONFIG.toml``: the theoretical MSD of PAO-Fed before running anything.

Reads the ``[instance]`` section of a PAO-Fed configuration (the schema of
``fedcheck/examples/paofed_reference.toml``; other sections are accepted and ignored) and reports the
paper's step-size bounds, the exact stability thresholds, rho(F) and the steady-state MSD for the seed's
truncated F and/or the exact F (Gaussian regressors), and optionally the transient curve.
"""

from __future__ import annotations

import csv
import math
import os
import sys
from pathlib import Path

__all__ = ["add_msd_parser", "msd_report", "run_msd"]


def add_msd_parser(sub) -> None:
    msd = sub.add_parser("msd", help="theoretical MSD of PAO-Fed for a configuration (no simulation)")
    msd.add_argument("config", type=Path, metavar="CONFIG.toml")
    msd.add_argument("--model", choices=("seed", "exact", "both"), default="both",
                     help="seed: the paper's F (mu^2 term dropped); exact: with the Gaussian mu^2 term (default both)")
    msd.add_argument("--method", choices=("auto", "naive", "structured", "white", "grouped", "classes"),
                     default="auto",
                     help="naive forms F explicitly (N <= 100); structured never forms it; white reduces R_k = v_k I "
                          "to N_b^2 problems; grouped also reduces classes of clients sharing (p, v, sigma2) to "
                          "per-class blocks; classes does so for any R_k (D x D blocks; the MSD only, no rho(F) or "
                          "thresholds) (default auto: the cheapest that applies, reported as 'route')")
    msd.add_argument("--certify-stability", action="store_true",
                     help="classes route: decide the exact model's mean-square stability by solving S - F(S) = I on the "
                          "client classes (S positive definite iff stable; one more solve of the MSD's size); other "
                          "routes decide it by rho(F) anyway")
    msd.add_argument("--progress", action="store_true", help="report each stage on stderr (default when a terminal)")
    msd.add_argument("--transient", type=int, default=None, metavar="N", help="also the MSD curve for n = 0..N")
    msd.add_argument("--csv", type=Path, default=None, metavar="FILE", help="write the transient curve as CSV")
    msd.add_argument("--force", action="store_true", help="let --csv replace an existing FILE")
    msd.add_argument("--json", action="store_true", help="print JSON")
    msd.set_defaults(subparser=msd)


#: Smallest mu lambda_max ``fedcheck msd`` accepts: below it rho(F) = 1 - O(mu lambda_max) cannot be told from 1
#: in double precision (the stability verdict and the MSD would be noise).
MSD_MIN_MU_LAMBDA = 1e-8


def _write_csv_atomically(path: Path, report: dict, models, transient: int) -> None:
    """The transient curve as CSV, written to a temporary file next to ``path`` and renamed into place."""
    import os
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(["n"] + [f"msd_db_{m}" for m in models])
            for n in range(transient + 1):
                writer.writerow([n] + [report["models"][m]["transient_db"][n] for m in models])
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _db(x: float) -> float:
    return 10.0 * math.log10(x) if x > 0 else -math.inf


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _analyses(instance, models, route: str, progress, workers: int, certify: bool = False) -> list:
    """mean_square_analysis of each model; with ``workers > 1`` the models run in parallel, each in its own process
    where :func:`_can_fork` (else in threads). Each model's computation is the same sequence of operations either way,
    so the results are identical.

    Processes rather than threads: the solves are numpy passes over long vectors, but the Krylov bookkeeping between
    them (small eigenproblems, block loops) holds the GIL, and two threads serialised on it: at N = 980 two threads
    took 20.7 s wall (34.7 CPU-s) where two processes take 14.7 s (29 CPU-s) and one model alone 12.1 s."""
    from threadpoolctl import threadpool_limits

    from theory.msd.routes import mean_square_analysis

    def one(model):
        return mean_square_analysis(instance, model, route=route, progress=progress, certify_stability=certify)

    if workers <= 1 or len(models) <= 1:
        return [one(md) for md in models]
    if _can_fork():
        return _forked(one, models, min(workers, len(models)))
    from concurrent.futures import ThreadPoolExecutor

    # one BLAS thread for the whole parallel section (the per-model limits nest inside it)
    with threadpool_limits(1), ThreadPoolExecutor(max_workers=min(workers, len(models))) as pool:
        return list(pool.map(one, models))


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


def _can_fork() -> bool:
    """Fork only where it is safe: on Linux (macOS's system libraries are not fork-safe) from a single-threaded caller
    (a fork copies only the calling thread: a lock another thread holds would stay locked in the child)."""
    import threading

    return sys.platform.startswith("linux") and threading.active_count() == 1


def _child(fn, arg, conn) -> None:
    """Run ``fn(arg)`` in a forked process and send ``(True, result)`` or ``(False, exception)`` back."""
    try:
        try:
            conn.send((True, fn(arg)))
        except BaseException as exc:  # noqa: BLE001 -- every failure goes back to the parent, which re-raises it
            try:
                conn.send((False, exc))
            except Exception:  # an exception that cannot be pickled: its text
                conn.send((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
    finally:
        conn.close()


def _forked(fn, args, workers: int) -> list:
    """``[fn(a) for a in args]`` with up to ``workers`` at a time: the last ``workers - 1`` in forked children, the
    rest here. A child that ends without an answer (killed, out of memory) raises ``RuntimeError`` naming its
    argument; a child's exception is re-raised here; on any failure the other children are terminated."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    local, remote = list(args[:len(args) - (workers - 1)]), list(args[len(args) - (workers - 1):])
    children = []
    try:
        for a in remote:
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_child, args=(fn, a, send), daemon=True)
            proc.start()
            send.close()
            children.append((a, proc, recv))
        results = [fn(a) for a in local]
        for a, proc, recv in children:
            try:
                ok, value = recv.recv()
            except EOFError:
                proc.join()
                raise RuntimeError(f"the worker process for {a!r} ended without a result (exit code {proc.exitcode})"
                                   ) from None
            proc.join()
            if not ok:
                raise value
            results.append(value)
        return results
    finally:
        for _a, proc, recv in children:
            recv.close()
            if proc.is_alive():
                proc.terminate()
                proc.join()


def msd_report(instance, models, method: str = "auto", transient: int | None = None, progress=None,
               workers: int | None = None, certify_stability: bool = False) -> dict:
    """Bounds, thresholds, rho(F) and MSD for ``instance`` (a :class:`theory.msd.PAOFedInstance`).

    The route (grouped, white, structured or naive) is chosen by :func:`theory.msd.routes.choose_route` unless
    ``method`` forces one; ``progress(message)`` receives one line per stage. The models are analysed in parallel
    processes, up to ``workers`` (default: the cores available to the process, at most one per model); the results do
    not depend on it.
    """
    from theory.msd import msd_transient, msd_transient_naive, paper_mean_bound, paper_mean_square_bound
    from theory.msd.routes import choose_route, mean_spectral_radius, mean_threshold_fast

    N = instance.n_blocks * instance.D
    route = choose_route(instance, method)
    say = progress or (lambda _msg: None)
    say(f"route: {route} (N = {N})")
    mean_bracket = mean_threshold_fast(instance)
    out = {
        "mu": instance.mu, "lambda_max": instance.lambda_max, "mu_times_lambda_max": instance.mu * instance.lambda_max,
        "N": N, "method": route, "route": route,
        "paper_bounds": {"mean": paper_mean_bound(instance), "mean_square": paper_mean_square_bound(instance)},
        "thresholds": {"mean": [mean_bracket.lo, mean_bracket.hi]},
        "mean_spectral_radius": mean_spectral_radius(instance),
        "models": {},
    }
    workers = _cores() if workers is None else int(workers)
    workers = _workers_that_fit(instance, route, min(workers, len(models)), say)
    analyses = _analyses(instance, models, route, progress, workers, certify_stability)
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
            entry["note"] = (f"mu = {instance.mu:.6g} is outside the mean-square stable range of the {model} model: "
                             f"S - F(S) = I has no positive definite solution (smallest eigenvalue "
                             f"{min(v for v in (cert['lambda_min_symmetric'], cert['lambda_min_difference']) if v is not None):.6g}"
                             f"); rho(F) and the threshold are not computed on the {res.route} route")
        else:
            entry["msd_db"] = None
            where = (f"stable for mu < {bracket.lo:.6g}" if bracket.lo > 0 else
                     f"no stable step size found down to mu = {bracket.hi:.6g}")
            entry["note"] = (f"mu = {instance.mu:.6g} is outside the mean-square stable range of the {model} model: "
                             f"rho(F) = {radius:.12g} is not below 1 (margin 1e-9); {where}")
        if transient is not None:
            naive = route == "naive"
            curve = msd_transient_naive(instance, transient, model) if naive else msd_transient(instance, transient, model)
            entry["transient_db"] = [_db(float(v)) for v in curve]
        out["models"][model] = entry
    return out


def run_msd(args) -> int:
    from fedcheck._files import MAX_WORK, check_budget
    from fedcheck.paofed_cli import ConfigError, _instance, _load_table

    parser = args.subparser
    if args.transient is not None and args.transient < 0:
        parser.error(f"argument --transient: must be an integer >= 0, got {args.transient}")
    if args.csv is not None and args.transient is None:
        parser.error("argument --csv: needs --transient N")
    if args.force and args.csv is None:
        parser.error("argument --force: only allowed with --csv")
    if args.csv is not None:  # before the work: never overwrite a file silently
        if args.csv.is_dir():
            parser.error(f"argument --csv: {str(args.csv)!r} is a directory")
        if (args.csv.exists() or args.csv.is_symlink()) and not args.force:
            parser.error(f"argument --csv: {str(args.csv)!r} exists; add --force to replace it")
        if not args.csv.parent.is_dir():
            parser.error(f"argument --csv: the directory {str(args.csv.parent)!r} does not exist")
    table = _load_table(args.config)  # ConfigError: exit 2 with one line (fedcheck.cli.main)
    source = table.get("data", {}).get("source", "linear")
    if source != "linear":
        raise ConfigError(f"data.source = {source!r}: fedcheck msd analyses the linear model of [instance] "
                          f"(SIM-F, data.source = 'linear'); SIM-E has no closed-form MSD")
    if "instance" not in table:
        raise ConfigError("instance: CONFIG has no [instance] section; fedcheck msd needs one (write an empty "
                          "[instance] for the reference instance of spec 4.1)")
    instance = _instance(table, Path(args.config).parent, min_mu_lambda=MSD_MIN_MU_LAMBDA)
    if args.transient is not None:
        n_state = (instance.n_blocks * instance.D) ** 2
        check_budget("the transient work N^2 x (transient + 1)", n_state * (args.transient + 1), MAX_WORK,
                     "--transient")
    models = ("seed", "exact") if args.model == "both" else (args.model,)
    try:
        progress = None
        if getattr(args, "progress", False) or sys.stderr.isatty():
            def progress(msg):
                print(f"fedcheck msd: {msg}", file=sys.stderr, flush=True)
        report = msd_report(instance, models, args.method, args.transient, progress=progress,
                            certify_stability=args.certify_stability)
    except ValueError as exc:  # blame --method only for what it decides (the naive size limit)
        parser.error(str(exc) if "--method" in str(exc) else f"instance: {exc}")
    except RuntimeError as exc:  # a model's worker process was killed (e.g. out of memory): not the input's fault
        print(f"fedcheck msd: error: {exc}", file=sys.stderr)
        return 1
    if args.csv is not None:
        _write_csv_atomically(args.csv, report, models, args.transient)
    if args.json:
        from fedcheck._config import strict_json

        for entry in report["models"].values():  # strict JSON: say why a value is null
            if entry.get("msd_db") is None:
                entry.setdefault("status", "unstable: rho(F) >= 1, no steady state")
            elif not math.isfinite(entry["msd_db"]):
                entry.setdefault("status", "msd = 0: msd_db is -infinity (null)")
        sys.stdout.write(strict_json(report, indent=2, default=float) + "\n")
        return 0
    lam = report["lambda_max"]
    print(f"PAO-Fed instance: N = {report['N']}, mu = {report['mu']:.6g} (mu lambda_max = {report['mu_times_lambda_max']:.4g}),"
          f" lambda_max = {lam:.6g}; route: {report['route']}")
    print(f"paper bounds: mean mu < 2/lambda_max = {report['paper_bounds']['mean']:.6g}; "
          f"mean square mu < 1/lambda_max = {report['paper_bounds']['mean_square']:.6g}")
    lo, hi = report["thresholds"]["mean"]
    print(f"exact mean threshold: mu* in [{lo:.6g}, {hi:.6g}] ({lo * lam:.5g}/lambda_max); rho(M) = "
          f"{report['mean_spectral_radius']:.6g}")
    for model, entry in report["models"].items():
        lo, hi = entry["threshold_mu"]
        if entry["spectral_radius"] is None or not math.isfinite(entry["spectral_radius"]):
            decided = {None: "stability not decided", True: "stable by its certificate",
                       False: "unstable by its certificate"}[entry["stable"]]
            line = f"{model} F: rho(F) and threshold not computed ({entry['route']} route, {decided}); "
        else:
            line = (f"{model} F: rho(F) = {entry['spectral_radius']:.6g}, threshold mu* in [{lo:.6g}, {hi:.6g}] "
                    f"({lo * lam:.5g}/lambda_max); ")
        line += f"MSD_inf = {entry['msd_db']:.4f} dB" if entry["msd_db"] is not None else entry["note"]
        print(line)
    return 0
