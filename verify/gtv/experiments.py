r"""Table I of the GTV paper (§5.1; seed L551-570) as experiment claims on :mod:`verify.harness`.

The paper prints one number per method (Algorithm 1 1.42e-05, IFCA 2.82, FedAvg 2.86) from one unreported run.
Each row is decided over paired replicates of the SBM (:mod:`verify.gtv._experiment_design`) in the review
notes' bands: Algorithm 1's converged MSE in R2 (docs/papers/gtv.md#review-r2)'s [1e-6, 1e-3] (1.42e-5 lies below every
reference run and matches in order of magnitude only), a baseline's MSE over the replicate's pooled-LS expectation
(R3, docs/papers/gtv.md#review-r3) in [2.5, 4.3]/3.29. The ordering "Algorithm 1 below FedAvg and IFCA" is the table's
comparison.

IFCA: the paper gives neither its initialisation nor its rounds (docs/papers/gtv.md#choice-baselines). With k random
N(0, I) models (Ghosh et al.'s choice) IFCA separates the two clusters on most replicates (7 of 8 at the paper's size,
about 4 in 5 at ci) and then lands near the cluster oracle (about 1e-7, below Algorithm 1). With identical initial
models at 0 the first round is FedAvg (every node ties and joins model 0); the idle model stays at 0 and attracts nodes
later on a minority of replicates, so IFCA mostly ends at FedAvg's error, the printed 2.82. A large random scale (10)
stalls above FedAvg. IFCA's row and the ordering are decided over the grid of the two initialisations.
"""

from __future__ import annotations

import numpy as np

from verify.gtv import cite
from verify.gtv._experiment_design import ARMS, DESIGN, R2_BAND, R3_RATIO_BAND
from verify.gtv._experiment_family import FAMILY, FEDAVG, IFCA
from verify.harness import Statement, Term, below, curve_figure, experiment, simulate_arms
from verify.records import CheckContext, FigureSpec, Series, Verdict

__all__ = ["EXPERIMENTS", "IFCA_GRID", "TABLE1_PRINTED", "band"]

#: Table I as printed (seed L551-559).
TABLE1_PRINTED = {"algorithm1": 1.42e-05, "ifca": 2.82, "fedavg": 2.86}
_LABEL = {"algorithm1": "Algorithm 1 (nLasso)", "fedavg": "FedAvg", "ifca": "IFCA", "pooled": "pooled LS",
          "oracle": "oracle (FedAvgC)"}

CHOICES = {"IFCA initialisation": "the paper cites IFCA [19] without its "
                                  "initialisation (docs/papers/gtv.md#choice-baselines): k random N(0, I) models "
                                  "(Ghosh et al.'s choice) or k identical models at 0"}
IFCA_GRID = {profile: {"IFCA initialisation": ("random", "identical")} for profile in ("ci", "thorough")}


def band(arm: str, readout: str, lo: float, hi: float, what: str) -> tuple[Statement, Statement]:
    """The median of one arm's read-out in (lo, hi): two one-sided statements."""
    term = (Term(arm=arm, readout=readout),)
    return (Statement(text=f"{_LABEL[arm]}: median {what} above {lo:.3g}", terms=term, relation="above",
                      threshold=lo),
            Statement(text=f"{_LABEL[arm]}: median {what} below {hi:.3g}", terms=term, relation="below",
                      threshold=hi))


def _figures(curves, scale, outcomes):
    """Algorithm 1's MSE curve against the baselines' medians, and every replicate's MSE per method (spread)."""
    caption = "; ".join(f"{s.text}: median {o.median:+.3g} [{o.lower:+.3g}, {o.upper:+.3g}], n = {o.n}"
                        for s, o in outcomes)
    figures = []
    if "algorithm1" in curves:
        x = scale.record_every * np.arange(scale.curve_points)
        lines = {_LABEL["algorithm1"]: curves["algorithm1"][:, 4:]}
        lines.update({f"{_LABEL[a]} (final, median)": np.repeat(curves[a][:, :1], x.size, axis=1)
                      for a in curves if a != "algorithm1"})
        figures.append(curve_figure("table1_mse_curve", "Table I: MSE (41) of Algorithm 1 per iteration", x, lines,
                                    xlabel=f"iteration (theta = {scale.theta:g})", ylabel="MSE (41)",
                                    yscale="log", caption=caption))
    series = tuple(Series(label=_LABEL[a], x=np.arange(curves[a].shape[0]), y=curves[a][:, 0], style="points")
                   for a in curves)
    figures.append(FigureSpec(name="table1_spread", title="Table I: MSE (41) of every replicate", xlabel="replicate",
                              ylabel="MSE (41)", yscale="log", series=series, caption=caption))
    return figures


