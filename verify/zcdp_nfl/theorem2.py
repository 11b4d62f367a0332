r"""zCDP-NFL Theorem II: the positivity claim "E[f(ŵ^{(T)}) - f(𝔴*)] is positive" and its non-negative replacement.

The proof of Theorem II (P2 line 2126, thesis 693; reused in Theorem III's proof, P2 2152) states that
since :math:`\mathfrak w^*` is optimal, :math:`E[f(\hat w^{(T)}) - f(\mathfrak w^*)]` is positive. But
:math:`\mathfrak w^* = 1_K\otimes w_c` minimises :math:`f(\mathfrak w) = \sum_k f_k(w_k)` only on the
consensus subspace; the running average :math:`\hat w^{(T)} = \frac1T\sum_{n=1}^T\tilde w^{(n)}` is not
consensual, and with heterogeneous clients each :math:`w_k` leans toward its own :math:`\arg\min f_k`, so
:math:`f(\hat w^{(T)}) < f(\mathfrak w^*)` happens, on single paths and in expectation.

Evidence (fedcheck's re-derivation): heterogeneous clients (client truths :math:`w^o + \mathcal N(0, I)`),
K = 10, P = 3, M = 20, :math:`\eta = 0.5`, :math:`\rho = 0.5`, ridge and elastic net:

* noise-free: :math:`\min_T f(\hat w^{(T)}) - f(\mathfrak w^*)` below minus the rounding allowance;
* S2 noise (:math:`\phi^{(1)} = 10^{-2}`, :math:`\tau = 0.99`, :math:`c_1 = 1` as the noise scale): the upper
  confidence limit of the Monte-Carlo mean at T = 50 and T = 200 is below 0 (the negation shown).

Corrected statement (checked): :math:`F(\bar w^{(T)}) - F^* \ge 0` on every path,
:math:`\bar w = \frac1K\sum_k\hat w_k`, within the certified accuracy of the CVXPY optimum.
"""

from __future__ import annotations

import numpy as np

from verify.evidence import SIDES, report_counterexample, result_from_evidence
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, MonteCarlo, Series, Verdict
from verify.tolerance import CLARABEL_TOL, MC_ALPHA, bonferroni, gamma, mean_upper_confidence_limit
from verify.zcdp_nfl import cite
from verify.zcdp_nfl._runs import problem_from, run_from, truth_from

__all__ = ["CLAIMS", "HETEROGENEOUS", "check_consensus_gap", "check_positivity", "evaluate_consensus_gap",
           "evaluate_positivity", "objective_gaps", "reproduce_positivity"]

#: fedcheck's re-derivation: heterogeneous clients, eta = 0.5, rho = 0.5, K = 10, P = 3, M = 20.
HETEROGENEOUS = {"heterogeneity": 1.0, "rho": 0.5, "step": "constant", "eta0": 0.5}
NOISY = {"noise": "S2", "phi1": 1e-2, "tau": 0.99, "c1": 1.0}
_PROFILE = {"ci": {"seeds": (0, 1), "objectives": ("ridge", "elastic_net"), "T": 200, "runs": 100},
            "thorough": {"seeds": (0, 1, 2, 3, 4), "objectives": ("ridge", "elastic_net", "lad"), "T": 200,
                         "runs": 400}}
CHECKPOINTS = (50, 200)


def objective_gaps(settings: dict) -> tuple[np.ndarray, np.ndarray, float]:
    r""":math:`f(\hat w^{(T)}) - f(\mathfrak w^*)` and :math:`F(\bar w^{(T)}) - F^*` for T = 1..T_max, shape
    (runs, T_max); and :math:`|f(\mathfrak w^*)|`."""
    problem, truth = problem_from(settings), truth_from(settings)
    run = run_from(settings, keep_trajectory=True)
    wt = run.trajectory["w_tilde"][:, 1:]
    T = wt.shape[1]
    w_hat = np.cumsum(wt, axis=1) / np.arange(1, T + 1)[None, :, None, None]
    f_star = float(problem.stacked_objective(np.broadcast_to(truth.w_c, (problem.K, problem.P))))
    stacked = problem.stacked_objective(w_hat) - f_star
    consensus = problem.centralized_objective(w_hat.mean(axis=-2)) - truth.F_star
    return stacked, consensus, abs(f_star)


def _rounding(problem, f_star: float) -> float:
    return gamma(4 * problem.K * problem.M * problem.P) * max(f_star, 1.0)


