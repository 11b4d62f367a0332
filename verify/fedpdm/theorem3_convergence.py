r"""FedPDM-DP Theorem 3 (22): the average stationarity measure against :math:`\zeta`, and the noise floor.

The left side :math:`\frac1T\sum_{t<T}\mathbb E[P(x^t, x_0^t, \lambda^t)]` (21) is simulated with the reference
Algorithm 1 on instance NC (docs/papers/fedpdm.md#instance-nc; declared :math:`L = 1`, :math:`\rho = 10`, :math:`\eta =
0.08`) over ``R`` runs; the right side :math:`\zeta = (\mathcal L^0 - \underline f)C_0/T + C_1\nu + C_2\phi^2 +
C_3\sigma^2` uses the reconstructed constants of docs/papers/fedpdm.md#theorem-3 (conservative reading),
:math:`\underline f = 0` (every term of F is >= 0),
:math:`\phi^2` the exact A2 variance maximised over the visited iterates (over runs too: conservative), and the
per-coordinate noise std :math:`\sigma` of every upload (``noise = "fixed"``: :math:`\sigma = \max_{i,t}\sigma_{i,t}`).
A violation is declared when the lower confidence limit of the mean LHS over runs exceeds
:math:`\zeta` (docs/papers/fedpdm.md#instances general rules, at ``MC_ALPHA``).

* ``fedpdm.theorem3`` (refuted): without noise the bound holds with a huge slack, but with noise the stationary
  :math:`P \approx 1.1\rho^2 d\sigma^2/K` (full participation, more with partial) exceeds :math:`C_3\sigma^2 =
  8\rho\sigma^2`
  whenever :math:`d\rho/(8K) \gg 1` (erratum E21, docs/papers/fedpdm.md#erratum-e21): :math:`\sigma` is per coordinate,
  the aggregate noise has
  :math:`E\lVert\bar\xi\rVert^2 = d\sigma^2/K`, and the :math:`x_0` block of (21) picks up
  :math:`\rho^2\lVert\bar\xi\rVert^2`.
* ``fedpdm.theorem3_corrected`` (confirmed on the instances checked; an empirical form, not a proof): with
  :math:`C_3 = 2\rho^2 d N/K^2` the bound holds, and at :math:`K = N` the slope of the stationary :math:`P/\sigma^2` in
  :math:`d` is within 20 % of :math:`\rho^2/K` (docs/papers/fedpdm.md#erratum-e21).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import stats

from reference_impl.fedpdm import FedPDMConfig, instance_nc, lagrangian, run_fedpdm, stationarity_measure
from theory.fedpdm.convergence import theorem3_constants
from verify.evidence import HARD_POINT, SIDES, report_counterexample, result_from_evidence, sample_evidence
from verify.fedpdm import cite
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, MonteCarlo, Series, Verdict
from verify.tolerance import MC_ALPHA, bonferroni

__all__ = [
    "CLAIMS",
    "THEOREM3_COUNTEREXAMPLE",
    "check_theorem3",
    "check_theorem3_corrected",
    "corrected_C3",
    "evaluate_theorem3",
    "noise_floor_slope",
    "trajectory",
]

#: docs/papers/fedpdm.md#erratum-e21: sigma = 0.1, K = 5 of N = 10, d = 20, rho = 10, full batch, nu = 1e-8 (LHS 6.05 >
#: zeta 0.83).
THEOREM3_COUNTEREXAMPLE = {"d": 20, "N": 10, "K": 5, "batch_size": 60, "nu": 1e-8, "sigma": 0.1, "rho": 10.0,
                           "eta": 0.08, "T": 600, "runs": 4, "seed": 0, "L_declared": 1.0}
#: Noiseless settings of docs/papers/fedpdm.md#theorem-3 (LHS far below zeta) and noisy ones of 4.7.2.
NOISELESS = ({"K": 10, "batch_size": 10, "nu": 1e-3}, {"K": 5, "batch_size": 10, "nu": 1e-3},
             {"K": 5, "batch_size": 20, "nu": 1e-2})
NOISY = ({"K": 10, "sigma": 0.03}, {"K": 5, "sigma": 0.01}, {"K": 5, "sigma": 0.1})
_PROFILE = {"ci": {"T": 300, "runs": 3, "draws": 1, "slope_ds": (10, 20, 40), "slope_T": 300},
            "thorough": {"T": 600, "runs": 12, "draws": 16, "slope_ds": (10, 20, 40, 80), "slope_T": 800}}


def _params(**kw) -> dict:
    base = {"d": 20, "N": 10, "K": 10, "batch_size": 60, "nu": 1e-8, "sigma": 0.0, "rho": 10.0, "eta": 0.08, "T": 300,
            "runs": 4, "seed": 0, "L_declared": 1.0}
    return {**base, **kw}


def trajectory(params: Mapping[str, Any]) -> dict:
    """Cached :func:`simulate_trajectory` (the Theorem 3 and Lemma 2 checks share their runs; read-only arrays)."""
    return _trajectory_cached(tuple(sorted((k, float(v) if isinstance(v, float) else int(v))
                                           for k, v in dict(params).items())))


@functools.lru_cache(maxsize=64)
def _trajectory_cached(key) -> dict:
    out = simulate_trajectory(dict(key))
    for v in out.values():
        if isinstance(v, np.ndarray):
            v.setflags(write=False)
    return out


def simulate_trajectory(params: Mapping[str, Any]) -> dict:
    r"""Simulate instance NC with ``params`` and record, for t = 0..T, :math:`P^t` (21), :math:`\mathcal L^t` (9) and,
    per round, :math:`\lVert x_0^t - x_0^{t+1}\rVert^2`, :math:`\sum_i\lVert x_i^t - x_i^{t+1}\rVert^2`, :math:`|S_t|`.

    ``params``: ``d, N, K, batch_size`` (``= 60``: full batch, ``fresh`` rule, ``Q_max = 50``; otherwise disjoint
    batches with ``Q_max = 60 // batch_size``), ``nu, sigma, rho, eta, T, runs, seed``. Arrays have a trailing run axis.
    """
    p = dict(params)
    rng = np.random.default_rng(int(p["seed"]))
    problem = instance_nc(rng, N=int(p["N"]), n=60, d=int(p["d"]))
    b = int(p["batch_size"])
    full = b == problem.n
    sigma = float(p["sigma"])
    config = FedPDMConfig(K=int(p["K"]), rounds=int(p["T"]), batch_size=b, batch_rule="fresh" if full else "disjoint",
                          rho=float(p["rho"]), eta0=float(p["eta"]), eta_schedule="constant", nu=float(p["nu"]),
                          Q_max=50 if full else problem.n // b, noise="fixed" if sigma > 0 else "none", sigma=sigma)
    rho = config.rho
    prev: dict = {}
    dx0, dxi = [], []

    def moves(s):
        if prev:
            dx0.append(((s.x0 - prev["x0"]) ** 2).sum(-1))
            dxi.append(((s.x - prev["x"]) ** 2).sum((-2, -1)))
        prev.update(x0=s.x0, x=s.x)
        return np.zeros(s.x0.shape[0])

    parts = []

    def measure(s):
        parts.append(stationarity_measure(problem, s.x, s.x0, s.lam, rho))
        return parts[-1]["P"]

    run = run_fedpdm(problem, config, rng, runs=int(p["runs"]), track_variance=not full, observers={
        "P": measure, "L": lambda s: lagrangian(problem, s.x, s.x0, s.lam, rho), "_": moves})
    k = run.participation[0].sum(-1)
    return {"P": run.observations["P"], "P_x0": np.array([q["x0"] for q in parts]), "L": run.observations["L"],
            "dx0": np.array(dx0), "dxi": np.array(dxi), "k": k, "phi2": 0.0 if full else float(np.nanmax(run.phi2)),
            "problem": problem, "config": config}


def corrected_C3(rho: float, d: int, N: int, K: int) -> float:
    r"""The empirical corrected noise constant :math:`2\rho^2 dN/K^2` (reduces to :math:`2\rho^2 d/K` at
    :math:`K = N`)."""
    return 2.0 * rho * rho * d * N / (K * K)


def evaluate_theorem3(params: Mapping[str, Any], *, noise_constant: str = "seed", alpha: float = MC_ALPHA,
                      C3_fn=None) -> Evidence:
    r"""LHS of (22) (mean over runs of :math:`\frac1T\sum_{t<T}P^t`) against :math:`\zeta`.

    ``noise_constant``: ``seed`` (:math:`C_3 = 8\rho`) or ``corrected`` (:func:`corrected_C3`, or ``C3_fn``). A
    violation needs the lower confidence limit (one-sided t, level ``alpha``) above :math:`\zeta`; the bound holds when
    the upper confidence limit is at most :math:`\zeta`. Both limits are recorded; ``holds`` follows the former for
    ``seed`` (refutation) and the latter for ``corrected`` (confirmation).
    """
    p = dict(params)
    tr = trajectory(p)
    per_run = tr["P"][:-1].mean(axis=0)
    R = per_run.size
    mean = float(per_run.mean())
    half = float(stats.t.ppf(1 - alpha, R - 1) * per_run.std(ddof=1) / math.sqrt(R)) if R > 1 else math.inf
    c = theorem3_constants(float(p["L_declared"]), float(p["rho"]), int(p["N"]), int(p["K"]))
    L0 = float(tr["L"][0].mean())
    sigma = float(p["sigma"])
    if noise_constant == "seed":
        C3 = c["C3"]
    else:
        C3 = (C3_fn or corrected_C3)(float(p["rho"]), int(p["d"]), int(p["N"]), int(p["K"]))
    terms = {"A0": L0 * c["C0"] / int(p["T"]), "A1": c["C1"] * float(p["nu"]), "A2": c["C2"] * tr["phi2"],
             "A3": C3 * sigma**2}
    zeta = sum(terms.values())
    lower, upper = mean - half, mean + half
    holds = (lower <= zeta * (1 + 1e-9) + 1e-12) if noise_constant == "seed" else (upper <= zeta)
    T = int(p["T"])
    stationary = float(tr["P"][T // 2: T].mean())
    return Evidence(measured=lower if noise_constant == "seed" else upper, bound=zeta, holds=bool(holds),
                    parameters={**p, "noise_constant": noise_constant, "lhs_mean": mean, "lhs_lower": lower,
                                "lhs_upper": upper, "zeta": zeta, **terms, "C3": C3, "phi2": tr["phi2"],
                                "stationary_P_over_sigma2": stationary / sigma**2 if sigma > 0 else None,
                                "rho2_d_over_K": float(p["rho"]) ** 2 * int(p["d"]) / int(p["K"])})


def reproduce_theorem3(counterexample) -> Evidence:
    keys = set(_params())
    return evaluate_theorem3({k: v for k, v in dict(counterexample).items() if k in keys})


def _figure(evidence) -> FigureSpec:
    noisy = [e for e in evidence if e.parameters["sigma"] > 0]
    series = []
    for K in sorted({e.parameters["K"] for e in noisy}):
        pts = sorted((e for e in noisy if e.parameters["K"] == K), key=lambda e: e.parameters["sigma"])
        xs = [e.parameters["sigma"] for e in pts]
        series += [Series(label=f"K = {K}: LHS (1/T) sum P, mean over runs", x=xs,
                          y=[e.parameters["lhs_mean"] for e in pts],
                          style="points", group=str(K)),
                   Series(label=f"K = {K}: zeta with C3 = 8 rho", x=xs, y=[e.parameters["zeta"] for e in pts],
                          style="dashed", group=str(K))]
    return FigureSpec(name="theorem3_lhs_vs_zeta", title="Theorem 3 with noise (d = 20, rho = 10): LHS vs zeta of (22)",
                      xlabel="per-coordinate noise std sigma", ylabel="value", xscale="log", yscale="log",
                      series=tuple(series))


def _random_batch(rng: np.random.Generator, T: int, runs: int, noise_constant: str, alpha: float,
                  C3_fn) -> list[Evidence]:
    d = int(rng.choice([10, 20, 40]))
    K = int(rng.choice([2, 5, 10]))
    rho = float(rng.choice([10.0, 20.0]))
    sigma = float(10.0 ** rng.uniform(-2.5, -1.0))
    return [evaluate_theorem3(_params(d=d, K=K, rho=rho, eta=0.8 / rho, sigma=sigma, T=T, runs=runs,
                                      seed=int(rng.integers(2**31))), noise_constant=noise_constant, alpha=alpha,
                              C3_fn=C3_fn)]


def check_theorem3(ctx: CheckContext) -> CheckResult:
    """Noiseless settings of 4.7.1 (hold) and noisy ones of 4.7.2 (violate), literal C3 = 8 rho."""
    prof = _PROFILE[ctx.profile]
    points = [_params(**s, T=prof["T"], runs=prof["runs"]) for s in NOISELESS + NOISY]
    alpha = bonferroni(MC_ALPHA, len(points) + 1)
    evidence = [evaluate_theorem3(p, alpha=alpha) for p in points]
    chosen = evaluate_theorem3({**THEOREM3_COUNTEREXAMPLE, "T": prof["T"], "runs": prof["runs"]}, alpha=alpha)
    noiseless = [e for e in evidence if e.parameters["sigma"] == 0]
    result = result_from_evidence(
        "fedpdm.theorem3", evidence + [chosen], ctx=ctx,
        quantity="lower confidence limit of (1/T) sum_t E[P^t] vs zeta (C3 = 8 rho)",
        what="(1/T) sum E[P] <= zeta of (22)", figures=[_figure(evidence)], corrected_claim="fedpdm.theorem3_corrected",
        monte_carlo=MonteCarlo(n=prof["runs"], alpha=MC_ALPHA, seed=ctx.seed),
        details={"noiseless_lhs_over_zeta": [e.parameters["lhs_mean"] / e.parameters["zeta"] for e in noiseless],
                 "noisy": [{k: e.parameters[k] for k in ("K", "sigma", "lhs_mean", "zeta", "A3",
                                                           "stationary_P_over_sigma2", "rho2_d_over_K")}
                           for e in evidence if e.parameters["sigma"] > 0],
                 "constants_L1_rho10_N10": theorem3_constants(1.0, 10.0, 10, 10)})
    return report_counterexample(result, chosen,
                                 "docs/papers/fedpdm.md#erratum-e21: sigma = 0.1, K = 5, d = 20, rho = 10")


def noise_floor_slope(ds, T: int, runs: int, *, sigma: float = 0.03, rho: float = 10.0, seed: int = 0) -> dict:
    """Stationary P/sigma^2 (second half of the rounds) at K = N = 10 for each d, and its least-squares slope in d."""
    vals = []
    for d in ds:
        tr = trajectory(_params(d=int(d), K=10, sigma=sigma, rho=rho, eta=0.8 / rho, T=T, runs=runs, seed=seed))
        vals.append(float(tr["P"][T // 2: T].mean()) / sigma**2)
    slope = float(np.polyfit(np.asarray(ds, dtype=float), vals, 1)[0])
    return {"d": list(ds), "P_over_sigma2": vals, "slope": slope, "rho2_over_K": rho * rho / 10.0}


def check_theorem3_corrected(ctx: CheckContext, *, C3_fn=None) -> CheckResult:
    """Noiseless, noisy grid and random (d, K, rho, sigma) against zeta with C3 = 2 rho^2 d N/K^2; d-slope at K = N."""
    claim_id = "fedpdm.theorem3_corrected"
    prof = _PROFILE[ctx.profile]
    points = [_params(**s, T=prof["T"], runs=prof["runs"]) for s in NOISELESS + NOISY]
    points.append({**THEOREM3_COUNTEREXAMPLE, "T": prof["T"], "runs": prof["runs"]})
    n_checks = len(points) + prof["draws"] + 1
    alpha = bonferroni(MC_ALPHA, n_checks)
    evidence = [evaluate_theorem3(p, noise_constant="corrected", alpha=alpha, C3_fn=C3_fn) for p in points]
    evidence += sample_evidence(ctx, claim_id, _random_batch, prof["draws"],
                                (prof["T"], prof["runs"], "corrected", alpha, C3_fn))
    slope = noise_floor_slope(prof["slope_ds"], prof["slope_T"], prof["runs"])
    rel = abs(slope["slope"] / slope["rho2_over_K"] - 1.0)
    evidence.append(Evidence(measured=rel, bound=0.2, holds=rel <= 0.2,
                             parameters={"check": "slope of stationary P/sigma^2 in d vs rho^2/K (K = N)", **slope,
                                         SIDES: None}))  # a criterion on the fitted slope, not a side of (22)
    # hardest points: the noise-free limit of A_3 (sigma = 0, only the proof's constants) and the paper-scale noise
    # at K < N of the reported counterexample of (22), where the corrected C_3 term dominates
    evidence = [Evidence(measured=e.measured, bound=e.bound, holds=e.holds, parameters={**e.parameters, HARD_POINT: (
                    "noise-free (A_3 = 0)" if e.parameters["sigma"] == 0 else "sigma = 0.1, K = 5 of N = 10")})
                if "sigma" in e.parameters and (e.parameters["sigma"] == 0 or
                                                (e.parameters["sigma"] == 0.1 and e.parameters["K"] == 5)) else e
                for e in evidence]
    series = (Series(label="stationary P / sigma^2, K = N = 10, rho = 10", x=slope["d"], y=slope["P_over_sigma2"],
                     style="points"),
              Series(label="rho^2 d / K", x=slope["d"], y=[100.0 * d / 10 for d in slope["d"]], style="dashed"),
              Series(label="C3 = 8 rho (seed)", x=slope["d"], y=[80.0] * len(slope["d"]), style="dashed"))
    figure = FigureSpec(name="theorem3_noise_floor_vs_d", title="Noise floor of P grows like rho^2 d sigma^2 / K",
                        xlabel="dimension d", ylabel="P / sigma^2", series=series)
    return result_from_evidence(
        claim_id, evidence, ctx=ctx, quantity="upper confidence limit of (1/T) sum E[P] vs zeta with C3 = 2 rho^2 d "
                                              "N/K^2",
        what="(22) with C3 = 2 rho^2 d N / K^2", figures=[figure],
        monte_carlo=MonteCarlo(n=prof["runs"], alpha=MC_ALPHA, seed=ctx.seed),
        details={"noise_floor": slope, "ratio_lhs_to_corrected_zeta": [e.parameters["lhs_mean"] / e.parameters["zeta"]
                                                                       for e in evidence if "zeta" in e.parameters]})


_CITE = (cite("Theorem 3", "(22)", "221-227"), cite("proof of Theorem 3", "(B.3)", "361-372"),
         cite("stationarity measure", "(21)", "215-219"))

CLAIMS = (
    Claim(
        id="fedpdm.theorem3",
        title="Theorem 3: (1/T) sum E[P] <= (L^0 - f)C0/T + C1 nu + C2 phi^2 + C3 sigma^2",
        citations=_CITE,
        statement=("Under A1-A3 and 2 sqrt5 - 4 <= L <= rho/4, the average expected stationarity measure (21) of "
                   "FedPDM-DP over T rounds is at most zeta = (L^0 - f)C0/T + C1 nu + C2 phi^2 + C3 sigma^2 with "
                   "sigma^2 = max sigma_{i,t}^2 and constants depending on rho and L only "
                   "(reconstructed, docs/papers/fedpdm.md#theorem-3; C3 = 8 rho)."),
        hypotheses=("instance NC of docs/papers/fedpdm.md#instance-nc (N = 10, |D_i| = 60, d = 20; L = 1 declared, "
                    "certified <= 0.45)",
                    "rho = 10 > 4L, eta = 0.08", "f_ = 0 (every term of F is >= 0)",
                    "phi^2: exact A2 variance, max over visited iterates", "per-coordinate noise std sigma"),
        check=check_theorem3,
        expected=Verdict.REFUTED,
        reason=("Without noise the bound holds with a huge slack (LHS/zeta ~ 1e-4), but with noise the stationary P is "
                "about 1.1 rho^2 d sigma^2/K at K = N and more under partial participation, far above C3 sigma^2 = "
                "8 rho sigma^2 when d rho/(8K) >> 1: at sigma = 0.1, K = 5, d = 20 the LHS is about 6.1 against "
                "zeta = 0.83, and already at sigma = 0.03, K = N it is 0.2 against "
                "0.11 (docs/papers/fedpdm.md#erratum-e21, reproduced)."),
        severity="false",
        reproduce=reproduce_theorem3,
        corrected_by="fedpdm.theorem3_corrected",
    ),
    Claim(
        id="fedpdm.theorem3_corrected",
        title="Theorem 3 corrected: the noise term is C3 sigma^2 with C3 = 2 rho^2 d N / K^2 (empirical)",
        citations=_CITE,
        statement=("With the noise constant C3 = 2 rho^2 d N/K^2 (2 rho^2 d/K at full participation) in place of 8 "
                   "rho, "
                   "(1/T) sum E[P] <= (L^0 - f)C0/T + C1 nu + C2 phi^2 + C3 sigma^2 on instance NC for d in [10, 40], "
                   "K in [2, N], rho in {10, 20}, sigma in [0.003, 0.1]; at K = N the stationary P/sigma^2 grows "
                   "linearly "
                   "in d with slope within 20 % of rho^2/K. An empirical correction (the constant is fitted with a "
                   "factor "
                   ">= 1.8 to spare, not proven)."),
        hypotheses=("instance NC, L = 1 declared", "eta rho = 0.8", "full batch for the noisy points",
                    "per-coordinate noise std sigma on every upload"),
        check=check_theorem3_corrected,
        expected=Verdict.CONFIRMED,
        reason=("The corrected bound holds at every point with its upper confidence limit (LHS/zeta at most about 0.55 "
                "at K = N and lower for K < N); the stationary P/sigma^2 at K = N is 108, 220, 438 (, 869) for "
                "d = 10, 20, 40 (, 80): slope about 10.9 against rho^2/K = 10."),
        corrects="fedpdm.theorem3",
    ),
)
