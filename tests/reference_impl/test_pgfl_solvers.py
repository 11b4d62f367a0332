"""The ridge client step of reference_impl.pgfl.solvers.client_solver: one matrix-vector product per (run, client),
equal to the former einsum to rounding and independent of the other runs of its batch (arms run in lockstep)."""

import numpy as np
import pytest

from reference_impl.pgfl import synthetic_regression
from reference_impl.pgfl.solvers import _client_solve_ridge, client_solver

EPS = np.finfo(np.float64).eps


@pytest.fixture(scope="module")
def problem():
    return synthetic_regression(np.random.default_rng(4), servers=3, clients_per_server=4, d=7)


def _inputs(problem, runs, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(runs, problem.K, problem.d)), rng.normal(size=(runs, problem.K, problem.d))


@pytest.mark.parametrize("linear_only", [False, True])
def test_ridge_step_equals_the_former_einsum_to_rounding(problem, linear_only):
    rho = 0.7
    anchor, phi = _inputs(problem, 5, 0)
    out = client_solver(problem, rho, linear_only=linear_only)(anchor, phi, None)
    data = 0.0 if linear_only else problem.linear_terms
    rhs = data + phi + rho * anchor
    former = np.einsum("kij,rkj->rki", _client_solve_ridge(problem, rho), rhs)
    # each entry is a dot product of d terms: |error| <= d eps sum_j |A_ij rhs_j| (plus the last rounding)
    scale = np.einsum("kij,rkj->rki", np.abs(_client_solve_ridge(problem, rho)), np.abs(rhs))
    assert np.all(np.abs(out - former) <= 2 * problem.d * EPS * scale)
    # and it solves the step's normal equations (H_k + (2 lambda/|C_s| + rho) I) w = rhs
    matrix = problem.hessians + (problem.ridge_weights + 0.7)[:, None, None] * np.eye(problem.d)
    residual = np.einsum("kij,rkj->rki", matrix, out) - rhs
    assert np.max(np.abs(residual)) <= 1e3 * EPS * np.max(np.abs(rhs)) * np.max(np.linalg.cond(matrix))


def test_a_runs_step_does_not_depend_on_the_other_runs_of_the_batch(problem):
    solve = client_solver(problem, 0.7)
    anchor, phi = _inputs(problem, 9, 1)
    alone = solve(anchor[3:4], phi[3:4], None)
    for runs in (2, 5, 9):
        rows = np.arange(runs) if runs > 3 else np.array([3] + list(range(runs - 1)))
        batch = solve(anchor[rows], phi[rows], None)
        assert np.array_equal(batch[list(rows).index(3)], alone[0])
