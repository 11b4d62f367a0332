"""The PAO-Fed transient-MSD and experiment checks discriminate: a slightly wrong input is REFUTED at ci, a shift
smaller than the noise is not."""

import dataclasses

import numpy as np

from reference_impl.paofed.tuning import MATCH_TOLERANCE_DB
from reports.figures import series_styles
from verify import harness
from verify.harness import Pinned, clear_store, decide
from verify.paofed import _experiment_design as design
from verify.paofed._experiment_setting import SCALES, STEP
from verify.paofed.experiments import (
    C1_IDEAL,
    FEDSGD,
    U1,
    U2,
    X3_C2_U2,
    X4_BEATS_FEDSGD,
    X4_ONLINE_FED_POOR,
    X4_U2_U1,
    X6_IDEAL_U1,
    X9_DEGRADES,
)
from verify.paofed.sim_transient import check_transient, exact_transient, seed_transient
from verify.records import CheckContext, Verdict

CTX = CheckContext(profile="ci", seed=0)


def _transient_half_db_high(instance, iterations):
    return exact_transient(instance, iterations) * 10 ** (0.5 / 10)


def test_transient_check_refutes_a_prediction_half_a_db_off():
    result = check_transient(CTX, theory=_transient_half_db_high)
    assert result.verdict is Verdict.REFUTED and result.counterexample["predicted_db"] > result.counterexample["ucl_db"]


def test_transient_check_refutes_the_seed_truncated_model():
    """The seed's truncated F (assumption A5) is 0.06-2.4 dB low: REFUTED, with the prediction below the interval."""
    result = check_transient(CTX, theory=seed_transient)
    assert result.verdict is Verdict.REFUTED and result.counterexample["predicted_db"] < result.counterexample["lcl_db"]


def _shifted(spec, arm, db: float):
    """``spec`` with ``arm``'s MSE-test curve raised by ``db`` dB in every statement (a slightly wrong simulation)."""
    moved = dataclasses.replace(arm, shift_db=db, label=f"{arm.label} {db:+g} dB")
    statements = tuple(dataclasses.replace(s, terms=tuple(dataclasses.replace(t, arm=moved if t.arm == arm else t.arm)
                                                          for t in s.terms)) for s in spec.statements)
    return dataclasses.replace(spec, statements=statements)


def test_experiment_check_refutes_an_ordering_broken_by_a_six_db_shift():
    """X9 (docs/papers/paofed.md#exp-x9): U1 below its full-downlink version (confirmed); U1 made 6 dB worse: the
    opposite ordering is shown."""
    assert decide(CTX, X9_DEGRADES).verdict is Verdict.CONFIRMED
    result = decide(CTX, _shifted(X9_DEGRADES, U1, 6.0))
    assert result.verdict is Verdict.REFUTED and result.counterexample["statement"] == 0


def test_a_shift_within_the_noise_gives_not_checkable_never_refuted():
    """X6 (docs/papers/paofed.md#exp-x6) ideal: C1 below U1 (significant, but a fraction of a dB: inside the 0.5 dB
    practical margin, so not confirmed); C1 raised by about that fraction: the sign of the paired difference varies over
    the replicates, so the statement is undecided, not refuted; a tenth of a dB on a null (U2 vs U1 in
    X3 (docs/papers/paofed.md#exp-x3)/X4 (docs/papers/paofed.md#exp-x4)) stays undecided too."""
    unshifted = decide(CTX, X6_IDEAL_U1)
    assert unshifted.verdict is Verdict.NOT_CHECKABLE and "effect below the practical margin" in unshifted.summary
    for spec, arm, db in ((X6_IDEAL_U1, C1_IDEAL, 0.45), (X6_IDEAL_U1, C1_IDEAL, 0.3)):
        result = decide(CTX, _shifted(spec, arm, db))
        assert result.verdict is Verdict.NOT_CHECKABLE, result.summary
        # undecided (more replicates might decide it) or shown inside the margin (none would)
        assert (result.details["replicates_that_would_decide"]
                or "no effect beyond the practical margin either way" in result.summary), result.summary


def test_experiment_approx_check_refutes_a_two_db_offset():
    """X3 (docs/papers/paofed.md#exp-x3): C2 within 1 dB of U2 (confirmed); U2 raised 2.5 dB: non-equivalence is
    shown."""
    result = decide(CTX, _shifted(X3_C2_U2, U2, 2.5))
    assert result.verdict is Verdict.REFUTED


