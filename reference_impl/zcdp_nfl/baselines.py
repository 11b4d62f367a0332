r"""The baselines of zCDP-NFL's experiments, as RECONSTRUCTED (docs/papers/zcdp_nfl.md, the baselines).

The seed names the three compared methods but gives none of their update or noise rules, so every one
here is a reconstruction, not the original algorithm (reports must say so):

* **(ε,δ)DP-NFL** (:func:`run_eps_delta_dp_nfl`): "identical to zCDP-NFL except ... conventional (ε, δ)-DP
  rules": the steps of P2 Algorithm 1 with the classical Gaussian calibration
  :math:`\sigma_k(n) = \Delta_k(n)\sqrt{2\log(1.25/\delta_n)}/\varepsilon_n` (valid for :math:`\varepsilon_n < 1`),
  the dynamic split :math:`\varepsilon_n \propto \tau^{-(n-1)/2}` (the variance decays by :math:`\tau` per round,
  like S2) or the constant split, composed to :math:`(\varepsilon, \delta)` by one of the two conventional
  composition theorems (:class:`EpsDeltaBudget`): basic, :math:`\sum_n\varepsilon_n = \varepsilon`,
  :math:`\delta_n = \delta/T`; or advanced (heterogeneous form),
  :math:`\sqrt{2\log(1/\delta')\sum_n\varepsilon_n^2} + \sum_n\varepsilon_n(e^{\varepsilon_n} - 1) =
  \varepsilon` with :math:`\delta' = \delta/2`, :math:`\delta_n = \delta/(2T)`; or by the moments accountant of
  the DP-ADMM the thesis cites as its example of dynamic (ε,δ)-DP (Huang et al. 2019; Abadi et al. 2016): the
  rounds' Rényi divergences add up and convert to :math:`(\varepsilon, \delta)` (Mironov 2017, Prop. 3), which for
  the unsampled Gaussian mechanism is Bun and Steinke's :math:`\rho + 2\sqrt{\rho\log(1/\delta)}`; with the
  dynamic split that is zCDP-NFL's own noise. The paper defines the algorithm but not these choices; the experiments
  decide over all three.
* **zCDP-grad-NFL** (:func:`run_zcdp_grad_nfl`): the distributed subgradient method of Nedić & Ozdaglar (2009)
  with Metropolis weights, perturbed like zCDP-NFL: :math:`\Delta_k = 2c_1\mu/M`, S2 noise.
  :func:`matched_gradient_step` tunes its constant step to zCDP-NFL's initial speed ("tuned to observe
  identical initial convergence speeds when possible").
* **P-ADMM-like** (:func:`run_p_admm`): "P-ADMM behaves like a fixed-step variant": zCDP-NFL's steps with a
  constant :math:`\eta` and the same noise schedule (the original, Ding et al. 2019, is not in the seed).

Arrays are (runs, K, P) as in :mod:`reference_impl.zcdp_nfl.algorithm`; the noise is one standard-normal
(runs, K, P) block per round from the caller's generator, in the same order as :func:`run_zcdp_nfl`, so runs
with one seed share their draws (common random numbers).

References
----------
.. [1] seed 004_180cd372987d137b.txt, thesis Section 3.4, lines 744-781; Publication 2 Section 5, lines 2205-2232.
.. [2] docs/papers/zcdp_nfl.md (the reconstructions and the experiment set-up).
.. [3] A. Nedić, A. Ozdaglar, "Distributed subgradient methods for multi-agent optimization", IEEE TAC 2009.
.. [4] C. Dwork, A. Roth, "The algorithmic foundations of differential privacy", 2014, Thm. A.1 (Gaussian
   mechanism), Thm. 3.16 (basic composition) and Thm. 3.20 (advanced composition; its proof, Azuma's inequality
   on the privacy-loss martingale with increments in :math:`[-\varepsilon_n, \varepsilon_n]` and means at most
   :math:`\varepsilon_n(e^{\varepsilon_n} - 1)`, gives the heterogeneous form used here).
.. [5] Z. Huang, R. Hu, Y. Guo, E. Chan-Tin, Y. Gong, "DP-ADMM: ADMM-based distributed learning with differential
   privacy", IEEE TIFS 2019 (the thesis's example of dynamic (ε,δ)-DP; it bounds the privacy loss with the moments
   accountant); M. Abadi et al., "Deep learning with differential privacy", CCS 2016; I. Mironov, "Rényi
   differential privacy", CSF 2017, Prop. 3.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from reference_impl.zcdp_nfl.algorithm import NFLRun, nfl_round, run_zcdp_nfl
from reference_impl.zcdp_nfl.problem import NFLProblem, as_sparse_adjacency, graph_product, normalized_error
from reference_impl.zcdp_nfl.schedules import NFLConfig, PrivacySchedule, StepSchedule
from theory._validate import positive_int, readonly, real_scalar

__all__ = ["BASELINES", "EPS_DELTA_COMPOSITIONS", "EPS_DELTA_SPLITS", "BaselineRun", "EpsDeltaBudget",
           "accounted_privacy", "advanced_composition_epsilon", "matched_gradient_step", "metropolis_weights",
           "noise_free_grad_curves", "p_admm_config", "run_eps_delta_dp_nfl", "run_p_admm", "run_zcdp_grad_nfl"]

BASELINES = ("eps_delta_dp_nfl", "zcdp_grad_nfl", "p_admm")
EPS_DELTA_SPLITS = ("dynamic", "constant")
EPS_DELTA_COMPOSITIONS = ("basic", "advanced", "moments")


def advanced_composition_epsilon(eps_n, delta_prime: float) -> float:
    r"""Total :math:`\varepsilon` of the rounds' :math:`\varepsilon_n` by advanced composition (heterogeneous form):
    :math:`\sqrt{2\log(1/\delta')\sum_n\varepsilon_n^2} + \sum_n\varepsilon_n(e^{\varepsilon_n} - 1)`, at the
    extra :math:`\delta'` (Dwork & Roth 2014, Thm. 3.20 and its proof)."""
    eps_n = np.asarray(eps_n, dtype=np.float64)
    delta_prime = real_scalar("delta_prime", delta_prime, "(0, 1)")
    if eps_n.ndim != 1 or eps_n.size == 0 or not np.all(np.isfinite(eps_n)) or np.any(eps_n < 0):
        raise ValueError("eps_n must be a non-empty 1-D array of finite reals >= 0")
    return float(math.sqrt(2.0 * math.log(1.0 / delta_prime) * np.sum(eps_n**2)) + np.sum(eps_n * np.expm1(eps_n)))


def accounted_privacy(problem: NFLProblem, config: NFLConfig, iterations: int) -> tuple[float, float]:
    r"""zCDP-NFL's accounted total :math:`(\Phi, \varepsilon)` after ``iterations`` rounds (as :func:`run_zcdp_nfl`).

    :math:`\Phi = \max_k\sum_n\phi_k^{(n)}` (Theorem I, composition) and Bun-Steinke
    :math:`\varepsilon = \Phi + 2\sqrt{\Phi\log(1/\delta)}`; ``(inf, inf)`` without noise.
    """
    from theory.privacy.conversions import zcdp_to_approx_dp_bun_steinke

    iterations = positive_int("iterations", iterations)
    if config.privacy.kind == "none":
        return math.inf, math.inf
    etas = config.step.etas(iterations)
    total = float(np.max(config.privacy.budgets(problem, config.rho, etas).sum(axis=0)))
    return total, float(zcdp_to_approx_dp_bun_steinke(total, config.privacy.delta))


@dataclass(frozen=True, kw_only=True)
class EpsDeltaBudget:
    r"""(ε,δ)DP-NFL's per-round budgets, composed to :math:`(\varepsilon, \delta)`.

    .. math::

        \varepsilon_n = c\,w_n, \quad w_n = \tau^{-(n-1)/2} \ \text{(dynamic)} \quad\text{or}\quad 1 \
        \text{(constant)}, \qquad
        \sigma_k^2(n) = \Delta_k(n)^2\,\frac{2\log(1.25/\delta_n)}{\varepsilon_n^2},

    with :math:`c` such that basic composition (:math:`\sum_n \varepsilon_n = \varepsilon`,
    :math:`\delta_n = \delta/T`) or advanced composition (:func:`advanced_composition_epsilon` at
    :math:`\delta' = \delta/2` equals :math:`\varepsilon`, :math:`\delta_n = \delta/(2T)`) gives the total. With
    the moments accountant (``composition="moments"``) the rounds' zCDP/Rényi budgets
    :math:`\rho_n = \rho\,w_n^2/\sum_m w_m^2` add up to the :math:`\rho` whose conversion
    :math:`\rho + 2\sqrt{\rho\log(1/\delta)}` is :math:`\varepsilon`, and
    :math:`\sigma_k^2(n) = \Delta_k(n)^2/(2\rho_n)` (:meth:`per_round_rho`).

    with Lemma I's :math:`\Delta_k(n) = 2c_1/(M(2\rho d_k + 1/\eta^{(n)}))`. The classical Gaussian mechanism
    needs :math:`\varepsilon_n < 1`; :meth:`variances` refuses a budget that violates it.

    Attributes
    ----------
    epsilon, delta : float
        Total :math:`\varepsilon > 0`, :math:`\delta \in (0, 1)` (the experiments use zCDP-NFL's accounted value).
    split : {"dynamic", "constant"}
    composition : {"basic", "advanced", "moments"}
    tau : float
        :math:`\tau \in (0, 1]` of the dynamic split.
    c1 : float
        Per-sample subgradient bound of the calibration.
    """

    epsilon: float
    delta: float = 1e-5
    split: str = "dynamic"
    composition: str = "basic"
    tau: float = 0.99
    c1: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", real_scalar("epsilon", self.epsilon, "(0, inf)"))
        object.__setattr__(self, "delta", real_scalar("delta", self.delta, "(0, 1)"))
        if self.split not in EPS_DELTA_SPLITS:
            raise ValueError(f"split must be one of {EPS_DELTA_SPLITS}, got {self.split!r}")
        if self.composition not in EPS_DELTA_COMPOSITIONS:
            raise ValueError(f"composition must be one of {EPS_DELTA_COMPOSITIONS}, got {self.composition!r}")
        object.__setattr__(self, "tau", real_scalar("tau", self.tau, "(0, 1]"))
        object.__setattr__(self, "c1", real_scalar("c1", self.c1, "(0, inf)"))

    def per_round(self, iterations: int) -> tuple[np.ndarray, np.ndarray]:
        r""":math:`(\varepsilon_n, \delta_n)`, :math:`n = 1..T`, each of shape (T,); they compose to
        :math:`(\varepsilon, \delta)` by the budget's composition theorem (advanced: to relative accuracy 1e-12,
        never above :math:`\varepsilon`)."""
        if self.composition == "moments":
            raise ValueError("composition = 'moments' accounts the rounds' Renyi (zCDP) budgets, not per-round "
                             "(epsilon_n, delta_n): use per_round_rho")
        weights = self._weights(iterations)
        T = weights.size
        if self.composition == "basic":
            return self.epsilon * weights, np.full(T, self.delta / T)
        return self._advanced_scale(weights) * weights, np.full(T, self.delta / (2 * T))

    def _weights(self, iterations: int) -> np.ndarray:
        """The split's shape w_n, n = 1..T, summing to 1."""
        T = positive_int("iterations", iterations)
        if self.split == "constant":
            weights = np.ones(T)
        else:  # tau^-(n-1)/2 in log space, normalised by its maximum first (no overflow for tau^-T)
            log_w = -0.5 * np.arange(T) * math.log(self.tau)
            weights = np.exp(log_w - log_w.max())
        return weights / weights.sum()

    def per_round_rho(self, iterations: int) -> np.ndarray:
        r"""The moments accountant's per-round zCDP budgets :math:`\rho_n = \rho\,w_n^2/\sum_m w_m^2`, shape (T,),
        with :math:`\rho = (\sqrt{L + \varepsilon} - \sqrt{L})^2`, :math:`L = \log(1/\delta)`: the total whose
        conversion :math:`\rho + 2\sqrt{\rho L}` is :math:`\varepsilon`."""
        if self.composition != "moments":
            raise ValueError(f"per_round_rho needs composition = 'moments', got {self.composition!r}")
        weights = self._weights(iterations)
        L = math.log(1.0 / self.delta)
        total = (math.sqrt(L + self.epsilon) - math.sqrt(L)) ** 2
        return total * weights**2 / np.sum(weights**2)

    def _advanced_scale(self, weights: np.ndarray) -> float:
        """The largest c (to relative 1e-12) whose eps_n = c w_n compose to at most epsilon (advanced composition):
        the total grows strictly with c, so bisection on a bracket found by doubling, each capped."""
        def total(c: float) -> float:
            return advanced_composition_epsilon(c * weights, self.delta / 2)

        low, high = 0.0, self.epsilon  # basic composition's scale: advanced is looser only beyond it
        for _ in range(200):
            if total(high) >= self.epsilon:
                break
            low, high = high, 2 * high
        else:
            raise ValueError(f"epsilon = {self.epsilon!r}: no advanced-composition scale found within 200 doublings")
        for _ in range(200):
            if high - low <= 1e-12 * high:
                return low
            mid = 0.5 * (low + high)
            low, high = (mid, high) if total(mid) <= self.epsilon else (low, mid)
        raise ValueError(f"epsilon = {self.epsilon!r}: the advanced-composition scale did not converge in 200 "
                         "bisection steps")

    def variances(self, problem: NFLProblem, rho: float, etas: np.ndarray) -> np.ndarray:
        r""":math:`\sigma_k^2(n)`, shape (T, K).

        Raises
        ------
        ValueError
            If some :math:`\varepsilon_n \ge 1` (outside the classical Gaussian mechanism's range).
        """
        delta_k = PrivacySchedule(kind="S2", c1=self.c1).sensitivities(problem, rho, np.asarray(etas, dtype=float))
        if self.composition == "moments":
            return delta_k**2 / (2.0 * self.per_round_rho(len(etas)))[:, None]
        eps_n, delta_n = self.per_round(len(etas))
        if np.max(eps_n) >= 1.0:
            raise ValueError(f"epsilon = {self.epsilon!r} gives a per-round epsilon_n = {float(np.max(eps_n)):.3g} "
                             "outside the classical Gaussian mechanism's range (0, 1)")
        return delta_k**2 * (2.0 * np.log(1.25 / delta_n) / eps_n**2)[:, None]


