"""Property tests of Algorithm 1's convergence and of the optimality condition (25) (printed vs corrected,
erratum E3 (docs/papers/gtv.md#erratum-e3))."""

import pytest
from hypothesis import example, given, settings, target

from verify.budget import examples
from verify.gtv.algorithm1 import evaluate_convergence, evaluate_kkt_25
from verify.strategies import gtv_convergence_cases


@pytest.mark.claim("gtv.algorithm1_convergence")
@settings(max_examples=examples("several"))  # each example runs Algorithm 1 to 1e-12 and two conic solves (about a
# second)
@given(case=gtv_convergence_cases())
@example(case={"penalty": "l2", "loss": "squared", "seed": 0, "m": 10, "lam": 1e-2, "size": 6})
def test_algorithm1_reaches_the_cvxpy_optimum(case):
    """Property: Algorithm 1 (errata E1-E2 (docs/papers/gtv.md#erratum-e1 to #erratum-e2) reading, seed steps) stops by
    the fixed-point residual at a point whose objective is not above CVXPY's optimum beyond the solver tolerance and
    whose KKT residuals are within the residual-implied bound, for nLasso, l1, MOCHA and 1/2 v^T Q v."""
    e = evaluate_convergence(case)
    target(e.measured, label="max(objective excess / tol, KKT / bound)")
    assert e.holds, e


@pytest.mark.claim("gtv.algorithm1_convergence")
@settings(max_examples=examples("few"))
@given(case=gtv_convergence_cases(penalty="l2", loss="logistic"))
def test_algorithm1_logistic(case):
    """Property: the same with the logistic loss (ridge 0.01; PU by batched Newton)."""
    e = evaluate_convergence(case)
    assert e.holds, e


@pytest.mark.claim("gtv.kkt_25_corrected")
@settings(max_examples=examples("several"))
@given(case=gtv_convergence_cases(penalty="mocha"))
@example(case={"penalty": "mocha", "loss": "squared", "seed": 0, "m": 10, "lam": 1e-2, "size": 6})
def test_mocha_flow_is_lam_a_times_the_difference(case):
    """Property: at the MOCHA optimum u^(e) = lam A_e (w^(e+) - w^(e-)) (corrected (25),
    erratum E3 (docs/papers/gtv.md#erratum-e3))."""
    e = evaluate_kkt_25(case, corrected=True)
    target(e.measured / e.bound, label="error / accuracy bound")
    assert e.holds, e


@pytest.mark.claim("gtv.kkt_25")
@settings(max_examples=examples("several"))
@given(case=gtv_convergence_cases(penalty="mocha"))
def test_printed_25_fails_whenever_lam_a_is_not_one(case):
    """Property: the printed (25) (u = D w for MOCHA) fails at the optimum whenever some lam A_e != 1 and the
    optimum is not constant on that edge -- the refutation of gtv.kkt_25 is not an accident of one instance."""
    e = evaluate_kkt_25(case, corrected=False)
    assert not e.holds, e
