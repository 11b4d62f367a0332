"""Output safety of ``fedcheck report`` (issue 12): fedcheck writes only files it owns, lists them in a
manifest, never glob-deletes, writes to temporary names and renames, and an interrupted or failed write
leaves the previous report intact."""

from __future__ import annotations

import json

import pytest

from fedcheck import cli
from reports.build import MANIFEST, OutputError, build_report, prepare_out_dir
from tests.reports.test_build import META, _claim, _figure, toy_records
from verify.records import CheckResult, Verdict


def _snapshot(out):
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _records(figure_names=("curve",)):
    claims = [_claim("toy.ok")]
    results = [CheckResult(claim_id="toy.ok", verdict=Verdict.CONFIRMED, summary="holds",
                           figures=tuple(_figure(n) for n in figure_names))]
    return claims, results


def test_manifest_lists_what_fedcheck_wrote_and_user_files_survive(tmp_path):
    out = tmp_path / "report"
    (out / "figures").mkdir(parents=True)
    (out / "notes.txt").write_text("mine")
    (out / "figures" / "plot.png").write_bytes(b"user png")
    build_report(*_records(("curve", "zoom")), out, META)
    manifest = json.loads((out / MANIFEST).read_text())["files"]
    assert manifest == sorted(["index.html", "results.json", "figures/toy.ok__curve.png", "figures/toy.ok__zoom.png"])
    # A second run that no longer draws "zoom" deletes only that owned figure.
    build_report(*_records(("curve",)), out, META)
    assert not (out / "figures" / "toy.ok__zoom.png").exists()
    assert (out / "figures" / "toy.ok__curve.png").is_file()
    assert (out / "notes.txt").read_text() == "mine" and (out / "figures" / "plot.png").read_bytes() == b"user png"
    assert not [p for p in out.rglob("*") if ".tmp" in p.name]


def test_a_users_file_with_a_figure_name_is_never_deleted_or_overwritten(tmp_path):
    out = tmp_path / "report"
    (out / "figures").mkdir(parents=True)
    user = out / "figures" / "toy.ok__curve.png"
    user.write_bytes(b"user figure")
    with pytest.raises(OutputError, match="did not write"):
        build_report(*_records(), out, META)
    assert user.read_bytes() == b"user figure"


@pytest.mark.parametrize("name", ["index.html", "results.json"])
def test_foreign_index_or_results_is_refused(tmp_path, name):
    (tmp_path / name).write_text("user content")
    with pytest.raises(OutputError, match=name):
        prepare_out_dir(tmp_path)
    assert (tmp_path / name).read_text() == "user content"


def test_a_legacy_report_without_manifest_is_owned_through_its_results_json(tmp_path):
    out = tmp_path / "report"
    build_report(*_records(("curve", "zoom")), out, META)
    (out / MANIFEST).unlink()  # a report written before the manifest existed
    build_report(*_records(("curve",)), out, META)
    assert not (out / "figures" / "toy.ok__zoom.png").exists()


@pytest.mark.parametrize("where", ["render_figure", "render_html"])
@pytest.mark.parametrize("error", [KeyboardInterrupt, OSError(27, "File too large")])
def test_an_interrupted_write_leaves_the_previous_report_intact(tmp_path, monkeypatch, where, error):
    out = tmp_path / "report"
    claims, results = _records(("curve", "zoom"))
    build_report(claims, results, out, META)
    before = _snapshot(out)

    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(f"reports.build.{where}", fail)
    with pytest.raises(type(error) if isinstance(error, BaseException) else error):
        build_report(claims, results, out, {**META, "seed": 99})
    assert _snapshot(out) == before  # same files, same bytes, no temporaries left
    json.loads((out / "results.json").read_text())


def test_report_command_maps_a_failed_write_to_one_line_and_keeps_the_old_report(tmp_path, monkeypatch, capsys):
    claims, results = _records()
    monkeypatch.setattr("verify.registry.select_claims", lambda prefixes: claims)
    monkeypatch.setattr("verify.runner.run_claims", lambda claims, ctx, on_done=None, **kw: results)
    assert cli.main(["report", "--quiet", "--out", str(tmp_path)]) == 0
    before = _snapshot(tmp_path)

    def full(*args, **kwargs):
        raise OSError(27, "File too large")

    monkeypatch.setattr("reports.build.render_html", full)
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        cli.main(["report", "--quiet", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and "--out" in err and "File too large" in err
    assert _snapshot(tmp_path) == before


def test_json_output_of_report_is_strict(tmp_path, monkeypatch, capsys):
    claims, results = toy_records()
    monkeypatch.setattr("verify.registry.select_claims", lambda prefixes: claims)
    monkeypatch.setattr("verify.runner.run_claims", lambda claims, ctx, on_done=None, **kw: results)
    assert cli.main(["report", "--quiet", "--json", "--out", str(tmp_path)]) == 1  # toy.boom errored
    json.loads(capsys.readouterr().out, parse_constant=lambda t: pytest.fail(f"non-JSON constant {t}"))


def test_ctrl_c_during_the_checks_exits_130_and_keeps_the_old_report(tmp_path, monkeypatch, capsys):
    claims, results = _records()
    monkeypatch.setattr("verify.registry.select_claims", lambda prefixes: claims)
    monkeypatch.setattr("verify.runner.run_claims", lambda claims, ctx, on_done=None, **kw: results)
    assert cli.main(["report", "--quiet", "--out", str(tmp_path)]) == 0
    before = _snapshot(tmp_path)

    def interrupted(claims, ctx, on_done=None, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr("verify.runner.run_claims", interrupted)
    capsys.readouterr()
    assert cli.main(["report", "--quiet", "--out", str(tmp_path)]) == 130  # 128 + SIGINT
    assert capsys.readouterr().err == "fedcheck: interrupted\n"
    assert _snapshot(tmp_path) == before


def test_a_users_file_that_appears_while_the_report_is_written_is_not_replaced(tmp_path, monkeypatch):
    """The directory is checked before the figures are drawn and the files are renamed after: a file a user created
    in between was replaced. A name fedcheck did not own is now taken with a hard link, which fails if it exists."""
    import reports.build as build

    out = tmp_path / "report"
    real = build.render_figure
    user = out / "figures" / "toy.ok__curve.png"

    def render_and_someone_writes(spec, path):
        rendered = real(spec, path)
        user.write_bytes(b"user figure")
        return rendered

    build_report(*_records(("zoom",)), out, META)       # a previous report, which must stay as it was
    before = _snapshot(out)
    monkeypatch.setattr(build, "render_figure", render_and_someone_writes)
    with pytest.raises(OutputError, match="appeared while the report was written"):
        build_report(*_records(("curve", "zoom")), out, META)
    assert user.read_bytes() == b"user figure"
    assert {k: v for k, v in _snapshot(out).items() if k != "figures/toy.ok__curve.png"} == before
    assert not [p for p in out.rglob("*") if ".tmp" in p.name]
