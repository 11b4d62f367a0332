r"""Losses, gradients, the augmented Lagrangian (9), the stationarity measure (21) and the prox (13) of FedPDM-DP.

One code path for both loss forms of :class:`~reference_impl.fedpdm.problem.FedPDMProblem` (``m = 10``:
the literal loss (25) with the fix of erratum E26 (docs/papers/fedpdm.md#erratum-e26); ``m = 1``: binary
:math:`\ell_1`-logistic with labels folded in). Every function is batched over leading axes (runs, clients).

References
----------
.. [1] seed 001_322f61f9958f64f9.txt, (9) (line 102), (13) (line 136), (21) (lines 215-219), (25);
   docs/papers/fedpdm.md#stationarity, docs/papers/fedpdm.md#erratum-e12, docs/papers/fedpdm.md#erratum-e24,
   docs/papers/fedpdm.md#erratum-e26.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from reference_impl.fedpdm.problem import FedPDMProblem

__all__ = [
    "accuracy",
    "add_nonconvex_gradient",
    "as_matrix",
    "batch_gradient",
    "client_gradients",
    "client_losses",
    "global_objective",
    "lagrangian",
    "soft_threshold",
    "stationarity_measure",
]



def as_matrix(problem: FedPDMProblem, x: np.ndarray) -> np.ndarray:
    """``x`` ``(..., d)`` viewed as the model matrix ``(..., m, n_features)`` (row-major)."""
    return x.reshape(*x.shape[:-1], problem.n_classes, problem.n_features)


def batch_gradient(problem: FedPDMProblem, x: np.ndarray, a: np.ndarray, lab: np.ndarray) -> np.ndarray:
    r"""Mean gradient of :math:`f` over samples ``a`` (``(..., b, n_features)``) with labels ``lab`` (``(..., b)``).

    ``x``: ``(..., d)``. Scores through one batched matmul (``(..., b, m)``), gradient through another.
    """
    if problem.n_classes == 1:  # binary form: one score per sample, no class gather
        margin = (a @ x[..., None])[..., 0]
        coef = -special.expit(-margin) / a.shape[-2]
        grad = (coef[..., None, :] @ a)[..., 0, :]
        return add_nonconvex_gradient(problem.beta, x, grad)
    X = as_matrix(problem, x)
    scores = a @ np.swapaxes(X, -1, -2)  # (..., b, m)
    lab = np.broadcast_to(lab, scores.shape[:-1])
    margin = np.take_along_axis(scores, lab[..., None], axis=-1)[..., 0]
    coef = -special.expit(-margin) / a.shape[-2]  # d/ds log(1 + e^{-s}) = -sigma(-s)
    weights = np.zeros(scores.shape)
    np.put_along_axis(weights, lab[..., None], coef[..., None], axis=-1)
    grad = np.swapaxes(weights, -1, -2) @ a  # (..., m, n_features)
    return add_nonconvex_gradient(problem.beta, x, grad.reshape(x.shape))


def add_nonconvex_gradient(beta: float, x: np.ndarray, grad: np.ndarray) -> np.ndarray:
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
    r"""Full-data gradients :math:`\nabla f_i(x_i)`: ``x`` is ``(R, N, d)`` (or ``(R, k, d)`` with ``clients``
    ``(R, k)``)."""
    if clients is None:
        a, lab = problem.features, problem.labels
    else:
        a, lab = problem.features[clients], problem.labels[clients]
    return batch_gradient(problem, x, a, lab)


def client_losses(problem: FedPDMProblem, x: np.ndarray) -> np.ndarray:
    """:math:`f_i(x_i)` for ``x`` of shape ``(R, N, d)``: ``(R, N)``."""
    X = as_matrix(problem, x)
    scores = problem.features @ np.swapaxes(X, -1, -2)
    lab = np.broadcast_to(problem.labels, scores.shape[:-1])
    margin = np.take_along_axis(scores, lab[..., None], axis=-1)[..., 0]
    loss = np.logaddexp(0.0, -margin).mean(axis=-1)
    if problem.beta:
        loss = loss + problem.beta * (x * x / (1.0 + x * x)).sum(axis=-1)
    return loss


def global_objective(problem: FedPDMProblem, x0: np.ndarray, *, one_gemm: bool = False) -> np.ndarray:
    r""":math:`F(x_0) = \frac1N\sum_i f_i(x_0) + \gamma\lVert x_0\rVert_1` (24) for ``x0`` of shape ``(R, d)``:
    ``(R,)``.

    ``one_gemm``: every model's scores on all samples from one GEMM (equal client sizes: the mean of the clients'
    means is the mean over all samples), several times faster for many models on large data than the default
    products per client and model; BLAS may round the last bit differently (its small-matrix kernels, gemv).
    """
    x0 = np.asarray(x0, dtype=np.float64)
    if not one_gemm:
        f = client_losses(problem, np.broadcast_to(x0[:, None, :], (x0.shape[0], problem.N, problem.d)))
    else:
        margin = _scores(problem, problem.features.reshape(-1, problem.n_features), x0, problem.labels.reshape(-1))
        f = np.logaddexp(0.0, -margin.reshape(x0.shape[0], problem.N, problem.n)).mean(axis=-1)
        if problem.beta:
            f = f + (problem.beta * (x0 * x0 / (1.0 + x0 * x0)).sum(axis=-1))[:, None]
    return f.mean(axis=-1) + problem.gamma * np.abs(x0).sum(axis=-1)


def _scores(problem: FedPDMProblem, a: np.ndarray, x0: np.ndarray, lab: np.ndarray | None = None) -> np.ndarray:
    """Class scores of samples ``a`` ``(s, n_features)`` under models ``x0`` ``(R, d)`` by one GEMM: ``(R, s, m)``,
    or with ``lab`` ``(s,)`` the labelled class's score ``(R, s)`` (:func:`_labelled_scores`: one GEMM per class)."""
    R, m = x0.shape[0], problem.n_classes
    if lab is not None:
        return _labelled_scores(problem, a, x0, lab)
    scores = a @ as_matrix(problem, x0).reshape(R * m, problem.n_features).T  # (s, R m)
    return np.moveaxis(scores.reshape(a.shape[0], R, m), 1, 0)


