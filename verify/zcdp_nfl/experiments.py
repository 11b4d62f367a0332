r"""zCDP-NFL's experiments (thesis 3.4, P2 Section 5) as experiment claims on :mod:`verify.harness`.

The seed reports no curve data (the figures are lost, only captions survive), only qualitative statements; each
is one claim, quoted, decided on the design of :mod:`verify.zcdp_nfl._experiment_design` (paired replicates with
common random numbers; the paper's normalised error NE in dB after 200 iterations):

* "outperforms" / "better accuracy" is the median paired dB difference below 0; "significantly outperforms" below
  :data:`SIGNIFICANT_DB` (a factor 2 in NE; the seed gives no number, the intervals are reported);
* "for all total privacy losses" is the same ordering at every budget :math:`\phi^{(1)}` of
  :data:`BUDGETS` (docs/papers/zcdp_nfl.md's grid; the accounted total :math:`\varepsilon` of each is in the figure).

Two of the three baselines are RECONSTRUCTIONS (docs/papers/zcdp_nfl.md#choice-baselines;
:mod:`reference_impl.zcdp_nfl.baselines`): the seed cites zCDP-grad-NFL and P-ADMM but gives none of their rules, so
the claims against them compare zCDP-NFL with a stand-in, say so, and decide neither way. (ε,δ)DP-NFL is the paper's
own baseline: "identical to zCDP-NFL except that it follows conventional (ε, δ)-DP rules"; what it leaves unsaid (the
split of the budget over the rounds, how the rounds' privacy adds up) is decided over a grid like every other
unreported choice. Claims that depend on the unreported penalty :math:`\rho` and step :math:`\eta_0` are decided
over a grid of them (:data:`CHOICES`).
"""

from __future__ import annotations

import numpy as np

from verify.harness import Baseline, below, curve_figure, experiment, reconstructed_reason, sign_bounds
from verify.records import FigureSpec, Series, Verdict
from verify.zcdp_nfl import cite
from verify.zcdp_nfl._experiment_design import DESIGN, Arm, arm_epsilon
from verify.zcdp_nfl._experiment_family import FAMILY

__all__ = ["BUDGETS", "CHOICES", "EXPERIMENTS", "GRID", "SIGNIFICANT_DB"]

#: Operational reading of "significantly outperforms": median paired NE difference below -3 dB (a factor 2).
SIGNIFICANT_DB = 3.0
#: The trade-off budgets phi^(1) (docs/papers/zcdp_nfl.md#experiments suggested grid; T = 200, tau = 0.99: epsilon from
#: 1.8 to 24 at delta = 1e-5).
BUDGETS = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)
#: The learning curves' budget (the middle of the grid; epsilon = 6.07).
CURVE_BUDGET = 1e-3

