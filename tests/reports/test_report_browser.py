"""The report as a reader sees it in a browser: headless Chromium opens a small report (a claim of each verdict).

Checked through Chromium's own DOM (``--dump-dom`` after the page's scripts ran): the formulas are inline SVG, the
filter runs (its controls shown, the rows a query-string filter selects, the counts), and, measured by a page that
loads the report in a 1440-px-wide frame, every card of each kind is laid out at desktop width without horizontal
overflow, no badge wraps onto two lines and every figure loads. A screenshot at 1440 x 2000 is written next to the
report for a person to look at. Skipped, with the reason, when Chromium is not installed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from reports.build import build_report
from verify.records import CheckResult, Citation, Claim, Evidence, FigureSpec, Series, Verdict

CHROMIUM = next((p for p in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser"),
                             shutil.which("google-chrome")) if p and Path(p).is_file()), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None,
                                reason="headless Chromium is not installed (apt-get install chromium)")
SEED = "004_180cd372987d137b.txt"


def _check(ctx):  # pragma: no cover - never run: the results are given
    raise AssertionError


def _reproduce(counterexample):  # pragma: no cover - never run
    return Evidence(measured=2.0, bound=1.0, holds=False)


def _claim(cid, expected, **kw):
    return Claim(id=cid, title=kw.pop("title", f"Title of {cid}"),
                 citations=(Citation(seed=SEED, label="Chapter 3 Theorem I", equation="(3.12)", lines="601-604"),),
                 statement=kw.pop("statement", r"Releasing $q(D) + \mathcal{N}(0, \sigma^2 I)$ is "
                                               r"$\rho$-zCDP with $\rho = \Delta^2/(2\sigma^2)$."),
                 hypotheses=(r"$\sigma > 0$", r"$\Delta \ge 0$"), check=_check, expected=expected, reason="why", **kw)


def _figure(name, offset=0.0):
    return FigureSpec(name=name, title=r"Rényi divergence vs $\alpha\rho$", xlabel=r"order $\alpha$",
                      ylabel=r"$D_\alpha$", series=(
                          Series(label=r"$\alpha\rho$", x=(1, 2, 4, 8), y=(0.5 + offset, 1, 2, 4), group="a"),
                          Series(label="quadrature", x=(1, 2, 4, 8), y=(0.5 + offset, 1, 2, 4), style="points",
                                 group="a")))


def small_report(out: Path) -> Path:
    """Two papers, a claim of each verdict, math in the texts, a figure shared by two claims."""
    claims = [
        _claim("dp.ok", Verdict.CONFIRMED, title=r"Gaussian mechanism: $\rho = \Delta^2/(2\sigma^2)$-zCDP"),
        _claim("dp.bad", Verdict.REFUTED, reproduce=_reproduce, severity="false",
               uncorrected_because="no correction keeps the use"),
        _claim("gtv.open", Verdict.NOT_CHECKABLE, title="Table I: a claim without a bound"),
        _claim("gtv.boom", Verdict.CONFIRMED, title="A check that raised"),
        _claim("gtv.same", Verdict.CONFIRMED, title="Digits figure shared with another claim"),
    ]
    results = [
        CheckResult(claim_id="dp.ok", verdict=Verdict.CONFIRMED, summary=r"$D_\alpha = \alpha\rho$ at all orders",
                    measured=0.03, bound=1.0, margin=0.97, runtime_s=1.31, figures=(_figure("renyi"),)),
        CheckResult(claim_id="dp.bad", verdict=Verdict.REFUTED, summary="violated at 2 of 60 points",
                    measured=1.179, bound=1.0, margin=-0.179, counterexample={"epsilon": 0.5, "rounds": 2},
                    runtime_s=0.8, figures=(_figure("violation", 1.0),)),
        CheckResult(claim_id="gtv.open", verdict=Verdict.NOT_CHECKABLE, summary="needs MNIST from a local file",
                    runtime_s=0.0),
        CheckResult(claim_id="gtv.boom", verdict=Verdict.ERROR, summary="check raised ValueError: x",
                    error="Traceback (most recent call last):\nValueError: x", runtime_s=0.2),
        CheckResult(claim_id="gtv.same", verdict=Verdict.CONFIRMED, summary="holds", measured=-0.0, bound=0.0,
                    margin=0.0, runtime_s=12.5, figures=(_figure("renyi"),)),
    ]
    build_report(claims, results, out, {"profile": "ci", "seed": 0, "executor": "serial", "only": [], "data": {}})
    return out / "index.html"


def _chromium(*args: str, timeout: float = 120.0) -> str:
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--mute-audio",
               "--no-first-run", "--disable-extensions", "--virtual-time-budget=8000", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


class Rows(HTMLParser):
    """The index rows of a DOM dump: (claim id, hidden?) and the filter's count text."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.rows, self.count, self.form_hidden, self._in_count, self._row = [], "", None, False, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and "data-verdict" in a:
            self._row = ["", "hidden" in a]
            self.rows.append(self._row)
        if tag == "a" and self._row is not None and not self._row[0]:
            self._row[0] = a.get("href", "").lstrip("#")
        if tag == "span" and a.get("id") == "f-count":
            self._in_count = True
        if tag == "form" and a.get("id") == "claim-filter":
            self.form_hidden = "hidden" in a

    def handle_endtag(self, tag):
        if tag == "span":
            self._in_count = False
        if tag == "tr":
            self._row = None

    def handle_data(self, data):
        if self._in_count:
            self.count += data


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return small_report(tmp_path_factory.mktemp("browser") / "report")


