"""`fedcheck report` reuses cached results (a second identical run re-runs nothing) and validates its cache options."""

import pytest

from fedcheck.cli import main


def test_a_second_report_reuses_the_cache(tmp_path, monkeypatch, capsys):
    cache = tmp_path / "cache"
    args = ["report", "--only", "dp.gaussian_zcdp", "--quiet", "--cache-dir", str(cache)]
    assert main(args + ["--out", str(tmp_path / "a")]) == 0
    assert list(cache.glob("dp.gaussian_zcdp.ci.*.pkl"))
    calls = []
    monkeypatch.setattr("verify.runner.run_claim", lambda claim, ctx: calls.append(claim.id))
    assert main(args + ["--out", str(tmp_path / "b")]) == 0
    assert calls == []
    assert (tmp_path / "a" / "results.json").read_text().count('"verdict"') == \
        (tmp_path / "b" / "results.json").read_text().count('"verdict"')


@pytest.mark.parametrize("extra, match", [
    (["--no-cache", "--cache-dir", "x"], "--cache-dir"),
])
def test_cache_options_exit_2_naming_the_option(tmp_path, capsys, extra, match):
    with pytest.raises(SystemExit) as stop:
        main(["report", "--only", "dp.gaussian_zcdp", "--out", str(tmp_path / "o"), *extra])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and match in err[0]


def test_a_file_as_cache_dir_exits_2(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("user data")
    with pytest.raises(SystemExit) as stop:
        main(["report", "--only", "dp.gaussian_zcdp", "--out", str(tmp_path / "o"), "--cache-dir", str(f)])
    assert stop.value.code == 2 and f.read_text() == "user data"
