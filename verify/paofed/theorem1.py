r"""Theorem 1 (P4 (22), Ch. Theorem 4.1 (4.22)): PAO-Fed converges in mean iff :math:`0 < \mu < 2/\lambda_{\max}`.

Findings (erratum E7, docs/papers/paofed.md#erratum-e7, erratum E8 (docs/papers/paofed.md#erratum-e8),
docs/papers/paofed.md#expectations):

* not necessary: the exact threshold of :math:`\rho(\mathcal M(\mu)) = 1`,
  :math:`\mathcal M(\mu) = E[B_e](I - \mu R_e)E[A_e]`, is :math:`2.0856/\lambda_{\max}` on the reference
  instance (docs/papers/paofed.md#instance-reference); the proof's block-max-norm argument only gives :math:`\le 1` on
  the full state;
* not sufficient without a condition on :math:`\alpha_l` ("no assumption on alpha_l", line 2661, is
  wrong): with m = D, :math:`\alpha_l = 1`, p = 1, delta = 0.8, l_max = 5 (K = 4, D = 5),
  :math:`E[B_n] = -1.39I` and :math:`\rho(\mathcal M(\mu)) \ge 1.116` for every :math:`\mu`.

Corrected statement (``paofed.theorem1_sufficient``): if
:math:`p_m\sum_l\alpha_lP(\mathcal K_{n,l} \ne \emptyset) \le 1` (i.e. :math:`E[B_n] \succeq 0`) and every
:math:`R_k \succ 0`, then :math:`\rho(\mathcal M(\mu)) < 1` for :math:`0 < \mu < 2/\lambda_{\max}` (sufficiency only).
"""

from __future__ import annotations

import numpy as np

from theory.msd import (
    AnalysisMoments,
    PAOFedInstance,
    analysis_moments,
    beta_moments,
    expected_server_weight,
    mean_operator,
    reference_instance,
    spectral_radius_M,
    threshold_bracket,
)
from theory.msd.expectations import nonempty_group_probability
from verify.evidence import HARD_POINT, result_from_evidence, sample_evidence
from verify.paofed._common import (
    cite,
    e8_instance,
    instance_from_dict,
    instance_space,
    instance_to_dict,
    scale_staleness_weights,
)
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import THRESHOLD_RTOL, gamma

__all__ = ["CLAIMS", "HARD_LABEL", "HARD_STEPS", "boundary_configurations", "boundary_instance", "check_theorem1",
           "check_theorem1_sufficient", "evaluate_mean_iff", "evaluate_mean_sufficient", "paper_scale_mean_radius"]

ID_IFF = "paofed.theorem1"
ID_SUFF = "paofed.theorem1_sufficient"
_PROFILE = {"ci": {"batches": 2, "per_batch": 8, "grid": 12, "iff_random": 2},
            "thorough": {"batches": 10, "per_batch": 20, "grid": 40, "iff_random": 12}}


def _rho_dense(M) -> float:
    M = M.toarray() if hasattr(M, "toarray") else np.asarray(M)
    return float(np.max(np.abs(np.linalg.eigvals(M))))


def _default_mean_matrix(moments, mu):
    return mean_operator(moments, mu)


def evaluate_mean_iff(params, *, mean_matrix_fn=_default_mean_matrix) -> Evidence:
    r"""Does the exact mean-stability region equal Theorem 1's :math:`(0, 2/\lambda_{\max})`?

    ``measured`` = :math:`|\mu^\star\lambda_{\max} - 2|/2` (relative distance of the certified threshold
    bracket's midpoint from :math:`2/\lambda_{\max}`); ``bound`` = the brackets' relative tolerance
    ``THRESHOLD_RTOL``. The "iff" holds only if the bracket contains :math:`2/\lambda_{\max}`. An instance
    with no stable step size (bracket (0, 1e-4/lambda_max)) gives ``measured`` about 1.
    """
    inst = instance_from_dict(params)
    m = analysis_moments(inst)
    lam = m.lambda_max

    def rho(mu):
        return _rho_dense(mean_matrix_fn(m, mu))

    br = threshold_bracket(rho, lam, start=2.0 / lam, rtol=THRESHOLD_RTOL)
    bound_mu = 2.0 / lam
    holds = br.contains(bound_mu)
    measured = abs(br.estimate - bound_mu) / bound_mu
    return Evidence(measured=measured, bound=THRESHOLD_RTOL, holds=holds,
                    parameters={**instance_to_dict(inst), "threshold_bracket_times_lambda_max": list(br.scaled()),
                                "rho_at_ends": [br.rho_lo, br.rho_hi], "E[B_n]": expected_server_weight(m),
                                "rho_M_at_mu": rho(inst.mu), "paper_bound_times_lambda_max": 2.0})


