r"""One harness for every paired-arm experiment claim: statements decided on evidence, and only on evidence.

An *experiment* is a set of arms (algorithm + setting) simulated on the same replicates with common random
numbers: replicate :math:`i` fixes the instance, the data and every random draw for all arms. A *statement*
is a claim about the per-replicate contrast :math:`d_i = \sum_t w_t\, r_t(\text{arm}_t)_i` (usually
:math:`r(A)_i - r(B)_i`, a paired difference of a read-out such as the NMSD in dB at an iteration):

* ordering ``below``: :math:`\operatorname{med}(d) < c` ("A below B by more than m": :math:`c = -m`; "A not
  more than m above B": :math:`c = +m`), and ``above`` symmetrically;
* equivalence ``within``: :math:`|\operatorname{med}(d)| < m`.

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
  significant); the claim's statements are Holm-corrected for this (at least one negation shown).
* **Staged replicates.** Otherwise the replicates grow through the design's stages (e.g. 12 → 24) up to the
  profile's budget; :math:`\alpha` is split equally over the looks (Bonferroni), so stopping early is valid.
  Still undecided: ``not_checkable``, with the interval and the replicates that would decide it (80 % power at
  the observed sign fraction).
* **Family.** The experiment claims of one paper form a family with family-wise error
  :data:`FAMILY_ALPHA` = 0.05 (:data:`verify.tolerance.RECORDED_ALPHA`), split equally over its claims
  (Bonferroni; Holm over the whole family would make a claim's verdict depend on which other claims ran,
  and ``fedcheck report --only`` must reproduce every number).
* **Unreported choices.** A claim that depends on a choice the paper leaves unsaid is decided at every point
  of a small documented grid: confirmed (refuted) only if confirmed (refuted) at every point; a mix is
  ``not_checkable`` ("depends on X") with the grid table. The per-point decisions are each at the claim's
  :math:`\alpha` (a conjunction over points is again an intersection-union test).
* **Outside the paper's setting** (substitute data, privacy removed, a parameter outside the paper's range):
  the claim says so and cannot be refuted there (a refutation becomes ``not_checkable``).

Arms are simulated through ``ctx.executor`` in chunks of replicates and kept in one bounded store, keyed by
everything that determines them, so claims that share an arm (and later stages of the same claim) reuse it.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import itertools
import math
import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from verify.records import (
    CheckContext,
    CheckResult,
    Evidence,
    FigureSpec,
    MonteCarlo,
    Series,
    Verdict,
)
from verify.sign_test import (
    needed_replicates,
    p_median_above,
    p_median_below,
    sign_bounds,
)
from verify.tolerance import RECORDED_ALPHA

__all__ = [
    "DECISION_RULE",
    "FAMILY_ALPHA",
    "Design",
    "ExperimentSpec",
    "Statement",
    "StatementOutcome",
    "above",
    "below",
    "clear_store",
    "curve_figure",
    "decide",
    "decide_statement",
    "evaluate_statement",
    "experiment",
    "family_size",
    "needed_replicates",
    "registered",
    "reproduce_experiment",
    "sign_bounds",
    "simulate_arms",
    "swapped",
    "within",
]

#: Family-wise error of the experiment claims of one paper (figure-level statements).
FAMILY_ALPHA = RECORDED_ALPHA
#: Arms kept in the store (each is a (replicates, ...) array of one arm at one grid point).
STORE_SIZE = 256

DECISION_RULE = (
    "Each statement is about the median of the per-replicate paired difference (common random numbers), with "
    "exact sign-test bounds (distribution-free, valid at every replicate count). Confirmed when the statement is "
    "shown at level alpha (every statement of the claim; equivalence by two one-sided tests); refuted only when "
    "its negation is shown at level alpha (the opposite ordering, or non-equivalence; Holm over the claim's "
    "statements); otherwise the replicates grow in stages up to the profile's budget (alpha split over the looks) "
    "and the verdict is not_checkable with the interval and the replicates that would decide it. The experiment "
    "claims of a paper share a family-wise alpha of 0.05, split equally over them. A claim that depends on an "
    "unreported choice is decided over a small grid of it (holds or fails across the grid, else 'depends on'); a "
    "claim checked outside the paper's setting cannot be refuted there.")

_RELATIONS = ("below", "above", "within")


# ----------------------------------------------------------------------------------------------------------
# Exact sign-test bounds and the decision of one statement.


@dataclasses.dataclass(frozen=True, kw_only=True)
class Term:
    """One arm's read-out with its weight in a contrast."""

    arm: Hashable
    readout: str
    weight: float = 1.0


