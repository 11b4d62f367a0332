r"""One round of zCDP-NFL for the privacy checks: released history, data and a replace-one neighbour.

Lemma I and Theorem I are statements *conditional on the released history*
(:math:`\tilde w^{(n-1)}`, :math:`\gamma^{(n-1)}`): any history is admissible, so histories are
sampled directly instead of by running the algorithm. They are given the structure the algorithm
gives them: :math:`\gamma^{(n-1)} = \rho L_- r` (the dual update accumulates
:math:`\rho L_-\tilde w^{(s)}`, so :math:`\sum_k\gamma_k = 0`), and neighbour sums
:math:`\sum_{l\in\mathcal N_k}\tilde w_l` from an actual graph.

Losses (docs/papers/zcdp_nfl.md): least absolute deviation, whose per-sample subgradient
:math:`\operatorname{sign}(x^\top w - y)\,x` has norm at most :math:`\lVert x\rVert \le c_1 = 1`
(rows normalised), and the squared loss with per-sample clipping at :math:`c_1` (the
"clipped" variant; without clipping Assumption 1 fails). The regulariser is the elastic net
with public constants (:math:`\lambda = 1`, :math:`\lambda_1 = 0.01`, :math:`\lambda_2 = 1`): the
paper's :math:`\lambda_1 = 0.001\lVert X^\top y\rVert_\infty` depends on the data, which would make
:math:`R'` data dependent and add a term Lemma I does not account for.

Neighbouring data sets (Definition I: the last sample replaced):

* ``"random"``: :math:`x'` uniform in the unit ball, :math:`y'` Gaussian;
* ``"reflect"``: the tightness construction of Lemma I's bound: :math:`x' = x_M` with
  :math:`\lVert x_M\rVert = c_1` and :math:`y' = 2x_M^\top\tilde w_k - y_M`, which flips the sign
  of the residual, so the two subgradients are antiparallel with norm :math:`c_1` (for the clipped
  squared loss the last residual is first set to :math:`|r| \ge 0.6`, so both are clipped).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from reference_impl.zcdp_nfl import zcdp_nfl_primal_update
from theory._validate import readonly

__all__ = ["LOSSES", "REPLACEMENTS", "UpdateInstance", "elastic_net_subgradient", "loss_subgradient_fn",
           "lad_subgradient", "clipped_squared_subgradient", "primal_updates", "sample_update_instance"]

LOSSES = ("lad", "clipped_squared")
REPLACEMENTS = ("random", "reflect")
#: Public elastic-net constants (lambda, lambda_1, lambda_2) of the regulariser.
ELASTIC_NET = (1.0, 0.01, 1.0)


def lad_subgradient(X, y, w):
    r"""Per-sample LAD subgradients :math:`\operatorname{sign}(x_{k,j}^\top w_k - y_{k,j})\,x_{k,j}` (sign(0) = 0)."""
    residual = np.einsum("...mp,...p->...m", X, w) - y
    return np.sign(residual)[..., None] * X


def clipped_squared_subgradient(X, y, w, *, c1: float):
    r"""Per-sample squared-loss gradients :math:`2(x^\top w - y)x`, each clipped to norm :math:`c_1`."""
    grad = 2.0 * (np.einsum("...mp,...p->...m", X, w) - y)[..., None] * X
    norm = np.linalg.norm(grad, axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(norm > c1, c1 / np.where(norm > 0, norm, 1.0), 1.0)
    return grad * scale


def loss_subgradient_fn(loss: str, c1: float):
    """The per-sample subgradient function of ``loss`` (picklable)."""
    if loss == "lad":
        return lad_subgradient
    if loss == "clipped_squared":
        return functools.partial(clipped_squared_subgradient, c1=c1)
    raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")


def elastic_net_subgradient(w, *, K: int):
    r""":math:`(\lambda/K)(\lambda_1\operatorname{sign}(w) + 2\lambda_2 w)`, data independent."""
    lam, lam1, lam2 = ELASTIC_NET
    return (lam / K) * (lam1 * np.sign(w) + 2.0 * lam2 * w)


@dataclass(frozen=True, kw_only=True)
class UpdateInstance:
    """Released history of round n-1, the data D and a replace-one neighbour D' of every client.

    Clients are rows; client k's neighbour D'_k differs from D_k in its last sample only. The
    update of client k depends on D_k alone, so all K pairs are evaluated in one call.
    """

    rho: float
    eta: float
    c1: float
    loss: str
    replacement: str
    adjacency: np.ndarray  # (K, K) symmetric 0/1, zero diagonal
    w_tilde: np.ndarray  # (K, P)
    gamma: np.ndarray  # (K, P)
    X: np.ndarray  # (K, M, P)
    y: np.ndarray  # (K, M)
    X_prime: np.ndarray  # (K, M, P)
    y_prime: np.ndarray  # (K, M)

    def __post_init__(self) -> None:
        for name in ("rho", "eta", "c1"):
            value = getattr(self, name)
            if not (isinstance(value, float) and 0.0 < value < np.inf):
                raise ValueError(f"{name} must be a finite float in (0, inf), got {value!r}")
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        if self.replacement not in REPLACEMENTS:
            raise ValueError(f"replacement must be one of {REPLACEMENTS}, got {self.replacement!r}")
        adjacency = np.array(self.adjacency, dtype=np.int64)
        adjacency.setflags(write=False)
        object.__setattr__(self, "adjacency", adjacency)
        for name in ("w_tilde", "gamma", "X", "y", "X_prime", "y_prime"):
            object.__setattr__(self, name, readonly(getattr(self, name), np.float64))
        K, P = self.w_tilde.shape
        if (adjacency.shape != (K, K) or not np.array_equal(adjacency, adjacency.T)
                or np.any(np.diag(adjacency) != 0) or not np.all((adjacency == 0) | (adjacency == 1))):
            raise ValueError(f"adjacency must be a symmetric 0/1 matrix of shape ({K}, {K}) with zero diagonal")
        if self.X.shape[0] != K or self.X.shape[2] != P or self.X_prime.shape != self.X.shape:
            raise ValueError(f"X and X_prime must have shape (K, M, P) = ({K}, M, {P}), got {self.X.shape}")
        if self.y.shape != self.X.shape[:2] or self.y_prime.shape != self.y.shape:
            raise ValueError(f"y and y_prime must have shape {self.X.shape[:2]}, got {self.y.shape}")
        if not (np.array_equal(self.X[:, :-1], self.X_prime[:, :-1])
                and np.array_equal(self.y[:, :-1], self.y_prime[:, :-1])):
            raise ValueError("D and D' must differ in the last sample of each client only (Definition I)")

    @property
    def degree(self) -> np.ndarray:
        """d_k = |N_k|."""
        return self.adjacency.sum(axis=1)

    @property
    def neighbour_sum(self) -> np.ndarray:
        """sum_{l in N_k} w~_l (released)."""
        return self.adjacency @ self.w_tilde

    @property
    def neighbour_abs_sum(self) -> np.ndarray:
        """sum_{l in N_k} |w~_l| (for rounding-error bounds)."""
        return self.adjacency @ np.abs(self.w_tilde)

    @property
    def K(self) -> int:
        return self.w_tilde.shape[0]

    @property
    def P(self) -> int:
        return self.w_tilde.shape[1]

    @property
    def M(self) -> int:
        return self.X.shape[1]

    def summary(self) -> dict:
        """Scalar description for evidence records."""
        return {"K": self.K, "P": self.P, "M": self.M, "rho": self.rho, "eta": self.eta, "c1": self.c1,
                "loss": self.loss, "replacement": self.replacement,
                "degrees": sorted(set(int(d) for d in self.degree)),
                "history_scale": float(np.sqrt(np.mean(self.w_tilde ** 2)))}


def primal_updates(inst: UpdateInstance, update_fn=zcdp_nfl_primal_update) -> tuple[np.ndarray, np.ndarray]:
    """The update of every client with its data D_k and with its neighbour D'_k (same released history)."""
    subgradient = loss_subgradient_fn(inst.loss, inst.c1)
    regulariser = functools.partial(elastic_net_subgradient, K=inst.K)
    common = (inst.w_tilde, inst.neighbour_sum, inst.gamma)
    w = update_fn(*common, inst.X, inst.y, subgradient, inst.rho, inst.eta, inst.degree,
                  regularizer_subgradient=regulariser)
    w_prime = update_fn(*common, inst.X_prime, inst.y_prime, subgradient, inst.rho, inst.eta, inst.degree,
                        regularizer_subgradient=regulariser)
    return np.asarray(w), np.asarray(w_prime)


