r"""The FedPDM-DP problem: federated data, the objective (24), its certified constants, and the data sets.

:class:`FedPDMProblem` holds the clients' samples (rows of arrays) and the weights of (24)-(25);
:func:`certified_G` is Assumption 3's gradient bound and :attr:`FedPDMProblem.L_smooth` Assumption 1's smoothness
constant, a certified upper bound computed once per instance by
:func:`reference_impl.fedpdm.smoothness.smoothness_bracket` (cost announced in advance by
:func:`reference_impl.fedpdm.smoothness.estimate_smoothness_cost`). Instances: :func:`instance_nc` (synthetic
sparse l1-logistic, binary), :func:`mnist_like_problem` (synthetic MNIST-shaped), :func:`digits_problem`
(scikit-learn's digits), :func:`mnist_npz_problem` (a user's MNIST ``.npz``), all through
:func:`classification_problem` (IID split).

References
----------
.. [1] Li, Huang, Wang, Chi, Quek, "Privacy-preserving federated primal-dual learning for non-convex problems with
   non-smooth regularization" (seed 001_322f61f9958f64f9.txt): Assumptions 1 and 3, Theorem 3, loss (24)-(25)
   (lines 247-253), Section V-A; docs/papers/fedpdm.md (the instances and the certified constants).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from reference_impl.fedpdm._validate import check_int, check_real, readonly_array
from reference_impl.fedpdm.smoothness import SmoothnessBracket, smoothness_bracket

__all__ = [
    "FedPDMProblem",
    "binary_logistic_problem",
    "certified_G",
    "classification_problem",
    "digits_problem",
    "instance_nc",
    "mnist_like_problem",
    "mnist_npz_problem",
]

#: max_x 2x/(1+x^2)^2: the largest slope of x^2/(1+x^2) (Assumption 3's bound, :func:`certified_G`).
_SLOPE = 3.0 * math.sqrt(3.0) / 8.0


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
            raise ValueError(f"features must be a finite (N, n, n_features) array with every size >= 1, got shape "
                             f"{a.shape}")
        check_int("n_classes", self.n_classes, 1)
        lab = np.asarray(self.labels)
        if lab.shape != a.shape[:2] or not np.issubdtype(lab.dtype, np.integer) or lab.min() < 0 or (
                lab.max() >= self.n_classes):
            raise ValueError(f"labels must be integers in [0, {self.n_classes - 1}] of shape {a.shape[:2]}, got "
                             f"shape {lab.shape} dtype {lab.dtype}")
        object.__setattr__(self, "beta", check_real("beta", self.beta, 0.0))
        object.__setattr__(self, "gamma", check_real("gamma", self.gamma, 0.0))
        object.__setattr__(self, "features", readonly_array(a))
        object.__setattr__(self, "labels", readonly_array(lab, np.int64))
        if (self.test_features is None) != (self.test_labels is None):
            raise ValueError("test_features and test_labels must be given together")
        if self.test_features is not None:
            tf, tl = np.asarray(self.test_features), np.asarray(self.test_labels)
            if tf.ndim != 2 or tf.shape[1] != a.shape[2] or tl.shape != (tf.shape[0],) or tl.min() < 0 or (
                    tl.max() >= self.n_classes):
                raise ValueError(f"test_features must be (n_test, {a.shape[2]}) and test_labels (n_test,) in "
                                 f"[0, {self.n_classes - 1}], got {tf.shape} and {tl.shape}")
            object.__setattr__(self, "test_features", readonly_array(tf))
            object.__setattr__(self, "test_labels", readonly_array(tl, np.int64))

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

    @functools.cached_property
    def smoothness(self) -> SmoothnessBracket:
        """The certified bracket of the smoothness constant, computed once per instance (:func:`smoothness_bracket`)."""
        return smoothness_bracket(self)

    @property
    def L_smooth(self) -> float:
        r"""A certified smoothness constant of every :math:`f_i` (Assumption 1), an upper bound by construction:
        :math:`0.25\,\Lambda^{+} + 2\beta` with
        :math:`\Lambda^{+} \ge \max_i\max_k\lambda_{\max}(\frac1{|D_i|}\sum_{j: k'_j = k} a_{ij}a_{ij}^\top)` from
        :func:`~reference_impl.fedpdm.smoothness.smoothness_bracket` (the logistic Hessian is block diagonal over
        classes with weights <= 1/4; the second derivative of :math:`x^2/(1+x^2)` lies in [-1/2, 2]). Computed on
        first use and kept (:attr:`smoothness`)."""
        return self.smoothness.L_smooth


def certified_G(problem: FedPDMProblem) -> float:
    r"""Assumption 3's bound on every mini-batch gradient norm, proven for the loss:
    :math:`\max\lVert a\rVert + (3\sqrt3/8)\beta\sqrt d`.

    The logistic part is a convex combination of :math:`\sigma(-s)\,e_{k'}a^\top` (norm <= :math:`\lVert a\rVert`);
    each coordinate of the non-convex term's gradient is at most :math:`(3\sqrt3/8)\beta` (docs/papers/fedpdm.md).
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
    r"""The synthetic instance NC of docs/papers/fedpdm.md (``beta = 0`` gives its convex twin CVX): Gaussian
    features plus a client shift, rows rescaled to :math:`\lVert a\rVert \le 1`, labels from a sparse ground-truth
    logistic model."""
    check_int("N", N, 1), check_int("n", n, 1), check_int("d", d, 1)
    truth = np.where(rng.uniform(size=d) < sparsity, 3.0 * rng.standard_normal(d), 0.0)
    a = rng.standard_normal((N, n, d)) + shift * rng.standard_normal((N, 1, d))
    a *= (rng.uniform(0.5, 1.0, (N, n)) / np.linalg.norm(a, axis=-1))[..., None]
    y = np.where(rng.uniform(size=(N, n)) < special.expit(a @ truth), 1.0, -1.0)
    return binary_logistic_problem(a, y, beta=beta, gamma=gamma)


