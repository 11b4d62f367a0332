"""``fedcheck privacy account`` and ``fedcheck privacy calibrate``: budgets before running anything."""

from __future__ import annotations

import argparse
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


#: Largest number of rounds accepted (the schedule is an array of N floats; the RDP accountant composes
#: round by round, so it runs only up to :data:`ACCOUNTANT_MAX_ROUNDS`).
MAX_ROUNDS = 10**7
ACCOUNTANT_MAX_ROUNDS = 10**5
#: A total zCDP above this makes every conversion meaningless (epsilon ~ rho); refused with the option named.
MAX_RHO_TOTAL = 1e300


def _rounds(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer in [1, {MAX_ROUNDS}], got {text!r}") from None
    if not 1 <= value <= MAX_ROUNDS:
        raise argparse.ArgumentTypeError(f"must be an integer in [1, {MAX_ROUNDS}] (the limit on the schedule "
                                         f"length), got {text!r}")
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
    noise.add_argument("--sigma", type=_real("(0, inf)"), metavar="SIGMA",
                       help="constant noise std (needs --sensitivity)")
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


def _log_total_rho(args) -> tuple[float, str]:
    """log of the total zCDP of the schedule (computed in log space) and the option that sets its size."""
    n = args.rounds
    if args.rho_first is not None:
        g = 1.0 if args.rho_growth is None else args.rho_growth
        # sum_{k<N} G^k in log space: N log-terms of a geometric series
        log_sum = math.log(n) if g == 1.0 else (
            (n * math.log(g) + math.log(-math.expm1(-n * math.log(g))) - math.log(-math.expm1(-math.log(g))))
            if g > 1.0 else math.log(-math.expm1(n * math.log(g))) - math.log(-math.expm1(math.log(g))))
        option = "--rho-growth" if n > 1 and g > 1.0 and (n - 1) * math.log(g) > abs(math.log(args.rho_first)) \
            else "--rho-first"
        return math.log(args.rho_first) + log_sum, option
    if args.sensitivity == 0.0:
        return -math.inf, "--sensitivity"
    if args.sigma is not None:
        option = "--sigma" if abs(math.log(args.sigma)) >= abs(math.log(args.sensitivity)) else "--sensitivity"
        return 2.0 * (math.log(args.sensitivity) - math.log(args.sigma)) - math.log(2.0) + math.log(n), option
    z = 1.0 if args.variance_decay is None else args.variance_decay
    log_q = -math.log(z)  # round n has rho_1 q^(n-1), q = 1/Z >= 1
    log_sum = math.log(n) if log_q == 0.0 else (
        n * log_q + math.log(-math.expm1(-n * log_q)) - math.log(-math.expm1(-log_q)))
    option = "--variance-decay" if (n - 1) * log_q > 2.0 * abs(math.log(args.sensitivity)) else "--variance-first"
    return 2.0 * math.log(args.sensitivity) - math.log(2.0 * args.variance_first) + log_sum, option


def _account(args, parser) -> int:
    from fedcheck._config import strict_json
    from theory.privacy.accounting import (
        account_rounds,
        epsilon_pld_accountant,
        epsilon_rdp_accountant,
        rho_schedule_constant,
        rho_schedule_geometric,
        rho_schedule_variance_decay,
    )

    if args.rho_first is not None:
        for option, value in (("--sensitivity", args.sensitivity), ("--variance-decay", args.variance_decay)):
            if value is not None:
                parser.error(f"argument {option}: not allowed with --rho-first")
    else:
        if args.sensitivity is None:
            parser.error("argument --sensitivity: required with --sigma or --variance-first (a real number in "
                         "[0, inf))")
        if args.rho_growth is not None:
            parser.error("argument --rho-growth: only allowed with --rho-first")
        if args.sigma is not None and args.variance_decay is not None:
            parser.error("argument --variance-decay: only allowed with --variance-first")
    log_total, option = _log_total_rho(args)
    if log_total > math.log(MAX_RHO_TOTAL):
        parser.error(f"argument {option}: the total zCDP of the schedule is about 10^{log_total / math.log(10):.4g}, "
                     f"beyond the limit of {MAX_RHO_TOTAL:g} (the rounds leak everything; epsilon would overflow)")
    with __import__("numpy").errstate(over="ignore", under="ignore"):
        if args.rho_first is not None:
            rhos = rho_schedule_geometric(args.rho_first, 1.0 if args.rho_growth is None else args.rho_growth,
                                          args.rounds)
        elif args.sigma is not None:
            rhos = rho_schedule_constant(args.sensitivity, args.sigma, args.rounds)
        else:
            decay = 1.0 if args.variance_decay is None else args.variance_decay
            rhos = rho_schedule_variance_decay(args.sensitivity, args.variance_first, decay, args.rounds)
    try:
        account = account_rounds(rhos, args.delta, accountants=False)
    except (ValueError, OverflowError, ArithmeticError) as exc:
        parser.error(f"argument {option}: the schedule cannot be accounted ({exc})")
    epsilon, status = dict(account.epsilon), {}
    for name, accountant in (("rdp_accountant", epsilon_rdp_accountant), ("pld_accountant", epsilon_pld_accountant)):
        if name == "rdp_accountant" and args.rounds > ACCOUNTANT_MAX_ROUNDS:
            epsilon[name], status[name] = None, f"skipped: more than {ACCOUNTANT_MAX_ROUNDS} rounds"
            continue
        try:
            epsilon[name] = accountant(rhos, args.delta)
        except Exception as exc:  # noqa: BLE001 - dp-accounting's own limits: reported, not fatal
            epsilon[name], status[name] = None, f"accountant failed: {' '.join(str(exc).split())[:120]}"
    for name, value in epsilon.items():
        if value is not None and not math.isfinite(value):
            status[name] = "infinite epsilon" if value > 0 else f"non-finite epsilon ({value!r})"
    document = {"rho_total": account.rho_total, "delta": account.delta, "epsilon": epsilon}
    if status:
        document["epsilon_status"] = status  # why an epsilon is null in strict JSON
    if args.per_round:
        document["rho_per_round"] = [float(r) for r in account.rho_per_round]
    if args.json:
        sys.stdout.write(strict_json(document, indent=2) + "\n")
        return 0
    rows = [("rounds", str(args.rounds)), ("delta", f"{account.delta:g}"), ("rho_total", f"{account.rho_total:.10g}")]
    rows += [(f"epsilon ({name})", f"{value:.10g}" if value is not None else status.get(name, "n/a"))
             for name, value in epsilon.items()]
    print(_table(rows))
    if args.per_round:
        print(_table([(f"rho[{n}]", f"{r:.10g}") for n, r in enumerate(account.rho_per_round, start=1)]))
    return 0


def _calibrate(args, parser) -> int:
    from fedcheck._config import strict_json
    from theory.privacy.accounting import CONVERSIONS, calibrate_variance_first

    z = args.variance_decay
    if z < 1.0 and (args.rounds - 1) * -math.log(z) > 690.0:
        parser.error(f"argument --variance-decay: Z^-(N-1) = 10^{(args.rounds - 1) * -math.log10(z):.4g} overflows "
                     f"the double range for N = {args.rounds} rounds (use Z closer to 1 or fewer rounds)")
    try:
        rho_star = CONVERSIONS[args.method][1](args.epsilon, args.delta)
        if not (math.isfinite(rho_star) and rho_star > 0):
            raise ArithmeticError(f"rho* = {rho_star!r}")
    except (ValueError, OverflowError, ArithmeticError, ZeroDivisionError) as exc:
        parser.error(f"argument --epsilon: no finite zCDP budget meets epsilon = {args.epsilon:g} at delta = "
                     f"{args.delta:g} with the {args.method} conversion ({' '.join(str(exc).split())})")
    try:
        variance, achieved = calibrate_variance_first(args.epsilon, args.delta, args.rounds, args.sensitivity,
                                                      args.variance_decay, args.method)
        if not (math.isfinite(variance) and variance > 0):
            raise OverflowError(f"variance = {variance!r}")
    except (ValueError, OverflowError, ArithmeticError, ZeroDivisionError) as exc:
        parser.error(f"argument --sensitivity: the calibrated variance overflows the double range "
                     f"(sensitivity = {args.sensitivity:g}; {' '.join(str(exc).split())})")
    if args.json:
        sys.stdout.write(strict_json({"variance_first": variance, "epsilon_achieved": achieved,
                                      "method": args.method}, indent=2) + "\n")
        return 0
    print(_table([("variance_first", f"{variance:.10g}"), ("sigma_first", f"{math.sqrt(variance):.10g}"),
                  ("epsilon_achieved", f"{achieved:.10g}"), ("method", args.method)]))
    return 0


def run_privacy(args) -> int:
    if args.privacy_command == "account":
        return _account(args, args.subparser)
    return _calibrate(args, args.subparser)