@dataclasses.dataclass(frozen=True, kw_only=True)
class Statement:
    """A statement on the median of the contrast :math:`d_i = \\sum_t w_t\\,r_t(\\mathrm{arm}_t)_i`.

    ``relation``: ``below`` (med d < threshold), ``above`` (med d > threshold) or ``within``
    (|med d| < threshold, the margin, > 0). ``text`` is how the report names it.
    """

    text: str
    terms: tuple[Term, ...]
    relation: str
    threshold: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "terms", tuple(self.terms))
        if not self.terms:
            raise ValueError("terms must name at least one arm read-out")
        if self.relation not in _RELATIONS:
            raise ValueError(f"relation must be one of {_RELATIONS}, got {self.relation!r}")
        if not math.isfinite(self.threshold):
            raise ValueError(f"threshold must be finite, got {self.threshold!r}")
        if self.relation == "within" and not self.threshold > 0:
            raise ValueError(f"an equivalence needs a margin > 0, got threshold = {self.threshold!r}")

    @property
    def arms(self) -> tuple:
        return tuple(dict.fromkeys(t.arm for t in self.terms))


def _label(arm: Hashable) -> str:
    return getattr(arm, "label", str(arm))


def below(a: Hashable, b: Hashable, at: str, *, margin: float = 0.0, text: str = "") -> Statement:
    """"``a`` below ``b`` by more than ``margin``" (``margin`` < 0: "``a`` not more than ``-margin`` above ``b``")."""
    what = text or (f"{_label(a)} below {_label(b)}" + (f" by more than {margin:g}" if margin > 0 else
                    f" + {-margin:g}" if margin < 0 else "") + f" ({at})")
    return Statement(text=what, terms=(Term(arm=a, readout=at), Term(arm=b, readout=at, weight=-1.0)),
                     relation="below", threshold=-margin)


def above(a: Hashable, b: Hashable, at: str, *, margin: float = 0.0, text: str = "") -> Statement:
    """"``a`` above ``b`` by more than ``margin``"."""
    what = text or (f"{_label(a)} above {_label(b)}" + (f" by more than {margin:g}" if margin > 0 else
                    f" - {-margin:g}" if margin < 0 else "") + f" ({at})")
    return Statement(text=what, terms=(Term(arm=a, readout=at), Term(arm=b, readout=at, weight=-1.0)),
                     relation="above", threshold=margin)


def within(a: Hashable, b: Hashable, at: str, *, margin: float, text: str = "") -> Statement:
    """"``a`` within ``margin`` of ``b``" (equivalence, two one-sided tests)."""
    what = text or f"{_label(a)} within +-{margin:g} of {_label(b)} ({at})"
    return Statement(text=what, terms=(Term(arm=a, readout=at), Term(arm=b, readout=at, weight=-1.0)),
                     relation="within", threshold=margin)


@dataclasses.dataclass(frozen=True, kw_only=True)
class StatementOutcome:
    """The evidence on one statement: sign-test p-values for it and for its negation, and the bounds."""

    n: int
    median: float
    mean: float
    lower: float
    upper: float
    p_confirm: float
    p_refute: float
    confirm_fraction: float
    refute_fraction: float

    def as_dict(self) -> dict:
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in dataclasses.asdict(self).items()}


def decide_statement(statement: Statement, d, alpha: float) -> StatementOutcome:
    """Sign-test evidence on ``statement`` from the per-replicate contrast ``d`` (bounds at level ``alpha``).

    ``p_confirm`` is the p-value of the statement (a TOST maximum for ``within``); ``p_refute`` of its negation
    (for ``within`` the smaller of the two directions, doubled). The fractions are the shares of replicates on
    each side (used to estimate the replicates that would decide).
    """
    d = np.asarray(d, dtype=np.float64).ravel()
    if d.size < 1 or not np.all(np.isfinite(d)):
        raise ValueError(f"d must hold finite values (a diverged arm?), got {d.size} values")
    c, rel = statement.threshold, statement.relation
    lower, upper = sign_bounds(d, alpha)
    if rel == "below":
        p_c, p_r = p_median_below(d, c), p_median_above(d, c)
        f_c, f_r = np.mean(d < c), np.mean(d > c)
    elif rel == "above":
        p_c, p_r = p_median_above(d, c), p_median_below(d, c)
        f_c, f_r = np.mean(d > c), np.mean(d < c)
    else:
        p_c = max(p_median_below(d, c), p_median_above(d, -c))
        p_r = min(1.0, 2.0 * min(p_median_above(d, c), p_median_below(d, -c)))
        f_c = min(np.mean(d < c), np.mean(d > -c))
        f_r = max(np.mean(d > c), np.mean(d < -c))
    return StatementOutcome(n=int(d.size), median=float(np.median(d)), mean=float(d.mean()), lower=lower,
                            upper=upper, p_confirm=float(p_c), p_refute=float(p_r), confirm_fraction=float(f_c),
                            refute_fraction=float(f_r))


