"""Property tests of zCDP-NFL Theorem II's bound (19): the printed form fails where its noise term vanishes, the
corrected form (2 D^2, (rho/2) L+ last term) holds there and at the privacy levels where the noise term dominates."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.evidence import SIDES
from verify.tolerance import MC_ALPHA
from verify.zcdp_nfl.theorem2_bound import BOUND_BASE, CORRECTED, evaluate_theorem2_bound

#: The paper's size (K = 50, P = 8, M = 50), noise-free (the limit sigma^2(0) -> 0 of every private run).
PAPER = {"seed": 2024, "K": 50, "P": 8, "M": 50, "objective": "ridge", "step": "constant"}


def _case(base: dict, sigma2_0: float, T: int, runs: int = 20) -> dict:
    if sigma2_0 == 0.0:
        return {**BOUND_BASE, "eta0": 0.05, **base, "noise": "none", "sigma2_0": 0.0, "T": T + 1, "runs": 1}
    return {**BOUND_BASE, "eta0": 0.05, **base, "sigma2_0": sigma2_0, "T": T + 1, "runs": runs, "noise_seed": 3}


@pytest.mark.claim("zcdp_nfl.theorem2_bound")
@settings(max_examples=examples("few"))
@given(seed=st.integers(0, 2**31 - 1), objective=st.sampled_from(["ridge", "lad", "elastic_net"]),
       step=st.sampled_from(["constant", "inv_sqrt"]))
@example(seed=2024, objective="ridge", step="constant")
@example(seed=0, objective="lad", step="inv_sqrt")
def test_printed_bound_fails_without_noise(seed, objective, step):
    """Property: on a noise-free run (the sigma^2(0) -> 0 limit, where the noise term of (19) vanishes), the printed
    right side of (19) at T = 20 is below f(w_hat^(20)) - f(w*)."""
    evidence = evaluate_theorem2_bound(_case({"seed": seed, "objective": objective, "step": step}, 0.0, 20), 20,
                                       MC_ALPHA)
    lhs, rhs = evidence.parameters[SIDES]
    target(lhs - rhs, label="LHS - RHS")
    assert not evidence.holds, evidence


@pytest.mark.claim("zcdp_nfl.theorem2_bound")
def test_printed_bound_fails_at_tiny_private_noise():
    """Property: with S1 noise at sigma^2(0) = 1e-8 (a private run) the upper confidence limit of E[LHS - RHS] of the
    printed (19) is positive, on the paper's instance size too."""
    for base in ({"objective": "lad", "step": "inv_sqrt"}, PAPER):
        evidence = evaluate_theorem2_bound(_case(base, 1e-8, 20), 20, MC_ALPHA)
        assert not evidence.holds and evidence.parameters["mean_difference"] > 0, evidence


@pytest.mark.claim("zcdp_nfl.theorem2_bound_corrected")
@settings(max_examples=examples("several"))
@given(seed=st.integers(0, 2**31 - 1), objective=st.sampled_from(["ridge", "lad", "elastic_net"]),
       step=st.sampled_from(["constant", "inv_sqrt"]), T=st.sampled_from([20, 100, 400]),
       sigma2_0=st.sampled_from([0.0, 1e-8, 1e-4, 1e-2]))
@example(seed=2024, objective="ridge", step="constant", T=100, sigma2_0=0.0)
@example(seed=0, objective="lad", step="inv_sqrt", T=400, sigma2_0=0.0)
@example(seed=0, objective="lad", step="constant", T=20, sigma2_0=0.0)
@example(seed=0, objective="lad", step="inv_sqrt", T=400, sigma2_0=1e-8)
@example(seed=0, objective="ridge", step="inv_sqrt", T=20, sigma2_0=1e-2)
def test_corrected_bound_holds_at_every_noise_level(seed, objective, step, T, sigma2_0):
    """Property: E[f(w_hat^(T)) - f(w*)] <= E[RHS] of the corrected (19) (2 D^2, last term (rho/2)||w~(0) - w*||^2_L+
    / T), noise-free (deterministic, against rounding) and with S1 noise (one-sided upper confidence limit)."""
    base = PAPER if seed == 2024 else {"seed": seed, "objective": objective, "step": step}
    evidence = evaluate_theorem2_bound(_case(base, sigma2_0, T), T, MC_ALPHA, CORRECTED)
    lhs, rhs = evidence.parameters[SIDES]
    target(lhs / rhs, label="E[LHS] / E[RHS]")
    assert evidence.holds, evidence
