r"""FedPDM-DP Theorem 1: the upload sensitivity (19) for a fixed round-start state, and Theorem 1 as stated.

The uploads of two neighbouring data sets are simulated with the algorithm's own update equations
(:mod:`verify.fedpdm.upload_simulation`) and the realised :math:`\lVert y(D) - y(D')\rVert` is compared
with a closed form. Two claims:

* ``fedpdm.theorem1``: Theorem 1 as stated, with the data-dependent :math:`Q` of rule (11). Refuted: a
  legal pair stops after different numbers of steps, and the exact divergence of the two releases is far
  above :math:`\delta`; corrected by
* ``fedpdm.theorem1_fixed_q``: with the **same** round-start state :math:`(x_i^{t,0}, \lambda_i^t, x_0^t)` and
  the same :math:`Q` (fixed in advance), :math:`\lVert\Delta y\rVert \le s` of eq. (19). Evidence: the adversarial
  per-step construction of docs/papers/fedpdm.md#theorem-1 (which attains :math:`s`), random bounded gradient sequences,
  and replace-one neighbours of a small logistic instance (same state, same batch permutation, same :math:`Q`; slack
  large, erratum E6 (docs/papers/fedpdm.md#erratum-e6)).

The history claims (the state carried across rounds) are in :mod:`verify.fedpdm.theorem1_history`.
"""

from __future__ import annotations

import math

import numpy as np

from theory.privacy.sensitivity import sensitivity_fedpdm
from verify.evidence import HARD_POINT, report_counterexample, result_from_evidence, sample_evidence
from verify.fedpdm._common import CITE_THEOREM1, SEED
from verify.fedpdm.upload_simulation import (
    ADAPTIVE_Q_PAPER_POINT,
    evaluate_adaptive_q,
    evaluate_logistic_neighbours,
    evaluate_upload_sensitivity,
    paper_sensitivity_bound,
)
from verify.records import CheckContext, CheckResult, Citation, Claim, Evidence, FigureSpec, Series, Verdict

__all__ = ["CLAIMS", "PAPER_POINTS", "check_adaptive_q", "check_same_state", "reproduce_adaptive_q"]

_PROFILE = {"ci": {"batches": 2, "per_batch": 6, "logistic_batches": 2, "logistic_per_batch": 4},
            "thorough": {"batches": 16, "per_batch": 40, "logistic_batches": 8, "logistic_per_batch": 25}}


# --------------------------------------------------------------------------------------------------
# fedpdm.theorem1: same round-start state


def _same_state_batch(rng: np.random.Generator, count: int, sensitivity_fn) -> list[Evidence]:
    out = []
    bound_fn = _paper_bound(sensitivity_fn)
    for _ in range(count):
        rho = float(10.0 ** rng.uniform(-1.0, 2.0))
        eta = float(rng.uniform(0.01, 2.5)) / rho
        params = {"etas": [eta], "Qs": [int(rng.integers(1, 21))], "rho": rho, "G": float(10.0 ** rng.uniform(-2, 2)),
                  "d": int(rng.integers(1, 11)), "local_start": "warm", "seed": int(rng.integers(2**31)),
                  "state_scale": float(10.0 ** rng.uniform(-2, 1))}
        for construction in ("adversarial", "random"):
            out.append(evaluate_upload_sensitivity({**params, "construction": construction}, bound_fn=bound_fn))
    return out


def _logistic_batch(rng: np.random.Generator, count: int, sensitivity_fn) -> list[Evidence]:
    return [evaluate_logistic_neighbours({"seed": int(rng.integers(2**31)), "n_samples": 60, "d": 20, "batch": 10,
                                          "Q": int(rng.integers(1, 7)), "eta": float(rng.uniform(0.02, 0.15)),
                                          "rho": 10.0, "beta": 0.1, "neighbour": neighbour},
                                         sensitivity_fn=sensitivity_fn)
            for _ in range(count) for neighbour in ("random", "flip_label")]


