"""Every refuted claim says how wrong it is and, unless it is a typo, what does hold instead."""

import pytest

from verify.records import SEVERITIES, Verdict
from verify.registry import all_claims, get_claim

CLAIMS = all_claims()


def _refuted(claim) -> bool:
    return Verdict.REFUTED in {claim.expected, *(claim.expected_by_profile or {}).values()}


@pytest.mark.parametrize("claim", [c for c in CLAIMS if _refuted(c)],
                         ids=lambda c: c.id)
def test_refuted_claim_has_a_severity_and_a_correction_or_a_reason(claim):
    """Property: a refuted claim carries a severity from SEVERITIES; unless it is a typo it names a corrected claim
    that the registry expects confirmed, or says in one sentence why no corrected statement is known."""
    assert claim.severity in SEVERITIES, f"{claim.id}: severity {claim.severity!r}"
    if claim.severity != "typo":
        assert claim.corrected_by or claim.uncorrected_because, f"{claim.id}: no corrected statement and no reason"
    if claim.corrected_by:
        fixed = get_claim(claim.corrected_by)
        assert fixed.expected is Verdict.CONFIRMED and fixed.corrects == claim.id


def test_severity_only_on_refuted_claims():
    """Property: claims refuted at no profile carry no severity."""
    assert not [c.id for c in CLAIMS if c.severity is not None and not _refuted(c)]
