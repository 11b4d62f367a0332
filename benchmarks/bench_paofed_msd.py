"""PAO-Fed steady-state MSD: structured (matrix-free (S2)) vs naive (explicit F, dense LU), and the paper scale.

Run: .venv/bin/python benchmarks/bench_paofed_msd.py [--naive-budget 20] [--structured-budget 60] [--skip-paper]
     [--e2e 250,980,2400] [--paper-white] [--skip-naive] [--skip-structured]

Prints three tables, measured in this process (2 cores, other jobs may be running):

1. naive vs structured steady-state MSD (exact F, Gaussian regressors) on growing instances (K = 4,
   l_max = 2, D = 3..7, then K = 3, D = 10: N = 39..100, the naive route's limit), up to the largest N whose
   naive solve fits in ``--naive-budget`` seconds; both values are checked equal (relative gap <= 1e-10)
   and the time ratio is reported;
2. the structured solver alone (BiCGSTAB on the vectorised (S2), exact F) on growing instances until one
   takes longer than ``--structured-budget`` seconds;
3. the paper's scale (K = 256, D = 200, l_max = 10, m = 4, p in {0.25, 0.1, 0.025, 0.005} x 64, delta = 0.2,
   alpha_l = 0.2^l, mu = 0.4) through the exact diagonal reduction of the seed's truncated F with white
   features R_k = 1.02 I (the seed's max lambda(R_k) = 1.02): time and peak traced memory (tracemalloc).

4. end to end ``fedcheck msd`` (fedcheck.msd.msd_report: both models, mean / seed / exact thresholds,
   rho(F), MSD) on the family below at N = 250 (K = 8, D = 10), 980 (K = 16, D = 20) and 2400
   (K = 24, D = 32, l_max = 2), against ``scipy.linalg.solve_discrete_lyapunov`` of the same N in the same
   process (a plain dense Stein equation: the floor of a dense method); the ratio is printed beside the times
   (wall and CPU: fedcheck analyses the two models in parallel processes, Stein uses threaded BLAS), with the
   peak RSS (not under tracemalloc, which slowed these runs 1.4-2x);
5. ``--paper-white``: the same report at the paper's scale with white features (four groups of 64 exchangeable
   clients: the grouped route, theory.msd.grouped; ``--paper-route white`` forces the ungrouped white route)
   (exact and seed F, rho, thresholds, MSD): wall and CPU time and peak RSS.

Instances are deterministic (fixed seeds); timings are wall-clock (time.perf_counter) and CPU (this process and its
children, more robust on a shared machine); the 1-minute load average is printed with each row.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
import tracemalloc

import numpy as np

from theory.msd import (
    NAIVE_MAX_N,
    PAOFedInstance,
    analysis_moments,
    diagonal_msd_steady_state,
    msd_steady_state,
    msd_steady_state_naive,
    scalar_problems,
    spectral_radius_F,
)
from theory.msd.instance import toeplitz_covariances


def family_instance(K: int, D: int, l_max: int, mu_times_lambda: float = 0.1) -> PAOFedInstance:
    """Reference-like instance (docs/papers/paofed.md#instance-reference pattern): p cycles (0.9, 0.6, 0.4, 0.2), delta
    = 0.3, alpha_l = 0.5^l, m = ceil(D / 2), Toeplitz R_k with rho_k cycling (0.1, 0.3, 0.5, 0.7), fixed w* and
    noise."""
    rng = np.random.default_rng(K * 1000 + D * 10 + l_max)
    R = toeplitz_covariances(np.resize([0.1, 0.3, 0.5, 0.7], K), D)
    lam = float(np.max(np.linalg.eigvalsh(R)))
    return PAOFedInstance(K=K, D=D, l_max=l_max, m=(D + 1) // 2, selection="subset",
                          p=np.resize([0.9, 0.6, 0.4, 0.2], K), delta=0.3, alpha=0.5 ** np.arange(l_max + 1),
                          sigma2_eta=rng.uniform(0.01, 0.03, K), R=R, w_star=rng.standard_normal(D),
                          mu=mu_times_lambda / lam)


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children that ended (msd_report analyses one model in a forked child)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def peak_rss_mb() -> float:
    """Largest peak RSS (MB) of this process and of any child that ended: one model's peak, not their sum."""
    return max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)) / 2**10


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def naive_vs_structured(budget: float) -> list[dict]:
    rows = []
    for K, D, l_max in [(4, 3, 2), (4, 4, 2), (4, 5, 2), (4, 6, 2), (4, 7, 2), (3, 10, 2)]:
        inst = family_instance(K, D, l_max)
        m = analysis_moments(inst)
        sol, t_s = timed(lambda m=m: msd_steady_state(m, "exact", method="gmres", rtol=1e-13))
        naive, t_n = timed(lambda m=m: msd_steady_state_naive(m, "exact", solver="dense"))
        gap = abs(naive - sol.msd) / abs(naive)
        rows.append({"N": m.N, "D": D, "naive_s": t_n, "structured_s": t_s, "ratio": t_n / t_s, "gap": gap,
                     "residual": sol.residual})
        print(f"  N = {m.N:4d} (K = {K}, D = {D}, l_max = {l_max}): naive {t_n:8.2f} s, structured {t_s:6.3f} s, "
              f"ratio {t_n / t_s:8.1f}x, relative gap {gap:.1e}", flush=True)
        assert gap <= 1e-10, "naive and structured disagree"
        if t_n > budget or m.N >= NAIVE_MAX_N:  # over budget, or at the naive route's size limit
            break
    return rows


