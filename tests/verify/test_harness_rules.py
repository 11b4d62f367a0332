"""Mutation tests of the audit's experiment rules in verify.harness, on toy designs whose truth is known.

* a verdict that flips across the grid of an unreported choice becomes "depends on" that choice (not_checkable, with
  the grid table in the details and the card);
* a comparison with a reconstructed baseline decides neither way (the observed ordering is shown, the verdict is
  not_checkable whichever way it goes), while the same comparison with a paper's baseline decides;
* a significant effect inside the practical margin of its read-out's kind confirms nothing (and an opposite one
  inside it refutes nothing);
* a declaration without its unreported choices (a grid, or a reason there is none) or without a read-out kind is
  refused, naming the claim and the field.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from verify import harness as hs
from verify.harness.margins import READOUT_KINDS, practical_margin
from verify.records import CheckContext, Citation, Verdict

#: Per-arm offsets (in dB) on a shared per-replicate level: the paired differences are the offsets plus a small
#: independent noise, so every ordering below is significant at 24 replicates, and its size is known.
_OFFSET = {"ref": 0.0, "small_below": -0.2, "big_below": -2.0, "small_above": 0.2, "big_above": 2.0}
_NOISE = 0.02


def _simulate(arms, point, scale, root_seed, replicates):
    sign = float(dict(point).get("sign", 1.0)) * float(dict(point).get("size", 1.0))
    noise = _NOISE * float(dict(point).get("noise", 1.0))
    out = []
    for arm in arms:
        rows = []
        for i in replicates:
            rng = np.random.default_rng([root_seed, int(i)])
            level = 10.0 * rng.standard_normal()  # shared by every arm of replicate i (common random numbers)
            own = np.random.default_rng([root_seed, int(i), list(_OFFSET).index(arm)]).standard_normal()
            rows.append(level + sign * _OFFSET[arm] + noise * own)
        out.append(np.asarray(rows)[:, None])
    return out


def _readout(name, scale, outcome):
    return outcome[:, 0]


_DESIGN = hs.Design(namespace="toy.rules", simulate=_simulate, readout=_readout, scales={"ci": 1}, stages={"ci": (24,)},
                    chunk={"ci": 4})
_FAMILY = hs.Family(paper="toy", name="rules", members=("toy.rule",))
_CTX = CheckContext(profile="ci", seed=3)


def _spec(statements, **changes) -> hs.Experiment:
    fields = dict(claim_id="toy.rule", family=_FAMILY, title="t", citations=(Citation(label="t", external="t"),),
                  statement="s", hypotheses=(), design=_DESIGN, statements=statements, what="w", baselines=(),
                  expected=Verdict.CONFIRMED, reason="r", module=__name__, readout_kind="db",
                  no_choices="toy: the set-up is fully stated")
    if "grid" in changes:
        del fields["no_choices"]
    return hs.Experiment(**{**fields, **changes})


# --- a verdict that flips across the grid ------------------------------------------------------------------------


def test_a_verdict_that_flips_across_the_grid_is_depends_on_the_choice():
    """'big_below below ref' holds at sign = +1 and its negation is shown at sign = -1: neither confirmed nor refuted
    but 'depends on sign', with each point's decision in the details' grid table and in the card's summary."""
    grid = {"ci": {"sign": (1.0, -1.0)}}
    spec = _spec((hs.below("big_below", "ref", "x"),), grid=grid, choices={"sign": "the toy paper omits it"})
    result = hs.decide(_CTX, spec)
    assert result.verdict is Verdict.NOT_CHECKABLE
    assert "depends on sign" in result.summary
    assert [row["decision"] for row in result.details["grid"]] == ["confirmed", "refuted"]
    assert "[sign = 1.0: confirmed]" in result.summary and "[sign = -1.0: refuted]" in result.summary
    assert result.details["unreported_choices"] == {"sign": "the toy paper omits it"}
    # The mutation's control: decided at either point alone, the same statement is confirmed / refuted.
    for sign, verdict in ((1.0, Verdict.CONFIRMED), (-1.0, Verdict.REFUTED)):
        alone = _spec((hs.below("big_below", "ref", "x"),), grid={"ci": {"sign": (sign,)}},
                      choices={"sign": "the toy paper omits it"})
        assert hs.decide(_CTX, alone).verdict is verdict