@dataclass(frozen=True, kw_only=True)
class BaselineRun:
    r"""Output of a baseline run: final iterates ``w``, ``w_tilde`` (runs, K, P); ``ne``: :math:`NE(n)`, n = 0..T
    (runs, T + 1) or None; ``variances`` :math:`\sigma_k^2(n)` (T, K); the accounted ``epsilon``, ``delta`` (and
    ``total_zcdp`` where zCDP accounting applies, else None); ``diverged`` as in :class:`NFLRun`."""

    w: np.ndarray
    w_tilde: np.ndarray
    ne: np.ndarray | None
    variances: np.ndarray
    epsilon: float
    delta: float
    total_zcdp: float | None
    diverged: bool


def _iterate(problem: NFLProblem, iterations: int, runs: int, w_c, advance: Callable, threshold: float):
    """The shared outer loop: ``advance(n, w_tilde, gamma) -> (w, w_tilde, gamma)`` once per round."""
    K, P = problem.K, problem.P
    if w_c is not None:
        w_c = np.asarray(w_c, dtype=np.float64)
        if w_c.shape != (P,):
            raise ValueError(f"w_c must have shape (P,) = ({P},), got {w_c.shape}")
    w, w_tilde, gamma = np.zeros((runs, K, P)), np.zeros((runs, K, P)), np.zeros((runs, K, P))
    ne = None
    if w_c is not None:
        ne = np.full((runs, iterations + 1), np.nan)
        ne[:, 0] = normalized_error(problem, w, w_c)
    diverged = False
    for n in range(1, iterations + 1):
        w, w_tilde, gamma = advance(n, w_tilde, gamma)
        if ne is not None:
            ne[:, n] = normalized_error(problem, w, w_c)
        if not np.all(np.abs(w_tilde) < threshold):
            diverged = True
            break
    return w, w_tilde, ne, diverged


