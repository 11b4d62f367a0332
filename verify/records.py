"""Records that flow from checks to reports: claims, citations, figures and check results.

A :class:`Claim` is declared once, in the ``verify`` module that checks it; the registry
(:mod:`verify.registry`) collects them, the tests in ``verify/`` run them and the report renders
their :class:`CheckResult`.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

#: The check profiles: ``ci`` (scaled-down, fast) and ``thorough`` (the paper's sizes, long Monte Carlo).
PROFILES = ("ci", "thorough")

#: How wrong a refuted claim is, most serious last (the Findings section sorts by it, most serious first):
#: ``typo`` -- a notational slip (relation, sign, index range, a factor the proof itself does not use) in a statement
#: whose intended form holds and is what the paper uses; ``correction_as_useful`` -- the statement is wrong, but a
#: corrected statement that fedcheck checks serves the paper's purpose equally well; ``false`` -- the result as stated
#: does not hold and no known correction keeps what the paper uses it for.
SEVERITIES = ("typo", "correction_as_useful", "false")

__all__ = [
    "CheckContext",
    "CheckResult",
    "Citation",
    "Claim",
    "Evidence",
    "FigureSpec",
    "FrozenDict",
    "MonteCarlo",
    "PROFILES",
    "SERIES_STYLES",
    "SEVERITIES",
    "Series",
    "Verdict",
]

#: How a figure's :class:`Series` is drawn (see its ``style``).
SERIES_STYLES = ("line", "dashed", "step", "points", "marks", "band")

_CLAIM_ID = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")


class Verdict(str, enum.Enum):
    """Outcome of checking a claim."""

    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    NOT_CHECKABLE = "not_checkable"
    ERROR = "error"


class FrozenDict(dict):
    """A read-only dict: the mappings inside frozen records (picklable, unlike ``types.MappingProxyType``, so
    records still cross process and dask boundaries). Build a changed copy with ``{**mapping, key: value}``."""

    def _read_only(self, *args, **kwargs):
        raise TypeError("the mappings of fedcheck records are read-only; build a new one with {**mapping, ...}")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _read_only

    def __reduce__(self):
        return (FrozenDict, (dict(self),))


def _frozen_mapping(value: Mapping[str, Any] | None) -> FrozenDict | None:
    """A read-only private copy (top level), or None."""
    return None if value is None else FrozenDict(value)


def _jsonable(value: Any) -> Any:
    """Plain-JSON form of numbers, arrays and containers (NaN/inf become strings)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (np.floating, float)):
        x = float(value)
        return x if math.isfinite(x) else repr(x)
    if isinstance(value, (np.integer, int)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, np.ndarray):
        return [_jsonable(v) for v in value.tolist()]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, enum.Enum):
        return value.value
    return value


@dataclass(frozen=True, kw_only=True)
class Citation:
    """Where a claim is stated: a seed file with the paper's own label, or an external source.

    000 and 003 number things differently, so a seed citation always names the seed file.
    """

    label: str
    seed: str = ""
    equation: str = ""
    lines: str = ""
    external: str = ""

    def __post_init__(self) -> None:
        if not self.label:
            raise ValueError("label must be a non-empty string, got ''")
        if not self.seed and not self.external:
            raise ValueError(f"Citation {self.label!r} needs a seed file or an external source")
        if self.seed and not re.fullmatch(r"\d{3}_[0-9a-f]{16}\.txt", self.seed):
            raise ValueError(f"seed must be a seed file name like '000_133b71fd0aa99eb4.txt', got {self.seed!r}")

    def __str__(self) -> str:
        parts = [self.external] if self.external else [f"seed {self.seed}"]
        parts.append(self.label)
        if self.equation:
            parts.append(f"eq. {self.equation}")
        if self.lines:
            parts.append(f"{'lines' if any(c in self.lines for c in '-,') else 'line'} {self.lines}")
        return ", ".join(parts)


