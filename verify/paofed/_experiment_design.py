r"""The design of the PAO-Fed experiments X1-X11 (spec 5) for :mod:`verify.comparisons`.

Replicate :math:`i` is one Monte-Carlo run of SIM-E (:func:`reference_impl.paofed.run_paofed`, one run) seeded by
``(EVALUATION_KEY, root seed, i)``: every arm of the replicate sees the same data stream, availability draws and
delays (common random numbers, seed l.1097 "drawn once per Monte-Carlo run and shared by all algorithms"). The
read-outs are the MSE-test in dB averaged over a window of that run: ``final`` (the last ``window`` iterations,
spec 5 acceptance) or ``early`` (initial convergence).

Settings (spec 5): ``default`` (delta = 0.2, l_max = 10), ``ideal`` (every client with a sample participates, no
delays), ``heavy_delay`` (delta = 0.8, l_max = 5), ``stragglers`` (p in {0.025, 0.01, 0.0025, 0.0005}, delta = 0.4,
l_max = 60), ``calcofi`` (the CalCOFI-like surrogate, :func:`reference_impl.paofed.data.calcofi_like`).

Grid choices (:data:`CHOICES`) a point may fix; an arm reads only those it depends on:

* ``baseline step``: ``matched`` / ``low`` / ``high`` -- a tuned baseline (Online-Fed, Online-FedSGD, PSO-Fed,
  SignSGD) runs at the step matched to PAO-Fed-U1's MSE-test at ``tune_at`` (spec 2.6), or at the smallest / largest
  step whose match still lies within the 0.5 dB tolerance (:func:`reference_impl.paofed.tuning.steps_within_tolerance`);
* ``heavy-delay tail``: ``discard`` (messages delayed beyond l_max = 5 are dropped, alpha_l = 0, seed l.922) /
  ``cap`` (delays capped at l_max, the reading spec 2.2 takes for the straggler environment);
* ``straggler delays``: ``lattice`` (delays in {0, 10, ..., 60}, P(L >= 10 i) = delta^i, spec 2.2) /
  ``every iteration`` (P(L >= l) = delta^(l/10) for every l, the chapter's literal "delta^(1/10)" read as the
  per-iteration delay probability, E6); both cap at 60;
* ``C2 mu``: the step of PAO-Fed-C2 "near its maximum value obtained in Theorem 2" in X10 (0.9 or 0.8; the seed
  gives no value).

Baseline steps are tuned on separate runs (seed ``(TUNING_KEY, root seed)``, so the choice of step does not select
on the replicates that decide). The check resolves them once in the calling process (:func:`resolve_steps`) and
hands them to the simulation inside the arms; the arms a claim shares with other claims, or with other points of its
grid, are simulated once per replicate (the design's :func:`arm_key`).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
from collections.abc import Mapping

import numpy as np

from reference_impl.paofed import algorithm_config, experiment_environment
from reference_impl.paofed.data import StreamData, SyntheticRFFData, calcofi_like
from reference_impl.paofed.simulation import run_paofed_arms
from reference_impl.paofed.tuning import (
    MATCH_TOLERANCE_DB,
    StepMatch,
    StepRange,
    initial_rate_db,
    match_initial_rates,
    step_field,
    steps_within_tolerances,
)
from verify.comparisons import FAMILY_ALPHA, Design, decide, evaluate_statement, family_size, simulate_arms
from verify.records import CheckContext, CheckResult

__all__ = ["CHOICES", "DESIGN", "FIGURE_SAMPLES_PER_BIN", "PREFETCH_PROFILES", "SCALES", "Arm", "Scale", "arm_key",
           "decide_claim", "prefetch_family", "recorded", "resolve_steps", "simulate", "steps_table"]

EVALUATION_KEY = 40_041  # "paofed experiments": replicate seeds (EVALUATION_KEY, root seed, i)
TUNING_KEY = 40_042  # tuning runs (TUNING_KEY, root seed), independent of the replicates
#: Baselines whose step is matched to PAO-Fed-U1's initial rate (spec 2.6); the PAO-Fed variants keep mu = 0.4.
TUNED = ("online-fed", "online-fed-50", "online-fedsgd", "pso-fed", "signsgd")
TUNING_REFERENCE = "paofed-u1"

STEP, HEAVY_TAIL, STRAGGLER_LAW, C2_MU = "baseline step", "heavy-delay tail", "straggler delays", "C2 mu"
DEFAULTS = {STEP: "matched", HEAVY_TAIL: "discard", STRAGGLER_LAW: "lattice", C2_MU: 0.9}
CHOICES = {
    STEP: ("the seed sets the baselines' steps only 'to yield identical initial convergence rates' (l.1093, l.2807); "
           f"spec 2.6 matches the MSE-test at n = 100 within {MATCH_TOLERANCE_DB:g} dB, and every step in that band is "
           "an equally valid reading: matched (the search's step), low / high (smallest / largest step in the band)"),
    HEAVY_TAIL: ("with delta = 0.8, l_max = 5 a quarter of the messages are delayed beyond l_max; the seed drops them "
                 "(alpha_l = 0 for l > l_max, l.922), the straggler environment caps them (spec 2.2): discard / cap"),
    STRAGGLER_LAW: ("'delays in {0, 10, ..., 60} with probability delta^(l/10)' (P4 l.2881; chapter 'delta^(1/10)', "
                    "E6): lattice (only multiples of 10) / every iteration (P(L >= l) = delta^(l/10) for all l)"),
    C2_MU: ("X10 raises C2's step 'near its maximum value obtained in Theorem 2' (about 1/1.02) without a value: "
            "0.9 / 0.8"),
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Scale:
    """Instance and tuning sizes of one profile (``m`` keeps m/D = 0.02; ``m_sweep`` is X2's m in {1, 4, 32})."""

    K: int
    D: int
    iterations: int
    m: int
    m_sweep: tuple[int, int, int]
    window: int
    early: tuple[int, int]
    test_size: int
    calcofi_samples: int
    tune_at: int
    tune_runs: int
    bins: int = 100

    def __post_init__(self) -> None:
        for name in ("K", "D", "iterations", "m", "window", "test_size", "calcofi_samples", "tune_at", "tune_runs",
                     "bins"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if not self.window < self.iterations or not 0 <= self.early[0] < self.early[1] <= self.iterations:
            raise ValueError(f"window ({self.window}) and early ({self.early}) must lie in [0, iterations = "
                             f"{self.iterations}]")


SCALES = {
    "ci": Scale(K=32, D=50, iterations=120, m=1, m_sweep=(1, 2, 8), window=40, early=(10, 20), test_size=100,
                calcofi_samples=8000, tune_at=30, tune_runs=4, bins=40),
    "thorough": Scale(K=256, D=200, iterations=2000, m=4, m_sweep=(1, 4, 32), window=200, early=(50, 100),
                      test_size=500, calcofi_samples=80_000, tune_at=100, tune_runs=6),
}

_SETTINGS = ("default", "ideal", "heavy_delay", "stragglers", "calcofi")
_ALGORITHMS = ("paofed-c0", "paofed-u0", "paofed-c1", "paofed-u1", "paofed-c2", "paofed-u2") + TUNED


@dataclasses.dataclass(frozen=True, kw_only=True)
class Arm:
    """One curve: an algorithm in a setting.

    Attributes
    ----------
    label : str
        Name in figures and reports (not part of the simulation's identity).
    algorithm : str
        ``paofed-{c,u}{0,1,2}``, ``online-fed`` (server fraction m/D, or ``server_fraction``), ``online-fed-50``
        (Fig. 4.5: fraction 0.5), ``online-fedsgd``, ``pso-fed`` (C0 with 2m entries, s = 0.5), ``signsgd``.
    setting : str
        One of ``default``, ``ideal``, ``heavy_delay``, ``stragglers``, ``calcofi``.
    m_index : int, optional
        Index into the scale's ``m_sweep`` (X2); default: the scale's ``m``.
    mu_from_grid : bool
        The step is the grid's ``C2 mu`` (X10).
    server_fraction : float, optional
        Online-Fed's sub-sampling fraction (X5's load sweep).
    full_downlink : bool
        M_{k,n} = I (X9).
    shift_db : float
        Mutation tests only: the arm's MSE-test curve is raised by this many dB.
    steps : tuple
        Filled by :func:`resolve_steps` (not part of the identity): ``((reading, choice), step)`` pairs of a tuned
        baseline; missing entries are tuned on the spot.
    at : tuple
        A grid point (sorted ``(choice, value)`` pairs) the arm is simulated at whatever point it is asked at, so one
        call simulates a claim's arms at all its grid points in lockstep (:func:`decide_claim`); ``()``: the point
        asked at. Not part of the identity: :func:`arm_key` keys the arm by the point it reads.
    """

    label: str
    algorithm: str
    setting: str = "default"
    m_index: int | None = None
    mu_from_grid: bool = False
    server_fraction: float | None = None
    full_downlink: bool = False
    shift_db: float = 0.0
    steps: tuple = dataclasses.field(default=(), compare=False)
    at: tuple = ()

    def __post_init__(self) -> None:
        if self.algorithm not in _ALGORITHMS:
            raise ValueError(f"algorithm must be one of {_ALGORITHMS}, got {self.algorithm!r}")
        if self.setting not in _SETTINGS:
            raise ValueError(f"setting must be one of {_SETTINGS}, got {self.setting!r}")
        if self.m_index not in (None, 0, 1, 2):
            raise ValueError(f"m_index must be None, 0, 1 or 2, got {self.m_index!r}")
        if self.server_fraction is not None and not 0.0 < self.server_fraction <= 1.0:
            raise ValueError(f"server_fraction must be in (0, 1], got {self.server_fraction!r}")

    @property
    def key(self) -> tuple:
        """What determines the simulation (the label and the resolved steps do not)."""
        return (self.algorithm, self.setting, self.m_index, self.mu_from_grid, self.server_fraction,
                self.full_downlink, self.shift_db)

    @property
    def tuned(self) -> bool:
        return self.algorithm in TUNED

    def point(self, point: Mapping) -> Mapping:
        """The grid point the arm is simulated at when asked at ``point``: its own ``at`` if set."""
        return dict(self.at) if self.at else point

    def reading(self, point: Mapping) -> str | None:
        """The delay-law reading this arm depends on at ``point`` (None in the settings without one)."""
        point = self.point(point)
        if self.setting == "heavy_delay":
            return point.get(HEAVY_TAIL, DEFAULTS[HEAVY_TAIL])
        if self.setting == "stragglers":
            return point.get(STRAGGLER_LAW, DEFAULTS[STRAGGLER_LAW])
        return None

    def projection(self, point: Mapping) -> tuple:
        """The grid choices this arm depends on at ``point`` (what its simulation is a function of)."""
        point = self.point(point)
        out = (self.reading(point),)
        if self.tuned:
            out += (point.get(STEP, DEFAULTS[STEP]),)
        if self.mu_from_grid:
            out += (point.get(C2_MU, DEFAULTS[C2_MU]),)
        return out


def environment(setting: str, scale: Scale, reading: str | None = None):
    """The asynchronous environment of ``setting`` under a delay-law ``reading`` (see the module notes)."""
    K, D = scale.K, scale.D
    if setting in ("default", "calcofi"):
        return experiment_environment(K=K, D=D)
    if setting == "ideal":  # 0 % stragglers: every client with a sample participates, no delays (Fig. 4.3c)
        return experiment_environment(K=K, D=D, p_groups=(1.0,), delta=0.0, l_max=0)
    if setting == "heavy_delay":  # Fig. 4.6b
        return experiment_environment(K=K, D=D, delta=0.8, l_max=5, delay_tail=reading or DEFAULTS[HEAVY_TAIL])
    if setting == "stragglers":  # Fig. 4.6c
        law = reading or DEFAULTS[STRAGGLER_LAW]
        if law == "lattice":
            return experiment_environment(K=K, D=D, p_groups=(0.025, 0.01, 0.0025, 0.0005), delta=0.4, l_max=60,
                                          delay_step=10, delay_tail="cap")
        return experiment_environment(K=K, D=D, p_groups=(0.025, 0.01, 0.0025, 0.0005), delta=0.4 ** 0.1,
                                      l_max=60, delay_step=1, delay_tail="cap")
    raise ValueError(f"setting must be one of {_SETTINGS}, got {setting!r}")


@functools.lru_cache(maxsize=2)
def _calcofi_data(K: int, D: int, samples: int):
    rng = np.random.default_rng(20_240_404)  # fixed surrogate data set ([CHOICE], spec 5 X7)
    X, y = calcofi_like(rng, samples)
    # "distributed progressively and unevenly" (seed lines 1143, 2854): streamed over time, group-dependent sizes,
    # assigned at random (nothing says the clients see different regions of input space).
    return StreamData.from_arrays(X, y, K=K, rng=rng, D=D, test_size=500, sort_by=None)


def data_source(setting: str, scale: Scale):
    if setting == "calcofi":
        return _calcofi_data(scale.K, scale.D, scale.calcofi_samples)
    return SyntheticRFFData(K=scale.K, D=scale.D, test_size=scale.test_size)


def base_config(arm: Arm, scale: Scale, point: Mapping):
    """The arm's algorithm configuration at ``point`` before its tuned step (if any) is applied."""
    point = arm.point(point)
    m = scale.m if arm.m_index is None else scale.m_sweep[arm.m_index]
    extra = {"full_downlink": True} if arm.full_downlink else {}
    if arm.mu_from_grid:
        extra["mu"] = float(point.get(C2_MU, DEFAULTS[C2_MU]))
    if arm.algorithm == "online-fed":
        return algorithm_config("online-fed", m=m, server_fraction=arm.server_fraction or m / scale.D, **extra)
    if arm.algorithm == "online-fed-50":  # Fig. 4.5: Online-Fed tailored to a 50 % reduction
        return algorithm_config("online-fed", m=m, server_fraction=0.5, **extra)
    if arm.algorithm == "pso-fed":
        return algorithm_config("pso-fed", m=2 * m, server_fraction=0.5, **extra)
    return algorithm_config(arm.algorithm, m=m, **extra)


def tuning_seed(root_seed: int) -> int:
    return int(np.random.SeedSequence([TUNING_KEY, root_seed]).generate_state(1)[0])


@functools.lru_cache(maxsize=16)
def tuning_target(setting: str, reading: str | None, scale: Scale, root_seed: int) -> float:
    """PAO-Fed-U1's MSE-test (dB) at ``tune_at`` on the tuning runs: the target of every baseline of a setting."""
    reference = Arm(label="U1", algorithm=TUNING_REFERENCE, setting=setting)
    return initial_rate_db(environment(setting, scale, reading), base_config(reference, scale, {}),
                           data_source(setting, scale), scale.tune_at, tuning_seed(root_seed), scale.tune_runs)


def _tune_group(group: tuple) -> list[tuple[StepMatch, StepRange]]:
    """(match, band) of each baseline of ``group = (tuning arms, reading, scale, root seed, target dB)``, arms of one
    setting: their searches run in lockstep on the shared tuning runs
    (:func:`reference_impl.paofed.tuning.match_initial_rates`), each result as if tuned alone."""
    arms, reading, scale, root_seed, target = group
    env, data = environment(arms[0].setting, scale, reading), data_source(arms[0].setting, scale)
    configs = [base_config(arm, scale, {}) for arm in arms]
    seed = tuning_seed(root_seed)
    matches = match_initial_rates(env, configs, data, target_db=target, n_eval=scale.tune_at, seed=seed,
                                  runs=scale.tune_runs)
    bands = steps_within_tolerances(env, configs, data, matches, n_eval=scale.tune_at, seed=seed,
                                    runs=scale.tune_runs, refine=4)
    return list(zip(matches, bands))


#: (arm key, reading, scale, root seed) -> (StepMatch, StepRange), bounded.
_TUNED: collections.OrderedDict = collections.OrderedDict()
_TUNED_SIZE = 64


def _tuning_arm(arm: Arm) -> Arm:
    """The part of an arm its tuning depends on (algorithm, setting, fractions), unmutated."""
    return Arm(label="tuning", algorithm=arm.algorithm, setting=arm.setting, m_index=arm.m_index,
               server_fraction=arm.server_fraction, full_downlink=arm.full_downlink)


def _tunings(units: list[tuple], executor=None) -> dict:
    """Tune the units not yet known (through ``executor``, the units of one setting and reading together),
    remember them; ``{unit: (match, band)}``."""
    missing = [u for u in dict.fromkeys(units) if u not in _TUNED]
    if missing:
        groups: dict[tuple, list[tuple]] = {}
        for unit in missing:
            groups.setdefault((unit[0].setting, *unit[1:]), []).append(unit)
        work = [(tuple(u[0] for u in members), reading, scale, seed, tuning_target(setting, reading, scale, seed))
                for (setting, reading, scale, seed), members in groups.items()]
        done = executor.map(_tune_group, work) if executor is not None else [_tune_group(w) for w in work]
        for members, results in zip(groups.values(), done):
            for unit, result in zip(members, results):
                _TUNED[unit] = result
                while len(_TUNED) > _TUNED_SIZE:
                    _TUNED.popitem(last=False)
    return {u: _TUNED[u] if u in _TUNED else _tune_group(((u[0],), *u[1:], tuning_target(u[0].setting, *u[1:])))[0]
            for u in units}


def _pick(match: StepMatch, band: StepRange, choice: str) -> float:
    return {"matched": match.step, "low": band.low, "high": band.high}[choice]


def step_for(arm: Arm, scale: Scale, point: Mapping, root_seed: int) -> float:
    """The tuned step of a baseline arm at ``point`` (from the arm's resolved steps, else tuned here)."""
    point = arm.point(point)
    reading, choice = arm.reading(point), point.get(STEP, DEFAULTS[STEP])
    for (r, c), step in arm.steps:
        if (r, c) == (reading, choice):
            return step
    match, band = _tunings([(_tuning_arm(arm), reading, scale, root_seed)])[(_tuning_arm(arm), reading, scale,
                                                                              root_seed)]
    return _pick(match, band, choice)


def config_at(arm: Arm, scale: Scale, point: Mapping, root_seed: int):
    config = base_config(arm, scale, point)
    if arm.tuned:
        config = dataclasses.replace(config, **{step_field(config): step_for(arm, scale, point, root_seed)})
    return config


#: MSE-test samples a figure bin keeps outside the read-out windows (:func:`recorded`).
FIGURE_SAMPLES_PER_BIN = 4


def recorded(scale: Scale) -> np.ndarray:
    """The iterations whose MSE-test :func:`simulate` computes (bool, iterations + 1): every iteration up to the end of
    the ``early`` window (the transient, where the curve falls fastest) and of the ``final`` window, elsewhere every
    ``stride``-th, ``stride = max(1, (iterations / bins) //`` :data:`FIGURE_SAMPLES_PER_BIN`), enough for the
    figures' bin means (every iteration at ci; every 5th of the bins of 20 at thorough, where the metric is a third
    of an arm's cost per iteration). The read-outs are unchanged."""
    mask = np.zeros(scale.iterations + 1, dtype=bool)
    mask[::max(1, scale.iterations // scale.bins // FIGURE_SAMPLES_PER_BIN)] = True
    mask[:scale.early[1] + 1] = True
    mask[scale.iterations - scale.window + 1:] = True
    return mask


def simulate(arms, point, scale: Scale, root_seed: int, replicates) -> list[np.ndarray]:
    """MSE-test curves (len(replicates), iterations + 1) of each arm; replicate i seeded by (key, root seed, i).

    The arms of one setting and delay reading run in lockstep (:func:`reference_impl.paofed.run_paofed_arms`): the
    replicate's environment and data draws are made once for all of them, and each curve is bit for bit the one
    a separate run of the arm on the replicate's seed gives, at the iterations :func:`recorded` names (NaN
    elsewhere).
    """
    point = dict(point)
    groups: dict = {}
    for index, a in enumerate(arms):
        groups.setdefault((a.setting, a.reading(point)), []).append(index)
    setups = {key: (environment(key[0], scale, key[1]), data_source(key[0], scale),
                    [config_at(arms[i], scale, point, root_seed) for i in idx]) for key, idx in groups.items()}
    out = [np.empty((len(replicates), scale.iterations + 1)) for _ in arms]
    record = recorded(scale)
    for j, i in enumerate(replicates):
        for key, idx in groups.items():
            env, data, configs = setups[key]
            rng = np.random.default_rng([EVALUATION_KEY, root_seed, i])
            with np.errstate(over="ignore", invalid="ignore"):
                runs = run_paofed_arms(env, configs, data, scale.iterations, rng, runs=1, record=record)
            for k, run in zip(idx, runs):
                out[k][j] = 10.0 ** (arms[k].shift_db / 10.0) * run.curve[:, 0]
    return out


def readout(name: str, scale: Scale, outcome: np.ndarray) -> np.ndarray:
    """MSE-test in dB averaged over the ``final`` window (last ``window`` iterations) or the ``early`` window."""
    outcome = np.asarray(outcome)
    if name == "final":
        window = outcome[:, scale.iterations - scale.window + 1:]
    elif name == "early":
        window = outcome[:, scale.early[0]:scale.early[1] + 1]
    else:
        raise ValueError(f"readout must be 'final' or 'early', got {name!r}")
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return 10.0 * np.log10(window.mean(axis=1))


def arm_key(arm: Arm, point: tuple, scale: Scale, root_seed: int) -> tuple:
    """What an arm's simulation at ``point`` depends on (the design's ``arm_key``): its identity, the grid choices it
    reads (:meth:`Arm.projection`) and its resolved baseline step, so an arm that ignores a choice (PAO-Fed-U1 under
    ``baseline step``) is simulated once for all its values. The m index is replaced by the m it selects (at the
    paper's size PAO-Fed-U1 with ``m_sweep[1]`` is PAO-Fed-U1 with the scale's m: one simulation)."""
    p = dict(point)
    m = scale.m if arm.m_index is None else scale.m_sweep[arm.m_index]
    identity = (arm.algorithm, arm.setting, m) + arm.key[3:]
    return (identity, arm.projection(p), step_for(arm, scale, p, root_seed) if arm.tuned else None)


DESIGN = Design(family="paofed.experiments", simulate=simulate, readout=readout, scales=SCALES,
                stages={"ci": (10,), "thorough": (10, 20)}, chunk={"ci": 5, "thorough": 5}, arm_key=arm_key)


# ------------------------------------------------------------------------------------------------
# Resolution of the tuned steps in the calling process, and one simulation per replicate and arm.


def resolve_steps(ctx: CheckContext, spec):
    """``spec`` with every tuned arm carrying its steps at every grid point of ``ctx.profile`` (tuned once per
    (arm, setting, reading, scale, root seed) and remembered; the tuning runs go through ``ctx.executor``)."""
    scale = DESIGN.scales[ctx.profile]
    points = [dict(p) for p in spec.points(ctx.profile)]
    units = {arm: [(_tuning_arm(arm), arm.reading(p), scale, ctx.seed) for p in points]
             for arm in spec.arms if arm.tuned}
    tuned = _tunings([u for us in units.values() for u in us], ctx.executor)
    replaced = {}
    for arm, us in units.items():
        steps = tuple(dict.fromkeys(((u[1], p.get(STEP, DEFAULTS[STEP])), _pick(*tuned[u], p.get(STEP,
                                                                                                   DEFAULTS[STEP])))
                                    for u, p in zip(us, points)))
        replaced[arm] = dataclasses.replace(arm, steps=steps)
    statements = tuple(dataclasses.replace(s, terms=tuple(dataclasses.replace(t, arm=replaced.get(t.arm, t.arm))
                                                          for t in s.terms)) for s in spec.statements)
    return dataclasses.replace(spec, statements=statements)


def steps_table(ctx: CheckContext, spec) -> list[dict]:
    """The tuned steps of the spec's baselines (details of the result)."""
    scale = DESIGN.scales[ctx.profile]
    rows = []
    for arm in spec.arms:
        if not arm.tuned:
            continue
        for reading in dict.fromkeys(arm.reading(dict(p)) for p in spec.points(ctx.profile)):
            match, band = _tunings([(_tuning_arm(arm), reading, scale, ctx.seed)])[(_tuning_arm(arm), reading,
                                                                                    scale, ctx.seed)]
            rows.append({"arm": arm.label, "setting": arm.setting, "delay reading": reading, "field": match.field,
                         "matched step": match.step, "low": band.low, "high": band.high,
                         "target_db": match.target_db, "achieved_db": match.achieved_db, "low_db": band.low_db,
                         "high_db": band.high_db, "matched": match.matched, "reason": match.reason,
                         "tune_at": scale.tune_at, "tuning_runs": scale.tune_runs})
    return rows


#: Profiles at which a claim's check first simulates the whole family's stages (:func:`prefetch_family`).
PREFETCH_PROFILES = ("thorough",)
#: (profile, root seed, claim ids) of the families already prefetched in this process.
_PREFETCHED: set = set()


def prefetch_family(ctx: CheckContext, specs) -> None:
    """Simulate, stage by stage, what :func:`decide_claim` simulates for each of ``specs``, in one call per stage.

    The baselines of every spec are tuned together first (per setting and reading, in lockstep), then each stage's
    replicates of every spec's arms at its points still open (stage 1: all, with the figure arms) go through one
    :func:`verify.comparisons.simulate_arms` call, so the arms of one setting and reading run in lockstep across
    the family: the replicate's environment and data draws (about half the cost of a claim's simulation at the
    paper's size) are made once for all claims instead of once per claim. Each arm's curve is the one its own run
    gives, and the claims' checks then find their arms in the store and decide as before: the open points are only
    predicted here, so a wrong prediction (or an arm evicted from the store) costs time, never a number. Done once
    per profile, root seed and family in a process.
    """
    specs = tuple(specs)
    key = (ctx.profile, ctx.seed, tuple(spec.claim_id for spec in specs))
    if key in _PREFETCHED:
        return
    _PREFETCHED.add(key)
    scale = DESIGN.scales[ctx.profile]
    _tunings([(_tuning_arm(arm), arm.reading(dict(p)), scale, ctx.seed) for spec in specs
              for p in spec.points(ctx.profile) for arm in spec.arms if arm.tuned], ctx.executor)
    specs = [resolve_steps(ctx, spec) for spec in specs]
    stages = DESIGN.stages[ctx.profile]
    open_points = [spec.points(ctx.profile) for spec in specs]
    for index, n in enumerate(stages):
        pinned = [dataclasses.replace(arm, at=point) for spec, points in zip(specs, open_points) for point in points
                  for arm in spec.arms]
        if index == 0:
            pinned += [dataclasses.replace(arm, at=spec.points(ctx.profile)[0]) for spec in specs
                       for arm in spec.figure_arms]
        if not pinned:
            break
        simulate_arms(ctx, DESIGN, pinned, (), n)
        open_points = [[point for point in points
                        if _undecided(ctx, spec, point, n, FAMILY_ALPHA / family_size(spec.claim_id.split(".")[0])
                                      / len(stages))] for spec, points in zip(specs, open_points)]


def decide_claim(ctx: CheckContext, spec) -> CheckResult:
    """:func:`verify.comparisons.decide` on ``spec`` with its baseline steps resolved.

    Each stage's replicates of every arm at every grid point still undecided (and the figure arms) are simulated
    first, in one call: the arms of a setting then run in lockstep across the grid (a tuned baseline at its three
    steps, X10's C2 at its two steps) instead of one point at a time. ``decide`` finds them in the arm store and
    decides as before; the points carried to the next stage are only predicted here (by the per-point rule of
    :mod:`verify.comparisons`), so a wrong prediction costs time, never a number.
    """
    spec = resolve_steps(ctx, spec)
    points = spec.points(ctx.profile)
    stages = DESIGN.stages[ctx.profile]
    alpha_look = FAMILY_ALPHA / family_size(spec.claim_id.split(".")[0]) / len(stages)
    open_points = points
    for index, n in enumerate(stages):
        pinned = [dataclasses.replace(arm, at=point) for point in open_points for arm in spec.arms]
        if index == 0:
            pinned += [dataclasses.replace(arm, at=points[0]) for arm in spec.figure_arms]
        simulate_arms(ctx, DESIGN, pinned, (), n)
        open_points = [point for point in open_points if _undecided(ctx, spec, point, n, alpha_look)]
        if len(open_points) < 2:  # one point's arms are simulated together by decide itself
            break
    return decide(ctx, spec)


def _undecided(ctx: CheckContext, spec, point: tuple, n: int, alpha_look: float) -> bool:
    """Neither confirmed nor refuted at ``point`` with ``n`` replicates (the arms are in the store)."""
    outcomes = [evaluate_statement(ctx, DESIGN, s, n, alpha_look, point=dict(point)) for s in spec.statements]
    confirmed = all(o.p_confirm <= alpha_look for o in outcomes)
    refuted = min(o.p_refute for o in outcomes) <= alpha_look / len(spec.statements)
    return not (confirmed or refuted)