# ----------------------------------------------------------------------------------------------------------
# Designs: how a family of arms is simulated, and the bounded store of simulated arms.


@dataclasses.dataclass(frozen=True, kw_only=True)
class Design:
    """How one experiment family simulates its arms.

    Attributes
    ----------
    family : str
        Namespace of the store and of the replicate seeds (every claim of the family sees the same replicates).
    simulate : callable
        Module-level ``simulate(arms, point, scale, root_seed, replicates) -> list of arrays``: one array per
        arm, shape ``(len(replicates), ...)``, for the replicate indices ``replicates`` (replicate ``i``'s draws
        depend only on ``(root_seed, i)`` and the point), run with common random numbers across the arms.
    readout : callable
        ``readout(name, scale, outcome) -> (replicates,)``: the scalar a statement compares (e.g. the NMSD in dB
        at an iteration, or a window mean).
    scales : mapping of profile to a hashable scale record (instance sizes passed to ``simulate``).
    stages : mapping of profile to increasing cumulative replicate counts (the last is the budget).
    chunk : mapping of profile to the replicates per ``simulate`` call (the stages are multiples of it).
    arm_key : callable, optional
        ``arm_key(arm, point, scale, root_seed) -> hashable``: everything the arm's simulation at ``point`` depends on
        (an arm that ignores a grid choice is then simulated once for all its values). Default: the whole point
        and the arm's identity.
    """

    family: str
    simulate: Callable[..., list]
    readout: Callable[[str, Any, np.ndarray], np.ndarray]
    scales: Mapping[str, Hashable]
    stages: Mapping[str, tuple[int, ...]]
    chunk: Mapping[str, int]
    arm_key: Callable[..., Hashable] | None = None

    def store_key(self, arm: Hashable, point: tuple, scale: Hashable, root_seed: int) -> tuple:
        """The key of ``arm``'s replicates at ``point`` in the arm store."""
        what = (point, _identity(arm)) if self.arm_key is None else self.arm_key(arm, point, scale, root_seed)
        return (self.family, scale, root_seed, what)

    def __post_init__(self) -> None:
        for profile, stages in self.stages.items():
            chunk = self.chunk.get(profile)
            if not (isinstance(chunk, int) and chunk >= 1):
                raise ValueError(f"{self.family}: chunk[{profile!r}] must be an integer >= 1, got {chunk!r}")
            if (not stages or any(not isinstance(s, int) or s < 2 or s % chunk for s in stages)
                    or list(stages) != sorted(set(stages))):
                raise ValueError(f"{self.family}: stages[{profile!r}] must be increasing multiples of chunk = {chunk} "
                                 f"(>= 2), got {stages!r}")
            if profile not in self.scales:
                raise ValueError(f"{self.family}: scales has no entry for profile {profile!r}")


_STORE: collections.OrderedDict = collections.OrderedDict()
_STORE_LOCK = threading.Lock()  # the report may run claims of different families in threads


def _store_get(key):
    with _STORE_LOCK:
        hit = _STORE.get(key)
        if hit is not None:
            _STORE.move_to_end(key)
        return hit


def _store_put(key, value) -> None:
    value = np.asarray(value)
    value.setflags(write=False)
    with _STORE_LOCK:
        _STORE[key] = value
        _STORE.move_to_end(key)
        while len(_STORE) > STORE_SIZE:
            _STORE.popitem(last=False)


def clear_store() -> None:
    """Forget every stored arm (tests and benchmarks that count simulations start from an empty store)."""
    with _STORE_LOCK:
        _STORE.clear()


def _identity(arm: Hashable) -> Hashable:
    """What determines an arm's simulation: its ``key`` if it has one (labels do not), else the arm itself."""
    return getattr(arm, "key", arm)


