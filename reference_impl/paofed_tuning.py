r"""Step-size matching for the PAO-Fed baselines: "identical initial convergence rates" (spec paofed.md 2.6).

The seed (004_180cd372987d137b.txt lines 1093 and 2807) says "the learning rates were set to yield identical
initial convergence rates" and gives only PAO-Fed's :math:`\mu = 0.4`; it adds that "some algorithms were not
able to reach this common convergence rate". Spec 2.6 turns this into a rule ([CHOICE]): tune each baseline's
step so that its MSE-test at iteration :math:`n_{eval}` (100 at the paper's size) matches PAO-Fed-U1's within
0.5 dB, and use the closest attainable step where no step matches.

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

from reference_impl.paofed import AlgorithmConfig, AsyncEnvironment, run_paofed

__all__ = ["MATCH_TOLERANCE_DB", "StepMatch", "StepRange", "initial_rate_db", "match_initial_rate", "step_field",
           "steps_within_tolerance"]

#: Spec 2.6 [CHOICE]: the MSE-test at n_eval must match the target within this many dB.
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
    with np.errstate(over="ignore", invalid="ignore"):
        curve = run_paofed(env, config, data, n_eval, np.random.default_rng(seed), runs=runs).curve
    value = float(np.mean(curve[n_eval]))
    return 10.0 * math.log10(value) if math.isfinite(value) and value > 0 else math.inf


def match_initial_rate(env: AsyncEnvironment, config: AlgorithmConfig, data, *, target_db: float, n_eval: int,
                       seed: int, runs: int, bracket: tuple[float, float] | None = None, grid: int = 11,
                       refine: int = 10, tolerance_db: float = MATCH_TOLERANCE_DB) -> StepMatch:
    r"""The step of ``config`` whose MSE-test at ``n_eval`` matches ``target_db`` (spec 2.6; see the module notes).

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
    >>> from reference_impl.paofed_data import SyntheticRFFData
    >>> env, data = experiment_environment(K=8, D=10), SyntheticRFFData(K=8, D=10, test_size=50)
    >>> base = algorithm_config("online-fedsgd", m=1)
    >>> target = initial_rate_db(env, algorithm_config("paofed-u1", m=1), data, 10, seed=1, runs=4)
    >>> match = match_initial_rate(env, base, data, target_db=target, n_eval=10, seed=1, runs=4)
    >>> match.field, match.matched == (abs(match.achieved_db - target) <= 0.5)
    ('mu', True)
    """
    if not isinstance(config, AlgorithmConfig):
        raise TypeError(f"config must be an AlgorithmConfig, got {type(config).__name__}")
    if not (isinstance(target_db, (int, float)) and math.isfinite(target_db)):
        raise ValueError(f"target_db must be a finite real, got {target_db!r}")
    for name, value, low in (("n_eval", n_eval, 1), ("runs", runs, 1), ("grid", grid, 3), ("refine", refine, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if not (isinstance(tolerance_db, (int, float)) and math.isfinite(tolerance_db) and tolerance_db > 0):
        raise ValueError(f"tolerance_db must be a finite real in (0, inf), got {tolerance_db!r}")
    field = step_field(config)
    if bracket is None:
        bracket = (1e-4, 1.0) if field == "sign_step" else (1e-3, 2.0)
    lo, hi = (float(b) for b in bracket)
    if not (math.isfinite(lo) and math.isfinite(hi) and 0.0 < lo < hi):
        raise ValueError(f"bracket must be (lo, hi) with 0 < lo < hi finite, got {bracket!r}")

    trials: list[tuple[float, float]] = []

    def f(step: float) -> float:
        value = initial_rate_db(env, dataclasses.replace(config, **{field: step}), data, n_eval, seed, runs)
        trials.append((step, value))
        return value

    steps = np.geomspace(lo, hi, grid)
    values = np.array([f(float(s)) for s in steps])
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
        fm = f(math.exp(mid))
        candidates.append((abs(fm - target_db), math.exp(mid), fm))
        if fm > target_db:
            a = mid
        else:
            b = mid
    _, step, value = min(candidates)
    return result(step, value, "not matched within the refinement budget")


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
    r"""The edges of the tolerance band around a matched step (spec 2.6 [CHOICE], see the module notes).

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
    >>> from reference_impl.paofed_data import SyntheticRFFData
    >>> env, data = experiment_environment(K=8, D=10), SyntheticRFFData(K=8, D=10, test_size=50)
    >>> base = algorithm_config("online-fedsgd", m=1)
    >>> target = initial_rate_db(env, algorithm_config("paofed-u1", m=1), data, 10, seed=1, runs=4)
    >>> match = match_initial_rate(env, base, data, target_db=target, n_eval=10, seed=1, runs=4)
    >>> band = steps_within_tolerance(env, base, data, match, n_eval=10, seed=1, runs=4)
    >>> band.low <= match.step <= band.high and abs(band.low_db - target) <= 0.5 >= abs(band.high_db - target)
    True
    """
    if not isinstance(match, StepMatch):
        raise TypeError(f"match must be a StepMatch, got {type(match).__name__}")
    for name, value, low in (("n_eval", n_eval, 1), ("runs", runs, 1), ("refine", refine, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if not (isinstance(tolerance_db, (int, float)) and math.isfinite(tolerance_db) and tolerance_db > 0):
        raise ValueError(f"tolerance_db must be a finite real in (0, inf), got {tolerance_db!r}")
    if not match.matched:
        return StepRange(low=match.step, high=match.step, low_db=match.achieved_db, high_db=match.achieved_db,
                         trials=())
    target = match.target_db
    trials: list[tuple[float, float]] = []

    def f(step: float) -> float:
        value = initial_rate_db(env, dataclasses.replace(config, **{match.field: step}), data, n_eval, seed, runs)
        trials.append((step, value))
        return value

    known = sorted(set(match.trials))
    fastest = min(known, key=lambda t: t[1])[0]
    branch = [(s, v) for s, v in known if s <= fastest]

    def inside(value: float) -> bool:
        return math.isfinite(value) and abs(value - target) <= tolerance_db

    def edge(out: tuple | None, inn: tuple) -> tuple[float, float]:
        if out is None:
            return inn
        a, b = math.log(out[0]), math.log(inn[0])
        best = inn
        for _ in range(refine):
            mid = 0.5 * (a + b)
            value = f(math.exp(mid))
            if inside(value):
                best, b = (math.exp(mid), value), mid
            else:
                a = mid
        return best

    ins = [t for t in branch if inside(t[1])] or [(match.step, match.achieved_db)]
    slow_out = [t for t in branch if t[0] < min(ins)[0] and not inside(t[1])]
    fast_out = [t for t in branch if t[0] > max(ins)[0] and not inside(t[1])]
    low = edge(max(slow_out) if slow_out else None, min(ins))
    high = edge(min(fast_out) if fast_out else None, max(ins))
    return StepRange(low=float(low[0]), high=float(high[0]), low_db=float(low[1]), high_db=float(high[1]),
                     trials=tuple(trials))
