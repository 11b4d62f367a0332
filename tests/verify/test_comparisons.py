"""The decision rule of verify.comparisons, on toy designs whose truth is known (mutation tests of the rule)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from reports.figures import series_styles
from verify import comparisons as cmp
from verify import sign_test
from verify.budget import examples
from verify.records import CheckContext, Verdict

#: Toy arms: name -> mean of a unit-variance Gaussian per-replicate outcome; replicate i's draw of an arm depends on
#: (seed, i, arm) only, independent between arms (no common random numbers, so differences are noisy).
_TRUTH = {"zero": 0.0, "null": 0.0, "low": -3.0, "high": 3.0, "tiny": -0.05}
_INDEX = {name: i for i, name in enumerate(_TRUTH)}


def _simulate(arms, point, scale, root_seed, replicates):
    out = []
    for arm in arms:
        mean = _TRUTH[arm] * dict(point).get("effect", 1.0)
        draws = [np.random.default_rng([root_seed, i, _INDEX[arm]]).standard_normal() for i in replicates]
        out.append(mean + scale * np.asarray(draws)[:, None] * np.ones((1, 3)))
    return out


def _readout(name, scale, outcome):
    return outcome[:, {"first": 0, "last": -1}[name]]


def _design(stages=(12, 24), family="toy"):
    return cmp.Design(family=family, simulate=_simulate, readout=_readout, scales={"ci": 1.0, "thorough": 1.0},
                      stages={"ci": stages, "thorough": stages}, chunk={"ci": 4, "thorough": 4})


def _spec(claim_id, statements, design=None, **kw):
    # registered under a paper that has no other experiment claims: family of size 1
    return cmp.ExperimentSpec(claim_id=claim_id, design=design or _design(), statements=statements, what="toy", **kw)


@pytest.fixture(autouse=True)
def _toy_family(monkeypatch):
    monkeypatch.setattr(cmp, "family_size", lambda paper: 1)


def test_sign_bounds_are_the_binomial_order_statistics():
    """The lower bound is d_(k) with the largest k such that P(Bin(n, 1/2) <= k - 1) <= alpha."""
    d = np.arange(1.0, 21.0)
    lo, hi = cmp.sign_bounds(d, 0.05)
    assert (lo, hi) == (6.0, 15.0)  # d_(6) and d_(15) of 1..20, by the next line's binomial tail
    assert stats.binom.cdf(5, 20, 0.5) <= 0.05 < stats.binom.cdf(6, 20, 0.5)
    assert cmp.sign_bounds(np.ones(3), 0.05) == (-math.inf, math.inf)  # 2^-3 > 0.05: no finite bound


@settings(max_examples=examples("most"))
@given(n=st.integers(5, 60), alpha=st.sampled_from([0.2, 0.05, 0.01]), seed=st.integers(0, 2**16))
def test_sign_bounds_cover_the_median_at_their_level(n, alpha, seed):
    """The one-sided bound misses the true median with probability <= alpha (checked over 400 samples with a
    binomial upper limit at 1e-4)."""
    rng = np.random.default_rng(seed)
    samples = rng.standard_exponential((400, n)) - math.log(2.0)  # median 0, skewed
    misses = sum(cmp.sign_bounds(s, alpha)[0] > 0.0 for s in samples)
    assert misses <= stats.binom.ppf(1 - 1e-4, 400, alpha)  # the docstring's limit: false alarm 1e-4


def test_a_true_effect_with_too_few_replicates_is_not_checkable_never_refuted():
    """A real but small effect (A below B by 0.05 sd of the difference) at 24 replicates: undecided -> not_checkable, with the
    replicates that would decide it."""
    spec = _spec("toy.small_effect", (cmp.below("tiny", "zero", "last"),))
    result = cmp.decide(CheckContext(profile="ci", seed=0), spec)
    assert result.verdict is Verdict.NOT_CHECKABLE
    assert result.details["replicates_that_would_decide"]


def test_a_true_opposite_effect_is_refuted_and_reproduces():
    """'high below zero' when high is 3 sd above: the opposite ordering is significant -> refuted."""
    spec = _spec("toy.opposite", (cmp.below("high", "zero", "last"),))
    cmp._SPECS[spec.claim_id] = spec
    result = cmp.decide(CheckContext(profile="ci", seed=0), spec)
    assert result.verdict is Verdict.REFUTED
    assert not cmp.reproduce_experiment(result.counterexample).holds


def test_a_true_effect_is_confirmed_at_the_first_stage():
    spec = _spec("toy.effect", (cmp.below("low", "zero", "first"),))
    result = cmp.decide(CheckContext(profile="ci", seed=0), spec)
    assert result.verdict is Verdict.CONFIRMED
    assert result.details["grid"][0]["replicates"] == 12


def test_a_true_null_is_confirmed_by_an_equivalence_with_a_margin_wider_than_the_noise():
    """Two arms with the same mean and independent unit noise (sd of the difference 1.4): 'within +-3' holds;
    'below' is not_checkable, not refuted."""
    ctx = CheckContext(profile="ci", seed=0)
    assert cmp.decide(ctx, _spec("toy.null_equiv", (cmp.within("null", "zero", "last", margin=3.0),))).verdict \
        is Verdict.CONFIRMED
    assert cmp.decide(ctx, _spec("toy.null_order", (cmp.below("null", "zero", "last"),))).verdict \
        is Verdict.NOT_CHECKABLE


def test_a_grid_that_splits_is_depends_on_and_outside_the_setting_cannot_refute():
    """Effect sign flips with the grid choice -> not_checkable ('depends on effect'); a claim checked outside the
    paper's setting whose negation is shown stays not_checkable."""
    ctx = CheckContext(profile="ci", seed=0)
    spec = _spec("toy.grid", (cmp.below("low", "zero", "last"),), grid={"ci": {"effect": (1.0, -1.0)}},
                 choices={"effect": "the paper does not say"})
    result = cmp.decide(ctx, spec)
    assert result.verdict is Verdict.NOT_CHECKABLE and "depends on effect" in result.summary
    outside = _spec("toy.outside", (cmp.below("high", "zero", "last"),), outside_setting="substitute data")
    assert cmp.decide(ctx, outside).verdict is Verdict.NOT_CHECKABLE


