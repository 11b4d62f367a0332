"""``fedcheck run npfl-rl CONFIG.toml``: one arm of NPFL-RL (thesis ch. 6 / P7) on I0-style instances.

The arm is NFL, NPFL with a fixed tau, or NPFL-RL/BRL with the DPG or SAC controller ([algorithm]); the instances
follow the spec's generator I0 ([instance]; every value the seed leaves open is a field). Run r (r = 0..R-1) is the
instance of replicate seed S + r (``reference_impl.npfl_rl.run_arm``'s instance for that seed); the runs are
vectorised. Output: the Test MSE (6.15) as printed (denominator ||w_q||) and with ||w_q||^2 (D9), averaged over the
runs in the linear domain then in dB, per-run curves, and the tau trajectories of the clients with the largest,
median and smallest D_k of every run (Fig. 3, C9). ``--json`` prints

    {"label", "iterations", "runs", "seed", "status", "test_mse_db": [N+1], "nmsd_db": [N+1],
     "test_mse_db_runs": [R][N+1], "tau": {"clients": [R][3], "D_k": [R][3], "trajectories": [R][3][N+1]},
     "tau_final": [R][K], "ill_posed_evaluations": [R], "config": {...}}

with non-finite values null and ``status`` "ok", "ill_posed" (some evaluation of P(a) was not positive definite:
unprojected mode, K10) or "diverged". A bad field exits with status 2 and one line naming ``section.field``.
"""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path

from fedcheck._config import ConfigError, load_table
from fedcheck._config import scalar as _scalar

__all__ = ["ConfigError", "add_run_parser", "load_npfl_rl_config", "run_npfl_rl"]

_SECTIONS = {
    "simulation": {"iterations"},
    "instance": {"K", "Q", "d", "mean_degree", "D_min", "D_max", "noise_min", "noise_max", "lam", "delta_half_width",
                 "delta_kind"},
    "algorithm": {"algorithm", "rho", "policy", "tau0", "delta", "nu", "epochs", "projection", "tau_max",
                  "clip_candidates", "timing", "convention", "dual_sign", "diagonal"},
}
#: iterations x runs x K x d^2 (the cost of the primal steps) allowed per command.
MAX_WORK = 2e11


def _instance(table) -> dict:
    sec = "instance"
    pos = dict(check=lambda v: v >= 1, allowed="an integer >= 1")
    K = _scalar(table, sec, "K", int, 30, check=lambda v: v >= 2, allowed="an integer >= 2")
    Q = _scalar(table, sec, "Q", int, 3, check=lambda v: 1 <= v <= K, allowed=f"an integer in [1, K = {K}]")
    d = _scalar(table, sec, "d", int, 60, **pos)
    mean_degree = _scalar(table, sec, "mean_degree", float, 6.0, check=lambda v: 0 < v <= K - 1,
                          allowed=f"a real in (0, K - 1 = {K - 1}]")
    D_min = _scalar(table, sec, "D_min", int, 5, **pos)
    D_max = _scalar(table, sec, "D_max", int, 35, check=lambda v: v >= D_min, allowed=f"an integer >= D_min = {D_min}")
    noise_min = _scalar(table, sec, "noise_min", float, 0.005, check=lambda v: v >= 0, allowed="a real >= 0")
    noise_max = _scalar(table, sec, "noise_max", float, 0.03, check=lambda v: v >= noise_min,
                        allowed=f"a real >= noise_min = {noise_min}")
    return {"K": K, "Q": Q, "d": d, "mean_degree": mean_degree, "D_range": (D_min, D_max),
            "noise_range": (noise_min, noise_max),
            "lam": _scalar(table, sec, "lam", float, 0.1, check=lambda v: v > 0, allowed="a real > 0"),
            "delta_half_width": _scalar(table, sec, "delta_half_width", float, 0.5, check=lambda v: v >= 0,
                                        allowed="a real >= 0"),
            "delta_kind": _scalar(table, sec, "delta_kind", str, "scalar", check=lambda v: v in ("scalar",
                                  "elementwise"), allowed="'scalar' or 'elementwise'")}


def _algorithm(table):
    from reference_impl.npfl_rl import ALGORITHMS, DIAGONALS, DUAL_SIGNS, POLICIES, TIMINGS, NPFLConfig
    from reference_impl.npfl_rl.data import CONVENTIONS

    sec = "algorithm"
    one_of = lambda name, allowed, default: _scalar(
        table, sec, name, str, default, check=lambda v: v in allowed, allowed=" or ".join(repr(a) for a in allowed))
    nonneg = dict(check=lambda v: v >= 0, allowed="a real >= 0")
    kwargs = {
        "algorithm": one_of("algorithm", ALGORITHMS, "npfl"),
        "rho": _scalar(table, sec, "rho", float, 3.0, check=lambda v: v > 0, allowed="a real > 0"),
        "policy": one_of("policy", POLICIES, "fixed"),
        "tau0": _scalar(table, sec, "tau0", float, 0.05, **nonneg),
        "delta": _scalar(table, sec, "delta", float, 0.001, **nonneg),
        "nu": _scalar(table, sec, "nu", float, 0.05, **nonneg),
        "epochs": _scalar(table, sec, "epochs", int, 1, check=lambda v: v >= 1, allowed="an integer >= 1"),
        "projection": _scalar(table, sec, "projection", bool, True, allowed="true or false"),
        "tau_max": _scalar(table, sec, "tau_max", float, 1.0, check=lambda v: v > 0, allowed="a real > 0"),
        "clip_candidates": _scalar(table, sec, "clip_candidates", bool, False, allowed="true or false"),
        "timing": one_of("timing", TIMINGS, "literal"),
        "convention": one_of("convention", CONVENTIONS, "E0"),
        "dual_sign": one_of("dual_sign", DUAL_SIGNS, "corrected"),
        "diagonal": one_of("diagonal", DIAGONALS, "corrected"),
    }
    try:
        return NPFLConfig(**kwargs)
    except ValueError as exc:
        raise ConfigError(f"{sec}.{exc}".replace("\n", " ")) from None


