"""Render the theorem-check report as one self-contained HTML page (figures linked as PNG files).

Everything the page needs is inside it: the CSS, the filter script (:mod:`reports.index`) and the formulas, typeset
as inline SVG (:mod:`reports.texmath`); nothing is fetched when it is viewed.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from reports.formatting import citation_html, format_seconds, grid_line, measured_html, meta_html, slack_line
from reports.index import badge, index_html, papers_html
from reports.texmath import MathSheet, plain_text
from verify.evidence import tightness_line
from verify.records import CheckResult, Claim, Verdict
from verify.registry import paper_title

__all__ = ["render_html"]


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:80rem;
     color:#1d2430;line-height:1.45;padding:0 1rem}
h1{margin-bottom:.2rem} h2{border-bottom:2px solid #d8dee8;padding-bottom:.2rem;margin-top:2.2rem}
.meta{color:#4a5565;font-size:.9rem}
.card{border:1px solid #d8dee8;border-radius:8px;padding:1rem 1.2rem;margin:1rem 0;background:#fbfcfe}
.card h3{margin:.1rem 0 .4rem 0;font-size:1.05rem}
.id{font-family:ui-monospace,monospace;font-size:.85rem;color:#445}
.badge{display:inline-block;padding:.1rem .55rem;border-radius:999px;font-size:.8rem;font-weight:600;
       color:#fff;vertical-align:middle;margin-right:.4rem;white-space:nowrap}
.confirmed{background:#1f7a3d}.refuted{background:#b3261e}.not_checkable{background:#6b5d12}.error{background:#555}
.unexpected{border:2px solid #b3261e}
table.kv{border-collapse:collapse;font-size:.9rem;margin:.4rem 0}
table.kv td{padding:.15rem .6rem .15rem 0;vertical-align:top}
table.kv td:first-child{color:#4a5565;white-space:nowrap}
pre{background:#f1f4f8;padding:.5rem;border-radius:4px;overflow-x:auto;font-size:.8rem;max-height:16rem}
.figures{display:flex;flex-wrap:wrap;gap:.8rem;align-items:flex-start}
figure{margin:.5rem 0;max-width:100%}figure img{max-width:100%;height:auto;border:1px solid #e3e7ee;display:block}
figcaption{font-size:.85rem;color:#4a5565;max-width:36rem}
.summary-table td,.summary-table th{padding:.2rem .8rem;text-align:center}
table.index,table.papers{border-collapse:collapse;font-size:.85rem;margin:.5rem 0;width:100%}
.index td,.index th,.papers td,.papers th{padding:.2rem .5rem;border-bottom:1px solid #e3e6ea;text-align:left;
  vertical-align:top}
.index td.paper{min-width:7rem;max-width:12rem}.index .title{color:#4a5565}
th.num,td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
.papers tr.total td{font-weight:600;border-top:2px solid #d8dee8}
form.filter{display:flex;flex-wrap:wrap;gap:.4rem 1rem;align-items:center;margin:.6rem 0;font-size:.9rem;
  background:#f1f4f8;padding:.5rem .7rem;border-radius:6px}
form.filter label{white-space:nowrap}form.filter .count{color:#4a5565;margin-left:auto}
svg.math{display:inline-block;overflow:visible}
code.tex{color:#b3261e}
.cite{white-space:normal}.seed{color:#4a5565;font-size:.8rem}
ul.hyp{margin:0;padding-left:1.1rem}
"""


def _e(text: Any) -> str:
    return html.escape("" if text is None else str(text))


def _lines(text: str) -> str:
    """Escaped text with its line breaks kept ('' stays '', so the card leaves the row out)."""
    return "<br>".join(_e(line) for line in text.split("\n")) if text else ""


def _short_json(value: Any, limit: int = 4000) -> str:
    text = json.dumps(value, indent=1, default=str)
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters in results.json)"


def _registered(claim_id: str) -> Claim | None:
    """A claim of the full registry (a corrected claim may be outside an ``--only`` selection)."""
    from verify.registry import all_claims

    return next((c for c in all_claims() if c.id == claim_id), None)


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


def _severity(claim: Claim, sheet: MathSheet) -> str:
    text = f"<b>{_e(claim.severity)}</b> — {_e(_SEVERITY_TEXT.get(claim.severity, ''))}"
    if claim.uncorrected_because:
        text += f"; no corrected statement: {sheet.html(claim.uncorrected_because)}"
    return text


