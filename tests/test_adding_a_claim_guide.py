"""docs/adding-a-claim.md builds a toy paper from its own code blocks: the guide cannot rot.

Every fenced ``python`` block of the guide whose first line is ``# toy/<file>.py`` is written into a package ``toy``
in a temporary directory; the tests import it and run what the guide says a claim must do.
"""

from __future__ import annotations

import dataclasses
import importlib
import pathlib
import re
import sys

import pytest

from verify.harness import swapped, validate_families
from verify.records import CheckContext, Verdict
from verify.registry import validate_registry
from verify.runner import run_claim

GUIDE = pathlib.Path(__file__).resolve().parents[1] / "docs" / "adding-a-claim.md"
_BLOCK = re.compile(r"```python\n(# (toy/[a-z0-9_]+\.py)\n.*?)```", re.S)


def guide_files(text: str) -> dict[str, str]:
    """``{relative path: source}`` of the guide's toy-package blocks (ValueError if a file appears twice)."""
    files: dict[str, str] = {}
    for source, path in _BLOCK.findall(text):
        if path in files:
            raise ValueError(f"{path} appears twice in the guide")
        files[path] = source
    return files


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """The toy package written from the guide and put on ``sys.path`` (removed again afterwards)."""
    root = tmp_path_factory.mktemp("guide")
    files = guide_files(GUIDE.read_text())
    (root / "toy").mkdir()
    (root / "toy" / "__init__.py").write_text('"""The toy paper of docs/adding-a-claim.md."""\n')
    for path, source in files.items():
        (root / path).write_text(source)
    sys.path.insert(0, str(root))
    try:
        yield {name: importlib.import_module(f"toy.{pathlib.Path(name).stem}") for name in files}
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == "toy" or m.startswith("toy.")]:
            del sys.modules[name]


def test_the_guide_holds_every_file_it_describes():
    """The guide's code blocks are the files its table names."""
    assert set(guide_files(GUIDE.read_text())) == {"toy/theory.py", "toy/algorithm.py", "toy/lemma1.py",
                                                   "toy/test_lemma1.py", "toy/_design.py", "toy/figure1.py"}


def test_a_file_written_twice_is_refused():
    block = "```python\n# toy/a.py\nx = 1\n```\n"
    with pytest.raises(ValueError, match="toy/a.py appears twice"):
        guide_files(block + block)


def test_the_toy_claims_pass_the_registry_rules(toy):
    claims = [*toy["toy/lemma1.py"].CLAIMS, *(e.claim for e in toy["toy/figure1.py"].EXPERIMENTS)]
    validate_registry(claims)
    validate_families(toy["toy/figure1.py"].EXPERIMENTS)
    assert [c.id for c in claims] == ["toy.lemma1", "toy.figure1_small_step"]


def test_the_closed_form_claim_is_confirmed_and_tight_at_its_hardest_points(toy):
    (claim,) = toy["toy/lemma1.py"].CLAIMS
    result = run_claim(claim, CheckContext(profile="ci", seed=0))
    assert result.verdict is claim.expected is Verdict.CONFIRMED, result.summary
    tightness = result.details["tightness"]
    assert tightness["hard_points"]["ratio"] == pytest.approx(1.0, abs=1e-9)
    assert tightness["nearly_tight"] is True


def test_a_wrong_closed_form_is_refuted(toy):
    lemma1, theory = toy["toy/lemma1.py"], toy["toy/theory.py"]
    result = lemma1.check_lemma1(CheckContext(profile="ci", seed=0),
                                 factor=lambda step, mu, L: 0.9 * theory.contraction_factor(step, mu, L))
    assert result.verdict is Verdict.REFUTED
    assert result.counterexample


def test_the_property_test_is_bound_to_its_claim_and_passes(toy):
    test = toy["toy/test_lemma1.py"].test_lemma1_attained_on_the_extreme_eigenvector
    marks = [m for m in getattr(test, "pytestmark", []) if m.name == "claim"]
    assert [m.args for m in marks] == [("toy.lemma1",)]
    test()  # Hypothesis runs its examples; a violated property raises here


def test_the_doctest_of_the_closed_form_passes(toy):
    import doctest

    failures, tried = doctest.testmod(toy["toy/theory.py"])
    assert tried >= 1 and failures == 0


def test_the_experiment_claim_reaches_its_verdict_and_its_swap_does_not_confirm(toy):
    (declared,) = toy["toy/figure1.py"].EXPERIMENTS
    ctx = CheckContext(profile="ci", seed=0)
    result = run_claim(declared.claim, ctx)
    assert result.verdict is declared.expected is Verdict.CONFIRMED, result.summary
    flipped = dataclasses.replace(declared, statements=tuple(swapped(s) for s in declared.statements))
    assert flipped.check(ctx).verdict is not Verdict.CONFIRMED
