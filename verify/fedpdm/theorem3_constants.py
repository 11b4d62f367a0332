r"""FedPDM-DP Theorem 3: the reconstructed constants (docs/papers/fedpdm.md#theorem-3) and the condition :math:`2\sqrt5
- 4 \le L \le \rho/4`.

The seed never gives :math:`C_0..C_3`; docs/papers/fedpdm.md#theorem-3 reconstructs them from the proof (B.3):

.. math::

    \theta_1 = \min\{N\rho/2,\ (\rho - 4L)(\rho + 2L)/(2\rho)\},\quad
    \theta_2 = \max\{2,\ B_6,\ B_7,\ B_8\},\quad C_0 = \theta_2/\theta_1,

    C_1 = K\theta_2 + C_0 c_K (8/\rho + L/(4L-2)),\quad C_2 = K\theta_2 + C_0 c_K\,16/\rho,\quad C_3 = 8\rho,

with :math:`B_6 = (1 + 4\rho/N)16/\rho^2`, :math:`B_7 = (L^2+\rho^2) + \frac4N(\rho + 4L^2/\rho) + 4L^2/\rho^2`,
:math:`B_8 = L^2/(4L-2) + (1 + 4\rho/N)8/\rho^2` and :math:`c_K = K + 2` (conservative sign reading of Lemma 2,
erratum E19 (docs/papers/fedpdm.md#erratum-e19)) or :math:`2 - K` (literal). Two claims:

* ``fedpdm.theorem3_conditions`` (refuted): the seed's hypothesis :math:`2\sqrt5 - 4 \le L \le \rho/4` makes these
  constants well defined and positive. At :math:`L = \rho/4` the :math:`B_2` coefficient
  :math:`(\rho - 4L)(\rho + 2L)/(2\rho)` is 0, so :math:`\theta_1 = 0` and :math:`C_0 = \infty`
  (erratum E17, docs/papers/fedpdm.md#erratum-e17); for
  :math:`L \in [2\sqrt5 - 4, 1/2]` the terms :math:`L/(4L-2)` and :math:`L^2/(4L-2)` are negative or undefined
  (erratum E18 (docs/papers/fedpdm.md#erratum-e18);
  :math:`2\sqrt5 - 4` is the root of :math:`L^2 + 8L - 4`, unrelated to :math:`4L - 2`).
* ``fedpdm.theorem3_conditions_corrected`` (confirmed): for :math:`1/2 < L < \rho/4` every constant is finite and
  positive (conservative reading).
"""

from __future__ import annotations

import math

import numpy as np

from theory.fedpdm.convergence import (
    CONDITION_COUNTEREXAMPLE,
    L_LOWER_SEED,
    theorem3_conditions,
    theorem3_constants,
)
from verify.evidence import report_counterexample, result_from_evidence
from verify.fedpdm import cite
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, Series, Verdict

__all__ = [
    "CLAIMS",
    "CONDITION_COUNTEREXAMPLE",
    "L_LOWER_SEED",
    "OUTSIDE_STEP",
    "boundary_attained",
    "check_conditions_corrected",
    "check_conditions_seed",
    "evaluate_conditions",
    "theorem3_conditions",
    "theorem3_constants",
]

def evaluate_conditions(params) -> Evidence:
    r"""Are the constants finite and positive at ``params`` (L, rho, N, K)? ``measured`` = 1 if a constant is
    non-positive or undefined, 0 otherwise; holds when ``measured <= 0``."""
    p = dict(params)
    c = theorem3_constants(float(p["L"]), float(p["rho"]), int(p["N"]), int(p["K"]))
    keys = ("B2", "B3_coef", "B8_coef", "theta1", "C0", "C1", "C2")
    bad = [k for k in keys if not (math.isfinite(c[k]) and c[k] > 0)]
    return Evidence(measured=1.0 if bad else 0.0, bound=0.0, holds=not bad,
                    parameters={**p, "non_positive_or_undefined": bad,
                                **{k: (c[k] if math.isfinite(c[k]) else repr(c[k])) for k in keys}})