CHOICES = {
    "rho": "the ADMM penalty rho is not reported (docs/papers/zcdp_nfl.md#experiments default 1)",
    "eta0": "zCDP-NFL's step eta0/sqrt(n) is not reported (docs/papers/zcdp_nfl.md#experiments default eta0 = 0.5); "
            "P-ADMM-like runs the constant eta0 and zCDP-grad-NFL's step is matched to zCDP-NFL's initial speed at "
            "each point",
    "split": "(eps, delta)DP-NFL's rule for spreading its budget over the rounds is not in the "
             "seed (docs/papers/zcdp_nfl.md#choice-baselines: the dynamic split eps_n ~ tau^-(n-1)/2, and the constant "
             "split eps/T)",
    "composition": "how (eps, delta)DP-NFL adds its rounds' privacy up is not in the seed ('conventional (eps, "
                   "delta)-DP rules'): basic composition (the rounds' eps_n add up to eps, delta_n = delta/T), "
                   "advanced composition (Dwork & Roth Thm. 3.20, heterogeneous form, delta' = delta/2, delta_n = "
                   "delta/(2T)), or the moments accountant of the DP-ADMM the thesis cites as its example of dynamic "
                   "(eps, delta)-DP (Renyi budgets added, converted by rho + 2 sqrt(rho log(1/delta)); with the "
                   "dynamic split that is zCDP-NFL's own noise)",
}
#: (rho, eta0): the docs/papers/zcdp_nfl.md default first, then points where zCDP-NFL's consensus damping 2 rho d_k is
#: weaker or its step larger (at ci the default and the point at which the audit found the ordering against the
#: baselines reversed).
_COMPOSITIONS = ("basic", "advanced", "moments")
_RHO_ETA = ({"rho": 1.0, "eta0": 0.5}, {"rho": 0.3, "eta0": 2.0}, {"rho": 1.0, "eta0": 2.0}, {"rho": 0.3, "eta0": 0.5})
GRID = {
    "step": {"ci": _RHO_ETA[:2], "thorough": _RHO_ETA},
    "privacy": {"ci": tuple({"rho": 1.0, "eta0": 0.5, "split": "dynamic", "composition": c} for c in _COMPOSITIONS),
                "thorough": tuple({**p, "split": s, "composition": c} for p in _RHO_ETA
                                  for s in ("dynamic", "constant") for c in _COMPOSITIONS)},
}

#: The seed reports neither its data distribution nor c1 or its noise level: no claim here can be refuted.
OUTSIDE_DATA = ("the data distribution, c1 and the noise level are docs/papers/zcdp_nfl.md's defaults (the seed does "
                "not report them), not the paper's")
#: The claims against a stand-in for a baseline the seed cites without its rules.
OUTSIDE = ("the baseline is a reconstruction (docs/papers/zcdp_nfl.md#choice-baselines: the seed gives none of its "
           "rules), not the paper's algorithm, and " + OUTSIDE_DATA)

_NAMES = {"zcdp_nfl": "zCDP-NFL", "eps_delta_dp_nfl": "(eps,delta)DP-NFL",
          "zcdp_grad_nfl": "zCDP-grad-NFL (reconstr.)", "p_admm": "P-ADMM-like (reconstr.)"}


def _arm(algorithm: str, objective: str, phi1: float = CURVE_BUDGET) -> Arm:
    suffix = "" if phi1 == CURVE_BUDGET else f", phi1 = {phi1:g}"
    return Arm(label=f"{_NAMES[algorithm]}{suffix}", algorithm=algorithm, objective=objective, phi1=phi1)


def _curves(name: str, title: str, arms):
    """``figures(curves, scale, outcomes)``: median NE (dB) per iteration with its band, the read-out marked."""

    def draw(curves, scale, outcomes):
        shown = [a for a in arms if a in curves]
        x = np.arange(scale.T + 1)
        caption = "; ".join(f"{s.text}: median {o.median:+.2f} dB [{o.lower:+.2f}, {o.upper:+.2f}], n = {o.n}"
                            for s, o in outcomes)
        return [curve_figure(name, title, x, {a.label: 10 * np.log10(curves[a]) for a in shown},
                             xlabel="iteration n", ylabel="NE(n) (dB): median over replicates, 95% band",
                             windows=[(scale.T - 0.5, scale.T + 0.5)], caption=caption)]

    return draw


