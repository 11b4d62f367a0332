r"""Theorem 2 (P4 (34), Ch. Theorem 4.2 (4.31)): stable MSD iff :math:`0 < \mu < 1/\lambda_{\max}`.

Findings ([E9], Review note 2 of shared/spec/paofed.md): the criterion is :math:`\rho(\mathcal F) < 1`.

* For the real (analysis-model) system, :math:`\mathcal F_{exact}` keeps the :math:`\mu^2` fourth-moment term
  the seed drops under A5. With Gaussian regressors the reference instance (spec 4.1) is mean-square
  stable only up to :math:`0.6724/\lambda_{\max}`, well inside Theorem 2's range: the bound is not
  sufficient. Nor is it necessary: Review note 2's instance is stable up to :math:`1.136/\lambda_{\max}`.
* For the seed's own truncated :math:`\mathcal F` the bound is sufficient (spec 4.3 item 5a) but not
  necessary (reference threshold :math:`1.0711/\lambda_{\max}`).

Corrected statement (``paofed.theorem2_seed_model``): for the truncated :math:`\mathcal F` (Ch. (4.26)),
:math:`\mu < 1/\lambda_{\max} \Rightarrow \rho(\mathcal F_{seed}) < 1` (with :math:`E[B_n] \succeq 0`,
:math:`R_k \succ 0`).
"""

from __future__ import annotations

import numpy as np

from theory.msd import (
    analysis_moments,
    expected_server_weight,
    mean_square_threshold,
    reference_instance,
    spectral_radius_F,
)
from verify.evidence import result_from_evidence, sample_evidence
from verify.paofed._common import (
    cite,
    e8_instance,
    instance_from_dict,
    instance_to_dict,
    random_instance,
    reference_radii,
    reference_thresholds,
    review_note2_instance,
)
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import ARNOLDI_TOL, THRESHOLD_RTOL

__all__ = ["ARNOLDI_TOL", "CLAIMS", "check_theorem2", "check_theorem2_seed_model", "evaluate_ms_iff",
           "evaluate_seed_model"]

ID_IFF = "paofed.theorem2"
ID_SEED = "paofed.theorem2_seed_model"
_PROFILE = {"ci": {"batches": 2, "per_batch": 4, "grid": (0.5, 0.999), "figure": (0.1, 0.3, 0.5, 0.7, 0.9, 1.1)},
            "thorough": {"batches": 10, "per_batch": 10, "grid": (0.1, 0.25, 0.5, 0.75, 0.9, 0.999),
                         "figure": tuple(np.round(np.linspace(0.05, 1.3, 26), 4))}}


def _default_rho(moments, model, mu):
    return spectral_radius_F(moments, model, mu=mu, tol=ARNOLDI_TOL)


def evaluate_ms_iff(params, model: str = "exact", *, rho_fn=_default_rho,
                    bracket: tuple[float, float] | None = None) -> Evidence:
    r"""Does :math:`\rho(\mathcal F_{model}(\mu)) < 1` hold exactly on :math:`(0, 1/\lambda_{\max})`?

    ``measured`` = :math:`|\mu^\star\lambda_{\max} - 1|` for the certified threshold bracket; ``bound`` =
    the bracket tolerance; the "iff" holds only if the bracket contains :math:`1/\lambda_{\max}`.
    ``bracket`` (lo, hi) skips the bracketing when it was already certified (its ends are re-evaluated).
    """
    inst = instance_from_dict(params)
    m = analysis_moments(inst)
    lam = m.lambda_max
    if bracket is None:
        br = mean_square_threshold(m, model, rtol=THRESHOLD_RTOL, rho_fn=rho_fn)
        lo, hi, ends = br.lo, br.hi, [br.rho_lo, br.rho_hi]
    else:
        lo, hi = bracket
        ends = [rho_fn(m, model, lo), rho_fn(m, model, hi)]
        if not ends[0] < 1.0 <= ends[1]:
            raise ValueError(f"bracket {bracket!r} is not certified: rho at its ends = {ends!r}")
    measured = abs(0.5 * (lo + hi) * lam - 1.0)
    return Evidence(measured=measured, bound=THRESHOLD_RTOL, holds=lo <= 1.0 / lam <= hi,
                    parameters={**instance_to_dict(inst), "model": model,
                                "threshold_bracket_times_lambda_max": [lo * lam, hi * lam],
                                "rho_at_ends": ends,
                                "rho_at_0.999_over_lambda_max": rho_fn(m, model, 0.999 / lam),
                                "E[B_n]": expected_server_weight(m)})


