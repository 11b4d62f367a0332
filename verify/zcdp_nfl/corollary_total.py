r"""zCDP-NFL Corollary: total privacy over T iterations, and the sum range printed in its proof.

Schedule S2 (docs/papers/zcdp_nfl.md; P2 App. C: :math:`\phi^{(n+1)} = \phi^{(n)}/\tau`):
:math:`\phi^{(n)} = \phi^{(1)}\tau^{-(n-1)}`, :math:`n = 1, \dots, T`. The T releases compose to

.. math::

    \Phi(T) = \sum_{n=1}^{T}\phi^{(n)} = \phi^{(1)}\frac{1-\tau^T}{\tau^{T-1}-\tau^T},
    \qquad \varepsilon = \Phi + 2\sqrt{\Phi\log(1/\delta)} .

Finding: P2 App. C (line 2279) writes the sum as :math:`\sum_{0<n<T}`, which has
:math:`T-1` terms and is *not* equal to the closed form; the minimal counterexample is
:math:`T = 1` (empty sum 0 against :math:`\phi^{(1)}`). The closed form (and the Corollary's
:math:`\varepsilon`, which uses it) is right for the :math:`T`-term sum.
"""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np

from theory.privacy import gaussian_zcdp, sensitivity_zcdp_nfl, zcdp_compose, zcdp_total_variance_decay
from theory.privacy.conversions import (
    zcdp_to_approx_dp_bun_steinke,
    zcdp_to_approx_dp_cks,
    zcdp_to_approx_dp_exact_gaussian,
)
from verify.evidence import bound_tightness, result_from_evidence, sample_evidence, with_minimal_counterexample
from verify.records import CheckContext, CheckResult, Citation, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import CONVERSION_RTOL as CONVERTER_TOL
from verify.tolerance import gamma, relative_gap

__all__ = ["CLAIMS", "TEST_VECTORS", "check_corollary", "check_sum_range", "corollary_total",
           "evaluate_epsilon", "evaluate_sum_range", "reproduce_sum_range", "evaluate_total", "evaluate_test_vector",
           "ordering_tightness"]

SEED = "004_180cd372987d137b.txt"
#: docs/papers/zcdp_nfl.md#corollary test vectors (delta = 1e-5, T = 200), labelled regression values with their
#: printed precision: (phi1, tau) -> (Phi(T), eps_Corollary, eps_CKS, eps_Gauss), and the half unit
#: of the last printed digit of each column.
TEST_VECTORS = (
    ((1e-4, 0.999), (0.022130, 1.031655, 0.839166, 0.766815), (5e-7, 5e-7, 5e-7, 5e-7)),
    ((1e-3, 0.99), (0.639918, 6.068483, 5.451648, 5.052410), (5e-7, 5e-7, 5e-7, 5e-7)),
    ((1e-2, 0.9999), (2.020034, 11.665033, 10.790273, 10.058831), (5e-7, 5e-7, 5e-7, 5e-7)),
    ((1e-4, 0.9), (1.276e6, 1.28334e6, 1.28333e6, 1.28249e6), (5e2, 5.0, 5.0, 5.0)),
)
TEST_VECTOR_T, TEST_VECTOR_DELTA = 200, 1e-5
_MAX_ROUNDS = 2000
_PROFILE = {"ci": {"batches": 4, "per_batch": 20}, "thorough": {"batches": 16, "per_batch": 60}}


def corollary_total(phi1: float, tau: float, T: int) -> float:
    r"""The Corollary's closed form :math:`\phi^{(1)}(1-\tau^T)/(\tau^{T-1}-\tau^T)`, evaluated without cancellation.

    It is :func:`theory.privacy.zcdp_total_variance_decay` with ``first_release_decayed=False``
    (round 1 uses :math:`\phi^{(1)}`), which states this form.
    """
    return zcdp_total_variance_decay(phi1, tau, T, first_release_decayed=False)


def _allowance(tau: float, T: int) -> float:
    """Rounding bound of the closed form (expm1/log: (4x + 12) u, x = T |log tau|) plus a few-ulp direct sum."""
    x = T * abs(math.log(tau))
    return gamma(math.ceil(4.0 * x) + 12) + gamma(math.ceil(x) + 12)