def structured_scaling_header(budget: float) -> list[dict]:
    print("\n2. structured alone (BiCGSTAB, exact F, rtol 1e-10):")
    return structured_scaling(budget)


def structured_scaling(budget: float) -> list[dict]:
    rows = []
    for K, D, l_max in [(4, 5, 2), (8, 10, 3), (12, 12, 3), (16, 16, 3), (16, 20, 3), (18, 22, 3), (20, 24, 3),
                        (24, 28, 3), (28, 32, 3), (32, 36, 3), (36, 40, 3), (40, 44, 3)]:
        inst = family_instance(K, D, l_max)
        m = analysis_moments(inst)
        tracemalloc.start()
        sol, t = timed(lambda m=m: msd_steady_state(m, "exact", method="bicgstab", rtol=1e-10))
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        rows.append({"N": m.N, "K": K, "D": D, "l_max": l_max, "seconds": t, "iterations": sol.iterations,
                     "residual": sol.residual, "peak_MB": peak / 2**20, "msd_dB": 10 * np.log10(sol.msd)})
        print(f"  N = {m.N:5d} (K = {K}, D = {D}, l_max = {l_max}): {t:7.2f} s, {sol.iterations} BiCGSTAB iterations, "
              f"residual {sol.residual:.1e}, peak {peak / 2**20:8.1f} MB, MSD {10 * np.log10(sol.msd):.3f} dB",
              flush=True)
        if t > budget:
            break
    return rows


def paper_scale(with_rho: bool) -> dict:
    K, D, L = 256, 200, 10
    rng = np.random.default_rng(2024)
    w = rng.standard_normal(D)
    tracemalloc.start()
    t0 = time.perf_counter()
    inst = PAOFedInstance(K=K, D=D, l_max=L, m=4, selection="window", p=np.repeat([0.25, 0.1, 0.025, 0.005], 64),
                          delta=0.2, alpha=0.2 ** np.arange(L + 1), sigma2_eta=rng.uniform(0.005, 0.03, K),
                          R=np.broadcast_to(1.02 * np.eye(D), (K, D, D)).copy(), w_star=w / np.linalg.norm(w),
                          mu=0.4)
    t_inst = time.perf_counter() - t0
    m, t_mom = timed(lambda: analysis_moments(inst))
    probs, t_split = timed(lambda: scalar_problems(m))
    (msd, residual), t_solve = timed(lambda: diagonal_msd_steady_state(m, method="bicgstab", rtol=1e-12))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    out = {"N_b": m.n_blocks, "N": m.N, "scalar_problems": len(probs), "instance_s": t_inst, "moments_s": t_mom,
           "solve_s": t_solve, "peak_MB": peak / 2**20, "msd_dB": 10 * np.log10(msd), "residual": residual,
           "full_C_TB": 8 * m.N ** 2 / 1e12}
    if with_rho:
        rho, t_rho = timed(lambda: spectral_radius_F(probs[0].moments, "seed", tol=1e-8))
        out.update(rho_F_seed=rho, rho_s=t_rho)
    return out