def _tradeoff(name: str, title: str, pairs):
    """NE after T iterations (dB) against the accounted total epsilon, one series per algorithm."""

    def draw(curves, scale, outcomes):
        series = []
        for index in range(2):
            arms = [pair[index] for pair in pairs]
            eps = [arm_epsilon(a.phi1, scale) for a in arms]
            levels = [10 * np.log10(curves[a][:, scale.T]) for a in arms]
            bands = [sign_bounds(v, 0.025) for v in levels]
            series.append(Series(label=_NAMES[arms[0].algorithm] + " (median, 95% band)", x=eps,
                                 y=[float(np.median(v)) for v in levels],
                                 lower=[b[0] if np.isfinite(b[0]) else float(v.min())
                                        for b, v in zip(bands, levels, strict=True)],
                                 upper=[b[1] if np.isfinite(b[1]) else float(v.max())
                                        for b, v in zip(bands, levels, strict=True)]))
        caption = "; ".join(f"{s.text}: median {o.median:+.2f} dB [{o.lower:+.2f}, {o.upper:+.2f}]"
                            for s, o in outcomes)
        return [FigureSpec(name=name, title=title, xlabel="total epsilon (Corollary, delta = 1e-5)",
                           ylabel=f"NE after {scale.T} iterations (dB)", xscale="log", series=tuple(series),
                           caption=caption)]

    return draw


def _versus(objective: str, baseline: str, margin: float = 0.0):
    nfl, other = _arm("zcdp_nfl", objective), _arm(baseline, objective)
    return nfl, other, below(nfl, other, "final", margin=margin)


_CITE = {
    "setup": (cite("Thesis Section 3.4 (set-up: baselines, equal total privacy, matched initial speed)", "", "744-750"),
              cite("Publication 2 Section 5 (set-up)", "", "2207-2216")),
    "en": (cite("Thesis Section 3.4.1, Fig. 3.1 (elastic net)", "", "756-758"),
           cite("Publication 2 Section 5, Fig. 1 (elastic net)", "", "2212-2221")),
    "lad": (cite("Thesis Section 3.4.2, Fig. 3.2 (LAD)", "", "765"),
            cite("Publication 2 Section 5, Fig. 2 (LAD)", "", "2225")),
    "ridge": (cite("Thesis Section 3.4.3, Fig. 3.3 (ridge)", "", "767-781"),
              cite("Publication 2 Section 5, Fig. 3 (ridge)", "", "2227-2232")),
}
_COMMON = ("docs/papers/zcdp_nfl.md#experiments set-up: connected Erdos-Renyi graph, mean degree 3; M_k = 50, P = 8; "
           "rows in the unit ball, w^o ~ N(0, I), sigma_v = 0.1, lambda = 1 (elastic net lambda_1 = 0.001 ||X^T "
           "y||_inf, lambda_2 = 1); thorough K = 50 (the paper's), ci K = 20; T = 200, NE in dB at n = 200",
           "privacy: S2 with tau = 0.99, delta = 1e-5, c1 = 1 (squared losses clipped per sample at 1, Assumption 1); "
           "learning curves at phi^(1) = 1e-3 (epsilon = 6.07), trade-off over phi^(1) in {1e-4, 3e-4, 1e-3, 3e-3, "
           "1e-2} (epsilon 1.78 ... 23.6)",
           "zCDP-NFL with the time-varying step eta0/sqrt(n); unreported rho, eta0 decided over a grid (thorough: "
           "(rho, eta0) in {1, 0.3} x {0.5, 2}; ci: (1, 0.5) and (0.3, 2))",
           "zCDP-grad-NFL and P-ADMM are RECONSTRUCTIONS (docs/papers/zcdp_nfl.md#choice-baselines): claims against "
           "them decide neither way; data distribution, c1 and noise level are not the paper's (unreported), so no "
           "claim here can be refuted (outside the paper's setting)",
           "decision: verify.harness (exact sign-test bounds of the median paired dB difference, common random "
           "numbers, 10 -> 20 replicates at ci, 20 -> 40 thorough; family-wise alpha 0.05 over zCDP-NFL's experiment "
           "family)")
_EPSD = ("(eps,delta)DP-NFL as the paper defines it: zCDP-NFL's steps with conventional (eps, delta)-DP rules, i.e. "
         "the classical Gaussian calibration sigma = Delta sqrt(2 log(1.25/delta_n))/eps_n, composed to zCDP-NFL's "
         "accounted (eps, delta); the split of the budget over rounds (dynamic eps_n ~ tau^-(n-1)/2, or constant; "
         "at thorough) and how the rounds' privacy adds up (basic or advanced composition, or the moments accountant) "
         "are grid choices")
