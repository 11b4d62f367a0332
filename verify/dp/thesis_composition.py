r"""Thesis Chapter 2 composition theorems 2.1-2.4 and the accuracy claim of Section 2.4.5 (docs/papers/dp.md#results,
docs/papers/dp.md#erratum-db-10).

* **Theorem 2.1** (basic :math:`\varepsilon`-DP composition, line 449): checked exactly on products of randomized
  response mechanisms: the largest log-likelihood ratio over all :math:`2^n` joint outputs is
  :math:`\sum_i\varepsilon_i` (the bound holds and is attained: every point is a hardest point).
* **Theorem 2.2** (basic :math:`(\varepsilon,\delta)` composition, line 464): checked on Gaussian mechanisms through
  their exact privacy profiles: a chain of Gaussian mechanisms is the Gaussian mechanism with
  :math:`\mu = (\sum\mu_i^2)^{1/2}` (Dong-Roth-Su; docs/papers/dp.md#composition), so
  :math:`\delta_G(\sum\varepsilon_i; \mu) \le \sum\delta_G(\varepsilon_i; \mu_i)` is the statement at every point.
  Its hardest points: all but one mechanism nearly trivial (:math:`\mu_i, \varepsilon_i \to 0`), where the chain is
  the remaining mechanism and the bound is nearly attained.
* **Theorems 2.3 and 2.4** (zCDP composition, lines 472 and 476, with fedcheck's reading of the garbled
  "M = M_1(x, M_2)"): the Rényi divergence of the joint release :math:`(Y_1, Y_2)`,
  :math:`Y_1 \sim N(q_1(x), \sigma_1^2)`, :math:`Y_2 \sim N(q_2(x; Y_1), \sigma_2^2)`, computed by quadrature over
  :math:`y_1` of :math:`p^\alpha q^{1-\alpha}` times the exact inner Gaussian term; the second query's shift
  :math:`s(y_1)` between neighbours depends on :math:`Y_1` (adaptive, :math:`|s| \le \Delta_2`) or not (2.3). The
  bound :math:`\alpha(\rho_1 + \rho_2)` holds, with equality when :math:`|s| \equiv \Delta_2` (the declared hardest
  points; docs/papers/dp.md#erratum-db-4 for the reading).
* **Section 2.4.5's accuracy claim** (lines 468 and 494: CDP/zCDP give better accuracy than
  :math:`(\varepsilon,\delta)`-DP at identical total
  privacy when several messages are exchanged): the per-round Gaussian noise that meets a total
  :math:`(\varepsilon, \delta)` over :math:`T` rounds under zCDP accounting with the thesis's own conversion (BS16
  Prop. 1.3) against basic :math:`(\varepsilon,\delta)` composition (Theorem 2.2, rounds at
  :math:`(\varepsilon/T, \delta/T)`) with the classical (where valid) and the analytic calibration. The hardest
  points are the fewest messages (T = 2, 3) and small total budgets (:math:`\varepsilon = 0.01, 0.1`), where the
  zCDP conversion's slack weighs most.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import warnings

import numpy as np
from scipy import integrate, optimize, stats

from theory.privacy import (
    approx_dp_to_zcdp_bun_steinke,
    approx_dp_to_zcdp_cks,
    approx_dp_to_zcdp_exact_gaussian,
    gaussian_delta_exact,
    gaussian_sigma_analytic,
    gaussian_sigma_classical,
)
from verify.dp import cite
from verify.evidence import HARD_POINT, report_counterexample, result_from_evidence, sample_evidence
from verify.records import (
    CheckContext,
    CheckResult,
    Citation,
    Claim,
    Evidence,
    FigureSpec,
    Series,
    Verdict,
)
from verify.tolerance import CONVERSION_RTOL, QUAD_EPSREL, UNIT_ROUNDOFF, gamma

__all__ = ["APPROX_HARD_POINTS", "CLAIMS", "adaptive_renyi_divergence", "check_adaptive_composition",
           "check_approx_composition", "check_db10", "check_db10_corrected", "check_pure_composition",
           "check_zcdp_composition", "evaluate_adaptive_composition", "evaluate_approx_composition", "evaluate_db10",
           "evaluate_pure_composition"]

_PROFILE = {"ci": {"batches": 2, "per_batch": 4}, "thorough": {"batches": 8, "per_batch": 12}}


def _hard(evidence: Evidence, label: str) -> Evidence:
    """Mark one point as a declared hardest point (:data:`verify.evidence.HARD_POINT`)."""
    return dataclasses.replace(evidence, parameters={**evidence.parameters, HARD_POINT: label})


# --------------------------------------------------------------------------------------------------
# Theorem 2.1: products of randomized response

def evaluate_pure_composition(epsilons, *, compose=sum) -> Evidence:
    r"""Randomized response with :math:`P(\text{truth}) = e^{\varepsilon_i}/(1 + e^{\varepsilon_i})` per mechanism:
    the exact :math:`\max_o |\log P(o\mid D)/P(o\mid D')|` over all joint outputs (bit vectors; D and D' differ in
    every mechanism's input bit) against ``compose(epsilons)`` (:math:`\sum\varepsilon_i`, Theorem 2.1). Holds when the
    maximum is at most the bound within :math:`\gamma_{4n}` relative; ``attained`` records equality."""
    eps = np.asarray(epsilons, dtype=np.float64)
    log_true = eps - np.logaddexp(0.0, eps)          # log P(report = input)
    log_false = -np.logaddexp(0.0, eps)              # log P(report != input)
    worst = 0.0
    for bits in itertools.product((0, 1), repeat=eps.size):
        b = np.asarray(bits, dtype=bool)              # 1: report equals D's input (hence differs from D')
        ratio = float(np.sum(np.where(b, log_true - log_false, log_false - log_true)))
        worst = max(worst, abs(ratio))
    bound = float(compose(eps.tolist()))
    # each term log_true - log_false is a difference of O(log 2) numbers: their rounding, not eps, sets the scale
    allowance = gamma(8 * eps.size) * float(np.sum(np.abs(log_true) + np.abs(log_false)))
    return Evidence(measured=worst, bound=bound, holds=worst <= bound + allowance,
                    parameters={"epsilons": eps.tolist(), "attained": bool(abs(worst - bound) <= allowance)})


def _pure_batch(rng: np.random.Generator, count: int, compose) -> list[Evidence]:
    return [evaluate_pure_composition(10.0 ** rng.uniform(-3.0, 1.0, int(rng.integers(1, 9))), compose=compose)
            for _ in range(count)]


def check_pure_composition(ctx: CheckContext, *, compose=sum) -> CheckResult:
    p = _PROFILE[ctx.profile]
    evidence = [evaluate_pure_composition([0.1] * 8, compose=compose),
                evaluate_pure_composition([1.0, 2.0], compose=compose)]
    evidence += sample_evidence(ctx, "dp.thesis_theorem2_1", _pure_batch, p["batches"], (p["per_batch"], compose))
    # randomized response is the extremal eps-DP mechanism: every point attains the bound
    evidence = [_hard(e, "randomized response (extremal eps-DP mechanism: the bound is attained)") for e in evidence]
    ns = list(range(1, 9))
    figure = FigureSpec(name="pure_composition",
                        title=r"$n$ randomized-response mechanisms at $\varepsilon = 0.3$ each",
                        xlabel=r"$n$", ylabel="max log-likelihood ratio of the joint output",
                        series=(Series(label="exact (enumeration)", x=ns, style="points",
                                       y=[evaluate_pure_composition([0.3] * n).measured for n in ns]),
                                Series(label=r"Theorem 2.1: $\sum_i \varepsilon_i$", x=ns, y=[0.3 * n for n in ns],
                                       style="dashed")))
    return result_from_evidence("dp.thesis_theorem2_1", evidence, ctx=ctx,
                                quantity=(r"exact $\max_o |\log P(o \mid D)/P(o \mid D')|$ of the joint output vs "
                                          r"$\sum_i \varepsilon_i$"),
                                what=r"$(M_1, \ldots, M_n)$ is $(\sum_i \varepsilon_i)$-DP", figures=[figure],
                                details={"attained_everywhere": all(e.parameters["attained"] for e in evidence)})


# --------------------------------------------------------------------------------------------------
# Theorem 2.2: Gaussian mechanisms through their exact profiles

def evaluate_approx_composition(mus, epsilons) -> Evidence:
    r"""Mechanism i: Gaussian with :math:`\mu_i = \Delta_i/\sigma_i`, exactly :math:`(\varepsilon_i, \delta_i)`-DP with
    :math:`\delta_i = \delta_G(\varepsilon_i; \mu_i)`. The chain is exactly the Gaussian mechanism with
    :math:`\mu = \lVert\mu\rVert_2`; holds when :math:`\delta_G(\sum\varepsilon_i; \mu) \le \sum\delta_i` (within
    CONVERSION_RTOL relative: the profile's own evaluation accuracy)."""
    mus, epsilons = np.asarray(mus, dtype=np.float64), np.asarray(epsilons, dtype=np.float64)
    deltas = [float(gaussian_delta_exact(float(e), float(m))) for e, m in zip(epsilons, mus, strict=True)]
    joint = float(gaussian_delta_exact(float(epsilons.sum()), float(np.linalg.norm(mus))))
    bound = float(sum(deltas))
    return Evidence(measured=joint, bound=bound, holds=joint <= bound * (1.0 + CONVERSION_RTOL) + 1e-300,
                    parameters={"mus": mus.tolist(), "epsilons": epsilons.tolist(), "deltas": deltas,
                                "slack_ratio": joint / bound if bound > 0 else None})


def _approx_batch(rng: np.random.Generator, count: int) -> list[Evidence]:
    out = []
    for _ in range(count):
        n = int(rng.integers(2, 21))
        out.append(evaluate_approx_composition(10.0 ** rng.uniform(-2.0, 0.5, n), 10.0 ** rng.uniform(-2.0, 0.5, n)))
    return out


#: Theorem 2.2's hardest points: all but one mechanism nearly trivial (mu_i and eps_i -> 0, delta_i -> 0), so the chain
#: is the remaining mechanism at a slightly larger eps and sum delta_i is nearly attained; eps_i = 0 (total variation).
APPROX_HARD_POINTS = ((((1e-6, 1.0), (1e-3, 0.5)), "one of two mechanisms nearly trivial (mu_1 = 1e-6, eps_1 = 1e-3)"),
                      (((1e-4, 2.0), (1e-6, 1.0)), "one of two mechanisms nearly trivial (mu_1 = 1e-4, eps_1 = 1e-6)"),
                      (((1e-3, 1.0), (0.0, 0.0)), "eps_i = 0 (total variation), one mechanism nearly trivial"))


def check_approx_composition(ctx: CheckContext) -> CheckResult:
    p = _PROFILE[ctx.profile]
    evidence = [evaluate_approx_composition([0.2] * 10, [0.1] * 10),
                evaluate_approx_composition([1.0, 1.0], [1.0, 1.0])]
    evidence += [_hard(evaluate_approx_composition(mus, eps), label) for (mus, eps), label in APPROX_HARD_POINTS]
    evidence += sample_evidence(ctx, "dp.thesis_theorem2_2", _approx_batch, p["batches"], (p["per_batch"],))
    ks = [1, 2, 5, 10, 20, 50, 100]
    figure = FigureSpec(name="approx_composition",
                        title=r"$k$ Gaussian mechanisms ($\mu = 0.2$, $\varepsilon = 0.1$ each)",
                        xlabel=r"$k$", ylabel=r"$\delta$", xscale="log", yscale="log",
                        series=(Series(label=r"exact $\delta$ of the chain at $\sum_i \varepsilon_i$", x=ks,
                                       y=[max(evaluate_approx_composition([0.2] * k, [0.1] * k).measured, 1e-300)
                                          for k in ks]),
                                Series(label=r"Theorem 2.2: $\sum_i \delta_i$", x=ks, style="dashed",
                                       y=[evaluate_approx_composition([0.2] * k, [0.1] * k).bound for k in ks])))
    return result_from_evidence("dp.thesis_theorem2_2", evidence, ctx=ctx,
                                quantity=(r"exact $\delta$ of the Gaussian chain at $\sum_i \varepsilon_i$ vs "
                                          r"$\sum_i \delta_i$"),
                                what=r"$(M_1, \ldots, M_n)$ is $(\sum_i \varepsilon_i, \sum_i \delta_i)$-DP",
                                figures=[figure])


# --------------------------------------------------------------------------------------------------
# Theorems 2.3 / 2.4: Rényi divergence of a (possibly adaptive) two-step Gaussian chain

_SHIFTS = {"constant": lambda y, d2: d2 * np.ones_like(y), "sign": lambda y, d2: d2 * np.where(y >= 0, 1.0, -1.0),
           "tanh": lambda y, d2: d2 * np.tanh(y), "gated": lambda y, d2: d2 * (np.abs(y) < 1.0)}


def adaptive_renyi_divergence(delta1: float, sigma1: float, delta2: float, sigma2: float, alpha: float,
                              shift: str) -> tuple[float, float]:
    r""":math:`D_\alpha` of the joint :math:`(Y_1, Y_2)` under neighbours, by quadrature over :math:`y_1`.

    .. math::
        D_\alpha = \frac{1}{\alpha-1}\log\int p_1(y)^\alpha q_1(y)^{1-\alpha}
        \exp\Bigl(\frac{(\alpha-1)\alpha\, s(y)^2}{2\sigma_2^2}\Bigr)\,dy,

    :math:`p_1 = N(0, \sigma_1^2)`, :math:`q_1 = N(\Delta_1, \sigma_1^2)`, and the inner factor is the exact Rényi
    integral of :math:`N(0, \sigma_2^2)` vs :math:`N(s(y), \sigma_2^2)` (Bun & Steinke 2016, Lemma 2.4), with the
    shift :math:`s(y)` of the named rule (:math:`|s| \le \Delta_2`). Returns ``(value, error)``: quad's error estimate
    plus the requested relative tolerance, divided by :math:`\alpha - 1`.
    """
    fn = _SHIFTS[shift]

    def log_integrand(y):
        s = float(fn(np.asarray([y]), delta2)[0])
        return (alpha * stats.norm.logpdf(y, 0.0, sigma1) + (1.0 - alpha) * stats.norm.logpdf(y, delta1, sigma1)
                + (alpha - 1.0) * alpha * s * s / (2.0 * sigma2**2))

    mode = optimize.minimize_scalar(lambda y: -log_integrand(y), bracket=(-sigma1, delta1 + sigma1), tol=1e-12).x
    peak = float(log_integrand(mode))
    breaks = sorted({float(mode), 0.0, 1.0, -1.0})
    with warnings.catch_warnings():
        warnings.simplefilter("error", integrate.IntegrationWarning)
        pieces = [(-math.inf, breaks[0]), *itertools.pairwise(breaks), (breaks[-1], math.inf)]
        value, abserr = 0.0, 0.0
        for a, b in pieces:
            v, e = integrate.quad(lambda y: math.exp(log_integrand(y) - peak), a, b, epsabs=0.0, epsrel=QUAD_EPSREL,
                                  limit=200)
            value, abserr = value + v, abserr + e
    log_integral = peak + math.log(value)
    error = (abserr / value + QUAD_EPSREL + 64.0 * UNIT_ROUNDOFF * (abs(peak) + 1.0)) / (alpha - 1.0)
    return log_integral / (alpha - 1.0), error


def evaluate_adaptive_composition(delta1: float, sigma1: float, delta2: float, sigma2: float, alpha: float,
                                  shift: str, *, rho_fn=None) -> Evidence:
    r"""Holds when the joint :math:`D_\alpha \le \alpha(\rho_1 + \rho_2)` (+ the quadrature error),
    :math:`\rho_i = \Delta_i^2/(2\sigma_i^2)` (``rho_fn(delta, sigma)`` to mutate); ``attained`` when equal."""
    rho_fn = rho_fn or (lambda d, s: d * d / (2.0 * s * s))
    value, error = adaptive_renyi_divergence(delta1, sigma1, delta2, sigma2, alpha, shift)
    bound = alpha * (rho_fn(delta1, sigma1) + rho_fn(delta2, sigma2))
    allowance = error * max(1.0, abs(value)) + gamma(8) * bound
    return Evidence(measured=value, bound=bound, holds=value <= bound + allowance,
                    parameters={"delta1": delta1, "sigma1": sigma1, "delta2": delta2, "sigma2": sigma2, "alpha": alpha,
                                "shift": shift, "attained": bool(abs(value - bound) <= allowance),
                                "allowance": allowance})


def _chain_batch(rng: np.random.Generator, count: int, shifts, rho_fn) -> list[Evidence]:
    out = []
    for _ in range(count):
        out.append(evaluate_adaptive_composition(
            float(10.0 ** rng.uniform(-1.0, 0.3)), float(10.0 ** rng.uniform(-0.3, 0.7)),
            float(10.0 ** rng.uniform(-1.0, 0.3)), float(10.0 ** rng.uniform(-0.3, 0.7)),
            float(rng.choice([1.5, 2.0, 4.0, 8.0])), str(rng.choice(shifts)), rho_fn=rho_fn))
    return out


def _chain_check(ctx: CheckContext, claim_id: str, shifts, rho_fn, what: str) -> CheckResult:
    p = _PROFILE[ctx.profile]
    evidence = [evaluate_adaptive_composition(1.0, 2.0, 0.5, 1.0, a, s, rho_fn=rho_fn) for a in (1.5, 4.0)
                for s in shifts]
    evidence += sample_evidence(ctx, claim_id, _chain_batch, p["batches"], (p["per_batch"], tuple(shifts), rho_fn))
    # |s| = Delta_2 everywhere (constant, sign): the joint divergence equals the bound
    evidence = [_hard(e, "|shift| = Delta_2 for every y_1 (the bound is attained)")
                if e.parameters["shift"] in ("constant", "sign") else e for e in evidence]
    alphas = [1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0]
    series = [Series(label=rf"joint $D_\alpha/\alpha$, second query shift: {s}", x=alphas, style="points", group=s,
                     y=[adaptive_renyi_divergence(1.0, 2.0, 0.5, 1.0, a, s)[0] / a for a in alphas]) for s in shifts]
    series.append(Series(label=r"$\rho_1 + \rho_2$", x=(alphas[0], alphas[-1]), y=(0.25, 0.25), style="dashed"))
    figure = FigureSpec(name="chain_renyi",
                        title=r"Two-step Gaussian chain ($\Delta = 1, 0.5$; $\sigma = 2, 1$)",
                        xlabel=r"$\alpha$", ylabel=r"$D_\alpha/\alpha$", series=tuple(series))
    return result_from_evidence(claim_id, evidence, ctx=ctx,
                                quantity=r"joint Rényi divergence by quadrature vs $\alpha(\rho_1 + \rho_2)$",
                                what=what, figures=[figure],
                                details={"attained_for": sorted({e.parameters["shift"] for e in evidence
                                                                 if e.parameters["attained"]})})


def check_zcdp_composition(ctx: CheckContext, *, rho_fn=None) -> CheckResult:
    return _chain_check(ctx, "dp.thesis_theorem2_3", ("constant",), rho_fn,
                        r"$(M_1, M_2)$ is $(\phi_1 + \phi_2)$-zCDP")


def check_adaptive_composition(ctx: CheckContext, *, rho_fn=None) -> CheckResult:
    return _chain_check(ctx, "dp.thesis_theorem2_4", ("sign", "tanh", "gated"), rho_fn,
                        r"$x \mapsto (M_1(x), M_2(x, M_1(x)))$ is $(\phi_1 + \phi_2)$-zCDP")


# --------------------------------------------------------------------------------------------------
# Section 2.4.5 (docs/papers/dp.md#erratum-db-10): zCDP accounting against basic (eps, delta) composition at
# identical total privacy

_CONVERSIONS = {"bun_steinke": approx_dp_to_zcdp_bun_steinke, "cks": approx_dp_to_zcdp_cks,
                "exact_gaussian": approx_dp_to_zcdp_exact_gaussian}


def evaluate_db10(epsilon: float, delta: float, rounds: int, *, conversion: str = "bun_steinke") -> Evidence:
    r"""Per-round noise :math:`\sigma` (unit sensitivity) meeting a total :math:`(\varepsilon, \delta)` over ``rounds``
    Gaussian releases: zCDP accounting (:math:`\sigma_z = (2\rho/T)^{-1/2}`, :math:`\rho` from ``conversion``) against
    basic composition (Theorem 2.2) with rounds at :math:`(\varepsilon/T, \delta/T)` and the analytic calibration (the
    smallest valid :math:`(\varepsilon,\delta)` noise; the classical one, where :math:`\varepsilon/T < 1`, is recorded).
    ``measured`` = :math:`\sigma_z/\sigma_{(\varepsilon,\delta)}` (below 1: zCDP needs less noise, i.e. better
    accuracy)."""
    rho = float(_CONVERSIONS[conversion](epsilon, delta))
    sigma_z = 1.0 / math.sqrt(2.0 * rho / rounds)
    sigma_a = float(gaussian_sigma_analytic(1.0, epsilon / rounds, delta / rounds))
    sigma_c = float(gaussian_sigma_classical(1.0, epsilon / rounds, delta / rounds)) if epsilon / rounds < 1 else None
    ratio = sigma_z / sigma_a
    return Evidence(measured=ratio, bound=1.0, holds=ratio < 1.0,
                    parameters={"epsilon": epsilon, "delta": delta, "rounds": rounds, "conversion": conversion,
                                "sigma_zcdp": sigma_z, "sigma_basic_analytic": sigma_a,
                                "sigma_basic_classical": sigma_c})


DB10_GRID = {"epsilon": (0.01, 0.1, 0.5, 1.0, 4.0, 10.0), "delta": (1e-3, 1e-5, 1e-8), "rounds": (2, 3, 10, 100, 1000)}
#: The comparison is hardest with the fewest messages and the smallest total budgets (the zCDP conversion's additive
#: slack weighs most there).
DB10_HARD = {"rounds": (2, 3), "epsilon": (0.01, 0.1)}


def _db10_hard(evidence: Evidence) -> Evidence:
    p = evidence.parameters
    labels = [f"T = {p['rounds']} (fewest messages)"] if p["rounds"] in DB10_HARD["rounds"] else []
    labels += [f"eps = {p['epsilon']:g} (small total budget)"] if p["epsilon"] in DB10_HARD["epsilon"] else []
    return _hard(evidence, ", ".join(labels)) if labels else evidence


def check_db10(ctx: CheckContext, *, corrected: bool = False) -> CheckResult:
    """The grid with the thesis's conversion (BS16); ``corrected``: exact accounting of the Gaussian releases (exact
    Gaussian conversion) on a wider grid, eps in [0.01, 20], delta in {0.1, 1e-3, 1e-5, 1e-12}, T >= 2."""
    claim_id = "dp.thesis_db10_corrected" if corrected else "dp.thesis_db10"
    cells = [(e, d, t) for e in DB10_GRID["epsilon"] for d in DB10_GRID["delta"] for t in DB10_GRID["rounds"]]
    if corrected:
        wide = [(float(e), d, t) for e in np.geomspace(0.01, 20.0, 12) for d in (0.1, 1e-3, 1e-5, 1e-12)
                for t in DB10_GRID["rounds"]]
        evidence = [_db10_hard(evaluate_db10(e, d, t, conversion="exact_gaussian")) for e, d, t in wide]
    else:
        evidence = [_db10_hard(evaluate_db10(e, d, t)) for e, d, t in cells]
    single = [evaluate_db10(e, 1e-5, 1) for e in DB10_GRID["epsilon"]]
    tighter = {c: max(evaluate_db10(e, 1e-5, t, conversion=c).measured for e in DB10_GRID["epsilon"]
                      for t in DB10_GRID["rounds"]) for c in ("cks", "exact_gaussian")}
    ts = [1, 2, 3, 5, 10, 30, 100, 300, 1000]
    figure = FigureSpec(
        name="db10_noise_ratio", title=(r"Per-round noise, zCDP (BS16 conversion) / basic $(\varepsilon, \delta)$ "
                                        r"composition, $\delta = 10^{-5}$"),
        xlabel=r"rounds $T$", ylabel=r"$\sigma_{\mathrm{zCDP}}/\sigma_{\mathrm{basic}}$", xscale="log", yscale="log",
        series=tuple(Series(label=rf"$\varepsilon = {e:g}$", x=ts, y=[evaluate_db10(e, 1e-5, t).measured for t in ts])
                     for e in DB10_GRID["epsilon"]) + (Series(label="equal accuracy", x=(1, 1000), y=(1.0, 1.0),
                                                              style="dashed"),))
    violated_by_rounds = {t: sum(not e.holds for e in evidence if e.parameters["rounds"] == t)
                          for t in DB10_GRID["rounds"]}
    result = result_from_evidence(
        claim_id, evidence, ctx=ctx,
        quantity=(r"$\sigma_{\mathrm{zCDP}}/\sigma_{(\varepsilon,\delta)}$ per round at the same total "
                  r"$(\varepsilon, \delta)$ ($< 1$: zCDP more accurate)"),
        what=r"zCDP accounting needs less noise than $(\varepsilon, \delta)$ composition for $T \ge 2$ messages",
        figures=[figure],
        details={"grid": DB10_GRID, "conversion": ("exact Gaussian profile of the composed releases" if corrected
                                                   else "Bun-Steinke Prop. 1.3 (the thesis's own, line 608)"),
                 "single_message_ratio_T1": {f"{e.parameters['epsilon']:g}": e.measured for e in single},
                 "max_ratio_with_tighter_conversions_delta_1e-5": tighter,
                 "violated_cells_by_rounds": violated_by_rounds})
    failing = [e for e in evidence if not e.holds]
    if not failing:
        return result
    # the most messages at which zCDP accounting still needs more noise: unambiguously "several" messages
    chosen = max(failing, key=lambda e: (e.parameters["rounds"], e.measured))
    return report_counterexample(result, chosen, f"the most messages among the violating cells, T = "
                                                 f"{chosen.parameters['rounds']}")


def check_db10_corrected(ctx: CheckContext) -> CheckResult:
    return check_db10(ctx, corrected=True)


def reproduce_db10(counterexample) -> Evidence:
    """Re-evaluate the noise ratio at a recorded cell (keys epsilon, delta, rounds, conversion)."""
    c = counterexample
    return evaluate_db10(c["epsilon"], c["delta"], c["rounds"], conversion=c.get("conversion", "bun_steinke"))


# --------------------------------------------------------------------------------------------------

def _reason_chain(extra: str) -> str:
    return (r"The joint Rényi divergence of the two-step Gaussian chain, by quadrature over $y_1$ with the inner "
            r"Gaussian term exact, never exceeds $\alpha(\rho_1 + \rho_2)$ on the grid and random points, and equals "
            r"it when the second query's shift has constant magnitude $\Delta_2$. " + extra)


CLAIMS = (
    Claim(
        id="dp.thesis_theorem2_1",
        title=r"Thesis Theorem 2.1: basic composition of $\varepsilon_i$-DP mechanisms is $(\sum_i \varepsilon_i)$-DP",
        citations=(cite("Theorem 2.1 (basic composition)", lines="447-449"),
                   Citation(external="Dwork & Roth 2014", label="Theorem 3.14 / Corollary 3.15")),
        statement=(r"If $M_i$ is $\varepsilon_i$-DP, $i = 1, \ldots, n$, then $M = (M_1, \ldots, M_n)$ is "
                   r"$(\sum_i \varepsilon_i)$-DP."),
        hypotheses=("independent mechanisms on the same data set", "replace-one neighbours",
                    r"randomized response with $\varepsilon_i \in [10^{-3}, 10]$, $n \le 8$ (exact enumeration of "
                    r"$2^n$ outputs)"),
        check=check_pure_composition, expected=Verdict.CONFIRMED,
        reason=(r"Exact enumeration: the largest log-likelihood ratio of the joint output equals "
                r"$\sum_i \varepsilon_i$ to rounding (the bound holds and is attained at every point: randomized "
                r"response is the extremal $\varepsilon$-DP mechanism); the thesis's citation numbering "
                "(docs/papers/dp.md#erratum-db-5) does not change the content."),
    ),
    Claim(
        id="dp.thesis_theorem2_2",
        title=(r"Thesis Theorem 2.2: basic composition of $(\varepsilon_i, \delta_i)$-DP mechanisms is "
               r"$(\sum_i \varepsilon_i, \sum_i \delta_i)$-DP"),
        citations=(cite("Theorem 2.2 (basic composition)", lines="462-464"),
                   Citation(external="Dwork & Roth 2014", label="Theorem 3.16")),
        statement=(r"If $M_i$ is $(\varepsilon_i, \delta_i)$-DP then $(M_1, \ldots, M_n)$ is "
                   r"$(\sum_i \varepsilon_i, \sum_i \delta_i)$-DP."),
        hypotheses=(r"the standard additive-$\delta$ definition (the thesis's eq. (2.6) as printed is not it)",
                    (r"Gaussian mechanisms with $\mu_i \in [0.01, 3.2]$, $\varepsilon_i \in [0.01, 3.2]$, "
                     r"$n \in \{2, \ldots, 20\}$, $\delta_i$ their exact profile values")),
        check=check_approx_composition, expected=Verdict.CONFIRMED,
        reason=(r"A chain of Gaussian mechanisms is exactly the Gaussian mechanism with $\mu = \|\mu\|_2$, so its "
                r"exact $\delta$ at $\sum_i \varepsilon_i$ is computable; it stays below $\sum_i \delta_i$ "
                r"everywhere. The bound is nearly tight at its hardest points, all but one mechanism nearly trivial "
                r"(ratio 0.9999 at $\mu = (10^{-4}, 2)$, $\varepsilon = (10^{-6}, 1)$), and far below it for many "
                r"small releases (0.06 for ten releases at $\mu = 0.2$, $\varepsilon = 0.1$), which is the point of "
                "Section 2.4.5 (docs/papers/dp.md#erratum-db-10)."),
    ),
    Claim(
        id="dp.thesis_theorem2_3",
        title=r"Thesis Theorem 2.3: zCDP composes additively, $\phi_1 + \phi_2$",
        citations=(cite("Theorem 2.3 (zCDP composition)", lines="472"),
                   Citation(external="Bun & Steinke 2016 (arXiv:1605.02065)", label="Lemma 1.7 / Lemma 2.3")),
        statement=(r"If $M_1$ is $\phi_1$-zCDP and $M_2$ is $\phi_2$-zCDP then $(M_1, M_2)$ is "
                   r"$(\phi_1 + \phi_2)$-zCDP."),
        hypotheses=(r"Gaussian mechanisms with $\Delta_i \in [0.1, 2]$, $\sigma_i \in [0.5, 5]$",
                    r"$\alpha \in \{1.5, 2, 4, 8\}$", "the second release independent of the first"),
        check=check_zcdp_composition, expected=Verdict.CONFIRMED,
        reason=_reason_chain("For independent Gaussian releases the joint divergence is exactly the sum (attained)."),
    ),
    Claim(
        id="dp.thesis_theorem2_4",
        title=(r"Thesis Theorem 2.4 (adaptive composition, as intended): $x \mapsto M_2(x, M_1(x))$ is "
               r"$(\phi_1 + \phi_2)$-zCDP"),
        citations=(cite("Theorem 2.4 (adaptive composition)", lines="474-478"),
                   Citation(external="Bun & Steinke 2016 (arXiv:1605.02065)", label="Lemma 2.3")),
        statement=(r"Printed '$M = M_1(x, M_2)$'; read as Bun & Steinke's Lemma 2.3: if $M_1(x)$ is $\phi_1$-zCDP "
                   r"and $M_2(x, y)$ is $\phi_2$-zCDP in $x$ for every fixed $y$, then "
                   r"$x \mapsto (M_1(x), M_2(x, M_1(x)))$ is $(\phi_1 + \phi_2)$-zCDP."),
        hypotheses=((r"Gaussian $M_1$; Gaussian $M_2$ whose query shift between neighbours depends on $y_1$ "
                     r"($\mathrm{sign}(y_1)$, $\tanh(y_1)$, or gated by $|y_1| < 1$) with $|\mathrm{shift}| \le "
                     r"\Delta_2$"), r"$\alpha \in \{1.5, 2, 4, 8\}$"),
        check=check_adaptive_composition, expected=Verdict.CONFIRMED,
        reason=_reason_chain(r"The printed form $M_1(x, M_2)$ does not type-check under the hypotheses ($M_1$ takes no "
                             r"second argument); the verdict is on the reading $x \mapsto (M_1(x), M_2(x, M_1(x)))$ "
                             "(docs/papers/dp.md#erratum-db-4), the only one with content, and the garbling is a "
                             "notational slip rather than a false statement."),
    ),
    Claim(
        id="dp.thesis_db10",
        title=(r"Thesis Section 2.4.3: zCDP accounting gives better accuracy than $(\varepsilon, \delta)$-DP at the "
               "same total privacy over several messages"),
        citations=(cite("Section 2.4.3 (CDP 'to enable better accuracy under an identical privacy budget')",
                        lines="468"), cite("Chapter 2 summary", lines="494")),
        statement=(r"At an identical total $(\varepsilon, \delta)$ guarantee for $T \ge 2$ Gaussian releases, "
                   "accounting with zCDP (composition Theorem 2.3, conversion BS16 Prop. 1.3 as the thesis uses it) "
                   r"requires less noise per release, hence better accuracy, than accounting with "
                   r"$(\varepsilon, \delta)$-DP and basic composition (Theorem 2.2)."),
        hypotheses=("per-round Gaussian releases of unit sensitivity",
                    (r"$(\varepsilon, \delta)$ baseline: rounds at $(\varepsilon/T, \delta/T)$ with the analytic "
                     "(smallest valid) calibration"),
                    (r"grid $\varepsilon \in \{0.5, 1, 4, 10\}$, $\delta \in \{10^{-3}, 10^{-5}, 10^{-8}\}$, "
                     r"$T \in \{2, 3, 10, 100, 1000\}$")),
        check=check_db10, expected=Verdict.REFUTED,
        reason=(r"Exact arithmetic (no Monte Carlo): with the thesis's own conversion (BS16) zCDP accounting needs "
                r"more noise per release than basic $(\varepsilon, \delta)$ composition with the analytic "
                r"calibration at 11 of the 90 grid cells, and not only for two messages: at $T = 10$ messages, "
                r"$\delta = 10^{-3}$, $\varepsilon = 0.01$ it needs 25 % more (the reported counterexample, where "
                r"'several messages' is not in doubt), at $T = 3$ 129 % ($\varepsilon = 0.01$) and 25 % "
                r"($\varepsilon = 0.1$) more, at $T = 2$, $\varepsilon = 0.5$ 18 % more. These are the declared "
                r"hardest cells, few messages and small total budgets, where the conversion's additive slack "
                r"$2\sqrt{\rho\log(1/\delta)}$ weighs most; elsewhere zCDP needs less, down to ~0.04 of the noise "
                r"at $T = 1000$ (the gain grows like $\sqrt{T}$); for one release the $(\varepsilon, \delta)$ "
                r"calibration always wins. With the classical calibration instead (fedcheck's default for the "
                r"thesis's baseline, docs/papers/dp.md#choice-eps-delta-calibration, valid only where "
                r"$\varepsilon/T < 1$) the comparison moves in zCDP's favour (sigma_basic_classical in the details): "
                r"the verdict is for the smallest valid $(\varepsilon, \delta)$ noise, since the claim compares the "
                "privacy notions. It is a property of the accounting, not a theorem "
                "(docs/papers/dp.md#erratum-db-10)."),
        severity="correction_as_useful", reproduce=reproduce_db10, corrected_by="dp.thesis_db10_corrected",
    ),
    Claim(
        id="dp.thesis_db10_corrected",
        title=(r"Section 2.4.3 corrected: with exact accounting of Gaussian releases, zCDP-style composition never "
               r"needs more noise than basic $(\varepsilon, \delta)$ composition, and needs less for $T \ge 2$"),
        citations=(cite("Section 2.4.3", lines="468"), cite("Chapter 2 summary", lines="494"),
                   Citation(external="Balle & Wang 2018; Dong, Roth & Su 2022", label="exact Gaussian profile; "
                            "composition of Gaussian mechanisms")),
        statement=(r"For $T$ Gaussian releases of unit sensitivity and a total $(\varepsilon, \delta)$ target, "
                   r"composing them exactly (zCDP/GDP: the chain is the Gaussian mechanism with "
                   r"$\mu = \sqrt{T}/\sigma$) and converting with the exact Gaussian profile needs no more noise per "
                   r"release than basic composition (Theorem 2.2) at $(\varepsilon/T, \delta/T)$ with the analytic "
                   r"calibration, and strictly less when $T \ge 2$. With the thesis's BS16 conversion (or CKS) this "
                   r"fails for small $T$ at small $\varepsilon$ and large $\delta$."),
        hypotheses=("per-round Gaussian releases of unit sensitivity",
                    (r"$\varepsilon \in [0.01, 20]$, $\delta \in \{0.1, 10^{-3}, 10^{-5}, 10^{-12}\}$, "
                     r"$T \in \{2, 3, 10, 100, 1000\}$")),
        check=check_db10_corrected, expected=Verdict.CONFIRMED,
        reason=(r"'No more' is proved: basic composition's $\sigma$ makes the joint release $(\varepsilon, \delta)$-DP "
                r"(Theorem 2.2), and the exact profile of the composed Gaussian gives the smallest $\sigma$ that does. "
                r"'Strictly less for $T \ge 2$' is checked: the ratio is at most ~0.88 on the grid, reached at the "
                r"declared hardest cells ($T = 2$), so the comparison is nearly tight there. Hypothesis found the BS16 "
                r"conversion failing at $T = 3$ ($\varepsilon = 0.25$, $\delta = 10^{-3}$: ratio 1.066) and CKS at "
                r"$T = 2$ ($\varepsilon = 0.01$, $\delta = 0.1$: 1.065), so the conversion matters "
                "(docs/papers/dp.md#erratum-db-10)."),
        corrects="dp.thesis_db10",
    ),
)
