r"""NPFL-RL (thesis Algorithm 6 / P7 Algorithm 1) for ridge regression, vectorised over clients and runs.

Every client is a row of arrays of shape ``(R, K, ...)``, ``R`` the Monte-Carlo runs (stacked instances with
the same K and d, or one instance repeated for the SAC draws); neighbour sums are products with (R, K, K)
matrices, so there is no Python loop over clients in an iteration. Iteration :math:`n = 1..N` (spec 5):

.. math::

    m_k^{(n)} &= \sum_{r\ne q}\omega_{k,r}\,\hat w_{k,(r)}^{(n-1)}, \qquad
    s_k^{(n)} = \tfrac{\rho}{2}\sum_{l\in N_k\cap C_{(q)}}(w_k^{(n-1)} + w_l^{(n-1)}) - \tfrac12\gamma_k^{(n-1)} \\
    P_k^{(n)}(a) &= (H_k + (c_k + \omega_k a) I)^{-1}(b_k + a m_k^{(n)} + s_k^{(n)}), \qquad
    w_k^{(n)} = P_k^{(n)}(\tau_k^{(n)}) \\
    \gamma_k^{(n)} &= \gamma_k^{(n-1)} + \rho\sum_{l\in N_k\cap C_{(q)}}(w_k^{(n)} - w_l^{(n)})
    \quad\text{(corrected; printed: } w_l - w_k\text{, erratum D1)}

with :math:`c_k = \lambda/|C_{(q)}| + \rho|N_k\cap C_{(q)}|` (corrected, D3; ``diagonal="printed"`` uses
:math:`\rho|N_k|`). :math:`H_k = U\Lambda U^\top` is diagonalised once, so :math:`P(a)` costs :math:`O(d^2)`.

The inter-cluster parameter :math:`\tau_k^{(n)}` is fixed (NPFL), or set by a controller (spec 4): DPG
(6.13) :math:`t \leftarrow t - \delta\,\frac{d}{da}V_v(P(a))|_{a=t}`, or SAC (6.14)
:math:`t \leftarrow t - \delta\,\mathrm{sign}(V_v(P(t+\alpha)) - V_v(P(t)))\,\alpha`, :math:`\alpha\sim U[-\nu/2,\nu/2]`,
``epochs`` inner steps per iteration (BRL), each followed by the projection :math:`\Pi = [0, \tau_{\max}]` when
enabled. NFL (spec 5, baselines) is the single-task ADMM over all neighbours with :math:`\lambda/K`.

Ground truths: :func:`per_component_ridge` (K2), :func:`global_ridge` (K3), :func:`coupled_fixed_point` and
:func:`symmetric_fixed_point_cvxpy` (K4); each carries a certificate.

References
----------
.. [1] seed 004_180cd372987d137b.txt, thesis Chapter 6, eqs. (6.5)-(6.14), Algorithm 6, lines 1637-1722;
   Publication 7, eqs. (5)-(14), Algorithm 1, lines 3489-3562.
.. [2] shared/spec/npfl_rl.md 3-6 and 9 (errata D1-D4, D11-D14) and its Review notes.
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from reference_impl.npfl_rl_data import CONVENTIONS, NPFLProblem, synthetic_problem

__all__ = [
    "ALGORITHMS",
    "DIAGONALS",
    "DUAL_SIGNS",
    "PAPER_ARMS",
    "POLICIES",
    "TIMINGS",
    "GroundTruth",
    "NPFLConfig",
    "NPFLRun",
    "PrimalMap",
    "coupled_fixed_point",
    "global_ridge",
    "npfl_primal_map",
    "per_component_ridge",
    "run_arm",
    "run_npfl",
    "simulate_replicates",
    "symmetric_fixed_point_cvxpy",
    "test_mse",
]

ALGORITHMS = ("npfl", "nfl")
POLICIES = ("fixed", "dpg", "sac")
DUAL_SIGNS = ("corrected", "printed")
DIAGONALS = ("corrected", "printed")
TIMINGS = ("literal", "online")


def _one_blas_thread(fn):
    """Run ``fn`` with one BLAS thread: the matrices are small (d x d per client), threads only contend."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with threadpool_limits(limits=1, user_api="blas"):
            return fn(*args, **kwargs)
    return wrapper


def _real(name, value, *, lo=None, lo_open=False, hi=None) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise ValueError(f"{name} must be a finite real, got {value!r}")
    v = float(value)
    if lo is not None and (v < lo or (lo_open and v == lo)):
        raise ValueError(f"{name} must be {'>' if lo_open else '>='} {lo}, got {value!r}")
    if hi is not None and v > hi:
        raise ValueError(f"{name} must be <= {hi}, got {value!r}")
    return v


def _choice(name, value, allowed):
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


