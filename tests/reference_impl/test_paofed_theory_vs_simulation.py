"""Theory beside simulation (reference_impl.paofed.theory_vs_simulation): agreement, gaps, figure data, bad input."""

import dataclasses
import math

import numpy as np
import pytest

from reference_impl.paofed import theory_vs_simulation
from reference_impl.paofed.theory_vs_simulation import default_iterations
from theory.msd import reference_instance
from theory.msd.routes import mean_square_analysis


@pytest.fixture(scope="module")
def instance():
    return reference_instance(0.2)


@pytest.fixture(scope="module")
def analyses(instance):
    return {m: mean_square_analysis(instance, m) for m in ("seed", "exact")}


def test_the_analysis_simulation_agrees_with_the_exact_model_and_not_with_the_seed(instance, analyses):
    """SIM-A (docs/papers/paofed.md#choice-simulators) is the process the exact F describes: its interval holds
    MSD_inf(exact) (-26.73 dB at mu lambda_max 0.2) and lies about 0.7 dB above the seed's truncated F, which drops the
    mu^2 term."""
    out = theory_vs_simulation(instance, 120, rng=3, simulator="analysis", iterations=400, analyses=analyses)
    seed, exact = out.models
    assert exact.agrees is True and exact.gap_db == 0.0
    assert out.simulated_low <= exact.msd <= out.simulated_high
    assert seed.agrees is False and seed.gap_db < -0.3  # the seed model below the interval
    assert out.simulated_low < out.simulated_msd < out.simulated_high


def test_figure_data_are_plain_arrays_of_the_curve_length(instance, analyses):
    out = theory_vs_simulation(instance, 10, rng=np.random.default_rng(1), iterations=60, window=20,
                               analyses=analyses)
    assert out.n.shape == out.curve_db.shape == out.band_low_db.shape == out.band_high_db.shape == (61,)
    assert set(out.transient_db) == {"seed", "exact"} and out.transient_db["exact"].shape == (61,)
    # the transient starts at ||w*||^2, as the simulated curve (every model starts at w = 0)
    assert out.transient_db["exact"][0] == pytest.approx(out.curve_db[0], abs=1e-9)
    ok = np.isfinite(out.band_low_db)
    assert np.all(out.band_low_db[ok] <= out.curve_db[ok]) and np.all(out.curve_db <= out.band_high_db)
    assert out.seed is None and out.window == 20 and out.simulator == "faithful"


def test_a_model_outside_the_interval_reports_its_distance_in_db(instance, analyses):
    """Theory 3 dB above the simulation's upper end: gap +3 dB; below the lower end: negative (on a settled
    simulation: the default 500 iterations, four decades by iteration 197)."""
    base = theory_vs_simulation(instance, 10, rng=5, analyses=analyses)
    assert base.settlement.settled is True
    hi, lo = base.simulated_high, base.simulated_low
    fake = {"seed": dataclasses.replace(analyses["seed"], msd=hi * 10 ** 0.3),
            "exact": dataclasses.replace(analyses["exact"], msd=lo / 10 ** 0.5)}
    out = theory_vs_simulation(instance, 10, rng=5, analyses=fake)
    assert out.models[0].agrees is False and out.models[0].gap_db == pytest.approx(3.0, abs=1e-9)
    assert out.models[1].agrees is False and out.models[1].gap_db == pytest.approx(-5.0, abs=1e-9)
    unstable = {"seed": dataclasses.replace(analyses["seed"], msd=None), "exact": analyses["exact"]}
    out = theory_vs_simulation(instance, 10, rng=5, iterations=60, analyses=unstable)
    assert out.models[0].msd is None and out.models[0].agrees is None and out.models[0].note
    assert "seed" not in out.transient_db


def test_a_simulation_that_has_not_settled_decides_no_agreement(instance, analyses):
    """Found while checking issue 29's --simulate: 60 iterations at rho(F) = 0.954 (the reference instance at mu
    lambda_max = 0.2) average iterations 31..60, while the transient needs 197 iterations to lose four decades; the
    window's older half lies 69 % above its newer half. Such a run used to report 'agrees' or a gap; now neither."""
    out = theory_vs_simulation(instance, 10, rng=3, iterations=60, analyses=analyses)
    st = out.settlement
    assert st.settled is False and st.start_needed == 197 and st.radius_source == "rho(F)"
    assert st.drift_low > 0.3 and "needs 197 iterations" in st.note and "older half lies above" in st.note
    assert all(c.agrees is None and c.gap_db is None and "not settled" in c.note for c in out.models)


def test_settlement_without_rho_f_uses_rho_m_squared_as_a_necessary_time():
    """Without rho(F) (the classes route computes none), rho(M)^2 <= rho(F_exact) gives a time the window must at
    least wait for: failing it is decisive, meeting it is not (settled is None, not True). A curve still decaying is
    caught by the drift between the window's halves alone; a stationary one is not flagged."""
    from reference_impl.paofed.theory_vs_simulation import settlement

    rng = np.random.default_rng(0)
    n = np.arange(2001)[:, None]
    flat = 1e-3 * (1 + 0.3 * rng.standard_normal((2001, 40)))
    decaying = flat + 1e-2 * 0.999 ** n
    st = settlement(flat, 1000, 0.95, mean_radius=0.999)       # rho(M)^2 = 0.998: 4,600 iterations needed
    assert st.settled is False and st.radius_source == "rho(M)^2" and "at least 4" in st.note
    st = settlement(flat, 1000, 0.95, mean_radius=0.9)
    assert st.settled is None and "necessary" in st.note
    st = settlement(flat, 1000, 0.95)
    assert st.settled is None and st.radius_source == "none"
    assert settlement(flat, 1000, 0.95, radius=0.99).settled is True
    st = settlement(decaying, 1000, 0.95)
    assert st.settled is False and st.drift_low > 0 and "older half lies above" in st.note