def run_eps_delta_dp_nfl(problem: NFLProblem, rho: float, step: StepSchedule, budget: EpsDeltaBudget,
                         iterations: int, rng: np.random.Generator, *, runs: int = 1, w_c=None,
                         divergence_threshold: float = 1e150) -> BaselineRun:
    r"""(ε,δ)DP-NFL (reconstruction): P2 Algorithm 1 with the noise of :class:`EpsDeltaBudget`.

    The rounds are :func:`reference_impl.zcdp_nfl.nfl_round` (the same steps 1-6 as zCDP-NFL); only
    :math:`\sigma_k(n)` differs. The accounted privacy is :math:`(\varepsilon, \delta)` by the budget's composition
    theorem.
    """
    rho = real_scalar("rho", rho, "(0, inf)")
    iterations, runs = positive_int("iterations", iterations), positive_int("runs", runs)
    etas = step.etas(iterations)
    variances = budget.variances(problem, rho, etas)
    sigma = np.sqrt(variances)
    matrices = (problem.adjacency.astype(np.float64), problem.degree.astype(np.float64)[:, None])

    def advance(n, w_tilde, gamma):
        w, w_tilde, gamma, _ = nfl_round(problem, rho, etas[n - 1], sigma[n - 1], w_tilde, gamma, rng,
                                         _matrices=matrices)
        return w, w_tilde, gamma

    w, w_tilde, ne, diverged = _iterate(problem, iterations, runs, w_c, advance, divergence_threshold)
    return BaselineRun(w=w, w_tilde=w_tilde, ne=ne, variances=readonly(variances, np.float64),
                       epsilon=budget.epsilon, delta=budget.delta, total_zcdp=None, diverged=diverged)