E2E_SIZES = {250: (8, 10, 2), 980: (16, 20, 2), 2400: (24, 32, 2)}


def stein_seconds(N: int) -> tuple[float, float]:
    """Wall and CPU time of scipy.linalg.solve_discrete_lyapunov on a random stable N x N matrix (same process)."""
    from scipy.linalg import solve_discrete_lyapunov

    rng = np.random.default_rng(N)
    A = rng.standard_normal((N, N)) / (1.2 * np.sqrt(N))  # spectral radius ~ 0.83
    c0 = time.process_time()
    _, t = timed(lambda: solve_discrete_lyapunov(A, np.eye(N)))
    return t, time.process_time() - c0


def end_to_end(N: int) -> dict:
    from fedcheck.msd import msd_report

    K, D, L = E2E_SIZES[N]
    inst = family_instance(K, D, L)
    t_stein, cpu_stein = stein_seconds(inst.n_blocks * D)
    # not under tracemalloc: its hook on every allocation slowed this run down 1.4x at N = 980 (9.9 s against 7.0 s
    # wall) and 2x at N = 2336; the memory figure is the peak RSS of the process and of the model's child
    c0 = cpu_seconds()
    rep, t = timed(lambda: msd_report(inst, ("seed", "exact")))
    cpu = cpu_seconds() - c0
    rss = peak_rss_mb()  # the process's (or a model's child's) peak so far
    row = {"N": rep["N"], "K": K, "D": D, "l_max": L, "seconds": t, "cpu_s": cpu, "stein_s": t_stein,
           "stein_cpu_s": cpu_stein,
           "ratio": t / t_stein, "rss_MB": rss, "route": rep["route"], "load": os.getloadavg()[0]}
    for model in ("seed", "exact"):
        e = rep["models"][model]
        row[model] = (e["spectral_radius"], e["threshold_mu_times_lambda_max"][0], e.get("msd_db"), e.get("residual"),
                      e["seconds"])
    print(f"  N = {row['N']:5d} (K = {K}, D = {D}, l_max = {L}): fedcheck msd {t:7.2f} s ({cpu:.1f} s CPU), dense "
          f"Stein {t_stein:6.2f} s ({cpu_stein:.1f} s CPU), ratio {row['ratio']:5.1f}x (CPU {cpu / cpu_stein:.1f}x), "
          f"peak RSS {rss:.0f} MB, load {row['load']:.1f}; "
          + "; ".join(f"{md}: rho {row[md][0]:.6f}, mu* lambda {row[md][1]:.4f}, MSD {row[md][2]:.3f} dB "
                      f"(residual {row[md][3]:.1e}, {row[md][4]:.1f} s)" for md in ("seed", "exact"))
          + f"; the two models in parallel processes on {len(os.sched_getaffinity(0))} cores", flush=True)
    return row


def paper_instance_white(mu: float = 0.4, v: float = 1.02) -> PAOFedInstance:
    """The paper's set-up with R_k = v I and sigma2_eta = 0.01: four groups of 64 exchangeable clients."""
    K, D, L = 256, 200, 10
    rng = np.random.default_rng(2024)
    w = rng.standard_normal(D)
    return PAOFedInstance(K=K, D=D, l_max=L, m=4, selection="window", p=np.repeat([0.25, 0.1, 0.025, 0.005], 64),
                          delta=0.2, alpha=0.2 ** np.arange(L + 1), sigma2_eta=np.full(K, 0.01),
                          R=np.broadcast_to(v * np.eye(D), (K, D, D)).copy(), w_star=w / np.linalg.norm(w), mu=mu)


