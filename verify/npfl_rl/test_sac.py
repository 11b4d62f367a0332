"""Property tests of the SAC step bound and direction (docs/papers/npfl_rl.md#k7)."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.npfl_rl._common import paper_point
from verify.npfl_rl.sac import evaluate_sac_rule, evaluate_sac_run
from verify.strategies import npfl_instances


@pytest.mark.claim("npfl_rl.sac_step")
@settings(max_examples=examples("several"))
@given(case=npfl_instances(), state_seed=st.integers(0, 2**31 - 1), delta=st.floats(0.01, 1.0),
       nu=st.floats(0.01, 0.5))
@example(case=paper_point(0), state_seed=0, delta=0.1, nu=0.05)
def test_sac_increment_follows_the_rule(case, state_seed, delta, nu):
    """Property: each SAC increment has |Delta t| <= delta nu / 2 and moves towards the better of t and t + alpha
    (0 on a tie), the values recomputed by independent direct solves."""
    evidence = evaluate_sac_rule({**case, "state_seed": state_seed, "delta": delta, "nu": nu})
    target(evidence.measured, label="rule deviation")
    assert evidence.holds, evidence.parameters["comparisons"]


@pytest.mark.claim("npfl_rl.sac_step")
@given(state_seed=st.integers(0, 2**31 - 1))
@example(state_seed=0)
def test_sac_step_bound_is_attained_at_the_ends_of_the_exploration_interval(state_seed):
    """Property: with alpha = +-nu/2 (the ends of the exploration interval) every increment that is not a tie has
    |Delta t| = delta nu / 2 exactly, at the paper's SAC setting (delta = 0.1, nu = 0.05): the bound cannot be
    improved."""
    evidence = evaluate_sac_rule({**paper_point(0), "state_seed": state_seed, "delta": 0.1, "nu": 0.05, "draws": 1,
                                  "alpha": "extreme"})
    lhs, rhs = evidence.parameters["sides"]
    assert evidence.holds and lhs == pytest.approx(rhs, rel=1e-12), evidence.parameters["comparisons"]


@pytest.mark.claim("npfl_rl.sac_step")
@settings(max_examples=examples("few"))
@given(case=npfl_instances(), run_seed=st.integers(0, 2**31 - 1), epochs=st.sampled_from([1, 3]))
@example(case=paper_point(1), run_seed=0, epochs=3)
def test_sac_runs_move_tau_by_at_most_e_delta_nu_half(case, run_seed, epochs):
    """Property: in an unprojected SAC/BRL run every inner step moves tau by <= delta nu / 2 and every iteration by
    <= E delta nu / 2."""
    evidence = evaluate_sac_run({**case, "run_seed": run_seed, "delta": 0.04 if epochs == 3 else 0.1, "nu": 0.05,
                                 "epochs": epochs, "N": 30})
    target(evidence.measured, label="step / bound")
    assert evidence.holds, (evidence.parameters["inner_ratio"], evidence.parameters["iteration_ratio"])
