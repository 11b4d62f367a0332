"""Mutation tests of the FedPDM-DP carry-over claims: each check fails when the quantity it guards is broken."""

import math

import numpy as np

from reference_impl import fedpdm as fp
from reference_impl.fedpdm.accounting import account_run
from reference_impl.fedpdm.carryover import AffineClient, carryover_delta, carryover_pair
from theory.privacy.carryover import gaussian_composition_mu
from theory.privacy.sensitivity import sensitivity_fedpdm
from verify.fedpdm._carryover import evaluate_bound_model, evaluate_paper_accounting
from verify.fedpdm.theorem2_carryover import MINIMAL_COUNTEREXAMPLE


def _no_history_factor(etas, Q, rho, local_start, sigmas, G):
    """The mutant: each upload's sensitivity taken as (19) alone (kappa = 1), as if the state were reset."""
    s = [sensitivity_fedpdm(float(e), rho, int(Q), G) for e in etas]
    return gaussian_composition_mu(s, sigmas)


def test_bound_check_catches_a_model_without_the_history_factor():
    evidence = evaluate_bound_model({**MINIMAL_COUNTEREXAMPLE, "seed": 1}, alpha=1e-3, samples=20_000,
                                    mu_fn=_no_history_factor)
    assert not evidence.holds and evidence.measured > 1.0
    assert evaluate_bound_model({**MINIMAL_COUNTEREXAMPLE, "seed": 1}, alpha=1e-3, samples=20_000).holds


def test_the_refutation_needs_the_kept_state(monkeypatch):
    """The same minimal pair with the client state reset before every participation (the accountant's own model)
    satisfies the accountant: the violation comes from the carried state, not from the oracle's arithmetic."""
    from reference_impl.fedpdm import carryover

    assert not evaluate_paper_accounting(MINIMAL_COUNTEREXAMPLE).holds
    original = carryover.response_matrix
    monkeypatch.setattr(carryover, "response_matrix", lambda client: np.diag(np.diag(original(client))))
    assert evaluate_paper_accounting(MINIMAL_COUNTEREXAMPLE).holds


def test_default_totals_property_would_catch_the_papers_model():
    """The property test of the API's default totals fails for the paper's accountant: at issue 27's case (one
    client, eta rho = 0.05, q = 0.25, 8 rounds, per-round eps 6) the oracle's lower limit of the real delta exceeds
    the paper model's delta."""
    problem = fp.FedPDMProblem(features=np.ones((1, 4, 1)), labels=np.zeros((1, 4), dtype=np.int64), n_classes=1,
                               beta=0.0, gamma=0.0)
    config = fp.FedPDMConfig(K=1, rounds=8, batch_size=1, rho=1.0, eta0=0.05, eta_schedule="constant", nu=0.0, Q_max=1,
                             epsilon=6.0, G=1.0)
    run = fp.run_fedpdm(problem, config, np.random.default_rng(0))
    paper = account_run(problem, config, run, model="paper")
    client = AffineClient(etas=run.etas, Q=1, rho=1.0, q=0.25, sigmas=run.sigma[0, :, 0], gap=2.0)
    eps = 2.0 * paper.epsilon_max()
    real = carryover_delta(carryover_pair(client), [eps], np.random.default_rng(1), samples=20_000)
    assert real.lower[0] > paper.delta_at(eps)[0] and math.isfinite(paper.epsilon_max())
    assert real.upper[0] <= account_run(problem, config, run).delta_at(eps)[0]
