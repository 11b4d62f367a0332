"""The Theorem II checks discriminate: a correct bound passes the same measurements, a wrong identity fails."""

import numpy as np

from reference_impl.pgfl import PGFLConfig, run_pgfl
from verify.pgfl._coupled_runs import gap_sequence
from verify.pgfl._instances import anisotropic_instance, equal_optima_instance
from verify.pgfl.theorem2_limit import evaluate_steady_state


def test_equal_curvatures_give_no_gap():
    """Control: equal optima AND equal curvatures make both clusters identical, so D_n = 0 = B_n."""
    gaps = gap_sequence(equal_optima_instance(2.0, 2.0, 1.0), PGFLConfig(rho=1.0, taus=(0.4,)), 30, seed=0)
    assert np.max(gaps) <= (8 * np.finfo(float).eps) ** 2  # (1 - tau) x + tau x rounds, nothing more


def test_steady_state_evidence_records_a_contracting_iteration():
    evidence = evaluate_steady_state(anisotropic_instance().max_curvature, 0.4, iterations=2)
    assert evidence.parameters["spectral_radius"] < 1.0 and evidence.parameters["fixed_point_residual"] < 1e-12


def test_gap_sequence_uses_common_random_numbers():
    """Scheduled, noisy runs with tau = 0 on both sides coincide exactly (same draws)."""
    p = anisotropic_instance()
    cfg = PGFLConfig(rho=1.0, taus=(0.0,), algorithm="alg2", phi0=0.1, C=0.1, scheduled=1)
    assert np.max(gap_sequence(p, cfg, 5, seed=3, runs=2)) == 0.0
    a = run_pgfl(p, cfg, 3, np.random.default_rng(1)).state.w_servers
    b = run_pgfl(p, cfg, 3, np.random.default_rng(1)).state.w_servers
    assert np.array_equal(a, b)


# --- the tau x rho sweep with privacy noise -----------------------------------------------------------------

import dataclasses  # noqa: E402

import pytest  # noqa: E402

from verify.executor import SerialExecutor  # noqa: E402
from verify.pgfl._noise_sweep import (  # noqa: E402
    SWEEP_COLUMNS,
    SWEEP_SCALES,
    SweepScale,
    noise_sweep,
    recorded_iterations,
    smallest_rho_from_which_bound_holds,
    sweep_horizon,
)
from verify.pgfl.theorem2 import evaluate_noise_decomposition  # noqa: E402

TINY = SweepScale(servers=2, clients_per_server=3, d=3, taus=(0.0, 0.4), rho_grid=(0.5, 5.0), base_iterations=40,
                  min_runs=3, max_runs=3, dense_iterations=15)


@pytest.fixture(scope="module")
def tiny_sweep():
    return noise_sweep(TINY, instance_seed=11, seed=5)


def test_sweep_table_has_the_documented_columns(tiny_sweep):
    table = tiny_sweep["table"]
    assert len(table) == len(TINY.taus) * len(TINY.rho_grid)
    for row in table:
        assert tuple(row) == SWEEP_COLUMNS
        assert row["noiseless_status"] in ("holds", "violated", "inconclusive")
        assert row["noisy_status"] in ("holds", "violated", "inconclusive")
        assert row["runs"] == 3 and 1 <= row["noisy_argmax_n"] <= row["iterations"]
        assert 0.0 <= row["noisy_fraction_violated_lcl"] <= row["noisy_fraction_violated"] <= 1.0
    assert [r["tau"] for r in tiny_sweep["smallest_rho"]] == list(TINY.taus)


def test_common_random_numbers_make_the_tau0_gap_exactly_zero(tiny_sweep):
    """tau = 0 in both runs, same seed: every recorded gap is exactly 0 (noise-free and noisy), so the cell holds."""
    for row in (r for r in tiny_sweep["table"] if r["tau"] == 0.0):
        assert row["noiseless_max_gap"] == 0.0 and row["noisy_max_gap"] == 0.0
        assert row["noisy_max_ratio_plain"] == 0.0 and row["noisy_max_ratio_ucl"] == 0.0
        assert row["noiseless_status"] == row["noisy_status"] == "holds"
    assert tiny_sweep["smallest_rho"][0] == {"tau": 0.0, "noiseless": 0.5, "privacy_noise": 0.5}


def test_noisy_limits_bracket_the_mean_and_respect_jensen(tiny_sweep):
    """E||g||^2 >= ||E g||^2 = ||g(xi=0)||^2: the lower limit is never below the noise-free ratio."""
    for row in tiny_sweep["table"]:
        assert row["noiseless_max_ratio"] <= row["noisy_max_ratio_lcl"] <= row["noisy_max_ratio"]
        assert row["noisy_max_ratio"] <= row["noisy_max_ratio_ucl"]
        if row["noiseless_status"] == "violated":
            assert row["noisy_status"] == "violated"


