"""The one certified Newton solver (theory.logistic): its certificate, reported non-convergence, agreement with
scipy.optimize and with the Newton iteration it replaced."""

import numpy as np
import pytest
from scipy.optimize import minimize

from theory.logistic import (
    GLMData,
    NewtonNotConverged,
    ProximalGLM,
    gradient_rounding,
    proximal_gradient,
    proximal_hessian,
    proximal_objective,
    solve_proximal_newton,
)
from verify.tolerance import gamma

GTOL = 1e-11  # the PGFL client subproblem's tolerance (reference_impl.pgfl.client.DEFAULT_GTOL)


def _problem(rng, loss="logistic", batch=(5,), n=6, d=4, curvature=(0.05, 2.0), scale=1.0):
    """Random instance: unit-norm features (as in PGFL, C_k = 1), curvature drawn per instance."""
    X = rng.standard_normal(batch + (n, d))
    X /= np.linalg.norm(X, axis=-1, keepdims=True)
    y = rng.random(batch + (n,)) if loss == "logistic" else rng.normal(0.0, 3.0, batch + (n,))
    data = GLMData(X=scale * X, y=y, weights=rng.uniform(0.0, 1.0, batch + (n,)), loss=loss, huber_threshold=1.5)
    return ProximalGLM(data=data, curvature=rng.uniform(*curvature, batch), center=rng.normal(0.0, 2.0, batch + (d,)))


@pytest.mark.parametrize("loss", ["logistic", "huber"])
@pytest.mark.parametrize(("n", "d"), [(3, 8), (8, 3), (5, 5)])   # n < d: the Woodbury step; n >= d: dense Hessian
def test_certificate_bounds_the_gradient_and_the_distance(loss, n, d):
    """The certified norm is <= gtol, dominates the computed gradient norm, and the converged flag says so."""
    p = _problem(np.random.default_rng(n * 10 + d), loss, n=n, d=d)
    sol = solve_proximal_newton(p, gtol=GTOL)
    assert sol.all_converged and np.all(sol.grad_norm <= GTOL)
    assert np.all(np.linalg.norm(proximal_gradient(p, sol.w), axis=-1) <= sol.grad_norm)
    assert np.all(sol.error_bound == sol.grad_norm / p.curvature)
    assert 1 <= sol.iterations <= 20   # damped Newton from the prox centre: a handful of steps, far below the cap
    assert not sol.w.flags.writeable


def _independent_objective(p, i):
    """F of instance i written out again (no theory.logistic code), with its gradient, for scipy."""
    X, y, c = p.data.X[i], p.data.y[i], p.data.weights[i]
    m, v = float(p.curvature[i]), p.center[i]

    def fun(w):
        a = X @ w
        return float(c @ (np.logaddexp(0.0, a) - y * a) + 0.5 * m * (w - v) @ (w - v))

    def jac(w):
        return X.T @ (c * (1.0 / (1.0 + np.exp(-(X @ w))) - y)) + m * (w - v)

    return fun, jac


def test_agrees_with_scipy_within_both_certified_errors():
    """Two methods: ||w_newton - w_scipy|| <= err_newton + ||grad F(w_scipy)||/m (strong convexity), the scipy
    point's gradient evaluated independently; scipy's answer is also checked to be a real solve (< 1e-6)."""
    rng = np.random.default_rng(2)
    for _ in range(6):   # six random batches of five instances each
        p = _problem(rng, n=int(rng.integers(1, 10)), d=int(rng.integers(1, 7)))
        sol = solve_proximal_newton(p, gtol=GTOL)
        for i in range(5):
            fun, jac = _independent_objective(p, i)
            # BFGS's own gradient-norm stop; it reaches ~1e-9 in the distance, checked below
            ref = minimize(fun, np.zeros(p.dim), jac=jac, method="BFGS", options={"gtol": 1e-10})
            # the independent gradient itself rounds: gamma(n + d + 16) times its terms bounds that
            slack = gamma(p.data.n_samples + p.dim + 16) * p.curvature[i] * (np.linalg.norm(p.center[i]) + 10.0)
            scipy_error = (np.linalg.norm(jac(ref.x)) + slack) / p.curvature[i]
            assert np.linalg.norm(ref.x - sol.w[i]) <= sol.error_bound[i] + scipy_error
            assert scipy_error < 1e-6   # scipy really solved it (BFGS reaches ~1e-9 here)


