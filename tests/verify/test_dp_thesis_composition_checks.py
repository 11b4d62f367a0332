"""Mutation tests: the thesis composition checks refute a slightly smaller bound (the bounds are attained)."""

from verify.dp.thesis_composition import (
    check_adaptive_composition,
    check_db10,
    check_pure_composition,
    check_zcdp_composition,
    reproduce_db10,
)
from verify.records import CheckContext, Verdict


def test_pure_composition_refutes_a_deflated_sum():
    result = check_pure_composition(CheckContext(), compose=lambda e: sum(e) * (1.0 - 1e-9))
    assert result.verdict is Verdict.REFUTED


def _deflated_rho(delta, sigma):
    return delta * delta / (2.0 * sigma * sigma) * (1.0 - 1e-6)


def test_zcdp_composition_checks_refute_a_deflated_rho():
    assert check_zcdp_composition(CheckContext(), rho_fn=_deflated_rho).verdict is Verdict.REFUTED
    assert check_adaptive_composition(CheckContext(), rho_fn=_deflated_rho).verdict is Verdict.REFUTED


def test_db10_counterexample_reproduces():
    result = check_db10(CheckContext())
    assert result.verdict is Verdict.REFUTED and not reproduce_db10(result.counterexample).holds
