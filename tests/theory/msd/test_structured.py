"""Structured operators A, R_mu, B and (S1)/(S2) against the explicit matrices (docs/papers/paofed.md#structured,
docs/papers/paofed.md#msd-checks)."""

import numpy as np
import pytest

from theory.msd import (
    MODELS,
    analysis_moments,
    apply_A,
    apply_B,
    apply_F,
    apply_R,
    bvec,
    f_matrix,
    middle_factor,
    msd_steady_state,
    msd_transient,
    msd_transient_naive,
    qa_matrix,
    qb_matrix,
    reference_instance,
    spectral_radius_F,
)
from theory.msd.structured import SymmetricPacking, f_matvec
from verify.paofed._common import instance_from_dict, instance_space, instance_to_dict
from verify.tolerance import GMRES_RTOL


@pytest.fixture(scope="module")
def small():
    inst = instance_from_dict(instance_space.sample(np.random.default_rng(11), max_K=3, max_D=3, max_l=1))
    return analysis_moments(inst)


@pytest.mark.parametrize("symmetric", [True, False])
def test_operators_equal_explicit_matrices(small, symmetric):
    m = small
    rng = np.random.default_rng(2)
    X = rng.standard_normal((m.N, m.N))
    if symmetric:
        X = X + X.T
    D = m.D
    # structured vs explicit products: measured <= 3.4e-16 here; 1e-13 / 1e-12 (F = three factors) leave room for
    # other random instances' larger entries
    assert np.max(np.abs(bvec(apply_A(m, X), D) - qa_matrix(m) @ bvec(X, D))) <= 1e-13
    assert np.max(np.abs(bvec(apply_B(m, X), D) - qb_matrix(m) @ bvec(X, D))) <= 1e-13
    for model in ("seed", "exact"):
        assert np.max(np.abs(bvec(apply_R(m, X, model, 0.3), D) - middle_factor(m, model, 0.3) @ bvec(X, D))) <= 1e-13
        assert np.max(np.abs(bvec(apply_F(m, X, model, 0.3), D) - f_matrix(m, model, 0.3) @ bvec(X, D))) <= 1e-12


def test_buffers_give_the_same_result_and_are_checked(small):
    m = small
    X = np.random.default_rng(4).standard_normal((m.N, m.N))
    out, work = np.empty_like(X), (np.empty_like(X), np.empty_like(X))
    assert np.array_equal(apply_F(m, X, "exact", out=out, work=work), apply_F(m, X, "exact"))
    with pytest.raises(ValueError, match="share"):
        apply_A(m, X, out=X)


def test_transient_equals_seed_weighting_recursion(small):
    for model in ("seed", "exact"):
        a = msd_transient(small, 40, model)
        b = msd_transient_naive(small, 40, model)
        assert np.max(np.abs(a - b) / b) <= 1e-12  # two recursions over 40 steps: measured 4e-15


@pytest.mark.parametrize("method", ["gmres", "bicgstab", "fixed_point"])
def test_steady_state_methods_agree_and_certify_residual(method):
    inst = reference_instance(0.1)
    # GMRES_RTOL for the Krylov methods; the fixed point stops on its step size, so one decade tighter
    sol = msd_steady_state(inst, "exact", method=method, rtol=GMRES_RTOL if method != "fixed_point" else 1e-14)
    assert sol.residual <= 1e-12  # 10 GMRES_RTOL, the Krylov solvers' own acceptance limit
    assert abs(10 * np.log10(sol.msd) - (-30.073)) <= 5e-4  # docs/papers/paofed.md#instance-reference (labelled
    # regression value)
    # the reference instance's N; symmetric to ulps
    assert sol.C.shape == (65, 65) and np.allclose(sol.C, sol.C.T, atol=1e-15)


def test_transient_tends_to_steady_state():
    inst = reference_instance(0.2)
    msd = msd_transient(inst, 1500, "exact")
    assert abs(msd[-1] / msd_steady_state(inst, "exact").msd - 1) <= 1e-9  # 1500 contracting steps: transient gone


def test_unstable_step_has_no_steady_state():
    inst = reference_instance(0.9)  # beyond the exact threshold 0.6724 / lambda_max
    assert spectral_radius_F(inst, "exact") > 1
    with pytest.raises(ValueError, match="not solved"):
        msd_steady_state(inst, "exact", method="fixed_point", maxiter=300)


