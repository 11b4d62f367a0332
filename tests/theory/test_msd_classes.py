"""The class reduction with non-white R (theory.msd.classes) equals the unreduced structured route."""

import numpy as np
import pytest
from scipy.sparse.linalg import eigs

from theory.msd import PAOFedInstance, analysis_moments, msd_steady_state
from theory.msd.classes import (
    apply_F_classes,
    class_grouping,
    class_unknowns,
    classes_mean_spectral_radius,
    classes_msd_steady_state,
    compress_classes,
    expand_classes,
)
from theory.msd.expectations import mean_operator
from theory.msd.instance import toeplitz_covariances
from theory.msd.routes import mean_spectral_radius
from theory.msd.stability import spectral_radius_M
from theory.msd.structured import apply_F
from verify.tolerance import GMRES_RTOL, MSD_AGREEMENT_RTOL

#: K = 6 clients in 2 classes of 3 (the brief's small grouped instance)
LABELS = np.array([0, 1, 0, 1, 1, 0])
#: a class of three, a class of two and a singleton (exercises the singleton fold)
MIXED = np.array([0, 1, 0, 2, 1, 0])
#: one application is a sum of O(N_b) products of O(1) terms: a few hundred ulps of the largest entry
APPLY_RTOL = 256 * np.finfo(float).eps
#: the Krylov solves' rtol on the D = 3 instance: BiCGSTAB's short recurrences break down (NaN, then maxiter)
#: at GMRES_RTOL = 1e-13, the rounding floor of the preconditioned seed operator there; 1e-12 still leaves the
#: state 100x inside MSD_AGREEMENT_RTOL of the dense LU
KRYLOV_RTOL = 1e-12
#: rho(M) by dense eigenvalues / Arnoldi at tol 1e-13 on both sides: agreement to a few Arnoldi tolerances
MEAN_RHO_RTOL = 1e-10


def _instance(selection="subset", labels=LABELS, D=4, l_max=2, m=2, mu=0.1):
    rho = np.array([0.3, -0.6, 0.5])[labels]          # Toeplitz R_c = rho_c^|i-j| per class
    p = np.array([0.8, 0.3, 0.5])[labels]
    s2 = np.array([0.01, 0.02, 0.03])[labels]
    return PAOFedInstance(K=labels.size, D=D, l_max=l_max, m=m, selection=selection, p=p, delta=0.3,
                          alpha=0.5 ** np.arange(l_max + 1), sigma2_eta=s2, R=toeplitz_covariances(rho, D),
                          w_star=np.ones(D), mu=mu)


def _paper_groups(D):
    """The paper's federation (K = 256 in four availability groups, l_max = 10, window selection, p_m = 0.02) with
    Toeplitz R per group and mu = 0.8 / D, as benchmarks/bench_paofed_msd_groups.py and paofed_paper_groups.toml."""
    labels = np.repeat(np.arange(4), 64)
    return PAOFedInstance(K=256, D=D, l_max=10, m=1, selection="window", p=np.array([0.25, 0.1, 0.025, 0.005])[labels],
                          delta=0.2, alpha=0.2 ** np.arange(11), sigma2_eta=np.full(256, 0.01),
                          R=toeplitz_covariances(np.array([0.1, 0.3, 0.5, 0.7])[labels], D), w_star=np.ones(D),
                          mu=0.8 / D)


def _random_state(m, g, rng):
    n = class_unknowns(m.l_max, g.C, m.D)[1]
    return compress_classes(m, expand_classes(m, rng.standard_normal(n), g), g)


def test_grouping_and_unknowns():
    m = analysis_moments(_instance(labels=MIXED))
    g = class_grouping(m)
    assert sorted(g.sizes.tolist()) == [1, 2, 3]
    assert class_unknowns(10, 4, 200) == (2509, 2509 * 200 ** 2)   # the paper's scale (issue 13)
    other = _instance()
    R = np.array(other.R)
    R[0] = toeplitz_covariances([0.31], other.D)[0]                  # one client's R differs: its own class
    inst = PAOFedInstance(K=6, D=4, l_max=2, m=2, selection="subset", p=other.p, delta=0.3, alpha=other.alpha,
                          sigma2_eta=other.sigma2_eta, R=R, w_star=other.w_star, mu=0.1)
    assert class_grouping(inst).C == 3


