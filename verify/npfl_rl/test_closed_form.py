"""Property tests of the closed form (6.11) against the CVXPY argmin of (6.5) (docs/papers/npfl_rl.md#k1)."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.npfl_rl.closed_form import PAPER_POINT, evaluate_closed_form
from verify.strategies import npfl_instances

SMALL = {"seed": 5, "K": 6, "d": 3, "D_lo": 2, "D_hi": 4, "mean_degree": 2.0, "lam": 0.1, "symmetric": False,
         "rho": 3.0, "a": 0.05, "state_seed": 2}


@pytest.mark.claim("npfl_rl.closed_form")
@settings(max_examples=examples("several"))
@given(case=npfl_instances(), rho=st.floats(0.1, 10.0), a=st.sampled_from([0.0, 0.05, 0.3, 1.0]),
       state_seed=st.integers(0, 2**31 - 1))
@example(case=PAPER_POINT, rho=3.0, a=0.05, state_seed=1)
def test_corrected_closed_form_is_the_argmin(case, rho, a, state_seed):
    """Property: the corrected (6.11) (rho|N_k cap C_q|, omega_k a on the diagonal, '+' restored) equals the CVXPY
    argmin of the corrected (6.5) at every client, including clients with missing clusters or no same-cluster
    neighbour."""
    evidence = evaluate_closed_form({**case, "rho": rho, "a": a, "state_seed": state_seed})
    target(evidence.measured, label="relative error / NPFL_CVXPY_RTOL")
    assert evidence.holds, evidence.parameters["relative_errors"]


@pytest.mark.claim("npfl_rl.closed_form_printed")
@settings(max_examples=examples("few"))
@given(case=npfl_instances(), rho=st.floats(0.5, 10.0), state_seed=st.integers(0, 2**31 - 1))
@example(case=SMALL, rho=3.0, state_seed=2)
def test_printed_closed_form_misses_the_argmin(case, rho, state_seed):
    """Property: the printed (6.11) with rho|N_k| is not the argmin of (6.5) on any connected multi-cluster graph
    (some client has a neighbour in another cluster, so |N_k| != |N_k cap C_q|)."""
    evidence = evaluate_closed_form({**case, "rho": rho, "a": 0.05, "state_seed": state_seed}, "printed")
    assert not evidence.holds


@pytest.mark.claim("npfl_rl.subproblem_printed")
@settings(max_examples=examples("few"))
@given(case=npfl_instances(), a=st.sampled_from([0.05, 0.3]), state_seed=st.integers(0, 2**31 - 1))
@example(case=SMALL, a=0.05, state_seed=2)
def test_closed_form_is_not_the_argmin_of_the_printed_norm_of_sum(case, a, state_seed):
    """Property: at tau in {0.05, 0.3}, (6.11) misses the argmin of (6.5) with the printed norm-of-sum inter-cluster
    term at some client (every connected multi-cluster graph has a client with omega_k > 0)."""
    evidence = evaluate_closed_form({**case, "rho": 3.0, "a": a, "state_seed": state_seed}, "printed_objective")
    assert not evidence.holds
