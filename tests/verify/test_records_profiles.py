"""Claim.expected_by_profile: a per-profile expectation where the scaled-down instance does not decide."""

import pytest

from verify.records import Citation, Claim, Verdict


def _check(ctx):  # pragma: no cover - never run
    raise AssertionError


def _claim(**kw):
    base = dict(id="demo.claim", paper="demo", title="t",
                citations=(Citation(seed="000_133b71fd0aa99eb4.txt", label="l"),),
                statement="s", hypotheses=(), check=_check, expected=Verdict.CONFIRMED, reason="r")
    base.update(kw)
    return Claim(**base)


def test_expected_at_falls_back_to_the_paper_size_verdict():
    claim = _claim(expected_by_profile={"ci": "not_checkable"})
    assert claim.expected_at("ci") is Verdict.NOT_CHECKABLE
    assert claim.expected_at("thorough") is Verdict.CONFIRMED
    assert _claim().expected_at("ci") is Verdict.CONFIRMED
    assert claim.to_json()["expected_by_profile"] == {"ci": "not_checkable"}
    with pytest.raises(TypeError):
        claim.expected_by_profile["ci"] = Verdict.CONFIRMED  # read-only


@pytest.mark.parametrize("by_profile, match", [({"nightly": "confirmed"}, "expected_by_profile keys"),
                                                ({"ci": "error"}, "must not be error")])
def test_bad_profile_expectations_are_rejected(by_profile, match):
    with pytest.raises(ValueError, match=match):
        _claim(expected_by_profile=by_profile)


def test_expected_at_rejects_an_unknown_profile():
    with pytest.raises(ValueError, match="profile must be one of"):
        _claim().expected_at("nightly")
