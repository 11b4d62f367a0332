r"""The PGFL problem record (docs/papers/pgfl.md#notation): server graph, clients, clusters and their data.

Seed 000 Section II (problem (2)); seed 004 Chapter 5. The record is pure data with the derived quantities
the closed forms and the reference implementation share (Hessians, linear terms, group sizes, curvature).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from theory._validate import readonly

__all__ = ["PGFLProblem", "cvxpy_data_term", "cvxpy_probe"]


@dataclass(frozen=True, kw_only=True)
class PGFLProblem:
    r"""A PGFL instance: server graph, client placement, cluster labels and ridge data.

    Client objective (docs/papers/pgfl.md#notation):
    :math:`f_k(w) = \\lVert y_k - X_k w\\rVert^2/D_k + (\\lambda/|C_{s(k)}|)\\lVert w\\rVert^2`.

    Attributes
    ----------
    adjacency : (S, S) bool array
        Symmetric server graph without self-loops (an empty graph is ClusterFL, variant
        V3 (docs/papers/pgfl.md#variants)).
    client_server, client_cluster : (K,) int arrays
        Server ``s(k)`` in ``0..S-1`` and cluster ``q(k)`` in ``0..Q-1`` of every client.
    n_clusters : int
        Q >= 1.
    X, y : tuple of arrays
        Client ``k``'s features ``(D_k, d)`` and responses ``(D_k,)``, ``D_k >= 1`` (labels in {0, 1} for
        the logistic loss).
    lam : float
        Ridge weight lambda >= 0.
    true_models : (Q, d) array or None
        Data-generating cluster models (for the NMSD metric), when known.
    loss : {"ridge", "logistic", "cvxpy"}
        Ridge: :math:`\ell_k = \lVert y_k - X_k w\rVert^2`. Logistic (seed 000 eqs. (54)-(55),
        docs/papers/pgfl.md#erratum-e22):
        :math:`\ell = \log(1 + e^{w^T x}) - y\,w^T x`, :math:`y \in \{0, 1\}`; regulariser :math:`\lVert w\rVert^2` for
        all.
        ``"cvxpy"``: a generic convex per-sample loss given by ``cvxpy_loss`` (docs/papers/pgfl.md#algorithm-1),
        :math:`f_k(w) = D_k^{-1}\sum_i \ell(z_i, y_i) + (\lambda/|C_s|)\lVert w\rVert^2` with margins :math:`z = X_k w`.
    cvxpy_loss : callable or None
        Only with ``loss="cvxpy"``: ``cvxpy_loss(z, y) -> cvxpy expression`` of the per-sample losses
        (shape ``(D_k,)``, or a scalar holding their sum), convex in the CVXPY expression ``z = X_k w``
        (DCP), for the numpy labels ``y`` (shape ``(D_k,)``). Example, the squared loss:
        ``lambda z, y: cp.square(y - z)``. Checked at construction on every client.
    """

    adjacency: np.ndarray
    client_server: np.ndarray
    client_cluster: np.ndarray
    n_clusters: int
    X: tuple
    y: tuple
    lam: float
    true_models: np.ndarray | None = None
    loss: str = "ridge"
    cvxpy_loss: Callable | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.loss not in ("ridge", "logistic", "cvxpy"):
            raise ValueError(f"loss must be 'ridge', 'logistic' or 'cvxpy', got {self.loss!r}")
        if (self.loss == "cvxpy") != (self.cvxpy_loss is not None):
            raise ValueError(f"cvxpy_loss must be a callable exactly when loss = 'cvxpy' (loss = {self.loss!r}, "
                             f"cvxpy_loss = {self.cvxpy_loss!r})")
        if self.cvxpy_loss is not None and not callable(self.cvxpy_loss):
            raise ValueError(f"cvxpy_loss must be callable (z, y) -> cvxpy expression, got {self.cvxpy_loss!r}")
        adj = np.asarray(self.adjacency, dtype=bool)
        if adj.ndim != 2 or adj.shape[0] != adj.shape[1] or adj.shape[0] < 1:
            raise ValueError(f"adjacency must be a square (S, S) matrix with S >= 1, got shape {adj.shape}")
        if not np.array_equal(adj, adj.T) or adj.diagonal().any():
            raise ValueError("adjacency must be symmetric with a zero diagonal (servers are not their own neighbours)")
        S = adj.shape[0]
        if (isinstance(self.n_clusters, bool) or not isinstance(self.n_clusters, (int, np.integer))
                or self.n_clusters < 1):
            raise ValueError(f"n_clusters must be an integer >= 1, got {self.n_clusters!r}")
        servers = np.asarray(self.client_server)
        clusters = np.asarray(self.client_cluster)
        if servers.ndim != 1 or servers.size < 1 or servers.shape != clusters.shape:
            raise ValueError(f"client_server and client_cluster must be 1-D of equal length K >= 1, got "
                             f"{servers.shape} and {clusters.shape}")
        if not np.issubdtype(servers.dtype, np.integer) or servers.min() < 0 or servers.max() >= S:
            raise ValueError(f"client_server entries must be integers in [0, {S - 1}]")
        if not np.issubdtype(clusters.dtype, np.integer) or clusters.min() < 0 or clusters.max() >= self.n_clusters:
            raise ValueError(f"client_cluster entries must be integers in [0, {self.n_clusters - 1}]")
        K = servers.size
        if len(self.X) != K or len(self.y) != K:
            raise ValueError(f"X and y must hold one array per client (K = {K}), got {len(self.X)} and {len(self.y)}")
        X = tuple(readonly(np.asarray(x, dtype=np.float64)) for x in self.X)
        y = tuple(readonly(np.asarray(v, dtype=np.float64)) for v in self.y)
        d = X[0].shape[1] if X[0].ndim == 2 else -1
        for k, (xk, yk) in enumerate(zip(X, y, strict=True)):
            if xk.ndim != 2 or xk.shape[1] != d or xk.shape[0] < 1 or yk.shape != (xk.shape[0],):
                raise ValueError(f"X[{k}] must be (D_k >= 1, d = {d}) and y[{k}] (D_k,), got {xk.shape} and {yk.shape}")
            if not (np.all(np.isfinite(xk)) and np.all(np.isfinite(yk))):
                raise ValueError(f"X[{k}] and y[{k}] must be finite")
            if self.loss == "logistic" and not np.all((yk == 0.0) | (yk == 1.0)):
                raise ValueError(f"y[{k}] must hold labels in {{0, 1}} for the logistic loss")
        lam = float(self.lam)
        if not (math.isfinite(lam) and lam >= 0.0):
            raise ValueError(f"lam must be a finite real in [0, inf), got {self.lam!r}")
        if self.true_models is not None:
            tm = np.asarray(self.true_models, dtype=np.float64)
            if tm.shape != (self.n_clusters, d):
                raise ValueError(f"true_models must have shape (Q, d) = ({self.n_clusters}, {d}), got {tm.shape}")
            object.__setattr__(self, "true_models", readonly(tm))
        object.__setattr__(self, "adjacency", readonly(adj))
        object.__setattr__(self, "client_server", readonly(servers.astype(np.int64)))
        object.__setattr__(self, "client_cluster", readonly(clusters.astype(np.int64)))
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "lam", lam)
        if self.loss == "cvxpy":
            for k in range(K):
                cvxpy_data_term(self, k, cvxpy_probe(d))

    # Derived quantities (cached; the record is immutable).
    @property
    def S(self) -> int:
        return self.adjacency.shape[0]

    @property
    def K(self) -> int:
        return self.client_server.size

    @property
    def d(self) -> int:
        return self.X[0].shape[1]

    @functools.cached_property
    def samples(self) -> np.ndarray:
        """D_k, shape (K,)."""
        return readonly(np.array([x.shape[0] for x in self.X]))

    @functools.cached_property
    def clients_per_server(self) -> np.ndarray:
        """|C_s| of the server of every client, shape (K,)."""
        counts = np.bincount(self.client_server, minlength=self.S)
        return readonly(counts[self.client_server])

    @functools.cached_property
    def hessians(self) -> np.ndarray:
        """Data part of the client Hessians, shape (K, d, d): (2/D_k) X_k^T X_k for ridge (exact), and its
        upper bound (1/(4 D_k)) X_k^T X_k for the logistic loss (sigma(1 - sigma) <= 1/4). Undefined for a
        generic CVXPY loss (ValueError)."""
        if self.loss == "cvxpy":
            raise ValueError("hessians (and max_curvature) are undefined for loss = 'cvxpy': no curvature bound is "
                             "known")
        scale = 2.0 if self.loss == "ridge" else 0.25
        return readonly(np.stack([scale / x.shape[0] * x.T @ x for x in self.X]))

    @functools.cached_property
    def padded(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Data padded to D_max: X (K, D_max, d), y (K, D_max) and per-sample weights 1/D_k (0 on padding)."""
        D = self.samples
        X = np.zeros((self.K, int(D.max()), self.d))
        y = np.zeros((self.K, int(D.max())))
        weights = np.zeros((self.K, int(D.max())))
        for k, (xk, yk) in enumerate(zip(self.X, self.y, strict=True)):
            X[k, : D[k]], y[k, : D[k]], weights[k, : D[k]] = xk, yk, 1.0 / D[k]
        return readonly(X), readonly(y), readonly(weights)

    @functools.cached_property
    def linear_terms(self) -> np.ndarray:
        """(2/D_k) X_k^T y_k, shape (K, d)."""
        return readonly(np.stack([2.0 / x.shape[0] * x.T @ v for x, v in zip(self.X, self.y, strict=True)]))

    @functools.cached_property
    def ridge_weights(self) -> np.ndarray:
        """2 lambda / |C_s(k)|: the client's share of the regulariser's curvature, shape (K,)."""
        return readonly(2.0 * self.lam / self.clients_per_server)

    @functools.cached_property
    def groups(self) -> np.ndarray:
        """One-hot membership (S*Q, K): row s*Q + q marks the clients of C_{s,(q)}."""
        g = np.zeros((self.S * self.n_clusters, self.K))
        g[self.client_server * self.n_clusters + self.client_cluster, np.arange(self.K)] = 1.0
        return readonly(g)

    @functools.cached_property
    def closed_neighbourhoods(self) -> np.ndarray:
        """N_s including s, as a 0/1 matrix (S, S)."""
        return readonly(self.adjacency.astype(np.float64) + np.eye(self.S))

    @functools.cached_property
    def max_curvature(self) -> float:
        """L_max = max_k lambda_max(grad^2 f_k) (docs/papers/pgfl.md#choice-rho-lambda: rho in [0.1, 0.5] L_max is the
        tested range)."""
        eig = np.linalg.eigvalsh(self.hessians)[:, -1]
        return float(np.max(eig + self.ridge_weights))


def cvxpy_probe(d: int):
    import cvxpy as cp

    return cp.Variable(d)


def cvxpy_data_term(problem: PGFLProblem, k: int, w):
    """The CVXPY expression (1/D_k) sum_i loss(z_i, y_i), z = X_k w, validated (scalar, convex, DCP)."""
    import cvxpy as cp

    D = problem.X[k].shape[0]
    expr = problem.cvxpy_loss(problem.X[k] @ w, np.asarray(problem.y[k]))
    if not isinstance(expr, cp.Expression):
        raise ValueError(f"cvxpy_loss must return a cvxpy Expression, got {type(expr).__name__} for client {k}")
    if expr.shape not in ((), (D,)):
        raise ValueError(f"cvxpy_loss must return shape () or (D_k,) = ({D},), got {expr.shape} for client {k}")
    if not expr.is_dcp() or not expr.is_convex():
        raise ValueError(f"cvxpy_loss must return a convex (DCP) expression in z, got curvature {expr.curvature} "
                         f"for client {k}")
    return cp.sum(expr) / D
