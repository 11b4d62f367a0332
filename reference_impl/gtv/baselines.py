r"""Baselines of the GTV paper's experiments (docs/papers/gtv.md#choice-baselines): FedAvg, IFCA, the pooled and oracle
solutions.

The seed names them and cites them only (no hyper-parameters); these are docs/papers/gtv.md's reconstructions. Squared
loss. Nodes are rows of arrays: one local gradient step of every node is one batched product.
"""

from __future__ import annotations

import numpy as np

from theory.gtv import GTVInstance, cluster_oracles

__all__ = ["IFCA_INITIALISATIONS", "fedavg", "ifca", "mse", "oracle_clusterwise", "pooled_solution"]


def _require_squared(inst):
    if inst.loss != "squared":
        raise ValueError(f"loss must be 'squared' for this baseline, got {inst.loss!r}")


def pooled_solution(inst: GTVInstance) -> np.ndarray:
    r"""The FedAvg fixed point :math:`\arg\min_w\sum_iL_i(w)` (min-norm if singular), broadcast to every node."""
    _require_squared(inst)
    H, b, _ = inst.quadratic
    w = np.linalg.lstsq(H.sum(axis=0), b.sum(axis=0), rcond=None)[0]
    return np.broadcast_to(w, (inst.n, inst.d)).copy()


def oracle_clusterwise(inst: GTVInstance, clusters=None) -> np.ndarray:
    r"""FedAvgC / the cluster oracle: :math:`\bar w^{(c(i))}` at every node (9)."""
    c = inst.clusters if clusters is None else np.asarray(clusters)
    return cluster_oracles(inst, c)[c]


class _LocalGradient:
    r"""Every node's :math:`\nabla L_i(w_i) = H_iw_i - b_i`, from the data :math:`\frac2{m_i}X_i^T(X_iw_i - y_i)`
    when :math:`m_i < d` (O(n m d) instead of O(n d²)); also the losses :math:`L_i(\theta_j)` of k models."""

    def __init__(self, inst: GTVInstance):
        _require_squared(inst)
        self.inst = inst
        self.by_data = inst.X.shape[1] < inst.d
        if not self.by_data:
            self.H, self.b, self.c = inst.quadratic
        self.inv_m = np.where(inst.m > 0, 1.0 / np.maximum(inst.m, 1), 0.0)

    def __call__(self, w: np.ndarray) -> np.ndarray:
        if self.by_data:
            r = np.einsum("nrj,nj->nr", self.inst.X, w) - self.inst.y
            return 2.0 * self.inv_m[:, None] * np.einsum("nrj,nr->nj", self.inst.X, r)
        return np.matmul(self.H, w[..., None])[..., 0] - self.b

    def losses(self, theta: np.ndarray) -> np.ndarray:
        r"""(n, k): :math:`L_i(\theta_j)` (the padding rows of X and y are zero, so they add nothing)."""
        if self.by_data:
            r = np.einsum("nrj,kj->nkr", self.inst.X, theta) - self.inst.y[:, None, :]
            return self.inv_m[:, None] * np.sum(r * r, axis=2)
        return 0.5 * np.einsum("kj,njl,kl->nk", theta, self.H, theta) - self.b @ theta.T + self.c[:, None]

    def default_lr(self) -> float:
        r""":math:`1/\max_i\lambda_{\max}(H_i)` (a GD step that is stable on every node)."""
        X = self.inst.X
        if self.by_data:     # the nonzero spectrum of (2/m) X^T X is that of (2/m) X X^T (m x m)
            top = np.linalg.eigvalsh(np.matmul(X, X.transpose(0, 2, 1)))[:, -1] * 2.0 * self.inv_m
        else:
            top = self.inst.quadratic_eigh[0][:, -1]
        return 1.0 / max(float(top.max()), 1e-300)


def _check_rounds(rounds, local_steps) -> None:
    for name, value in (("rounds", rounds), ("local_steps", local_steps)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


def fedavg(inst: GTVInstance, *, rounds: int, local_steps: int = 5, lr: float | None = None,
           monitor=None) -> np.ndarray:
    r"""Server FedAvg [14] (erratum E14, docs/papers/gtv.md#erratum-e14): every round each node runs ``local_steps`` GD
    steps from the global model and the server averages with weights :math:`m_i/\sum_jm_j`; lr defaults to
    :math:`1/\max_i\lambda_{\max}(H_i)`. Returns the final global model broadcast to all nodes (``monitor(w_nodes)`` is
    called after every round)."""
    _check_rounds(rounds, local_steps)
    grad = _LocalGradient(inst)
    lr = grad.default_lr() if lr is None else lr
    p = inst.m / inst.m.sum()
    w = np.zeros(inst.d)
    for _ in range(rounds):
        local = np.broadcast_to(w, (inst.n, inst.d)).copy()
        for _ in range(local_steps):
            local -= lr * grad(local)
        w = p @ local
        if monitor is not None:
            monitor(np.broadcast_to(w, (inst.n, inst.d)))
    return np.broadcast_to(w, (inst.n, inst.d)).copy()


#: IFCA's initialisations (the paper does not say which one it used, docs/papers/gtv.md#choice-baselines): k independent
#: N(0, init_scale² I) models ("random", Ghosh et al. 2020's choice) or k identical models at 0 ("identical"; every node
#: then picks model 0 by the argmin's tie-break and IFCA is FedAvg).
IFCA_INITIALISATIONS = ("random", "identical")


def ifca(inst: GTVInstance, rng: np.random.Generator, *, k: int, rounds: int, local_steps: int = 5,
         lr: float | None = None, init: str = "random", init_scale: float = 1.0, monitor=None) -> np.ndarray:
    r"""IFCA [19], model-averaging variant: k models initialised per ``init`` (:data:`IFCA_INITIALISATIONS`); each
    round node i picks :math:`\arg\min_jL_i(\theta_j)` (ties to the lowest j), runs local GD from it, the server
    averages per model (weights m_i); an empty model is kept. Returns :math:`\theta_{\hat j(i)}` per node. ``rng``
    is drawn (k d normals) whatever ``init``, so the arms of one replicate stay aligned."""
    _check_rounds(rounds, local_steps)
    if init not in IFCA_INITIALISATIONS:
        raise ValueError(f"init must be one of {IFCA_INITIALISATIONS}, got {init!r}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    grad = _LocalGradient(inst)
    lr = grad.default_lr() if lr is None else lr
    draw = rng.normal(size=(k, inst.d))
    theta = init_scale * draw if init == "random" else np.zeros((k, inst.d))
    m = inst.m.astype(np.float64)

    def assign(theta):
        return np.argmin(grad.losses(theta), axis=1)

    for _ in range(rounds):
        j = assign(theta)
        local = theta[j].copy()
        for _ in range(local_steps):
            local -= lr * grad(local)
        onehot = np.zeros((inst.n, k))
        onehot[np.arange(inst.n), j] = m
        mass = onehot.sum(axis=0)
        avg = (onehot.T @ local) / np.where(mass > 0, mass, 1.0)[:, None]
        theta = np.where((mass > 0)[:, None], avg, theta)
        if monitor is not None:
            monitor(theta[assign(theta)])
    return theta[assign(theta)]


def mse(w: np.ndarray, w_true: np.ndarray) -> float:
    r"""(41): :math:`\frac1{|V|}\sum_i\lVert\hat w^{(i)} - \bar w^{(i)}\rVert_2^2` (no division by d)."""
    return float(np.mean(np.sum((np.asarray(w) - np.asarray(w_true)) ** 2, axis=1)))


