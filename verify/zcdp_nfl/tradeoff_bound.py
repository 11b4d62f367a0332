r"""zCDP-NFL privacy-accuracy trade-off (22) as printed, and the size of its noise part.

Publication 2, Section 4.4 (thesis (3.21)): "Under Assumption 4, we can reformulate (19) as"

.. math::

    E[f(\hat w^{(T)}) - f(\mathfrak w^*)] \le \frac\alpha T
        + \frac{\alpha_\xi}T\,\frac{\sum_k\sigma_k^2(0)}{1-\tau} \qquad (22)

with :math:`\alpha` "a constant with respect to T and the noise perturbation" and :math:`\alpha_\xi = \rho P c_\xi`.
So (22) says that :math:`A_T = T\,E[f(\hat w^{(T)}) - f(\mathfrak w^*)] - \alpha_\xi\sum_k\sigma_k^2(0)/(1-\tau)` is
bounded in T. Decided in the paper's setting: Assumption 4 as printed (:math:`\eta = 0.05 n^2`, summable
:math:`\lVert D^{(n)}\rVert^2`), S1 noise :math:`\sigma^2(n) = 10^{-2}\cdot 0.97^n`, ridge, :math:`\rho = 0.3`, the
small instance: the private runs diverge, so :math:`A_T \to \infty` and no constant :math:`\alpha` exists.

The noise part separately (fedcheck's reading, a labelled claim, not the printed statement): at a fixed converging
schedule (constant :math:`\eta` or :math:`\eta_0/\sqrt n`, not Assumption 4) the noise-induced increase of the left
side, :math:`E[f(\hat w^{(T)}) - f(\mathfrak w^*)] - (f(\hat w_0^{(T)}) - f(\mathfrak w^*))` with
:math:`\hat w_0` the noise-free run, is at most the noise term :math:`\alpha_\xi\sum_k\sigma_k^2(0)/((1-\tau)T)`.
It holds, but is never nearly tight: the increase is 20 to :math:`10^4` times smaller than the term (one-sided t upper
confidence limit of the mean increase, ``MC_ALPHA`` split over the points).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import stats

from theory.zcdp_nfl.network import network_matrices
from verify.evidence import HARD_POINT, SIDES, result_from_evidence
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, MonteCarlo, Series, Verdict
from verify.tolerance import MC_ALPHA, bonferroni
from verify.zcdp_nfl import cite
from verify.zcdp_nfl._runs import problem_from
from verify.zcdp_nfl.theorem2_bound import theorem2_sides
from verify.zcdp_nfl.theorem4 import GROWING, evaluate_growing

__all__ = ["CLAIMS", "NOISE_PART_SETTINGS", "check_tradeoff_bound", "check_tradeoff_noise_part",
           "evaluate_noise_part", "evaluate_tradeoff_bound", "noise_term", "reproduce_tradeoff_bound"]

#: Assumption 4 as printed with privacy noise: eta = 0.05 n^2, ridge, rho = 0.3, S1 sigma^2(n) = 1e-2 * 0.97^n.
PRINTED = {**GROWING, "noise": "S1", "sigma2_0": 1e-2, "tau": 0.97, "runs": 5, "noise_seed": 0}
CHECKPOINTS = (25, 50, 100, 200, 400)
#: Converging schedules for the noise part (not Assumption 4): ridge and LAD, rho = 1, S1 with tau = 0.97.
NOISE_PART_SETTINGS = ({"objective": "ridge", "step": "constant", "eta0": 0.05},
                       {"objective": "lad", "step": "constant", "eta0": 0.05},
                       {"objective": "lad", "step": "inv_sqrt", "eta0": 0.05})
_PROFILE = {"ci": {"runs": 40, "Ts": (20, 100, 400), "sigma2": (1e-4, 1e-2, 1.0)},
            "thorough": {"runs": 100, "Ts": (20, 100, 400), "sigma2": (1e-4, 1e-2, 1.0)}}


def noise_term(settings: dict, T: int) -> float:
    r""":math:`\alpha_\xi\sum_k\sigma_k^2(0)/((1-\tau)T)`, :math:`\alpha_\xi = \rho P c_\xi` (equal
    :math:`\sigma_k^2(0)`)."""
    problem = problem_from(settings)
    c_xi = network_matrices(problem).c_xi
    return (float(settings["rho"]) * problem.P * c_xi * problem.K * float(settings["sigma2_0"])
            / (1.0 - float(settings["tau"])) / T)


def evaluate_tradeoff_bound(settings: dict = PRINTED, checkpoints=CHECKPOINTS) -> Evidence:
    r""":math:`A_T = T\,E[\text{LHS}_T] - T\cdot\text{noise term}` at the checkpoints; ``holds`` unless the private run
    diverges (NE(T) > NE(0), the criterion of Theorem IV's check; :math:`A_T` then grows without bound, so no constant
    :math:`\alpha` exists). ``measured``: :math:`\max_T A_T / |A_{T_1}|`."""
    T_max = max(checkpoints)
    run_settings = {**settings, "T": T_max + 1}
    values = {}
    with np.errstate(all="ignore"):
        for T in checkpoints:
            lhs, _ = theorem2_sides(run_settings, T, "printed")
            a = float(T * np.mean(lhs) - T * noise_term(settings, T))
            values[str(T)] = a if np.isfinite(a) else float("inf")
    finite = [v for v in values.values() if np.isfinite(v)]
    growth = float(max(finite) / max(abs(finite[0]), 1e-300)) if finite else float("inf")
    outcome = evaluate_growing({**settings, "T": T_max}).parameters["outcome"]
    diverged = outcome == "diverged" or len(finite) < len(values)
    return Evidence(measured=growth, bound=1.0, holds=not diverged,
                    parameters={**settings, "A_T": values, "outcome": outcome, "growth_of_A_T": growth,
                                SIDES: None})


def reproduce_tradeoff_bound(counterexample) -> Evidence:
    keys = set(PRINTED)
    return evaluate_tradeoff_bound({k: counterexample[k] for k in keys})


def check_tradeoff_bound(ctx: CheckContext) -> CheckResult:
    """(22) under Assumption 4 as printed, with privacy noise."""
    evidence = [evaluate_tradeoff_bound()]
    return result_from_evidence(
        "zcdp_nfl.tradeoff_bound", evidence, ctx=ctx,
        quantity="max_T A_T / |A_25|, A_T = T E[LHS_T] - alpha_xi sum sigma^2(0)/(1 - tau); the run's outcome",
        what="T E[f(w_hat^(T)) - f(w*)] - noise constant bounded in T (a constant alpha in (22))", form="decision",
        form_reason="(22) asserts that some constant alpha exists; a divergent run under its hypotheses has none",
        details={"A_T": evidence[0].parameters["A_T"]})


def evaluate_noise_part(settings: dict, T: int, alpha_each: float) -> Evidence:
    """UCL of E[LHS_T(sigma) - LHS_T(0)] against the noise term of (22) at T (common instance, independent noise)."""
    noisy, _ = theorem2_sides(settings, T, "printed")
    clean, _ = theorem2_sides({**settings, "noise": "none", "sigma2_0": 0.0, "runs": 1, "noise_seed": 0}, T,
                              "printed")
    d = noisy - clean[0]
    half = float(stats.t.ppf(1 - alpha_each, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size))
    ucl = float(d.mean()) + half
    term = noise_term(settings, T)
    params = {**settings, "T_bound": T, "alpha_each": alpha_each, "mean_increase": float(d.mean()),
              "lower": float(d.mean()) - half, "noise_term": term, SIDES: (float(d.mean()), term)}
    if T == max(_PROFILE["ci"]["Ts"]):
        params[HARD_POINT] = "largest T (the noise term decays like 1/T)"
    return Evidence(measured=ucl, bound=term, holds=bool(ucl <= term), parameters=params)


def check_tradeoff_noise_part(ctx: CheckContext) -> CheckResult:
    p = _PROFILE[ctx.profile]
    seed = int(ctx.seed_sequence("zcdp_nfl.tradeoff_noise_part").generate_state(1)[0])
    cases = [({"rho": 1.0, "noise": "S1", "tau": 0.97, **s, "sigma2_0": s2, "T": max(p["Ts"]) + 1, "runs": p["runs"],
               "noise_seed": seed + i}, T) for i, s in enumerate(NOISE_PART_SETTINGS) for s2 in p["sigma2"]
             for T in p["Ts"]]
    alpha_each = bonferroni(MC_ALPHA, len(cases))
    evidence = [evaluate_noise_part(s, T, alpha_each) for s, T in cases]
    series = []
    for s in NOISE_PART_SETTINGS:
        pts = [e for e in evidence if all(e.parameters[k] == v for k, v in s.items())]
        series.append(Series(label=f"{s['objective']}, {s['step']}", x=list(range(len(pts))), style="points",
                             y=[max(e.parameters["mean_increase"] / e.parameters["noise_term"], 1e-12) for e in pts]))
    fig = FigureSpec(name="noise_part", title="Noise-induced increase of E[LHS] over the noise term of (22)",
                     xlabel="point (sigma^2(0) x T)", ylabel="mean increase / noise term", yscale="log",
                     series=tuple(series))
    result = result_from_evidence(
        "zcdp_nfl.tradeoff_noise_part", evidence, ctx=ctx,
        quantity="UCL of E[LHS_T(sigma) - LHS_T(0)] vs alpha_xi sum sigma^2(0)/((1 - tau) T)",
        what="noise-induced increase <= noise term of (22)", figures=[fig],
        monte_carlo=MonteCarlo(n=p["runs"], alpha=MC_ALPHA, seed=ctx.seed))
    shown = [e for e in evidence if e.parameters["lower"] > e.parameters["noise_term"]]
    if result.verdict is Verdict.REFUTED and not shown:  # too little power is not a refutation
        result = dataclasses.replace(
            result, verdict=Verdict.NOT_CHECKABLE, counterexample=None,
            summary=result.summary + "; no lower confidence limit exceeds the term: more runs (or antithetic noise "
                    "pairs, which cancel the mean-zero linear part) would decide")
    return result


_CITATIONS = (cite("Publication 2, Section 4.4 (privacy accuracy trade-off)", "(22)", "2184-2190"),
              cite("Thesis Chapter 3, privacy-accuracy trade-off", "(3.21)", "725-738"))

CLAIMS = (
    Claim(
        id="zcdp_nfl.tradeoff_bound",
        title="Trade-off (22): under Assumption 4, E[f(w_hat^(T)) - f(w*)] <= alpha/T + (alpha_xi/T) sum sigma^2(0)/"
              "(1 - tau)",
        citations=_CITATIONS,
        statement=("Under Assumption 4, (19) can be reformulated as E[f(w_hat^(T)) - f(w*)] <= alpha/T + (alpha_xi/T) "
                   "sum_k sigma_k^2(0)/(1 - tau), where alpha is a constant with respect to T and the noise "
                   "perturbation and alpha_xi = rho P 4 (Phi_max(L-)^2 + Phi_max(L+)^2)/Phi_min(L-)."),
        hypotheses=("Assumption 4 as printed: eta = 0.05 n^2 (sum ||D^(n)||^2 < inf)", "Assumption 2: ridge (convex)",
                    "S1 noise sigma^2(n) = 1e-2 * 0.97^n, 5 runs", "rho = 0.3, the small instance (seed 0)"),
        check=check_tradeoff_bound,
        expected=Verdict.REFUTED,
        reason=("(22) needs T E[LHS_T] - alpha_xi sum sigma^2(0)/(1 - tau) bounded in T. Under Assumption 4 as printed "
                "the private runs diverge (as for Theorem IV, zcdp_nfl.theorem4): A_T grows from 1e1 at T = 25 to "
                "3e194 "
                "at T = 400, so no constant alpha exists. The noise term itself is checked at converging schedules in "
                "zcdp_nfl.tradeoff_noise_part, the algebra of (23)-(24) in zcdp_nfl.tradeoff_noise_term."),
        reproduce=reproduce_tradeoff_bound,
        uncorrected_because=("The alpha/T form needs Theorem IV's rate, which fails under Assumption 4; fedcheck knows "
                             "no hypothesis under which the paper's proof gives a constant alpha."),
        severity="false",
    ),
    Claim(
        id="zcdp_nfl.tradeoff_noise_part",
        title="Trade-off (22), noise part (fedcheck's reading): the noise cost is at most the noise term, loosely",
        citations=_CITATIONS,
        statement=("fedcheck's reading of the noise part of (22), at fixed converging schedules (not Assumption 4): "
                   "E[f(w_hat^(T)) - f(w*)] exceeds its noise-free value by at most (alpha_xi/T) sum_k sigma_k^2(0)/"
                   "(1 - tau)."),
        hypotheses=("ridge and LAD, rho = 1, eta = 0.05 constant or 0.05/sqrt(n) (LAD)",
                    "S1 noise sigma^2(n) = sigma^2(0) 0.97^n, sigma^2(0) in {1e-4, 1e-2, 1}",
                    "T in {20, 100, 400}; 40 (ci) / 100 runs; the small instance (K = 10, P = 3, M = 20)"),
        check=check_tradeoff_noise_part,
        expected=Verdict.CONFIRMED,
        reason=("The upper confidence limit of the noise-induced increase is below the noise term at every point, "
                "but the bound is never nearly tight: mean increase / noise term <= 0.06 (LAD, eta0/sqrt(n), "
                "T = 400, sigma^2(0) = 1e-4) and 1e-4 to 1e-2 elsewhere, because c_xi (about 1050 on the small "
                "graph) multiplies a variance the algorithm largely averages out. Below sigma^2(0) = 1e-4 the "
                "Monte-Carlo error of the mean increase (of order sigma / sqrt(runs), from the mean-zero linear part) "
                "exceeds the term (of order sigma^2), so those levels are not decided here (a refutation there needs "
                "a lower confidence limit above the term; none was seen at 1e-6 to 1e-10 with 100 runs)."),
    ),
)
