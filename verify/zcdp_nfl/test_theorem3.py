"""Property tests of zCDP-NFL Theorem III: eta0/n^2 (Assumption 3, summable) freezes; eta0/sqrt(n) converges."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.tolerance import NFL_CONVERGED_NE, NFL_FROZEN_FRACTION
from verify.zcdp_nfl.theorem3 import (
    FREEZE,
    NONSUMMABLE,
    evaluate_converged,
    evaluate_frozen,
)

PAPER = {"seed": 2024, "K": 50, "P": 8, "M": 50}


@pytest.mark.claim("zcdp_nfl.theorem3")
@settings(max_examples=examples("some"))
@given(seed=st.integers(0, 2**31 - 1), objective=st.sampled_from(["ridge", "lad", "elastic_net"]),
       eta0=st.floats(min_value=0.01, max_value=0.05), rho=st.floats(min_value=0.5, max_value=2.0))
@example(seed=PAPER["seed"], objective="ridge", eta0=0.05, rho=1.0)
def test_summable_steps_freeze_the_iterates(seed, objective, eta0, rho):
    """Property: with eta^(n) = eta0/n^2 (Assumption 3 holds, Sigma eta < inf) a noise-free run stops far from
    w_c: the distance left after the extrapolated remaining motion exceeds half the initial distance."""
    evidence = evaluate_frozen({**FREEZE, "seed": seed, "objective": objective, "eta0": eta0, "rho": rho, "T": 1000})
    target(-evidence.measured, label="-(certificate)")
    assert evidence.measured > NFL_FROZEN_FRACTION, evidence


@pytest.mark.claim("zcdp_nfl.theorem3_nonsummable")
@settings(max_examples=examples("some"))
@given(seed=st.integers(0, 2**31 - 1), objective=st.sampled_from(["ridge", "elastic_net"]),
       eta0=st.floats(min_value=0.2, max_value=0.5))
@example(seed=0, objective="lad", eta0=0.5)
def test_nonsummable_steps_reach_the_optimum(seed, objective, eta0):
    """Property: with eta^(n) = eta0/sqrt(n) (eta -> 0, Sigma eta = inf) a noise-free run reaches the CVXPY optimum
    (NE <= 1e-6; ridge/elastic net within 3000 rounds, LAD within 10000)."""
    T = 10000 if objective == "lad" else 3000
    evidence = evaluate_converged({**NONSUMMABLE, "seed": seed, "objective": objective, "eta0": eta0, "T": T})
    target(evidence.measured, label="NE(T)")
    assert evidence.holds and evidence.measured <= NFL_CONVERGED_NE, evidence
