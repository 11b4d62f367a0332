r"""zCDP-NFL Theorem IV (O(1/n) under Assumptions 2 and 4) and Assumptions 3-4; the growing step.

Assumption 4 (P2 2162, thesis 711): "the :math:`\eta_k^{(n)}` are chosen such that
:math:`\lVert D^{(n+1)}\rVert_2^2` is a convergent series", called *stronger* than Assumption 3
(:math:`\eta \to 0`); Theorem IV's proof invokes Theorem III (P2 2168). Since
:math:`\lVert D^{(n)}\rVert_2^2 = \max_k 1/(2\eta_k^{(n)})`, Assumption 3 makes it diverge.

Readings of Assumption 4 checked on the family :math:`\eta^{(n)} = \eta_0 n^p` (exact p-series tests):

* R1 (docs/papers/zcdp_nfl.md#theorem-4) (as printed) :math:`\sum_n\lVert D^{(n)}\rVert^2 < \infty` iff :math:`p > 1`;
* R2 (docs/papers/zcdp_nfl.md#theorem-4) (as a sequence) :math:`\lVert D^{(n)}\rVert^2 \to 0` iff :math:`p > 0`;
* R3 (docs/papers/zcdp_nfl.md#theorem-4) (repair :math:`[D]_{kk} = \sqrt{2\eta_k}`) :math:`\sum\eta < \infty` iff
  :math:`p < -1`;
* R4 (docs/papers/zcdp_nfl.md#theorem-4) (the guess) :math:`\sum\eta^2 < \infty` iff :math:`p < -1/2`.

Assumption 3 holds iff :math:`p < 0`. R1 and R2 exclude Assumption 3 (so "stronger" is false: :math:`p = 2`
satisfies A4 and not A3); R3 and R4 are compatible with A3 but admit :math:`\eta_0/n^2`, which freezes
(:mod:`verify.zcdp_nfl.theorem3`). Theorem IV therefore fails under every reading: R1/R2 by a
diverging run with :math:`\eta = 0.05 n^2` (ridge, :math:`\rho = 0.3`), R3/R4 by the frozen run.

fedcheck's re-derivation: with :math:`\eta = 0.05 n^2` the outcome depends on the instance and on
:math:`\rho` (converges, diverges or stalls), so Assumption 4 is neither necessary nor sufficient.
"""

from __future__ import annotations

import numpy as np

from verify.evidence import report_counterexample, result_from_evidence
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import NFL_CONVERGED_NE
from verify.zcdp_nfl import cite
from verify.zcdp_nfl._runs import run_from
from verify.zcdp_nfl.theorem3 import FREEZE, evaluate_frozen

__all__ = ["CLAIMS", "EXPONENTS", "PRIVATE", "READINGS", "assumption3_holds", "check_assumption4_stronger",
           "check_growing_step", "check_theorem4", "check_theorem4_readings", "evaluate_growing",
           "evaluate_implication", "evaluate_theorem4", "reading_holds", "reproduce_assumption4", "reproduce_theorem4"]