def test_experiment_check_confirms_a_real_three_db_improvement():
    """The rule can also pass: U2 made 3 dB better than U1 (X4, docs/papers/paofed.md#exp-x4, undecided as simulated) is
    detected as 'U2 below U1'."""
    result = decide(CTX, _shifted(X4_U2_U1, U2, -3.0))
    assert result.verdict is Verdict.CONFIRMED


def test_figures_give_every_arm_its_own_colour_band_and_window():
    """Property: an experiment figure draws each arm in its own colour with a band, marks the compared window and
    captions the decided difference."""
    result = decide(CTX, X4_ONLINE_FED_POOR)
    (figure,) = result.figures
    colours = [s["color"] for s in series_styles(figure)]
    assert len(set(colours)) == len(colours) == 3
    assert all(not s.group and s.lower is not None and s.upper is not None for s in figure.series)
    scale = SCALES["ci"]
    assert figure.spans == ((float(scale.iterations - scale.window), float(scale.iterations)),)
    assert "median difference" in figure.caption and "n = " in figure.caption


def test_baseline_steps_are_matched_and_their_tolerance_band_recorded():
    """A matched baseline's step lies in its tolerance band, whose ends are still within 0.5 dB of
    PAO-Fed-U1's initial rate on the tuning runs."""
    result = decide(CTX, X4_ONLINE_FED_POOR)
    rows = {row["arm"]: row for row in result.details["baseline_steps"]}
    fedsgd = rows[FEDSGD.label]
    assert fedsgd["matched"] and fedsgd["low"] <= fedsgd["matched step"] <= fedsgd["high"]
    for end in ("low_db", "high_db", "achieved_db"):
        assert abs(fedsgd[end] - fedsgd["target_db"]) <= MATCH_TOLERANCE_DB
    assert all(row["matched step"] > 0 for row in rows.values())


class _Counting:
    name = "counting"

    def __init__(self):
        self.arms = []

    def map(self, fn, items):
        items = list(items)
        self.arms += [arm.label for item in items if len(item) == 6 for arm in item[1]]
        return [fn(item) for item in items]

    def close(self):
        pass


def test_arms_that_do_not_depend_on_the_step_choice_are_simulated_once_over_the_grid():
    """X4 (docs/papers/paofed.md#exp-x4) over the three tolerance steps: U1 and U2 run once per replicate, Online-FedSGD
    once per distinct step."""
    spec = dataclasses.replace(X4_BEATS_FEDSGD, grid={"ci": [{STEP: c} for c in ("matched", "low", "high")]})
    clear_store()
    counting = _Counting()
    result = decide(CheckContext(profile="ci", seed=5, executor=counting), spec)
    assert len(result.details["grid"]) == 3
    chunks = design.DESIGN.stages["ci"][-1] // design.DESIGN.chunk["ci"]
    assert counting.arms.count(U1.label) == counting.arms.count(U2.label) == chunks
    assert chunks <= counting.arms.count(FEDSGD.label) <= 3 * chunks
    assert np.isfinite(result.details["grid"][0]["statements"][0]["median"])


def test_lockstep_simulation_and_pinned_arms_give_each_arm_its_own_curves():
    """The design simulates the arms of a setting in lockstep and pinned to grid points: the curves and store keys
    are those of each arm simulated alone at its point."""
    scale = SCALES["ci"]
    # steps given: no tuning
    fedsgd = dataclasses.replace(FEDSGD, steps=(((None, "matched"), 0.3), ((None, "low"), 0.2)))
    pinned = Pinned(arm=fedsgd, point=((STEP, "low"),))
    arms = [U1, fedsgd, C1_IDEAL, pinned]
    together = design.simulate(arms, ((STEP, "matched"),), scale, 3, [0, 1])
    for arm, curves in zip(arms, together, strict=True):
        alone = design.simulate([arm], ((STEP, "matched"),), scale, 3, [0, 1])[0]
        assert np.array_equal(alone, curves)
    low = design.simulate([fedsgd], ((STEP, "low"),), scale, 3, [0, 1])[0]
    assert np.array_equal(low, together[3]) and not np.array_equal(low, together[1])
    key = design.DESIGN.store_key
    assert key(pinned, (), scale, 3) == key(fedsgd, ((STEP, "low"),), scale, 3) != key(fedsgd, ((STEP, "matched"),),
                                                                                       scale, 3)