def _replaced_newton(X, y, weights, shift, linear, warm, gtol):
    """The damped Newton iteration of reference_impl.pgfl._logistic_newton before theory.logistic replaced it
    (tanh sigmoid, halving until no increase, computed-norm stop), kept as a regression oracle."""
    w = warm.copy()
    for _ in range(100):   # its iteration cap
        z = X @ w
        p = 0.5 * (1.0 + np.tanh(0.5 * z))
        grad = X.T @ (weights * (p - y)) + shift * w - linear
        if np.linalg.norm(grad) <= gtol:
            return w
        hess = (X.T * (weights * p * (1.0 - p))) @ X + shift * np.eye(X.shape[1])
        step = np.linalg.solve(hess, grad)

        def objective(v):
            a = X @ v
            return weights @ (np.logaddexp(0.0, a) - y * a) + 0.5 * shift * v @ v - linear @ v

        t = 1.0
        # its rule: once the Newton decrement is at rounding level (1e-14 relative) the full step is taken
        settled = grad @ step <= 1e-14 * max(1.0, abs(objective(w)))
        for _ in range(40):   # its halving cap
            if settled or objective(w - t * step) <= objective(w):
                break
            t *= 0.5
        w = w - t * step
    raise AssertionError("the replaced iteration did not converge")


def test_equals_the_replaced_iteration_within_the_solver_tolerance():
    """Old (computed norm <= 1e-10) and new (certified norm <= 1e-10) minimisers differ by at most the sum of
    their distances to the exact minimiser, each <= (gradient norm)/m."""
    rng = np.random.default_rng(4)
    tol = 1e-10   # reference_impl.pgfl.LOGISTIC_GRADIENT_TOL, the tolerance both were run at
    p = _problem(rng, batch=(12,), n=4, d=6, curvature=(0.1, 1.5))
    sol = solve_proximal_newton(p, gtol=tol)
    for i in range(12):
        linear = p.curvature[i] * p.center[i]   # the old code's form: (m/2)||w||^2 - linear^T w
        old = _replaced_newton(p.data.X[i], p.data.y[i], p.data.weights[i], p.curvature[i], linear,
                               np.zeros(p.dim), tol)
        # the old stop was on the computed norm: add its rounding (theory.logistic.gradient_rounding) to it
        one = ProximalGLM(data=GLMData(X=p.data.X[i], y=p.data.y[i], weights=p.data.weights[i]),
                          curvature=p.curvature[i], center=p.center[i])
        # the product m v rounds the centre by one ulp: center_error = u |v| covers it
        old_error = (tol + gradient_rounding(one, old) + p.curvature[i] * np.linalg.norm(gamma(1) * p.center[i])
                     ) / p.curvature[i]
        assert np.linalg.norm(old - sol.w[i]) <= sol.error_bound[i] + old_error


def test_non_convergence_is_raised_with_the_flagged_solution():
    p = _problem(np.random.default_rng(5))
    with pytest.raises(NewtonNotConverged, match=r"did not reach gtol=1e-11 for \d of 5 instance\(s\)") as raised:
        solve_proximal_newton(p, gtol=GTOL, max_iter=1, w0=np.full(p.dim, 40.0))
    assert isinstance(raised.value, ArithmeticError)
    assert not raised.value.solution.all_converged


def test_non_convergence_is_flagged_when_not_strict():
    p = _problem(np.random.default_rng(5))
    sol = solve_proximal_newton(p, gtol=GTOL, max_iter=1, w0=np.full(p.dim, 40.0), strict=False)
    assert sol.iterations == 1 and not sol.all_converged
    assert np.array_equal(sol.converged, sol.grad_norm <= GTOL)


def test_a_tolerance_below_the_rounding_floor_stops_early_and_is_reported():
    """A gtol below the gradient's rounding floor cannot be certified: once the computed gradient is under the
    floor the solver stops and reports non-convergence instead of spinning to the cap."""
    p = _problem(np.random.default_rng(6))   # rounding floor 3e-15 to 8e-15 at the optimum (measured)
    sol = solve_proximal_newton(p, gtol=1e-18, strict=False)   # three decades below that floor
    assert not sol.converged.any()
    assert sol.iterations <= 10   # 4 steps reach gtol = 1e-11 here; stopped near that, not at the cap of 100
    with pytest.raises(NewtonNotConverged, match="rounding floor"):
        solve_proximal_newton(p, gtol=1e-18)  # the same unreachable tolerance, strict


def test_zero_curvature_uses_the_dense_step_and_an_infinite_error_bound():
    """m = 0 (no strong convexity): the Newton step falls back to the dense Hessian; the distance is not certified."""
    rng = np.random.default_rng(8)
    X = rng.standard_normal((6, 2))
    data = GLMData(X=X, y=np.array([0, 1, 0, 1, 1, 0], dtype=float), weights=np.full(6, 1 / 6))
    p = ProximalGLM(data=data, curvature=0.0, center=np.zeros(2))
    sol = solve_proximal_newton(p, gtol=1e-12)  # 6 samples, d = 2: floor ~1e-16, so 1e-12 is reachable
    assert sol.all_converged and sol.error_bound == np.inf