@pytest.mark.parametrize(("kwargs", "text"), [({"model": "gauss"}, "model must"), ({"method": "lu"}, "method must"),
                                              ({"rtol": 2.0}, "rtol must"), ({"mu": -1.0}, "mu must")])
def test_bad_arguments(kwargs, text):
    with pytest.raises(ValueError, match=text):
        msd_steady_state(reference_instance(), **kwargs)


def test_spectral_radius_dense_path_for_tiny_problems():
    inst = instance_from_dict(instance_space.sample(np.random.default_rng(0), max_K=2, max_D=2, max_l=0))
    d = instance_to_dict(inst)
    d.update(K=1, p=d["p"][:1], sigma2_eta=d["sigma2_eta"][:1], R=d["R"][:1], D=2)
    tiny = instance_from_dict(d)  # N = 2 x 2 = 4, N^2 = 16 <= 64: materialised
    F = f_matrix(tiny, "seed")
    assert abs(spectral_radius_F(tiny, "seed") - np.max(np.abs(np.linalg.eigvals(F)))) <= 1e-14  # same dense eigvals


def _delayed_instance(l_max, selection):
    """A small random instance with ``l_max`` delay groups and the given selection law (alpha_l = 0.3, l >= 1)."""
    d = instance_space.sample(np.random.default_rng(5 + l_max), max_K=3, max_D=3, max_l=0)
    d.update(l_max=l_max, alpha=[1.0] + [0.3] * l_max, selection=selection)
    return analysis_moments(instance_from_dict(d))


def _symmetric(rng, N):
    A = rng.standard_normal((N, N))
    return A + A.T


@pytest.mark.parametrize("row_loops", [False, True])
@pytest.mark.parametrize("selection", ["subset", "window"])
@pytest.mark.parametrize("l_max", [0, 1, 3])
def test_packed_matvec_equals_apply_F_and_the_explicit_F(l_max, selection, row_loops):
    """The packed path (F on the upper block triangle of symmetric matrices, block shifts of the delay groups)
    equals apply_F and the explicit matrix, with its buffers reused across calls."""
    m = _delayed_instance(l_max, selection)
    N, D, mu = m.N, m.D, 0.7 * m.mu
    pk = SymmetricPacking(N, row_loops=row_loops)
    rng = np.random.default_rng(3)
    X1, X2 = _symmetric(rng, N), _symmetric(rng, N)
    for model in MODELS:
        F = f_matrix(m, model, mu)
        mv, imv = f_matvec(m, model, mu, packing=pk), f_matvec(m, model, mu, packing=pk, identity_minus=True)
        first = mv(pk.pack(X1)).copy()
        second = mv(pk.pack(X2))
        for X, got in ((X1, first), (X2, second)):
            FX = apply_F(m, X, model, mu)
            scale = np.abs(FX).max()
            # the same products as apply_F, summed in another order in the server row: equal to rounding
            assert np.allclose(pk.unpack(got), FX, rtol=1e-13, atol=1e-13 * scale)
            # against the explicit (N^2 x N^2) F: three factors, as in test_operators_equal_explicit_matrices
            assert np.max(np.abs(bvec(pk.unpack(got), D) - F @ bvec(X, D))) <= 1e-12
            # v - F(v), formed from the same F(v)
            assert np.allclose(imv(pk.pack(X)), pk.pack(X) - pk.pack(FX), rtol=1e-13, atol=1e-13 * scale)
        again = mv(pk.pack(X1))
        assert again is second and np.array_equal(again, first)  # one output buffer; reuse leaves no trace


def test_packed_matvec_checks_its_model_and_packing():
    m = _delayed_instance(1, "subset")
    with pytest.raises(ValueError, match="model must"):
        f_matvec(m, "gauss", packing=SymmetricPacking(m.N))
    with pytest.raises(ValueError, match="packing must"):
        f_matvec(m, "seed", packing=SymmetricPacking(m.N + 1))


@pytest.mark.parametrize("row_loops", [False, True])
def test_unpack_upper_writes_the_upper_triangle_of_unpack_only(row_loops):
    N = 13  # small; both packings
    pk = SymmetricPacking(N, row_loops=row_loops)
    v = pk.pack(_symmetric(np.random.default_rng(6), N))
    U = np.full((N, N), 7.0)  # a marker the strict lower triangle keeps
    pk._unpack_upper(v, U)
    iu, il = np.triu_indices(N), np.tril_indices(N, -1)
    assert np.array_equal(U[iu], pk.unpack(v)[iu]) and np.all(U[il] == 7.0)  # the same divisions: bit for bit
