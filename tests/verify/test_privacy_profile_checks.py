"""The privacy-profile check catches a closed form that is off by 2%."""

from theory.privacy import gaussian_delta_exact
from verify.dp.privacy_profile import check_privacy_profile
from verify.records import CheckContext, Verdict


def test_wrong_profile_is_refuted():
    assert check_privacy_profile(CheckContext()).verdict is Verdict.CONFIRMED
    wrong = check_privacy_profile(CheckContext(), delta_fn=lambda eps, mu: 1.02 * gaussian_delta_exact(eps, mu))
    assert wrong.verdict is Verdict.REFUTED and wrong.counterexample
