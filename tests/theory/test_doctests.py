"""Run the doctests of every theory module (each checks a defining property, not a pasted number)."""

import doctest
import importlib
import pkgutil

import pytest

import theory

MODULES = sorted(m.name for m in pkgutil.walk_packages(theory.__path__, prefix="theory."))


@pytest.mark.parametrize("name", MODULES)
def test_doctests_pass(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
