r"""The NPFL(-RL) / NFL iteration (Algorithm 6), vectorised over runs and clients: no Python loop over
clients in an iteration.

.. math::

    w_k^{(n)} = P_k^{(n)}(\tau_k^{(n)}), \qquad
    \gamma_k^{(n)} = \gamma_k^{(n-1)} + \rho\sum_{l\in N_k\cap C_{(q)}}(w_k^{(n)} - w_l^{(n)})
    \quad\text{(corrected; printed: } w_l - w_k\text{, erratum D1 (docs/papers/npfl_rl.md#erratum-d1))}

with :math:`\tau_k^{(n)}` fixed (NPFL) or set by a controller (``epochs`` inner steps, each followed by the
projection onto :math:`[0, \tau_{\max}]` when enabled). NFL is the single-task ADMM over all neighbours.

References
----------
.. [1] seed 004_180cd372987d137b.txt, thesis Chapter 6, eqs. (6.5)-(6.14), Algorithm 6, lines 1637-1722;
   Publication 7, eqs. (5)-(14), Algorithm 1, lines 3489-3562.
.. [2] docs/papers/npfl_rl.md: the algorithm as fedcheck runs it, errata D1-D4 (docs/papers/npfl_rl.md#erratum-d1 to
       #erratum-d4) and errata D11-D14 (docs/papers/npfl_rl.md#erratum-d11 to #erratum-d14), readings C-npfl-1..9.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from reference_impl.npfl_rl.config import NPFLConfig, one_blas_thread
from reference_impl.npfl_rl.controllers import dpg_step
from reference_impl.npfl_rl.data import NPFLProblem
from reference_impl.npfl_rl.eigen import (
    eigen_primal,
    eigen_state,
    eigen_validation,
    from_eigen,
    shifted_inverse,
)
from reference_impl.npfl_rl.eigen import eigen_sac_step as sac_step  # the run's SAC step (mutation tests patch it)
from reference_impl.npfl_rl.primal import build_structure, graph_product, primal_at

__all__ = ["NPFLRun", "run_npfl", "test_mse"]


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
        (6.15) with :math:`\|w_{(q)}\|^2` (erratum D9, docs/papers/npfl_rl.md#erratum-d9).
    reference_error : (R, N+1) or None
        :math:`\sum_k\|w_k^{(n)} - w_k^*\|^2/\sum_k\|w_k^*\|^2` against a given ground truth.
    min_shift : (R,)
        Smallest :math:`c_k + \omega_k a` over every evaluation of :math:`P(a)` (> 0 iff every step was well posed,
        K10 (docs/papers/npfl_rl.md#k10), since :math:`\lambda_{\min}(A) = \lambda_{\min}(H_k) + c_k + \omega_k a` and
        :math:`H_k` is singular when :math:`D_k < d`).
    ill_posed : (R,)
        Number of (iteration, client, evaluation) triples with :math:`\lambda_{\min}(A) \le 0`.
    tau_steps : (R, N+1, K)
        :math:`|\tau^{(n)} - \tau^{(n-1)}|` before projection summed over the inner steps
        (K7, docs/papers/npfl_rl.md#k7), 0 at n = 0, 1.
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
        """Run-averaged (linear domain) printed Test MSE in dB, n = 0..N (K11 (docs/papers/npfl_rl.md#k11)
        in docs/papers/npfl_rl.md)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return 10.0 * np.log10(np.mean(self.test_mse, axis=0))


def test_mse(problem: NPFLProblem, w, *, squared: bool = False) -> np.ndarray:
    r"""Test MSE (6.15): :math:`\frac1K\sum_k\|w_k - w_{(q_k)}\|^2/\|w_{(q_k)}\|` (``squared``:
    :math:`\|w_{(q)}\|^2`, erratum D9 (docs/papers/npfl_rl.md#erratum-d9)).

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


@one_blas_thread
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
    S = build_structure(problems, config)
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
    # SAC evaluates the primal map in the eigenbasis of H_k (reference_impl.npfl_rl.eigen): each state is carried
    # there once (beta, mu) and its two candidates per inner step cost one pass over U^T H_v U.
    # DPG keeps the direct products: its clipped gradient steps amplify rounding, so only a bit-identical reuse is
    # made (with literal timing the first inner step's P(tau^(n-1)) on the cached map is w^(n-1) itself).
    sac = config.policy == "sac"
    V = eigen_validation(S) if sac else None
    # Fixed tau: the shifted inverse of (6.11) is formed once, so an iteration makes one product per client.
    inverse = shifted_inverse(S, tau) if config.policy == "fixed" else None
    w_prev = w
    nb_in = graph_product(S.A_in, w)  # sum over l in N_k cap C_q of w_l; the dual update's product is reused
    for n in range(1, N + 1):
        with np.errstate(over="ignore", invalid="ignore"):
            m = graph_product(S.B, w)
            s = 0.5 * config.rho * (S.deg_in[..., None] * w + nb_in) - 0.5 * gamma
            E = eigen_state(S, m, s) if sac else None
            if config.policy != "fixed" and n > 1:
                literal = config.timing == "literal"
                mm, ss, EE = prev_map if literal else (m, s, E)
                t = tau
                total = np.zeros((R, K))
                for epoch in range(config.epochs):
                    if config.policy == "dpg":
                        note(t)
                        dt = dpg_step(S, mm, ss, t, config.delta, P=w if literal and epoch == 0 else None)
                    else:
                        if per_run:  # replicate r's draws depend on its own generator only
                            alpha = np.stack([g.uniform(-config.nu / 2.0, config.nu / 2.0, size=K) for g in rng])
                        else:
                            alpha = rng.uniform(-config.nu / 2.0, config.nu / 2.0, size=(R, K))
                        a = np.clip(t + alpha, lo, hi) if config.clip_candidates else t + alpha
                        note(a)
                        note(t)
                        dt = sac_step(S, V, EE, t, a - t, config.delta)
                    max_inner = max(max_inner, float(np.nanmax(np.abs(dt))) if np.any(np.isfinite(dt)) else np.inf)
                    total += np.abs(dt)
                    t = np.clip(t + dt, lo, hi)
                tau = t
                steps[:, n] = total
            prev_map = (None, None, E) if sac else (m, s, None)  # what the next controller step reads
            note(tau)
            if sac:
                w_new = from_eigen(S, eigen_primal(S, E, tau))
            elif inverse is not None:
                w_new = (inverse @ (S.b + tau[..., None] * m + s)[..., None])[..., 0]
            else:
                w_new = primal_at(S, m, s, tau)
            nb_in = graph_product(S.A_in, w_new)
            gamma = gamma + sign * config.rho * (S.deg_in[..., None] * w_new - nb_in)
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
