"""The explicit (naive) route: size limit, stochasticity, the Gaussian fourth moment."""

import numpy as np
import pytest

from theory.msd import (
    PAOFedInstance,
    analysis_moments,
    bvec,
    f_matrix,
    middle_factor,
    msd_steady_state_naive,
    qa_matrix,
    qb_matrix,
    r4_gaussian,
    reference_instance,
)
from verify.paofed.expectations_enumeration import enumeration_instance


def test_refuses_large_instances_naming_the_size():
    inst = PAOFedInstance(K=4, D=5, l_max=5, m=5, selection="subset", p=np.ones(4), delta=0.8, alpha=np.ones(6),
                          sigma2_eta=np.full(4, 0.01), R=np.stack([np.eye(5)] * 4), w_star=np.ones(5), mu=0.1)
    with pytest.raises(ValueError, match="N = N_b D = 25 x 5 = 125"):
        f_matrix(inst)


def test_row_sums_and_signs():
    m = analysis_moments(enumeration_instance([1.0, 1.0], 0.5, [1.0, 1.0]))
    qa, qb = qa_matrix(m), qb_matrix(m)
    # stochastic rows summed in floating point: a few ulps (Q_B's rows hold more, signed, terms)
    assert np.allclose(qa.sum(axis=1), 1, atol=1e-15) and np.allclose(qb.sum(axis=1), 1, atol=1e-14)
    assert qa.min() >= -1e-16  # nonnegative up to one rounding
    assert abs(qb.min() - (-0.0694)) < 5e-5  # erratum E10 (docs/papers/paofed.md#erratum-e10),
    # docs/papers/paofed.md#review-note-6


def test_F_at_zero_step_is_QB_QA():
    m = analysis_moments(reference_instance())
    F0 = f_matrix(m, "exact", 0.0, dense=False)
    assert abs(F0 - qb_matrix(m) @ qa_matrix(m)).max() <= 1e-15  # same product: a few ulps


def test_gaussian_fourth_moment_is_isserlis():
    inst = reference_instance()
    m = analysis_moments(inst)
    rng = np.random.default_rng(3)
    X = rng.standard_normal((m.N, m.N))
    out = r4_gaussian(m) @ bvec(X, m.D)
    D = m.D
    expected = np.zeros((m.N, m.N))
    for k in range(1, 5):
        for kk in range(1, 5):
            Rk, Rkk = inst.R[k - 1], inst.R[kk - 1]
            blk = X[k * D:(k + 1) * D, kk * D:(kk + 1) * D]
            val = Rk @ blk @ Rkk
            if k == kk:
                val = val + Rk @ blk.T @ Rk + np.trace(Rk @ blk) * Rk
            expected[k * D:(k + 1) * D, kk * D:(kk + 1) * D] = val
    assert np.max(np.abs(out - bvec(expected, D))) <= 1e-12  # the same Isserlis sums in two orders: rounding only


def test_middle_factor_seed_has_no_mu_squared_term():
    m = analysis_moments(reference_instance())
    diff = middle_factor(m, "exact", 0.1) - middle_factor(m, "seed", 0.1)
    assert abs(diff - 0.01 * r4_gaussian(m)).max() <= 1e-15  # mu^2 = 0.01 at mu = 0.1; rounding only


def test_dense_and_sparse_direct_solves_agree():
    m = analysis_moments(enumeration_instance([0.9, 0.6], 0.3, [1.0, 0.5]))
    a = msd_steady_state_naive(m, "exact", 0.2, solver="dense")
    b = msd_steady_state_naive(m, "exact", 0.2, solver="sparse")
    assert abs(a - b) <= 1e-12 * abs(a)  # two direct solves of one system: rounding x its condition
    with pytest.raises(ValueError, match="solver must"):
        msd_steady_state_naive(m, "exact", 0.2, solver="lu")
    with pytest.raises(ValueError, match="model must"):
        f_matrix(m, "gaussian")