def test_expand_compress_round_trip_and_invariance():
    m = analysis_moments(_instance(labels=MIXED))
    g = class_grouping(m)
    v = _random_state(m, g, np.random.default_rng(0))
    S = expand_classes(m, v, g)
    assert np.array_equal(compress_classes(m, S, g), v)
    D, K = m.D, m.K
    blocks = np.arange(m.n_blocks)                  # swap clients 0 and 2 (class 0) at every delay
    for ell in range(m.l_max + 1):
        blocks[[1 + ell * K, 1 + ell * K + 2]] = blocks[[1 + ell * K + 2, 1 + ell * K]]
    perm = (blocks[:, None] * D + np.arange(D)[None, :]).ravel()
    assert np.array_equal(S[np.ix_(perm, perm)], S)


@pytest.mark.parametrize("selection", ["subset", "window", "bernoulli"])
@pytest.mark.parametrize("labels", [LABELS, MIXED], ids=["2x3", "3+2+1"])
@pytest.mark.parametrize("model", ["seed", "exact"])
def test_apply_equals_structured(selection, labels, model):
    m = analysis_moments(_instance(selection, labels=labels, l_max=1 if labels is MIXED else 2))
    g = class_grouping(m)
    v = _random_state(m, g, np.random.default_rng(1))
    full = apply_F(m, expand_classes(m, v, g), model)
    red = expand_classes(m, apply_F_classes(m, v, g, model), g)
    assert np.max(np.abs(red - full)) <= APPLY_RTOL * np.max(np.abs(full))


@pytest.mark.parametrize("selection", ["subset", "window", "bernoulli"])
@pytest.mark.parametrize("model", ["seed", "exact"])
@pytest.mark.parametrize("l_max,D", [(1, 3), (2, 4)])
def test_msd_equals_structured(selection, model, l_max, D):
    inst = _instance(selection, D=D, l_max=l_max)
    red = classes_msd_steady_state(inst, model)
    ref = msd_steady_state(inst, model, rtol=GMRES_RTOL)
    assert red.method == "dense LU" and red.residual <= 10 * GMRES_RTOL
    assert red.msd == pytest.approx(ref.msd, rel=MSD_AGREEMENT_RTOL)
    # the whole steady state, not only its trace: C_inf itself is invariant under the classes
    C = expand_classes(inst, red.state, class_grouping(inst))
    assert np.max(np.abs(C - ref.C)) <= MSD_AGREEMENT_RTOL * np.max(np.abs(ref.C))


@pytest.mark.parametrize("precondition", [True, False], ids=["preconditioned", "plain"])
@pytest.mark.parametrize("method", ["gmres", "bicgstab"])
@pytest.mark.parametrize("model", ["seed", "exact"])
def test_krylov_equals_dense(method, precondition, model):
    inst = _instance("window", labels=MIXED, D=3, l_max=2)
    dense = classes_msd_steady_state(inst, model, method="dense")
    kry = classes_msd_steady_state(inst, model, method=method, rtol=KRYLOV_RTOL, restart=10,
                                   precondition=precondition)
    assert kry.iterations > 0 and kry.residual <= 10 * KRYLOV_RTOL
    assert kry.msd == pytest.approx(dense.msd, rel=MSD_AGREEMENT_RTOL)
    C_dense = expand_classes(inst, dense.state, class_grouping(inst))
    C_kry = expand_classes(inst, kry.state, class_grouping(inst))
    assert np.max(np.abs(C_kry - C_dense)) <= MSD_AGREEMENT_RTOL * np.max(np.abs(C_dense))


@pytest.mark.parametrize("model", ["seed", "exact"])
def test_preconditioner_at_the_papers_federation(model):
    """K = 256 in the paper's four groups, l_max = 10, D = 6: the preconditioner solves the stiff part exactly."""
    inst = _paper_groups(6)
    pre = classes_msd_steady_state(inst, model, method="bicgstab", rtol=GMRES_RTOL)
    plain = classes_msd_steady_state(inst, model, method="bicgstab", rtol=GMRES_RTOL, precondition=False)
    assert pre.residual <= 10 * GMRES_RTOL and plain.residual <= 10 * GMRES_RTOL
    assert pre.msd == pytest.approx(plain.msd, rel=MSD_AGREEMENT_RTOL)
    # measured 9-10 preconditioned vs 40-50 plain iterations; the bound leaves room for other BLAS roundings
    assert pre.iterations <= 20 < plain.iterations


