r"""zCDP-NFL: private peer-to-peer linearised ADMM, vectorised over agents and Monte-Carlo runs.

Reference implementation of P2 Algorithm 1 (docs/papers/zcdp_nfl.md) on any connected undirected graph.
Every agent advances as a row of arrays of shape ``(runs, K, P)``; neighbour sums are one product with the sparse
adjacency (:func:`reference_impl.zcdp_nfl.problem.graph_product`), so an iteration costs time linear in the agents
and edges and has no Python loop over agents.
Round :math:`n = 1, \dots, T` of every agent :math:`k`:

.. math::

    g_k^{(n)} &= \frac{1}{M}\sum_j \ell'(x_{k,j}, y_{k,j}; \tilde w_k^{(n-1)})
                 + \frac{\lambda}{K}R'(\tilde w_k^{(n-1)}) \\
    w_k^{(n)} &= \frac{\tilde w_k^{(n-1)}/\eta^{(n)}
                 + \rho\sum_{l\in\mathcal N_k}(\tilde w_k^{(n-1)} + \tilde w_l^{(n-1)})
                 - \gamma_k^{(n-1)} - g_k^{(n)}}{1/\eta^{(n)} + 2\rho d_k} \\
    \tilde w_k^{(n)} &= w_k^{(n)} + \xi_k^{(n)}, \qquad \xi_k^{(n)} \sim \mathcal N(0, \sigma_k^2(n) I_P) \\
    \gamma_k^{(n)} &= \gamma_k^{(n-1)} + \rho\sum_{l\in\mathcal N_k}(\tilde w_k^{(n)} - \tilde w_l^{(n)})

with :math:`w^{(0)} = \tilde w^{(0)} = \gamma^{(0)} = 0`. Only equal sample counts :math:`M_k = M` are
supported (the paper's experiments use :math:`M_k = 50`).

References
----------
.. [1] seed 004_180cd372987d137b.txt, Publication 2, Algorithm 1, eqs. (5)-(9), lines 1983-2006;
   thesis Chapter 3, eqs. (3.6)-(3.10), lines 545-575.
.. [2] docs/papers/zcdp_nfl.md (the closed form of step 2; P2's (A.1) needs the same correction).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from reference_impl.cost import RunCost
from reference_impl.zcdp_nfl.problem import NFLProblem, graph_product, normalized_error
from reference_impl.zcdp_nfl.schedules import NFLConfig
from theory._validate import positive_int, readonly

__all__ = ["NFLRun", "RunCost", "estimate_run_cost", "nfl_round", "run_arm", "run_zcdp_nfl", "shared_noise_ne_curves",
           "zcdp_nfl_primal_update"]


def _finite_array(name: str, value, ndim_min: int) -> np.ndarray:
    x = np.asarray(value, dtype=np.float64)
    if x.ndim < ndim_min:
        raise ValueError(f"{name} must have at least {ndim_min} dimensions (clients as rows), got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite, got non-finite entries in an array of shape {x.shape}")
    return x


def _primal_step(w_tilde, neighbour_sum, gamma, g, inv_eta, degree, rho):
    """Closed form of P2 (7) (no validation): every array broadcasts over (..., K, P)."""
    numerator = w_tilde * inv_eta + rho * (degree * w_tilde + neighbour_sum) - gamma - g
    return numerator / (inv_eta + 2.0 * rho * degree)


def zcdp_nfl_primal_update(
    w_tilde,
    neighbour_sum,
    gamma,
    X,
    y,
    loss_subgradient: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    rho,
    eta,
    degree,
    *,
    regularizer_subgradient: Callable[[np.ndarray], np.ndarray] | None = None,
) -> np.ndarray:
    r"""Closed-form primal update :math:`w_k^{(n)}` of every client (P2 (7)), clients as rows.

    .. math::

        w_k^{(n)} = \frac{\tilde w_k/\eta_k + \rho\,(d_k\tilde w_k + \sum_{l\in\mathcal N_k}\tilde w_l)
                          - \gamma_k - g_k}{1/\eta_k + 2\rho d_k}

    Parameters
    ----------
    w_tilde : array_like, shape (..., K, P)
        Released perturbed iterates :math:`\tilde w_k^{(n-1)}`. Leading axes are batch axes.
    neighbour_sum : array_like, shape (..., K, P)
        :math:`\sum_{l\in\mathcal N_k}\tilde w_l^{(n-1)}` (adjacency times ``w_tilde``): released.
    gamma : array_like, shape (..., K, P)
        Dual variables :math:`\gamma_k^{(n-1)}` (functions of released messages).
    X : array_like, shape (..., K, M, P)
        Features :math:`x_{k,j}` of the :math:`M` samples of every client.
    y : array_like, shape (..., K, M)
        Labels :math:`y_{k,j}`.
    loss_subgradient : callable
        ``loss_subgradient(X, y, w)`` with ``w`` of shape (..., K, P) returns the per-sample
        subgradients :math:`\ell'(x_{k,j}, y_{k,j}; w_k)`, shape (..., K, M, P).
    rho : float
        ADMM penalty :math:`\rho > 0`.
    eta : float or array_like, shape (..., K)
        Step sizes :math:`\eta_k^{(n)} > 0` of this round (finite).
    degree : array_like of int, shape (K,)
        Degrees :math:`d_k = |\mathcal N_k| \ge 0` (consistent with ``neighbour_sum``).
    regularizer_subgradient : callable, optional
        ``regularizer_subgradient(w)`` returns :math:`(\lambda/K) R'(w_k)`, shape (..., K, P); it is
        data independent. Default: no regulariser.

    Returns
    -------
    numpy.ndarray, shape (..., K, P)
        :math:`w^{(n)}`.

    Raises
    ------
    ValueError
        If a parameter is out of range or the shapes disagree.

    Notes
    -----
    Pure and deterministic. The subgradient is evaluated at the client's own *perturbed* iterate
    (Algorithm 1, step 1), so given the released history the update is affine in the data term
    :math:`g_k`, with slope :math:`-1/(1/\eta_k + 2\rho d_k)`: that is Lemma I. :func:`run_zcdp_nfl`
    uses the same closed form.

    References
    ----------
    .. [1] seed 004_180cd372987d137b.txt, Publication 2, eq. (7), Algorithm 1, lines 2002-2006;
       closed form: docs/papers/zcdp_nfl.md (step 2; P2's (A.1) needs the same correction).

    Examples
    --------
    The update is the stationary point of the objective of (7): its gradient vanishes there.

    >>> rng = np.random.default_rng(0)
    >>> wt, nb, ga = rng.normal(size=(3, 4, 2))
    >>> X, y = rng.normal(size=(4, 5, 2)), rng.normal(size=(4, 5))
    >>> lad = lambda X, y, w: np.sign(np.einsum("...mp,...p->...m", X, w) - y)[..., None] * X
    >>> deg = np.array([1, 2, 2, 1])
    >>> w = zcdp_nfl_primal_update(wt, nb, ga, X, y, lad, 0.5, 0.1, deg)
    >>> g = lad(X, y, wt).mean(axis=-2)
    >>> grad = g + (w - wt) / 0.1 + ga + 0.5 * (2 * deg[:, None] * w - deg[:, None] * wt - nb)
    >>> bool(np.max(np.abs(grad)) < 1e-12)
    True
    """
    w_tilde = _finite_array("w_tilde", w_tilde, 2)
    neighbour_sum = _finite_array("neighbour_sum", neighbour_sum, 2)
    gamma = _finite_array("gamma", gamma, 2)
    X = _finite_array("X", X, 3)
    y = _finite_array("y", y, 2)
    if neighbour_sum.shape != w_tilde.shape or gamma.shape != w_tilde.shape:
        raise ValueError(f"w_tilde, neighbour_sum and gamma must have one shape (..., K, P), got "
                         f"{w_tilde.shape}, {neighbour_sum.shape}, {gamma.shape}")
    if X.shape[:-2] != w_tilde.shape[:-1] or X.shape[-1] != w_tilde.shape[-1]:
        raise ValueError(f"X must have shape (..., K, M, P) matching w_tilde {w_tilde.shape}, got {X.shape}")
    if y.shape != X.shape[:-1]:
        raise ValueError(f"y must have shape {X.shape[:-1]} (..., K, M), got {y.shape}")
    if X.shape[-2] < 1:
        raise ValueError(f"every client needs M >= 1 samples, got M = {X.shape[-2]}")
    if isinstance(rho, bool) or not isinstance(rho, numbers.Real) or not (0.0 < float(rho) < np.inf):
        raise ValueError(f"rho must be a finite real in (0, inf), got {rho!r}")
    eta = np.asarray(eta, dtype=np.float64)
    if not np.all(np.isfinite(eta) & (eta > 0.0)):
        raise ValueError(f"eta must be finite reals in (0, inf), got {eta!r}")
    try:
        eta_k = np.broadcast_to(eta, w_tilde.shape[:-1])
    except ValueError as exc:
        raise ValueError(f"eta must broadcast to (..., K) = {w_tilde.shape[:-1]}, got shape {eta.shape}") from exc
    degree = np.asarray(degree)
    if degree.shape != (w_tilde.shape[-2],) or not np.issubdtype(degree.dtype, np.integer) or np.any(degree < 0):
        raise ValueError(f"degree must be non-negative integers of shape (K,) = ({w_tilde.shape[-2]},), got {degree!r}")
    rho = float(rho)

    per_sample = np.asarray(loss_subgradient(X, y, w_tilde), dtype=np.float64)
    if per_sample.shape != X.shape:
        raise ValueError(f"loss_subgradient must return shape {X.shape} (..., K, M, P), got {per_sample.shape}")
    g = per_sample.mean(axis=-2)
    if regularizer_subgradient is not None:
        reg = np.asarray(regularizer_subgradient(w_tilde), dtype=np.float64)
        if reg.shape != w_tilde.shape:
            raise ValueError(f"regularizer_subgradient must return shape {w_tilde.shape}, got {reg.shape}")
        g = g + reg
    return _primal_step(w_tilde, neighbour_sum, gamma, g, (1.0 / eta_k)[..., None],
                        degree.astype(np.float64)[:, None], rho)




@dataclass(frozen=True, kw_only=True)
class NFLRun:
    r"""Output of :func:`run_zcdp_nfl`.

    ``w``, ``w_tilde``, ``gamma``: final iterates (runs, K, P); ``w_hat``:
    :math:`\hat w^{(T)} = \frac1T\sum_{n=1}^T\tilde w^{(n)}`; ``ne``: :math:`NE(n)`, n = 0..T, shape (runs, T + 1)
    (None without ``w_c``); ``etas``: :math:`\eta^{(1..T)}`;
    ``variances``/``budgets``: :math:`\sigma_k^2(n)`, :math:`\phi_k^{(n)}` (T, K); ``total_zcdp``:
    :math:`\max_k\sum_n\phi_k^{(n)}` (inf without noise); ``epsilon``: Bun-Steinke
    :math:`\Phi + 2\sqrt{\Phi\log(1/\delta)}` (inf when the total is not finite); ``privacy_status``: ``"accounted"``,
    ``"no noise: ..."`` or why the total is not finite (a per-round budget or their sum leaves the double range: no
    finite guarantee, ``epsilon = inf``); ``privacy_certified``: whether the calibration's ``c1`` bounds the
    problem's per-sample subgradients; ``trajectory``: with ``keep_trajectory``, a dict of arrays
    ``w``, ``w_tilde``, ``gamma``, ``xi`` of shape (runs, T + 1, K, P) (index n = iteration n); ``diverged``:
    whether an iterate became non-finite (the run stops there and fills the rest with nan).
    """

    w: np.ndarray
    w_tilde: np.ndarray
    gamma: np.ndarray
    w_hat: np.ndarray
    ne: np.ndarray | None
    etas: np.ndarray
    variances: np.ndarray
    budgets: np.ndarray
    total_zcdp: float
    epsilon: float
    privacy_certified: bool
    diverged: bool
    trajectory: dict | None = None
    privacy_status: str = "accounted"


def estimate_run_cost(K: int, M: int, P: int, n_edges: int, *, iterations: int, runs: int = 1,
                      keep_trajectory: bool = False, clip: bool = False) -> RunCost:
    r"""Upper estimate of :func:`run_zcdp_nfl`'s work and memory (and the instance's arrays) before anything is drawn.

    Per round and run: the data term :math:`2KMP` (two batched products) and :math:`8KM`, the two neighbour sums
    :math:`4|E|P` (the sparse adjacency stores each edge twice), :math:`40KP` elementwise; with ``clip`` the
    per-sample subgradients, :math:`8KMP` and as many elements. Memory: the instance (:math:`X` and its transpose,
    :math:`y`, the adjacency), the schedules :math:`T \times K` (variances, budgets, noise scales and their
    temporaries), the state and a round's temporaries (runs x K x P, runs x K x M), the error curve, and with
    ``keep_trajectory`` :math:`4\,\text{runs}\,(T + 1)KP`. Everything is linear in K, M, P and the edges.

    Parameters
    ----------
    K, M, P : int
        Agents (>= 2), samples per agent, features (>= 1).
    n_edges : int
        Undirected edges, in [K - 1, K(K - 1)/2] (the graph is connected).
    iterations, runs : int
        :math:`T` and the Monte-Carlo runs (>= 1).
    keep_trajectory, clip : bool
        As in :func:`run_zcdp_nfl` and :class:`~reference_impl.zcdp_nfl.problem.NFLProblem` (``clip`` not None).

    Returns
    -------
    RunCost

    Examples
    --------
    >>> small = estimate_run_cost(1_000, 50, 8, 1_500, iterations=100)
    >>> large = estimate_run_cost(10_000, 50, 8, 15_000, iterations=100)
    >>> bool(large.work <= 10 * small.work and large.peak_elements <= 10 * small.peak_elements)
    True
    """
    K, M, P = positive_int("K", K, 2), positive_int("M", M), positive_int("P", P)
    n_edges = positive_int("n_edges", n_edges, K - 1)
    if n_edges > K * (K - 1) // 2:
        raise ValueError(f"n_edges must be an integer in [K - 1, K(K - 1)/2] = [{K - 1}, {K * (K - 1) // 2}], got "
                         f"{n_edges!r}")
    T, runs = positive_int("iterations", iterations), positive_int("runs", runs)
    per_round = 2.0 * K * M * P + 8.0 * K * M + 4.0 * n_edges * P + 40.0 * K * P + (8.0 * K * M * P if clip else 0.0)
    work = T * runs * per_round + 12.0 * T * K
    instance = 2 * K * M * P + K * M + 2 * n_edges + K + 1 + P * P * K
    schedules = 8 * T * K + 2 * T
    state = runs * (16 * K * P + 4 * K * M + (2 * K * M * P if clip else 0) + 2 * (T + 1))
    trajectory = 4 * runs * (T + 1) * K * P if keep_trajectory else 0
    return RunCost(work=float(work), peak_elements=int(instance + schedules + state + trajectory))


def run_zcdp_nfl(problem: NFLProblem, config: NFLConfig, iterations: int, rng: np.random.Generator, *,
                 runs: int = 1, w_c=None, keep_trajectory: bool = False,
                 divergence_threshold: float = 1e150) -> NFLRun:
    r"""Run P2 Algorithm 1 for ``iterations`` rounds, ``runs`` Monte-Carlo runs at once.

    Parameters
    ----------
    problem, config
        The instance and the parameters.
    iterations : int
        :math:`T \ge 1` (the iteration cap; the algorithm has no stopping rule).
    rng : numpy.random.Generator
        Source of the privacy noise (drawn as one (runs, K, P) block per round).
    runs : int
        Monte-Carlo runs (leading axis).
    w_c : array_like, shape (P,), optional
        Centralised optimum for the error curve :math:`NE(n)`.
    keep_trajectory : bool
        Keep every iterate (memory runs x (T + 1) x K x P x 4 doubles).
    divergence_threshold : float
        An iterate with an entry above this magnitude counts as diverged; the run stops and reports it.

    Notes
    -----
    Vectorised: each round is a handful of array operations on (runs, K, P) blocks and two products with
    the sparse adjacency (time linear in K and the edges); no Python loop over agents. The privacy accounting
    (``budgets``, ``total_zcdp``, ``epsilon``) is that of Theorem I composed over rounds (P2 App. C, zCDP composition),
    converted with Bun & Steinke 2016, Prop. 1.3. The total is known before the first round (it depends on the
    schedules only); a total that is not finite is reported as ``epsilon = inf`` with ``privacy_status`` saying why,
    never as an error after the run.
    """
    iterations, runs = positive_int("iterations", iterations), positive_int("runs", runs)
    K, P, T, rho = problem.K, problem.P, iterations, config.rho
    etas = config.step.etas(T)
    variances = config.privacy.variances(problem, rho, etas)
    budgets = config.privacy.budgets(problem, rho, etas)
    sigma = np.sqrt(variances)
    noisy = config.privacy.kind != "none"
    total, epsilon, privacy_status = _accounted_total(budgets, config.privacy.delta, noisy)
    A = problem.adjacency.astype(np.float64)  # sparse, converted once
    d = problem.degree.astype(np.float64)[:, None]
    if w_c is not None:
        w_c = np.asarray(w_c, dtype=np.float64)
        if w_c.shape != (P,):
            raise ValueError(f"w_c must have shape (P,) = ({P},), got {w_c.shape}")
    w = np.zeros((runs, K, P))
    w_tilde = np.zeros((runs, K, P))
    gamma = np.zeros((runs, K, P))
    w_sum = np.zeros((runs, K, P))
    ne = None
    if w_c is not None:
        ne = np.full((runs, T + 1), np.nan)
        ne[:, 0] = normalized_error(problem, w, w_c)
    traj = None
    if keep_trajectory:
        traj = {name: np.zeros((runs, T + 1, K, P)) for name in ("w", "w_tilde", "gamma", "xi")}
    diverged = False
    for n in range(1, T + 1):
        w, w_tilde, gamma, xi = nfl_round(problem, rho, etas[n - 1], sigma[n - 1] if noisy else None, w_tilde, gamma,
                                          rng, _matrices=(A, d))
        w_sum += w_tilde
        if ne is not None:
            ne[:, n] = normalized_error(problem, w, w_c)
        if traj is not None:
            traj["w"][:, n], traj["w_tilde"][:, n], traj["gamma"][:, n] = w, w_tilde, gamma
            traj["xi"][:, n] = xi
        if not np.all(np.abs(w_tilde) < divergence_threshold):
            diverged = True
            break
    bound = problem.gradient_bound
    # rows normalised to ||x|| = 1 carry a few ulps of rounding: allow 8 eps relative
    certified = bool(noisy and bound is not None and bound <= config.privacy.c1 * (1.0 + 8.0 * np.finfo(float).eps))
    return NFLRun(w=w, w_tilde=w_tilde, gamma=gamma, w_hat=w_sum / n, ne=ne, etas=readonly(etas, np.float64),
                  variances=readonly(variances, np.float64), budgets=readonly(budgets, np.float64),
                  total_zcdp=total, epsilon=epsilon, privacy_status=privacy_status,
                  privacy_certified=certified, diverged=diverged, trajectory=traj)


def _accounted_total(budgets: np.ndarray, delta: float, noisy: bool) -> tuple[float, float, str]:
    r"""``(total, epsilon, status)``: :math:`\max_k\sum_n\phi_k^{(n)}` and its Bun-Steinke epsilon at ``delta``;
    without noise ``(inf, inf, "no noise: ...")``; a total that is not finite (a budget or the sum overflows) gives
    ``epsilon = inf`` and a status saying so instead of an error after the run."""
    from theory.privacy.conversions import zcdp_to_approx_dp_bun_steinke

    if not noisy:
        return math.inf, math.inf, "no noise: no privacy guarantee"
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(np.max(budgets.sum(axis=0)))
    if not math.isfinite(total):
        return total, math.inf, (f"total zCDP = {total!r}: a per-round budget or their sum leaves the double range, "
                                 f"so no finite (epsilon, delta) guarantee (epsilon = inf)")
    return total, float(zcdp_to_approx_dp_bun_steinke(total, delta)), "accounted"


def nfl_round(problem: NFLProblem, rho: float, eta: float, sigma, w_tilde, gamma, rng: np.random.Generator, *,
              _matrices=None):
    r"""One synchronous round (steps 1-6 of Algorithm 1) of every agent and run: arrays (runs, K, P).

    ``sigma`` is :math:`\sigma_k(n)`, shape (K,), or None for no noise. Returns
    :math:`(w^{(n)}, \tilde w^{(n)}, \gamma^{(n)}, \xi^{(n)})`. No validation (the inner loop of
    :func:`run_zcdp_nfl`; public for benchmarks).
    """
    A, d = _matrices if _matrices is not None else (problem.adjacency.astype(np.float64),
                                                    problem.degree.astype(np.float64)[:, None])
    g = problem.subgradients(w_tilde)
    w = _primal_step(w_tilde, graph_product(A, w_tilde), gamma, g, 1.0 / eta, d, rho)
    xi = sigma[None, :, None] * rng.normal(size=w.shape) if sigma is not None else np.zeros_like(w)
    w_tilde = w + xi
    gamma = gamma + rho * (d * w_tilde - graph_product(A, w_tilde))
    return w, w_tilde, gamma, xi


def shared_noise_ne_curves(problem: NFLProblem, configs, iterations: int, rng: np.random.Generator,
                           w_c, *, divergence_threshold: float = 1e150) -> tuple[np.ndarray, np.ndarray]:
    r"""Error curves of P2 Algorithm 1 under several privacy schedules on ONE noise stream (common random numbers).

    ``configs`` share :math:`\rho` and the step schedule and differ in their (noisy) privacy schedule only, e.g. the
    budgets :math:`\phi^{(1)}` of a privacy-accuracy trade-off. Each round draws one standard-normal (1, K, P) block
    from ``rng`` and scales it by every schedule's :math:`\sigma_k(n)`, so row i is exactly ``run_zcdp_nfl(problem,
    configs[i], iterations, g, w_c=w_c).ne[0]`` for ``g`` a generator in ``rng``'s state (the same operations on a
    leading axis of schedules, one set of array operations per round for all of them).

    Returns ``(ne, diverged)``: NE(n), n = 0..T, shape (len(configs), T + 1) (a diverged run is NaN after the round it
    diverged in, as that run stops there), and which runs diverged, shape (len(configs),).
    """
    iterations = positive_int("iterations", iterations)
    configs = list(configs)
    if not configs:
        raise ValueError("configs must hold at least one NFLConfig, got none")
    first = configs[0]
    for index, config in enumerate(configs):
        if config.rho != first.rho or config.step != first.step:
            raise ValueError(f"configs[{index}] must have configs[0]'s rho and step (only the privacy schedule may "
                             f"differ), got rho = {config.rho!r}, step = {config.step!r}")
        if config.privacy.kind == "none":
            raise ValueError(f"configs[{index}].privacy must be noisy (kind 'S1' or 'S2'), got 'none'")
    K, P, T, rho = problem.K, problem.P, iterations, first.rho
    w_c = np.asarray(w_c, dtype=np.float64)
    if w_c.shape != (P,):
        raise ValueError(f"w_c must have shape (P,) = ({P},), got {w_c.shape}")
    etas = first.step.etas(T)
    sigma = np.stack([np.sqrt(c.privacy.variances(problem, rho, etas)) for c in configs], axis=1)  # (T, R, K)
    A = problem.adjacency.astype(np.float64)
    d = problem.degree.astype(np.float64)[:, None]
    R = len(configs)
    w_tilde, gamma = np.zeros((R, K, P)), np.zeros((R, K, P))
    ne = np.full((R, T + 1), np.nan)
    ne[:, 0] = normalized_error(problem, w_tilde, w_c)
    running = np.ones(R, dtype=bool)
    with np.errstate(over="ignore", invalid="ignore"):  # a diverging run's row only; it is NaN from then on
        for n in range(1, T + 1):  # nfl_round, the noise shared by the runs
            g = problem.subgradients(w_tilde)
            w = _primal_step(w_tilde, graph_product(A, w_tilde), gamma, g, 1.0 / etas[n - 1], d, rho)
            xi = sigma[n - 1][:, :, None] * rng.normal(size=(1, K, P))
            w_tilde = w + xi
            gamma = gamma + rho * (d * w_tilde - graph_product(A, w_tilde))
            ne[running, n] = normalized_error(problem, w, w_c)[running]
            running &= np.all(np.abs(w_tilde) < divergence_threshold, axis=(-2, -1))
    return ne, ~running


def run_arm(problem: NFLProblem, config: NFLConfig, iterations: int, seed: int, w_c) -> np.ndarray:
    r"""One arm on one replicate seed: the error curve :math:`NE(n)`, n = 0..T, shape (T + 1,).

    The building block for paired-arm comparisons (the experiments of P2 Section 5): the noise is drawn from
    ``numpy.random.default_rng(seed)``, so two arms run with the same seed share their draws where their
    shapes agree (common random numbers).
    """
    seed = positive_int("seed", seed, 0)
    run = run_zcdp_nfl(problem, config, iterations, np.random.default_rng(seed), runs=1, w_c=w_c)
    return run.ne[0]
