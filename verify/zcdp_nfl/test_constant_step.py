"""Property tests of zCDP-NFL with a constant step: the two counterexamples and the conditions that repair it."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.zcdp_nfl.constant_step import (
    DIVERGING,
    STALLING,
    evaluate_constant_step,
    hypothesis_margins,
    step_for,
)


@pytest.mark.claim("zcdp_nfl.constant_step")
@pytest.mark.parametrize("seed", [0, 1])
def test_constant_step_diverges_at_large_lambda_and_stalls_on_a_sparse_optimum(seed):
    """Property: eta = 0.5 diverges at lambda = 30 (eta max L_k > 3) and stalls (NE flat from T/2 to T, above 1e-6)
    when the elastic net's w_c has an exact zero, while eta = 0.5/sqrt(n) keeps improving there."""
    diverging = evaluate_constant_step({**DIVERGING, "seed": seed, "T": 1000})
    assert diverging.parameters["outcome"] == "diverged" and diverging.parameters["eta_max_L"] > 3
    stalling = evaluate_constant_step({**STALLING, "seed": seed, "T": 1000})
    if stalling.parameters["min_abs_w_c"] == 0.0:
        assert stalling.parameters["outcome"] == "stalled"
        decaying = evaluate_constant_step({**STALLING, "seed": seed, "step": "inv_sqrt", "T": 1000})
        assert decaying.measured < stalling.measured


@pytest.mark.claim("zcdp_nfl.constant_step_conditions")
@settings(max_examples=examples("many"))
@given(seed=st.integers(0, 2**31 - 1), objective=st.sampled_from(["ridge", "elastic_net"]),
       lam=st.floats(min_value=0.1, max_value=3.0), c=st.floats(min_value=0.2, max_value=1.0))
@example(seed=2024, objective="elastic_net", lam=1.0, c=1.0)
def test_constant_step_converges_under_the_two_conditions(seed, objective, lam, c):
    """Property: with eta = c / max_k L_k (c <= 1) and min_j |w_c,j| > eta lambda lambda_1 / K, the noise-free run
    with constant eta reaches the CVXPY optimum linearly (NE <= 1e-6 within 1000 rounds)."""
    base = {"seed": seed, "objective": objective, "lam": lam, "T": 1000}
    case = {**base, "eta0": step_for(base, c)}
    if hypothesis_margins(case)["zero_margin"] > 1.0:  # outside the hypothesis otherwise (a coordinate near 0)
        evidence = evaluate_constant_step(case)
        target(evidence.measured, label="NE(T)")
        assert evidence.holds, evidence
        assert evidence.parameters["linear_rate"] is None or evidence.parameters["linear_rate"] < 1.0