def evaluate_mean_sufficient(params, grid: int = 12, *, mean_matrix_fn=_default_mean_matrix,
                             steps=None) -> Evidence:
    r""":math:`\max\rho(\mathcal M(\mu))` over :math:`\mu\lambda_{\max} \in [0.05, 1.999]` (``grid`` points), or
    over the given ``steps`` (values of :math:`\mu\lambda_{\max}`).

    Holds when :math:`\rho + \gamma_{N^2}\lVert\mathcal M\rVert_F < 1` (dense QR eigenvalues; backward error
    of order :math:`\gamma_{N^2}\lVert\mathcal M\rVert_F`).
    """
    inst = instance_from_dict(params)
    m = analysis_moments(inst)
    lam = m.lambda_max
    worst, worst_mu, allowance = 0.0, 0.0, 0.0
    for f in (np.linspace(0.05, 1.999, int(grid)) if steps is None else steps):
        M = mean_matrix_fn(m, f / lam)
        Md = M.toarray() if hasattr(M, "toarray") else np.asarray(M)
        r = _rho_dense(Md)
        a = gamma(Md.shape[0] ** 2) * float(np.linalg.norm(Md))
        if r + a > worst + allowance:
            worst, worst_mu, allowance = r, f, a
    return Evidence(measured=worst + allowance, bound=1.0, holds=worst + allowance < 1.0,
                    parameters={**instance_to_dict(inst), "max_rho_M": worst, "at_mu_times_lambda_max": worst_mu,
                                "E[B_n]": expected_server_weight(m),
                                "grid_points": int(grid) if steps is None else len(steps)})


def paper_scale_mean_radius(mu_times_lambda: float, alpha_kind: str = "0.2^l") -> float:
    r""":math:`\rho(\mathcal M)` at the paper's configuration with a common white :math:`R = \lambda I`.

    K = 256 in four availability groups p in {0.25, 0.1, 0.025, 0.005}, m/D = 4/200, delta = 0.2,
    l_max = 10, alpha_l = 0.2^l (C2/U2) or 1 (C1/U1) (seed lines 1095-1107, 2801-2823). With
    :math:`R_k = \lambda I` every coordinate is the same scalar problem (:math:`D = 1`, :math:`p_m = 0.02`).
    """
    K, L = 256, 10
    p = np.repeat([0.25, 0.1, 0.025, 0.005], 64)
    alpha = 0.2 ** np.arange(L + 1) if alpha_kind == "0.2^l" else np.ones(L + 1)
    bb, second = beta_moments(p, 0.2, alpha, L)
    lam = 1.02
    m = AnalysisMoments(K=K, D=1, l_max=L, p=p, p_m=4 / 200, Pi=np.array([[4 / 200]]), beta_bar=bb,
                        beta_second=second, R=np.full((K, 1, 1), lam), sigma2_eta=np.full(K, 0.01),
                        w_star=np.ones(1), mu=mu_times_lambda / lam)
    return spectral_radius_M(m)


def _mean_figure(grid: int) -> FigureSpec:
    ref = reference_instance()
    e8 = e8_instance()
    x = np.linspace(0.0, 2.3, grid)
    series = [Series(label="reference instance (docs/papers/paofed.md#instance-reference)", x=x,
                     y=[spectral_radius_M(ref, f / ref.lambda_max)
                                                                   for f in x]),
              Series(label="erratum E8 (docs/papers/paofed.md#erratum-e8): m = D, alpha_l = 1, p = 1, delta = 0.8, "
                           "l_max = 5", x=x,
                     y=[spectral_radius_M(e8, f / e8.lambda_max) for f in x]),
              Series(label="rho = 1", x=(0.0, 2.3), y=(1.0, 1.0), style="dashed"),
              Series(label="Theorem 1 bound 2/lambda_max", x=(2.0, 2.0), y=(0.5, 1.3), style="dashed")]
    return FigureSpec(name="mean_spectral_radius", title="Spectral radius of the mean matrix M(mu)",
                      xlabel="mu lambda_max", ylabel="rho(M(mu))", series=tuple(series))