def test_stages_extend_the_stored_arms_without_changing_earlier_replicates():
    ctx = CheckContext(profile="ci", seed=3)
    design = _design(family="toy.store")
    first = cmp.simulate_arms(ctx, design, ["low"], (), 8)["low"]
    longer = cmp.simulate_arms(ctx, design, ["low"], (), 16)["low"]
    np.testing.assert_array_equal(longer[:8], first)


def test_needed_replicates_reaches_the_power():
    n = cmp.needed_replicates(0.7, 1e-3)  # P(difference > 0) = 0.7 at level 1e-3: finitely many replicates
    assert n is not None and cmp.needed_replicates(0.5, 1e-3) is None  # no effect: no replicate count suffices
    k = sign_test.critical_count(n, 1e-3)
    assert stats.binom.sf(k - 1, n, 0.7) >= sign_test.POWER


def test_bad_input_names_the_field():
    with pytest.raises(ValueError, match="margin"):
        cmp.within("a", "b", "x", margin=0.0)
    with pytest.raises(ValueError, match="stages"):
        cmp.Design(family="f", simulate=_simulate, readout=_readout, scales={"ci": 1}, stages={"ci": (5,)},
                   chunk={"ci": 4})
    with pytest.raises(ValueError, match="choices"):
        _spec("toy.nochoice", (cmp.below("a", "b", "x"),), grid={"ci": {"rho": (1, 2)}})


def test_curve_figures_give_every_arm_its_own_colour_and_style():
    """Property: in a harness figure no two series share a colour (the PAO-Fed figures drew all arms in one)."""
    curves = {f"arm {i}": np.random.default_rng(i).standard_normal((12, 5)) for i in range(7)}
    fig = cmp.curve_figure("f", "t", np.arange(5), curves, xlabel="n", ylabel="y", windows=[(3, 4)], caption="c")
    colours = [s["color"] for s in series_styles(fig)]
    assert len(set(colours)) == len(colours) == 7
    assert all(s.lower is not None for s in fig.series) and fig.spans == ((3.0, 4.0),)
