"""``fedcheck msd CONFIG.toml``: the theoretical MSD of PAO-Fed before running anything.

Reads the ``[instance]`` section of a PAO-Fed configuration (the schema of
``fedcheck/examples/paofed_reference.toml``; other sections are accepted and ignored) and reports the
paper's step-size bounds, the exact stability thresholds, rho(F) and the steady-state MSD for the seed's
truncated F and/or the exact F (Gaussian regressors), and optionally the transient curve.
"""

from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path

__all__ = ["add_msd_parser", "msd_report", "run_msd"]


def add_msd_parser(sub) -> None:
    msd = sub.add_parser("msd", help="theoretical MSD of PAO-Fed for a configuration (no simulation)")
    msd.add_argument("config", type=Path, metavar="CONFIG.toml")
    msd.add_argument("--model", choices=("seed", "exact", "both"), default="both",
                     help="seed: the paper's F (mu^2 term dropped); exact: with the Gaussian mu^2 term (default both)")
    msd.add_argument("--method", choices=("auto", "naive", "structured"), default="auto",
                     help="naive forms F explicitly (N <= 100); structured never forms it (default auto = structured)")
    msd.add_argument("--transient", type=int, default=None, metavar="N", help="also the MSD curve for n = 0..N")
    msd.add_argument("--csv", type=Path, default=None, metavar="FILE", help="write the transient curve as CSV")
    msd.add_argument("--json", action="store_true", help="print JSON")
    msd.set_defaults(subparser=msd)


def _db(x: float) -> float:
    return 10.0 * math.log10(x) if x > 0 else -math.inf


def _explicit_radius(instance, model: str) -> float:
    """rho(F) of the explicitly formed F (naive route) by Arnoldi on its sparse storage."""
    from scipy.sparse.linalg import eigs

    from theory.msd import f_matrix

    values = eigs(f_matrix(instance, model, dense=False), k=1, which="LM", return_eigenvectors=False, tol=1e-13)
    return float(abs(values[0]))


def msd_report(instance, models, method: str = "auto", transient: int | None = None) -> dict:
    """Bounds, thresholds, rho(F) and MSD for ``instance`` (a :class:`theory.msd.PAOFedInstance`)."""
    from theory.msd import (
        NAIVE_MAX_N,
        mean_square_threshold,
        mean_threshold,
        msd_steady_state,
        msd_steady_state_naive,
        msd_transient,
        msd_transient_naive,
        paper_mean_bound,
        paper_mean_square_bound,
        spectral_radius_F,
        spectral_radius_M,
    )

    N = instance.n_blocks * instance.D
    if method == "naive" and N > NAIVE_MAX_N:
        raise ValueError(f"--method naive needs N = N_b D <= {NAIVE_MAX_N}, this instance has N = {N}")
    use_naive = method == "naive"
    mean_bracket = mean_threshold(instance)
    out = {
        "mu": instance.mu, "lambda_max": instance.lambda_max, "mu_times_lambda_max": instance.mu * instance.lambda_max,
        "N": N, "method": "naive" if use_naive else "structured",
        "paper_bounds": {"mean": paper_mean_bound(instance), "mean_square": paper_mean_square_bound(instance)},
        "thresholds": {"mean": [mean_bracket.lo, mean_bracket.hi]},
        "mean_spectral_radius": spectral_radius_M(instance),
        "models": {},
    }
    for model in models:
        bracket = mean_square_threshold(instance, model)
        out["thresholds"][model] = [bracket.lo, bracket.hi]
        radius = _explicit_radius(instance, model) if use_naive else spectral_radius_F(instance, model)
        entry = {"spectral_radius": radius, "stable": radius < 1.0,
                 "threshold_mu": [bracket.lo, bracket.hi],
                 "threshold_mu_times_lambda_max": [bracket.lo * instance.lambda_max, bracket.hi * instance.lambda_max]}
        if radius < 1.0:
            if use_naive:
                msd = msd_steady_state_naive(instance, model, solver="sparse")  # LU of the explicit F
                entry.update(msd=msd, msd_db=_db(msd))
            else:
                sol = msd_steady_state(instance, model)
                entry.update(msd=sol.msd, msd_db=_db(sol.msd), residual=sol.residual, solver=sol.method)
        else:
            entry["msd_db"] = None
            entry["note"] = (f"mu = {instance.mu:.6g} is outside the mean-square stable range of the {model} model: "
                             f"rho(F) = {radius:.6g} >= 1; stable for mu < {bracket.lo:.6g}")
        if transient is not None:
            curve = msd_transient_naive(instance, transient, model) if use_naive else msd_transient(instance, transient, model)
            entry["transient_db"] = [_db(float(v)) for v in curve]
        out["models"][model] = entry
    return out


def run_msd(args) -> int:
    from fedcheck.paofed_cli import ConfigError, _instance, _load_table

    parser = args.subparser
    if args.transient is not None and args.transient < 0:
        parser.error(f"argument --transient: must be an integer >= 0, got {args.transient}")
    if args.csv is not None and args.transient is None:
        parser.error("argument --csv: needs --transient N")
    try:
        table = _load_table(args.config)
        instance = _instance(table, Path(args.config).parent)
    except ConfigError as exc:
        parser.error(str(exc))
    models = ("seed", "exact") if args.model == "both" else (args.model,)
    try:
        report = msd_report(instance, models, args.method, args.transient)
    except ValueError as exc:
        parser.error(f"argument --method: {exc}")
    if args.csv is not None:
        with open(args.csv, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(["n"] + [f"msd_db_{m}" for m in models])
            for n in range(args.transient + 1):
                writer.writerow([n] + [report["models"][m]["transient_db"][n] for m in models])
    if args.json:
        json.dump(report, sys.stdout, indent=2, default=float)
        sys.stdout.write("\n")
        return 0
    lam = report["lambda_max"]
    print(f"PAO-Fed instance: N = {report['N']}, mu = {report['mu']:.6g} (mu lambda_max = {report['mu_times_lambda_max']:.4g}),"
          f" lambda_max = {lam:.6g}")
    print(f"paper bounds: mean mu < 2/lambda_max = {report['paper_bounds']['mean']:.6g}; "
          f"mean square mu < 1/lambda_max = {report['paper_bounds']['mean_square']:.6g}")
    lo, hi = report["thresholds"]["mean"]
    print(f"exact mean threshold: mu* in [{lo:.6g}, {hi:.6g}] ({lo * lam:.5g}/lambda_max); rho(M) = "
          f"{report['mean_spectral_radius']:.6g}")
    for model, entry in report["models"].items():
        lo, hi = entry["threshold_mu"]
        line = (f"{model} F: rho(F) = {entry['spectral_radius']:.6g}, threshold mu* in [{lo:.6g}, {hi:.6g}] "
                f"({lo * lam:.5g}/lambda_max); ")
        line += f"MSD_inf = {entry['msd_db']:.4f} dB" if entry["msd_db"] is not None else entry["note"]
        print(line)
    return 0