def _run_chunk(task):
    simulate, arms, point, scale, seed, replicates = task
    return simulate(arms, point, scale, seed, replicates)


def simulate_arms(ctx: CheckContext, design: Design, arms: Sequence[Hashable], point: tuple, n: int,
                  *, scale: Hashable | None = None) -> dict:
    """The first ``n`` replicates of every arm at grid point ``point``: ``{arm: array (n, ...)}``.

    Arms already in the store are sliced or extended (only the missing replicates are simulated); the missing
    work goes through ``ctx.executor`` in chunks of ``design.chunk[profile]`` replicates.
    """
    scale = design.scales[ctx.profile] if scale is None else scale
    chunk = design.chunk.get(ctx.profile, 1)
    out, have = {}, {}
    keys = {arm: design.store_key(arm, point, scale, ctx.seed) for arm in dict.fromkeys(arms)}
    for arm, key in keys.items():
        hit = _store_get(key)
        have[arm] = 0 if hit is None else hit.shape[0]
        if hit is not None and hit.shape[0] >= n:
            out[arm] = hit[:n]
    missing = []  # one arm per store key still short of n replicates
    for arm, key in keys.items():
        if arm not in out and all(keys[m] != key for m in missing):
            missing.append(arm)
    if missing:
        start = min(have[a] for a in missing)
        start -= start % chunk
        chunks = [tuple(range(i, min(i + chunk, n))) for i in range(start, n, chunk)]
        tasks = [(design.simulate, tuple(missing), point, scale, ctx.seed, c) for c in chunks]
        done = ctx.executor.map(_run_chunk, tasks)
        fresh = {}
        for index, arm in enumerate(missing):
            new = np.concatenate([np.asarray(part[index]) for part in done], axis=0)
            old = _store_get(keys[arm])
            fresh[keys[arm]] = new if start == 0 or old is None else np.concatenate([old[:start], new], axis=0)
            _store_put(keys[arm], fresh[keys[arm]])
        for arm, key in keys.items():  # arms sharing a key (relabelled, or independent of a grid choice)
            if arm not in out:
                out[arm] = fresh[key][:n]
    return {arm: out[arm] for arm in keys}  # the arms' order, whatever was stored (figures list series in it)


# ----------------------------------------------------------------------------------------------------------
# Experiment claims.


@dataclasses.dataclass(frozen=True, kw_only=True)
class ExperimentSpec:
    """What an experiment claim compares, over which grid of unreported choices, and how it is drawn.

    Attributes
    ----------
    claim_id : str
    design : Design
    statements : tuple of Statement
        The claim holds iff every statement does.
    what : str
        One line naming the claim's statement in the summary.
    grid : mapping of profile to a mapping of choice name to values, or to a sequence of points
        The unreported choices and the values they are decided over: their product, or the listed points (each a
        mapping of choice to value). The first point is the default, used for the figures. Missing profile: no
        grid (one point, ``()``).
    choices : mapping of choice name to str
        Why each grid choice is unreported (shown with the grid table).
    outside_setting : str
        Non-empty when the claim is checked outside the paper's setting (says how); it then cannot be refuted.
    figures : callable, optional
        ``figures(curves, scale, outcomes) -> list of FigureSpec`` from the default point's arms
        (``{arm: (n, ...)}``) and the statements' outcomes there.
    figure_arms : tuple, optional
        Arms drawn in the figures but compared by no statement (e.g. the whole sweep around the compared points);
        simulated at the default point on the same replicates.
    details : callable, optional
        ``details(ctx, scale) -> dict`` of extra evidence for the report.
    """

    claim_id: str
    design: Design
    statements: tuple[Statement, ...]
    what: str
    grid: Mapping[str, Mapping[str, tuple]] = dataclasses.field(default_factory=dict)
    choices: Mapping[str, str] = dataclasses.field(default_factory=dict)
    outside_setting: str = ""
    figures: Callable[..., list] | None = None
    figure_arms: tuple = ()
    details: Callable[..., dict] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "statements", tuple(self.statements))
        object.__setattr__(self, "figure_arms", tuple(self.figure_arms))
        if not self.statements:
            raise ValueError(f"{self.claim_id}: statements must not be empty")
        for profile, grid in self.grid.items():
            if isinstance(grid, Mapping):
                for name, values in grid.items():
                    if not values:
                        raise ValueError(f"{self.claim_id}: grid[{profile!r}][{name!r}] must hold at least one value")
            elif not grid or not all(isinstance(point, Mapping) and point for point in grid):
                raise ValueError(f"{self.claim_id}: grid[{profile!r}] must be a mapping of choice to values or a "
                                 "non-empty sequence of points (mappings of choice to value)")
            for name in self.choice_names(profile):
                if name not in self.choices:
                    raise ValueError(f"{self.claim_id}: grid choice {name!r} needs a line in choices saying why "
                                     "the paper leaves it open")

    def choice_names(self, profile: str) -> list[str]:
        grid = self.grid.get(profile, {})
        if isinstance(grid, Mapping):
            return sorted(grid)
        return sorted({name for point in grid for name in point})

    def points(self, profile: str) -> list[tuple]:
        """The grid points at ``profile``: the product of a mapping of values, or the listed points; ``[()]``
        when the claim has no grid. Each point is a sorted tuple of (choice, value) pairs."""
        grid = self.grid.get(profile, {})
        if not isinstance(grid, Mapping):
            return [tuple(sorted(point.items())) for point in grid]
        names = sorted(grid)
        return [tuple(zip(names, values)) for values in itertools.product(*(grid[k] for k in names))] or [()]

    @property
    def arms(self) -> tuple:
        return tuple(dict.fromkeys(arm for s in self.statements for arm in s.arms))