_GRAD = ("zCDP-grad-NFL reconstruction: Metropolis-weighted distributed subgradient, Delta = 2 c1 mu/M, S2 noise (same "
         "accounted privacy), constant step mu matched to zCDP-NFL's noise-free NE at n = 10 (33-point log grid)")
_PADMM = ("P-ADMM-like reconstruction: zCDP-NFL's steps with the constant eta0 (the same first step) and the same S2 "
          "noise, as docs/papers/zcdp_nfl.md#choice-baselines proposes; the original (Ding et al. 2019) is not in the "
          "seed")
_SIGNIFICANT = f"'significantly outperforms' read as more than {SIGNIFICANT_DB:g} dB lower NE (a factor 2)"
_EPSD_REASON = ("(eps,delta)DP-NFL is the paper's own baseline (zCDP-NFL with 'conventional (eps, delta)-DP rules'), "
                "decided over what the paper leaves unsaid: the split, how the rounds' privacy adds up, rho and eta0. "
                "The verdict depends on how the privacy adds up. With a composition theorem zCDP-NFL is lower by far "
                "more than the 0.5 dB margin at every point: the classical Gaussian calibration needs about 200 times "
                "zCDP-NFL's noise variance with basic composition, and advanced composition lowers that only 2.6-6.9 "
                "times. With the moments accountant, which the DP-ADMM the thesis cites as its example of dynamic "
                "(eps, delta)-DP uses, the conversion is Bun and Steinke's. With the dynamic split (eps,delta)DP-NFL "
                "then IS zCDP-NFL (noise variances equal to 1e-15), so 'better accuracy' cannot hold there: no effect "
                "either way. With the moments accountant and the constant split zCDP-NFL is about 3 dB lower at "
                "eta0 = 2 (3.5-3.8 dB on LAD) but within the margin (or undecided on LAD) at eta0 = 0.5 (thorough). "
                "Not refutable here (data distribution, c1 and noise level unreported). An independent audit pointed "
                "to the moments-accountant reading; on its own instances, with other splits or with tight RDP or "
                "exact accounting, the ordering even reversed by 1-3 dB.")


#: The baselines of Section 3.4. (eps,delta)DP-NFL is defined by the paper up to unreported choices (gridded); the
#: seed cites the other two without their rules, so each of them is a reconstruction.
_B_EPSD = Baseline(name="(eps,delta)DP-NFL", source="paper",
                   provenance="thesis Section 3.4: 'identical to zCDP-NFL except that it follows conventional (eps, "
                              "delta)-DP rules'; the budget split and how the rounds' privacy adds up (composition "
                              "theorem or moments accountant), which it does not give, are grid choices "
                              "(docs/papers/zcdp_nfl.md)")
_B_GRAD = Baseline(name="zCDP-grad-NFL", source="reconstruction",
                   provenance="a Metropolis-weighted distributed subgradient method with the same zCDP noise and a "
                              "step matched to zCDP-NFL's initial speed (thesis Section 3.4; docs/papers/zcdp_nfl.md)")
_B_PADMM = Baseline(name="P-ADMM", source="reconstruction",
                    provenance="zCDP-NFL's steps with the constant step eta0 and the same noise; the original (Ding et "
                               "al. 2019) is not in the paper (thesis Section 3.4.3; docs/papers/zcdp_nfl.md)")


#: The reason line of every claim whose comparison arm is a reconstruction.
_RECONSTRUCTED = reconstructed_reason(
    "cites without giving its rules",
    "docs/papers/zcdp_nfl.md#choice-baselines")