def _hypotheses(claim: Claim, sheet: MathSheet) -> str:
    if not claim.hypotheses:
        return "<i>none stated</i>"
    if len(claim.hypotheses) == 1:
        return sheet.html(claim.hypotheses[0])
    return "<ul class='hyp'>" + "".join(f"<li>{sheet.html(h)}</li>" for h in claim.hypotheses) + "</ul>"


def _figures(result: CheckResult, figure_paths: Mapping[str, str], figure_info: Mapping[str, Mapping[str, Any]],
             figure_errors: Mapping[str, str] | None) -> str:
    items = []
    for spec in result.figures:
        rel = figure_paths.get(spec.name)
        if rel is None:
            continue
        info = figure_info.get(rel, {})
        size = (f' width="{int(info["width"])}" height="{int(info["height"])}"'
                if info.get("width") and info.get("height") else "")
        others = [c for c in info.get("claims", ()) if c != result.claim_id]
        shared = ("<br><span class='seed'>The same figure is shown for "
                  + ", ".join(f"<a href='#{_e(c)}'>{_e(c)}</a>" for c in others) + ".</span>") if others else ""
        caption = _e(spec.caption) if spec.caption else ""
        items.append(f'<figure><a href="{_e(rel)}"><img src="{_e(rel)}"{size} loading="lazy" '
                     f'alt="{_e(plain_text(spec.title))}"></a>'
                     + (f"<figcaption>{caption}{shared}</figcaption>" if caption or shared else "") + "</figure>")
    errors = "".join(f"<p><b>Figure {_e(name)} not drawn:</b> {_e(error)}</p>"
                     for name, error in (figure_errors or {}).items())
    return (f"<div class='figures'>{''.join(items)}</div>" if items else "") + errors


