"""``fedcheck run <algorithm> CONFIG.toml``: one plug-in per paper on one layer.

A plug-in (``fedcheck/run/<slug>.py``) declares only what is its own:

* ``NAME`` (the sub-command), ``TITLE`` (one line), ``SCHEMA`` (its sections and fields, declared once:
  type, range, default, when a field applies and what it means -- :mod:`fedcheck.run._schema`) and ``OPTIONS``
  (its command-line options, each overriding a field or read from ``values.options``);
* ``load(values) -> setup``: the validated records, built from the checked fields without allocating anything
  large (files are already read through the guarded loader);
* ``estimate(setup) -> [Cost, ...]``: every phase of the run, each naming the field that drives it;
* ``run(setup, rng) -> dict``: the JSON document (keys starting with ``_`` are for the summary only);
* ``SUMMARY_TITLE`` and ``SUMMARY``: the human summary, declared as rows (:class:`fedcheck.run._output.Row`: a label
  and the key path of its value in the document, how to show it, whether it may be absent);
* optionally ``RNG_STREAM`` (the run's generator is ``default_rng([seed, RNG_STREAM])`` instead of
  ``default_rng(seed)``) or ``make_rng(setup)``;
* ``FIGURES``: the curves ``--plot`` draws, declared (:class:`fedcheck.run._output.Plot` of
  :class:`~fedcheck.run._output.Line` s: key paths, title, axis labels), and optionally
  ``plot_unavailable(setup) -> str | None``: why a setup has none, said before the run;
* for ``fedcheck check`` (:mod:`fedcheck.check`), the public builders it shares with ``run``: ``build_problem``,
  ``build_config`` or ``build_instance`` (the paper's objects from the checked fields, errors naming the field).

The paper logic a plug-in runs (building the problem from the checked fields, the run's JSON document) lives in
``reference_impl/<slug>/run_report.py``, where the Python API can reuse it; a plug-in's own code is the glue between
the user's fields and those functions. What the plug-ins share is declared once in :mod:`fedcheck.run._api`: the
setup's common part (``RunSetup``: ``v``, ``iterations``, ``runs``, ``seed``), ``applies_when(field, *values)``,
``runs_seed_options``/``RUNS_SEED_OPTIONS``, ``read_npz(..., require=...)``, ``blame_file`` and ``Values.section``.

This layer does everything else, once: reading the TOML file and the ``.npy``/``.npz`` files it names (through
:mod:`fedcheck._files`), refusing unknown and not-applicable fields, turning a record's ``ValueError`` into one
line naming the user's ``section.field``, checking the estimate before anything is allocated
(:mod:`fedcheck.run._budget`), strict JSON, the summary rounded to meaningful digits, progress on stderr for
long runs, and the exit status (see :mod:`fedcheck.cli`).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Any

from fedcheck.run._api import (
    ConfigError,
    Cost,
    Field,
    Line,
    NotConverged,
    Option,
    Plot,
    Row,
    Schema,
    Section,
    Values,
    read_npy,
    read_npz,
    read_table,
)

__all__ = ["PLUGINS", "ConfigError", "Cost", "Field", "Line", "NotConverged", "Option", "Plot", "Row", "Schema",
           "Section", "Values", "add_run_parser", "load", "plugin", "read_npy", "read_npz", "read_table",
           "run_command"]

#: Sub-command -> module of its plug-in (imported on demand).
PLUGINS = {
    "pgfl": "fedcheck.run.pgfl",
    "paofed": "fedcheck.run.paofed",
    "zcdp-nfl": "fedcheck.run.zcdp_nfl",
    "gtv": "fedcheck.run.gtv",
    "fedpdm": "fedcheck.run.fedpdm",
    "npfl-rl": "fedcheck.run.npfl_rl",
}


def plugin(name: str) -> ModuleType:
    """The plug-in module of sub-command ``name``."""
    if name not in PLUGINS:
        raise ValueError(f"algorithm must be one of {', '.join(PLUGINS)}, got {name!r}")
    return importlib.import_module(PLUGINS[name])


def add_run_parser(sub, int_at_least) -> None:
    """Register ``run`` and one sub-command per plug-in (``int_at_least(n)``: the CLI's integer type)."""
    run = sub.add_parser("run", help="run a reference implementation on a configuration")
    algorithms = run.add_subparsers(dest="algorithm", required=True, parser_class=type(run))
    for name in PLUGINS:
        mod = plugin(name)
        p = algorithms.add_parser(name, help=mod.TITLE, description=mod.TITLE)
        p.add_argument("config", type=Path, metavar="CONFIG.toml")
        for opt in mod.OPTIONS:
            kwargs: dict[str, Any] = {"dest": f"opt_{opt.dest}", "default": None, "metavar": opt.metavar}
            if opt.choices:
                kwargs["choices"] = opt.choices
            elif opt.lo is not None:
                kwargs["type"] = int_at_least(opt.lo)
            default = mod.SCHEMA.field(opt.field).default if opt.field else opt.default
            shown = f"[{opt.field.split('.')[0]}] {opt.field.split('.')[1]}, else {default}" if opt.field else default
            p.add_argument(opt.flag, help=f"{opt.doc} (default: {shown})", **kwargs)
        p.add_argument("--plot", type=Path, default=None, metavar="FILE",
                       help="draw the run's curves to FILE (.png or .svg), in the report's style")
        p.add_argument("--force", action="store_true", help="let --plot replace a file fedcheck did not write")
        p.add_argument("--quiet", action="store_true", help="no progress on stderr")
        p.add_argument("--json", action="store_true", help="print the result as strict JSON")
        p.set_defaults(subparser=p)


def load(name: str, config, **options) -> tuple[ModuleType, Values, Any]:
    """Parse and validate ``config`` for sub-command ``name`` (``options``: option dest -> value, None = unset).

    Returns ``(plugin, values, setup)``; ConfigError names the field. Nothing large is allocated.
    """
    mod = plugin(name)
    config = Path(config)
    table = read_table(config)
    if "paper" in table:  # the declaration `fedcheck check` reads: it must name this plug-in's paper
        slug = PLUGINS[name].rpartition(".")[2]
        declared = table.pop("paper")
        # the slug or the command's own spelling ("zcdp-nfl"), as `fedcheck check` reads it
        if not (isinstance(declared, str) and declared.strip().lower().replace("-", "_") == slug):
            raise ConfigError(f"paper: the file declares paper = {declared!r}, but `fedcheck run {name}` runs "
                              f"{slug!r} (remove the line or use the matching run command)")
    overrides, plain = {}, {}
    for opt in mod.OPTIONS:
        value = options.get(opt.dest)
        if opt.field is not None:
            if value is not None:
                overrides[opt.field] = (opt.flag, value)
        else:
            plain[opt.dest] = opt.default if value is None else value
    values = mod.SCHEMA.parse(table, overrides, plain)
    values.base_dir = config.parent
    with mod.SCHEMA.blame():
        setup = mod.load(values)
    return mod, values, setup


def run_command(args) -> int:
    """``fedcheck run <algorithm>``: load, estimate, run, print. Exit status 0 (errors raise; see fedcheck.cli)."""
    import numpy as np

    from fedcheck._plot import check_plot_path
    from fedcheck.run import _budget
    from fedcheck.run._output import Progress, figures_of, print_json, print_summary, summary_of

    if args.force and args.plot is None:
        raise ConfigError("argument --force: only allowed with --plot")
    check_plot_path(args.plot, force=args.force)  # before the work: a refused path costs nothing
    from fedcheck._files import same_file

    if args.plot is not None and same_file(args.plot, args.config):
        raise ConfigError(f"argument --plot: {str(args.plot)!r} is the configuration itself (an output never replaces "
                          f"an input, even with --force)")
    options = {k[len("opt_"):]: v for k, v in vars(args).items() if k.startswith("opt_")}
    mod, _values, setup = load(args.algorithm, args.config, **options)
    if args.plot is not None:
        why = getattr(mod, "plot_unavailable", lambda _s: None)(setup)
        if why:
            raise ConfigError(f"argument --plot: nothing to draw: {why}")
    costs = list(mod.estimate(setup))
    total = _budget.check(costs)
    biggest = max(costs, key=lambda c: c.memory) if costs else None
    make_rng = getattr(mod, "make_rng", None)
    stream = getattr(mod, "RNG_STREAM", None)  # the run's own stream of the seed (the instances draw from others)
    rng = make_rng(setup) if make_rng is not None else np.random.default_rng(
        setup.seed if stream is None else [setup.seed, stream])
    try:
        with Progress(f"fedcheck run {args.algorithm}", _budget.seconds(total), quiet=args.quiet), \
                np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            result = mod.run(setup, rng)
    except MemoryError:
        where = f"{biggest.field}: {biggest.phase}" if biggest is not None else "CONFIG"
        raise ConfigError(f"{where}: not enough memory for this input (the estimate passed the limits, the machine "
                          f"has less free memory); reduce {biggest.field if biggest else 'the sizes'}") from None
    if args.plot is not None:
        from fedcheck._plot import write_plot

        specs = figures_of(mod, setup, result)
        if not specs:
            raise ConfigError(f"argument --plot: the run recorded no curve to draw (status {result.get('status')})")
        write_plot(args.plot, specs, force=args.force)
    if args.json:
        print_json({k: v for k, v in result.items() if not k.startswith("_")})
    else:
        title, rows = summary_of(mod, setup, result)
        print_summary(title, rows)
    return 0
