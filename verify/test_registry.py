"""Every registered claim's check reproduces its expected verdict; refutations still reproduce."""

import ast
import pathlib

import pytest

from reports.figures import series_styles
from verify.records import CheckContext, Verdict
from verify.registry import all_claims, get_claim
from verify.runner import run_claim

CLAIMS = all_claims()
VERIFY_DIR = pathlib.Path(__file__).parent


def _bound_claim_ids() -> set[str]:
    """Claim ids named by ``@pytest.mark.claim("...")`` in the verify test modules."""
    ids = set()
    for path in VERIFY_DIR.rglob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "claim"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                ids.add(node.args[0].value)
    return ids


def _assert_verdict(claim, profile):
    result = run_claim(claim, CheckContext(profile=profile, seed=0))
    expected = claim.expected_at(profile)
    assert result.verdict is not Verdict.ERROR, result.error
    assert result.verdict is expected, result.summary
    if "decision_rule" in result.details:  # an experiment: every arm of its figures in its own colour
        for figure in result.figures:
            colours = [style["color"] for style in series_styles(figure)]
            assert len(set(colours)) == len(colours), f"{claim.id}: figure {figure.name} shares a colour"
    if expected is Verdict.REFUTED:
        again = claim.reproduce(result.counterexample)
        assert not again.holds, f"counterexample of {claim.id} no longer reproduces: {again}"
        assert result.corrected_claim in (None, claim.corrected_by)


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_claim_has_expected_verdict(claim):
    """Property: the claim's registered check, at the ci profile, reaches the registry's verdict for that profile
    (for a refuted claim: its counterexample still violates the claim)."""
    _assert_verdict(claim, "ci")


@pytest.mark.slow
@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_claim_has_expected_verdict_thorough(claim):
    """Property: the same, at the thorough profile's sample sizes."""
    _assert_verdict(claim, "thorough")


def test_every_claim_has_a_property_test_and_every_binding_names_a_claim():
    """Property: each registered claim is bound to at least one property test, and every
    ``pytest.mark.claim`` names a registered claim."""
    bound = _bound_claim_ids()
    for claim_id in bound:
        get_claim(claim_id)
    missing = sorted(c.id for c in CLAIMS if c.id not in bound)
    assert not missing, f"claims without a property test: {missing}"
