r"""Instances of the GTV paper's experiments (docs/papers/gtv.md#experiments; seed 002_26677b31336d654c.txt, Section
VI).

* :func:`sbm_instance`: the stochastic block model of §5.1 / §5.2 (two or several clusters), data (39)/(40),
  its graph by :func:`sbm_edges` (linear in the edges) and its cost by :func:`estimate_sbm_cost`;
* :func:`chain_instance`: the chain of §5.3 (2n nodes, one inter-cluster edge of weight ε, accessible subset M);
* :func:`dense_clusters_instance`: complete clusters with a light boundary (docs/papers/gtv.md#instances, recipe for
  well-connected instances);
* :func:`digits_instance`: a convex stand-in for §5.4 on scikit-learn's bundled 8x8 digits (offline);
* :func:`digits_split`: the same with train / validation parts per node and a held-out test pool per cluster
  (:class:`DigitsSplit`: λ chosen on validation, accuracy on the held-out test part);
* :func:`load_npz_instance` / :func:`save_npz_instance`: a user's data set as ``.npz``.

Randomness only through the ``rng`` argument.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import numpy as np

from theory.gtv.instance import GTVInstance

__all__ = ["NPZ_KEYS", "SBM_NETWORKX_MAX_PAIRS", "SBM_SAMPLERS", "DigitsSplit", "SBMCost", "chain_instance",
           "dense_clusters_instance", "digits_instance", "digits_split", "estimate_sbm_cost", "load_npz_instance",
           "planted_parameters", "save_npz_instance", "sbm_edges", "sbm_instance"]


def planted_parameters(rng: np.random.Generator, k: int, d: int) -> np.ndarray:
    r"""True cluster parameters :math:`\bar w^{(c)} \in \{0, 0.5\}^d`, entries 0.5·Bernoulli(1/2) (L568,
    erratum E10 (docs/papers/gtv.md#erratum-e10))."""
    return 0.5 * rng.integers(0, 2, size=(k, d)).astype(np.float64)


def _regression_data(rng, w_true, m, noise):
    """Features N(0, I) and labels y = w^T x + noise * N(0, 1) ((39)), padded to max(m)."""
    n, d = w_true.shape
    m = np.asarray(m, dtype=np.int64)
    m_max = max(int(m.max()), 1)
    X = rng.normal(size=(n, m_max, d))
    X[np.arange(m_max)[None, :] >= m[:, None]] = 0.0
    y = np.einsum("nrj,nj->nr", X, w_true) + noise * rng.normal(size=(n, m_max))
    y[np.arange(m_max)[None, :] >= m[:, None]] = 0.0
    return X, y


def _edges_of(G: nx.Graph) -> np.ndarray:
    return np.array(sorted((min(a, b), max(a, b)) for a, b in G.edges()), dtype=np.int64).reshape(-1, 2)


#: Graph samplers of :func:`sbm_instance`.
SBM_SAMPLERS = ("auto", "linear", "networkx")
#: ``sampler="auto"`` keeps networkx's draws up to this many pairs of nodes (2,000 nodes; about a second).
SBM_NETWORKX_MAX_PAIRS = 2_000_000


def _bernoulli_indices(rng: np.random.Generator, N: int, p: float) -> np.ndarray:
    """Sorted indices in [0, N), each kept independently with probability ``p``: geometric gaps between kept indices
    (Batagelj & Brandes 2005), drawn in blocks; time and memory linear in the number kept."""
    if N <= 0 or p <= 0.0:
        return np.zeros(0, dtype=np.int64)
    if p >= 1.0:
        return np.arange(N, dtype=np.int64)
    parts, last = [], -1
    while True:
        expected = (N - 1 - last) * p
        block = int(expected + 4.0 * math.sqrt(expected) + 16)
        idx = last + np.cumsum(rng.geometric(p, size=block))
        parts.append(idx[idx < N])
        if idx[-1] >= N:
            return np.concatenate(parts)
        last = int(idx[-1])


def _triangle_pairs(idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pair ``(i, j)``, ``i < j``, of each index into the pairs enumerated column by column: idx = j(j-1)/2 + i."""
    j = np.floor((1.0 + np.sqrt(1.0 + 8.0 * idx.astype(np.float64))) / 2.0).astype(np.int64)
    j -= (j * (j - 1) // 2 > idx)  # integer corrections of the floating-point root
    j += ((j + 1) * j // 2 <= idx)
    return idx - j * (j - 1) // 2, j


def sbm_edges(rng: np.random.Generator, sizes, probs) -> np.ndarray:
    r"""Edges of a stochastic block model: every pair of nodes of blocks :math:`a, b` independently with probability
    ``probs[a][b]``; time and memory linear in the nodes and the edges drawn.

    Nodes are numbered block by block. Within each block pair the chosen pairs are the Bernoulli draws of
    :func:`_bernoulli_indices` over an enumeration of the pairs: no pass over all :math:`n^2` pairs (networkx's
    ``stochastic_block_model`` makes one, with a Python call per pair inside a block).

    Parameters
    ----------
    rng : numpy.random.Generator
    sizes : sequence of int
        Block sizes (>= 1).
    probs : (k, k) array_like
        Symmetric edge probabilities in [0, 1].

    Returns
    -------
    ndarray, shape (E, 2), int64
        Pairs ``(i, j)``, ``i < j``, sorted lexicographically.

    Examples
    --------
    >>> e = sbm_edges(np.random.default_rng(0), (300, 300), [[0.1, 0.0], [0.0, 0.1]])
    >>> bool(np.all(e[:, 0] < e[:, 1]) and np.all((e[:, 0] < 300) == (e[:, 1] < 300)))
    True
    """
    sizes = [int(v) for v in sizes]
    probs = np.asarray(probs, dtype=np.float64)
    k = len(sizes)
    if k < 1 or min(sizes) < 1 or probs.shape != (k, k) or not np.array_equal(probs, probs.T) or not np.all(
            (probs >= 0.0) & (probs <= 1.0)):
        raise ValueError(f"sizes must be k >= 1 block sizes >= 1 and probs a symmetric (k, k) array in [0, 1], got "
                         f"sizes {sizes} and probs of shape {probs.shape}")
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    parts = []
    for a in range(k):
        for b in range(a, k):
            if a == b:
                idx = _bernoulli_indices(rng, sizes[a] * (sizes[a] - 1) // 2, float(probs[a, a]))
                i, j = _triangle_pairs(idx)
            else:
                idx = _bernoulli_indices(rng, sizes[a] * sizes[b], float(probs[a, b]))
                i, j = idx // sizes[b], idx % sizes[b] + (starts[b] - starts[a])
            parts.append(np.stack([i + starts[a], j + starts[a]], axis=1))
    edges = np.concatenate(parts)
    return edges[np.lexsort((edges[:, 1], edges[:, 0]))]


@dataclass(frozen=True, kw_only=True)
class SBMCost:
    """Expected size and cost of :func:`sbm_instance`, from its arguments alone.

    Attributes
    ----------
    expected_edges : float
        :math:`\\sum_{a \\le b} p_{ab}\\,\\#\\text{pairs}(a, b)` (the repairs add at most one edge per node).
    work : float
        Random draws and elementwise operations (with a 50 % margin on the random edge count).
    peak_elements : int
        Float64 elements held at once (same margin): the data (features, labels, the instance's copies) and the edge
        arrays.
    """

    expected_edges: float
    work: float
    peak_elements: int

    def __post_init__(self) -> None:
        for name in ("expected_edges", "work"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < math.inf:
                raise ValueError(f"{name} must be a finite real >= 0, got {value!r}")
        if isinstance(self.peak_elements, bool) or not isinstance(self.peak_elements, int) or self.peak_elements < 0:
            raise ValueError(f"peak_elements must be an integer >= 0, got {self.peak_elements!r}")


def estimate_sbm_cost(sizes, p_in: float, p_out: float, d: int, m: int) -> SBMCost:
    r"""Expected edges, work and memory of :func:`sbm_instance` before anything is drawn (for the CLI's checks).

    The graph costs a few operations per edge drawn (:func:`sbm_edges`; networkx's sampler, taken by ``"auto"`` up to
    :data:`SBM_NETWORKX_MAX_PAIRS` pairs, about 20 per pair of nodes); the data
    :math:`X \in \mathbb R^{n\times m\times d}` and its labels dominate unless the graph is dense.

    >>> c = estimate_sbm_cost((100, 100), 0.5, 0.01, 100, 10)
    >>> round(c.expected_edges)
    5050
    """
    sizes = [int(v) for v in sizes]
    if not sizes or min(sizes) < 1:
        raise ValueError(f"sizes must list cluster sizes >= 1, got {sizes}")
    for name, p in (("p_in", p_in), ("p_out", p_out)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], got {p!r}")
    n = sum(sizes)
    within = sum(s * (s - 1) / 2.0 for s in sizes)
    between = (n * n - sum(s * s for s in sizes)) / 2.0
    edges = p_in * within + p_out * between
    margin = 1.5 * edges + 4.0 * math.sqrt(edges) + n + 64.0
    pairs = n * (n - 1) / 2.0
    work = 40.0 * margin + 3.0 * n * m * d + 10.0 * n * m + 4.0 * n + (20.0 * pairs if pairs <= SBM_NETWORKX_MAX_PAIRS
                                                                      else 0.0)
    peak = 3 * n * m * d + 4 * n * m + 3 * d * len(sizes) + 12 * margin + 4 * n
    return SBMCost(expected_edges=float(edges), work=float(work), peak_elements=int(peak))


def sbm_instance(rng: np.random.Generator, *, sizes=(100, 100), p_in: float = 0.5, p_out: float = 0.01, d: int = 100,
                 m: int = 10, noise: float = 1e-3, lam: float = 1e-2, penalty: str = "l2", Q=None,
                 weights: tuple[float, float] | None = None, sampler: str = "auto") -> tuple[GTVInstance, np.ndarray]:
    r"""The SBM of §5.1 (defaults: 2 x 100 nodes, p_in = 0.5, p_out = 0.01, d = 100, m_i = 10, σ = 1e-3, λ = 1e-2).

    All :math:`A_e = 1` unless ``weights = (lo, hi)`` (uniform weights, docs/papers/gtv.md#instances,
    docs/papers/gtv.md#convergence). A node the SBM draw leaves isolated (possible only for small clusters) is joined to
    one uniformly drawn node of its own cluster, since Algorithm 1's step :math:`\tau_i = 1/|N^{(i)}|` needs an edge
    choice (docs/papers/gtv.md#choices). Returns ``(instance, w_true)`` with ``w_true[i]`` the generating parameter of
    node i (the MSE reference of (41)).

    ``sampler`` draws the graph: ``"linear"`` by :func:`sbm_edges` (time and memory linear in the edges),
    ``"networkx"`` by ``networkx.stochastic_block_model`` (one Python call per pair of nodes of a cluster: quadratic in
    n), ``"auto"`` (default) networkx up to :data:`SBM_NETWORKX_MAX_PAIRS` pairs of nodes, so that the instances of
    the checks keep their draws and every recorded result, and the linear sampler above. Both are exact samplers of
    the same model; they consume the generator differently, so one seed gives different graphs.
    :func:`estimate_sbm_cost` gives the expected size and cost first.
    """
    sizes = tuple(int(s) for s in sizes)
    k = len(sizes)
    if k < 1 or min(sizes) < 2:
        raise ValueError(f"sizes must list cluster sizes >= 2, got {sizes}")
    for name, p in (("p_in", p_in), ("p_out", p_out)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], got {p!r}")
    if sampler not in SBM_SAMPLERS:
        raise ValueError(f"sampler must be one of {', '.join(map(repr, SBM_SAMPLERS))}, got {sampler!r}")
    probs = [[p_in if a == b else p_out for b in range(k)] for a in range(k)]
    labels = np.repeat(np.arange(k), sizes)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    n = len(labels)
    if sampler == "networkx" or (sampler == "auto" and n * (n - 1) // 2 <= SBM_NETWORKX_MAX_PAIRS):
        G = nx.stochastic_block_model(list(sizes), probs, seed=int(rng.integers(2**31)))
        for i in [i for i in G.nodes if G.degree(i) == 0]:
            c = labels[i]
            j = int(rng.integers(starts[c], starts[c + 1] - 1))
            G.add_edge(i, j if j < i else j + 1)
        edges = _edges_of(G)
    else:
        edges = sbm_edges(rng, sizes, probs)
        lonely = np.flatnonzero(np.bincount(edges.ravel(), minlength=n) == 0)
        if lonely.size:  # as above: each joined to a uniformly drawn other node of its cluster, drawn at once
            c = labels[lonely]
            j = rng.integers(starts[c], starts[c + 1] - 1)
            j = j + (j >= lonely)
            edges = np.unique(np.concatenate([edges, np.sort(np.stack([lonely, j], axis=1), axis=1)]), axis=0)
    A = np.ones(len(edges)) if weights is None else rng.uniform(weights[0], weights[1], size=len(edges))
    w_bar = planted_parameters(rng, k, d)
    w_true = w_bar[labels]
    X, y = _regression_data(rng, w_true, np.full(len(labels), m), noise)
    inst = GTVInstance(n=len(labels), edges=edges, A=A, X=X, y=y, m=np.full(len(labels), m), lam=lam,
                       penalty=penalty, Q=Q, clusters=labels)
    return inst, w_true


def chain_instance(rng: np.random.Generator, *, n: int = 50, eps: float = 0.1, d: int = 10, m: int = 10,
                   noise: float = 0.0, rho: float = 1.0, lam: float = 1e-2, penalty: str = "l2",
                   w_bar: np.ndarray | None = None) -> tuple[GTVInstance, np.ndarray]:
    r"""The chain of §5.3: path 1..2n, clusters {1..n} and {n+1..2n}, intra weights 1, edge {n, n+1} of weight ε.

    ε = 0 removes the edge (erratum E16, docs/papers/gtv.md#erratum-e16). A uniformly random set M of
    :math:`\lceil\rho\,2n\rceil` nodes holds data (``m`` samples each); the others have :math:`L_i \equiv 0`. ``w_bar``
    (2, d) fixes the cluster parameters (default: drawn as in (39)).
    """
    if n < 1 or eps < 0 or not 0 < rho <= 1:
        raise ValueError(f"n must be >= 1, eps >= 0 and rho in (0, 1]; got n={n}, eps={eps}, rho={rho}")
    N = 2 * n
    edges = np.stack([np.arange(N - 1), np.arange(1, N)], axis=1)
    A = np.ones(N - 1)
    A[n - 1] = eps
    keep = A > 0
    edges, A = edges[keep], A[keep]
    labels = np.repeat([0, 1], n)
    w_bar = planted_parameters(rng, 2, d) if w_bar is None else np.asarray(w_bar, dtype=np.float64)
    w_true = w_bar[labels]
    accessible = rng.permutation(N)[: math.ceil(rho * N)]
    ms = np.zeros(N, dtype=np.int64)
    ms[accessible] = m
    X, y = _regression_data(rng, w_true, ms, noise)
    inst = GTVInstance(n=N, edges=edges, A=A, X=X, y=y, m=ms, lam=lam, penalty=penalty, clusters=labels)
    return inst, w_true


def dense_clusters_instance(rng: np.random.Generator, *, N: int = 20, k: int = 2, d: int = 5, m: int = 20,
                            noise: float = 0.05, n_inter: int = 10, eps: float = 0.1, lam: float = 0.5,
                            penalty: str = "l2") -> tuple[GTVInstance, np.ndarray]:
    r"""Complete clusters :math:`K_N` (weight 1) joined by ``n_inter`` random inter-cluster edges of weight ε;
    cluster parameters N(0, I), features N(0, I), noise σ (docs/papers/gtv.md#instances, "Constructing instances that
    satisfy (35)")."""
    inter_pairs = (k * (k - 1) // 2) * N * N
    if n_inter > inter_pairs:
        raise ValueError(f"n_inter must be an integer in [0, k(k - 1)/2 N^2] = [0, {inter_pairs}] (distinct "
                         f"inter-cluster edges), got {n_inter!r}")
    labels = np.repeat(np.arange(k), N)
    edges = {(int(a), int(b)) for c in range(k) for a in range(c * N, (c + 1) * N) for b in range(a + 1, (c + 1) * N)}
    inter = set()
    while len(inter) < n_inter and k > 1:
        a, b = rng.integers(0, k * N, size=2)
        if labels[a] != labels[b]:
            inter.add((int(min(a, b)), int(max(a, b))))
    all_edges = sorted(edges | inter)
    A = np.array([eps if e in inter else 1.0 for e in all_edges])
    w_bar = rng.normal(size=(k, d))
    w_true = w_bar[labels]
    X, y = _regression_data(rng, w_true, np.full(k * N, m), noise)
    inst = GTVInstance(n=k * N, edges=np.array(all_edges), A=A, X=X, y=y, m=np.full(k * N, m), lam=lam,
                       penalty=penalty, clusters=labels)
    return inst, w_true


def digits_instance(rng: np.random.Generator, *, pairs=((0, 1), (2, 3)), nodes_per_cluster: int = 20,
                    per_node: int = 14, lam: float = 1.0, gamma: float = 1e-2, knn: int = 4) -> GTVInstance:
    r"""A convex stand-in for §5.4 on ``sklearn.datasets.load_digits`` (8x8 = 64 features scaled to [0, 1]).

    Cluster c draws images of the digit pair ``pairs[c]`` without replacement, ``per_node`` per node; labels
    ±1 say which digit of the pair (binary labels within a pair, erratum E12 (docs/papers/gtv.md#erratum-e12)); loss:
    logistic with ridge γ [choice, docs/papers/gtv.md#choices; the paper trains an ANN (42), outside Theorem 2]. Graph
    [choice, docs/papers/gtv.md#choices, replacing t-SNE + KL (erratum E13, docs/papers/gtv.md#erratum-e13)]: each node
    joins its ``knn`` nearest nodes by the distance of their mean images, union symmetrised, :math:`A =
    e^{-\mathrm{dist}}`.
    """
    from sklearn.datasets import load_digits

    data = load_digits()
    feats, target = data.data / 16.0, data.target
    n = nodes_per_cluster * len(pairs)
    X = np.zeros((n, per_node, feats.shape[1]))
    y = np.zeros((n, per_node))
    for c, (a, b) in enumerate(pairs):
        pool = rng.permutation(np.flatnonzero((target == a) | (target == b)))
        need = nodes_per_cluster * per_node
        if need > len(pool):
            raise ValueError(f"per_node * nodes_per_cluster must be <= {len(pool)} images of pair {(a, b)}, got {need}")
        idx = pool[:need].reshape(nodes_per_cluster, per_node)
        X[c * nodes_per_cluster:(c + 1) * nodes_per_cluster] = feats[idx]
        y[c * nodes_per_cluster:(c + 1) * nodes_per_cluster] = np.where(target[idx] == a, 1.0, -1.0)
    means = X.mean(axis=1)
    dist = np.linalg.norm(means[:, None] - means[None], axis=2)
    np.fill_diagonal(dist, np.inf)
    near = np.argsort(dist, axis=1)[:, :knn]
    pairs_set = {(int(min(i, j)), int(max(i, j))) for i in range(n) for j in near[i]}
    edges = np.array(sorted(pairs_set))
    A = np.exp(-dist[edges[:, 0], edges[:, 1]])
    return GTVInstance(n=n, edges=edges, A=A, X=X, y=y, m=np.full(n, per_node), lam=lam, loss="logistic",
                       gamma=gamma, clusters=np.repeat(np.arange(len(pairs)), nodes_per_cluster))


def _mean_image_graph(X: np.ndarray, knn: int) -> tuple[np.ndarray, np.ndarray]:
    """Each node joins its ``knn`` nearest nodes by the distance of their mean rows (union, symmetric), A = e^-dist."""
    means = X.mean(axis=1)
    dist = np.linalg.norm(means[:, None] - means[None], axis=2)
    np.fill_diagonal(dist, np.inf)
    near = np.argsort(dist, axis=1, kind="stable")[:, :knn]
    heads = np.repeat(np.arange(len(means)), knn)
    edges = np.unique(np.sort(np.stack([heads, near.ravel()], axis=1), axis=1), axis=0)
    return edges, np.exp(-dist[edges[:, 0], edges[:, 1]])


@dataclass(frozen=True, kw_only=True)
class DigitsSplit:
    r"""A digits instance with train / validation parts per node and held-out test images (§5.4 stand-in).

    Attributes
    ----------
    instance : GTVInstance
        The GTV problem on the training parts only (logistic loss, ridge γ; graph built from them, as the paper
        builds its graph from :math:`\mathcal X^{(i)}_{\mathrm{train}}`).
    X_val, y_val, X_test, y_test : ndarray, shapes (n, m_val, d), (n, m_val), (n, m_test, d), (n, m_test)
        Every node's validation images and the test images it is scored on (its cluster's held-out pool),
        features as in ``instance.X``, labels ±1; read-only.
    pairs : tuple of (int, int)
        The digit pair of each cluster (label +1: the first digit of the pair).
    """

    instance: GTVInstance
    X_val: np.ndarray
    y_val: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    pairs: tuple

    def __post_init__(self) -> None:
        n, d = self.instance.n, self.instance.d
        for name, Xp, yp in (("val", self.X_val, self.y_val), ("test", self.X_test, self.y_test)):
            if Xp.ndim != 3 or Xp.shape[0] != n or Xp.shape[2] != d or yp.shape != Xp.shape[:2] or Xp.shape[1] < 1:
                raise ValueError(f"X_{name}, y_{name} must have shapes (n={n}, m >= 1, d={d}) and (n, m), got "
                                 f"{Xp.shape} and {yp.shape}")
            if not np.all(np.isin(yp, (-1.0, 1.0))):
                raise ValueError(f"y_{name} must hold labels -1 / +1")
        for name in ("X_val", "y_val", "X_test", "y_test"):
            a = np.array(getattr(self, name), dtype=np.float64, copy=True)
            a.setflags(write=False)
            object.__setattr__(self, name, a)
        object.__setattr__(self, "pairs", tuple((int(a), int(b)) for a, b in self.pairs))


def digits_split(rng: np.random.Generator, *, pairs=((0, 1), (2, 3)), nodes_per_cluster: int = 20,
                 split: tuple[int, int] = (10, 4), test_per_cluster: int = 80, lam: float = 1.0, gamma: float = 1e-2,
                 knn: int = 4, bias: bool = True) -> DigitsSplit:
    r"""§5.4 on ``sklearn.datasets.load_digits`` with train / validation parts per node and a held-out test pool.

    Cluster c holds ``nodes_per_cluster`` nodes; each draws ``split = (train, validation)`` images of the digit
    pair ``pairs[c]`` without replacement, and ``test_per_cluster`` further images of the pair, held by no node,
    form the cluster's test pool, on which every node of the cluster is scored (the paper: 500 MNIST images per
    node, 400 train / 100 validation; the 8x8 digits have about 360 images per pair, so at 20 nodes 10 / 4 per node
    leave 80 for the test pool: docs/papers/gtv.md#exp-digits's "faithful scaled-down version", plus a test part so that
    λ can be chosen on validation). Labels ±1 say which digit of the pair (binary within a pair,
    erratum E12 (docs/papers/gtv.md#erratum-e12)). Features: the 64 pixels scaled to [0, 1], plus a constant 1 when
    ``bias`` (an intercept choice (docs/papers/gtv.md#choices)). Loss (logistic with ridge γ) and graph are choice as in
    :func:`digits_instance`: the paper's per-node t-SNE + KL distances (erratum E13, docs/papers/gtv.md#erratum-e13) are
    replaced by the distance of the nodes' mean *training* images, ``knn`` nearest, union, :math:`A =
    e^{-\mathrm{dist}}`.
    """
    from sklearn.datasets import load_digits

    split = tuple(int(s) for s in split)
    if len(split) != 2 or min(split) < 1:
        raise ValueError(f"split must be two image counts per node (train, validation) >= 1, got {split}")
    for name, value, low in (("nodes_per_cluster", nodes_per_cluster, 2), ("test_per_cluster", test_per_cluster, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    pairs = tuple((int(a), int(b)) for a, b in pairs)
    digits = [x for p in pairs for x in p]
    if not pairs or len(set(digits)) != len(digits) or not all(0 <= x <= 9 for x in digits):
        raise ValueError(f"pairs must be disjoint pairs of distinct digits 0..9, got {pairs}")
    if isinstance(knn, bool) or not isinstance(knn, (int, np.integer)) or not 1 <= knn < nodes_per_cluster * len(pairs):
        raise ValueError(f"knn must be an integer in [1, n - 1], got {knn!r}")
    data = load_digits()
    feats = data.data / 16.0
    if bias:
        feats = np.concatenate([feats, np.ones((feats.shape[0], 1))], axis=1)
    target = data.target
    per_node = sum(split)
    n, d = nodes_per_cluster * len(pairs), feats.shape[1]
    X, y = np.zeros((n, per_node, d)), np.zeros((n, per_node))
    X_test, y_test = np.zeros((n, test_per_cluster, d)), np.zeros((n, test_per_cluster))
    for c, (a, b) in enumerate(pairs):
        pool = rng.permutation(np.flatnonzero((target == a) | (target == b)))
        need = nodes_per_cluster * per_node + test_per_cluster
        if need > len(pool):
            raise ValueError(f"nodes_per_cluster * sum(split) + test_per_cluster must be <= {len(pool)} images of "
                             f"pair {(a, b)}, got {need}")
        idx = pool[: need - test_per_cluster].reshape(nodes_per_cluster, per_node)
        test = pool[need - test_per_cluster: need]
        rows = slice(c * nodes_per_cluster, (c + 1) * nodes_per_cluster)
        X[rows], y[rows] = feats[idx], np.where(target[idx] == a, 1.0, -1.0)
        X_test[rows], y_test[rows] = feats[test], np.where(target[test] == a, 1.0, -1.0)
    tr = split[0]
    edges, A = _mean_image_graph(X[:, :tr, :64], knn)
    inst = GTVInstance(n=n, edges=edges, A=A, X=X[:, :tr], y=y[:, :tr], m=np.full(n, tr), lam=lam, loss="logistic",
                       gamma=gamma, clusters=np.repeat(np.arange(len(pairs)), nodes_per_cluster))
    return DigitsSplit(instance=inst, X_val=X[:, tr:], y_val=y[:, tr:], X_test=X_test, y_test=y_test, pairs=pairs)


#: Keys of the ``.npz`` format: X (n, m_max, d), y (n, m_max), m (n,), edges (E, 2), A (E,); optional clusters (n,).
NPZ_KEYS = ("X", "y", "m", "edges", "A")


def save_npz_instance(path, inst: GTVInstance) -> None:
    """Write the data of ``inst`` in the ``.npz`` format :func:`load_npz_instance` reads."""
    arrays = {k: getattr(inst, k) for k in NPZ_KEYS}
    if inst.clusters is not None:
        arrays["clusters"] = inst.clusters
    np.savez(path, **arrays)


def load_npz_instance(path, *, lam: float, penalty: str = "l2", loss: str = "squared", Q=None,
                      gamma: float = 0.0) -> GTVInstance:
    """Read a user's data set (keys :data:`NPZ_KEYS`, optional ``clusters``); ValueError names a bad key.

    The file goes through the guarded reader :func:`reference_impl.datasets.read_npz_arrays` (a regular file, every
    header checked against the file's size and the array limit before its data are read, real numbers only, no
    pickles); its error names ``path``.
    """
    from reference_impl.datasets import read_npz_arrays

    path = Path(path)
    arrays = read_npz_arrays(path, f"path {str(path)!r}")
    missing = [k for k in NPZ_KEYS if k not in arrays]
    if missing:
        raise ValueError(f"the .npz file must hold arrays {', '.join(NPZ_KEYS)}; missing {', '.join(missing)}")
    X = arrays["X"]
    if X.ndim != 3:
        raise ValueError(f"X must have shape (n, m_max, d), got {X.shape}")
    return GTVInstance(n=X.shape[0], edges=arrays["edges"], A=arrays["A"], X=X, y=arrays["y"], m=arrays["m"], lam=lam,
                       penalty=penalty, loss=loss, Q=Q, gamma=gamma, clusters=arrays.get("clusters"))