def metropolis_weights(adjacency):
    r"""Metropolis weights :math:`a_{kl} = 1/(1 + \max(d_k, d_l))` on links, :math:`a_{kk} = 1 - \sum_l a_{kl}`.

    Symmetric and doubly stochastic (the consensus matrix of the reconstructed zCDP-grad-NFL). A dense adjacency
    gives a dense read-only array; a sparse one (as :attr:`NFLProblem.adjacency`) a sparse ``csr_array`` with the
    links and the diagonal only, built in time linear in the edges.

    >>> A = np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])
    >>> W = metropolis_weights(A)
    >>> bool(np.allclose(W.sum(axis=0), 1) and np.allclose(W, W.T))
    True
    >>> bool(np.allclose(metropolis_weights(as_sparse_adjacency(A)).toarray(), W))
    True
    """
    if sp.issparse(adjacency):
        A = as_sparse_adjacency(adjacency)
        K, d = A.shape[0], np.diff(A.indptr)
        rows = np.repeat(np.arange(K), d)
        links = 1.0 / (1.0 + np.maximum(d[rows], d[A.indices]))
        diagonal = 1.0 - np.bincount(rows, weights=links, minlength=K)
        return sp.csr_array(sp.csr_array((links, A.indices, A.indptr), shape=A.shape) + sp.diags_array(diagonal))
    A = np.asarray(adjacency)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or not np.array_equal(A, A.T) or not np.all((A == 0) | (A == 1)):
        raise ValueError(f"adjacency must be a symmetric 0/1 (K, K) matrix, got shape {A.shape}")
    d = A.sum(axis=1)
    W = np.where(A == 1, 1.0 / (1.0 + np.maximum(d[:, None], d[None, :])), 0.0)
    np.fill_diagonal(W, 1.0 - W.sum(axis=1))
    return readonly(W, np.float64)