def evaluate_seed_model(params, grid=(0.5, 0.999), *, rho_fn=_default_rho) -> Evidence:
    r""":math:`\max\rho(\mathcal F_{seed}(\mu))` over :math:`\mu\lambda_{\max}` in ``grid`` (all below 1).

    Holds when :math:`\rho(1 + 10^4\,\mathrm{tol}) < 1` (ARPACK returns Ritz values to relative accuracy
    ``tol`` for well-conditioned eigenvalues; :math:`10^4` allows for non-normality).
    """
    inst = instance_from_dict(params)
    m = analysis_moments(inst)
    lam = m.lambda_max
    radii = {float(f): float(rho_fn(m, "seed", f / lam)) for f in grid}
    worst_f = max(radii, key=radii.get)
    measured = radii[worst_f] * (1.0 + 1e4 * ARNOLDI_TOL)
    return Evidence(measured=measured, bound=1.0, holds=measured < 1.0,
                    parameters={**instance_to_dict(inst), "rho_F_seed": radii, "worst_mu_times_lambda_max": worst_f,
                                "E[B_n]": expected_server_weight(m)})


def _radius_figure(grid) -> FigureSpec:
    lam = reference_instance().lambda_max
    x = np.array(grid, dtype=float)
    radii = [reference_radii(float(f)) for f in x]
    series = (Series(label="rho(M) (mean)", x=x, y=[r["mean"] for r in radii], group="mean"),
              Series(label="rho(F_seed) (truncated, Ch. (4.26))", x=x, y=[r["seed"] for r in radii], group="seed"),
              Series(label="rho(F_exact) (Gaussian regressors)", x=x, y=[r["exact"] for r in radii], group="exact"),
              Series(label="rho = 1", x=(0.0, float(x.max())), y=(1.0, 1.0), style="dashed"),
              Series(label="Theorem 2 bound 1/lambda_max", x=(1.0, 1.0), y=(0.9, 1.1), style="dashed"),
              Series(label="Theorem 1 bound 2/lambda_max", x=(2.0, 2.0), y=(0.9, 1.1), style="dashed"))
    return FigureSpec(name="spectral_radii_reference",
                      title=f"Reference instance (spec 4.1, lambda_max = {lam:.4f}): spectral radii vs step size",
                      xlabel="mu lambda_max", ylabel="spectral radius", series=series)


def check_theorem2(ctx: CheckContext, *, rho_fn=_default_rho) -> CheckResult:
    """Exact-model thresholds of the reference and Review-note-2 instances; the seed model's own threshold."""
    prof = _PROFILE[ctx.profile]
    ref = instance_to_dict(reference_instance())
    cached = reference_thresholds() if rho_fn is _default_rho else {}  # shared with paofed.reference_table
    evidence = [evaluate_ms_iff(ref, "exact", rho_fn=rho_fn, bracket=cached.get("exact")),
                evaluate_ms_iff(instance_to_dict(review_note2_instance()), "exact", rho_fn=rho_fn),
                evaluate_ms_iff(ref, "seed", rho_fn=rho_fn, bracket=cached.get("seed"))]
    e8 = e8_instance()
    details = {
        "reference_exact_threshold_times_lambda_max": evidence[0].parameters["threshold_bracket_times_lambda_max"],
        "review_note2_exact_threshold_times_lambda_max": evidence[1].parameters["threshold_bracket_times_lambda_max"],
        "reference_seed_threshold_times_lambda_max": evidence[2].parameters["threshold_bracket_times_lambda_max"],
        "seed_model_sufficient_at_reference (spec 4.3 item 5a)": {
            "rho_F_seed(0.999/lambda_max)": evidence[2].parameters["rho_at_0.999_over_lambda_max"]},
        "reference_rho_F_exact(0.999/lambda_max)": evidence[0].parameters["rho_at_0.999_over_lambda_max"],
        "E8_rho_F_seed(0.05)": rho_fn(analysis_moments(e8), "seed", 0.05),
    }
    return result_from_evidence(
        ID_IFF, evidence, ctx=ctx, quantity="|mu*_ms lambda_max - 1| vs the threshold bracket's tolerance",
        what="exact mean-square threshold rho(F(mu*)) = 1 at mu* = 1/lambda_max",
        figures=[_radius_figure(prof["figure"])], corrected_claim=ID_SEED, details=details)


def reproduce_theorem2(counterexample) -> Evidence:
    """Recompute the certified threshold bracket of the counterexample (instance and model)."""
    return evaluate_ms_iff(counterexample, counterexample.get("model", "exact"))


