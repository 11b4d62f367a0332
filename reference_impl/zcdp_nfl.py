r"""zCDP-NFL: private peer-to-peer linearised ADMM, vectorised over agents and Monte-Carlo runs.

Reference implementation of P2 Algorithm 1 (shared/spec/zcdp_nfl.md 2.3) on any connected
undirected graph. Every agent advances as a row of arrays of shape ``(runs, K, P)``; neighbour sums
are one product with the adjacency matrix, so there is no Python loop over agents in an iteration.
Round :math:`n = 1, \dots, T` of every agent :math:`k`:

.. math::

    g_k^{(n)} &= \frac{1}{M}\sum_j \ell'(x_{k,j}, y_{k,j}; \tilde w_k^{(n-1)}) + \frac{\lambda}{K}R'(\tilde w_k^{(n-1)}) \\
    w_k^{(n)} &= \frac{\tilde w_k^{(n-1)}/\eta^{(n)} + \rho\sum_{l\in\mathcal N_k}(\tilde w_k^{(n-1)} + \tilde w_l^{(n-1)})
                 - \gamma_k^{(n-1)} - g_k^{(n)}}{1/\eta^{(n)} + 2\rho d_k} \\
    \tilde w_k^{(n)} &= w_k^{(n)} + \xi_k^{(n)}, \qquad \xi_k^{(n)} \sim \mathcal N(0, \sigma_k^2(n) I_P) \\
    \gamma_k^{(n)} &= \gamma_k^{(n-1)} + \rho\sum_{l\in\mathcal N_k}(\tilde w_k^{(n)} - \tilde w_l^{(n)})

with :math:`w^{(0)} = \tilde w^{(0)} = \gamma^{(0)} = 0`. Step sizes (spec 2.4): :class:`StepSchedule`;
noise (spec 2.5, Lemma I, Theorem I): :class:`PrivacySchedule` (S2 privacy-first, the default, or S1
variance-first). Objectives (spec 3): elastic net, least absolute deviation (LAD) and ridge, with
optional per-sample gradient clipping at :math:`c_1` for the squared losses (Assumption 1 fails for
the squared loss without it, erratum E7; clipping changes the fixed point, so noise-free accuracy
checks run unclipped). Ground truth: the centralised problem
:math:`F(w) = \sum_k f_k(w)` solved with CVXPY/Clarabel (:func:`centralized_optimum`), certified by
the ridge closed form, the elastic-net KKT residual or the LP duality gap.

Only equal sample counts :math:`M_k = M` are supported (the paper's experiments use :math:`M_k = 50`).

References
----------
.. [1] seed 004_180cd372987d137b.txt, Publication 2, Algorithm 1, eqs. (5)-(9), lines 1983-2006;
   thesis Chapter 3, eqs. (3.6)-(3.10), lines 545-575.
.. [2] shared/spec/zcdp_nfl.md 2.3-2.5 (closed form of step 2; erratum E6 for P2 (A.1)), 3 (objectives).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

__all__ = [
    "NOISE_SCHEDULES",
    "OBJECTIVES",
    "STEP_KINDS",
    "GroundTruth",
    "NFLConfig",
    "NFLProblem",
    "NFLRun",
    "PrivacySchedule",
    "StepSchedule",
    "centralized_optimum",
    "elastic_net_lambda1",
    "nfl_round",
    "normalized_error",
    "run_arm",
    "run_zcdp_nfl",
    "synthetic_problem",
    "zcdp_nfl_primal_update",
]

OBJECTIVES = ("elastic_net", "lad", "ridge")
STEP_KINDS = ("constant", "inv_sqrt", "inv", "inv_square", "growing")
NOISE_SCHEDULES = ("none", "S1", "S2")


def _readonly(a, dtype=np.float64) -> np.ndarray:
    a = np.array(a, dtype=dtype)
    a.setflags(write=False)
    return a


def _positive(name: str, value, *, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise ValueError(f"{name} must be a finite real {'>= 0' if allow_zero else '> 0'}, got {value!r}")
    if float(value) < 0.0 or (float(value) == 0.0 and not allow_zero):
        raise ValueError(f"{name} must be a finite real {'>= 0' if allow_zero else '> 0'}, got {value!r}")
    return float(value)


# ------------------------------------------------------------------------------------------------------------------
# The one-step primal update (Lemma I's object), absorbed from the former reference_impl.zcdp_nfl_update


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
       closed form: shared/spec/zcdp_nfl.md 2.3 step 2 (erratum E6 for P2 (A.1)).

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


# ------------------------------------------------------------------------------------------------------------------
# Problem instance


def elastic_net_lambda1(X, y) -> float:
    r"""The paper's :math:`\lambda_1 = 0.001\,\lVert X^\top y\rVert_\infty` on the stacked data of all clients.

    References
    ----------
    .. [1] seed 004_180cd372987d137b.txt, thesis line 758, Publication 2 line 2218 (stacking: spec 3).
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    return 0.001 * float(np.max(np.abs(X.reshape(-1, X.shape[-1]).T @ y.reshape(-1))))


