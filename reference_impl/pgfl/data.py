"""PGFL problems: the synthetic regression of the paper's experiments, the digits/MNIST/MedMNIST classification tasks,
and a user's ``.npz``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import NamedTuple

import networkx as nx
import numpy as np

from reference_impl.datasets import _integers, _reals, _require
from theory.pgfl.problem import PGFLProblem

__all__ = ["ClassificationTask", "DIGIT_TASKS", "classification_problem", "load_pgfl_npz", "pgfl_problem_from_arrays",
           "synthetic_regression"]


def synthetic_regression(rng: np.random.Generator, *, servers: int = 10, clients_per_server: int = 15, d: int = 60,
                         clusters: int = 3, samples: tuple[int, int] = (2, 9), gamma: float = 0.15,
                         noise_variance: float = 0.1, average_degree: float = 3.0, lam: float = 1.0) -> PGFLProblem:
    r"""The regression setting of docs/papers/pgfl.md#choice-regression-data (seed 000 lines 410-421): defaults are the
    paper's sizes.

    Connected random server graph with ``average_degree * servers / 2`` edges (rejection sampling),
    clients assigned to clusters i.i.d. uniformly, :math:`w^\circ_{(q)} = (1+\gamma_q) w_0` with
    :math:`\gamma_q \sim U(-\gamma, \gamma)`, :math:`x \sim N(0, I_d)`, :math:`D_k \sim U\{2..9\}` and
    observation noise of variance ``noise_variance``.
    """
    edges = int(round(average_degree * servers / 2))
    edges = min(edges, servers * (servers - 1) // 2)
    for _ in range(1000):
        graph = nx.gnm_random_graph(servers, edges, seed=int(rng.integers(2**31)))
        if servers == 1 or nx.is_connected(graph):
            break
    else:  # pragma: no cover
        raise ValueError(f"could not draw a connected graph with {servers} servers and {edges} edges")
    adjacency = nx.to_numpy_array(graph, nodelist=range(servers)).astype(bool)
    K = servers * clients_per_server
    client_server = np.repeat(np.arange(servers), clients_per_server)
    client_cluster = rng.integers(clusters, size=K)
    w0 = rng.standard_normal(d)
    truth = (1.0 + rng.uniform(-gamma, gamma, size=clusters))[:, None] * w0[None, :]
    X, y = [], []
    for k in range(K):
        D = int(rng.integers(samples[0], samples[1] + 1))
        xk = rng.standard_normal((D, d))
        X.append(xk)
        y.append(xk @ truth[client_cluster[k]] + math.sqrt(noise_variance) * rng.standard_normal(D))
    return PGFLProblem(adjacency=adjacency, client_server=client_server, client_cluster=client_cluster,
                       n_clusters=clusters, X=tuple(X), y=tuple(y), lam=lam, true_models=truth)


#: docs/papers/pgfl.md#exp-m: per cluster, (classes labelled 0, classes labelled 1). M-1 (docs/papers/pgfl.md#exp-m) low
#: similarity, M-2 (docs/papers/pgfl.md#exp-m) high.
DIGIT_TASKS = {
    "M-1": (((1,), (8,)), ((1,), (9,)), ((7,), (8,))),
    "M-2": (((1, 2, 3), (6, 7, 8)), ((1, 2, 3), (7, 8, 9)), ((1, 2, 3), (6, 8, 9))),
}


class ClassificationTask(NamedTuple):
    """A logistic PGFL problem and each cluster's test set (features, {0, 1} labels)."""

    problem: PGFLProblem
    X_test: tuple
    y_test: tuple


def _unit_ball(X: np.ndarray) -> np.ndarray:
    """Scale rows to norm <= 1, so the logistic gradient bound is C_k = 1 (docs/papers/pgfl.md#exp-m)."""
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.maximum(norms, 1.0)


def classification_problem(rng: np.random.Generator, X_train, y_train, X_test, y_test, tasks, *, servers: int = 10,
                           clients_per_server: int = 15, samples: tuple[int, int] = (2, 4),
                           average_degree: float = 3.0, lam: float = 1e-2) -> ClassificationTask:
    """docs/papers/pgfl.md#exp-m: clients of cluster q hold D_k samples from its two class sets (label 0 / 1,
    Bernoulli(1/2)).

    ``tasks[q] = (classes_labelled_0, classes_labelled_1)``. The server graph is drawn as in
    :func:`reference_impl.pgfl.synthetic_regression`; clusters are assigned i.i.d. uniformly.
    Returns the logistic :class:`PGFLProblem` and each cluster's test set.
    """

    Q = len(tasks)
    graph = synthetic_regression(rng, servers=servers, clients_per_server=1, d=1, clusters=1,
                                 average_degree=average_degree).adjacency
    K = servers * clients_per_server
    client_cluster = rng.integers(Q, size=K)
    X_train, X_test = _unit_ball(np.asarray(X_train, float)), _unit_ball(np.asarray(X_test, float))
    pools = []
    for zero, one in tasks:
        pools.append((np.flatnonzero(np.isin(y_train, zero)), np.flatnonzero(np.isin(y_train, one))))
        if pools[-1][0].size == 0 or pools[-1][1].size == 0:
            raise ValueError(f"tasks: classes {zero} or {one} have no training image")
    X, y = [], []
    for k in range(K):
        zero_pool, one_pool = pools[client_cluster[k]]
        D = int(rng.integers(samples[0], samples[1] + 1))
        labels = (rng.random(D) < 0.5).astype(np.float64)
        idx = np.where(labels == 1.0, rng.choice(one_pool, D), rng.choice(zero_pool, D))
        X.append(X_train[idx])
        y.append(labels)
    tests_X, tests_y = [], []
    for zero, one in tasks:
        mask = np.isin(y_test, zero) | np.isin(y_test, one)
        tests_X.append(X_test[mask])
        tests_y.append(np.isin(y_test[mask], one).astype(np.float64))
    problem = PGFLProblem(adjacency=graph, client_server=np.repeat(np.arange(servers), clients_per_server),
                          client_cluster=client_cluster, n_clusters=Q, X=tuple(X), y=tuple(y), lam=lam,
                          loss="logistic")
    return ClassificationTask(problem, tuple(tests_X), tuple(tests_y))


