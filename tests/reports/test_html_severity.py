"""The Findings section shows each refuted claim's severity and lists the most serious first."""

from reports.html import render_html
from verify.records import CheckResult, Citation, Claim, Evidence, Verdict


def _check(ctx):  # pragma: no cover - never run
    raise AssertionError


def _reproduce(counterexample):  # pragma: no cover - never run
    return Evidence(measured=1.0, bound=0.0, holds=False)


def _pair(cid, severity):
    claim = Claim(id=cid, title=f"title {cid}", citations=(Citation(seed="000_133b71fd0aa99eb4.txt", label="l"),),
                  statement="s", hypotheses=(), check=_check, expected=Verdict.REFUTED, reason="r",
                  reproduce=_reproduce, severity=severity, uncorrected_because="" if severity == "typo" else "why")
    return claim, CheckResult(claim_id=cid, verdict=Verdict.REFUTED, summary="violated", counterexample={"x": 1})


def test_findings_sorted_by_severity_and_shown():
    pairs = [_pair("demo.a_typo", "typo"), _pair("demo.b_false", "false"),
             _pair("demo.c_useful", "correction_as_useful")]
    page = render_html([c for c, _ in pairs], [r for _, r in pairs], {}, {"profile": "ci"})
    findings = page[page.index("<h2 id='findings'>"):page.index("<h2 id='paper-demo'>")]
    order = [findings.index(f'id="{cid}"') for cid in ("demo.b_false", "demo.c_useful", "demo.a_typo")]
    assert order == sorted(order)
    assert "<b>false</b> — the result as stated does not hold; no corrected statement: why" in findings
    assert "<b>typo</b>" in findings
