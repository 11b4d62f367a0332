"""c_k, Poisson-binomial beta moments, E[A_e], E[B_e] and the mean matrix (docs/papers/paofed.md#expectations,
docs/papers/paofed.md#mean-square, docs/papers/paofed.md#appendix-b)."""

import itertools

import numpy as np
import pytest

from theory.msd import (
    PAOFedInstance,
    analysis_moments,
    beta_moments,
    expected_A,
    expected_B,
    expected_server_weight,
    mean_matrix,
    mean_operator,
    nonempty_group_probability,
    poisson_binomial_pmf,
    reference_instance,
    source_blocks,
)
from verify.paofed._common import e8_instance


def _brute_force(p, delta, alpha, l_max):
    K = len(p)
    bb = np.zeros((K, l_max + 1))
    second = np.zeros((l_max + 1, K, K))
    for ell in range(l_max + 1):
        r = np.asarray(p) * (1 - delta) * delta ** ell
        for b in itertools.product((0, 1), repeat=K):
            b = np.array(b)
            prob = np.prod(np.where(b == 1, r, 1 - r))
            beta = alpha[ell] * b / max(1, b.sum())
            bb[:, ell] += prob * beta
            second[ell] += prob * np.outer(beta, beta)
    return bb, second


@pytest.mark.parametrize("p", [[0.9, 0.6, 0.4, 0.2], [0.5, 0.5, 0.9, 0.5, 0.5], [1.0, 1.0, 1.0],
                               [0.05, 0.99, 0.3, 0.7, 0.2, 0.6, 0.45, 0.8], [1.0], [0.3, 1.0]])
def test_beta_moments_equal_brute_force_enumeration(p):
    alpha = [1.0, 0.5, 0.25]
    bb, second = beta_moments(p, 0.3, alpha, 2)
    eb, es = _brute_force(p, 0.3, alpha, 2)
    # closed-form moments vs enumeration of <= 2^8 outcomes: probabilities <= 1, rounding ~1e-16 per term
    assert np.max(np.abs(bb - eb)) <= 1e-14
    assert np.max(np.abs(second - es)) <= 1e-14


def test_beta_bar_sums_to_alpha_times_nonempty_probability():
    p = np.array([0.9, 0.6, 0.4, 0.2])
    bb, _ = beta_moments(p, 0.3, [1.0, 0.5, 0.25], 2)
    assert np.allclose(bb.sum(axis=0), np.array([1.0, 0.5, 0.25]) * nonempty_group_probability(p, 0.3, 2),
                       rtol=1e-14, atol=0)  # two roundings of the same product: ~1e-16


def test_poisson_binomial_pmf_against_binomial():
    from scipy import stats

    # equal p: the Poisson-binomial is Binomial(6, 0.3); the recursion's rounding over 6 steps stays ~1e-15 relative
    assert np.allclose(poisson_binomial_pmf([0.3] * 6), stats.binom.pmf(np.arange(7), 6, 0.3), rtol=1e-13, atol=0)


def test_spec_reference_values():
    m = analysis_moments(reference_instance())
    # labelled regression values of docs/papers/paofed.md#instance-reference, printed to 6 decimals: half a unit in the
    # last place
    assert abs(m.beta_bar[0, 0] - 0.408083) < 5e-7 and abs(m.beta_bar[3, 2] - 0.002966) < 5e-7
    assert abs(expected_server_weight(m) - 0.564915) < 5e-7
    # erratum E8 (docs/papers/paofed.md#erratum-e8)
    assert abs(expected_server_weight(e8_instance()) - (-1.3923)) < 5e-5


def test_expected_matrices_are_right_stochastic_with_the_layout_of_spec_3_2():
    m = analysis_moments(reference_instance())
    EA, EB = expected_A(m), expected_B(m)
    assert np.allclose(EA.sum(axis=1), 1, atol=1e-15) and np.allclose(EB.sum(axis=1), 1, atol=1e-15)  # ~5 ulps
    assert np.allclose(EA[1:5, 0], m.c) and np.allclose(np.diag(EA)[1:5], 1 - m.c)
    src = source_blocks(4, 2)  # K = 4, l_max = 2: 1 + K (l_max + 1) = 13 blocks (docs/papers/paofed.md#extended-state
    # layout)
    assert src.tolist() == [0, 1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8]
    for i in range(1, 13):
        assert EB[i, src[i]] == 1.0 and EB[i].sum() == 1.0
    assert np.allclose(EB[0, 1:], m.p_m * m.beta_bar.T.ravel())


def test_mean_operator_equals_the_product_of_dense_factors():
    inst = reference_instance(0.3)
    m = analysis_moments(inst)
    D = inst.D
    Re = np.zeros((m.N, m.N))
    for k in range(1, 5):
        Re[k * D:(k + 1) * D, k * D:(k + 1) * D] = inst.R[k - 1]
    M = np.kron(expected_B(m), np.eye(D)) @ (np.eye(m.N) - inst.mu * Re) @ np.kron(expected_A(m), np.eye(D))
    # the same products in another order; entries <= 1 and sparse rows: a few ulps
    assert np.max(np.abs(mean_matrix(m) - M)) <= 1e-15
    assert np.max(np.abs(mean_operator(m).toarray() - M)) <= 1e-15


@pytest.mark.parametrize(("kwargs", "text"), [
    ({"p": [0.0, 0.5], "delta": 0.3, "alpha": [1.0], "l_max": 0}, "p must"),
    ({"p": [0.5], "delta": 1.0, "alpha": [1.0], "l_max": 0}, "delta must"),
    ({"p": [0.5], "delta": 0.3, "alpha": [1.0, 0.5], "l_max": 0}, "alpha must"),
    ({"p": [0.5], "delta": 0.3, "alpha": [1.0], "l_max": -1}, "l_max must"),
])
def test_beta_moments_reject_bad_input(kwargs, text):
    with pytest.raises(ValueError, match=text):
        beta_moments(**kwargs)


def test_bad_arguments_of_matrices_and_instances():
    with pytest.raises(TypeError, match="PAOFedInstance"):
        expected_A("not an instance")
    with pytest.raises(ValueError, match="too large"):
        mean_matrix(PAOFedInstance(K=30, D=20, l_max=10, m=1, selection="subset", p=np.full(30, 0.5), delta=0.0,
                                   alpha=np.ones(11), sigma2_eta=np.zeros(30), R=np.zeros((30, 20, 20)),
                                   w_star=np.zeros(20), mu=0.1))
    with pytest.raises(ValueError, match="mu must"):
        mean_operator(reference_instance(), -1.0)
