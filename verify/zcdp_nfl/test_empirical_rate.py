"""Property tests of the empirical rate of zCDP-NFL: the fitted slope of the optimality gap."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.tolerance import MC_ALPHA, NFL_RATE_SLACK
from verify.zcdp_nfl.empirical_rate import BASE, slope_evidence

#: Runs per setting in the properties (the ci check uses 30; 20 keeps one example under a second).
RUNS = 20


@pytest.mark.claim("zcdp_nfl.rate_one_over_t")
@pytest.mark.claim("zcdp_nfl.rate_instance_dependent")
@settings(max_examples=examples("few"))
@given(seed=st.integers(0, 2**16), noise_seed=st.integers(0, 2**16))
@example(seed=0, noise_seed=0)
def test_constant_step_on_ridge_is_at_least_one_over_t(seed, noise_seed):
    """Property: on any small ridge instance with constant eta = 0.5 and S2 noise, the last-iterate gap (where no slope
    is automatic) falls at least like 1/T (fitted slope shown <= -1 + 0.1), hence so does the ergodic gap (Jensen):
    the fast side of the instance dependence."""
    e = slope_evidence({**BASE, "objective": "ridge", "step": "constant", "seed": seed, "runs": RUNS,
                        "noise_seed": noise_seed}, MC_ALPHA)
    target(e.parameters["upper"], label="upper limit of the slope")
    assert e.holds and e.parameters["last_upper"] <= -1.0 + NFL_RATE_SLACK, e.parameters


@pytest.mark.claim("zcdp_nfl.rate_one_over_t")
@pytest.mark.claim("zcdp_nfl.rate_instance_dependent")
@settings(max_examples=examples("few"))
@given(noise_seed=st.integers(0, 2**16))
@example(noise_seed=0)
def test_harmonic_step_on_the_lad_instance_is_slower_than_one_over_t(noise_seed):
    """Property: on the small LAD instance (seed 0) with eta = 0.5/n, for any noise seed, the gap falls
    markedly slower than 1/T (slope shown > -1 + 0.1): the generalisation of Theorem IV to every schedule with
    sum eta = inf fails there."""
    e = slope_evidence({**BASE, "objective": "lad", "step": "inv", "seed": 0, "runs": RUNS,
                        "noise_seed": noise_seed}, MC_ALPHA)
    target(-e.parameters["lower"], label="minus the lower limit of the slope")
    assert e.parameters["slower"] and e.parameters["lower"] > -1.0 + NFL_RATE_SLACK, e.parameters