@dataclass(frozen=True, kw_only=True)
class NFLProblem:
    r"""A networked learning problem: graph, local data and the objective :math:`f_k`.

    .. math:: f_k(w) = \frac{1}{M}\sum_{j=1}^{M}\ell(x_{k,j}, y_{k,j}; w) + \frac{\lambda}{K}R(w),
              \qquad F(w) = \sum_k f_k(w)

    Attributes
    ----------
    adjacency : ndarray, shape (K, K)
        Symmetric 0/1 adjacency of a connected graph, zero diagonal.
    X : ndarray, shape (K, M, P)
    y : ndarray, shape (K, M)
    objective : {"elastic_net", "lad", "ridge"}
        ``elastic_net``: squared loss, :math:`R = \lambda_1\lVert w\rVert_1 + \lambda_2\lVert w\rVert^2`;
        ``lad``: :math:`|x^\top w - y|`, :math:`R = 0`; ``ridge``: squared loss, :math:`R = \lVert w\rVert^2`.
    lam : float
        :math:`\lambda \ge 0`.
    lam1, lam2 : float
        Elastic-net weights (ignored otherwise). ``lam1`` defaults to :func:`elastic_net_lambda1`.
    clip : float or None
        Per-sample gradient clipping threshold :math:`c_1` for the squared losses (None: unclipped, the
        paper's algorithm; Assumption 1 then fails). Not allowed for LAD, whose subgradients are bounded
        by the row norms already.
    """

    adjacency: np.ndarray
    X: np.ndarray
    y: np.ndarray
    objective: str
    lam: float = 1.0
    lam1: float | None = None
    lam2: float = 1.0
    clip: float | None = None
    _degree: np.ndarray = field(init=False, repr=False, compare=False)
    _XT: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {self.objective!r}")
        A = np.asarray(self.adjacency)
        if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] < 2:
            raise ValueError(f"adjacency must be a square (K, K) matrix with K >= 2, got shape {A.shape}")
        if not np.all((A == 0) | (A == 1)) or not np.array_equal(A, A.T) or np.any(np.diag(A) != 0):
            raise ValueError("adjacency must be a symmetric 0/1 matrix with zero diagonal")
        if not nx.is_connected(nx.from_numpy_array(A)):
            raise ValueError("adjacency must describe a connected graph (Lemma II and Theorems II-IV assume it)")
        object.__setattr__(self, "adjacency", _readonly(A, np.int64))
        K = A.shape[0]
        X, y = np.asarray(self.X, dtype=np.float64), np.asarray(self.y, dtype=np.float64)
        if X.ndim != 3 or X.shape[0] != K or X.shape[1] < 1 or X.shape[2] < 1:
            raise ValueError(f"X must have shape (K, M, P) = ({K}, M >= 1, P >= 1), got {X.shape}")
        if y.shape != X.shape[:2]:
            raise ValueError(f"y must have shape (K, M) = {X.shape[:2]}, got {y.shape}")
        if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
            raise ValueError("X and y must be finite")
        object.__setattr__(self, "X", _readonly(X))
        object.__setattr__(self, "y", _readonly(y))
        object.__setattr__(self, "lam", _positive("lam", self.lam, allow_zero=True))
        object.__setattr__(self, "lam2", _positive("lam2", self.lam2, allow_zero=True))
        lam1 = elastic_net_lambda1(X, y) if self.lam1 is None else _positive("lam1", self.lam1, allow_zero=True)
        object.__setattr__(self, "lam1", float(lam1))
        if self.clip is not None:
            if self.objective == "lad":
                raise ValueError("clip must be None for objective 'lad' (its subgradients are bounded by ||x||)")
            object.__setattr__(self, "clip", _positive("clip", self.clip))
        object.__setattr__(self, "_degree", _readonly(A.sum(axis=1), np.int64))
        object.__setattr__(self, "_XT", _readonly(np.swapaxes(self.X, 1, 2)))

    # ---- sizes and graph matrices ----
    @property
    def K(self) -> int:
        return self.X.shape[0]

    @property
    def M(self) -> int:
        return self.X.shape[1]

    @property
    def P(self) -> int:
        return self.X.shape[2]

    @property
    def degree(self) -> np.ndarray:
        """:math:`d_k = |\\mathcal N_k|`."""
        return self._degree

    @property
    def n_edges(self) -> int:
        return int(self.adjacency.sum() // 2)

    def laplacian(self, sign: int = -1) -> np.ndarray:
        """:math:`\\mathrm{Deg} + \\mathrm{sign}\\cdot\\mathrm{Adj}` (K x K): the signed (-1) or signless (+1) Laplacian."""
        return np.diag(self.degree).astype(np.float64) + sign * self.adjacency

    @property
    def gradient_bound(self) -> float | None:
        r"""A per-sample subgradient bound :math:`c_1` valid for this problem, or None (unclipped squared loss)."""
        if self.objective == "lad":
            return float(np.max(np.linalg.norm(self.X, axis=-1)))
        return self.clip

    @property
    def smoothness(self) -> np.ndarray:
        r""":math:`L_k = \lambda_{\max}(\nabla^2 f_k)` of the smooth part (squared losses; 0 for LAD), shape (K,)."""
        if self.objective == "lad":
            return np.zeros(self.K)
        gram = 2.0 * np.einsum("kmp,kmq->kpq", self.X, self.X) / self.M
        reg = {"ridge": 2.0 * self.lam / self.K, "elastic_net": 2.0 * self.lam * self.lam2 / self.K}[self.objective]
        return np.linalg.eigvalsh(gram)[:, -1] + reg

    # ---- (sub)gradients and objective values, vectorised over leading axes ----
    def per_sample_subgradients(self, w) -> np.ndarray:
        r""":math:`\ell'(x_{k,j}, y_{k,j}; w_k)` (clipped if ``clip``), shape (..., K, M, P); sign(0) = 0."""
        residual = np.einsum("kmp,...kp->...km", self.X, w) - self.y
        if self.objective == "lad":
            return np.sign(residual)[..., None] * self.X
        grad = 2.0 * residual[..., None] * self.X
        if self.clip is not None:
            norm = np.linalg.norm(grad, axis=-1, keepdims=True)
            grad = grad * np.minimum(1.0, self.clip / np.maximum(norm, np.finfo(float).tiny))
        return grad

    def regularizer_subgradient(self, w) -> np.ndarray:
        r""":math:`(\lambda/K)R'(w_k)` with sign(0) = 0, shape of ``w``."""
        w = np.asarray(w, dtype=np.float64)
        if self.objective == "lad":
            return np.zeros_like(w)
        if self.objective == "ridge":
            return (2.0 * self.lam / self.K) * w
        return (self.lam / self.K) * (self.lam1 * np.sign(w) + 2.0 * self.lam2 * w)

    def subgradients(self, w) -> np.ndarray:
        r""":math:`g_k(w_k) = \frac1M\sum_j\ell'(x_{k,j},y_{k,j};w_k) + \frac{\lambda}{K}R'(w_k)`, shape (..., K, P)."""
        w = np.asarray(w, dtype=np.float64)
        if self.clip is None:  # no per-sample array needed: one weighted sum of the rows per client (batched matmul)
            residual = (self.X @ w[..., None])[..., 0] - self.y
            weights = np.sign(residual) / self.M if self.objective == "lad" else (2.0 / self.M) * residual
            data = (self._XT @ weights[..., None])[..., 0]
        else:
            data = self.per_sample_subgradients(w).mean(axis=-2)
        return data + self.regularizer_subgradient(w)

    def local_objectives(self, w) -> np.ndarray:
        r""":math:`f_k(w_k)` for every client (the unclipped objective), shape (..., K)."""
        w = np.asarray(w, dtype=np.float64)
        residual = np.einsum("kmp,...kp->...km", self.X, w) - self.y
        if self.objective == "lad":
            return np.abs(residual).mean(axis=-1)
        loss = (residual**2).mean(axis=-1)
        if self.objective == "ridge":
            return loss + (self.lam / self.K) * np.sum(w**2, axis=-1)
        return loss + (self.lam / self.K) * (self.lam1 * np.sum(np.abs(w), axis=-1) + self.lam2 * np.sum(w**2, axis=-1))

    def stacked_objective(self, w) -> np.ndarray:
        r""":math:`f(\mathfrak w) = \sum_k f_k(w_k)` of stacked iterates (..., K, P) (Theorem II's f)."""
        return self.local_objectives(w).sum(axis=-1)

    def centralized_objective(self, w) -> np.ndarray:
        r""":math:`F(w) = \sum_k f_k(w)` at a common vector (..., P)."""
        w = np.asarray(w, dtype=np.float64)
        return self.stacked_objective(np.broadcast_to(w[..., None, :], (*w.shape[:-1], self.K, self.P)))


def synthetic_problem(rng: np.random.Generator, *, K: int = 10, P: int = 3, M: int = 20, mean_degree: float = 3.0,
                      objective: str = "ridge", lam: float = 1.0, lam2: float = 1.0, noise_std: float = 0.1,
                      heterogeneity: float = 0.0, zero_coordinates: int = 0, clip: float | None = None,
                      graph: nx.Graph | None = None) -> NFLProblem:
    r"""The spec's instance generator (zcdp_nfl.md 5): connected :math:`G(K, m)`, :math:`m = \mathrm{round}(K\bar d/2)`.

    Rows :math:`x_{k,j} \sim \mathcal N(0, I_P)` rescaled to :math:`\lVert x\rVert \le 1`
    (:math:`x/\max(1, \lVert x\rVert)`), truth :math:`w^o \sim \mathcal N(0, I_P)` (its first
    ``zero_coordinates`` entries set to 0), client truths :math:`w^o + h\,\mathcal N(0, I_P)` with
    ``heterogeneity`` :math:`h` (review notes: heterogeneous clients), :math:`y = x^\top w^o_k + v`,
    :math:`v \sim \mathcal N(0, \sigma_v^2)`. The Erdős-Rényi graph is resampled until connected
    (at most 1000 draws) unless ``graph`` is given.
    """
    for name, value, low in (("K", K, 2), ("P", P, 1), ("M", M, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if isinstance(zero_coordinates, bool) or not isinstance(zero_coordinates, int) or not 0 <= zero_coordinates < P:
        raise ValueError(f"zero_coordinates must be an integer in [0, P) = [0, {P}), got {zero_coordinates!r}")
    _positive("noise_std", noise_std, allow_zero=True)
    _positive("heterogeneity", heterogeneity, allow_zero=True)
    if graph is None:
        edges = int(round(K * _positive("mean_degree", mean_degree) / 2.0))
        if not K - 1 <= edges <= K * (K - 1) // 2:
            raise ValueError(f"mean_degree must give between K - 1 and K(K - 1)/2 edges, got {edges} for K = {K}")
        for _ in range(1000):
            graph = nx.gnm_random_graph(K, edges, seed=int(rng.integers(2**32)))
            if nx.is_connected(graph):
                break
        else:  # pragma: no cover - needs an absurdly sparse graph
            raise ArithmeticError(f"no connected G({K}, {edges}) in 1000 draws")
    elif graph.number_of_nodes() != K:
        raise ValueError(f"graph must have K = {K} nodes, got {graph.number_of_nodes()}")
    A = nx.to_numpy_array(graph, nodelist=sorted(graph.nodes()), dtype=np.int64)
    X = rng.normal(size=(K, M, P))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=-1, keepdims=True))
    w_o = rng.normal(size=P)
    w_o[:zero_coordinates] = 0.0
    truths = w_o + heterogeneity * rng.normal(size=(K, P))
    y = np.einsum("kmp,kp->km", X, truths) + noise_std * rng.normal(size=(K, M))
    return NFLProblem(adjacency=A, X=X, y=y, objective=objective, lam=lam, lam2=lam2, clip=clip)


# ------------------------------------------------------------------------------------------------------------------
# Ground truth


@dataclass(frozen=True, kw_only=True)
class GroundTruth:
    """The centralised optimum :math:`w_c`, :math:`F^* = F(w_c)` and the certificate of the solve."""

    w_c: np.ndarray
    F_star: float
    certificate: str
    residual: float
    solver_status: str


def centralized_optimum(problem: NFLProblem, *, tol: float = 1e-10) -> GroundTruth:
    r"""Solve :math:`\min_w F(w)` with CVXPY/Clarabel (tolerance ``tol``) and certify the solution.

    Certificates (spec 3): ridge, the closed form
    :math:`(\sum_k X_k^\top X_k/M + \lambda I)^{-1}\sum_k X_k^\top y_k/M` (``residual`` = distance to it);
    elastic net, the KKT residual :math:`\mathrm{dist}(0, \partial F(w_c))` (the returned point is the
    closed-form refinement on the solver's support and signs when that has a smaller residual);
    LAD, the relative duality gap of the LP (Clarabel's own, ``residual``).

    Raises
    ------
    ArithmeticError
        If the solver does not report an optimal status.
    """
    import cvxpy as cp

    K, M, P = problem.K, problem.M, problem.P
    Xs, ys = problem.X.reshape(K * M, P), problem.y.reshape(K * M)
    w = cp.Variable(P)
    residual = Xs @ w - ys
    if problem.objective == "lad":
        obj = cp.norm1(residual) / M
    elif problem.objective == "ridge":
        obj = cp.sum_squares(residual) / M + problem.lam * cp.sum_squares(w)
    else:
        obj = (cp.sum_squares(residual) / M
               + problem.lam * (problem.lam1 * cp.norm1(w) + problem.lam2 * cp.sum_squares(w)))
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol, max_iter=500)
    if prob.status != cp.OPTIMAL or w.value is None:
        raise ArithmeticError(f"CVXPY/Clarabel solve of the centralised {problem.objective} problem ended with "
                              f"status {prob.status}")
    w_c = np.asarray(w.value, dtype=np.float64)
    gram, lin = Xs.T @ Xs / M, Xs.T @ ys / M
    if problem.objective == "ridge":
        exact = np.linalg.solve(gram + problem.lam * np.eye(P), lin)
        res, cert = float(np.linalg.norm(w_c - exact)), "distance to the closed form"
        w_c = exact
    elif problem.objective == "elastic_net":
        w_c, res = _elastic_net_refine(problem, w_c, gram, lin)
        cert = "KKT residual dist(0, dF(w_c))"
    else:
        w_c, res = _lad_vertex(problem, w_c, Xs, ys)
        cert = "LP optimality: excess of the basic dual multipliers over [-1, 1] (0: w_c is an exact minimiser)"
    w_c = _readonly(w_c)
    return GroundTruth(w_c=w_c, F_star=float(problem.centralized_objective(w_c)), certificate=cert, residual=res,
                       solver_status=str(prob.status))


