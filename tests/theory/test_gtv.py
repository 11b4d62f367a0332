"""theory.gtv: instance validation, operators (T1-T4 (docs/papers/gtv.md#operators to #problem)
of docs/papers/gtv.md#instances), constants and the (35) checker."""

import itertools

import cvxpy as cp
import numpy as np
import pytest

from theory.gtv import (
    GTVInstance,
    chain_condition_boundary_anchor,
    cluster_constants,
    deviation_bound_d1,
    deviation_bound_theorem2,
    dual_objective,
    dual_update,
    edge_differences,
    incidence_matrix,
    kkt_residuals,
    loss_gradients,
    loss_values,
    squared_loss_conjugate,
    well_connected,
    well_connected_brute_force,
)


def _inst(rng, n=6, d=3, m=4, penalty="l2", loss="squared", Q=None, gamma=0.0, lam=0.3):
    edges = np.array([(i, i + 1) for i in range(n - 1)] + [(0, n - 1)])
    X = rng.normal(size=(n, m, d))
    y = rng.normal(size=(n, m))
    if loss == "logistic":
        y = np.sign(y) + (y == 0)
    return GTVInstance(n=n, edges=edges, A=rng.uniform(0.3, 2, len(edges)), X=X, y=y, m=np.full(n, m), lam=lam,
                       penalty=penalty, loss=loss, Q=Q, gamma=gamma)


def test_incidence_is_adjoint_and_signed():
    rng = np.random.default_rng(0)
    inst = _inst(rng)
    D = inst.incidence
    w, u = rng.normal(size=(inst.n, 2)), rng.normal(size=(inst.n_edges, 2))
    assert np.isclose(np.sum((D @ w) * u), np.sum(w * (D.T @ u)), rtol=1e-13)
    np.testing.assert_array_equal(D @ w, edge_differences(inst, w))
    assert incidence_matrix(np.array([[0, 2]]), 3).toarray().tolist() == [[1.0, 0.0, -1.0]]


@pytest.mark.parametrize("change, field", [
    (dict(edges=[[1, 0]]), "edges"), (dict(edges=[[0, 1], [0, 1]]), "edges"), (dict(A=[0.0]), "A"),
    (dict(lam=0.0), "lam"), (dict(penalty="huber"), "penalty"), (dict(m=[2, 1]), "m"),
    (dict(edges=[[0, 1]], n=3), "edges"), (dict(penalty="quad"), "Q"), (dict(gamma=1.0), "gamma"),
    (dict(clusters=[0, 2]), "clusters"),
])
def test_bad_fields_raise_naming_the_field(change, field):
    base = dict(n=2, edges=[[0, 1]], A=[1.0], X=np.ones((2, 1, 1)), y=np.ones((2, 1)), m=[1, 1], lam=1.0)
    if "n" in change:
        base.update(X=np.ones((3, 1, 1)), y=np.ones((3, 1)), m=[1, 1, 1])
    with pytest.raises(ValueError, match=field):
        GTVInstance(**{**base, **change})