def test_an_m_index_selecting_the_scales_m_is_the_same_simulation():
    """At the paper's size m_sweep[1] = m: PAO-Fed-U1 with m index 1 is keyed (and simulated) as PAO-Fed-U1."""
    from verify.paofed.experiments import U1_M

    thorough = SCALES["thorough"]
    assert thorough.m_sweep[1] == thorough.m
    assert design.arm_key(U1_M[1], (), thorough, 0) == design.arm_key(U1, (), thorough, 0)
    assert design.arm_key(U1_M[2], (), thorough, 0) != design.arm_key(U1, (), thorough, 0)
    ci = SCALES["ci"]
    assert design.arm_key(U1_M[1], (), ci, 0) != design.arm_key(U1, (), ci, 0)  # ci: m = 1, m_sweep[1] = 2


#: Two small looks, as at thorough.
_STAGED = dataclasses.replace(design.DESIGN, stages={"ci": (2, 4)}, chunk={"ci": 2}, prefetch={})
_STEP_GRID = {"ci": [{STEP: c} for c in ("matched", "low", "high")]}


def test_simulating_each_stage_across_the_grid_first_changes_no_number():
    """The lockstep staging (every open grid point's arms of a stage in one call) gives the result the same design
    decides point by point."""
    staged = dataclasses.replace(X4_BEATS_FEDSGD, design=_STAGED, grid=_STEP_GRID)
    plain = dataclasses.replace(staged, design=dataclasses.replace(_STAGED, lockstep=False))
    ctx = CheckContext(profile="ci", seed=5)
    clear_store()
    reference = decide(ctx, plain)
    clear_store()
    result = decide(ctx, staged)
    assert result.verdict is reference.verdict and result.summary == reference.summary
    assert result.details["grid"] == reference.details["grid"]


def test_prefetching_the_family_changes_no_number_and_shares_the_draws(monkeypatch):
    """The design's prefetch (every claim's stages simulated together, the arms of a setting in lockstep across
    claims) leaves each claim's result as it is alone, and the claims then simulate nothing more."""
    specs = [dataclasses.replace(X4_BEATS_FEDSGD, design=_STAGED, grid=_STEP_GRID),
             dataclasses.replace(X4_U2_U1, design=_STAGED)]
    clear_store()
    alone = _Counting()
    plain = [decide(CheckContext(profile="ci", seed=5, executor=alone), spec) for spec in specs]
    prefetching = dataclasses.replace(_STAGED, prefetch={"ci": 2})
    specs = [dataclasses.replace(spec, design=prefetching) for spec in specs]
    monkeypatch.setattr(harness.catalog, "declared", lambda: tuple(specs))
    clear_store()
    together = _Counting()
    ctx = CheckContext(profile="ci", seed=5, executor=together)
    harness.prefetch(ctx, specs[0])
    calls = len(together.arms)
    results = [decide(ctx, spec) for spec in specs]
    for result, reference in zip(results, plain, strict=True):
        assert result.verdict is reference.verdict and result.summary == reference.summary
        assert result.details["grid"] == reference.details["grid"]
    assert len(together.arms) == calls  # the claims found every arm in the store
    harness.prefetch(ctx, specs[1])  # once per profile, seed and family
    assert len(together.arms) == calls


def test_recorded_iterations_cover_the_read_out_windows_and_every_figure_bin():
    """The design computes the MSE-test at every iteration of the final window and up to the end of the early one,
    and at least FIGURE_SAMPLES_PER_BIN points of each figure bin (every point at ci)."""
    for name, scale in SCALES.items():
        mask = design.recorded(scale)
        assert mask.shape == (scale.iterations + 1,)
        assert mask[scale.iterations - scale.window + 1:].all() and mask[:scale.early[1] + 1].all()
        per_bin = mask[1:].reshape(scale.bins, -1).sum(axis=1)
        assert per_bin.min() >= min(design.FIGURE_SAMPLES_PER_BIN, scale.iterations // scale.bins)
        assert mask.all() == (name == "ci")
