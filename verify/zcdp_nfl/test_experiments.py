"""Property tests of zCDP-NFL's experiments (thesis 3.4, P2 Section 5) against the reconstructed baselines.

Each property decides one statement with the harness (:func:`verify.comparisons.evaluate_statement`, exact
sign-test bounds of the median paired dB difference) on the ``ci`` instance (:data:`MINI`: K = 20, P = 8,
M = 50, T = 200, 12 replicates) for a drawn root seed and, where the statement generalises, a drawn budget; the
``@example`` is the paper's set-up (spec 6 defaults). A property asserts that a statement is *shown*
(p <= ALPHA), never that something failed to reach significance.
"""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.comparisons import below, evaluate_statement
from verify.records import CheckContext
from verify.strategies import zcdp_nfl_experiment_seeds, zcdp_nfl_privacy_budgets
from verify.zcdp_nfl._experiment_design import DESIGN, Arm, Scale
from verify.zcdp_nfl.experiments import CURVE_BUDGET

#: Level of each property's one statement (12 replicates: a sign test can reach 2^-12 = 2.4e-4).
ALPHA = 0.01
MINI = Scale(K=20, P=8, M=50, T=200)
#: The point at which the audit found zCDP-NFL ahead of the P-ADMM-like stand-in (weaker damping, larger step).
FAST = {"rho": 0.3, "eta0": 2.0}
#: The objectives of the seed's comparisons with (eps,delta)DP-NFL and zCDP-grad-NFL (Figs. 3.1 and 3.2).
NONSMOOTH = ("elastic_net", "lad")


def assert_shown(seed, statement, *, n=12, point=None):
    """The statement's p-value on the reduced instance is <= ALPHA; target() pushes toward a violation."""
    outcome = evaluate_statement(CheckContext(seed=seed), DESIGN, statement, n, ALPHA, point=point, scale=MINI)
    target(outcome.p_confirm, label=f"p-value of: {statement.text}")
    assert outcome.p_confirm <= ALPHA, (statement.text, outcome)
    return outcome


def _arm(algorithm, objective, phi1=CURVE_BUDGET):
    return Arm(label=f"{algorithm} {objective} {phi1:g}", algorithm=algorithm, objective=objective, phi1=phi1)


@pytest.mark.claim("zcdp_nfl.experiment_elastic_net_eps_delta")
@pytest.mark.claim("zcdp_nfl.experiment_elastic_net_tradeoff")
@pytest.mark.claim("zcdp_nfl.experiment_lad_eps_delta")
@settings(max_examples=examples("few"))
@given(seed=zcdp_nfl_experiment_seeds(), phi1=zcdp_nfl_privacy_budgets(), objective=st.sampled_from(NONSMOOTH))
@example(seed=0, phi1=CURVE_BUDGET, objective="elastic_net")
@example(seed=0, phi1=CURVE_BUDGET, objective="lad")
def test_zcdp_calibration_beats_eps_delta_at_equal_total_privacy(seed, phi1, objective):
    """Property: at every budget phi^(1) in [1e-4, 1e-2] (accounted (eps, delta) matched), zCDP-NFL ends with a
    significantly lower NE than the (eps,delta)DP-NFL reconstruction (classical Gaussian calibration, basic
    composition), on the elastic net and on LAD."""
    assert_shown(seed, below(_arm("zcdp_nfl", objective, phi1), _arm("eps_delta_dp_nfl", objective, phi1), "final"))


@pytest.mark.claim("zcdp_nfl.experiment_elastic_net_grad")
@pytest.mark.claim("zcdp_nfl.experiment_lad_grad")
@settings(max_examples=examples("few"))
@given(seed=zcdp_nfl_experiment_seeds(), objective=st.sampled_from(NONSMOOTH))
@example(seed=0, objective="elastic_net")
@example(seed=0, objective="lad")
def test_matched_subgradient_baseline_ends_below_zcdp_nfl_at_the_spec_defaults(seed, objective):
    """Property: at the spec defaults (rho = 1, eta = 0.5/sqrt(n)) the zCDP-grad-NFL reconstruction, its step
    matched to zCDP-NFL's initial speed, ends with a significantly lower NE than zCDP-NFL (the paper's ordering
    reversed there)."""
    assert_shown(seed, below(_arm("zcdp_grad_nfl", objective), _arm("zcdp_nfl", objective), "final"))


@pytest.mark.claim("zcdp_nfl.experiment_ridge_p_admm")
@pytest.mark.claim("zcdp_nfl.experiment_ridge_tradeoff")
@settings(max_examples=examples("few"))
@given(seed=zcdp_nfl_experiment_seeds(), phi1=zcdp_nfl_privacy_budgets())
@example(seed=0, phi1=CURVE_BUDGET)
def test_time_varying_step_beats_the_constant_step_with_weak_damping(seed, phi1):
    """Property: at rho = 0.3, eta0 = 2, zCDP-NFL (eta0/sqrt(n)) ends ridge with a significantly lower NE than the
    P-ADMM-like reconstruction (constant eta0, the same S2 noise) at every budget: the seed's attribution to the
    time-varying step holds there."""
    assert_shown(seed, below(_arm("zcdp_nfl", "ridge", phi1), _arm("p_admm", "ridge", phi1), "final"), point=FAST)
