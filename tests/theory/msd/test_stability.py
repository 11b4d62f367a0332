"""Paper bounds, spectral radii and certified threshold brackets (docs/papers/paofed.md#expectations,
docs/papers/paofed.md#mean-square, docs/papers/paofed.md#instance-reference)."""

import numpy as np
import pytest

from theory.msd import (
    PAOFedInstance,
    mean_matrix,
    mean_square_threshold,
    mean_threshold,
    paper_mean_bound,
    paper_mean_square_bound,
    reference_instance,
    spectral_radius_F,
    spectral_radius_M,
    threshold_bracket,
)
from verify.paofed._common import e8_instance


def test_paper_bounds_of_the_reference_instance():
    # labelled regression values of docs/papers/paofed.md#instance-reference (printed to 5 decimals: half a unit in the
    # last place)
    inst = reference_instance()
    assert abs(paper_mean_bound(inst) - 0.64454) < 5e-6 and abs(paper_mean_square_bound(inst) - 0.32227) < 5e-6


def test_brackets_are_certified_and_match_spec_4_1():
    inst = reference_instance()
    b = mean_threshold(inst)
    assert spectral_radius_M(inst, b.lo) < 1 <= spectral_radius_M(inst, b.hi)
    assert abs(b.estimate * inst.lambda_max - 2.0856) < 5e-5  # docs/papers/paofed.md#instance-reference, printed to 4
    # decimals
    s = mean_square_threshold(inst, "exact")
    assert spectral_radius_F(inst, "exact", mu=s.lo) < 1 <= spectral_radius_F(inst, "exact", mu=s.hi)
    # docs/papers/paofed.md#instance-reference to 5 decimals; the bracket is at most twice its half-width tolerance,
    # plus rounding of the ends
    assert abs(s.estimate - 0.21671) < 5e-6 and s.hi - s.lo <= 2 * s.tol + 1e-15


def test_common_R_reduction_equals_dense():
    R = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 0.5]])
    inst = PAOFedInstance(K=3, D=3, l_max=1, m=2, selection="subset", p=np.array([0.9, 0.5, 0.2]), delta=0.4,
                          alpha=np.array([1.0, 0.5]), sigma2_eta=np.full(3, 0.01), R=np.stack([R] * 3),
                          w_star=np.ones(3), mu=0.3)
    dense = np.max(np.abs(np.linalg.eigvals(mean_matrix(inst))))
    assert abs(spectral_radius_M(inst) - dense) <= 1e-13  # two dense eigen-solves of O(1) matrices


def test_e8_has_no_stable_step():
    b = mean_threshold(e8_instance())
    assert b.lo == 0.0 and b.rho_hi > 1.1  # unstable by a clear margin, not by rounding


def test_threshold_bracket_on_a_known_function_and_errors():
    b = threshold_bracket(lambda mu: 0.5 + mu, 1.0, start=0.1, rtol=1e-9)  # crossing at mu = 0.5
    assert b.lo < 0.5 <= b.hi and b.hi - b.lo <= 2e-9  # width <= 2 rtol x |mu| with mu < 1
    with pytest.raises(ValueError, match="rtol"):
        threshold_bracket(lambda mu: mu, 1.0, start=1.0, rtol=0.5)
    with pytest.raises(ValueError, match="no unstable"):
        threshold_bracket(lambda mu: 0.5, 1.0, start=1.0, max_expansions=3)
    with pytest.raises(ValueError, match="mu must"):
        spectral_radius_M(reference_instance(), float("nan"))
