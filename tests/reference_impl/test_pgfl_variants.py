"""Reference PGFL variants: the generic convex loss through CVXPY (docs/papers/pgfl.md#algorithm-1) and the single-step
server update (docs/papers/pgfl.md#variants, docs/papers/pgfl.md#single-step)."""

import cvxpy as cp
import numpy as np
import pytest

from reference_impl.pgfl import (
    CVXPY_CLIENT_TOL,
    PGFLConfig,
    PGFLProblem,
    client_solver,
    run_pgfl,
    synthetic_regression,
)

_FIELDS = ("adjacency", "client_server", "client_cluster", "n_clusters", "X", "y", "lam")


def _copy(problem, **changes):
    return PGFLProblem(**{**{f: getattr(problem, f) for f in _FIELDS}, **changes})


@pytest.fixture(scope="module")
def ridge():
    return synthetic_regression(np.random.default_rng(3), servers=2, clients_per_server=3, d=3, clusters=2, lam=0.3)


@pytest.fixture(scope="module")
def logistic(ridge):
    rng = np.random.default_rng(4)
    y = tuple((rng.random(x.shape[0]) < 0.5).astype(float) for x in ridge.X)
    X = tuple(x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1.0) for x in ridge.X)
    return _copy(ridge, X=X, y=y, loss="logistic")


def _squared(z, y):
    return cp.square(y - z)


def _logistic(z, y):
    return cp.logistic(z) - cp.multiply(y, z)


def _gradient(problem, loss, rho, w, anchor, phi):
    """Gradient of the client objective (4) at w for every run and client (numpy, exact formulas)."""
    out = np.empty_like(w)
    for k, (x, y) in enumerate(zip(problem.X, problem.y, strict=True)):
        z = np.einsum("id,rd->ri", x, w[:, k])
        dl = 2.0 * (z - y) if loss == "ridge" else 0.5 * (1.0 + np.tanh(0.5 * z)) - y
        out[:, k] = (dl @ x) / x.shape[0] + (problem.ridge_weights[k] + rho) * w[:, k] - phi[:, k] - rho * anchor[:, k]
    return out


def _smoothness(problem, loss, rho):
    scale = 2.0 if loss == "ridge" else 0.25
    top = max(scale * np.linalg.eigvalsh(x.T @ x / x.shape[0])[-1] for x in problem.X)
    return top + rho + problem.ridge_weights.max()


@pytest.mark.parametrize("loss, cvx_loss", [("ridge", _squared), ("logistic", _logistic)])
def test_cvxpy_client_step_matches_closed_form_and_newton(ridge, logistic, loss, cvx_loss):
    """The CVXPY (Clarabel) step with the squared / logistic loss written in CVXPY equals the ridge closed form /
    the Newton step, to the solver tolerance.

    Certificate: both objectives are mu-strongly convex, mu = rho + 2 lambda/|C_s|, so for any two points
    ||a - b|| <= (||grad F(a)|| + ||grad F(b)||)/mu around the common minimiser; and the CVXPY point's gradient
    is bounded by sqrt(2 L gap) (L-smooth, suboptimality <= Clarabel's duality-gap tolerance).
    """
    base = ridge if loss == "ridge" else logistic
    generic = _copy(base, loss="cvxpy", cvxpy_loss=cvx_loss)
    rho = 0.8
    rng = np.random.default_rng(0)
    anchor, phi = rng.standard_normal((2, 2, base.K, base.d))
    w_ref = client_solver(base, rho)(anchor, phi, np.zeros_like(anchor))
    w_cvx = client_solver(generic, rho)(anchor, phi, np.zeros_like(anchor))
    mu = rho + base.ridge_weights[:, None]
    g_ref = np.linalg.norm(_gradient(base, loss, rho, w_ref, anchor, phi), axis=-1)
    g_cvx = np.linalg.norm(_gradient(base, loss, rho, w_cvx, anchor, phi), axis=-1)
    objective_scale = 1.0 + np.max(np.abs(w_cvx)) ** 2 * _smoothness(base, loss, rho) + np.max(np.abs(phi))
    gap = CVXPY_CLIENT_TOL * (1.0 + objective_scale)
    assert np.all(g_cvx <= np.sqrt(2.0 * _smoothness(base, loss, rho) * gap))
    assert np.all(np.linalg.norm(w_cvx - w_ref, axis=-1) <= (g_ref + g_cvx) / mu.T)


