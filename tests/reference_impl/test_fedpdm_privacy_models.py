"""reference_impl.fedpdm.accounting: the privacy models of a run (account_run), their status, the bound calibration."""

import json
import math

import numpy as np
import pytest

from reference_impl import fedpdm as fp
from reference_impl.fedpdm.accounting import PRIVACY_MODELS, account_run, history_gaussian_mu
from theory.privacy.conversions import gaussian_delta_exact
from theory.privacy.history import history_factors_fedpdm
from theory.privacy.sensitivity import sensitivity_fedpdm
from theory.privacy.subsampled import rdp_poisson_subsampled_gaussian, rdp_to_approx_dp


def _config(**kw):
    base = dict(K=4, rounds=12, batch_size=6, rho=10.0, eta0=0.05, eta_schedule="constant", nu=0.0, Q_max=2)
    return fp.FedPDMConfig(**{**base, **kw})


def _run(config, seed=0):
    problem = fp.instance_nc(np.random.default_rng(seed))
    return problem, fp.run_fedpdm(problem, config, np.random.default_rng(seed + 1))


def test_default_model_is_the_bound_and_the_papers_is_labelled():
    problem, run = _run(_config())
    assert _config().privacy_model == "history_gaussian" and PRIVACY_MODELS == ("history_gaussian", "paper")
    bound = account_run(problem, _config(), run)
    assert bound.model == "history_gaussian" and bound.is_bound and bound.status.startswith("bound:")
    paper = account_run(problem, _config(), run, model="paper")
    assert paper.model == "paper" and not paper.is_bound and "not a bound for Algorithm 1 as run" in paper.status
    assert "fedpdm.theorem2_carryover" in paper.status
    assert np.array_equal(bound.participations, run.participation_counts)
    out = bound.to_json()
    json.dumps(out, allow_nan=False)
    assert out["model"] == "history_gaussian" and out["epsilon_max"] == bound.epsilon_max() > 0
    with pytest.raises(ValueError, match="model must be one of"):
        account_run(problem, _config(), run, model="rdp")


@pytest.mark.parametrize("sensitivity_model", ["eq19", "history"])
def test_history_gaussian_mu_is_the_composition_of_the_history_sensitivities(sensitivity_model):
    """eq19 noise z s: mu_i = sqrt(sum kappa^2)/z; noise z kappa s: mu_i = sqrt(n_i)/z; eps_i its exact profile."""
    config = _config(sensitivity_model=sensitivity_model)
    problem, run = _run(config)
    acc = account_run(problem, config, run)
    for i in range(problem.N):
        rounds = np.flatnonzero(run.participation[0, :, i])
        kappa = history_factors_fedpdm([0.05] * rounds.size, [2] * rounds.size, 10.0)
        unit = math.sqrt(float((kappa**2).sum())) if sensitivity_model == "eq19" else math.sqrt(rounds.size)
        expected = unit / run.z
        assert acc.mu[0, i] == pytest.approx(expected, rel=1e-13)
        assert gaussian_delta_exact(acc.epsilon[0, i], acc.mu[0, i]) <= config.delta
        assert acc.mu[0, i] == pytest.approx(history_gaussian_mu(run.etas[rounds], 2, 10.0, "warm",
                                                                 run.sigma[0, rounds, i], run.G), rel=1e-13)
    assert np.allclose(acc.delta_at(acc.epsilon_max()).max(), config.delta, rtol=1e-6)


def test_statuses_when_no_bound_holds():
    problem, run = _run(_config(nu=1e-3))
    acc = account_run(problem, _config(nu=1e-3), run)
    assert not acc.is_bound and "rule (11)" in acc.status and math.isinf(acc.epsilon_max())
    json.dumps(acc.to_json(), allow_nan=False)
    problem, run = _run(_config(noise="none"))
    acc = account_run(problem, _config(noise="none"), run)
    assert not acc.is_bound and "noise = 'none'" in acc.status
    one_step = _config(nu=1e-3, Q_max=1)  # Q_max = 1: rule (11) cannot change the step count
    problem, run = _run(one_step)
    assert account_run(problem, one_step, run).is_bound


def test_paper_model_is_the_calibration_accountant():
    config = _config(dp_calibration="target_total_eps", epsilon_total=3.0)
    problem, run = _run(config)
    acc = account_run(problem, config, run, model="paper")
    n_max = int(run.participation_counts.max())
    orders = fp.ORDERS
    expected = rdp_to_approx_dp(n_max * rdp_poisson_subsampled_gaussian(config.q(problem), run.z, orders), orders,
                                1e-5)[0]
    assert acc.epsilon_max() == pytest.approx(expected, rel=1e-12) and acc.epsilon_max() <= 3.0


@pytest.mark.parametrize("sensitivity_model", ["eq19", "history"])
def test_bound_calibration_meets_the_target_with_the_bound(sensitivity_model):
    config = _config(dp_calibration="target_total_eps_bound", epsilon_total=4.0, sensitivity_model=sensitivity_model)
    problem, run = _run(config)
    acc = account_run(problem, config, run)
    assert acc.is_bound and 4.0 * (1 - 1e-9) <= acc.epsilon_max() <= 4.0 * (1 + 1e-12)
    assert acc.delta_at(4.0).max() <= config.delta * (1 + 1e-9)
    s = sensitivity_fedpdm(0.05, 10.0, 2, run.G)
    busiest = acc.worst_client()
    rounds = np.flatnonzero(run.participation[0, :, busiest])
    assert run.sigma[0, rounds[0], busiest] == pytest.approx(run.z * s, rel=1e-14)
    with pytest.raises(ValueError, match="target_total_eps_bound' needs a fixed number of local steps"):
        _config(dp_calibration="target_total_eps_bound", nu=1e-3)


def test_config_validates_the_privacy_model():
    with pytest.raises(ValueError, match="privacy_model must be one of 'history_gaussian', 'paper'"):
        _config(privacy_model="rdp")
