r"""Assumptions 1-2, Definition 1 and Theorem 2 of the GTV paper as closed forms.

docs/papers/gtv.md#assumptions (seed 002_26677b31336d654c.txt, L225-254, L483-507): the cluster-wise oracle
:math:`\bar w^{(c)}` (9), the clustering error :math:`\delta^{(i)}` (11), the smoothness :math:`\beta^{(i)}` (12),
the strong convexity :math:`\alpha^{(c)}` (13), the weighted boundary :math:`|\partial C|` (Def. 1), the
well-connectedness condition (35) decided exactly by max-flow over every anchor (D4 (docs/papers/gtv.md#derived-d4);
never the chain formula as an iff, docs/papers/gtv.md#review-r1), and the deviation bounds (37) and
:math:`\lambda|\partial C|/\alpha` (D1, docs/papers/gtv.md#derived-d1).

The norm :math:`\lVert\cdot\rVert` of Theorem 2 is that of the penalty: ℓ2 (dual ℓ2) for ``"l2"``, ℓ1
(dual ℓ∞) for ``"l1"``. Squared loss (40) only.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import networkx as nx
import numpy as np

from theory.gtv.instance import GTVInstance

__all__ = [
    "ClusterConstants",
    "WellConnectedness",
    "boundary_weights",
    "chain_condition_boundary_anchor",
    "cluster_constants",
    "cluster_deviation",
    "cluster_oracles",
    "deviation_bound_d1",
    "deviation_bound_theorem2",
    "well_connected",
    "well_connected_brute_force",
]


def _norms(inst: GTVInstance) -> tuple[float, float]:
    """(p of the primal norm, p of the dual norm) of Theorem 2 for the instance's penalty."""
    if inst.penalty == "l2":
        return 2, 2
    if inst.penalty == "l1":
        return 1, np.inf
    raise ValueError(f"penalty must be a norm ('l2' or 'l1') for Theorem 2, got {inst.penalty!r}")


def _clusters(inst: GTVInstance, clusters) -> np.ndarray:
    c = inst.clusters if clusters is None else np.asarray(clusters, dtype=np.int64)
    if c is None:
        raise ValueError("clusters must be given (or set on the instance)")
    if c.shape != (inst.n,) or np.any(c < 0) or not np.array_equal(np.unique(c), np.arange(c.max() + 1)):
        raise ValueError(f"clusters must be {inst.n} labels using every value 0..k-1")
    return c


def _squared(inst: GTVInstance) -> None:
    if inst.loss != "squared":
        raise ValueError(f"loss must be 'squared' for the closed forms of Theorem 2, got {inst.loss!r}")


def cluster_oracles(inst: GTVInstance, clusters=None) -> np.ndarray:
    r"""Cluster-wise minimisers :math:`\bar w^{(c)} = H_c^{-1}\sum_{i\in C}b_i`, :math:`H_c = \sum_{i\in C}H_i` (9).

    Raises ValueError if some :math:`H_c` is singular (Assumption 2 fails: the stacked features of the cluster
    need full column rank). Returns shape (k, d).
    """
    _squared(inst)
    c = _clusters(inst, clusters)
    H, b, _ = inst.quadratic
    k = int(c.max()) + 1
    Hc = np.zeros((k, inst.d, inst.d))
    bc = np.zeros((k, inst.d))
    np.add.at(Hc, c, H)
    np.add.at(bc, c, b)
    lo = np.linalg.eigvalsh(Hc)[:, 0]
    if np.any(lo <= inst.d * np.finfo(np.float64).eps * np.abs(Hc).max()):
        raise ValueError(f"clusters must have full-rank stacked features (H_c > 0); lambda_min(H_c) = {lo.tolist()}")
    return np.linalg.solve(Hc, bc[..., None])[..., 0]


def boundary_weights(inst: GTVInstance, clusters=None) -> tuple[np.ndarray, np.ndarray]:
    r"""(:math:`|\partial C^{(c)}|` per cluster, out-of-cluster weighted degree :math:`\sum_{i'\notin C}A_{i,i'}` per
    node)."""
    c = _clusters(inst, clusters)
    a, b = inst.edges[:, 0], inst.edges[:, 1]
    cross = c[a] != c[b]
    out = np.zeros(inst.n)
    np.add.at(out, a[cross], inst.A[cross])
    np.add.at(out, b[cross], inst.A[cross])
    boundary = np.bincount(c, weights=out, minlength=int(c.max()) + 1)
    return boundary, out