def test_cvxpy_loss_runs_inside_run_pgfl(logistic):
    """run_pgfl with the generic loss follows the logistic run: after 3 iterations the client models agree to
    the accumulated solver tolerance (each step's error is certified above; 1e-6 leaves a margin of 1e2)."""
    generic = _copy(logistic, loss="cvxpy", cvxpy_loss=_logistic)
    config = PGFLConfig(rho=1.0, taus=(0.4,))
    a = run_pgfl(logistic, config, 3, np.random.default_rng(1), runs=2)
    b = run_pgfl(generic, config, 3, np.random.default_rng(1), runs=2)
    assert np.max(np.abs(a.state.w_clients - b.state.w_clients)) <= 1e-6  # see the docstring: 1e2 x the certified sum


@pytest.mark.parametrize("changes, match", [
    ({"loss": "cvxpy"}, r"cvxpy_loss must be a callable exactly when loss = 'cvxpy'"),
    ({"loss": "ridge", "cvxpy_loss": _squared}, r"cvxpy_loss must be a callable exactly when loss = 'cvxpy'"),
    ({"loss": "cvxpy", "cvxpy_loss": 3.0}, r"cvxpy_loss must be callable"),
    ({"loss": "cvxpy", "cvxpy_loss": lambda z, y: -cp.square(y - z)}, r"convex \(DCP\)"),
    ({"loss": "cvxpy", "cvxpy_loss": lambda z, y: cp.hstack([z, cp.sum(z)])}, r"shape \(\) or \(D_k,\)"),
    ({"loss": "cvxpy", "cvxpy_loss": lambda z, y: 1.0}, r"must return a cvxpy Expression"),
    ({"loss": "hinge"}, r"loss must be 'ridge', 'logistic' or 'cvxpy', got 'hinge'"),
])
def test_cvxpy_loss_validation(ridge, changes, match):
    with pytest.raises(ValueError, match=match):
        _copy(ridge, **changes)


def test_cvxpy_loss_has_no_curvature_or_linear_map(ridge):
    generic = _copy(ridge, loss="cvxpy", cvxpy_loss=_squared)
    with pytest.raises(ValueError, match="undefined for loss = 'cvxpy'"):
        _ = generic.max_curvature
    with pytest.raises(ValueError, match="no iteration matrix"):
        client_solver(generic, 1.0, linear_only=True)


# --- V0 (docs/papers/pgfl.md#single-step): single-step server update --------------------------------------------------


@pytest.fixture(scope="module")
def grouped():
    # every (server, cluster) group non-empty for this seed (asserted in the tests)
    return synthetic_regression(np.random.default_rng(5), servers=5, clients_per_server=5, d=3, clusters=2,
                                average_degree=2)


def _group_weighted_optimum(problem):
    """argmin sum_s (1/|C_s,(q)|) sum_{k in C_s,(q)} f_k (ridge): one linear solve per cluster, with its residual."""
    out, residual = np.empty((problem.n_clusters, problem.d)), 0.0
    curv = problem.hessians + problem.ridge_weights[:, None, None] * np.eye(problem.d)
    for q in range(problem.n_clusters):
        groups = [(problem.client_server == s) & (problem.client_cluster == q) for s in range(problem.S)]
        assert all(g.any() for g in groups)
        lhs = sum(curv[g].mean(axis=0) for g in groups)
        rhs = sum(problem.linear_terms[g].mean(axis=0) for g in groups)
        out[q] = np.linalg.solve(lhs, rhs)
        residual = max(residual, float(np.linalg.norm(lhs @ out[q] - rhs)))
    return out, residual