def _elastic_net_kkt(problem: NFLProblem, w, gram, lin) -> float:
    smooth = 2.0 * (gram @ w - lin) + 2.0 * problem.lam * problem.lam2 * w
    t = problem.lam * problem.lam1
    nz = w != 0.0
    res = np.where(nz, smooth + t * np.sign(w), np.maximum(np.abs(smooth) - t, 0.0))
    return float(np.linalg.norm(res))


def _elastic_net_refine(problem: NFLProblem, w, gram, lin) -> tuple[np.ndarray, float]:
    """Solve the KKT system exactly on the solver's support (coordinates with |w| > 1e-8) and keep the better point."""
    support = np.abs(w) > 1e-8
    candidate = np.zeros_like(w)
    if support.any():
        H = 2.0 * gram + 2.0 * problem.lam * problem.lam2 * np.eye(problem.P)
        b = 2.0 * lin - problem.lam * problem.lam1 * np.sign(w)
        candidate[support] = np.linalg.solve(H[np.ix_(support, support)], b[support])
    if np.array_equal(np.sign(candidate), np.sign(w) * support):
        r_candidate, r_solver = (_elastic_net_kkt(problem, candidate, gram, lin),
                                 _elastic_net_kkt(problem, w, gram, lin))
        if r_candidate <= r_solver:
            return candidate, r_candidate
    return w, _elastic_net_kkt(problem, w, gram, lin)