def _experiment(claim_id: str, key: str, **fields):
    """A zCDP-NFL experiment on :data:`DESIGN`, outside the paper's setting (its data are unreported; against a
    reconstruction unless the baseline is (eps,delta)DP-NFL)."""
    paper = all(b.source == "paper" for b in fields["baselines"])
    return experiment(family=FAMILY, claim_id=claim_id, citations=_CITE[key] + _CITE["setup"], design=DESIGN,
                      outside_setting=OUTSIDE_DATA if paper else OUTSIDE, choices=CHOICES, **fields)


# ------------------------------------------------------------------------------------------------
# The experiments.

_EN_NFL, _EN_GRAD, _S = _versus("elastic_net", "zcdp_grad_nfl", SIGNIFICANT_DB)
ELASTIC_NET_GRAD = _experiment(
    "zcdp_nfl.experiment_elastic_net_grad", "en",
    title="Fig. 3.1(a): on the elastic net zCDP-NFL significantly outperforms zCDP-grad-NFL",
    statement=("'We observe that the proposed ADMM-based algorithm significantly outperforms the subgradient-based "
               "algorithm.' (elastic net, learning curves, equal total privacy, tuned to identical initial "
               "convergence speeds)"),
    hypotheses=_COMMON + (_GRAD, _SIGNIFICANT), grid=GRID["step"], baselines=(_B_GRAD,),
    statements=(_S,), what=f"elastic net: zCDP-NFL more than {SIGNIFICANT_DB:g} dB below zCDP-grad-NFL at n = 200",
    figures=_curves("learning_curves", "Elastic net: zCDP-NFL and zCDP-grad-NFL (reconstruction)",
                    [_EN_NFL, _EN_GRAD]),
    expected=Verdict.NOT_CHECKABLE,
    reason=(_RECONSTRUCTED
            + "Against the reconstruction the negation is shown at every grid point: at the docs/papers/zcdp_nfl.md "
              "defaults (rho = 1, "
            "eta0 = 0.5) the matched subgradient method ends 8-11 dB BELOW zCDP-NFL, and where zCDP-NFL is "
            "fastest (rho = 0.3, eta0 = 2) the two are within 1 dB. Since the baseline is a reconstruction and "
            "rho, eta are docs/papers/zcdp_nfl.md's guesses, the paper's statement cannot be refuted here: not "
            "checkable. Intervals per point in details."),
    readout_kind="db")
_, _EN_EPSD, _S = _versus("elastic_net", "eps_delta_dp_nfl")
ELASTIC_NET_EPS_DELTA = _experiment(
    "zcdp_nfl.experiment_elastic_net_eps_delta", "en",
    title="Fig. 3.1(a): on the elastic net zCDP gives better accuracy than (eps, delta)-DP at the same budget",
    statement=("'the use of the dynamic zCDP notion as opposed to the dynamic (eps, delta)-DP notion allows for "
               "better accuracy given the same privacy budget throughout the computation.' (elastic net)"),
    hypotheses=_COMMON + (_EPSD,), grid=GRID["privacy"], baselines=(_B_EPSD,),
    statements=(_S,), what="elastic net: zCDP-NFL below (eps,delta)DP-NFL at equal total (eps, delta), n = 200",
    figures=_curves("learning_curves", "Elastic net: zCDP-NFL and (eps,delta)DP-NFL",
                    [_EN_NFL, _EN_EPSD]),
    expected=Verdict.NOT_CHECKABLE, reason=_EPSD_REASON,
    readout_kind="db")