def _literal_closed_form(phi1: float, tau: float, T: int) -> float:
    """The printed expression, term by term, in 50-digit arithmetic (independent of the expm1 form)."""
    with mpmath.workdps(50):
        t = mpmath.mpf(tau)
        return float(mpmath.mpf(phi1) * (1 - t**T) / (t ** (T - 1) - t**T))


def evaluate_sum_range(phi1: float, tau: float, T: int, *, total_fn=corollary_total) -> Evidence:
    r"""P2 App. C as printed: :math:`\sum_{0<n<T}\phi^{(n)}` against the closed form.

    ``measured`` is the relative gap, ``bound`` the rounding allowance. The printed range has
    :math:`T - 1` terms; for :math:`T = 1` it is empty (0), a relative gap of 1.
    """
    printed_range = math.fsum(phi1 * tau ** -(n - 1) for n in range(1, T))  # n = 1..T-1
    closed = float(total_fn(phi1, tau, T))
    allowance = _allowance(tau, T)
    gap = float(relative_gap(printed_range, closed))
    return Evidence(measured=gap, bound=allowance, holds=gap <= allowance,
                    parameters={"phi1": float(phi1), "tau": float(tau), "T": int(T),
                                "sum_over_0_lt_n_lt_T": printed_range, "closed_form": closed})


@functools.lru_cache(maxsize=8)
def _lemma1_sensitivities(T: int) -> tuple[float, ...]:
    """Lemma I sensitivities for n = 1..T: c1 = 1, M = 50, rho = 1, d = 3, eta^(n) = 0.5/sqrt(n)."""
    if T > _MAX_ROUNDS:
        return tuple(sensitivity_zcdp_nfl(1.0, 50, 1.0, 3, 0.5 / math.sqrt(n)) for n in range(1, T + 1))
    return _lemma1_sensitivities(_MAX_ROUNDS)[:T] if T < _MAX_ROUNDS else tuple(
        sensitivity_zcdp_nfl(1.0, 50, 1.0, 3, 0.5 / math.sqrt(n)) for n in range(1, T + 1))


def evaluate_total(phi1: float, tau: float, T: int, *, total_fn=corollary_total) -> Evidence:
    r"""The T releases of Theorem I under S2, composed, against the closed form (two evaluations of it).

    Round :math:`n` releases with :math:`\sigma_n^2 = \Delta_n^2\tau^{n-1}/(2\phi^{(1)})`, with
    :math:`\Delta_n` from Lemma I for :math:`\eta^{(n)} = 0.5/\sqrt n` (it cancels: the schedule is
    set in :math:`\phi`); its zCDP parameter (:func:`theory.privacy.gaussian_zcdp`) is summed
    exactly (:func:`theory.privacy.zcdp_compose`). ``measured``: the larger relative gap of the
    closed form to the composed total and to the printed expression in 50-digit arithmetic, each
    over its rounding allowance.
    """
    deltas = _lemma1_sensitivities(T)
    composed = zcdp_compose([gaussian_zcdp(d, d * math.sqrt(tau ** (n - 1) / (2.0 * phi1)))
                             for n, d in enumerate(deltas, start=1)])
    closed = float(total_fn(phi1, tau, T))
    literal = _literal_closed_form(phi1, tau, T)
    allowance = _allowance(tau, T)
    ratio = max(float(relative_gap(closed, composed)), float(relative_gap(closed, literal))) / allowance
    return Evidence(measured=ratio, bound=1.0, holds=ratio <= 1.0,
                    parameters={"phi1": float(phi1), "tau": float(tau), "T": int(T), "closed_form": closed,
                                "composed": composed, "literal_50_digits": literal})


