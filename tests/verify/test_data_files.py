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
        Claim(id="x.y", title="t", citations=(Citation(label="L", external="a test"),), statement="s", hypotheses=(), check=print,
              expected=Verdict.CONFIRMED, reason="r", data_files=("cifar",))


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
