"""fedcheck's pytest plug-in: what ``pytest --pyargs verify`` needs wherever fedcheck is installed.

Registered as a ``pytest11`` entry point (``pyproject.toml``), so it loads in a researcher's own project as well as
in this repository, with no ``conftest.py`` or ``pyproject.toml`` of fedcheck's in sight:

* the markers ``claim(claim_id)`` (binds a property test to the registry claim it checks) and ``slow`` (long
  Monte-Carlo runs), so ``--strict-markers`` passes;
* the Hypothesis profiles ``ci`` (derandomized, no example database, no deadline; what ``make test`` uses), ``dev``
  (random, no deadline) and ``thorough`` (2,000 examples; report-sized runs), selected with
  ``--hypothesis-profile=NAME``; without the option the profile is ``dev``, or ``$HYPOTHESIS_PROFILE``;
* ``slow`` tests are skipped unless asked for: ``-m slow`` (any ``-m`` expression that names ``slow``) or
  ``--run-slow``;
* nothing is written into the user's directory by fedcheck: no profile keeps a Hypothesis example database, and
  Hypothesis's storage (``.hypothesis/``, where it also caches constants) and the result cache of
  :mod:`verify.cache` go to private temporary directories, removed at the end of the session, unless
  ``$HYPOTHESIS_STORAGE_DIRECTORY`` / ``$FEDCHECK_CACHE_DIR`` name others. (pytest's own ``.pytest_cache`` is
  pytest's: ``-p no:cacheprovider`` turns it off.)
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

__all__ = ["PROFILES", "register_profiles"]

#: The Hypothesis profiles: name -> settings. ``max_examples`` sets the example budgets of :mod:`verify.budget`.
PROFILES = {
    "ci": dict(derandomize=True, database=None, deadline=None, max_examples=100, print_blob=True),
    "dev": dict(database=None, deadline=None, max_examples=100),
    "thorough": dict(database=None, deadline=None, max_examples=2000, print_blob=True),
}

_MARKERS = (
    "slow: long Monte-Carlo runs; skipped unless selected with -m slow (or --run-slow)",
    "claim(claim_id): binds a verify test to the registry claim it checks",
)


def register_profiles() -> None:
    """Register :data:`PROFILES` with Hypothesis and load ``$HYPOTHESIS_PROFILE`` (default ``dev``).

    ``--hypothesis-profile=NAME`` on the pytest command line then selects another (Hypothesis's own plug-in loads it
    after this module is imported).
    """
    for name, values in PROFILES.items():
        settings.register_profile(name, **values)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


# At import: entry-point plug-ins are imported before any pytest_configure, so the profiles exist by the time
# Hypothesis's plug-in reads --hypothesis-profile.
register_profiles()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fedcheck")
    group.addoption("--run-slow", action="store_true", default=False,
                    help="also run tests marked slow (long Monte-Carlo runs); -m slow selects only those")


#: Temporary directories this plug-in made in this session (removed at its end).
_MADE: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    for line in _MARKERS:
        config.addinivalue_line("markers", line)
    if not os.environ.get("FEDCHECK_CACHE_DIR"):
        # The report's result cache: a test never reuses another run's results, and writes nothing in the user's tree.
        _MADE.append(tempfile.mkdtemp(prefix="fedcheck-test-cache-"))
        os.environ["FEDCHECK_CACHE_DIR"] = _MADE[-1]
    if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        _MADE.append(tempfile.mkdtemp(prefix="fedcheck-hypothesis-"))
        set_hypothesis_home_dir(_MADE[-1])


def pytest_unconfigure(config: pytest.Config) -> None:
    while _MADE:
        shutil.rmtree(_MADE.pop(), ignore_errors=True)


def _asks_for_slow(config: pytest.Config) -> bool:
    return bool(config.getoption("--run-slow")) or "slow" in (config.getoption("markexpr", "") or "")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _asks_for_slow(config):
        return
    skip = pytest.mark.skip(reason="slow: long Monte-Carlo run; select with -m slow or --run-slow")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)