def test_depends_on_names_only_the_choices_that_differ_between_a_confirmed_and_a_refuted_point():
    """Two grid choices, only ``sign`` changes the decision: the verdict names sign, not the inert choice."""
    points = ({"sign": 1.0, "inert": "a"}, {"sign": -1.0, "inert": "a"}, {"sign": 1.0, "inert": "b"})
    spec = _spec((hs.below("big_below", "ref", "x"),), grid={"ci": points},
                 choices={"sign": "omitted", "inert": "omitted too"})
    result = hs.decide(_CTX, spec)
    assert result.verdict is Verdict.NOT_CHECKABLE and "depends on sign;" in result.summary


def test_a_direction_shown_only_inside_the_margin_at_one_point_and_refuted_at_another_is_depends_on():
    """At (sign 1, size 0.1) the ordering holds significantly but by 0.2 dB (inside the margin); at (sign -1, size 1)
    its negation is shown by 2 dB: the direction flips across the grid, so 'depends on', with the small point named."""
    points = ({"sign": 1.0, "size": 0.1}, {"sign": -1.0, "size": 1.0})
    spec = _spec((hs.below("big_below", "ref", "x"),), grid={"ci": points}, choices={"sign": "omitted", "size": "too"})
    result = hs.decide(_CTX, spec)
    assert result.verdict is Verdict.NOT_CHECKABLE
    assert "depends on sign, size (effect below the practical margin at sign = 1.0, size = 0.1)" in result.summary
    assert [row["decision"] for row in result.details["grid"]] == ["effect below the practical margin", "refuted"]
    # Both points inside the margin, opposite directions: no point is decisive, so not 'depends on'.
    small = _spec((hs.below("big_below", "ref", "x"),), grid={"ci": ({"sign": 1.0, "size": 0.1},
                                                                      {"sign": -1.0, "size": 0.1})},
                  choices={"sign": "omitted", "size": "too"})
    assert "depends on" not in hs.decide(_CTX, small).summary


def test_a_grid_stops_its_open_points_once_the_decided_ones_make_it_depends_on():
    """Stages 8 -> 24. sign = +1 is confirmed and sign = -1 refuted at 8 replicates; size = 0 (no effect) with a 2 dB
    noise is undecided at 8 (its interval is wider than the margin). The verdict is then 'depends on' whatever the
    open point shows, so it is not run to 24 (its row says so and the summary counts it); alone, the same point runs
    to 24. The decided points' numbers are those of deciding them alone."""
    asked: dict = {}

    def simulate(arms, point, scale, root_seed, replicates):
        key = tuple(sorted(dict(point).items()))
        asked[key] = max(asked.get(key, 0), 1 + max(int(i) for i in replicates))
        return _simulate(arms, point, scale, root_seed, replicates)

    staged = dataclasses.replace(_DESIGN, simulate=simulate, stages={"ci": (8, 24)}, namespace="toy.rules.staged")
    points = ({"sign": 1.0, "size": 1.0, "noise": 1.0}, {"sign": -1.0, "size": 1.0, "noise": 1.0},
              {"sign": 1.0, "size": 0.0, "noise": 100.0})
    choices = {"sign": "omitted", "size": "too", "noise": "also"}
    spec = _spec((hs.below("big_below", "ref", "x"),), grid={"ci": points}, choices=choices, design=staged)
    result = hs.decide(_CTX, spec)
    assert result.verdict is Verdict.NOT_CHECKABLE and "depends on sign" in result.summary
    assert "1 of 3 grid points not run to the end" in result.summary
    rows = result.details["grid"]
    assert [r["decision"] for r in rows[:2]] == ["confirmed", "refuted"] and [r["replicates"] for r in rows] == [8] * 3
    assert rows[2]["decision"].startswith("not run beyond 8 replicates")
    assert asked[(("noise", 100.0), ("sign", 1.0), ("size", 0.0))] == 8
    assert all(p["point"] != points[2] for p in result.details["replicates_that_would_decide"])
    # Control: alone, the open point runs through every stage (undecided at 24); the decided ones give the same rows.
    alone = hs.decide(_CTX, _spec((hs.below("big_below", "ref", "x"),), grid={"ci": (points[2],)}, choices=choices,
                                  design=staged))
    assert alone.details["grid"][0]["replicates"] == 24 and alone.details["grid"][0]["decision"] == "undecided"
    for i in (0, 1):
        one = hs.decide(_CTX, _spec((hs.below("big_below", "ref", "x"),), grid={"ci": (points[i],)}, choices=choices,
                                    design=staged))
        assert one.details["grid"][0]["statements"] == rows[i]["statements"]