READINGS = ("R1_series_D2", "R2_sequence_D2", "R3_sum_eta", "R4_sum_eta2")
#: Exponents p of eta = eta0 n^p: the step schedules checked and the boundaries of every reading.
EXPONENTS = (-3.0, -2.0, -1.5, -1.0, -0.75, -0.5, -0.25, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
#: fedcheck's re-derivation: eta = 0.05 n^2, ridge, rho = 0.3 diverges on the small instance of seed 0.
GROWING = {"step": "growing", "eta0": 0.05, "objective": "ridge", "rho": 0.3, "seed": 0}
_PROFILE = {"ci": {"T": 400, "seeds": (0, 1, 2), "rhos": (0.3, 1.0, 5.0), "objectives": ("ridge",)},
            "thorough": {"T": 1000, "seeds": (0, 1, 2, 3, 4), "rhos": (0.3, 0.5, 1.0, 5.0),
                         "objectives": ("ridge", "lad", "elastic_net")}}


def assumption3_holds(p: float) -> bool:
    """A3: eta0 n^p -> 0."""
    return p < 0.0


def reading_holds(reading: str, p: float) -> bool:
    """Exact p-series tests for eta = eta0 n^p (||D^(n)||^2 = n^-p / (2 eta0))."""
    if reading == "R1_series_D2":
        return -p < -1.0
    if reading == "R2_sequence_D2":
        return -p < 0.0
    if reading == "R3_sum_eta":
        return p < -1.0
    if reading == "R4_sum_eta2":
        return 2.0 * p < -1.0
    raise ValueError(f"reading must be one of {READINGS}, got {reading!r}")


def _partial_sums(p: float, reading: str) -> tuple[float, float]:
    """The series of the reading summed to 1e3 and 1e6 terms (eta0 = 1): the figure's numeric illustration."""
    n = np.arange(1, 10**6 + 1, dtype=np.float64)
    term = {"R1_series_D2": n ** (-p) / 2.0, "R2_sequence_D2": n ** (-p) / 2.0, "R3_sum_eta": n**p,
            "R4_sum_eta2": n ** (2 * p)}[reading]
    if reading == "R2_sequence_D2":
        return float(term[999]), float(term[-1])
    return float(term[:1000].sum()), float(term.sum())


def evaluate_implication(p: float) -> Evidence:
    """'A4 (as printed) implies A3' at eta = eta0 n^p: violated when A4 holds and A3 does not."""
    a3, a4 = assumption3_holds(p), reading_holds("R1_series_D2", p)
    return Evidence(measured=float(a4 and not a3), bound=0.0, holds=not (a4 and not a3),
                    parameters={"p": p, "assumption3": a3, **{r: reading_holds(r, p) for r in READINGS}})


def reproduce_assumption4(counterexample) -> Evidence:
    return evaluate_implication(float(counterexample["p"]))


def _readings_figure() -> FigureSpec:
    ps = np.array(EXPONENTS)
    series = [Series(label="Assumption 3 (eta -> 0)", x=ps, y=[float(assumption3_holds(p)) for p in ps], style="step")]
    series += [Series(label=f"{r} holds", x=ps, y=[float(reading_holds(r, p)) + 0.05 * (i + 1) for p in ps],
                      style="step") for i, r in enumerate(READINGS)]
    return FigureSpec(name="readings", title="Assumption 3 vs the readings of Assumption 4 for eta = eta0 n^p",
                      xlabel="exponent p", ylabel="holds (1) / fails (0), offset per reading", series=tuple(series))


def check_assumption4_stronger(ctx: CheckContext) -> CheckResult:
    """Every exponent of EXPONENTS: A4 (printed) => A3? Joint satisfiability of A3 with every reading in details."""
    evidence = [evaluate_implication(p) for p in EXPONENTS]
    joint = {r: [p for p in EXPONENTS if assumption3_holds(p) and reading_holds(r, p)] for r in READINGS}
    sums = {r: {str(p): _partial_sums(p, r) for p in (-2.0, -0.5, 2.0)} for r in READINGS}
    result = result_from_evidence(
        "zcdp_nfl.assumption4_stronger", evidence, ctx=ctx,
        form="decision",
        form_reason=("an implication between assumptions, decided by exact p-series tests"),
        quantity="1 if A4 holds and A3 fails at eta0 n^p, else 0",
        what="Assumption 4 implies Assumption 3", figures=[_readings_figure()],
        details={"exponents_satisfying_A3_and_reading": joint, "partial_sums_1e3_1e6": sums,
                 "A3_and_R1_jointly_satisfiable": bool(joint["R1_series_D2"])})
    chosen = next((e for e in evidence if e.parameters["p"] == 2.0), None)
    if chosen is not None:
        result = report_counterexample(result, chosen, "eta = eta0 n^2, the growing schedule")
    return result


def evaluate_growing(settings: dict) -> Evidence:
    """One growing-step run: outcome converged (NE <= NFL_CONVERGED_NE), diverged, or stalled."""
    run = run_from(settings)
    ne = run.ne[0]
    final = float(ne[np.isfinite(ne)][-1])
    outcome = "diverged" if run.diverged or final > ne[0] else ("converged" if final <= NFL_CONVERGED_NE else "stalled")
    return Evidence(measured=final, bound=float(ne[0]), holds=outcome != "diverged",
                    parameters={**settings, "outcome": outcome, "NE_final": final})


#: A private run under the printed Assumption 4 (S1 noise sigma^2(n) = 1e-2 * 0.97^n, five runs).
PRIVATE = {"noise": "S1", "sigma2_0": 1e-2, "tau": 0.97, "runs": 5, "noise_seed": 0}


def evaluate_theorem4(reading: str, T: int, private: bool = False) -> Evidence:
    """A representative schedule satisfying Assumption 4 under ``reading`` (and A2): does the run converge?

    ``private``: the same run with S1 noise (Theorem IV is about the private algorithm; the noise-free run is the
    limit sigma -> 0)."""
    if reading not in READINGS:
        raise ValueError(f"reading must be one of {READINGS}, got {reading!r}")
    if reading in ("R1_series_D2", "R2_sequence_D2"):
        e = evaluate_growing({**GROWING, "T": T, **(PRIVATE if private else {})})
        return Evidence(measured=e.measured, bound=e.bound, holds=e.holds,
                        parameters={**e.parameters, "reading": reading, "private": private})
    e = evaluate_frozen({**FREEZE, "objective": "ridge", "T": T, **(PRIVATE if private else {})})
    return Evidence(measured=e.measured, bound=e.bound, holds=e.holds,
                    parameters={**e.parameters, "reading": reading, "private": private})


def reproduce_theorem4(counterexample) -> Evidence:
    return evaluate_theorem4(counterexample["reading"], int(counterexample["T"]),
                             bool(counterexample.get("private", False)))


def _growing_figure(T: int) -> FigureSpec:
    series = []
    for rho in (0.3, 1.0, 5.0):
        ne = run_from({**GROWING, "rho": rho, "T": T}).ne[0]
        n = np.arange(ne.size)
        ok = np.isfinite(ne)
        series.append(Series(label=f"ridge, rho = {rho:g}", x=n[ok], y=np.maximum(ne[ok], 1e-300)))
    ne = run_from({**GROWING, "objective": "lad", "rho": 1.0, "T": T}).ne[0]
    series.append(Series(label="LAD, rho = 1", x=np.arange(ne.size), y=ne, style="dashed"))
    return FigureSpec(name="growing", title="eta = 0.05 n^2 (Assumption 4 holds): NE(n), seed 0", xlabel="iteration n",
                      ylabel="NE(n)", yscale="log", series=tuple(series))


_DECISION = "convergence or not: a run that diverges (or freezes) refutes convergence at any rate"


def check_theorem4(ctx: CheckContext) -> CheckResult:
    """Assumption 4 as printed (R1, docs/papers/zcdp_nfl.md#theorem-4): eta = 0.05 n^2, noise-free and with S1 noise."""
    T = _PROFILE[ctx.profile]["T"]
    evidence = [evaluate_theorem4("R1_series_D2", T, private) for private in (False, True)]
    return result_from_evidence(
        "zcdp_nfl.theorem4", evidence, ctx=ctx, quantity="NE(T) vs NE(0) (a run diverged when NE(T) > NE(0))",
        what="convergence (at rate O(1/n)) under Assumptions 2 and 4 as printed", figures=[_growing_figure(T)],
        form="decision", form_reason=_DECISION,
        details={"outcomes": {("private" if e.parameters["private"] else "noise-free"): e.parameters["outcome"]
                              for e in evidence}})


def check_theorem4_readings(ctx: CheckContext) -> CheckResult:
    """The other readings of Assumption 4 (R2-R4, docs/papers/zcdp_nfl.md#theorem-4), one noise-free run each."""
    T = _PROFILE[ctx.profile]["T"]
    evidence = [evaluate_theorem4(r, T) for r in READINGS[1:]]
    return result_from_evidence(
        "zcdp_nfl.theorem4_readings", evidence, ctx=ctx,
        quantity="R2 (docs/papers/zcdp_nfl.md#theorem-4): NE(T) vs NE(0) (divergence); "
                 "R3 (docs/papers/zcdp_nfl.md#theorem-4)/R4 (docs/papers/zcdp_nfl.md#theorem-4): frozen certificate vs "
                 "NFL_FROZEN_FRACTION",
        what="convergence under Assumption 2 and each other reading of Assumption 4", form="decision",
        form_reason=_DECISION,
        details={"outcomes": {e.parameters["reading"]: e.parameters.get("outcome", "frozen") for e in evidence}})


def check_growing_step(ctx: CheckContext) -> CheckResult:
    """eta = 0.05 n^2 over instances x rho: both 'converged' and 'diverged' must occur (instance dependence)."""
    p = _PROFILE[ctx.profile]
    runs = [evaluate_growing({"step": "growing", "eta0": 0.05, "objective": o, "rho": rho, "seed": s, "T": p["T"]})
            for o in p["objectives"] for s in p["seeds"] for rho in p["rhos"]]
    outcomes = [r.parameters["outcome"] for r in runs]
    both = "converged" in outcomes and "diverged" in outcomes
    evidence = [Evidence(measured=float(not both), bound=0.0, holds=both,
                         parameters={"outcomes": outcomes, "T": p["T"]})]
    table = [{k: r.parameters[k] for k in ("objective", "seed", "rho", "outcome", "NE_final")} for r in runs]
    result = result_from_evidence(
        "zcdp_nfl.growing_step_instance_dependent", evidence, ctx=ctx,
        form="decision",
        form_reason=("an outcome (converged / diverged) occurring on both sides"),
        quantity="0 if both a converging and a diverging (instance, rho) occur under eta = 0.05 n^2",
        what="the growing step's outcome depends on the instance", figures=[_growing_figure(p["T"])],
        details={"runs": table, "counts": {o: outcomes.count(o) for o in sorted(set(outcomes))}})
    return result


_CITATIONS = (cite("Publication 2, Assumption 4, Theorem IV and proof", "", "2160-2182"),
              cite("Thesis Chapter 3, Assumption 4 and Theorem IV", "", "711-717"))

CLAIMS = (
    Claim(
        id="zcdp_nfl.assumption4_stronger",
        title="Assumption 4 (sum of ||D^(n+1)||^2 converges) is stronger than Assumption 3 (eta -> 0)",
        citations=_CITATIONS,
        statement=("Assumption 4: the eta_k^(n) are chosen such that ||D^(n+1)||_2^2 is a convergent series; this is "
                   "stronger than Assumption 3 (lim eta_k^(n) = 0)."),
        hypotheses=("D^(n) = diag(1/sqrt(2 eta_k^(n)))", "eta = eta0 n^p over a grid of p (the step schedules checked "
                                                         "and the "
                    "boundaries of every reading)"),
        check=check_assumption4_stronger,
        expected=Verdict.REFUTED,
        reason=("||D^(n)||^2 = max_k 1/(2 eta_k^(n)): Assumption 3 makes it diverge, so A3 and A4 are mutually "
                "exclusive; eta = eta0 n^2 satisfies A4 and not A3. Read as a sequence (||D||^2 -> 0) the same "
                "holds; readings compatible with A3 (Sigma eta < inf, Sigma eta^2 < inf) admit eta0/n^2, which "
                "freezes."),
        reproduce=reproduce_assumption4,
        uncorrected_because=("Under the printed and the sequence readings Assumptions 3 and 4 are mutually exclusive, "
                             "and "
                             "the readings compatible with Assumption 3 admit eta0/n^2, which freezes, so no reading "
                             "keeps what Theorem IV uses the assumption for."),
        severity="false",
    ),
    Claim(
        id="zcdp_nfl.theorem4",
        title="Theorem IV: under Assumptions 2 and 4 the algorithm converges at rate O(1/n)",
        citations=_CITATIONS,
        statement="Under Assumptions 2 and 4, zCDP-NFL converges at a rate O(1/n).",
        hypotheses=("Assumption 2: convex objectives", "Assumption 4 as printed: sum_n ||D^(n+1)||_2^2 < inf, here "
                    "eta = 0.05 n^2 (||D^(n)||^2 = 1/(0.1 n^2), summable)", "ridge, rho = 0.3, the small instance "
                    "(seed 0)", "noise-free and S1 noise sigma^2(n) = 1e-2 * 0.97^n (5 runs)"),
        check=check_theorem4,
        expected=Verdict.REFUTED,
        reason=("eta = 0.05 n^2 satisfies Assumption 4 as printed, and the run diverges (NE(400) ~ 1e194 against "
                "NE(0) = 10), noise-free and with privacy noise: no rate holds. The proof needs Theorem III (eta -> "
                "0), "
                "which Assumption 4 excludes (zcdp_nfl.assumption4_stronger). Other readings of Assumption 4: "
                "zcdp_nfl.theorem4_readings; rates under other schedules: zcdp_nfl.rate_instance_dependent."),
        reproduce=reproduce_theorem4,
        uncorrected_because=("No reading of Assumption 4 is both compatible with Theorem III's hypotheses and "
                             "sufficient "
                             "for convergence, and the seed gives no other rate argument; observed rates are instance "
                             "dependent."),
        severity="false",
    ),
    Claim(
        id="zcdp_nfl.theorem4_readings",
        title="Theorem IV under the other readings of Assumption 4 (fedcheck's readings, not the printed one)",
        citations=_CITATIONS,
        statement=("Under Assumption 2 and Assumption 4 read as R2 (docs/papers/zcdp_nfl.md#theorem-4) (||D^(n)||^2 -> "
                   "0), R3 (docs/papers/zcdp_nfl.md#theorem-4) (sum eta < inf, the repair [D]_kk = sqrt(2 eta_k)) or "
                   "R4 (docs/papers/zcdp_nfl.md#theorem-4) (sum eta^2 < inf), zCDP-NFL converges at a rate O(1/n)."),
        hypotheses=("Assumption 2: convex objectives",
                    "R2 (docs/papers/zcdp_nfl.md#theorem-4): eta = 0.05 n^2 (ridge, rho = 0.3); "
                    "R3 (docs/papers/zcdp_nfl.md#theorem-4)/R4 (docs/papers/zcdp_nfl.md#theorem-4): eta = 0.05/n^2 "
                    "(ridge)", "noise-free runs on the small instance"),
        check=check_theorem4_readings,
        expected=Verdict.REFUTED,
        reason=("Under every other reading a schedule satisfying it fails to converge: "
                "R2 (docs/papers/zcdp_nfl.md#theorem-4) (eta = 0.05 n^2) diverges; "
                "R3 (docs/papers/zcdp_nfl.md#theorem-4)/R4 (docs/papers/zcdp_nfl.md#theorem-4) (eta = 0.05/n^2) "
                "freezes far from w_c."),
        reproduce=reproduce_theorem4,
        uncorrected_because=("The readings compatible with Assumption 3 admit eta0/n^2, which freezes; the others "
                             "admit diverging runs."),
        severity="false",
    ),
    Claim(
        id="zcdp_nfl.growing_step_instance_dependent",
        title="with eta = 0.05 n^2 (Assumption 4 holds) convergence depends on the instance and rho",
        citations=(cite("Publication 2, Assumption 4 remark", "", "2182"),),
        statement=("Under eta^(n) = 0.05 n^2 (Assumption 4 holds), some (instance, rho) pairs converge to w_c and "
                   "others "
                   "diverge: Assumption 4 is neither necessary nor sufficient for convergence in practice "
                   "(fedcheck's re-derivation)."),
        hypotheses=("noise-free", "small instances (K = 10, P = 3, M = 20), seeds 0-2 (thorough 0-4)",
                    "rho in {0.3, 1, 5} (thorough {0.3, 0.5, 1, 5}), ridge (thorough also LAD, elastic net)"),
        check=check_growing_step,
        expected=Verdict.CONFIRMED,
        reason=("Ridge diverges at rho = 0.3 on seeds 0 and 1 but converges on seed 2 and at rho = 1 and 5 everywhere; "
                "LAD stalls (NE 3e-2 at rho = 1, 2e-5 at rho = 5 after 400 rounds). The fedcheck's re-derivation' 'rho "
                "= 1 "
                "diverged' "
                "is specific to one instance."),
    ),
)