@dataclass(frozen=True, kw_only=True)
class NPFLConfig:
    r"""Algorithm settings; every choice the seed leaves open is a field (spec 5, 8).

    Attributes
    ----------
    algorithm : {"npfl", "nfl"}
        NPFL(-RL) or the single-model NFL baseline (Ch3 ADMM over all neighbours, :math:`\lambda/K`).
    rho : float
        ADMM penalty :math:`\rho > 0` (3 in the experiments).
    policy : {"fixed", "dpg", "sac"}
        Fixed :math:`\tau` (NPFL(:math:`\tau`)) or an RL controller.
    tau0 : float
        :math:`\tau` of fixed NPFL, or :math:`\tau_k^{(0)} = \tau_k^{(1)}` of the controllers.
    delta : float
        Policy rate :math:`\delta_{DPG}` or :math:`\delta_{SAC}`.
    nu : float
        SAC exploration width :math:`\nu_{SAC}`.
    epochs : int
        :math:`E_{BRL}` inner policy steps per iteration (1 = RL, 3 = BRL).
    projection : bool
        Project :math:`\tau` onto :math:`[0, \tau_{\max}]` after every inner step (option :math:`\Pi`, D11).
        ``False`` is the literal, unprojected mode: breaches of well-posedness are counted (K10).
    tau_max : float
        Upper end of :math:`\Pi` (default 1).
    clip_candidates : bool
        Also project the SAC candidate :math:`a = \Pi(t+\alpha)` (the step then uses :math:`a - t`); keeps every
        evaluation well posed (the corrected K10).
    timing : {"literal", "online"}
        :math:`\tau^{(n)}` from the cached map :math:`P^{(n-1)}` (literal, D13) or from :math:`P^{(n)}`.
    convention : {"E0", "E1"}
        Empty :math:`N_k^{(r)}`: drop the cluster keeping :math:`1/(Q-1)` (E0) or renormalise (E1).
    dual_sign : {"corrected", "printed"}
        ``"printed"`` is the ERRATUM MODE of (6.6) (:math:`w_l - w_k`, D1): it diverges; for regression tests only.
    diagonal : {"corrected", "printed"}
        :math:`\rho|N_k\cap C_{(q)}|` (corrected) or the printed :math:`\rho|N_k|` of (6.11) (ERRATUM MODE, D3).
    """

    algorithm: str = "npfl"
    rho: float = 3.0
    policy: str = "fixed"
    tau0: float = 0.05
    delta: float = 0.001
    nu: float = 0.05
    epochs: int = 1
    projection: bool = True
    tau_max: float = 1.0
    clip_candidates: bool = False
    timing: str = "literal"
    convention: str = "E0"
    dual_sign: str = "corrected"
    diagonal: str = "corrected"

    def __post_init__(self) -> None:
        _choice("algorithm", self.algorithm, ALGORITHMS)
        _choice("policy", self.policy, POLICIES)
        _choice("timing", self.timing, TIMINGS)
        _choice("convention", self.convention, CONVENTIONS)
        _choice("dual_sign", self.dual_sign, DUAL_SIGNS)
        _choice("diagonal", self.diagonal, DIAGONALS)
        object.__setattr__(self, "rho", _real("rho", self.rho, lo=0.0, lo_open=True))
        object.__setattr__(self, "tau0", _real("tau0", self.tau0, lo=0.0))
        object.__setattr__(self, "delta", _real("delta", self.delta, lo=0.0))
        object.__setattr__(self, "nu", _real("nu", self.nu, lo=0.0))
        object.__setattr__(self, "tau_max", _real("tau_max", self.tau_max, lo=0.0, lo_open=True))
        if isinstance(self.epochs, bool) or not isinstance(self.epochs, numbers.Integral) or self.epochs < 1:
            raise ValueError(f"epochs must be an integer >= 1, got {self.epochs!r}")
        for flag in ("projection", "clip_candidates"):
            if not isinstance(getattr(self, flag), bool):
                raise ValueError(f"{flag} must be true or false, got {getattr(self, flag)!r}")
        if self.projection and self.tau0 > self.tau_max:
            raise ValueError(f"tau0 must be <= tau_max = {self.tau_max} with projection, got {self.tau0!r}")
        if self.algorithm == "nfl" and self.policy != "fixed":
            raise ValueError(f"policy must be 'fixed' for algorithm 'nfl' (no inter-cluster term), got {self.policy!r}")

    @property
    def label(self) -> str:
        if self.algorithm == "nfl":
            return "NFL"
        if self.policy == "fixed":
            return f"NPFL tau={self.tau0:g}"
        return f"NPFL-{'BRL' if self.epochs > 1 else 'RL'} ({self.policy.upper()})"


@dataclass(frozen=True)
class _Structure:
    """Per-run arrays of a batch of instances (leading axis R)."""

    U: np.ndarray        # (R, K, d, d) eigenvectors of H_k
    Lam: np.ndarray      # (R, K, d) eigenvalues of H_k
    b: np.ndarray        # (R, K, d)
    A_in: np.ndarray     # (R, K, K) consensus neighbours (same cluster; all for NFL)
    deg_in: np.ndarray   # (R, K)
    B: np.ndarray        # (R, K, K) inter-cluster averaging, m = B w
    omega: np.ndarray    # (R, K)
    lam_k: np.ndarray    # (R, K) lambda/|C_q| (lambda/K for NFL)
    c: np.ndarray        # (R, K)
    Hv: np.ndarray
    bv: np.ndarray
    cv: np.ndarray


