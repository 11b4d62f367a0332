"""The PAO-Fed simulation checks discriminate: a slightly wrong closed form is REFUTED at the ci profile."""

import numpy as np

from verify.paofed.sim_communication import check_communication_savings, evaluate_communication_savings
from verify.paofed.sim_faithful_gap import check_faithful_gap, exact_msd
from verify.paofed.sim_steady_state import check_steady_state, exact_msd_curve
from verify.records import CheckContext, Verdict

CTX = CheckContext(profile="ci", seed=0)


def _msd_one_db_high(instance, iterations):
    return exact_msd_curve(instance, iterations) * 10 ** (1.0 / 10)


def _msd_one_and_a_half_db_low(instance):
    return exact_msd(instance) * 10 ** (-1.5 / 10)


def _savings_off_by_one_entry(entries, D):
    return 1.0 - (entries + 1) / D


def test_steady_state_check_refutes_a_prediction_one_db_off():
    result = check_steady_state(CTX, theory=_msd_one_db_high)
    assert result.verdict is Verdict.REFUTED and result.counterexample["exact_db"] > result.counterexample["ucl_db"]


def test_faithful_gap_check_refutes_a_prediction_one_and_a_half_db_low():
    result = check_faithful_gap(CTX, theory=_msd_one_and_a_half_db_low)
    assert result.verdict is Verdict.REFUTED and result.measured > 0.0


def test_communication_check_refutes_a_formula_off_by_one_entry():
    result = check_communication_savings(CTX, formula=_savings_off_by_one_entry)
    assert result.verdict is Verdict.REFUTED


def test_communication_evidence_counts_the_paper_load():
    """D = 200, m = 4, K = 256: 128 bits per exchanging client and iteration, 98 % savings (seed lines 1109, 1137)."""
    e = evaluate_communication_savings({"environment": "paper", "algorithm": "paofed-u1", "m": 4, "iterations": 10,
                                        "seed": 3})
    # uplink savings 1 - 4/200
    assert e.holds and e.parameters["load_bits"] == 128.0 and np.isclose(e.parameters["uplink_savings"], 0.98)
