"""Report builder: renders CheckResult records as HTML, JSON and PNG figures under reports/out/."""

from reports.build import DEFAULT_OUT_DIR, MANIFEST, OutputError, build_report, prepare_out_dir, results_document

__all__ = ["DEFAULT_OUT_DIR", "MANIFEST", "OutputError", "build_report", "prepare_out_dir", "results_document"]
