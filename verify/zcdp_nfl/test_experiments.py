"""Property tests of zCDP-NFL's experiments (thesis 3.4, P2 Section 5) against its baselines (the paper's
(eps,delta)DP-NFL and the reconstructed zCDP-grad-NFL and P-ADMM-like).

Each property decides one statement with the harness (:func:`verify.harness.evaluate_statement`, exact
sign-test bounds of the median paired dB difference) on the ``ci`` instance (:data:`MINI`: K = 20, P = 8,
M = 50, T = 200, 12 replicates; 30 where a tenth of the instances reverse the ordering) for a drawn root seed
and, where the statement generalises, a drawn budget; the ``@example`` is the paper's
set-up (docs/papers/zcdp_nfl.md#experiments defaults). A property asserts that a statement is *shown* (p <= ALPHA),
never that something failed to reach significance; the LAD subgradient property checks the seed's stated mechanism
noise-free, per instance.
"""

import numpy as np
import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from reference_impl.zcdp_nfl import (
    NFLConfig,
    PrivacySchedule,
    StepSchedule,
    centralized_optimum,
    matched_gradient_step,
    run_zcdp_grad_nfl,
    run_zcdp_nfl,
    synthetic_problem,
)
from verify.budget import examples
from verify.harness import below, evaluate_statement
from verify.records import CheckContext
from verify.strategies import zcdp_nfl_experiment_seeds, zcdp_nfl_privacy_budgets
from verify.tolerance import CLARABEL_TOL
from verify.zcdp_nfl._experiment_design import DESIGN, Arm, Scale
from verify.zcdp_nfl.experiments import CURVE_BUDGET, SIGNIFICANT_DB

#: Level of each property's one statement (12 replicates: a sign test can reach 2^-12 = 2.4e-4).
ALPHA = 0.01
MINI = Scale(K=20, P=8, M=50, T=200)
#: The point at which the audit found zCDP-NFL ahead of the P-ADMM-like stand-in (weaker damping, larger step).
FAST = {"rho": 0.3, "eta0": 2.0}
#: The objectives of the seed's comparisons with (eps,delta)DP-NFL and zCDP-grad-NFL (Figs. 3.1 and 3.2).
NONSMOOTH = ("elastic_net", "lad")


def assert_shown(seed, statement, *, stages=(12, 36), point=None):
    """The statement is shown on the reduced instance: its sign-test p-value is <= ALPHA / len(stages) at one of the
    staged replicate counts (Bonferroni over the looks, as the harness stages); target() pushes toward a violation.
    A second look is needed where a large effect still leaves a few replicates on the other side at 12 (seed 3371,
    phi1 = 1e-2: median -3.6 dB, 10 of 12 in favour, p = 0.019; at 36: p = 1e-6)."""
    alpha = ALPHA / len(stages)
    for n in stages:
        outcome = evaluate_statement(CheckContext(seed=seed), DESIGN, statement, n, alpha, point=point, scale=MINI)
        if outcome.p_confirm <= alpha:
            break
    target(outcome.p_confirm, label=f"p-value of: {statement.text}")
    assert outcome.p_confirm <= alpha, (statement.text, outcome)
    return outcome


def _arm(algorithm, objective, phi1=CURVE_BUDGET):
    return Arm(label=f"{algorithm} {objective} {phi1:g}", algorithm=algorithm, objective=objective, phi1=phi1)


@pytest.mark.claim("zcdp_nfl.experiment_elastic_net_eps_delta")
@pytest.mark.claim("zcdp_nfl.experiment_elastic_net_tradeoff")
@pytest.mark.claim("zcdp_nfl.experiment_lad_eps_delta")
@settings(max_examples=examples("few"))
@given(seed=zcdp_nfl_experiment_seeds(), phi1=zcdp_nfl_privacy_budgets(), objective=st.sampled_from(NONSMOOTH),
       composition=st.sampled_from(("basic", "advanced")))
