r"""NPFL-RL problem instances: the networked clustered ridge-regression problem and the
I0 (docs/papers/npfl_rl.md#instance-i0) generator.

An :class:`NPFLProblem` is one graph with cluster labels and per-client training, validation and test data
(ragged: client :math:`k` has :math:`D_k` rows). It stores the sufficient statistics the algorithm needs as
client-stacked arrays (:math:`H_k = X_k^\top X_k/D_k`, :math:`b_k`, and the same for validation and test) and the
inter-cluster weights :math:`\omega_{k,r}` of both empty-neighbour conventions.

References
----------
.. [1] seed 004_180cd372987d137b.txt, thesis Chapter 6, lines 1606-1625 (problem), 1714 (set-up);
   Publication 7, lines 3457-3477, 3570-3575.
.. [2] docs/papers/npfl_rl.md: conventions
       E0 (docs/papers/npfl_rl.md#choice-empty-cluster)/E1 (docs/papers/npfl_rl.md#choice-empty-cluster) (C-npfl-1,
       erratum D12 (docs/papers/npfl_rl.md#erratum-d12)), the generator I0 (C-npfl-6),
       errata D16-D17 (docs/papers/npfl_rl.md#erratum-d16 to #erratum-d17).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import InitVar, dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from theory._validate import readonly

__all__ = ["CONVENTIONS", "GRAPH_SAMPLERS", "PAIRS_SAMPLER_MAX_PAIRS", "NPFLProblem", "as_graph",
           "estimate_graph_draws", "intra_cluster_components", "synthetic_problem"]

CONVENTIONS = ("E0", "E1")
#: Graph samplers of :func:`synthetic_problem`.
GRAPH_SAMPLERS = ("auto", "pairs", "linear")
#: ``sampler="auto"`` draws one uniform per pair of clients (the historical draws) up to this many pairs (2,000
#: clients), and the edges only above.
PAIRS_SAMPLER_MAX_PAIRS = 2_000_000


def _components(adjacency) -> np.ndarray:
    """Connected-component index of every node, numbered in the order of each component's smallest node
    (breadth-first search, time linear in the nodes and edges; ``adjacency`` dense bool or scipy.sparse)."""
    graph = adjacency if sp.issparse(adjacency) else sp.csr_array(np.asarray(adjacency, dtype=bool))
    return csgraph.connected_components(graph, directed=False)[1].astype(np.int64)


def _same_cluster(adjacency, labels: np.ndarray):
    """The edges of ``adjacency`` (dense bool or sparse) that join clients of one cluster, in the same format."""
    if not sp.issparse(adjacency):
        return np.asarray(adjacency, dtype=bool) & (labels[:, None] == labels[None, :])
    A = sp.csr_array(adjacency, copy=True)
    A.sum_duplicates()
    A.eliminate_zeros()
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    keep = labels[rows] == labels[A.indices]
    return _bool_csr(rows[keep], A.indices[keep], A.shape[0])


def intra_cluster_components(adjacency, labels) -> np.ndarray:
    """Component index (0..C-1) of every client in its cluster's subgraph :math:`G_q` (docs/papers/npfl_rl.md);
    ``adjacency`` dense or scipy.sparse, time linear in the clients and the edges (after the dense scan)."""
    labels = np.asarray(labels)
    return _components(_same_cluster(adjacency, labels))


def _bool_csr(rows: np.ndarray, cols: np.ndarray, K: int) -> sp.csr_array:
    """The (K, K) bool CSR with ones at (``rows``, ``cols``) (distinct pairs, sorted by row then column)."""
    indptr = np.zeros(K + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=K), out=indptr[1:])
    A = sp.csr_array((np.ones(rows.size, dtype=bool), np.asarray(cols, dtype=np.int64), indptr), shape=(K, K))
    A.has_sorted_indices = True
    return A


def as_graph(adjacency) -> sp.csr_array:
    """A symmetric (K, K) adjacency with a zero diagonal, dense (every nonzero entry is an edge) or scipy.sparse, as
    a canonical read-only bool ``scipy.sparse.csr_array`` (sorted indices, no duplicates, no stored zeros).

    Checks in time linear in the edges for sparse input. ValueError names ``adjacency``.

    >>> G = as_graph(np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]]))
    >>> (G.nnz, G.dtype.name, G.toarray()[1].tolist())
    (4, 'bool', [True, False, True])
    """
    if sp.issparse(adjacency):
        A = sp.csr_array(adjacency, copy=True)
    else:
        A = np.asarray(adjacency)
        if A.ndim != 2 or A.dtype.kind not in "biuf":
            raise ValueError(f"adjacency must be a square (K, K) matrix with K >= 2, got shape {A.shape} dtype "
                             f"{A.dtype}")
        A = sp.csr_array(A.astype(bool))
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] < 2:
        raise ValueError(f"adjacency must be a square (K, K) matrix with K >= 2, got shape {A.shape}")
    K = A.shape[0]
    A.sum_duplicates()
    A.data = A.data.astype(bool)
    A.eliminate_zeros()
    rows = np.repeat(np.arange(K, dtype=np.int64), np.diff(A.indptr))
    cols = A.indices.astype(np.int64)
    # symmetric iff the transposed pairs, sorted by (row, column), are the same pairs
    t_order = np.lexsort((rows, cols))
    if np.any(rows == cols) or not (np.array_equal(cols[t_order], rows) and np.array_equal(rows[t_order], cols)):
        raise ValueError("adjacency must be symmetric with a zero diagonal")
    G = _bool_csr(rows, cols, K)
    for part in (G.data, G.indices, G.indptr):
        part.setflags(write=False)
    return G


@dataclass(frozen=True, kw_only=True)
class NPFLProblem:
    r"""One NPFL instance: graph :math:`G`, cluster labels :math:`q_k`, data, :math:`\lambda` and the true models.

    The graph is stored sparse (:attr:`graph`); :attr:`adjacency` and :attr:`same_cluster_adjacency` are dense
    (K, K) copies made on demand (for tests and per-client checks; nothing on the run path uses them).

    Attributes
    ----------
    adjacency : (K, K) array_like or scipy.sparse, init only
        Symmetric, zero diagonal; every nonzero entry is an edge. Stored as :attr:`graph`.
    labels : (K,) int
        Cluster :math:`q_k \in \{0, \dots, Q-1\}`; every cluster non-empty.
    X, y : tuple of arrays
        Training data :math:`X_k \in \mathbb R^{D_k\times d}`, :math:`y_k \in \mathbb R^{D_k}`.
    X_val, y_val, X_test, y_test : tuple of arrays
        Validation and test sets (any sizes; normalised by the training size :math:`D_k` as in (6.7)/(6.12),
        erratum D20 (docs/papers/npfl_rl.md#erratum-d20)).
    lam : float
        :math:`\lambda > 0`.
    true_models : (Q, d) array, optional
        Generating models :math:`w_{(q)}` (for the Test-MSE (6.15)).
    graph : scipy.sparse.csr_array (K, K) bool
        The edges of :math:`G` (each undirected edge stored twice, sorted indices, read-only): memory linear in the
        edges.
    """

    adjacency: InitVar[object]
    labels: np.ndarray
    X: tuple
    y: tuple
    X_val: tuple
    y_val: tuple
    X_test: tuple
    y_test: tuple
    lam: float
    true_models: np.ndarray | None = None
    # derived (filled in __post_init__)
    graph: sp.csr_array = field(init=False, repr=False)
    H: np.ndarray = field(init=False, repr=False)
    b: np.ndarray = field(init=False, repr=False)
    Hv: np.ndarray = field(init=False, repr=False)
    bv: np.ndarray = field(init=False, repr=False)
    cv: np.ndarray = field(init=False, repr=False)
    Ht: np.ndarray = field(init=False, repr=False)
    bt: np.ndarray = field(init=False, repr=False)
    ct: np.ndarray = field(init=False, repr=False)
    D: np.ndarray = field(init=False, repr=False)

    def __post_init__(self, adjacency) -> None:
        G = as_graph(adjacency)
        K = G.shape[0]
        labels = np.asarray(self.labels)
        if labels.shape != (K,) or labels.dtype.kind not in "iu":
            raise ValueError(f"labels must be K = {K} integers, got {self.labels!r}")
        Q = int(labels.max()) + 1
        if labels.min() < 0 or np.unique(labels).size != Q:
            raise ValueError(f"labels must use every cluster 0..Q-1 (Q = {Q}), got {sorted(set(labels.tolist()))}")
        if isinstance(self.lam, bool) or not isinstance(self.lam, numbers.Real) or not (0 < self.lam < math.inf):
            raise ValueError(f"lam must be a finite real > 0, got {self.lam!r}")
        stats = {}
        for name_x, name_y, key in (("X", "y", ""), ("X_val", "y_val", "v"), ("X_test", "y_test", "t")):
            Xs, ys = getattr(self, name_x), getattr(self, name_y)
            if len(Xs) != K or len(ys) != K:
                raise ValueError(f"{name_x} and {name_y} must hold K = {K} arrays, got {len(Xs)} and {len(ys)}")
            Xs = tuple(readonly(x, np.float64) for x in Xs)
            ys = tuple(readonly(v, np.float64) for v in ys)
            object.__setattr__(self, name_x, Xs)
            object.__setattr__(self, name_y, ys)
            stats[key] = (Xs, ys)
        d = stats[""][0][0].shape[1]
        for key, (Xs, ys) in stats.items():
            for k, (x, v) in enumerate(zip(Xs, ys, strict=True)):
                if x.ndim != 2 or x.shape[1] != d or x.shape[0] < 1 or v.shape != (x.shape[0],):
                    raise ValueError(f"client {k}: data{key} must be (D, d = {d}) with labels (D,), got {x.shape}, "
                                     f"{v.shape}")
                if not (np.all(np.isfinite(x)) and np.all(np.isfinite(v))):
                    raise ValueError(f"client {k}: data{key} must be finite")
        D = np.array([x.shape[0] for x in stats[""][0]], dtype=np.int64)
        for key, (Xs, ys) in stats.items():
            Hs = np.stack([x.T @ x for x in Xs]) / D[:, None, None]
            bs = np.stack([x.T @ v for x, v in zip(Xs, ys, strict=True)]) / D[:, None]
            cs = np.array([v @ v for v in ys]) / D
            object.__setattr__(self, "H" + key, readonly(Hs, np.float64))
            object.__setattr__(self, "b" + key, readonly(bs, np.float64))
            if key:
                object.__setattr__(self, "c" + key, readonly(cs, np.float64))
        object.__setattr__(self, "graph", G)
        object.__setattr__(self, "labels", readonly(labels, np.int64))
        object.__setattr__(self, "D", readonly(D, np.int64))
        object.__setattr__(self, "lam", float(self.lam))
        if self.true_models is not None:
            tm = np.asarray(self.true_models, dtype=np.float64)
            if tm.shape != (Q, d) or not np.all(np.isfinite(tm)):
                raise ValueError(f"true_models must be a finite (Q, d) = ({Q}, {d}) array, got shape {tm.shape}")
            object.__setattr__(self, "true_models", readonly(tm, np.float64))

    @property
    def K(self) -> int:
        return int(self.labels.size)

    @property
    def Q(self) -> int:
        return int(self.labels.max()) + 1

    @property
    def d(self) -> int:
        return int(self.H.shape[-1])

    @property
    def H_eigen(self) -> tuple[np.ndarray, np.ndarray]:
        r"""``(Lambda, U)``: the eigendecomposition of every :math:`H_k` (``numpy.linalg.eigh``, eigenvalues clipped
        at 0 since :math:`H_k` is PSD), computed once per instance and read-only (every run on it shares it)."""
        cached = self.__dict__.get("_H_eigen")
        if cached is None:
            Lam, U = np.linalg.eigh(self.H)
            Lam = np.maximum(Lam, 0.0, out=Lam)
            for part in (Lam, U):
                part.setflags(write=False)
            cached = (Lam, U)
            object.__setattr__(self, "_H_eigen", cached)
        return cached

    @property
    def cluster_sizes(self) -> np.ndarray:
        """:math:`|C_{(q_k)}|` of every client, shape (K,)."""
        return np.bincount(self.labels, minlength=self.Q)[self.labels]

    @property
    def degrees(self) -> np.ndarray:
        """:math:`|N_k|` of every client, shape (K,) int."""
        return np.diff(self.graph.indptr).astype(np.int64)

    @property
    def n_edges(self) -> int:
        """Number of undirected edges :math:`|E|` (the graph stores each twice)."""
        return int(self.graph.nnz // 2)

    @property
    def same_cluster_graph(self) -> sp.csr_array:
        """Edges of :math:`N_k \\cap C_{(q_k)}` (the intra-cluster graphs :math:`G_q`), sparse bool (K, K)."""
        return _same_cluster(self.graph, self.labels)

    @property
    def same_cluster_adjacency(self) -> np.ndarray:
        """:attr:`same_cluster_graph` as a dense (K, K) bool array, made on demand (memory quadratic in K)."""
        return self.same_cluster_graph.toarray()

    @property
    def components(self) -> np.ndarray:
        """Component index of every client in its cluster's subgraph :math:`G_q` (docs/papers/npfl_rl.md,
        erratum D12 (docs/papers/npfl_rl.md#erratum-d12))."""
        return intra_cluster_components(self.graph, self.labels)

    def neighbour_counts(self) -> np.ndarray:
        """:math:`|N_k^{(r)}| = |N_k \\cap C_{(r)}|`, shape (K, Q) int (time linear in the edges)."""
        K, Q = self.K, self.Q
        rows = np.repeat(np.arange(K), np.diff(self.graph.indptr))
        return np.bincount(rows * Q + self.labels[self.graph.indices], minlength=K * Q).reshape(K, Q)

    def inter_cluster_weights(self, convention: str = "E0") -> tuple[np.ndarray, sp.csr_array]:
        r""":math:`\omega_{k,r}` (K, Q) and the sparse averaging matrix :math:`B` (K, K) with :math:`m_k = (B w)_k`.

        E0 (docs/papers/npfl_rl.md#choice-empty-cluster): :math:`\omega_{k,r} = 1/(Q-1)` if :math:`N_k^{(r)} \ne
        \emptyset` else 0 (missing clusters dropped, the factor kept); E1 (docs/papers/npfl_rl.md#choice-empty-cluster):
        :math:`1/|R_k|` over the present clusters (docs/papers/npfl_rl.md,
        erratum D12 (docs/papers/npfl_rl.md#erratum-d12)).
        :math:`\omega_{k,q_k} = 0`. :math:`B_{kl} = \omega_{k,q_l}/|N_k^{(q_l)}|` for
        :math:`l \in N_k \setminus C_{(q_k)}`, stored as a ``scipy.sparse.csr_array`` of float64 with one entry per
        inter-cluster edge direction (time and memory linear in K Q and the edges; ``B.toarray()`` is the dense
        matrix).
        """
        if convention not in CONVENTIONS:
            raise ValueError(f"convention must be one of {CONVENTIONS}, got {convention!r}")
        counts = self.neighbour_counts()
        present = (counts > 0) & (np.arange(self.Q)[None, :] != self.labels[:, None])
        if self.Q == 1:
            omega = np.zeros((self.K, 1))
        elif convention == "E0":
            omega = present / (self.Q - 1.0)
        else:
            n_present = present.sum(axis=1, keepdims=True)
            omega = np.where(present, 1.0 / np.maximum(n_present, 1), 0.0)
        per_edge = omega / np.maximum(counts, 1)  # (K, Q)
        G = self.graph
        rows = np.repeat(np.arange(self.K), np.diff(G.indptr))
        cols = G.indices
        inter = self.labels[rows] != self.labels[cols]
        rows, cols = rows[inter], cols[inter]
        indptr = np.zeros(self.K + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=self.K), out=indptr[1:])
        B = sp.csr_array((per_edge[rows, self.labels[cols]], cols.astype(np.int64), indptr), shape=(self.K, self.K))
        B.has_sorted_indices = True
        return omega, B


def _dense_adjacency(problem: NPFLProblem) -> np.ndarray:
    A = problem.graph.toarray()
    A.setflags(write=False)
    return A


NPFLProblem.adjacency = property(_dense_adjacency, doc="""The graph as a dense (K, K) bool array (read-only), made on
    demand from :attr:`NPFLProblem.graph`: memory quadratic in K, for tests and per-client checks only.""")


def _connected(A) -> bool:
    return bool(np.all(_components(A) == 0))


def _linear_graph(rng: np.random.Generator, K: int, p: float):
    """G(K, p) as a sparse symmetric bool adjacency: geometric gaps between the chosen pairs of the upper triangle
    (enumerated column by column), time and memory linear in K and the edges."""
    N = K * (K - 1) // 2
    parts, last = [], -1
    if p >= 1.0:
        parts.append(np.arange(N, dtype=np.int64))
    elif p > 0.0:
        while True:
            expected = (N - 1 - last) * p
            idx = last + np.cumsum(rng.geometric(p, size=int(expected + 4.0 * math.sqrt(expected) + 16)))
            parts.append(idx[idx < N])
            if idx[-1] >= N:
                break
            last = int(idx[-1])
    idx = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    j = np.floor((1.0 + np.sqrt(1.0 + 8.0 * idx.astype(np.float64))) / 2.0).astype(np.int64)
    j -= (j * (j - 1) // 2 > idx)  # integer corrections of the floating-point root
    j += ((j + 1) * j // 2 <= idx)
    i = idx - j * (j - 1) // 2
    rows, cols = np.concatenate([i, j]), np.concatenate([j, i])
    return sp.csr_array((np.ones(rows.size, dtype=bool), (rows, cols)), shape=(K, K))


def estimate_graph_draws(K: int, mean_degree: float) -> dict:
    r"""How many Erdős–Rényi draws :func:`synthetic_problem` should expect before a connected one, from K and the
    mean degree alone (:math:`p = \bar d/(K-1)`).

    ``expected_isolated`` :math:`\mu = K(1-p)^{K-1}` is exact; ``p_connected`` :math:`\approx e^{-\mu}` is the
    classical limit (Erdős & Rényi 1960: the graph is connected exactly when it has no isolated node, with
    probability tending to :math:`e^{-\mu}`), an approximation that errs high (connectivity needs more than no
    isolated node); ``expected_draws`` = 1 / ``p_connected`` (inf when it underflows). A mean degree of about
    :math:`\ln K + 3` keeps ``expected_draws`` near 1; at a fixed mean degree the draws grow like
    :math:`e^{K e^{-\bar d}}`: for :math:`\bar d = 6`, about 1.2 at K = 100, 11 at K = 1,000 and 2e4 at K = 4,000 (above
    the default ``max_draws``).

    >>> round(estimate_graph_draws(30, 6.0)["expected_draws"], 2)
    1.04
    """
    if isinstance(K, bool) or not isinstance(K, numbers.Integral) or K < 2:
        raise ValueError(f"K must be an integer >= 2, got {K!r}")
    if not (0 < mean_degree <= K - 1):
        raise ValueError(f"mean_degree must be in (0, K-1 = {K - 1}], got {mean_degree!r}")
    p = mean_degree / (K - 1)
    mu = K * math.exp((K - 1) * math.log1p(-p)) if p < 1.0 else 0.0
    p_connected = math.exp(-mu)
    return {"p": p, "expected_isolated": mu, "p_connected": p_connected,
            "expected_draws": 1.0 / p_connected if p_connected > 0.0 else math.inf}


def synthetic_problem(rng: np.random.Generator, *, K: int = 30, Q: int = 3, d: int = 60, mean_degree: float = 6.0,
                      D_range: tuple[int, int] = (5, 35), noise_range: tuple[float, float] = (0.005, 0.03),
                      lam: float = 0.1, delta_half_width: float = 0.5, delta_kind: str = "scalar",
                      symmetric: bool = False, max_draws: int = 10_000,
                      sampler: str = "auto") -> tuple[NPFLProblem, dict]:
    r"""Generator I0 (docs/papers/npfl_rl.md#instance-i0) (C-npfl-6): ER graph redrawn until connected, uniform labels,
    :math:`w_q = (1+\delta_q) w_0`.

    Every choice the seed leaves open is an argument (C-npfl-6): Erdős–Rényi with
    :math:`p = \text{mean\_degree}/(K-1)` (erratum D16, docs/papers/npfl_rl.md#erratum-d16), :math:`w_0 \sim N(0, I_d)`,
    :math:`\delta_q \sim U(\pm \text{delta\_half\_width})` scalar or elementwise
    (erratum D17, docs/papers/npfl_rl.md#erratum-d17), :math:`D_k \sim U\{D_{\min},\dots,D_{\max}\}`, Gaussian features,
    noise variance :math:`\eta_k \sim U(\text{noise\_range})` (renamed :math:`\sigma_k^2`,
    erratum D18 (docs/papers/npfl_rl.md#erratum-d18)), validation and test sets with :math:`D_k` rows each
    (erratum D20, docs/papers/npfl_rl.md#erratum-d20). ``symmetric=True`` redraws until every :math:`G_q` is connected
    and every :math:`N_k^{(r)}` is non-empty (K4 (docs/papers/npfl_rl.md#k4)'s symmetric case).

    ``sampler`` draws each graph: ``"pairs"`` one uniform per pair of clients (time and memory quadratic in K, the
    draws every recorded result was made with), ``"linear"`` only the edges (geometric gaps; time linear in K and the
    edges; connectivity by breadth-first search), ``"auto"`` (default) the first up to
    :data:`PAIRS_SAMPLER_MAX_PAIRS` pairs and the second above. Both are exact G(K, p) samplers; one seed gives
    different graphs. The instance (:class:`NPFLProblem`) stores the graph sparse either way. At a fixed mean degree
    a connected draw becomes exponentially rare as K grows (:func:`estimate_graph_draws`).

    Returns
    -------
    (NPFLProblem, dict)
        The instance and the generator's draws (``w0``, ``deltas``, ``noise_var``).
    """
    for name, v, lo in (("K", K, 2), ("Q", Q, 1), ("d", d, 1), ("max_draws", max_draws, 1)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
            raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    if Q > K:
        raise ValueError(f"Q must be <= K = {K}, got {Q}")
    if not (0 < mean_degree <= K - 1):
        raise ValueError(f"mean_degree must be in (0, K-1 = {K - 1}], got {mean_degree!r}")
    if not (1 <= D_range[0] <= D_range[1]):
        raise ValueError(f"D_range must be (lo, hi) with 1 <= lo <= hi, got {D_range!r}")
    if not (0 <= noise_range[0] <= noise_range[1]):
        raise ValueError(f"noise_range must be (lo, hi) with 0 <= lo <= hi, got {noise_range!r}")
    if sampler not in GRAPH_SAMPLERS:
        raise ValueError(f"sampler must be one of {', '.join(map(repr, GRAPH_SAMPLERS))}, got {sampler!r}")
    if delta_kind not in ("scalar", "elementwise"):
        raise ValueError(f"delta_kind must be 'scalar' or 'elementwise', got {delta_kind!r}")
    if not (delta_half_width >= 0):
        raise ValueError(f"delta_half_width must be >= 0, got {delta_half_width!r}")
    p = mean_degree / (K - 1)
    pairs = sampler == "pairs" or (sampler == "auto" and K * (K - 1) // 2 <= PAIRS_SAMPLER_MAX_PAIRS)
    iu = np.triu_indices(K, 1) if pairs else None
    for _ in range(max_draws):
        if pairs:
            A = np.zeros((K, K), dtype=bool)
            A[iu] = rng.random(iu[0].size) < p
            A = A | A.T
        else:
            A = _linear_graph(rng, K, p)
        labels = rng.integers(0, Q, size=K)
        if np.unique(labels).size != Q or not _connected(A):
            continue
        if symmetric:
            cnt = A.astype(np.int64) @ np.eye(Q, dtype=np.int64)[labels]
            other = np.arange(Q)[None, :] != labels[:, None]
            if np.any((cnt == 0) & other) or np.unique(intra_cluster_components(A, labels)).size != Q:
                continue
        break
    else:
        raise RuntimeError(f"no admissible graph in max_draws = {max_draws} draws (K = {K}, mean_degree = "
                           f"{mean_degree}, symmetric = {symmetric})")
    w0 = rng.normal(size=d)
    deltas = rng.uniform(-delta_half_width, delta_half_width, size=(Q,) if delta_kind == "scalar" else (Q, d))
    W = (1.0 + deltas)[:, None] * w0 if delta_kind == "scalar" else (1.0 + deltas) * w0
    D = rng.integers(D_range[0], D_range[1] + 1, size=K)
    noise_var = rng.uniform(noise_range[0], noise_range[1], size=K)
    sets = {}
    for key in ("", "_val", "_test"):
        Xs, ys = [], []
        for k in range(K):
            x = rng.normal(size=(int(D[k]), d))
            Xs.append(x)
            ys.append(x @ W[labels[k]] + math.sqrt(noise_var[k]) * rng.normal(size=int(D[k])))
        sets["X" + key], sets["y" + key] = tuple(Xs), tuple(ys)
    problem = NPFLProblem(adjacency=A, labels=labels, lam=lam, true_models=W, **sets)
    return problem, {"w0": w0, "deltas": deltas, "noise_var": noise_var, "p": p}