_SPECS: dict[str, ExperimentSpec] = {}


def experiment(**fields) -> ExperimentSpec:
    """Declare (and register) an experiment claim's spec; the registry's claim with this id uses it."""
    spec = ExperimentSpec(**fields)
    previous = _SPECS.get(spec.claim_id)
    if previous is not None and previous.design.family != spec.design.family:
        raise ValueError(f"experiment {spec.claim_id!r} is declared twice")
    _SPECS[spec.claim_id] = spec
    return spec


def swapped(statement: Statement) -> Statement:
    """The same statement with its arms exchanged (every term's weight negated): for a strict ordering with
    threshold 0, its negation. Mutation tests use it to show a confirmation is not built in."""
    return dataclasses.replace(statement, text="swapped: " + statement.text,
                               terms=tuple(dataclasses.replace(t, weight=-t.weight) for t in statement.terms))


@contextlib.contextmanager
def registered(spec: ExperimentSpec):
    """Register a derived (e.g. mutated) spec under its claim id while the block runs, so that
    :func:`reproduce_experiment` finds it; unregistered afterwards."""
    _SPECS[spec.claim_id] = spec
    try:
        yield spec
    finally:
        del _SPECS[spec.claim_id]


def family_size(paper: str) -> int:
    """The number of experiment claims of ``paper`` (its family; every module of the paper imported first)."""
    from verify.registry import all_claims

    all_claims()
    n = sum(1 for claim_id in _SPECS if claim_id.split(".")[0] == paper)
    if n < 1:
        raise ValueError(f"paper {paper!r} has no registered experiment claim")
    return n


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


def _decide_point(ctx: CheckContext, spec: ExperimentSpec, point: tuple, alpha_look: float, scale) -> dict:
    """Stage through the replicates at one grid point; the per-point record."""
    stages = spec.design.stages[ctx.profile]
    k = len(spec.statements)
    for n in stages:
        curves = simulate_arms(ctx, spec.design, spec.arms, point, n, scale=scale)
        outcomes = [decide_statement(s, _contrast(s, spec.design, scale, curves), alpha_look) for s in spec.statements]
        if all(o.p_confirm <= alpha_look for o in outcomes):
            decision = Verdict.CONFIRMED
        elif min(o.p_refute for o in outcomes) <= alpha_look / k:  # Holm's first step: at least one negation
            decision = Verdict.REFUTED
        else:
            decision = Verdict.NOT_CHECKABLE
        if decision is not Verdict.NOT_CHECKABLE:
            break
    return {"point": dict(point), "decision": decision, "replicates": n, "outcomes": outcomes, "curves": curves}


def _point_text(point: Mapping) -> str:
    return ", ".join(f"{k} = {v}" for k, v in point.items()) or "the default setting"


def _outcome_text(s: Statement, o: StatementOutcome) -> str:
    lo = "-inf" if not math.isfinite(o.lower) else f"{o.lower:+.3g}"
    hi = "+inf" if not math.isfinite(o.upper) else f"{o.upper:+.3g}"
    return f"{s.text}: median {o.median:+.3g} [{lo}, {hi}] (n = {o.n})"