def paper_white(mu: float, route: str = "auto") -> dict:
    from fedcheck.msd import msd_report

    inst = paper_instance_white(mu)
    c0 = cpu_seconds()  # not under tracemalloc (see end_to_end)
    rep, t = timed(lambda: msd_report(inst, ("seed", "exact"), method=route))
    cpu = cpu_seconds() - c0
    rss = peak_rss_mb()
    print(f"  mu = {mu} (mu lambda_max = {mu * 1.02:.3f}): {t:.1f} s wall, {cpu:.1f} s CPU, "
          f"peak RSS {rss:.0f} MB (load {os.getloadavg()[0]:.1f}), route "
          f"{rep['route']}, mean mu* lambda in [{rep['thresholds']['mean'][0] * 1.02:.4f}, "
          f"{rep['thresholds']['mean'][1] * 1.02:.4f}]", flush=True)
    for model in ("seed", "exact"):
        e = rep["models"][model]
        msd = f"{e['msd_db']:.3f} dB (residual {e['residual']:.1e})" if e.get("msd_db") is not None else e["note"]
        print(f"    {model}: rho(F) = {e['spectral_radius']:.6f}, mu* lambda in "
              f"[{e['threshold_mu_times_lambda_max'][0]:.5f}, {e['threshold_mu_times_lambda_max'][1]:.5f}], MSD {msd}, "
              f"{e['seconds']:.1f} s", flush=True)
    return {"seconds": t, "cpu_s": cpu, "rss_MB": rss, "report": rep}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--naive-budget", type=float, default=20.0)
    ap.add_argument("--structured-budget", type=float, default=60.0)
    ap.add_argument("--skip-paper", action="store_true")
    ap.add_argument("--skip-naive", action="store_true")
    ap.add_argument("--paper-rho", action="store_true", help="also rho(F_seed) of the paper-scale scalar problem")
    ap.add_argument("--skip-structured", action="store_true")
    ap.add_argument("--e2e", default="", help="comma-separated N of the end-to-end table (250, 980, 2400)")
    ap.add_argument("--paper-white", default="", help="comma-separated mu of the paper-scale white report")
    ap.add_argument("--paper-route", default="auto", choices=("auto", "grouped", "white"),
                    help="route of the paper-scale white report (auto: grouped)")
    args = ap.parse_args()

    if args.e2e:
        print("4. end to end fedcheck msd (both models, three thresholds, MSD) vs dense Stein of the same N:")
        for n in args.e2e.split(","):
            end_to_end(int(n))
    if args.paper_white:
        print("5. paper scale, white features R_k = 1.02 I, window selection, exact and seed F:")
        for mu in args.paper_white.split(","):
            paper_white(float(mu), args.paper_route)

    if not args.skip_naive:
        print("1. naive (explicit F, dense LU) vs structured ((S2), GMRES), exact F:")
        rows = naive_vs_structured(args.naive_budget)
        best = max((r for r in rows if r["naive_s"] <= args.naive_budget), key=lambda r: r["N"], default=rows[0])
        print(f"  -> largest N with naive <= {args.naive_budget:.0f} s: N = {best['N']}, naive {best['naive_s']:.2f} "
              f"s, structured {best['structured_s']:.3f} s, ratio {best['ratio']:.0f}x")

    srows = [] if args.skip_structured else structured_scaling_header(args.structured_budget)
    ok = [r for r in srows if r["seconds"] <= args.structured_budget]
    if ok:
        r = ok[-1]
        print(f"  -> largest N within {args.structured_budget:.0f} s: N = {r['N']} ({r['seconds']:.1f} s, "
              f"F would be {r['N'] ** 2} x {r['N'] ** 2}, {8 * r['N'] ** 4 / 1e12:.2f} TB dense)")

    if not args.skip_paper:
        print("\n3. paper scale through the diagonal reduction (seed's truncated F, R_k = 1.02 I):")
        p = paper_scale(args.paper_rho)
        print(f"  N_b = {p['N_b']}, N = {p['N']} (full C would need {p['full_C_TB']:.2f} TB); "
              f"{p['scalar_problems']} scalar problem(s) of {p['N_b']}^2 unknowns")
        print(f"  instance {p['instance_s']:.1f} s, moments {p['moments_s']:.2f} s, solve {p['solve_s']:.1f} s, "
              f"peak traced memory {p['peak_MB']:.0f} MB")
        print(f"  MSD_inf (seed F) = {p['msd_dB']:.3f} dB, (S2) residual {p['residual']:.1e}")
        if "rho_F_seed" in p:
            print(f"  rho(F_seed) = {p['rho_F_seed']:.6f} ({p['rho_s']:.1f} s, Arnoldi tol 1e-8)")


if __name__ == "__main__":
    main()
