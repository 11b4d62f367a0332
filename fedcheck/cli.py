"""The ``fedcheck`` console script (``fedcheck --help``; every command in ``docs/commands.md``).

Exit statuses:

* 0 -- the command ran (``report``: every check ran, whatever the verdicts);
* 1 -- ``report``: a check raised or a figure could not be drawn; ``msd``: a model's worker process died;
* 2 -- a usage error: a bad option, config field or data file, a field that does not apply, or an input beyond the
  resource limits; one line on stderr ``fedcheck <command>: error: <option or section.field or file>: ...``;
* 3 -- the input is valid but a solver stopped at its iteration cap without converging; one line on stderr
  ``fedcheck <command>: not converged: <what>: ...`` (a tolerance or cap the input cannot change);
* 130 -- interrupted (Ctrl-C), one line; 141 -- stdout was closed early (``fedcheck ... --json | head``).

Every error of a bad option, config field or data file goes through one handler, :func:`main`: the
sub-commands raise :class:`fedcheck._errors.ConfigError` (or call ``parser.error``) and the message is printed
as one line; :class:`fedcheck._errors.NotConverged` ends with status 3.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from pathlib import Path

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line usage error and exit status 2."""

    def error(self, message: str):  # noqa: D102
        self.exit(2, f"{self.prog}: error: {_one_line(message)}\n")


def _one_line(message) -> str:
    """The message on one line (newlines and runs of blanks become one space), at most 600 characters."""
    text = " ".join(str(message).split())
    return text if len(text) <= 600 else text[:597] + "..."


#: Local worker processes per CPU that ``report --workers`` accepts (each runs whole checks; beyond a few per CPU they
#: only contend for it and for memory).
MAX_WORKERS_PER_CPU = 4


