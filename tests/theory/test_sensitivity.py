"""Unit tests of theory.privacy.sensitivity: validation, paper test vectors, structural limits."""

import math

import pytest

from theory.privacy import sensitivity_fedpdm, sensitivity_pgfl, sensitivity_zcdp_nfl


@pytest.mark.parametrize(("call", "match"), [
    (lambda: sensitivity_pgfl(-1.0, 1.0, 3), r"C must be a finite real in \[0, inf\)"),
    (lambda: sensitivity_pgfl(1.0, 0.0, 3), r"rho must be a finite real in \(0, inf\)"),
    (lambda: sensitivity_pgfl(1.0, 1.0, 0), r"D must be an integer >= 1"),
    (lambda: sensitivity_pgfl(1.0, 1.0, 2.5), r"D must be an integer >= 1"),
    (lambda: sensitivity_zcdp_nfl(1.0, 0, 1.0, 3, 0.1), r"M must be an integer >= 1"),
    (lambda: sensitivity_zcdp_nfl(1.0, 5, 1.0, -1, 0.1), r"degree must be an integer >= 0"),
    (lambda: sensitivity_zcdp_nfl(1.0, 5, 1.0, 3, 0.0), r"eta must be a finite real in \(0, inf\)"),
    (lambda: sensitivity_zcdp_nfl(1.0, 5, 1.0, 0, math.inf), r"unbounded sensitivity"),
    (lambda: sensitivity_fedpdm(0.1, 10.0, 0, 1.0), r"Q must be an integer >= 1"),
    (lambda: sensitivity_fedpdm(-0.1, 10.0, 3, 1.0), r"eta must be a finite real in \(0, inf\)"),
    (lambda: sensitivity_fedpdm(0.1, 10.0, 3, math.nan), r"G must be a finite real"),
])
def test_bad_input_names_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_paper_test_vectors():
    # Regression values: docs/papers/zcdp_nfl.md#lemma-1, docs/papers/fedpdm.md#theorem-1 table (both re-derived there).
    assert sensitivity_zcdp_nfl(1.0, 50, 1.0, 3, 0.1) == pytest.approx(0.0025, rel=1e-15)
    for args, s in [((0.05, 10.0, 5, 1.0), 0.3875), ((0.2, 10.0, 6, 1.0), 4.8), ((1.0, 10.0, 3, 1.0), 364.0),
                    ((0.1, 10.0, 1, 1.0), 0.4)]:
        assert sensitivity_fedpdm(*args) == pytest.approx(s, rel=1e-14)


def test_fedpdm_is_continuous_across_eta_rho_equal_two_and_matches_the_direct_sum():
    for eta in (0.2 - 1e-12, 0.2, 0.2 + 1e-12, 0.05, 0.15, 0.25):
        direct = 4 * eta * math.fsum(abs(1 - eta * 10.0) ** k for k in range(6))
        assert sensitivity_fedpdm(eta, 10.0, 6, 1.0) == pytest.approx(direct, rel=1e-11)
    assert sensitivity_fedpdm(1.0, 10.0, 400, 1.0) == math.inf


def test_limits():
    # eta rho <= 1 saturates at 4G/rho; zcdp-nfl without prox term is 2 c1 / (2 rho d M).
    assert sensitivity_fedpdm(0.01, 10.0, 10_000, 1.0) == pytest.approx(4.0 / 10.0, rel=1e-12)
    assert sensitivity_zcdp_nfl(1.0, 4, 0.5, 2, math.inf) == pytest.approx(2.0 / (4 * 2.0), rel=1e-15)
    assert sensitivity_pgfl(0.0, 1.0, 1) == 0.0
