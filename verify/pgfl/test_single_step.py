"""Property tests of the single-step server update V0 (docs/papers/pgfl.md#single-step) (seed 000 eqs. (6)-(7)): as
printed (a finding) and corrected."""

import pytest
from hypothesis import example, given, settings, target

from verify.budget import examples
from verify.pgfl.single_step import (
    PAPER_LIKE_INSTANCE,
    evaluate_single_step_corrected,
    evaluate_single_step_printed,
)
from verify.strategies import pgfl_single_step_instances


@pytest.mark.claim("pgfl.single_step_update")
@settings(max_examples=examples("many"))
@given(params=pgfl_single_step_instances())
@example(params=PAPER_LIKE_INSTANCE)
@example(params={**PAPER_LIKE_INSTANCE, "rho_factor": 1.0})
def test_printed_single_step_update_diverges(params):
    """Property: with tau = 0 the iteration using (6)-(7) as printed has spectral radius r(T) > 1 on every
    connected multi-server ridge instance (the finding: it diverges; the printed claim of a convergent step fails)."""
    evidence = evaluate_single_step_printed(params)
    target(-evidence.measured / evidence.bound, label="-r(T)")
    assert not evidence.holds and evidence.measured > 1.0, evidence


@pytest.mark.claim("pgfl.single_step_update_corrected")
@settings(max_examples=examples("many"))
@given(params=pgfl_single_step_instances())
@example(params=PAPER_LIKE_INSTANCE)
@example(params={**PAPER_LIKE_INSTANCE, "rho_factor": 10.0})
def test_corrected_single_step_update_converges_to_group_weighted_optimum(params):
    """Property: with the two sign corrections the tau = 0 iteration contracts (r(T) < 1) and its fixed point is
    consensus at argmin sum_s (1/|C_s,(q)|) sum_k f_k, to the rounding allowance of the two linear solves."""
    evidence = evaluate_single_step_corrected(params)
    target(evidence.measured / evidence.bound, label="max(r(T), gap/allowance)")
    assert evidence.holds, evidence
