"""`fedcheck report --data NAME=PATH`: real data sets from the user's files, validated before any check runs,
recorded in results.json, and part of the cache key of the claims that read them."""

import json

import numpy as np
import pytest

from fedcheck.cli import main
from reference_impl.datasets import synthetic_organ_arrays


@pytest.fixture()
def organ_file(tmp_path):
    path = tmp_path / "organamnist.npz"
    np.savez(path, **synthetic_organ_arrays(np.random.default_rng(0), side=4, train_per_class=2, test_per_class=1))
    return path


def test_the_file_is_recorded_in_results_json(tmp_path, organ_file):
    out = tmp_path / "o"
    assert main(["report", "--only", "dp.gaussian_zcdp", "--quiet", "--no-cache", "--out", str(out),
                 "--data", f"medmnist={organ_file}"]) == 0
    meta = json.loads((out / "results.json").read_text())["data"]
    assert meta["medmnist"]["path"] == str(organ_file.resolve()) and len(meta["medmnist"]["sha256"]) == 64


@pytest.mark.parametrize("value, match", [
    ("organamnist.npz", "NAME=PATH"),                     # no name
    ("cifar=x.npz", "NAME must be one of"),               # unknown name
    ("medmnist=", "NAME=PATH"),                           # no path
    ("medmnist={missing}", "existing .npz"),              # absent file
    ("medmnist={text}", "not an .npz"),                   # not a zip archive
    ("mnist={organ}", "must contain arrays x_train"),     # the wrong layout for the name
])
def test_bad_data_exits_2_with_one_line_naming_the_option(tmp_path, capsys, organ_file, value, match):
    text = tmp_path / "notes.txt"
    text.write_text("user notes")
    value = value.format(missing=tmp_path / "absent.npz", text=text, organ=organ_file)
    with pytest.raises(SystemExit) as stop:
        main(["report", "--only", "dp.gaussian_zcdp", "--out", str(tmp_path / "o"), "--data", value])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--data" in err[0] and match in err[0]
    assert text.read_text() == "user notes" and not (tmp_path / "o").exists()


def test_the_same_name_twice_exits_2(tmp_path, capsys, organ_file):
    with pytest.raises(SystemExit) as stop:
        main(["report", "--only", "dp.gaussian_zcdp", "--out", str(tmp_path / "o"),
              "--data", f"medmnist={organ_file}", "--data", f"medmnist={organ_file}"])
    assert stop.value.code == 2 and "given twice" in capsys.readouterr().err


def test_nan_pixels_exit_2_before_any_check_runs(tmp_path, capsys):
    """A data file with NaN pixels is refused with one line naming --data and the array, and no report is written
    (it used to be accepted and end as an 'error' verdict with a traceback in results.json, exit 1)."""
    arrays = synthetic_organ_arrays(np.random.default_rng(0), side=4, train_per_class=2, test_per_class=1)
    images = arrays["train_images"].astype(float)
    images[0, 0, 0] = np.nan
    arrays["train_images"] = images
    path = tmp_path / "organ.npz"
    np.savez(path, **arrays)
    with pytest.raises(SystemExit) as stop:
        main(["report", "--only", "pgfl.experiment_o1", "--out", str(tmp_path / "o"), "--data", f"medmnist={path}"])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(err) == 1
    assert "argument --data" in err[0] and "train_images must be finite" in err[0]
    assert not (tmp_path / "o").exists()