def _structure(problems: tuple[NPFLProblem, ...], config: NPFLConfig) -> _Structure:
    K, d = problems[0].K, problems[0].d
    for p in problems:
        if (p.K, p.d) != (K, d):
            raise ValueError(f"problems must share K and d to be stacked, got {(p.K, p.d)} and {(K, d)}")
    nfl = config.algorithm == "nfl"
    A_in, B, omega, lam_k, deg_all = [], [], [], [], []
    for p in problems:  # once per run, before the iterations
        if nfl:
            A_in.append(p.adjacency.astype(np.float64))
            B.append(np.zeros((K, K)))
            omega.append(np.zeros(K))
            lam_k.append(np.full(K, p.lam / K))
        else:
            A_in.append(p.same_cluster_adjacency.astype(np.float64))
            om, Bm = p.inter_cluster_weights(config.convention)
            B.append(Bm)
            omega.append(om.sum(axis=1))
            lam_k.append(p.lam / p.cluster_sizes)
        deg_all.append(p.adjacency.sum(axis=1))
    A_in, B, omega, lam_k = (np.stack(v) for v in (A_in, B, omega, lam_k))
    deg_in = A_in.sum(axis=-1)
    deg_diag = np.stack(deg_all).astype(np.float64) if config.diagonal == "printed" else deg_in
    H = np.stack([p.H for p in problems])
    Lam, U = np.linalg.eigh(H)
    Lam = np.maximum(Lam, 0.0)  # H_k is PSD; eigh rounding can give -1e-17
    stack = lambda name: np.stack([getattr(p, name) for p in problems])
    return _Structure(U=U, Lam=Lam, b=stack("b"), A_in=A_in, deg_in=deg_in, B=B, omega=omega, lam_k=lam_k,
                      c=lam_k + config.rho * deg_diag, Hv=stack("Hv"), bv=stack("bv"), cv=stack("cv"))


def _solve(S: _Structure, shift, v):
    """(H + shift I)^{-1} v in the eigenbasis: shift (R, K), v (R, K, d)."""
    coef = np.einsum("rkij,rki->rkj", S.U, v) / (S.Lam + shift[..., None])
    return np.einsum("rkij,rkj->rki", S.U, coef)


def _P(S: _Structure, m, s, a):
    return _solve(S, S.c + S.omega * a, S.b + a[..., None] * m + s)


def _V(S: _Structure, w):
    quad = np.einsum("rki,rkij,rkj->rk", w, S.Hv, w)
    return quad - 2.0 * np.einsum("rki,rki->rk", S.bv, w) + S.cv + S.lam_k * np.einsum("rki,rki->rk", w, w)


def _dV(S: _Structure, m, s, a):
    """d/da V_v(P(a)) (spec 4) and P(a)."""
    P = _P(S, m, s, a)
    grad = 2.0 * np.einsum("rkij,rkj->rki", S.Hv, P) - 2.0 * S.bv + 2.0 * S.lam_k[..., None] * P
    dP = _solve(S, S.c + S.omega * a, m - S.omega[..., None] * P)
    return np.einsum("rki,rki->rk", grad, dP), P


def _dpg_step(S: _Structure, m, s, t, delta):
    """DPG (6.13): -delta * dV_v(P(a))/da at a = t (before projection)."""
    g, _ = _dV(S, m, s, t)
    return -delta * g


def _sac_step(S: _Structure, m, s, t, alpha, delta):
    """SAC (6.14): -delta * sign(V_v(P(t + alpha)) - V_v(P(t))) * alpha, sign(0) = 0 (before projection)."""
    dv = _V(S, _P(S, m, s, t + alpha)) - _V(S, _P(S, m, s, t))
    return -delta * np.sign(dv) * alpha


@dataclass(frozen=True)
class PrimalMap:
    r"""The map :math:`a \mapsto P_k^{(n)}(a)` of every client of one instance at one state (spec 3-4).

    Built by :func:`npfl_primal_map` from :math:`w^{(n-1)}, \gamma^{(n-1)}`; arrays have shape (K, ...) and ``a``
    has shape (K,) (complex allowed: complex-step derivatives). The DPG and SAC updates of :func:`run_npfl` are
    these methods.
    """

    structure: _Structure
    m: np.ndarray
    s: np.ndarray

    @property
    def c(self) -> np.ndarray:
        return self.structure.c[0]

    @property
    def omega(self) -> np.ndarray:
        return self.structure.omega[0]

    def _a(self, a):
        return np.broadcast_to(np.asarray(a), self.c.shape)[None]

    def primal(self, a) -> np.ndarray:
        """:math:`P_k(a_k)`, shape (K, d)."""
        return _P(self.structure, self.m[None], self.s[None], self._a(a))[0]

    def value(self, a) -> np.ndarray:
        """:math:`V_v(P_k(a_k))` (6.12), shape (K,)."""
        return _V(self.structure, _P(self.structure, self.m[None], self.s[None], self._a(a)))[0]

    def derivative(self, a) -> np.ndarray:
        """:math:`\frac{d}{da}V_v(P_k(a))` at :math:`a_k` (spec 4), shape (K,)."""
        return _dV(self.structure, self.m[None], self.s[None], self._a(a))[0][0]

    def dpg_step(self, t, delta) -> np.ndarray:
        """The DPG increment of (6.13) at :math:`t` (before projection)."""
        return _dpg_step(self.structure, self.m[None], self.s[None], self._a(t), delta)[0]

    def sac_step(self, t, alpha, delta) -> np.ndarray:
        """The SAC increment of (6.14) at :math:`t` with exploration draw ``alpha`` (before projection)."""
        return _sac_step(self.structure, self.m[None], self.s[None], self._a(t), self._a(alpha), delta)[0]