def evaluate_epsilon(phi1: float, tau: float, T: int, delta: float, *, total_fn=corollary_total) -> Evidence:
    r"""The Corollary's :math:`\varepsilon` is Bun-Steinke at :math:`\Phi`; and
    :math:`\varepsilon_G \le \varepsilon_{CKS} \le \varepsilon`.

    The Corollary's expression is evaluated literally from the composed total (``math.fsum`` of the
    schedule) and compared with :func:`theory.privacy.conversions.zcdp_to_approx_dp_bun_steinke`
    at the closed form; the ordering uses the two tighter converters. ``measured``: the largest
    violation over ``CONVERTER_TOL`` (bound 1; 0 when every comparison holds with room).
    """
    total = float(total_fn(phi1, tau, T))
    direct = math.fsum(phi1 * tau ** -(n - 1) for n in range(1, T + 1))
    eps_printed = direct + 2.0 * math.sqrt(direct * math.log(1.0 / delta))
    eps_bs = zcdp_to_approx_dp_bun_steinke(total, delta)
    eps_cks = zcdp_to_approx_dp_cks(total, delta)
    eps_gauss = zcdp_to_approx_dp_exact_gaussian(total, delta)
    gap = float(relative_gap(eps_printed, eps_bs)) / (_allowance(tau, T) + gamma(8))
    order = max(eps_gauss - eps_cks, eps_cks - eps_bs, 0.0) / (CONVERTER_TOL * eps_bs)
    measured = max(gap, order)
    return Evidence(measured=measured, bound=1.0, holds=measured <= 1.0,
                    parameters={"phi1": float(phi1), "tau": float(tau), "T": int(T), "delta": float(delta),
                                "total": total, "eps_corollary": eps_bs, "eps_cks": eps_cks, "eps_gauss": eps_gauss})


def ordering_tightness(evidence) -> dict:
    r"""The tightness of the converter ordering :math:`\varepsilon_G \le \varepsilon_{CKS} \le \varepsilon` over the
    epsilon points of ``evidence``: for each pair the largest ratio (smaller side / larger side) and where
    (:func:`verify.evidence.bound_tightness` on the pair's two sides)."""
    points = [e for e in evidence if "eps_cks" in e.parameters]
    out = {}
    for name, (small, large) in {"eps_gauss / eps_cks": ("eps_gauss", "eps_cks"),
                                 "eps_cks / eps_corollary": ("eps_cks", "eps_corollary")}.items():
        pairs = [Evidence(measured=e.parameters[small], bound=e.parameters[large],
                          holds=e.parameters[small] <= e.parameters[large] * (1.0 + CONVERTER_TOL),
                          parameters={k: e.parameters[k] for k in ("phi1", "tau", "T", "delta", "total")})
                 for e in points]
        t = bound_tightness(pairs)
        loosest = min(pairs, key=lambda e: e.measured / e.bound)
        out[name] = {"ratio": t["ratio"], "attained_at": t.get("attained_at"), "points": t["points_rated"],
                     "smallest_ratio": loosest.measured / loosest.bound, "smallest_at": dict(loosest.parameters)}
    out["note"] = ("every pair tends to 1 as the total Phi grows (each conversion is Phi + O(sqrt(Phi log(1/delta)))), "
                   "so the ordering is tight there: a ratio of 1 + a few ulp is within the converters' tolerance "
                   f"{CONVERTER_TOL:g}")
    return out


def evaluate_test_vector(index: int, *, total_fn=corollary_total) -> Evidence:
    """One row of the Corollary's test vectors against its printed precision (measured: worst |gap| / half unit)."""
    (phi1, tau), printed, half_units = TEST_VECTORS[index]
    total = float(total_fn(phi1, tau, TEST_VECTOR_T))
    computed = (total, zcdp_to_approx_dp_bun_steinke(total, TEST_VECTOR_DELTA),
                zcdp_to_approx_dp_cks(total, TEST_VECTOR_DELTA),
                zcdp_to_approx_dp_exact_gaussian(total, TEST_VECTOR_DELTA))
    ratio = max(abs(c - p) / h for c, p, h in zip(computed, printed, half_units, strict=True))
    return Evidence(measured=float(ratio), bound=1.0, holds=ratio <= 1.0,
                    parameters={"row": index, "phi1": phi1, "tau": tau, "T": TEST_VECTOR_T, "delta": TEST_VECTOR_DELTA,
                                "computed": list(computed), "printed": list(printed)})


def reproduce_sum_range(counterexample) -> Evidence:
    """Re-evaluate the printed sum range at a recorded counterexample."""
    c = dict(counterexample)
    return evaluate_sum_range(c["phi1"], c["tau"], c["T"])


def _sample_point(rng: np.random.Generator) -> tuple[float, float, int]:
    """(phi1, tau, T): log10 phi1 ~ U(-6, 0), tau ~ U(0.5, 1), T <= 2000 with T |log tau| <= 600."""
    tau = float(rng.uniform(0.5, 1.0))
    max_rounds = int(min(_MAX_ROUNDS, 600.0 / max(-math.log(tau), 1e-12)))
    return float(10.0 ** rng.uniform(-6.0, 0.0)), tau, int(rng.integers(1, max_rounds + 1))


