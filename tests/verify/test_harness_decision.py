"""The decision rule of verify.harness, on toy designs whose truth is known (mutation tests of the rule), and the
harness's batching (lockstep staging, prefetch), which must never change a number."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from reports.figures import series_styles
from verify import harness as hs
from verify.budget import examples
from verify.harness import sign_test
from verify.records import CheckContext, Citation, Verdict

#: Toy arms: name -> mean of a unit-variance Gaussian per-replicate outcome; replicate i's draw of an arm depends on
#: (seed, i, arm) only, independent between arms (no common random numbers, so differences are noisy).
_TRUTH = {"zero": 0.0, "null": 0.0, "low": -3.0, "high": 3.0, "tiny": -0.05}
_INDEX = {name: i for i, name in enumerate(_TRUTH)}
#: Every toy claim is the only member of its own family: alpha = 0.05.
_FAMILY = hs.Family(paper="toy", name="toy", members=("toy.claim",))


def _draws(arm, point, root_seed, replicates):
    mean = _TRUTH[arm] * dict(point).get("effect", 1.0)
    return mean + np.asarray([np.random.default_rng([root_seed, i, _INDEX[arm]]).standard_normal()
                              for i in replicates])


def _simulate(arms, point, scale, root_seed, replicates):
    return [scale * _draws(arm, point, root_seed, replicates)[:, None] * np.ones((1, 3)) for arm in arms]


def _simulate_lockstep(arms, point, scale, root_seed, replicates):
    """The same draws, for a lockstep design: each (possibly pinned) arm at its own point."""
    out = []
    for arm in arms:
        plain, at = hs.Pinned.unpin(arm, point)
        out.append(scale * _draws(plain, at, root_seed, replicates)[:, None] * np.ones((1, 3)))
    return out


def _readout(name, scale, outcome):
    return outcome[:, {"first": 0, "last": -1}[name]]


def _design(stages=(12, 24), namespace="toy", **options):
    return hs.Design(namespace=namespace, simulate=_simulate, readout=_readout, scales={"ci": 1.0, "thorough": 1.0},
                     stages={"ci": stages, "thorough": stages}, chunk={"ci": 4, "thorough": 4}, **options)


def _spec(claim_id, statements, design=None, **kw) -> hs.Experiment:
    """A toy experiment (not declared: no catalog entry, its family of one member)."""
    fields = dict(claim_id=claim_id, family=_FAMILY, title="toy", citations=(Citation(label="toy", external="toy"),),
                  statement="toy", hypotheses=(), design=design or _design(), statements=statements, what="toy",
                  baselines=(), expected=Verdict.CONFIRMED, reason="toy", module=__name__, readout_kind="db",
                  no_choices="toy: nothing left unsaid")
    if "grid" in kw:
        del fields["no_choices"]
    return hs.Experiment(**{**fields, **kw})


def test_sign_bounds_are_the_binomial_order_statistics():
    """The lower bound is d_(k) with the largest k such that P(Bin(n, 1/2) <= k - 1) <= alpha."""
    d = np.arange(1.0, 21.0)
    lo, hi = hs.sign_bounds(d, 0.05)
    assert (lo, hi) == (6.0, 15.0)  # d_(6) and d_(15) of 1..20, by the next line's binomial tail
    assert stats.binom.cdf(5, 20, 0.5) <= 0.05 < stats.binom.cdf(6, 20, 0.5)
    assert hs.sign_bounds(np.ones(3), 0.05) == (-math.inf, math.inf)  # 2^-3 > 0.05: no finite bound


@settings(max_examples=examples("most"))
@given(n=st.integers(5, 60), alpha=st.sampled_from([0.2, 0.05, 0.01]), seed=st.integers(0, 2**16))
def test_sign_bounds_cover_the_median_at_their_level(n, alpha, seed):
    """The one-sided bound misses the true median with probability <= alpha (checked over 400 samples with a
    binomial upper limit at 1e-4)."""
    rng = np.random.default_rng(seed)
    samples = rng.standard_exponential((400, n)) - math.log(2.0)  # median 0, skewed
    misses = sum(hs.sign_bounds(s, alpha)[0] > 0.0 for s in samples)
    assert misses <= stats.binom.ppf(1 - 1e-4, 400, alpha)  # the docstring's limit: false alarm 1e-4


def test_a_true_effect_with_too_few_replicates_is_not_checkable_never_refuted():
    """A real but small effect (A below B by 0.05 sd of the difference) at 24 replicates: undecided -> not_checkable,
    with the replicates that would decide it."""
    spec = _spec("toy.small_effect", (hs.below("tiny", "zero", "last"),))
    result = hs.decide(CheckContext(profile="ci", seed=0), spec)
    assert result.verdict is Verdict.NOT_CHECKABLE
    assert result.details["replicates_that_would_decide"]


def test_a_true_opposite_effect_is_refuted_and_reproduces():
    """'high below zero' when high is 3 sd above: the opposite ordering is significant -> refuted, and the
    experiment's own reproduction (no registry needed) still shows the negation."""
    spec = _spec("toy.opposite", (hs.below("high", "zero", "last"),))
    result = hs.decide(CheckContext(profile="ci", seed=0), spec)
    assert result.verdict is Verdict.REFUTED
    assert not spec.reproduce(result.counterexample).holds
    assert not hs.reproduce_experiment(result.counterexample, spec).holds


