"""An experiment claim, declared once: the paper's statement, what is compared, and how it is expected to decide.

:func:`experiment` declares an :class:`Experiment` (and records it in :mod:`verify.harness.catalog`). From it the
harness builds the registry's :class:`~verify.records.Claim` (:attr:`Experiment.claim`), its check
(:attr:`Experiment.check`: :func:`verify.harness.decide`, after a user's data file where the claim needs one) and its
reproduction (:meth:`Experiment.reproduce`). A paper module lists its declarations in a module-level ``EXPERIMENTS``
tuple, which :mod:`verify.registry` collects next to ``CLAIMS``.

The generated check reports the declaring module as its ``__module__`` (and ``check_<label>`` as its name), so the
report's ``check`` field, the runner's grouping of claims by module and the result cache's code digest (the source
of the check's module and of everything it imports) work as for a written check.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import sys
from collections.abc import Callable, Mapping
from typing import Any

from verify.harness import catalog
from verify.harness.decision import decide, reproduce_experiment
from verify.harness.design import Design
from verify.harness.family import Family
from verify.harness.statements import Statement
from verify.records import CheckContext, CheckResult, Citation, Claim, Evidence, Verdict

__all__ = ["BASELINE_SOURCES", "Baseline", "DataFile", "Experiment", "experiment", "reconstructed_reason"]

#: Where a compared baseline comes from: the paper (or the publication it cites for it) specifies it, or fedcheck
#: reconstructs what the paper leaves unsaid.
BASELINE_SOURCES = ("paper", "reconstruction")


def reconstructed_reason(how: str, doc: str) -> str:
    """The opening of a claim's reason when its comparison arm is a reconstruction: what the paper gives of the
    baseline (``how``, e.g. "names without giving its rules") and the project page that documents the stand-in."""
    return (f"Reconstructed baseline: the comparison arm is fedcheck's stand-in for a baseline the paper {how}, so "
            f"the observed ordering (details and card) decides neither way, confirming no more than refuting ({doc}). "
            "Before this rule: ")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Baseline:
    """A baseline an experiment compares the paper's method with, and where it comes from.

    Attributes
    ----------
    name : str
        The baseline as the paper names it (e.g. ``"FedAvg-DP"``).
    source : {"paper", "reconstruction"}
        ``paper``: the paper, or the publication it cites, fixes the algorithm; ``reconstruction``: fedcheck's
        reading of what the paper leaves unsaid (a comparison with it cannot settle the paper's statement).
    provenance : str
        One line: where the algorithm comes from, or what was reconstructed and how.
    """

    name: str
    source: str
    provenance: str

    def __post_init__(self) -> None:
        if not (isinstance(self.name, str) and self.name):
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        if self.source not in BASELINE_SOURCES:
            raise ValueError(f"{self.name}: source must be one of {BASELINE_SOURCES}, got {self.source!r}")
        if not (isinstance(self.provenance, str) and self.provenance.strip()):
            raise ValueError(f"{self.name}: provenance must be a non-empty line, got {self.provenance!r}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class DataFile:
    """A real data set the experiment reads from the user's file (``fedcheck report --data NAME=PATH``).

    Without the file the check is ``not_checkable`` with the summary ``needs {what} from a local file ({absent});
    decide it with: <command>``; with it the design runs on the file (:meth:`Design.with_data_file`).
    """

    name: str
    what: str
    absent: str
    file: str

    def __post_init__(self) -> None:
        from verify.data_files import DATA_FILES

        if self.name not in DATA_FILES:
            raise ValueError(f"name must be one of {', '.join(DATA_FILES)}, got {self.name!r}")
        for field in ("what", "absent", "file"):
            if not (isinstance(getattr(self, field), str) and getattr(self, field)):
                raise ValueError(f"{field} must be a non-empty string, got {getattr(self, field)!r}")


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class Experiment:
    """One experiment claim: the paper's statement, the paired comparison that decides it, and its record.

    Attributes
    ----------
    claim_id, title, citations, statement, hypotheses, expected, reason :
        As in :class:`verify.records.Claim` (``statement``: the paper's statement in words; ``hypotheses``: the
        set-up and the operational reading; ``reason``: why the claim is expected to decide so).
    family : Family
        The family whose alpha the claim shares; it must list ``claim_id`` among its members.
    design : Design
    statements : tuple of Statement
        What is decided: the claim holds iff every statement does.
    what : str
        One line naming the decided statement in the result's summary.
    baselines : tuple of Baseline
        Every baseline the statements compare the paper's method with, with its source (``()``: the claim compares
        the paper's own method in different settings, or with a ground truth).
    grid : mapping of profile to a mapping of choice name to values, or to a sequence of points
        The unreported choices and the values they are decided over: their product, or the listed points (each a
        mapping of choice to value). The first point is the default, used for the figures. Missing profile: no
        grid (one point, ``()``).
    choices : mapping of choice name to str
        Why the paper leaves each grid choice open (one line each; shown with the grid table).
    no_choices : str
        Declared instead of a grid when the paper leaves nothing unsaid that could change the verdict: one line
        saying why. :func:`experiment` refuses a declaration with neither a grid nor this reason (every choice the
        paper leaves unsaid is a grid choice, decided over a small grid; a verdict that differs across the grid
        is "depends on" it).
    readout_kind : str or mapping of read-out name to str
        The kind of each read-out the statements compare (one kind for all, or per read-out), a key of
        :data:`verify.harness.margins.READOUT_KINDS`: it sets the practical margin an ordering must show.
    outside_setting : str
        Non-empty when the claim is checked outside the paper's setting (says how); it then cannot be refuted.
    figures : callable, optional
        ``figures(curves, scale, outcomes) -> list of FigureSpec`` from the default point's arms
        (``{arm: (n, ...)}``) and the statements' outcomes there.
    figure_arms : tuple, optional
        Arms drawn in the figures but compared by no statement; simulated at the default point on the same
        replicates.
    details : callable, optional
        ``details(ctx, scale) -> dict`` of extra evidence for the report.
    data : DataFile, optional
        A user's data file the claim needs (:class:`DataFile`).
    expected_by_profile, corrected_by, corrects, severity, uncorrected_because :
        As in :class:`verify.records.Claim`.
    module : str
        The declaring module (what the generated check reports as its ``__module__``).
    """

    claim_id: str
    family: Family
    title: str
    citations: tuple[Citation, ...]
    statement: str
    hypotheses: tuple[str, ...]
    design: Design
    statements: tuple[Statement, ...]
    what: str
    baselines: tuple[Baseline, ...]
    expected: Verdict
    reason: str
    module: str
    readout_kind: str | Mapping[str, str]
    grid: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    choices: Mapping[str, str] = dataclasses.field(default_factory=dict)
    no_choices: str = ""
    outside_setting: str = ""
    figures: Callable[..., list] | None = None
    figure_arms: tuple = ()
    details: Callable[..., dict] | None = None
    data: DataFile | None = None
    expected_by_profile: Mapping[str, Verdict] | None = None
    corrected_by: str | None = None
    corrects: str | None = None
    severity: str | None = None
    uncorrected_because: str = ""

    def __post_init__(self) -> None:
        for name in ("statements", "figure_arms", "baselines", "citations", "hypotheses"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if not self.statements:
            raise ValueError(f"{self.claim_id}: statements must not be empty")
        if not all(isinstance(s, Statement) for s in self.statements):
            raise TypeError(f"{self.claim_id}: statements must be Statement records")
        if not isinstance(self.family, Family):
            raise TypeError(f"{self.claim_id}: family must be a Family, got {self.family!r}")
        if not isinstance(self.design, Design):
            raise TypeError(f"{self.claim_id}: design must be a Design, got {self.design!r}")
        if not all(isinstance(b, Baseline) for b in self.baselines):
            raise TypeError(f"{self.claim_id}: baselines must be Baseline records")
        if self.data is not None and not isinstance(self.data, DataFile):
            raise TypeError(f"{self.claim_id}: data must be a DataFile, got {self.data!r}")
        self._validate_readout_kind()
        expectations = [self.expected, *(self.expected_by_profile or {}).values()]
        if any(b.source == "reconstruction" for b in self.baselines) and any(
                v is not Verdict.NOT_CHECKABLE for v in expectations):
            raise ValueError(f"{self.claim_id}: expected must be not_checkable at every profile: a comparison with a "
                             f"reconstructed baseline decides neither way, got {[v.value for v in expectations]}")
        has_grid = any(self.choice_names(profile) for profile in self.grid)
        if not isinstance(self.no_choices, str):
            raise ValueError(f"{self.claim_id}: no_choices must be a string (a reason), got {self.no_choices!r}")
        if not has_grid and not self.no_choices.strip():
            raise ValueError(f"{self.claim_id}: choices: the declaration must declare the choices the paper leaves "
                             "unsaid (grid= with choices=, a small grid of each) or no_choices= with the reason there "
                             "is none; got neither")
        if has_grid and self.no_choices.strip():
            raise ValueError(f"{self.claim_id}: no_choices must be empty when a grid of unreported choices is "
                             f"declared, got {self.no_choices!r}")
        for profile, grid in self.grid.items():
            if isinstance(grid, Mapping):
                for name, values in grid.items():
                    if not values:
                        raise ValueError(f"{self.claim_id}: grid[{profile!r}][{name!r}] must hold at least one value")
            elif not grid or not all(isinstance(point, Mapping) and point for point in grid):
                raise ValueError(f"{self.claim_id}: grid[{profile!r}] must be a mapping of choice to values or a "
                                 "non-empty sequence of points (mappings of choice to value)")
            for name in self.choice_names(profile):
                if not (isinstance(self.choices.get(name), str) and self.choices[name].strip()):
                    raise ValueError(f"{self.claim_id}: grid choice {name!r} needs a line in choices saying why "
                                     "the paper leaves it open")

    def _validate_readout_kind(self) -> None:
        from verify.harness.margins import READOUT_KINDS

        kinds = self.readout_kind
        names = [kinds] if isinstance(kinds, str) else list(kinds.values()) if isinstance(kinds, Mapping) else None
        if names is None or not names or any(k not in READOUT_KINDS for k in names):
            raise ValueError(f"{self.claim_id}: readout_kind must be one of {sorted(READOUT_KINDS)} or a mapping of "
                             f"read-out to one, got {kinds!r}")
        if isinstance(kinds, Mapping):
            missing = sorted({t.readout for s in self.statements for t in s.terms} - set(kinds))
            if missing:
                raise ValueError(f"{self.claim_id}: readout_kind has no kind for the read-outs {missing}")

    # --- the decision's view -----------------------------------------------------------------------------
    def choice_names(self, profile: str) -> list[str]:
        """The unreported choices decided over at ``profile`` (sorted)."""
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
        return [tuple(zip(names, values, strict=True)) for values in itertools.product(*(grid[k] for k in names))] \
            or [()]

    @property
    def arms(self) -> tuple:
        """Every arm the statements read, in order of first appearance."""
        return tuple(dict.fromkeys(arm for s in self.statements for arm in s.arms))

    @property
    def alpha(self) -> float:
        """The claim's alpha: its family's."""
        return self.family.alpha

    # --- what the registry gets --------------------------------------------------------------------------
    @functools.cached_property
    def check(self) -> Callable[[CheckContext], CheckResult]:
        """The claim's check (reports the declaring module as its ``__module__``)."""
        return _ExperimentCheck(self)

    @functools.cached_property
    def claim(self) -> Claim:
        """The registry's record of the claim."""
        return Claim(id=self.claim_id, title=self.title, citations=self.citations, statement=self.statement,
                     hypotheses=self.hypotheses, check=self.check, expected=self.expected, reason=self.reason,
                     reproduce=self.reproduce, corrected_by=self.corrected_by, corrects=self.corrects,
                     expected_by_profile=self.expected_by_profile, severity=self.severity,
                     uncorrected_because=self.uncorrected_because,
                     data_files=() if self.data is None else (self.data.name,))

    def reproduce(self, counterexample: Mapping[str, Any]) -> Evidence:
        """Re-run the refuted statement recorded in ``counterexample`` (:func:`verify.harness.reproduce_experiment`)."""
        return reproduce_experiment(counterexample, self)


def _planned_grid(experiment: Experiment, profile: str) -> dict[str, Any]:
    """What the check would decide over with the data file: ``grid_planned`` (the points at ``profile``, each a
    mapping of choice to value; ``[{}]`` without a grid) and ``unreported_choices`` (why each grid choice is open,
    or ``{"none": no_choices}`` when the paper leaves nothing unsaid that could change the verdict)."""
    unreported = ({name: experiment.choices.get(name, "") for name in experiment.choice_names(profile)}
                  if experiment.choice_names(profile) else {"none": experiment.no_choices})
    return {"grid_planned": [dict(point) for point in experiment.points(profile)], "unreported_choices": unreported,
            "arms_planned": [getattr(arm, "label", str(arm)) for arm in experiment.arms], "profile_planned": profile}


class _ExperimentCheck:
    """The generated check of an experiment: ``check(ctx) -> CheckResult``; named after the declaring module."""

    def __init__(self, experiment: Experiment) -> None:
        self.experiment = experiment
        self.__module__ = experiment.module
        self.__name__ = self.__qualname__ = "check_" + experiment.claim_id.split(".", 1)[1]
        self.__doc__ = f"Decide {experiment.claim_id} with verify.harness.decide ({experiment.what})."

    def __call__(self, ctx: CheckContext) -> CheckResult:
        experiment, data = self.experiment, self.experiment.data
        if data is not None:
            from verify.data_files import deciding_command, fingerprint

            path = ctx.data.get(data.name)
            if path is None:
                command = deciding_command(experiment.claim_id, data.name)
                return CheckResult(claim_id=experiment.claim_id, verdict=Verdict.NOT_CHECKABLE, seed=ctx.seed,
                                   summary=f"needs {data.what} from a local file ({data.absent}); decide it with: "
                                           f"{command}",
                                   details={"decided by": command, "file": data.file,
                                            **_planned_grid(experiment, ctx.profile)})
            experiment = dataclasses.replace(experiment, design=experiment.design.with_data_file(path,
                                                                                             fingerprint(path)))
        return decide(ctx, experiment)

    def __repr__(self) -> str:
        return f"<experiment check {self.__module__}.{self.__qualname__}>"


def experiment(*, module: str | None = None, **fields) -> Experiment:
    """Declare an experiment claim (see :class:`Experiment` for the fields) and record it for the harness.

    ``module`` defaults to the calling module (as :func:`collections.namedtuple` finds it); pass it when a helper
    in another module declares on a paper module's behalf. Raises ValueError when the claim is not a member of its
    family, or when its record is invalid (the :class:`~verify.records.Claim` is built here).
    """
    module = module or sys._getframe(1).f_globals.get("__name__", "__main__")
    declared = Experiment(module=module, **fields)
    if declared.claim_id not in declared.family.members:
        raise ValueError(f"{declared.claim_id}: not a member of its family {declared.family.paper} "
                         f"{declared.family.name!r} (declare it in the family's members)")
    declared.claim  # noqa: B018 - validates the record at declaration
    catalog.register(declared)
    return declared
