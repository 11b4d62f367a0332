"""Run one ``fedcheck run`` plug-in through a parser built the way fedcheck.cli wires ``run`` (a ``run`` sub-command
whose sub-parsers take the plug-in's ``add_run_parser``), so the plug-in tests do not depend on that wiring."""

from fedcheck.cli import _int_at_least, _Parser


def run_plugin(add_run_parser, argv, algorithm: str):
    """Parse ``argv`` (``["run", algorithm, ...]``) with only this plug-in registered and run its handler."""
    parser = _Parser(prog="fedcheck")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = sub.add_parser("run")
    add_run_parser(run.add_subparsers(dest="algorithm", required=True, parser_class=type(run)), _int_at_least)
    args = parser.parse_args(argv)
    assert args.algorithm == algorithm
    return args.handler(args)