def test_a_true_effect_is_confirmed_at_the_first_stage():
    result = hs.decide(CheckContext(profile="ci", seed=0), _spec("toy.effect", (hs.below("low", "zero", "first"),)))
    assert result.verdict is Verdict.CONFIRMED
    assert result.details["grid"][0]["replicates"] == 12
    assert result.details["alpha_claim"] == _FAMILY.alpha == 0.05 and result.details["family_claims"] == 1


def test_the_alpha_is_the_declared_familys():
    """The same evidence at a family of 50 members (alpha 0.001): 12 replicates (p = 2^-12) still decide it, and the
    recorded alpha is 0.05 / 50; of 2 members, 0.025."""
    for size in (2, 50):
        family = hs.Family(paper="toy", name=f"toy {size}", members=tuple(f"toy.m{i}" for i in range(size)))
        result = hs.decide(CheckContext(profile="ci", seed=0),
                           _spec("toy.m0", (hs.below("low", "zero", "first"),), family=family))
        assert result.monte_carlo.alpha == 0.05 / size == result.details["alpha_claim"]
        assert result.details["alpha_per_look"] == 0.05 / size / 2


def test_a_true_null_is_confirmed_by_an_equivalence_with_a_margin_wider_than_the_noise():
    """Two arms with the same mean and independent unit noise (sd of the difference 1.4): 'within +-3' holds;
    'below' is not_checkable, not refuted."""
    ctx = CheckContext(profile="ci", seed=0)
    assert hs.decide(ctx, _spec("toy.null_equiv", (hs.within("null", "zero", "last", margin=3.0),))).verdict \
        is Verdict.CONFIRMED
    assert hs.decide(ctx, _spec("toy.null_order", (hs.below("null", "zero", "last"),))).verdict \
        is Verdict.NOT_CHECKABLE


def test_a_grid_that_splits_is_depends_on_and_outside_the_setting_cannot_refute():
    """Effect sign flips with the grid choice -> not_checkable ('depends on effect'); a claim checked outside the
    paper's setting whose negation is shown stays not_checkable."""
    ctx = CheckContext(profile="ci", seed=0)
    spec = _spec("toy.grid", (hs.below("low", "zero", "last"),), grid={"ci": {"effect": (1.0, -1.0)}},
                 choices={"effect": "the paper does not say"})
    result = hs.decide(ctx, spec)
    assert result.verdict is Verdict.NOT_CHECKABLE and "depends on effect" in result.summary
    outside = _spec("toy.outside", (hs.below("high", "zero", "last"),), outside_setting="substitute data")
    assert hs.decide(ctx, outside).verdict is Verdict.NOT_CHECKABLE


def test_stages_extend_the_stored_arms_without_changing_earlier_replicates():
    ctx = CheckContext(profile="ci", seed=3)
    design = _design(namespace="toy.store")
    first = hs.simulate_arms(ctx, design, ["low"], (), 8)["low"]
    longer = hs.simulate_arms(ctx, design, ["low"], (), 16)["low"]
    np.testing.assert_array_equal(longer[:8], first)


def test_pinned_arms_of_a_plain_design_are_simulated_at_their_own_points():
    """A non-lockstep design gets one simulate call per grid point; a pinned arm's replicates are those of the arm
    asked at its point, and share its store entry."""
    ctx = CheckContext(profile="ci", seed=4)
    design = _design(namespace="toy.pinned")
    hs.clear_store()
    pinned = [hs.Pinned(arm="low", point=(("effect", e),)) for e in (1.0, -1.0)]
    together = hs.simulate_arms(ctx, design, pinned + ["zero"], (("effect", 2.0),), 8)
    for p in pinned:
        alone = hs.simulate_arms(ctx, design, [p.arm], p.point, 8)[p.arm]
        np.testing.assert_array_equal(together[p], alone)
    assert together[pinned[0]][0, 0] != together[pinned[1]][0, 0]


class _Counting:
    """A serial executor that records the arms of every simulate call."""

    name = "counting"

    def __init__(self):
        self.calls = []

    def map(self, fn, items):
        items = list(items)
        self.calls += [tuple(item[1]) for item in items]
        return [fn(item) for item in items]

    def close(self):
        pass


def test_lockstep_staging_and_prefetch_change_no_number():
    """The same claims decided plainly, by a lockstep design (each stage's open grid points in one call) and after a
    prefetch of the whole group give the same results; lockstep makes one call per chunk for all points."""
    grid = {"ci": {"effect": (1.0, 0.01, -1.0)}}
    statements = (hs.below("low", "zero", "last"),)
    plain = _spec("toy.batch", statements, design=_design(namespace="toy.plain"), grid=grid,
                  choices={"effect": "toy"})
    lockstep = dataclasses.replace(plain, design=dataclasses.replace(
        plain.design, namespace="toy.lockstep", simulate=_simulate_lockstep, lockstep=True))
    hs.clear_store()
    counting = _Counting()
    ctx = CheckContext(profile="ci", seed=6, executor=counting)
    reference = hs.decide(ctx, plain)
    plain_calls = len(counting.calls)
    hs.clear_store()
    counting.calls.clear()
    staged = hs.decide(ctx, lockstep)
    assert staged.verdict is reference.verdict and staged.summary == reference.summary
    assert staged.details["grid"] == reference.details["grid"]
    assert len(counting.calls) < plain_calls  # the open points of a stage share a call
    assert any(isinstance(arm, hs.Pinned) for call in counting.calls for arm in call)


