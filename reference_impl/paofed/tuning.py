r"""Step-size matching for the PAO-Fed baselines: "identical initial convergence
rates" (docs/papers/paofed.md#choice-baselines).

The seed (004_180cd372987d137b.txt lines 1093 and 2807) says "the learning rates were set to yield identical
initial convergence rates" and gives only PAO-Fed's :math:`\mu = 0.4`; it adds that "some algorithms were not
able to reach this common convergence rate". docs/papers/paofed.md#choice-baselines turns this into a rule
(choice, docs/papers/paofed.md#choices): tune each baseline's step so that its MSE-test at iteration :math:`n_{eval}`
(100 at the paper's size) matches PAO-Fed-U1's within 0.5 dB, and use the closest attainable step where no step matches.

:func:`match_initial_rate` implements the rule on one simulation set-up with common random numbers: every
trial step runs on the same seed, so the MSE-test at :math:`n_{eval}` is a deterministic function
:math:`f(\text{step})` and the search is a root search, not a noisy optimisation.

* A geometric grid over ``bracket`` locates the fastest step :math:`s^\dagger = \arg\min f` (non-finite or
  diverging runs count as :math:`+\infty`).
* If :math:`f(s^\dagger) >` target, no step reaches the target rate: the result is :math:`s^\dagger`, the
  closest attainable (``matched`` tells whether it lies within the tolerance anyway).
* Otherwise the target is crossed on the stable, decreasing branch left of :math:`s^\dagger`; bisection in
  :math:`\log(\text{step})` between the last grid point above the target and the first below it returns a
  step with :math:`|f - \text{target}| \le` ``tolerance_db``/4 (or the best of ``refine`` halvings). If even
  the smallest grid step is faster than the target, that step is returned, unmatched.

The step is :attr:`AlgorithmConfig.mu` for LMS-type algorithms and :attr:`AlgorithmConfig.sign_step` for
SignSGD (its clients send only gradient signs).

:func:`steps_within_tolerance` returns the smallest and largest steps on the same stable branch whose MSE-test at
:math:`n_{eval}` still lies within the tolerance of the target: every step in between is an equally valid reading
of "identical initial convergence rates", so a statement about a tuned baseline should not change over them.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from reference_impl.paofed import AlgorithmConfig, AsyncEnvironment
from reference_impl.paofed.simulation import run_paofed_arms

__all__ = ["MATCH_TOLERANCE_DB", "StepMatch", "StepRange", "initial_rate_db", "initial_rates_db", "match_initial_rate",
           "match_initial_rates", "step_field", "steps_within_tolerance", "steps_within_tolerances"]

#: docs/papers/paofed.md#choice-baselines: the MSE-test at n_eval must match the target within this many dB.
MATCH_TOLERANCE_DB = 0.5


@dataclass(frozen=True)
class StepMatch:
    """Outcome of :func:`match_initial_rate`.

    Attributes
    ----------
    field : str
        ``"mu"`` or ``"sign_step"``.
    step : float
        The chosen step.
    target_db, achieved_db : float
        The target MSE-test at ``n_eval`` (dB) and the one the chosen step gives on the tuning runs.
    matched : bool
        ``|achieved_db - target_db| <= tolerance_db``.
    reason : str
        ``"matched"``, ``"slower at every step"`` (the closest attainable, i.e. fastest step) or
        ``"faster at every step"`` (the smallest step of the bracket).
    trials : tuple of (float, float)
        Every (step, dB) evaluated, in order.
    """

    field: str
    step: float
    target_db: float
    achieved_db: float
    matched: bool
    reason: str
    trials: tuple

    def apply(self, config: AlgorithmConfig) -> AlgorithmConfig:
        """``config`` with the chosen step."""
        return dataclasses.replace(config, **{self.field: self.step})


def step_field(config: AlgorithmConfig) -> str:
    """The field that sets an algorithm's learning rate: ``sign_step`` for SignSGD, ``mu`` otherwise."""
    return "sign_step" if config.sends_signs else "mu"


def initial_rate_db(env: AsyncEnvironment, config: AlgorithmConfig, data, n_eval: int, seed: int, runs: int) -> float:
    """MSE-test (dB) at iteration ``n_eval``, averaged over ``runs`` runs of seed ``seed``; ``inf`` if it diverged."""
    return initial_rates_db(env, [config], data, n_eval, seed, runs)[0]


