"""Resource estimates, checked before anything is allocated.

A plug-in's ``estimate(setup)`` returns one :class:`Cost` per phase of its run (graph generation, data, state,
ground truth, iterations x runs). Each names the user's field (or option) that drives it, the largest array it
allocates (float64 elements) and its work. Work is counted in floating-point operations, and a step of a
Python-level loop (a networkx edge, an iteration of the algorithm) counts :data:`STEP_WORK` operations: its
overhead, not its arithmetic, bounds the time of small problems.

:func:`check` refuses a phase whose memory exceeds :data:`fedcheck._files.MAX_STATE_ELEMENTS`, or a run whose
total work exceeds :data:`MAX_WORK`, naming the phase's field. Both limits are read when :func:`check` runs
(tests lower them to keep every case to a second).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from fedcheck._errors import ConfigError

__all__ = ["GRAPH_DRAWS", "MAX_WORK", "STEP_WORK", "WORK_PER_SECOND", "Cost", "check", "connected_gnm", "seconds"]

#: Largest total work of one command, in floating-point operations (about 20 minutes at WORK_PER_SECOND).
MAX_WORK = 10**12
#: The work one step of a Python-level loop counts for (its interpreter and numpy-call overhead, ~1 ms).
STEP_WORK = 10**6
#: Operations per second assumed to turn work into an expected duration (progress display, messages).
WORK_PER_SECOND = 10**9


@dataclass(frozen=True, kw_only=True)
class Cost:
    """One phase of a run.

    Parameters
    ----------
    phase : str
        What is done, with its size formula (``"the adjacency K^2"``).
    field : str
        The user's field or option that drives it (``"graph.K"``, ``"--iterations"``).
    memory : float
        The largest array the phase allocates, in float64 elements.
    work : float
        Floating-point operations (``steps`` are added at :data:`STEP_WORK` each).
    steps : float
        Python-level loop steps.
    """

    phase: str
    field: str
    memory: float = 0.0
    work: float = 0.0
    steps: float = 0.0

    def __post_init__(self) -> None:
        for name in ("memory", "work", "steps"):
            value = float(getattr(self, name))
            if math.isnan(value) or value < 0:
                raise ValueError(f"{name} must be a real >= 0 (or inf), got {value!r}")
            object.__setattr__(self, name, value)
        if not self.phase or not self.field:
            raise ValueError(f"phase and field must be non-empty, got {self.phase!r}, {self.field!r}")

    @property
    def total_work(self) -> float:
        return self.work + self.steps * STEP_WORK


def check(costs: Iterable[Cost]) -> float:
    """Refuse the first phase beyond a limit (ConfigError naming its field); returns the total work."""
    from fedcheck import _files
    from fedcheck.run import _budget

    costs = list(costs)
    for cost in costs:
        if cost.memory > _files.MAX_STATE_ELEMENTS:
            raise ConfigError(f"{cost.field}: {cost.phase} would hold about {cost.memory:.3g} float64 values "
                              f"({_bytes(cost.memory * 8)}), more than the limit of {_files.MAX_STATE_ELEMENTS:.3g} "
                              f"({_bytes(_files.MAX_STATE_ELEMENTS * 8)}); reduce {_bare(cost.field)}")
    total = sum(c.total_work for c in costs)
    if total > _budget.MAX_WORK:
        worst = max(costs, key=lambda c: c.total_work)
        raise ConfigError(f"{worst.field}: {worst.phase} would take about {worst.total_work:.3g} operations "
                          f"(the whole run {total:.3g}; about {_duration(seconds(total))}), more than the limit of "
                          f"{_budget.MAX_WORK:.3g}; reduce {_bare(worst.field)}")
    return total


def _bare(field: str) -> str:
    return field[len("argument "):] if field.startswith("argument ") else field


def seconds(work: float) -> float:
    """Expected duration of ``work`` operations (a rough guide, not a promise)."""
    return work / WORK_PER_SECOND


def _bytes(n: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} bytes"


def _duration(s: float) -> str:
    if not math.isfinite(s):
        return "forever"
    if s >= 86400 * 365:
        return f"{s / (86400 * 365):.3g} years"
    if s >= 86400:
        return f"{s / 86400:.3g} days"
    if s >= 3600:
        return f"{s / 3600:.3g} hours"
    if s >= 60:
        return f"{s / 60:.3g} minutes"
    return f"{s:.2g} s"


#: Work of one networkx node or edge operation (pure Python: a few microseconds).
GRAPH_ELEMENT_WORK = 3 * 10**3
#: Draws of a random graph tried until one is connected (the generators' own cap).
GRAPH_DRAWS = 1000


def connected_gnm(n: int, m: int, field: str, *, what: str = "G(n, m)") -> Cost:
    """The cost of drawing G(n, m) until it is connected (at most :data:`GRAPH_DRAWS` draws).

    Refuses, naming ``field``, when no connected draw is likely: fewer than n - 1 edges (never connected), or
    a probability of a connected draw so small that the draws would probably all fail. The probability is
    Erdos-Renyi's :math:`\\exp(-n e^{-2m/n})` (isolated nodes are the obstruction near the threshold).
    """
    if n <= 1:
        return Cost(phase=f"drawing {what}", field=field, steps=1)
    if m < n - 1:
        raise ConfigError(f"{field}: {what} with n = {n} nodes and m = {m} edges is never connected (it needs at "
                          f"least n - 1 = {n - 1} edges)")
    c = 2.0 * m / n
    log_p = -n * math.exp(-c)                       # log P(connected), Erdos-Renyi near the threshold
    if log_p < math.log(5.0 / GRAPH_DRAWS):
        raise ConfigError(f"{field}: a connected {what} with n = {n} nodes and m = {m} edges (mean degree "
                          f"{c:.3g}) is too unlikely (about 10^{log_p / math.log(10):.3g} per draw; "
                          f"{GRAPH_DRAWS} draws are tried): raise the mean degree to at least about "
                          f"{math.log(n / -math.log(5.0 / GRAPH_DRAWS)):.3g} or use fewer nodes")
    draws = min(GRAPH_DRAWS, math.exp(-log_p))
    return Cost(phase=f"drawing {what} until connected (about {draws:.3g} draws)", field=field,
                memory=n * n if n * n > 0 else 0, work=draws * (n + m) * GRAPH_ELEMENT_WORK)
