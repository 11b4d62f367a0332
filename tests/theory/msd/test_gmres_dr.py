"""GMRES with deflated restarting (theory.msd.gmres_dr): the solution, the Krylov relation it leaves, the deflation."""

import numpy as np
import pytest

from theory.msd.gmres_dr import gmres_dr
from theory.msd.krylov import gmres


def _slow_modes(n: int, seed: int, complex_pairs: bool = False) -> np.ndarray:
    """A = I - F, F non-normal with spectral radius < 1 and five eigenvalues of F near 1 (the slow modes of (S2));
    with ``complex_pairs`` two of them a complex pair."""
    rng = np.random.default_rng(seed)
    T = np.diag(rng.uniform(-0.6, 0.6, n))
    T[:5, :5] = np.diag([0.995, 0.99, 0.985, 0.98, 0.975])
    if complex_pairs:
        T[0, 1], T[1, 0], T[1, 1] = 0.02, -0.02, 0.995  # eigenvalues 0.995 +- 0.02 i
    T += np.triu(rng.standard_normal((n, n)) * 0.3 / np.sqrt(n), 1)  # non-normal
    S = np.linalg.qr(rng.standard_normal((n, n)))[0] @ np.diag(rng.uniform(0.5, 2.0, n))  # non-orthogonal similarity
    return np.eye(n) - S @ T @ np.linalg.inv(S)


@pytest.mark.parametrize("complex_pairs", [False, True])
def test_gmres_dr_solves_and_leaves_an_orthonormal_arnoldi_relation(complex_pairs):
    n = 300  # small enough for a direct solve, long enough for several deflated restarts
    A = _slow_modes(n, 1, complex_pairs)
    b = np.random.default_rng(2).standard_normal(n)
    out = gmres_dr(lambda v: A @ v, b, rtol=1e-11, m=20, k=6)
    exact = np.linalg.solve(A, b)
    assert out.residual <= 1e-11 and np.linalg.norm(out.x - exact) <= 1e-8 * np.linalg.norm(exact)  # cond(A) ~ 1e3
    V, H = out.basis, out.hessenberg
    j = H.shape[1]
    assert np.linalg.norm(V @ V.T - np.eye(j + 1)) <= 1e-12  # CGS2: orthonormal to rounding
    assert np.linalg.norm(A @ V[:j].T - V.T @ H) <= 1e-10 * np.linalg.norm(H)  # A V_j = V_{j+1} H_bar


def test_deflation_needs_fewer_steps_than_restarted_gmres_on_slow_modes():
    """The five eigenvalues of A near 0 stall restarted GMRES(20) at every restart; GMRES-DR(20, 6) keeps them."""
    n = 400  # vector length: restarts matter (m = 20 << n)
    A = _slow_modes(n, 3)
    b = np.random.default_rng(4).standard_normal(n)
    dr = gmres_dr(lambda v: A @ v, b, rtol=1e-10, m=20, k=6)
    _, plain, res = gmres(lambda v: A @ v, b, rtol=1e-10, restart=20)
    assert dr.residual <= 1e-10 and res <= 1e-10
    assert dr.steps < plain  # deflated restarts keep the slow modes


def test_the_relation_holds_the_top_eigenvalues_of_F():
    """For A = I - F the kept space approximates the top eigenvectors of F: the Ritz values of I - H_bar's square part
    include F's largest eigenvalue (0.995) to a few digits already when the solve stops."""
    n = 300  # as above
    A = _slow_modes(n, 5)
    b = np.random.default_rng(6).standard_normal(n)
    out = gmres_dr(lambda v: A @ v, b, rtol=1e-11, m=20, k=6)
    j = out.hessenberg.shape[1]
    ritz = np.linalg.eigvals(np.eye(j) - out.hessenberg[:j])
    assert np.min(np.abs(ritz - 0.995)) <= 1e-6  # converged with the solve (deflated since the first restart)


