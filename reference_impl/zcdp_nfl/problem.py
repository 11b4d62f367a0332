r"""zCDP-NFL instances: graph, local data and the objective :math:`f_k`.

:class:`NFLProblem` holds a connected graph (a sparse adjacency: memory and neighbour sums linear in the edges),
equal-size local data sets and one of the three objectives of the paper's experiments (elastic net, least absolute
deviation, ridge), with their (sub)gradients and objective values vectorised over leading (run) axes;
:func:`synthetic_problem` is the instance generator of docs/papers/zcdp_nfl.md; :func:`normalized_error` the paper's
error metric; :func:`graph_product` a graph matrix (adjacency, Laplacian, consensus weights) applied to client rows.

References
----------
.. [1] "zCDP-NFL" (P2 of the thesis, seed 004_180cd372987d137b.txt), Publication 2, eqs. (1)-(4), lines 1949-1972;
   simulations, lines 2205-2232; thesis Chapter 3, lines 500-520, 742-781; docs/papers/zcdp_nfl.md (notation,
   objectives, subgradients, the instance generator).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx
import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from theory._validate import positive_int, readonly, real_scalar

__all__ = ["OBJECTIVES", "NFLProblem", "as_sparse_adjacency", "elastic_net_lambda1", "graph_product",
           "normalized_error", "synthetic_problem"]

OBJECTIVES = ("elastic_net", "lad", "ridge")


def elastic_net_lambda1(X, y) -> float:
    r"""The paper's :math:`\lambda_1 = 0.001\,\lVert X^\top y\rVert_\infty` on the stacked data of all clients.

    References
    ----------
    .. [1] seed 004_180cd372987d137b.txt, thesis line 758, Publication 2 line 2218 (the clients' data stacked,
       docs/papers/zcdp_nfl.md).
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    return 0.001 * float(np.max(np.abs(X.reshape(-1, X.shape[-1]).T @ y.reshape(-1))))


def as_sparse_adjacency(adjacency) -> sp.csr_array:
    """A symmetric 0/1 (K, K) adjacency with zero diagonal, dense or sparse, as a canonical read-only int64
    ``scipy.sparse.csr_array`` (sorted indices, no duplicates, no stored zeros); checks in time linear in the edges
    for sparse input. ValueError names ``adjacency``.

    >>> A = as_sparse_adjacency(np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]]))
    >>> (A.nnz, A.dtype.name, A.toarray()[1].tolist())
    (4, 'int64', [1, 0, 1])
    """
    if sp.issparse(adjacency):
        A = sp.csr_array(adjacency, copy=True)
    else:
        dense = np.asarray(adjacency)
        if dense.ndim != 2 or dense.dtype.kind not in "biuf":
            raise ValueError(f"adjacency must be a square (K, K) 0/1 matrix with K >= 2, got shape {dense.shape} "
                             f"dtype {dense.dtype}")
        A = sp.csr_array(dense)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] < 2:
        raise ValueError(f"adjacency must be a square (K, K) matrix with K >= 2, got shape {A.shape}")
    A.sum_duplicates()
    A.eliminate_zeros()
    if not np.all(A.data == 1) or (A - A.T).count_nonzero() or np.any(A.diagonal() != 0):
        raise ValueError("adjacency must be a symmetric 0/1 matrix with zero diagonal")
    A = sp.csr_array((np.ones(A.nnz, dtype=np.int64), A.indices.astype(np.int64), A.indptr.astype(np.int64)),
                     shape=A.shape)
    A.has_sorted_indices = True
    for part in (A.data, A.indices, A.indptr):
        part.setflags(write=False)
    return A


