"""Property tests of the PGFL Theorem II bound and its Corollary (right-hand sides)."""

import numpy as np
import pytest
from hypothesis import example, given, target
from hypothesis import strategies as st

from theory.bounds import intercluster_bound
from verify.pgfl.theorem2_bound import PAPER_SCHEDULES, evaluate_bound_identity, evaluate_corollary_value
from verify.strategies import etas, tau_sequences


@pytest.mark.claim("pgfl.theorem2.bound_closed_form")
@given(taus=tau_sequences(), eta=etas())
@example(taus=PAPER_SCHEDULES["tau = 0.4"](200), eta=1.0)
@example(taus=PAPER_SCHEDULES["tau = 0.4 * 0.98^n"](200), eta=1.0)
@example(taus=np.array([1.0, 0.0, 1.0]), eta=3.0)
def test_sum_of_products_equals_product_form(taus, eta):
    """Property: for any tau sequence in [0, 1] and eta >= 0, the paper's sum of products, the
    collapsed form eta(1 - prod(1 - tau)) and the recursion agree within their rounding-error bounds,
    and 0 <= B_n <= eta min(1, sum tau)."""
    evidence = evaluate_bound_identity(taus, eta)
    target(evidence.measured, label="discrepancy / rounding-error bound")
    assert evidence.holds, evidence


@pytest.mark.claim("pgfl.theorem2.bound_closed_form")
@given(taus=tau_sequences(), eta=etas())
def test_bound_is_nondecreasing_and_capped(taus, eta):
    """Property: B_n is non-decreasing in n and never exceeds eta (exactly, in floating point)."""
    bound = intercluster_bound(taus, eta)
    assert np.all(np.diff(bound) >= 0.0)
    assert np.all(bound <= eta)


@pytest.mark.claim("pgfl.corollary.bound_value")
@given(n=st.integers(min_value=1, max_value=500), tau_n=st.floats(min_value=0.0, max_value=1.0,
                                                                    exclude_min=True), eta=etas())
@example(n=400, tau_n=0.4, eta=1.0)
def test_single_step_bound_is_tau_eta(n, tau_n, eta):
    """Property: with tau_i = 0 for i < n, the Theorem II bound equals tau_n * eta."""
    evidence = evaluate_corollary_value(n, tau_n, eta)
    target(evidence.measured, label="gap / rounding-error bound")
    assert evidence.holds, evidence