def _algorithm1_details(ctx: CheckContext, scale) -> dict:
    """Iterations Algorithm 1 needed to the R4 (docs/papers/gtv.md#review-r4) residual tolerance, and every arm's MSE
    spread (first stage)."""
    n = DESIGN.stages[ctx.profile][0]
    out = simulate_arms(ctx, DESIGN, tuple(a for a in ARMS if a != "ifca"), (), n, scale=scale)
    its = out["algorithm1"][:, 2]
    return {"algorithm1_iterations": {"theta": scale.theta, "median": float(np.median(its)), "min": int(its.min()),
                                      "max": int(its.max()), "converged": int(out["algorithm1"][:, 3].sum()),
                                      "replicates": n,
                                      "note": "the seed's steps (theta = 1) need about 2000 iterations at the "
                                              "paper's size; its R = 1000 leaves MSE about 2 "
                                              "(erratum E9, docs/papers/gtv.md#erratum-e9, "
                                              "R2 (docs/papers/gtv.md#review-r2))"},
            "mse_spread": {_LABEL[a]: {"min": float(v[:, 0].min()), "median": float(np.median(v[:, 0])),
                                       "max": float(v[:, 0].max())} for a, v in out.items()},
            "printed": TABLE1_PRINTED}


_CITE = (cite("Section VI-A-1, Table I", equation="(39)-(41)", lines="551-570"),)
_SETTING = ("SBM 2 x 100 nodes, p_in = 0.5, p_out = 0.01, d = 100, m_i = 10, sigma = 1e-3, all nodes accessible "
            "(thorough; ci: 2 x 40 nodes, d = 40, m_i = 10 < d)",
            "Algorithm 1: nLasso, lambda = 1e-2, theta = 10 steps, stopped by the R4 (docs/papers/gtv.md#review-r4) "
            "fixed-point residual (the seed's R = 1000 with theta = 1 has not converged, "
            "erratum E9 (docs/papers/gtv.md#erratum-e9))",
            "FedAvg / IFCA: server model averaging, 5 local GD steps, 200 rounds (100 at ci), lr 1/max lambda_max(H_i)",
            "decision: verify.harness (sign-test bounds of the median over paired replicates, family-wise "
            "alpha 0.05 over GTV's experiment claims)")


#: Why Table I's band claims declare no grid.
_NO_GRID = ("Table I's set-up is printed in Section VI-A (two-cluster SBM, sizes, penalty, iterations; "
            "docs/papers/gtv.md, Readings and choices C-gtv-3); its one unreported choice, IFCA's initialisation, "
            "concerns only the IFCA claims, which are decided over a grid of it")


TABLE1_ALGORITHM1 = experiment(
    family=FAMILY, claim_id="gtv.table1_algorithm1",
    title="Table I: Algorithm 1 reaches MSE 1.42e-05 on the two-cluster SBM", citations=_CITE,
    statement=("Table I reports the MSE (41) incurred by Algorithm 1 (1.42e-05) on the SBM with two clusters "
               "of 100 nodes; checked in docs/papers/gtv.md#review-notes' band R2 (docs/papers/gtv.md#review-r2): "
               "converged MSE in [1e-6, 1e-3]."),
    hypotheses=_SETTING[:2] + _SETTING[3:], design=DESIGN, baselines=(),
    statements=band("algorithm1", "log10_mse", np.log10(R2_BAND[0]), np.log10(R2_BAND[1]), "log10 MSE"),
    what="Table I: Algorithm 1's converged MSE inside R2 (docs/papers/gtv.md#review-r2)'s band [1e-6, "
         "1e-3]", figures=_figures,
    details=_algorithm1_details, expected=Verdict.CONFIRMED,
    reason=("Median converged MSE about 3.5e-5 at the paper's size (about 6e-6 at ci), inside [1e-6, 1e-3] on "
            "every replicate; 1.42e-5 itself lies below the reference runs (it would need about 64 boundary "
            "edges instead of the expected 100, R2 (docs/papers/gtv.md#review-r2)), so only the order of magnitude is "
            "asserted. Algorithm 1 needs about 400 iterations with theta = 10 (details)."),
    readout_kind={"log10_mse": "log10", "r3_ratio": "ratio", "iterations": "iterations"}, no_choices=_NO_GRID)