@_one_blas_thread
def npfl_primal_map(problem: NPFLProblem, config: NPFLConfig, w, gamma) -> PrimalMap:
    r"""The primal map :math:`P^{(n)}` that iteration :math:`n` builds from :math:`w^{(n-1)}, \gamma^{(n-1)}` (K, d)."""
    S = _structure((problem,), config)
    w = np.asarray(w, dtype=np.float64)[None]
    gamma = np.asarray(gamma, dtype=np.float64)[None]
    if w.shape != S.b.shape or gamma.shape != S.b.shape:
        raise ValueError(f"w and gamma must have shape (K, d) = {S.b.shape[1:]}, got {w.shape[1:]} and "
                         f"{gamma.shape[1:]}")
    m = np.einsum("rkl,rld->rkd", S.B, w)
    s = 0.5 * config.rho * (S.deg_in[..., None] * w + np.einsum("rkl,rld->rkd", S.A_in, w)) - 0.5 * gamma
    return PrimalMap(structure=S, m=m[0], s=s[0])


@dataclass(frozen=True, kw_only=True)
class NPFLRun:
    r"""Result of :func:`run_npfl` (leading axis: runs).

    Attributes
    ----------
    w, gamma : (R, K, d)
        Final :math:`w^{(N)}`, :math:`\gamma^{(N)}`.
    tau : (R, N+1, K)
        :math:`\tau_k^{(n)}` used at iteration n (index 0: :math:`\tau^{(0)}`).
    test_mse : (R, N+1)
        (6.15) as printed (denominator :math:`\|w_{(q)}\|`), n = 0..N; NaN without true models.
    nmsd : (R, N+1)
        (6.15) with :math:`\|w_{(q)}\|^2` (D9).
    reference_error : (R, N+1) or None
        :math:`\sum_k\|w_k^{(n)} - w_k^*\|^2/\sum_k\|w_k^*\|^2` against a given ground truth.
    min_shift : (R,)
        Smallest :math:`c_k + \omega_k a` over every evaluation of :math:`P(a)` (> 0 iff every step was well posed,
        K10, since :math:`\lambda_{\min}(A) = \lambda_{\min}(H_k) + c_k + \omega_k a` and :math:`H_k` is singular
        when :math:`D_k < d`).
    ill_posed : (R,)
        Number of (iteration, client, evaluation) triples with :math:`\lambda_{\min}(A) \le 0`.
    tau_steps : (R, N+1, K)
        :math:`|\tau^{(n)} - \tau^{(n-1)}|` before projection summed over the inner steps (K7), 0 at n = 0, 1.
    max_inner_step : float
        Largest single inner-step :math:`|\Delta t|` before projection (K7).
    finite : (R,)
        Whether every iterate stayed finite (False: the run diverged; curves are NaN from there on).
    last_increment : (R,)
        :math:`\max_k\|w_k^{(N)} - w_k^{(N-1)}\|`: the run did not settle if this is not small.
    """

    config: NPFLConfig
    iterations: int
    w: np.ndarray
    gamma: np.ndarray
    tau: np.ndarray
    test_mse: np.ndarray
    nmsd: np.ndarray
    reference_error: np.ndarray | None
    min_shift: np.ndarray
    ill_posed: np.ndarray
    tau_steps: np.ndarray
    max_inner_step: float
    finite: np.ndarray
    last_increment: np.ndarray

    @property
    def test_mse_db(self) -> np.ndarray:
        """Run-averaged (linear domain) printed Test MSE in dB, n = 0..N (spec K11)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return 10.0 * np.log10(np.mean(self.test_mse, axis=0))


def test_mse(problem: NPFLProblem, w, *, squared: bool = False) -> np.ndarray:
    r"""Test MSE (6.15): :math:`\frac1K\sum_k\|w_k - w_{(q_k)}\|^2/\|w_{(q_k)}\|` (``squared``: :math:`\|w_{(q)}\|^2`, D9).

    ``w`` has shape (..., K, d). Requires the problem's true models.
    """
    if problem.true_models is None:
        raise ValueError("problem.true_models must be set to compute the Test MSE (6.15)")
    W = problem.true_models[problem.labels]
    norm = np.sum(W * W, axis=-1)
    denom = norm if squared else np.sqrt(norm)
    return np.mean(np.sum((np.asarray(w) - W) ** 2, axis=-1) / denom, axis=-1)


test_mse.__test__ = False  # not a pytest test


def _as_problems(problems) -> tuple[NPFLProblem, ...]:
    if isinstance(problems, NPFLProblem):
        return (problems,)
    problems = tuple(problems)
    if not problems or not all(isinstance(p, NPFLProblem) for p in problems):
        raise ValueError("problems must be an NPFLProblem or a non-empty sequence of them")
    return problems


@_one_blas_thread
def run_npfl(problems, config: NPFLConfig, iterations: int, rng: np.random.Generator | None = None, *,
             reference=None, tau_init=None) -> NPFLRun:
    r"""Run Algorithm 6 (or NFL) for ``iterations`` iterations on a batch of instances (one run each).

    Parameters
    ----------
    problems : NPFLProblem or sequence of NPFLProblem
        One instance per run (same K, d); repeat an instance for several SAC runs on it.
    config : NPFLConfig
    iterations : int
        :math:`N \ge 1` (the iteration cap; the run reports ``last_increment`` and ``finite``).
    rng : numpy.random.Generator or sequence of R of them, optional
        Required for the SAC policy (the :math:`\alpha` draws); one generator per run makes run r's draws
        independent of the other runs in the batch (common random numbers across arms).
    reference : array_like (R, K, d) or (K, d), optional
        A ground truth; its relative error curve is recorded.
    tau_init : array_like (R, K) or (K,), optional
        Client-specific :math:`\tau_k^{(0)} \ge 0` (fixed :math:`\tau_k` for ``policy="fixed"``); default
        ``config.tau0`` for every client.
    """
    problems = _as_problems(problems)
    if isinstance(iterations, bool) or not isinstance(iterations, numbers.Integral) or iterations < 1:
        raise ValueError(f"iterations must be an integer >= 1, got {iterations!r}")
    S = _structure(problems, config)
    R, K, d = S.b.shape
    per_run = isinstance(rng, (list, tuple))
    if config.policy == "sac":
        ok = (all(isinstance(g, np.random.Generator) for g in rng) and len(rng) == R) if per_run \
            else isinstance(rng, np.random.Generator)
        if not ok:
            raise ValueError(f"rng must be a numpy.random.Generator or a sequence of R = {R} of them for the SAC "
                             f"policy, got {rng!r}")
    N = int(iterations)
    has_truth = all(p.true_models is not None for p in problems)
    if has_truth:
        Wq = np.stack([p.true_models[p.labels] for p in problems])
        nq = np.sum(Wq * Wq, axis=-1)
    ref = None
    if reference is not None:
        ref = np.broadcast_to(np.asarray(reference, dtype=np.float64), (R, K, d))
        ref_norm = np.sum(ref * ref, axis=(1, 2))
    w = np.zeros((R, K, d))
    gamma = np.zeros((R, K, d))
    tau = np.full((R, K), 0.0 if config.algorithm == "nfl" else config.tau0)
    if tau_init is not None:
        tau_init = np.asarray(tau_init, dtype=np.float64)
        if config.algorithm == "nfl" or tau_init.shape not in ((K,), (R, K)) or not np.all(np.isfinite(tau_init)) \
                or np.any(tau_init < 0):
            raise ValueError(f"tau_init must be finite reals >= 0 of shape (K,) or (R, K) = {(R, K)} (not for NFL), "
                             f"got shape {tau_init.shape}")
        tau = np.broadcast_to(tau_init, (R, K)).copy()
    taus = np.empty((R, N + 1, K))
    taus[:, 0] = tau
    steps = np.zeros((R, N + 1, K))
    curves = {k: np.full((R, N + 1), np.nan) for k in ("mse", "nmsd", "ref")}
    min_shift = np.full(R, np.inf)
    ill = np.zeros(R, dtype=np.int64)
    finite = np.ones(R, dtype=bool)
    max_inner = 0.0
    sign = 1.0 if config.dual_sign == "corrected" else -1.0
    lo, hi = (0.0, config.tau_max) if config.projection else (-np.inf, np.inf)

    def record(n, w):
        if has_truth:
            dev = np.sum((w - Wq) ** 2, axis=-1)
            curves["mse"][:, n] = np.mean(dev / np.sqrt(nq), axis=-1)
            curves["nmsd"][:, n] = np.mean(dev / nq, axis=-1)
        if ref is not None:
            curves["ref"][:, n] = np.sum((w - ref) ** 2, axis=(1, 2)) / ref_norm

    def note(a):
        nonlocal min_shift, ill
        shift = S.Lam[..., 0] + S.c + S.omega * a
        min_shift = np.minimum(min_shift, np.min(S.c + S.omega * a, axis=1))
        ill += np.sum(shift <= 0.0, axis=1)

    record(0, w)
    prev_map = None
    w_prev = w
    for n in range(1, N + 1):
        with np.errstate(over="ignore", invalid="ignore"):
            nb_in = np.einsum("rkl,rld->rkd", S.A_in, w)
            m = np.einsum("rkl,rld->rkd", S.B, w)
            s = 0.5 * config.rho * (S.deg_in[..., None] * w + nb_in) - 0.5 * gamma
            if config.policy != "fixed" and n > 1:
                mm, ss = prev_map if config.timing == "literal" else (m, s)
                t = tau
                total = np.zeros((R, K))
                for _ in range(config.epochs):
                    if config.policy == "dpg":
                        note(t)
                        dt = _dpg_step(S, mm, ss, t, config.delta)
                    else:
                        if per_run:  # replicate r's draws depend on its own generator only
                            alpha = np.stack([g.uniform(-config.nu / 2.0, config.nu / 2.0, size=K) for g in rng])
                        else:
                            alpha = rng.uniform(-config.nu / 2.0, config.nu / 2.0, size=(R, K))
                        a = np.clip(t + alpha, lo, hi) if config.clip_candidates else t + alpha
                        note(a)
                        note(t)
                        dt = _sac_step(S, mm, ss, t, a - t, config.delta)
                    max_inner = max(max_inner, float(np.nanmax(np.abs(dt))) if np.any(np.isfinite(dt)) else np.inf)
                    total += np.abs(dt)
                    t = np.clip(t + dt, lo, hi)
                tau = t
                steps[:, n] = total
            prev_map = (m, s)
            note(tau)
            w_new = _P(S, m, s, tau)
            gamma = gamma + sign * config.rho * (S.deg_in[..., None] * w_new - np.einsum("rkl,rld->rkd", S.A_in, w_new))
        w_prev, w = w, w_new
        taus[:, n] = tau
        finite &= np.all(np.isfinite(w), axis=(1, 2)) & np.all(np.isfinite(tau), axis=1)
        record(n, w)
    with np.errstate(invalid="ignore"):
        last = np.max(np.linalg.norm(w - w_prev, axis=-1), axis=-1)
    return NPFLRun(config=config, iterations=N, w=w, gamma=gamma, tau=taus, test_mse=curves["mse"],
                   nmsd=curves["nmsd"], reference_error=curves["ref"] if ref is not None else None,
                   min_shift=min_shift, ill_posed=ill, tau_steps=steps, max_inner_step=max_inner, finite=finite,
                   last_increment=last)


#: The arms of the seed's figures (thesis 1734-1749, P7 3585-3600) with the spec's choices for what is unstated
#: (tau0 = 0.05 for the controllers, projection onto [0, 1], SAC candidates projected, literal timing, E0).
#: Fig. 6.1: NFL and NPFL(tau); Fig. 6.2: RL/BRL with DPG and SAC against NPFL(0.05); Fig. 6.3: tau of RL (DPG, SAC).
PAPER_ARMS = {
    "nfl": NPFLConfig(algorithm="nfl"),
    **{f"npfl_tau_{t:g}": NPFLConfig(tau0=t) for t in (0.0, 0.05, 0.1, 0.2, 0.4)},
    "rl_dpg": NPFLConfig(policy="dpg", delta=0.001, epochs=1),
    "brl_dpg": NPFLConfig(policy="dpg", delta=0.003, epochs=3),
    "rl_sac": NPFLConfig(policy="sac", delta=0.1, nu=0.05, epochs=1, clip_candidates=True),
    "brl_sac": NPFLConfig(policy="sac", delta=0.04, nu=0.05, epochs=3, clip_candidates=True),
}


def run_arm(config: NPFLConfig, iterations: int, seed: int, *, generator: dict | None = None) -> dict:
    """One arm on one replicate seed: the I0 instance of ``seed`` (spec 6), Test-MSE curve and tau trajectories.

    The building block of the C1-C9 comparisons (plugged into ``verify.comparisons`` later). The instance is
    drawn from ``numpy.random.default_rng([seed, 0])`` and the SAC draws from ``default_rng([seed, 1])``, so every
    arm of one replicate sees the same instance (common random numbers).

    Returns
    -------
    dict
        ``test_mse`` (N+1,) printed (6.15), ``nmsd`` (N+1,), ``tau`` (N+1, K), ``D`` (K,), ``finite``,
        ``ill_posed`` and ``label``.
    """
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    problem, _ = synthetic_problem(np.random.default_rng([int(seed), 0]), **(generator or {}))
    run = run_npfl(problem, config, iterations, np.random.default_rng([int(seed), 1]))
    return {"label": config.label, "test_mse": run.test_mse[0], "nmsd": run.nmsd[0], "tau": run.tau[0],
            "D": np.asarray(problem.D), "finite": bool(run.finite[0]), "ill_posed": int(run.ill_posed[0])}


def simulate_replicates(arms, iterations: int, root_seed: int, replicates, *, generator: dict | None = None,
                        metric: str = "test_mse") -> list[np.ndarray]:
    """Every arm on the replicates ``replicates``, vectorised over them: one array (len(replicates), N+1) per arm.

    The shape ``verify.comparisons.Design.simulate`` expects. Replicate ``i``'s instance is drawn from
    ``default_rng([root_seed, i, 0])`` and its SAC draws from ``default_rng([root_seed, i, 1])``, so it depends only
    on ``(root_seed, i)`` and is shared by every arm (common random numbers). ``arms`` are names of
    :data:`PAPER_ARMS` or :class:`NPFLConfig` records; ``metric`` is ``"test_mse"`` (6.15 as printed), ``"nmsd"``
    (denominator squared, D9) or ``"tau"`` (trajectories, shape (len(replicates), N+1, K)).
    """
    if metric not in ("test_mse", "nmsd", "tau"):
        raise ValueError(f"metric must be 'test_mse', 'nmsd' or 'tau', got {metric!r}")
    replicates = [int(i) for i in replicates]
    if not replicates or any(i < 0 for i in replicates):
        raise ValueError(f"replicates must be a non-empty sequence of integers >= 0, got {replicates!r}")
    problems = [synthetic_problem(np.random.default_rng([int(root_seed), i, 0]), **(generator or {}))[0]
                for i in replicates]
    out = []
    for arm in arms:
        config = PAPER_ARMS[arm] if isinstance(arm, str) else arm
        if not isinstance(config, NPFLConfig):
            raise ValueError(f"arms must be names of PAPER_ARMS or NPFLConfig records, got {arm!r}")
        rngs = [np.random.default_rng([int(root_seed), i, 1]) for i in replicates]
        run = run_npfl(problems, config, iterations, rngs)
        out.append({"test_mse": run.test_mse, "nmsd": run.nmsd, "tau": run.tau}[metric])
    return out


# ---------------------------------------------------------------------------------------------------------------
# Ground truths


@dataclass(frozen=True, kw_only=True)
class GroundTruth:
    """Per-client ground-truth models (K, d) with the certificate of how they were obtained."""

    w: np.ndarray
    certificate: float
    method: str


def _cvxpy_ridge(Xs, ys, Ds, reg, tol):
    import cvxpy as cp

    d = Xs[0].shape[1]
    w = cp.Variable(d)
    obj = sum(cp.sum_squares(X @ w - y) / D for X, y, D in zip(Xs, ys, Ds)) + reg * cp.sum_squares(w)
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol, max_iter=500)
    if prob.status != cp.OPTIMAL or w.value is None:
        raise ArithmeticError(f"CVXPY/Clarabel ridge solve ended with status {prob.status!r}")
    return np.asarray(w.value)


@_one_blas_thread
def _ridge_groups(problem: NPFLProblem, groups: np.ndarray, reg: np.ndarray, method: str, tol: float) -> GroundTruth:
    """argmin sum_{k in g} (1/D_k)||y_k - X_k w||^2 + reg_g ||w||^2 for every group g; certificate: max relative
    gradient residual of the normal equations (both methods)."""
    if method not in ("cvxpy", "normal"):
        raise ValueError(f"method must be 'cvxpy' or 'normal', got {method!r}")
    G = int(groups.max()) + 1
    d = problem.d
    out = np.empty((G, d))
    worst = 0.0
    for g in range(G):  # ground truth, once per group (not an iteration)
        idx = np.flatnonzero(groups == g)
        Hs = problem.H[idx].sum(axis=0) + reg[g] * np.eye(d)
        bs = problem.b[idx].sum(axis=0)
        if method == "normal":
            x = np.linalg.solve(Hs, bs)
        else:
            x = _cvxpy_ridge([problem.X[k] for k in idx], [problem.y[k] for k in idx], problem.D[idx], reg[g], tol)
        worst = max(worst, float(np.linalg.norm(Hs @ x - bs) / max(np.linalg.norm(bs), 1e-300)))
        out[g] = x
    return GroundTruth(w=out[groups], certificate=worst, method=method)


def per_component_ridge(problem: NPFLProblem, *, method: str = "cvxpy", tol: float = 1e-10) -> GroundTruth:
    r"""K2: for every component :math:`c` of every :math:`G_q`,
    :math:`w_c^* = \arg\min\sum_{k\in c}\frac1{D_k}\|y_k - X_k w\|^2 + \frac{\lambda|c|}{|C_{(q)}|}\|w\|^2`.

    The limit of NPFL with :math:`\tau = 0` (spec K2, D12). ``certificate``: relative residual of the normal
    equations at the returned point.
    """
    comp = problem.components
    sizes = np.bincount(comp)
    cq = np.bincount(problem.labels)[problem.labels]
    reg = np.zeros(sizes.size)
    reg[comp] = problem.lam * sizes[comp] / cq
    return _ridge_groups(problem, comp, reg, method, tol)


def global_ridge(problem: NPFLProblem, *, method: str = "cvxpy", tol: float = 1e-10) -> GroundTruth:
    r"""K3: :math:`w^* = \arg\min\sum_k\frac1{D_k}\|y_k - X_k w\|^2 + \lambda\|w\|^2` (G connected), for every client."""
    return _ridge_groups(problem, np.zeros(problem.K, dtype=np.int64), np.array([problem.lam]), method, tol)


@_one_blas_thread
def coupled_fixed_point(problem: NPFLProblem, tau, *, convention: str = "E0") -> GroundTruth:
    r"""K4: the fixed point of NPFL with fixed :math:`\tau_k \ge 0`, one unknown :math:`w_c` per component.

    .. math::

        \sum_{k\in c}\Bigl[(H_k + \tfrac{\lambda}{|C_{(q)}|} I)w_c - b_k
            + \tau_k\sum_{r}\omega_{k,r}\bigl(w_c - \tfrac{1}{|N_k^{(r)}|}\sum_{l\in N_k^{(r)}} w_{c(l)}\bigr)\Bigr] = 0

    (the corrected dual makes :math:`L_{in}w = 0` at a fixed point, and :math:`\gamma \in \mathrm{range}(L_{in})`
    cancels when the stationarity conditions of a component are summed). Solved as one stacked linear system;
    ``certificate`` is its relative residual.
    """
    tau = np.broadcast_to(np.asarray(tau, dtype=np.float64), (problem.K,))
    if not np.all(np.isfinite(tau)) or np.any(tau < 0):
        raise ValueError(f"tau must be finite and >= 0, got {tau!r}")
    comp = problem.components
    C, d = int(comp.max()) + 1, problem.d
    om, Bm = problem.inter_cluster_weights(convention)
    S = np.eye(C)[comp]  # (K, C) membership
    lam_q = problem.lam / problem.cluster_sizes
    diag = problem.H + (lam_q + tau * om.sum(axis=1))[:, None, None] * np.eye(d)  # (K, d, d)
    M = np.einsum("kc,kij->cij", S, diag)  # block diagonal part (C, d, d)
    coupling = (S.T * tau) @ Bm @ S  # (C, C): sum_k in c tau_k sum_l B_kl [c(l) = c']
    big = np.kron(-coupling, np.eye(d))
    for c in range(C):  # assemble the diagonal blocks
        big[c * d:(c + 1) * d, c * d:(c + 1) * d] += M[c]
    rhs = (S.T @ problem.b).reshape(-1)
    x = np.linalg.solve(big, rhs)
    res = float(np.linalg.norm(big @ x - rhs) / max(np.linalg.norm(rhs), 1e-300))
    return GroundTruth(w=x.reshape(C, d)[comp], certificate=res, method="stacked linear system")


def symmetric_fixed_point_cvxpy(problem: NPFLProblem, tau, *, tol: float = 1e-10) -> GroundTruth:
    r"""K4 symmetric case: :math:`W^* = \arg\min\sum_q\Phi_q(w_q)/T_q + \frac{1}{Q-1}\sum_{q<r}\|w_q - w_r\|^2`.

    Requires every :math:`G_q` connected, every :math:`N_k^{(r)} \ne\emptyset` and :math:`T_q = \sum_{k\in C_{(q)}}
    \tau_k > 0`; :math:`\Phi_q(w) = \sum_{k\in C_{(q)}}\frac1{D_k}\|y_k - X_k w\|^2 + \lambda\|w\|^2`. Its stationarity
    conditions are those of :func:`coupled_fixed_point` (spec K4; the raw-:math:`\tau` (6.1) is not, D14).
    ``certificate``: relative stationarity residual of the returned point.
    """
    import cvxpy as cp

    tau = np.broadcast_to(np.asarray(tau, dtype=np.float64), (problem.K,))
    Q, d = problem.Q, problem.d
    if np.unique(problem.components).size != Q:
        raise ValueError("symmetric case needs every intra-cluster graph G_q connected")
    counts = problem.neighbour_counts()
    if np.any((counts == 0) & (np.arange(Q)[None, :] != problem.labels[:, None])):
        raise ValueError("symmetric case needs every N_k^(r) non-empty")
    T = np.bincount(problem.labels, weights=tau, minlength=Q)
    if np.any(T <= 0):
        raise ValueError(f"symmetric case needs T_q = sum of tau_k over C_q > 0, got {T.tolist()}")
    W = cp.Variable((Q, d))
    obj = 0
    for q in range(Q):  # ground truth, once per cluster
        idx = np.flatnonzero(problem.labels == q)
        phi = sum(cp.sum_squares(problem.X[k] @ W[q] - problem.y[k]) / problem.D[k] for k in idx)
        obj = obj + (phi + problem.lam * cp.sum_squares(W[q])) / T[q]
    obj = obj + sum(cp.sum_squares(W[q] - W[r]) for q in range(Q) for r in range(q + 1, Q)) / (Q - 1)
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol, max_iter=500)
    if prob.status != cp.OPTIMAL or W.value is None:
        raise ArithmeticError(f"CVXPY/Clarabel symmetric fixed-point solve ended with status {prob.status!r}")
    Wv = np.asarray(W.value)
    grads = []
    for q in range(Q):
        idx = np.flatnonzero(problem.labels == q)
        g = (problem.H[idx].sum(0) + problem.lam * np.eye(d)) @ Wv[q] - problem.b[idx].sum(0)
        g = g + T[q] / (Q - 1) * sum(Wv[q] - Wv[r] for r in range(Q) if r != q)
        grads.append(np.linalg.norm(g) / max(np.linalg.norm(problem.b[idx].sum(0)), 1e-300))
    return GroundTruth(w=Wv[problem.labels], certificate=float(max(grads)), method="cvxpy (symmetric case)")