def test_sweep_numbers_do_not_depend_on_the_executor(tiny_sweep):
    again = noise_sweep(TINY, instance_seed=11, seed=5, executor=SerialExecutor())
    assert again["table"] == tiny_sweep["table"]


def test_ci_sweep_scale_is_small_and_thorough_is_the_papers_size():
    assert SWEEP_SCALES["ci"].servers * SWEEP_SCALES["ci"].clients_per_server <= 20
    thorough = SWEEP_SCALES["thorough"]
    assert (thorough.servers, thorough.clients_per_server, thorough.d) == (10, 15, 60)
    # docs/papers/pgfl.md#erratum-r-a's range of penalties at the paper's size: 0.1 to 25 L_max
    assert thorough.taus == (0.1, 0.4, 0.8) and thorough.rho_grid == (0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0)


def test_recorded_iterations_are_dense_then_spaced_and_end_at_the_horizon():
    assert np.array_equal(recorded_iterations(30, 15), np.arange(1, 31))
    rec = recorded_iterations(10_000, 100)
    assert np.array_equal(rec[:100], np.arange(1, 101)) and rec[-1] == 10_000
    assert np.all(np.diff(rec) > 0) and rec.size <= 201
    with pytest.raises(ValueError, match="iterations"):
        recorded_iterations(0, 10)


def test_sweep_horizon_formula_and_validation():
    assert sweep_horizon(10.0, 0.5, 5) == 20 and sweep_horizon(1.0, 0.5, 300) == 300
    assert sweep_horizon(10.0, 0.5, 5, factor=0.5) == 10
    for kwargs, name in ((dict(rho=-1.0, mu_min=1.0, base=1), "rho"), (dict(rho=1.0, mu_min=0.0, base=1), "mu_min"),
                         (dict(rho=1.0, mu_min=1.0, base=0), "base")):
        with pytest.raises(ValueError, match=name):
            sweep_horizon(**kwargs)


def test_smallest_rho_needs_every_larger_penalty_to_hold():
    grid = (0.1, 1.0, 10.0)
    assert smallest_rho_from_which_bound_holds(grid, ["violated", "holds", "holds"]) == 1.0
    assert smallest_rho_from_which_bound_holds(grid, ["holds", "violated", "holds"]) == 10.0
    assert smallest_rho_from_which_bound_holds(grid, ["holds", "holds", "inconclusive"]) == "none up to 10 L_max"
    with pytest.raises(ValueError, match="statuses"):
        smallest_rho_from_which_bound_holds(grid, ["holds", "maybe", "holds"])
    with pytest.raises(ValueError, match="equal length"):
        smallest_rho_from_which_bound_holds(grid, ["holds"])


@pytest.mark.parametrize("field, value", [("taus", (1.5,)), ("rho_grid", (1.0, 0.5)), ("min_runs", 1),
                                          ("max_runs", 2), ("horizon_factor", 0.0), ("clusters", 1)])
def test_sweep_scale_rejects_bad_fields(field, value):
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(TINY, **{field: value})


def test_noise_sweep_rejects_incomplete_privacy_parameters():
    with pytest.raises(ValueError, match="privacy"):
        noise_sweep(TINY, 1, 1, privacy={"phi0": 1e-3, "zeta": 0.99})


def test_noise_decomposition_check_discriminates(monkeypatch):
    """Mutation: other draws for the noise-only runs break the identity by far more than rounding."""
    import verify.pgfl.theorem2 as t2

    params = {"seed": 3, "servers": 2, "clients_per_server": 3, "clusters": 2, "d": 3, "lam": 0.1, "samples": (2, 5),
              "data": "gaussian", "rho_factor": 1.0, "taus": (0.4,), "phi0": 0.01, "zeta": 0.99, "C": 1.0,
              "iterations": 10, "runs": 2, "run_seed": 4}
    assert evaluate_noise_decomposition(params).holds
    original, calls = t2.run_pgfl, []

    def other_draws_for_the_noise_only_runs(problem, config, iterations, rng, **kw):
        calls.append(1)
        return original(problem, config, iterations, np.random.default_rng(999) if len(calls) > 4 else rng, **kw)

    monkeypatch.setattr(t2, "run_pgfl", other_draws_for_the_noise_only_runs)
    assert not evaluate_noise_decomposition(params).holds