def _labelled_scores(problem: FedPDMProblem, a: np.ndarray, x0: np.ndarray, lab: np.ndarray) -> np.ndarray:
    """The labelled class's score of every sample ``a`` ``(s, n_features)`` under models ``x0`` ``(R, d)``: ``(R, s)``.

    One GEMM per class on that class's samples, the products ``a_j . w_{lab_j}`` only (1/m of the flops of all class
    scores; the same products, BLAS's blocking aside). Samples sorted by label (as the experiments pool them) are
    read as contiguous slices; otherwise each class's rows are gathered."""
    R, m = x0.shape[0], problem.n_classes
    W = as_matrix(problem, x0)  # (R, m, f)
    lab = np.asarray(lab)
    out = np.empty((R, a.shape[0]))
    if a.shape[0] and np.all(lab[1:] >= lab[:-1]):
        bounds = np.searchsorted(lab, np.arange(m + 1))
        blocks = [slice(int(lo), int(hi)) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
    else:
        blocks = [np.flatnonzero(lab == c) for c in range(m)]
    for c, rows in enumerate(blocks):
        out[:, rows] = W[:, c, :] @ a[rows].T  # (R, f) @ (f, s_c): the old GEMM's operand order
    return out


def accuracy(problem: FedPDMProblem, x0: np.ndarray, *, one_gemm: bool = False) -> np.ndarray:
    """Test accuracy of ``x0`` (``(R, d)``): argmax of the class scores (26) vs the label; ``n_classes = 1``:
    margin > 0 (labels folded into the features). NaN without test data and for a model that is not finite.
    ``one_gemm``: as in :func:`global_objective` (one GEMM for all models instead of one product per model)."""
    if problem.test_features is None:
        return np.full(np.shape(x0)[0], np.nan)
    x0 = np.asarray(x0, dtype=np.float64)
    if one_gemm:
        scores = _scores(problem, problem.test_features, x0)  # (R, n_test, m)
    else:
        scores = problem.test_features @ np.swapaxes(as_matrix(problem, x0), -1, -2)  # (R, n_test, m)
    if problem.n_classes == 1:
        acc = (scores[..., 0] > 0).mean(axis=-1)
    else:
        acc = (np.argmax(scores, axis=-1) == problem.test_labels).mean(axis=-1)
    # a model that is not finite predicts nothing (argmax of NaN scores is class 0: a number that looked like an
    # accuracy, 9.9 % on the digits, was printed for diverged models)
    finite = np.all(np.isfinite(x0.reshape(x0.shape[0], -1)), axis=-1) if x0.ndim > 1 else np.all(np.isfinite(x0))
    return np.where(finite, acc, np.nan)


def lagrangian(problem: FedPDMProblem, x, x0, lam, rho: float) -> np.ndarray:
    r"""The augmented Lagrangian (9) with its :math:`1/N`: ``(R,)`` for ``x, lam`` ``(R, N, d)``, ``x0`` ``(R, d)``.

    .. math::

        \mathcal L = \frac1N\sum_i\big[f_i(x_i) + \lambda_i^\top(x_0 - x_i)
        + \tfrac\rho2\lVert x_0 - x_i\rVert^2\big] + \gamma\lVert x_0\rVert_1
    """
    diff = x0[:, None, :] - x
    terms = client_losses(problem, x) + (lam * diff).sum(-1) + 0.5 * rho * (diff * diff).sum(-1)
    return terms.mean(axis=-1) + problem.gamma * np.abs(x0).sum(axis=-1)


def stationarity_measure(problem: FedPDMProblem, x, x0, lam, rho: float, *, normalised: bool = True) -> dict:
    r"""The stationarity measure (21), with the x_0 block as a subdifferential
    distance (docs/papers/fedpdm.md#stationarity, docs/papers/fedpdm.md#erratum-e24).

    .. math::

        P = \sum_j \lVert\nabla_{x_j}\mathcal L\rVert^2 + \lVert\nabla_{\lambda_j}\mathcal L\rVert^2
            + \mathrm{dist}\big(0, \partial_{x_0}\mathcal L\big)^2,

    :math:`\nabla_{x_j}\mathcal L = \frac1N(\nabla f_j(x_j) - \lambda_j + \rho(x_j - x_0))`,
    :math:`\nabla_{\lambda_j}\mathcal L = \frac1N(x_0 - x_j)`,
    :math:`\partial_{x_0}\mathcal L = g_0 + \gamma\,\partial\lVert x_0\rVert_1`,
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
