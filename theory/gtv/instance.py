r"""GTV minimisation instance: empirical graph, local datasets, penalty and :math:`\lambda`.

Notation of docs/papers/gtv.md#notation (seed 002_26677b31336d654c.txt, SarcheshmehPour et al., IEEE TSP 2023).
The graph is stored as arrays: ``edges[e] = (e_+, e_-)`` with :math:`e_+ < e_-` (orientation (18),
erratum E17 (docs/papers/gtv.md#erratum-e17)) and weights ``A[e] > 0``; the local datasets as padded arrays ``X (n,
m_max, d)``, ``y (n, m_max)`` with the first ``m[i]`` rows of node ``i`` valid (``m[i] = 0``: an inaccessible node,
:math:`L_i \equiv 0`).

Losses ((40) and docs/papers/gtv.md#operators):

* ``"squared"``: :math:`L_i(w) = \frac1{m_i}\lVert X_i w - y_i\rVert_2^2 = \tfrac12 w^T H_i w - b_i^T w + c_i`
  with :math:`H_i = \frac2{m_i}X_i^TX_i`, :math:`b_i = \frac2{m_i}X_i^Ty_i`, :math:`c_i = \lVert y_i\rVert^2/m_i`;
* ``"logistic"``: :math:`L_i(w) = \frac1{m_i}\sum_r \log(1 + e^{-y_r x_r^T w}) + \frac\gamma2\lVert w\rVert^2`,
  labels :math:`y_r \in \{-1, +1\}` choice (docs/papers/gtv.md#choices).

Penalties (docs/papers/gtv.md#operators): ``"l2"`` (nLasso :math:`\lVert v\rVert_2`), ``"l1"`` (:math:`\lVert
v\rVert_1`), ``"mocha"`` (:math:`\tfrac12\lVert v\rVert_2^2`) and ``"quad"`` (:math:`\tfrac12 v^TQv`, :math:`Q \succeq
0`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from theory._validate import readonly

__all__ = ["LOSSES", "PENALTIES", "GTVInstance", "incidence_matrix"]

LOSSES = ("squared", "logistic")
PENALTIES = ("l2", "l1", "mocha", "quad")


@dataclass(frozen=True, kw_only=True)
class GTVInstance:
    r"""One GTV minimisation problem (16):
    :math:`\min_w \sum_i L_i(w^{(i)}) + \lambda\sum_e A_e\phi(w^{(e_+)} - w^{(e_-)})`.

    Attributes
    ----------
    n : int
        Number of nodes (:math:`\ge 2`).
    edges : ndarray of int, shape (E, 2)
        Undirected edges ``(e_+, e_-)`` with ``e_+ < e_-``, no duplicates; every node has at least one edge
        (an isolated node has no step size :math:`\tau_i = 1/|N^{(i)}|`, docs/papers/gtv.md#algorithm-1).
    A : ndarray, shape (E,)
        Edge weights :math:`A_e > 0` (an edge of weight 0 is a removed edge,
        erratum E16 (docs/papers/gtv.md#erratum-e16)).
    X : ndarray, shape (n, m_max, d)
        Padded features; rows ``m[i]:`` of node ``i`` must be zero.
    y : ndarray, shape (n, m_max)
        Padded labels (``{-1, +1}`` for the logistic loss on the valid rows).
    m : ndarray of int, shape (n,)
        Local sample sizes :math:`m_i \ge 0`.
    lam : float
        GTV parameter :math:`\lambda > 0`.
    penalty : {"l2", "l1", "mocha", "quad"}
    loss : {"squared", "logistic"}
    Q : ndarray, shape (d, d), optional
        Symmetric PSD matrix of the ``"quad"`` penalty (required exactly then).
    gamma : float
        Ridge term :math:`\gamma \ge 0` of the logistic loss (must be 0 for the squared loss).
    clusters : ndarray of int, shape (n,), optional
        True cluster labels ``0..k-1`` (Assumption 1), when known.
    """

    n: int
    edges: np.ndarray
    A: np.ndarray
    X: np.ndarray
    y: np.ndarray
    m: np.ndarray
    lam: float
    penalty: str = "l2"
    loss: str = "squared"
    Q: np.ndarray | None = None
    gamma: float = 0.0
    clusters: np.ndarray | None = None

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or not isinstance(self.n, (int, np.integer)) or self.n < 2:
            raise ValueError(f"n must be an integer >= 2, got {self.n!r}")
        n = int(self.n)
        object.__setattr__(self, "n", n)
        edges = np.array(self.edges, dtype=np.int64, ndmin=2)
        if edges.ndim != 2 or edges.shape[1] != 2 or edges.shape[0] < 1:
            raise ValueError(f"edges must have shape (E, 2) with E >= 1, got {edges.shape}")
        if np.any(edges[:, 0] >= edges[:, 1]) or np.any(edges < 0) or np.any(edges >= n):
            raise ValueError(f"edges must hold pairs (e_+, e_-) with 0 <= e_+ < e_- < n = {n}")
        if np.unique(edges, axis=0).shape[0] != len(edges):
            raise ValueError("edges must not repeat an edge")
        deg = np.bincount(edges.ravel(), minlength=n)
        if np.any(deg == 0):
            raise ValueError(f"edges must touch every node; isolated nodes: {np.flatnonzero(deg == 0)[:10].tolist()}")
        object.__setattr__(self, "edges", readonly(edges, np.int64))
        A = np.array(self.A, dtype=np.float64, ndmin=1)
        if A.shape != (len(edges),) or not np.all(np.isfinite(A)) or np.any(A <= 0):
            raise ValueError(f"A must be {len(edges)} finite edge weights > 0, got shape {A.shape}, "
                             f"min {A.min() if A.size else None!r}")
        object.__setattr__(self, "A", readonly(A, np.float64))
        X = np.array(self.X, dtype=np.float64)
        if X.ndim != 3 or X.shape[0] != n or X.shape[2] < 1 or not np.all(np.isfinite(X)):
            raise ValueError(f"X must be a finite array of shape (n = {n}, m_max, d >= 1), got {X.shape}")
        y = np.array(self.y, dtype=np.float64)
        if y.shape != X.shape[:2] or not np.all(np.isfinite(y)):
            raise ValueError(f"y must be a finite array of shape {X.shape[:2]}, got {y.shape}")
        m = np.array(self.m, dtype=np.int64, ndmin=1)
        if m.shape != (n,) or np.any(m < 0) or np.any(m > X.shape[1]):
            raise ValueError(f"m must be {n} sample sizes in [0, m_max = {X.shape[1]}], got {m.tolist()}")
        pad = np.arange(X.shape[1])[None, :] >= m[:, None]
        if np.any(X[pad] != 0) or np.any(y[pad] != 0):
            raise ValueError("X and y must be zero on the padding rows r >= m[i]")
        for name, arr in (("X", X), ("y", y), ("m", m)):
            object.__setattr__(self, name, readonly(arr, arr.dtype))
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {', '.join(LOSSES)}, got {self.loss!r}")
        if self.penalty not in PENALTIES:
            raise ValueError(f"penalty must be one of {', '.join(PENALTIES)}, got {self.penalty!r}")
        lam = self.lam
        if isinstance(lam, bool) or not isinstance(lam, (int, float, np.floating)) or not np.isfinite(lam) or lam <= 0:
            raise ValueError(f"lam must be a finite real > 0, got {lam!r}")
        object.__setattr__(self, "lam", float(lam))
        g = self.gamma
        if isinstance(g, bool) or not isinstance(g, (int, float, np.floating)) or not np.isfinite(g) or g < 0:
            raise ValueError(f"gamma must be a finite real >= 0, got {g!r}")
        object.__setattr__(self, "gamma", float(g))
        if self.loss == "squared" and self.gamma != 0:
            raise ValueError(f"gamma must be 0 for the squared loss, got {self.gamma!r}")
        if self.loss == "logistic":
            valid = ~pad
            if np.any(np.abs(y[valid]) != 1):
                raise ValueError("y must be -1 or +1 on the valid rows for the logistic loss")
        if (self.penalty == "quad") != (self.Q is not None):
            raise ValueError(f"Q must be given exactly when penalty = 'quad' (penalty = {self.penalty!r})")
        if self.Q is not None:
            Q = np.array(self.Q, dtype=np.float64)
            d = X.shape[2]
            if Q.shape != (d, d):
                raise ValueError(f"Q must be a symmetric ({d}, {d}) matrix, got shape {Q.shape}")
            if not np.allclose(Q, Q.T, rtol=0, atol=1e-12 * max(1.0, np.abs(Q).max())):
                i, j = np.unravel_index(int(np.argmax(np.abs(Q - Q.T))), Q.shape)
                raise ValueError(f"Q must be a symmetric ({d}, {d}) matrix, got Q[{i}][{j}] = {Q[i, j]:g} and "
                                 f"Q[{j}][{i}] = {Q[j, i]:g}")
            Q = 0.5 * (Q + Q.T)
            ev = np.linalg.eigvalsh(Q)
            if ev[0] < -1e-12 * max(1.0, ev[-1]):
                raise ValueError(f"Q must be positive semidefinite, got smallest eigenvalue {ev[0]!r}")
            object.__setattr__(self, "Q", readonly(Q, np.float64))
        if self.clusters is not None:
            c = np.array(self.clusters, dtype=np.int64, ndmin=1)
            if c.shape != (n,) or np.any(c < 0):
                raise ValueError(f"clusters must be {n} non-negative labels, got shape {c.shape}")
            if not np.array_equal(np.unique(c), np.arange(c.max() + 1)):
                raise ValueError(f"clusters must use every label 0..k-1, got {np.unique(c).tolist()}")
            object.__setattr__(self, "clusters", readonly(c, np.int64))

    # --- derived quantities -------------------------------------------------------------------------------
    @property
    def d(self) -> int:
        return int(self.X.shape[2])

    @property
    def n_edges(self) -> int:
        return int(self.edges.shape[0])

    @functools.cached_property
    def degree(self) -> np.ndarray:
        """Unweighted degrees :math:`|N^{(i)}|` (L434)."""
        return readonly(np.bincount(self.edges.ravel(), minlength=self.n), np.int64)

    @functools.cached_property
    def incidence(self) -> sp.csr_matrix:
        """The incidence matrix D (E x n): +1 at e_+, -1 at e_- ((6), L169)."""
        return incidence_matrix(self.edges, self.n)

    @functools.cached_property
    def row_mask(self) -> np.ndarray:
        """(n, m_max) booleans: the valid sample rows."""
        return readonly(np.arange(self.X.shape[1])[None, :] < self.m[:, None], bool)

    @functools.cached_property
    def quadratic(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r"""Squared loss as :math:`(H, b, c)`: :math:`L_i(w) = \tfrac12 w^TH_iw - b_i^Tw + c_i` (zero where m_i = 0)."""
        inv_m = np.where(self.m > 0, 1.0 / np.maximum(self.m, 1), 0.0)
        H = 2.0 * inv_m[:, None, None] * np.einsum("nrj,nrk->njk", self.X, self.X)
        b = 2.0 * inv_m[:, None] * np.einsum("nrj,nr->nj", self.X, self.y)
        c = inv_m * np.einsum("nr,nr->n", self.y, self.y)
        return readonly(H, np.float64), readonly(b, np.float64), readonly(c, np.float64)

    @functools.cached_property
    def quadratic_eigh(self) -> tuple[np.ndarray, np.ndarray]:
        """Batched eigendecomposition of the H_i (ascending eigenvalues, orthonormal eigenvectors), computed once."""
        ev, V = np.linalg.eigh(self.quadratic[0])
        return readonly(ev, np.float64), readonly(V, np.float64)

    def with_(self, **changes) -> GTVInstance:
        """A copy with fields replaced (validated again)."""
        fields = {k: getattr(self, k) for k in ("n", "edges", "A", "X", "y", "m", "lam", "penalty", "loss", "Q",
                                                 "gamma", "clusters")}
        fields.update(changes)
        return GTVInstance(**fields)

    def summary(self) -> dict:
        return {"n": self.n, "edges": self.n_edges, "d": self.d, "m_min": int(self.m.min()),
                "m_max": int(self.m.max()), "lam": self.lam, "penalty": self.penalty, "loss": self.loss}


def incidence_matrix(edges, n: int) -> sp.csr_matrix:
    r"""Incidence matrix :math:`D` (E x n) with :math:`D_{e,e_+} = 1`, :math:`D_{e,e_-} = -1` (L169).

    :math:`(Dw)^{(e)} = w^{(e_+)} - w^{(e_-)}` (6) and :math:`(D^Tu)^{(i)} = \sum_{e_+=i}u^{(e)} - \sum_{e_-=i}u^{(e)}`
    (7).

    Examples
    --------
    Adjointness :math:`\langle Dw, u\rangle = \langle w, D^Tu\rangle`:

    >>> import numpy as np
    >>> D = incidence_matrix(np.array([[0, 1], [1, 2]]), 3)
    >>> w, u = np.arange(3.0), np.array([1.0, -2.0])
    >>> bool(np.isclose((D @ w) @ u, w @ (D.T @ u)))
    True
    """
    edges = np.asarray(edges, dtype=np.int64)
    E = edges.shape[0]
    rows = np.repeat(np.arange(E), 2)
    cols = edges.ravel()
    vals = np.tile([1.0, -1.0], E)
    return sp.csr_matrix((vals, (rows, cols)), shape=(E, n))