def _figure() -> FigureSpec:
    L = np.linspace(0.3, 2.6, 231)
    rho = 10.0
    b2 = [(rho - 4 * v) * (rho + 2 * v) / (2 * rho) for v in L]
    with np.errstate(divide="ignore"):
        b3 = [8 / rho + v / (4 * v - 2) if abs(4 * v - 2) > 1e-3 else math.nan for v in L]
    return FigureSpec(name="theorem3_constants_vs_l", title="Lemma 2 coefficients vs L (rho = 10)", xlabel="L",
                      ylabel="coefficient", yscale="symlog",
                      series=(Series(label="B2 coefficient (rho - 4L)(rho + 2L)/(2 rho)", x=L, y=b2),
                              Series(label="B3 coefficient 8/rho + L/(4L - 2)", x=L[~np.isnan(b3)],
                                     y=np.array(b3)[~np.isnan(b3)], style="points"),
                              Series(label="seed's lower bound 2 sqrt5 - 4", x=(L_LOWER_SEED, L_LOWER_SEED),
                                     y=(-10, 10),
                                     style="dashed"),
                              Series(label="L = 1/2 and L = rho/4", x=(0.5, 0.5, 2.5, 2.5), y=(-10, 10, 10, -10),
                                     style="dashed")))


def _seed_points() -> list[dict]:
    pts = []
    for rho in (2.0, 10.0, 40.0):
        for L in np.linspace(L_LOWER_SEED, rho / 4.0, 25):
            pts.append({"L": float(L), "rho": rho, "N": 10, "K": 5})
        pts.append({"L": 0.5, "rho": rho, "N": 10, "K": 5})
        pts.append({"L": rho / 4.0, "rho": rho, "N": 10, "K": 5})
    return pts


_FORM_REASON = ("a yes/no property: are the reconstructed constants finite and positive at each (L, rho, N, K); no "
                "slack to measure")


def reproduce_conditions(counterexample) -> Evidence:
    return evaluate_conditions(counterexample)


def check_conditions_seed(ctx: CheckContext) -> CheckResult:
    """The seed's range 2 sqrt5 - 4 <= L <= rho/4 (endpoints included) on a grid of (L, rho)."""
    evidence = [evaluate_conditions(p) for p in _seed_points()]
    chosen = evaluate_conditions(CONDITION_COUNTEREXAMPLE)
    at_quarter = evaluate_conditions({"L": 2.5, "rho": 10.0, "N": 10, "K": 10})
    result = result_from_evidence(
        "fedpdm.theorem3_conditions", evidence, ctx=ctx, quantity="1 if some constant of Lemmas 2-3 is <= 0 or "
                                                                  "undefined",
        what="2 sqrt5 - 4 <= L <= rho/4 makes B2, B3, B8, theta1, C0..C2 positive and finite", figures=[_figure()],
        corrected_claim="fedpdm.theorem3_conditions_corrected", form="decision", form_reason=_FORM_REASON,
        details={"at_L_equal_rho_over_4": at_quarter.parameters,
                 "lower_bound_is_root_of": "L^2 + 8L - 4 (2 sqrt5 - 4 = 0.4721), while 4L - 2 > 0 needs L > 1/2",
                 "spec_example_L1_rho10_N10_K10": theorem3_constants(1.0, 10.0, 10, 10)})
    return report_counterexample(result, chosen, "the seed's own endpoint L = 2 sqrt5 - 4, rho = 10")


def check_conditions_corrected(ctx: CheckContext, *, lower: float = 0.5) -> CheckResult:
    """1/2 < L < rho/4 (strict) on a grid of rho, N, K, including points within 1e-9 of both ends."""
    pts = []
    for rho in (2.0 + 1e-6, 3.0, 10.0, 40.0, 100.0):
        for N, K in ((1, 1), (10, 1), (10, 10), (100, 5)):
            for L in np.concatenate([[lower + 1e-9, rho / 4.0 - 1e-9], np.linspace(lower, rho / 4.0, 12)[1:-1]]):
                pts.append({"L": float(L), "rho": float(rho), "N": N, "K": K})
    evidence = [evaluate_conditions(p) for p in pts]
    return result_from_evidence(
        "fedpdm.theorem3_conditions_corrected", evidence, ctx=ctx, quantity="1 if some constant is <= 0 or undefined",
        what="1/2 < L < rho/4 makes every constant positive and finite", figures=[_figure()], form="decision",
        form_reason=_CORRECTED_FORM_REASON, details={"boundary_attained": boundary_attained(pts, lower=lower)})


#: How far outside the corrected range the boundary is probed (relative to the end).
OUTSIDE_STEP = 1e-9
_CORRECTED_FORM_REASON = (_FORM_REASON + "; the range is exact, not a sufficient condition with room to spare: "
                          "details['boundary_attained'] records that some constant fails just outside "
                          "each end (L = 1/2 - 1e-9: 4L - 2 < 0; L = rho/4 + 1e-9: B2 < 0)")


