"""The PGFL experiment checks discriminate (mutation tests), and their simulation machinery is sound."""

import dataclasses

import numpy as np
import pytest

from reference_impl.pgfl import PGFLConfig, nmsd_observer, run_pgfl, synthetic_regression
from verify.executor import ProcessExecutor
from verify.pgfl import experiments as ex
from verify.records import CheckContext, Verdict

CI = CheckContext(profile="ci", seed=0)
TINY = ex.Scale(servers=2, clients_per_server=6, d=4, scheduled=2, iterations=8, sweep_iteration=6, early_iteration=2,
                limit_iterations=8, replicates=3, heavy_replicates=4, C=0.1)
NOISE_FREE = {"scheduling": False, "phi0": None}


# ------------------------------------------------------------------------------------------------
# Mutations: a slightly wrong arm (no effect, wrong architecture, wrong predicted direction) is refuted.


@pytest.mark.parametrize(("check", "kwargs"), [
    (ex.check_r1_tau, {"tau": 0.0}),
    (ex.check_r1_gfl_competitive, {"gamma": ex.LOW_SIMILARITY_GAMMA}),
    (ex.check_r1_clusterfl, {"architecture": "pgfl"}),
    (ex.check_r2_scheduling, {"scheduling": False}),
    (ex.check_r2_gfl_slower, {"scheduling": False}),
    (ex.check_r3_privacy_slows, {"phi0": None}),
    (ex.check_r4_tau_sweep, {"taus": (0.0,)}),
    (ex.check_r4_large_tau_flat, {"reference": 0.0, "large": ex.PAPER_TAU}),
    (ex.check_r5_fixed_tau, {"gamma": 0.0}),
    (ex.check_r5_decaying_tau, {"tau_decay": 1.0}),
    (ex.check_r6_phi0, {"predicted": "increasing"}),
    (ex.check_r7_zeta, {"predicted": "decreasing"}),
], ids=["r1-no-tau", "r1-gfl-dissimilar", "r1-clusterfl-is-pgfl", "r2-no-scheduling", "r2-gfl-no-scheduling",
        "r3-no-noise", "r4-tau-zero", "r4-flat-tau-zero", "r5-identical-clusters", "r5-no-decay", "r6-direction",
        "r7-direction"])
def test_checks_refute_a_wrong_arm(check, kwargs):
    """Each confirmed claim's check refutes a mutated arm, and its counterexample reproduces."""
    result = check(CI, **kwargs)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert result.counterexample and result.monte_carlo.n == ex.SCALES["ci"].replicates
    again = ex.evaluate_comparison(result.counterexample)
    assert not again.holds and again.measured == result.measured


def test_a_counterexample_reproduces_without_the_cache():
    """reproduce= re-simulates the recorded comparison from its seed: the same numbers, not a cached copy."""
    result = ex.check_r1_gfl(CI)
    assert result.verdict is Verdict.REFUTED
    again = ex.evaluate_comparison(result.counterexample, use_cache=False)
    assert not again.holds and again.measured == result.measured and again.parameters == result.counterexample


@pytest.mark.parametrize(("check", "kwargs"), [
    (ex.check_r1_gfl, {"gamma": ex.LOW_SIMILARITY_GAMMA}),
    (ex.check_r3_privacy_cost, {"phi0": None}),
    (ex.check_r4_large_tau, {"reference": 0.0, "large": ex.PAPER_TAU, "setting": {**NOISE_FREE, "gamma": 0.9}}),
], ids=["r1-gfl-dissimilar", "r3-no-noise", "r4-noise-free-dissimilar"])
def test_refuted_checks_can_confirm(check, kwargs):
    """The refuted claims' checks confirm where the ordering does hold (so the refutations are not built in)."""
    assert check(CI, **kwargs).verdict is Verdict.CONFIRMED


def test_identical_arms_never_confirm_an_ordering():
    """Equal arms have zero paired differences: UCL = 0 is not < 0, and LCL = 0 <= 0 for 'not_greater'."""
    arm = ex.Arm(label="a", **NOISE_FREE)
    params = ex.comparison_parameters("toy.c", ex.Comparison(a=arm, b=arm.with_label("b"), at="horizon"), TINY, 1, 0.05)
    less = ex.evaluate_comparison(params)
    assert not less.holds and less.measured == 0.0
    assert ex.evaluate_comparison({**params, "kind": "not_greater"}).holds


# ------------------------------------------------------------------------------------------------
# Simulation machinery.


def test_client_nmsd_observer_matches_the_reference_metric():
    problem = synthetic_regression(np.random.default_rng(3), servers=3, clients_per_server=4, d=5)
    config = PGFLConfig(rho=0.25 * problem.max_curvature, taus=(0.4,))
    reference = run_pgfl(problem, config, 6, np.random.default_rng(0), runs=2, observe=nmsd_observer(problem))
    ours = run_pgfl(problem, config, 6, np.random.default_rng(0), runs=2,
                    observe=ex.client_nmsd_observer(problem.true_models[problem.client_cluster]))
    np.testing.assert_array_equal(reference.observations, ours.observations)


