"""``fedcheck privacy account`` and ``fedcheck privacy calibrate``: budgets before running anything.

Two kinds of schedule:

* a zCDP schedule of Gaussian rounds (``--sigma``/``--variance-first`` with ``--sensitivity``, ``--rho-first``, or
  ``--noise-multiplier`` without subsampling): the total zCDP and epsilon at delta by the Bun-Steinke, CKS and exact
  Gaussian conversions and dp-accounting's RDP and PLD accountants;
* a DP-SGD-style schedule, the way DP practitioners write it: ``--steps`` releases of the Poisson-subsampled Gaussian
  at ``--sampling-rate q`` with ``--noise-multiplier z`` (sigma / sensitivity): fedcheck's own RDP account
  (:mod:`theory.privacy.subsampled_accounting`) beside dp-accounting's RDP and PLD accountants as oracles.

``--accountants`` chooses which run (the PLD is the slowest). Text and ``--json`` show the same fields; every privacy
loss printed for people is rounded up (never below the computed value) and a calibrated noise level is rounded up too.
"""

from __future__ import annotations

import argparse
import math
import sys

__all__ = ["ACCOUNTANTS", "add_privacy_parser", "run_privacy"]

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


#: Largest number of rounds accepted (the schedule is an array of N floats; the RDP accountant composes each distinct
#: round, so it runs only up to :data:`ACCOUNTANT_MAX_ROUNDS` distinct rounds).
MAX_ROUNDS = 10**7
ACCOUNTANT_MAX_ROUNDS = 10**5
#: A total zCDP above this makes every conversion meaningless (epsilon ~ rho); refused with the option named.
MAX_RHO_TOTAL = 1e300
#: Largest noise multiplier accepted: beyond it dp-accounting's RDP orders overflow (epsilon is 0 to double precision
#: long before).
MAX_NOISE_MULTIPLIER = 1e6

#: Accountant name on the command line -> its key in ``epsilon`` (JSON) and what it is.
ACCOUNTANTS = {
    "bun-steinke": ("bun_steinke", "Bun-Steinke conversion of the total zCDP"),
    "cks": ("cks", "Canonne-Kamath-Steinke conversion of the total zCDP"),
    "exact": ("exact_gaussian", "exact Gaussian privacy profile of the total zCDP"),
    "rdp": ("rdp_accountant", "dp-accounting's RDP accountant"),
    "pld": ("pld_accountant", "dp-accounting's PLD accountant"),
    "fedcheck-rdp": ("fedcheck_rdp", "fedcheck's RDP of the Poisson-subsampled Gaussian (integer orders)"),
}
#: The conversions of a zCDP total: they do not apply to a subsampled schedule.
_ZCDP_ONLY = ("bun-steinke", "cks", "exact")
_DEFAULT_ZCDP = ("bun-steinke", "cks", "exact", "rdp", "pld")
_DEFAULT_SUBSAMPLED = ("fedcheck-rdp", "rdp", "pld")
#: Calibration methods of a subsampled (or noise-multiplier) schedule -> the accountant's key.
_SUBSAMPLED_METHODS = ("fedcheck-rdp", "rdp", "pld")