def graph_product(M, x) -> np.ndarray:
    r""":math:`(M \otimes I_P)\,x`: a (K, K) graph matrix ``M`` (dense or scipy.sparse) applied over the client
    axis of ``x`` (..., K, P), e.g. the neighbour sums :math:`\sum_{l\in\mathcal N_k} x_l` for the adjacency.

    Sparse ``M``: one sparse product on a (K, runs * P) view, work proportional to the stored entries times the
    runs and P (no K x K array); dense ``M``: ``M @ x``.

    >>> A = as_sparse_adjacency(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]]))
    >>> x = np.arange(12.0).reshape(2, 3, 2)
    >>> bool(np.array_equal(graph_product(A, x), A.toarray() @ x))
    True
    """
    x = np.asarray(x, dtype=np.float64)
    if not sp.issparse(M):
        return M @ x
    if x.ndim == 2:
        return M @ x
    K, P = x.shape[-2:]
    lead = x.shape[:-2]
    runs = x.reshape(-1, K, P)
    if runs.shape[0] == 1:
        return (M @ runs[0]).reshape(x.shape)
    out = M @ np.moveaxis(runs, 0, 1).reshape(K, -1)  # (K, runs * P)
    return np.moveaxis(out.reshape(K, -1, P), 1, 0).reshape(*lead, K, P)


