"""Every refuted claim says how wrong it is and, unless it is a typo, what does hold instead."""

import pytest

from verify.records import SEVERITIES, Verdict
from verify.registry import all_claims, get_claim

CLAIMS = all_claims()

# TODO(experiments): refuted experiment claims of verify/pgfl/experiments.py, verify/pgfl/classification.py and
# verify/paofed/experiments.py, which are being rewritten onto verify/comparisons.py in parallel. Their severity is
# filled in with that rewrite; remove each id from this set when its Claim gets one.
TODO_EXPERIMENT_SEVERITY = frozenset({
    "paofed.experiment_x10_c2_beats_online_fedsgd",
    "paofed.experiment_x10_online_fedsgd_beats_u1",
    "paofed.experiment_x11_c2_u1_gap_grows",
    "paofed.experiment_x1_uncoordinated_beats_coordinated",
    "paofed.experiment_x2_larger_m_higher_final",
    "paofed.experiment_x3_decaying_weights_beat_unit_weights",
    "paofed.experiment_x4_paofed_beats_online_fedsgd",
    "paofed.experiment_x4_u2_beats_u1",
    "paofed.experiment_x8_c2_best",
})

_SKIPPED = TODO_EXPERIMENT_SEVERITY


def _refuted(claim) -> bool:
    return Verdict.REFUTED in {claim.expected, *(claim.expected_by_profile or {}).values()}


@pytest.mark.parametrize("claim", [c for c in CLAIMS if _refuted(c) and c.id not in _SKIPPED],
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


def test_todo_sets_name_no_claim_with_a_severity():
    """Property: no id in the TODO sets names a claim that already has a severity (an id leaves the set as soon as
    its claim is given one)."""
    by_id = {c.id: c for c in CLAIMS}
    stale = sorted(i for i in _SKIPPED if i in by_id and by_id[i].severity is not None)
    assert not stale, f"remove from the TODO sets: {stale}"


def test_severity_only_on_refuted_claims():
    """Property: claims refuted at no profile carry no severity."""
    assert not [c.id for c in CLAIMS if c.severity is not None and not _refuted(c)]
