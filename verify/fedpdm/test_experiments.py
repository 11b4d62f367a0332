"""Property tests of FedPDM-DP's Section V experiment (Fig. 2) against the reconstructed baselines.

Each property decides one statement with the harness (:func:`verify.harness.evaluate_statement`, exact sign-test
bounds of the median paired difference) on a reduced MNIST-shaped instance (:data:`MINI`) for a drawn root seed and,
where the statement generalises, a drawn total budget; the ``@example`` is the paper's set-up (epsbar = 7, root
seed 0). A property asserts that a statement is *shown* (p <= ALPHA), never that something failed to reach
significance.
"""

import numpy as np
import pytest
from hypothesis import example, given, settings, target

from verify.budget import examples
from verify.fedpdm._experiment_design import DESIGN, EPSILON_PAPER, Scale
from verify.fedpdm.experiments import BASELINES, MNIST_DP_LOSS, arm, gap_statement
from verify.harness import above, below, evaluate_statement
from verify.records import CheckContext, Verdict
from verify.strategies import fedpdm_experiment_budgets, fedpdm_experiment_seeds

#: Level of each property's one statement (10 replicates: a sign test reaches 2^-10 ~ 1e-3).
ALPHA = 0.01
#: Replicates per property (the fewest at which ALPHA is reachable with room: 2^-10 < ALPHA / 10).
N = 10
#: 10 clients of 60 samples, 8 x 8 pixels (d = 650), b = 3 so that q = Q_max b / |D_i| = 0.25 as at the paper's
#: size; 15 rounds.
MINI = Scale(dataset="synthetic", N=10, K=3, b=3, Q_max=5, T=15, eval_every=3, n_train=600, n_test=200, side=8)


def assert_shown(seed, statement, *, design=DESIGN["synthetic"], scale=MINI):
    """The statement's p-value on the reduced instance is <= ALPHA; target() pushes toward a violation."""
    outcome = evaluate_statement(CheckContext(seed=seed), design, statement, N, ALPHA, scale=scale)
    target(outcome.p_confirm, label=f"p-value of: {statement.text}")
    assert outcome.p_confirm <= ALPHA, (statement.text, outcome)
    return outcome


@pytest.mark.claim("fedpdm.experiment_dp_loss")
@pytest.mark.claim("fedpdm.experiment_digits_dp_loss")
@settings(max_examples=examples("one"))
@given(seed=fedpdm_experiment_seeds(), epsilon=fedpdm_experiment_budgets(),
       baseline=fedpdm_experiment_seeds().map(lambda i: BASELINES[i % len(BASELINES)]))
@example(seed=0, epsilon=EPSILON_PAPER, baseline="fedavg")
@example(seed=0, epsilon=EPSILON_PAPER, baseline="scaffold")
def test_fedpdm_dp_ends_with_a_lower_loss_than_each_baseline(seed, epsilon, baseline):
    """Property: at every total budget epsbar in [5, 30] (the same noise multiplier for every arm), FedPDM-DP ends
    with a significantly lower training loss (24) than each reconstructed baseline (Fig. 2(c))."""
    assert_shown(seed, below(arm("fedpdm", epsilon), arm(baseline, epsilon), "final_loss"))


@pytest.mark.claim("fedpdm.experiment_fig1_budget_order")
@settings(max_examples=examples("one"))
@given(seed=fedpdm_experiment_seeds(), epsilon=fedpdm_experiment_budgets())
@example(seed=0, epsilon=10.0)
def test_fedpdm_loss_falls_with_the_budget(seed, epsilon):
    """Property: for every epsbar in [5, 30], FedPDM-DP at 3 epsbar ends with a significantly lower training loss
    than at epsbar, and without DP lower than at epsbar (Fig. 1(a))."""
    assert_shown(seed, above(arm("fedpdm", epsilon), arm("fedpdm", 3.0 * epsilon), "final_loss"))
    assert_shown(seed, above(arm("fedpdm", epsilon), arm("fedpdm", None), "final_loss"))


@pytest.mark.claim("fedpdm.experiment_dp_gap")
@settings(max_examples=examples("one"))
@given(seed=fedpdm_experiment_seeds(), baseline=fedpdm_experiment_seeds().map(lambda i: BASELINES[i % 3]))
@example(seed=0, baseline="fedprox")
def test_fedpdm_dp_gap_is_smaller_than_each_baseline_gap(seed, baseline):
    """Property: FedPDM-DP's DP-minus-no-DP training-loss gap at epsbar = 7 is significantly smaller than each
    reconstructed baseline's (the four arms of a replicate paired)."""
    assert_shown(seed, gap_statement(baseline))


@pytest.mark.claim("fedpdm.experiment_nodp_loss")
@pytest.mark.claim("fedpdm.experiment_nodp_accuracy")
@pytest.mark.claim("fedpdm.experiment_dp_accuracy")
@settings(max_examples=examples("one"))
@given(seed=fedpdm_experiment_seeds())
@example(seed=0)
def test_without_dp_the_baselines_end_below_fedpdm(seed):
    """Property: without DP the FedAvg reconstruction ends with a significantly LOWER training loss than FedPDM (the
    paper's ordering reversed), and with DP at epsbar = 7 no arm's accuracy leaves the neighbourhood of chance: the
    accuracy claims are decided by noise, not by the algorithm."""
    assert_shown(seed, below(arm("fedavg", None), arm("fedpdm", None), "final_loss"))
    ctx = CheckContext(seed=seed)
    curves = [evaluate_statement(ctx, DESIGN["synthetic"], above(arm(a), arm("fedpdm"), "final_accuracy"), N,
                                 ALPHA, scale=MINI) for a in BASELINES]
    # |median accuracy difference| < 0.2 (two classes' worth out of 10): noise-dominated at epsbar = 7
    assert all(abs(o.median) < 0.2 for o in curves), curves


@pytest.mark.claim("fedpdm.experiment_mnist_dp_loss")
@settings(max_examples=examples("one"))
@given(seed=fedpdm_experiment_seeds())
@example(seed=0)
def test_mnist_claim_needs_the_users_file_and_reads_it(seed, tmp_path_factory):
    """Property: without the user's MNIST file the claim is not_checkable naming the deciding command; with a file in
    the Keras layout (synthetic digits-like arrays here) the design reads it and FedPDM-DP ends below FedAvg-DP."""
    result = MNIST_DP_LOSS.check(CheckContext(seed=seed))
    assert result.verdict is Verdict.NOT_CHECKABLE and "--data mnist=" in result.summary
    rng = np.random.default_rng(seed)
    path = tmp_path_factory.mktemp("mnist") / "mnist.npz"
    images = (rng.uniform(size=(700, 8, 8)) * 255).astype(np.uint8)  # 600 train + 100 test images of 8 x 8
    labels = rng.integers(0, 10, 700).astype(np.uint8)
    np.savez(path, x_train=images[:600], y_train=labels[:600], x_test=images[600:], y_test=labels[600:])
    scale = Scale(dataset="mnist", N=10, K=3, b=3, Q_max=5, T=15, eval_every=3, path=str(path))
    assert_shown(seed, below(arm("fedpdm"), arm("fedavg"), "final_loss"), design=DESIGN["mnist"], scale=scale)
