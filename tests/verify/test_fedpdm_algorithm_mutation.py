"""Mutation tests of the FedPDM-DP Algorithm 1 checks: a slightly wrong algorithm makes them refute."""

import dataclasses

import numpy as np
import pytest

from reference_impl.fedpdm import fedpdm_round
from verify.fedpdm.algorithm import check_algorithm_properties, check_noiseless_stationarity
from verify.records import CheckContext, Verdict

CI = CheckContext(profile="ci", seed=0)


def _dual_with_new_x0(problem, config, state, t, sampled, rng, **kw):
    """Dual step (10c) with the NEW x_0^{t+1} instead of x_0^t (the order the seed forbids)."""
    new, rec = fedpdm_round(problem, config, state, t, sampled, rng, **kw)
    rows = np.arange(rec.clients.shape[0])[:, None]
    lam = new.lam.copy()
    lam[rows, rec.clients] = rec.lam_prev + config.rho * (new.x0[:, None, :] - new.x[rows, rec.clients])
    return dataclasses.replace(new, lam=lam), rec


def _noise_too_small(problem, config, state, t, sampled, rng, **kw):
    """Noise drawn with 0.95 sigma while sigma is reported."""
    new, rec = fedpdm_round(problem, config, state, t, sampled, rng, **kw)
    return new, dataclasses.replace(rec, y_tilde=rec.y + 0.95 * (rec.y_tilde - rec.y))


def _wrong_threshold(problem, config, state, t, sampled, rng, **kw):
    """Prox at gamma/(N rho) (Appendix A step (a) without its 1/N, docs/papers/fedpdm.md#erratum-e12)."""
    return fedpdm_round(problem, dataclasses.replace(config, prox_threshold_factor=1.0 / problem.N), state, t, sampled,
                        rng, **kw)


def _touches_unsampled(problem, config, state, t, sampled, rng, **kw):
    new, rec = fedpdm_round(problem, config, state, t, sampled, rng, **kw)
    lam = new.lam.copy()
    lam[~sampled] *= 1.0 + 1e-12
    return dataclasses.replace(new, lam=lam), rec


@pytest.mark.parametrize("mutant", [_dual_with_new_x0, _noise_too_small, _wrong_threshold, _touches_unsampled])
def test_property_check_refutes_a_wrong_algorithm(mutant):
    result = check_algorithm_properties(CI, round_fn=mutant)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert result.counterexample["property"]


def test_noiseless_check_refutes_the_wrong_threshold():
    result = check_noiseless_stationarity(CI, round_fn=_wrong_threshold)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert result.counterexample["F_gap"] > 1e-6