def _range_batch(rng: np.random.Generator, count: int, total_fn) -> list[Evidence]:
    return [evaluate_sum_range(*_sample_point(rng), total_fn=total_fn) for _ in range(count)]


def _corollary_batch(rng: np.random.Generator, count: int, total_fn) -> list[Evidence]:
    out = []
    for _ in range(count):
        phi1, tau, T = _sample_point(rng)
        out.append(evaluate_total(phi1, tau, T, total_fn=total_fn))
        out.append(evaluate_epsilon(phi1, tau, T, float(10.0 ** rng.uniform(-12.0, -2.0)), total_fn=total_fn))
    return out


def _range_figure() -> FigureSpec:
    T = np.arange(1, 201)
    return FigureSpec(
        name="sum_range", title="Corollary proof: sum over 0 < n < T vs the closed form (phi1 = 1e-3, tau = 0.99)",
        xlabel="T", ylabel="total zCDP", yscale="log",
        series=(Series(label="closed form phi1 (1 - tau^T)/(tau^(T-1) - tau^T)", x=T, group="c",
                       y=[corollary_total(1e-3, 0.99, int(t)) for t in T]),
                Series(label="sum over n = 1..T (T terms)", x=T[::10], style="points", group="c",
                       y=np.cumsum(1e-3 * 0.99 ** -(T - 1.0))[::10]),
                Series(label="sum over 0 < n < T as printed (T - 1 terms)", x=T[1:], style="dashed", group="p",
                       y=np.cumsum(1e-3 * 0.99 ** -(T - 1.0))[:-1])))


def check_sum_range(ctx: CheckContext, *, total_fn=corollary_total) -> CheckResult:
    """Random (phi1, tau, T), the minimal T = 1 and the test-vector settings at T = 200."""
    p = _PROFILE[ctx.profile]
    evidence = [evaluate_sum_range(1e-3, 0.99, 1, total_fn=total_fn)]
    evidence += sample_evidence(ctx, "zcdp_nfl.corollary_sum_range", _range_batch, p["batches"],
                                (p["per_batch"], total_fn))
    evidence += [evaluate_sum_range(phi1, tau, TEST_VECTOR_T, total_fn=total_fn) for (phi1, tau), _, _ in TEST_VECTORS]
    result = result_from_evidence(
        "zcdp_nfl.corollary_sum_range", evidence, ctx=ctx,
        form="identity", form_reason="an identity (closed form = computation) checked against a rounding or solver "
                                     "tolerance",
        quantity="relative gap between sum_{0<n<T} phi^(n) and the closed form (bound: rounding allowance)",
        what="sum_{0<n<T} phi1 tau^-(n-1) = phi1 (1 - tau^T)/(tau^(T-1) - tau^T)", figures=[_range_figure()],
        corrected_claim="zcdp_nfl.corollary")
    return with_minimal_counterexample(result, evidence, lambda e: e.parameters["T"], "T")


def _epsilon_figure() -> FigureSpec:
    T = np.unique(np.geomspace(1, 200, 40).astype(int))
    totals = [corollary_total(1e-3, 0.99, int(t)) for t in T]
    series = tuple(Series(label=label, x=T, y=[fn(r, 1e-5) for r in totals], group=label)
                   for label, fn in (("Corollary (Bun-Steinke Prop. 1.3)", zcdp_to_approx_dp_bun_steinke),
                                     ("Canonne-Kamath-Steinke", zcdp_to_approx_dp_cks),
                                     ("exact Gaussian (tight for zCDP-NFL)", zcdp_to_approx_dp_exact_gaussian)))
    return FigureSpec(name="epsilon_vs_t", title="zCDP-NFL total epsilon, phi1 = 1e-3, tau = 0.99, delta = 1e-5",
                      xlabel="iterations T", ylabel="epsilon", series=series, xscale="log", yscale="log")