@dataclass(frozen=True, kw_only=True)
class ClusterConstants:
    r"""Constants of Assumptions 1-2 for a partition (squared loss, norm of the penalty)."""

    clusters: np.ndarray      # (n,) labels
    oracle: np.ndarray        # (k, d) w-bar^(c)
    delta: np.ndarray         # (n,) clustering errors ||grad L_i(w-bar^(c(i)))||_*
    beta: np.ndarray          # (n,) gradient-Lipschitz constants
    alpha: np.ndarray         # (k,) strong convexity of f^(c)
    boundary: np.ndarray      # (k,) |dC|
    out_degree: np.ndarray    # (n,) sum_{i' not in C} A_{i,i'}
    norm: float               # p of ||.|| (2 or 1)

    def demands(self, lam: float) -> np.ndarray:
        r"""Node demands of (35):
        :math:`b_i = \sum_{i'\notin C}A_{i,i'} + \beta^{(i)}|\partial C|/\alpha^{(c)} + \delta^{(i)}/\lambda`."""
        c = self.clusters
        return self.out_degree + self.beta * self.boundary[c] / self.alpha[c] + self.delta / lam


def cluster_constants(inst: GTVInstance, clusters=None) -> ClusterConstants:
    r"""δ, β, α, :math:`|\partial C|` of Assumptions 1-2 (docs/papers/gtv.md#operators) for the penalty's norm.

    .. math::

        \delta^{(i)} = \lVert H_i\bar w^{(c)} - b_i\rVert_*,\quad
        \beta^{(i)} = \begin{cases}\lambda_{\max}(H_i) & \ell_2\\ \max_{jk}|(H_i)_{jk}| & \ell_1\end{cases},\quad
        \alpha^{(c)} = \begin{cases}\lambda_{\min}(H_c) & \ell_2\\ 1/\max_{s\in\{\pm1\}^d}s^TH_c^{-1}s &
        \ell_1\end{cases}

    The ℓ1 :math:`\alpha` enumerates the :math:`2^{d-1}` sign vectors (``d <= 16``): it is the exact constant of
    :math:`f^{(c)}(v') - f^{(c)}(v) - \nabla f^{(c)}(v)^T(v'-v) = \tfrac12\Delta^TH_c\Delta
    \ge \tfrac\alpha2\lVert\Delta\rVert_1^2`.

    References
    ----------
    .. [1] seed 002_26677b31336d654c.txt, Assumptions 1-2, eqs. (11)-(13), L225-254; docs/papers/gtv.md#operators.

    Examples
    --------
    >>> import numpy as np
    >>> from theory.gtv.instance import GTVInstance
    >>> X = np.ones((2, 1, 1)); y = np.array([[1.0], [3.0]])
    >>> inst = GTVInstance(n=2, edges=[[0, 1]], A=[1.0], X=X, y=y, m=[1, 1], lam=1.0)
    >>> k = cluster_constants(inst, clusters=[0, 0])
    >>> float(k.oracle[0, 0]), k.delta.tolist(), float(k.alpha[0]) <= float(k.beta.sum())
    (2.0, [2.0, 2.0], True)
    """
    p, q = _norms(inst)
    c = _clusters(inst, clusters)
    oracle = cluster_oracles(inst, c)
    H, b, _ = inst.quadratic
    grad = np.einsum("njk,nk->nj", H, oracle[c]) - b
    delta = np.linalg.norm(grad, ord=q, axis=1)
    k = oracle.shape[0]
    Hc = np.zeros((k, inst.d, inst.d))
    np.add.at(Hc, c, H)
    if p == 2:
        beta = np.linalg.eigvalsh(H)[:, -1]
        alpha = np.linalg.eigvalsh(Hc)[:, 0]
    else:
        if inst.d > 16:
            raise ValueError(f"d must be <= 16 for the exact l1 strong-convexity constant, got {inst.d}")
        beta = np.abs(H).max(axis=(1, 2))
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=inst.d - 1)))
        signs = np.hstack([np.ones((len(signs), 1)), signs])
        inv = np.linalg.inv(Hc)
        alpha = 1.0 / np.einsum("sj,kjl,sl->ks", signs, inv, signs).max(axis=1)
    boundary, out = boundary_weights(inst, c)
    return ClusterConstants(clusters=_ro(c), oracle=_ro(oracle), delta=_ro(delta), beta=_ro(np.maximum(beta, 0.0)),
                            alpha=_ro(alpha), boundary=_ro(boundary), out_degree=_ro(out), norm=float(p))