def test_math_is_rendered_and_the_filter_runs(report):
    dom = _chromium("--dump-dom", report.as_uri())
    assert dom.count('<svg class="math"') >= 6 and '<code class="tex">' not in dom
    page = Rows(dom)
    assert page.form_hidden is False  # the script ran and showed its controls
    assert len(page.rows) == 5 and not any(hidden for _, hidden in page.rows)
    assert page.count.startswith("showing 5 of 5 claims")


@pytest.mark.parametrize(("query", "shown"), [
    ("verdict=refuted", {"dp.bad"}),
    ("paper=gtv", {"gtv.open", "gtv.boom", "gtv.same"}),
    ("q=mnist", {"gtv.open"}),
    ("paper=gtv&verdict=confirmed", {"gtv.same"}),
    ("q=zcdp+gaussian", {"dp.ok"}),
])
def test_a_filter_in_the_query_string_selects_the_rows(report, query, shown):
    page = Rows(_chromium("--dump-dom", f"{report.as_uri()}?{query}"))
    assert {cid for cid, hidden in page.rows if not hidden} == shown
    assert page.count.startswith(f"showing {len(shown)} of 5 claims")


def test_most_expensive_first_order(report):
    page = Rows(_chromium("--dump-dom", f"{report.as_uri()}?sort=runtime"))
    assert [cid for cid, _ in page.rows][:2] == ["gtv.same", "dp.ok"]


_PROBE = """<!DOCTYPE html><html><body style="margin:0"><iframe id="f" src="index.html" width="1440" height="30000"
style="border:0"></iframe><pre id="layout"></pre><script>
document.getElementById('f').addEventListener('load', function () {
  var d = this.contentDocument, w = this.contentWindow, out = {cards: {}, badges: [], images: []};
  out.scrollWidth = d.documentElement.scrollWidth; out.innerWidth = w.innerWidth;
  d.querySelectorAll('.card').forEach(function (c) {
    var r = c.getBoundingClientRect(), b = c.querySelector('h3 .badge');
    out.cards[c.id] = {left: r.left, right: r.right, height: r.height, verdict: b ? b.className : ''};
  });
  d.querySelectorAll('.badge').forEach(function (b) {
    out.badges.push([b.textContent, b.getBoundingClientRect().height, parseFloat(w.getComputedStyle(b).lineHeight)
      || parseFloat(w.getComputedStyle(b).fontSize) * 1.5]);
  });
  Array.prototype.forEach.call(d.images, function (i) { out.images.push([i.complete, i.naturalWidth, i.width]); });
  document.getElementById('layout').textContent = JSON.stringify(out);
});
</script></body></html>
"""


def test_every_kind_of_card_is_laid_out_at_desktop_width(report):
    probe = report.parent / "layout_probe.html"
    probe.write_text(_PROBE, encoding="utf-8")
    dom = _chromium("--allow-file-access-from-files", "--window-size=1460,2000", "--dump-dom", probe.as_uri())
    found = re.search(r'<pre id="layout">(.*?)</pre>', dom, re.DOTALL)
    assert found and found.group(1).strip(), "the layout probe did not run"
    layout = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<")
                        .replace("&gt;", ">"))
    assert layout["scrollWidth"] <= layout["innerWidth"], "the page scrolls sideways at 1440 px"
    kinds = {card["verdict"].split()[-1] for card in layout["cards"].values()}
    assert kinds == {"confirmed", "refuted", "not_checkable", "error"}
    for cid, card in layout["cards"].items():
        assert 0 <= card["left"] < card["right"] <= layout["innerWidth"] and card["height"] > 50, (cid, card)
    heights = [h for _, h, _ in layout["badges"]]
    assert max(heights) < 1.5 * min(heights), layout["badges"]  # "not checkable" on one line like the others
    assert layout["images"] and all(done and natural > 0 and shown > 0 for done, natural, shown in layout["images"])


def test_screenshot_at_desktop_width(report):
    shot = report.parent / "screenshot.png"
    _chromium(f"--screenshot={shot}", "--window-size=1440,2000", report.as_uri())
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