@example(seed=0, phi1=CURVE_BUDGET, objective="elastic_net", composition="basic")
@example(seed=0, phi1=CURVE_BUDGET, objective="lad", composition="advanced")
@example(seed=0, phi1=1e-2, objective="elastic_net", composition="advanced")
def test_zcdp_calibration_beats_eps_delta_at_equal_total_privacy(seed, phi1, objective, composition):
    """Property: at every budget phi^(1) in [1e-4, 1e-2] (accounted (eps, delta) matched), zCDP-NFL ends with a
    significantly lower NE than the paper's (eps,delta)DP-NFL (classical Gaussian calibration, basic or advanced
    composition; with the moments accountant and the dynamic split the two coincide, see the claims' grid), on the
    elastic net and on LAD. Hardest at the largest budget with advanced composition, where the
    noise stops dominating."""
    assert_shown(seed, below(_arm("zcdp_nfl", objective, phi1), _arm("eps_delta_dp_nfl", objective, phi1), "final"),
                 point={"composition": composition})


@pytest.mark.claim("zcdp_nfl.experiment_elastic_net_grad")
@settings(max_examples=examples("few"))
@given(seed=zcdp_nfl_experiment_seeds())
@example(seed=0)
def test_matched_subgradient_baseline_ends_below_zcdp_nfl_at_the_spec_defaults(seed):
    """Property: on the elastic net at the docs/papers/zcdp_nfl.md defaults (rho = 1, eta = 0.5/sqrt(n)), the
    zCDP-grad-NFL reconstruction, its step matched to zCDP-NFL's initial speed, ends with a significantly lower NE than
    zCDP-NFL (the paper's ordering reversed there)."""
    # 30 replicates: about a tenth of the instances go the other way, so 12 cannot show it at ALPHA for every seed
    assert_shown(seed, below(_arm("zcdp_grad_nfl", "elastic_net"), _arm("zcdp_nfl", "elastic_net"), "final"),
                 stages=(30,))


@pytest.mark.claim("zcdp_nfl.experiment_lad_grad")
@settings(max_examples=examples("some"))
@given(seed=zcdp_nfl_experiment_seeds())
@example(seed=0)
def test_the_matched_subgradient_step_stalls_on_lad_where_zcdp_nfl_converges(seed):
    """Property: the seed's mechanism, noise-free: on any LAD instance of the ci size at rho = 0.3, eta0 = 2, the
    subgradient step matched to zCDP-NFL's initial speed leaves zCDP-grad-NFL more than SIGNIFICANT_DB above
    zCDP-NFL after 200 iterations ('the learning rate required ... does not allow it to reach high accuracy')."""
    problem = synthetic_problem(np.random.default_rng(seed), K=MINI.K, P=MINI.P, M=MINI.M, objective="lad")
    w_c = centralized_optimum(problem, tol=CLARABEL_TOL).w_c
    config = NFLConfig(rho=FAST["rho"], step=StepSchedule(kind="inv_sqrt", eta0=FAST["eta0"]))
    mu = matched_gradient_step(problem, config, w_c, at=MINI.early)
    nfl = run_zcdp_nfl(problem, config, MINI.T, np.random.default_rng(0), w_c=w_c).ne[0, -1]
    grad = run_zcdp_grad_nfl(problem, mu, PrivacySchedule(kind="none"), MINI.T, np.random.default_rng(0),
                             w_c=w_c).ne[0, -1]
    gap_db = 10 * np.log10(grad / nfl)
    target(-gap_db, label="minus the dB gap grad - NFL")
    assert gap_db > SIGNIFICANT_DB, (mu, nfl, grad)


@pytest.mark.claim("zcdp_nfl.experiment_ridge_p_admm")
@pytest.mark.claim("zcdp_nfl.experiment_ridge_tradeoff")
@settings(max_examples=examples("few"))
@given(seed=zcdp_nfl_experiment_seeds(), phi1=zcdp_nfl_privacy_budgets())
@example(seed=0, phi1=CURVE_BUDGET)
@example(seed=3371, phi1=1e-2)  # needs the second look (10 of 12 in favour at the first)
def test_time_varying_step_beats_the_constant_step_with_weak_damping(seed, phi1):
    """Property: at rho = 0.3, eta0 = 2, zCDP-NFL (eta0/sqrt(n)) ends ridge with a significantly lower NE than the
    P-ADMM-like reconstruction (constant eta0, the same S2 noise) at every budget: the seed's attribution to the
    time-varying step holds there."""
    assert_shown(seed, below(_arm("zcdp_nfl", "ridge", phi1), _arm("p_admm", "ridge", phi1), "final"), point=FAST)
