"""Unit tests of reference_impl.fedpdm.smoothness: the certified bracket of the smoothness constant and its cost."""

import tracemalloc

import numpy as np
import pytest

from reference_impl import fedpdm as fp
from reference_impl.fedpdm import smoothness as sm


def _direct(problem) -> float:
    """max_i max_k lambda_max(H_ik) by another method: the largest singular value of each block, squared, over n."""
    top = 0.0
    for i in range(problem.N):
        for k in range(problem.n_classes):
            a = problem.features[i][problem.labels[i] == k]
            if a.size:
                top = max(top, float(np.linalg.svd(a, compute_uv=False)[0] ** 2 / problem.n))
    return top


def _problem(rng, N, n, f, m=1, *, signed=True, beta=0.0, labels=None):
    a = rng.standard_normal((N, n, f)) if signed else rng.uniform(0.0, 1.0, (N, n, f))
    labels = rng.integers(0, m, (N, n)) if labels is None else labels
    return fp.FedPDMProblem(features=a, labels=labels, n_classes=m, beta=beta, gamma=0.0)


@pytest.mark.parametrize(("N", "n", "f", "m", "gram_max"), [
    (4, 30, 500, 1, 256),  # n < f: the n x n side
    (3, 400, 40, 1, 256),  # f < n: the f x f side
    (5, 90, 30, 4, 256),  # classes with different row counts per client (several groups per class)
    (4, 30, 500, 1, 8),  # Lanczos on the row side
    (3, 60, 25, 3, 8),  # Lanczos on the feature side and a mix of routes
])
def test_bracket_holds_the_direct_eigenvalue(N, n, f, m, gram_max, monkeypatch):
    monkeypatch.setattr(sm, "GRAM_SIDE_MAX", gram_max)
    for signed in (True, False):
        problem = _problem(np.random.default_rng(N * n + f), N, n, f, m, signed=signed)
        exact = _direct(problem)
        b = sm.smoothness_bracket(problem)
        assert b.lower <= exact <= b.upper
        assert b.upper - b.lower <= 1e-9 * exact
        assert b.converged
        assert b.gram_blocks + b.lanczos_blocks == np.count_nonzero(
            np.bincount((problem.labels + m * np.arange(N)[:, None]).ravel(), minlength=N * m))
        assert b.work <= sm.estimate_smoothness_cost(N, n, f, m).work


def test_l_smooth_is_the_upper_end_and_computed_once(monkeypatch):
    problem = fp.instance_nc(np.random.default_rng(0), N=6, n=40, d=300, beta=0.1)
    calls = []
    real = fp.problem.smoothness_bracket

    def counting(p):
        calls.append(p)
        return real(p)

    monkeypatch.setattr(fp.problem, "smoothness_bracket", counting)
    first, second = problem.L_smooth, problem.L_smooth
    assert len(calls) == 1 and first == second
    b = problem.smoothness
    assert first == 0.25 * b.upper + 2 * 0.1 and b.L_lower <= 0.25 * _direct(problem) + 0.2 <= first


def test_whole_client_blocks_and_unsorted_client_groups():
    rng = np.random.default_rng(5)
    labels = np.zeros((6, 20), dtype=np.int64)
    labels[[1, 4]] = 1  # clients 1 and 4 hold class 1 only: a non-contiguous group with r = n
    labels[2, :7] = 2
    problem = _problem(rng, 6, 20, 30, 3, labels=labels)
    b = sm.smoothness_bracket(problem)
    exact = _direct(problem)
    assert b.lower <= exact <= b.upper and b.upper - b.lower <= 1e-12 * exact


def test_lanczos_restarts_on_an_invariant_subspace_and_ends_exact(monkeypatch):
    """A rank-3 block with 400 x 300 entries: the Krylov space is invariant after 3 steps; with the top direction
    orthogonal to the start vector's span the certificate (trace) forces restarts until the bracket closes."""
    monkeypatch.setattr(sm, "GRAM_SIDE_MAX", 8)
    rng = np.random.default_rng(2)
    U = np.linalg.qr(rng.standard_normal((300, 3)))[0]
    a = rng.standard_normal((1, 400, 3)) * np.array([5.0, 1.0, 0.5]) @ U.T
    problem = fp.FedPDMProblem(features=a, labels=np.zeros((1, 400), dtype=np.int64), n_classes=1, beta=0.0,
                               gamma=0.0)
    exact = float(np.linalg.eigvalsh(a[0].T @ a[0] / 400)[-1])
    b = sm.smoothness_bracket(problem, fallback_side=0)
    assert b.lower <= exact <= b.upper and b.upper - b.lower <= 1e-9 * exact and b.converged


def test_start_vector_orthogonal_to_the_top_eigenvector_still_certifies(monkeypatch):
    """The top eigenvector is orthogonal to the (fixed) start vector: exact Lanczos never sees it, yet the upper end
    must bound it (the trace rules it out only once the other eigenvalues are captured)."""
    monkeypatch.setattr(sm, "GRAM_SIDE_MAX", 8)
    s = 300
    v0 = sm._start_vector(s, 0)
    Q = np.linalg.qr(np.column_stack([v0, np.random.default_rng(3).standard_normal((s, s - 1))]))[0]
    eig = np.concatenate([[0.5], np.linspace(0.0, 0.3, s - 2), [2.0]])  # the top one on the last column, _|_ v0
    a = (Q * np.sqrt(s * eig)).T  # a^T a / s = Q diag(eig) Q^T, rows = s samples of s features
    problem = fp.FedPDMProblem(features=a[None], labels=np.zeros((1, s), dtype=np.int64), n_classes=1, beta=0.0,
                               gamma=0.0)
    for fallback in (0, 1024):
        b = sm.smoothness_bracket(problem, max_steps=40, fallback_side=fallback)
        assert b.upper >= 2.0 * (1 - 1e-12)
        if fallback:
            assert b.converged and b.fallback_blocks == 1 and b.lower <= 2.0 <= b.upper


