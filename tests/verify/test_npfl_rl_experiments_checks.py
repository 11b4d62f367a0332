"""The NPFL-RL experiment checks discriminate (mutation tests), and their simulation design is sound."""

import dataclasses

import numpy as np
import pytest

from reference_impl.npfl_rl import NPFLConfig, simulate_replicates
from verify.harness import clear_store, decide, simulate_arms, swapped
from verify.npfl_rl import _experiment_design as design
from verify.npfl_rl import experiments as ex
from verify.records import CheckContext, Verdict

CI = CheckContext(profile="ci", seed=0)


def _decide(spec):
    return decide(CI, spec)


@pytest.mark.parametrize("spec", [ex.C3, ex.C9_SMOOTH_REACH], ids=lambda s: s.claim_id.split(".")[1])
def test_confirmed_orderings_are_refuted_when_their_arms_are_swapped(spec):
    """Claims confirmed at ci at the default point of their grid, arms exchanged and decided there: refuted, and the
    counterexample reproduces (C9 (docs/papers/npfl_rl.md#exp-c9)'s correction is undecided at ci at lambda = 0.01, so
    only the default point)."""
    mutated = dataclasses.replace(spec, claim_id=spec.claim_id + "_swapped", figures=None,
                                  grid={"ci": (dict(spec.points("ci")[0]),)},
                                  statements=tuple(swapped(s) for s in spec.statements))
    result = decide(CI, mutated)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert not mutated.reproduce(result.counterexample).holds


def test_the_corrected_c2_is_refuted_against_the_cluster_models():
    """C2 (docs/papers/npfl_rl.md#exp-c2) corrected with the per-component ridge arm replaced by the cluster-wide one:
    refuted (the ground truth matters, erratum D12 (docs/papers/npfl_rl.md#erratum-d12))."""
    stmt = ex.C2_COMPONENT.statements[0]
    wrong = dataclasses.replace(stmt, terms=(stmt.terms[0], dataclasses.replace(stmt.terms[1],
                                                                                 arm=ex.A["cluster_ridge"])))
    mutated = dataclasses.replace(ex.C2_COMPONENT, claim_id="npfl_rl.mutated_c2", statements=(wrong,), figures=None)
    assert _decide(mutated).verdict is Verdict.REFUTED


def test_an_npfl_that_ignores_tau_makes_c3_fail(monkeypatch):
    """NPFL tau=0.05 replaced by tau = 0 (the inter-cluster term dropped): the two arms coincide,
    C3 (docs/papers/npfl_rl.md#exp-c3) is no longer confirmed."""
    monkeypatch.setitem(design.PAPER_ARMS, "npfl_tau_0.05", NPFLConfig(tau0=0.0))
    clear_store()  # no unmutated arm may be reused
    try:
        mutated = dataclasses.replace(ex.C3, claim_id="npfl_rl.mutated_c3", figures=None)
        assert _decide(mutated).verdict is not Verdict.CONFIRMED
    finally:
        clear_store()


def test_arms_share_replicates_and_match_the_reference_simulation():
    """Replicate i is the same instance and SAC draws for every arm and call, and the Test-MSE channel equals
    reference_impl.npfl_rl.simulate_replicates on the design's root (what the CLI reports)."""
    scale = design.SCALES["ci"]
    arm = design.Arm(label="sac", name="rl_sac")
    curves = simulate_arms(CI, design.DESIGN, [arm], (), 2, scale=scale)[arm]
    again = design.simulate_npfl([arm], (), scale, 0, [1])[0]
    np.testing.assert_array_equal(again[0], curves[1])
    ref = simulate_replicates(["rl_sac"], scale.N, design.replicate_root(0), [1], generator=scale.generator)[0]
    np.testing.assert_array_equal(ref[0], curves[1, :, 0])


def test_channels_at_the_start():
    """At n = 0 every model is 0, so the Test MSE (6.15) is the mean of ||w_(q_k)|| over clients; tau^(0) = 0.05 for
    every client; the spread and curvature channels are 0."""
    scale = design.SCALES["ci"]
    arm = design.Arm(label="dpg", name="rl_dpg")
    out = design.simulate_npfl([arm], (), scale, 0, [0])[0][0]
    problem = design.replicate_problem(scale, 0, 0)
    norms = np.linalg.norm(problem.true_models[problem.labels], axis=1)
    np.testing.assert_allclose(out[0, 0], norms.mean(), rtol=1e-13)  # a mean of K norms: rounding only
    np.testing.assert_array_equal(out[0, 1:4], 0.05)  # tau^(0) of the controllers (PAPER_ARMS)
    np.testing.assert_array_equal(out[0, 4:], 0.0)


def test_the_policy_arm_resolves_and_shares_the_store():
    """The grid's RL arm is the RL arm of its policy: the same store key as that arm, one per policy."""
    rl = design.Arm(label="rl", name=design.RL_OF_POLICY)
    sac = design.Arm(label="sac", name="rl_sac")
    scale = design.SCALES["ci"]
    assert design.DESIGN.store_key(rl, (("policy", "sac"),), scale, 0) == design.DESIGN.store_key(sac, (), scale, 0)
    keys = {design.DESIGN.store_key(rl, (("policy", p),), scale, 0) for p in ("sac", "dpg")}
    assert len(keys) == 2


def test_bad_arm_and_scale_are_refused():
    with pytest.raises(ValueError, match="name"):
        design.Arm(label="x", name="npfl_tau_0.3")
    with pytest.raises(ValueError, match="early"):
        design.Scale(K=30, d=20, D_lo=3, D_hi=12, N=10, early=10)