@dataclass(frozen=True, kw_only=True)
class Series:
    """One curve or point set of a figure."""

    label: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    #: "line", "dashed", "step", "points"; "marks" draws each (x, y) as a short horizontal mark (a bound or
    #: tolerance at discrete points, never a line through them); "band" shades lower..upper (a tolerance region;
    #: y is not drawn).
    style: str = "line"
    group: str = ""  # series of one group share a colour (a closed form and its numerical check)
    lower: tuple[float, ...] | None = None  # a confidence band around y (drawn shaded), same length as y
    upper: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "x", tuple(float(v) for v in self.x))
        object.__setattr__(self, "y", tuple(float(v) for v in self.y))
        if len(self.x) != len(self.y):
            raise ValueError(f"Series {self.label!r}: x has {len(self.x)} points but y has {len(self.y)}")
        if (self.lower is None) != (self.upper is None):
            raise ValueError(f"Series {self.label!r}: a band needs both lower and upper")
        for side in ("lower", "upper"):
            if getattr(self, side) is not None:
                object.__setattr__(self, side, tuple(float(v) for v in getattr(self, side)))
                if len(getattr(self, side)) != len(self.y):
                    raise ValueError(f"Series {self.label!r}: {side} has {len(getattr(self, side))} points but y "
                                     f"has {len(self.y)}")
        if self.style not in SERIES_STYLES:
            raise ValueError(f"style must be one of {', '.join(SERIES_STYLES)}; got {self.style!r}")
        if self.style == "band" and self.lower is None:
            raise ValueError(f"Series {self.label!r}: style 'band' needs lower and upper")


@dataclass(frozen=True, kw_only=True)
class FigureSpec:
    """A figure as data; :mod:`reports` renders it (checks never write files)."""

    name: str
    title: str
    xlabel: str
    ylabel: str
    series: tuple[Series, ...]
    xscale: str = "linear"
    yscale: str = "linear"
    spans: tuple[tuple[float, float], ...] = ()  # x ranges to mark (e.g. the windows a comparison reads)
    caption: str = ""  # shown under the figure (e.g. the decided difference and its interval)
    #: A categorical x axis: the name of category i, drawn at x = i (every x must then be one of 0 .. n - 1).
    xcategories: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "spans", tuple((float(a), float(b)) for a, b in self.spans))
        object.__setattr__(self, "xcategories", tuple(str(c) for c in self.xcategories))
        if self.xcategories:
            n = len(self.xcategories)
            for series in self.series:
                if any(not (0 <= v < n and float(v).is_integer()) for v in series.x):
                    raise ValueError(f"figure {self.name!r}: with {n} xcategories every x must be an integer in "
                                     f"0 .. {n - 1}; series {series.label!r} has {series.x!r}")
        if any(not a <= b for a, b in self.spans):
            raise ValueError(f"figure {self.name!r}: every span must be (start, end) with start <= end")
        if not re.fullmatch(r"[a-z0-9_]+", self.name):
            raise ValueError(f"figure name must match [a-z0-9_]+, got {self.name!r}")
        if not self.series:
            raise ValueError(f"figure {self.name!r} needs at least one series")
        for axis in (self.xscale, self.yscale):
            if axis not in {"linear", "log", "symlog"}:
                raise ValueError(f"axis scale must be linear, log or symlog; got {axis!r}")


@dataclass(frozen=True, kw_only=True)
class MonteCarlo:
    """What a Monte-Carlo check must record: sample size, failure probability and seed."""

    n: int
    alpha: float
    seed: int

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")
        if not 0.0 < self.alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha}")


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """The outcome of evaluating a claim on one parameter point: a measured value and its bound.

    ``holds`` is decided by the check's own tolerance policy (see :mod:`verify.tolerance`); the
    record keeps the numbers so that a report can show them.
    """

    measured: float
    bound: float
    holds: bool
    parameters: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "parameters", _frozen_mapping(self.parameters))