def load_npfl_rl_config(path, *, iterations: int | None = None, runs: int = 1) -> tuple[dict, object, int]:
    """Parse ``path``: (generator keyword arguments, NPFLConfig, iterations). ConfigError names ``section.field``."""
    table = load_table(Path(path), _SECTIONS)
    instance = _instance(table)
    config = _algorithm(table)
    n_iter = iterations if iterations is not None else _scalar(table, "simulation", "iterations", int, 300,
                                                               check=lambda v: v >= 1, allowed="an integer >= 1")
    work = float(n_iter) * runs * instance["K"] * instance["d"] ** 2 * (1 + 2 * config.epochs)
    if work > MAX_WORK:
        raise ConfigError(f"--iterations: iterations x runs x K x d^2 x (1 + 2 epochs) = {work:.3g} exceeds "
                          f"{MAX_WORK:.0e}; use fewer iterations or runs, or a smaller instance.K / instance.d")
    return instance, config, n_iter


def add_run_parser(run_subparsers, int_at_least) -> None:
    """Add ``npfl-rl`` to the sub-commands of ``fedcheck run``."""
    p = run_subparsers.add_parser("npfl-rl", help="NPFL-RL / NPFL / NFL (thesis ch. 6, P7) from a TOML file")
    p.add_argument("config", type=Path, metavar="CONFIG.toml")
    p.add_argument("--iterations", type=int_at_least(1), default=None, metavar="N",
                   help="iterations (default: [simulation] iterations, else 300)")
    p.add_argument("--runs", type=int_at_least(1), default=1, metavar="R",
                   help="independent instances, replicate seeds S..S+R-1 (default 1)")
    p.add_argument("--seed", type=int_at_least(0), default=0, metavar="S", help="first replicate seed (default 0)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(subparser=p, handler=run_npfl_rl)


def _db(x):
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore"):
        return 10.0 * np.log10(x)


def run_npfl_rl(args) -> int:
    """Run the configured arm on R instances and print the Test MSE and tau trajectories (exit status 0)."""
    import numpy as np

    from fedcheck._config import strict_json
    from reference_impl.npfl_rl import run_npfl
    from reference_impl.npfl_rl.data import synthetic_problem

    parser = args.subparser
    try:
        instance, config, n_iter = load_npfl_rl_config(args.config, iterations=args.iterations, runs=args.runs)
        problems = [synthetic_problem(np.random.default_rng([args.seed + r, 0]), **instance)[0]
                    for r in range(args.runs)]
    except (ValueError, RuntimeError) as exc:
        parser.error(str(exc).replace("\n", " "))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        run = run_npfl(problems, config, n_iter, np.random.default_rng([args.seed, 1]))
        mse_db, nmsd_db = _db(np.mean(run.test_mse, axis=0)), _db(np.mean(run.nmsd, axis=0))
        runs_db = _db(run.test_mse)
    tracked = [np.argsort(p.D, kind="stable")[[-1, p.K // 2, 0]] for p in problems]  # largest, median, smallest D_k
    finite = bool(run.finite.all()) and bool(np.all(np.isfinite(mse_db)))
    status = "diverged" if not finite else ("ill_posed" if int(run.ill_posed.sum()) else "ok")
    if args.json:
        cfg = asdict(config)
        sys.stdout.write(strict_json({
            "label": config.label, "iterations": n_iter, "runs": args.runs, "seed": args.seed, "status": status,
            "test_mse_db": mse_db, "nmsd_db": nmsd_db, "test_mse_db_runs": runs_db,
            "tau": {"clients": [t.tolist() for t in tracked],
                    "D_k": [p.D[t].tolist() for p, t in zip(problems, tracked)],
                    "trajectories": [run.tau[r][:, t].T for r, t in enumerate(tracked)]},
            "tau_final": run.tau[:, -1], "ill_posed_evaluations": run.ill_posed, "config": cfg}) + "\n")
        return 0
    print(f"{config.label}: K = {instance['K']}, d = {instance['d']}, {n_iter} iterations, {args.runs} run(s), "
          f"replicate seeds {args.seed}..{args.seed + args.runs - 1}; status {status}")
    print(f"Test MSE (6.15) after the last iteration: {mse_db[-1]:.3f} dB (printed ||w_q|| denominator), "
          f"{nmsd_db[-1]:.3f} dB (||w_q||^2)")
    if config.policy != "fixed":
        print(f"tau at the end: min {np.min(run.tau[:, -1]):.4g}, median {np.median(run.tau[:, -1]):.4g}, "
              f"max {np.max(run.tau[:, -1]):.4g}")
    if status == "ill_posed":
        print(f"ill-posed primal steps: {int(run.ill_posed.sum())} evaluations of P(a) with c_k + omega_k a <= 0 "
              "(unprojected mode; set algorithm.projection = true)")
    print("curves and tau trajectories: use --json for all values")
    return 0
