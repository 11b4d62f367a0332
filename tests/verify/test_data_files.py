"""verify.data_files and the cache key of claims that read a user's data file."""

import numpy as np
import pytest

from reference_impl.datasets import synthetic_organ_arrays
from verify.cache import ResultCache
from verify.data_files import deciding_command, fingerprint, parse_data_option
from verify.records import CheckContext, CheckResult, Citation, Claim, Verdict
from verify.registry import all_claims


def test_parse_names_the_allowed_sets():
    assert parse_data_option("mnist=a/b.npz")[0] == "mnist"
    with pytest.raises(ValueError, match="mnist, medmnist"):
        parse_data_option("cifar=x.npz")


def test_the_context_and_the_claim_refuse_unknown_data_names():
    with pytest.raises(ValueError, match="data: names must be among"):
        CheckContext(data={"cifar": "x.npz"})
    with pytest.raises(ValueError, match="data_files must be among"):
        Claim(id="x.y", title="t", citations=(Citation(label="L", external="a test"),), statement="s", hypotheses=(),
              check=print, expected=Verdict.CONFIRMED, reason="r", data_files=("cifar",))


def test_the_cache_key_follows_the_file_contents(tmp_path):
    claim = next(c for c in all_claims() if "medmnist" in c.data_files)
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    np.savez(a, **synthetic_organ_arrays(np.random.default_rng(0), side=4, train_per_class=2, test_per_class=1))
    np.savez(b, **synthetic_organ_arrays(np.random.default_rng(1), side=4, train_per_class=2, test_per_class=1))
    assert fingerprint(a) != fingerprint(b)
    cache = ResultCache(tmp_path / "cache")
    result = CheckResult(claim_id=claim.id, verdict=Verdict.NOT_CHECKABLE, summary="s")
    cache.put(claim, "ci", 0, result, {"medmnist": str(a)})
    assert cache.get(claim, "ci", 0, {"medmnist": str(a)}) is not None
    assert cache.get(claim, "ci", 0, {"medmnist": str(b)}) is None      # another file: a miss
    assert cache.get(claim, "ci", 0, {}) is None                        # no file: a miss


def test_the_deciding_command_names_the_claim_and_the_file():
    assert deciding_command("pgfl.experiment_o1", "medmnist").endswith("--data medmnist=PATH/TO/organamnist.npz")


def _organ(tmp_path, **change):
    arrays = synthetic_organ_arrays(np.random.default_rng(0), side=4, train_per_class=2, test_per_class=1)
    arrays.update(change)
    path = tmp_path / "organ.npz"
    np.savez(path, **arrays)
    return path


@pytest.mark.parametrize(("change", "match"), [
    (lambda a: {"train_images": np.where(np.arange(a["train_images"].size).reshape(a["train_images"].shape) == 5,
                                         np.nan, a["train_images"].astype(float))}, "train_images must be finite"),
    (lambda a: {"test_images": np.full(a["test_images"].shape, np.inf)}, "test_images must be finite"),
    (lambda a: {"train_labels": a["train_labels"][:-1]}, "one label each"),
    (lambda a: {"test_labels": a["test_labels"] + 20}, "test_labels must hold labels in 0..10"),
    (lambda a: {"train_images": a["train_images"] + 0j}, "real numbers"),
])
def test_a_data_file_is_checked_before_any_claim_reads_it(tmp_path, change, match):
    """NaN or infinite pixels, a label per image, labels of the data set's classes, non-empty: refused with the
    array's key in the file (a claim would otherwise end as an error with a traceback in results.json)."""
    from verify.data_files import load

    base = synthetic_organ_arrays(np.random.default_rng(0), side=4, train_per_class=2, test_per_class=1)
    path = _organ(tmp_path, **change(base))
    with pytest.raises(ValueError, match=match):
        load("medmnist", path)


def test_a_valid_data_file_loads(tmp_path):
    from verify.data_files import load

    X_train, y_train, X_test, y_test = load("medmnist", _organ(tmp_path))
    assert X_train.shape[0] == y_train.shape[0] and np.all(np.isfinite(X_test)) and y_test.max() <= 10
