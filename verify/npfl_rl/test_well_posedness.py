"""Property tests of the well-posedness of every primal step and its literal, unprojected failure
(docs/papers/npfl_rl.md#k10, #erratum-d11)."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reference_impl.npfl_rl import NPFLConfig, npfl_primal_map, run_npfl
from verify.budget import examples
from verify.npfl_rl._common import problem_from
from verify.npfl_rl.well_posedness import PAPER_BREACH, evaluate_well_posed
from verify.strategies import npfl_instances

PAPER_CASE = {k: PAPER_BREACH[k] for k in ("seed", "K", "d", "D_lo", "D_hi", "mean_degree", "lam", "symmetric")}

POLICIES = st.sampled_from([("dpg", 0.05, 1), ("dpg", 0.05, 3), ("sac", 0.1, 1), ("sac", 0.04, 3)])


@pytest.mark.claim("npfl_rl.well_posed")
@settings(max_examples=examples("several"))
@given(case=npfl_instances(), policy=POLICIES, run_seed=st.integers(0, 2**31 - 1))
@example(case=PAPER_CASE, policy=("dpg", 1e-3, 1), run_seed=0)
def test_projection_keeps_every_step_well_posed(case, policy, run_seed):
    """Property: with tau and the SAC candidates projected onto [0, 1], no evaluation of P_k(a) has a
    non-positive-definite matrix H_k + (c_k + omega_k a) I."""
    name, delta, epochs = policy
    evidence = evaluate_well_posed({**case, "policy": name, "delta": delta, "nu": 0.05, "epochs": epochs, "N": 100,
                                    "run_seed": run_seed}, True)
    assert evidence.holds, evidence.parameters["min_shift"]
    assert evidence.parameters["min_shift"] > 0


@pytest.mark.claim("npfl_rl.well_posed_unprojected")
@settings(max_examples=examples("several"))
@given(case=npfl_instances(), run_seed=st.integers(0, 2**31 - 1), delta=st.sampled_from([1e-3, 0.05, 0.2]))
@example(case=PAPER_CASE, run_seed=0, delta=1e-3)
def test_unprojected_runs_flag_exactly_the_ill_posed_steps(case, run_seed, delta):
    """Property: in the literal, unprojected mode (DPG) a run reports an ill-posed evaluation of P_k(a) exactly when
    some tau_k^(n) leaves the region lambda_min(H_k) + c_k + omega_k tau > 0; the paper's DPG (delta = 1e-3) on the
    standard instance's replicate 9 leaves it (so the literal algorithm is not always well posed)."""
    problem = problem_from(case)
    run = run_npfl(problem, NPFLConfig(policy="dpg", delta=delta, projection=False), 60)
    pm = npfl_primal_map(problem, NPFLConfig(), run.w[0], run.gamma[0])
    lam_min = np.linalg.eigvalsh(problem.H)[:, 0]
    outside = np.any(lam_min + pm.c + pm.omega * run.tau[0, 1:] <= 0.0)
    assert (run.ill_posed[0] > 0) == bool(outside)
    if case == PAPER_CASE and delta == 1e-3:
        assert run.ill_posed[0] > 0