def _needed(record: dict, alpha_look: float, spec: ExperimentSpec) -> dict:
    out = {}
    for s, o in zip(spec.statements, record["outcomes"]):
        if o.p_confirm <= alpha_look:
            continue
        out[s.text] = {"to_confirm": needed_replicates(o.confirm_fraction, alpha_look),
                       "to_refute": needed_replicates(o.refute_fraction, alpha_look / len(spec.statements))}
    return out


def decide(ctx: CheckContext, spec: ExperimentSpec) -> CheckResult:
    """Decide an experiment claim by the rule of this module (see :data:`DECISION_RULE`)."""
    paper = spec.claim_id.split(".")[0]
    if ctx.profile not in spec.design.stages:
        raise ValueError(f"{spec.claim_id}: the design has no stages for profile {ctx.profile!r}")
    scale = spec.design.scales[ctx.profile]
    alpha_claim = FAMILY_ALPHA / family_size(paper)
    alpha_look = alpha_claim / len(spec.design.stages[ctx.profile])
    records = [_decide_point(ctx, spec, point, alpha_look, scale) for point in spec.points(ctx.profile)]
    decisions = [r["decision"] for r in records]
    grid_names = spec.choice_names(ctx.profile)
    if all(d is Verdict.CONFIRMED for d in decisions):
        verdict, why = Verdict.CONFIRMED, "holds" + (" at every grid point" if len(records) > 1 else "")
    elif all(d is Verdict.REFUTED for d in decisions):
        verdict, why = Verdict.REFUTED, "its negation is shown" + (" at every grid point" if len(records) > 1 else "")
    elif Verdict.CONFIRMED in decisions and Verdict.REFUTED in decisions:
        verdict, why = Verdict.NOT_CHECKABLE, f"depends on {', '.join(grid_names)}"
    else:
        undecided = [_point_text(r["point"]) for r in records if r["decision"] is Verdict.NOT_CHECKABLE]
        verdict, why = Verdict.NOT_CHECKABLE, "undecided at " + "; ".join(undecided) + " (too few replicates)"
    if verdict is Verdict.REFUTED and spec.outside_setting:
        verdict, why = Verdict.NOT_CHECKABLE, f"its negation is shown, but {spec.outside_setting}: cannot be refuted there"

    first = records[0]
    table = [{"point": r["point"], "decision": r["decision"].value, "replicates": r["replicates"],
              "statements": [{"statement": s.text, **o.as_dict()} for s, o in zip(spec.statements, r["outcomes"])]}
             for r in records]
    texts = [f"[{_point_text(r['point'])}] " + "; ".join(_outcome_text(s, o) for s, o in zip(spec.statements,
                                                                                           r["outcomes"]))
             for r in records] if len(records) > 1 else ["; ".join(_outcome_text(s, o) for s, o in
                                                                   zip(spec.statements, first["outcomes"]))]
    details = {"decision_rule": DECISION_RULE, "alpha_family": FAMILY_ALPHA, "family_claims": family_size(paper),
               "alpha_claim": alpha_claim, "alpha_per_look": alpha_look,
               "stages": list(spec.design.stages[ctx.profile]), "grid": table,
               "unreported_choices": {k: spec.choices[k] for k in grid_names},
               "scale": _plain(scale)}
    if spec.outside_setting:
        details["outside_paper_setting"] = spec.outside_setting
    if verdict is Verdict.NOT_CHECKABLE:
        details["replicates_that_would_decide"] = [{"point": r["point"], **_needed(r, alpha_look, spec)}
                                                   for r in records if r["decision"] is Verdict.NOT_CHECKABLE]
    if spec.details is not None:
        details.update(spec.details(ctx, scale))
    # The worst statement at the first non-confirmed point names the measured/bound pair.
    pick = next((r for r in records if r["decision"] is not Verdict.CONFIRMED), first)
    index = int(np.argmax([o.p_confirm for o in pick["outcomes"]]))
    stmt, out = spec.statements[index], pick["outcomes"][index]
    measured = out.upper if stmt.relation == "below" else (-out.lower if stmt.relation == "above"
                                                            else max(abs(out.lower), abs(out.upper)))
    bound = stmt.threshold if stmt.relation != "above" else -stmt.threshold
    counterexample = None
    if verdict is Verdict.REFUTED:
        r_index = int(np.argmin([o.p_refute for o in pick["outcomes"]]))
        counterexample = {"claim": spec.claim_id, "profile": ctx.profile, "seed": ctx.seed,
                          "point": pick["point"], "statement": r_index, "replicates": pick["replicates"],
                          "text": spec.statements[r_index].text,
                          "outcome": pick["outcomes"][r_index].as_dict(), "alpha": alpha_look}
    figures = []
    if spec.figures is not None:
        curves = first["curves"]
        if spec.figure_arms:
            curves = {**curves, **simulate_arms(ctx, spec.design, spec.figure_arms, spec.points(ctx.profile)[0],
                                                first["replicates"], scale=scale)}
        figures = list(spec.figures(curves, scale, list(zip(spec.statements, first["outcomes"]))))
    return CheckResult(
        claim_id=spec.claim_id, verdict=verdict, summary=f"{spec.what}: {why}; " + " | ".join(texts),
        quantity="sign-test confidence bound of the median paired difference vs the statement's threshold",
        measured=measured if math.isfinite(measured) else None, bound=bound,
        margin=(bound - measured) if math.isfinite(measured) else None, counterexample=counterexample,
        monte_carlo=MonteCarlo(n=max(r["replicates"] for r in records), alpha=alpha_claim, seed=ctx.seed),
        seed=ctx.seed, figures=tuple(figures), details=details)