def test_architectures_keep_clients_and_data():
    problem = synthetic_regression(np.random.default_rng(4), servers=3, clients_per_server=4, d=5)
    gfl = ex.as_single_cluster(problem)
    assert gfl.n_clusters == 1 and not gfl.client_cluster.any() and gfl.true_models is None
    cfl = ex.with_server_graph(problem, np.zeros((3, 3), dtype=bool))
    assert not cfl.adjacency.any()
    for other in (gfl, cfl):
        assert all(np.array_equal(a, b) for a, b in zip(other.X + other.y, problem.X + problem.y))
        np.testing.assert_array_equal(other.client_server, problem.client_server)
    with pytest.raises(ValueError, match="adjacency must have shape"):
        ex.with_server_graph(problem, np.zeros((2, 2), dtype=bool))


def test_a_prefix_of_a_longer_run_is_the_shorter_run():
    """The cache serves the first n iterations of a longer run: the draws per iteration do not depend on N."""
    arm = ex.Arm(label="a", tau=0.4, scheduling=True, phi0=1e-3, zeta=0.99)
    short = ex.nmsd_curves(CI, [arm], 5, scale=TINY, use_cache=False)["a"]
    long = ex.nmsd_curves(CI, [arm], 8, scale=TINY, use_cache=False)["a"]
    np.testing.assert_array_equal(short[0], long[0][:, :5])


def test_process_pool_gives_the_same_curves():
    arms = [ex.Arm(label="a", tau=0.4, scheduling=True, phi0=1e-3), ex.Arm(label="g", architecture="gfl")]
    serial = ex.nmsd_curves(CI, arms, 6, scale=TINY, use_cache=False)
    with ProcessExecutor(2) as pool:
        pooled = ex.nmsd_curves(dataclasses.replace(CI, executor=pool), arms, 6, scale=TINY, use_cache=False)
    for label in ("a", "g"):
        np.testing.assert_array_equal(serial[label][0], pooled[label][0])


def test_scheduled_runs_reach_the_full_participation_limit():
    """With cached aggregation the full-participation fixed point is a fixed point of every scheduled iteration:
    the R-2 gap at the horizon is slower convergence (the reason of pgfl.experiment_r2_scheduling)."""
    scale = dataclasses.replace(TINY, iterations=3000, limit_iterations=3000, scheduled=1, replicates=2,
                                heavy_replicates=2)
    full, sched = ex.Arm(label="full", **NOISE_FREE), ex.Arm(label="sched", scheduling=True)
    curves = ex.nmsd_curves(CI, [full, sched], 3000, scale=scale, use_cache=False)
    early = np.abs(ex._db(curves["sched"][0][:, 9]) - ex._db(curves["full"][0][:, 9]))
    late = np.abs(ex._db(curves["sched"][0][:, -1]) - ex._db(curves["full"][0][:, -1]))
    assert np.all(early > 0.1) and np.all(late < 1e-6), (early, late)


def test_privacy_totals_follow_theorem_iv():
    """Full participation: every client's total is phi0 (zeta^-N - 1)/(1 - zeta); scheduled totals are smaller."""
    full = ex.Arm(label="full", phi0=1e-3, zeta=0.99)
    sched = full.with_label("sched")
    sched = dataclasses.replace(sched, scheduling=True)
    curves = ex.nmsd_curves(CI, [full, sched], 8, scale=TINY, use_cache=False)
    expected = 1e-3 * (0.99**-8 - 1) / (1 - 0.99)
    np.testing.assert_allclose(curves["full"][1][8], expected, rtol=1e-12)
    assert np.all(curves["sched"][1][8] < expected)


@pytest.mark.parametrize(("build", "match"), [
    (lambda: dataclasses.replace(TINY, scheduled=7), "scheduled must be in"),
    (lambda: dataclasses.replace(TINY, sweep_iteration=9), "sweep_iteration must be in"),
    (lambda: dataclasses.replace(TINY, replicates=1), "replicates must be an integer >= 2"),
    (lambda: dataclasses.replace(TINY, heavy_replicates=2), "heavy_replicates must be an integer >= 3"),
    (lambda: dataclasses.replace(TINY, C=0.0), "C must be a finite real"),
    (lambda: ex.Arm(label="x", architecture="fedavg"), "architecture must be one of"),
    (lambda: ex.Arm(label="x", tau=1.5), "tau must be in"),
    (lambda: ex.Arm(label="x", gamma=1.0), "gamma must be in"),
    (lambda: ex.Arm(label="x", phi0=0.0), "phi0 must be None or"),
    (lambda: ex.Comparison(a=ex.Arm(label="x"), b=ex.Arm(label="x"), at="horizon"), "distinct labels"),
    (lambda: ex.Comparison(a=ex.Arm(label="x"), b=ex.Arm(label="y"), at="end"), "at must be one of"),
    (lambda: ex.Comparison(a=ex.Arm(label="x"), b=ex.Arm(label="y"), at="early", kind="more"), "kind must be"),
    (lambda: ex.check_r6_phi0(CI, predicted="flat"), "predicted must be"),
    (lambda: ex.client_nmsd_observer(np.zeros((2, 3))), "non-zero"),
])
def test_bad_input_names_the_parameter(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_arms_normalise_settings_that_cannot_matter():
    assert ex.Arm(label="g", architecture="gfl", tau=0.4).key == ex.Arm(label="h", architecture="gfl", tau=0.0).key
    assert ex.Arm(label="a", zeta=0.5).key == ex.Arm(label="b", zeta=0.9).key  # no noise: zeta is irrelevant
    assert ex.Arm(label="a", phi0=1e-3, zeta=0.5).key != ex.Arm(label="b", phi0=1e-3, zeta=0.9).key
