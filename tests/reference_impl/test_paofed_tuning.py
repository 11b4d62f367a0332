"""Step matching of the PAO-Fed baselines (docs/papers/paofed.md#choice-baselines): reference_impl.paofed.tuning."""

import dataclasses
import math

import pytest

from reference_impl.paofed import algorithm_config, experiment_environment
from reference_impl.paofed.data import SyntheticRFFData
from reference_impl.paofed.tuning import (
    MATCH_TOLERANCE_DB,
    initial_rate_db,
    initial_rates_db,
    match_initial_rate,
    match_initial_rates,
    step_field,
    steps_within_tolerance,
    steps_within_tolerances,
)

ENV = experiment_environment(K=8, D=10)  # a small federation (the paper: K = 256, D = 200) keeps tuning cheap
DATA = SyntheticRFFData(K=8, D=10, test_size=50)
FEDSGD = algorithm_config("online-fedsgd", m=1)
KW = dict(n_eval=10, seed=3, runs=4)


def _target():
    return initial_rate_db(ENV, algorithm_config("paofed-u1", m=1), DATA, 10, 3, 4)


def test_matched_step_reproduces_its_recorded_rate_within_the_tolerance():
    target = _target()
    match = match_initial_rate(ENV, FEDSGD, DATA, target_db=target, **KW)
    assert match.matched and match.reason == "matched"
    assert abs(match.achieved_db - target) <= MATCH_TOLERANCE_DB
    # common random numbers: the recorded value is a deterministic function of the step
    assert initial_rate_db(ENV, match.apply(FEDSGD), DATA, 10, 3, 4) == match.achieved_db
    assert match.apply(FEDSGD).mu == match.step


def test_unreachable_target_returns_the_fastest_grid_step():
    match = match_initial_rate(ENV, FEDSGD, DATA, target_db=-100.0, **KW)
    assert not match.matched and match.reason == "slower at every step"
    assert match.achieved_db == min(v for _, v in match.trials)


def test_target_slower_than_the_whole_bracket_returns_its_smallest_step():
    match = match_initial_rate(ENV, FEDSGD, DATA, target_db=100.0, bracket=(1e-2, 1.0), **KW)
    assert not match.matched and match.reason == "faster at every step"
    assert match.step == pytest.approx(1e-2)  # the bracket's lower end, given above


def test_signsgd_is_tuned_through_its_server_step():
    config = algorithm_config("signsgd", m=1)
    assert step_field(config) == "sign_step" and step_field(FEDSGD) == "mu"
    match = match_initial_rate(ENV, config, DATA, target_db=_target(), **KW)
    assert match.field == "sign_step" and match.apply(config).sign_step == match.step
    assert match.apply(config).mu == config.mu


def test_diverging_steps_count_as_infinitely_slow():
    match = match_initial_rate(ENV, FEDSGD, DATA, target_db=-100.0, bracket=(0.1, 1e6), grid=4, n_eval=200, seed=3,
                               runs=2)
    assert any(math.isinf(v) for _, v in match.trials)
    assert math.isfinite(match.achieved_db)


@pytest.mark.parametrize("kw, name", [
    (dict(n_eval=0), "n_eval"), (dict(runs=0), "runs"), (dict(grid=2), "grid"), (dict(refine=-1), "refine"),
    (dict(bracket=(1.0, 0.1)), "bracket"), (dict(bracket=(0.0, 1.0)), "bracket"),
    (dict(tolerance_db=0.0), "tolerance_db"),
    (dict(target_db=math.nan), "target_db")])
def test_bad_input_names_the_parameter(kw, name):
    args = dict(target_db=0.0, **KW)
    args.update(kw)
    with pytest.raises(ValueError, match=name):
        match_initial_rate(ENV, FEDSGD, DATA, **args)


def test_lockstep_rates_are_each_configurations_own_bit_for_bit():
    """initial_rates_db (the grid and the band edges run in lockstep) gives initial_rate_db's value for every step,
    diverging ones (inf) included, so the search takes the same path as one run per step."""
    steps = (0.01, 0.3, 1e6)  # 1e6 diverges (within 200 iterations, as above): its inf must not leak into the others
    configs = [dataclasses.replace(FEDSGD, mu=s) for s in steps]
    together = initial_rates_db(ENV, configs, DATA, 200, KW["seed"], 2)
    alone = [initial_rate_db(ENV, c, DATA, 200, KW["seed"], 2) for c in configs]
    assert together == alone and math.isinf(together[-1])


def test_searches_in_lockstep_equal_each_search_alone():
    """match_initial_rates / steps_within_tolerances (several baselines tuned together, their trial steps of a round
    in one lockstep simulation) give each baseline's match_initial_rate / steps_within_tolerance result exactly."""
    configs = [FEDSGD, algorithm_config("signsgd", m=1), algorithm_config("online-fed", m=1)]
    target = _target()
    matches = match_initial_rates(ENV, configs, DATA, target_db=target, **KW)
    bands = steps_within_tolerances(ENV, configs, DATA, matches, refine=3, **KW)  # 3 halvings: a cheap band
    for config, match, band in zip(configs, matches, bands, strict=True):
        alone = match_initial_rate(ENV, config, DATA, target_db=target, **KW)
        assert match == alone
        assert band == steps_within_tolerance(ENV, config, DATA, alone, refine=3, **KW)