class _paper_bound:  # noqa: N801 - a picklable partial of paper_sensitivity_bound
    def __init__(self, sensitivity_fn):
        self.sensitivity_fn = sensitivity_fn

    def __call__(self, etas, Qs, rho, G, local_start):
        return paper_sensitivity_bound(etas, Qs, rho, G, local_start, sensitivity_fn=self.sensitivity_fn)


#: The paper's own setting (rho = 10, eta^t = 1/sqrt(1+t) at t = 0, 24, 99, 299; Q in {1, 5, 19}) and the
#: docs/papers/fedpdm.md#theorem-1 table.
PAPER_POINTS = tuple((1.0 / math.sqrt(1.0 + t), 10.0, Q, 1.0) for t in (0, 24, 99, 299) for Q in (1, 5, 19)) + (
    (0.05, 10.0, 5, 1.0), (0.2, 10.0, 6, 1.0), (1.0, 10.0, 3, 1.0), (0.1, 10.0, 1, 1.0))


def check_same_state(ctx: CheckContext, *, sensitivity_fn=sensitivity_fedpdm) -> CheckResult:
    """Adversarial and random per-step gradients (random state, eta rho in (0, 2.5)), the paper's points, logistic
    neighbours."""
    claim_id = "fedpdm.theorem1_fixed_q"
    prof = _PROFILE[ctx.profile]
    bound_fn = _paper_bound(sensitivity_fn)
    # hardest points: the adversarial pair (the worst case of the per-step model) at the paper's eta^t = 1/sqrt(1+t),
    # rho = 10: eta rho = 10 (t = 0, divergent), 2 (t = 24, the second branch of (19)), 1 (t = 99), 0.58 (t = 299)
    evidence = [evaluate_upload_sensitivity({"etas": [eta], "Qs": [Q], "rho": rho, "G": G, "d": 3,
                                             "local_start": "warm", "construction": "adversarial", "seed": i,
                                             "state_scale": 1.0,
                                             HARD_POINT: f"adversarial pair, eta rho = {eta * rho:g}"},
                                            bound_fn=bound_fn)
                for i, (eta, rho, Q, G) in enumerate(PAPER_POINTS)]
    evidence += sample_evidence(ctx, claim_id, _same_state_batch, prof["batches"], (prof["per_batch"], sensitivity_fn))
    logistic = sample_evidence(ctx, claim_id + ".logistic", _logistic_batch, prof["logistic_batches"],
                               (prof["logistic_per_batch"], sensitivity_fn))
    evidence += logistic
    adversarial = [e.measured for e in evidence if e.parameters.get("construction") == "adversarial"]
    random_ratios = [e.measured for e in evidence if e.parameters.get("construction") == "random"]
    qs = np.arange(1, 13)
    series = []
    for eta in (0.05, 0.15, 0.2, 0.25):
        series.append(Series(label=f"eq. (19) s/G, eta = {eta:g}", x=qs, group=str(eta),
                             y=[sensitivity_fn(eta, 10.0, int(q), 1.0) for q in qs]))
        series.append(Series(label=f"realised ||dy||/G (adversarial), eta = {eta:g}", x=qs, style="points",
                             group=str(eta),
                             y=[evaluate_upload_sensitivity({"etas": [eta], "Qs": [int(q)], "rho": 10.0, "G": 1.0,
                                                             "d": 2, "local_start": "warm", "construction":
                                                             "adversarial", "seed": int(q)},
                                                            bound_fn=bound_fn).parameters["norm_delta_y"] for q in qs]))
    figure = FigureSpec(name="theorem1_sensitivity_vs_q",
                        title="FedPDM-DP (19): one-round sensitivity, rho = 10, G = 1",
                        xlabel="local steps Q", ylabel="||y(D) - y(D')|| / G", series=tuple(series), yscale="log")
    return result_from_evidence(
        claim_id, evidence, ctx=ctx, quantity="||y(D) - y(D')|| / s_(19) (one-sided, <= 1 + rounding allowance)",
        what="||dy|| <= s of eq. (19) given the same round-start state and Q", figures=[figure],
        details={"tightness_adversarial_min_max": [min(adversarial), max(adversarial)],
                 "random_per_step_max_ratio": max(random_ratios),
                 "logistic_max_ratio": max(e.measured for e in logistic),
                 "logistic_points": len(logistic),
                 "e25_literal_s_over_G": {f"t={t}, Q={Q}": sensitivity_fedpdm(1.0 / math.sqrt(1.0 + t), 10.0, Q, 1.0)
                                          for t, Q in ((0, 5), (0, 19), (24, 5), (99, 5))}})