# --- reconstructed baselines ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("arm, observed", [("big_below", "holds"), ("big_above", "its negation is shown")])
def test_a_reconstructed_baseline_decides_neither_way(arm, observed):
    """The same comparison decides with a paper's baseline (confirmed / refuted) and is not_checkable, with the
    observed ordering, when the baseline is a reconstruction: it can neither confirm nor refute."""
    statements = (hs.below(arm, "ref", "x"),)
    paper = _spec(statements, baselines=(hs.Baseline(name="B", source="paper", provenance="the paper's [7]"),))
    decided = hs.decide(_CTX, paper).verdict
    assert decided is (Verdict.CONFIRMED if arm == "big_below" else Verdict.REFUTED)
    recon = dataclasses.replace(paper, expected=Verdict.NOT_CHECKABLE,
                                baselines=(hs.Baseline(name="B", source="reconstruction",
                                                       provenance="fedcheck's reading"),))
    result = hs.decide(_CTX, recon)
    assert result.verdict is Verdict.NOT_CHECKABLE and result.counterexample is None
    assert "reconstructed baseline (B): observed ordering: " + observed in result.summary
    assert result.details["reconstructed_baselines"] == {"B": "fedcheck's reading"}
    assert result.details["grid"][0]["statements"][0]["upper"] is not None  # the interval is shown


def test_a_comparison_with_a_reconstruction_runs_its_first_stage_only():
    """Staged 4 -> 24: at 4 replicates nothing is significant (p = 1/16 > alpha/2), so with a paper's baseline the
    claim goes on to 24 and confirms; against a reconstruction more replicates cannot change its verdict, so it stops
    at 4 and shows the observed ordering there (no 'replicates that would decide')."""
    staged = dataclasses.replace(_DESIGN, namespace="toy.rules.staged", stages={"ci": (4, 24)})
    statements = (hs.below("big_below", "ref", "x"),)
    paper = _spec(statements, design=staged,
                  baselines=(hs.Baseline(name="B", source="paper", provenance="the paper's [7]"),))
    hs.clear_store()
    decided = hs.decide(_CTX, paper)
    assert decided.verdict is Verdict.CONFIRMED and decided.details["grid"][0]["replicates"] == 24
    recon = dataclasses.replace(paper, expected=Verdict.NOT_CHECKABLE,
                                baselines=(hs.Baseline(name="B", source="reconstruction", provenance="a reading"),))
    hs.clear_store()
    result = hs.decide(_CTX, recon)
    assert result.verdict is Verdict.NOT_CHECKABLE and result.details["grid"][0]["replicates"] == 4
    assert result.details["stages"] == [4] and "first stage only, 4 replicates" in result.summary
    assert "replicates_that_would_decide" not in result.details


# --- the practical margin ------------------------------------------------------------------------------------------


def test_a_significant_effect_below_the_practical_margin_does_not_confirm():
    """0.2 dB below on every replicate is significant (p = 2^-24) but inside the 0.5 dB margin of the db kind:
    not_checkable 'effect below the practical margin'; 2 dB below confirms; with a margin-free reading (the
    statement that states its own effect size (0.1 dB) carries its level and is confirmed by the same data."""
    small = hs.decide(_CTX, _spec((hs.below("small_below", "ref", "x"),)))
    assert small.verdict is Verdict.NOT_CHECKABLE
    assert "effect below the practical margin" in small.summary
    assert small.details["grid"][0]["statements"][0]["p_confirm"] <= small.details["alpha_per_look"]
    assert small.details["grid"][0]["statements"][0]["practical_margin"] == READOUT_KINDS["db"].margin
    assert hs.decide(_CTX, _spec((hs.below("big_below", "ref", "x"),))).verdict is Verdict.CONFIRMED
    own = hs.decide(_CTX, _spec((hs.Statement(text="own threshold", terms=(hs.Term(arm="small_below", readout="x"),
                                                                              hs.Term(arm="ref", readout="x",
                                                                                      weight=-1.0)),
                                              relation="below", threshold=-0.1),)))
    assert own.verdict is Verdict.CONFIRMED