@dataclass(frozen=True, kw_only=True)
class CheckContext:
    """What a check receives: the profile, the root seed and the executor for independent runs."""

    profile: str = "ci"
    seed: int = 0
    executor: Any = None
    #: Real data sets from the user's local files (``fedcheck report --data NAME=PATH``): name -> path.
    data: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from verify.data_files import DATA_FILES

        unknown = sorted(set(self.data) - set(DATA_FILES))
        if unknown:
            raise ValueError(f"data: names must be among {', '.join(DATA_FILES)}, got {', '.join(unknown)}")
        object.__setattr__(self, "data", FrozenDict({k: str(v) for k, v in self.data.items()}))
        if self.profile not in PROFILES:
            raise ValueError(f"profile must be 'ci' or 'thorough', got {self.profile!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        if self.executor is None:
            from verify.executor import SerialExecutor

            object.__setattr__(self, "executor", SerialExecutor())

    def seed_sequence(self, claim_id: str) -> np.random.SeedSequence:
        """Seed sequence of one claim: depends on the root seed and the claim id only.

        So running a subset of the registry (``--only``) gives each claim the same numbers.
        """
        return np.random.SeedSequence([self.seed, *claim_id.encode()])

    @property
    def thorough(self) -> bool:
        return self.profile == "thorough"


@dataclass(frozen=True, kw_only=True)
class CheckResult:
    """The result record of one claim's check; ``results.json`` holds a list of these.

    ``measured``/``bound``/``margin`` describe the worst case the check found, in the units of
    ``quantity``; ``margin = bound - measured`` (positive: the bound held with room to spare).
    """

    claim_id: str
    verdict: Verdict
    summary: str
    quantity: str = ""
    measured: float | None = None
    bound: float | None = None
    margin: float | None = None
    counterexample: Mapping[str, Any] | None = None
    corrected_claim: str | None = None
    monte_carlo: MonteCarlo | None = None
    seed: int | None = None
    figures: tuple[FigureSpec, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)
    runtime_s: float = 0.0
    cpu_s: float | None = None
    error: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", Verdict(self.verdict))
        object.__setattr__(self, "counterexample", _frozen_mapping(self.counterexample))
        object.__setattr__(self, "details", _frozen_mapping(self.details))
        if self.verdict is Verdict.REFUTED and not self.counterexample:
            raise ValueError(f"{self.claim_id}: a refuted verdict needs a counterexample")
        if self.verdict is Verdict.ERROR and not self.error:
            raise ValueError(f"{self.claim_id}: an error verdict needs the error text")
        object.__setattr__(self, "figures", tuple(self.figures))
        names = [f.name for f in self.figures]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.claim_id}: figure names must be unique within a result, got {names}")

    def __repr__(self) -> str:  # brief: verdict and summary numbers, no figures or details
        nums = ", ".join(f"{k}={v:.6g}" for k, v in (("measured", self.measured), ("bound", self.bound))
                         if isinstance(v, (int, float)))
        return (f"CheckResult({self.claim_id!r}, verdict={self.verdict.value!r}" + (f", {nums}" if nums else "")
                + f", figures={len(self.figures)}, details={len(self.details)} keys)")

    def to_json(self, figure_paths: Mapping[str, str] | None = None) -> dict[str, Any]:
        """JSON form (schema documented in README.md, "results.json")."""
        paths = figure_paths or {}
        mc = self.monte_carlo
        return {
            "claim_id": self.claim_id,
            "verdict": self.verdict.value,
            "summary": self.summary,
            "quantity": self.quantity,
            "measured": _jsonable(self.measured),
            "bound": _jsonable(self.bound),
            "margin": _jsonable(self.margin),
            "counterexample": _jsonable(self.counterexample),
            "corrected_claim": self.corrected_claim,
            "monte_carlo": None if mc is None else {"n": mc.n, "alpha": mc.alpha, "seed": mc.seed},
            "seed": self.seed,
            "figures": [paths.get(f.name, f.name) for f in self.figures],
            "details": _jsonable(self.details),
            "runtime_s": _jsonable(self.runtime_s),
            "cpu_s": _jsonable(self.cpu_s),
            "error": self.error,
        }


