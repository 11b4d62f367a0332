"""PAO-Fed's records: constants, the asynchronous environment, algorithm configurations, linear data, run records
and the environments of the experiments (docs/papers/paofed.md#participation, docs/papers/paofed.md#choice-delay-law,
docs/papers/paofed.md#partial-sharing, docs/papers/paofed.md#algorithm, docs/papers/paofed.md#variants,
docs/papers/paofed.md#choice-baselines, docs/papers/paofed.md#choice-simulators)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from theory._validate import readonly
from theory.msd.instance import SELECTION_LAWS, PAOFedInstance

__all__ = ["ALGORITHMS", "AlgorithmConfig", "AnalysisRun", "AsyncEnvironment", "BITS_PER_PARAMETER",
           "CommunicationCounts", "LinearData", "ONLINE_FED_FRACTION", "PSO_FED_FRACTION", "PSO_FED_M", "SCHEDULES",
           "SIGN_STEP", "SimulationRun", "StepRecord", "algorithm_config", "environment_from_instance",
           "experiment_environment", "faithful_setup", "staleness_weights"]

SCHEDULES = ("circshift", *SELECTION_LAWS, "full")
#: Algorithm names accepted by :func:`algorithm_config` (docs/papers/paofed.md#variants variants
#: and docs/papers/paofed.md#choice-baselines baselines).
ALGORITHMS = ("paofed-u1", "paofed-c0", "paofed-u0", "paofed-c1", "paofed-c2", "paofed-u2", "online-fed",
              "online-fedsgd", "pso-fed", "signsgd")
#: 32 bits per exchanged model parameter (seed line 1137); a SignSGD uplink entry is 1 bit.
BITS_PER_PARAMETER = 32
#: choice (docs/papers/paofed.md#choices) docs/papers/paofed.md#choice-baselines: Online-Fed sub-samples each available
#: client with probability s = 0.02 (98 % reduction).
ONLINE_FED_FRACTION = 0.02
#: choice (docs/papers/paofed.md#choices) docs/papers/paofed.md#choice-baselines: PSO-Fed = PAO-Fed-C0 with m = 8 and
#: server sub-sampling s, "tailored to reduce the overall communication load by 98 %" (seed line 1152), i.e. (m/D) s =
#: 0.02 per available client and direction relative to Online-FedSGD. docs/papers/paofed.md's pair m = 8, s = 0.25 gives
#: (8/200) 0.25 = 0.01 (99 %), so s = 0.5 is used here.
PSO_FED_M = 8
PSO_FED_FRACTION = 0.5
#: choice (docs/papers/paofed.md#choices) docs/papers/paofed.md#choice-baselines: SignSGD server step gamma (tune per
#: data set; the seed gives none).
SIGN_STEP = 1e-3

_AGGREGATIONS = ("partial", "average", "sign_majority", "sign_mean")
_OVERLAP_RULES = ("none", "most_recent")
_UPLINKS = ("next", "current")
_DELAY_TAILS = ("discard", "cap")


def _is_int(value, lower: int) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, np.integer)) and value >= lower


def _is_real(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating)) \
        and math.isfinite(float(value))


# --------------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class AsyncEnvironment:
    r"""The asynchronous environment: clients, data arrival, availability and message delays.

    Attributes
    ----------
    K, D : int
        Clients and model (RFF) dimension.
    p : (K,) array
        Participation probabilities :math:`p_k \in [0, 1]` (Bernoulli trial of a client with a new sample,
        docs/papers/paofed.md#participation; seed lines 840, 1095).
    delta : float
        Delay parameter :math:`\delta \in [0, 1)`: :math:`P(L \ge l) =
        \delta^l` (docs/papers/paofed.md#choice-delay-law, reading erratum E5 (docs/papers/paofed.md#erratum-e5)).
    l_max : int
        Maximum effective delay; messages older than ``l_max`` are discarded (:math:`\alpha_l = 0`).
    data_rate : (K,) array
        Probability that client k receives a new sample at an iteration (1: every iteration, assumption
        I2 (docs/papers/paofed.md#assumption-i2); docs/papers/paofed.md#choice-data: :math:`N_g / 2000` for data group
        g).
    delay_step : int
        Delays are multiples of ``delay_step``: :math:`L = \text{step}\cdot G`, G geometric with
        :math:`P(G \ge i) = \delta^i` (1: the default law; 10: the "increased straggler" environment).
    delay_tail : {"discard", "cap"}
        Delays above ``l_max``: discarded (default, docs/papers/paofed.md#choice-delay-law) or capped at the largest
        multiple of ``delay_step`` not above ``l_max`` (docs/papers/paofed.md#choice-delay-law for the straggler
        environment,
        :math:`P(L = 60) = \delta^6`).
    """

    K: int
    D: int
    p: np.ndarray
    delta: float
    l_max: int
    data_rate: np.ndarray | None = None
    delay_step: int = 1
    delay_tail: str = "discard"

    def __post_init__(self) -> None:
        for name, lower in (("K", 1), ("D", 1), ("l_max", 0), ("delay_step", 1)):
            if not _is_int(getattr(self, name), lower):
                raise ValueError(f"{name} must be an integer >= {lower}, got {getattr(self, name)!r}")
        p = np.asarray(self.p, dtype=np.float64)
        if p.shape != (self.K,) or not np.all((p >= 0) & (p <= 1)):
            raise ValueError(f"p must have shape (K,) = ({self.K},) with entries in [0, 1], got {self.p!r}")
        if not (_is_real(self.delta) and 0.0 <= self.delta < 1.0):
            raise ValueError(f"delta must be a real in [0, 1), got {self.delta!r}")
        rate = np.ones(self.K) if self.data_rate is None else np.asarray(self.data_rate, dtype=np.float64)
        if rate.shape != (self.K,) or not np.all((rate >= 0) & (rate <= 1)):
            raise ValueError(f"data_rate must have shape (K,) = ({self.K},) with entries in [0, 1], "
                             f"got {self.data_rate!r}")
        if self.delay_tail not in _DELAY_TAILS:
            raise ValueError(f"delay_tail must be one of {', '.join(_DELAY_TAILS)}, got {self.delay_tail!r}")
        object.__setattr__(self, "p", readonly(p, np.float64))
        object.__setattr__(self, "data_rate", readonly(rate, np.float64))
        object.__setattr__(self, "delta", float(self.delta))

    @property
    def slots(self) -> int:
        """Message-buffer slots per client: l_max + 1 (docs/papers/paofed.md#choice-simulators)."""
        return self.l_max + 1

    def delay_pmf(self) -> np.ndarray:
        r"""P(L = l) for l = 0..l_max (mass of discarded delays excluded): :math:`(1-\delta)\delta^l` for step 1."""
        pmf = np.zeros(self.l_max + 1)
        top = self.l_max // self.delay_step
        i = np.arange(top + 1)
        mass = (1.0 - self.delta) * self.delta ** i
        if self.delay_tail == "cap":
            mass[-1] = self.delta ** top
        pmf[i * self.delay_step] = mass
        return pmf


@dataclass(frozen=True, kw_only=True)
class AlgorithmConfig:
    r"""One algorithm: PAO-Fed variant or baseline, with every choice (docs/papers/paofed.md#choices)
    of docs/papers/paofed.md#algorithms as a field.

    Use :func:`algorithm_config` to build the named algorithms of docs/papers/paofed.md#variants,
    docs/papers/paofed.md#choice-baselines.

    Attributes
    ----------
    name : str
        Label (reports only).
    mu : float
        Local LMS step size :math:`\mu > 0` (unused by SignSGD, whose clients only send gradient signs).
    m : int
        Entries per partial-sharing message, :math:`1 \le m \le D` (ignored by ``schedule = "full"``).
    schedule : {"circshift", "subset", "window", "bernoulli", "full"}
        Selection matrices. ``circshift``: cyclic windows rotated by m per
        iteration (docs/papers/paofed.md#partial-sharing; uncoordinated: client k starts at :math:`m(n + k)`, k = 1..K;
        coordinated: all at :math:`m(n+1)`). ``subset``/``window``/``bernoulli``: drawn at random every iteration from
        the law of docs/papers/paofed.md#mean-square. ``full``: :math:`M = S = I` (Online-Fed, Online-FedSGD, SignSGD).
    coordinated : bool
        Coordinated sharing: every client uses the server's selection, :math:`M_{k,n} = M_{1,n}`.
    uplink : {"next", "current"}
        :math:`S_{k,n} = M_{k,n+1}` (variants *1, *2; eq. (4.6)) or :math:`S_{k,n} = M_{k,n}` (variants *0).
    alpha : tuple of float or None
        Explicit staleness weights :math:`(\alpha_0 = 1, \alpha_1, \dots, \alpha_{l_{max}})`; if ``None``,
        :math:`\alpha_l = \text{staleness\_decay}^l` (see :func:`staleness_weights`).
    staleness_decay : float
        0.2 for variants *2, 1 otherwise (seed lines 1105-1107).
    autonomous : bool
        Clients with a new sample that do not exchange with the server update locally (P4, eqs. (4.11)-(4.12)).
    aggregation : {"partial", "average", "sign_majority", "sign_mean"}
        ``partial``: P7-P8 (eqs. (4.13)-(4.14)). ``average``: choice (A) of docs/papers/paofed.md#choice-baselines --
        the server model becomes the mean of all full models arriving at n (any age <= l_max), unchanged if none
        arrives. ``sign_majority`` / ``sign_mean``: SignSGD, :math:`w_{n+1} = w_n + \gamma\,\mathrm{sign}(\sum
        \mathrm{sign}\,g)` or :math:`w_n + \gamma\,\mathrm{mean}(\mathrm{sign}\,g)` over the arriving messages.
    server_fraction : float
        Server sub-sampling s in (0, 1]: each available client is contacted with probability s
        (Online-Fed 0.02, PSO-Fed 0.5 choice); 1 contacts every available client.
    overlap_rule : {"none", "most_recent"}
        P4's overlap rule (docs/papers/paofed.md#algorithm): for each entry, only the youngest delay group touching it
        counts. ``none`` for every theory check.
    full_downlink : bool
        Fig. 4.6a: :math:`M_{k,n} = I` (the received server model replaces the local one) while the uplink
        keeps its m-entry schedule choice.
    sign_step, sign_noise : float
        SignSGD: server step :math:`\gamma > 0`; stochastic-sign noise :math:`\xi \sim U[-B, B]^D`, B >= 0
        (0: deterministic sign).
    """

    name: str
    mu: float
    m: int = 4
    schedule: str = "circshift"
    coordinated: bool = False
    uplink: str = "next"
    alpha: tuple | None = None
    staleness_decay: float = 1.0
    autonomous: bool = True
    aggregation: str = "partial"
    server_fraction: float = 1.0
    overlap_rule: str = "none"
    full_downlink: bool = False
    sign_step: float = SIGN_STEP
    sign_noise: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        if not (_is_real(self.mu) and self.mu > 0):
            raise ValueError(f"mu must be a finite real in (0, inf), got {self.mu!r}")
        if not _is_int(self.m, 1):
            raise ValueError(f"m must be an integer >= 1, got {self.m!r}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, got {self.schedule!r}")
        if not isinstance(self.coordinated, bool):
            raise ValueError(f"coordinated must be a bool, got {self.coordinated!r}")
        if self.uplink not in _UPLINKS:
            raise ValueError(f"uplink must be one of {', '.join(_UPLINKS)}, got {self.uplink!r}")
        if self.alpha is not None:
            alpha = tuple(float(a) for a in np.atleast_1d(np.asarray(self.alpha, dtype=np.float64)))
            if not alpha or alpha[0] != 1.0 or any(not (math.isfinite(a) and a >= 0) for a in alpha):
                raise ValueError(f"alpha must be a non-empty sequence with alpha[0] = 1 and finite entries >= 0, "
                                 f"got {list(alpha)}")
            object.__setattr__(self, "alpha", alpha)
        if not (_is_real(self.staleness_decay) and 0.0 <= self.staleness_decay <= 1.0):
            raise ValueError(f"staleness_decay must be a real in [0, 1], got {self.staleness_decay!r}")
        if not isinstance(self.autonomous, bool):
            raise ValueError(f"autonomous must be a bool, got {self.autonomous!r}")
        if self.aggregation not in _AGGREGATIONS:
            raise ValueError(f"aggregation must be one of {', '.join(_AGGREGATIONS)}, got {self.aggregation!r}")
        if self.aggregation != "partial" and self.schedule != "full":
            raise ValueError(f"aggregation {self.aggregation!r} needs schedule = 'full' (full models or full "
                             f"sign vectors), got schedule {self.schedule!r}")
        if not (_is_real(self.server_fraction) and 0.0 < self.server_fraction <= 1.0):
            raise ValueError(f"server_fraction must be a real in (0, 1], got {self.server_fraction!r}")
        if self.overlap_rule not in _OVERLAP_RULES:
            raise ValueError(f"overlap_rule must be one of {', '.join(_OVERLAP_RULES)}, got {self.overlap_rule!r}")
        if not isinstance(self.full_downlink, bool):
            raise ValueError(f"full_downlink must be a bool, got {self.full_downlink!r}")
        if not (_is_real(self.sign_step) and self.sign_step > 0):
            raise ValueError(f"sign_step must be a finite real in (0, inf), got {self.sign_step!r}")
        if not (_is_real(self.sign_noise) and self.sign_noise >= 0):
            raise ValueError(f"sign_noise must be a finite real in [0, inf), got {self.sign_noise!r}")
        for name in ("mu", "staleness_decay", "server_fraction", "sign_step", "sign_noise"):
            object.__setattr__(self, name, float(getattr(self, name)))

    @property
    def sends_signs(self) -> bool:
        """SignSGD: clients send sign(g) instead of a model portion."""
        return self.aggregation.startswith("sign")


def staleness_weights(config: AlgorithmConfig, l_max: int) -> np.ndarray:
    r""":math:`(\alpha_0, \dots, \alpha_{l_{max}})`: ``config.alpha`` or :math:`\alpha_l = \text{decay}^l`
    (:math:`0^0 = 1`).

    Seed 004 lines 922 and 1105-1107 (eq. (4.14)): :math:`\alpha_0 = 1`, :math:`\alpha_l = 0.2^l` for the *2
    variants, 1 otherwise, 0 beyond :math:`l_{max}`.

    >>> w = staleness_weights(algorithm_config("paofed-c2"), 3)
    >>> bool(w[0] == 1.0 and np.allclose(w[1:] / w[:-1], 0.2))
    True
    """
    if not _is_int(l_max, 0):
        raise ValueError(f"l_max must be an integer >= 0, got {l_max!r}")
    if config.alpha is not None:
        if len(config.alpha) != l_max + 1:
            raise ValueError(f"alpha must have l_max + 1 = {l_max + 1} entries, got {len(config.alpha)}")
        return np.array(config.alpha)
    return config.staleness_decay ** np.arange(l_max + 1, dtype=np.float64)


def algorithm_config(name: str, *, mu: float = 0.4, m: int | None = None, **overrides) -> AlgorithmConfig:
    """The named algorithms of docs/papers/paofed.md#variants (PAO-Fed variants) and 2.6 (baselines) with their
    choice (docs/papers/paofed.md#choices) defaults.

    ``paofed-{c,u}{0,1,2}``: c = coordinated / u = uncoordinated circshift windows; 0: S = M_n, alpha = 1;
    1: S = M_{n+1}, alpha = 1; 2: S = M_{n+1}, alpha_l = 0.2^l. ``online-fed``: full models, no autonomous
    update, server sub-sampling s = 0.02, aggregation (A). ``online-fedsgd``: the same with s = 1.
    ``pso-fed``: PAO-Fed-C0 with m = 8 and s = 0.5 ((m/D) s = 0.02 for D = 200). ``signsgd``: full downlink,
    sign uplink, majority vote. ``m`` defaults to 4 (8 for PSO-Fed). Any field of :class:`AlgorithmConfig` can be
    overridden by keyword.

    >>> algorithm_config("paofed-u1").uplink, algorithm_config("pso-fed").m
    ('next', 8)
    """
    if name not in ALGORITHMS:
        raise ValueError(f"name must be one of {', '.join(ALGORITHMS)}, got {name!r}")
    if m is None:
        m = PSO_FED_M if name == "pso-fed" else 4
    if name.startswith("paofed-"):
        kind, digit = name[-2], name[-1]
        base = dict(name=name, mu=mu, m=m, schedule="circshift", coordinated=kind == "c",
                    uplink="current" if digit == "0" else "next", staleness_decay=0.2 if digit == "2" else 1.0)
    elif name in ("online-fed", "online-fedsgd"):
        base = dict(name=name, mu=mu, m=m, schedule="full", autonomous=False, aggregation="average",
                    server_fraction=ONLINE_FED_FRACTION if name == "online-fed" else 1.0)
    elif name == "pso-fed":
        base = dict(name=name, mu=mu, m=m, schedule="circshift", coordinated=True, uplink="current",
                    server_fraction=PSO_FED_FRACTION)
    else:
        base = dict(name=name, mu=mu, m=m, schedule="full", autonomous=False, aggregation="sign_majority")
    base.update(overrides)
    return AlgorithmConfig(**base)


@dataclass(frozen=True, kw_only=True)
class LinearData:
    r"""Linear data of the analysis (assumption I1 (docs/papers/paofed.md#assumption-i1)): :math:`y_{k,n} = z_{k,n}^T
    w^\star + \eta_{k,n}`.

    Regressors :math:`z_{k,n} \sim N(0, R_k)` i.i.d. over k and n, or drawn uniformly from a fixed ``pool``
    of vectors per client (docs/papers/paofed.md#choice-simulators: "uniform resampling from a fixed pool of RFF vectors
    whose empirical moments define R_k"). Metric: the server MSD :math:`\lVert w_n - w^\star\rVert^2`.

    Attributes
    ----------
    R : (K, D, D) array
        Regressor covariances (ignored when ``pool`` is given; then :math:`R_k` is the pool's second moment).
    w_star : (D,) array
    sigma2_eta : (K,) array
        Noise variances >= 0.
    pool : (K, P, D) array or None
    """

    R: np.ndarray
    w_star: np.ndarray
    sigma2_eta: np.ndarray
    pool: np.ndarray | None = None
    metric_name: str = field(default="msd", init=False)

    def __post_init__(self) -> None:
        w = np.asarray(self.w_star, dtype=np.float64)
        if w.ndim != 1 or w.size < 1 or not np.all(np.isfinite(w)):
            raise ValueError(f"w_star must be a finite vector of length D >= 1, got shape {w.shape}")
        D = w.size
        s2 = np.asarray(self.sigma2_eta, dtype=np.float64)
        if s2.ndim != 1 or s2.size < 1 or np.any(s2 < 0) or not np.all(np.isfinite(s2)):
            raise ValueError(f"sigma2_eta must be a vector (K,) of finite entries >= 0, got {self.sigma2_eta!r}")
        K = s2.size
        if self.pool is not None:
            pool = np.asarray(self.pool, dtype=np.float64)
            if pool.ndim != 3 or pool.shape[0] != K or pool.shape[2] != D or pool.shape[1] < 1:
                raise ValueError(f"pool must have shape (K, P, D) = ({K}, P >= 1, {D}), got {pool.shape}")
            R = np.einsum("kpi,kpj->kij", pool, pool) / pool.shape[1]
            object.__setattr__(self, "pool", readonly(pool, np.float64))
        else:
            R = np.asarray(self.R, dtype=np.float64)
            if R.shape != (K, D, D) or not np.all(np.isfinite(R)):
                raise ValueError(f"R must have shape (K, D, D) = ({K}, {D}, {D}) with finite entries, got {R.shape}")
            if np.max(np.abs(R - np.swapaxes(R, 1, 2))) > 1e-12 * max(1.0, np.max(np.abs(R))):
                raise ValueError("R must be symmetric")
            if np.min(np.linalg.eigvalsh(R)) < -1e-12 * max(1.0, np.max(np.abs(R))):
                raise ValueError("R must be positive semi-definite")
        lam, vec = np.linalg.eigh(R)
        object.__setattr__(self, "R", readonly(R, np.float64))
        object.__setattr__(self, "w_star", readonly(w, np.float64))
        object.__setattr__(self, "sigma2_eta", readonly(s2, np.float64))
        object.__setattr__(self, "_factor", readonly(vec * np.sqrt(np.clip(lam, 0.0, None))[:, None, :], np.float64))

    @classmethod
    def from_instance(cls, instance: PAOFedInstance) -> LinearData:
        return cls(R=instance.R, w_star=instance.w_star, sigma2_eta=instance.sigma2_eta)

    @property
    def K(self) -> int:
        return self.sigma2_eta.size

    @property
    def D(self) -> int:
        return self.w_star.size

    def start(self, rng: np.random.Generator, runs: int):
        return None

    def draw(self, state, rng: np.random.Generator, n: int, has_data: np.ndarray):
        """(z, y) for every client of every run, shapes (R, K, D) and (R, K); fixed-shape draws."""
        R = has_data.shape[0]
        if self.pool is None:
            z = np.matmul(self._factor, rng.standard_normal((R, self.K, self.D, 1)))[..., 0]
        else:
            pick = rng.integers(self.pool.shape[1], size=(R, self.K))
            z = self.pool[np.arange(self.K)[None, :], pick]
        y = z @ self.w_star + np.sqrt(self.sigma2_eta) * rng.standard_normal((R, self.K))
        return z, y

    def metric(self, state, w: np.ndarray) -> np.ndarray:
        """Server MSD per run, (R,)."""
        return np.sum((w - self.w_star) ** 2, axis=1)


@dataclass(frozen=True, kw_only=True)
class CommunicationCounts:
    """Exchanged parameters and bits per run, shapes (R,); ``messages`` counts client-iterations with an exchange.

    A message is counted when it is sent (also if it is later discarded as too old). ``downlink_*`` counts the
    server-to-client portions :math:`M_{k,n} w_n`, ``uplink_*`` the client-to-server messages.
    """

    messages: np.ndarray
    uplink_params: np.ndarray
    downlink_params: np.ndarray
    uplink_bits: np.ndarray
    downlink_bits: np.ndarray
    delivered: np.ndarray
    discarded: np.ndarray

    def savings(self, D: int) -> tuple[float, float]:
        """Pooled (uplink, downlink) savings :math:`1 - \\text{params}/(\\text{messages}\\cdot D)` against full
        models."""
        total = float(np.sum(self.messages)) * D
        if total == 0:
            raise ValueError("no message was exchanged: the savings are undefined")
        return 1.0 - float(np.sum(self.uplink_params)) / total, 1.0 - float(np.sum(self.downlink_params)) / total

    def load_bits(self) -> float:
        """Average uplink bits per exchanging client and iteration (seed line 1137: 128 bits for m = 4)."""
        return float(np.sum(self.uplink_bits)) / max(float(np.sum(self.messages)), 1.0)


@dataclass(frozen=True, kw_only=True)
class SimulationRun:
    """Result of :func:`run_paofed`: learning curve per run, final models and communication counts."""

    curve: np.ndarray            # (iterations + 1, R): metric of w_n, n = 0..iterations
    metric: str                  # "msd" or "mse_test"
    w: np.ndarray                # (R, D) final server models
    w_clients: np.ndarray        # (R, K, D) final local models
    communication: CommunicationCounts
    algorithm: str

    def curve_db(self) -> np.ndarray:
        """10 log10 of the run-averaged curve (the seed's learning curves, eq. (4.36))."""
        return 10.0 * np.log10(np.mean(self.curve, axis=1))


@dataclass(frozen=True, kw_only=True)
class AnalysisRun:
    """Result of :func:`run_analysis_model`: the server MSD per run and the final models."""

    msd: np.ndarray              # (iterations + 1, R)
    w: np.ndarray                # (R, D)
    w_clients: np.ndarray        # (R, K, D)


@dataclass(frozen=True, kw_only=True)
class StepRecord:
    """What :func:`run_paofed` hands to ``observe`` after iteration n (arrays are copies).

    ``delivered`` lists the messages the server used at n as arrays ``(run, client, age)``; ``arrival_time``
    is ``n + delay`` for every message sent at n, -1 for a client that sent nothing or whose message is
    discarded (delay > l_max).
    """

    n: int
    has_data: np.ndarray
    participants: np.ndarray
    z: np.ndarray
    y: np.ndarray
    M: np.ndarray
    S: np.ndarray
    delays: np.ndarray
    arrival_time: np.ndarray
    delivered: tuple[np.ndarray, np.ndarray, np.ndarray]
    w_before: np.ndarray
    w_after: np.ndarray
    w_clients_after: np.ndarray


# --------------------------------------------------------------------------------------------------
# Environments
# --------------------------------------------------------------------------------------------------


def environment_from_instance(instance: PAOFedInstance) -> AsyncEnvironment:
    """The SIM-F (docs/papers/paofed.md#choice-simulators) environment of an analysis instance: a sample at every
    iteration (I2, docs/papers/paofed.md#assumption-i2), its p, delta, l_max."""
    return AsyncEnvironment(K=instance.K, D=instance.D, p=instance.p, delta=instance.delta, l_max=instance.l_max)


def experiment_environment(*, K: int = 256, D: int = 200, p_groups=(0.25, 0.1, 0.025, 0.005),
                           data_groups=(500, 1000, 1500, 2000), horizon: int = 2000, delta: float = 0.2,
                           l_max: int = 10, delay_step: int = 1, delay_tail: str = "discard") -> AsyncEnvironment:
    r"""The asynchronous setting of the experiments (docs/papers/paofed.md#choice-data,
    docs/papers/paofed.md#participation; seed lines 1080, 1095-1097).

    Clients are split evenly into ``len(data_groups)`` data groups and, independently, into
    ``len(p_groups)`` availability groups (choice (docs/papers/paofed.md#choices): K/16 clients per cell for 4 x 4
    groups, client k in data group :math:`\lfloor k G_d / K\rfloor` and availability group :math:`\lfloor k G_d G_a /
    K\rfloor \bmod G_a`). A client of data group g receives a sample at an iteration with probability
    :math:`N_g/\text{horizon}` (choice, so it gets about :math:`N_g` samples in ``horizon`` iterations).
    """
    if not _is_int(K, 1):
        raise ValueError(f"K must be an integer >= 1, got {K!r}")
    if not _is_int(horizon, 1):
        raise ValueError(f"horizon must be an integer >= 1, got {horizon!r}")
    n_d, n_a = len(data_groups), len(p_groups)
    if n_d < 1 or n_a < 1:
        raise ValueError("data_groups and p_groups must be non-empty")
    sizes = np.asarray(data_groups, dtype=np.float64)
    if np.any(sizes < 0) or np.any(sizes > horizon):
        raise ValueError(f"data_groups must hold sample counts in [0, horizon = {horizon}], got {data_groups!r}")
    k = np.arange(K)
    data_group = k * n_d // K
    avail_group = (k * n_d * n_a // K) % n_a
    return AsyncEnvironment(K=K, D=D, p=np.asarray(p_groups, dtype=np.float64)[avail_group], delta=delta,
                            l_max=l_max, data_rate=sizes[data_group] / horizon, delay_step=delay_step,
                            delay_tail=delay_tail)


def faithful_setup(instance: PAOFedInstance) -> tuple[AsyncEnvironment, AlgorithmConfig, LinearData]:
    """SIM-F (docs/papers/paofed.md#choice-simulators) of docs/papers/paofed.md#choice-simulators for an analysis
    instance.

    P1-P9 exactly, linear Gaussian data, every client has data every iteration, random selections from the
    instance's law with :math:`S_{k,n} = M_{k,n+1}`, the instance's alpha and mu, geometric delays,
    exactly-once delivery, ``overlap_rule = "none"``.
    """
    config = AlgorithmConfig(name="paofed-sim-f", mu=instance.mu, m=instance.m, schedule=instance.selection,
                             uplink="next", alpha=tuple(instance.alpha))
    return environment_from_instance(instance), config, LinearData.from_instance(instance)
