"""Property tests of the FedPDM-DP privacy claims for the algorithm as run (client state kept across rounds)."""

import numpy as np
import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from reference_impl import fedpdm as fp
from reference_impl.fedpdm.accounting import account_run
from reference_impl.fedpdm.carryover import AffineClient, carryover_delta, carryover_pair
from theory.privacy.conversions import gaussian_delta_exact, zcdp_to_approx_dp_exact_gaussian
from verify.budget import examples
from verify.fedpdm._carryover import api_configuration_space, evaluate_paper_accounting
from verify.fedpdm.theorem2_carryover import MINIMAL_COUNTEREXAMPLE

_TWO_ROUNDS = st.fixed_dictionaries({
    "local_start": st.sampled_from(["warm", "global"]), "epsilon_round": st.floats(0.2, 3.0),
    "delta": st.sampled_from([1e-3, 1e-5, 1e-8]), "accountant": st.sampled_from(["pld", "rdp"])})


@pytest.mark.claim("fedpdm.theorem2_carryover")
@settings(max_examples=examples("many"))
@given(point=_TWO_ROUNDS)
@example(point={"local_start": "warm", "epsilon_round": 1.0, "delta": 1e-5, "accountant": "pld"})
def test_two_rounds_of_the_paper_already_exceed_the_accountant(point):
    """Property: a client in rounds 0 and 1 of Section V's set-up (literal eta^t, rho = 10, b = 30, |D_i| = 600,
    Q = 1) with noise (18)-(19) at any per-round eps in [0.2, 3] and delta in {1e-3, 1e-5, 1e-8}: the real delta at
    the accountant's eps_bar (PLD or RDP) is certified above delta, for warm and global start."""
    evidence = evaluate_paper_accounting({**MINIMAL_COUNTEREXAMPLE, **point})
    target(-evidence.measured, label="-real delta / delta")
    assert not evidence.holds and evidence.measured > 4.0, evidence.parameters


@pytest.mark.claim("fedpdm.theorem2_history_subsampled")
@settings(max_examples=examples("many"))
@given(point=st.fixed_dictionaries({"local_start": st.sampled_from(["warm", "global"]),
                                    "epsilon_round": st.floats(1.0, 3.0), "delta": st.sampled_from([1e-3, 1e-5, 1e-8]),
                                    "accountant": st.just("pld")}))
@example(point={"local_start": "warm", "epsilon_round": 1.0, "delta": 1e-5, "accountant": "pld"})
def test_history_noise_does_not_rescue_the_subsampled_accountant(point):
    """Property: the same two rounds with noise z kappa_n s_n and per-round eps in [1, 3]: the real delta at the
    accountant's exact (PLD) eps_bar is certified above delta."""
    evidence = evaluate_paper_accounting({**MINIMAL_COUNTEREXAMPLE, **point, "sensitivity_model": "history"})
    target(-evidence.measured, label="-real delta / delta")
    assert not evidence.holds, evidence.parameters


@pytest.mark.claim("fedpdm.theorem2_carryover_corrected")
@settings(max_examples=examples("several"))
@given(point=api_configuration_space.strategy())
@example(point={"N": 3, "n": 4, "K": 3, "rounds": 6, "batch_size": 1, "Q_max": 1, "rho": 1.0, "eta0": 0.05,
                "eta_schedule": "constant", "local_start": "warm", "sensitivity_model": "eq19",
                "dp_calibration": "per_round_eps", "epsilon": 6.0, "epsilon_total": 5.0, "seed": 0})
def test_default_api_totals_bound_the_real_loss(point):
    """Property: on FedPDM-DP configurations the checks never drew, the privacy the API reports by default
    (``account_run``, privacy_model = 'history_gaussian': is_bound) is at least the oracle's real loss of the worst
    legal linear-loss client with the run's own schedule and noise: the oracle's Monte-Carlo upper limit of delta,
    both directions, both pairs, is <= the API's delta(eps) at the eps where the API's delta is 0.3, 0.1, 0.03."""
    p = dict(point)
    rng = np.random.default_rng(p["seed"])
    problem = fp.instance_nc(rng, N=p["N"], n=p["n"], d=2)
    config = fp.FedPDMConfig(K=p["K"], rounds=p["rounds"], batch_size=p["batch_size"], rho=p["rho"], eta0=p["eta0"],
                             eta_schedule=p["eta_schedule"], nu=0.0, Q_max=p["Q_max"], local_start=p["local_start"],
                             sensitivity_model=p["sensitivity_model"], dp_calibration=p["dp_calibration"],
                             epsilon=p["epsilon"], epsilon_total=p["epsilon_total"], delta=1e-5)
    run = fp.run_fedpdm(problem, config, rng)
    privacy = account_run(problem, config, run)
    assert privacy.model == "history_gaussian" and privacy.is_bound, privacy.status
    client = privacy.worst_client()
    rounds = np.flatnonzero(run.participation[0, :, client])
    mu = float(privacy.mu[0, client])
    eps = [e for e in (_eps_at(mu, d) for d in (0.3, 0.1, 0.03)) if e is not None]
    api = np.array([privacy.delta_at(e)[client] for e in eps])
    for neighbour in ("extremal", "symmetric"):
        oracle_client = AffineClient(etas=run.etas[rounds], Q=config.Q_max, rho=config.rho,
                                     q=config.Q_max * config.batch_size / problem.n,
                                     sigmas=run.sigma[0, rounds, client], gap=2.0 * run.G,
                                     local_start=config.local_start, neighbour=neighbour)
        pair = carryover_pair(oracle_client)
        if pair.weights_p.size == pair.weights_q.size == 1:  # q = 1: one Gaussian each side, exact (the bound can
            shift = float(np.linalg.norm(pair.means_p[0] - pair.means_q[0]))  # be attained: compare to rounding)
            real = np.array([gaussian_delta_exact(e, shift) for e in eps])
            assert np.all(real <= api * (1.0 + 1e-9) + 1e-15), (neighbour, real, api, eps)
            continue
        real = carryover_delta(pair, eps, np.random.default_rng(p["seed"] + 1), samples=20_000, alpha=1e-4)
        target(float(np.max(real.estimate / api)), label=f"real delta / API delta, {neighbour} pair")
        assert np.all(real.upper <= api), (neighbour, real.upper, api, eps)


def _eps_at(mu, level):
    if gaussian_delta_exact(0.0, mu) <= level:
        return None
    return zcdp_to_approx_dp_exact_gaussian(0.5 * mu * mu, level)
