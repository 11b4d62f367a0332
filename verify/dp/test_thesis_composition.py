"""Property tests of the thesis's composition theorems 2.1-2.4 and the accuracy claim of Section 2.4.5
(verify/dp/thesis_composition.py; docs/papers/dp.md#results, #erratum-db-10)."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.dp.thesis_composition import (
    evaluate_adaptive_composition,
    evaluate_approx_composition,
    evaluate_db10,
    evaluate_pure_composition,
)

_eps = st.floats(min_value=1e-3, max_value=10.0)
_pos = st.floats(min_value=0.01, max_value=3.0)


@pytest.mark.claim("dp.thesis_theorem2_1")
@settings(max_examples=examples("many"))
@given(epsilons=st.lists(_eps, min_size=1, max_size=8))
@example(epsilons=[0.1] * 8)
def test_randomized_response_products_attain_the_sum(epsilons):
    """Property: the largest log-likelihood ratio of n randomized-response outputs is sum eps_i (Theorem 2.1,
    attained)."""
    evidence = evaluate_pure_composition(epsilons)
    target(evidence.measured / evidence.bound, label="ratio / bound")
    assert evidence.holds and evidence.parameters["attained"], evidence


@pytest.mark.claim("dp.thesis_theorem2_2")
@given(mus=st.lists(_pos, min_size=2, max_size=20), eps=_pos)
@example(mus=[0.2] * 10, eps=0.1)
@example(mus=[1e-4, 1.0], eps=0.01)  # a hardest point: one mechanism nearly trivial, ratio 0.99
def test_gaussian_chain_delta_is_below_the_sum(mus, eps):
    """Property: for Gaussian mechanisms each exactly (eps_i, delta_i)-DP, the chain's exact delta at sum eps_i is at
    most sum delta_i (Theorem 2.2)."""
    evidence = evaluate_approx_composition(mus, [eps] * len(mus))
    target(evidence.measured / max(evidence.bound, 1e-300), label="delta_joint / sum delta_i")
    assert evidence.holds, evidence


@pytest.mark.claim("dp.thesis_theorem2_3")
@settings(max_examples=examples("some"))
@given(d1=_pos, s1=st.floats(0.5, 5.0), d2=_pos, s2=st.floats(0.5, 5.0), alpha=st.sampled_from([1.5, 2.0, 4.0]))
@example(d1=1.0, s1=2.0, d2=0.5, s2=1.0, alpha=2.0)
def test_independent_gaussian_releases_add_their_zcdp(d1, s1, d2, s2, alpha):
    """Property: the joint Renyi divergence of two independent Gaussian releases is alpha (rho_1 + rho_2) (attained)."""
    evidence = evaluate_adaptive_composition(d1, s1, d2, s2, alpha, "constant")
    assert evidence.holds and evidence.parameters["attained"], evidence


@pytest.mark.claim("dp.thesis_theorem2_4")
@settings(max_examples=examples("some"))
@given(d1=_pos, s1=st.floats(0.5, 5.0), d2=_pos, s2=st.floats(0.5, 5.0), alpha=st.sampled_from([1.5, 2.0, 4.0]),
       shift=st.sampled_from(["sign", "tanh", "gated"]))
@example(d1=1.0, s1=2.0, d2=0.5, s2=1.0, alpha=4.0, shift="tanh")
def test_adaptive_second_query_stays_within_the_sum(d1, s1, d2, s2, alpha, shift):
    """Property: when the second query's shift depends on the first noisy output (|shift| <= Delta_2), the joint Renyi
    divergence is at most alpha (rho_1 + rho_2) (Theorem 2.4 as read in docs/papers/dp.md#erratum-db-4); equality for
    |shift| = Delta_2."""
    evidence = evaluate_adaptive_composition(d1, s1, d2, s2, alpha, shift)
    target(evidence.measured / evidence.bound, label="D_alpha / bound")
    assert evidence.holds, evidence


@pytest.mark.claim("dp.thesis_db10")
def test_two_releases_at_delta_1e3_favour_eps_delta_accounting():
    """Property (the finding): at T = 2, delta = 1e-3, eps = 0.5, zCDP with BS16 needs 18 % more noise per release than
    basic composition with the analytic calibration."""
    assert evaluate_db10(0.5, 1e-3, 2).measured == pytest.approx(1.179, abs=1e-3)


@pytest.mark.claim("dp.thesis_db10_corrected")
@given(eps=st.floats(0.01, 20.0), log_delta=st.floats(-12.0, -1.0), rounds=st.integers(2, 2000))
@example(eps=0.25, log_delta=-3.0, rounds=3)  # where BS16 fails (ratio 1.066)
@example(eps=0.01, log_delta=-1.0, rounds=2)  # where CKS fails (ratio 1.065)
def test_exact_accounting_needs_less_noise_from_two_releases(eps, log_delta, rounds):
    """Property: with exact accounting of the Gaussian releases (exact Gaussian conversion of the composed mechanism),
    T >= 2 releases need less per-release noise than basic (eps, delta) composition with the analytic calibration."""
    evidence = evaluate_db10(eps, 10.0 ** log_delta, rounds, conversion="exact_gaussian")
    target(evidence.measured, label="sigma ratio")
    assert evidence.holds, evidence
