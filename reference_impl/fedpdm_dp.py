r"""FedPDM-DP (Algorithm 1) and its DP baselines, vectorised over sampled clients and Monte-Carlo runs.

Reference implementation of shared/spec/fedpdm_dp.md section 2: client sampling (``S_0 = [N]``, then
uniform ``K``-subsets without replacement), ``Q`` local primal-dual steps (10a) with the stopping rule
(11), the dual step (10c) with the **old** :math:`x_0^t`, the upload (10d) plus Gaussian noise (18)-(19),
and the server's :math:`\ell_1` proximal step (13) at threshold :math:`\gamma/\rho` (the seed's
:math:`\mathrm{prox}_{\rho h}`, spec E12/E13), averaged over :math:`|S_t|` uploads (E14/E15).

State arrays: client models and duals ``(R, N, d)``, the global model ``(R, d)``; a round works on the
sampled clients only, ``(R, |S_t|, d)``. There is no Python loop over clients or runs; the loops are
over rounds and local steps. Randomness only through the ``rng`` argument.

Every detail the seed leaves open (E16) is a validated field of :class:`FedPDMConfig`: ``Q_max``,
``init``, ``local_start``, ``batch_rule``, ``G``, the per-round :math:`\varepsilon` and the DP
calibration (``per_round_eps`` or ``target_total_eps``, the latter on the **realised** maximum
participation count, spec Review notes), ``noise_Q``.

Losses (one code path): a linear model :math:`X \in \mathbb R^{m\times n}` (``d = m n``) and per-sample
loss :math:`\ln(1 + e^{-x_{k'}^\top a})` for the sample's class :math:`k'`, plus
:math:`\beta\sum_{jk} X_{jk}^2/(1 + X_{jk}^2)` and :math:`h = \gamma\lVert X\rVert_1`:

* ``m = 10``: the experiment's literal loss (25) with the dimensional fix :math:`X_{ij} = b_{ij}a_{ij}^\top`
  (E26): only the true class's score enters (non-convex for :math:`\beta > 0`);
* ``m = 1``: binary :math:`\ell_1`-logistic regression with features :math:`y_j a_j` (labels folded in),
  spec 4.0 instances NC (:math:`\beta = 0.1`) and CVX (:math:`\beta = 0`, convex).

Baselines FedAvg-DP, FedProx-DP and SCAFFOLD-DP are **reconstructions** (spec 5.3, [decision]: the
seed gives no details): local objective :math:`f_i + \gamma\lVert\cdot\rVert_1` by subgradient, the
same noise multiplier as FedPDM-DP, sensitivities by the argument of spec 3.5.

References
----------
.. [1] seed 001_322f61f9958f64f9.txt, Algorithm 1 (lines 158-180), eqs. (9)-(13) (lines 102-136),
   (18)-(19) (lines 187-195), loss (24)-(25) (lines 247-253); shared/spec/fedpdm_dp.md 2, 4.0, 5.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from theory.privacy.sensitivity import sensitivity_fedpdm
from theory.privacy.subsampled import noise_multiplier_fedpdm, rdp_poisson_subsampled_gaussian, rdp_to_approx_dp

__all__ = [
    "ARMS",
    "ArmCurve",
    "BaselineConfig",
    "FedPDMConfig",
    "FedPDMProblem",
    "FedPDMRun",
    "FedPDMState",
    "RoundRecord",
    "accuracy",
    "binary_logistic_problem",
    "certified_G",
    "classification_problem",
    "client_gradients",
    "digits_problem",
    "global_objective",
    "initial_state",
    "instance_nc",
    "lagrangian",
    "mnist_like_problem",
    "mnist_npz_problem",
    "participation_schedule",
    "run_arm",
    "run_baseline",
    "run_fedpdm",
    "sensitivity_table",
    "soft_threshold",
    "stationarity_measure",
    "fedpdm_round",
    "calibrate_noise_multiplier",
    "history_factor_table",
]

#: Rényi orders of the in-house accountant used by ``dp_calibration = "target_total_eps"`` (as in
#: verify/fedpdm/theorem2_total.py: 2..64 and a geometric grid up to 16384).
ORDERS = tuple(sorted(set(range(2, 65)) | {int(round(v)) for v in np.geomspace(64, 16384, 33)}))
#: One experiment arm: FedPDM-DP or a reconstructed baseline (spec 5.3).
ARMS = ("fedpdm", "fedavg", "fedprox", "scaffold")
#: max_x 2x/(1+x^2)^2: the largest slope of x^2/(1+x^2) (spec 3.4, A3).
_SLOPE = 3.0 * math.sqrt(3.0) / 8.0


def _readonly(a, dtype=np.float64) -> np.ndarray:
    a = np.array(a, dtype=dtype, copy=True)
    a.setflags(write=False)
    return a


def _int(name, value, lower, upper=None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lower or (
            upper is not None and value > upper):
        rng = f"[{lower}, {upper}]" if upper is not None else f">= {lower}"
        raise ValueError(f"{name} must be an integer {rng}, got {value!r}")
    return int(value)


def _real(name, value, lower=-math.inf, upper=math.inf, *, lower_open=False, upper_open=False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    ok = math.isfinite(v) and (v > lower if lower_open else v >= lower) and (v < upper if upper_open else v <= upper)
    if not ok:
        lb, ub = "(" if lower_open else "[", ")" if upper_open else "]"
        raise ValueError(f"{name} must be a finite real in {lb}{lower}, {upper}{ub}, got {value!r}")
    return v


def _choice(name, value, allowed) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value


# --------------------------------------------------------------------------------------------------
# Problem


@dataclass(frozen=True, kw_only=True)
class FedPDMProblem:
    r"""Federated data and the objective (24): :math:`F(X) = \frac1N\sum_i f_i(X) + \gamma\lVert X\rVert_1`.

    Attributes
    ----------
    features : (N, n, n_features) array
        Client ``i``'s samples :math:`a_{ij}` (equal sizes :math:`|D_i| = n`; a bias feature, if any, included).
    labels : (N, n) int array
        Class :math:`k'` of each sample, in ``0..n_classes-1`` (all 0 for the binary ``n_classes = 1`` form).
    n_classes : int
        :math:`m \ge 1`; the model is :math:`X \in \mathbb R^{m\times n_{features}}`, flattened row-major to ``d``.
    beta, gamma : float
        Weights of the non-convex term and of :math:`h = \gamma\lVert\cdot\rVert_1` (both >= 0).
    test_features, test_labels : arrays or None
        Held-out samples for :func:`accuracy` (for ``n_classes = 1``: labels folded into the features).
    """

    features: np.ndarray
    labels: np.ndarray
    n_classes: int
    beta: float
    gamma: float
    test_features: np.ndarray | None = None
    test_labels: np.ndarray | None = None

    def __post_init__(self) -> None:
        a = np.asarray(self.features)
        if a.ndim != 3 or min(a.shape) < 1 or not np.all(np.isfinite(a)):
            raise ValueError(f"features must be a finite (N, n, n_features) array with every size >= 1, got shape {a.shape}")
        _int("n_classes", self.n_classes, 1)
        lab = np.asarray(self.labels)
        if lab.shape != a.shape[:2] or not np.issubdtype(lab.dtype, np.integer) or lab.min() < 0 or (
                lab.max() >= self.n_classes):
            raise ValueError(f"labels must be integers in [0, {self.n_classes - 1}] of shape {a.shape[:2]}, got "
                             f"shape {lab.shape} dtype {lab.dtype}")
        object.__setattr__(self, "beta", _real("beta", self.beta, 0.0))
        object.__setattr__(self, "gamma", _real("gamma", self.gamma, 0.0))
        object.__setattr__(self, "features", _readonly(a))
        object.__setattr__(self, "labels", _readonly(lab, np.int64))
        if (self.test_features is None) != (self.test_labels is None):
            raise ValueError("test_features and test_labels must be given together")
        if self.test_features is not None:
            tf, tl = np.asarray(self.test_features), np.asarray(self.test_labels)
            if tf.ndim != 2 or tf.shape[1] != a.shape[2] or tl.shape != (tf.shape[0],) or tl.min() < 0 or (
                    tl.max() >= self.n_classes):
                raise ValueError(f"test_features must be (n_test, {a.shape[2]}) and test_labels (n_test,) in "
                                 f"[0, {self.n_classes - 1}], got {tf.shape} and {tl.shape}")
            object.__setattr__(self, "test_features", _readonly(tf))
            object.__setattr__(self, "test_labels", _readonly(tl, np.int64))

    @property
    def N(self) -> int:
        return self.features.shape[0]

    @property
    def n(self) -> int:
        """Samples per client :math:`|D_i|`."""
        return self.features.shape[1]

    @property
    def n_features(self) -> int:
        return self.features.shape[2]

    @property
    def d(self) -> int:
        return self.n_classes * self.n_features

    @property
    def L_smooth(self) -> float:
        r"""A certified smoothness constant of every :math:`f_i` (spec 5.1):
        :math:`0.25\max_i\max_k\lambda_{\max}(\frac1{|D_i|}\sum_{j: k'_j = k} a_{ij}a_{ij}^\top) + 2\beta`
        (the logistic Hessian is block diagonal over classes with weights <= 1/4; the second derivative of
        :math:`x^2/(1+x^2)` lies in [-1/2, 2])."""
        top = 0.0
        for k in range(self.n_classes):  # loop over classes (<= 10), not clients
            w = (self.labels == k)[..., None] * self.features
            gram = np.einsum("inf,ing->ifg", w, self.features) / self.n
            top = max(top, float(np.linalg.eigvalsh(gram)[:, -1].max()))
        return 0.25 * top + 2.0 * self.beta


def certified_G(problem: FedPDMProblem) -> float:
    r"""A3's bound on every mini-batch gradient norm, proven for the loss: :math:`\max\lVert a\rVert + (3\sqrt3/8)\beta\sqrt d`.

    The logistic part is a convex combination of :math:`\sigma(-s)\,e_{k'}a^\top` (norm <= :math:`\lVert a\rVert`);
    each coordinate of the non-convex term's gradient is at most :math:`(3\sqrt3/8)\beta` (spec 3.4, E32).
    """
    return float(np.linalg.norm(problem.features, axis=-1).max() + _SLOPE * problem.beta * math.sqrt(problem.d))


def binary_logistic_problem(a, y, *, beta: float, gamma: float, test_a=None, test_y=None) -> FedPDMProblem:
    """Binary logistic regression (labels +-1) as the ``n_classes = 1`` form: features ``y a``, all labels 0."""
    a, y = np.asarray(a, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if a.ndim != 3 or y.shape != a.shape[:2] or not np.all(np.abs(y) == 1.0):
        raise ValueError(f"a must be (N, n, d) and y (N, n) with entries +-1, got {a.shape} and {y.shape}")
    kwargs = {}
    if test_a is not None:
        ta, ty = np.asarray(test_a, dtype=np.float64), np.asarray(test_y, dtype=np.float64)
        kwargs = dict(test_features=ty[:, None] * ta, test_labels=np.zeros(ty.size, dtype=np.int64))
    return FedPDMProblem(features=y[..., None] * a, labels=np.zeros(y.shape, dtype=np.int64), n_classes=1,
                         beta=beta, gamma=gamma, **kwargs)


def instance_nc(rng: np.random.Generator, *, N: int = 10, n: int = 60, d: int = 20, beta: float = 0.1,
                gamma: float = 0.01, shift: float = 1.0, sparsity: float = 0.3) -> FedPDMProblem:
    r"""Spec 4.0 instance NC (``beta = 0`` gives CVX): Gaussian features plus a client shift, rows rescaled
    to :math:`\lVert a\rVert \le 1`, labels from a sparse ground-truth logistic model."""
    _int("N", N, 1), _int("n", n, 1), _int("d", d, 1)
    truth = np.where(rng.uniform(size=d) < sparsity, 3.0 * rng.standard_normal(d), 0.0)
    a = rng.standard_normal((N, n, d)) + shift * rng.standard_normal((N, 1, d))
    a *= (rng.uniform(0.5, 1.0, (N, n)) / np.linalg.norm(a, axis=-1))[..., None]
    y = np.where(rng.uniform(size=(N, n)) < special.expit(a @ truth), 1.0, -1.0)
    return binary_logistic_problem(a, y, beta=beta, gamma=gamma)


def classification_problem(rng: np.random.Generator, X_train, y_train, X_test, y_test, *, N: int, beta: float,
                           gamma: float, n_classes: int = 10) -> FedPDMProblem:
    """IID split of a classification set into ``N`` clients of equal size (remainder dropped), bias feature appended.

    Features are used as given (pixels in [0, 1], spec 5.1 [decision]); the loss is (25) with ``n_classes`` rows.
    """
    X_train, X_test = np.asarray(X_train, dtype=np.float64), np.asarray(X_test, dtype=np.float64)
    y_train, y_test = np.asarray(y_train, dtype=np.int64), np.asarray(y_test, dtype=np.int64)
    _int("N", N, 1, X_train.shape[0])
    order = rng.permutation(X_train.shape[0])
    n = X_train.shape[0] // N
    order = order[: N * n]
    bias = np.ones((X_train.shape[0], 1))
    feats = np.hstack([X_train, bias])[order].reshape(N, n, -1)
    test = np.hstack([X_test, np.ones((X_test.shape[0], 1))])
    return FedPDMProblem(features=feats, labels=y_train[order].reshape(N, n), n_classes=n_classes, beta=beta,
                         gamma=gamma, test_features=test, test_labels=y_test)


def mnist_like_problem(rng: np.random.Generator, *, N: int = 100, n_train: int = 60_000, n_test: int = 10_000,
                       beta: float = 1e-2, gamma: float = 1e-4, side: int = 28) -> FedPDMProblem:
    """Synthetic "MNIST-shaped" data (spec 5.6): 10 smooth random class templates plus noise, clipped to [0, 1]
    and thresholded to about 80 % zeros; ``side x side`` pixels plus a bias (d = 10 (side^2 + 1) = 7850)."""
    _int("n_train", n_train, N)
    _int("n_test", n_test, 1)
    pix = side * side
    grid = np.linspace(0.0, 1.0, side)
    gx, gy = np.meshgrid(grid, grid)
    templates = np.zeros((10, pix))
    for k in range(10):  # 10 class templates: sums of 3 Gaussian blobs
        c = rng.uniform(0.2, 0.8, (3, 2))
        blobs = np.exp(-(((gx[None] - c[:, 0, None, None]) ** 2 + (gy[None] - c[:, 1, None, None]) ** 2) / 0.02))
        templates[k] = blobs.sum(axis=0).ravel()
    templates /= templates.max(axis=1, keepdims=True)
    total = n_train + n_test
    labels = rng.integers(0, 10, total)
    images = templates[labels] + 0.3 * rng.standard_normal((total, pix))
    images = np.clip(images, 0.0, 1.0)
    images[images < np.quantile(images, 0.8)] = 0.0
    return classification_problem(rng, images[:n_train], labels[:n_train], images[n_train:], labels[n_train:], N=N,
                                  beta=beta, gamma=gamma)


def digits_problem(rng: np.random.Generator, *, N: int = 10, beta: float = 1e-2, gamma: float = 1e-4) -> FedPDMProblem:
    """scikit-learn's bundled 8x8 digits (no download), pixels in [0, 1]: (m, n) = (10, 65), d = 650 (spec 5.6)."""
    from reference_impl.datasets import load_digits_images

    X_train, y_train, X_test, y_test = load_digits_images()
    return classification_problem(rng, X_train, y_train, X_test, y_test, N=N, beta=beta, gamma=gamma)


