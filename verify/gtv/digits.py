r"""The handwritten-digits experiment of the GTV paper (§5.4; seed L594-635, Figs. 5-6) as experiment claims.

The paper trains an ANN (42) per node on MNIST (n = 40 nodes, two clusters of 20 holding digits {0, 1} and {2, 3},
400 / 100 train / validation images per node, a t-SNE + KL k-nearest-node graph, Algorithm 1 with R = 50,
λ = 1) and prints no accuracy, only Figs. 5-6: ACC^(val) against the iteration for several λ including λ = 0
(independent local training) and λ → ∞ (one pooled model), and Algorithm 1 against IFCA, pFedMe and a direct
optimizer, with the text "both the ACC^(val) and the convergence rate ... is improved by Algorithm 1".

Checked here on a convex stand-in (:mod:`verify.gtv.digits_design`): scikit-learn's bundled 8x8 digits (MNIST
cannot be downloaded at run time), binary labels within a pair (erratum E12, docs/papers/gtv.md#erratum-e12),
ridge-logistic models, the exact primal update, a k-nearest-node graph on the nodes' mean training images
(erratum E13, docs/papers/gtv.md#erratum-e13), λ chosen on validation among a small grid (the paper's λ = 1 is for its
ANN and its KL weights), accuracy on held-out test images. The three comparisons the figures make (and Fig. 7's, five
clusters of Table II) are decided over paired replicates (different random splits and graphs); being outside the paper's
setting, none can be refuted.
"""

from __future__ import annotations

import numpy as np

from verify.gtv import cite
from verify.gtv._experiment_family import FAMILY, IFCA
from verify.gtv.digits_design import ARMS, DESIGN, DESIGN_FIVE, IFCA_STEPS
from verify.harness import above, curve_figure, experiment, sign_bounds, simulate_arms
from verify.records import CheckContext, FigureSpec, Series, Verdict

__all__ = ["EXPERIMENTS", "IFCA_GRID", "OUTSIDE_SETTING"]

_LABEL = {"algorithm1": "Algorithm 1 (validated lambda)", "local": "local training (lambda = 0)",
          "pooled": "one pooled model (lambda -> inf, FedAvg's fixed point)", "ifca": "IFCA",
          "oracle": "oracle cluster-wise models"}
OUTSIDE_SETTING = ("checked on a convex stand-in (scikit-learn's 8x8 digits instead of MNIST, ridge-logistic models "
                   "instead of the ANN (42), a mean-image graph instead of t-SNE + KL distances)")
CHOICES = {"IFCA initialisation": "the paper cites IFCA [19] without its "
                                  "initialisation (docs/papers/gtv.md#choice-baselines): k random N(0, I) models "
                                  "(Ghosh et al.'s choice) or k identical models at 0",
           "IFCA step": "nor its local step size: 1/beta_max (the conservative smooth step, beta_max the largest "
                        "client smoothness constant of the ridge-logistic loss) or 1.9/beta_max (close to the "
                        "stability limit 2/beta_max)"}
IFCA_GRID = {profile: {"IFCA initialisation": ("random", "identical"), "IFCA step": tuple(IFCA_STEPS)}
             for profile in ("ci", "thorough")}
_ALL = tuple(ARMS)


def _figures(curves, scale, outcomes, methods_figure=("digits_fig6_methods", "Fig. 6")):
    """Fig. 5 (test accuracy per iteration for every λ, with the two extremes and the oracle), Fig. 6 (Algorithm 1
    against IFCA per iteration / round; ``methods_figure``: its name and the paper's figure) and every replicate's
    test accuracy per method."""
    caption = "; ".join(f"{s.text}: median {o.median:+.3g} pp [{o.lower:+.3g}, {o.upper:+.3g}], n = {o.n}"
                        for s, o in outcomes)
    P = scale.curve_points
    x = scale.record_every * np.arange(P)
    figures = []
    flat = {a: v[:, 3:3 + P] for a, v in curves.items()}
    if "algorithm1" in curves:
        per_lam = curves["algorithm1"][:, 3 + P:].reshape(-1, len(scale.lams), P)
        lines = {f"Algorithm 1, lambda = {lam:g}": per_lam[:, i] for i, lam in enumerate(scale.lams)}
        lines.update({_LABEL[a]: flat[a] for a in ("local", "pooled", "oracle") if a in flat})
        figures.append(curve_figure("digits_fig5_lambda", "Fig. 5 (digits stand-in): test accuracy per iteration",
                                    x, lines, xlabel="iteration k (R = 50, theta = 1)", ylabel="test accuracy (%)",
                                    caption=caption))
        lines = {_LABEL[a]: flat[a] for a in ("algorithm1", "ifca", "pooled", "oracle") if a in flat}
        figures.append(curve_figure(methods_figure[0],
                                    f"{methods_figure[1]} (digits stand-in): Algorithm 1 against IFCA", x, lines,
                                    xlabel="iteration / round", ylabel="test accuracy (%)", caption=caption))
    series = tuple(Series(label=_LABEL[a], x=np.arange(v.shape[0]), y=v[:, 0], style="points")
                   for a, v in curves.items())
    figures.append(FigureSpec(name="digits_spread", title="Digits stand-in: test accuracy of every replicate",
                              xlabel="replicate", ylabel="test accuracy (%)", series=series, caption=caption))
    return figures