def _seed_batch(rng: np.random.Generator, count: int, grid, rho_fn) -> list[Evidence]:
    return [evaluate_seed_model(instance_to_dict(random_instance(rng)), grid, rho_fn=rho_fn) for _ in range(count)]


def check_theorem2_seed_model(ctx: CheckContext, *, rho_fn=_default_rho) -> CheckResult:
    """Random small instances (E[B_n] >= 0 built in, R_k > 0) and the reference instance."""
    prof = _PROFILE[ctx.profile]
    evidence = [evaluate_seed_model(instance_to_dict(reference_instance()), prof["grid"], rho_fn=rho_fn)]
    evidence += sample_evidence(ctx, ID_SEED, _seed_batch, prof["batches"], (prof["per_batch"], prof["grid"], rho_fn))
    pts = [(e.parameters["worst_mu_times_lambda_max"], max(e.parameters["rho_F_seed"].values())) for e in evidence]
    figure = FigureSpec(
        name="seed_model_radii", title="Largest rho(F_seed) below 1/lambda_max per sampled instance",
        xlabel="mu lambda_max where rho(F_seed) is largest", ylabel="rho(F_seed)",
        series=(Series(label="sampled instances", x=[p[0] for p in pts], y=[p[1] for p in pts], style="points"),
                Series(label="rho = 1", x=(0.0, 1.0), y=(1.0, 1.0), style="dashed")))
    return result_from_evidence(
        ID_SEED, evidence, ctx=ctx, quantity="max rho(F_seed(mu)) over mu lambda_max in the grid (< 1)",
        what="mu < 1/lambda_max => rho(F_seed) < 1", figures=[figure],
        details={"grid_mu_times_lambda_max": list(prof["grid"])})


_CITES = (cite("P4 Theorem 2", equation="(34)", lines="2754-2757"), cite("P4 proof of Theorem 2", equation="(35)-(36)",
                                                                            lines="2759-2770"),
          cite("Ch. Theorem 4.2", equation="(4.31)", lines="1050-1053"),
          cite("Ch. F under Assumption 5", equation="(4.26)", lines="1016-1020"))

CLAIMS = (
    Claim(
        id=ID_IFF,
        paper="paofed",
        title="Theorem 2: stable mean-square deviation iff 0 < mu < 1 / max lambda(R_k)",
        citations=_CITES,
        statement=("Let Assumptions 1-5 hold. Then PAO-Fed exhibits stable mean square deviation if and only if "
                   "0 < mu < 1 / max_{k,i} lambda_i(R_k)."),
        hypotheses=("Assumptions 1-5 (P4 lines 2651-2661)", "analysis model I1-I5 (spec 3.1); Gaussian regressors "
                                                              "z ~ N(0, R_k) for the exact F",
                    "mean-square stability <=> rho(F) < 1 (P4 (35))"),
        check=check_theorem2,
        expected=Verdict.REFUTED,
        reason=("With the mu^2 term the seed drops (Assumption 5), rho(F_exact) reaches 1 at 0.6724/lambda_max on the "
                "reference instance (spec 4.1), inside the claimed range ([E9]); Review note 2's instance is stable up "
                "to 1.136/lambda_max, so the bound is neither sufficient nor necessary. For the seed's truncated F "
                "the bound is sufficient (rho(F_seed(0.999/lambda_max)) < 1) but not necessary (1.0711/lambda_max)."),
        severity="false",
        reproduce=reproduce_theorem2,
        corrected_by=ID_SEED,
    ),
    Claim(
        id=ID_SEED,
        paper="paofed",
        title="Theorem 2 corrected: for the truncated F, mu < 1/lambda_max => rho(F_seed) < 1",
        citations=_CITES,
        statement=("For the seed's truncated F = Q_B Q_A - mu Q_B (I (x)_b R_e) Q_A - mu Q_B (R_e (x)_b I) Q_A "
                   "(Ch. (4.26)), 0 < mu < 1/max lambda(R_k) implies rho(F) < 1 (sufficient, not necessary). "
                   "It says nothing about the real system, whose exact F has a smaller threshold ([E9])."),
        hypotheses=("analysis model I1-I5 (spec 3.1)", "p_m sum_l alpha_l P(K_{n,l} nonempty) <= 1 (E[B_n] >= 0; "
                                                       "built into the sampled instances)",
                    "R_k positive definite", "K in 2..3, D in 2..3, l_max <= 2"),
        check=check_theorem2_seed_model,
        expected=Verdict.CONFIRMED,
        reason="rho(F_seed) < 1 at every grid point below 1/lambda_max for every sampled instance (spec 4.3 item 5a).",
        corrects=ID_IFF,
    ),
)