def initial_rates_db(env: AsyncEnvironment, configs, data, n_eval: int, seed: int, runs: int) -> list[float]:
    """:func:`initial_rate_db` of each configuration, run in lockstep
    (:func:`reference_impl.paofed.simulation.run_paofed_arms`: the environment and data are drawn once for all);
    each value is bit for bit the one a separate :func:`reference_impl.paofed.run_paofed` gives. Only the metric
    at ``n_eval`` is computed (``record``)."""
    record = np.arange(n_eval + 1) == n_eval
    with np.errstate(over="ignore", invalid="ignore"):
        done = run_paofed_arms(env, list(configs), data, n_eval, np.random.default_rng(seed), runs=runs,
                               record=record)
    return [_rate_db(run.curve, n_eval) for run in done]


def _rate_db(curve: np.ndarray, n_eval: int) -> float:
    value = float(np.mean(curve[n_eval]))
    return 10.0 * math.log10(value) if math.isfinite(value) and value > 0 else math.inf


def match_initial_rate(env: AsyncEnvironment, config: AlgorithmConfig, data, *, target_db: float, n_eval: int,
                       seed: int, runs: int, bracket: tuple[float, float] | None = None, grid: int = 11,
                       refine: int = 10, tolerance_db: float = MATCH_TOLERANCE_DB) -> StepMatch:
    r"""The step of ``config`` whose MSE-test at ``n_eval`` matches
    ``target_db`` (docs/papers/paofed.md#choice-baselines; see the module notes).

    Parameters
    ----------
    env, config, data
        As for :func:`reference_impl.paofed.run_paofed`; only the step field of ``config`` is changed.
    target_db : float
        Target MSE-test (dB) at ``n_eval``, e.g. PAO-Fed-U1's on the same seed.
    n_eval : int
        Iteration at which the rates are compared (>= 1).
    seed, runs : int
        Tuning runs (common random numbers across trial steps); use a seed independent of the evaluation runs.
    bracket : (float, float), optional
        Search range of the step, ``0 < lo < hi``; default (1e-3, 2) for ``mu`` and (1e-4, 1) for ``sign_step``.
    grid : int
        Geometric grid points over the bracket (>= 3).
    refine : int
        Maximum bisection halvings (>= 0).
    tolerance_db : float
        Match tolerance (> 0).

    Returns
    -------
    StepMatch

    Examples
    --------
    >>> from reference_impl.paofed import algorithm_config, experiment_environment
    >>> from reference_impl.paofed.data import SyntheticRFFData
    >>> env, data = experiment_environment(K=8, D=10), SyntheticRFFData(K=8, D=10, test_size=50)
    >>> base = algorithm_config("online-fedsgd", m=1)
    >>> target = initial_rate_db(env, algorithm_config("paofed-u1", m=1), data, 10, seed=1, runs=4)
    >>> match = match_initial_rate(env, base, data, target_db=target, n_eval=10, seed=1, runs=4)
    >>> match.field, match.matched == (abs(match.achieved_db - target) <= 0.5)
    ('mu', True)
    """
    return match_initial_rates(env, [config], data, target_db=target_db, n_eval=n_eval, seed=seed, runs=runs,
                               bracket=bracket, grid=grid, refine=refine, tolerance_db=tolerance_db)[0]