def classification_problem(rng: np.random.Generator, X_train, y_train, X_test, y_test, *, N: int, beta: float,
                           gamma: float, n_classes: int = 10) -> FedPDMProblem:
    """IID split of a classification set into ``N`` clients of equal size (remainder dropped), bias feature appended.

    Features are used as given (pixels in [0, 1], a choice the paper leaves open); the loss is (25) with
    ``n_classes`` rows.
    """
    X_train, X_test = np.asarray(X_train, dtype=np.float64), np.asarray(X_test, dtype=np.float64)
    y_train, y_test = np.asarray(y_train, dtype=np.int64), np.asarray(y_test, dtype=np.int64)
    check_int("N", N, 1, X_train.shape[0])
    order = rng.permutation(X_train.shape[0])
    n = X_train.shape[0] // N
    order = order[: N * n]
    feats, test = _with_bias(X_train[order]).reshape(N, n, -1), _with_bias(X_test)
    return FedPDMProblem(features=feats, labels=y_train[order].reshape(N, n), n_classes=n_classes, beta=beta,
                         gamma=gamma, test_features=test, test_labels=y_test)


def _with_bias(X: np.ndarray) -> np.ndarray:
    """``[X, 1]`` written once into a fresh array, made read-only (the instance keeps it without a copy)."""
    out = np.empty((X.shape[0], X.shape[1] + 1))
    out[:, :-1] = X
    out[:, -1] = 1.0
    out.setflags(write=False)
    return out


def mnist_like_problem(rng: np.random.Generator, *, N: int = 100, n_train: int = 60_000, n_test: int = 10_000,
                       beta: float = 1e-2, gamma: float = 1e-4, side: int = 28) -> FedPDMProblem:
    """Synthetic "MNIST-shaped" data (docs/papers/fedpdm.md): 10 smooth random class templates plus noise, clipped to
    [0, 1] and thresholded to about 80 % zeros; ``side x side`` pixels plus a bias (d = 10 (side^2 + 1) = 7850)."""
    check_int("n_train", n_train, N)
    check_int("n_test", n_test, 1)
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
    images = rng.standard_normal((total, pix))
    for start in range(0, total, 4096):  # templates + 0.3 noise, in place by blocks of rows (no image-sized temporary)
        block = images[start:start + 4096]
        block *= 0.3
        block += templates[labels[start:start + 4096]]
    np.clip(images, 0.0, 1.0, out=images)
    images[images < np.quantile(images, 0.8)] = 0.0
    return classification_problem(rng, images[:n_train], labels[:n_train], images[n_train:], labels[n_train:], N=N,
                                  beta=beta, gamma=gamma)


def digits_problem(rng: np.random.Generator, *, N: int = 10, beta: float = 1e-2, gamma: float = 1e-4) -> FedPDMProblem:
    """scikit-learn's bundled 8x8 digits (no download), pixels in [0, 1]: (m, n) = (10, 65), d = 650."""
    from reference_impl.datasets import load_digits_images

    X_train, y_train, X_test, y_test = load_digits_images()
    return classification_problem(rng, X_train, y_train, X_test, y_test, N=N, beta=beta, gamma=gamma)


def mnist_npz_problem(path, rng: np.random.Generator, *, N: int = 100, beta: float = 1e-2,
                      gamma: float = 1e-4) -> FedPDMProblem:
    """A user's MNIST ``.npz`` (Keras layout, :func:`reference_impl.datasets.load_mnist_npz`) split over ``N``
    clients."""
    from reference_impl.datasets import load_mnist_npz

    X_train, y_train, X_test, y_test = load_mnist_npz(path)
    return classification_problem(rng, X_train, y_train, X_test, y_test, N=N, beta=beta, gamma=gamma)

