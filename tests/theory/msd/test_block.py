"""bvec, bvec^{-1} and the Tracy-Singh product: the identities
of docs/papers/paofed.md#mean-square (docs/papers/paofed.md#extended-state)."""

import numpy as np
import pytest

from theory.msd import block_kron, bvec, bvec_inverse

TOL = 1e-12  # identities on 6 x 6 standard-normal matrices: sums of ~36 products, rounding ~1e-14
NB, D = 3, 2


@pytest.fixture
def mats():
    rng = np.random.default_rng(7)
    return [rng.standard_normal((NB * D, NB * D)) for _ in range(4)]


def test_bvec_of_product(mats):
    X, S, Y, _ = mats
    assert np.max(np.abs(bvec(X @ S @ Y, D) - block_kron(Y.T, X, D) @ bvec(S, D))) <= TOL


def test_trace_identity(mats):
    S, G, _, _ = mats
    assert abs(np.trace(S.T @ G) - bvec(S, D) @ bvec(G, D)) <= TOL


def test_mixed_product_and_transpose(mats):
    A, B, C, E = mats
    lhs = block_kron(A, B, D) @ block_kron(C, E, D)
    assert np.max(np.abs(lhs - block_kron(A @ C, B @ E, D))) <= 1e-11  # 36 x 36 products: 10 TOL
    assert np.array_equal(block_kron(A, B, D).T, block_kron(A.T, B.T, D))


def test_bvec_is_a_permutation_of_vec_and_block_kron_is_similar_to_kron(mats):
    A, B, _, _ = mats
    n = NB * D
    perm = np.array([bvec(np.eye(n * n)[:, i].reshape(n, n, order="F"), D).argmax() for i in range(n * n)])
    P = np.eye(n * n)[perm].T  # bvec(X) = P vec(X)
    X = mats[2]
    assert np.array_equal(P @ X.ravel(order="F"), bvec(X, D))
    assert np.max(np.abs(block_kron(A, B, D) - P @ np.kron(A, B) @ P.T)) <= TOL


def test_block_scalar_factors_factorise():
    rng = np.random.default_rng(1)
    X, X2 = rng.standard_normal((NB, NB)), rng.standard_normal((NB, NB))
    Y, Y2 = rng.standard_normal((D, D)), rng.standard_normal((D, D))
    lhs = block_kron(np.kron(X, Y), np.kron(X2, Y2), D)
    assert np.max(np.abs(lhs - np.kron(np.kron(X, X2), np.kron(Y, Y2)))) <= TOL


def test_round_trip_and_block_order():
    X = np.arange(36.0).reshape(6, 6)
    assert np.array_equal(bvec_inverse(bvec(X, 3), 3), X)
    # first D^2 entries: vec of block (0, 0); next: vec of block (1, 0)
    assert bvec(X, 3)[:9].tolist() == X[:3, :3].ravel(order="F").tolist()
    assert bvec(X, 3)[9:18].tolist() == X[3:, :3].ravel(order="F").tolist()


@pytest.mark.parametrize(("fn", "args", "text"), [
    (bvec, (np.zeros((4, 6)), 2), "square"),
    (bvec, (np.zeros((6, 6)), 4), "multiple of the block size"),
    (bvec, (np.zeros((6, 6)), 0), "D must be"),
    (bvec_inverse, (np.zeros(10), 2), r"length N\^2"),
    (block_kron, (np.zeros((4, 4)), np.zeros((6, 6)), 2), "same shape"),
])
def test_bad_input_is_rejected(fn, args, text):
    with pytest.raises(ValueError, match=text):
        fn(*args)
