"""Property tests of K10 (well-posedness of every primal step) and its literal, unprojected failure (D11)."""

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from verify.npfl_rl.well_posedness import PAPER_BREACH, evaluate_well_posed
from verify.strategies import npfl_instances

POLICIES = st.sampled_from([("dpg", 0.05, 1), ("dpg", 0.05, 3), ("sac", 0.1, 1), ("sac", 0.04, 3)])


@pytest.mark.claim("npfl_rl.well_posed")
@settings(max_examples=6)
@given(case=npfl_instances(), policy=POLICIES, run_seed=st.integers(0, 2**31 - 1))
@example(case={k: PAPER_BREACH[k] for k in ("seed", "K", "d", "D_lo", "D_hi", "mean_degree", "lam", "symmetric")},
         policy=("dpg", 1e-3, 1), run_seed=0)
def test_projection_keeps_every_step_well_posed(case, policy, run_seed):
    """Property: with tau and the SAC candidates projected onto [0, 1], no evaluation of P_k(a) has a
    non-positive-definite matrix H_k + (c_k + omega_k a) I."""
    name, delta, epochs = policy
    evidence = evaluate_well_posed({**case, "policy": name, "delta": delta, "nu": 0.05, "epochs": epochs, "N": 100,
                                    "run_seed": run_seed}, True)
    assert evidence.holds, evidence.parameters["min_shift"]
    assert evidence.parameters["min_shift"] > 0


@pytest.mark.claim("npfl_rl.well_posed_unprojected")
def test_paper_dpg_breaches_well_posedness_unprojected():
    """Property: the paper's unprojected DPG (delta = 1e-3) on I0 replicate 9 evaluates ill-posed subproblems within
    60 iterations (tau_k < -c_k/omega_k)."""
    evidence = evaluate_well_posed(PAPER_BREACH, False)
    assert not evidence.holds
    assert evidence.parameters["min_shift"] < 0