def test_arms_that_coincide_have_no_effect_beyond_the_margin_and_stop():
    """'ref below ref' (the two arms coincide; their paired differences are 0 up to rounding): its interval lies
    inside the 0.5 dB margin, so no number of replicates could confirm or refute it: not_checkable 'no effect beyond
    the practical margin either way', run at its first stage only and with no 'replicates that would decide'; the
    same at a grid point makes the grid verdict name it."""
    staged = dataclasses.replace(_DESIGN, namespace="toy.rules.tie", stages={"ci": (8, 24)})
    tie = hs.decide(_CTX, _spec((hs.below("ref", "ref", "x"),), design=staged))
    assert tie.verdict is Verdict.NOT_CHECKABLE
    assert "no effect beyond the practical margin either way" in tie.summary
    assert tie.details["grid"][0]["replicates"] == 8 and not tie.details["replicates_that_would_decide"]
    # control: a real 2 dB effect is confirmed
    assert hs.decide(_CTX, _spec((hs.below("big_below", "ref", "x"),), design=staged)).verdict is Verdict.CONFIRMED
    # on a grid: confirmed where the effect is 2 dB, shown absent where it is 0: 'depends on size'
    grid = {"ci": ({"size": 1.0}, {"size": 0.0})}
    mixed = hs.decide(_CTX, _spec((hs.below("big_below", "ref", "x"),), design=staged, grid=grid,
                                  choices={"size": "omitted"}))
    assert mixed.verdict is Verdict.NOT_CHECKABLE and "depends on size (no effect beyond the practical margin " \
        "either way at size = 0.0)" in mixed.summary


def test_an_opposite_effect_refutes_only_beyond_the_margin():
    """'small_above below ref': the opposite ordering is significant but 0.2 dB, inside the margin: not refuted;
    2 dB the other way is refuted."""
    small = hs.decide(_CTX, _spec((hs.below("small_above", "ref", "x"),)))
    assert small.verdict is Verdict.NOT_CHECKABLE and "effect below the practical margin" in small.summary
    assert hs.decide(_CTX, _spec((hs.below("big_above", "ref", "x"),))).verdict is Verdict.REFUTED


def test_relative_margins_scale_with_the_reference_arm_and_own_thresholds_carry_their_level():
    loss = READOUT_KINDS["loss"]
    statement = hs.below("a", "b", "final_loss")
    assert practical_margin(statement, "loss", np.array([2.0, 4.0, 6.0])) == pytest.approx(loss.margin * 4.0)
    assert practical_margin(hs.below("a", "b", "x", margin=1.0), "db", None) == 0.0  # a stated effect size
    assert practical_margin(hs.within("a", "b", "x", margin=1.0), "db", None) == 0.0
    assert practical_margin(hs.below("a", "b", "x"), {"x": "accuracy"}, None) == READOUT_KINDS["accuracy"].margin


# --- declarations ----------------------------------------------------------------------------------------------------


def test_a_declaration_without_its_unreported_choices_is_refused():
    """Neither a grid nor a reason there is none: ValueError naming the claim and the field; both at once too."""
    with pytest.raises(ValueError, match=r"toy\.rule: choices: "):
        _spec((hs.below("big_below", "ref", "x"),), no_choices="")
    with pytest.raises(ValueError, match=r"toy\.rule: no_choices must be empty"):
        _spec((hs.below("big_below", "ref", "x"),), grid={"ci": {"sign": (1.0,)}}, choices={"sign": "omitted"},
              no_choices="nothing")
    with pytest.raises(ValueError, match=r"toy\.rule: expected must be not_checkable"):
        _spec((hs.below("big_below", "ref", "x"),),
              baselines=(hs.Baseline(name="B", source="reconstruction", provenance="fedcheck's reading"),))
    with pytest.raises(ValueError, match=r"toy\.rule: readout_kind"):
        _spec((hs.below("big_below", "ref", "x"),), readout_kind={"y": "db"})
    with pytest.raises(ValueError, match=r"toy\.rule: readout_kind must be one of"):
        _spec((hs.below("big_below", "ref", "x"),), readout_kind="furlongs")
