"""paofed.seed_msd_formulas: with the exact F as the prediction the same check confirms (the refutation is the F)."""

from verify.paofed.seed_msd_formulas import check_seed_formulas, reproduce_seed_formulas
from verify.paofed.sim_steady_state import exact_msd_curve
from verify.records import CheckContext, Verdict


def test_exact_curve_control_is_confirmed():
    assert check_seed_formulas(CheckContext(), theory=exact_msd_curve).verdict is Verdict.CONFIRMED


def test_counterexample_reproduces():
    result = check_seed_formulas(CheckContext())
    assert result.verdict is Verdict.REFUTED and not reproduce_seed_formulas(result.counterexample).holds
