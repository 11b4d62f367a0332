"""Property tests of the trade-off bound (22): refuted under Assumption 4 as printed; its noise part holds (loosely)."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.evidence import SIDES
from verify.tolerance import MC_ALPHA
from verify.zcdp_nfl.tradeoff_bound import PRINTED, evaluate_noise_part, evaluate_tradeoff_bound


@pytest.mark.claim("zcdp_nfl.tradeoff_bound")
@pytest.mark.parametrize("sigma2_0", [1e-2, 1e-6])
def test_no_constant_alpha_under_printed_assumption4(sigma2_0):
    """Property: under Assumption 4 as printed (eta = 0.05 n^2) the private runs diverge, so
    A_T = T E[LHS_T] - alpha_xi sum sigma^2(0)/(1 - tau) grows without bound and (22) has no constant alpha."""
    evidence = evaluate_tradeoff_bound({**PRINTED, "sigma2_0": sigma2_0})
    assert not evidence.holds and evidence.parameters["outcome"] == "diverged"
    assert evidence.parameters["growth_of_A_T"] > 1e100


@pytest.mark.claim("zcdp_nfl.tradeoff_noise_part")
@settings(max_examples=examples("few"))
@given(seed=st.integers(0, 2**31 - 1), objective=st.sampled_from(["ridge", "lad"]),
       step=st.sampled_from(["constant", "inv_sqrt"]), sigma2_0=st.sampled_from([1e-4, 1e-2, 1.0]),
       T=st.sampled_from([20, 100, 400]))
@example(seed=0, objective="lad", step="inv_sqrt", sigma2_0=1e-4, T=400)
@example(seed=0, objective="ridge", step="constant", sigma2_0=1e-2, T=20)
def test_noise_induced_increase_is_below_the_noise_term(seed, objective, step, sigma2_0, T):
    """Property: at a converging schedule the upper confidence limit of the noise-induced increase of
    E[f(w_hat^(T)) - f(w*)] over the noise-free run is at most the noise term alpha_xi sum sigma^2(0)/((1 - tau) T)."""
    case = {"seed": seed, "rho": 1.0, "noise": "S1", "tau": 0.97, "objective": objective, "step": step, "eta0": 0.05,
            "sigma2_0": sigma2_0, "T": T + 1, "runs": 30, "noise_seed": seed}
    evidence = evaluate_noise_part(case, T, MC_ALPHA)
    increase, term = evidence.parameters[SIDES]
    target(increase / term, label="increase / noise term")
    assert evidence.holds, evidence