@pytest.mark.parametrize("rho_factor", [0.25, 1.0])
def test_corrected_single_step_reaches_consensus_at_group_weighted_optimum(grouped, rho_factor):
    """docs/papers/pgfl.md#variants: the sign-corrected V0 (docs/papers/pgfl.md#single-step) (tau = 0, ridge) converges
    to exact consensus at argmin sum_s (1/|C_s,(q)|) sum_k f_k; every server model matches the linear solve to 1e-10."""
    target, residual = _group_weighted_optimum(grouped)
    assert residual <= 1e-12  # absolute residual of two 3 x 3 solves with O(1) entries: ~1e-15 expected
    config = PGFLConfig(rho=rho_factor * grouped.max_curvature, server_update="single_step_corrected")
    run = run_pgfl(grouped, config, 4000, np.random.default_rng(0), runs=1)
    # 4000 contracting iterations leave rounding only; 1e-10 absolute on O(1) models (docs/papers/pgfl.md's consensus
    # test)
    assert np.max(np.abs(run.state.w_servers[0] - target[None])) <= 1e-10
    assert np.max(np.abs(run.state.w_clients[0] - target[grouped.client_cluster])) <= 1e-10


def test_printed_single_step_diverges(grouped):
    """docs/papers/pgfl.md#variants, docs/papers/pgfl.md#erratum-e5: as printed, V0 (docs/papers/pgfl.md#single-step)
    (tau = 0) diverges: the server models grow geometrically (x1e6 in 100 iterations)."""
    config = PGFLConfig(rho=0.25 * grouped.max_curvature, server_update="single_step_printed")
    with np.errstate(all="ignore"):
        run = run_pgfl(grouped, config, 100, np.random.default_rng(0),
                       observe=lambda s: np.max(np.abs(s.w_servers), axis=(1, 2, 3)))
    size = run.observations[:, 0]
    assert not np.isfinite(size[-1]) or size[-1] > 1e6 * size[9]  # growth factor of
    # erratum E5 (docs/papers/pgfl.md#erratum-e5) (docstring), from iteration 10


def test_single_step_tau_mixing_and_q1(grouped):
    """With Q = 1 the tau terms drop (any tau gives the same iterates); with Q = 2 tau changes the iterates."""
    one = PGFLProblem(**{**{f: getattr(grouped, f) for f in _FIELDS}, "client_cluster": np.zeros(grouped.K, int),
                         "n_clusters": 1})
    runs = [run_pgfl(p, PGFLConfig(rho=1.0, taus=(t,), server_update="single_step_corrected"), 5,
                     np.random.default_rng(0)).state.w_servers for p in (one, grouped) for t in (0.0, 0.5)]
    assert np.array_equal(runs[0], runs[1])
    assert not np.allclose(runs[2], runs[3])


def test_multi_step_default_is_unchanged(grouped):
    config = PGFLConfig(rho=1.0, taus=(0.4,))
    assert config.server_update == "multi_step"
    a = run_pgfl(grouped, config, 5, np.random.default_rng(0))
    assert a.state.psi is None


@pytest.mark.parametrize("kwargs, match", [
    ({"server_update": "two_step"}, r"server_update must be one of \('multi_step', 'single_step_printed', "
                                    r"'single_step_corrected'\), got 'two_step'"),
    ({"server_update": "single_step_corrected", "scheduled": 3}, r"needs full participation: scheduled must be None"),
])
def test_server_update_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PGFLConfig(rho=1.0, **kwargs)


def test_single_step_needs_non_empty_groups():
    problem = synthetic_regression(np.random.default_rng(0), servers=3, clients_per_server=1, d=2, clusters=3)
    with pytest.raises(ValueError, match="needs every group"):
        run_pgfl(problem, PGFLConfig(rho=1.0, server_update="single_step_corrected"), 2, np.random.default_rng(0))