def _plain(scale) -> Any:
    if dataclasses.is_dataclass(scale):
        return dataclasses.asdict(scale)
    return scale if isinstance(scale, (dict, list, tuple, str, int, float)) else repr(scale)


def reproduce_experiment(counterexample: Mapping[str, Any]) -> Evidence:
    """Re-run the refuted statement of an experiment claim at its recorded profile, seed, point and replicates.

    ``holds`` is False when the negation is still shown at the recorded level.
    """
    spec = _SPECS.get(counterexample["claim"])
    if spec is None:
        from verify.registry import all_claims

        all_claims()
        spec = _SPECS[counterexample["claim"]]
    ctx = CheckContext(profile=counterexample["profile"], seed=int(counterexample["seed"]))
    point = tuple(sorted(dict(counterexample["point"]).items()))
    statement = spec.statements[int(counterexample["statement"])]
    scale = spec.design.scales[ctx.profile]
    curves = simulate_arms(ctx, spec.design, statement.arms, point, int(counterexample["replicates"]), scale=scale)
    alpha = float(counterexample["alpha"])
    outcome = decide_statement(statement, _contrast(statement, spec.design, scale, curves), alpha)
    k = len(spec.statements)
    return Evidence(measured=outcome.p_refute, bound=alpha / k, holds=not outcome.p_refute <= alpha / k,
                    parameters={**counterexample, "outcome": outcome.as_dict()})


# ----------------------------------------------------------------------------------------------------------
# Figures a reader can decode: one colour and style per arm, its band, the compared windows, the decision.


def curve_figure(name: str, title: str, x, curves: Mapping[str, np.ndarray], *, xlabel: str, ylabel: str,
                 windows: Sequence[tuple[float, float]] = (), caption: str = "", band_alpha: float = 0.025,
                 yscale: str = "linear") -> FigureSpec:
    """Median curve of each arm over replicates with its pointwise sign-test band (level ``1 - 2 band_alpha``).

    ``curves``: ``{label: (replicates, len(x))}``. Every arm gets its own colour and line style (the renderer
    never shares a colour between ungrouped series); ``windows`` are the read-out ranges the statements compare.
    """
    x = np.asarray(x, dtype=np.float64)
    series = []
    for label, c in curves.items():
        c = np.asarray(c, dtype=np.float64)
        if c.ndim != 2 or c.shape[1] != x.size:
            raise ValueError(f"curves[{label!r}] must have shape (replicates, {x.size}), got {c.shape}")
        med = np.median(c, axis=0)
        bounds = np.array([sign_bounds(col, band_alpha) for col in c.T])
        lo = np.where(np.isfinite(bounds[:, 0]), bounds[:, 0], c.min(axis=0))
        hi = np.where(np.isfinite(bounds[:, 1]), bounds[:, 1], c.max(axis=0))
        series.append(Series(label=label, x=x, y=med, lower=lo, upper=hi))
    return FigureSpec(name=name, title=title, xlabel=xlabel, ylabel=ylabel, series=tuple(series), yscale=yscale,
                      spans=tuple(windows), caption=caption)