def boundary_instance(params) -> PAOFedInstance:
    r"""The instance ``params`` with :math:`\alpha_0 = 1` and :math:`\alpha_{l \ge 1}` set to one common value in
    [0, 1] (the paper's range of the staleness weights) so that :math:`p_m\sum_l\alpha_lP(\mathcal K_{n,l} \ne
    \emptyset) = 1 - 10^{-9}`, i.e. :math:`E[B_n] = 10^{-9}`: the boundary of the corrected Theorem 1's hypothesis
    :math:`E[B_n] \succeq 0`. ValueError if the boundary is out of reach (l_max = 0, or E[B_n] > 0 at every
    :math:`\alpha_l \le 1`)."""
    inst = instance_from_dict(params)
    p_m = inst.m / inst.D
    P = nonempty_group_probability(inst.p, inst.delta, inst.l_max)
    if inst.l_max < 1 or p_m * float(np.sum(P)) < 1.0 - 1e-9:
        raise ValueError(f"E[B_n] = 0 is out of reach with alpha_l in [0, 1]: p_m sum_l P_l = {p_m * np.sum(P)!r} "
                         f"(l_max = {inst.l_max!r}); it must be >= 1")
    alpha = scale_staleness_weights(inst.p, inst.delta, np.ones(inst.l_max + 1), p_m)
    return instance_from_dict({**instance_to_dict(inst), "alpha": alpha.tolist()})


#: The declared hardest points of the corrected Theorem 1 (``verify.evidence.HARD_POINT``): the boundary E[B_n] = 0 of
#: its hypothesis (the erratum E8 (docs/papers/paofed.md#erratum-e8) configuration and the reference instance with m =
#: D, their staleness weights scaled onto it), each at the upper end of the step range, mu lambda_max in HARD_STEPS,
#: just below the certified 2/lambda_max. (At the lower end rho(M(mu)) -> 1 as mu -> 0 on every instance, M(0) =
#: E[B_e]E[A_e] keeping the consensus direction, so a ratio near 1 there is automatic and says nothing about the
#: step-size bound.)
HARD_STEPS = (1.9, 1.99, 1.999)
HARD_LABEL = "E[B_n] = 1e-9 (boundary of E[B_n] >= 0), mu lambda_max in 1.9-1.999"


def boundary_configurations() -> tuple[tuple[str, PAOFedInstance], ...]:
    """Two configurations moved onto E[B_n] = 0 (:func:`boundary_instance`):
    erratum E8 (docs/papers/paofed.md#erratum-e8), the reference instance with m = D."""
    ref = instance_to_dict(reference_instance())
    return (("erratum E8 configuration", boundary_instance(instance_to_dict(e8_instance()))),
            ("reference instance with m = D", boundary_instance({**ref, "m": ref["D"]})))


def _hard_points(grid: int, mean_matrix_fn) -> list[Evidence]:
    e = evaluate_mean_sufficient(instance_to_dict(reference_instance()), grid, mean_matrix_fn=mean_matrix_fn,
                                 steps=HARD_STEPS)
    out = [Evidence(measured=e.measured, bound=e.bound, holds=e.holds,
                    parameters={**e.parameters, HARD_POINT: "reference instance: mu lambda_max in 1.9-1.999"})]
    for name, inst in boundary_configurations():
        e = evaluate_mean_sufficient(instance_to_dict(inst), grid, mean_matrix_fn=mean_matrix_fn, steps=HARD_STEPS)
        out.append(Evidence(measured=e.measured, bound=e.bound, holds=e.holds,
                            parameters={**e.parameters, HARD_POINT: f"{name}: {HARD_LABEL}"}))
    return out


def _iff_batch(rng: np.random.Generator, count: int, mean_matrix_fn) -> list[Evidence]:
    return [evaluate_mean_iff(instance_space.sample(rng), mean_matrix_fn=mean_matrix_fn)
            for _ in range(count)]