def mnist_npz_problem(path, rng: np.random.Generator, *, N: int = 100, beta: float = 1e-2,
                      gamma: float = 1e-4) -> FedPDMProblem:
    """A user's MNIST ``.npz`` (Keras layout, :func:`reference_impl.datasets.load_mnist_npz`) split over ``N`` clients."""
    from reference_impl.datasets import load_mnist_npz

    X_train, y_train, X_test, y_test = load_mnist_npz(path)
    return classification_problem(rng, X_train, y_train, X_test, y_test, N=N, beta=beta, gamma=gamma)


# --------------------------------------------------------------------------------------------------
# Losses, gradients, the Lagrangian (9) and the stationarity measure (21)


def _as_matrix(problem: FedPDMProblem, x: np.ndarray) -> np.ndarray:
    return x.reshape(*x.shape[:-1], problem.n_classes, problem.n_features)


def _batch_gradient(problem: FedPDMProblem, x: np.ndarray, a: np.ndarray, lab: np.ndarray) -> np.ndarray:
    r"""Mean gradient of :math:`f` over samples ``a`` (``(..., b, n_features)``) with labels ``lab`` (``(..., b)``).

    ``x``: ``(..., d)``. Scores through one batched matmul (``(..., b, m)``), gradient through another.
    """
    if problem.n_classes == 1:  # binary form: one score per sample, no class gather
        margin = (a @ x[..., None])[..., 0]
        coef = -special.expit(-margin) / a.shape[-2]
        grad = (coef[..., None, :] @ a)[..., 0, :]
        return _add_nonconvex_gradient(problem.beta, x, grad)
    X = _as_matrix(problem, x)
    scores = a @ np.swapaxes(X, -1, -2)  # (..., b, m)
    lab = np.broadcast_to(lab, scores.shape[:-1])
    margin = np.take_along_axis(scores, lab[..., None], axis=-1)[..., 0]
    coef = -special.expit(-margin) / a.shape[-2]  # d/ds log(1 + e^{-s}) = -sigma(-s)
    weights = np.zeros(scores.shape)
    np.put_along_axis(weights, lab[..., None], coef[..., None], axis=-1)
    grad = np.swapaxes(weights, -1, -2) @ a  # (..., m, n_features)
    return _add_nonconvex_gradient(problem.beta, x, grad.reshape(x.shape))


