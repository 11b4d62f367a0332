"""The corrected extended-state layout (docs/papers/paofed.md#extended-state,
errata E1-E3 (docs/papers/paofed.md#erratum-e1 to #erratum-e3)): B_e A_e w_e* = w_e* and the delay shift."""

import numpy as np

from verify.paofed._enumeration import _A_matrix, _B_matrix, selection_outcomes
from verify.paofed.expectations_enumeration import enumeration_instance


def test_rows_sum_to_identity_so_the_optimum_is_a_fixed_point():
    inst = enumeration_instance([0.9, 0.6], 0.3, [1.0, 0.5])
    rng = np.random.default_rng(0)
    sel = selection_outcomes(3, 2, "subset")
    w = rng.standard_normal(3)
    we = np.tile(w, 1 + 2 * 2)
    for _ in range(20):
        A = _A_matrix(inst, [sel[rng.integers(3)][0] * rng.integers(2) for _ in range(2)])
        outcome = [(int(b), sel[rng.integers(3)][0] * b, 0.0) for b in rng.integers(0, 2, 4)]
        B = _B_matrix(inst, outcome)
        assert np.max(np.abs(B @ A @ we - we)) <= 1e-14  # stochastic rows fix constants up to rounding


def test_delay_blocks_shift_by_one_group():
    inst = enumeration_instance([0.9, 0.6], 0.3, [1.0, 0.5], l_max=1)
    B = _B_matrix(inst, [(0, np.zeros(3), 1.0)] * 4)
    D = 3
    # block row iota(1, k) = 2 + k copies block iota(0, k) = k (the just-updated local model w_{k,n+1})
    for k in (1, 2):
        assert np.array_equal(B[(2 + k) * D:(3 + k) * D, k * D:(k + 1) * D], np.eye(D))