# --------------------------------------------------------------------------------------------------
# fedpdm.theorem1 as stated: one round's release with the data-dependent Q of rule (11)


def _adaptive_batch(rng: np.random.Generator, count: int, noise_q: str) -> list[Evidence]:
    """eta rho in [0.02, 1.5], rho in [1, 20], G in [0.1, 2], b in [1, 20], Q_max in [2, 10], d in [1, 5],
    nu a fraction in [0.01, 0.9] of 4 G^2 / b^2, eps in [0.1, 0.99] (the classical calibration is valid there)."""
    out = []
    for _ in range(count):
        rho = float(rng.uniform(1.0, 20.0))
        G = float(10 ** rng.uniform(-1.0, math.log10(2.0)))
        b = int(rng.integers(1, 21))
        params = {"d": int(rng.integers(1, 6)), "b": b, "Q_max": int(rng.integers(2, 11)),
                  "eta": float(rng.uniform(0.02, 1.5)) / rho, "rho": rho, "G": G,
                  "nu": float(rng.uniform(0.01, 0.9)) * 4.0 * G**2 / b**2, "epsilon": float(rng.uniform(0.1, 0.99)),
                  "delta": float(rng.choice([1e-3, 1e-5, 1e-8]))}
        out.append(evaluate_adaptive_q(params, noise_q=noise_q))
    return out


#: Section V's own setting for Theorem 1 (lines 261-263): b = 30, rho = 10, nu = 1e-2, delta = 1e-5, eta^t = 1/sqrt(1+t)
#: at rounds where the local iteration is stable (eta^t rho < 2: t >= 25), G = 28.6 (certified for MNIST pixels,
#: docs/papers/fedpdm.md#choice-gradient-bound), Q_max = 5 (q = 0.25); the per-round eps is not printed: 0.5, inside
#: the classical calibration's range.
SECTION_V_ROUNDS = (25, 50, 99, 150, 299)


def section_v_point(t: int) -> dict:
    """Theorem 1's legal pair at round ``t`` of Section V's schedule (:data:`SECTION_V_ROUNDS`)."""
    return {"d": 1, "b": 30, "Q_max": 5, "eta": 1.0 / math.sqrt(1.0 + t), "rho": 10.0, "G": 28.6, "nu": 1e-2,
            "epsilon": 0.5, "delta": 1e-5}