def _decide_prefetched(monkeypatch, namespace: str, **prefetch) -> tuple[list, list]:
    """Three toy claims ``{namespace}{i}`` on a design with ``prefetch`` (and the other design fields given), all
    declared, decided in turn on a counting executor: ``(results, the arms simulated by each decide)``; then checks the
    results are those of deciding each claim without prefetch."""
    design = _design(namespace=namespace, prefetch={"ci": 2}, **prefetch)
    specs = [_spec(f"{namespace}{i}", (hs.below(a, "zero", "last"),), design=design)
             for i, a in enumerate(("low", "high", "tiny"))]
    monkeypatch.setattr(hs.catalog, "declared", lambda: tuple(specs))
    hs.clear_store()
    counting = _Counting()
    ctx = CheckContext(profile="ci", seed=8, executor=counting)
    results, simulated = [], []
    for spec in specs:
        before = len(counting.calls)
        results.append(hs.decide(ctx, spec))
        simulated.append({arm for call in counting.calls[before:] for arm in call})
    hs.clear_store()
    monkeypatch.setattr(hs.catalog, "declared", lambda: ())
    plain = [hs.decide(CheckContext(profile="ci", seed=8),
                       dataclasses.replace(s, design=_design(namespace=namespace + ".plain"))) for s in specs]
    for got, want in zip(results, plain, strict=True):
        assert got.verdict is want.verdict and got.details["grid"] == want.details["grid"]
    return results, simulated


def test_prefetch_fills_the_store_once_and_the_claims_then_simulate_nothing(monkeypatch):
    """A design with prefetch simulates the first looks of every experiment declared on its namespace at the first
    decide; later decides find their arms in the store, and the results are those without prefetch."""
    _, simulated = _decide_prefetched(monkeypatch, "toy.prefetch")
    assert simulated == [{"low", "high", "tiny", "zero"}, set(), set()]  # every later claim read the store


def test_prefetch_groups_simulate_only_the_checked_claims_group(monkeypatch):
    """With ``prefetch_group`` the first decide prefetches only its own group's arms (the other group's arm is left
    to that group's first claim), and the numbers are those without prefetch."""
    groups = {"toy.group0": "a", "toy.group1": "a", "toy.group2": "b"}
    _, simulated = _decide_prefetched(monkeypatch, "toy.group", prefetch_group=lambda e: groups[e.claim_id])
    assert simulated[0] == {"low", "high", "zero"} and simulated[1] == set() and "tiny" in simulated[2]


def test_needed_replicates_reaches_the_power():
    n = hs.needed_replicates(0.7, 1e-3)  # P(difference > 0) = 0.7 at level 1e-3: finitely many replicates
    assert n is not None and hs.needed_replicates(0.5, 1e-3) is None  # no effect: no replicate count suffices
    k = sign_test.critical_count(n, 1e-3)
    assert stats.binom.sf(k - 1, n, 0.7) >= sign_test.POWER


def test_bad_input_names_the_field():
    with pytest.raises(ValueError, match="margin"):
        hs.within("a", "b", "x", margin=0.0)
    with pytest.raises(ValueError, match="stages"):
        hs.Design(namespace="f", simulate=_simulate, readout=_readout, scales={"ci": 1}, stages={"ci": (5,)},
                  chunk={"ci": 4})
    with pytest.raises(ValueError, match="prefetch"):
        _design(prefetch={"ci": 3})
    with pytest.raises(ValueError, match="choices"):
        _spec("toy.nochoice", (hs.below("a", "b", "x"),), grid={"ci": {"rho": (1, 2)}})
    with pytest.raises(ValueError, match="readout_kind"):
        _spec("toy.kind", (hs.below("a", "b", "x"),), readout_kind="furlongs")
    with pytest.raises(ValueError, match="source"):
        hs.Baseline(name="B", source="guess", provenance="p")


def test_curve_figures_give_every_arm_its_own_colour_and_style():
    """Property: in a harness figure no two series share a colour (the PAO-Fed figures drew all arms in one)."""
    curves = {f"arm {i}": np.random.default_rng(i).standard_normal((12, 5)) for i in range(7)}
    fig = hs.curve_figure("f", "t", np.arange(5), curves, xlabel="n", ylabel="y", windows=[(3, 4)], caption="c")
    colours = [s["color"] for s in series_styles(fig)]
    assert len(set(colours)) == len(colours) == 7
    assert all(s.lower is not None for s in fig.series) and fig.spans == ((3.0, 4.0),)
