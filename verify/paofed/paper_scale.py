r"""The exact mean-square model at the paper's own scale (K = 256, D = 200, l_max = 10): exact vs seed F.

The seed evaluates its theory only through the truncated :math:`\mathcal F` (Ch. (4.26), P4 (28); the
:math:`\mu^2` fourth-moment term dropped under A5) and docs/papers/paofed.md (3.6) judged the exact model at the paper's
scale "infeasible even in structured form". With white Gaussian features :math:`R_k = v_kI` both models reduce exactly
to a few :math:`N_b^2` problems (:mod:`theory.msd.white`; :math:`N_b = 2817`, no :math:`D^2` factor), so the
exact :math:`\mathcal F` is computable there; the 4 availability groups of exchangeable clients reduce it further
to per-group blocks (:mod:`theory.msd.grouped`, 2509 unknowns at the paper's scale, under a minute). This card reports,
on the paper's set-up (256 clients in 4 availability groups p = 0.25, 0.1, 0.025, 0.005, delta = 0.2, alpha_l = 0.2^l, m
= 4 window selection, max lambda(R_k) = 1.02 as the seed states, R_k = 1.02 I), the certified mean-square thresholds and
MSD_inf of both models, and checks the claim:

    the seed's truncated F is optimistic at the paper's scale: its certified threshold lies above the exact
    F's (disjoint brackets), and at a step size where both are stable its MSD_inf is below the exact one,

with certificates: the white and grouped reductions equal the unreduced structured route on a small white instance
(1e-10), both
(S2) solves have relative residuals below 10x their tolerance, and every threshold bracket has
:math:`\rho(lo) < 1 - 10^{-9} \le \rho(hi)` by Arnoldi. ``ci`` runs a scaled-down federation (K = 8 in the same
4 groups, D = 8, l_max = 10); ``thorough`` the paper's K = 256, D = 200.

White Gaussian features are the analysis model (I1-I5 (docs/papers/paofed.md#assumption-i1 to #assumption-i5) with
Gaussian z), not the paper's RFF data (whose R_k has one dominant eigenvalue and trace about 1): with
:math:`\mathrm{tr}R_k = 204` the exact fourth-moment term
:math:`\mathrm{tr}(R_kX)R_k` makes the local LMS steps unstable far below the seed's bound (classic LMS:
:math:`\mu \lesssim 2/\mathrm{tr}R`), which the truncated F cannot see.
"""

from __future__ import annotations

import numpy as np

from theory.msd import PAOFedInstance, msd_steady_state, spectral_radius_F
from theory.msd.routes import STABILITY_MARGIN, white_threshold_bracket
from verify.evidence import HARD_POINT, SIDES, result_from_evidence
from verify.paofed import cite
from verify.records import CheckContext, CheckResult, Claim, Evidence, Verdict
from verify.tolerance import MSD_AGREEMENT_RTOL, SPECTRAL_RADIUS_RTOL, THRESHOLD_RTOL, relative_gap

__all__ = ["CLAIMS", "PAPER", "check_paper_scale", "evaluate_paper_scale", "evaluate_reduction", "paper_white_instance"]

CLAIM_ID = "paofed.paper_scale_seed_optimistic"

#: The paper's set-up (docs/papers/paofed.md#experiments, seed Ch. 4.5 / P4 Sec. V): K, D, l_max, m, p groups, delta,
#: alpha ratio, max lambda(R_k).
PAPER = {"K": 256, "D": 200, "l_max": 10, "m": 4, "p_groups": (0.25, 0.1, 0.025, 0.005), "delta": 0.2,
         "alpha_ratio": 0.2, "v": 1.02, "mu": 0.4}
_PROFILE = {"ci": {"K": 8, "D": 8}, "thorough": {"K": PAPER["K"], "D": PAPER["D"]}}
#: relative tolerance of the (S2) solves of this card
_S2_RTOL = 1e-10
#: Steps (as fractions of the exact model's certified threshold mu*_exact,lo) at which MSD_seed < MSD_exact is checked,
#: with the declared hardest points (``verify.evidence.HARD_POINT``): a small step, where the fourth-moment term the
#: seed drops vanishes (O(mu^2)) and the two models' MSD_inf meet, and a step just below the exact threshold.
MSD_STEPS = {0.5: None, 0.05: "small step: the dropped fourth-moment term vanishes",
             0.95: "just below the exact model's threshold"}