def boundary_attained(points, *, lower: float = 0.5) -> dict:
    """Is the corrected range's boundary attained? Evaluate the constants just outside both ends of every
    (rho, N, K) of ``points`` (``OUTSIDE_STEP`` relative): the range is sharp at an end where every such point fails.

    Returns the count failing at each end, the constants that fail there, and ``sharp`` (both ends fail everywhere).
    """
    cases = sorted({(float(p["rho"]), int(p["N"]), int(p["K"])) for p in points})
    ends = {"below_lower": lambda rho: lower * (1.0 - OUTSIDE_STEP),
            "above_upper": lambda rho: rho / 4.0 * (1.0 + OUTSIDE_STEP)}
    out: dict = {"definition": ("constants evaluated at L = lower (1 - 1e-9) and L = rho/4 (1 + 1e-9) for every "
                                "(rho, N, K) checked; an end is attained when some constant fails there at every case"),
                 "cases": len(cases)}
    for name, at in ends.items():
        outside = [evaluate_conditions({"L": at(rho), "rho": rho, "N": N, "K": K}) for rho, N, K in cases]
        failing = [e for e in outside if not e.holds]
        bad = sorted({k for e in failing for k in e.parameters["non_positive_or_undefined"]})
        out[name] = {"failing": len(failing), "of": len(outside), "constants_failing": bad}
    out["sharp"] = all(out[name]["failing"] == out[name]["of"] for name in ends)
    return out


_CITE = (cite("Theorem 3", "(22)", "221-227"), cite("Lemma 2", "(B.1)", "343-350"), cite("Lemma 3", "(B.2)", "352-359"))

CLAIMS = (
    Claim(
        id="fedpdm.theorem3_conditions",
        title="Theorem 3's condition 2 sqrt5 - 4 <= L <= rho/4 makes the constants of (22) positive and finite",
        citations=_CITE,
        statement=("Under 2 sqrt5 - 4 <= L <= rho/4, the coefficients of Lemma 2 (B2 = rho/2 - 4L^2/rho - L, "
                   "B3 = 8/rho + L/(4L - 2)) and Lemma 3 (B8 = L^2/(4L - 2) + ...) are positive, theta_1 = min{B1, "
                   "B2} > 0 and C_0 = theta_2/theta_1, C_1, C_2 are finite positive constants depending on rho and L."),
        hypotheses=("2 sqrt5 - 4 <= L <= rho/4 (the seed's range, endpoints included)",
                    "constants as reconstructed in docs/papers/fedpdm.md#theorem-3"),
        check=check_conditions_seed,
        expected=Verdict.REFUTED,
        reason=("At the seed's own endpoint L = 2 sqrt5 - 4 = 0.472 (rho = 10), 4L - 2 = -0.111 and B3 = 0.8 - 4.25 < "
                "0, "
                "B8 < 0 (the bound is the root of L^2 + 8L - 4, not of 4L - 2, "
                "erratum E18 (docs/papers/fedpdm.md#erratum-e18)); at L = 1/2 they are undefined; at L = rho/4 the B2 "
                "coefficient (rho - 4L)(rho + 2L)/(2 rho) is 0, so theta_1 = 0 and C_0 = inf "
                "(erratum E17, docs/papers/fedpdm.md#erratum-e17)."),
        severity="correction_as_useful",
        reproduce=reproduce_conditions,
        corrected_by="fedpdm.theorem3_conditions_corrected",
    ),
    Claim(
        id="fedpdm.theorem3_conditions_corrected",
        title="Corrected condition 1/2 < L < rho/4: every constant of Lemmas 2-3 and Theorem 3 is positive and finite",
        citations=_CITE,
        statement=("For 1/2 < L < rho/4 (strict), B2 = (rho - 4L)(rho + 2L)/(2 rho) > 0, 4L - 2 > 0, theta_1 > 0 and "
                   "C_0, C_1, C_2 (conservative reading c_K = K + 2) are finite and positive. A lower bound on a "
                   "smoothness constant is vacuous (any larger L is valid), so in practice: declare L > 1/2."),
        hypotheses=("1/2 < L < rho/4", "constants of docs/papers/fedpdm.md#theorem-3, conservative reading"),
        check=check_conditions_corrected,
        expected=Verdict.CONFIRMED,
        reason="Positive and finite at every grid point, including L within 1e-9 of 1/2 and of rho/4.",
        corrects="fedpdm.theorem3_conditions",
    ),
)