def _adjacency(rng: np.random.Generator, K: int, mean_degree: float, regular_degree: int | None) -> np.ndarray:
    """Undirected simple graph: circulant d-regular if asked, else a random tree plus random extra edges."""
    A = np.zeros((K, K), dtype=np.int64)
    if regular_degree is not None:
        d = regular_degree
        if not (0 <= d < K) or (d % 2 == 1 and K % 2 == 1):
            raise ValueError(f"regular_degree must be in [0, K) with K*d even, got d = {d}, K = {K}")
        offsets = list(range(1, d // 2 + 1)) + ([K // 2] if d % 2 else [])
        for k in range(K):
            for o in offsets:
                A[k, (k + o) % K] = A[(k + o) % K, k] = 1
        return A
    order = rng.permutation(K)
    for i in range(1, K):  # random recursive tree: connected
        j = order[rng.integers(i)]
        A[order[i], j] = A[j, order[i]] = 1
    extra = max(0, int(round(K * mean_degree / 2.0)) - (K - 1))
    pairs = np.array([(a, b) for a in range(K) for b in range(a + 1, K) if not A[a, b]], dtype=np.int64)
    if extra and pairs.size:
        for a, b in pairs[rng.choice(len(pairs), size=min(extra, len(pairs)), replace=False)]:
            A[a, b] = A[b, a] = 1
    return A


def _unit_ball_rows(rng: np.random.Generator, shape: tuple[int, ...], P: int) -> np.ndarray:
    direction = rng.normal(size=(*shape, P))
    direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
    return direction * rng.uniform(0.0, 1.0, size=(*shape, 1)) ** (1.0 / P)


def sample_update_instance(rng: np.random.Generator, *, K: int, P: int, M: int, rho: float, eta: float,
                           loss: str, replacement: str, history_scale: float = 1.0, mean_degree: float = 3.0,
                           regular_degree: int | None = None) -> UpdateInstance:
    """A random round of zCDP-NFL (see the module docstring); c_1 = 1 (rows in the unit ball)."""
    if not (isinstance(K, int) and K >= 2 and isinstance(P, int) and P >= 1 and isinstance(M, int) and M >= 1):
        raise ValueError(f"K >= 2, P >= 1 and M >= 1 must be integers, got K={K!r}, P={P!r}, M={M!r}")
    if not 0.0 < history_scale < np.inf:
        raise ValueError(f"history_scale must be in (0, inf), got {history_scale!r}")
    A = _adjacency(rng, K, mean_degree, regular_degree)
    degree = A.sum(axis=1)
    w_tilde = history_scale * rng.normal(size=(K, P))
    laplacian = np.diag(degree) - A
    gamma = rho * laplacian @ (history_scale * rng.normal(size=(K, P)))
    X = _unit_ball_rows(rng, (K, M), P)
    X[:, -1] /= np.linalg.norm(X[:, -1], axis=-1, keepdims=True)  # ||x_M|| = c_1 = 1
    w_true = rng.normal(size=P)
    y = X @ w_true + 0.1 * rng.normal(size=(K, M))
    X_prime, y_prime = X.copy(), y.copy()
    if replacement == "random":
        X_prime[:, -1] = _unit_ball_rows(rng, (K,), P)
        y_prime[:, -1] = (1.0 + history_scale) * rng.normal(size=K)
    elif replacement == "reflect":
        fitted = np.einsum("kp,kp->k", X[:, -1], w_tilde)
        if loss == "clipped_squared":  # residual |r| >= 0.6 so that 2|r| ||x_M|| > c_1: both clipped
            y[:, -1] = fitted - rng.choice([-1.0, 1.0], size=K) * rng.uniform(0.6, 5.0, size=K)
            y_prime[:, -1] = y[:, -1]
        y_prime[:, -1] = 2.0 * fitted - y[:, -1]
    else:
        raise ValueError(f"replacement must be one of {REPLACEMENTS}, got {replacement!r}")
    return UpdateInstance(rho=float(rho), eta=float(eta), c1=1.0, loss=loss, replacement=replacement,
                          adjacency=A, w_tilde=w_tilde, gamma=gamma, X=X, y=y, X_prime=X_prime,
                          y_prime=y_prime)