def _lad_vertex(problem: NFLProblem, w, Xs, ys) -> tuple[np.ndarray, float]:
    r"""Snap the interior-point LAD solution to the vertex through its P smallest residuals and certify it.

    At a vertex :math:`X_B w = y_B` (:math:`|B| = P`), :math:`0 \in \partial F(w)` iff the basic multipliers
    :math:`s_B = -X_B^{-\top}X_N^\top\operatorname{sign}(r_N)` lie in :math:`[-1, 1]^P`; the returned residual is
    :math:`\max(0, \max|s_B| - 1)` (0: an exact minimiser; :math:`\max|s_B| < 1`: the unique one). Falls back to
    the solver's point with an infinite residual if the basis is singular or the vertex is worse.
    """
    r = Xs @ w - ys
    basis = np.argsort(np.abs(r))[: problem.P]
    XB = Xs[basis]
    if np.linalg.matrix_rank(XB) < problem.P:
        return w, float("inf")
    vertex = np.linalg.solve(XB, ys[basis])
    if problem.centralized_objective(vertex) > problem.centralized_objective(w) + 1e-9:
        return w, float("inf")
    rv = Xs @ vertex - ys
    others = np.ones(rv.size, dtype=bool)
    others[basis] = False
    s_basic = np.linalg.solve(XB.T, -Xs[others].T @ np.sign(rv[others]))
    return vertex, float(max(0.0, np.max(np.abs(s_basic)) - 1.0))