def check_adaptive_q(ctx: CheckContext, *, noise_q: str = "adaptive") -> CheckResult:
    """Section V's own setting at five rounds (deciding), the paper-like point and random legal pairs; the same pairs
    with Q capped at Q_max are recorded as control."""
    claim_id = "fedpdm.theorem1"
    count = 2 if not ctx.thorough else 8
    paper = [evaluate_adaptive_q(section_v_point(t), noise_q=noise_q) for t in SECTION_V_ROUNDS]
    evidence = [*paper, evaluate_adaptive_q(ADAPTIVE_Q_PAPER_POINT, noise_q=noise_q)]
    evidence += sample_evidence(ctx, claim_id, _adaptive_batch, count, (10, noise_q))
    capped = [evaluate_adaptive_q(e.parameters, noise_q="cap") for e in evidence]
    differ = sum(e.parameters["Q_D"] != e.parameters["Q_D_prime"] for e in evidence)
    eps = np.linspace(0.05, 2.0, 40)
    point = evidence[len(paper)].parameters
    series = []
    for mode in ("adaptive", "cap"):
        pts = [evaluate_adaptive_q({**ADAPTIVE_Q_PAPER_POINT, "epsilon": float(e)}, noise_q=mode) for e in eps]
        which = "Q" if mode == "adaptive" else "Q_max"
        series.append(Series(label=f"exact delta of the round's release, sigma from s({which})",
                             x=eps, y=[max(q.parameters["delta_exact"], 1e-300) for q in pts], group=mode))
    series.append(Series(label="target delta = 1e-5", x=(eps[0], eps[-1]), y=(1e-5, 1e-5), style="dashed", group="t"))
    figure = FigureSpec(name="adaptive_q_exact_delta",
                        title=(f"FedPDM-DP Theorem 1 with rule (11): Q(D) = {point['Q_D']}, Q(D') = "
                               f"{point['Q_D_prime']} "
                               f"(eta = 0.01, rho = 10, nu = 1e-2, b = 10)"),
                        xlabel="per-round epsilon", ylabel="exact delta of the pair", yscale="log",
                        series=tuple(series))
    result = result_from_evidence(
        claim_id, evidence, ctx=ctx,
        quantity="exact delta of the round-t release on a neighbouring pair / target delta",
        what="noise (18)-(19) with the rule-(11) Q makes the round-t upload (eps, delta)-DP", figures=[figure],
        corrected_claim="fedpdm.theorem1_fixed_q",
        details={"section_v_rounds": {f"t={t}": {"eta_rho": 10.0 / math.sqrt(1.0 + t), "Q_D": e.parameters["Q_D"],
                                                 "Q_D_prime": e.parameters["Q_D_prime"],
                                                 "delta_exact_over_delta": e.measured}
                                      for t, e in zip(SECTION_V_ROUNDS, paper, strict=True)},
                 "pairs_with_different_Q": differ, "pairs": len(evidence),
                 "max_delta_exact_over_delta_with_Q_capped": max(e.measured for e in capped),
                 "paper_point": {k: point[k] for k in ("Q_D", "Q_D_prime", "s_D", "s_D_prime", "mean_gap",
                                                       "delta_exact")}})
    return report_counterexample(result, paper[1], "Section V's own setting at round t = 50 (b = 30, rho = 10, "
                                                   "nu = 1e-2, eta^t = 1/sqrt(1+t), G = 28.6, per-round eps = 0.5)")


def reproduce_adaptive_q(counterexample) -> Evidence:
    """Re-evaluate the release at a recorded pair (the keys of :data:`ADAPTIVE_Q_PAPER_POINT`)."""
    return evaluate_adaptive_q({k: counterexample[k] for k in ADAPTIVE_Q_PAPER_POINT})


