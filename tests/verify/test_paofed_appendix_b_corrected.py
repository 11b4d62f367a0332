"""paofed.appendix_b_corrected: a Q_B scaled by 1 + 1e-10 (row sums off) is refuted."""

from theory.msd import qb_matrix
from verify.paofed.appendix_b import check_appendix_b_corrected
from verify.records import CheckContext, Verdict


def _scaled_qb(m):
    return qb_matrix(m) * (1.0 + 1e-10)


def test_corrected_check_refutes_wrong_row_sums():
    assert check_appendix_b_corrected(CheckContext(), qb_fn=_scaled_qb).verdict is Verdict.REFUTED


def test_corrected_check_confirms_the_closed_form():
    assert check_appendix_b_corrected(CheckContext()).verdict is Verdict.CONFIRMED