def check_theorem1(ctx: CheckContext, *, mean_matrix_fn=_default_mean_matrix) -> CheckResult:
    """The reference instance, the erratum E8 (docs/papers/paofed.md#erratum-e8) instance and random small instances
    with E[B_n] >= 0."""
    prof = _PROFILE[ctx.profile]
    evidence = [evaluate_mean_iff(instance_to_dict(reference_instance()), mean_matrix_fn=mean_matrix_fn),
                evaluate_mean_iff(instance_to_dict(e8_instance()), mean_matrix_fn=mean_matrix_fn)]
    evidence += sample_evidence(ctx, ID_IFF, _iff_batch, 1, (prof["iff_random"], mean_matrix_fn))
    e8 = e8_instance()
    R_variants = {"docs/papers/paofed.md#instance-reference R_k": e8.R, "R_k = I": np.stack([np.eye(5)] * 4),
                  "R_k = 0.5 I": np.stack([0.5 * np.eye(5)] * 4)}
    e8_rho = {name: spectral_radius_M(e8_instance(R), 0.05) for name, R in R_variants.items()}
    details = {"reference_threshold_times_lambda_max": evidence[0].parameters["threshold_bracket_times_lambda_max"],
               "E8": {"E[B_n]": expected_server_weight(e8), "rho_M_at_mu_0.05": e8_rho,
                      "rho_M_at_mu_0": spectral_radius_M(e8, 0.0)},
               "paper_scale_common_white_R": {f"alpha={a}": {f"mu lambda_max={f}": paper_scale_mean_radius(f, a)
                                                              for f in (2.0, 2.2)} for a in ("0.2^l", "1")}}
    return result_from_evidence(
        ID_IFF, evidence, ctx=ctx, quantity="|mu*_mean lambda_max - 2| / 2 vs the threshold bracket's relative "
                                            "tolerance",
        what="exact mean-stability threshold = 2/lambda_max", figures=[_mean_figure(prof["grid"])],
        corrected_claim=ID_SUFF, details=details, form="identity",
        form_reason="an equality of regions: the certified threshold of rho(M(mu)) = 1 against 2/lambda_max, to the "
                    "bracket's relative tolerance (the 'iff' of Theorem 1)")


def reproduce_theorem1(counterexample) -> Evidence:
    """Recompute the certified threshold bracket of the counterexample instance."""
    return evaluate_mean_iff(counterexample)


def _suff_batch(rng: np.random.Generator, count: int, grid: int, mean_matrix_fn) -> list[Evidence]:
    return [evaluate_mean_sufficient(instance_space.sample(rng), grid, mean_matrix_fn=mean_matrix_fn)
            for _ in range(count)]


def check_theorem1_sufficient(ctx: CheckContext, *, mean_matrix_fn=_default_mean_matrix) -> CheckResult:
    """Random small instances with p_m sum_l alpha_l P(K_l != 0) <= 1 built in, plus the reference instance."""
    prof = _PROFILE[ctx.profile]
    evidence = [evaluate_mean_sufficient(instance_to_dict(reference_instance()), prof["grid"],
                                         mean_matrix_fn=mean_matrix_fn, steps=np.linspace(0.05, 1.8, prof["grid"]))]
    evidence += _hard_points(prof["grid"], mean_matrix_fn)
    evidence += sample_evidence(ctx, ID_SUFF, _suff_batch, prof["batches"],
                                (prof["per_batch"], prof["grid"], mean_matrix_fn))
    worst = max(evidence, key=lambda e: e.parameters["max_rho_M"])
    inst = instance_from_dict(worst.parameters)
    x = np.linspace(0.0, 2.3, prof["grid"] + 1)
    figure = FigureSpec(
        name="worst_instance_mean_radius", title="rho(M(mu)) of the sampled instance closest to instability",
        xlabel="mu lambda_max", ylabel="rho(M(mu))",
        series=(Series(label="rho(M(mu))", x=x, y=[spectral_radius_M(inst, f / inst.lambda_max) for f in x]),
                Series(label="rho = 1", x=(0.0, 2.3), y=(1.0, 1.0), style="dashed"),
                Series(label="2/lambda_max", x=(2.0, 2.0), y=(0.5, 1.2), style="dashed")))
    return result_from_evidence(
        ID_SUFF, evidence, ctx=ctx, quantity="max over mu lambda_max in [0.05, 1.999] of rho(M(mu)) + rounding "
                                             "allowance",
        what="E[B_n] >= 0 and R_k > 0 => rho(M(mu)) < 1 for 0 < mu < 2/lambda_max", figures=[figure],
        details={"max_rho": worst.parameters["max_rho_M"]})