def normalized_error(problem: NFLProblem, w, w_c) -> np.ndarray:
    r"""The paper's metric :math:`NE = \sum_k\lVert w_k - w_c\rVert^2/\lVert w_c\rVert^2` of iterates (..., K, P)."""
    w_c = np.asarray(w_c, dtype=np.float64)
    return np.sum((np.asarray(w) - w_c) ** 2, axis=(-2, -1)) / float(w_c @ w_c)


# ------------------------------------------------------------------------------------------------------------------
# Schedules


@dataclass(frozen=True, kw_only=True)
class StepSchedule:
    r"""Step sizes :math:`\eta^{(n)}`, :math:`n \ge 1` (spec 2.4), the same for every agent.

    ``constant``: :math:`\eta_0`; ``inv_sqrt``: :math:`\eta_0/\sqrt n`; ``inv``: :math:`\eta_0/n`;
    ``inv_square``: :math:`\eta_0/n^2` (Assumption 3 holds, :math:`\sum\eta < \infty`: the iterates freeze);
    ``growing``: :math:`\eta_0 n^2` (Assumption 4 holds, Assumption 3 fails).
    """

    kind: str = "constant"
    eta0: float = 0.5

    def __post_init__(self) -> None:
        if self.kind not in STEP_KINDS:
            raise ValueError(f"kind must be one of {STEP_KINDS}, got {self.kind!r}")
        object.__setattr__(self, "eta0", _positive("eta0", self.eta0))

    @property
    def exponent(self) -> float:
        """:math:`p` in :math:`\\eta^{(n)} = \\eta_0 n^p`."""
        return {"constant": 0.0, "inv_sqrt": -0.5, "inv": -1.0, "inv_square": -2.0, "growing": 2.0}[self.kind]

    def etas(self, T: int) -> np.ndarray:
        """:math:`\\eta^{(1)}, \\dots, \\eta^{(T)}` as an array of shape (T,)."""
        n = np.arange(1, T + 1, dtype=np.float64)
        return self.eta0 * n**self.exponent


