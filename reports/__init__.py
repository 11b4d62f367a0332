"""Report builder: renders CheckResult records as HTML, JSON and PNG figures under reports/out/."""

from reports.build import DEFAULT_OUT_DIR, build_report, results_document

__all__ = ["DEFAULT_OUT_DIR", "build_report", "results_document"]
