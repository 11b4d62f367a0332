"""FedPDM-DP's experiment design: the loss read-out on the label-sorted pool is the old read-out (the clients'
pooled data in their order, every class score), bit for bit on the digits, to a few ulps on the synthetic data
(verify/fedpdm/_experiment_design.py)."""

import dataclasses

import numpy as np
import pytest

from reference_impl.fedpdm import global_objective
from reference_impl.fedpdm.objective import as_matrix
from verify.fedpdm import _experiment_design as design


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
