"""Claim.severity and Claim.uncorrected_because: validated, exported in to_json."""

import pytest

from verify.records import SEVERITIES, Citation, Claim, Evidence, Verdict


def _check(ctx):  # pragma: no cover - never run
    raise AssertionError


def _reproduce(counterexample):  # pragma: no cover - never run
    return Evidence(measured=1.0, bound=0.0, holds=False)


def _claim(**kw):
    base = dict(id="demo.claim", title="t", citations=(Citation(seed="000_133b71fd0aa99eb4.txt", label="l"),),
                statement="s", hypotheses=(), check=_check, expected=Verdict.REFUTED, reason="r",
                reproduce=_reproduce)
    base.update(kw)
    return Claim(**base)


@pytest.mark.parametrize("severity", SEVERITIES)
def test_severity_is_exported(severity):
    data = _claim(severity=severity, uncorrected_because="none known").to_json()
    assert data["severity"] == severity and data["uncorrected_because"] == "none known"
    assert _claim(expected=Verdict.CONFIRMED, reproduce=None).to_json()["severity"] is None


@pytest.mark.parametrize("kw, match", [
    (dict(severity="minor"), "severity must be one of typo, correction_as_useful, false"),
    (dict(severity="typo", expected=Verdict.CONFIRMED, reproduce=None), "only a refuted claim has a severity"),
    (dict(uncorrected_because="x", corrected_by="demo.fixed"), "uncorrected_because is only"),
    (dict(uncorrected_because="x", expected=Verdict.NOT_CHECKABLE, reproduce=None), "uncorrected_because is only"),
])
def test_bad_severity_fields_are_rejected(kw, match):
    with pytest.raises(ValueError, match=match):
        _claim(**kw)
