r"""Adversarial search over replace-one neighbours of a PGFL client subproblem (4) (Lemma 1's lower side).

Random and structured candidates for the replaced sample of both data sets, the best refined by L-BFGS-B on the
sphere :math:`\lVert x\rVert = B` with the implicit-function gradient of :math:`w(x)`. Every gap comes with its
certified solver error: the true gap lies in ``gap +- gap_error``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import optimize

from reference_impl.pgfl.client import (
    ClientSubproblem,
    loss_derivatives,
    solve_client_subproblem,
    subproblem_hessian,
)
from verify.tolerance import gamma

__all__ = ["adversarial_neighbour_gap", "gradient_bound", "solve_neighbour_pairs", "sphere"]


def gradient_bound(loss: str, feature_radius: float, huber_threshold: float) -> float:
    r"""Assumption 3's :math:`C_k`: :math:`B` (logistic, :math:`y\in[0,1]`) or :math:`\kappa B` (Huber)."""
    return feature_radius if loss == "logistic" else huber_threshold * feature_radius


def _with_last(base: ClientSubproblem, x_last: np.ndarray, y_last: np.ndarray) -> ClientSubproblem:
    m = x_last.shape[0]
    X = np.repeat(base.X[None], m, axis=0)
    y = np.repeat(base.y[None], m, axis=0)
    X[:, -1] = x_last
    y[:, -1] = y_last
    return ClientSubproblem(X=X, y=y, w_server=base.w_server, phi_dual=base.phi_dual, rho=base.rho, lam=base.lam,
                            n_server_clients=base.n_server_clients, loss=base.loss,
                            huber_threshold=base.huber_threshold)


def solve_neighbour_pairs(base: ClientSubproblem, x_old, y_old, x_new, y_new):
    r"""Solve (4) for ``m`` neighbouring pairs (last sample ``(x_old, y_old)`` vs ``(x_new, y_new)``).

    Returns
    -------
    gap, error, problem, solution
        ``gap`` (m,) is :math:`\lVert\hat w - \hat w'\rVert`; the true gap is within ``error`` (m,) of it:
        the two solves' certified errors plus :math:`\gamma_{d+4}` times the gap (its rounding).
        ``problem`` and ``solution`` hold the 2m solves (old ones first).
    """
    x_old, x_new = np.atleast_2d(x_old), np.atleast_2d(x_new)
    m = x_old.shape[0]
    problem = _with_last(base, np.concatenate([x_old, x_new]),
                         np.concatenate([np.broadcast_to(y_old, (m,)), np.broadcast_to(y_new, (m,))]))
    solution = solve_client_subproblem(problem)
    gap = np.linalg.norm(solution.w[:m] - solution.w[m:], axis=-1)
    error = solution.error_bound[:m] + solution.error_bound[m:] + gamma(base.dim + 4) * gap
    return gap, error, problem, solution


def _pair_objective_gradient(problem: ClientSubproblem, solution, m: int):
    r"""Gradient of :math:`\tfrac12\lVert w - w'\rVert^2` w.r.t. the last samples (implicit function theorem).

    For a last sample :math:`(x, y)` with :math:`\psi = \ell(x, y; \cdot)` as a function of
    :math:`a = x^\top w`: :math:`\partial w/\partial x = -H^{-1}[\psi'' x w^\top + \psi' I]/D` and
    :math:`\partial w/\partial y = H^{-1}\psi'' x/D` (Huber), :math:`H` the Hessian of (4).
    """
    w = solution.w
    diff = w[:m] - w[m:]
    v = np.concatenate([diff, -diff])
    z = np.linalg.solve(subproblem_hessian(problem, w), v[..., None])[..., 0]
    _, d1, d2 = loss_derivatives(problem, w)
    x = problem.X[:, -1]
    psi1, psi2 = d1[:, -1], d2[:, -1]
    xz = np.sum(x * z, axis=-1)
    D = problem.n_samples
    grad_x = -(psi2[:, None] * xz[:, None] * w + psi1[:, None] * z) / D
    grad_y = psi2 * xz / D
    return grad_x, grad_y


def _label_range(base: ClientSubproblem, feature_radius: float) -> float:
    """Huber responses beyond this put a replaced sample in the linear region at any reachable w."""
    reach = float(np.linalg.norm(base.prox_center)) + base.huber_threshold * feature_radius / base.strong_convexity
    return 2.0 * (feature_radius * reach + base.huber_threshold)


def sphere(u: np.ndarray, radius: float) -> np.ndarray:
    return radius * u / np.linalg.norm(u, axis=-1, keepdims=True)