def test_padding_must_be_zero_and_arrays_read_only():
    X = np.ones((2, 2, 1))
    with pytest.raises(ValueError, match="padding"):
        GTVInstance(n=2, edges=[[0, 1]], A=[1.0], X=X, y=np.ones((2, 2)), m=[1, 2], lam=1.0)
    inst = GTVInstance(n=2, edges=[[0, 1]], A=[1.0], X=X, y=np.ones((2, 2)), m=[2, 2], lam=1.0)
    with pytest.raises(ValueError):
        inst.X[0, 0, 0] = 3.0


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_gradients_match_central_differences(loss):
    rng = np.random.default_rng(1)
    inst = _inst(rng, loss=loss, gamma=0.1 if loss == "logistic" else 0.0)
    w = rng.normal(size=(inst.n, inst.d))
    g = loss_gradients(inst, w)
    h = 1e-6
    for j in range(inst.d):
        e = np.zeros_like(w)
        e[:, j] = h
        fd = (loss_values(inst, w + e) - loss_values(inst, w - e)) / (2 * h)
        np.testing.assert_allclose(g[:, j], fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("penalty", ["l2", "l1", "mocha", "quad"])
def test_dual_update_is_the_argmin_of_33(penalty):
    """T3 (docs/papers/gtv.md#operators): DU{v} = argmin_z lam A phi*(z/(lam A)) + ||v - z||^2/(2 sigma), against
    CVXPY."""
    rng = np.random.default_rng(2)
    Q = None
    if penalty == "quad":
        B = rng.normal(size=(3, 2))
        Q = B @ B.T
    inst = _inst(rng, penalty=penalty, Q=Q)
    v = 2.0 * rng.normal(size=(inst.n_edges, inst.d))
    sigma = rng.uniform(0.2, 2.0, inst.n_edges)
    out = dual_update(inst, v, sigma)
    for e in range(inst.n_edges):
        z = cp.Variable(inst.d)
        cap = inst.lam * inst.A[e]
        if penalty == "l2":
            prob = cp.Problem(cp.Minimize(cp.sum_squares(v[e] - z)), [cp.norm(z, 2) <= cap])
        elif penalty == "l1":
            prob = cp.Problem(cp.Minimize(cp.sum_squares(v[e] - z)), [cp.norm(z, "inf") <= cap])
        elif penalty == "mocha":
            prob = cp.Problem(cp.Minimize(cp.sum_squares(z) / (2 * cap) + cp.sum_squares(v[e] - z) / (2 * sigma[e])))
        else:  # phi* = 1/2 s^T Q^+ s on range(Q): z = V t
            ev, V = np.linalg.eigh(Q)
            keep = ev > 1e-12
            t = cp.Variable(int(keep.sum()))
            zz = V[:, keep] @ t
            prob = cp.Problem(cp.Minimize(cp.sum(cp.square(t) / ev[keep]) / (2 * cap)
                                          + cp.sum_squares(v[e] - zz) / (2 * sigma[e])))
            prob.solve(solver=cp.CLARABEL)
            np.testing.assert_allclose(out[e], V[:, keep] @ t.value, atol=1e-7)
            continue
        prob.solve(solver=cp.CLARABEL)
        np.testing.assert_allclose(out[e], z.value, atol=1e-7)


def test_nlasso_clip_with_zero_capacity_returns_zero_and_respects_capacity():
    rng = np.random.default_rng(3)
    inst = _inst(rng)
    v = rng.normal(size=(inst.n_edges, inst.d)) * 10
    out = dual_update(inst, v, 0.5)
    assert np.all(np.linalg.norm(out, axis=1) <= inst.lam * inst.A * (1 + 1e-15))
    tiny = inst.with_(A=np.full(inst.n_edges, 1e-300))
    assert np.all(np.abs(dual_update(tiny, v, 0.5)) <= 1e-299)


def test_conjugate_fenchel_young_equality_and_domain():
    """T4 (docs/papers/gtv.md#problem): L(w) + L*(grad L(w)) = grad^T w; +inf off range(X^T) (m < d); a zero range
    tolerance is refused."""
    rng = np.random.default_rng(4)
    inst = _inst(rng, d=5, m=3)
    w = rng.normal(size=(inst.n, inst.d))
    s = loss_gradients(inst, w)
    val, rel = squared_loss_conjugate(inst, s, 1e-10)
    np.testing.assert_allclose(loss_values(inst, w) + val, np.sum(s * w, axis=1), rtol=1e-10, atol=1e-10)
    assert rel.max() < 1e-12
    off, rel2 = squared_loss_conjugate(inst, s + rng.normal(size=s.shape), 1e-10)
    assert np.all(np.isinf(off)) and rel2.min() > 1e-3
    with pytest.raises(ValueError, match="range_rtol"):
        squared_loss_conjugate(inst, s, 0.0)
    d = dual_objective(inst, np.zeros((inst.n_edges, inst.d)) + 1.0, range_rtol=1e-10)
    assert not d.finite


def test_kkt_residual_is_zero_at_a_constructed_mocha_saddle_point():
    """(25) corrected (erratum E3, docs/papers/gtv.md#erratum-e3): u = lam A D w and D^T u = -grad L is a saddle point;
    the seed's u = D w is not."""
    rng = np.random.default_rng(5)
    inst = _inst(rng, penalty="mocha")
    w = rng.normal(size=(inst.n, inst.d))
    u = (inst.lam * inst.A)[:, None] * edge_differences(inst, w)
    # choose b so that flow conservation holds: b_i = H_i w_i + (D^T u)_i  (a valid squared loss needs y; use
    # the residual form directly instead)
    _, edge = kkt_residuals(inst, w, u)
    assert edge < 1e-14
    _, edge_seed = kkt_residuals(inst, w, edge_differences(inst, w))
    assert edge_seed > 1e-3


def test_cluster_constants_consistency_and_noiseless_delta():
    rng = np.random.default_rng(6)
    n, d, m = 8, 3, 4
    w_true = np.repeat(rng.normal(size=(2, d)), 4, axis=0)
    X = rng.normal(size=(n, m, d))
    y = np.einsum("nrj,nj->nr", X, w_true)
    edges = np.array([(i, j) for i in range(n) for j in range(i + 1, n) if (i < 4) == (j < 4)] + [(3, 4)])
    inst = GTVInstance(n=n, edges=edges, A=np.ones(len(edges)), X=X, y=y, m=np.full(n, m), lam=0.1,
                       clusters=np.repeat([0, 1], 4))
    k = cluster_constants(inst)
    np.testing.assert_allclose(k.oracle, w_true[[0, 4]], atol=1e-12)
    assert k.delta.max() < 1e-12
    assert np.all(k.alpha <= np.bincount(k.clusters, weights=k.beta) * (1 + 1e-12))
    assert k.boundary.tolist() == [1.0, 1.0] and k.out_degree[[3, 4]].tolist() == [1.0, 1.0]
    np.testing.assert_allclose(deviation_bound_theorem2(0.1, k), 2 * deviation_bound_d1(0.1, k))


def test_l1_strong_convexity_is_exact():
    """alpha (l1) = 1/max_s s^T H^-1 s: 1/2 D^T H D >= alpha/2 ||D||_1^2 with equality at D = H^-1 s*."""
    rng = np.random.default_rng(7)
    inst = _inst(rng, penalty="l1", d=4, m=6)
    k = cluster_constants(inst, clusters=np.zeros(inst.n, dtype=int))
    H = inst.quadratic[0].sum(axis=0)
    Delta = rng.normal(size=(2000, 4))
    ratio = np.einsum("sj,jk,sk->s", Delta, H, Delta) / np.abs(Delta).sum(axis=1) ** 2
    assert ratio.min() >= k.alpha[0] * (1 - 1e-12)
    best = max(itertools.product((1, -1), repeat=4), key=lambda s: np.array(s) @ np.linalg.solve(H, s))
    D = np.linalg.solve(H, np.array(best, float))
    assert np.isclose(D @ H @ D / np.abs(D).sum() ** 2, k.alpha[0], rtol=1e-10)


@pytest.mark.parametrize("seed", range(12))
def test_max_flow_checker_agrees_with_brute_force(seed):
    """D4 (docs/papers/gtv.md#derived-d4) vs enumeration of every subset for every anchor (|C| <= 8)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 9))
    pairs = ([(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.7]
             + [(i, i + 1) for i in range(n - 1)])
    edges = np.array(sorted(set(pairs)) + [(0, n)])
    X = np.ones((n + 1, 1, 1))
    inst = GTVInstance(n=n + 1, edges=edges, A=rng.uniform(0.2, 2.0, len(edges)), X=X, y=np.ones((n + 1, 1)),
                       m=np.ones(n + 1, int), lam=1.0)
    clusters = np.r_[np.zeros(n, int), 1]
    demands = rng.uniform(0.0, 0.4 + 0.2 * (seed % 12), n + 1)
    decided = well_connected(inst, 0, demands, clusters)
    brute = well_connected_brute_force(inst, 0, demands, clusters)
    assert decided.certified == (brute > decided.margin)
    if decided.certified:
        assert decided.slack > 0 and decided.slack <= brute + 1e-12


def _noisy_chain(seed):
    from reference_impl.gtv.data import chain_instance

    rng = np.random.default_rng(seed)
    lam = rng.uniform(0.2, 0.35)
    inst, _ = chain_instance(rng, n=10, eps=0.2, d=1, m=3, noise=0.05, lam=lam, w_bar=np.array([[0.0], [1.0]]))
    k = cluster_constants(inst)
    lhs = chain_condition_boundary_anchor(float(inst.A[9]), k.beta[:9], k.delta[:9], float(k.alpha[0]), lam)
    return inst, k, lhs


def test_chain_formula_is_sufficient_not_necessary():
    """R1 (docs/papers/gtv.md#review-r1): on noisy d = 1 chains the boundary-anchor formula can fail (>= 1) while an
    interior anchor certifies (35) (max-flow and brute force agree); where the formula holds (< 1) the checker certifies
    too."""
    inst, k, lhs = _noisy_chain(0)
    b = k.demands(inst.lam)
    decided = well_connected(inst, 0, b)
    assert lhs >= 1 and decided.certified and decided.anchor != 9
    assert well_connected_brute_force(inst, 0, b) > decided.margin
    for seed in range(1, 30):
        inst, k, lhs = _noisy_chain(seed)
        if lhs < 1:
            assert well_connected(inst, 0, k.demands(inst.lam)).certified


def test_an_asymmetric_q_names_the_entries():
    """'got shape (2, 2)' for a (2, 2) matrix that is not symmetric said nothing (an adversarial audit)."""
    import numpy as np
    import pytest

    from theory.gtv.instance import GTVInstance

    X = np.ones((2, 1, 2))
    with pytest.raises(ValueError, match=r"got Q\[0\]\[1\] = 0 and Q\[1\]\[0\] = 1"):
        GTVInstance(n=2, edges=[[0, 1]], A=[1.0], X=X, y=np.ones((2, 1)), m=[1, 1], lam=0.1, penalty="quad",
                    Q=[[1.0, 0.0], [1.0, 1.0]])
