"""Property tests of the tau = 0 and NFL convergence and of the dual sign of (6.6) (docs/papers/npfl_rl.md#k2, #k3,
#erratum-d1)."""

import pytest
from hypothesis import example, given, settings, target

from verify.budget import examples
from verify.npfl_rl._common import paper_point
from verify.npfl_rl.convergence import evaluate_convergence
from verify.strategies import npfl_instances

SMALL = {"seed": 1, "K": 6, "d": 3, "D_lo": 2, "D_hi": 5, "mean_degree": 2.0, "lam": 0.1, "symmetric": False}


@pytest.mark.claim("npfl_rl.convergence_tau0")
@settings(max_examples=examples("few"))
@given(case=npfl_instances())
@example(case=paper_point(3))
def test_tau0_reaches_per_component_ridge(case):
    """Property: with the corrected dual sign and tau = 0, NPFL reaches the per-component CVXPY ridge solution of
    every intra-cluster component to 1e-6 (relative squared error) within 2000 iterations."""
    evidence = evaluate_convergence(case, "tau0")
    target(evidence.measured, label="error / NPFL_CONVERGED_RTOL")
    assert evidence.holds, evidence.parameters["error"]


@pytest.mark.claim("npfl_rl.dual_update_printed")
@settings(max_examples=examples("few"))
@given(case=npfl_instances())
@example(case=SMALL)
def test_printed_dual_sign_diverges(case):
    """Property: with the printed dual update (w_l - w_k) and tau = 0 the iteration does not converge: the relative
    error after 400 iterations exceeds 1e3 on every instance with a same-cluster edge."""
    evidence = evaluate_convergence(case, "tau0_printed_dual")
    assert not evidence.holds
    assert evidence.parameters["error"] > 1e3 or evidence.parameters["error"] == float("inf")


@pytest.mark.claim("npfl_rl.nfl_convergence")
@settings(max_examples=examples("few"))
@given(case=npfl_instances())
@example(case=paper_point(1))
def test_nfl_reaches_global_ridge(case):
    """Property: NFL reaches the global CVXPY ridge solution to 1e-6 within 2000 iterations on a connected graph."""
    evidence = evaluate_convergence(case, "nfl")
    target(evidence.measured, label="error / NPFL_CONVERGED_RTOL")
    assert evidence.holds, evidence.parameters["error"]
