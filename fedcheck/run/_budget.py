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

__all__ = ["DRAW_MARGIN", "GRAPH_DRAWS", "MAX_WORK", "STEP_WORK", "WORK_PER_SECOND", "Cost", "check", "connected_er",
           "connected_gnm", "seconds", "smallest_mean_degree"]

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

    costs = list(costs)
    for cost in costs:
        if cost.memory > _files.MAX_STATE_ELEMENTS:
            raise ConfigError(f"{cost.field}: {cost.phase} would hold about {cost.memory:.3g} float64 values "
                              f"({_bytes(cost.memory * 8)}), more than the limit of {_files.MAX_STATE_ELEMENTS:.3g} "
                              f"({_bytes(_files.MAX_STATE_ELEMENTS * 8)}); reduce {_bare(cost.field)}")
    total = sum(c.total_work for c in costs)
    if total > MAX_WORK:
        worst = max(costs, key=lambda c: c.total_work)
        raise ConfigError(f"{worst.field}: {worst.phase} would take about {worst.total_work:.3g} operations "
                          f"(the whole run {total:.3g}; about {_duration(seconds(total))}), more than the limit of "
                          f"{MAX_WORK:.3g}; reduce {_bare(worst.field)}")
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
#: Float64-equivalents of one networkx node or edge (a Python dict entry and its objects, about 200 bytes).
GRAPH_ELEMENT_MEMORY = 25
#: Draws of a random graph tried until one is connected (zCDP-NFL's and PGFL's generators' own cap).
GRAPH_DRAWS = 1000
#: A draw loop is refused when it expects more than ``max_draws / DRAW_MARGIN`` draws: then all ``max_draws`` draws
#: fail with probability above exp(-DRAW_MARGIN) = 0.7 %.
DRAW_MARGIN = 5.0


def _expected_draws(n: int, mean_degree: float) -> float:
    """Expected Erdos-Renyi draws until a connected one (:func:`reference_impl.npfl_rl.data.estimate_graph_draws`)."""
    from reference_impl.npfl_rl.data import estimate_graph_draws

    return estimate_graph_draws(int(n), float(mean_degree))["expected_draws"]


def _round_up(x: float) -> float:
    """``x`` rounded up to 3 significant digits."""
    exponent = math.floor(math.log10(x)) - 2
    return float(f"{math.ceil(x / 10.0**exponent - 1e-9) * 10.0**exponent:.3g}")


def smallest_mean_degree(n: int, max_draws: int, *, log_p_other: float = 0.0) -> float | None:
    r"""The smallest mean degree (3 significant digits, rounded up) at which a connected Erdos-Renyi graph on ``n``
    nodes is expected within ``max_draws / DRAW_MARGIN`` draws; None when no mean degree below :math:`n - 1` is.

    ``log_p_other``: the log-probability (<= 0) of another condition every draw must meet too (NPFL-RL: every cluster
    label used). From :math:`n(1-p)^{n-1} = \mu^st`, :math:`\mu^st = \ln(	ext{max\_draws}/	ext{DRAW\_MARGIN}) +
    \ln p_{	ext{other}}` (the isolated-node limit of :func:`_expected_draws`), then checked with it.
    """
    target = math.log(max_draws / DRAW_MARGIN) + log_p_other
    if target <= 0.0 or n <= 2:
        return None
    p = -math.expm1(math.log(target / n) / (n - 1)) if target < n else 0.0
    degree = _round_up(max(p * (n - 1), 1e-3))
    for _ in range(400):
        if degree > n - 1:
            return None
        if _expected_draws(n, degree) * math.exp(-log_p_other) <= max_draws / DRAW_MARGIN:
            return degree
        degree = _round_up(degree * 1.005)
    return None  # pragma: no cover - the isolated-node limit is within a few percent


def connected_er(n: int, mean_degree: float, field: str, *, max_draws: int = GRAPH_DRAWS, what: str = "G(n, p)",
                 log_p_other: float = 0.0, other: str = "", draw_work: float | None = None,
                 draw_memory: float | None = None) -> Cost:
    """The cost of drawing an Erdos-Renyi graph until it is connected (at most ``max_draws`` draws).

    The expected number of draws is :func:`reference_impl.npfl_rl.data.estimate_graph_draws` (divided by the
    probability ``exp(log_p_other)`` of the condition ``other``, e.g. every cluster label used). Refuses, naming
    ``field`` and the smallest mean degree that works (:func:`smallest_mean_degree`), when more than
    ``max_draws / DRAW_MARGIN`` draws are expected. ``draw_work`` / ``draw_memory``: one draw's work and largest
    array (default: networkx's, linear in nodes and edges).
    """
    edges = n * mean_degree / 2.0
    if n <= 1:
        return Cost(phase=f"drawing {what}", field=field, steps=1)
    if edges < n - 1:
        raise ConfigError(f"{field}: {what} with n = {n} nodes and mean degree {mean_degree:g} ({edges:.0f} edges) is "
                          f"never connected (it needs at least n - 1 = {n - 1} edges, mean degree "
                          f"{2.0 * (n - 1) / n:.3g})")
    draws = _expected_draws(n, mean_degree) * math.exp(-log_p_other)
    if not draws <= max_draws / DRAW_MARGIN:
        least = smallest_mean_degree(n, max_draws, log_p_other=log_p_other)
        fix = (f"raise the mean degree to at least {least:g} or use fewer nodes" if least is not None else
               "use fewer nodes" + (f" or relax {other}" if other else ""))
        shown = "more than 10^300" if not math.isfinite(draws) else f"about {draws:.3g}"
        raise ConfigError(f"{field}: a connected {what} with n = {n} nodes at mean degree {mean_degree:g}"
                          f"{' (and ' + other + ')' if other else ''} is too unlikely: {shown} draws expected, "
                          f"{max_draws} are tried; {fix}")
    one_work = (n + edges) * GRAPH_ELEMENT_WORK if draw_work is None else draw_work
    one_memory = (n + edges) * GRAPH_ELEMENT_MEMORY if draw_memory is None else draw_memory
    return Cost(phase=f"drawing {what} until connected (about {draws:.3g} draws expected)", field=field,
                memory=one_memory, work=min(draws, max_draws) * one_work)


def connected_gnm(n: int, m: int, field: str, *, what: str = "G(n, m)") -> Cost:
    """The cost of drawing G(n, m) until it is connected (at most :data:`GRAPH_DRAWS` draws): :func:`connected_er`
    at mean degree 2m/n (G(n, m) and G(n, p) at p = m / (n(n - 1)/2) agree on connectivity to leading order)."""
    if n <= 1:
        return Cost(phase=f"drawing {what}", field=field, steps=1)
    if m < n - 1:
        raise ConfigError(f"{field}: {what} with n = {n} nodes and m = {m} edges is never connected (it needs at "
                          f"least n - 1 = {n - 1} edges)")
    return connected_er(n, min(2.0 * m / n, n - 1.0), field, what=what)