def test_bad_input_and_unstable_step():
    inst = _instance()
    with pytest.raises(ValueError, match="model"):
        classes_msd_steady_state(inst, "truncated")
    with pytest.raises(ValueError, match="method"):
        classes_msd_steady_state(inst, "seed", method="lu")
    with pytest.raises(ValueError, match="mu"):
        classes_msd_steady_state(inst, "seed", mu=-1.0)
    m = analysis_moments(inst)
    with pytest.raises(ValueError, match="reduced size"):
        apply_F_classes(m, np.zeros(3), class_grouping(m))
    # far beyond the exact model's threshold (tr R = D): Krylov cannot reach the residual
    with pytest.raises(ValueError, match="not solved"):
        classes_msd_steady_state(inst, "exact", mu=3.0, method="bicgstab", maxiter=50)


@pytest.mark.parametrize("labels", [LABELS, MIXED], ids=["two classes", "with a singleton"])
@pytest.mark.parametrize("mu", [0.1, 0.9])
def test_mean_spectral_radius_equals_dense(labels, mu):
    inst = _instance("window", labels=labels, D=4, l_max=2)
    ref = spectral_radius_M(inst, mu)
    assert classes_mean_spectral_radius(inst, mu) == pytest.approx(ref, rel=MEAN_RHO_RTOL)


def test_mean_spectral_radius_at_the_papers_federation():
    """K = 256, l_max = 10, D = 6 (N = 16,902): the class decomposition against Arnoldi on the full sparse M from a
    random start (a start vector invariant under the classes, e.g. all ones, never leaves the symmetric subspace
    and misses the difference modes, which dominate here)."""
    inst = _paper_groups(6)
    M = mean_operator(inst)
    v0 = np.random.default_rng(0).standard_normal(M.shape[0])
    full = float(np.max(np.abs(eigs(M, k=1, which="LM", tol=1e-13, v0=v0, return_eigenvectors=False))))
    assert classes_mean_spectral_radius(inst) == pytest.approx(full, rel=MEAN_RHO_RTOL)


def test_routes_mean_radius_reaches_the_within_class_modes():
    """The paper's four Toeplitz groups at K = 16 (4 per group), D = 6 (N = 1062): mean_spectral_radius (class
    decomposition) and spectral_radius_M (Arnoldi from theory.msd.krylov.generic_start) equal dense eigenvalues;
    Arnoldi from all ones stays in the class-symmetric subspace and reports 0.9687 instead of 0.9741."""
    labels = np.repeat(np.arange(4), 4)  # 4 per group: the same 0.9741 / 0.9687 as 8 per group, 8x cheaper eigvals
    D = 6
    inst = PAOFedInstance(K=16, D=D, l_max=10, m=1, selection="window", p=np.array([0.25, 0.1, 0.025, 0.005])[labels],
                          delta=0.2, alpha=0.2 ** np.arange(11), sigma2_eta=np.full(16, 0.01),
                          R=toeplitz_covariances(np.array([0.1, 0.3, 0.5, 0.7])[labels], D), w_star=np.ones(D),
                          mu=0.8 / D)
    M = mean_operator(inst)
    dense = float(np.max(np.abs(np.linalg.eigvals(M.toarray()))))
    ones = float(np.max(np.abs(eigs(M, k=1, which="LM", tol=1e-13, v0=np.ones(M.shape[0]),
                                    return_eigenvectors=False))))
    assert ones < dense * (1 - 1e-3)  # the defect the generic start removes (0.9687 vs 0.9741)
    assert mean_spectral_radius(inst) == pytest.approx(dense, rel=MEAN_RHO_RTOL)
    assert spectral_radius_M(inst) == pytest.approx(dense, rel=MEAN_RHO_RTOL)