TABLE1_FEDAVG = experiment(
    family=FAMILY, claim_id="gtv.table1_fedavg",
    title="Table I: FedAvg's MSE 2.86 (one model for two clusters)", citations=_CITE,
    statement=("Table I reports MSE 2.86 for FedAvg; checked in the band R3 (docs/papers/gtv.md#review-r3): its MSE "
               "over the pooled-LS expectation (||w1 - w2||^2/4)(1 + d/(N - d)) in [2.5, 4.3]/3.29."),
    hypotheses=_SETTING[:1] + _SETTING[2:], design=DESIGN, baselines=(FEDAVG,),
    statements=band("fedavg", "r3_ratio", *R3_RATIO_BAND, "MSE / R3 expectation"),
    what="Table I: FedAvg's MSE inside R3 (docs/papers/gtv.md#review-r3)'s band (2.5-4.3 at the paper's "
         "size)", figures=_figures,
    expected=Verdict.CONFIRMED,
    reason=("FedAvg lands within about 2% of the pooled least-squares fixed point on every replicate (ratio "
            "0.98-1.0 to R3 (docs/papers/gtv.md#review-r3)'s expectation), inside the band; the printed 2.86 is one "
            "draw of a quantity with mean about 3.3 and s.d. 0.3 at the paper's size."),
    readout_kind={"log10_mse": "log10", "r3_ratio": "ratio", "iterations": "iterations"}, no_choices=_NO_GRID)
TABLE1_IFCA = experiment(
    family=FAMILY, claim_id="gtv.table1_ifca",
    title="Table I: IFCA's MSE 2.82 (it does not separate the clusters)",
    citations=_CITE + (cite("Section VI-A, baselines", lines="559-562"),),
    statement=("Table I reports MSE 2.82 for IFCA [19], about FedAvg's; checked in the band "
               "R3 (docs/papers/gtv.md#review-r3) over the grid of IFCA's unreported initialisation."),
    hypotheses=_SETTING[:1] + _SETTING[2:] + ("k = 2 IFCA models (the true number of clusters)",),
    design=DESIGN, grid=IFCA_GRID, choices=CHOICES, baselines=(IFCA,),
    statements=band("ifca", "r3_ratio", *R3_RATIO_BAND, "MSE / R3 expectation"),
    what="Table I: IFCA's MSE inside R3 (docs/papers/gtv.md#review-r3)'s band (2.5-4.3 at the paper's "
         "size)", figures=_figures,
    expected=Verdict.NOT_CHECKABLE,
    reason=("Not decided either way over IFCA's unreported initialisation. With random N(0, I) models IFCA "
            "separates the clusters on most replicates (median MSE about 1e-7 of R3 (docs/papers/gtv.md#review-r3)'s "
            "expectation; the negation of the band is shown at the paper's size, 16 replicates); with identical models "
            "at 0 it starts as FedAvg and mostly stays there (median ratio 1.0), but separates on a minority of "
            "replicates, so the band is not shown at 24. Our seed-0 recovery (MSE 2.3e-7) is the typical outcome of "
            "the random initialisation, not seed luck; the printed 2.82 matches an IFCA that kept one model."),
    readout_kind={"log10_mse": "log10", "r3_ratio": "ratio", "iterations": "iterations"})
TABLE1_ORDERING = experiment(
    family=FAMILY, claim_id="gtv.table1_ordering",
    title="Table I: Algorithm 1 outperforms IFCA and FedAvg", citations=_CITE,
    statement=("Table I's comparison: the MSE of Algorithm 1 is below those of IFCA and FedAvg on the "
               "two-cluster SBM."),
    hypotheses=_SETTING + ("IFCA's initialisation decided over a grid (random N(0, I), identical)",),
    design=DESIGN, grid=IFCA_GRID, choices=CHOICES, baselines=(FEDAVG, IFCA),
    statements=(below("algorithm1", "fedavg", "log10_mse", text="Algorithm 1 below FedAvg (log10 MSE)"),
                below("algorithm1", "ifca", "log10_mse", text="Algorithm 1 below IFCA (log10 MSE)")),
    what="Table I: Algorithm 1's MSE below FedAvg's and IFCA's", figures=_figures,
    expected=Verdict.NOT_CHECKABLE,
    reason=("Algorithm 1 is about five decades below FedAvg on every replicate. Against IFCA it depends on "
            "IFCA's initialisation: with random models IFCA recovers the clusters and is about two decades "
            "below Algorithm 1 (the nLasso bias lambda |dC|/alpha; the negation is shown at the paper's size, 24 "
            "replicates); with identical models IFCA mostly stays at FedAvg's error, undecided at 24. So the "
            "table's ordering cannot be refuted from the paper's text."),
    readout_kind={"log10_mse": "log10", "r3_ratio": "ratio", "iterations": "iterations"})

EXPERIMENTS = (TABLE1_ALGORITHM1, TABLE1_FEDAVG, TABLE1_IFCA, TABLE1_ORDERING)