def run_zcdp_grad_nfl(problem: NFLProblem, mu: float, privacy: PrivacySchedule, iterations: int,
                      rng: np.random.Generator, *, runs: int = 1, w_c=None,
                      divergence_threshold: float = 1e150) -> BaselineRun:
    r"""zCDP-grad-NFL (reconstruction): private distributed subgradient descent.

    .. math::

        w_k^{(n)} = \sum_{l\in\mathcal N_k\cup\{k\}} a_{kl}\tilde w_l^{(n-1)} - \mu\,g_k(\tilde w_k^{(n-1)}),
        \qquad \tilde w_k^{(n)} = w_k^{(n)} + \xi_k^{(n)}

    with Metropolis weights :math:`a_{kl}` (:func:`metropolis_weights`). Only the data term differs between
    neighbouring data sets, so :math:`\Delta_k = 2c_1\mu/M`; S2:
    :math:`\sigma_k^2(n) = \Delta_k^2\tau^{n-1}/(2\phi^{(1)})` (the same budgets :math:`\phi^{(n)}`, hence the same
    accounted privacy as zCDP-NFL); S1:
    :math:`\sigma^2(0)\tau^n`; ``none``: no noise.
    """
    from theory.privacy.conversions import zcdp_to_approx_dp_bun_steinke

    mu = real_scalar("mu", mu, "(0, inf)")
    iterations, runs = positive_int("iterations", iterations), positive_int("runs", runs)
    T, K = iterations, problem.K
    n = np.arange(1, T + 1, dtype=np.float64)[:, None]
    sensitivity = 2.0 * privacy.c1 * mu / problem.M
    if privacy.kind == "none":
        variances = np.zeros((T, K))
    elif privacy.kind == "S1":
        variances = np.broadcast_to(privacy.sigma2_0 * privacy.tau**n, (T, K)).copy()
    else:
        variances = np.broadcast_to(sensitivity**2 * privacy.tau ** (n - 1.0) / (2.0 * privacy.phi1), (T, K)).copy()
    sigma = np.sqrt(variances)
    W = metropolis_weights(problem.adjacency)  # sparse: links and diagonal only

    def advance(n, w_tilde, gamma):
        w = graph_product(W, w_tilde) - mu * problem.subgradients(w_tilde)
        xi = sigma[n - 1][None, :, None] * rng.normal(size=w.shape) if privacy.kind != "none" else 0.0
        return w, w + xi, gamma

    w, w_tilde, ne, diverged = _iterate(problem, iterations, runs, w_c, advance, divergence_threshold)
    if privacy.kind == "none":
        total = epsilon = math.inf
    else:
        total = float(np.sum(sensitivity**2 / (2.0 * variances[:, 0])))
        epsilon = float(zcdp_to_approx_dp_bun_steinke(total, privacy.delta))
    return BaselineRun(w=w, w_tilde=w_tilde, ne=ne, variances=readonly(variances, np.float64), epsilon=epsilon,
                       delta=privacy.delta, total_zcdp=total, diverged=diverged)