def _figures_five(curves, scale, outcomes):
    """Fig. 7: the methods' curves at five clusters (the λ curves too), every replicate's test accuracy."""
    return _figures(curves, scale, outcomes, methods_figure=("digits_fig7_methods", "Fig. 7 (five clusters)"))


def _details(ctx: CheckContext, scale, design=DESIGN) -> dict:
    """Every method's test accuracy (first stage), the λ validation chose, and Algorithm 1's gap to the oracle."""
    n = design.stages[ctx.profile][0]
    out = simulate_arms(ctx, design, _ALL, (("IFCA initialisation", "random"),), n, scale=scale)
    lams, counts = np.unique(out["algorithm1"][:, 2], return_counts=True)
    gap = out["algorithm1"][:, 0] - out["oracle"][:, 0]
    lo, hi = sign_bounds(gap, 0.05)
    return {"test_accuracy_percent": {_LABEL[a]: {"min": float(v[:, 0].min()), "median": float(np.median(v[:, 0])),
                                                  "max": float(v[:, 0].max())} for a, v in out.items()},
            "lambda_chosen_on_validation": {f"{lam:g}": int(c) for lam, c in zip(lams, counts, strict=True)},
            "algorithm1_minus_oracle_pp": {"median": float(np.median(gap)),
                                           "sign_test_95": [float(lo) if np.isfinite(lo) else None,
                                                            float(hi) if np.isfinite(hi) else None]},
            "replicates": n}


_CITE = (cite("Section VI-C, Fig. 5", equation="(42)", lines="594-618"),)
_SETTING = ("scikit-learn's 8x8 digits: 2 clusters x 20 nodes holding digits {0, 1} and {2, 3}, 10 train / 4 "
            "validation images per node, 80 held-out test images per cluster (ci: 2 x 6 nodes)",
            "ridge-logistic models (gamma = 1e-2, intercept), labels +-1 within a pair "
            "(erratum E12, docs/papers/gtv.md#erratum-e12); graph: 4 nearest nodes by mean training image, A = "
            "exp(-dist) (erratum E13, docs/papers/gtv.md#erratum-e13)",
            "Algorithm 1: nLasso, the seed's steps (theta = 1), R = 50 iterations as in the paper; lambda chosen by "
            "validation cross-entropy from {0.01, 0.1, 1, 10} (ci: {0.1, 1})",
            "decision: verify.harness (sign-test bounds of the median paired difference over replicates = random "
            "splits and graphs, family-wise alpha 0.05 over GTV's experiment claims); outside the paper's setting, so "
            "never refuted")


def _details_five(ctx: CheckContext, scale) -> dict:
    return _details(ctx, scale, DESIGN_FIVE)


#: Why the digits claims without IFCA declare no grid.
_NO_GRID = ("the stand-in's choices are fixed in docs/papers/gtv.md (C-gtv-7) and lambda is validated as the paper "
            "does; the only other unreported choice, IFCA's initialisation, concerns only the IFCA claims, which are "
            "decided over a grid of it")


def _experiment(claim_id: str, **fields):
    """A digits experiment: on the convex stand-in, so outside the paper's setting."""
    return experiment(family=FAMILY, claim_id=claim_id, outside_setting=OUTSIDE_SETTING, **{"figures": _figures,
                                                                                              **fields})


