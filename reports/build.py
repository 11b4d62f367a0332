"""Build the report directory: index.html, results.json and figures/*.png."""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from reports.figures import render_figure
from reports.html import render_html
from verify.records import CheckResult, Claim

__all__ = ["DEFAULT_OUT_DIR", "SCHEMA", "build_report", "results_document"]

DEFAULT_OUT_DIR = Path("reports") / "out"
#: Identifier of the results.json layout documented in README.md.
SCHEMA = "fedcheck.results/1"


def _version() -> str:
    try:
        return metadata.version("fedcheck")
    except metadata.PackageNotFoundError:
        return "unknown"


def _figure_file(claim_id: str, name: str) -> str:
    """Unique per (claim, figure): claim ids are unique and figure names unique within a result."""
    return f"figures/{claim_id}__{name}.png"


def results_document(
    claims: Sequence[Claim], results: Sequence[CheckResult], meta: Mapping[str, Any]
) -> dict[str, Any]:
    """The results.json document (figure paths are relative to the report directory)."""
    by_id = {c.id: c for c in claims}
    return {
        **meta,
        "schema": SCHEMA,
        "fedcheck_version": _version(),
        "claims": [by_id[r.claim_id].to_json() for r in results],
        "results": [r.to_json({f.name: _figure_file(r.claim_id, f.name) for f in r.figures}) for r in results],
    }


def build_report(
    claims: Sequence[Claim],
    results: Sequence[CheckResult],
    out_dir: Path,
    meta: Mapping[str, Any],
) -> dict[str, Any]:
    """Write ``out_dir/index.html``, ``out_dir/results.json`` and ``out_dir/figures/*.png``.

    Returns the results document. ``meta`` (profile, seed, executor, ...) is copied into both.
    """
    out_dir = Path(out_dir)
    figure_dir = out_dir / "figures"
    figure_dir.mkdir(parents=True, exist_ok=True)
    for stale in figure_dir.glob("*__*.png"):  # figures of an earlier run (possibly other claims)
        stale.unlink()
    meta = {"generated_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), **meta}
    document = results_document(claims, results, meta)
    # results.json first: a plotting failure must not lose the results.
    (out_dir / "results.json").write_text(json.dumps(document, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    figure_paths: dict[str, dict[str, str]] = {}
    for result in results:
        for spec in result.figures:
            rel = _figure_file(result.claim_id, spec.name)
            render_figure(spec, out_dir / rel)
            figure_paths.setdefault(result.claim_id, {})[spec.name] = rel
    (out_dir / "index.html").write_text(render_html(claims, results, figure_paths, meta), encoding="utf-8")
    return document
