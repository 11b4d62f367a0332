"""Render the theorem-check report as one self-contained HTML page (figures linked as PNG files)."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from verify.evidence import tightness_line
from verify.papers import paper_title
from verify.records import CheckResult, Claim, Verdict

__all__ = ["render_html"]


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:72rem;
     color:#1d2430;line-height:1.45;padding:0 1rem}
h1{margin-bottom:.2rem} h2{border-bottom:2px solid #d8dee8;padding-bottom:.2rem;margin-top:2.2rem}
.meta{color:#566;font-size:.9rem}
.card{border:1px solid #d8dee8;border-radius:8px;padding:1rem 1.2rem;margin:1rem 0;background:#fbfcfe}
.card h3{margin:.1rem 0 .4rem 0;font-size:1.05rem}
.id{font-family:ui-monospace,monospace;font-size:.85rem;color:#445}
.badge{display:inline-block;padding:.1rem .55rem;border-radius:999px;font-size:.8rem;font-weight:600;
       color:#fff;vertical-align:middle;margin-right:.4rem}
.confirmed{background:#1f7a3d}.refuted{background:#b3261e}.not_checkable{background:#7a6a1f}.error{background:#555}
.unexpected{border:2px solid #b3261e}
table.kv{border-collapse:collapse;font-size:.9rem;margin:.4rem 0}
table.kv td{padding:.15rem .6rem .15rem 0;vertical-align:top}
table.kv td:first-child{color:#566;white-space:nowrap}
pre{background:#f1f4f8;padding:.5rem;border-radius:4px;overflow-x:auto;font-size:.8rem;max-height:16rem}
img{max-width:100%;border:1px solid #e3e7ee;margin:.4rem .4rem 0 0}
.summary-table td,.summary-table th{padding:.2rem .8rem;text-align:center}
.index{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}.index td,.index th{padding:.15rem .5rem;border-bottom:1px solid #e3e6ea;text-align:left;vertical-align:top}
figure{margin:.5rem 0}figcaption{font-size:.8rem;color:#4a5565}
"""


def _e(text: Any) -> str:
    return html.escape("" if text is None else str(text))


def _num(x: Any) -> str:
    return "–" if x is None else (f"{x:.6g}" if isinstance(x, float) else _e(x))


def _short_json(value: Any, limit: int = 4000) -> str:
    text = json.dumps(value, indent=1, default=str)
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters in results.json)"


def _registered(claim_id: str) -> Claim | None:
    """A claim of the full registry (a corrected claim may be outside an ``--only`` selection)."""
    from verify.registry import all_claims

    return next((c for c in all_claims() if c.id == claim_id), None)


def _badge(verdict: Verdict) -> str:
    return f'<span class="badge {verdict.value}">{verdict.value.replace("_", " ")}</span>'


_SEVERITY_TEXT = {  # most serious first: the order of the Findings section
    "false": "the result as stated does not hold",
    "correction_as_useful": "wrong as printed; a checked corrected statement serves the same purpose",
    "typo": "a notational slip in a statement whose intended form holds",
}


def _severity_rank(pair) -> tuple:
    """Findings order: by severity (false, correction_as_useful, typo, unset last), then paper and id."""
    claim = pair[0]
    order = list(_SEVERITY_TEXT)
    return (order.index(claim.severity) if claim.severity in order else len(order), claim.paper, claim.id)


def _severity(claim: Claim) -> str:
    text = f"<b>{_e(claim.severity)}</b> — {_e(_SEVERITY_TEXT.get(claim.severity, ''))}"
    if claim.uncorrected_because:
        text += f"; no corrected statement: {_e(claim.uncorrected_because)}"
    return text


def _card(claim: Claim, result: CheckResult, figure_paths: Mapping[str, str], claims: Mapping[str, Claim],
          profile: str = "thorough", figure_errors: Mapping[str, str] | None = None) -> str:
    expected = claim.expected_at(profile)
    unexpected = result.verdict is not expected
    rows = [
        ("statement", _e(claim.statement)),
        ("stated in", "<br>".join(_e(c) for c in claim.citations)),
        ("hypotheses", "; ".join(_e(h) for h in claim.hypotheses)),
        ("result", _e(result.summary)),
        ("measured", f"{_num(result.measured)} &nbsp; <b>bound</b> {_num(result.bound)} &nbsp; "
                     f"<b>margin</b> {_num(result.margin)}"),
        *([("tightness", _e(tightness_line(result.details["tightness"])))] if result.details.get("tightness") else []),
        ("quantity", _e(result.quantity)),
        ("expected verdict", f"{_e(expected.value)}"
                             + (f" at {_e(profile)} ({_e(claim.expected.value)} at the paper's size)"
                                if expected is not claim.expected else "") + f" — {_e(claim.reason)}"),
    ]
    if result.monte_carlo is not None:
        mc = result.monte_carlo
        rows.append(("Monte Carlo", f"n = {mc.n}, alpha = {mc.alpha:g}, seed = {mc.seed}"))
    if claim.severity is not None:
        rows.append(("severity", _severity(claim)))
    fix = claim.corrected_by or result.corrected_claim
    if fix:
        fixed = claims.get(fix) or _registered(fix)
        rows.append(("corrected statement", f'<a href="#{_e(fix)}">{_e(fix)}</a>: {_e(fixed.statement if fixed else "")}'))
    if claim.corrects:
        rows.append(("corrects", f'<a href="#{_e(claim.corrects)}">{_e(claim.corrects)}</a>'))
    rows.append(("runtime", f"{result.runtime_s:.2f} s, seed {result.seed}"))
    table = "".join(f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in rows)
    extra = ""
    if result.counterexample:
        extra += f"<p><b>Counterexample</b> (parameters that reproduce it)</p><pre>{_e(_short_json(result.counterexample))}</pre>"
    if result.error:
        extra += f"<p><b>Error</b></p><pre>{_e(result.error)}</pre>"
    if result.details:  # the evidence tables (sweeps, tuned steps, per-comparison intervals), folded
        extra += (f"<details><summary>Details (evidence tables; complete in results.json)</summary>"
                  f"<pre>{_e(_short_json(result.details, limit=20000))}</pre></details>")
    images = "".join(f'<figure><img src="{_e(figure_paths[f.name])}" alt="{_e(f.title)}">'
                     + (f"<figcaption>{_e(f.caption)}</figcaption>" if f.caption else "") + "</figure>"
                     for f in result.figures if f.name in figure_paths)
    images += "".join(f"<p><b>Figure {_e(name)} not drawn:</b> {_e(error)}</p>"
                      for name, error in (figure_errors or {}).items())
    warn = (f"<p><b>Unexpected verdict:</b> the registry expects {_e(expected.value)}.</p>" if unexpected else "")
    return (f'<div class="card{" unexpected" if unexpected else ""}" id="{_e(claim.id)}">'
            f'<h3>{_badge(result.verdict)}{_e(claim.title)}</h3><div class="id">{_e(claim.id)}</div>{warn}'
            f'<table class="kv">{table}</table>{extra}{images}</div>')


