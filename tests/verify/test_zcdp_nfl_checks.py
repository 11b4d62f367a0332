"""The zCDP-NFL checks can fail: each refutes a slightly wrong closed form (mutation tests).

For the two refuted claims the converse is shown: handed the corrected closed form, their checks confirm,
so the refutation is due to the paper's statement and not to the check.
"""

import math

import numpy as np
import pytest

from reference_impl.zcdp_nfl import zcdp_nfl_primal_update
from theory.privacy import gaussian_sigma_for_zcdp, sensitivity_zcdp_nfl
from verify.records import CheckContext, Verdict
from verify.zcdp_nfl._instances import primal_updates
from verify.zcdp_nfl.corollary_total import check_corollary, check_sum_range, corollary_total
from verify.zcdp_nfl.lemma1_sensitivity import PAPER_SETTING, check_lemma1, instance_from_settings
from verify.zcdp_nfl.theorem1_zcdp import check_theorem1, evaluate_renyi_monte_carlo
from verify.zcdp_nfl.tradeoff_noise import (
    check_noise_term,
    check_printed_noise_term,
    noise_term_24_corrected,
    noise_term_24_printed,
)


def _sensitivity_1e9_low(c1, M, rho, degree, eta):
    return sensitivity_zcdp_nfl(c1, M, rho, degree, eta) * (1.0 - 1e-9)


def _sensitivity_without_factor_2(c1, M, rho, degree, eta):
    """A plausible slip: rho d instead of 2 rho d in the denominator is *larger*; c1 instead of 2 c1 is smaller."""
    return sensitivity_zcdp_nfl(c1, M, rho, degree, eta) / 2.0


def _update_printed_a1(w_tilde, neighbour_sum, gamma, X, y, loss_subgradient, rho, eta, degree, *,
                       regularizer_subgradient=None):
    """P2 (A.1) as printed: +(rho/2) sum(w~_k - w~_l) + gamma_k/2 (erratum E6 (docs/papers/zcdp_nfl.md#erratum-e6))."""
    g = loss_subgradient(X, y, w_tilde).mean(axis=-2)
    if regularizer_subgradient is not None:
        g = g + regularizer_subgradient(w_tilde)
    d = np.asarray(degree, dtype=float)[:, None]
    return (w_tilde / eta + 0.5 * rho * (d * w_tilde - neighbour_sum) + gamma / 2.0 - g) / (1.0 / eta + 2.0 * rho * d)


def _update_1e9_off(*args, **kwargs):
    return zcdp_nfl_primal_update(*args, **kwargs) * (1.0 + 1e-9)


def _sigma_1e6_low(sensitivity, phi):
    return gaussian_sigma_for_zcdp(sensitivity, phi) * (1.0 - 1e-6)


def _sigma_for_phi_over_2(sensitivity, phi):
    """sigma^2 = Delta^2/(4 phi): a release that is 2 phi-zCDP."""
    return sensitivity / (2.0 * math.sqrt(phi))


def _total_1e10_high(phi1, tau, T):
    return corollary_total(phi1, tau, T) * (1.0 + 1e-10)


def _total_printed_range(phi1, tau, T):
    """The T - 1 term sum of P2 App. C's range, in closed form."""
    return 0.0 if T == 1 else corollary_total(phi1, tau, T - 1)


def _noise_term_2_pow_minus_40(deltas, phi, tau):
    return noise_term_24_corrected(deltas, phi, tau) * (1 + 2.0**-40)


@pytest.mark.parametrize(
    ("check", "kwargs"),
    [(check_lemma1, {"sensitivity_fn": _sensitivity_1e9_low}),
     (check_lemma1, {"sensitivity_fn": _sensitivity_without_factor_2}),
     (check_lemma1, {"update_fn": _update_printed_a1}),
     (check_lemma1, {"update_fn": _update_1e9_off}),
     (check_theorem1, {"sigma_fn": _sigma_1e6_low}),
     (check_theorem1, {"sigma_fn": _sigma_for_phi_over_2}),
     (check_corollary, {"total_fn": _total_1e10_high}),
     (check_corollary, {"total_fn": _total_printed_range}),
     (check_noise_term, {"equal_budget_fn": noise_term_24_printed}),
     (check_noise_term, {"equal_budget_fn": _noise_term_2_pow_minus_40})],
    ids=["lemma1-bound-1e-9-low", "lemma1-bound-c1-not-2c1", "lemma1-update-printed-A1", "lemma1-update-1e-9",
         "theorem1-sigma-1e-6-low", "theorem1-sigma2-half", "corollary-total-1e-10", "corollary-printed-range",
         "noise-term-printed-1-over-K", "noise-term-2^-40"],
)
def test_checks_refute_a_slightly_wrong_closed_form(check, kwargs):
    result = check(CheckContext(), **kwargs)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert result.counterexample and result.measured > result.bound


@pytest.mark.parametrize(
    ("check", "kwargs"),
    [(check_sum_range, {"total_fn": _total_printed_range}),
     (check_printed_noise_term, {"equal_budget_fn": noise_term_24_corrected})],
    ids=["sum-range-with-matching-closed-form", "noise-term-corrected"],
)
def test_refuting_checks_confirm_the_corrected_form(check, kwargs):
    result = check(CheckContext(), **kwargs)
    assert result.verdict is Verdict.CONFIRMED, result.summary


def test_monte_carlo_part_alone_detects_too_little_noise():
    """The Monte-Carlo comparison, without the analytic one, refutes sigma^2 = Delta^2/(4 phi) on a tight pair."""
    inst = instance_from_settings({**PAPER_SETTING, "loss": "lad"}, "reflect", 2024)
    w, w_prime = primal_updates(inst)
    phi = 0.1
    delta = sensitivity_zcdp_nfl(inst.c1, inst.M, inst.rho, int(inst.degree[0]), inst.eta)
    correct = evaluate_renyi_monte_carlo(w[0], w_prime[0], gaussian_sigma_for_zcdp(delta, phi), phi, 20_000, 1e-4,
                                         np.random.default_rng(1))
    wrong = evaluate_renyi_monte_carlo(w[0], w_prime[0], _sigma_for_phi_over_2(delta, phi), phi, 20_000, 1e-4,
                                       np.random.default_rng(1))
    assert all(e.holds for e in correct)
    assert not any(e.holds for e in wrong)


@pytest.mark.parametrize("check", [check_lemma1, check_theorem1, check_corollary])
def test_same_seed_same_numbers_different_seed_different_points(check):
    a, b, c = check(CheckContext(seed=5)), check(CheckContext(seed=5)), check(CheckContext(seed=6))
    assert a.measured == b.measured and a.details == b.details
    assert a.details != c.details
