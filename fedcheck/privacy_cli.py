"""``fedcheck privacy account`` and ``fedcheck privacy calibrate``: budgets before running anything."""

from __future__ import annotations

import argparse
import json
import math
import sys

__all__ = ["add_privacy_parser", "run_privacy"]

_RANGES = {
    "[0, inf)": lambda x: 0.0 <= x < math.inf,
    "(0, inf)": lambda x: 0.0 < x < math.inf,
    "(0, 1)": lambda x: 0.0 < x < 1.0,
    "(0, 1]": lambda x: 0.0 < x <= 1.0,
}


def _real(interval: str):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a real number in {interval}, got {text!r}") from None
        if not _RANGES[interval](value):
            raise argparse.ArgumentTypeError(f"must be a real number in {interval}, got {text!r}")
        return value

    parse.__name__ = f"real in {interval}"
    return parse


def _rounds(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return value


def add_privacy_parser(sub) -> None:
    """Register ``privacy account`` and ``privacy calibrate`` under the top-level subparsers."""
    privacy = sub.add_parser("privacy", help="privacy budget of a noise schedule (zCDP and (epsilon, delta))")
    actions = privacy.add_subparsers(dest="privacy_command", required=True, parser_class=type(privacy))

    acc = actions.add_parser("account", help="total zCDP and epsilon of a noise schedule")
    acc.add_argument("--rounds", type=_rounds, required=True, metavar="N", help="number of releases N >= 1")
    acc.add_argument("--delta", type=_real("(0, 1)"), required=True, metavar="D", help="target delta in (0, 1)")
    acc.add_argument("--sensitivity", type=_real("[0, inf)"), metavar="S", help="l2 sensitivity of each release")
    noise = acc.add_mutually_exclusive_group(required=True)
    noise.add_argument("--sigma", type=_real("(0, inf)"), metavar="SIGMA", help="constant noise std (needs --sensitivity)")
    noise.add_argument("--variance-first", type=_real("(0, inf)"), metavar="V",
                       help="round n uses variance V*Z^(n-1) (needs --sensitivity)")
    noise.add_argument("--rho-first", type=_real("(0, inf)"), metavar="R", help="round n is R*G^(n-1)-zCDP")
    acc.add_argument("--variance-decay", type=_real("(0, 1]"), metavar="Z", help="Z in (0, 1] (default 1)")
    acc.add_argument("--rho-growth", type=_real("(0, inf)"), metavar="G", help="G > 0 (default 1)")
    acc.add_argument("--per-round", action="store_true", help="also list the per-round zCDP")
    acc.add_argument("--json", action="store_true", help="print JSON")
    acc.set_defaults(subparser=acc)

    cal = actions.add_parser("calibrate", help="first-round noise variance that meets a target (epsilon, delta)")
    cal.add_argument("--epsilon", type=_real("(0, inf)"), required=True, metavar="E", help="target epsilon > 0")
    cal.add_argument("--delta", type=_real("(0, 1)"), required=True, metavar="D", help="target delta in (0, 1)")
    cal.add_argument("--rounds", type=_rounds, required=True, metavar="N", help="number of releases N >= 1")
    cal.add_argument("--sensitivity", type=_real("(0, inf)"), required=True, metavar="S", help="l2 sensitivity > 0")
    cal.add_argument("--variance-decay", type=_real("(0, 1]"), default=1.0, metavar="Z",
                     help="round n uses variance V*Z^(n-1); Z in (0, 1] (default 1)")
    cal.add_argument("--method", choices=("exact", "cks", "bun-steinke"), default="exact",
                     help="zCDP -> (epsilon, delta) conversion to calibrate with (default: exact)")
    cal.add_argument("--json", action="store_true", help="print JSON")
    cal.set_defaults(subparser=cal)


def _table(rows) -> str:
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def _account(args, parser) -> int:
    from theory.privacy.accounting import (
        account_rounds,
        rho_schedule_constant,
        rho_schedule_geometric,
        rho_schedule_variance_decay,
    )

    if args.rho_first is not None:
        for option, value in (("--sensitivity", args.sensitivity), ("--variance-decay", args.variance_decay)):
            if value is not None:
                parser.error(f"argument {option}: not allowed with --rho-first")
        rhos = rho_schedule_geometric(args.rho_first, 1.0 if args.rho_growth is None else args.rho_growth, args.rounds)
    else:
        if args.sensitivity is None:
            parser.error("argument --sensitivity: required with --sigma or --variance-first (a real number in [0, inf))")
        if args.rho_growth is not None:
            parser.error("argument --rho-growth: only allowed with --rho-first")
        if args.sigma is not None:
            if args.variance_decay is not None:
                parser.error("argument --variance-decay: only allowed with --variance-first")
            rhos = rho_schedule_constant(args.sensitivity, args.sigma, args.rounds)
        else:
            decay = 1.0 if args.variance_decay is None else args.variance_decay
            rhos = rho_schedule_variance_decay(args.sensitivity, args.variance_first, decay, args.rounds)
    try:
        account = account_rounds(rhos, args.delta)
    except ValueError as exc:
        parser.error(f"argument --rounds: {exc}")
    if args.json:
        json.dump(account.to_json(per_round=args.per_round), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    rows = [("rounds", str(args.rounds)), ("delta", f"{account.delta:g}"), ("rho_total", f"{account.rho_total:.10g}")]
    rows += [(f"epsilon ({name})", f"{value:.10g}") for name, value in account.epsilon.items()]
    print(_table(rows))
    if args.per_round:
        print(_table([(f"rho[{n}]", f"{r:.10g}") for n, r in enumerate(account.rho_per_round, start=1)]))
    return 0


def _calibrate(args, parser) -> int:
    from theory.privacy.accounting import calibrate_variance_first

    try:
        variance, achieved = calibrate_variance_first(args.epsilon, args.delta, args.rounds, args.sensitivity,
                                                      args.variance_decay, args.method)
    except ValueError as exc:
        parser.error(f"argument --variance-decay: {exc}")
    if args.json:
        json.dump({"variance_first": variance, "epsilon_achieved": achieved, "method": args.method}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    print(_table([("variance_first", f"{variance:.10g}"), ("sigma_first", f"{math.sqrt(variance):.10g}"),
                  ("epsilon_achieved", f"{achieved:.10g}"), ("method", args.method)]))
    return 0


def run_privacy(args) -> int:
    if args.privacy_command == "account":
        return _account(args, args.subparser)
    return _calibrate(args, args.subparser)