def _candidates(base: ClientSubproblem, feature_radius: float, rng: np.random.Generator, count: int):
    """Random pairs on the sphere plus structured ones (see adversarial_neighbour_gap)."""
    d, B = base.dim, feature_radius
    u_old, u_new = rng.standard_normal((count, d)), rng.standard_normal((count, d))
    centre = base.prox_center
    norm = float(np.linalg.norm(centre))
    axis = centre / norm if norm > 0 else np.eye(d)[0]
    e = rng.standard_normal((count, d))
    e -= (e @ axis)[:, None] * axis
    e /= np.maximum(np.linalg.norm(e, axis=-1, keepdims=True), 1e-300)
    if base.loss == "logistic":
        # Labels are 0 without loss of generality: l(x, 1; w) = l(-x, 0; w). Half of the pairs are
        # mirror images across the axis of the prox centre, the near-extremal pairs of the gradient set.
        eps = rng.uniform(-1.0, 1.0, count)[:, None]
        half = count // 2
        u_old[:half] = eps[:half] * axis + np.sqrt(1 - eps[:half] ** 2) * e[:half]
        u_new[:half] = eps[:half] * axis - np.sqrt(1 - eps[:half] ** 2) * e[:half]
        y_old = y_new = np.zeros(count)
    else:
        span = _label_range(base, B)
        y_old, y_new = rng.uniform(-span, span, count), rng.uniform(-span, span, count)
        half = count // 2
        u_new[:half] = u_old[:half]  # same x, responses on opposite linear pieces
        y_old[:half], y_new[:half] = -span / 2, span / 2
    return sphere(u_old, B), y_old, sphere(u_new, B), y_new


def _refine(base: ClientSubproblem, feature_radius: float, x_old, y_old, x_new, y_new, maxiter: int):
    """L-BFGS-B ascent of the gap over both replaced samples (x on the sphere; Huber responses too)."""
    d, B = base.dim, feature_radius
    huber = base.loss == "huber"
    scale = (2.0 * gradient_bound(base.loss, B, base.huber_threshold) / (base.rho * base.n_samples)) ** 2
    span = _label_range(base, B) if huber else 0.0

    def unpack(p):
        u_old, u_new = p[:d], p[d:2 * d]
        ys = (p[2 * d], p[2 * d + 1]) if huber else (y_old, y_new)
        return u_old, u_new, ys

    def fun(p):
        u_old, u_new, (yo, yn) = unpack(p)
        xo, xn = sphere(u_old, B), sphere(u_new, B)
        gap, _, problem, solution = solve_neighbour_pairs(base, xo, yo, xn, yn)
        gx, gy = _pair_objective_gradient(problem, solution, 1)
        grads = []
        for u, g in ((u_old, gx[0]), (u_new, gx[1])):
            nu = np.linalg.norm(u)
            uh = u / nu
            grads.append(B / nu * (g - (g @ uh) * uh))
        if huber:
            grads.append(gy)
        return -0.5 * float(gap[0]) ** 2 / scale, -np.concatenate(grads) / scale

    p0 = np.concatenate([x_old / B, x_new / B] + ([[y_old, y_new]] if huber else []))
    bounds = [(None, None)] * (2 * d) + ([(-span, span)] * 2 if huber else [])
    res = optimize.minimize(fun, p0, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": maxiter})
    u_old, u_new, (yo, yn) = unpack(res.x)
    return sphere(u_old, B), float(yo), sphere(u_new, B), float(yn)


def adversarial_neighbour_gap(base: ClientSubproblem, feature_radius: float, rng: np.random.Generator, *,
                              candidates: int = 48, restarts: int = 2, maxiter: int = 60) -> dict[str, Any]:
    r"""Largest :math:`\lVert w - w'\rVert` found over replace-one neighbours of ``base`` (its last sample).

    Candidates (both replaced samples on the sphere :math:`\lVert x\rVert = B`): random pairs, and pairs
    built from the structure of the problem. Logistic: mirror images
    :math:`B(\epsilon\hat c \pm \sqrt{1-\epsilon^2}e)` across the axis of the prox centre :math:`c` (the pairs
    that approach the bound as :math:`\lVert c\rVert \to \infty`), labels 0 (no loss of generality).
    Huber: the same :math:`x` with responses on opposite linear pieces. The ``restarts`` best are
    refined by L-BFGS-B (:func:`_refine`).

    Returns
    -------
    dict
        The pair (``x_old``, ``y_old``, ``x_new``, ``y_new``), ``gap`` and its certified ``gap_error``.
    """
    x_o, y_o, x_n, y_n = _candidates(base, feature_radius, rng, candidates)
    gaps, _, _, _ = solve_neighbour_pairs(base, x_o, y_o, x_n, y_n)
    best = None
    for i in np.argsort(gaps)[::-1][:restarts]:
        pair = _refine(base, feature_radius, x_o[i], y_o[i], x_n[i], y_n[i], maxiter)
        for cand in (pair, (x_o[i], y_o[i], x_n[i], y_n[i])):
            gap, err, _, _ = solve_neighbour_pairs(base, *cand)
            if best is None or gap[0] > best["gap"]:
                best = {"x_old": np.asarray(cand[0], dtype=float).tolist(), "y_old": float(cand[1]),
                        "x_new": np.asarray(cand[2], dtype=float).tolist(), "y_new": float(cand[3]),
                        "gap": float(gap[0]), "gap_error": float(err[0])}
    return best
