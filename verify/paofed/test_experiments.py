"""Property tests of the PAO-Fed experiment statements X1-X11 (spec 5) at the ci size (SIM-E).

Each claim's statements are evaluated on the replicates its check uses (the first stage at the default grid point,
common random numbers across arms, tuned baseline steps): on any leading subset of them the exact sign-test bounds
bracket the median paired difference, and on all of them the evidence is the one the registered ci verdict needs.
"""

import numpy as np
import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify import comparisons as cmp
from verify.paofed._experiment_design import DESIGN, SharedArmExecutor, resolve_steps
from verify.paofed.experiments import SPECS
from verify.records import CheckContext, Verdict
from verify.registry import get_claim

CI_STAGE = DESIGN.stages["ci"][0]
_CASES = [pytest.param(spec, id=spec.claim_id.split(".")[1], marks=pytest.mark.claim(spec.claim_id))
          for spec in SPECS]


def _outcomes(spec, n: int):
    ctx = CheckContext(profile="ci", seed=0)
    ctx = CheckContext(profile="ci", seed=0, executor=SharedArmExecutor(ctx.executor))
    resolved = resolve_steps(ctx, spec)
    alpha = cmp.FAMILY_ALPHA / cmp.family_size("paofed") / len(DESIGN.stages["ci"])
    point = dict(resolved.points("ci")[0])
    return alpha, [cmp.evaluate_statement(ctx, DESIGN, s, n, alpha, point=point) for s in resolved.statements]


@pytest.mark.parametrize("spec", _CASES)
@settings(max_examples=4)  # slices of the stored replicates: no new simulation after the first example
@given(n=st.integers(2, CI_STAGE))
@example(n=CI_STAGE)
def test_statement_evidence_agrees_with_the_ci_verdict(spec, n):
    """Property: on the first n replicates of the ci check, every statement's one-sided sign-test bounds bracket the
    median paired MSE-test difference (dB); on the whole first stage a confirmed claim has every statement shown at
    its alpha, a refuted one the negation of one (Holm), and a not-checkable one neither, or is checked outside the
    paper's setting."""
    alpha, outcomes = _outcomes(spec, n)
    gaps = []
    for statement, o in zip(spec.statements, outcomes):
        assert o.n == n and o.lower <= o.median <= o.upper
        gaps.append(o.upper - statement.threshold if statement.relation != "above" else statement.threshold - o.lower)
    target(float(np.clip(max(gaps), -1e3, 1e3)), label="confidence bound - threshold (dB)")
    if n != CI_STAGE:
        return
    confirmed = all(o.p_confirm <= alpha for o in outcomes)
    refuted = not confirmed and min(o.p_refute for o in outcomes) <= alpha / len(outcomes)
    expected = get_claim(spec.claim_id).expected_at("ci")
    if expected is Verdict.CONFIRMED:
        assert confirmed, outcomes
    elif expected is Verdict.REFUTED:
        assert refuted, outcomes
    else:
        assert not confirmed and (not refuted or spec.outside_setting), outcomes