def _ro(a):
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, kw_only=True)
class WellConnectedness:
    r"""Decision of (35) for one cluster: the best anchor found and the exact slack :math:`\min_A F(A)`.

    ``slack`` is
    :math:`\min_{\emptyset\ne A\subseteq C\setminus\{i_0\}} \mathrm{cut}_C(A, C\setminus A) - \sum_{i\in A}b_i`
    at the certifying anchor (or the largest over all anchors when none certifies; ``-inf`` when every anchor
    fails the necessary condition D3 (docs/papers/gtv.md#derived-d3)). ``certified`` is ``slack > margin``.
    """

    cluster: int
    certified: bool
    anchor: int | None
    slack: float
    margin: float
    anchors_pruned_by_d3: int
    anchors_tried: int
    d3_slack_best: float


def _cluster_graph(inst: GTVInstance, members: np.ndarray, c: np.ndarray, label: int) -> nx.Graph:
    a, b = inst.edges[:, 0], inst.edges[:, 1]
    inside = (c[a] == label) & (c[b] == label)
    G = nx.Graph()
    G.add_nodes_from(int(i) for i in members)
    for (i, j), w in zip(inst.edges[inside], inst.A[inside], strict=True):
        G.add_edge(int(i), int(j), weight=float(w))
    return G


def well_connected(inst: GTVInstance, cluster: int, demands: np.ndarray, clusters=None, *,
                   margin_rtol: float = 1e-9) -> WellConnectedness:
    r"""Decide (35) for cluster ``cluster`` exactly: some anchor :math:`i_0` with
    :math:`\sum_{i\in A}b_i < \mathrm{cut}_C(A, C\setminus A)` for every non-empty :math:`A\subseteq C\setminus\{i_0\}`
    (erratum E5, docs/papers/gtv.md#erratum-e5).

    For each anchor (those failing the necessary condition D3 (docs/papers/gtv.md#derived-d3), :math:`\sum_{i\ne i_0}b_i
    < \sum_{i'\in C}A_{i_0,i'}`, are pruned), :math:`\min_{A\ni j}F(A) = \mathrm{mincut}_j - \sum_{i\ne i_0}b_i` in the
    network source → i (capacity :math:`b_i`), internal edges both ways (capacity :math:`A_{i,i'}`), sink :math:`i_0`,
    with source → j uncapacitated (D4, docs/papers/gtv.md#derived-d4); :math:`|C|-1` min-cuts per anchor (networkx). The
    strict inequality is certified only with ``slack > margin_rtol * scale`` (scale: the total internal weight plus the
    total demand), so near-zero slack counts as not certified (docs/papers/gtv.md#instances, tolerance pitfalls).

    ``demands`` are the :math:`b_i` of :meth:`ClusterConstants.demands`.

    References
    ----------
    .. [1] seed 002_26677b31336d654c.txt, Definition 1, (35), L483-494; docs/papers/gtv.md
           D2-D4, docs/papers/gtv.md#review-r1.
    """
    c = _clusters(inst, clusters)
    members = np.flatnonzero(c == cluster)
    b = np.asarray(demands, dtype=np.float64)
    G = _cluster_graph(inst, members, c, cluster)
    internal = sum(d["weight"] for _, _, d in G.edges(data=True))
    margin = margin_rtol * (internal + float(b[members].sum()))
    if len(members) == 1:
        return WellConnectedness(cluster=cluster, certified=True, anchor=int(members[0]), slack=np.inf, margin=margin,
                                 anchors_pruned_by_d3=0, anchors_tried=1, d3_slack_best=np.inf)
    total = float(b[members].sum())
    strength = {int(i): sum(d["weight"] for _, _, d in G.edges(int(i), data=True)) for i in members}
    d3 = {i: strength[i] - (total - b[i]) for i in strength}
    order = sorted(d3, key=d3.get, reverse=True)
    best, best_anchor, tried = -np.inf, None, 0
    for i0 in order:
        if d3[i0] <= margin:
            continue
        tried += 1
        N = nx.DiGraph()
        for i, j, d in G.edges(data=True):
            N.add_edge(i, j, capacity=d["weight"])
            N.add_edge(j, i, capacity=d["weight"])
        rest = [int(i) for i in members if i != i0]
        slack = np.inf
        for j in rest:
            for i in rest:
                N.add_edge("s", i, capacity=float(b[i]))
            del N["s"][j]["capacity"]             # no capacity attribute: infinite (forces j into A)
            cut = nx.minimum_cut_value(N, "s", i0)
            slack = min(slack, cut - (total - b[i0]))
            if slack <= margin:
                break
        if slack > best:
            best, best_anchor = slack, i0
        if best > margin:
            break
    return WellConnectedness(cluster=cluster, certified=bool(best > margin), anchor=best_anchor, slack=float(best),
                             margin=margin, anchors_pruned_by_d3=len(order) - tried, anchors_tried=tried,
                             d3_slack_best=float(d3[order[0]]))