def test_heavy_tailed_spectrum_leaves_a_wide_certified_bracket(monkeypatch):
    """Gaussian data (Marchenko-Pastur bulk, no gap): 20 Lanczos steps cannot certify the edge; the upper end stays
    valid (only wider) and the run says it did not converge."""
    monkeypatch.setattr(sm, "GRAM_SIDE_MAX", 8)
    problem = _problem(np.random.default_rng(4), 1, 300, 200)
    exact = _direct(problem)
    b = sm.smoothness_bracket(problem, max_steps=20, fallback_side=0)
    assert not b.converged and b.lower <= exact <= b.upper and b.upper > 1.5 * exact
    assert b.work <= sm.estimate_smoothness_cost(1, 300, 200, max_steps=20, fallback_side=0).work


def test_certified_upper_bounds_every_partial_lanczos():
    """The certificate of a partial decomposition of a PSD matrix is never below its top eigenvalue."""
    rng = np.random.default_rng(6)
    for trial in range(40):
        s = int(rng.integers(5, 40))
        B = rng.standard_normal((s, s)) * rng.uniform(0.0, 3.0, s) ** 3
        H = B @ B.T
        top = np.linalg.eigvalsh(H)[-1]
        k = int(rng.integers(1, s))
        V = np.zeros((k + 1, s))
        V[0] = rng.standard_normal(s)
        V[0] /= np.linalg.norm(V[0])
        alpha, betas = np.zeros(k), np.zeros(k)
        for j in range(k):
            w = H @ V[j]
            alpha[j] = V[j] @ w
            for _ in range(2):
                w -= V[: j + 1].T @ (V[: j + 1] @ w)
            betas[j] = np.linalg.norm(w)
            V[j + 1] = w / betas[j]
        T = np.diag(alpha) + np.diag(betas[:-1], 1) + np.diag(betas[:-1], -1)
        theta, S = np.linalg.eigh(T)
        upper = sm._certified_upper(theta[::-1], betas[-1] * np.abs(S[-1, ::-1]), betas[-1], np.trace(H),
                                    alpha.sum())
        assert upper >= top * (1 - 1e-10), (trial, upper, top)


def test_estimate_bounds_the_memory_and_is_linear_in_the_data():
    problem = fp.instance_nc(np.random.default_rng(0), N=8, n=60, d=3000)
    tracemalloc.start()
    sm.smoothness_bracket(problem)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    est = sm.estimate_smoothness_cost(8, 60, 3000)
    assert peak <= 8 * est.peak_elements
    small, large = sm.estimate_smoothness_cost(10, 60, 1000), sm.estimate_smoothness_cost(10, 60, 4000)
    assert large.work <= 4.01 * small.work  # n = 60 < f: the work grows with f, not with f^2 or f^3


@pytest.mark.parametrize(("call", "needle"), [
    (lambda p: sm.smoothness_bracket(p, max_steps=0), "max_steps must be an integer >= 1, got 0"),
    (lambda p: sm.smoothness_bracket(p, rtol=0.0), "rtol must be a finite real in (0.0, 1.0)"),
    (lambda p: sm.smoothness_bracket(p, fallback_side=-1), "fallback_side must be an integer >= 0"),
    (lambda p: sm.estimate_smoothness_cost(0, 5, 5), "N must be an integer >= 1, got 0"),
    (lambda p: sm.estimate_smoothness_cost(2, 5, 5, 0), "n_classes must be an integer >= 1"),
    (lambda p: sm.SmoothnessBracket(lower=2.0, upper=1.0, beta=0.0, gram_blocks=1, lanczos_blocks=0,
                                    fallback_blocks=0, lanczos_steps=0, converged=True, work=1.0),
     "upper must be a finite real in [2.0"),
])
def test_bad_arguments_name_the_field(call, needle):
    problem = fp.instance_nc(np.random.default_rng(0), N=2, n=10, d=5)
    with pytest.raises(ValueError) as err:
        call(problem)
    assert needle in str(err.value)


def test_all_zero_features_give_an_empty_bracket():
    problem = fp.FedPDMProblem(features=np.zeros((2, 3, 4)), labels=np.zeros((2, 3), dtype=np.int64), n_classes=1,
                               beta=0.5, gamma=0.0)
    b = problem.smoothness
    assert b.lower == b.upper == 0.0 and b.route == "gram" and problem.L_smooth == 1.0


def test_class_counts_tighten_the_estimate_and_still_bound_the_work():
    problem = fp.mnist_like_problem(np.random.default_rng(0), N=4, n_train=1200, n_test=10, side=10)
    m = problem.n_classes
    counts = np.stack([np.bincount(lab, minlength=m) for lab in problem.labels])
    worst = sm.estimate_smoothness_cost(problem.N, problem.n, problem.n_features, m)
    known = sm.estimate_smoothness_cost(problem.N, problem.n, problem.n_features, m, class_counts=counts)
    spent = sm.smoothness_bracket(problem).work
    assert spent <= known.work <= worst.work
    with pytest.raises(ValueError, match="class_counts must be non-negative integers of shape \\(N, n_classes\\)"):
        sm.estimate_smoothness_cost(problem.N, problem.n, problem.n_features, m, class_counts=counts[:, :5])