def match_initial_rates(env: AsyncEnvironment, configs, data, *, target_db: float, n_eval: int, seed: int, runs: int,
                        bracket: tuple[float, float] | None = None, grid: int = 11, refine: int = 10,
                        tolerance_db: float = MATCH_TOLERANCE_DB) -> list[StepMatch]:
    """:func:`match_initial_rate` of several configurations on one set-up, their searches run in lockstep.

    Each round evaluates the next trial steps of every search still going in one lockstep simulation
    (:func:`initial_rates_db`); a search's path depends only on its own values, which are bit for bit the ones a
    separate run gives, so each result equals :func:`match_initial_rate`'s for that configuration alone.
    """
    configs = list(configs)
    for config in configs:
        if not isinstance(config, AlgorithmConfig):
            raise TypeError(f"config must be an AlgorithmConfig, got {type(config).__name__}")
    if not (isinstance(target_db, (int, float)) and math.isfinite(target_db)):
        raise ValueError(f"target_db must be a finite real, got {target_db!r}")
    for name, value, low in (("n_eval", n_eval, 1), ("runs", runs, 1), ("grid", grid, 3), ("refine", refine, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if not (isinstance(tolerance_db, (int, float)) and math.isfinite(tolerance_db) and tolerance_db > 0):
        raise ValueError(f"tolerance_db must be a finite real in (0, inf), got {tolerance_db!r}")
    searches = []
    for config in configs:
        field = step_field(config)
        lo, hi = (float(b) for b in (bracket or ((1e-4, 1.0) if field == "sign_step" else (1e-3, 2.0))))
        if not (math.isfinite(lo) and math.isfinite(hi) and 0.0 < lo < hi):
            raise ValueError(f"bracket must be (lo, hi) with 0 < lo < hi finite, got {bracket!r}")
        searches.append((config, field, _match_search(field, float(target_db), np.geomspace(lo, hi, grid), refine,
                                                      tolerance_db)))
    return _run_searches(env, data, n_eval, seed, runs, searches)


def _match_search(field: str, target_db: float, steps: np.ndarray, refine: int, tolerance_db: float):
    """:func:`match_initial_rate`'s search as a generator: yields the trial steps of a round, is sent their dB
    values, returns the :class:`StepMatch`."""
    trials: list[tuple[float, float]] = []
    values = np.array((yield [float(s) for s in steps]))
    trials.extend(zip((float(s) for s in steps), (float(v) for v in values), strict=True))
    best = int(np.argmin(values))

    def result(step: float, value: float, reason: str) -> StepMatch:
        ok = math.isfinite(value) and abs(value - target_db) <= tolerance_db
        return StepMatch(field=field, step=float(step), target_db=float(target_db), achieved_db=float(value),
                         matched=bool(ok), reason="matched" if ok else reason, trials=tuple(trials))

    if values[best] > target_db:
        return result(steps[best], values[best], "slower at every step")
    if values[0] <= target_db:
        return result(steps[0], values[0], "faster at every step")
    # First grid point at or below the target on the branch left of the fastest step: f(a) > target >= f(b).
    j = int(np.argmax(values[:best + 1] <= target_db))
    a, b, fa, fb = math.log(steps[j - 1]), math.log(steps[j]), values[j - 1], values[j]
    candidates = [(abs(fa - target_db), steps[j - 1], fa), (abs(fb - target_db), steps[j], fb)]
    for _ in range(refine):
        if min(candidates)[0] <= tolerance_db / 4.0:
            break
        mid = 0.5 * (a + b)
        (fm,) = yield [math.exp(mid)]
        trials.append((math.exp(mid), fm))
        candidates.append((abs(fm - target_db), math.exp(mid), fm))
        if fm > target_db:
            a = mid
        else:
            b = mid
    _, step, value = min(candidates)
    return result(step, value, "not matched within the refinement budget")


def _run_searches(env: AsyncEnvironment, data, n_eval: int, seed: int, runs: int, searches) -> list:
    """Drive ``(config, field, generator)`` searches round by round: every step they ask for in a round is
    evaluated in one lockstep call of :func:`initial_rates_db`; returns each generator's result."""
    results: list = [None] * len(searches)
    pending: dict[int, list] = {}

    def advance(index: int, values) -> None:
        try:
            pending[index] = searches[index][2].send(values)
        except StopIteration as stop:
            results[index] = stop.value

    for index in range(len(searches)):
        advance(index, None)
    while pending:
        asked = list(pending.items())
        pending.clear()
        configs = [dataclasses.replace(searches[i][0], **{searches[i][1]: step})
                   for i, steps in asked for step in steps]
        values = iter(initial_rates_db(env, configs, data, n_eval, seed, runs))
        for index, steps in [(i, [next(values) for _ in steps]) for i, steps in asked]:
            advance(index, steps)
    return results


@dataclass(frozen=True)
class StepRange:
    """The steps whose initial rate matches the target within the tolerance (:func:`steps_within_tolerance`).

    Attributes
    ----------
    low, high : float
        Smallest and largest step on the stable branch with ``|f(step) - target_db| <= tolerance_db`` (both equal
        to the matched step's :attr:`StepMatch.step` when no step matches).
    low_db, high_db : float
        Their MSE-test at ``n_eval`` on the tuning runs (dB).
    trials : tuple of (float, float)
        The (step, dB) pairs evaluated by the edge searches.
    """

    low: float
    high: float
    low_db: float
    high_db: float
    trials: tuple


def steps_within_tolerance(env: AsyncEnvironment, config: AlgorithmConfig, data, match: StepMatch, *, n_eval: int,
                           seed: int, runs: int, refine: int = 6,
                           tolerance_db: float = MATCH_TOLERANCE_DB) -> StepRange:
    r"""The edges of the tolerance band around a matched step (docs/papers/paofed.md#choice-baselines, see the module
    notes).

    On the stable branch (steps up to the fastest one found by :func:`match_initial_rate`) the MSE-test at
    ``n_eval`` decreases with the step, so the steps within ``tolerance_db`` of the target form an interval. Each
    edge is located by bisection in :math:`\log(\text{step})` between the known trial steps just outside and just
    inside the band, keeping the inside end (``refine`` halvings): the returned steps are inside the band, within a
    factor :math:`r^{2^{-\text{refine}}}` of its edge (r: the bracketing trials' ratio). An unmatched ``match``
    (no step within the tolerance) returns its own step at both ends.

    Parameters
    ----------
    env, config, data, n_eval, seed, runs
        As given to :func:`match_initial_rate` for ``match`` (the same tuning runs).
    match : StepMatch
        The outcome of :func:`match_initial_rate`.
    refine : int
        Bisection halvings per edge (>= 0).
    tolerance_db : float
        The match tolerance (> 0).

    Returns
    -------
    StepRange

    Examples
    --------
    >>> from reference_impl.paofed import algorithm_config, experiment_environment
    >>> from reference_impl.paofed.data import SyntheticRFFData
    >>> env, data = experiment_environment(K=8, D=10), SyntheticRFFData(K=8, D=10, test_size=50)
    >>> base = algorithm_config("online-fedsgd", m=1)
    >>> target = initial_rate_db(env, algorithm_config("paofed-u1", m=1), data, 10, seed=1, runs=4)
    >>> match = match_initial_rate(env, base, data, target_db=target, n_eval=10, seed=1, runs=4)
    >>> band = steps_within_tolerance(env, base, data, match, n_eval=10, seed=1, runs=4)
    >>> band.low <= match.step <= band.high and abs(band.low_db - target) <= 0.5 >= abs(band.high_db - target)
    True
    """
    return steps_within_tolerances(env, [config], data, [match], n_eval=n_eval, seed=seed, runs=runs, refine=refine,
                                   tolerance_db=tolerance_db)[0]


def steps_within_tolerances(env: AsyncEnvironment, configs, data, matches, *, n_eval: int, seed: int, runs: int,
                            refine: int = 6, tolerance_db: float = MATCH_TOLERANCE_DB) -> list[StepRange]:
    """:func:`steps_within_tolerance` of several configurations (``matches[i]`` is ``configs[i]``'s) on one set-up:
    every edge search of every configuration takes its trial step of a round in one lockstep simulation, so each
    result equals :func:`steps_within_tolerance`'s for that configuration alone."""
    configs, matches = list(configs), list(matches)
    if len(configs) != len(matches):
        raise ValueError(f"matches must hold one StepMatch per configuration ({len(configs)}), got {len(matches)}")
    for match in matches:
        if not isinstance(match, StepMatch):
            raise TypeError(f"match must be a StepMatch, got {type(match).__name__}")
    for name, value, low in (("n_eval", n_eval, 1), ("runs", runs, 1), ("refine", refine, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if not (isinstance(tolerance_db, (int, float)) and math.isfinite(tolerance_db) and tolerance_db > 0):
        raise ValueError(f"tolerance_db must be a finite real in (0, inf), got {tolerance_db!r}")
    searches = [(config, match.field, _band_search(match, refine, tolerance_db))
                for config, match in zip(configs, matches, strict=True)]
    return _run_searches(env, data, n_eval, seed, runs, searches)


def _band_search(match: StepMatch, refine: int, tolerance_db: float):
    """:func:`steps_within_tolerance`'s search as a generator (see :func:`_match_search`): both edges bisect in
    log(step) between the trial just outside the band and the one just inside, keeping the inside end; a round asks
    for the next trial step of each edge still searching."""
    if not match.matched:
        return StepRange(low=match.step, high=match.step, low_db=match.achieved_db, high_db=match.achieved_db,
                         trials=())
    target = match.target_db
    known = sorted(set(match.trials))
    fastest = min(known, key=lambda t: t[1])[0]
    branch = [(s, v) for s, v in known if s <= fastest]

    def inside(value: float) -> bool:
        return math.isfinite(value) and abs(value - target) <= tolerance_db

    ins = [t for t in branch if inside(t[1])] or [(match.step, match.achieved_db)]
    slow_out = [t for t in branch if t[0] < min(ins)[0] and not inside(t[1])]
    fast_out = [t for t in branch if t[0] > max(ins)[0] and not inside(t[1])]
    edges = [{"out": max(slow_out) if slow_out else None, "best": min(ins), "trials": []},
             {"out": min(fast_out) if fast_out else None, "best": max(ins), "trials": []}]
    for e in edges:
        if e["out"] is not None:
            e["a"], e["b"] = math.log(e["out"][0]), math.log(e["best"][0])
    searching = [e for e in edges if e["out"] is not None]
    for _ in range(refine if searching else 0):
        mids = [0.5 * (e["a"] + e["b"]) for e in searching]
        values = yield [math.exp(m) for m in mids]
        for e, mid, value in zip(searching, mids, values, strict=True):
            e["trials"].append((math.exp(mid), value))
            if inside(value):
                e["best"], e["b"] = (math.exp(mid), value), mid
            else:
                e["a"] = mid
    low, high = edges[0]["best"], edges[1]["best"]
    return StepRange(low=float(low[0]), high=float(high[0]), low_db=float(low[1]), high_db=float(high[1]),
                     trials=tuple(edges[0]["trials"] + edges[1]["trials"]))
