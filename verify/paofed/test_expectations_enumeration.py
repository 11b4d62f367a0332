"""Property tests: closed-form moments of the PAO-Fed random matrices equal exhaustive enumeration."""

import pytest
from hypothesis import example, given, settings, target

from verify.paofed.expectations_enumeration import evaluate_expectations
from verify.strategies import paofed_enumeration_cases

_EXAMPLES = max(3, settings.default.max_examples // 25)


@pytest.mark.claim("paofed.expectations_enumeration")
@settings(max_examples=_EXAMPLES)
@given(case=paofed_enumeration_cases())
@example(case={"p": [1.0, 1.0], "delta": 0.5, "alpha": [1.0, 1.0], "selection": "subset", "x_seed": 0})
@example(case={"p": [0.9, 0.6], "delta": 0.3, "alpha": [1.0, 0.5], "selection": "subset", "x_seed": 1})
def test_closed_forms_equal_enumeration(case):
    """Property: for any (p, delta, alpha) at K = 2, D = 3, m = 2, l_max = 1, E[A_e], E[B_e], Q_A, Q_B and the
    structured actions A(X), B(X) equal the sums over every outcome within the rounding allowance, and the rows
    of E[A_e], E[B_e], Q_A, Q_B sum to one."""
    evidence = evaluate_expectations(case)
    target(evidence.measured, label="gap / rounding allowance")
    assert evidence.holds, evidence
    assert evidence.parameters["max_row_sum_error"] <= 1e-14
    assert evidence.parameters["min_QA"] >= -1e-15