def evaluate_positivity(settings: dict, alpha_each: float = MC_ALPHA) -> Evidence:
    r"""Noise-free: ``measured`` = :math:`-\min_T(f(\hat w^{(T)}) - f^*)` against the rounding allowance.
    Noisy: ``measured`` = minus the upper confidence limit of the mean at the checkpoints, against 0.
    ``holds`` (positivity not contradicted) unless the value is significantly negative."""
    stacked, _, f_star = objective_gaps(settings)
    problem = problem_from(settings)
    if stacked.shape[0] == 1:
        allowance = _rounding(problem, f_star)
        worst = float(-np.min(stacked[0]))
        first = int(np.argmax(stacked[0] < -allowance)) + 1 if worst > allowance else None
        return Evidence(measured=worst, bound=allowance, holds=bool(worst <= allowance),
                        parameters={**settings, "f_star": f_star, "min_gap": float(np.min(stacked[0])),
                                    "first_negative_T": first, SIDES: None})
    ucls = {T: mean_upper_confidence_limit(stacked[:, T - 1], alpha_each) for T in CHECKPOINTS if T <= stacked.shape[1]}
    means = {T: float(stacked[:, T - 1].mean()) for T in ucls}
    measured = float(max(-u for u in ucls.values()))
    return Evidence(measured=measured, bound=0.0, holds=bool(measured <= 0.0),
                    parameters={**settings, "f_star": f_star, "alpha_each": alpha_each, SIDES: None,
                                "mean_gap": {str(T): m for T, m in means.items()},
                                "upper_confidence_limit": {str(T): float(u) for T, u in ucls.items()}})


def reproduce_positivity(counterexample) -> Evidence:
    keys = set(counterexample) - {"f_star", "min_gap", "first_negative_T", "alpha_each", "mean_gap",
                                  "upper_confidence_limit", SIDES}
    settings = {k: counterexample[k] for k in keys}
    return evaluate_positivity(settings, counterexample.get("alpha_each", MC_ALPHA))


def evaluate_consensus_gap(settings: dict) -> Evidence:
    r""":math:`-\min_{T,\text{run}}(F(\bar w^{(T)}) - F^*)` against the certified accuracy of :math:`F^*`."""
    _, consensus, _ = objective_gaps(settings)
    problem, truth = problem_from(settings), truth_from(settings)
    allowance = _rounding(problem, truth.F_star) + CLARABEL_TOL * max(1.0, truth.F_star)
    worst = float(-np.min(consensus))
    min_gap = float(np.min(consensus))
    initial_gap = float(problem.centralized_objective(np.zeros(problem.P)) - truth.F_star)  # the run starts at w = 0
    # Lower bound at 0 read as the upper bound F(w_bar_0) - F(w_bar_T) <= F(w_bar_0) - F*: its ratio is
    # 1 - min gap / initial gap, i.e. the slack is the smallest gap reached relative to the initial gap.
    sides = (initial_gap - min_gap, initial_gap) if initial_gap > 0.0 else None
    return Evidence(measured=worst, bound=allowance, holds=bool(worst <= allowance),
                    parameters={**settings, "F_star": truth.F_star, "min_gap": min_gap, "initial_gap": initial_gap,
                                "min_gap_over_initial_gap": min_gap / initial_gap if initial_gap > 0.0 else None,
                                SIDES: sides,
                                "certificate": truth.certificate, "certificate_residual": truth.residual})


def _settings(ctx: CheckContext, noisy: bool):
    p = _PROFILE[ctx.profile]
    base = {**HETEROGENEOUS, "T": p["T"]}
    out = [{**base, "seed": s, "objective": o} for s in p["seeds"] for o in p["objectives"]]
    if noisy:
        seed = int(ctx.seed_sequence("zcdp_nfl.theorem2").generate_state(1)[0])
        out = [{**s, **NOISY, "runs": p["runs"], "noise_seed": seed + i} for i, s in enumerate(out)]
    return out


def _figure(settings: dict, noisy: dict) -> FigureSpec:
    stacked, consensus, _ = objective_gaps(settings)
    noisy_stacked, noisy_consensus, _ = objective_gaps(noisy)
    T = np.arange(1, stacked.shape[1] + 1)
    return FigureSpec(name="gaps", title=f"Theorem II LHS vs F(w_bar) - F* ({settings['objective']}, heterogeneous)",
                      xlabel="T", ylabel="gap", yscale="symlog",
                      series=(Series(label="f(w_hat) - f(w*), no noise", x=T, y=stacked[0], group="a"),
                              Series(label="F(w_bar) - F*, no noise", x=T, y=consensus[0], group="b"),
                              Series(label="mean f(w_hat) - f(w*), S2 noise", x=T, y=noisy_stacked.mean(axis=0),
                                     style="dashed", group="a"),
                              Series(label="mean F(w_bar) - F*, S2 noise", x=T, y=noisy_consensus.mean(axis=0),
                                     style="dashed", group="b"),
                              Series(label="0", x=(1, T[-1]), y=(0, 0), style="dashed", group="z")))