_EN_PAIRS = [(_arm("zcdp_nfl", "elastic_net", p), _arm("eps_delta_dp_nfl", "elastic_net", p)) for p in BUDGETS]
ELASTIC_NET_TRADEOFF = _experiment(
    "zcdp_nfl.experiment_elastic_net_tradeoff", "en",
    title="Fig. 3.1(b): the zCDP advantage over (eps, delta)-DP holds at every total privacy loss",
    statement=("'This same fact is illustrated for various total privacy losses on the privacy-accuracy trade-off "
               "curve.' (elastic net, NE after 200 iterations vs total privacy loss)"),
    hypotheses=_COMMON + (_EPSD, "every budget of the grid: the statements are joined (intersection-union test)"),
    grid=GRID["privacy"], baselines=(_B_EPSD,),
    statements=tuple(below(a, b, "final") for a, b in _EN_PAIRS),
    what="elastic net: zCDP-NFL below (eps,delta)DP-NFL at n = 200 at every total privacy loss of the grid",
    figures=_tradeoff("tradeoff", "Elastic net: privacy-accuracy trade-off", _EN_PAIRS),
    expected=Verdict.NOT_CHECKABLE,
    reason=(_EPSD_REASON + " At every budget of the grid: with a composition theorem zCDP-NFL is below at every budget "
            "and grid point, the gap shrinking as the budget grows; the hardest of those points (phi^(1) = 1e-2, "
            "advanced composition, defaults) has a median of -1.96 dB (upper bound -0.45) at thorough."),
    readout_kind="db")
_LAD_NFL, _LAD_GRAD, _S = _versus("lad", "zcdp_grad_nfl", SIGNIFICANT_DB)
LAD_GRAD = _experiment(
    "zcdp_nfl.experiment_lad_grad", "lad",
    title="Fig. 3.2: on LAD zCDP-NFL significantly outperforms zCDP-grad-NFL",
    statement=("'We observe once again that the proposed algorithm significantly outperforms its subgradient-based "
               "counterpart, as the learning rate required for the zCDP-grad-NFL algorithm to attain a similar "
               "initial convergence speed to the ADMM-based algorithms does not allow it to reach high accuracy.'"),
    hypotheses=_COMMON + (_GRAD, _SIGNIFICANT), grid=GRID["step"], baselines=(_B_GRAD,),
    statements=(_S,), what=f"LAD: zCDP-NFL more than {SIGNIFICANT_DB:g} dB below zCDP-grad-NFL at n = 200",
    figures=_curves("learning_curves", "LAD: zCDP-NFL and zCDP-grad-NFL (reconstruction)", [_LAD_NFL, _LAD_GRAD]),
    expected=Verdict.NOT_CHECKABLE,
    reason=(_RECONSTRUCTED
            + "Depends on rho and eta0, and never shown by 3 dB: at the docs/papers/zcdp_nfl.md defaults the matched "
              "subgradient "
            "reconstruction ends BELOW zCDP-NFL (by 7 dB at K = 50, 10 dB at ci); at rho = 0.3, eta0 = 2 zCDP-NFL "
            "is below it (the seed's mechanism: the matching step is large, so its noise is large) but by less "
            "than 3 dB at K = 50 (median 1.2 dB) and by 18 dB at ci. Not refutable against a reconstruction."),
    readout_kind="db")
_, _LAD_EPSD, _S = _versus("lad", "eps_delta_dp_nfl")
LAD_EPS_DELTA = _experiment(
    "zcdp_nfl.experiment_lad_eps_delta", "lad",
    title="Fig. 3.2: on LAD zCDP gives better accuracy than (eps, delta)-DP",
    statement="'In addition, we observe that the use of zCDP allows for better accuracy than (eps, delta)-DP.' (LAD)",
    hypotheses=_COMMON + (_EPSD,), grid=GRID["privacy"], baselines=(_B_EPSD,),
    statements=(_S,), what="LAD: zCDP-NFL below (eps,delta)DP-NFL at equal total (eps, delta), n = 200",
    figures=_curves("learning_curves", "LAD: zCDP-NFL and (eps,delta)DP-NFL",
                    [_LAD_NFL, _LAD_EPSD]),
    expected=Verdict.NOT_CHECKABLE, reason=_EPSD_REASON,
    readout_kind="db")
