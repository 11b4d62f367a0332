"""Hypothesis profiles for every test directory (select with ``--hypothesis-profile=NAME``).

* ``ci``: derandomized, no example database, no deadline (``make test`` uses it).
* ``dev``: the default for local runs; random, with the local database.
* ``thorough``: many more examples; for the report-sized runs and before a release.
"""

import os
import tempfile

from hypothesis import settings

# The report's result cache: the tests never reuse results of another run (a private directory per session).
os.environ["FEDCHECK_CACHE_DIR"] = tempfile.mkdtemp(prefix="fedcheck-test-cache-")

settings.register_profile("ci", derandomize=True, database=None, deadline=None, max_examples=100, print_blob=True)
settings.register_profile("dev", deadline=None, max_examples=100)
settings.register_profile("thorough", deadline=None, max_examples=2000, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