_CITES = (cite("P4 Theorem 1", equation="(22)", lines="2667-2670"), cite("P4 proof of Theorem 1", lines="2672-2694"),
          cite("Ch. Theorem 4.1", equation="(4.22)", lines="988-991"),
          cite("P4 'no assumption on alpha_l'", lines="2661"))

CLAIMS = (
    Claim(
        id=ID_IFF,
        paper="paofed",
        title="Theorem 1: convergence in mean iff 0 < mu < 2 / max lambda(R_k)",
        citations=_CITES,
        statement=("Let Assumptions 1-4 hold. Then PAO-Fed converges in mean if and only if "
                   "0 < mu < 2 / max_{k,i} lambda_i(R_k), with no assumption on the staleness weights alpha_l."),
        hypotheses=("Assumptions 1-4 (P4 lines 2651-2659) and the analysis model "
                    "I1-I5 (docs/papers/paofed.md#assumptions)",
                    "mean recursion E[w~_{e,n+1}] = E[B_e](I - mu R_e)E[A_e] E[w~_{e,n}] (P4 (24))",
                    "any alpha_l (line 2661)"),
        check=check_theorem1,
        expected=Verdict.REFUTED,
        reason=("Neither direction holds in general. Not necessary: the reference "
                "instance (docs/papers/paofed.md#instance-reference) is mean-stable up to 2.0856/lambda_max. Not "
                "sufficient without a condition on alpha_l: m = D, alpha_l = 1, p = 1, delta = 0.8, l_max = 5 gives "
                "E[B_n] = -1.39 I and rho(M(mu)) >= 1.116 for every mu (errata E7 and E8, "
                "docs/papers/paofed.md#erratum-e7 and #erratum-e8)."),
        severity="false",
        reproduce=reproduce_theorem1,
        corrected_by=ID_SUFF,
    ),
    Claim(
        id=ID_SUFF,
        paper="paofed",
        title="Theorem 1 corrected: sufficiency under p_m sum_l alpha_l P(K_l nonempty) <= 1",
        citations=_CITES,
        statement=("If p_m sum_l alpha_l P(K_{n,l} nonempty) <= 1 (equivalently E[B_n] >= 0) and every R_k is "
                   "positive definite, then rho(E[B_e](I - mu R_e)E[A_e]) < 1 for all 0 < mu < 2/max lambda(R_k): "
                   "the condition of Theorem 1 is sufficient for convergence in mean (not necessary)."),
        hypotheses=("analysis model I1-I5 (docs/papers/paofed.md#assumptions)",
                    "p_m sum_l alpha_l P(K_{n,l} nonempty) <= 1 (built into the "
                                                       "sampled instances by scaling alpha_{l >= 1})",
                    "R_k positive definite (singular common directions never converge)",
                    "K in 2..3, D in 2..3, l_max <= 2, p in [0.05, 1], delta in [0, 0.9]"),
        check=check_theorem1_sufficient,
        expected=Verdict.CONFIRMED,
        reason=("rho(M(mu)) < 1 on the whole grid for every sampled instance (40/40 at the thorough profile). Tried "
                "where "
                "it is hardest: on the boundary E[B_n] = 1e-9 of its hypothesis (the "
                "erratum E8 (docs/papers/paofed.md#erratum-e8) configuration and the reference instance with m = D, "
                "alpha_{l >= 1} in [0, 1] scaled onto it) at mu lambda_max up to 1.999 it holds: max rho(M) 0.86 "
                "(erratum E8 configuration) and 0.92 at the reference instance's own upper end (mu lambda_max 1.999). "
                "The overall ratio 0.997 (at mu lambda_max = 0.05) is automatic: rho(M(mu)) -> 1 as mu -> 0 on every "
                "instance (docs/papers/paofed.md)."),
        corrects=ID_IFF,
    ),
)