def well_connected_brute_force(inst: GTVInstance, cluster: int, demands: np.ndarray, clusters=None) -> float:
    r"""Largest over anchors of :math:`\min_{\emptyset\ne A\subseteq C\setminus\{i_0\}}F(A)` by enumerating every subset
    (``|C| <= 12``); the independent cross-check of :func:`well_connected`."""
    c = _clusters(inst, clusters)
    members = [int(i) for i in np.flatnonzero(c == cluster)]
    if len(members) > 12:
        raise ValueError(f"cluster size must be <= 12 for brute force, got {len(members)}")
    b = np.asarray(demands, dtype=np.float64)
    W = np.zeros((inst.n, inst.n))
    for (i, j), w in zip(inst.edges, inst.A, strict=True):
        if c[i] == cluster and c[j] == cluster:
            W[i, j] = W[j, i] = w
    best = -np.inf
    for i0 in members:
        rest = [i for i in members if i != i0]
        worst = np.inf
        for r in range(1, len(rest) + 1):
            for A in itertools.combinations(rest, r):
                inA = np.zeros(inst.n, bool)
                inA[list(A)] = True
                comp = np.zeros(inst.n, bool)
                comp[members] = True
                comp &= ~inA
                worst = min(worst, W[np.ix_(inA, comp)].sum() - b[list(A)].sum())
        best = max(best, worst)
    return float(best)


def chain_condition_boundary_anchor(eps: float, beta, delta, alpha: float, lam: float) -> float:
    r"""Left-hand side of the chain reduction of (35) for the boundary anchor :math:`i_0 =
    n` (docs/papers/gtv.md#assumptions, chain case):

    .. math:: \varepsilon\sum_{i<n}\beta^{(i)}/\alpha + \sum_{i<n}\delta^{(i)}/\lambda

    for a path cluster 1..n whose only boundary edge {n, n+1} has weight ε; ``beta`` and ``delta`` list nodes
    1..n-1. A value < 1 is **sufficient** for well-connectedness, not necessary (docs/papers/gtv.md#review-r1: an
    interior anchor can certify (35) when this fails); decide (35) with :func:`well_connected`.

    >>> chain_condition_boundary_anchor(0.5, [1.0, 1.0], [0.0, 0.0], 4.0, 1.0)
    0.25
    """
    return float(eps * np.sum(beta) / alpha + np.sum(delta) / lam)


def deviation_bound_theorem2(lam: float, constants: ClusterConstants) -> np.ndarray:
    r"""(37): :math:`2\lambda|\partial C^{(c)}|/\alpha^{(c)}` per cluster (seed L498-507)."""
    return 2.0 * lam * constants.boundary / constants.alpha


def deviation_bound_d1(lam: float, constants: ClusterConstants) -> np.ndarray:
    r"""D1 (docs/papers/gtv.md#assumptions, docs/papers/gtv.md#derived): :math:`\lambda|\partial C^{(c)}|/\alpha^{(c)}`,
    valid for a cluster-constant minimiser.

    Summing the node-wise KKT (28) over C cancels the internal flows: :math:`\lVert\nabla f^{(c)}(\hat w_C)\rVert_*
    \le \lambda|\partial C|`, and strong convexity (13) gives the bound; half of (37)
    (erratum E6, docs/papers/gtv.md#erratum-e6).
    """
    return lam * constants.boundary / constants.alpha


def cluster_deviation(w: np.ndarray, constants: ClusterConstants) -> tuple[np.ndarray, np.ndarray]:
    r"""Per cluster: (:math:`\max_{i\in C}\lVert\hat w^{(i)} - \bar w^{(c)}\rVert`, intra-cluster spread
    :math:`\max_{i\in C}\lVert \hat w^{(i)} - \mathrm{mean}_C \hat w\rVert`), in the norm of Theorem 2."""
    c = constants.clusters
    k = constants.oracle.shape[0]
    dev = np.linalg.norm(w - constants.oracle[c], ord=constants.norm, axis=1)
    counts = np.bincount(c, minlength=k)
    mean = np.zeros((k, w.shape[1]))
    np.add.at(mean, c, w)
    mean /= counts[:, None]
    spread = np.linalg.norm(w - mean[c], ord=constants.norm, axis=1)
    max_dev = np.full(k, -np.inf)
    max_spread = np.full(k, -np.inf)
    np.maximum.at(max_dev, c, dev)
    np.maximum.at(max_spread, c, spread)
    return max_dev, max_spread
