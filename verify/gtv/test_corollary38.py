"""Property test of the single-cluster corollary (38)."""

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from verify.budget import examples
from verify.gtv.corollary38 import FACTORS, evaluate_corollary38


@pytest.mark.claim("gtv.corollary38")
@settings(max_examples=examples("several"))
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(10, 20), factor=st.sampled_from(FACTORS))
@example(seed=0, n=20, factor=1.01)
def test_single_cluster_is_the_pooled_minimiser(seed, n, factor):
    """Property: on a connected graph with one cluster and lam > sum(delta)/min(A), (35) is certified and every
    node's model equals the pooled least-squares minimiser."""
    e = evaluate_corollary38({"seed": seed, "n": n, "factor": factor})
    assert e.holds, e