@dataclass(frozen=True, kw_only=True)
class PrivacySchedule:
    r"""Noise variances :math:`\sigma_k^2(n)` (spec 2.5) and the zCDP budgets they give (Theorem I).

    ``none``: no noise. ``S2`` (privacy-first, the Corollary's schedule, the default):
    :math:`\phi_k^{(n)} = \phi^{(1)}\tau^{-(n-1)}`, :math:`\sigma_k^2(n) = \Delta_k(n)^2/(2\phi_k^{(n)})`.
    ``S1`` (variance-first, Theorem II's constant): :math:`\sigma_k^2(n) = \sigma^2(0)\tau^n` and
    :math:`\phi_k^{(n)} = \Delta_k(n)^2/(2\sigma_k^2(n))`. :math:`\Delta_k(n) = 2c_1/(M(2\rho d_k + 1/\eta^{(n)}))`
    (Lemma I). ``c1`` is the per-sample subgradient bound used for the calibration; the privacy
    guarantee holds only if the problem's gradients are bounded by it (:attr:`NFLProblem.gradient_bound`).
    """

    kind: str = "S2"
    phi1: float = 1e-3
    tau: float = 0.99
    sigma2_0: float = 0.0
    c1: float = 1.0
    delta: float = 1e-5

    def __post_init__(self) -> None:
        if self.kind not in NOISE_SCHEDULES:
            raise ValueError(f"kind must be one of {NOISE_SCHEDULES}, got {self.kind!r}")
        object.__setattr__(self, "phi1", _positive("phi1", self.phi1))
        tau = _positive("tau", self.tau)
        if not tau <= 1.0:
            raise ValueError(f"tau must be in (0, 1], got {self.tau!r}")
        object.__setattr__(self, "tau", tau)
        object.__setattr__(self, "sigma2_0", _positive("sigma2_0", self.sigma2_0, allow_zero=True))
        if self.kind == "S1" and self.sigma2_0 == 0.0:
            raise ValueError("sigma2_0 must be > 0 for kind 'S1', got 0.0")
        object.__setattr__(self, "c1", _positive("c1", self.c1))
        delta = _positive("delta", self.delta)
        if not delta < 1.0:
            raise ValueError(f"delta must be in (0, 1), got {self.delta!r}")
        object.__setattr__(self, "delta", delta)

    def sensitivities(self, problem: NFLProblem, rho: float, etas: np.ndarray) -> np.ndarray:
        """Lemma I: :math:`\\Delta_k(n)`, shape (T, K)."""
        return 2.0 * self.c1 / (problem.M * (2.0 * rho * problem.degree[None, :] + 1.0 / etas[:, None]))

    def variances(self, problem: NFLProblem, rho: float, etas: np.ndarray) -> np.ndarray:
        """:math:`\\sigma_k^2(n)`, shape (T, K)."""
        T = etas.size
        if self.kind == "none":
            return np.zeros((T, problem.K))
        n = np.arange(1, T + 1, dtype=np.float64)[:, None]
        if self.kind == "S1":
            return np.broadcast_to(self.sigma2_0 * self.tau**n, (T, problem.K)).copy()
        delta = self.sensitivities(problem, rho, etas)
        return delta**2 * self.tau ** (n - 1.0) / (2.0 * self.phi1)

    def budgets(self, problem: NFLProblem, rho: float, etas: np.ndarray) -> np.ndarray:
        r""":math:`\phi_k^{(n)} = \Delta_k(n)^2/(2\sigma_k^2(n))`, shape (T, K) (inf without noise)."""
        var = self.variances(problem, rho, etas)
        with np.errstate(divide="ignore"):
            return np.where(var > 0, self.sensitivities(problem, rho, etas) ** 2 / (2.0 * np.where(var > 0, var, 1.0)),
                            np.inf)