def check_corollary(ctx: CheckContext, *, total_fn=corollary_total) -> CheckResult:
    """Composed S2 releases = closed form = printed expression (50 digits); epsilon and converter ordering; table."""
    p = _PROFILE[ctx.profile]
    evidence = sample_evidence(ctx, "zcdp_nfl.corollary", _corollary_batch, p["batches"], (p["per_batch"], total_fn))
    evidence += [evaluate_total(1e-3, 0.99, 1, total_fn=total_fn)]
    evidence += [evaluate_test_vector(i, total_fn=total_fn) for i in range(len(TEST_VECTORS))]
    rows = [e for e in evidence if "row" in e.parameters]
    details = {"test_vectors": {f"phi1={e.parameters['phi1']:g}, tau={e.parameters['tau']:g}":
                                {"computed": e.parameters["computed"], "printed": e.parameters["printed"]}
                                for e in rows},
               "epsilon_points": sum("eps_cks" in e.parameters for e in evidence),
               "max_sum_identity_gap_over_allowance": max(e.measured for e in evidence if "composed" in e.parameters),
               "max_epsilon_violation_over_allowance": max(e.measured for e in evidence if "eps_cks" in e.parameters),
               "converter_tol": CONVERTER_TOL,
               "ordering_tightness": ordering_tightness(evidence)}
    return result_from_evidence(
        "zcdp_nfl.corollary", evidence, ctx=ctx,
        form="identity", form_reason=("an identity (closed form = computation) checked against a rounding or solver "
                                      "tolerance; its inequality part, eps_G <= eps_CKS <= eps, is rated in "
                                      "details['ordering_tightness'] (the largest ratio of each pair)"),
        quantity="relative gaps (composed / closed form / 50-digit literal; eps) over rounding allowances; "
                 "test vectors: |gap| / half unit of the printed digit",
        what="sum_{n=1}^T phi1 tau^-(n-1) = phi1 (1 - tau^T)/(tau^(T-1) - tau^T), eps_G <= eps_CKS <= eps",
        figures=[_epsilon_figure()], details=details)


_CITATIONS = (Citation(seed=SEED, label="Publication 2, Corollary", lines="2036-2043"),
              Citation(seed=SEED, label="Thesis Chapter 3, Corollary", lines="606-612"))

CLAIMS = (
    Claim(
        id="zcdp_nfl.corollary_sum_range",
        paper="zcdp_nfl",
        title="Corollary proof: sum over 0 < n < T of phi^(n) equals phi1 (1 - tau^T)/(tau^(T-1) - tau^T)",
        citations=(Citation(seed=SEED, label="Publication 2, Appendix C (proof of the Corollary)", lines="2277-2283"),),
        statement=("With phi_k^(n+1) = phi_k^(n)/tau, sum_{0<n<T} phi_k^(n) = phi_k^(1) (1 - tau^T)/(tau^(T-1) - "
                   "tau^T), "
                   "T being the final iteration index."),
        hypotheses=("phi^(n) = phi^(1) tau^-(n-1) (schedule S2)", "tau in (0, 1)", "T >= 1"),
        check=check_sum_range,
        expected=Verdict.REFUTED,
        reason=("The closed form is the T-term sum over n = 1..T; the printed range 0 < n < T has T - 1 terms. "
                "Minimal counterexample T = 1: the empty sum is 0, the closed form phi^(1)."),
        severity="typo",
        reproduce=reproduce_sum_range,
        corrected_by="zcdp_nfl.corollary",
    ),
    Claim(
        id="zcdp_nfl.corollary",
        paper="zcdp_nfl",
        title=("Corollary (corrected range): T releases give Phi = phi1 (1 - tau^T)/(tau^(T-1) - tau^T), "
               "eps = Phi + 2 sqrt(Phi log(1/delta))"),
        citations=_CITATIONS,
        statement=("Corrected statement: under S2 (phi^(n) = phi^(1) tau^-(n-1), n = 1..T) the T Gaussian releases of "
                   "Theorem I compose to Phi = sum_{n=1}^T phi^(n) = phi^(1) (1 - tau^T)/(tau^(T-1) - tau^T), and the "
                   "run is (eps, delta)-DP with eps = Phi + 2 sqrt(Phi log(1/delta)) (Bun & Steinke Prop. 1.3); the "
                   "CKS and exact-Gaussian conversions give eps_Gauss <= eps_CKS <= eps."),
        hypotheses=("tau in (0, 1]", "phi^(1) > 0", "delta in (0, 1)", "T >= 1",
                    "every release a Gaussian mechanism (for the exact-Gaussian column)"),
        check=check_corollary,
        expected=Verdict.CONFIRMED,
        reason=("Composed per-round zCDP, the expm1 closed form and the printed expression in 50-digit arithmetic "
                "agree within rounding; the the test vectors reproduce to their printed digits; the converters "
                "are ordered at every sampled point."),
        corrects="zcdp_nfl.corollary_sum_range",
    ),
)