#: The default grid of :func:`matched_gradient_step`: 33 steps, log-spaced over [1e-2, 1e2].
MATCH_GRID = tuple(float(v) for v in np.logspace(-2, 2, 33))


def matched_gradient_step(problem: NFLProblem, config: NFLConfig, w_c, *, at: int = 10,
                          grid=MATCH_GRID) -> float:
    r"""The constant step :math:`\mu` of zCDP-grad-NFL matching zCDP-NFL's initial speed.

    Noise-free, both methods run ``at`` rounds on ``problem``; the returned :math:`\mu` of ``grid`` minimises
    :math:`|\log NE_{grad}(at) - \log NE_{NFL}(at)|` (a step whose run diverges or grows above NE(0) is never
    chosen). "When possible" (the seed): if no step in the grid reaches zCDP-NFL's NE(at), the fastest one is
    returned.
    """
    at = positive_int("at", at)
    quiet = dataclasses.replace(config, privacy=PrivacySchedule(kind="none"))
    target = run_zcdp_nfl(problem, quiet, at, np.random.default_rng(0), w_c=w_c).ne[0, -1]
    best, best_gap = None, math.inf
    curves = noise_free_grad_curves(problem, grid, at, w_c)
    for mu, ne in zip(grid, curves, strict=True):
        if not (np.all(np.isfinite(ne)) and ne[-1] < ne[0]):
            continue
        gap = abs(math.log(ne[-1]) - math.log(target))
        if gap < best_gap:
            best, best_gap = float(mu), gap
    if best is None:
        raise ArithmeticError(f"no step in the grid [{min(grid):g}, {max(grid):g}] makes zCDP-grad-NFL decrease NE "
                              f"in {at} rounds")
    return best