def _int_at_least(lower: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer >= {lower}, got {text!r}") from None
        if value < lower:
            raise argparse.ArgumentTypeError(f"must be an integer >= {lower}, got {text!r}")
        return value

    parse.__name__ = f"integer >= {lower}"
    return parse


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds in (0, 86400], got {text!r}") from None
    if not 0.0 < value <= 86400.0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds in (0, 86400], got {text!r}")
    return value


def _build_parser() -> _Parser:
    from fedcheck import __version__

    parser = _Parser(prog="fedcheck", description="Numerical checks of federated-learning theorems.")
    parser.add_argument("--version", action="version", version=f"fedcheck {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    rep = sub.add_parser("report", help="run the registered checks and write the report")
    rep.add_argument("--only", nargs="+", action="extend", metavar="PREFIX", default=[],
                     help="run only claims whose id is PREFIX or starts with PREFIX. (e.g. pgfl, dp.gaussian_zcdp)")
    rep.add_argument("--profile", choices=("ci", "thorough"), default="ci",
                     help="sample sizes of the checks (default: ci)")
    rep.add_argument("--out", type=Path, default=None, metavar="DIR", help="output directory (default: reports/out)")
    rep.add_argument("--seed", type=_int_at_least(0), default=0, metavar="S", help="root seed (default: 0)")
    rep.add_argument("--workers", type=_int_at_least(1), default=1, metavar="N",
                     help="local worker processes for independent runs (default: 1, serial)")
    rep.add_argument("--dask-scheduler", default=None, metavar="ADDRESS",
                     help="run independent runs on an existing dask.distributed cluster, e.g. tcp://host:8786")
    rep.add_argument("--dask-timeout", type=_positive_seconds, default=None, metavar="SECONDS",
                     help="give up when the dask scheduler does not answer, or has no worker, for this long "
                          "(default: 30)")
    rep.add_argument("--quiet", action="store_true", help="no progress bar")
    rep.add_argument("--json", action="store_true", help="also print results.json to stdout")
    rep.add_argument("--cache-dir", type=Path, default=None, metavar="DIR",
                     help="reuse results whose claim, profile, seed and code are unchanged (default: "
                          "$FEDCHECK_CACHE_DIR or .fedcheck-cache)")
    rep.add_argument("--no-cache", action="store_true", help="run every check afresh (and store nothing)")
    rep.add_argument("--data", action="append", default=[], metavar="NAME=PATH",
                     help="a real data set from a local file, for the claims that need it (mnist: an .npz with "
                          "x_train, y_train, x_test, y_test; medmnist: organamnist.npz with train_images, "
                          "train_labels, test_images, test_labels); nothing is downloaded")

    rep.set_defaults(subparser=rep)
    cl = sub.add_parser("claims", help="list the claim registry")
    cl.add_argument("--json", action="store_true", help="print the registry as JSON")

    from fedcheck.msd import add_msd_parser
    from fedcheck.privacy import add_privacy_parser
    from fedcheck.run import add_run_parser

    add_msd_parser(sub)
    add_privacy_parser(sub)
    add_run_parser(sub, _int_at_least)
    from fedcheck.check import add_check_parser, run_check

    add_check_parser(sub)
    parser.set_defaults(run_check=run_check)
    return parser


def _cmd_claims(args) -> int:
    from verify.registry import all_claims

    claims = all_claims()
    if args.json:
        sys.stdout.write(json.dumps([c.to_json() for c in claims], indent=2, allow_nan=False) + "\n")
        return 0
    width = max(len(c.id) for c in claims)
    for c in claims:
        print(f"{c.id:<{width}}  {c.expected.value:<13}  {c.title}")
    return 0


def _cmd_report(args, parser: _Parser) -> int:
    from tqdm import tqdm

    from reports import DEFAULT_OUT_DIR, OutputError, build_report, prepare_out_dir
    from verify.cache import ResultCache, default_cache_dir
    from verify.data_files import fingerprint, load, parse_data_option
    from verify.executor import DASK_TIMEOUT, make_executor
    from verify.records import CheckContext, Verdict
    from verify.registry import select_claims
    from verify.runner import run_claims

    if args.no_cache and args.cache_dir is not None:
        parser.error("argument --cache-dir: cannot be combined with --no-cache")
    if args.workers > 1 and args.dask_scheduler:
        parser.error("argument --workers: cannot be combined with --dask-scheduler")
    most = MAX_WORKERS_PER_CPU * (os.cpu_count() or 1)
    if args.workers > most:   # 100000 processes were accepted on a 2-core machine
        parser.error(f"argument --workers: must be an integer in [1, {most}] ({MAX_WORKERS_PER_CPU} per CPU here; "
                     f"more processes only contend), got {args.workers}")
    if args.dask_scheduler is None and args.dask_timeout is not None:
        parser.error("argument --dask-timeout: only allowed with --dask-scheduler")
    try:
        claims = select_claims(args.only)
    except ValueError as exc:
        parser.error(f"argument --only: {exc}")
    data = {}
    for text in args.data:  # read and validated before any check runs
        try:
            name, path = parse_data_option(text)
            if name in data:
                raise ValueError(f"{name} is given twice")
            load(name, path)
            data[name] = str(path.resolve())
        except (ValueError, OSError) as exc:
            parser.error(f"argument --data: {exc}")
    out_dir = args.out if args.out is not None else DEFAULT_OUT_DIR
    try:  # before any check runs: an unusable --out must not cost the results
        prepare_out_dir(out_dir)
    except OutputError as exc:
        parser.error(f"argument --out: {exc}")
    try:
        executor = make_executor(args.workers, args.dask_scheduler, timeout=args.dask_timeout or DASK_TIMEOUT)
    except (ValueError, OSError, TimeoutError) as exc:
        parser.error(f"argument --dask-scheduler: {exc}")
    ctx = CheckContext(profile=args.profile, seed=args.seed, executor=executor, data=data)
    bar = tqdm(total=len(claims), desc="fedcheck", unit="claim", file=sys.stderr,
               disable=args.quiet or not sys.stderr.isatty())

    def on_done(result):
        bar.set_postfix_str(f"{result.claim_id}: {result.verdict.value}")
        bar.update()

    cache = None
    if not args.no_cache:
        cache_dir = args.cache_dir if args.cache_dir is not None else default_cache_dir()
        if cache_dir.exists() and not cache_dir.is_dir():
            parser.error(f"argument --cache-dir: {str(cache_dir)!r} is not a directory")
        cache = ResultCache(cache_dir)
    try:  # groups of claims run side by side on the local workers (each check's own runs share the pool)
        results = run_claims(claims, ctx, on_done=on_done, cache=cache,
                             parallel=args.workers if args.dask_scheduler is None else 1)
    finally:
        bar.close()
        executor.close()
    meta = {"profile": args.profile, "seed": args.seed, "executor": executor.name,
            "only": list(args.only),
            "data": {name: {"path": path, "sha256": fingerprint(path)} for name, path in sorted(data.items())}}
    try:
        document = build_report(claims, results, out_dir, meta)
    except (OutputError, OSError) as exc:
        parser.error(f"argument --out: could not write the report to {str(out_dir)!r} "
                     f"(the previous report, if any, is unchanged): {getattr(exc, 'strerror', None) or exc}")
    if args.json:
        sys.stdout.write(json.dumps(document, indent=2, allow_nan=False) + "\n")
    elif not args.quiet:
        counts = {v.value: sum(r.verdict is v for r in results) for v in Verdict}
        print(f"wrote {out_dir / 'index.html'}: " + ", ".join(f"{n} {k}" for k, n in counts.items() if n),
              file=sys.stderr)
    for failed in document["figure_errors"]:
        print(f"fedcheck report: figure {failed['figure']!r} of {failed['claim_id']} not drawn: {failed['error']}",
              file=sys.stderr)
    return 1 if document["figure_errors"] or any(r.verdict is Verdict.ERROR for r in results) else 0


def _quiet_stdout() -> None:
    """After a closed pipe: point stdout at /dev/null so the interpreter's final flush stays silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (e.g. captured in tests)
        pass


def main(argv: list[str] | None = None) -> int:
    """Run the console script; every bad input ends as exit 2 with one line (see the module docstring)."""
    from fedcheck._errors import ConfigError, NotConverged

    parser = _build_parser()
    args = None
    try:
        args = parser.parse_args(argv)
        with warnings.catch_warnings():
            # numpy's overflow/invalid warnings would break the one-line contract; the commands report
            # non-finite results themselves (null with a status in JSON, a status line in text).
            warnings.simplefilter("ignore", RuntimeWarning)
            status = _dispatch(args, parser)
        sys.stdout.flush()
        return status
    except ConfigError as exc:  # a config field or data file: the message names it
        (getattr(args, "subparser", None) or parser).error(str(exc))
    except NotConverged as exc:  # valid input, the solver stopped at its cap: not a usage error
        prog = (getattr(args, "subparser", None) or parser).prog
        sys.stderr.write(f"{prog}: not converged: {_one_line(exc)}\n")
        return 3
    except MemoryError:
        (getattr(args, "subparser", None) or parser).error(
            "not enough memory for this input: reduce the sizes (see docs/commands.md, Resource limits)")
    except KeyboardInterrupt:
        sys.stderr.write("fedcheck: interrupted\n")
        return 130
    except BrokenPipeError:
        _quiet_stdout()
        return 141
    return 2  # pragma: no cover - parser.error exits


def _dispatch(args, parser) -> int:
    if args.command == "check":
        return args.run_check(args)
    if args.command == "claims":
        return _cmd_claims(args)
    if args.command == "privacy":
        from fedcheck.privacy import run_privacy

        return run_privacy(args)
    if args.command == "msd":
        from fedcheck.msd import run_msd

        return run_msd(args)
    if args.command == "run":
        from fedcheck.run import run_command

        return run_command(args)
    return _cmd_report(args, args.subparser)