@dataclass(frozen=True, kw_only=True)
class NFLConfig:
    """zCDP-NFL parameters: ADMM penalty, step schedule and privacy schedule."""

    rho: float = 1.0
    step: StepSchedule = field(default_factory=StepSchedule)
    privacy: PrivacySchedule = field(default_factory=lambda: PrivacySchedule(kind="none"))

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", _positive("rho", self.rho))
        if not isinstance(self.step, StepSchedule):
            raise TypeError(f"step must be a StepSchedule, got {self.step!r}")
        if not isinstance(self.privacy, PrivacySchedule):
            raise TypeError(f"privacy must be a PrivacySchedule, got {self.privacy!r}")


# ------------------------------------------------------------------------------------------------------------------
# The algorithm


@dataclass(frozen=True, kw_only=True)
class NFLRun:
    r"""Output of :func:`run_zcdp_nfl`.

    ``w``, ``w_tilde``, ``gamma``: final iterates (runs, K, P); ``w_hat``: :math:`\hat w^{(T)} = \frac1T\sum_{n=1}^T\tilde w^{(n)}`;
    ``ne``: :math:`NE(n)`, n = 0..T, shape (runs, T + 1) (None without ``w_c``); ``etas``: :math:`\eta^{(1..T)}`;
    ``variances``/``budgets``: :math:`\sigma_k^2(n)`, :math:`\phi_k^{(n)}` (T, K); ``total_zcdp``:
    :math:`\max_k\sum_n\phi_k^{(n)}` (inf without noise); ``epsilon``: Bun-Steinke
    :math:`\Phi + 2\sqrt{\Phi\log(1/\delta)}`; ``privacy_certified``: whether the calibration's ``c1`` bounds the
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
    Vectorised: each round is a handful of array operations on (runs, K, P) blocks and one product with
    the K x K adjacency matrix; no Python loop over agents. The privacy accounting (``budgets``,
    ``total_zcdp``, ``epsilon``) is that of Theorem I composed over rounds (P2 App. C, zCDP composition),
    converted with Bun & Steinke 2016, Prop. 1.3.
    """
    from theory.privacy.conversions import zcdp_to_approx_dp_bun_steinke

    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be an integer >= 1, got {iterations!r}")
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be an integer >= 1, got {runs!r}")
    K, P, T, rho = problem.K, problem.P, iterations, config.rho
    etas = config.step.etas(T)
    variances = config.privacy.variances(problem, rho, etas)
    budgets = config.privacy.budgets(problem, rho, etas)
    sigma = np.sqrt(variances)
    A = problem.adjacency.astype(np.float64)
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
    noisy = config.privacy.kind != "none"
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
    total = float(np.max(budgets.sum(axis=0))) if noisy else math.inf
    epsilon = float(zcdp_to_approx_dp_bun_steinke(total, config.privacy.delta)) if noisy else math.inf
    bound = problem.gradient_bound
    # rows normalised to ||x|| = 1 carry a few ulps of rounding: allow 8 eps relative
    certified = bool(noisy and bound is not None and bound <= config.privacy.c1 * (1.0 + 8.0 * np.finfo(float).eps))
    return NFLRun(w=w, w_tilde=w_tilde, gamma=gamma, w_hat=w_sum / n, ne=ne, etas=_readonly(etas),
                  variances=_readonly(variances), budgets=_readonly(budgets), total_zcdp=total, epsilon=epsilon,
                  privacy_certified=certified, diverged=diverged, trajectory=traj)


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
    w = _primal_step(w_tilde, A @ w_tilde, gamma, g, 1.0 / eta, d, rho)
    xi = sigma[None, :, None] * rng.normal(size=w.shape) if sigma is not None else np.zeros_like(w)
    w_tilde = w + xi
    gamma = gamma + rho * (d * w_tilde - A @ w_tilde)
    return w, w_tilde, gamma, xi


def run_arm(problem: NFLProblem, config: NFLConfig, iterations: int, seed: int, w_c) -> np.ndarray:
    r"""One arm on one replicate seed: the error curve :math:`NE(n)`, n = 0..T, shape (T + 1,).

    The building block for paired-arm comparisons (spec 6): the noise is drawn from
    ``numpy.random.default_rng(seed)``, so two arms run with the same seed share their draws where their
    shapes agree (common random numbers).
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    run = run_zcdp_nfl(problem, config, iterations, np.random.default_rng(seed), runs=1, w_c=w_c)
    return run.ne[0]