CLAIMS = (
    Claim(
        id="fedpdm.theorem1",
        paper="fedpdm",
        title="Theorem 1 as stated: noise (18)-(19) with the adaptive Q of rule (11) makes each round's upload "
              "(eps, delta)-DP",
        citations=(*CITE_THEOREM1, Citation(seed=SEED, label="stopping rule (11): Q_i^t adaptive", equation="(11)",
                                       lines="122-126")),
        statement=("Adding xi ~ N(0, sigma_{i,t}^2 I) to client i's round-t upload, with sigma_{i,t}^2 = "
                   "2 s_{i,t}^2 ln(1.25/delta)/eps^2 (18) and s_{i,t} of (19) evaluated at the number of local steps "
                   "Q_i^t that rule (11) determines, makes the round-t release (eps, delta)-DP for client i."),
        hypotheses=("Assumption 3 (per-sample gradients bounded by G)", "Q_i^t from rule (11) (adaptive), capped at "
                    "Q_max", "eps in (0, 1), where the classical calibration (18) itself is valid (fedpdm.lemma1)",
                    "the same round-start state for both neighbours (the best case for the claim)"),
        check=check_adaptive_q,
        expected=Verdict.REFUTED,
        reason=("In Section V's own setting (b = 30, rho = 10, nu = 1e-2, eta^t = 1/sqrt(1+t) at the stable rounds "
                "t >= 25, G = 28.6, per-round eps = 0.5, delta = 1e-5) the round's release is not (eps, delta)-DP at 4 "
                "of 5 rounds: exact delta 5.9e4 delta at t = 25, 1.6e4 at t = 50 (the reported counterexample), 2.8e3 "
                "at t = 150, 1.7e4 at t = 299; only t = 99 (eta rho = 1, where s(Q) does not depend on Q) holds. "
                "Q_i^t is data dependent (docs/papers/fedpdm.md#erratum-e5): a legal pair (linear per-sample loss "
                "with |a| = G, the round "
                "starting at the client's stationary point, one record negated) stops after Q = 1 step on D and "
                "keeps stepping on D' (||g_0||^2 = 4G^2/b^2 > nu), so the two releases have different noise scales "
                "z s(Q) and means further apart than s(Q(D)). The exact divergence of the two Gaussians (non-central "
                "chi-square, cross-checked by quadrature and Monte Carlo in tests) is far above delta: at the "
                "paper-like point eta = 0.01, rho = 10, nu = 1e-2, b = 10, eps = 0.5, delta = 1e-5 it is 2.3e4 delta "
                "(Q = 1 vs 2), and up to ~6e7 delta on the random pairs (19 of 21 random or paper-like pairs at ci "
                "exceed delta; the others have "
                "eta rho near 1, where s(Q) hardly depends on Q). With sigma from s(Q_max) (Q public, fixed in "
                "advance) the "
                "same pairs are within delta; that is fedpdm.theorem1_fixed_q."),
        severity="correction_as_useful",
        reproduce=reproduce_adaptive_q,
        corrected_by="fedpdm.theorem1_fixed_q",
    ),
    Claim(
        id="fedpdm.theorem1_fixed_q",
        paper="fedpdm",
        title="Proof step of Theorem 1 (and its corrected form): for the same round-start state and a Q fixed in "
              "advance, eq. (19) bounds the one-round upload sensitivity",
        citations=CITE_THEOREM1,
        statement=("With the same round-start state (x_i^{t,0}, lambda_i^t, x_0^t) and the same number Q of local "
                   "steps, fixed in advance (Q = Q_max, public: the fix of docs/papers/fedpdm.md#erratum-e5), for two "
                   "neighbouring data sets, the upload y_i^{t+1} of (10d) changes by at most s_{i,t} of eq. (19) (4 "
                   "eta Q G when eta rho = 2), under Assumption 3 (mini-batch gradients bounded by G); so noise (18) "
                   "calibrated with s(Q_max) makes the round's release (eps, delta)-DP given that state, for eps in "
                   "the calibration's validity range (fedpdm.lemma1_corrected)."),
        hypotheses=("same round-start state for both neighbours", "same Q, fixed in advance (E5)",
                    "||mini-batch gradient|| <= G (A3)", "eta > 0, rho > 0"),
        check=check_same_state,
        expected=Verdict.CONFIRMED,
        reason=("The literal update equations reach exactly s under the adversarial construction "
                "of docs/papers/fedpdm.md#theorem-1 (ratio 1 within rounding, including the paper's eta = 1 points "
                "with s/G up to 6.8e17) and stay below it for random bounded gradients (ratio <= 0.83) and for "
                "replace-one neighbours of a logistic instance (ratio < 0.04: one record moves one batch mean by at "
                "most 2G/b, docs/papers/fedpdm.md#erratum-e6). This is the step the proof of Theorem 1 needs; it was "
                "registered as fedpdm.theorem1 before Theorem 1 itself (with the adaptive Q of rule (11)) was "
                "decided."),
        corrects="fedpdm.theorem1",
    ),
)
