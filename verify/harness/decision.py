r"""The one decision rule of every experiment claim: statements decided on evidence, and only on evidence.

Decision rule (:data:`DECISION_RULE` is the text the report shows):

* **Intervals.** Exact, distribution-free sign-test bounds for the median paired difference: the one-sided
  lower bound at level :math:`\alpha` is the order statistic :math:`d_{(k)}` with the largest :math:`k` such
  that :math:`P(\mathrm{Bin}(n, 1/2) \le k - 1) \le \alpha` (Hahn & Meeker, *Statistical Intervals*, 1991,
  §5.2); valid at every :math:`n` for any distribution (conservative with ties), so no normality is assumed.
  An equivalence is shown by two one-sided tests (TOST), each at :math:`\alpha`.
* **Confirmed** when the statement is shown at level :math:`\alpha`: every statement of the claim (an
  intersection-union test needs no multiplicity correction).
* **Refuted** only when the negation of a statement is shown at level :math:`\alpha`: the opposite ordering
  (:math:`\operatorname{med}(d) \ge c` significant), or non-equivalence (:math:`|\operatorname{med}(d)| \ge m`
  significant); the claim's statements are Holm-corrected for this (at least one negation shown). An ordering whose
  interval lies inside its practical margin (neither confirmable nor refutable by more replicates, e.g. two arms
  that coincide) is ``not_checkable``: "no effect beyond the practical margin either way".
* **Staged replicates.** Otherwise the replicates grow through the design's stages (e.g. 12 → 24) up to the
  profile's budget; :math:`\alpha` is split equally over the looks (Bonferroni), so stopping early is valid.
  Still undecided: ``not_checkable``, with the interval and the replicates that would decide it (80 % power at
  the observed sign fraction).
* **Family.** A claim's :math:`\alpha` is its declared family's (:class:`verify.harness.Family`): the family-wise
  error :data:`~verify.harness.family.FAMILY_ALPHA` = 0.05 split equally over the family's declared members
  (Bonferroni; Holm over the whole family would make a claim's verdict depend on which other claims ran, and
  ``fedcheck report --only`` must reproduce every number). Each paper's experiment claims form one family.
* **Unreported choices.** A claim that depends on a choice the paper leaves unsaid is decided at every point
  of a small documented grid: confirmed (refuted) only if confirmed (refuted) at every point; a mix is
  ``not_checkable`` ("depends on X") with the grid table. The points are staged together; once the points decided
  make the verdict "depends on", no further point can change it, and the points still open are not run further
  (their rows say how many replicates they got). The per-point decisions are each at the claim's
  :math:`\alpha` (a conjunction over points is again an intersection-union test).
* **Reconstructed baselines.** A comparison with a reconstruction decides neither way, so no number of replicates
  changes its verdict: it runs its first stage only, and its card shows the observed ordering with its interval at
  that replicate count.
* **Outside the paper's setting** (substitute data, privacy removed, a reconstructed baseline, a parameter outside
  the paper's range): the claim says so and cannot be refuted there (a refutation becomes ``not_checkable``).

:func:`decide` is the single entry point: it applies a design's batching (:attr:`Design.prefetch`,
:attr:`Design.lockstep`) and preparation (:attr:`Design.prepare`, :attr:`Design.report`), which fill the arm store
and never change a number, then this rule.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from verify.harness import catalog
from verify.harness.design import Design, Pinned
from verify.harness.family import FAMILY_ALPHA
from verify.harness.margins import practical_margin, readout_kind_of
from verify.harness.sign_test import needed_replicates
from verify.harness.statements import Statement, StatementOutcome, decide_statement
from verify.harness.store import prefetch_once, simulate_arms
from verify.records import CheckContext, CheckResult, Evidence, MonteCarlo, Verdict

__all__ = ["BELOW_MARGIN", "DECISION_RULE", "UNDECIDED", "WITHIN_MARGIN", "decide", "evaluate_statement", "prefetch",
           "reproduce_experiment", "statement_margins"]

DECISION_RULE = (
    "Each statement is about the median of the per-replicate paired difference (common random numbers), with "
    "exact sign-test bounds (distribution-free, valid at every replicate count). Confirmed when the statement is "
    "shown at level alpha (every statement of the claim; equivalence by two one-sided tests) and, for an ordering, "
    "its median lies beyond the practical margin of its read-out's kind; refuted only when its negation is shown at "
    "level alpha (the opposite ordering beyond the margin, or non-equivalence; Holm over the claim's statements); a "
    "significant effect inside the margin is not_checkable ('effect below the practical margin'), and so is an "
    "ordering whose interval lies inside the margin ('no effect beyond the practical margin either way'); otherwise "
    "the "
    "replicates grow in stages up to the profile's budget (alpha split over the looks) and the verdict is "
    "not_checkable with the interval and the replicates that would decide it. The experiment claims of a paper "
    "share a family-wise alpha of 0.05, split equally over them. Every choice the paper leaves unsaid is decided "
    "over a small declared grid: the claim holds or fails across the grid, else it 'depends on' the choice when "
    "the statement's direction is shown at some points and the opposite at others (not_checkable, with the grid "
    "table; once the points decided make it 'depends on', the points still open are not run further, and their "
    "rows say so). A comparison with a reconstructed baseline decides neither way "
    "(not_checkable, with the observed ordering at its first stage's replicates: more cannot change the verdict), "
    "and a claim checked outside the paper's setting cannot be refuted there.")


def _contrast(statement: Statement, design: Design, scale, curves: Mapping) -> np.ndarray:
    return sum(t.weight * np.asarray(design.readout(t.readout, scale, curves[t.arm]), dtype=np.float64)
               for t in statement.terms)


def evaluate_statement(ctx: CheckContext, design: Design, statement: Statement, n: int, alpha: float, *,
                       point: Mapping[str, Any] | None = None, scale: Hashable | None = None) -> StatementOutcome:
    """The evidence on one statement from the first ``n`` replicates at ``point`` (property tests use it on their
    own scales and root seeds: ``ctx.seed``)."""
    scale = design.scales[ctx.profile] if scale is None else scale
    key = tuple(sorted((point or {}).items()))
    curves = simulate_arms(ctx, design, statement.arms, key, n, scale=scale)
    return decide_statement(statement, _contrast(statement, design, scale, curves), alpha)


def _effect(statement: Statement, outcome: StatementOutcome) -> float:
    """How far the median lies beyond the statement's threshold in the stated direction (negative: the other way);
    ``nan`` for an equivalence."""
    if statement.relation == "below":
        return statement.threshold - outcome.median
    if statement.relation == "above":
        return outcome.median - statement.threshold
    return math.nan


def statement_margins(experiment, design: Design, scale, curves: Mapping) -> list[float]:
    """The practical margin of each statement of ``experiment`` (:func:`verify.harness.margins.practical_margin`;
    a relative margin is taken of the reference arm's median read-out in ``curves``)."""
    return [_statement_margin(experiment, s, design, scale, curves) for s in experiment.statements]


def _statement_margin(experiment, statement: Statement, design: Design, scale, curves: Mapping) -> float:
    last = statement.terms[-1]
    reference = (np.asarray(design.readout(last.readout, scale, curves[last.arm]), dtype=np.float64)
                 if len(statement.terms) > 1 else None)
    return practical_margin(statement, experiment.readout_kind, reference)


#: Why a point is not_checkable: too few replicates, a significant effect inside the practical margin (in the
#: stated direction, or the opposite one), or no effect beyond the margin either way (an ordering whose interval lies
#: inside it: more replicates would neither confirm nor refute it, e.g. two arms that coincide).
UNDECIDED, BELOW_MARGIN, BELOW_MARGIN_OPPOSITE = "undecided", "below_margin", "below_margin_opposite"
WITHIN_MARGIN = "within_margin"


def _inside_margin(statement: Statement, outcome: StatementOutcome, margin: float) -> bool:
    """Whether an ordering's interval lies strictly inside threshold +- margin (a positive margin): then the median
    is shown neither beyond the margin in the stated direction nor in the opposite one, at the interval's level."""
    if statement.relation == "within" or not margin > 0:
        return False
    c = statement.threshold
    return bool(math.isfinite(outcome.lower) and math.isfinite(outcome.upper)
                and c - margin < outcome.lower and outcome.upper < c + margin)


def _point_decision(statements: Sequence[Statement], outcomes: Sequence[StatementOutcome], alpha_look: float,
                    margins: Sequence[float] | None = None) -> tuple[Verdict, str]:
    """The per-point rule: every statement shown (an ordering beyond its margin), or (Holm's first step) at least
    one negation shown (an ordering's opposite beyond its margin); else not_checkable: ``UNDECIDED`` while some
    statement is significant neither way (more replicates may decide it), ``BELOW_MARGIN`` when every statement is
    significant one way or the other and some only inside its margin (more replicates would not make it visible);
    ``BELOW_MARGIN_OPPOSITE`` when, so, some negation is significant (inside the margin); ``WITHIN_MARGIN`` when each
    statement significant neither way is an ordering whose interval lies inside its margin (more replicates would not
    decide it either)."""
    margins = [0.0] * len(outcomes) if margins is None else margins
    k = len(outcomes)
    shown, negated, open_, against, boxed = [], [], False, False, True
    for s, o, m in zip(statements, outcomes, margins, strict=True):
        effect = _effect(s, o)
        ordering = s.relation != "within"
        sig_c, sig_r = o.p_confirm <= alpha_look, o.p_refute <= alpha_look / k
        shown.append(sig_c and (not ordering or effect >= m))
        negated.append(sig_r and (not ordering or -effect >= m))
        open_ = open_ or not (sig_c or sig_r)
        against = against or sig_r
        boxed = boxed and (sig_c or sig_r or _inside_margin(s, o, m))
    if all(shown):
        return Verdict.CONFIRMED, ""
    if any(negated):
        return Verdict.REFUTED, ""
    if open_:
        return Verdict.NOT_CHECKABLE, WITHIN_MARGIN if boxed else UNDECIDED
    return Verdict.NOT_CHECKABLE, BELOW_MARGIN_OPPOSITE if against else BELOW_MARGIN


def _point_record(ctx: CheckContext, experiment, point: tuple, n: int, alpha_look: float, scale) -> dict:
    """The per-point record at ``point`` with ``n`` replicates (the arms are simulated, or taken from the store)."""
    design = experiment.design
    curves = simulate_arms(ctx, design, experiment.arms, point, n, scale=scale)
    outcomes = [decide_statement(s, _contrast(s, design, scale, curves), alpha_look) for s in experiment.statements]
    margins = statement_margins(experiment, design, scale, curves)
    decision, why = _point_decision(experiment.statements, outcomes, alpha_look, margins)
    return {"point": dict(point), "decision": decision, "why": why, "replicates": n, "outcomes": outcomes,
            "margins": margins, "curves": curves}


def _settled(records) -> bool:
    """Whether the points decided so far already make the grid verdict 'depends on' (the statement's direction
    shown at one point and the opposite at another, one of them decisive): no further point can change it."""
    decided = [r for r in records if r is not None]
    directions = {_direction(r) for r in decided}
    return {1, -1} <= directions and any(r["decision"] is not Verdict.NOT_CHECKABLE for r in decided)


def _reconstructed(experiment) -> list[str]:
    """The names of the compared baselines that are reconstructions (a claim against one decides neither way)."""
    return [b.name for b in experiment.baselines if b.source == "reconstruction"]


def _stages(experiment, profile: str) -> tuple[int, ...]:
    """The replicate counts a claim is staged through: its design's, or only the first against a reconstruction
    (its verdict is not_checkable whatever more replicates show)."""
    stages = tuple(experiment.design.stages[profile])
    return stages[:1] if _reconstructed(experiment) else stages


def _alpha_look(experiment, profile: str) -> float:
    return experiment.family.alpha / len(experiment.design.stages[profile])


def _stage_ahead(ctx: CheckContext, design: Design, experiments: Sequence, stages: Sequence[int]) -> None:
    """Simulate, stage by stage, the arms of every grid point of ``experiments`` still predicted open (and at the
    first stage the figure arms at each default point) in one :func:`simulate_arms` call per stage. A claim whose
    decided points already make it 'depends on' (:func:`_settled`) needs none of its open points any more."""
    open_points = [e.points(ctx.profile) for e in experiments]
    final: list[list[dict]] = [[] for _ in experiments]
    for index, n in enumerate(stages):
        jobs = [Pinned(arm=arm, point=point) for e, points in zip(experiments, open_points, strict=True)
                for point in points for arm in e.arms]
        if index == 0:
            jobs += [Pinned(arm=arm, point=e.points(ctx.profile)[0]) for e in experiments for arm in e.figure_arms]
        if not jobs:
            return
        simulate_arms(ctx, design, jobs, (), n)
        if index + 1 == len(stages):
            return
        for i, (e, points) in enumerate(zip(experiments, open_points, strict=True)):
            scale, alpha_look = design.scales[ctx.profile], _alpha_look(e, ctx.profile)
            if index + 1 >= len(_stages(e, ctx.profile)):  # a claim against a reconstruction: its first stage only
                open_points[i] = []
                continue
            records = [_point_record(ctx, e, p, n, alpha_look, scale) for p in points]
            final[i] += [r for r in records if r["why"] != UNDECIDED]
            open_points[i] = [] if _settled(final[i]) else [p for p, r in zip(points, records, strict=True)
                                                             if r["why"] == UNDECIDED]
        if len(experiments) == 1 and len(open_points[0]) < 2:  # one point's arms are simulated together anyway
            return


def prefetch(ctx: CheckContext, experiment) -> None:
    """Fill the store with the first stages of every experiment declared on ``experiment``'s namespace (and in its
    :attr:`Design.prefetch_group`), once per profile, root seed and scale in a process (:attr:`Design.prefetch`), on
    ``experiment``'s design (which may carry a user's data file). Only the store changes: each claim then decides on
    its own."""
    design = experiment.design
    looks = design.prefetch.get(ctx.profile, 0)
    if not looks:
        return
    members = [e for e in catalog.declared() if e.design.namespace == design.namespace] or [experiment]
    if design.prefetch_group is not None:
        group = design.prefetch_group(experiment)
        members = [e for e in members if design.prefetch_group(e) == group] or [experiment]
    key = (design.namespace, ctx.profile, ctx.seed, design.scales[ctx.profile], tuple(e.claim_id for e in members))
    with prefetch_once(key) as first:
        if not first:
            return
        if design.prepare is not None:
            members = list(design.prepare(ctx, members))
        _stage_ahead(ctx, design, members, design.stages[ctx.profile][:looks])


def _point_text(point: Mapping) -> str:
    return ", ".join(f"{k} = {v}" for k, v in point.items()) or "the default setting"


def _outcome_text(s: Statement, o: StatementOutcome) -> str:
    lo = "-inf" if not math.isfinite(o.lower) else f"{o.lower:+.3g}"
    hi = "+inf" if not math.isfinite(o.upper) else f"{o.upper:+.3g}"
    return f"{s.text}: median {o.median:+.3g} [{lo}, {hi}] (n = {o.n})"


def _decide_points(ctx: CheckContext, experiment, alpha_look: float, scale) -> tuple[list[dict], int]:
    """Stage through the replicates of every grid point, stage by stage; a point leaves once decided. When the
    decided points already make the verdict 'depends on' (:func:`_settled`), the points still open are not run
    further (their record is the last stage run, marked ``stopped``). Returns the records (in grid order) and how
    many points were stopped so. Each point's records are those of deciding it alone (replicate i depends only on
    the root seed and i)."""
    points = experiment.points(ctx.profile)
    records: list[dict | None] = [None] * len(points)
    last: list[dict | None] = [None] * len(points)
    open_ = list(range(len(points)))
    for n in _stages(experiment, ctx.profile):
        for i in open_:
            last[i] = _point_record(ctx, experiment, points[i], n, alpha_look, scale)
            if last[i]["why"] != UNDECIDED:
                records[i] = last[i]
        open_ = [i for i in open_ if records[i] is None]
        if not open_ or _settled(records):
            break
    stopped = [i for i in open_ if _settled(records)]
    for i in stopped:
        last[i]["stopped"] = True
    return [r if r is not None else last[i] for i, r in enumerate(records)], len(stopped)


def _needed(record: dict, alpha_look: float, experiment) -> dict:
    out = {}
    for s, o in zip(experiment.statements, record["outcomes"], strict=True):
        if o.p_confirm <= alpha_look:
            continue
        out[s.text] = {"to_confirm": needed_replicates(o.confirm_fraction, alpha_look),
                       "to_refute": needed_replicates(o.refute_fraction, alpha_look / len(experiment.statements))}
    return out


def _plain(scale) -> Any:
    if dataclasses.is_dataclass(scale):
        return dataclasses.asdict(scale)
    return scale if isinstance(scale, (dict, list, tuple, str, int, float)) else repr(scale)


def decide(ctx: CheckContext, experiment) -> CheckResult:
    """Decide an experiment claim by :data:`DECISION_RULE` (its design's batching and preparation first).

    ``experiment``: a :class:`verify.harness.Experiment` (or a copy of one changed with ``dataclasses.replace``, as
    mutation tests make).
    """
    design = experiment.design
    if ctx.profile not in design.stages:
        raise ValueError(f"{experiment.claim_id}: the design has no stages for profile {ctx.profile!r}")
    prefetch(ctx, experiment)
    if design.prepare is not None:
        (experiment,) = design.prepare(ctx, [experiment])
    if design.lockstep:
        _stage_ahead(ctx, design, [experiment], _stages(experiment, ctx.profile))
    result = _decide(ctx, experiment)
    extra = design.report(ctx, experiment) if design.report is not None else {}
    return dataclasses.replace(result, details={**result.details, **extra}) if extra else result


def _decision_text(record: dict) -> str:
    if record["decision"] is not Verdict.NOT_CHECKABLE:
        return record["decision"].value
    if record.get("stopped"):
        return f"not run beyond {record['replicates']} replicates (the verdict was settled)"
    return {BELOW_MARGIN: "effect below the practical margin",
            BELOW_MARGIN_OPPOSITE: "opposite effect below the practical margin",
            WITHIN_MARGIN: "no effect beyond the practical margin either way"}.get(record["why"], "undecided")


def _kinds_text(experiment) -> dict:
    names = sorted({t.readout for s in experiment.statements for t in s.terms})
    return {name: f"{readout_kind_of(experiment.readout_kind, name).name}: practical margin "
                  f"{readout_kind_of(experiment.readout_kind, name).text()}" for name in names}


def _differing(records: Sequence[dict]) -> list[str]:
    """The grid choices that tell a point where the statement's direction is shown from one where the opposite is:
    those that differ between the closest such pairs (fewest differing choices; on a one-at-a-time grid, the one
    choice changed)."""
    yes = [r["point"] for r in records if _direction(r) > 0]
    no = [r["point"] for r in records if _direction(r) < 0]
    diffs = [{k for k in set(a) | set(b) if a.get(k) != b.get(k)} for a in yes for b in no]
    fewest = min(len(d) for d in diffs)
    return sorted(set().union(*(d for d in diffs if len(d) == fewest)))


def _direction(record: dict) -> int:
    """+1 where the statement's direction is shown (confirmed, or significant inside the margin), -1 where it is not
    (refuted, its negation significant inside the margin, or no effect beyond the margin either way: the ordering is
    shown absent), 0 where undecided."""
    if record["decision"] is Verdict.CONFIRMED or record["why"] == BELOW_MARGIN:
        return 1
    if record["decision"] is Verdict.REFUTED or record["why"] in (BELOW_MARGIN_OPPOSITE, WITHIN_MARGIN):
        return -1
    return 0


def _grid_verdict(records: Sequence[dict]) -> tuple[Verdict, str]:
    """The verdict over the grid points' decisions: the same everywhere, or 'depends on' the choices that differ
    between a point where the statement's direction is shown and one where the opposite is (at least one of them
    beyond the margin), or not_checkable (undecided, or an effect inside the margin)."""
    decisions = [r["decision"] for r in records]
    several = len(records) > 1
    if all(d is Verdict.CONFIRMED for d in decisions):
        return Verdict.CONFIRMED, "holds" + (" at every grid point" if several else "")
    if all(d is Verdict.REFUTED for d in decisions):
        return Verdict.REFUTED, "its negation is shown" + (" at every grid point" if several else "")
    directions = {_direction(r) for r in records}
    if {1, -1} <= directions and (Verdict.CONFIRMED in decisions or Verdict.REFUTED in decisions):
        small = [_point_text(r["point"]) for r in records if r["why"] in (BELOW_MARGIN, BELOW_MARGIN_OPPOSITE)]
        none = [_point_text(r["point"]) for r in records if r["why"] == WITHIN_MARGIN]
        notes = (["effect below the practical margin at " + "; ".join(small)] if small else []) + (
            ["no effect beyond the practical margin either way at " + "; ".join(none)] if none else [])
        return Verdict.NOT_CHECKABLE, (f"depends on {', '.join(_differing(records))}"
                                       + (" (" + "; ".join(notes) + ")" if notes else ""))
    small = [_point_text(r["point"]) for r in records if r["why"] in (BELOW_MARGIN, BELOW_MARGIN_OPPOSITE)]
    none = [_point_text(r["point"]) for r in records if r["why"] == WITHIN_MARGIN]
    open_ = [_point_text(r["point"]) for r in records if r["why"] == UNDECIDED]
    parts = []
    if small:
        parts.append("effect below the practical margin at " + "; ".join(small))
    if none:
        parts.append("no effect beyond the practical margin either way at " + "; ".join(none))
    if open_:
        parts.append("undecided at " + "; ".join(open_) + " (too few replicates)")
    return Verdict.NOT_CHECKABLE, "; ".join(parts)


def _decide(ctx: CheckContext, experiment) -> CheckResult:
    design = experiment.design
    scale = design.scales[ctx.profile]
    family = experiment.family
    alpha_claim = family.alpha
    alpha_look = alpha_claim / len(design.stages[ctx.profile])
    records, stopped = _decide_points(ctx, experiment, alpha_look, scale)
    grid_names = experiment.choice_names(ctx.profile)
    verdict, why = _grid_verdict(records)
    if stopped:
        why += (f" ({stopped} of {len(records)} grid points not run to the end: the points decided already make it "
                "'depends on')")
    reconstructed = _reconstructed(experiment)
    if reconstructed:
        verdict, why = (Verdict.NOT_CHECKABLE,
                        f"reconstructed baseline ({', '.join(reconstructed)}): observed ordering: {why}; a "
                        "reconstruction is not the paper's baseline, so it decides neither way (run at its first "
                        f"stage only, {_stages(experiment, ctx.profile)[0]} replicates)")
    elif verdict is Verdict.REFUTED and experiment.outside_setting:
        verdict, why = (Verdict.NOT_CHECKABLE,
                        f"its negation is shown, but {experiment.outside_setting}: cannot be refuted there")

    statements = experiment.statements
    first = records[0]
    table = [{"point": r["point"], "decision": _decision_text(r), "replicates": r["replicates"],
              "statements": [{"statement": s.text, **o.as_dict(), "practical_margin": m}
                             for s, o, m in zip(statements, r["outcomes"], r["margins"], strict=True)]}
             for r in records]
    if len(records) > 1:
        texts = [f"[{_point_text(r['point'])}: {_decision_text(r)}] "
                 + "; ".join(_outcome_text(s, o) for s, o in zip(statements, r["outcomes"], strict=True))
                 for r in records]
    else:
        texts = ["; ".join(_outcome_text(s, o) for s, o in zip(statements, first["outcomes"], strict=True))]
    details = {"decision_rule": DECISION_RULE, "alpha_family": FAMILY_ALPHA, "family_claims": family.size,
               "alpha_claim": alpha_claim, "alpha_per_look": alpha_look,
               "stages": list(_stages(experiment, ctx.profile)), "grid": table,
               "unreported_choices": {k: experiment.choices[k] for k in grid_names},
               "readout_kind": _kinds_text(experiment),
               "scale": _plain(scale)}
    if experiment.no_choices:
        details["unreported_choices_none"] = experiment.no_choices
    if reconstructed:
        details["reconstructed_baselines"] = {b.name: b.provenance for b in experiment.baselines
                                              if b.source == "reconstruction"}
    if experiment.outside_setting:
        details["outside_paper_setting"] = experiment.outside_setting
    if verdict is Verdict.NOT_CHECKABLE and not reconstructed:
        details["replicates_that_would_decide"] = [{"point": r["point"], **_needed(r, alpha_look, experiment)}
                                                   for r in records if r["decision"] is Verdict.NOT_CHECKABLE
                                                   and not r.get("stopped") and r["why"] != WITHIN_MARGIN]
    if experiment.details is not None:
        details.update(experiment.details(ctx, scale))
    # The worst statement at the first non-confirmed point names the measured/bound pair.
    pick = next((r for r in records if r["decision"] is not Verdict.CONFIRMED), first)
    index = int(np.argmax([o.p_confirm for o in pick["outcomes"]]))
    stmt, out = statements[index], pick["outcomes"][index]
    measured = out.upper if stmt.relation == "below" else (-out.lower if stmt.relation == "above"
                                                            else max(abs(out.lower), abs(out.upper)))
    bound = stmt.threshold if stmt.relation != "above" else -stmt.threshold
    counterexample = None
    if verdict is Verdict.REFUTED:
        r_index = int(np.argmin([o.p_refute for o in pick["outcomes"]]))
        counterexample = {"claim": experiment.claim_id, "profile": ctx.profile, "seed": ctx.seed,
                          "point": pick["point"], "statement": r_index, "replicates": pick["replicates"],
                          "text": statements[r_index].text,
                          "outcome": pick["outcomes"][r_index].as_dict(), "alpha": alpha_look}
    figures = []
    if experiment.figures is not None:
        curves = first["curves"]
        if experiment.figure_arms:
            curves = {**curves, **simulate_arms(ctx, design, experiment.figure_arms,
                                                experiment.points(ctx.profile)[0], first["replicates"],
                                                scale=scale)}
        figures = list(experiment.figures(curves, scale, list(zip(statements, first["outcomes"], strict=True))))
    return CheckResult(
        claim_id=experiment.claim_id, verdict=verdict, summary=f"{experiment.what}: {why}; " + " | ".join(texts),
        quantity="sign-test confidence bound of the median paired difference vs the statement's threshold",
        measured=measured if math.isfinite(measured) else None, bound=bound,
        margin=(bound - measured) if math.isfinite(measured) else None, counterexample=counterexample,
        monte_carlo=MonteCarlo(n=max(r["replicates"] for r in records), alpha=alpha_claim, seed=ctx.seed),
        seed=ctx.seed, figures=tuple(figures), details=details)


def reproduce_experiment(counterexample: Mapping[str, Any], experiment=None) -> Evidence:
    """Re-run the refuted statement of an experiment claim at its recorded profile, seed, point and replicates.

    ``experiment``: the claim's experiment (default: the declared one named by ``counterexample["claim"]``).
    ``holds`` is False when the negation is still shown at the recorded level.
    """
    if experiment is None:
        experiment = catalog.lookup(counterexample["claim"])
    ctx = CheckContext(profile=counterexample["profile"], seed=int(counterexample["seed"]))
    design = experiment.design
    if design.prepare is not None:
        (experiment,) = design.prepare(ctx, [experiment])
    point = tuple(sorted(dict(counterexample["point"]).items()))
    statement = experiment.statements[int(counterexample["statement"])]
    scale = design.scales[ctx.profile]
    curves = simulate_arms(ctx, design, statement.arms, point, int(counterexample["replicates"]), scale=scale)
    alpha = float(counterexample["alpha"])
    outcome = decide_statement(statement, _contrast(statement, design, scale, curves), alpha)
    k = len(experiment.statements)
    margin = _statement_margin(experiment, statement, design, scale, curves)
    beyond = statement.relation == "within" or -_effect(statement, outcome) >= margin
    return Evidence(measured=outcome.p_refute, bound=alpha / k, holds=not (outcome.p_refute <= alpha / k and beyond),
                    parameters={**counterexample, "outcome": outcome.as_dict(), "practical_margin": margin})
