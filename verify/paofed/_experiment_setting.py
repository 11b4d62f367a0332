r"""The setting of the PAO-Fed experiments X1-X11 (docs/papers/paofed.md#exp-x1 to #exp-x11) (thesis Section 4.4,
Publication 4 Section V): the instance sizes, the arms (an algorithm in a setting), the asynchronous environments, the
data, and the choices the paper leaves open.

Settings: ``default`` (delta = 0.2, l_max = 10), ``ideal`` (every client with a sample participates, no delays),
``heavy_delay`` (delta = 0.8, l_max = 5), ``stragglers`` (p in {0.025, 0.01, 0.0025, 0.0005}, delta = 0.4,
l_max = 60), ``calcofi`` (the CalCOFI-like surrogate, :func:`reference_impl.paofed.data.calcofi_like`).

Grid choices (:data:`CHOICES`) a point may fix; an arm reads only those it depends on:

* ``baseline step``: ``matched`` / ``low`` / ``high`` -- a tuned baseline (Online-Fed, Online-FedSGD, PSO-Fed,
  SignSGD) runs at the step matched to PAO-Fed-U1's MSE-test at ``tune_at`` (the paper's "identical initial
  convergence rates"), or at the smallest / largest step whose match still lies within the 0.5 dB tolerance
  (:func:`reference_impl.paofed.tuning.steps_within_tolerance`; the steps: :mod:`verify.paofed._baseline_steps`);
* ``heavy-delay tail``: ``discard`` (messages delayed beyond l_max = 5 are dropped, alpha_l = 0, seed l.922) /
  ``cap`` (delays capped at l_max, as in the straggler environment);
* ``straggler delays``: ``lattice`` (delays in {0, 10, ..., 60}, P(L >= 10 i) = delta^i) / ``every iteration``
  (P(L >= l) = delta^(l/10) for every l, the chapter's literal "delta^(1/10)" read as the per-iteration delay
  probability); both cap at 60;
* ``C2 mu``: the step of PAO-Fed-C2 "near its maximum value obtained in Theorem 2" in
  X10 (docs/papers/paofed.md#exp-x10) (0.9 or 0.8; the seed gives no value).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping

import numpy as np

from reference_impl.paofed import algorithm_config, experiment_environment
from reference_impl.paofed.data import StreamData, SyntheticRFFData, calcofi_like
from reference_impl.paofed.tuning import MATCH_TOLERANCE_DB

__all__ = ["C2_MU", "CHOICES", "DEFAULTS", "EVALUATION_KEY", "HEAVY_TAIL", "SCALES", "STEP", "STRAGGLER_LAW", "TUNED",
           "TUNING_KEY", "TUNING_REFERENCE", "Arm", "Scale", "base_config", "data_source", "environment"]

EVALUATION_KEY = 40_041  # "paofed experiments": replicate seeds (EVALUATION_KEY, root seed, i)
TUNING_KEY = 40_042  # tuning runs (TUNING_KEY, root seed), independent of the replicates
#: Baselines whose step is matched to PAO-Fed-U1's initial rate (the paper's "identical initial convergence rates");
#: the PAO-Fed variants keep mu = 0.4.
TUNED = ("online-fed", "online-fed-50", "online-fedsgd", "pso-fed", "signsgd")
TUNING_REFERENCE = "paofed-u1"

STEP, HEAVY_TAIL, STRAGGLER_LAW, C2_MU = "baseline step", "heavy-delay tail", "straggler delays", "C2 mu"
DEFAULTS = {STEP: "matched", HEAVY_TAIL: "discard", STRAGGLER_LAW: "lattice", C2_MU: 0.9}
CHOICES = {
    STEP: ("the seed sets the baselines' steps only 'to yield identical initial convergence rates' (l.1093, l.2807); "
           f"docs/papers/paofed.md#choice-baselines matches the MSE-test at n = 100 within {MATCH_TOLERANCE_DB:g} dB, "
           f"and every step in that band is "
           "an equally valid reading: matched (the search's step), low / high (smallest / largest step in the band)"),
    HEAVY_TAIL: ("with delta = 0.8, l_max = 5 a quarter of the messages are delayed beyond l_max; the seed drops them "
                 "(alpha_l = 0 for l > l_max, l.922), the straggler environment caps "
                 "them (docs/papers/paofed.md#choice-delay-law): discard / cap"),
    STRAGGLER_LAW: ("'delays in {0, 10, ..., 60} with probability delta^(l/10)' (P4 l.2881; chapter 'delta^(1/10)', "
                    "erratum E6 (docs/papers/paofed.md#erratum-e6)): lattice (only multiples of 10) / every iteration "
                    "(P(L >= l) = delta^(l/10) for all l)"),
    C2_MU: ("X10 (docs/papers/paofed.md#exp-x10) raises C2's step 'near its maximum value obtained in Theorem 2' "
            "(about 1/1.02) without a value: 0.9 / 0.8"),
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Scale:
    """Instance and tuning sizes of one profile (``m`` keeps m/D = 0.02; ``m_sweep`` is
    X2 (docs/papers/paofed.md#exp-x2)'s m in {1, 4, 32})."""

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
        Index into the scale's ``m_sweep`` (X2, docs/papers/paofed.md#exp-x2); default: the scale's ``m``.
    mu_from_grid : bool
        The step is the grid's ``C2 mu`` (X10, docs/papers/paofed.md#exp-x10).
    server_fraction : float, optional
        Online-Fed's sub-sampling fraction (X5 (docs/papers/paofed.md#exp-x5)'s load sweep).
    full_downlink : bool
        M_{k,n} = I (X9, docs/papers/paofed.md#exp-x9).
    shift_db : float
        Mutation tests only: the arm's MSE-test curve is raised by this many dB.
    steps : tuple
        Filled by :func:`verify.paofed._baseline_steps.prepare_steps` (not part of the identity):
        ``((reading, choice), step)`` pairs of a tuned baseline; missing entries are tuned on the spot.
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

    def reading(self, point: Mapping) -> str | None:
        """The delay-law reading this arm depends on at ``point`` (None in the settings without one)."""
        if self.setting == "heavy_delay":
            return point.get(HEAVY_TAIL, DEFAULTS[HEAVY_TAIL])
        if self.setting == "stragglers":
            return point.get(STRAGGLER_LAW, DEFAULTS[STRAGGLER_LAW])
        return None

    def projection(self, point: Mapping) -> tuple:
        """The grid choices this arm depends on at ``point`` (what its simulation is a function of)."""
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
    rng = np.random.default_rng(20_240_404)  # a fixed surrogate data set (fedcheck's choice for
    # X7 (docs/papers/paofed.md#exp-x7))
    X, y = calcofi_like(rng, samples)
    # "distributed progressively and unevenly" (seed lines 1143, 2854): streamed over time, group-dependent sizes,
    # assigned at random (nothing says the clients see different regions of input space).
    return StreamData.from_arrays(X, y, K=K, rng=rng, D=D, test_size=500, sort_by=None)


def data_source(setting: str, scale: Scale):
    """The data stream of ``setting``: the synthetic RFF data, or the fixed CalCOFI-like surrogate."""
    if setting == "calcofi":
        return _calcofi_data(scale.K, scale.D, scale.calcofi_samples)
    return SyntheticRFFData(K=scale.K, D=scale.D, test_size=scale.test_size)


def base_config(arm: Arm, scale: Scale, point: Mapping):
    """The arm's algorithm configuration at ``point`` before its tuned step (if any) is applied."""
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
