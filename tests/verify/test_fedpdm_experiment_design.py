"""Unit tests of the FedPDM-DP experiment claims' sharing: the first claim on a data set simulates the first look of
every arm that the claims on that data set compare, on each replicate together (its data built once), and the
later claims find their arms in the store.

The loss read-out on the label-sorted pool is the old read-out (the clients' pooled data in their order, every class
score): bit for bit on the digits, to a few ulps on the synthetic data."""

import dataclasses

import numpy as np
import pytest

from reference_impl.fedpdm import global_objective
from reference_impl.fedpdm.objective import as_matrix
from verify.fedpdm import _experiment_design as design
from verify.fedpdm import experiments
from verify.harness import clear_store
from verify.records import CheckContext


def test_the_first_claim_simulates_every_arm_of_its_data_set_once(monkeypatch):
    calls = []

    def fake_run(key, scale, root_seed, replicate):  # no simulation: only which arm and replicate are asked for
        calls.append((key, replicate))
        return np.zeros((2, len(scale.rounds)))

    monkeypatch.setattr(design, "_run", fake_run)
    clear_store()
    ctx = CheckContext(profile="ci", seed=12)  # a root seed of its own: no other test's arms in the store
    first_look = design.STAGES["ci"][0]
    family = {a.key for spec in (experiments.DP_LOSS, experiments.NODP_LOSS, experiments.DP_GAP,
                                 experiments.FIG1_ORDER) for a in spec.arms}
    experiments.DP_LOSS.check(ctx)
    assert sorted(calls, key=repr) == sorted(((k, i) for k in family for i in range(first_look)), key=repr)
    for check in (experiments.DP_ACCURACY.check, experiments.NODP_LOSS.check, experiments.NODP_ACCURACY.check,
                  experiments.DP_GAP.check, experiments.FIG1_ORDER.check):
        check(ctx)
    assert len(calls) == len(family) * first_look  # every later claim on the synthetic data read the store
    clear_store()


def _old_pooled(problem):
    return dataclasses.replace(problem, features=problem.features.reshape(1, -1, problem.n_features),
                               labels=problem.labels.reshape(1, -1), test_features=None, test_labels=None)


def _old_loss_by_one_gemm(problem, x0):
    """F of (24) on the pooled data by one GEMM of every class score, then the labelled one (the old path)."""
    a, lab = problem.features.reshape(-1, problem.n_features), problem.labels.reshape(-1)
    R, m = x0.shape[0], problem.n_classes
    margin = (a @ as_matrix(problem, x0).reshape(R * m, -1).T)[np.arange(a.shape[0]), np.arange(0, R * m, m)[:, None]
                                                                 + lab]
    f = np.logaddexp(0.0, -margin).mean(axis=-1)
    return f + problem.beta * (x0 * x0 / (1.0 + x0 * x0)).sum(axis=-1) + problem.gamma * np.abs(x0).sum(axis=-1)


@pytest.mark.parametrize("dataset", ["synthetic", "digits"])
def test_pooled_loss_is_the_old_read_out(dataset):
    scale = design.SCALES[dataset]["ci"]
    design._pooled.cache_clear()
    problem = design.replicate_problem(scale, 0, 1)
    pooled = design._pooled(scale, 0, 1)
    x0 = 0.05 * np.random.default_rng(2).standard_normal((6, problem.d))
    new = global_objective(pooled, x0, one_gemm=design._one_gemm(scale))
    if dataset == "digits":  # the clients' order and the per-model products, as before
        np.testing.assert_array_equal(new, global_objective(_old_pooled(problem), x0))
        assert np.array_equal(pooled.labels[0], problem.labels.reshape(-1))
    else:
        assert np.all(np.diff(pooled.labels[0]) >= 0)  # sorted by label
        np.testing.assert_allclose(new, _old_loss_by_one_gemm(problem, x0), rtol=8 * np.finfo(float).eps, atol=0)
        np.testing.assert_allclose(new, global_objective(problem, x0), rtol=8 * np.finfo(float).eps, atol=0)
    assert not pooled.features.flags.writeable and pooled.test_features is None