def noise_free_grad_curves(problem: NFLProblem, steps, iterations: int, w_c, *,
                           divergence_threshold: float = 1e150) -> np.ndarray:
    r"""The noise-free zCDP-grad-NFL error curves :math:`NE(n)`, n = 0..``iterations``, of every step :math:`\mu` in
    ``steps`` at once: shape (len(steps), iterations + 1).

    Row i is ``run_zcdp_grad_nfl(problem, steps[i], PrivacySchedule(kind="none"), iterations, rng,
    w_c=w_c).ne[0]`` (the same operations on a leading axis of steps; a run that diverges keeps NaN after the round
    it diverged in, as that run stops there), one set of array operations per round for all the steps.
    """
    iterations = positive_int("iterations", iterations)
    mus = np.array([real_scalar("mu", mu, "(0, inf)") for mu in steps], dtype=np.float64)[:, None, None]
    w_c = np.asarray(w_c, dtype=np.float64)
    if w_c.shape != (problem.P,):
        raise ValueError(f"w_c must have shape (P,) = ({problem.P},), got {w_c.shape}")
    W = metropolis_weights(problem.adjacency)
    w_tilde = np.zeros((mus.shape[0], problem.K, problem.P))
    ne = np.full((mus.shape[0], iterations + 1), np.nan)
    ne[:, 0] = normalized_error(problem, w_tilde, w_c)
    running = np.ones(mus.shape[0], dtype=bool)
    with np.errstate(over="ignore", invalid="ignore"):  # a diverging step's row only; it is NaN from then on
        for n in range(1, iterations + 1):
            w = graph_product(W, w_tilde) - mus * problem.subgradients(w_tilde)
            ne[running, n] = normalized_error(problem, w, w_c)[running]
            w_tilde = w + 0.0  # the noise-free round's w + xi, xi = 0.0
            running &= np.all(np.abs(w_tilde) < divergence_threshold, axis=(-2, -1))
    return ne


def p_admm_config(config: NFLConfig, eta: float | None = None) -> NFLConfig:
    r"""The P-ADMM-like stand-in's parameters (reconstruction): ``config`` with the constant step
    :math:`\eta` (default: :math:`\eta_0` of ``config``, which makes its first step equal zCDP-NFL's, so the two
    start at the same speed)."""
    eta0 = config.step.eta0 if eta is None else real_scalar("eta", eta, "(0, inf)")
    return dataclasses.replace(config, step=StepSchedule(kind="constant", eta0=eta0))


def run_p_admm(problem: NFLProblem, config: NFLConfig, iterations: int, rng: np.random.Generator, *,
               eta: float | None = None, **kwargs) -> NFLRun:
    """P-ADMM-like (reconstruction): zCDP-NFL with a constant step and the same noise schedule
    (:func:`p_admm_config`); keyword arguments go to :func:`run_zcdp_nfl`."""
    return run_zcdp_nfl(problem, p_admm_config(config, eta), iterations, rng, **kwargs)
