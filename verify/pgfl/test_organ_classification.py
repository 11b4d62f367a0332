"""Property tests of the MedMNIST experiments O-1 (docs/papers/pgfl.md#exp-o)/O-2 (docs/papers/pgfl.md#exp-o)
(verify.pgfl.organ_classification)."""

import numpy as np
import pytest
from hypothesis import example, given, settings

from reference_impl.datasets import synthetic_organ_arrays
from verify.budget import examples
from verify.pgfl.organ_classification import O1, O2
from verify.records import CheckContext, Verdict
from verify.strategies import pgfl_classification_root_seeds


@pytest.fixture(scope="module")
def organ_file(tmp_path_factory):
    """A small OrganAMNIST-shaped file (8 x 8 images: d = 64 keeps one ci check near ten seconds)."""
    path = tmp_path_factory.mktemp("organ") / "organamnist.npz"
    np.savez(path, **synthetic_organ_arrays(np.random.default_rng(0), side=8))
    return str(path)


@pytest.mark.claim("pgfl.experiment_o1")
@pytest.mark.claim("pgfl.experiment_o2")
@settings(max_examples=examples("most"))
@given(seed=pgfl_classification_root_seeds())
@example(seed=0)
def test_without_the_file_the_claims_name_the_deciding_command(seed):
    """Property: without the user's OrganAMNIST file (fedcheck downloads nothing) O-1 (docs/papers/pgfl.md#exp-o) and
    O-2 (docs/papers/pgfl.md#exp-o) are not_checkable and their summary names the command that decides them."""
    ctx = CheckContext(profile="ci", seed=seed)
    for check, claim_id in ((O1.check, "pgfl.experiment_o1"), (O2.check, "pgfl.experiment_o2")):
        result = check(ctx)
        assert result.verdict is Verdict.NOT_CHECKABLE
        assert f"--only {claim_id}" in result.summary and "--data medmnist=" in result.summary


@pytest.mark.claim("pgfl.experiment_o1")
@pytest.mark.claim("pgfl.experiment_o2")
@settings(max_examples=examples("one"))
@given(seed=pgfl_classification_root_seeds())
@example(seed=0)
def test_with_a_file_the_claims_are_decided_on_its_data_and_never_refuted(organ_file, seed):
    """Property: with an OrganAMNIST-layout file the statements are decided by the experiment harness on its data
    (intervals over paired replicates, figures drawn), and never refuted, since the decisive regime (no privacy
    noise) is outside the paper's setting."""
    ctx = CheckContext(profile="ci", seed=seed, data={"medmnist": organ_file})
    for check in (O1.check, O2.check):
        result = check(ctx)
        assert result.verdict in (Verdict.CONFIRMED, Verdict.NOT_CHECKABLE)
        assert result.monte_carlo is not None and result.monte_carlo.n >= 16   # the first stage: 16 replicates
        assert result.figures
