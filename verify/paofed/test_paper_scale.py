"""Property tests: the paper-scale card (white reduction; seed F optimistic against the exact F)."""

import pytest
from hypothesis import example, given, settings, target

from verify.budget import examples
from verify.paofed.paper_scale import evaluate_paper_scale, evaluate_reduction, paper_white_instance
from verify.strategies import paofed_white_scaled_sizes


@pytest.mark.claim("paofed.paper_scale_seed_optimistic")
@settings(max_examples=examples("few"))
@given(sizes=paofed_white_scaled_sizes())
@example(sizes={"K": 8, "D": 8, "l_max": 10})  # the paper's l_max, p groups, delta, alpha, m, lambda (K, D scaled)
def test_seed_model_is_optimistic_on_scaled_paper_setups(sizes):
    """Property: on the paper's set-up scaled to K clients (4 availability groups), D coordinates and l_max delays
    with white Gaussian features R_k = 1.02 I, the seed's truncated F has a certified mean-square threshold above
    the exact F's, and at half the exact threshold its MSD_inf is below the exact one; the white reduction equals
    the unreduced structured route on a small instance."""
    evidence, _details = evaluate_paper_scale(sizes["K"], sizes["D"], l_max=sizes["l_max"], rtol=1e-6)
    for e in evidence:
        target(e.measured / e.bound, label=e.parameters["quantity"])
        assert e.holds, e


def test_reduction_certificate_holds():
    for e in evaluate_reduction(paper_white_instance(8, 3, mu=0.05, l_max=1, m=2)):  # 4 groups of 2 clients
        assert e.holds, e
