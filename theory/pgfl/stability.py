r"""Stability of PGFL's :math:`\tau = 0` iteration: the graph threshold, :math:`r(T)` in closed form, Algorithm 2's
contraction bound and the slowest cluster curvature (seeds 000 / 003, thesis ch. 5;
docs/papers/pgfl.md#choice-rho-lambda, #structure).

All functions take a :class:`theory.pgfl.PGFLProblem` (ridge: exact Hessians) and, where named ``config``, any
object with ``rho``, ``taus``, ``algorithm`` and ``dual_ref`` (a :class:`reference_impl.pgfl.PGFLConfig`). The
derivation of the iteration's structure is in :func:`iteration_radius`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.sparse import linalg as splinalg

from theory._rounding import gamma
from theory.pgfl.problem import PGFLProblem

__all__ = ["alg2_contraction_bound", "identical_clients_threshold", "iteration_radius", "mixing_matrix",
           "slowest_cluster_curvature", "stability_threshold_factor"]

#: Arnoldi tolerance of :func:`iteration_radius` above dimension 256 (``verify.tolerance.ARNOLDI_TOL``).
ARNOLDI_TOL = 1e-12


def mixing_matrix(problem: PGFLProblem) -> np.ndarray:
    """A_srv: row-normalised closed-neighbourhood matrix."""
    N = problem.closed_neighbourhoods
    return N / N.sum(axis=1, keepdims=True)


def stability_threshold_factor(adjacency) -> float:
    r""":math:`m/(1+m)` with :math:`m = \max(0, -\lambda_{\min}(A_{srv}))`: Algorithm 1 with identical clients of
    curvature :math:`h` is stable iff :math:`\rho > h\,m/(1+m)`.

    :math:`A_{srv} = D^{-1}(\mathrm{Adj} + I)` is similar to a symmetric matrix, so its eigenvalues are
    real; they are computed from :math:`D^{-1/2}(\mathrm{Adj}+I)D^{-1/2}` with ``eigvalsh``. Eigenvalues
    within :math:`\gamma_{4S}` of 0 count as 0.
    """
    adj = np.asarray(adjacency, dtype=np.float64)
    if adj.ndim != 2 or adj.shape[0] != adj.shape[1] or adj.shape[0] < 1:
        raise ValueError(f"adjacency must be a square matrix, got shape {adj.shape}")
    closed = adj + np.eye(adj.shape[0])
    scale = 1.0 / np.sqrt(closed.sum(axis=1))
    lam_min = float(np.linalg.eigvalsh(scale[:, None] * closed * scale[None, :])[0])
    m = max(0.0, -lam_min)
    if m <= gamma(4 * adj.shape[0]):
        m = 0.0
    return m / (1.0 + m)


def identical_clients_threshold(problem: PGFLProblem) -> float:
    r"""Exact instability threshold :math:`\rho_c = h\,m/(1+m)` of Algorithm 1 when all clients share one
    Hessian whose largest eigenvalue is :math:`h` (``ValueError`` otherwise).

    Derivation: with :math:`P = a I` the map is :math:`v \mapsto ((2a-1)B + (1-a)I)v`, whose eigenvalues are
    :math:`(2a-1)\mu + 1 - a` for the eigenvalues :math:`\mu \in [-m, 1]` of :math:`A_{srv}`; at
    :math:`\mu = -m` it exceeds 1 in modulus iff :math:`a = \rho/(h+\rho) < m/(1+2m)`.
    """
    curv = problem.hessians + problem.ridge_weights[:, None, None] * np.eye(problem.d)
    if not np.allclose(curv, curv[0], rtol=1e-12, atol=0.0):
        raise ValueError("identical_clients_threshold needs every client to have the same Hessian")
    h = float(np.linalg.eigvalsh(curv[0])[-1])
    return h * stability_threshold_factor(problem.adjacency)


def _cluster_blocks(problem: PGFLProblem, rho: float, q: int):
    """Per-cluster pieces of the v-iteration: client indices, their servers, R blocks and averaging maps."""
    idx = np.flatnonzero(problem.client_cluster == q)
    srv = problem.client_server[idx]
    counts = np.bincount(srv, minlength=problem.S)
    curv = problem.hessians[idx] + problem.ridge_weights[idx, None, None] * np.eye(problem.d)
    P = rho * np.linalg.inv(curv + rho * np.eye(problem.d))                  # (n_q, d, d)
    return idx, srv, counts, P


def _v_operator(problem: PGFLProblem, rho: float, q: int, algorithm: str) -> splinalg.LinearOperator:
    """The homogeneous v-iteration of cluster q as a matrix-free operator (see :func:`iteration_radius`)."""
    idx, srv, counts, P = _cluster_blocks(problem, rho, q)
    A = mixing_matrix(problem)
    n, d = idx.size, problem.d
    inv_counts = np.where(counts > 0, 1.0 / np.maximum(counts, 1), 0.0)

    def matvec(x):
        v = np.asarray(x).reshape(n, d)
        means = np.zeros((problem.S, d), dtype=v.dtype)
        np.add.at(means, srv, v)
        means *= inv_counts[:, None]
        Bv = (A @ means)[srv]                                                # E A M v
        if algorithm == "alg1":
            out = np.einsum("kij,kj->ki", P, Bv) + (v - Bv) - np.einsum("kij,kj->ki", P, v - Bv)
        else:
            Jv = means[srv]
            out = np.einsum("kij,kj->ki", P, Bv) + (v - Jv) - np.einsum("kij,kj->ki", P, v - Jv)
        return out.ravel()

    return splinalg.LinearOperator((n * d, n * d), matvec=matvec, dtype=np.float64)


def iteration_radius(problem: PGFLProblem, config, *, tol: float = ARNOLDI_TOL) -> float:
    r"""Spectral radius :math:`r(T)` of the :math:`\tau = 0` iteration, from its closed form.

    Structure of the iteration [derived here, docs/papers/pgfl.md#structure; checked numerically by
    ``pgfl.theorem1_fixed_point``]. Per cluster, write :math:`y_k = \varphi_k/\rho`, :math:`P_k = \rho(\nabla^2 f_k +
    \rho I)^{-1}` (so :math:`0 \prec P_k \prec I`),
    :math:`B = E A_{srv} M` (average the clients of each group :math:`\mathcal C_{s,(q)}`, mix over servers,
    copy back to the clients) and :math:`J = EM` (group averaging). In the variable :math:`v_k = w_k - y_k` the
    homogeneous iteration is

    .. math::

        \text{Algorithm 1: } v \mapsto \big(PB + (I-P)(I-B)\big)v = \tfrac12\,(I + RC)\,v,\quad
        R = 2P - I,\; C = 2B - I; \qquad
        \text{Algorithm 2 (literal): } v \mapsto \big(PB + (I-P)(I-J)\big)v,

    and the iteration on the state :math:`u = (w_{s,(q)}, \varphi_k)` factors through :math:`v`, so both have the
    same non-zero eigenvalues. :math:`P`, :math:`B`, :math:`J` are self-adjoint for the inner product with client
    weights :math:`|\mathcal N_s|/|\mathcal C_{s,(q)}|`, :math:`\lVert B\rVert \le 1` and the spectrum of :math:`B`
    is that of :math:`A_{srv}` (plus zeros). Algorithm 1 is stable for every :math:`\rho > 0` when
    :math:`\lambda_{\min}(A_{srv}) \ge 0`, and for every graph when :math:`\rho \ge L_{\max}` (then
    :math:`R \succeq 0` and the eigenvalues of :math:`RC` are real, in :math:`(-3, 1)`); with identical clients
    see :func:`identical_clients_threshold`, Algorithm 2 (literal) see :func:`alg2_contraction_bound`.

    Algorithm 1 (and Algorithm 2 with ``dual_ref="server_model"``, the same noise-free map):
    :math:`\max_q r(\tfrac12(I + R_qC_q))`; Algorithm 2 literal: :math:`\max_q r(P_qB_q + (I-P_q)(I-J_q))`.
    Dense eigenvalues up to dimension 256 per cluster, implicitly restarted Arnoldi above (an independent
    evaluation of :func:`reference_impl.pgfl.iteration_spectral_radius`, and the only one at the paper's size).
    """
    if config.taus[0] != 0.0 or len(set(config.taus)) != 1:
        raise ValueError(f"iteration_radius needs tau = 0 (taus = (0.0,)), got {config.taus!r}")
    algorithm = "alg2" if config.algorithm == "alg2" and config.dual_ref == "local_aggregate" else "alg1"
    radius = 0.0
    for q in range(problem.n_clusters):
        op = _v_operator(problem, config.rho, q, algorithm)
        dim = op.shape[0]
        if dim == 0:
            continue
        if dim <= 256:
            T = op.matmat(np.eye(dim))
            radius = max(radius, float(np.max(np.abs(np.linalg.eigvals(T)))))
        else:
            vals = splinalg.eigs(op, k=6, which="LM", tol=tol, maxiter=20 * dim, return_eigenvectors=False)
            radius = max(radius, float(np.max(np.abs(vals))))
    return radius


def alg2_contraction_bound(problem: PGFLProblem, rho: float) -> float:
    r"""Proven bound on r(T) of Algorithm 2 (literal dual reference, :math:`\tau = 0`, no noise):

    .. math:: r(T)^2 \le \max\Big(\frac{\rho}{\rho + h_{\min}},\ \frac{h_{\max}}{h_{\max} + \rho}\Big) < 1,

    :math:`h_{\min}, h_{\max}` the extreme eigenvalues of all client Hessians :math:`\nabla^2 f_k`. Returns the
    right-hand side's square root. Proof: in the weighted inner product of :func:`iteration_radius`,
    :math:`v = a + b` with :math:`a = Jv \perp b`, :math:`Tv = PBa + (I-P)b`, and
    :math:`\lVert Pu + (I-P)w\rVert^2 \le \langle u, Pu\rangle + \langle w, (I-P)w\rangle`,
    :math:`\lVert B\rVert \le 1`.
    """
    if not (math.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be a finite real in (0, inf), got {rho!r}")
    curv = problem.hessians + problem.ridge_weights[:, None, None] * np.eye(problem.d)
    eig = np.linalg.eigvalsh(curv)
    h_min, h_max = float(eig.min()), float(eig.max())
    return math.sqrt(max(rho / (rho + h_min), h_max / (h_max + rho)))


def slowest_cluster_curvature(problem: PGFLProblem) -> float:
    r"""Smallest curvature of the cluster objectives, :math:`\mu_{min}`.

    .. math::
        \mu_{min} = \min_q \lambda_{min}\Bigl(\frac{1}{|\mathcal C_{(q)}|}\sum_{k\in\mathcal C_{(q)}}
        \bigl(\nabla^2 f_k + \tfrac{2\lambda}{|\mathcal C_{s(k)}|} I\bigr)\Bigr).

    The client step (4) is a proximal step of size :math:`1/\rho`, so the :math:`\tau = 0` iteration contracts the
    slowest cluster mode by about :math:`\rho/(\rho + \mu_{min})` per iteration: :math:`\rho/\mu_{min}` iterations
    is its time constant. Ridge only (exact Hessians).
    """
    if problem.loss != "ridge":
        raise ValueError(f"problem.loss must be 'ridge' (exact Hessians), got {problem.loss!r}")
    hessians = problem.hessians + problem.ridge_weights[:, None, None] * np.eye(problem.d)
    smallest = []
    for q in range(problem.n_clusters):
        members = problem.client_cluster == q
        if not members.any():
            raise ValueError(f"cluster {q} has no client: its curvature is undefined")
        smallest.append(np.linalg.eigvalsh(hessians[members].mean(axis=0))[0])
    return float(min(smallest))