DIGITS_LOCAL = _experiment(
    "gtv.digits_local", title="Fig. 5: GTV at a validated lambda beats independent local training on the digits",
    citations=_CITE,
    statement=("Fig. 5 shows ACC^(val) against the iteration for several lambda including lambda = 0, where "
               "Algorithm 1 'separately minimizes the local loss functions'; checked: Algorithm 1 at the lambda "
               "chosen on validation has a higher test accuracy than every node's own model."),
    hypotheses=_SETTING, design=DESIGN, baselines=(),
    statements=(above("algorithm1", "local", "test_accuracy",
                      text="Algorithm 1 above local training (test accuracy, pp)"),),
    what="Fig. 5: Algorithm 1 at a validated lambda more accurate than independent local training (lambda = 0)",
    figure_arms=("pooled", "ifca", "oracle"), details=_details, expected=Verdict.CONFIRMED,
    reason=("Algorithm 1 at the validated lambda is about 4 pp above local training at the paper's size (median "
            "+3.8 pp, sign-test bounds [+3.3, +4.9], 16 of 16 replicates; ci: +2.8 pp [+1.6, +6.4], 8 of 8) and "
            "within one test image of the oracle cluster-wise models (median 0 pp, [-0.6, 0]): median test "
            "accuracy 99.4 % vs 95.4 % (local) and 100 % (oracle). Validation picks lambda = 1 or 10, whose "
            "runs coincide: the 4-nearest-node graph had no inter-cluster edge on every draw inspected, so "
            "large lambda tends to the cluster-wise models (lambda -> inf pools only on a connected graph)."),
    readout_kind="accuracy", no_choices=_NO_GRID)
DIGITS_POOLED = _experiment(
    "gtv.digits_pooled", title="Fig. 5: GTV at a validated lambda beats one pooled model on the digits",
    citations=_CITE,
    statement=("Fig. 5's other extreme, lambda -> inf, 'is equivalent to learning a single model on all pooled "
               "local datasets' (FedAvg's fixed point); checked: Algorithm 1 at the validated lambda has a higher "
               "test accuracy than the pooled model."),
    hypotheses=_SETTING, design=DESIGN, baselines=(),
    statements=(above("algorithm1", "pooled", "test_accuracy",
                      text="Algorithm 1 above one pooled model (test accuracy, pp)"),),
    what="Fig. 5: Algorithm 1 at a validated lambda more accurate than one pooled model (lambda -> inf, FedAvg)",
    figure_arms=("local", "ifca", "oracle"), details=_details, expected=Verdict.NOT_CHECKABLE,
    reason=("Not shown either way: the pooled model is nearly as good on the stand-in (median 98.75 % against "
            "Algorithm 1's 99.4 %; paired median 0 pp, bounds [-0.2, +1.4] at 24 replicates; ci [-1.9, +2.5] "
            "at 8). With labels +-1 within each pair one linear model separates {0, 2} from {1, 3} on 8x8 "
            "digits, so the clusters' tasks hardly conflict; the paper prints no accuracy for lambda -> inf. "
            "What would decide it: the MNIST ANN of (42) with one-hot labels, or many more replicates "
            "(the sign test has too many ties at 80 test images per cluster)."),
    readout_kind="accuracy", no_choices=_NO_GRID)
DIGITS_IFCA = _experiment(
    "gtv.digits_ifca", title="Fig. 6: Algorithm 1 more accurate than IFCA, and faster, on the digits",
    citations=_CITE + (cite("Section VI-C, Fig. 6", lines="618-623"),),
    statement=("Fig. 6 compares ACC^(val) of Algorithm 1 with IFCA [19] (and pFedMe, a direct optimizer): "
               "'Both the ACC^(val) and the convergence rate ... is improved by Algorithm 1'; checked: Algorithm "
               "1's test accuracy above IFCA's after R = 50 iterations / rounds, and its test accuracy averaged over "
               "the iterations / rounds 5, 10, ..., 50 (the area under Fig. 6's curve: the convergence rate) above "
               "IFCA's, over IFCA's unreported initialisation."),
    hypotheses=_SETTING + ("IFCA: k = 2 models, model averaging, 5 local GD steps per round, 50 rounds",),
    design=DESIGN, grid=IFCA_GRID, choices=CHOICES, baselines=(IFCA,),
    statements=(above("algorithm1", "ifca", "test_accuracy", text="Algorithm 1 above IFCA (test accuracy, pp)"),
                above("algorithm1", "ifca", "mean_test_accuracy",
                      text="Algorithm 1 above IFCA (test accuracy averaged over iterations / rounds 5..R, pp)")),
    what="Fig. 6: Algorithm 1 more accurate than IFCA and converging faster",
    figure_arms=("local", "pooled", "oracle"), details=_details, expected=Verdict.NOT_CHECKABLE,
    reason=("Not shown either way over IFCA's unreported initialisation. Final accuracy: with random N(0, I) "
            "models IFCA separates the clusters and matches Algorithm 1 (paired median 0 pp, bounds [-0.6, +0.2] "
            "at 24 replicates); with identical models at 0 it starts as FedAvg and Algorithm 1 is ahead by a median "
            "+1.25 pp ([0, +2.5]; about 200 replicates would confirm it); both reach about 99.4 % at the "
            "paper's size. Convergence rate (accuracy averaged over the iterations / rounds): Algorithm 1 ahead "
            "by a median +0.7 pp (random) and +0.9 pp (identical), 16 and 15 of 24 replicates, not significant. "
            "IFCA's unreported step joins the grid: with random models and the step 1.9/beta_max IFCA is level or "
            "ahead (final 0 pp [-0.6, 0], averaged -0.8 pp [-1.5, +0.2], 24 replicates; an independent audit saw "
            "IFCA ahead there), so the direction depends on IFCA's initialisation and step."),
    readout_kind="accuracy")