def test_default_iterations_follow_the_spectral_radius():
    assert default_iterations(0.99) == math.ceil(2 * math.log(1e4) / -math.log(0.99))
    assert default_iterations(None) == 20000 and default_iterations(1.0) == 20000 and default_iterations(0.1) == 500


@pytest.mark.parametrize("kwargs, field", [
    ({"runs": 1}, "runs"), ({"simulator": "sim-x"}, "simulator"), ({"confidence": 1.0}, "confidence"),
    ({"models": ("other",)}, "models"), ({"rng": -1}, "rng"), ({"iterations": 1}, "iterations"),
    ({"iterations": 10, "window": 11}, "window"), ({"mean_radius": "0.9"}, "mean_radius"),
    ({"mean_radius": float("nan")}, "mean_radius"), ({"mean_radius": -0.5}, "mean_radius"),
])
def test_bad_arguments_name_the_field(instance, analyses, kwargs, field):
    args = {"runs": 4, "rng": 0, "analyses": analyses} | kwargs
    runs = args.pop("runs")
    with pytest.raises(ValueError, match=field):
        theory_vs_simulation(instance, runs, **args)


def test_settlement_of_a_one_iteration_window_or_a_diverged_run():
    """A window of one iteration has no halves (no drift test: settled is None unless the a-priori time fails); a
    window whose mean is not finite has no steady state (settled is False). No warning either way."""
    import warnings

    from reference_impl.paofed.theory_vs_simulation import settlement

    flat = np.full((101, 4), 1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        st = settlement(flat, 1, 0.95, radius=0.5)
        assert st.settled is None and "no halves" in st.note and math.isnan(st.drift)
        assert settlement(flat, 1, 0.95, radius=0.999).settled is False       # 9,206 iterations needed
        diverged = flat.copy()
        diverged[-1] = np.inf
        st = settlement(diverged, 50, 0.95, radius=0.5)
        assert st.settled is False and "no steady state" in st.note


def test_an_unstable_exact_model_means_no_steady_state_even_when_the_seed_is_stable(analyses, instance):
    """Found by an adversarial audit: at mu lambda_max = 1.0 the seed's truncated F is stable (-21 dB) and the exact F
    is not (rho = 1.87); the settling time was taken from the seed's radius, the diverging simulation (+43 dB, linear
    interval [-2.5e5, 2.9e5]) was called settled, and the seed 'agreed' with it. The simulators draw Gaussian
    regressors, whose second moments the exact F propagates: its radius is the one that says whether and when a
    simulation settles."""
    from reference_impl.paofed.theory_vs_simulation import model_radii, unstable_note

    big = reference_instance(1.0)
    an = {m: mean_square_analysis(big, m) for m in ("seed", "exact")}
    assert an["seed"].spectral_radius < 1.0 < an["exact"].spectral_radius
    assert model_radii(an)[1] == an["exact"].spectral_radius
    assert model_radii({"seed": an["seed"]}) == (an["seed"].spectral_radius, None)  # the seed's says nothing
    assert "mean-square unstable" in unstable_note(an["exact"].spectral_radius) and unstable_note(0.9) is None
    out = theory_vs_simulation(big, 3, rng=0, iterations=200, analyses=an)
    assert out.settlement.settled is False and "mean-square unstable" in out.settlement.note
    assert all(c.agrees is None and c.gap_db is None for c in out.models)


def test_a_diverging_curve_is_a_trend_whatever_the_interval_width():
    """A curve growing in every run puts its window's newer half far above the older one (per-run drift -2, each run
    relative to its own halves, so that no run outweighs the others); its steady-state interval is wider than the
    level, so the half-width rule alone let it pass. A drift beyond 50 % of the halves' mean is a trend."""
    from reference_impl.paofed.theory_vs_simulation import DRIFT_DECISIVE, settlement

    rng = np.random.default_rng(2)
    n = np.arange(301)[:, None]
    growing = np.exp(n * rng.uniform(0.02, 0.2, size=(1, 5)))        # runs that diverge at very different rates
    st = settlement(growing, 150, 0.95)
    assert st.settled is False and st.drift < -1.5 and "a trend" in st.note and DRIFT_DECISIVE == 0.5


def test_an_interval_reaching_zero_decides_no_agreement(instance, analyses):
    """Two runs of very different level give a Student-t interval (1 degree of freedom) that reaches below 0: any
    model below the mean would sit inside it. Such an interval decides nothing: agreement is undecided."""
    from reference_impl.paofed.theory_vs_simulation import _compare

    c = _compare("seed", analyses["seed"], -1e-3, 5e-3, True)
    assert c.agrees is None and c.gap_db is None and "reaches 0" in c.note
    c = _compare("seed", analyses["seed"], 1e-9, 1.0, True)
    assert c.agrees is True and c.gap_db == 0.0
