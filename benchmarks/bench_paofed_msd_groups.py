"""PAO-Fed steady-state MSD at the paper's K and l_max with non-white features in exchangeable groups.

Run: .venv/bin/python benchmarks/bench_paofed_msd_groups.py [--D 20,40,80] [--method bicgstab] [--rtol 1e-10]
     [--budget 600] [--models seed,exact] [--covariance toeplitz|rff [--sigma-kappa 5] [--ridge 1e-2]] [--mu MU]

The instance is the paper's federation (seed 004 Ch. 4.5 / P4 Sec. V, docs/papers/paofed.md#experiments): K = 256
clients in four availability groups of 64 (p = 0.25, 0.1, 0.025, 0.005), l_max = 10, delta = 0.2, alpha_l = 0.2^l,
window selection with p_m = m/D = 0.02, noise variance 0.01, and Toeplitz features R_c = rho_c^|i-j| shared within a
group (rho_c = 0.1, 0.3, 0.5, 0.7; lambda_min of the last is 0.18). mu = 0.8/D (0.004 at D = 200): tr R_c = D, and the
exact F's Gaussian fourth moment limits mu to about 2/(tr R + 2 lambda_max), so both models are stable.

``--covariance rff``: R_c = E[z z^T] of docs/papers/paofed.md#choice-rff RFF map (sigma_kappa = 5, the calibrated
bandwidth: lambda_max of the four R_c 0.88-0.93 at D = 200 against the seed's 1.02) on docs/papers/paofed.md#choice-data
stationary AR(1) inputs, one client law per group and one map (theory.msd.classes_rff, exact population covariances),
plus ``--ridge`` I: these R_c have numerical rank 5-7, so without a ridge rho(F) = 1 - O(mu p p_m lambda_min) and (S2)
has no usable steady state (docs/papers/paofed.md#choice-msd-instances; at D = 20 BiCGSTAB stalls at 1.2e-5 after 1600
iterations). The MSD depends on the ridge (D = 60: -23.74 / -21.41 dB seed / exact with
1e-2, 11-12 iterations; -24.37 / -22.61 dB with 1e-3, 35-39 iterations); note that ridge * D adds to tr R_c (about 1
without it), which the exact F's fourth moment sees. mu = 0.4 (the seed's; mu lambda_max ~ 0.37), noise variances
of docs/papers/paofed.md#choice-data per group.

For each D the steady state of both models is solved on the class reduction (theory.msd.classes: 2509 blocks of
D x D, independent of K) by capped Krylov with the residual recomputed afterwards. One row per (D, model): wall and
CPU seconds, iterations, relative residual, MSD in dB and the process's peak RSS so far (ru_maxrss, monotone: run
the D values in ascending order or one per process). Rows stop after the first D whose solve exceeds ``--budget``
seconds of wall time.

Measured at D = 200 (10^8 unknowns; single-threaded; load average 6-10 on 2 shared cores), peak RSS 3.63 GB
(six packed symmetric vectors of 415 MB and one 800 MB work state; was 10.6 GB, about 13 full vectors; 4.41 GB in
the Toeplitz run below, made before the first model's solution was dropped ahead of the second solve):
Toeplitz, seed F 21 iterations 72.0 CPU-s, residual 3.8e-11, -39.0506 dB; exact F 19 iterations 69.6 CPU-s, 4.5e-11,
-37.5700 dB (was 163 / 146 CPU-s). RFF, ridge 1e-2: seed 13 iterations 55.1 CPU-s, 3.5e-11, -17.2251 dB; exact 14
iterations 48.9 CPU-s, 1.6e-11, -13.1497 dB. RFF, ridge 1e-3: seed 43 iterations 135.4 CPU-s, 4.0e-11, -18.4638 dB;
exact 46 iterations 142.2 CPU-s, 3.4e-11, -16.7904 dB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time

import numpy as np

from theory.msd import PAOFedInstance, analysis_moments
from theory.msd.classes import class_grouping, class_unknowns, classes_msd_steady_state
from theory.msd.classes_rff import rff_group_covariances
from theory.msd.instance import toeplitz_covariances

#: the paper's availability groups and this benchmark's Toeplitz correlation per group
GROUP_P = (0.25, 0.1, 0.025, 0.005)
GROUP_RHO = (0.1, 0.3, 0.5, 0.7)


def paper_groups_instance(D: int, mu: float | None = None, *, covariance: str = "toeplitz", sigma_kappa: float = 5.0,
                          ridge: float = 1e-2) -> PAOFedInstance:
    """K = 256 in four groups of 64 (p and R per group), l_max = 10, window selection, p_m = max(1, D // 50) / D.

    ``covariance="toeplitz"``: R_c = Toeplitz(rho_c^|i-j|), noise 0.01, mu = 0.8 / D by default; ``"rff"``: the RFF
    covariances of :func:`theory.msd.classes_rff.rff_group_covariances` (seeded by D) plus ``ridge``
    I, docs/papers/paofed.md#choice-data noise variances, mu = 0.4 by default.
    """
    labels = np.repeat(np.arange(4), 64)
    l_max = 10
    rng = np.random.default_rng(D)
    w = rng.standard_normal(D)
    if covariance == "toeplitz":
        R, s2, mu0 = toeplitz_covariances(np.array(GROUP_RHO), D), np.full(4, 0.01), 0.8 / D
    elif covariance == "rff":
        R, s2 = rff_group_covariances(D, 4, rng, sigma_kappa=sigma_kappa, ridge=ridge)
        mu0 = 0.4
    else:
        raise ValueError(f"covariance must be 'toeplitz' or 'rff', got {covariance!r}")
    return PAOFedInstance(K=256, D=D, l_max=l_max, m=max(1, D // 50), selection="window",
                          p=np.array(GROUP_P)[labels], delta=0.2, alpha=0.2 ** np.arange(l_max + 1),
                          sigma2_eta=s2[labels], R=R[labels], w_star=w / np.linalg.norm(w),
                          mu=mu0 if mu is None else mu)


def _rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def run(D: int, models, method: str, rtol: float, maxiter: int, restart: int, progress: bool,
        instance_options: dict, coarse=(True,)) -> list[dict]:
    t0 = time.perf_counter()
    inst = paper_groups_instance(D, **instance_options)
    m = analysis_moments(inst)
    g = class_grouping(m)
    setup = time.perf_counter() - t0
    rows = []
    for model, use_coarse in ((mo, co) for mo in models for co in coarse):
        cb = (lambda it, res, model=model: print(f"  D={D} {model}: iteration {it}, residual estimate {res:.2e}",
                                                 flush=True)
              ) if progress else None
        w, c = time.perf_counter(), time.process_time()
        try:
            sol = classes_msd_steady_state(m, model, grouping=g, method=method, rtol=rtol, maxiter=maxiter,
                                           restart=restart, progress=cb, coarse=use_coarse)
            res = {"msd_db": 10 * np.log10(sol.msd), "residual": sol.residual, "iterations": sol.iterations,
                   "solver": sol.method}
            del sol  # its state is a full reduced vector (800 MB at D = 200): not kept through the next model's solve
        except ValueError as exc:
            res = {"msd_db": None, "error": str(exc)}
        rows.append({"D": D, "model": model, "coarse": use_coarse,
                     "covariance": instance_options.get("covariance", "toeplitz"),
                     "lambda_max": float(inst.lambda_max), "mu": inst.mu,
                     "unknowns": class_unknowns(inst.l_max, g.C, D)[1],
                     "setup_s": setup, "wall_s": time.perf_counter() - w, "cpu_s": time.process_time() - c,
                     "peak_rss_gb": _rss_gb(), "load1": os.getloadavg()[0], **res})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--D", default="20,40", help="comma-separated feature dimensions, ascending")
    ap.add_argument("--models", default="seed,exact")
    ap.add_argument("--method", default="bicgstab", choices=("gmres", "bicgstab", "dense"))
    ap.add_argument("--rtol", type=float, default=1e-10)
    ap.add_argument("--maxiter", type=int, default=3000)
    ap.add_argument("--restart", type=int, default=10)
    ap.add_argument("--budget", type=float, default=600.0, help="stop after the first D slower than this (s)")
    ap.add_argument("--progress", action="store_true")
    ap.add_argument("--json", action="store_true", help="one JSON object per row instead of the table")
    ap.add_argument("--covariance", default="toeplitz", choices=("toeplitz", "rff"))
    ap.add_argument("--sigma-kappa", type=float, default=5.0,
                    help="RFF kernel bandwidth (docs/papers/paofed.md#choice-rff)")
    ap.add_argument("--ridge", type=float, default=1e-2,
                    help="added to the RFF covariances (docs/papers/paofed.md#choice-msd-instances)")
    ap.add_argument("--mu", type=float, default=None, help="step size (default 0.8 / D, or 0.4 for rff)")
    ap.add_argument("--coarse", default="on", choices=("on", "off", "both"),
                    help="the preconditioner's consensus correction; 'both' runs each model without, then with it, "
                         "and prints the ratios (same process)")
    args = ap.parse_args()
    coarse = {"on": (True,), "off": (False,), "both": (False, True)}[args.coarse]
    models = tuple(args.models.split(","))
    options = {"covariance": args.covariance, "mu": args.mu}
    if args.covariance == "rff":
        options.update(sigma_kappa=args.sigma_kappa, ridge=args.ridge)
    if not args.json:
        print(f"{'D':>4} {'model':>6} {'unknowns':>11} {'iters':>6} {'wall s':>8} {'CPU s':>8} {'RSS GB':>7} "
              f"{'residual':>9} {'MSD dB':>9} {'load':>5}")
    for D in (int(s) for s in args.D.split(",")):
        rows = run(D, models, args.method, args.rtol, args.maxiter, args.restart, args.progress, options, coarse)
        for r in rows:
            if args.json:
                print(json.dumps(r, allow_nan=False), flush=True)
            else:
                msd = f"{r['msd_db']:9.4f}" if r["msd_db"] is not None else f"{'failed':>9}"
                print(f"{r['D']:4d} {r['model']:>6} {r['unknowns']:11d} {r.get('iterations', 0):6d} "
                      f"{r['wall_s']:8.1f} {r['cpu_s']:8.1f} {r['peak_rss_gb']:7.2f} "
                      f"{r.get('residual', float('nan')):9.2e} {msd} {r['load1']:5.1f}"
                      + ("" if len(coarse) == 1 else f"  coarse {'on' if r['coarse'] else 'off'}"), flush=True)
        if len(coarse) == 2:
            for off, on in zip(rows[::2], rows[1::2], strict=True):
                print(f"D = {D} {on['model']}: without / with the consensus correction {off.get('iterations', 0)} / "
                      f"{on.get('iterations', 0)} iterations, CPU ratio {off['cpu_s'] / on['cpu_s']:.2f}x", flush=True)
        if sum(r["wall_s"] for r in rows) > args.budget:
            break


if __name__ == "__main__":
    main()