DIGITS_FIVE = _experiment(
    "gtv.digits_five_clusters",
    title="Fig. 7: Algorithm 1 more accurate than IFCA, and faster, on the digits with five clusters",
    citations=(cite("Section VI-C, Table II, Fig. 7", lines="620-635"),),
    statement=("Fig. 7 extends the experiment to n = 100 nodes in five clusters of 20 holding the digit pairs of "
               "Table II: 'Algorithm 1 demonstrates improvements in both ACC^(val) and convergence rate'; checked "
               "as for two clusters: Algorithm 1's final test accuracy and its accuracy averaged over the "
               "iterations / rounds above IFCA's (k = 5), over IFCA's unreported initialisation."),
    hypotheses=("scikit-learn's 8x8 digits: 5 clusters x 20 nodes holding the pairs {0, 1}, ..., {8, 9}, 10 train "
                "/ 4 validation images per node, 70 held-out test images per cluster (pair {8, 9} has 354 "
                "images; ci: 5 x 3 nodes)",) + _SETTING[1:2] + (
                "Algorithm 1: nLasso, theta = 1, R = 50; lambda chosen by validation cross-entropy from "
                "{0.1, 1, 10} (ci: {0.1, 1})",) + _SETTING[3:] + (
                "IFCA: k = 5 models, model averaging, 5 local GD steps per round, 50 rounds",),
    design=DESIGN_FIVE, grid=IFCA_GRID, choices=CHOICES, baselines=(IFCA,),
    statements=DIGITS_IFCA.statements,
    what="Fig. 7 (five clusters): Algorithm 1 more accurate than IFCA and converging faster",
    figures=_figures_five, figure_arms=("local", "pooled", "oracle"), details=_details_five,
    expected=Verdict.NOT_CHECKABLE,
    reason=("IFCA's step size is not reported and joins its initialisation on the grid (found by an independent "
            "re-audit). At the paper's size (16 / 24 replicates) Algorithm 1 is above IFCA on both statements at "
            "three of the four points: random initial models with IFCA's step 1/beta_max, final test accuracy +1.5 "
            "pp [+0.5, +2.1] and averaged +3.0 pp [+1.7, +4.7]; identical models, +3.0 [+1.6, +4.1] / +3.4 [+1.9, "
            "+5.6] (1/beta_max) and +2.1 [+1.1, +3.4] / +2.2 [+1.2, +4.6] (1.9/beta_max). With random models and "
            "the step 1.9/beta_max the final-accuracy gain is undecided at 24 replicates, +1.0 pp [-0.03, +2.0] "
            "(averaged +1.35 [+0.55, +3.3]): not checkable, with that point as what would decide it. Median test "
            "accuracy 98.6 % (Algorithm 1), 97.3 % (IFCA, step 1/beta_max), 99.0 % (oracle), 95.2 % (local), "
            "90.6 % (one pooled model). ci (5 x 3 nodes) does not decide in 8 replicates either."),
    readout_kind="accuracy")

EXPERIMENTS = (DIGITS_LOCAL, DIGITS_POOLED, DIGITS_IFCA, DIGITS_FIVE)