def paper_white_instance(K: int = PAPER["K"], D: int = PAPER["D"], mu: float = PAPER["mu"], *,
                         l_max: int = PAPER["l_max"], m: int = PAPER["m"], v: float = PAPER["v"],
                         selection: str = "window") -> PAOFedInstance:
    """The paper's set-up with white features R_k = v I (K a multiple of the 4 availability groups)."""
    groups = np.asarray(PAPER["p_groups"])
    if K % groups.size:
        raise ValueError(f"K must be a multiple of {groups.size} (the availability groups), got {K!r}")
    rng = np.random.default_rng(2024)
    w = rng.standard_normal(D)
    return PAOFedInstance(K=K, D=D, l_max=l_max, m=m, selection=selection, p=np.repeat(groups, K // groups.size),
                          delta=PAPER["delta"], alpha=PAPER["alpha_ratio"] ** np.arange(l_max + 1),
                          sigma2_eta=np.full(K, 0.01), R=np.broadcast_to(v * np.eye(D), (K, D, D)).copy(),
                          w_star=w / np.linalg.norm(w), mu=mu)


def evaluate_reduction(inst: PAOFedInstance) -> list[Evidence]:
    """White and grouped reductions vs the unreduced structured route (MSD_inf and rho(F), both models)."""
    from theory.msd.grouped import grouped_msd_steady_state, grouped_spectral_radius
    from theory.msd.white import white_components, white_msd_steady_state, white_spectral_radius

    out = []
    for model in ("seed", "exact"):
        full = msd_steady_state(inst, model, rtol=1e-13)
        rf = spectral_radius_F(inst, model, tol=1e-12)
        reduced = {"white": (white_msd_steady_state(inst, model, rtol=1e-13).msd, white_spectral_radius(inst,
                                                                                                        model)[0]),
                   "grouped": (grouped_msd_steady_state(inst, model, rtol=1e-13).msd,
                               max(grouped_spectral_radius(inst, c, model)[0] for c in white_components(inst, model)))}
        for route, (msd, rho) in reduced.items():
            gap = float(relative_gap(full.msd, msd))
            out.append(Evidence(measured=gap, bound=MSD_AGREEMENT_RTOL, holds=gap <= MSD_AGREEMENT_RTOL,
                                parameters={SIDES: None, "quantity": f"{route} reduction MSD_inf", "model": model,
                                            "K": inst.K,
                                            "D": inst.D, "l_max": inst.l_max, "structured": full.msd, route: msd}))
            rgap = float(relative_gap(rf, rho))
            out.append(Evidence(measured=rgap, bound=SPECTRAL_RADIUS_RTOL, holds=rgap <= SPECTRAL_RADIUS_RTOL,
                                parameters={SIDES: None, "quantity": f"{route} reduction rho(F)", "model": model,
                                            "structured": rf, route: rho}))
    return out


def evaluate_paper_scale(K: int, D: int, *, l_max: int = PAPER["l_max"],
                         rtol: float = THRESHOLD_RTOL) -> tuple[list[Evidence], dict]:
    r"""Thresholds of both models and MSD_inf at a step where both are stable, on the paper's set-up with K, D.

    Evidence: ``hi_exact / lo_seed`` (< 1: the seed's threshold is certified above the exact one) and
    ``MSD_seed / MSD_exact`` at :math:`\mu = \mu^\star_{exact,lo}/2` (< 1: the seed is optimistic), each with its
    certificates (bracket radii, (S2) residuals).
    """
    from theory.msd.grouped import grouped_msd_steady_state

    inst = paper_white_instance(K, D, l_max=l_max, m=min(PAPER["m"], D))  # m = 4 needs D >= 4
    lam = inst.lambda_max
    br = {}
    for model in ("seed", "exact"):
        br[model] = white_threshold_bracket(inst, model, rtol=rtol, route="grouped")
    certified = all(b.lo > 0 and b.rho_lo < 1 - STABILITY_MARGIN <= b.rho_hi for b in br.values())
    ratio = br["exact"].hi / br["seed"].lo if br["seed"].lo > 0 else float("inf")
    base = {"K": K, "D": D, "l_max": l_max, "lambda_max": lam}
    ev = [Evidence(measured=float(ratio), bound=1.0, holds=bool(certified and ratio < 1.0),
                   parameters={**base, "quantity": "mu*_exact,hi / mu*_seed,lo",
                               "seed_bracket_mu_lambda": [br["seed"].lo * lam, br["seed"].hi * lam],
                               "exact_bracket_mu_lambda": [br["exact"].lo * lam, br["exact"].hi * lam],
                               "rho_seed": [br["seed"].rho_lo, br["seed"].rho_hi],
                               "rho_exact": [br["exact"].rho_lo, br["exact"].rho_hi]})]
    for frac, hard in MSD_STEPS.items():
        mu = frac * br["exact"].lo
        sols = {model: grouped_msd_steady_state(inst, model, mu=mu, rtol=_S2_RTOL) for model in ("seed", "exact")}
        ok = all(s.residual <= 10 * _S2_RTOL for s in sols.values())
        r = sols["seed"].msd / sols["exact"].msd
        ev.append(Evidence(measured=float(r), bound=1.0, holds=bool(ok and r < 1.0),
                           parameters={**base, "quantity": f"MSD_seed / MSD_exact at mu = {frac:g} mu*_exact,lo",
                                       "mu": mu, "msd_seed_db": 10 * np.log10(sols["seed"].msd),
                                       "msd_exact_db": 10 * np.log10(sols["exact"].msd),
                                       "residuals": [sols["seed"].residual, sols["exact"].residual],
                                       **({HARD_POINT: hard} if hard else {})}))
    # the paper's own step: seed F stable (MSD), exact F (rho at mu = 0.4 vs its bracket)
    paper = {"mu": PAPER["mu"], "mu_lambda": PAPER["mu"] * lam,
             "seed_stable": bool(PAPER["mu"] < br["seed"].lo), "exact_stable": bool(PAPER["mu"] < br["exact"].lo)}
    if paper["seed_stable"]:
        s = grouped_msd_steady_state(inst, "seed", mu=PAPER["mu"], rtol=_S2_RTOL)
        paper.update(msd_seed_db=10 * np.log10(s.msd), residual_seed=s.residual)
    details = {"instance": base, "paper_step": paper,
               "thresholds_mu_lambda": {m: [b.lo * lam, b.hi * lam] for m, b in br.items()},
               "theorem2_bound_mu_lambda": 1.0}
    return ev, details


def check_paper_scale(ctx: CheckContext) -> CheckResult:
    """Reduction certificate on a small white instance, then the card at the profile's K, D."""
    prof = _PROFILE[ctx.profile]
    evidence = evaluate_reduction(paper_white_instance(8, 4, mu=0.05, l_max=1, m=2))
    ev, details = evaluate_paper_scale(prof["K"], prof["D"])
    evidence += ev
    return result_from_evidence(
        CLAIM_ID, evidence, ctx=ctx, quantity="reduction gaps; mu*_exact/mu*_seed; MSD_seed/MSD_exact",
        what="white reduction exact, seed F's threshold above the exact F's, seed MSD below the exact MSD",
        details={**details, "evidence": [dict(e.parameters, measured=e.measured, holds=e.holds) for e in ev]})


CLAIMS = (
    Claim(
        id=CLAIM_ID,
        paper="paofed",
        title="At the paper's scale (K = 256, D = 200, l_max = 10) the seed's truncated F is optimistic",
        citations=(cite("Ch. weighted-norm recursion and Theorem 4.2", equation="(4.26)-(4.34)", lines="1016-1072"),
                   cite("P4 recursion and Theorem 2", equation="(28)-(38)", lines="2712-2785")),
        statement=("On the paper's set-up with white Gaussian features R_k = 1.02 I, the exact mean-square model "
                   "(with the fourth-moment term the seed drops) is computable exactly through the white reduction, "
                   "and against it the seed's truncated F is optimistic: its certified stability threshold lies "
                   "above the exact one, and where both are stable its MSD_inf is lower."),
        hypotheses=("analysis model I1-I5 (docs/papers/paofed.md#assumption-i1 to #assumption-i5) with Gaussian "
                    "regressors, R_k = 1.02 I (max lambda(R_k) as in the seed)",
                    "window selection m = 4, p in {0.25, 0.1, 0.025, 0.005} x K/4, delta = 0.2, alpha_l = 0.2^l",
                    "ci: K = 8, D = 8, l_max = 10; thorough: K = 256, D = 200, l_max = 10"),
        check=check_paper_scale,
        expected=Verdict.CONFIRMED,
        reason=("Certified brackets (Arnoldi rho(lo) < 1 - 1e-9 <= rho(hi)) are disjoint and (S2) residuals are "
                "below 1e-9; the white and grouped reductions equal the unreduced route to ~1e-14 on a small instance "
                "(K = 8 in 4 groups of 2). MSD_seed < MSD_exact is rated as a bound at three steps (fractions 0.05, "
                "0.5, 0.95 of the exact threshold); its hardest point is the small step, where the dropped "
                "fourth-moment term vanishes: ratio 0.958 at ci (0.19 dB), still strictly below 1 with (S2) residuals "
                "5e-14; 0.53 at half the threshold, 0.074 just below it (docs/papers/paofed.md)."),
    ),
)