def check_positivity(ctx: CheckContext) -> CheckResult:
    """Heterogeneous instances, noise-free and with S2 noise (Monte Carlo at T = 50, 200)."""
    plain = _settings(ctx, noisy=False)
    noisy = _settings(ctx, noisy=True)
    alpha_each = bonferroni(MC_ALPHA, len(noisy) * len(CHECKPOINTS))
    evidence = [evaluate_positivity(s) for s in plain] + [evaluate_positivity(s, alpha_each) for s in noisy]
    mc = [e for e in evidence if "alpha_each" in e.parameters]
    result = result_from_evidence(
        "zcdp_nfl.theorem2", evidence, ctx=ctx,
        quantity="noise-free: -min_T (f(w_hat) - f(w*)); noisy: -(upper confidence limit of E[f(w_hat) - f(w*)])",
        what="E[f(w_hat^(T)) - f(w*)] >= 0", corrected_claim="zcdp_nfl.theorem2_consensus_gap",
        figures=[_figure(plain[0], noisy[0])],
        monte_carlo=MonteCarlo(n=noisy[0]["runs"], alpha=MC_ALPHA, seed=ctx.seed),
        details={"noise_free_min_gaps": [e.parameters["min_gap"] for e in evidence if "min_gap" in e.parameters],
                 "noisy_mean_gaps": [e.parameters["mean_gap"] for e in mc],
                 "noisy_upper_limits": [e.parameters["upper_confidence_limit"] for e in mc]})
    failing = [e for e in mc if not e.holds]
    if failing:
        result = report_counterexample(result, failing[0],
                                       "the first noisy instance: the expectation itself is negative")
    return result


def check_consensus_gap(ctx: CheckContext) -> CheckResult:
    """The same runs: F(w_bar) - F* >= 0 on every path and T."""
    plain, noisy = _settings(ctx, False), _settings(ctx, True)
    evidence = [evaluate_consensus_gap(s) for s in plain + noisy]
    return result_from_evidence(
        "zcdp_nfl.theorem2_consensus_gap", evidence, ctx=ctx, quantity="-min (F(w_bar^(T)) - F*) over T and runs",
        what="F(w_bar^(T)) - F* >= 0 (w_bar = client average of w_hat)", figures=[_figure(plain[0], noisy[0])],
        details={"min_gaps": [e.parameters["min_gap"] for e in evidence], "tightness_reading": _TIGHTNESS_READING})


_TIGHTNESS_READING = ("F(w_bar) - F* >= 0 is a lower bound at 0, where measured / bound is not defined; it is rated "
                      "as the equivalent F(w_bar_0) - F(w_bar_T) <= F(w_bar_0) - F* (w_bar_0 = 0, the start), so the "
                      "tightness ratio is 1 - min_T gap / initial gap and its slack the smallest gap reached relative "
                      "to the initial gap; the point where the ratio is largest (tightness.attained_at) is the "
                      "hardest point measured, noisy and noise-free runs alike (every run approaches F*)")


_CITATIONS = (cite("Publication 2, Theorem II and its proof (App. E)", "(19)", "2119-2126, 2334-2352"),
              cite("Thesis Chapter 3, Theorem II", "(3.20)", "685-693"))

CLAIMS = (
    Claim(
        id="zcdp_nfl.theorem2",
        title="Theorem II: 'since w* is the optimal solution, E[f(w_hat^(T)) - f(w*)] is positive'",
        citations=_CITATIONS,
        statement=("Since w* is the optimal solution, E[f(w_hat^(T)) - f(w*)] is positive, with w_hat^(T) = (1/T) "
                   "sum_{n=1}^T w~^(n) and f(w) = sum_k f_k(w_k) (used to bound the error in Theorems II and III)."),
        hypotheses=("Assumption 2 (convex f)", "w* = 1_K (x) w_c, w_c the centralised optimum (CVXPY)",
                    "heterogeneous clients (client truths w^o + N(0, I))", "eta = 0.5, rho = 0.5"),
        check=check_positivity,
        expected=Verdict.REFUTED,
        reason=("w* minimises f only on the consensus subspace; w_hat is not consensual. Noise-free ridge and "
                "elastic-net runs go below f(w*) after a few dozen iterations and stay there, and with S2 noise the "
                "upper confidence limit of the Monte-Carlo mean is negative at T = 50 and 200 (fedcheck's "
                "re-derivation: "
                "-0.057 +- 0.003 at T = 50, -0.030 at T = 200 with f* ~ 9-18)."),
        severity="correction_as_useful",
        reproduce=reproduce_positivity,
        corrected_by="zcdp_nfl.theorem2_consensus_gap",
    ),
    Claim(
        id="zcdp_nfl.theorem2_consensus_gap",
        title="Theorem II, non-negative measure: F(w_bar^(T)) - F* >= 0",
        citations=_CITATIONS,
        statement=("Corrected statement: the non-negative error measure is F(w_bar^(T)) - F* with w_bar = (1/K) "
                   "sum_k w_hat_k (plus a consensus error such as ||w_hat||^2_{L_-}); f(w_hat^(T)) - f(w*) itself may "
                   "be negative and cannot serve as the left side of an error bound."),
        hypotheses=("w_c certified by CVXPY (closed form, KKT or LP certificate)", "same runs as the refutation"),
        check=check_consensus_gap,
        expected=Verdict.CONFIRMED,
        reason=("F(w_bar) - F* >= 0 on every path and T within the certified accuracy of F* (it is a consequence of "
                "the optimality of w_c, so the check also certifies the ground truth used by the refutation)."),
        corrects="zcdp_nfl.theorem2",
    ),
)
