"""Property tests of zCDP-NFL Theorem I (each Gaussian release is phi-zCDP)."""

import numpy as np
import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from theory.privacy import gaussian_sigma_for_zcdp, sensitivity_zcdp_nfl
from verify.strategies import nfl_update_settings, zcdp_budgets
from verify.tolerance import bonferroni
from verify.zcdp_nfl._instances import REPLACEMENTS, primal_updates
from verify.zcdp_nfl.lemma1_sensitivity import PAPER_SETTING, instance_from_settings
from verify.zcdp_nfl.theorem1_zcdp import MC_ALPHA, ORDERS, evaluate_renyi_analytic, evaluate_renyi_monte_carlo

PAPER = ({**PAPER_SETTING, "loss": "lad"}, 2024)
#: Monte-Carlo comparisons the Monte-Carlo test makes under the active profile (examples x orders, plus the
#: explicit example): the total failure probability MC_ALPHA is split over all of them.
_MC_COMPARISONS = (settings.default.max_examples + 1) * len(ORDERS)


@pytest.mark.claim("zcdp_nfl.theorem1")
@given(case=nfl_update_settings(), replacement=st.sampled_from(REPLACEMENTS), phi=zcdp_budgets())
@example(case=PAPER, replacement="reflect", phi=0.01)
def test_renyi_divergence_at_the_empirical_distance_is_at_most_alpha_phi(case, replacement, phi):
    """Property: with sigma^2 = Delta^2/(2 phi) (Delta the Lemma I bound), the Rényi divergence of the two
    neighbouring releases, alpha ||w_D - w_D'||^2/(2 sigma^2), is at most alpha phi for alpha in {1.5, 2, 4}."""
    settings, seed = case
    evidence = evaluate_renyi_analytic(settings, replacement, seed, phi)
    target(evidence.measured, label="D_alpha / (alpha phi)")
    assert evidence.holds, evidence


@pytest.mark.claim("zcdp_nfl.theorem1")
@given(case=nfl_update_settings(), phi=zcdp_budgets())
@example(case=PAPER, phi=0.2)
def test_monte_carlo_moment_of_the_privacy_loss_is_bounded(case, phi):
    """Property: for the tight (reflected-label) pair, the lower confidence limit of E[exp((alpha-1) Z)],
    Z the privacy loss of the release, does not exceed exp((alpha-1) alpha phi) (alpha = 1e-3 in total)."""
    settings, seed = case
    inst = instance_from_settings(settings, "reflect", seed)
    w, w_prime = primal_updates(inst)
    k = seed % inst.K
    sigma = gaussian_sigma_for_zcdp(sensitivity_zcdp_nfl(inst.c1, inst.M, inst.rho, int(inst.degree[k]), inst.eta), phi)
    evidence = evaluate_renyi_monte_carlo(w[k], w_prime[k], sigma, phi, 20_000,
                                          bonferroni(MC_ALPHA, _MC_COMPARISONS), np.random.default_rng(seed))
    target(max(e.measured / e.bound for e in evidence), label="lower limit / bound")
    assert all(e.holds for e in evidence), evidence
