"""The report's first screen: the cost of each paper, and every claim in a table a reader can filter and search.

The filter is a small inline script (no server, no network): a verdict, a paper and free text (every word must
occur in the claim's id, title, paper, statement or result), and an order (by paper or most expensive first). The
counts update as the filter changes. The filter is also read from and written to the page's query string
(``index.html?verdict=refuted&paper=gtv&q=digits&sort=runtime``), so a filtered view can be linked to. Without
JavaScript every claim is listed and the controls stay hidden.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from reports.formatting import format_seconds
from reports.texmath import MathSheet, plain_text, truncate
from verify.records import CheckResult, Claim, Verdict
from verify.registry import paper_short_title, paper_title

__all__ = ["FILTER_SCRIPT", "badge", "cost_of", "index_html", "papers_html"]


def _e(text: Any) -> str:
    return html.escape("" if text is None else str(text))


def badge(verdict: Verdict) -> str:
    """The verdict's badge (never wraps: see the page's CSS)."""
    return f'<span class="badge {verdict.value}">{verdict.value.replace("_", " ")}</span>'


def papers_html(pairs: Sequence[tuple[Claim, CheckResult]]) -> str:
    """One row per paper: its claims by verdict and the time its checks took, and the report's total."""
    papers = sorted({c.paper for c, _ in pairs})
    head = ("<tr><th>paper</th><th class='num'>claims</th>"
            + "".join(f"<th class='num'>{badge(v)}</th>" for v in Verdict)
            + "<th class='num'>check time</th><th class='num'>CPU time</th></tr>")
    rows = []
    for paper in papers:
        mine = [r for c, r in pairs if c.paper == paper]
        counts = "".join(f"<td class='num'>{sum(r.verdict is v for r in mine) or ''}</td>" for v in Verdict)
        rows.append(f"<tr><td><a href='#paper-{_e(paper)}'>{_e(paper_title(paper))}</a></td>"
                    f"<td class='num'>{len(mine)}</td>{counts}"
                    f"<td class='num'>{_e(format_seconds(sum(r.runtime_s for r in mine)))}</td>"
                    f"<td class='num'>{_cpu_text(mine)}</td></tr>")
    total = sum(r.runtime_s for _, r in pairs)
    counts = "".join(f"<td class='num'>{sum(r.verdict is v for _, r in pairs)}</td>" for v in Verdict)
    rows.append(f"<tr class='total'><td>all papers</td><td class='num'>{len(pairs)}</td>{counts}"
                f"<td class='num'>{_e(format_seconds(total))}</td>"
                f"<td class='num'>{_cpu_text([r for _, r in pairs])}</td></tr>")
    return ("<table class='papers'>" + head + "".join(rows) + "</table>"
            "<p class='meta'>Check time is the sum of the claims' own runtimes (wall time; a claim reused from the "
            "result cache shows the time it took when it ran); with several workers claims run side by side, so the "
            "report's wall time is shorter, and a claim's runtime also counts the time it waited for workers busy "
            "with other claims. CPU time is what a claim's check itself consumed, in this process and in the "
            "worker processes it used: the cost to compare between claims and between runs.</p>")


def _cpu_text(results: Sequence[CheckResult]) -> str:
    """The summed CPU time of ``results``, or an empty cell when none was measured (results from before it was)."""
    known = [r.cpu_s for r in results if r.cpu_s is not None]
    return _e(format_seconds(sum(known))) if known else ""


def cost_of(result: CheckResult) -> float:
    """What a claim cost: its CPU time where measured, else its runtime."""
    return result.runtime_s if result.cpu_s is None else result.cpu_s


def _search_text(claim: Claim, result: CheckResult) -> str:
    parts = (claim.id, plain_text(claim.title), paper_short_title(claim.paper), plain_text(claim.statement),
             plain_text(result.summary), result.verdict.value.replace("_", " "))
    return " ".join(" ".join(parts).lower().split())


def _controls(pairs: Sequence[tuple[Claim, CheckResult]]) -> str:
    papers = sorted({c.paper for c, _ in pairs})
    verdicts = "".join(f"<option value='{v.value}'>{v.value.replace('_', ' ')} "
                       f"({sum(r.verdict is v for _, r in pairs)})</option>"
                       for v in Verdict if any(r.verdict is v for _, r in pairs))
    paper_options = "".join(f"<option value='{_e(p)}'>{_e(paper_short_title(p))}</option>" for p in papers)
    return ("<form id='claim-filter' class='filter' hidden role='search' onsubmit='return false'>"
            "<label>verdict <select id='f-verdict'><option value=''>any</option>" + verdicts + "</select></label>"
            "<label>paper <select id='f-paper'><option value=''>any</option>" + paper_options + "</select></label>"
            "<label>search <input id='f-text' type='search' placeholder='id, title, statement or result'"
            " autocomplete='off' size='32'></label>"
            "<label>order <select id='f-sort'><option value='paper'>by paper</option>"
            "<option value='runtime'>most expensive first</option></select></label>"
            "<button type='button' id='f-reset'>show all</button>"
            "<span id='f-count' class='count' aria-live='polite'></span></form>")