def load_pgfl_npz(path, *, loss: str = "ridge", lam: float = 1.0) -> PGFLProblem:
    """A PGFL problem from a user's ``.npz``.

    Keys: ``X_0 .. X_{K-1}`` (each ``(D_k, d)``), ``y_0 .. y_{K-1}`` (each ``(D_k,)``), ``client_server``
    ``(K,)`` and ``client_cluster`` ``(K,)`` integer arrays, optionally ``adjacency`` ``(S, S)`` (symmetric
    0/1, zero diagonal; default: the complete graph on the servers that appear) and ``true_models``
    ``(Q, d)`` (enables the NMSD metric).
    """
    data = _require(path, ("client_server", "client_cluster"))
    try:
        return pgfl_problem_from_arrays(data, loss=loss, lam=lam)
    except ValueError as exc:
        raise ValueError(f"{Path(path).name}: {exc}") from None


def pgfl_problem_from_arrays(data, *, loss: str = "ridge", lam: float = 1.0) -> PGFLProblem:
    """The :class:`PGFLProblem` of the arrays of a PGFL ``.npz`` (layout in :func:`load_pgfl_npz`), validated.

    Every array is checked before any cast: ``client_server``/``client_cluster`` integers (exact-integer
    floats allowed, never truncated) >= 0, every server ``0..S-1`` holding at least one client;
    every cluster ``0..Q-1`` holding at least one client; ``adjacency`` entries exactly 0 or 1 (bool allowed),
    symmetric, zero diagonal; ``X_k``, ``y_k`` and ``true_models``
    real (not complex or boolean) and finite. Keys outside the layout are refused. ValueError names the array.
    """
    for key in ("client_server", "client_cluster"):
        if key not in data:
            raise ValueError(f"array {key!r} is missing")
    servers = _integers("client_server", data["client_server"])
    clusters = _integers("client_cluster", data["client_cluster"])
    K = servers.size
    if K < 1 or clusters.shape != servers.shape:
        raise ValueError(f"client_server and client_cluster must have the same length K >= 1, got {servers.size} "
                         f"and {clusters.size}")
    allowed = {"client_server", "client_cluster", "adjacency", "true_models"}
    allowed |= {f"X_{k}" for k in range(K)} | {f"y_{k}" for k in range(K)}
    extra = sorted(set(data) - allowed)
    if extra:
        raise ValueError(f"array {extra[0]!r} is not part of the layout (X_k and y_k for k = 0..{K - 1}, "
                         f"client_server, client_cluster, adjacency, true_models)")
    missing = [f"{name}_{k}" for name in ("X", "y") for k in range(K) if f"{name}_{k}" not in data]
    if missing:
        raise ValueError(f"X_k and y_k are needed for k = 0..{K - 1}; missing {', '.join(missing[:5])}")
    adjacency = data.get("adjacency")
    if adjacency is not None:
        adjacency = np.asarray(adjacency)
        adj = _reals("adjacency", adjacency.astype(np.float64) if adjacency.dtype.kind == "b" else adjacency, 2)
        if adj.shape[0] != adj.shape[1] or adj.shape[0] < 1:
            raise ValueError(f"adjacency must be a square (S, S) matrix, got shape {adj.shape}")
        if not np.all((adj == 0.0) | (adj == 1.0)):
            bad = adj[(adj != 0.0) & (adj != 1.0)][0]
            raise ValueError(f"adjacency entries must be 0 or 1, got {float(bad)!r}")
        S = adj.shape[0]
        if servers.max() >= S:
            raise ValueError(f"client_server entries must be in [0, S - 1 = {S - 1}] (S from adjacency), got "
                             f"{int(servers.max())}")
    else:
        S = int(servers.max()) + 1
        adj = ~np.eye(S, dtype=bool)
    empty = np.setdiff1d(np.arange(S), servers)
    if empty.size:
        raise ValueError(f"client_server: server {int(empty[0])} has no client (every server 0..{S - 1} needs one)")
    unused = np.setdiff1d(np.arange(int(clusters.max()) + 1), clusters)
    if unused.size:
        raise ValueError(f"client_cluster: cluster {int(unused[0])} has no client (clusters are numbered "
                         f"0..Q-1 and each needs one)")
    X = tuple(_reals(f"X_{k}", data[f"X_{k}"], 2) for k in range(K))
    y = tuple(_reals(f"y_{k}", data[f"y_{k}"], 1) for k in range(K))
    true_models = data.get("true_models")
    if true_models is not None:
        true_models = _reals("true_models", true_models, 2)
    return PGFLProblem(adjacency=np.asarray(adj).astype(bool), client_server=servers, client_cluster=clusters,
                       n_clusters=int(clusters.max()) + 1, X=X, y=y, lam=lam, true_models=true_models, loss=loss)