@dataclass(frozen=True, kw_only=True)
class Claim:
    """One theorem, lemma, corollary or bound of a paper, with the check that tests it.

    Attributes
    ----------
    id : str
        ``paper.label`` in lower case, e.g. ``pgfl.theorem2``.
    paper : str, optional
        The report section: the first component of ``id`` (derived; if given it must equal it).
    title : str
        Short human title.
    citations : tuple of Citation
        Where the claim is stated (seed file, the paper's label, equation).
    statement : str
        The claim in words, as the paper makes it (or, for a corrected claim, as fedcheck states it).
    hypotheses : tuple of str
        The conditions under which the claim is asserted; checks sample only such instances.
    check : callable
        ``check(ctx: CheckContext) -> CheckResult``. Must be a module-level function.
    expected : Verdict
        The verdict fedcheck has established, with ``reason`` saying why (at the ``thorough`` profile where the
        profiles differ: the paper's own size).
    expected_by_profile : mapping of str to Verdict, optional
        Where a profile's scaled-down instance does not decide the statement the way the paper-size one does,
        the verdict expected at that profile (``{"ci": Verdict.NOT_CHECKABLE}``); ``reason`` says why.
    reproduce : callable, optional
        For a refuted claim: ``reproduce(counterexample) -> Evidence`` re-evaluates the claim at
        the recorded counterexample; the registry test asserts the violation still reproduces.
    corrected_by / corrects : str, optional
        Links a refuted claim to the corrected statement that fedcheck also checks.
    severity : str, optional
        For a refuted claim: one of :data:`SEVERITIES` (required on every refuted claim by
        ``verify/test_severity.py``; given only on refuted claims).
    uncorrected_because : str, optional
        For a refuted claim whose severity is not ``typo`` and that has no ``corrected_by``: one sentence on why no
        corrected statement is known.
    data_files : tuple of str, optional
        Real data sets the check reads from the user's files when given (:mod:`verify.data_files`); the result
        cache keys the claim by their contents too.
    """

    id: str
    title: str
    citations: tuple[Citation, ...]
    statement: str
    hypotheses: tuple[str, ...]
    check: Callable[[CheckContext], CheckResult]
    expected: Verdict
    reason: str
    paper: str = ""
    reproduce: Callable[[Mapping[str, Any]], Evidence] | None = None
    corrected_by: str | None = None
    corrects: str | None = None
    expected_by_profile: Mapping[str, Verdict] | None = None
    severity: str | None = None
    uncorrected_because: str = ""
    data_files: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "expected", Verdict(self.expected))
        object.__setattr__(self, "data_files", tuple(self.data_files))
        from verify.data_files import DATA_FILES

        if not set(self.data_files) <= set(DATA_FILES):
            raise ValueError(f"{self.id}: data_files must be among {', '.join(DATA_FILES)}, got {self.data_files!r}")
        if self.expected_by_profile is not None:
            by_profile = {}
            for profile, verdict in dict(self.expected_by_profile).items():
                if profile not in PROFILES:
                    raise ValueError(f"{self.id}: expected_by_profile keys must be one of {', '.join(PROFILES)}, "
                                     f"got {profile!r}")
                if Verdict(verdict) is Verdict.ERROR:
                    raise ValueError(f"{self.id}: expected_by_profile[{profile!r}] must not be error")
                by_profile[profile] = Verdict(verdict)
            object.__setattr__(self, "expected_by_profile", MappingProxyType(by_profile))
        object.__setattr__(self, "citations", tuple(self.citations))
        object.__setattr__(self, "hypotheses", tuple(self.hypotheses))
        if not _CLAIM_ID.match(self.id):
            raise ValueError(f"id must look like 'paper.label' in lower case, got {self.id!r}")
        if not self.paper:
            object.__setattr__(self, "paper", self.id.split(".")[0])
        if self.id.split(".")[0] != self.paper:
            raise ValueError(f"paper must be the first component of id {self.id!r}, got {self.paper!r}")
        if not self.citations:
            raise ValueError(f"{self.id}: citations must name at least one source")
        if not self.statement or not self.reason:
            raise ValueError(f"{self.id}: statement and reason must be non-empty")
        if not callable(self.check):
            raise TypeError(f"{self.id}: check must be callable, got {self.check!r}")
        if self.expected is Verdict.ERROR:
            raise ValueError(f"{self.id}: expected must be confirmed, refuted or not_checkable, not error")
        if self.expected is Verdict.REFUTED and self.reproduce is None:
            raise ValueError(f"{self.id}: a claim expected to be refuted needs a reproduce function")
        if self.corrected_by is not None and self.expected is not Verdict.REFUTED:
            raise ValueError(f"{self.id}: only a refuted claim has a corrected_by claim")
        refuted_somewhere = Verdict.REFUTED in {self.expected, *(self.expected_by_profile or {}).values()}
        if self.severity is not None:
            if self.severity not in SEVERITIES:
                raise ValueError(f"{self.id}: severity must be one of {', '.join(SEVERITIES)}, got {self.severity!r}")
            if not refuted_somewhere:
                raise ValueError(f"{self.id}: only a refuted claim has a severity, "
                                 f"got expected = {self.expected.value}")
        if self.uncorrected_because:
            if not refuted_somewhere or self.corrected_by is not None:
                raise ValueError(f"{self.id}: uncorrected_because is only for a refuted claim without corrected_by")

    def expected_at(self, profile: str) -> Verdict:
        """The verdict expected when the check runs at ``profile``."""
        if profile not in PROFILES:
            raise ValueError(f"profile must be one of {', '.join(PROFILES)}, got {profile!r}")
        return (self.expected_by_profile or {}).get(profile, self.expected)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "paper": self.paper,
            "title": self.title,
            "citations": [str(c) for c in self.citations],
            "statement": self.statement,
            "hypotheses": list(self.hypotheses),
            "check": f"{self.check.__module__}.{self.check.__qualname__}",
            "expected": self.expected.value,
            "expected_by_profile": {k: v.value for k, v in (self.expected_by_profile or {}).items()},
            "reason": self.reason,
            "corrected_by": self.corrected_by,
            "corrects": self.corrects,
            "severity": self.severity,
            "uncorrected_because": self.uncorrected_because or None,
            "data_files": list(self.data_files),
        }