def _add_nonconvex_gradient(beta: float, x: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """``grad += beta * 2x/(1 + x^2)^2`` in place (``grad`` is a fresh array), four passes over memory."""
    if beta:
        t = x * x
        t += 1.0
        np.square(t, out=t)
        np.divide(x, t, out=t)
        t *= 2.0 * beta
        grad += t
    return grad


def client_gradients(problem: FedPDMProblem, x: np.ndarray, clients: np.ndarray | None = None) -> np.ndarray:
    r"""Full-data gradients :math:`\nabla f_i(x_i)`: ``x`` is ``(R, N, d)`` (or ``(R, k, d)`` with ``clients`` ``(R, k)``)."""
    if clients is None:
        a, lab = problem.features, problem.labels
    else:
        a, lab = problem.features[clients], problem.labels[clients]
    return _batch_gradient(problem, x, a, lab)


def _client_losses(problem: FedPDMProblem, x: np.ndarray) -> np.ndarray:
    """:math:`f_i(x_i)` for ``x`` of shape ``(R, N, d)``: ``(R, N)``."""
    X = _as_matrix(problem, x)
    scores = problem.features @ np.swapaxes(X, -1, -2)
    lab = np.broadcast_to(problem.labels, scores.shape[:-1])
    margin = np.take_along_axis(scores, lab[..., None], axis=-1)[..., 0]
    loss = np.logaddexp(0.0, -margin).mean(axis=-1)
    if problem.beta:
        loss = loss + problem.beta * (x * x / (1.0 + x * x)).sum(axis=-1)
    return loss


def global_objective(problem: FedPDMProblem, x0: np.ndarray) -> np.ndarray:
    r""":math:`F(x_0) = \frac1N\sum_i f_i(x_0) + \gamma\lVert x_0\rVert_1` (24) for ``x0`` of shape ``(R, d)``: ``(R,)``."""
    x0 = np.asarray(x0, dtype=np.float64)
    f = _client_losses(problem, np.broadcast_to(x0[:, None, :], (x0.shape[0], problem.N, problem.d)))
    return f.mean(axis=-1) + problem.gamma * np.abs(x0).sum(axis=-1)


def accuracy(problem: FedPDMProblem, x0: np.ndarray) -> np.ndarray:
    """Test accuracy of ``x0`` (``(R, d)``): argmax of the class scores (26) vs the label; ``n_classes = 1``:
    margin > 0 (labels folded into the features). NaN without test data."""
    if problem.test_features is None:
        return np.full(np.shape(x0)[0], np.nan)
    X = _as_matrix(problem, np.asarray(x0, dtype=np.float64))
    scores = problem.test_features @ np.swapaxes(X, -1, -2)  # (R, n_test, m)
    if problem.n_classes == 1:
        return (scores[..., 0] > 0).mean(axis=-1)
    return (np.argmax(scores, axis=-1) == problem.test_labels).mean(axis=-1)


def lagrangian(problem: FedPDMProblem, x, x0, lam, rho: float) -> np.ndarray:
    r"""The augmented Lagrangian (9) with its :math:`1/N`: ``(R,)`` for ``x, lam`` ``(R, N, d)``, ``x0`` ``(R, d)``.

    .. math:: \mathcal L = \frac1N\sum_i\big[f_i(x_i) + \lambda_i^\top(x_0 - x_i) + \tfrac\rho2\lVert x_0 - x_i\rVert^2\big] + \gamma\lVert x_0\rVert_1
    """
    diff = x0[:, None, :] - x
    terms = _client_losses(problem, x) + (lam * diff).sum(-1) + 0.5 * rho * (diff * diff).sum(-1)
    return terms.mean(axis=-1) + problem.gamma * np.abs(x0).sum(axis=-1)


def stationarity_measure(problem: FedPDMProblem, x, x0, lam, rho: float, *, normalised: bool = True) -> dict:
    r"""The stationarity measure (21), with the x_0 block as a subdifferential distance (spec 3.7, E24).

    .. math::

        P = \sum_j \lVert\nabla_{x_j}\mathcal L\rVert^2 + \lVert\nabla_{\lambda_j}\mathcal L\rVert^2
            + \mathrm{dist}\big(0, \partial_{x_0}\mathcal L\big)^2,

    :math:`\nabla_{x_j}\mathcal L = \frac1N(\nabla f_j(x_j) - \lambda_j + \rho(x_j - x_0))`,
    :math:`\nabla_{\lambda_j}\mathcal L = \frac1N(x_0 - x_j)`, :math:`\partial_{x_0}\mathcal L = g_0 + \gamma\,\partial\lVert x_0\rVert_1`,
    :math:`g_0 = \frac1N\sum_j(\lambda_j + \rho(x_0 - x_j))`. The sign test uses exact zeros of :math:`x_0`.
    ``normalised=False`` drops the :math:`1/N` of the client blocks (``P_unnorm``, a diagnostic).

    Returns ``{"P", "x", "lam", "x0"}``: the total and its three parts, each ``(R,)``.
    """
    scale = 1.0 / problem.N if normalised else 1.0
    grads = client_gradients(problem, x)
    gx = scale * (grads - lam + rho * (x - x0[:, None, :]))
    gl = scale * (x0[:, None, :] - x)
    g0 = (lam + rho * (x0[:, None, :] - x)).mean(axis=1)
    gam = problem.gamma
    r0 = np.where(x0 != 0.0, g0 + gam * np.sign(x0), np.maximum(np.abs(g0) - gam, 0.0))
    parts = {"x": (gx * gx).sum(axis=(-2, -1)), "lam": (gl * gl).sum(axis=(-2, -1)), "x0": (r0 * r0).sum(axis=-1)}
    return {"P": parts["x"] + parts["lam"] + parts["x0"], **parts}


def soft_threshold(u: np.ndarray, threshold: float) -> np.ndarray:
    r"""The seed's :math:`\mathrm{prox}_{\rho h}` for :math:`h = \gamma\lVert\cdot\rVert_1` at threshold ``gamma/rho``
    (line 136: :math:`\arg\min_x h(x) + \frac\rho2\lVert x - u\rVert^2`); exact zeros below the threshold."""
    return np.sign(u) * np.maximum(np.abs(u) - threshold, 0.0)


# --------------------------------------------------------------------------------------------------
# Configuration


@dataclass(frozen=True, kw_only=True)
class FedPDMConfig:
    r"""Algorithm 1's inputs and every [decision] of spec 2.1 / E16, validated.

    Attributes
    ----------
    K : int
        Clients sampled per round for :math:`t \ge 1` (seed; experiment 5).
    rounds : int
        :math:`T` (experiment 300).
    batch_size : int
        :math:`b` (experiment 30).
    batch_rule : {"disjoint", "fresh"}
        [decision] ``disjoint`` (default; line 166 read as disjoint batches of one permutation within a round,
        consistent with :math:`q = Qb/|D_i|`; needs ``Q_max * batch_size <= |D_i|``) or ``fresh`` (each local
        step draws its own batch without replacement; ``batch_size = |D_i|`` gives full-batch steps).
    rho : float
        Penalty :math:`\rho > 0` (experiment 10).
    eta0, eta_schedule : float, {"inv_sqrt", "constant"}
        :math:`\eta^t = \eta_0/\sqrt{1+t}` (the seed's literal schedule with :math:`\eta_0 = 1`, spec E25) or
        :math:`\eta^t = \eta_0`.
    nu : float
        Stopping threshold of (11) on :math:`\lVert g\rVert^2` (>= 0; 0 never stops early).
    Q_max : int
        [decision] Cap on the local steps (the seed's loop is unbounded, E5/E31).
    local_start : {"warm", "global"}
        [decision] :math:`x_i^{t,0} = x_i^t` (default) or :math:`x_0^t`.
    init : {"zeros", "normal"}
        [decision] :math:`x_0^0 = 0` (default) or :math:`\mathcal N(0, \text{init\_scale}^2 I)`; always
        :math:`x_i^0 = x_0^0`, :math:`\lambda_i^0 = 0`.
    first_round_all : bool
        :math:`S_0 = [N]` (line 161; default True).
    noise : {"dp", "none", "fixed"}
        ``dp``: :math:`\sigma_{i,t} = z\,s_{i,t}` by (18)-(19); ``none``: no noise (the "without DP" curves);
        ``fixed``: :math:`\sigma_{i,t} = ` ``sigma`` for every upload (Theorem 3's checks).
    sigma : float
        Per-coordinate noise std for ``noise = "fixed"``.
    epsilon, delta : float
        Per-round :math:`(\varepsilon, \delta)` for ``dp_calibration = "per_round_eps"`` (:math:`\delta` also the
        accounting target).
    dp_calibration : {"per_round_eps", "target_total_eps"}
        ``per_round_eps``: :math:`z = \sqrt{2\ln(1.25/\delta)}/\varepsilon` (18). ``target_total_eps`` (spec 5.5,
        Review notes): the smallest :math:`z` whose Poisson-subsampled-Gaussian RDP total at rate
        :math:`q = Q_{\max}b/|D_i|` over the **realised maximum participation count** :math:`\max_i n_i` of the
        (data-independent, pre-drawn) schedule is ``epsilon_total`` at :math:`\delta`.
    epsilon_total : float
        Target :math:`\bar\varepsilon` for ``target_total_eps``.
    noise_Q : {"adaptive", "cap"}
        Q in (19): the realised :math:`Q_i^t` (literal; data dependent, E5) or ``Q_max`` (the fix).
    G : float or None
        A3's gradient bound; None takes :func:`certified_G` of the problem (a proven bound; E32).
    sensitivity_model : {"eq19", "history"}
        ``eq19``: :math:`\sigma_{i,t} = z\,s_{i,t}` as the seed calibrates (valid only for a fixed round-start
        state, E4). ``history``: :math:`\sigma_{i,t} = z\,\kappa_n s_{i,t}` with the history factor :math:`\kappa_n` of
        the client's :math:`n`-th participation computed from its actual :math:`\eta/Q` sequence
        (:func:`theory.privacy.history.history_factors_fedpdm`, no cap; spec Review notes), which makes each upload
        :math:`(\varepsilon, \delta)`-DP given the released history. Needs ``noise_Q = "cap"``. With warm start and
        :math:`(1-\eta\rho)^Q \le -1/3` the factor grows geometrically with the participation count (it is computed,
        never capped); a factor beyond the double range raises.
    prox_threshold_factor : float
        Threshold = factor :math:`\cdot\gamma/\rho`. 1 is the seed's (13); other values exist only to show that the
        wrong thresholds of E12/E13 (:math:`\gamma/(N\rho)`, :math:`\rho\gamma`) miss the optimum.
    """

    K: int
    rounds: int
    batch_size: int
    rho: float
    eta0: float
    nu: float
    Q_max: int
    eta_schedule: str = "inv_sqrt"
    batch_rule: str = "disjoint"
    local_start: str = "warm"
    init: str = "zeros"
    init_scale: float = 0.0
    first_round_all: bool = True
    noise: str = "dp"
    sigma: float = 0.0
    epsilon: float = 1.0
    delta: float = 1e-5
    dp_calibration: str = "per_round_eps"
    epsilon_total: float = 7.0
    noise_Q: str = "cap"
    G: float | None = None
    prox_threshold_factor: float = 1.0
    sensitivity_model: str = "eq19"

    def __post_init__(self) -> None:
        _int("K", self.K, 1)
        _int("rounds", self.rounds, 1)
        _int("batch_size", self.batch_size, 1)
        _int("Q_max", self.Q_max, 1)
        _real("rho", self.rho, 0.0, lower_open=True)
        _real("eta0", self.eta0, 0.0, lower_open=True)
        _real("nu", self.nu, 0.0)
        _real("init_scale", self.init_scale, 0.0)
        _real("sigma", self.sigma, 0.0)
        _real("epsilon", self.epsilon, 0.0, lower_open=True)
        _real("delta", self.delta, 0.0, 1.0, lower_open=True, upper_open=True)
        _real("epsilon_total", self.epsilon_total, 0.0, lower_open=True)
        _real("prox_threshold_factor", self.prox_threshold_factor, 0.0)
        if self.G is not None:
            _real("G", self.G, 0.0, lower_open=True)
        _choice("eta_schedule", self.eta_schedule, ("inv_sqrt", "constant"))
        _choice("batch_rule", self.batch_rule, ("disjoint", "fresh"))
        _choice("local_start", self.local_start, ("warm", "global"))
        _choice("init", self.init, ("zeros", "normal"))
        _choice("noise", self.noise, ("dp", "none", "fixed"))
        _choice("dp_calibration", self.dp_calibration, ("per_round_eps", "target_total_eps"))
        _choice("noise_Q", self.noise_Q, ("adaptive", "cap"))
        _choice("sensitivity_model", self.sensitivity_model, ("eq19", "history"))
        if self.sensitivity_model == "history" and self.noise_Q != "cap":
            raise ValueError(f"sensitivity_model = 'history' needs noise_Q = 'cap' (Q fixed in advance), got noise_Q = "
                             f"{self.noise_Q!r}")
        if not isinstance(self.first_round_all, bool):
            raise ValueError(f"first_round_all must be true or false, got {self.first_round_all!r}")

    def eta(self, t: int) -> float:
        """Step size of round ``t``."""
        return self.eta0 / math.sqrt(1.0 + t) if self.eta_schedule == "inv_sqrt" else self.eta0

    def validate_for(self, problem: FedPDMProblem) -> None:
        """Checks that need the problem: K <= N, batch sizes, q < 1 for the accountant."""
        _int("K", self.K, 1, problem.N)
        _int("batch_size", self.batch_size, 1, problem.n)
        if self.batch_rule == "disjoint" and self.Q_max * self.batch_size > problem.n:
            raise ValueError(f"Q_max * batch_size must be <= |D_i| = {problem.n} with batch_rule = 'disjoint', got "
                             f"{self.Q_max} * {self.batch_size} = {self.Q_max * self.batch_size}")
        if self.noise == "dp" and self.dp_calibration == "target_total_eps" and self.q(problem) >= 1.0:
            raise ValueError(f"Q_max * batch_size must be < |D_i| = {problem.n} for target_total_eps (q < 1), got "
                             f"{self.Q_max * self.batch_size}")

    def q(self, problem: FedPDMProblem) -> float:
        r"""Data fraction per round :math:`q = Q_{\max} b/|D_i|` (Q public, E5)."""
        return self.Q_max * self.batch_size / problem.n


def sensitivity_table(eta: float, rho: float, Q_max: int, G: float) -> np.ndarray:
    """``table[Q] = s`` of eq. (19) for Q = 0..Q_max (entry 0 unused, 0), via :func:`sensitivity_fedpdm`."""
    return np.array([0.0] + [sensitivity_fedpdm(eta, rho, Q, G) for Q in range(1, Q_max + 1)])


def participation_schedule(N: int, K: int, rounds: int, rng: np.random.Generator, *, runs: int = 1,
                           first_round_all: bool = True) -> np.ndarray:
    """Boolean ``(runs, rounds, N)``: uniform K-subsets without replacement per round; round 0 all clients."""
    keys = rng.random((runs, rounds, N))
    ranks = np.argsort(np.argsort(keys, axis=-1), axis=-1)
    mask = ranks < K
    if first_round_all:
        mask[:, 0, :] = True
    return mask


def calibrate_noise_multiplier(epsilon_total: float, delta: float, q: float, participations: int) -> float:
    r"""Smallest :math:`z` (to relative 1e-9, rounded up) with Poisson-RDP total <= ``epsilon_total`` after
    ``participations`` compositions at rate ``q`` (in-house accountant, standard conversion; spec 4.3(i))."""
    _real("epsilon_total", epsilon_total, 0.0, lower_open=True)
    _int("participations", participations, 1)

    def total(z):
        return rdp_to_approx_dp(participations * rdp_poisson_subsampled_gaussian(q, z, ORDERS), ORDERS, delta)[0]

    lo, hi = 1e-2, 1.0
    while total(hi) > epsilon_total:
        lo, hi = hi, 2.0 * hi
        if hi > 1e6:
            raise ValueError(f"epsilon_total = {epsilon_total!r} needs a noise multiplier above 1e6")
    for _ in range(200):
        if hi - lo <= 1e-9 * hi:
            break
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if total(mid) > epsilon_total else (lo, mid)
    return hi


# --------------------------------------------------------------------------------------------------
# State and one round


@dataclass(frozen=True, kw_only=True)
class FedPDMState:
    """Algorithm state for ``R`` runs: client models ``x`` and duals ``lam`` ``(R, N, d)``, global ``x0`` ``(R, d)``."""

    x: np.ndarray
    lam: np.ndarray
    x0: np.ndarray


@dataclass(frozen=True, kw_only=True)
class RoundRecord:
    """What one round did, for the sampled clients ``clients`` ``(R, k)`` (all arrays indexed like it)."""

    t: int
    eta: float
    clients: np.ndarray
    Q: np.ndarray  # (R, k) local steps taken
    fired: np.ndarray  # (R, k) rule (11) fired
    last_g: np.ndarray  # (R, k, d) the g of the last step (the one tested by (11))
    y: np.ndarray  # (R, k, d) pre-noise uploads
    y_tilde: np.ndarray  # (R, k, d) noisy uploads
    sigma: np.ndarray  # (R, k) per-coordinate noise std
    s: np.ndarray  # (R, k) sensitivity (19) used
    batches: np.ndarray  # (R, k, Q_max, b) sample indices of each step
    phi2: np.ndarray  # (R, k) largest A2 variance over the round's visited iterates (nan unless track_variance)
    x0_prev: np.ndarray
    lam_prev: np.ndarray  # (R, k, d)


def initial_state(problem: FedPDMProblem, config: FedPDMConfig, rng: np.random.Generator, runs: int) -> FedPDMState:
    """Line 1 of the pseudo-code: x_0^0 (zeros or normal), x_i^0 = x_0^0, lam_i^0 = 0."""
    x0 = (np.zeros((runs, problem.d)) if config.init == "zeros"
          else config.init_scale * rng.standard_normal((runs, problem.d)))
    return FedPDMState(x=np.repeat(x0[:, None, :], problem.N, axis=1), lam=np.zeros((runs, problem.N, problem.d)),
                       x0=x0)


def _variance_a2(problem: FedPDMProblem, z: np.ndarray, clients: np.ndarray, b: int) -> np.ndarray:
    """Exact mini-batch variance of uniform b-of-n sampling without replacement at ``z`` (spec 3.4 A2), ``(R, k)``."""
    n = problem.n
    if b >= n:
        return np.zeros(z.shape[:2])
    a = problem.features[clients]  # (R, k, n, f)
    lab = problem.labels[clients]
    X = _as_matrix(problem, z)
    scores = a @ np.swapaxes(X, -1, -2)
    margin = np.take_along_axis(scores, lab[..., None], axis=-1)[..., 0]
    coef = -special.expit(-margin)  # (R, k, n); per-sample gradient = coef e_lab a^T (+ beta term, common)
    # sum_j ||g_j - mean||^2 = sum_j coef_j^2 ||a_j||^2 - n ||mean||^2
    sq = (coef**2 * (a * a).sum(-1)).sum(-1)
    weights = np.zeros(scores.shape)
    np.put_along_axis(weights, lab[..., None], coef[..., None], axis=-1)
    mean = (np.swapaxes(weights, -1, -2) @ a) / n
    spread = np.maximum(sq - n * (mean * mean).sum(axis=(-2, -1)), 0.0) / n
    return (n - b) / (b * (n - 1)) * spread


def fedpdm_round(problem: FedPDMProblem, config: FedPDMConfig, state: FedPDMState, t: int, sampled: np.ndarray,
                 rng: np.random.Generator, *, z: float, G: float, track_variance: bool = False,
                 kappa: np.ndarray | None = None) -> tuple[FedPDMState, RoundRecord]:
    r"""One round of Algorithm 1 for every run: local steps (10a)-(11), dual (10c), upload (10d) + noise, prox (13).

    ``sampled``: boolean ``(R, N)`` with the same number of clients per run. ``z``: noise multiplier
    (``noise = "dp"``). ``kappa``: ``(R, N)`` history factors of this round (``sensitivity_model = "history"``).
    Returns the new state (non-sampled clients unchanged) and the :class:`RoundRecord`.
    """
    R, N = sampled.shape
    k = int(sampled[0].sum())
    if not np.all(sampled.sum(axis=1) == k):
        raise ValueError("sampled must select the same number of clients in every run")
    clients = np.nonzero(sampled)[1].reshape(R, k)
    rows = np.arange(R)[:, None]
    eta, rho, b, Qm = config.eta(t), config.rho, config.batch_size, config.Q_max
    x_i, lam_i, x0 = state.x[rows, clients], state.lam[rows, clients], state.x0
    z_loc = x_i.copy() if config.local_start == "warm" else np.repeat(x0[:, None, :], k, axis=1)
    n = problem.n
    base = np.broadcast_to(np.arange(n), (R, k, n))
    full_batch = b == n  # every step uses all of D_i: no draw, no gather (the mean does not depend on the order)
    batches = np.full((R, k, Qm, b), -1, dtype=np.int64)  # -1: step not taken
    if full_batch:
        batches[...] = np.arange(n)
    elif config.batch_rule == "disjoint":
        batches[...] = rng.permuted(base, axis=-1)[..., : Qm * b].reshape(R, k, Qm, b)
    cl = clients[..., None]  # gather only the batches, never a copy of the clients' data
    running = np.ones((R, k), dtype=bool)
    Q = np.zeros((R, k), dtype=np.int64)
    last_g = np.zeros_like(z_loc)
    phi2 = np.full((R, k), np.nan)
    if track_variance:
        phi2 = _variance_a2(problem, z_loc, clients, b)
    for r in range(Qm):
        if full_batch:
            a, lab = problem.features[clients], problem.labels[clients]
        else:
            if config.batch_rule == "fresh":
                batches[:, :, r, :] = rng.permuted(base, axis=-1)[..., :b]
            idx = batches[:, :, r, :]
            a, lab = problem.features[cl, idx], problem.labels[cl, idx]  # (R, k, b, f), (R, k, b)
        g = _batch_gradient(problem, z_loc, a, lab)  # line 7, in place: g - lam + rho (z - x0)
        g -= lam_i
        step = np.subtract(z_loc, x0[:, None, :])
        step *= rho
        g += step
        np.multiply(g, eta, out=step)
        if running.all():
            z_loc -= step  # (10a)
            last_g = g
        else:
            z_loc = np.where(running[..., None], z_loc - step, z_loc)
            last_g = np.where(running[..., None], g, last_g)
        Q = np.where(running, r + 1, Q)
        if config.nu > 0:
            fired_now = running & (np.einsum("rkd,rkd->rk", g, g) <= config.nu)  # (11), the same g
            running = running & ~fired_now
        if track_variance:
            phi2 = np.fmax(phi2, np.where(Q == r + 1, _variance_a2(problem, z_loc, clients, b), np.nan))
        if not running.any():
            break
    fired = ~running
    x_new = z_loc  # (10b)
    lam_new = lam_i + rho * (x0[:, None, :] - x_new)  # (10c), old x_0^t
    y = x_new - lam_new / rho  # (10d)
    Qn = Q if config.noise_Q == "adaptive" else np.full((R, k), Qm)
    s = np.zeros((R, k))
    for q_value in np.unique(Qn):  # at most Q_max distinct step counts, not clients
        s[Qn == q_value] = sensitivity_fedpdm(eta, rho, int(q_value), G)
    if config.noise == "dp":
        sigma = z * s if kappa is None else z * s * kappa[rows, clients]
    elif config.noise == "fixed":
        sigma = np.full((R, k), config.sigma)
    else:
        sigma = np.zeros((R, k))
    if config.noise == "none":
        y_tilde = y.copy()
    else:
        y_tilde = y + sigma[..., None] * rng.standard_normal(y.shape)
    u = y_tilde.mean(axis=1)  # (13), average over S_t (E14, E15)
    x0_new = soft_threshold(u, config.prox_threshold_factor * problem.gamma / rho)
    x, lam = state.x.copy(), state.lam.copy()
    x[rows, clients] = x_new
    lam[rows, clients] = lam_new
    record = RoundRecord(t=t, eta=eta, clients=clients, Q=Q, fired=fired, last_g=last_g, y=y, y_tilde=y_tilde,
                         sigma=sigma, s=s, batches=batches, phi2=phi2, x0_prev=x0, lam_prev=lam_i)
    return FedPDMState(x=x, lam=lam, x0=x0_new), record


# --------------------------------------------------------------------------------------------------
# Runs


@dataclass(frozen=True, kw_only=True)
class FedPDMRun:
    """A finished run: final state, per-round observations (``observations[name]`` ``(T + 1, R)``: before round 0
    and after every round), participation mask ``(R, T, N)``, local steps ``Q`` ``(R, T, N)`` (0: not sampled),
    noise std ``sigma`` ``(R, T, N)``, noise multiplier ``z``, ``G`` and ``phi2`` (max A2 variance, ``(R,)``)."""

    state: FedPDMState
    observations: dict
    participation: np.ndarray
    Q: np.ndarray
    sigma: np.ndarray
    z: float
    G: float
    phi2: np.ndarray
    etas: np.ndarray
    records: list = field(default_factory=list, repr=False)

    @property
    def participation_counts(self) -> np.ndarray:
        """Realised participation counts :math:`n_i` ``(R, N)`` (spec Review notes)."""
        return self.participation.sum(axis=1)


def history_factor_table(participation: np.ndarray, etas, Q: int, rho: float, local_start: str) -> np.ndarray:
    r"""``(R, T, N)``: the history factor :math:`\kappa_n` of each client's participation at each round (1 elsewhere).

    The schedule is data independent and drawn before the run, so the factors are computed once, per client, from
    its own participation rounds' :math:`\eta^t` and the fixed ``Q`` (a setup loop over clients, not per round).
    With warm start and :math:`(1-\eta\rho)^Q \le -1/3` the factors grow geometrically (computed, not capped); a factor
    beyond the double range raises ValueError.
    """
    from theory.privacy.history import history_factors_fedpdm

    etas = np.asarray(etas, dtype=np.float64)
    out = np.ones(participation.shape)
    for r, i in zip(*np.nonzero(participation.any(axis=1))):
        rounds = np.flatnonzero(participation[r, :, i])
        k = history_factors_fedpdm(etas[rounds], [int(Q)] * rounds.size, rho, local_start=local_start)
        if not np.all(np.isfinite(k)):
            raise ValueError(f"sensitivity_model = 'history': the history factor overflows for this schedule (client {i}, "
                             f"local_start = {local_start!r}; warm start with (1 - eta rho)^Q <= -1/3 grows "
                             f"geometrically, spec Review notes)")
        out[r, rounds, i] = k
    return out


def _noise_multiplier(problem, config, participation) -> float:
    if config.noise != "dp":
        return 0.0
    if config.dp_calibration == "per_round_eps":
        return noise_multiplier_fedpdm(config.epsilon, config.delta)
    n_max = int(participation.sum(axis=1).max())
    return calibrate_noise_multiplier(config.epsilon_total, config.delta, config.q(problem), n_max)


def run_fedpdm(problem: FedPDMProblem, config: FedPDMConfig, rng: np.random.Generator, *, runs: int = 1,
               observers: dict[str, Callable] | None = None, state: FedPDMState | None = None,
               keep_records: bool = False, track_variance: bool = False, round_fn: Callable | None = None) -> FedPDMRun:
    r"""Run Algorithm 1 for ``config.rounds`` rounds, ``runs`` independent runs side by side.

    ``observers``: ``name -> fn(state) -> (R,)`` evaluated before round 0 and after every round (e.g.
    ``lambda s: global_objective(problem, s.x0)``). The client-sampling schedule is drawn first (it is
    data independent), so ``target_total_eps`` can calibrate on the realised :math:`\max_i n_i`.
    ``round_fn`` replaces :func:`fedpdm_round` (same signature; used by the mutation tests only).
    """
    round_fn = fedpdm_round if round_fn is None else round_fn
    config.validate_for(problem)
    _int("runs", runs, 1)
    G = certified_G(problem) if config.G is None else config.G
    participation = participation_schedule(problem.N, config.K, config.rounds, rng, runs=runs,
                                           first_round_all=config.first_round_all)
    z = _noise_multiplier(problem, config, participation)
    kappas = (history_factor_table(participation, [config.eta(t) for t in range(config.rounds)], config.Q_max,
                                   config.rho, config.local_start)
              if config.noise == "dp" and config.sensitivity_model == "history" else None)
    if state is None:
        state = initial_state(problem, config, rng, runs)
    observers = observers or {}
    obs = {name: [np.asarray(fn(state), dtype=np.float64)] for name, fn in observers.items()}
    T = config.rounds
    Q = np.zeros((runs, T, problem.N), dtype=np.int64)
    sigma = np.zeros((runs, T, problem.N))
    phi2 = np.full(runs, np.nan)
    records = []
    rows = np.arange(runs)[:, None]
    for t in range(T):
        extra = {} if kappas is None else {"kappa": kappas[:, t]}
        state, rec = round_fn(problem, config, state, t, participation[:, t], rng, z=z, G=G,
                              track_variance=track_variance, **extra)
        Q[rows, t, rec.clients] = rec.Q
        sigma[rows, t, rec.clients] = rec.sigma
        if track_variance:
            phi2 = np.fmax(phi2, rec.phi2.max(axis=1))
        if keep_records:
            records.append(rec)
        for name, fn in observers.items():
            obs[name].append(np.asarray(fn(state), dtype=np.float64))
    return FedPDMRun(state=state, observations={k: np.array(v) for k, v in obs.items()}, participation=participation,
                     Q=Q, sigma=sigma, z=z, G=G, phi2=phi2, etas=np.array([config.eta(t) for t in range(T)]),
                     records=records)


# --------------------------------------------------------------------------------------------------
# Baselines (reconstructions, spec 5.3)


@dataclass(frozen=True, kw_only=True)
class BaselineConfig:
    r"""A reconstructed DP baseline (spec 5.3, [decision]; the seed gives no details).

    Attributes
    ----------
    name : {"fedavg", "fedprox", "scaffold"}
    local_steps : int or None
        :math:`E` local SGD steps (default: the FedPDM config's ``Q_max``).
    eta_cap : float
        The FedPDM :math:`\eta^t` schedule capped at ``eta_cap`` "for stability".
    mu : float
        FedProx proximal weight (spec: sweep {0.01, 0.1, 1}).
    """

    name: str
    local_steps: int | None = None
    eta_cap: float = 0.1
    mu: float = 0.1

    def __post_init__(self) -> None:
        _choice("name", self.name, ("fedavg", "fedprox", "scaffold"))
        if self.local_steps is not None:
            _int("local_steps", self.local_steps, 1)
        _real("eta_cap", self.eta_cap, 0.0, lower_open=True)
        _real("mu", self.mu, 0.0)


def _baseline_sensitivity(baseline: BaselineConfig, eta: float, E: int, G: float) -> float:
    if baseline.name == "fedprox":
        a = abs(1.0 - eta * baseline.mu)
        geometric = float(E) if a == 1.0 else (1.0 - a**E) / (1.0 - a)
        return 2.0 * eta * G * geometric
    return 2.0 * eta * G * E  # FedAvg and SCAFFOLD's model delta


def run_baseline(problem: FedPDMProblem, config: FedPDMConfig, baseline: BaselineConfig, rng: np.random.Generator, *,
                 runs: int = 1, observers: dict[str, Callable] | None = None) -> FedPDMRun:
    r"""FedAvg-DP, FedProx-DP or SCAFFOLD-DP (reconstructions of spec 5.3), same sampling, batches and noise multiplier.

    Local step on :math:`f_i + \gamma\lVert\cdot\rVert_1` by subgradient:
    FedAvg :math:`x \leftarrow x - \eta(g + \gamma\,\mathrm{sign}\,x)`; FedProx adds :math:`\mu(x - x_0)`;
    SCAFFOLD adds :math:`-c_i + c`, with :math:`c_i^+ = c_i - c + (x_0 - x)/(E\eta)`. Uploads with Gaussian noise
    :math:`z\,s`: the local model (FedAvg, FedProx; :math:`s = 2\eta GE`, resp. the FedProx geometric sum),
    :math:`\Delta x` (:math:`s = 2\eta GE`) and :math:`\Delta c_i` (:math:`s = 2G`) for SCAFFOLD (two releases per
    round: its RDP per round is twice FedPDM's at the same z). Server: average (global step 1); SCAFFOLD
    :math:`c \leftarrow c + \frac{|S_t|}{N}\overline{\Delta c}`.
    """
    config.validate_for(problem)
    E = baseline.local_steps or config.Q_max
    if config.batch_rule == "disjoint" and E * config.batch_size > problem.n:
        raise ValueError(f"local_steps * batch_size must be <= |D_i| = {problem.n}, got {E} * {config.batch_size}")
    G = certified_G(problem) if config.G is None else config.G
    participation = participation_schedule(problem.N, config.K, config.rounds, rng, runs=runs,
                                           first_round_all=config.first_round_all)
    z = _noise_multiplier(problem, config, participation)
    R, N, d, b, n = runs, problem.N, problem.d, config.batch_size, problem.n
    x0 = (np.zeros((R, d)) if config.init == "zeros" else config.init_scale * rng.standard_normal((R, d)))
    c_i, c = np.zeros((R, N, d)), np.zeros((R, d))
    observers = observers or {}
    state = FedPDMState(x=np.repeat(x0[:, None], N, axis=1), lam=np.zeros((R, N, d)), x0=x0)
    obs = {name: [np.asarray(fn(state), dtype=np.float64)] for name, fn in observers.items()}
    sigma_all = np.zeros((R, config.rounds, N))
    rows = np.arange(R)[:, None]
    for t in range(config.rounds):
        sampled = participation[:, t]
        k = int(sampled[0].sum())
        clients = np.nonzero(sampled)[1].reshape(R, k)
        eta = min(config.eta(t), baseline.eta_cap)
        base = np.broadcast_to(np.arange(n), (R, k, n))
        if config.batch_rule == "disjoint":
            batches = rng.permuted(base, axis=-1)[..., : E * b].reshape(R, k, E, b)
        else:
            batches = np.stack([rng.permuted(base, axis=-1)[..., :b] for _ in range(E)], axis=2)
        cl = clients[..., None]
        x = np.repeat(x0[:, None, :], k, axis=1)
        ci = c_i[rows, clients]
        for r in range(E):
            idx = batches[:, :, r, :]
            g = _batch_gradient(problem, x, problem.features[cl, idx], problem.labels[cl, idx]) + problem.gamma * np.sign(x)
            if baseline.name == "fedprox":
                g = g + baseline.mu * (x - x0[:, None, :])
            elif baseline.name == "scaffold":
                g = g - ci + c[:, None, :]
            x = x - eta * g
        s = _baseline_sensitivity(baseline, eta, E, G)
        sig = z * s if config.noise == "dp" else (config.sigma if config.noise == "fixed" else 0.0)
        sigma_all[rows, t, clients] = sig
        noise = (lambda shape: sig * rng.standard_normal(shape)) if sig > 0 else (lambda shape: np.zeros(shape))
        if baseline.name == "scaffold":
            ci_new = ci - c[:, None, :] + (x0[:, None, :] - x) / (E * eta)
            dx = (x - x0[:, None, :]) + noise(x.shape)
            sig_c = z * 2.0 * G if config.noise == "dp" else sig
            dc = (ci_new - ci) + (sig_c * rng.standard_normal(x.shape) if sig_c > 0 else 0.0)
            c_i[rows, clients] = ci_new
            x0 = x0 + dx.mean(axis=1)
            c = c + (k / N) * dc.mean(axis=1)
        else:
            x0 = (x + noise(x.shape)).mean(axis=1)
        state = FedPDMState(x=state.x, lam=state.lam, x0=x0)
        for name, fn in observers.items():
            obs[name].append(np.asarray(fn(state), dtype=np.float64))
    return FedPDMRun(state=state, observations={k_: np.array(v) for k_, v in obs.items()}, participation=participation,
                     Q=np.where(participation, E, 0), sigma=sigma_all, z=z, G=G, phi2=np.full(R, np.nan),
                     etas=np.array([min(config.eta(t), baseline.eta_cap) for t in range(config.rounds)]))


@dataclass(frozen=True, kw_only=True)
class ArmCurve:
    """One arm on one replicate: training loss :math:`F(x_0^t)` (24) and test accuracy for t = 0..T."""

    arm: str
    loss: np.ndarray
    accuracy: np.ndarray
    z: float


def run_arm(arm: str, problem: FedPDMProblem, config: FedPDMConfig, seed: int, *,
            baseline: BaselineConfig | None = None) -> ArmCurve:
    """Run one experiment arm (``fedpdm`` or a baseline name) on one replicate seed; the building block of the
    spec 5 comparisons (common client sampling given the seed). Returns the loss and accuracy curves."""
    _choice("arm", arm, ARMS)
    rng = np.random.default_rng(seed)
    observers = {"loss": lambda s: global_objective(problem, s.x0), "accuracy": lambda s: accuracy(problem, s.x0)}
    if arm == "fedpdm":
        run = run_fedpdm(problem, config, rng, observers=observers)
    else:
        base = baseline if baseline is not None else BaselineConfig(name=arm)
        if base.name != arm:
            raise ValueError(f"baseline.name must equal arm = {arm!r}, got {base.name!r}")
        run = run_baseline(problem, config, base, rng, observers=observers)
    return ArmCurve(arm=arm, loss=run.observations["loss"][:, 0], accuracy=run.observations["accuracy"][:, 0], z=run.z)
