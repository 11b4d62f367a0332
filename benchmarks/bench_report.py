"""What a report costs: a whole ``fedcheck report`` (or an ``--only`` subset) timed by phase, its most expensive claims.

Run: .venv/bin/python benchmarks/bench_report.py [--only PREFIX ...] [--profile ci|thorough] [--workers N]
                                                   [--seed S] [--top K] [--out DIR] [--baseline OLD_results.json]
     .venv/bin/python benchmarks/bench_report.py --results results.json [--top K] [--baseline OLD_results.json]

The first form runs the selected claims without the result cache, as ``fedcheck report --no-cache`` does (the same
registry, runner, executor and report writer, called in this process so that the phases can be timed apart), and
writes the report to ``--out`` (default: a temporary directory, removed afterwards). It prints, all measured in
this process: the wall and CPU time of the checks and of writing the report (figures and HTML), the sum of the
claims' own runtimes against the wall time (how well ``--workers`` overlapped them), the check time per paper, and
the ``--top`` most expensive claims (by CPU time: what a claim's check consumed in this process and in the worker
processes it used; its runtime, wall time, also counts waiting for workers busy with other claims) with their share
of the total. The second form prints the same cost tables of
an existing ``results.json`` (a report made elsewhere, e.g. by ``make report``). With ``--baseline`` an earlier
``results.json`` is the baseline: the claims whose cost grew the most are listed with their ratio, so that a
regression is seen at once. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere in the checkout
    sys.path.insert(0, str(ROOT))

from reports.formatting import format_seconds  # noqa: E402


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the worker processes once the pool is closed)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def load_results(path: Path) -> tuple[dict, dict[str, dict]]:
    """``(document, {claim_id: {"runtime_s", "cpu_s", "cost", "verdict", "paper"}})`` of a results.json (``cost``:
    the CPU time where the report measured it, else the runtime); ValueError naming the file when it is not one."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
        papers = {c["id"]: c.get("paper", c["id"].split(".")[0]) for c in document.get("claims", [])}
        rows = {r["claim_id"]: {"runtime_s": float(r.get("runtime_s") or 0.0),
                                "cpu_s": None if r.get("cpu_s") is None else float(r["cpu_s"]),
                                "verdict": r.get("verdict", ""),
                                "paper": papers.get(r["claim_id"], r["claim_id"].split(".")[0])}
                for r in document["results"]}
        for row in rows.values():
            row["cost"] = row["runtime_s"] if row["cpu_s"] is None else row["cpu_s"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{str(path)!r} is not a fedcheck results.json: {exc}") from None
    return document, rows


def cost_tables(rows: dict[str, dict], top: int, baseline: dict[str, dict] | None = None) -> str:
    """The per-paper totals, the ``top`` most expensive claims and, against a baseline, the largest slow-downs.

    A claim's cost is its CPU time (its check's own, in this process and in the workers it used) where the report
    measured it, else its runtime: with several workers a claim's runtime also counts the time it waited for
    workers busy with other claims, so runtimes overstate and misplace the cost."""
    total = sum(r["cost"] for r in rows.values())
    walls = sum(r["runtime_s"] for r in rows.values())
    measured = all(r["cpu_s"] is not None for r in rows.values())
    what = "CPU time" if measured else "runtime (no CPU times in this file)"
    lines = [f"claims: {len(rows)}, sum of claim costs ({what}) {format_seconds(total)} ({total:.1f} s); "
             f"sum of claim runtimes {format_seconds(walls)}", "",
             f"{'paper':<12} {'claims':>6} {'cost':>12} {'share':>6}"]
    papers: dict[str, list[float]] = {}
    for row in rows.values():
        papers.setdefault(row["paper"], []).append(row["cost"])
    for paper, times in sorted(papers.items(), key=lambda kv: -sum(kv[1])):
        lines.append(f"{paper:<12} {len(times):>6} {format_seconds(sum(times)):>12} "
                     f"{sum(times) / total if total else 0.0:>6.1%}")
    ranked = sorted(rows.items(), key=lambda kv: -kv[1]["cost"])[:top]
    width = max((len(cid) for cid, _ in ranked), default=5)
    lines += ["", f"the {len(ranked)} most expensive claims:",
              f"{'claim':<{width}} {'verdict':<13} {'cost':>12} {'runtime':>12} {'share':>6} {'cumulative':>10}"]
    running = 0.0
    for cid, row in ranked:
        running += row["cost"]
        lines.append(f"{cid:<{width}} {row['verdict']:<13} {format_seconds(row['cost']):>12} "
                     f"{format_seconds(row['runtime_s']):>12} "
                     f"{row['cost'] / total if total else 0.0:>6.1%} {running / total if total else 0.0:>10.1%}")
    if baseline is not None:
        common = [cid for cid in rows if cid in baseline and baseline[cid]["cost"] > 0]
        old = sum(baseline[cid]["cost"] for cid in common)
        new = sum(rows[cid]["cost"] for cid in common)
        lines += ["", f"against the baseline ({len(common)} claims in both): {format_seconds(old)} -> "
                      f"{format_seconds(new)} ({new / old if old else float('nan'):.2f}x)"]
        grown = sorted(common, key=lambda cid: -(rows[cid]["cost"] - baseline[cid]["cost"]))[:top]
        lines.append(f"{'claim':<{width}} {'baseline':>12} {'now':>12} {'ratio':>7}")
        for cid in grown:
            b, n = baseline[cid]["cost"], rows[cid]["cost"]
            lines.append(f"{cid:<{width}} {format_seconds(b):>12} {format_seconds(n):>12} {n / b:>6.2f}x")
        missing = sorted(set(rows) - set(baseline))
        if missing:
            lines.append(f"not in the baseline: {', '.join(missing[:top])}" + (" ..." if len(missing) > top else ""))
    return "\n".join(lines)


def run_report(only: list[str], profile: str, workers: int, seed: int, out: Path) -> tuple[Path, dict[str, float]]:
    """Run the selected checks (no cache) and write the report to ``out``; returns results.json and the phases'
    wall and CPU seconds."""
    from reports.build import build_report
    from verify.executor import make_executor
    from verify.records import CheckContext
    from verify.registry import select_claims
    from verify.runner import run_claims

    claims = select_claims(only)
    executor = make_executor(workers)
    ctx = CheckContext(profile=profile, seed=seed, executor=executor)
    wall0, cpu0 = time.perf_counter(), _cpu()
    try:
        results = run_claims(claims, ctx, parallel=workers)
    finally:
        executor.close()
    wall1, cpu1 = time.perf_counter(), _cpu()
    meta = {"profile": profile, "seed": seed, "executor": executor.name, "only": list(only), "data": {}}
    build_report(claims, results, out, meta)
    wall2, cpu2 = time.perf_counter(), _cpu()
    return out / "results.json", {"checks_wall": wall1 - wall0, "checks_cpu": cpu1 - cpu0,
                                  "report_wall": wall2 - wall1, "report_cpu": cpu2 - cpu1}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=None, metavar="FILE",
                        help="summarise an existing results.json instead of running a report")
    parser.add_argument("--only", nargs="+", default=[], metavar="PREFIX", help="claims whose id starts with PREFIX")
    parser.add_argument("--profile", choices=("ci", "thorough"), default="ci")
    parser.add_argument("--workers", type=int, default=1, metavar="N")
    parser.add_argument("--seed", type=int, default=0, metavar="S")
    parser.add_argument("--top", type=int, default=10, metavar="K")
    parser.add_argument("--out", type=Path, default=None, metavar="DIR", help="keep the report here")
    parser.add_argument("--baseline", type=Path, default=None, metavar="FILE",
                        help="an earlier results.json to compare the claims' runtimes with")
    args = parser.parse_args(argv)
    for name in ("workers", "top"):
        if getattr(args, name) < 1:
            parser.error(f"argument --{name}: must be an integer >= 1, got {getattr(args, name)}")
    if args.seed < 0:
        parser.error(f"argument --seed: must be an integer >= 0, got {args.seed}")
    try:
        baseline = load_results(args.baseline)[1] if args.baseline is not None else None
        if args.results is not None:
            if args.only or args.out is not None:
                parser.error("argument --results: cannot be combined with --only or --out (it runs nothing)")
            document, rows = load_results(args.results)
            print(f"{args.results}: profile {document.get('profile', '?')}, executor {document.get('executor', '?')}")
            print(cost_tables(rows, args.top, baseline))
            return 0
    except ValueError as exc:
        parser.error(str(exc))
    with tempfile.TemporaryDirectory(prefix="bench_report.") as scratch:
        out = args.out if args.out is not None else Path(scratch) / "report"
        results, phases = run_report(args.only, args.profile, args.workers, args.seed, out)
        total_wall = phases["checks_wall"] + phases["report_wall"]
        _, rows = load_results(results)
        claim_sum = sum(r["runtime_s"] for r in rows.values())
        claim_cpu = sum(r["cost"] for r in rows.values())
        print(f"fedcheck report --profile {args.profile} --workers {args.workers}"
              + (f" --only {' '.join(args.only)}" if args.only else "") + f" (load average {os.getloadavg()[0]:.1f})")
        print(f"checks:           {format_seconds(phases['checks_wall']):>12} wall, "
              f"{format_seconds(phases['checks_cpu']):>12} CPU")
        print(f"writing report:   {format_seconds(phases['report_wall']):>12} wall, "
              f"{format_seconds(phases['report_cpu']):>12} CPU ({phases['report_wall'] / total_wall:.1%} of the wall "
              "time)")
        print(f"sum of claim runtimes / checks' wall time = {claim_sum / phases['checks_wall']:.2f} "
              f"(claims overlapped by --workers {args.workers}); sum of claim CPU times / checks' CPU time = "
              f"{claim_cpu / phases['checks_cpu'] if phases['checks_cpu'] else float('nan'):.2f}")
        if args.out is not None:
            print(f"report kept in {out}")
        print()
        print(cost_tables(rows, args.top, baseline))
    return 0


if __name__ == "__main__":
    sys.exit(main())