_RIDGE_NFL, _RIDGE_PADMM, _S = _versus("ridge", "p_admm")
RIDGE_P_ADMM = _experiment(
    "zcdp_nfl.experiment_ridge_p_admm", "ridge",
    title="Fig. 3.3(a): on ridge zCDP-NFL slightly outperforms P-ADMM",
    statement=("'We observe that the proposed zCDP-NFL algorithm slightly outperforms the P-ADMM algorithm on "
               "smooth objectives, despite the inexact ADMM update required to handle nonsmooth objectives.'"),
    hypotheses=_COMMON + (_PADMM,), grid=GRID["step"], baselines=(_B_PADMM,),
    statements=(_S,), what="ridge: zCDP-NFL below P-ADMM-like at n = 200",
    figures=_curves("learning_curves", "Ridge: zCDP-NFL and P-ADMM-like (reconstruction)",
                    [_RIDGE_NFL, _RIDGE_PADMM]),
    expected=Verdict.NOT_CHECKABLE,
    reason=(_RECONSTRUCTED
            + "Depends on rho and eta0: at the docs/papers/zcdp_nfl.md defaults (rho = 1, eta0 = 0.5) the P-ADMM-like "
              "constant step ends "
            "7 dB BELOW zCDP-NFL (eta0/sqrt(n) shrinks the step before the iterates arrive); at eta0 = 2 (rho = "
            "0.3 or 1) zCDP-NFL is 2-5 dB below it (its decaying step also shrinks Lemma I's sensitivity, hence the "
            "noise); at rho = 0.3, eta0 = 0.5 undecided. Against a reconstruction: not refutable."),
    readout_kind="db")
_RIDGE_PAIRS = [(_arm("zcdp_nfl", "ridge", p), _arm("p_admm", "ridge", p)) for p in BUDGETS]
RIDGE_TRADEOFF = _experiment(
    "zcdp_nfl.experiment_ridge_tradeoff", "ridge",
    title="Fig. 3.3(b): zCDP-NFL beats P-ADMM at all total privacy losses, thanks to its time-varying step",
    statement=("'As can be observed on the privacy-accuracy trade-off curve, this is the case for all total "
               "privacy losses. This better performance is due to the use of the time-varying step size eta^(n) "
               "in the proposed algorithm.'"),
    hypotheses=_COMMON + (_PADMM, "every budget of the grid: the statements are joined (intersection-union test)"),
    grid=GRID["step"], baselines=(_B_PADMM,),
    statements=tuple(below(a, b, "final") for a, b in _RIDGE_PAIRS),
    what="ridge: zCDP-NFL below P-ADMM-like at n = 200 at every total privacy loss of the grid",
    figures=_tradeoff("tradeoff", "Ridge: privacy-accuracy trade-off", _RIDGE_PAIRS),
    expected=Verdict.NOT_CHECKABLE,
    reason=(_RECONSTRUCTED
            + "Depends on rho and eta0: at (rho, eta0) = (0.3, 2) zCDP-NFL is 4-5.5 dB below the P-ADMM-like "
            "constant step at every budget (both sizes); at the docs/papers/zcdp_nfl.md defaults (1, 0.5) the constant "
            "step is below zCDP-NFL from phi^(1) = 3e-4 on (by 16 dB at 1e-2), at (0.3, 0.5) at 1e-2; at (1, 2) "
            "zCDP-NFL is below at four budgets, undecided at 1e-2. The time-varying step helps where eta0 is large (a "
            "smaller step late means a smaller Lemma I sensitivity, hence less noise) and hurts where it is small "
            "(it stops the iterates early). Against a reconstruction: not refutable."),
    readout_kind="db")

EXPERIMENTS = (ELASTIC_NET_GRAD, ELASTIC_NET_EPS_DELTA, ELASTIC_NET_TRADEOFF, LAD_GRAD, LAD_EPS_DELTA, RIDGE_P_ADMM,
               RIDGE_TRADEOFF)