def test_gradient_and_hessian_match_finite_differences():
    rng = np.random.default_rng(9)
    for loss in ("logistic", "huber"):
        p = _problem(rng, loss, batch=(), n=4, d=3)
        w = rng.normal(size=3)
        h = 1e-6   # central differences: truncation ~h^2, cancellation ~u/h; both ~1e-10
        eye = np.eye(3)
        fd_grad = [(proximal_objective(p, w + h * e) - proximal_objective(p, w - h * e)) / (2 * h) for e in eye]
        fd_hess = [(proximal_gradient(p, w + h * e) - proximal_gradient(p, w - h * e)) / (2 * h) for e in eye]
        assert np.allclose(fd_grad, proximal_gradient(p, w), atol=1e-7)   # a few ulps of the O(1) objective / h
        assert np.allclose(np.array(fd_hess).T, proximal_hessian(p, w), atol=1e-6)   # Huber kinks add ~h


def test_rounding_bound_covers_an_extended_precision_gradient():
    rng = np.random.default_rng(11)
    p = _problem(rng, batch=(), n=9, d=5, scale=30.0)
    w = rng.normal(0.0, 30.0, 5)
    X, y, c, v = (np.asarray(a, dtype=np.longdouble) for a in (p.data.X, p.data.y, p.data.weights, p.center))
    wl = w.astype(np.longdouble)
    exact = X.T @ (c * (1 / (1 + np.exp(-(X @ wl))) - y)) + np.longdouble(float(p.curvature)) * (wl - v)
    assert float(np.linalg.norm((proximal_gradient(p, w) - exact).astype(float))) <= gradient_rounding(p, w)


def test_broadcast_data_batch_equals_one_at_a_time():
    """Data shared across a leading runs axis (X of shape (K, n, d), states (R, K, d)) solves each pair alike."""
    rng = np.random.default_rng(12)
    base = _problem(rng, batch=(3,), n=4, d=5)
    center = rng.normal(size=(2, 3, 5))   # 2 runs x 3 clients
    p = ProximalGLM(data=base.data, curvature=base.curvature, center=center)
    sol = solve_proximal_newton(p, gtol=GTOL)
    assert sol.w.shape == (2, 3, 5)
    for r in range(2):
        for k in range(3):
            one = ProximalGLM(data=GLMData(X=base.data.X[k], y=base.data.y[k], weights=base.data.weights[k]),
                              curvature=base.curvature[k], center=center[r, k])
            single = solve_proximal_newton(one, gtol=GTOL)
            assert np.linalg.norm(single.w - sol.w[r, k]) <= single.error_bound + sol.error_bound[r, k]


@pytest.mark.parametrize(("fields", "error", "match"), [
    ({"weights": [-1.0]}, ValueError, r"weights must be >= 0, got min -1\.0"),
    ({"y": [2.0]}, ValueError, r"y must lie in \[0, 1\] for the logistic loss"),
    ({"y": [1.0, 0.0]}, ValueError, r"y must have shape \(1,\)"),
    ({"X": [[np.inf, 0.0]]}, ValueError, r"X must be finite"),
    ({"loss": "hinge"}, ValueError, r"loss must be one of \('logistic', 'huber'\), got 'hinge'"),
    ({"huber_threshold": 0.0}, ValueError, r"huber_threshold must be a finite real in \(0, inf\)"),
])
def test_bad_data_names_the_field(fields, error, match):
    with pytest.raises(error, match=match):
        GLMData(**{"X": [[1.0, 0.0]], "y": [1.0], "weights": [1.0], **fields})


def test_bad_problem_and_solver_input_names_the_field():
    data = GLMData(X=[[1.0, 0.0]], y=[1.0], weights=[1.0])
    with pytest.raises(ValueError, match=r"curvature must be >= 0, got min -1\.0"):
        ProximalGLM(data=data, curvature=-1.0, center=[0.0, 0.0])
    with pytest.raises(ValueError, match=r"center must have last dimension d = 2"):
        ProximalGLM(data=data, curvature=1.0, center=[0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"center_error must be >= 0"):
        ProximalGLM(data=data, curvature=1.0, center=[0.0, 0.0], center_error=-1.0)
    p = ProximalGLM(data=data, curvature=1.0, center=[0.0, 0.0])
    with pytest.raises(ValueError, match=r"gtol must be a finite real in \(0, inf\)"):
        solve_proximal_newton(p, gtol=0.0)
    with pytest.raises(ValueError, match=r"max_iter must be an integer >= 1, got 0"):
        solve_proximal_newton(p, gtol=GTOL, max_iter=0)
    with pytest.raises(ValueError, match=r"w0 must broadcast to shape \(2,\)"):
        solve_proximal_newton(p, gtol=GTOL, w0=[0.0, 0.0, 0.0])
