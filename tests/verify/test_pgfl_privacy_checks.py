"""The privacy-on-algorithm check fails when the assumed variance is wrong by 5%."""

from verify.pgfl.privacy_on_algorithm import check_privacy_on_algorithm
from verify.records import CheckContext, Verdict


def test_wrong_variance_is_detected():
    assert check_privacy_on_algorithm(CheckContext()).verdict is Verdict.CONFIRMED
    assert check_privacy_on_algorithm(CheckContext(), variance_scale=1.05).verdict is Verdict.REFUTED