def index_html(pairs: Sequence[tuple[Claim, CheckResult]], sheet: MathSheet) -> str:
    """The table of every claim (paper, claim, verdict, result, runtime), each row linking to its card, with the
    filter controls above it."""
    ordered = sorted(pairs, key=lambda cr: (cr[0].paper, cr[0].id))
    rows = []
    for k, (claim, result) in enumerate(ordered):
        rows.append(
            f"<tr data-verdict='{result.verdict.value}' data-paper='{_e(claim.paper)}' data-order='{k}' "
            f"data-runtime='{cost_of(result):.3f}' data-search='{_e(_search_text(claim, result))}'>"
            f"<td class='paper' title='{_e(paper_title(claim.paper))}'>{_e(paper_short_title(claim.paper))}</td>"
            f"<td><a href='#{_e(claim.id)}'>{_e(claim.id)}</a><div class='title'>{sheet.html(claim.title)}</div></td>"
            f"<td>{badge(result.verdict)}</td><td>{sheet.html(truncate(result.summary, 180))}</td>"
            f"<td class='num'>{_e(format_seconds(result.runtime_s))}</td>"
            f"<td class='num'>{_cpu_text([result])}</td></tr>")
    table = ("<table class='index' id='claims'><thead><tr><th>paper</th><th>claim</th><th>verdict</th><th>result</th>"
             "<th class='num'>runtime</th><th class='num'>CPU</th></tr></thead><tbody>" + "".join(rows)
             + "</tbody></table>")
    return ("<details open id='index'><summary>Every claim: paper, claim, verdict, result, runtime and CPU time"
            "</summary>"
            + _controls(pairs) + table + "</details><script>" + FILTER_SCRIPT + "</script>")


#: The filter's logic: shows the rows that match, updates the counts and the query string.
FILTER_SCRIPT = r"""
(function () {
  var form = document.getElementById('claim-filter');
  var table = document.getElementById('claims');
  if (!form || !table) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var verdict = document.getElementById('f-verdict'), paper = document.getElementById('f-paper');
  var text = document.getElementById('f-text'), sort = document.getElementById('f-sort');
  var count = document.getElementById('f-count');
  function hasOption(select, value) {
    return Array.prototype.some.call(select.options, function (o) { return o.value === value; });
  }
  function fmt(s) {
    if (s < 60) { return s.toFixed(s < 10 ? 2 : 1) + ' s'; }
    var m = Math.floor(s / 60), r = Math.round(s - 60 * m);
    return m < 60 ? m + ' min ' + (r < 10 ? '0' : '') + r + ' s' : Math.floor(m / 60) + ' h ' + (m % 60) + ' min';
  }
  function apply(write) {
    var terms = text.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0, seconds = 0, byVerdict = {};
    rows.forEach(function (row) {
      var d = row.dataset;
      var ok = (!verdict.value || d.verdict === verdict.value) && (!paper.value || d.paper === paper.value)
        && terms.every(function (t) { return d.search.indexOf(t) >= 0; });
      row.hidden = !ok;
      var inPaper = (!paper.value || d.paper === paper.value)
        && terms.every(function (t) { return d.search.indexOf(t) >= 0; });
      if (inPaper) { byVerdict[d.verdict] = (byVerdict[d.verdict] || 0) + 1; }
      if (ok) { shown += 1; seconds += parseFloat(d.runtime) || 0; }
    });
    var order = rows.slice();
    if (sort.value === 'runtime') {
      order.sort(function (a, b) { return parseFloat(b.dataset.runtime) - parseFloat(a.dataset.runtime); });
    } else {
      order.sort(function (a, b) { return a.dataset.order - b.dataset.order; });
    }
    order.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(verdict.options, function (o) {
      if (o.value) { o.textContent = o.value.replace('_', ' ') + ' (' + (byVerdict[o.value] || 0) + ')'; }
    });
    count.textContent = 'showing ' + shown + ' of ' + rows.length + ' claims, check time ' + fmt(seconds);
    table.dataset.shown = String(shown);
    if (write && window.history && window.history.replaceState) {
      var q = [];
      if (verdict.value) { q.push('verdict=' + encodeURIComponent(verdict.value)); }
      if (paper.value) { q.push('paper=' + encodeURIComponent(paper.value)); }
      if (text.value.trim()) { q.push('q=' + encodeURIComponent(text.value.trim())); }
      if (sort.value !== 'paper') { q.push('sort=' + encodeURIComponent(sort.value)); }
      try {
        window.history.replaceState(null, '', (q.length ? '?' + q.join('&') : window.location.pathname)
          + window.location.hash);
      } catch (e) { /* a file: URL may refuse: the filter still works */ }
    }
  }
  var params = new URLSearchParams(window.location.search);
  if (hasOption(verdict, params.get('verdict') || '')) { verdict.value = params.get('verdict') || ''; }
  if (hasOption(paper, params.get('paper') || '')) { paper.value = params.get('paper') || ''; }
  if (hasOption(sort, params.get('sort') || 'paper')) { sort.value = params.get('sort') || 'paper'; }
  text.value = params.get('q') || '';
  [verdict, paper, sort].forEach(function (el) { el.addEventListener('change', function () { apply(true); }); });
  text.addEventListener('input', function () { apply(true); });
  document.getElementById('f-reset').addEventListener('click', function () {
    verdict.value = ''; paper.value = ''; text.value = ''; sort.value = 'paper'; apply(true);
  });
  form.hidden = false;
  apply(false);
})();
"""
