"""Property tests of zCDP-NFL Assumptions 3-4, Theorem IV and the growing step."""

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from verify.budget import examples
from verify.tolerance import NFL_FROZEN_FRACTION
from verify.zcdp_nfl.theorem3 import FREEZE, evaluate_frozen
from verify.zcdp_nfl.theorem4 import (
    GROWING,
    READINGS,
    assumption3_holds,
    evaluate_growing,
    evaluate_implication,
    evaluate_theorem4,
    reading_holds,
)


@pytest.mark.claim("zcdp_nfl.assumption4_stronger")
@given(p=st.floats(min_value=-5.0, max_value=5.0))
@example(p=2.0)
@example(p=-2.0)
def test_assumption4_never_holds_together_with_assumption3(p):
    """Property: for eta = eta0 n^p, Assumption 4 as printed (or as a sequence) and Assumption 3 never hold together;
    'A4 implies A3' fails exactly when p > 1; readings compatible with A3 (sum eta, sum eta^2 finite) include p = -2."""
    for reading in ("R1_series_D2", "R2_sequence_D2"):
        assert not (assumption3_holds(p) and reading_holds(reading, p))
    assert evaluate_implication(p).holds == (p <= 1.0)
    if p <= -1.5:
        assert all(reading_holds(r, p) for r in ("R3_sum_eta", "R4_sum_eta2"))


@pytest.mark.claim("zcdp_nfl.theorem4")
@pytest.mark.parametrize("private", [False, True])
def test_printed_assumption4_admits_a_diverging_run(private):
    """Property: eta = 0.05 n^2 satisfies Assumption 4 as printed (sum ||D^(n)||^2 < inf), and the run diverges
    (ridge, rho = 0.3), noise-free and with S1 privacy noise: no convergence, at any rate."""
    evidence = evaluate_theorem4("R1_series_D2", 400, private)
    assert reading_holds("R1_series_D2", 2.0)
    assert not evidence.holds and evidence.parameters["outcome"] == "diverged"


@pytest.mark.claim("zcdp_nfl.theorem4_readings")
@pytest.mark.parametrize("reading", READINGS[1:])
def test_every_other_reading_admits_a_non_converging_schedule(reading):
    """Property: under each other reading of Assumption 4 (with Assumption 2) a schedule satisfying it fails to
    converge: eta = 0.05 n^2 diverges (ridge, rho = 0.3), eta = 0.05/n^2 freezes."""
    assert not evaluate_theorem4(reading, 400).holds


@pytest.mark.claim("zcdp_nfl.theorem4_readings")
@settings(max_examples=examples("some"))
@given(seed=st.integers(0, 2**31 - 1), objective=st.sampled_from(["ridge", "lad"]),
       eta0=st.floats(min_value=0.01, max_value=0.05))
@example(seed=0, objective="ridge", eta0=0.05)
def test_schedules_with_summable_squares_freeze(seed, objective, eta0):
    """Property: eta0/n^2 satisfies readings
    R3 (docs/papers/zcdp_nfl.md#theorem-4)/R4 (docs/papers/zcdp_nfl.md#theorem-4) and Assumption 3, and the noise-free
    run freezes."""
    evidence = evaluate_frozen({**FREEZE, "seed": seed, "objective": objective, "eta0": eta0, "T": 1000})
    assert evidence.measured > NFL_FROZEN_FRACTION


@pytest.mark.claim("zcdp_nfl.growing_step_instance_dependent")
def test_growing_step_outcome_depends_on_instance_and_rho():
    """Property: with eta = 0.05 n^2, ridge diverges at rho = 0.3 on seed 0 and converges at rho = 1 on the same
    instance and at rho = 0.3 on seed 2; LAD neither diverges nor converges (stalls) at rho = 1."""
    assert evaluate_growing({**GROWING, "T": 400}).parameters["outcome"] == "diverged"
    assert evaluate_growing({**GROWING, "rho": 1.0, "T": 400}).parameters["outcome"] == "converged"
    assert evaluate_growing({**GROWING, "seed": 2, "T": 400}).parameters["outcome"] == "converged"
    assert evaluate_growing({**GROWING, "objective": "lad", "rho": 1.0, "T": 400}).parameters["outcome"] == "stalled"