def _card(claim: Claim, result: CheckResult, figure_paths: Mapping[str, str], claims: Mapping[str, Claim],
          profile: str = "thorough", figure_errors: Mapping[str, str] | None = None, *,
          sheet: MathSheet, figure_info: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    expected = claim.expected_at(profile)
    unexpected = result.verdict is not expected
    rows = [
        ("statement", sheet.html(claim.statement)),
        ("stated in", "<br>".join(citation_html(c) for c in claim.citations)),
        ("hypotheses", _hypotheses(claim, sheet)),
        ("result", sheet.html(result.summary)),
        ("measured", measured_html(result)),
        *([("tightness", _e(tightness_line(result.details["tightness"])))]
          if result.details.get("tightness") else []),
        ("slack", _lines(slack_line(result.details or {}))),
        ("grid", _lines(grid_line(result.details or {}))),
        ("quantity", sheet.html(result.quantity)),
        ("expected verdict", f"{_e(expected.value)}"
                             + (f" at {_e(profile)} ({_e(claim.expected.value)} at the paper's size)"
                                if expected is not claim.expected else "") + f" — {sheet.html(claim.reason)}"),
    ]
    if result.monte_carlo is not None:
        mc = result.monte_carlo
        rows.append(("Monte Carlo", f"n = {mc.n}, alpha = {mc.alpha:g}, seed = {mc.seed}"))
    if claim.severity is not None:
        rows.append(("severity", _severity(claim, sheet)))
    fix = claim.corrected_by or result.corrected_claim
    if fix:
        fixed = claims.get(fix) or _registered(fix)
        rows.append(("corrected statement",
                     f'<a href="#{_e(fix)}">{_e(fix)}</a>: {sheet.html(fixed.statement if fixed else "")}'))
    if claim.corrects:
        rows.append(("corrects", f'<a href="#{_e(claim.corrects)}">{_e(claim.corrects)}</a>'))
    rows.append(("runtime", f"{_e(format_seconds(result.runtime_s))}"
                            + (f" ({_e(format_seconds(result.cpu_s))} CPU)" if result.cpu_s is not None else "")
                            + (f", seed {_e(result.seed)}" if result.seed is not None else "")))
    table = "".join(f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in rows if v)  # a row with no value is left out
    extra = ""
    if result.counterexample:
        extra += (f"<p><b>Counterexample</b> (parameters that reproduce it)</p>"
                  f"<pre>{_e(_short_json(result.counterexample))}</pre>")
    if result.error:
        extra += f"<p><b>Error</b></p><pre>{_e(result.error)}</pre>"
    if result.details:  # the evidence tables (sweeps, tuned steps, per-comparison intervals), folded
        extra += (f"<details><summary>Details (evidence tables; complete in results.json)</summary>"
                  f"<pre>{_e(_short_json(result.details, limit=20000))}</pre></details>")
    images = _figures(result, figure_paths, figure_info or {}, figure_errors)
    warn = (f"<p><b>Unexpected verdict:</b> the registry expects {_e(expected.value)}.</p>" if unexpected else "")
    return (f'<div class="card{" unexpected" if unexpected else ""}" id="{_e(claim.id)}">'
            f'<h3>{badge(result.verdict)}{sheet.html(claim.title)}</h3>'
            f'<div class="id">{_e(claim.id)} · {_e(format_seconds(result.runtime_s))}</div>{warn}'
            f'<table class="kv">{table}</table>{extra}{images}</div>')


def render_html(
    claims: Sequence[Claim],
    results: Sequence[CheckResult],
    figure_paths: Mapping[str, Mapping[str, str]],
    meta: Mapping[str, Any],
    *,
    figure_errors: Mapping[str, Mapping[str, str]] | None = None,
    figure_info: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """The report page. ``figure_paths[claim_id][figure_name]`` is the PNG path relative to the page;
    ``figure_errors[claim_id][figure_name]`` why a figure could not be drawn (shown on its card);
    ``figure_info[path]`` the ``width`` and ``height`` (CSS px) a PNG is shown at and the ``claims`` that show it."""
    figure_errors = figure_errors or {}
    figure_info = figure_info or {}
    sheet = MathSheet()
    by_id = {c.id: c for c in claims}
    pairs = [(by_id[r.claim_id], r) for r in results]
    profile = meta.get("profile", "thorough")
    counts = {v: sum(r.verdict is v for r in results) for v in Verdict}
    total = sum(r.runtime_s for r in results)

    def card(c: Claim, r: CheckResult) -> str:
        return _card(c, r, figure_paths.get(c.id, {}), by_id, profile, figure_errors.get(c.id), sheet=sheet,
                     figure_info=figure_info)

    body = [f"<p class='meta'>{meta_html(meta)}</p>",
            "<table class='summary-table'><tr>" + "".join(f"<th>{badge(v)}</th>" for v in Verdict) + "</tr><tr>"
            + "".join(f"<td>{counts[v]}</td>" for v in Verdict) + "</tr></table>",
            f"<h2 id='cost'>Papers and what their checks cost ({_e(format_seconds(total))} in all)</h2>",
            papers_html(pairs), "<h2 id='claims-index'>Claims</h2>", index_html(pairs, sheet)]
    if any(r.details.get("decision_rule") for _, r in pairs):
        from verify.harness import DECISION_RULE

        body.append(f"<p class='meta'><b>How experiment statements are decided.</b> {_e(DECISION_RULE)}</p>")

    findings = sorted((p for p in pairs if p[1].verdict is Verdict.REFUTED), key=_severity_rank)
    body.append("<h2 id='findings'>Findings</h2>")
    if findings:
        body.append("<p>Claims of the papers that fedcheck refutes, most serious first (severity: "
                    + "; ".join(f"<b>{_e(k)}</b> {_e(v)}" for k, v in _SEVERITY_TEXT.items())
                    + "), each with a counterexample that reproduces and, where one exists, the corrected "
                    "statement that fedcheck checks instead.</p>")
        body.extend(card(c, r) for c, r in findings)
    else:
        body.append("<p>No claim checked in this run is refuted.</p>")
    errors = [(c, r) for c, r in pairs if r.verdict is Verdict.ERROR]
    if errors:
        body.append("<h2 id='errors'>Checks that errored</h2>")
        body.extend(card(c, r) for c, r in errors)

    for paper in sorted({c.paper for c, _ in pairs}):
        mine = [r for c, r in pairs if c.paper == paper]
        body.append(f"<h2 id='paper-{_e(paper)}'>{_e(paper_title(paper))} "
                    f"<span class='meta'>({len(mine)} claim{'s' if len(mine) != 1 else ''}, "
                    f"{_e(format_seconds(sum(r.runtime_s for r in mine)))})"
                    f"</span></h2>")
        above = (Verdict.REFUTED, Verdict.ERROR)
        body.extend(card(c, r) for c, r in pairs if c.paper == paper and r.verdict not in above)
        body.extend(f"<p>{badge(r.verdict)}<a href='#{_e(c.id)}'>{_e(c.id)}</a> (above)</p>"
                    for c, r in pairs if c.paper == paper and r.verdict in above)
    head = ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'><title>fedcheck report</title>"
            f"<style>{_CSS}</style></head><body>{sheet.defs()}<h1>fedcheck theorem-check report</h1>")
    return "\n".join([head, *body, "</body></html>\n"])
