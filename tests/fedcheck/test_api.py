"""The public API: the doctests of ``docs/api.md`` and ``fedcheck/api.py`` run, and bad arguments are refused."""

from __future__ import annotations

import doctest
import pathlib

import pytest

from fedcheck import api

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_api_guide_doctests_pass():
    failures, tried = doctest.testfile(str(ROOT / "docs" / "api.md"), module_relative=False,
                                       optionflags=doctest.NORMALIZE_WHITESPACE)
    assert tried > 20 and failures == 0


def test_module_doctests_pass():
    failures, tried = doctest.testmod(api, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert tried >= 4 and failures == 0


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="name must be a shipped example"):
        api.example("nope.toml")
    with pytest.raises(ValueError, match="instance must be a PAOFedInstance"):
        api.msd(object())
    inst = api.load_config(api.example("paofed_reference.toml"))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        api.run(inst, 0)


def test_run_result_prints_briefly():
    r = api.RunResult(paper="paofed", document={"status": "ok", "curve_db": [0.0] * 2001, "runs": 1})
    assert repr(r) == "RunResult(paper='paofed', status='ok', curve_db=<2001 values>, runs=1)"