@dataclass(frozen=True, kw_only=True)
class NFLProblem:
    r"""A networked learning problem: graph, local data and the objective :math:`f_k`.

    .. math:: f_k(w) = \frac{1}{M}\sum_{j=1}^{M}\ell(x_{k,j}, y_{k,j}; w) + \frac{\lambda}{K}R(w),
              \qquad F(w) = \sum_k f_k(w)

    Attributes
    ----------
    adjacency : ndarray or scipy.sparse matrix, shape (K, K)
        Symmetric 0/1 adjacency of a connected graph, zero diagonal; kept as a read-only
        ``scipy.sparse.csr_array`` of int64 (:func:`as_sparse_adjacency`), so nothing is K x K.
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

    adjacency: sp.csr_array
    X: np.ndarray
    y: np.ndarray
    objective: str
    lam: float = 1.0
    lam1: float | None = None
    lam2: float = 1.0
    clip: float | None = None
    _degree: np.ndarray = field(init=False, repr=False, compare=False)
    _XT: np.ndarray = field(init=False, repr=False, compare=False)
    _row_norms: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {self.objective!r}")
        A = as_sparse_adjacency(self.adjacency)
        if csgraph.connected_components(A, directed=False, return_labels=False) != 1:
            raise ValueError("adjacency must describe a connected graph (Lemma II and Theorems II-IV assume it)")
        object.__setattr__(self, "adjacency", A)
        K = A.shape[0]
        X, y = np.asarray(self.X, dtype=np.float64), np.asarray(self.y, dtype=np.float64)
        if X.ndim != 3 or X.shape[0] != K or X.shape[1] < 1 or X.shape[2] < 1:
            raise ValueError(f"X must have shape (K, M, P) = ({K}, M >= 1, P >= 1), got {X.shape}")
        if y.shape != X.shape[:2]:
            raise ValueError(f"y must have shape (K, M) = {X.shape[:2]}, got {y.shape}")
        if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
            raise ValueError("X and y must be finite")
        object.__setattr__(self, "X", readonly(X, np.float64))
        object.__setattr__(self, "y", readonly(y, np.float64))
        object.__setattr__(self, "lam", real_scalar("lam", self.lam, "[0, inf)"))
        object.__setattr__(self, "lam2", real_scalar("lam2", self.lam2, "[0, inf)"))
        lam1 = elastic_net_lambda1(X, y) if self.lam1 is None else real_scalar("lam1", self.lam1, "[0, inf)")
        object.__setattr__(self, "lam1", float(lam1))
        if self.clip is not None:
            if self.objective == "lad":
                raise ValueError("clip must be None for objective 'lad' (its subgradients are bounded by ||x||)")
            object.__setattr__(self, "clip", real_scalar("clip", self.clip, "(0, inf)"))
        object.__setattr__(self, "_degree", readonly(np.diff(A.indptr), np.int64))
        object.__setattr__(self, "_XT", readonly(np.swapaxes(self.X, 1, 2), np.float64))
        object.__setattr__(self, "_row_norms", readonly(np.linalg.norm(self.X, axis=-1), np.float64))

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
        return int(self.adjacency.nnz // 2)

    def laplacian(self, sign: int = -1) -> sp.csr_array:
        """:math:`\\mathrm{Deg} + \\mathrm{sign}\\cdot\\mathrm{Adj}` (K x K, sparse float64): the signed (-1) or
        signless (+1) Laplacian; ``.toarray()`` for a dense copy."""
        return sp.csr_array(sp.diags_array(self.degree.astype(np.float64)) + sign * self.adjacency.astype(np.float64))

    def neighbour_sum(self, x) -> np.ndarray:
        r""":math:`\sum_{l\in\mathcal N_k} x_l` for client rows ``x`` of shape (..., K, P): linear in the edges."""
        return graph_product(self.adjacency, x)

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
            data = self._clipped_mean(w)
        return data + self.regularizer_subgradient(w)

    def _clipped_mean(self, w) -> np.ndarray:
        r""":math:`\frac1M\sum_j\ell'(x_{k,j}, y_{k,j}; w_k)` of the clipped squared loss without the (..., K, M, P)
        per-sample array: the clipped gradient of sample j is :math:`2r_jx_j\min(1, c_1/(2|r_j|\lVert x_j\rVert))`, so
        the mean is one weighted sum of the rows per client (batched matmul), the row norms computed once. The same
        numbers as ``per_sample_subgradients(w).mean(axis=-2)`` up to a few roundings (the norm of a product, the
        order of the sum)."""
        residual = np.einsum("kmp,...kp->...km", self.X, w) - self.y
        norm = 2.0 * np.abs(residual) * self._row_norms
        weights = residual * np.minimum(1.0, self.clip / np.maximum(norm, np.finfo(float).tiny))
        return (2.0 / self.M) * (self._XT @ weights[..., None])[..., 0]

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
    r"""The instance generator of docs/papers/zcdp_nfl.md: a connected :math:`G(K, m)`,
    :math:`m = \mathrm{round}(K\bar d/2)` edges.

    Rows :math:`x_{k,j} \sim \mathcal N(0, I_P)` rescaled to :math:`\lVert x\rVert \le 1`
    (:math:`x/\max(1, \lVert x\rVert)`), truth :math:`w^o \sim \mathcal N(0, I_P)` (its first
    ``zero_coordinates`` entries set to 0), client truths :math:`w^o + h\,\mathcal N(0, I_P)` with
    ``heterogeneity`` :math:`h` (heterogeneous clients), :math:`y = x^\top w^o_k + v`,
    :math:`v \sim \mathcal N(0, \sigma_v^2)`. The Erdős-Rényi graph is resampled until connected
    (at most 1000 draws) unless ``graph`` is given. Time and memory linear in K and the edges (networkx's
    :math:`G(K, m)` draws pairs until it has m edges; the adjacency is kept sparse).
    """
    K, P, M = positive_int("K", K, 2), positive_int("P", P), positive_int("M", M)
    if isinstance(zero_coordinates, bool) or not isinstance(zero_coordinates, int) or not 0 <= zero_coordinates < P:
        raise ValueError(f"zero_coordinates must be an integer in [0, P) = [0, {P}), got {zero_coordinates!r}")
    real_scalar("noise_std", noise_std, "[0, inf)")
    real_scalar("heterogeneity", heterogeneity, "[0, inf)")
    if graph is None:
        edges = int(round(K * real_scalar("mean_degree", mean_degree, "(0, inf)") / 2.0))
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
    A = nx.to_scipy_sparse_array(graph, nodelist=sorted(graph.nodes()), dtype=np.int64, format="csr")
    X = rng.normal(size=(K, M, P))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=-1, keepdims=True))
    w_o = rng.normal(size=P)
    w_o[:zero_coordinates] = 0.0
    truths = w_o + heterogeneity * rng.normal(size=(K, P))
    y = np.einsum("kmp,kp->km", X, truths) + noise_std * rng.normal(size=(K, M))
    return NFLProblem(adjacency=A, X=X, y=y, objective=objective, lam=lam, lam2=lam2, clip=clip)


def normalized_error(problem: NFLProblem, w, w_c) -> np.ndarray:
    r"""The paper's metric :math:`NE = \sum_k\lVert w_k - w_c\rVert^2/\lVert w_c\rVert^2` of iterates (..., K, P).

    An iterate beyond about 1e154 (a diverging run, stopped at the round it crosses the divergence threshold) has
    :math:`NE = \infty`, its value in floating point: the square's overflow is that value, not an error, and warns
    nothing."""
    w_c = np.asarray(w_c, dtype=np.float64)
    with np.errstate(over="ignore"):
        return np.sum((np.asarray(w) - w_c) ** 2, axis=(-2, -1)) / float(w_c @ w_c)