def _rounds(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer in [1, {MAX_ROUNDS}], got {text!r}") from None
    if not 1 <= value <= MAX_ROUNDS:
        raise argparse.ArgumentTypeError(f"must be an integer in [1, {MAX_ROUNDS}] (the limit on the schedule "
                                         f"length), got {text!r}")
    return value


def _noise_multiplier(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a real number in (0, {MAX_NOISE_MULTIPLIER:g}], got {text!r}") \
            from None
    if not 0.0 < value <= MAX_NOISE_MULTIPLIER:
        raise argparse.ArgumentTypeError(f"must be a real number in (0, {MAX_NOISE_MULTIPLIER:g}] (sigma / "
                                         f"sensitivity), got {text!r}")
    return value


def _accountant_list(text: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(","))
    unknown = [n for n in names if n not in ACCOUNTANTS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"must be a comma-separated list of {', '.join(ACCOUNTANTS)}, got "
                                         f"{text!r}")
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"lists an accountant twice: {text!r}")
    return names


def _add_count(parser, *, required: bool) -> None:
    count = parser.add_mutually_exclusive_group(required=required)
    count.add_argument("--rounds", type=_rounds, metavar="N", help="number of releases N >= 1")
    count.add_argument("--steps", type=_rounds, metavar="T", dest="rounds",
                       help="the same count under its DP-SGD name (steps of a subsampled schedule)")


def add_privacy_parser(sub) -> None:
    """Register ``privacy account`` and ``privacy calibrate`` under the top-level subparsers."""
    privacy = sub.add_parser("privacy", help="privacy budget of a noise schedule (zCDP and (epsilon, delta))")
    actions = privacy.add_subparsers(dest="privacy_command", required=True, parser_class=type(privacy))

    acc = actions.add_parser("account", help="total zCDP and epsilon of a noise schedule")
    _add_count(acc, required=True)
    acc.add_argument("--delta", type=_real("(0, 1)"), required=True, metavar="D", help="target delta in (0, 1)")
    acc.add_argument("--sensitivity", type=_real("[0, inf)"), metavar="S", help="l2 sensitivity of each release")
    noise = acc.add_mutually_exclusive_group(required=True)
    noise.add_argument("--sigma", type=_real("(0, inf)"), metavar="SIGMA",
                       help="constant noise std (needs --sensitivity)")
    noise.add_argument("--variance-first", type=_real("(0, inf)"), metavar="V",
                       help="round n uses variance V*Z^(n-1) (needs --sensitivity)")
    noise.add_argument("--rho-first", type=_real("(0, inf)"), metavar="R", help="round n is R*G^(n-1)-zCDP")
    noise.add_argument("--noise-multiplier", type=_noise_multiplier, metavar="Z",
                       help="constant noise multiplier z = sigma / sensitivity (DP-SGD style)")
    acc.add_argument("--sampling-rate", type=_real("(0, 1]"), metavar="Q",
                     help="Poisson sampling rate q of each step (with --noise-multiplier or --sigma; default 1: no "
                          "subsampling)")
    acc.add_argument("--variance-decay", type=_real("(0, 1]"), metavar="Z", help="Z in (0, 1] (default 1)")
    acc.add_argument("--rho-growth", type=_real("(0, inf)"), metavar="G", help="G > 0 (default 1)")
    acc.add_argument("--accountants", type=_accountant_list, metavar="LIST",
                     help=f"comma-separated accountants to run, of {', '.join(ACCOUNTANTS)} (default: "
                          f"{','.join(_DEFAULT_ZCDP)} for a zCDP schedule, {','.join(_DEFAULT_SUBSAMPLED)} for a "
                          f"subsampled one; the PLD is the slowest)")
    acc.add_argument("--per-round", action="store_true", help="also list the per-round zCDP")
    acc.add_argument("--quiet", action="store_true", help="no progress on stderr")
    acc.add_argument("--json", action="store_true", help="print JSON")
    acc.set_defaults(subparser=acc)

    cal = actions.add_parser("calibrate", help="the noise (or the number of steps) that meets a target (epsilon, "
                                               "delta)")
    cal.add_argument("--epsilon", type=_real("(0, inf)"), required=True, metavar="E", help="target epsilon > 0")
    cal.add_argument("--delta", type=_real("(0, 1)"), required=True, metavar="D", help="target delta in (0, 1)")
    _add_count(cal, required=False)
    cal.add_argument("--sensitivity", type=_real("(0, inf)"), metavar="S",
                     help="l2 sensitivity > 0 (a zCDP schedule: returns the first-round variance)")
    cal.add_argument("--variance-decay", type=_real("(0, 1]"), metavar="Z",
                     help="round n uses variance V*Z^(n-1); Z in (0, 1] (default 1)")
    cal.add_argument("--sampling-rate", type=_real("(0, 1]"), metavar="Q",
                     help="a subsampled schedule at Poisson rate q: returns the noise multiplier for --steps, or the "
                          "number of steps for --noise-multiplier")
    cal.add_argument("--noise-multiplier", type=_noise_multiplier, metavar="Z",
                     help="with --sampling-rate: find the largest number of steps at this noise multiplier")
    cal.add_argument("--method", choices=("exact", "cks", "bun-steinke") + _SUBSAMPLED_METHODS, default=None,
                     help="what to calibrate with: a zCDP conversion (exact, cks, bun-steinke; default exact) or, with "
                          "--sampling-rate, an accountant (fedcheck-rdp, rdp, pld; default fedcheck-rdp)")
    cal.add_argument("--accountants", type=_accountant_list, metavar="LIST",
                     help="with --sampling-rate: also the epsilon of the result by these accountants (a check)")
    cal.add_argument("--quiet", action="store_true", help="no progress on stderr")
    cal.add_argument("--json", action="store_true", help="print JSON")
    cal.set_defaults(subparser=cal)


# -- formatting ---------------------------------------------------------------------------------------------------
def _failure(exc: BaseException) -> str:
    """An exception in words for one line: its type and message, without an errno tuple (``OverflowError(34,
    'Numerical result out of range')`` prints as ``(34, 'Numerical result out of range')``), at most 120 characters."""
    args = exc.args
    message = args[1] if len(args) == 2 and isinstance(args[0], int) and isinstance(args[1], str) else str(exc)
    text = " ".join(f"{type(exc).__name__}: {message}".split())
    return text if len(text) <= 120 else text[:117] + "..."


def _up(x: float | None, digits: int = 4) -> str:
    """``x`` for people, rounded up to ``digits`` significant digits (a privacy loss is never shown smaller)."""
    if x is None:
        return "n/a"
    if not math.isfinite(x):
        return "infinite" if x > 0 else "not finite"
    if x == 0.0:
        return "0"
    from decimal import ROUND_CEILING, Decimal

    # in decimal: 10**exponent underflows to 0 for x below about 1e-320 (a tiny zCDP budget is a valid input), and
    # the shortest repr does not round 0.1 up to 0.1001 as its binary value would
    d = Decimal(repr(float(x)))
    exponent = d.adjusted() - digits + 1
    value = d.scaleb(-exponent).to_integral_value(rounding=ROUND_CEILING).scaleb(exponent)
    return f"{float(value):.{digits}g}"


def _table(rows) -> str:
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def _print(document: dict, rows: list, as_json: bool) -> int:
    from fedcheck._config import strict_json

    if as_json:
        sys.stdout.write(strict_json(document, indent=2) + "\n")
    else:
        print(_table(rows))
    return 0


def _progress(label: str, seconds: float, quiet: bool):
    from fedcheck.run._output import Progress

    return Progress(label, seconds, quiet=quiet)


# -- account ------------------------------------------------------------------------------------------------------
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
    if args.noise_multiplier is not None:
        return -2.0 * math.log(args.noise_multiplier) - math.log(2.0) + math.log(n), "--noise-multiplier"
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


def _check_account_options(args, parser) -> None:
    if args.rho_first is not None or args.noise_multiplier is not None:
        main = "--rho-first" if args.rho_first is not None else "--noise-multiplier"
        for option, value in (("--sensitivity", args.sensitivity), ("--variance-decay", args.variance_decay)):
            if value is not None:
                why = " (the noise multiplier is sigma / sensitivity already)" if option == "--sensitivity" and \
                    main == "--noise-multiplier" else ""
                parser.error(f"argument {option}: not allowed with {main}{why}")
        if args.noise_multiplier is not None and args.rho_growth is not None:
            parser.error("argument --rho-growth: only allowed with --rho-first")
    else:
        if args.sensitivity is None:
            parser.error("argument --sensitivity: required with --sigma or --variance-first (a real number in "
                         "[0, inf))")
        if args.rho_growth is not None:
            parser.error("argument --rho-growth: only allowed with --rho-first")
        if args.sigma is not None and args.variance_decay is not None:
            parser.error("argument --variance-decay: only allowed with --variance-first")
    if args.sampling_rate is not None and args.noise_multiplier is None and args.sigma is None:
        parser.error("argument --sampling-rate: only allowed with --noise-multiplier or --sigma (a constant noise "
                     "level per step)")


def _subsampled(args) -> bool:
    return args.sampling_rate is not None and args.sampling_rate < 1.0


def _accountants(args, parser, *, default) -> tuple[str, ...]:
    names = args.accountants if args.accountants is not None else default
    constant = args.noise_multiplier is not None or args.sigma is not None
    for name in names:
        if name in _ZCDP_ONLY and _subsampled(args):
            parser.error(f"argument --accountants: {name} does not apply with --sampling-rate < 1 (a subsampled "
                         f"Gaussian has no zCDP total to convert); use fedcheck-rdp, rdp or pld")
        if name == "fedcheck-rdp" and not constant:
            parser.error("argument --accountants: fedcheck-rdp needs a constant noise level per step "
                         "(--noise-multiplier or --sigma)")
    return names


def _account(args, parser) -> int:
    _check_account_options(args, parser)
    if _subsampled(args):
        return _account_subsampled(args, parser)
    return _account_zcdp(args, parser)


def _noise_multiplier_of(args) -> float | None:
    """The constant noise multiplier sigma / sensitivity of the schedule (None when it is not constant)."""
    if args.noise_multiplier is not None:
        return args.noise_multiplier
    if args.sigma is not None and args.sensitivity:
        return args.sigma / args.sensitivity
    return None


def _account_zcdp(args, parser) -> int:
    import numpy as np

    from theory.privacy.accounting import (
        account_rounds,
        distinct_rounds,
        epsilon_pld_accountant,
        epsilon_rdp_accountant,
        rho_schedule_constant,
        rho_schedule_geometric,
        rho_schedule_variance_decay,
    )
    from theory.privacy.subsampled_accounting import epsilon_fedcheck_rdp_subsampled

    names = _accountants(args, parser, default=_DEFAULT_ZCDP)
    log_total, option = _log_total_rho(args)
    if log_total > math.log(MAX_RHO_TOTAL):
        parser.error(f"argument {option}: the total zCDP of the schedule is about 10^{log_total / math.log(10):.4g}, "
                     f"beyond the limit of {MAX_RHO_TOTAL:g} (the rounds leak everything; epsilon would overflow)")
    with np.errstate(over="ignore", under="ignore"):
        if args.rho_first is not None:
            rhos = rho_schedule_geometric(args.rho_first, 1.0 if args.rho_growth is None else args.rho_growth,
                                          args.rounds)
        elif args.noise_multiplier is not None:
            rhos = rho_schedule_constant(1.0, args.noise_multiplier, args.rounds)
        elif args.sigma is not None:
            rhos = rho_schedule_constant(args.sensitivity, args.sigma, args.rounds)
        else:
            decay = 1.0 if args.variance_decay is None else args.variance_decay
            rhos = rho_schedule_variance_decay(args.sensitivity, args.variance_first, decay, args.rounds)
    try:
        account = account_rounds(rhos, args.delta, accountants=False)
    except (ValueError, OverflowError, ArithmeticError) as exc:
        parser.error(f"argument {option}: the schedule cannot be accounted ({_failure(exc)})")
    distinct = distinct_rounds(rhos) if "rdp" in names else 0
    z = _noise_multiplier_of(args)
    oracles = {
        "rdp": lambda: epsilon_rdp_accountant(rhos, args.delta),
        "pld": lambda: epsilon_pld_accountant(rhos, args.delta),
        "fedcheck-rdp": lambda: epsilon_fedcheck_rdp_subsampled(z, 1.0, args.rounds, args.delta)[0],
    }
    epsilon, status = {}, {}
    # dp-accounting composes one distinct round in about 0.26 ms CPU (5000 rounds: 1.3 s); the PLD about 2.6 s
    with _progress("fedcheck privacy account", 3e-4 * distinct + (2.5 if "pld" in names else 0.0), args.quiet):
        for name in names:
            key = ACCOUNTANTS[name][0]
            if name in _ZCDP_ONLY:
                epsilon[key] = account.epsilon[key]
                continue
            if name == "rdp" and distinct > ACCOUNTANT_MAX_ROUNDS:
                epsilon[key], status[key] = None, (f"skipped: {distinct} distinct rounds, more than "
                                                   f"{ACCOUNTANT_MAX_ROUNDS}")
                continue
            if name == "fedcheck-rdp" and z is None:  # --sigma with sensitivity 0: no privacy loss at all
                epsilon[key] = 0.0
                continue
            try:
                epsilon[key] = oracles[name]()
            except Exception as exc:  # noqa: BLE001 - dp-accounting's own limits: reported, not fatal
                epsilon[key], status[key] = None, f"accountant failed: {_failure(exc)}"
    for key, value in epsilon.items():
        if value is not None and not math.isfinite(value):
            status[key] = "infinite epsilon" if value > 0 else f"non-finite epsilon ({value!r})"
    document = {"mode": "zcdp_schedule", "rounds": args.rounds, "delta": account.delta}
    if z is not None:
        document.update(noise_multiplier=z, sampling_rate=1.0)
    document.update(rho_total=account.rho_total, accountants=list(names), epsilon=epsilon)
    if status:
        document["epsilon_status"] = status  # why an epsilon is null in strict JSON
    if args.per_round:
        document["rho_per_round"] = [float(r) for r in account.rho_per_round]
    rows = _common_rows(document)
    rows += [("rho_total", _up(account.rho_total, 6)), ("accountants", ",".join(names))]
    rows += _epsilon_rows(epsilon, status)
    if args.per_round and not args.json:
        rows += [(f"rho[{n}]", _up(float(r), 6)) for n, r in enumerate(account.rho_per_round, start=1)]
    return _print(document, rows, args.json)


def _common_rows(document: dict) -> list:
    rows = [("mode", document["mode"]), ("rounds", str(document["rounds"])), ("delta", f"{document['delta']:g}")]
    if "noise_multiplier" in document:
        rows += [("noise_multiplier", f"{document['noise_multiplier']:.6g}"),
                 ("sampling_rate", f"{document['sampling_rate']:.6g}")]
    return rows


def _epsilon_rows(epsilon: dict, status: dict) -> list:
    return [(f"epsilon ({key})", _up(value) if value is not None else status.get(key, "n/a"))
            for key, value in epsilon.items()]


def _account_subsampled(args, parser) -> int:
    from theory.privacy.subsampled_accounting import SUBSAMPLED_ACCOUNTANTS

    if args.per_round:
        parser.error("argument --per-round: a subsampled schedule has no per-round zCDP (use --sampling-rate 1)")
    names = _accountants(args, parser, default=_DEFAULT_SUBSAMPLED)
    z, q = _noise_multiplier_of(args), args.sampling_rate
    if z is None:  # --sigma with sensitivity 0
        epsilon = {ACCOUNTANTS[name][0]: 0.0 for name in names}
        status: dict = {}
    else:
        epsilon, status = {}, {}
        with _progress("fedcheck privacy account", 3.0 if "pld" in names else 0.5, args.quiet):
            for name in names:
                key = ACCOUNTANTS[name][0]
                try:
                    epsilon[key] = float(SUBSAMPLED_ACCOUNTANTS[key](z, q, args.rounds, args.delta))
                except Exception as exc:  # noqa: BLE001 - dp-accounting's own limits: reported, not fatal
                    epsilon[key], status[key] = None, f"accountant failed: {_failure(exc)}"
        for key, value in epsilon.items():
            if value is not None and not math.isfinite(value):
                status[key] = "infinite epsilon" if value > 0 else f"non-finite epsilon ({value!r})"
    document = {"mode": "subsampled_gaussian", "rounds": args.rounds, "delta": args.delta,
                "noise_multiplier": z if z is not None else math.inf, "sampling_rate": q,
                "accountants": list(names), "epsilon": epsilon}
    if z is None:
        status["noise_multiplier"] = "sensitivity 0: no privacy loss (noise multiplier infinite)"
    if status:
        document["epsilon_status"] = status
    rows = _common_rows({**document, "noise_multiplier": z if z is not None else math.inf})
    rows += [("accountants", ",".join(names))] + _epsilon_rows(epsilon, status)
    return _print(document, rows, args.json)


# -- calibrate ----------------------------------------------------------------------------------------------------
def _calibrate(args, parser) -> int:
    if args.sampling_rate is not None:
        return _calibrate_subsampled(args, parser)
    for option, value in (("--noise-multiplier", args.noise_multiplier), ("--accountants", args.accountants)):
        if value is not None:
            parser.error(f"argument {option}: only allowed with --sampling-rate (a subsampled schedule)")
    if args.method in _SUBSAMPLED_METHODS:
        parser.error(f"argument --method: {args.method} calibrates a subsampled schedule (give --sampling-rate); a "
                     f"zCDP schedule takes exact, cks or bun-steinke")
    if args.rounds is None:
        parser.error("argument --rounds: required (the number of releases N >= 1)")
    if args.sensitivity is None:
        parser.error("argument --sensitivity: required for a zCDP schedule (a real number in (0, inf)), or give "
                     "--sampling-rate for a subsampled one")
    return _calibrate_zcdp(args, parser)


def _calibrate_zcdp(args, parser) -> int:
    from theory.privacy.accounting import CONVERSIONS, calibrate_variance_first

    method = args.method or "exact"
    z = 1.0 if args.variance_decay is None else args.variance_decay
    if z < 1.0 and (args.rounds - 1) * -math.log(z) > 690.0:
        parser.error(f"argument --variance-decay: Z^-(N-1) = 10^{(args.rounds - 1) * -math.log10(z):.4g} overflows "
                     f"the double range for N = {args.rounds} rounds (use Z closer to 1 or fewer rounds)")
    try:
        rho_star = CONVERSIONS[method][1](args.epsilon, args.delta)
        if not (math.isfinite(rho_star) and rho_star > 0):
            raise ArithmeticError(f"rho* = {rho_star!r}")
    except OverflowError as exc:
        parser.error(f"argument --epsilon: epsilon = {args.epsilon:g} is beyond the double range of the {method} "
                     f"conversion (its zCDP budget grows like epsilon^2: {_failure(exc)}); allowed (0, 1e154]")
    except (ValueError, ArithmeticError, ZeroDivisionError) as exc:
        parser.error(f"argument --epsilon: no finite zCDP budget meets epsilon = {args.epsilon:g} at delta = "
                     f"{args.delta:g} with the {method} conversion ({_failure(exc)})")
    try:
        variance, achieved = calibrate_variance_first(args.epsilon, args.delta, args.rounds, args.sensitivity, z,
                                                      method)
        if not (math.isfinite(variance) and variance > 0):
            raise OverflowError(f"variance = {variance!r}")
    except (ValueError, OverflowError, ArithmeticError, ZeroDivisionError) as exc:
        parser.error(f"argument --sensitivity: the calibrated variance overflows the double range "
                     f"(sensitivity = {args.sensitivity:g}; {_failure(exc)})")
    document = {"mode": "zcdp_schedule", "rounds": args.rounds, "delta": args.delta, "epsilon_target": args.epsilon,
                "sensitivity": args.sensitivity, "variance_decay": z, "method": method, "variance_first": variance,
                "sigma_first": math.sqrt(variance), "epsilon_achieved": achieved}
    rows = [("mode", "zcdp_schedule"), ("rounds", str(args.rounds)), ("delta", f"{args.delta:g}"),
            ("epsilon_target", f"{args.epsilon:g}"), ("sensitivity", f"{args.sensitivity:g}"),
            ("variance_decay", f"{z:g}"), ("method", method),
            ("variance_first", _up(variance, 6) + " (rounded up)"), ("sigma_first", _up(math.sqrt(variance), 6)
                                                                     + " (rounded up)"),
            ("epsilon_achieved", _up(achieved))]
    return _print(document, rows, args.json)


def _calibrate_subsampled(args, parser) -> int:
    from theory.privacy.subsampled_accounting import (
        SUBSAMPLED_ACCOUNTANTS,
        calibrate_noise_multiplier_subsampled,
        calibrate_steps_subsampled,
    )

    for option, value in (("--sensitivity", args.sensitivity), ("--variance-decay", args.variance_decay)):
        if value is not None:
            parser.error(f"argument {option}: not allowed with --sampling-rate (the noise multiplier is sigma / "
                         f"sensitivity)")
    method = args.method or "fedcheck-rdp"
    if method not in _SUBSAMPLED_METHODS:
        parser.error(f"argument --method: {method} converts a zCDP total, which a subsampled schedule has not; use "
                     f"fedcheck-rdp, rdp or pld")
    q = args.sampling_rate
    if args.noise_multiplier is not None and args.rounds is not None:
        parser.error("argument --noise-multiplier: with --steps there is nothing to calibrate (use privacy account); "
                     "give one of them")
    if args.noise_multiplier is None and args.rounds is None:
        parser.error("argument --steps: required with --sampling-rate (or give --noise-multiplier to find the "
                     "number of steps)")
    if args.accountants is not None:
        bad = [n for n in args.accountants if n in _ZCDP_ONLY]
        if bad and q < 1.0:
            parser.error(f"argument --accountants: {bad[0]} does not apply with --sampling-rate < 1; use "
                         f"fedcheck-rdp, rdp or pld")
        if bad:
            parser.error(f"argument --accountants: {bad[0]} converts a zCDP total; with --sampling-rate the check "
                         f"accountants are fedcheck-rdp, rdp and pld")
    key = ACCOUNTANTS[method][0]
    slow = {"fedcheck_rdp": 0.5, "rdp_accountant": 5.0, "pld_accountant": 60.0}[key]
    try:
        with _progress("fedcheck privacy calibrate", slow, args.quiet):
            if args.noise_multiplier is None:
                z, achieved = calibrate_noise_multiplier_subsampled(args.epsilon, args.delta, q, args.rounds,
                                                                    accountant=key, z_max=MAX_NOISE_MULTIPLIER)
                steps, solved = args.rounds, "noise_multiplier"
            else:
                steps, achieved = calibrate_steps_subsampled(args.epsilon, args.delta, args.noise_multiplier, q,
                                                             accountant=key, max_steps=MAX_ROUNDS)
                z, solved = args.noise_multiplier, "steps"
    except ValueError as exc:
        option = "--epsilon" if args.noise_multiplier is None else "--noise-multiplier"
        parser.error(f"argument {option}: {' '.join(str(exc).split())}")
    capped = solved == "steps" and steps == MAX_ROUNDS   # the cap meets the target: more rounds may too
    document = {"mode": "subsampled_gaussian", "rounds": steps, "delta": args.delta, "epsilon_target": args.epsilon,
                "sampling_rate": q, "method": method, "solved_for": solved, "noise_multiplier": z,
                "epsilon_achieved": achieved}
    if solved == "steps":
        document["rounds_capped"] = capped
    said = (f" (the cap of {MAX_ROUNDS} rounds meets the target: the most that meet it are at least that many)"
            if capped else " (solved: the most that meet the target)" if solved == "steps" else "")
    rows = [("mode", "subsampled_gaussian"), ("rounds", str(steps) + said),
            *([("rounds_capped", "yes" if capped else "no")] if solved == "steps" else []),
            ("delta", f"{args.delta:g}"), ("epsilon_target", f"{args.epsilon:g}"), ("sampling_rate", f"{q:.6g}"),
            ("method", method), ("solved_for", solved),
            ("noise_multiplier", _up(z, 6) + (" (rounded up)" if solved == "noise_multiplier" else "")),
            ("epsilon_achieved", _up(achieved))]
    if args.accountants is not None:
        epsilon, status = {}, {}
        for name in args.accountants:
            k = ACCOUNTANTS[name][0]
            try:
                epsilon[k] = float(SUBSAMPLED_ACCOUNTANTS[k](z, q, steps, args.delta))
            except Exception as exc:  # noqa: BLE001 - dp-accounting's own limits: reported, not fatal
                epsilon[k], status[k] = None, f"accountant failed: {_failure(exc)}"
        document["epsilon"] = epsilon
        if status:
            document["epsilon_status"] = status
        rows += _epsilon_rows(epsilon, status)
    return _print(document, rows, args.json)


def run_privacy(args) -> int:
    if args.privacy_command == "account":
        return _account(args, args.subparser)
    return _calibrate(args, args.subparser)
