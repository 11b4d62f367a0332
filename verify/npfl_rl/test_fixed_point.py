"""Property tests of the coupled fixed point and of (6.1) with the raw tau, which is not the limit
(docs/papers/npfl_rl.md#k4, #erratum-d14)."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.npfl_rl._common import paper_point
from verify.npfl_rl.fixed_point import evaluate_centralised_raw_tau, evaluate_fixed_point
from verify.strategies import npfl_instances, npfl_symmetric_instances

SYM = {"seed": 4, "K": 9, "d": 4, "D_lo": 2, "D_hi": 6, "mean_degree": 7.0, "lam": 0.1, "symmetric": True}


@pytest.mark.claim("npfl_rl.fixed_point")
@settings(max_examples=examples("few"))
@given(case=st.one_of(npfl_instances(), npfl_symmetric_instances()), tau_seed=st.integers(0, 2**31 - 1),
       tau_hi=st.sampled_from([0.1, 1.0, 5.0]))
@example(case=paper_point(2), tau_seed=2, tau_hi=1.0)
@example(case=SYM, tau_seed=0, tau_hi=1.0)
def test_fixed_tau_reaches_the_coupled_fixed_point(case, tau_seed, tau_hi):
    """Property: with fixed tau_k ~ U(0, tau_hi), NPFL reaches the stacked coupled fixed point (and, in the symmetric
    case, the CVXPY argmin of sum_q Phi_q/T_q + 1/(Q-1) sum_{q<r}||w_q - w_r||^2 equals it)."""
    evidence = evaluate_fixed_point({**case, "tau_seed": tau_seed, "tau_hi": tau_hi})
    target(evidence.measured, label="max ratio to tolerance")
    assert evidence.holds, evidence.parameters["ratios"]


@pytest.mark.claim("npfl_rl.centralised_raw_tau")
@settings(max_examples=examples("few"))
@given(case=npfl_symmetric_instances(), tau=st.sampled_from([0.05, 0.2, 1.0]))
@example(case=SYM, tau=0.05)
def test_raw_tau_centralised_problem_is_not_the_limit(case, tau):
    """Property: the NPFL limit with tau_k = tau differs from the coupled (6.1) with the same tau, and equals the one
    with |C_q| tau."""
    evidence = evaluate_centralised_raw_tau({**case, "tau": tau})
    assert not evidence.holds
    assert evidence.parameters["error_scaled_tau"] < 1e-6