def _one_line(text: str, limit: int = 160) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[:limit - 1] + "…"


def _index_table(pairs) -> str:
    """The first screen: every claim (paper, id, verdict, one-line result) linking to its card."""
    rows = "".join(f"<tr><td>{_e(c.paper)}</td><td><a href='#{_e(c.id)}'>{_e(c.id)}</a></td>"
                   f"<td>{_badge(r.verdict)}</td><td>{_e(_one_line(r.summary))}</td></tr>"
                   for c, r in sorted(pairs, key=lambda cr: (cr[0].paper, cr[0].id)))
    return ("<details open><summary>Every claim (paper, id, verdict, result)</summary><table class='index'>"
            "<tr><th>paper</th><th>claim</th><th>verdict</th><th>result</th></tr>" + rows + "</table></details>")


def render_html(
    claims: Sequence[Claim],
    results: Sequence[CheckResult],
    figure_paths: Mapping[str, Mapping[str, str]],
    meta: Mapping[str, Any],
    *,
    figure_errors: Mapping[str, Mapping[str, str]] | None = None,
) -> str:
    """The report page. ``figure_paths[claim_id][figure_name]`` is the PNG path relative to the page;
    ``figure_errors[claim_id][figure_name]`` why a figure could not be drawn (shown on its card)."""
    figure_errors = figure_errors or {}
    by_id = {c.id: c for c in claims}
    pairs = [(by_id[r.claim_id], r) for r in results]
    profile = meta.get("profile", "thorough")
    counts = {v: sum(r.verdict is v for r in results) for v in Verdict}
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>fedcheck report</title>"
             f"<style>{_CSS}</style></head><body><h1>fedcheck theorem-check report</h1>",
             "<p class='meta'>" + " · ".join(f"{_e(k)}: {_e(', '.join(v) if isinstance(v, list) else v)}"
                                      for k, v in meta.items() if v not in ([], None, "")) + "</p>",
             "<table class='summary-table'><tr>" + "".join(f"<th>{_badge(v)}</th>" for v in Verdict) + "</tr><tr>"
             + "".join(f"<td>{counts[v]}</td>" for v in Verdict) + "</tr></table>"]
    parts.append(_index_table(pairs))
    if any(r.details.get("decision_rule") for _, r in pairs):
        from verify.comparisons import DECISION_RULE

        parts.append(f"<p class='meta'><b>How experiment statements are decided.</b> {_e(DECISION_RULE)}</p>")

    findings = sorted((p for p in pairs if p[1].verdict is Verdict.REFUTED), key=_severity_rank)
    parts.append("<h2 id='findings'>Findings</h2>")
    if findings:
        parts.append("<p>Claims of the papers that fedcheck refutes, most serious first (severity: "
                     + "; ".join(f"<b>{_e(k)}</b> {_e(v)}" for k, v in _SEVERITY_TEXT.items())
                     + "), each with a counterexample that reproduces and, where one exists, the corrected "
                     "statement that fedcheck checks instead.</p>")
        parts.extend(_card(c, r, figure_paths.get(c.id, {}), by_id, profile, figure_errors.get(c.id)) for c, r in findings)
    else:
        parts.append("<p>No claim checked in this run is refuted.</p>")
    errors = [(c, r) for c, r in pairs if r.verdict is Verdict.ERROR]
    if errors:
        parts.append("<h2 id='errors'>Checks that errored</h2>")
        parts.extend(_card(c, r, figure_paths.get(c.id, {}), by_id, profile, figure_errors.get(c.id)) for c, r in errors)

    for paper in sorted({c.paper for c, _ in pairs}):
        parts.append(f"<h2 id='paper-{_e(paper)}'>{_e(paper_title(paper))}</h2>")
        parts.extend(_card(c, r, figure_paths.get(c.id, {}), by_id, profile, figure_errors.get(c.id))
                     for c, r in pairs if c.paper == paper and r.verdict not in (Verdict.REFUTED, Verdict.ERROR))
        parts.extend(f"<p>{_badge(r.verdict)}<a href='#{_e(c.id)}'>{_e(c.id)}</a> (above)</p>"
                     for c, r in pairs if c.paper == paper and r.verdict in (Verdict.REFUTED, Verdict.ERROR))
    parts.append("</body></html>\n")
    return "\n".join(parts)
