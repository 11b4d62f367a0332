"""The PAO-Fed transient-MSD and experiment checks discriminate: a slightly wrong input is REFUTED at ci."""

from verify.paofed.experiments import check_experiment
from verify.paofed.sim_transient import check_transient, exact_transient, seed_transient
from verify.records import CheckContext, Verdict

CTX = CheckContext(profile="ci", seed=0)


def _transient_half_db_high(instance, iterations):
    return exact_transient(instance, iterations) * 10 ** (0.5 / 10)


def test_transient_check_refutes_a_prediction_half_a_db_off():
    result = check_transient(CTX, theory=_transient_half_db_high)
    assert result.verdict is Verdict.REFUTED and result.counterexample["predicted_db"] > result.counterexample["ucl_db"]


def test_transient_check_refutes_the_seed_truncated_model():
    """The seed's truncated F (assumption A5) is 0.06-2.4 dB low: REFUTED, with the prediction below the interval."""
    result = check_transient(CTX, theory=seed_transient)
    assert result.verdict is Verdict.REFUTED and result.counterexample["predicted_db"] < result.counterexample["lcl_db"]


def _shift_db(arm, db):
    """A transform that makes ``arm``'s MSE-test curve ``db`` dB higher (a slightly wrong simulation)."""
    return lambda setting, a, curve: curve * 10 ** (db / 10) if a == arm else curve


def test_experiment_check_refutes_an_ordering_broken_by_a_six_db_shift():
    result = check_experiment(CTX, suffix="x1_next_portion_beats_last_received", transform=_shift_db("paofed-c1", 6.0))
    assert result.verdict is Verdict.REFUTED and result.counterexample["a"] == "paofed-c1"


def test_experiment_check_refutes_when_the_baseline_is_made_worse():
    """x9: C2 with a full downlink is 'not more than 1 dB below' Online-FedSGD; 5 dB worse FedSGD breaks it."""
    result = check_experiment(CTX, suffix="x9_full_downlink_loses_advantage", transform=_shift_db("online-fedsgd", 5.0))
    assert result.verdict is Verdict.REFUTED


def test_experiment_approx_check_refutes_a_two_db_offset():
    result = check_experiment(CTX, suffix="x3_c2_approx_u2", transform=_shift_db("paofed-u2", 2.0))
    assert result.verdict is Verdict.REFUTED and result.counterexample["kind"] == "approx"


def test_experiment_check_confirms_a_real_three_db_improvement():
    """The decision rule can also pass: U2 made 3 dB better than U1 is detected as 'U2 below U1'."""
    result = check_experiment(CTX, suffix="x4_u2_beats_u1", transform=_shift_db("paofed-u2", -3.0))
    assert result.verdict is Verdict.CONFIRMED


def test_not_checkable_experiment_keeps_its_recorded_comparisons():
    """x4 (PAO-Fed below Online-FedSGD) is refuted at the paper's size but not decided the same way at ci."""
    result = check_experiment(CTX, suffix="x4_paofed_beats_online_fedsgd")
    assert result.verdict is Verdict.NOT_CHECKABLE and len(result.details["comparisons"]) == 2
    assert "refuted at the paper's size" in result.summary
    assert result.figures and result.monte_carlo is not None


def test_baseline_steps_are_matched_and_recorded():
    """Spec 2.6: every baseline arm carries its tuned step; Online-FedSGD reaches U1's initial rate (0.5 dB)."""
    result = check_experiment(CTX, suffix="x4_online_fed_poor")
    steps = {row["arm"]: row for row in result.details["baseline_steps"]}
    assert set(steps) == {"online-fed", "online-fedsgd"}
    assert steps["online-fedsgd"]["matched"] and abs(steps["online-fedsgd"]["achieved_db"]
                                                     - steps["online-fedsgd"]["target_db"]) <= 0.5
    assert all(row["step"] > 0 for row in steps.values())
    assert all(set(c["steps"]) == {"default online-fed", "default online-fedsgd"}
               for c in result.details["comparisons"])