def test_gmres_dr_edge_cases_and_cap():
    A = _slow_modes(100, 7)
    zero = gmres_dr(lambda v: A @ v, np.zeros(100), rtol=1e-10, m=10, k=3)
    assert zero.steps == 0 and not np.any(zero.x) and zero.basis is None
    capped = gmres_dr(lambda v: A @ v, np.ones(100), rtol=1e-14, m=10, k=3, maxiter=7)  # stops at the cap
    assert capped.steps == 7 and capped.residual > 1e-14
    seen = []
    gmres_dr(lambda v: A @ v, np.ones(100), rtol=1e-8, m=10, k=3, callback=lambda s, r: seen.append(s))
    assert seen == list(range(1, len(seen) + 1))
    for bad in ({"m": 10, "k": 9}, {"m": 10, "k": 0}, {"m": 100, "k": 3}, {"rtol": 0.0}):
        kw = {"rtol": 1e-8, "m": 10, "k": 3} | bad
        with pytest.raises(ValueError, match="GMRES-DR needs|rtol"):
            gmres_dr(lambda v: A @ v, np.ones(100), **kw)


@pytest.mark.parametrize("complex_pairs", [False, True])
def test_top_eigenpair_continues_from_the_solve_and_finds_the_top_eigenvalue(complex_pairs):
    """rho(F) continued from the GMRES-DR relation of A = I - F equals F's dense spectral radius, to the tolerance,
    with fewer matvecs than from the right side alone."""
    from theory.msd.krylov import top_eigenpair

    n = 300  # as above
    A = _slow_modes(n, 8, complex_pairs)
    F = np.eye(n) - A
    b = np.random.default_rng(9).standard_normal(n)
    out = gmres_dr(lambda v: A @ v, b, rtol=1e-11, m=20, k=6)
    j = out.hessenberg.shape[1]
    G = -out.hessenberg
    G[:j, :j] += np.eye(j)  # F V_j = V_{j+1} (I_bar - H_bar)
    rho = np.max(np.abs(np.linalg.eigvals(F)))
    cont = top_eigenpair(lambda v: F @ v, n, basis=(out.basis, G), tol=1e-10, ncv=12)
    cold = top_eigenpair(lambda v: F @ v, n, b, tol=1e-10, ncv=12)
    assert abs(abs(cont.value) - rho) <= 1e-8 * rho and cont.residual <= 1e-10  # well-conditioned top: error ~ residual
    assert cont.matvecs < cold.matvecs


def test_top_eigenpair_refuses_a_malformed_basis():
    from theory.msd.krylov import top_eigenpair

    W = np.linalg.qr(np.random.default_rng(10).standard_normal((50, 6)))[0].T  # 6 orthonormal rows
    for G in (np.zeros((6, 4)), np.zeros((3, 2)), np.zeros(6)):
        with pytest.raises(ValueError, match="basis must be"):
            top_eigenpair(lambda v: v, 50, basis=(W[:G.shape[0]] if G.ndim == 2 and G.shape[0] == 3 else W, G))


@pytest.mark.parametrize("model", ["seed", "exact"])
def test_structured_gmres_dr_equals_gmres_and_keeps_a_relation_of_F(model):
    """msd_steady_state(method="gmres-dr") gives GMRES's MSD, and SteadyState.krylov is a Krylov decomposition of F on
    packed symmetric matrices (checked with the matvec)."""
    from theory.msd import analysis_moments, msd_steady_state, reference_instance
    from theory.msd.structured import SymmetricPacking, f_matvec

    inst = analysis_moments(reference_instance(0.1))
    dr = msd_steady_state(inst, model, method="gmres-dr", rtol=1e-12, restart=20)
    ref = msd_steady_state(inst, model, method="gmres", rtol=1e-12)
    assert dr.residual <= 1e-11 and abs(dr.msd / ref.msd - 1) <= 1e-10  # both to residual 1e-12, cond ~ 1e2
    W, G = dr.krylov
    q = G.shape[1]
    F = f_matvec(inst, model, packing=SymmetricPacking(inst.N))
    FW = np.array([np.array(F(w)) for w in W[:q]])  # copies: the matvec reuses its buffer
    assert np.linalg.norm(FW - G.T @ W) <= 1e-11 * np.linalg.norm(G)  # F W_q = W_{q+1} G to rounding
