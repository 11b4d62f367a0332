r"""PGFL Theorem I: linear convergence without inter-cluster learning (:math:`\tau \equiv 0`).

Theorem I (seed 000_133b71fd0aa99eb4.txt, line 229; seed 003_944125634f6cc0f2.txt line 268; thesis
Theorem 5.1, seed 004_180cd372987d137b.txt line 1399) states that with :math:`\tau^{(n)} = 0` PGFL
"converges to the optimal solution of (2) in linear time for each cluster"; the abstract and Section III
say the same of the privacy-preserving version. The optimum of (2) with :math:`\tau = 0` is (Pa) of
shared/spec/pgfl.md section 1.3, :math:`w^\star_{(q)} = \arg\min_w\sum_{k\in\mathcal C_{(q)}} f_k(w)`.

Three claims, all on ridge instances of :mod:`reference_impl.pgfl` (strongly convex, spec E11):

``pgfl.theorem1`` (as stated; refuted). With one server the iteration is global-consensus ADMM and
reaches (Pa) linearly. With several servers it converges linearly, at the rate :math:`r(T)` of its affine
map, to the fixed point (Pc) of spec 2.8, which is *not* (Pa): the server models disagree by
:math:`O(1/\rho)` and, as :math:`\rho\to\infty`, tend to the :math:`\pi`-weighted optimum
:math:`\arg\min_w\sum_s |\mathcal N_s|/|\mathcal C_{s,(q)}|\sum_{k\in\mathcal C_{s,(q)}} f_k(w)` (spec E12).
The theorem also has no condition on :math:`\rho`, and Algorithm 1 diverges for small :math:`\rho`
(see below).

``pgfl.theorem1_fixed_point`` (corrected; confirmed). Stated with the stability condition below, the
limit (Pc), its equality with (Pa) for :math:`S = 1`, and an explicit :math:`O(1/\rho)` bound to the
:math:`\pi`-weighted optimum.

``pgfl.theorem1_private`` (confirmed). With privacy noise of variance :math:`\propto\zeta^n`
(Algorithm 2, literal dual reference), :math:`E\lVert u^{(n)} - u^\star\rVert^2` decays with factor
:math:`\max(r(T)^2, \zeta)` (spec 2.8 item 3, R1.4).

Structure of the iteration [derived here; checked numerically]. Per cluster, write
:math:`y_k = \varphi_k/\rho`, :math:`P_k = \rho(\nabla^2 f_k + \rho I)^{-1}` (so :math:`0 \prec P_k \prec I`),
:math:`B = E A_{srv} M` (average the clients of each group :math:`\mathcal C_{s,(q)}`, mix over servers,
copy back to the clients) and :math:`J = EM` (group averaging). In the variable
:math:`v_k = w_k - y_k` the homogeneous iteration is

.. math::

    \text{Algorithm 1: } v \mapsto \big(PB + (I-P)(I-B)\big)v = \tfrac12\,(I + RC)\,v,\quad R = 2P - I,\; C = 2B - I;
    \qquad
    \text{Algorithm 2 (literal): } v \mapsto \big(PB + (I-P)(I-J)\big)v,

and the iteration on the state :math:`u = (w_{s,(q)}, \varphi_k)` factors through :math:`v`, so both have
the same non-zero eigenvalues. :math:`P`, :math:`B`, :math:`J` are self-adjoint for the inner product with
client weights :math:`|\mathcal N_s|/|\mathcal C_{s,(q)}|`, :math:`\lVert B\rVert \le 1` and the spectrum of
:math:`B` is that of :math:`A_{srv}` (plus zeros). Consequences:

* Algorithm 2 (literal) contracts for **every** :math:`\rho > 0`:
  :math:`r(T)^2 \le \max_k \max\big(\rho/(\rho + h_{\min}),\, h_{\max}/(h_{\max}+\rho)\big) < 1`
  (Cauchy-Schwarz on :math:`v = Jv + (I-J)v`), which is how ``pgfl.theorem1_private`` builds instances
  with :math:`\zeta \ge r(T)^2 + 0.05` by construction.
* Algorithm 1 is stable for every :math:`\rho > 0` when :math:`\lambda_{\min}(A_{srv}) \ge 0`, and for every
  graph when :math:`\rho \ge L_{\max}` (then :math:`R \succeq 0` and the eigenvalues of :math:`RC` are real, in
  :math:`(-3, 1)`). With identical clients of curvature :math:`h` it is stable iff
  :math:`\rho > h\,m/(1+m)`, :math:`m = \max(0, -\lambda_{\min}(A_{srv}))`: a 4-cycle of servers
  (:math:`m = 1/3`) is unstable for :math:`\rho < L_{\max}/4`, so spec 2.5's "ρ ≥ 0.1 L_max was always
  stable" is wrong (the threshold tends to :math:`L_{\max}/2` on complete bipartite graphs). On every
  heterogeneous instance tried, :math:`\rho > L_{\max} m/(1+m)` sufficed (conjecture; the corrected claim's
  property test keeps probing it).

Bias of (Pc) [derived]. For Algorithm 1, :math:`(I - A)w = -\rho^{-1}A g(w)` with
:math:`g_s(w) = G_s w - c_s`; :math:`\pi^\top(I-A) = 0` gives :math:`\sum_s\pi_s g_s(w_s) = 0`, and with the
group inverse :math:`(I-A)^\#` and :math:`N = I - \mathbf 1\otimes\bar G^{-1}[\pi_1G_1,\dots,\pi_SG_S]`
(:math:`\bar G = \sum_s\pi_sG_s`),

.. math:: w - \mathbf 1\otimes w_\pi = -\rho^{-1} N (I-A)^\# A\, g(w),

so, with :math:`\kappa = \lVert N(I-A)^\#A\rVert_2`, :math:`\lVert w - \mathbf 1\otimes w_\pi\rVert \le
\kappa\lVert g(\mathbf 1\otimes w_\pi)\rVert/(\rho - \kappa\max_s\lVert G_s\rVert)` for
:math:`\rho > \kappa\max_s\lVert G_s\rVert`: :math:`O(1/\rho)`, and zero for :math:`S = 1`.

On a complete server graph :math:`(I-A)^\# A = 0`: (Pc) *is* the :math:`\pi`-weighted optimum for every
:math:`\rho`, and equals (Pa) when the groups are balanced; such instances satisfy Theorem I as stated.

Acceptance constants (spec R1; they are the claim's resolution, not rounding tolerances): (Pa) reached
to ``EXACT_TARGET_RTOL`` relative when :math:`S = 1`, the iterate within ``FIXED_POINT_RTOL`` of (Pc);
the rate band :math:`[r(T) - 0.05, r(T) + 0.01]` of spec R1.2; the mean-square factor within
``FACTOR_BAND`` of :math:`\max(r(T)^2, \zeta)`, both jackknife confidence limits (over runs) inside.
Spec R1.2 fits the rate over the window where the relative error lies in ``RATE_WINDOW``; that window is
not always asymptotic (a weakly excited slowest mode lets faster modes dominate it, and the fit can fall
more than 0.05 below :math:`r(T)`), so the band is applied to the asymptotic rate of
:math:`\lVert T^n e_0\rVert` and the windowed fit must agree with the prediction of :math:`T`
(:func:`_rate_assessment`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from scipy.sparse import linalg as splinalg

from reference_impl.pgfl import (
    PGFLConfig,
    PGFLProblem,
    cluster_optima,
    fixed_point_tau0,
    iteration_spectral_radius,
    run_pgfl,
)
from verify.evidence import result_from_evidence, sample_evidence
from verify.records import CheckContext, CheckResult, Citation, Claim, Evidence, FigureSpec, MonteCarlo, Series, Verdict
from verify.tolerance import (
    FACTOR_BAND,
    FIXED_POINT_RTOL,
    MC_ALPHA,
    NOISE_DOMINANCE_GAP,
    RATE_BAND,
    bonferroni,
    gamma,
    mean_upper_confidence_limit,
)
from verify.tolerance import (
    TARGET_RTOL as EXACT_TARGET_RTOL,
)

__all__ = [
    "CLAIMS",
    "EXACT_TARGET_RTOL",
    "FACTOR_BAND",
    "FIXED_POINT_RTOL",
    "MC_ALPHA",
    "NOISE_DOMINANCE_GAP",
    "RATE_BAND",
    "RATE_WINDOW",
    "alg2_contraction_bound",
    "build_instance",
    "check_theorem1",
    "check_theorem1_fixed_point",
    "check_theorem1_private",
    "consensus_bias",
    "evaluate_private_factor",
    "evaluate_theorem1",
    "evaluate_theorem1_fixed_point",
    "fit_contraction_factor",
    "fixed_point_state",
    "identical_clients_threshold",
    "iteration_radius",
    "pa_optimum",
    "pi_weighted_optimum",
    "private_target_factor",
    "reproduce_theorem1",
    "smallest_stable_rho",
    "stability_threshold_factor",
    "state_vectors",
]

SEED_A = "000_133b71fd0aa99eb4.txt"
SEED_J = "003_944125634f6cc0f2.txt"
SEED_THESIS = "004_180cd372987d137b.txt"

#: Fit window for the rate: relative state error between these values (spec R1.2).
RATE_WINDOW = (1e-11, 1e-3)
#: Iterates are run until the relative state error is below this (well under RATE_WINDOW[0]).
_RUN_TO = 1e-14
_MAX_ITERATIONS = 400_000

_PROFILE = {
    "ci": {"batches": 2, "per_batch": 4, "fp_batches": 2, "fp_per_batch": 6, "runs": 200, "private_instances": 4},
    "thorough": {"batches": 8, "per_batch": 6, "fp_batches": 8, "fp_per_batch": 10, "runs": 1000,
                 "private_instances": 12},
}


# --------------------------------------------------------------------------------------------------
# Instances
# --------------------------------------------------------------------------------------------------

def _connected_edges(rng: np.random.Generator, servers: int, n_edges: int) -> list[tuple[int, int]]:
    """A random spanning tree plus uniformly drawn extra edges (``n_edges`` in total, capped)."""
    edges = {tuple(sorted((int(rng.integers(i)), i))) for i in range(1, servers)}
    others = [(i, j) for i in range(servers) for j in range(i + 1, servers) if (i, j) not in edges]
    extra = max(0, min(n_edges - len(edges), len(others)))
    for idx in rng.permutation(len(others))[:extra]:
        edges.add(others[idx])
    return sorted(edges)


def _adjacency(servers: int, edges) -> np.ndarray:
    adj = np.zeros((servers, servers), dtype=bool)
    for s, p in edges:
        if s == p or not (0 <= s < servers and 0 <= p < servers):
            raise ValueError(f"edges must join distinct servers in [0, {servers - 1}], got ({s}, {p})")
        adj[s, p] = adj[p, s] = True
    return adj


def build_instance(params: Mapping[str, Any]) -> PGFLProblem:
    r"""A ridge PGFL instance, deterministic in ``params`` (so a counterexample can be rebuilt).

    Keys: ``seed``, ``servers`` S, ``clients_per_server``, ``clusters`` Q, ``d``, ``lam``, ``samples``
    (inclusive range of :math:`D_k`), ``data`` and optionally ``edges`` (list of server pairs; when absent
    a connected graph with ``average_degree`` S/2 edges is drawn from the seed).

    Every group :math:`\mathcal C_{s,(q)}` is non-empty by construction: the first Q clients of each
    server take the Q clusters in a random order, the others a uniform cluster (requires
    ``clients_per_server >= clusters``). Cluster models :math:`w^\circ_{(q)} = (1+\gamma_q)w_0`,
    :math:`\gamma_q \sim U(-0.15, 0.15)`, :math:`w_0 \sim N(0, I)`, observation noise variance 0.1 (spec 2.7, 5.1).

    ``data``:

    * ``"gaussian"``: :math:`x \sim N(0, I_d)` (spec 5.1);
    * ``"identical"``: every client has the same feature matrix (the sharp case of the stability
      threshold of Algorithm 1) and its own responses;
    * ``"conditioned"``: :math:`X_k = U\,\mathrm{diag}(\sigma)V^\top` with :math:`U, V` random orthonormal and
      :math:`2\sigma_i^2/D_k \in [1, 4]`, so the data Hessian of every client has eigenvalues in [1, 4]
      (needs :math:`D_k \ge d`).
    """
    p = dict(params)
    S, n, Q, d = int(p["servers"]), int(p["clients_per_server"]), int(p["clusters"]), int(p["d"])
    lo, hi = (int(v) for v in p["samples"])
    data = p.get("data", "gaussian")
    if S < 1 or Q < 1 or d < 1:
        raise ValueError(f"servers, clusters and d must be >= 1, got {S}, {Q}, {d}")
    if n < Q:
        raise ValueError(f"clients_per_server must be >= clusters = {Q} (non-empty groups), got {n}")
    if not 1 <= lo <= hi:
        raise ValueError(f"samples must be a range 1 <= lo <= hi, got {p['samples']!r}")
    if data not in ("gaussian", "identical", "conditioned"):
        raise ValueError(f"data must be 'gaussian', 'identical' or 'conditioned', got {data!r}")
    if data == "conditioned" and lo < d:
        raise ValueError(f"data='conditioned' needs samples >= d = {d}, got {p['samples']!r}")
    rng = np.random.default_rng(int(p["seed"]))
    edges = p.get("edges")
    if edges is None:
        edges = _connected_edges(rng, S, int(round(float(p.get("average_degree", 3.0)) * S / 2)))
    adjacency = _adjacency(S, edges)
    client_server = np.repeat(np.arange(S), n)
    client_cluster = np.concatenate([np.r_[rng.permutation(Q), rng.integers(Q, size=n - Q)] for _ in range(S)])
    w0 = rng.standard_normal(d)
    truth = (1.0 + rng.uniform(-0.15, 0.15, size=Q))[:, None] * w0[None, :]
    shared = rng.standard_normal((int(rng.integers(lo, hi + 1)), d))
    X, y = [], []
    for k in range(S * n):
        if data == "identical":
            xk = shared
        else:
            D = int(rng.integers(lo, hi + 1))
            if data == "gaussian":
                xk = rng.standard_normal((D, d))
            else:
                U, _ = np.linalg.qr(rng.standard_normal((D, d)))
                V, _ = np.linalg.qr(rng.standard_normal((d, d)))
                sigma = np.sqrt(D / 2.0 * rng.uniform(1.0, 4.0, size=d))
                xk = (U * sigma) @ V.T
        X.append(xk)
        y.append(xk @ truth[client_cluster[k]] + math.sqrt(0.1) * rng.standard_normal(xk.shape[0]))
    return PGFLProblem(adjacency=adjacency, client_server=client_server, client_cluster=client_cluster,
                       n_clusters=Q, X=tuple(X), y=tuple(y), lam=float(p["lam"]), true_models=truth)


def _paper_params(seed: int, rho_factor: float = 0.25) -> dict:
    """Spec 5.1 sizes: S = 10, 15 clients per server, d = 60, Q = 3, D_k in 2..9, average degree 3."""
    return {"seed": int(seed), "servers": 10, "clients_per_server": 15, "clusters": 3, "d": 60, "lam": 1.0,
            "samples": (2, 9), "data": "gaussian", "average_degree": 3.0, "rho_factor": rho_factor}


# --------------------------------------------------------------------------------------------------
# Linear algebra of the tau = 0 iteration
# --------------------------------------------------------------------------------------------------

def _mixing(problem: PGFLProblem) -> np.ndarray:
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
    """The homogeneous v-iteration of cluster q as a matrix-free operator (see the module docstring)."""
    idx, srv, counts, P = _cluster_blocks(problem, rho, q)
    A = _mixing(problem)
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


def iteration_radius(problem: PGFLProblem, config: PGFLConfig) -> float:
    r"""Spectral radius of the :math:`\tau = 0` iteration from the closed form of the module docstring.

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
            vals = splinalg.eigs(op, k=6, which="LM", tol=1e-12, maxiter=20 * dim, return_eigenvectors=False)
            radius = max(radius, float(np.max(np.abs(vals))))
    return radius


def alg2_contraction_bound(problem: PGFLProblem, rho: float) -> float:
    r"""Proven bound on r(T) of Algorithm 2 (literal dual reference, :math:`\tau = 0`, no noise):

    .. math:: r(T)^2 \le \max\Big(\frac{\rho}{\rho + h_{\min}},\ \frac{h_{\max}}{h_{\max} + \rho}\Big) < 1,

    :math:`h_{\min}, h_{\max}` the extreme eigenvalues of all client Hessians :math:`\nabla^2 f_k`. Returns the
    right-hand side's square root. Proof: in the weighted inner product of the module docstring,
    :math:`v = a + b` with :math:`a = Jv \perp b`, :math:`Tv = PBa + (I-P)b`, and
    :math:`\lVert Pu + (I-P)w\rVert^2 \le \langle u, Pu\rangle + \langle w, (I-P)w\rangle`, :math:`\lVert B\rVert \le 1`.
    """
    if not (math.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be a finite real in (0, inf), got {rho!r}")
    curv = problem.hessians + problem.ridge_weights[:, None, None] * np.eye(problem.d)
    eig = np.linalg.eigvalsh(curv)
    h_min, h_max = float(eig.min()), float(eig.max())
    return math.sqrt(max(rho / (rho + h_min), h_max / (h_max + rho)))


def _group_curvature(problem: PGFLProblem, q: int):
    """G_s (mean Hessian incl. ridge) and c_s (mean linear term) over C_{s,(q)}, shapes (S, d, d), (S, d)."""
    eye = np.eye(problem.d)
    curv = problem.hessians + problem.ridge_weights[:, None, None] * eye
    G = np.zeros((problem.S, problem.d, problem.d))
    c = np.zeros((problem.S, problem.d))
    for s in range(problem.S):
        members = (problem.client_server == s) & (problem.client_cluster == q)
        if not members.any():
            raise ValueError(f"group (server {s}, cluster {q}) is empty: the fixed point of spec 2.8 needs every group")
        G[s] = curv[members].mean(axis=0)
        c[s] = problem.linear_terms[members].mean(axis=0)
    return G, c


def _perron(problem: PGFLProblem) -> np.ndarray:
    """pi_s = |N_s| / sum |N_p|: the left Perron vector of A_srv."""
    deg = problem.closed_neighbourhoods.sum(axis=1)
    return deg / deg.sum()


def pi_weighted_optimum(problem: PGFLProblem) -> np.ndarray:
    r"""The :math:`\pi`-weighted optimum per cluster, shape (Q, d):

    .. math:: w_\pi = \arg\min_w \sum_s \pi_s |\mathcal C_{s,(q)}|^{-1}\sum_{k\in\mathcal C_{s,(q)}} f_k(w),
              \qquad \pi_s \propto |\mathcal N_s|.
    """
    pi = _perron(problem)
    out = np.empty((problem.n_clusters, problem.d))
    for q in range(problem.n_clusters):
        G, c = _group_curvature(problem, q)
        out[q] = np.linalg.solve(np.einsum("s,sij->ij", pi, G), pi @ c)
    return out


def consensus_bias(problem: PGFLProblem, rho: float, fixed_point: np.ndarray) -> list[dict]:
    r"""Per cluster: :math:`\kappa`, :math:`\lVert g(\mathbf 1\otimes w_\pi)\rVert`, :math:`\max_s\lVert G_s\rVert`, the
    distance :math:`\lVert w - \mathbf 1\otimes w_\pi\rVert` of the given (Algorithm 1) fixed point and the
    residual of the identity :math:`\rho(w - \mathbf 1\otimes w_\pi) = -N(I-A)^\#A\,g(w)` (module docstring).
    """
    S, d = problem.S, problem.d
    A = _mixing(problem)
    pi = _perron(problem)
    Pi = np.outer(np.ones(S), pi)
    group_inverse = np.linalg.inv(np.eye(S) - A + Pi) - Pi                    # (I - A)^#
    eye_d = np.eye(d)
    w_pi = pi_weighted_optimum(problem)
    out = []
    for q in range(problem.n_clusters):
        G, c = _group_curvature(problem, q)
        G_bar = np.einsum("s,sij->ij", pi, G)
        blockdiag = np.zeros((S * d, S * d))
        for s in range(S):
            blockdiag[s * d:(s + 1) * d, s * d:(s + 1) * d] = G[s]
        weights = np.concatenate([pi[s] * G[s] for s in range(S)], axis=1)    # [pi_1 G_1, ..., pi_S G_S]
        N = np.eye(S * d) - np.kron(np.ones((S, 1)), np.linalg.solve(G_bar, weights))
        M = N @ np.kron(group_inverse @ A, eye_d)
        kappa = float(np.linalg.norm(M, 2))
        g_pi = (blockdiag @ np.tile(w_pi[q], S)) - c.ravel()
        w = np.asarray(fixed_point)[:, q, :].ravel()
        e = w - np.tile(w_pi[q], S)
        g_w = blockdiag @ w - c.ravel()
        identity_gap = float(np.linalg.norm(rho * e + M @ g_w))
        out.append({"kappa": kappa, "g_pi": float(np.linalg.norm(g_pi)),
                    "G_max": float(max(np.linalg.norm(G[s], 2) for s in range(S))),
                    "distance": float(np.linalg.norm(e)), "g_w": float(np.linalg.norm(g_w)),
                    "identity_gap": identity_gap, "scale": float(np.linalg.norm(rho * e) + np.linalg.norm(M @ g_w))})
    return out


def fixed_point_state(problem: PGFLProblem, config: PGFLConfig) -> tuple[np.ndarray, np.ndarray, float]:
    r"""The fixed point :math:`u^\star = (w^\star_{s,(q)}, \varphi^\star_k)` of the noise-free :math:`\tau = 0` iteration.

    Server models from :func:`reference_impl.pgfl.fixed_point_tau0`. The duals follow from the client
    optimality condition :math:`w_k = w_{s,(q)} + (\varphi_k - \nabla f_k(w_k))/\rho` at the limit of the
    clients: Algorithm 1 (and ``server_model``): :math:`w_k = w_{s,(q)}`, so :math:`\varphi_k = \nabla f_k(w_{s,(q)})`;
    Algorithm 2 literal: :math:`w_k = v_{s,(q)}` with :math:`(I-A)v + g(v)/\rho = 0` (solved here, and
    :math:`Av` must reproduce the reference's server models), so :math:`\varphi_k = \nabla f_k(v) + \rho(v - w)`.

    Returns ``(u_star, w_star, residual)``: the state vector (server models then duals, as
    :func:`state_vectors`), the server models (S, Q, d) and the worst relative residual of the solves.
    """
    w_star, residual = fixed_point_tau0(problem, config)
    S, Q, d = problem.S, problem.n_clusters, problem.d
    literal = config.algorithm == "alg2" and config.dual_ref == "local_aggregate"
    s_k, q_k = problem.client_server, problem.client_cluster
    if literal:
        A = _mixing(problem)
        v = np.empty((S, Q, d))
        for q in range(Q):
            G, c = _group_curvature(problem, q)
            lhs = np.kron(np.eye(S) - A, np.eye(d))
            for s in range(S):
                lhs[s * d:(s + 1) * d, s * d:(s + 1) * d] += G[s] / config.rho
            rhs = c.ravel() / config.rho
            sol = np.linalg.solve(lhs, rhs)
            residual = max(residual, float(np.linalg.norm(lhs @ sol - rhs) / max(np.linalg.norm(rhs), 1e-300)))
            v[:, q, :] = sol.reshape(S, d)
        agreement = np.max(np.abs(np.einsum("sp,pqd->sqd", A, v) - w_star)) / max(np.max(np.abs(w_star)), 1e-300)
        residual = max(residual, float(agreement))
        clients = v[s_k, q_k]
    else:
        clients = w_star[s_k, q_k]
    grad = (np.einsum("kij,kj->ki", problem.hessians, clients) + problem.ridge_weights[:, None] * clients
            - problem.linear_terms)
    phi = grad + (config.rho * (clients - w_star[s_k, q_k]) if literal else 0.0)
    return np.concatenate([w_star.ravel(), phi.ravel()]), np.asarray(w_star), residual


def state_vectors(state) -> np.ndarray:
    """u = (server models, duals) per run, shape (R, S*Q*d + K*d)."""
    R = state.w_servers.shape[0]
    return np.concatenate([state.w_servers.reshape(R, -1), state.phi.reshape(R, -1)], axis=1)


def fit_contraction_factor(errors, window: tuple[float, float] = RATE_WINDOW) -> dict:
    r"""Least-squares slope of :math:`\log e_n` against :math:`n` over the window where :math:`e_n` lies in ``window``.

    The window runs from the first iteration with :math:`e_n \le` ``window[1]`` to the last with
    :math:`e_n \ge` ``window[0]`` (both inclusive). Returns the factor :math:`e^{\text{slope}}`, the window and
    the number of points; ``ValueError`` if fewer than 3 points fall in it.
    """
    e = np.asarray(errors, dtype=np.float64)
    lo, hi = window
    if not (0 < lo < hi):
        raise ValueError(f"window must satisfy 0 < lo < hi, got {window!r}")
    below = np.flatnonzero(e <= hi)
    above = np.flatnonzero(e >= lo)
    if below.size == 0 or above.size == 0:
        raise ValueError(f"the errors never enter the window {window!r} (min {e.min():.3g}, max {e.max():.3g})")
    first, last = int(below[0]), int(above[-1])
    if last - first + 1 < 3:
        raise ValueError(f"fewer than 3 iterations in the window {window!r} ({first}..{last})")
    n = np.arange(first, last + 1, dtype=np.float64)
    slope = np.polyfit(n, np.log(e[first:last + 1]), 1)[0]
    return {"factor": float(math.exp(slope)), "window": (first + 1, last + 1), "points": last - first + 1}


def _run_errors(problem: PGFLProblem, config: PGFLConfig, u_star: np.ndarray, radius: float,
                run_to: float = _RUN_TO):
    """Relative state errors ||u^(n) - u*|| / ||u*||, n = 1..N, with N long enough to reach ``run_to``.

    N starts at the iteration count the rate predicts and doubles (up to _MAX_ITERATIONS) until the
    error is below ``run_to`` or stops decreasing (the rounding floor). Returns (errors, final state).
    """
    if not radius < 1.0:
        raise ValueError(f"the iteration does not contract (r(T) = {radius:.6g}): no limit to approach")
    norm = float(np.linalg.norm(u_star))
    iterations = int(math.ceil(math.log(run_to) / math.log(max(radius, 1e-3)))) + 50
    while True:
        run = run_pgfl(problem, config, iterations, np.random.default_rng(0),
                       observe=lambda st: np.linalg.norm(state_vectors(st) - u_star[None, :], axis=1))
        errors = run.observations[:, 0] / norm
        tail = errors[-max(10, iterations // 10):]
        if errors[-1] <= run_to or tail.min() >= 0.5 * tail.max() or iterations >= _MAX_ITERATIONS:
            return errors, run.state
        iterations = min(2 * iterations, _MAX_ITERATIONS)


def _relative_distance(models: np.ndarray, target: np.ndarray) -> float:
    """max_{s,q} ||w_{s,(q)} - target_{(s),q}|| / max_q ||target_q|| (target (Q, d) or (S, Q, d))."""
    target = np.broadcast_to(target, models.shape)
    scale = float(np.max(np.linalg.norm(target, axis=-1)))
    return float(np.max(np.linalg.norm(models - target, axis=-1))) / max(scale, 1e-300)


def _rate_severity(fitted: float, radius: float) -> float:
    """<= 1 iff r - 0.05 <= fitted <= r + 0.01."""
    if fitted >= radius:
        return (fitted - radius) / RATE_BAND[1]
    return (radius - fitted) / RATE_BAND[0]


def _rate_assessment(problem: PGFLProblem, config: PGFLConfig, u_star: np.ndarray, errors: np.ndarray,
                     radius: float) -> dict:
    r"""Is the observed decay "linear with rate :math:`r(T)`"? Returns the fits and a severity (holds iff <= 1).

    Spec R1.2 compares the rate fitted over the window :math:`e_n \in [10^{-11}, 10^{-3}]` with :math:`r(T)`.
    That window need not be asymptotic: when the slowest eigenmode is weakly excited by the start
    :math:`u^{(0)} = 0`, faster modes dominate it and the fit lies below :math:`r(T) - 0.05` (found by the
    property test; e.g. fitted 0.557 against :math:`r(T)` = 0.613 with a slowest-mode weight of 0.035).
    So, for state dimension up to 4000, the error is propagated exactly with the independent affine map
    :math:`T` of :func:`_affine_parts`, :math:`e_n = T^n e_0` (renormalised each step, so without a rounding
    floor), and the check requires (i) the observed fit to agree with the fit of :math:`\lVert T^ne_0\rVert`
    over the same window within ``RATE_BAND[1]`` (the run is this affine map) and (ii) the asymptotic rate,
    the mean of :math:`\log(\lVert e_{n+1}\rVert/\lVert e_n\rVert)` over the last 200 of
    :math:`N + 2000` steps, to lie in :math:`[r(T) - 0.05, r(T) + 0.01]`. Above that dimension (the paper's
    size) only spec R1.2's band is applied to the observed fit.
    """
    fit = fit_contraction_factor(errors)
    out = {"fitted_rate": fit["factor"], "fit_window": fit["window"],
           "spec_r1_2_band_severity": _rate_severity(fit["factor"], radius)}
    if u_star.size > 4000:
        out["rate_severity"] = out["spec_r1_2_band_severity"]
        return out
    T = _affine_parts(problem, config, with_noise=False)[0]
    e = -u_star / np.linalg.norm(u_star)
    steps = errors.size + 2000
    logs = np.empty(steps)
    total = 0.0
    for n in range(steps):
        e = T @ e
        norm = float(np.linalg.norm(e))
        total += math.log(norm)
        logs[n] = total
        e = e / norm
    first, last = fit["window"]
    n = np.arange(first, last + 1, dtype=np.float64)
    predicted = math.exp(float(np.polyfit(n, logs[first - 1:last], 1)[0]))
    asymptotic = math.exp(float(np.mean(np.diff(logs[-201:]))))
    out.update({"predicted_window_fit": predicted, "asymptotic_rate": asymptotic,
                "rate_severity": max(abs(fit["factor"] - predicted) / RATE_BAND[1],
                                     _rate_severity(asymptotic, radius))})
    return out


def _config(problem: PGFLProblem, params: Mapping[str, Any]) -> PGFLConfig:
    return PGFLConfig(rho=float(params["rho_factor"]) * problem.max_curvature)


# --------------------------------------------------------------------------------------------------
# pgfl.theorem1 (as stated)
# --------------------------------------------------------------------------------------------------

def pa_optimum(problem: PGFLProblem, config: PGFLConfig) -> np.ndarray:
    """(Pa) for every cluster, (Q, d) (:func:`reference_impl.pgfl.cluster_optima`; ``config`` is unused)."""
    return cluster_optima(problem)


def evaluate_theorem1(params: Mapping[str, Any], *, optimum_fn: Callable = pa_optimum,
                      radius_fn: Callable = iteration_spectral_radius) -> Evidence:
    r"""Run Algorithm 1 with :math:`\tau = 0` to convergence and measure the distance to (Pa).

    The claim holds at the point iff the fitted rate matches :math:`r(T) < 1` (linear convergence) and the
    final server models are within ``FIXED_POINT_RTOL`` (relative) of ``optimum_fn(problem)`` (Pa) for
    every server and cluster. The distance to the solved fixed point (Pc) is recorded as well, so a
    violation shows that the iteration did converge, to another point.
    """
    problem = build_instance(params)
    config = _config(problem, params)
    radius = float(radius_fn(problem, config))
    u_star, w_pc, residual = fixed_point_state(problem, config)
    errors, state = _run_errors(problem, config, u_star, radius)
    rate = _rate_assessment(problem, config, u_star, errors, radius)
    models = state.w_servers[0]
    target = np.asarray(optimum_fn(problem, config))
    dist_pa = _relative_distance(models, target)
    dist_pc = _relative_distance(models, w_pc)
    linear = radius < 1.0 and rate["rate_severity"] <= 1.0
    # one server: (Pa) must be reached exactly (spec R1.1); several: within the fixed-point tolerance
    tol = EXACT_TARGET_RTOL if problem.S == 1 else FIXED_POINT_RTOL
    return Evidence(measured=dist_pa, bound=tol, holds=bool(linear and dist_pa <= tol),
                    parameters={**dict(params), "iterations": int(errors.size), "spectral_radius": radius, **rate,
                                "relative_distance_to_Pa": dist_pa, "relative_distance_to_Pc": dist_pc,
                                "fixed_point_residual": residual,
                                "relative_distance_Pc_to_Pa": _relative_distance(w_pc, target)})


def _theorem1_batch(rng: np.random.Generator, count: int, optimum_fn: Callable) -> list[Evidence]:
    """Half single-server (exact target), half multi-server spec-5.1-style instances, rho in [0.1, 0.5] L_max."""
    out = []
    for i in range(count):
        S = 1 if i % 2 == 0 else int(rng.integers(2, 5))
        Q = int(rng.integers(2, 4))
        d = int(rng.integers(2, 5))
        params = {"seed": int(rng.integers(2**32)), "servers": S, "clients_per_server": int(rng.integers(Q, 6)),
                  "clusters": Q, "d": d, "lam": float(10 ** rng.uniform(-3, 0)), "samples": (d, 10),
                  "data": "gaussian", "rho_factor": float(rng.uniform(0.1, 0.5))}
        params["edges"] = _connected_edges(np.random.default_rng(params["seed"] + 1), S,
                                           int(rng.integers(S - 1, S * (S - 1) // 2 + 1)))
        thr = stability_threshold_factor(_adjacency(S, params["edges"]))
        params["rho_factor"] = float(max(params["rho_factor"], 1.1 * thr))
        out.append(evaluate_theorem1(params, optimum_fn=optimum_fn))
    return out


def _rho_sweep(problem: PGFLProblem, factors) -> dict:
    """Relative distances of (Pc) to (Pa) and to the pi-weighted optimum over rho = factor * L_max."""
    pa, wpi = cluster_optima(problem), pi_weighted_optimum(problem)
    to_pa, to_pi = [], []
    for f in factors:
        w, _ = fixed_point_tau0(problem, PGFLConfig(rho=f * problem.max_curvature))
        to_pa.append(_relative_distance(w, pa))
        to_pi.append(_relative_distance(w, wpi))
    return {"rho_over_Lmax": list(factors), "to_Pa": to_pa, "to_pi_weighted": to_pi,
            "Pa_vs_pi_weighted": _relative_distance(wpi, pa)}


def _loglog_exponent(x, y) -> float:
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])


def smallest_stable_rho(problem: PGFLProblem, grid=None, *, algorithm: str = "alg1") -> dict:
    """Smallest rho/L_max on a log grid from which every larger grid value has r(T) < 1 (closed-form radius)."""
    grid = np.geomspace(1e-3, 1.0, 31) if grid is None else np.asarray(grid, dtype=np.float64)
    extra = {"algorithm": "alg2"} if algorithm == "alg2" else {}
    radii = [iteration_radius(problem, PGFLConfig(rho=f * problem.max_curvature, **extra)) for f in grid]
    stable = np.asarray(radii) < 1.0
    start = len(grid)
    while start > 0 and stable[start - 1]:
        start -= 1
    return {"smallest_stable_rho_over_Lmax": float(grid[start]) if start < len(grid) else None,
            "largest_unstable_rho_over_Lmax": float(grid[start - 1]) if start > 0 else None,
            "grid": grid.tolist(), "radius": [float(r) for r in radii]}


def _c4_identical_params(rho_factor: float) -> dict:
    """The sharp instability example: a 4-cycle of servers whose clients all share one feature matrix."""
    return {"seed": 4, "servers": 4, "clients_per_server": 2, "clusters": 2, "d": 3, "lam": 0.1, "samples": (3, 6),
            "data": "identical", "edges": [(0, 1), (1, 2), (2, 3), (0, 3)], "rho_factor": rho_factor}


def _stability_report(ctx: CheckContext) -> dict:
    """Smallest stable rho/L_max of Algorithm 1 on spec-5.1-style instances, and the sharp 4-cycle example."""
    rng = np.random.default_rng(ctx.seed_sequence("pgfl.theorem1.stability").generate_state(1)[0])
    rows = []
    count = 4 if not ctx.thorough else 8
    for i in range(count):
        d = int(rng.integers(2, 5))
        params = {"seed": int(rng.integers(2**32)), "servers": int(rng.integers(3, 7)), "clients_per_server": 4,
                  "clusters": 2, "d": d, "lam": 0.1, "samples": (2, 9), "data": "gaussian", "average_degree": 3.0}
        problem = build_instance(params)
        scan = smallest_stable_rho(problem)
        rows.append({"instance": {k: v for k, v in params.items()},
                     "smallest_stable_rho_over_Lmax": scan["smallest_stable_rho_over_Lmax"],
                     "graph_threshold_m_over_1_plus_m": stability_threshold_factor(problem.adjacency)})
    if ctx.thorough:
        problem = build_instance(_paper_params(int(rng.integers(2**32))))
        scan = smallest_stable_rho(problem, np.geomspace(1e-3, 1.0, 13))
        rows.append({"instance": "paper size (S=10, 15 clients/server, d=60)",
                     "smallest_stable_rho_over_Lmax": scan["smallest_stable_rho_over_Lmax"],
                     "graph_threshold_m_over_1_plus_m": stability_threshold_factor(problem.adjacency)})
    c4 = build_instance(_c4_identical_params(0.1))
    threshold = identical_clients_threshold(c4) / c4.max_curvature
    scan = smallest_stable_rho(c4, np.geomspace(0.05, 1.0, 41))
    at_01 = iteration_spectral_radius(c4, PGFLConfig(rho=0.1 * c4.max_curvature))
    a = 0.1 / 1.1
    return {"spec_5_1_style_instances": rows,
            "four_cycle_identical_clients": {
                "params": _c4_identical_params(0.1), "closed_form_threshold_rho_over_Lmax": threshold,
                "grid_smallest_stable_rho_over_Lmax": scan["smallest_stable_rho_over_Lmax"],
                "grid_largest_unstable_rho_over_Lmax": scan["largest_unstable_rho_over_Lmax"],
                "r(T)_at_0.1_Lmax": at_01, "closed_form_r_at_0.1_Lmax": 4.0 / 3.0 - 5.0 / 3.0 * a},
            "note": ("Algorithm 1 is unstable below a threshold; spec 2.5's 0.03-0.08 L_max describes "
                     "spec-5.1 data, where L_max is set by outlying clients. With identical clients the "
                     "threshold is L_max m/(1+m) (0.25 L_max on a 4-cycle), so rho >= 0.1 L_max is not "
                     "always stable.")}


def _error_figure(cases: list[tuple[str, np.ndarray, float]], name: str, title: str) -> FigureSpec:
    series = []
    for label, errors, radius in cases:
        n = np.arange(1, errors.size + 1)
        keep = errors > 0
        series.append(Series(label=f"{label}: ||u^(n) - u*|| / ||u*||", x=n[keep], y=errors[keep], group=label))
        ref_n = np.array([1, errors.size])
        series.append(Series(label=f"{label}: r(T)^n = {radius:.4f}^n", x=ref_n,
                             y=np.maximum(radius ** ref_n.astype(float), 1e-300), style="dashed", group=label))
    series.append(Series(label="lower end of the fit window (spec R1.2)", x=(1, max(c[1].size for c in cases)),
                         y=(RATE_WINDOW[0],) * 2, style="dashed"))
    return FigureSpec(name=name, title=title, xlabel="iteration n", ylabel="relative state error", yscale="log",
                      series=tuple(series))


def _sweep_figure(sweep: dict, name: str, title: str) -> FigureSpec:
    x = sweep["rho_over_Lmax"]
    inv = [sweep["to_pi_weighted"][-1] * x[-1] / f for f in x]
    return FigureSpec(
        name=name, title=title, xlabel="rho / L_max", ylabel="max_{s,q} relative distance of (Pc)", xscale="log",
        yscale="log",
        series=(Series(label="(Pc) to (Pa)", x=x, y=sweep["to_Pa"], style="points", group="pa"),
                Series(label="(Pc) to the pi-weighted optimum", x=x, y=sweep["to_pi_weighted"], style="points",
                       group="pi"),
                Series(label="slope -1 (through the last point)", x=x, y=inv, style="dashed", group="pi"),
                Series(label="(Pa) to the pi-weighted optimum (weighting bias)", x=(x[0], x[-1]),
                       y=(sweep["Pa_vs_pi_weighted"],) * 2, style="dashed", group="pa")))


SWEEP_FACTORS = (0.1, 0.2, 0.3, 0.5, 1.0, 3.0, 10.0, 30.0, 100.0, 1000.0)


def check_theorem1(ctx: CheckContext, *, optimum_fn: Callable = pa_optimum) -> CheckResult:
    """Single- and multi-server instances run to convergence; distance of the limit to ``optimum_fn`` (Pa)."""
    p = _PROFILE[ctx.profile]
    evidence = sample_evidence(ctx, "pgfl.theorem1", _theorem1_batch, p["batches"], (p["per_batch"], optimum_fn))
    if ctx.thorough:
        params = _paper_params(int(ctx.seed_sequence("pgfl.theorem1.paper").generate_state(1)[0]))
        evidence.append(evaluate_theorem1(params, optimum_fn=optimum_fn, radius_fn=iteration_radius))
    single = [e for e in evidence if e.parameters["servers"] == 1]
    multi = [e for e in evidence if e.parameters["servers"] > 1]
    not_converged = [e.parameters for e in evidence if e.parameters["relative_distance_to_Pc"] > FIXED_POINT_RTOL]
    if not_converged:
        # the refutation rests on runs that did converge (to (Pc)); anything else is a harness failure
        raise AssertionError(f"runs did not reach the solved fixed point (Pc) to {FIXED_POINT_RTOL}: {not_converged}")
    # rho scaling of the bias on the multi-server point farthest from (Pa)
    worst_multi = max(multi, key=lambda e: e.measured)
    problem = build_instance(worst_multi.parameters)
    sweep = _rho_sweep(problem, SWEEP_FACTORS)
    in_range = [i for i, f in enumerate(SWEEP_FACTORS) if f <= 0.5]
    large = [i for i, f in enumerate(SWEEP_FACTORS) if f >= 10.0]
    exponents = {
        "to_Pa_rho_in_[0.1,0.5]Lmax": _loglog_exponent([SWEEP_FACTORS[i] for i in in_range],
                                                       [sweep["to_Pa"][i] for i in in_range]),
        "to_Pa_rho_in_[10,1000]Lmax": _loglog_exponent([SWEEP_FACTORS[i] for i in large],
                                                       [sweep["to_Pa"][i] for i in large]),
        "to_pi_weighted_rho_in_[0.1,0.5]Lmax": _loglog_exponent([SWEEP_FACTORS[i] for i in in_range],
                                                                [sweep["to_pi_weighted"][i] for i in in_range]),
        "to_pi_weighted_rho_in_[10,1000]Lmax": _loglog_exponent([SWEEP_FACTORS[i] for i in large],
                                                                [sweep["to_pi_weighted"][i] for i in large])}
    # figures: one single-server and the worst multi-server run
    cases = []
    for e in (single[0], worst_multi):
        pr = build_instance(e.parameters)
        cfg = _config(pr, e.parameters)
        u_star, _, _ = fixed_point_state(pr, cfg)
        errors, _ = _run_errors(pr, cfg, u_star, e.parameters["spectral_radius"])
        cases.append((f"S = {e.parameters['servers']}", errors, e.parameters["spectral_radius"]))
    figures = [
        _error_figure(cases, "error_vs_iteration", "Theorem I: Algorithm 1, tau = 0: state error and r(T)^n"),
        _sweep_figure(sweep, "distance_vs_rho", "Theorem I: limit (Pc) vs (Pa) and the pi-weighted optimum"),
    ]
    details = {
        "single_server_max_relative_distance_to_Pa": max(e.measured for e in single),
        "multi_server_relative_distance_to_Pa": [e.measured for e in multi],
        "multi_server_max_relative_distance_to_Pc": max(e.parameters["relative_distance_to_Pc"] for e in multi),
        "rate_fits": [{"servers": e.parameters["servers"], "r(T)": e.parameters["spectral_radius"],
                       "fitted": e.parameters["fitted_rate"], "predicted": e.parameters.get("predicted_window_fit"),
                       "asymptotic": e.parameters.get("asymptotic_rate")} for e in evidence],
        "spec_R1_2_band_violations": sum(e.parameters["spec_r1_2_band_severity"] > 1.0 for e in evidence),
        "rho_sweep_on_worst_instance": sweep, "loglog_exponents": exponents,
        "stability": _stability_report(ctx),
    }
    return result_from_evidence(
        "pgfl.theorem1", evidence, ctx=ctx, quantity="max_{s,q} ||w_{s,(q)}^(N) - w*_(q)|| / max_q ||w*_(q)|| (Pa)",
        what="Algorithm 1 (tau = 0) converges linearly to (Pa)", figures=figures,
        corrected_claim="pgfl.theorem1_fixed_point", details=details)


_PARAM_KEYS = ("seed", "servers", "clients_per_server", "clusters", "d", "lam", "samples", "data", "edges",
               "average_degree", "rho_factor")


def reproduce_theorem1(counterexample: Mapping[str, Any]) -> Evidence:
    """Rebuild the counterexample instance from its recorded parameters and rerun the iteration."""
    return evaluate_theorem1({k: v for k, v in counterexample.items() if k in _PARAM_KEYS})


# --------------------------------------------------------------------------------------------------
# pgfl.theorem1_fixed_point (corrected statement)
# --------------------------------------------------------------------------------------------------

def _fixed_point_lhs_condition(problem: PGFLProblem, rho: float) -> float:
    """Largest condition number of the Algorithm-1 fixed-point systems (I - A) + A G / rho over clusters."""
    A = np.kron(_mixing(problem), np.eye(problem.d))
    worst = 1.0
    for q in range(problem.n_clusters):
        G, _ = _group_curvature(problem, q)
        blockdiag = np.zeros_like(A)
        for s in range(problem.S):
            blockdiag[s * problem.d:(s + 1) * problem.d, s * problem.d:(s + 1) * problem.d] = G[s]
        worst = max(worst, float(np.linalg.cond(np.eye(A.shape[0]) - A + A @ blockdiag / rho)))
    return worst


def _bias_evidence(problem: PGFLProblem, rho: float, params: Mapping[str, Any], pi_optimum_fn: Callable) -> Evidence:
    r"""Distance of (Pc) to the :math:`\pi`-weighted optimum against
    :math:`\kappa\lVert g_\pi\rVert/(\rho' - \kappa G_{\max})`.

    Evaluated at :math:`\rho' = \max(\rho, \max_q\kappa_q G_{\max,q})\cdot\{2, 20, 200\}` (where the bound
    applies; it is :math:`O(1/\rho')`), and at the drawn :math:`\rho` in the a-posteriori form
    :math:`\lVert e\rVert \le \kappa\lVert g(w)\rVert/\rho` of the exact identity, whose residual is checked too.
    Each distance may exceed its bound by the rounding allowance
    :math:`\gamma_{16Sd+16}(\mathrm{cond}(\bar G) + \mathrm{cond}(\text{fixed-point system}))\sqrt{Sd}\max|w|`
    (the fixed-point system's condition grows like :math:`\rho'`). ``measured`` is the worst ratio
    distance / (bound + allowance).
    """
    w_pi_ref = pi_weighted_optimum(problem)
    w_pi = np.asarray(pi_optimum_fn(problem))
    S, d = problem.S, problem.d
    w_rho, _ = fixed_point_tau0(problem, PGFLConfig(rho=rho))
    clusters = consensus_bias(problem, rho, w_rho)
    pi = _perron(problem)
    cond_g = max(float(np.linalg.cond(np.einsum("s,sij->ij", pi, _group_curvature(problem, q)[0])))
                 for q in range(problem.n_clusters))
    large = max(rho, max(cb["kappa"] * cb["G_max"] for cb in clusters))
    rows, worst = [], 0.0
    cond_rho = _fixed_point_lhs_condition(problem, rho)
    for r in [rho] + [large * m for m in (2.0, 20.0, 200.0)]:
        w = w_rho if r == rho else fixed_point_tau0(problem, PGFLConfig(rho=r))[0]
        cond = cond_rho if r == rho else _fixed_point_lhs_condition(problem, r)
        scale = max(float(np.max(np.abs(w))), float(np.max(np.abs(w_pi_ref))))
        allowance = gamma(16 * S * d + 16) * (cond_g + cond) * scale * math.sqrt(S * d)
        for q, cb in enumerate(clusters):
            kappa, g_pi, g_max = cb["kappa"], cb["g_pi"], cb["G_max"]
            distance = float(np.linalg.norm(w[:, q, :] - w_pi[q][None, :]))
            # at the drawn rho the a-posteriori form of the identity: ||e|| <= kappa ||g(w)|| / rho
            bound = kappa * cb["g_w"] / r if r == rho else kappa * g_pi / (r - kappa * g_max)
            ratio = distance / (bound * (1.0 + gamma(8 * S * d)) + allowance)
            worst = max(worst, ratio)
            rows.append({"cluster": q, "rho": r, "distance": distance, "bound": bound, "allowance": allowance})
    identity = max(cb["identity_gap"] / (gamma(16 * S * d + 16) * (cb["scale"] + rho * float(np.max(np.abs(w_rho))))
                                         * cond_rho + 1e-300) for cb in clusters)
    measured = max(worst, identity)
    return Evidence(measured=measured, bound=1.0, holds=measured <= 1.0,
                    parameters={**dict(params), "condition": "O(1/rho) distance to the pi-weighted optimum",
                                "kappa": [cb["kappa"] for cb in clusters], "bias_rows": rows,
                                "identity_ratio": identity})


def evaluate_theorem1_fixed_point(params: Mapping[str, Any], *, fixed_point_fn: Callable = fixed_point_state,
                                  radius_fn: Callable = iteration_spectral_radius,
                                  pi_optimum_fn: Callable = pi_weighted_optimum) -> list[Evidence]:
    r"""Evidence of the corrected statement at one instance (Algorithm 1, :math:`\tau = 0`, no noise).

    One :class:`Evidence` per condition: stability (:math:`r(T) < 1`, cross-checked with the closed form
    :func:`iteration_radius`), limit = (Pc) (``FIXED_POINT_RTOL``), fitted rate in the band around
    :math:`r(T)`, (Pc) = (Pa) for :math:`S = 1` (``EXACT_TARGET_RTOL``), and the :math:`O(1/\rho)` bias bound.
    """
    problem = build_instance(params)
    config = _config(problem, params)
    radius = float(radius_fn(problem, config))
    radius_closed = iteration_radius(problem, config)
    base = {**dict(params), "spectral_radius": radius, "closed_form_radius": radius_closed,
            "stability_threshold_factor": stability_threshold_factor(problem.adjacency)}
    out = [Evidence(measured=radius, bound=1.0, holds=radius < 1.0, parameters={**base, "condition": "r(T) < 1"})]
    if radius >= 1.0:
        return out
    u_star, w_pc, residual = fixed_point_fn(problem, config)
    errors, state = _run_errors(problem, config, u_star, radius)
    rate = _rate_assessment(problem, config, u_star, errors, radius)
    dist_pc = _relative_distance(state.w_servers[0], w_pc)
    info = {**base, "iterations": int(errors.size), **rate, "fixed_point_residual": residual}
    out.append(Evidence(measured=dist_pc, bound=FIXED_POINT_RTOL, holds=dist_pc <= FIXED_POINT_RTOL,
                        parameters={**info, "condition": "limit is (Pc)"}))
    severity = rate["rate_severity"]
    out.append(Evidence(measured=severity, bound=1.0, holds=severity <= 1.0,
                        parameters={**info, "condition": "linear rate r(T): asymptotic rate in [r(T) - 0.05, "
                                                         "r(T) + 0.01], window fit = prediction of T"}))
    if problem.S == 1:
        pa = cluster_optima(problem)
        dist = max(_relative_distance(w_pc, pa), _relative_distance(state.w_servers[0], pa))
        out.append(Evidence(measured=dist, bound=EXACT_TARGET_RTOL, holds=dist <= EXACT_TARGET_RTOL,
                            parameters={**info, "condition": "S = 1: limit is (Pa)"}))
    out.append(_bias_evidence(problem, config.rho, base, pi_optimum_fn))
    return out


def _fixed_point_batch(rng: np.random.Generator, count: int, kwargs: dict) -> list[Evidence]:
    """Instances of the corrected claim's hypotheses (as the Hypothesis strategy ``pgfl_tau0_instances``)."""
    out = []
    for i in range(count):
        S = int(rng.integers(1, 5))
        Q = int(rng.integers(2, 4))
        d = int(rng.integers(2, 5))
        seed = int(rng.integers(2**32))
        edges = _connected_edges(np.random.default_rng(seed + 1), S, int(rng.integers(S - 1, S * (S - 1) // 2 + 1)))
        thr = stability_threshold_factor(_adjacency(S, edges))
        lo = max(0.1, 1.1 * thr)
        params = {"seed": seed, "servers": S, "clients_per_server": int(rng.integers(Q, 6)), "clusters": Q, "d": d,
                  "lam": float(10 ** rng.uniform(-3, 0)), "samples": (d, 10),
                  "data": "identical" if i % 3 == 2 else "gaussian", "edges": edges,
                  "rho_factor": float(rng.uniform(lo, 0.5))}
        out += evaluate_theorem1_fixed_point(params, **kwargs)
    return out


def check_theorem1_fixed_point(ctx: CheckContext, *, fixed_point_fn: Callable = fixed_point_state,
                               radius_fn: Callable = iteration_spectral_radius,
                               pi_optimum_fn: Callable = pi_weighted_optimum) -> CheckResult:
    """Random instances (gaussian and identical-client data, S = 1..4), the sharp 4-cycle, and (thorough) the
    paper's size."""
    p = _PROFILE[ctx.profile]
    kwargs = {"fixed_point_fn": fixed_point_fn, "radius_fn": radius_fn, "pi_optimum_fn": pi_optimum_fn}
    evidence = sample_evidence(ctx, "pgfl.theorem1_fixed_point", _fixed_point_batch, p["fp_batches"],
                               (p["fp_per_batch"], kwargs))
    c4 = build_instance(_c4_identical_params(0.1))
    sharp = 1.1 * identical_clients_threshold(c4) / c4.max_curvature
    evidence += evaluate_theorem1_fixed_point(_c4_identical_params(sharp), **kwargs)
    if ctx.thorough:
        params = _paper_params(int(ctx.seed_sequence("pgfl.theorem1_fixed_point.paper").generate_state(1)[0]))
        thr = stability_threshold_factor(build_instance(params).adjacency)
        params["rho_factor"] = max(params["rho_factor"], 1.1 * thr)
        evidence += evaluate_theorem1_fixed_point(params, **{**kwargs, "radius_fn": iteration_radius})
    rate_points = [e for e in evidence if e.parameters["condition"].startswith("linear rate")]
    cases = []
    for e in sorted(rate_points, key=lambda e: e.parameters["spectral_radius"])[:: max(1, len(rate_points) // 3)][:3]:
        pr = build_instance(e.parameters)
        cfg = _config(pr, e.parameters)
        u_star, _, _ = fixed_point_fn(pr, cfg)
        errors, _ = _run_errors(pr, cfg, u_star, e.parameters["spectral_radius"])
        label = f"S = {e.parameters['servers']}, {e.parameters['data']}"
        cases.append((label, errors, e.parameters["spectral_radius"]))
    bias_rows = [row for e in evidence if e.parameters["condition"].startswith("O(1/rho)")
                 for row in e.parameters["bias_rows"] if row["bound"] > 0]
    figure_bias = FigureSpec(
        name="pi_bias_vs_rho", title="Corrected Theorem I: ||(Pc) - pi-weighted optimum|| against its O(1/rho) bound",
        xlabel="rho", ylabel="distance (per cluster)", xscale="log", yscale="log",
        series=(Series(label="distance", x=[r["rho"] for r in bias_rows],
                       y=[max(r["distance"], 1e-300) for r in bias_rows], style="points", group="b"),
                Series(label="bound kappa ||g|| / (rho - kappa G_max) (or kappa ||g(w)|| / rho)",
                       x=[r["rho"] for r in bias_rows], y=[r["bound"] for r in bias_rows], style="points", group="c")))
    radius_gap = max(abs(e.parameters["spectral_radius"] - e.parameters["closed_form_radius"]) for e in evidence)
    return result_from_evidence(
        "pgfl.theorem1_fixed_point", evidence, ctx=ctx,
        quantity=("per condition: measured / acceptance bound (r(T) < 1; ||w - (Pc)||; rate band; (Pa) if S = 1; "
                  "bias bound)"),
        what="tau = 0 iteration converges at rate r(T) to (Pc), = (Pa) if S = 1, O(1/rho) from the pi-weighted optimum",
        figures=[_error_figure(cases, "error_vs_iteration", "Corrected Theorem I: error and r(T)^n"), figure_bias],
        details={"max_|r(T)_reference - r(T)_closed_form|": radius_gap,
                 "sharp_four_cycle_rho_over_Lmax": sharp,
                 "rates": [{"servers": e.parameters["servers"], "data": e.parameters["data"],
                            "rho_over_Lmax": e.parameters["rho_factor"], "r(T)": e.parameters["spectral_radius"],
                            "fitted": e.parameters["fitted_rate"],
                            "predicted": e.parameters.get("predicted_window_fit"),
                            "asymptotic": e.parameters.get("asymptotic_rate")} for e in rate_points],
                 "spec_R1_2_band_violations": sum(e.parameters["spec_r1_2_band_severity"] > 1.0 for e in rate_points)})


# --------------------------------------------------------------------------------------------------
# pgfl.theorem1_private
# --------------------------------------------------------------------------------------------------

def _homogeneous_step(problem: PGFLProblem, config: PGFLConfig, servers: np.ndarray, duals: np.ndarray,
                      noise: np.ndarray) -> np.ndarray:
    """Linear part of one tau = 0 iteration (data terms dropped), written from spec 2.2-2.3 independently of
    :mod:`reference_impl.pgfl`: batch of server models (R, S, Q, d), duals (R, K, d), noise (R, K, d) -> u'."""
    rho, d = config.rho, problem.d
    s_k, q_k = problem.client_server, problem.client_cluster
    curv = problem.hessians + (problem.ridge_weights + rho)[:, None, None] * np.eye(d)
    w = np.linalg.solve(curv[None], (duals + rho * servers[:, s_k, q_k, :])[..., None])[..., 0]   # eq. (4)
    released = w + noise                                                                          # eq. (11)
    groups = problem.groups                                                                       # (S*Q, K)
    tilde = np.einsum("gk,rkd->rgd", groups, released - duals / rho) / groups.sum(axis=1)[None, :, None]
    tilde = tilde.reshape(servers.shape)                                                          # eq. (8)/(12)
    new_servers = np.einsum("sp,rpqd->rsqd", _mixing(problem), tilde)                             # eq. (9), tau = 0
    literal = config.algorithm == "alg2" and config.dual_ref == "local_aggregate"
    reference = (tilde if literal else new_servers)[:, s_k, q_k, :]
    new_duals = duals + rho * (reference - released)                                              # eq. (5)
    R = servers.shape[0]
    return np.concatenate([new_servers.reshape(R, -1), new_duals.reshape(R, -1)], axis=1)


def _affine_parts(problem: PGFLProblem, config: PGFLConfig, *, with_noise: bool = True):
    """(T, B) with u' = T u + B xi + c for the noisy tau = 0 iteration (full participation), small instances
    (B is None without ``with_noise``)."""
    S, Q, d, K = problem.S, problem.n_clusters, problem.d, problem.K
    n_srv, n_dual = S * Q * d, K * d
    dim = n_srv + n_dual
    basis = np.eye(dim)
    T = _homogeneous_step(problem, config, basis[:, :n_srv].reshape(dim, S, Q, d),
                          basis[:, n_srv:].reshape(dim, K, d), np.zeros((dim, K, d))).T
    if not with_noise:
        return T, None
    B = _homogeneous_step(problem, config, np.zeros((n_dual, S, Q, d)), np.zeros((n_dual, K, d)),
                          np.eye(n_dual).reshape(n_dual, K, d)).T
    return T, B


def _exact_mean_square(problem: PGFLProblem, config: PGFLConfig, u_star: np.ndarray, iterations: int) -> np.ndarray:
    """E||u^(n) - u*||^2, n = 1..iterations: deterministic part of the noise-free run plus tr(Cov_n),
    Cov_n = T Cov_{n-1} T^T + B diag(delta_k^2(n)) B^T."""
    T, B = _affine_parts(problem, config)
    noise_free = PGFLConfig(**{**config.__dict__, "phi0": None})
    run = run_pgfl(problem, noise_free, iterations, np.random.default_rng(0),
                   observe=lambda st: np.sum((state_vectors(st) - u_star[None, :]) ** 2, axis=1))
    deterministic = run.observations[:, 0]
    cov = np.zeros_like(T)
    out = np.empty(iterations)
    for n in range(1, iterations + 1):
        variances = np.repeat(config.noise_variance(problem.samples, n), problem.d)
        cov = T @ cov @ T.T + (B * variances[None, :]) @ B.T
        out[n - 1] = deterministic[n - 1] + np.trace(cov)
    return out


def _exact_mean_square_linear(problem: PGFLProblem, config: PGFLConfig, u_star: np.ndarray,
                              iterations: int) -> np.ndarray:
    """log E||u^(n) - u*||^2, n = 1..iterations (natural log, rescaled every step so nothing underflows), from the homogeneous recursions e_n = T e_{n-1} (deterministic part,
    started from one noise-free step of the reference) and Cov_n = T Cov_{n-1} T^T + B diag(delta_k^2(n)) B^T: both
    are homogeneous, so relative accuracy is kept down to any level (no eps * ||u*|| floor as in a run)."""
    T, B = _affine_parts(problem, config)
    noise_free = PGFLConfig(**{**config.__dict__, "phi0": None})
    first = run_pgfl(problem, noise_free, 1, np.random.default_rng(0), observe=lambda st: state_vectors(st))
    e = np.asarray(first.observations[0, 0]) - u_star
    cov = np.zeros_like(T)
    out = np.empty(iterations)
    log_scale = 0.0          # e and cov are kept divided by exp(log_scale) and exp(2 log_scale): no underflow
    for n in range(1, iterations + 1):
        if n > 1:
            e = T @ e
        raw = np.repeat(config.noise_variance(problem.samples, n), problem.d)
        with np.errstate(divide="ignore"):   # a variance that underflowed to 0 stays 0 (negligible: zeta^n << r^2n)
            variances = np.exp(np.log(raw) - 2.0 * log_scale)
        cov = T @ cov @ T.T + (B * variances[None, :]) @ B.T
        value = float(e @ e) + np.trace(cov)
        out[n - 1] = math.log(value) + 2.0 * log_scale
        shift = 0.5 * math.log(value)
        e, cov, log_scale = e * math.exp(-shift), cov * math.exp(-2.0 * shift), log_scale + shift
    return out


def _jackknife_factor(sq_errors: np.ndarray, n: np.ndarray, alpha: float) -> dict:
    """Fitted factor of the mean over runs (slope of log mean vs n) with jackknife confidence limits."""
    R = sq_errors.shape[1]
    mean = sq_errors.mean(axis=1)
    x = n - n.mean()
    sxx = float(x @ x)
    theta = math.exp(float(x @ np.log(mean)) / sxx)
    loo = (R * mean[:, None] - sq_errors) / (R - 1)
    theta_loo = np.exp((x @ np.log(loo)) / sxx)
    pseudo = R * theta - (R - 1) * theta_loo
    return {"factor": theta, "upper": mean_upper_confidence_limit(pseudo, alpha),
            "lower": -mean_upper_confidence_limit(-pseudo, alpha), "runs": R}


def private_target_factor(radius: float, zeta: float) -> float:
    r"""Per-iteration factor of :math:`E\lVert u^{(n)} - u^\star\rVert^2` (spec 2.8 item 3): :math:`\max(r(T)^2, \zeta)`."""
    if not (0.0 <= radius and 0.0 < zeta <= 1.0):
        raise ValueError(f"radius must be >= 0 and zeta in (0, 1], got {radius!r}, {zeta!r}")
    return max(radius**2, zeta)


def evaluate_private_factor(params: Mapping[str, Any], *, runs: int, seed: int, alpha: float,
                            factor_fn: Callable = private_target_factor, exact: bool = True) -> Evidence:
    r"""Monte Carlo of Algorithm 2 (literal, :math:`\tau = 0`) with noise variance :math:`\propto\zeta^n`.

    Window: from the iteration :math:`n_1` where :math:`(r(T)^2/\zeta)^{n_1} \le 10^{-6}` (the deterministic
    part and the transient of the noise part are negligible) over :math:`\log(10^{-6})/\log\zeta` iterations.
    Holds iff both jackknife confidence limits (level ``alpha`` each) of the fitted factor lie within
    ``FACTOR_BAND`` of ``factor_fn(r(T), zeta)``. Also records :math:`r(T)` against the proven bound
    :func:`alg2_contraction_bound`, and (``exact``) the factor of the exact mean-square curve.
    """
    problem = build_instance(params)
    zeta = float(params["zeta"])
    config = PGFLConfig(rho=float(params["rho_factor"]) * problem.max_curvature, algorithm="alg2",
                        phi0=float(params["phi0"]), zeta=zeta, C=float(params.get("C", 1.0)))
    noise_free = PGFLConfig(**{**config.__dict__, "phi0": None})
    radius = float(iteration_spectral_radius(problem, noise_free) if problem.S * problem.n_clusters * problem.d
                   + problem.K * problem.d <= 4000 else iteration_radius(problem, noise_free))
    bound = alg2_contraction_bound(problem, config.rho)
    if abs(radius**2 - zeta) < NOISE_DOMINANCE_GAP:
        raise ValueError(f"|zeta - r(T)^2| = {abs(zeta - radius**2):.4f} < {NOISE_DOMINANCE_GAP}: outside the claim's "
                         "hypotheses (one of noise and iteration must dominate by the gap)")
    target = float(factor_fn(radius, zeta))
    u_star, _, residual = fixed_point_state(problem, noise_free)
    within_bound = radius <= bound * (1.0 + gamma(64))
    if zeta < radius**2:
        return _iteration_branch(problem, config, params, radius, bound, target, u_star, residual, runs, seed)
    n1 = max(1, int(math.ceil(math.log(1e-6) / math.log(radius**2 / zeta))) if radius > 0 else 1)
    length = int(math.ceil(math.log(1e-6) / math.log(zeta)))
    n2 = n1 + length
    run = run_pgfl(problem, config, n2, np.random.default_rng(seed), runs=runs,
                   observe=lambda st: np.sum((state_vectors(st) - u_star[None, :]) ** 2, axis=1))
    sq = run.observations                                                     # (n2, runs)
    n = np.arange(n1, n2 + 1, dtype=np.float64)
    jk = _jackknife_factor(sq[n1 - 1:], n, alpha)
    deviation = max(jk["upper"] - target, target - jk["lower"])
    info = {**dict(params), "spectral_radius": radius, "alg2_contraction_bound": bound,
            "r_within_proven_bound": bool(radius <= bound * (1.0 + gamma(64))), "target_factor": target,
            "fitted_factor": jk["factor"], "confidence_limits": (jk["lower"], jk["upper"]), "window": (n1, n2),
            "runs": runs, "mc_seed": seed, "alpha_per_limit": alpha, "fixed_point_residual": residual}
    if exact:
        curve = _exact_mean_square(problem, config, u_star, n2)
        info["exact_factor"] = math.exp(float(np.polyfit(n, np.log(curve[n1 - 1:]), 1)[0]))
        se = sq.std(axis=1, ddof=1) / math.sqrt(runs)
        info["max_|mc_mean - exact|/se"] = float(np.max(np.abs(sq.mean(axis=1) - curve) / se))
        info["curves"] = {"mc_mean": sq.mean(axis=1), "exact": curve}
    else:
        info["curves"] = {"mc_mean": sq.mean(axis=1)}
    info["branch"] = "noise dominates (zeta > r(T)^2)"
    return Evidence(measured=deviation, bound=FACTOR_BAND, holds=bool(deviation <= FACTOR_BAND and within_bound),
                    parameters=info)


def _iteration_branch(problem: PGFLProblem, config: PGFLConfig, params: Mapping[str, Any], radius: float,
                      bound: float, target: float, u_star: np.ndarray, residual: float, runs: int,
                      seed: int) -> Evidence:
    """zeta < r(T)^2: the factor of the exact mean-square curve (homogeneous recursions) over the window where the
    noise term and the sub-dominant eigenmodes of T have fallen by 1e-6 relative to the dominant one, within ``FACTOR_BAND`` of r(T)^2; a Monte Carlo of the first
    iterations must agree with that curve (recorded as max |MC mean - exact| / standard error)."""
    zeta = config.zeta
    moduli = np.abs(np.linalg.eigvals(_affine_parts(problem, config, with_noise=False)[0]))
    # the sub-dominant modes: largest modulus m with r(T)^2 - m^2 > FACTOR_BAND / 10 (closer ones move the fitted
    # factor by less than that whatever their weight, so the window need not wait for them)
    below = moduli[radius**2 - moduli**2 > FACTOR_BAND / 10]
    second = float(below.max()) if below.size else 0.0
    ratio = max(zeta / radius**2, (second / radius) ** 2)
    n1 = max(1, int(math.ceil(math.log(1e-6) / math.log(ratio))))
    if n1 > 20000:
        raise ValueError(f"sub-dominant modes too close to r(T) (ratio {ratio:.6f}): window would start at n = {n1}")
    n2 = n1 + int(math.ceil(math.log(1e-6) / math.log(radius**2)))
    log_curve = _exact_mean_square_linear(problem, config, u_star, n2)
    n = np.arange(n1, n2 + 1, dtype=np.float64)
    fitted = math.exp(float(np.polyfit(n, log_curve[n1 - 1:], 1)[0]))
    endpoint = math.exp((log_curve[n2 - 1] - log_curve[n1 - 1]) / (n2 - n1))
    curve = np.exp(log_curve)                                  # for the Monte-Carlo comparison and the figure
    deviation = max(abs(fitted - target), abs(endpoint - target))
    # Monte Carlo only where the exact curve is above the run's rounding floor (a run measures ||u - u*||^2 with an
    # absolute error ~ (eps ||u*||)^2; the recursions have none)
    n_mc = max(2, min(n1, 60, int(np.count_nonzero(curve >= 1e-16 * curve[0]))))
    run = run_pgfl(problem, config, n_mc, np.random.default_rng(seed), runs=runs,
                   observe=lambda st: np.sum((state_vectors(st) - u_star[None, :]) ** 2, axis=1))
    sq = run.observations
    se = sq.std(axis=1, ddof=1) / math.sqrt(runs)
    agreement = float(np.max(np.abs(sq.mean(axis=1) - curve[:n_mc]) / np.maximum(se, 1e-300)))
    within_bound = radius <= bound * (1.0 + gamma(64))
    info = {**dict(params), "spectral_radius": radius, "alg2_contraction_bound": bound,
            "r_within_proven_bound": bool(within_bound), "target_factor": target, "fitted_factor": fitted,
            "endpoint_factor": endpoint, "window": (n1, n2), "runs": runs, "mc_seed": seed,
            "fixed_point_residual": residual, "exact_factor": fitted, "max_|mc_mean - exact|/se": agreement,
            "second_modulus": second, "branch": "iteration dominates (zeta < r(T)^2)",
            "curves": {"mc_mean": np.concatenate([sq.mean(axis=1), np.full(n2 - n_mc, np.nan)]), "exact": curve}}
    return Evidence(measured=deviation, bound=FACTOR_BAND, holds=bool(deviation <= FACTOR_BAND and within_bound),
                    parameters=info)


def _iteration_params(rng: np.random.Generator) -> dict:
    """An instance of the iteration-dominated branch: the 'conditioned' data of :func:`_private_params` with rho/L_max
    in [0.1, 0.3] (r(T) large), zeta drawn in [0.05, r(T)^2 - 0.05] once r(T) is known (redrawn while r(T)^2 < 0.15)."""
    for _ in range(50):
        params = _private_params(rng, 0.5)
        params["rho_factor"] = float(rng.uniform(0.1, 0.3))
        problem = build_instance(params)
        config = PGFLConfig(rho=params["rho_factor"] * problem.max_curvature, algorithm="alg2")
        r2 = float(iteration_spectral_radius(problem, config)) ** 2
        if r2 >= 0.15:
            params["zeta"] = float(rng.uniform(0.05, r2 - NOISE_DOMINANCE_GAP))
            return params
    raise RuntimeError("no instance with r(T)^2 >= 0.15 in 50 draws")


def _private_params(rng: np.random.Generator, zeta: float) -> dict:
    """Instance of the private claim's hypotheses ('conditioned' data: Hessians in [1, 4] + ridge), with
    rho/L_max drawn so that the proven contraction bound gives zeta >= r(T)^2 + 0.05 (see the strategy)."""
    S = int(rng.integers(1, 4))
    Q = int(rng.integers(2, 4))
    d = int(rng.integers(2, 4))
    seed = int(rng.integers(2**32))
    lo = 0.18 if zeta <= 0.9 else 0.1
    return {"seed": seed, "servers": S, "clients_per_server": int(rng.integers(Q, 5)), "clusters": Q, "d": d,
            "lam": float(10 ** rng.uniform(-3, 0)), "samples": (d, 10), "data": "conditioned",
            "edges": _connected_edges(np.random.default_rng(seed + 1), S, S), "rho_factor": float(rng.uniform(lo, 0.5)),
            "zeta": zeta, "phi0": 0.05, "C": 1.0}


_PRIVATE_DETAIL_KEYS = ("branch", "zeta", "rho_factor", "servers", "spectral_radius", "second_modulus",
                        "alg2_contraction_bound", "target_factor", "endpoint_factor",
                        "fitted_factor", "confidence_limits", "window", "runs", "exact_factor",
                        "max_|mc_mean - exact|/se")


def check_theorem1_private_rate(ctx: CheckContext, *, factor_fn: Callable = private_target_factor) -> CheckResult:
    """Both branches of max(r(T)^2, zeta): noise-dominated instances (zeta in {0.9, 0.97}; Monte Carlo, jackknife
    limits) and iteration-dominated ones (zeta <= r(T)^2 - 0.05; exact curve, Monte Carlo agreement recorded)."""
    p = _PROFILE[ctx.profile]
    rng = np.random.default_rng(ctx.seed_sequence("pgfl.theorem1_private").generate_state(1)[0])
    count = p["private_instances"]
    alpha = bonferroni(MC_ALPHA, 2 * (count + int(ctx.thorough)))
    mc_seed = int(ctx.seed_sequence("pgfl.theorem1_private.mc").generate_state(1)[0])
    evidence = []
    for i in range(count):
        zeta = (0.9, 0.97)[i % 2]
        evidence.append(evaluate_private_factor(_private_params(rng, zeta), runs=p["runs"], seed=mc_seed + i,
                                                alpha=alpha, factor_fn=factor_fn))
    rng_it = np.random.default_rng(ctx.seed_sequence("pgfl.theorem1_private_rate.iteration").generate_state(1)[0])
    for i in range(count):
        evidence.append(evaluate_private_factor(_iteration_params(rng_it), runs=p["runs"], seed=mc_seed + count + 1 + i,
                                                alpha=alpha, factor_fn=factor_fn))
    skipped = []
    if ctx.thorough:
        # the paper's size and data (spec 5.1: gaussian features, D_k in 2..9), rho = 0.1 L_max, zeta = 0.97: the
        # first drawn graph and data with r(T)^2 + 0.05 <= zeta (the claim's hypothesis; r(T) by Arnoldi)
        for _ in range(20):
            params = {**_paper_params(int(rng.integers(2**32)), rho_factor=0.1), "zeta": 0.97, "phi0": 0.05, "C": 1.0}
            problem = build_instance(params)
            radius = iteration_radius(problem, PGFLConfig(rho=0.1 * problem.max_curvature, algorithm="alg2"))
            if radius**2 + NOISE_DOMINANCE_GAP <= params["zeta"]:
                evidence.append(evaluate_private_factor(params, runs=200, seed=mc_seed + count, alpha=alpha,
                                                        factor_fn=factor_fn, exact=False))
                break
            skipped.append({"seed": params["seed"], "r(T)^2": radius**2})
    series = []
    for e in evidence[:2]:
        curves = e.parameters["curves"]
        n = np.arange(1, curves["mc_mean"].size + 1)
        label = f"zeta = {e.parameters['zeta']}, r(T)^2 = {e.parameters['spectral_radius'] ** 2:.3f}"
        series.append(Series(label=f"{label}: Monte-Carlo mean", x=n, y=curves["mc_mean"], style="points", group=label))
        if "exact" in curves:
            series.append(Series(label=f"{label}: exact (covariance recursion)", x=n, y=curves["exact"], group=label))
        n1, n2 = e.parameters["window"]
        anchor = curves["mc_mean"][n1 - 1]
        series.append(Series(label=f"{label}: max(r^2, zeta)^n", x=(n1, n2),
                             y=(anchor, anchor * e.parameters["target_factor"] ** (n2 - n1)), style="dashed",
                             group=label))
    figure = FigureSpec(name="mean_square_error_vs_iteration",
                        title="Theorem I with privacy noise: E||u^(n) - u*||^2 (Algorithm 2, tau = 0)",
                        xlabel="iteration n", ylabel="mean-square state error", yscale="log", series=tuple(series))
    stripped = [Evidence(measured=e.measured, bound=e.bound, holds=e.holds,
                         parameters={k: v for k, v in e.parameters.items() if k != "curves"}) for e in evidence]
    return result_from_evidence(
        "pgfl.theorem1_private_rate", stripped, ctx=ctx,
        quantity=("distance of the fitted factor from max(r(T)^2, zeta): jackknife confidence limits (zeta > r^2), "
                  "exact-curve fit and endpoint ratio (zeta < r^2)"),
        what="E||u^(n) - u*||^2 decays with factor max(r(T)^2, zeta)", figures=[figure],
        monte_carlo=MonteCarlo(n=min(e.parameters["runs"] for e in stripped), alpha=MC_ALPHA, seed=mc_seed),
        details={"points": [{k: e.parameters[k] for k in _PRIVATE_DETAIL_KEYS if k in e.parameters} for e in stripped],
                 "alpha_per_limit": alpha, "paper_size_draws_outside_hypothesis": skipped})


def evaluate_private_limit(params: Mapping[str, Any], *, runs: int = 100, seed: int = 0,
                           optimum_fn: Callable = pa_optimum) -> Evidence:
    r"""Private PGFL (Algorithm 2, literal, :math:`\tau = 0`): distance of its limit from the optimum (Pa) of (2).

    The iteration is affine in (state, noise) with zero-mean noise, so :math:`E w^{(n)}` is the noise-free iterate,
    which converges to the solved fixed point (Pc); by Jensen :math:`E\lVert w^{(n)} - w_{Pa}\rVert^2 \ge
    \lVert E w^{(n)} - w_{Pa}\rVert^2 \to \lVert w_{Pc} - w_{Pa}\rVert^2`. The statement holds at the point iff
    (Pc) is within ``FIXED_POINT_RTOL`` (relative) of ``optimum_fn`` (Pa). A Monte Carlo at the iteration where
    :math:`\zeta^n \le 10^{-6}` records the mean-square relative distance to (Pa) next to the squared (Pc)-(Pa) one.
    """
    problem = build_instance(params)
    config = PGFLConfig(rho=float(params["rho_factor"]) * problem.max_curvature, algorithm="alg2",
                        phi0=float(params["phi0"]), zeta=float(params["zeta"]), C=float(params.get("C", 1.0)))
    noise_free = PGFLConfig(**{**config.__dict__, "phi0": None})
    radius = float(iteration_spectral_radius(problem, noise_free))
    _, w_pc, residual = fixed_point_state(problem, noise_free)
    target = np.asarray(optimum_fn(problem, noise_free))
    distance = _relative_distance(w_pc, target)
    n_end = int(math.ceil(max(math.log(1e-6) / math.log(config.zeta), math.log(1e-9) / math.log(max(radius, 1e-3)))))
    scale = float(np.max(np.linalg.norm(np.broadcast_to(target, w_pc.shape), axis=-1))) ** 2
    run = run_pgfl(problem, config, n_end, np.random.default_rng(seed), runs=runs,
                   observe=lambda st: np.max(np.sum((st.w_servers - target) ** 2, axis=-1).reshape(runs, -1), axis=1))
    final = run.observations[-1] / scale
    return Evidence(measured=distance, bound=FIXED_POINT_RTOL, holds=bool(radius < 1.0 and distance <= FIXED_POINT_RTOL),
                    parameters={**dict(params), "spectral_radius": radius, "relative_distance_Pc_to_Pa": distance,
                                "fixed_point_residual": residual, "iterations": n_end, "runs": runs, "mc_seed": seed,
                                "mc_mean_square_relative_distance_to_Pa": float(final.mean()),
                                "squared_relative_distance_Pc_to_Pa": distance**2})


def check_theorem1_private(ctx: CheckContext, *, optimum_fn: Callable = pa_optimum) -> CheckResult:
    """The private algorithm's limit vs (Pa) on multi-server instances of the private claim's hypotheses."""
    rng = np.random.default_rng(ctx.seed_sequence("pgfl.theorem1_private.as_stated").generate_state(1)[0])
    evidence = []
    for i in range(4 if not ctx.thorough else 12):
        params = _private_params(rng, (0.9, 0.97)[i % 2])
        if params["servers"] == 1:
            params = {**params, "servers": 2, "edges": [(0, 1)]}
        evidence.append(evaluate_private_limit(params, runs=20 if not ctx.thorough else 200,
                                               seed=int(rng.integers(2**31)), optimum_fn=optimum_fn))
    points = [e.parameters for e in evidence]
    figure = FigureSpec(
        name="limit_distance_to_pa", title="Private PGFL (tau = 0): where the iterates go, relative to (Pa)",
        xlabel="instance", ylabel="squared relative distance to (Pa)", yscale="log",
        series=(Series(label="||w_Pc - w_Pa||^2 / max_q ||w_Pa||^2 (lower bound on the limit, Jensen)",
                       x=range(len(points)), y=[q["squared_relative_distance_Pc_to_Pa"] for q in points],
                       style="points", group="pc"),
                Series(label="Monte-Carlo mean at zeta^n <= 1e-6", x=range(len(points)),
                       y=[q["mc_mean_square_relative_distance_to_Pa"] for q in points], style="points", group="mc")))
    return result_from_evidence(
        "pgfl.theorem1_private", evidence, ctx=ctx,
        quantity="max_{s,q} ||w_Pc - w_Pa|| / max_q ||w_Pa||: the private iterates' mean limit vs the optimum of (2)",
        what="private PGFL (tau = 0) converges to the optimum (Pa) of (2)", corrected_claim="pgfl.theorem1_private_rate",
        figures=[figure],
        details={"points": [{k: e.parameters[k] for k in ("servers", "zeta", "rho_factor", "spectral_radius",
                                                          "relative_distance_Pc_to_Pa",
                                                          "squared_relative_distance_Pc_to_Pa",
                                                          "mc_mean_square_relative_distance_to_Pa", "runs")}
                            for e in evidence]})


def reproduce_theorem1_private(counterexample: Mapping[str, Any]) -> Evidence:
    """Rebuild the instance from its recorded parameters and recompute the limit's distance from (Pa)."""
    keys = (*_PARAM_KEYS, "zeta", "phi0", "C")
    return evaluate_private_limit({k: v for k, v in counterexample.items() if k in keys},
                                  seed=int(counterexample.get("mc_seed", 0)))


# --------------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------------

_CITE_T1 = (Citation(seed=SEED_A, label="Theorem I", equation="(13)-(22)", lines="199-240"),
            Citation(seed=SEED_J, label="Theorem I", lines="268"),
            Citation(seed=SEED_THESIS, label="Theorem 5.1", lines="1399"))

CLAIMS = (
    Claim(
        id="pgfl.theorem1", paper="pgfl",
        title="Theorem I: with tau = 0, PGFL converges linearly to the optimum of (2) for each cluster",
        citations=_CITE_T1,
        statement=("Under Assumption 1, if tau^(n) = tau = 0 for all n, the proposed PGFL algorithm converges to the "
                   "optimal solution of (2) in linear time for each cluster (the optimum of (2) with tau = 0 is (Pa), "
                   "argmin_w sum_{k in C_(q)} f_k(w), shared/spec/pgfl.md 1.3)."),
        hypotheses=("Assumption 1 (convex, smooth f_k); instances are strongly convex ridge problems (spec E11)",
                    "tau^(n) = 0", "full participation, no privacy noise (Algorithm 1)",
                    "rho in [0.1, 0.5] L_max, raised to 1.1 L_max m/(1+m) where needed so that r(T) < 1"),
        check=check_theorem1, expected=Verdict.REFUTED,
        reason=("With one server the iteration is global-consensus ADMM and reaches (Pa) (to 1e-10). With several "
                "servers it converges linearly at rate r(T) to the fixed point (Pc) of spec 2.8 (to 1e-9), which is "
                "O(1e-2) relative away from (Pa): O(1/rho) server disagreement plus a pi-weighting bias that does not "
                "vanish as rho -> infinity (the distance to (Pa) levels off, the distance to the pi-weighted optimum "
                "falls like 1/rho). The proof (seed 000 eqs. (13)-(22)) analyses a client-level decentralised ADMM, not "
                "steps (8)-(10) (spec E12). The theorem also has no condition on rho, and Algorithm 1 diverges for "
                "rho < L_max m/(1+m) with identical clients (4-cycle: r(T) = 1.18 at rho = 0.1 L_max)."),
        severity="false",
        reproduce=reproduce_theorem1, corrected_by="pgfl.theorem1_fixed_point",
    ),
    Claim(
        id="pgfl.theorem1_fixed_point", paper="pgfl",
        title="Corrected Theorem I: linear convergence at rate r(T) to the fixed point (Pc), (Pa) only for one server",
        citations=_CITE_T1,
        statement=("With tau = 0, full participation, no noise and rho in [0.1, 0.5] L_max with "
                   "rho > L_max m/(1+m), m = max(0, -lambda_min(A_srv)) (the stability threshold, exact for identical "
                   "clients), the Algorithm 1 iteration has r(T) < 1 and converges linearly with rate r(T) to the fixed "
                   "point (Pc) of spec 2.8, which equals (Pa) when S = 1 and lies within "
                   "kappa ||g(1 w_pi)|| / (rho - kappa max_s ||G_s||) = O(1/rho) of the pi-weighted optimum "
                   "argmin sum_s |N_s|/|C_{s,(q)}| sum_{k in C_{s,(q)}} f_k (kappa = ||N (I - A)^# A||)."),
        hypotheses=("ridge f_k with lambda in [1e-3, 1] (strongly convex)", "tau^(n) = 0", "full participation, no noise",
                    "connected server graph, every group C_{s,(q)} non-empty",
                    "rho in [0.1, 0.5] L_max and rho > L_max m/(1+m)"),
        check=check_theorem1_fixed_point, expected=Verdict.CONFIRMED,
        reason=("The iteration is affine: with v = w_k - phi_k/rho it is v -> (I + RC)v/2 (R = 2P - I, C = 2B - I), "
                "whose radius matches the reference's r(T); the iterates reach the solved (Pc) to 1e-9 at the fitted "
                "rate, (Pc) = (Pa) for S = 1, and the exact identity rho (w - 1 w_pi) = -N (I - A)^# A g(w) gives the "
                "explicit O(1/rho) bound. Stability for rho >= L_max and for lambda_min(A_srv) >= 0 is proved; the "
                "graph threshold L_max m/(1+m) is exact for identical clients and held on every instance tried."),
        corrects="pgfl.theorem1",
    ),
    Claim(
        id="pgfl.theorem1_private", paper="pgfl",
        title="Theorem I for the private algorithm: with tau = 0, private PGFL converges linearly to the optimum of (2)",
        citations=(Citation(seed=SEED_A, label="Abstract and Section III (Theorem I for the private version)",
                            lines="229"),
                   Citation(seed=SEED_A, label="noise schedule delta^2(n) = zeta delta^2(n-1)", lines="145"),
                   Citation(seed=SEED_THESIS, label="Algorithm 5", lines="1297")),
        statement=("As stated for the privacy-preserving version: PGFL with privacy noise (Algorithm 2), tau = 0 and "
                   "decaying noise variance delta_k^2(n) = zeta delta_k^2(n-1), zeta < 1, converges linearly to the "
                   "optimal solution of (2) for each cluster ((Pa), argmin_w sum_{k in C_(q)} f_k(w))."),
        hypotheses=("ridge f_k, data Hessians with eigenvalues in [1, 4], lambda in [1e-3, 1]", "tau^(n) = 0",
                    "full participation", "at least two servers", "zeta in {0.9, 0.97}, rho/L_max in [0.1, 0.5]"),
        check=check_theorem1_private, expected=Verdict.REFUTED,
        reason=("It falls with Theorem I for several servers: the iteration is affine in (state, noise) with zero-mean "
                "noise, so E w^(n) is the noise-free iterate, which converges to the fixed point (Pc), not (Pa); by "
                "Jensen E||w^(n) - w_Pa||^2 >= ||w_Pc - w_Pa||^2 in the limit, O(1e-2) relative on every "
                "multi-server instance drawn (the Monte-Carlo mean square at zeta^n <= 1e-6 agrees). What does hold "
                "is the rate statement pgfl.theorem1_private_rate, towards (Pc)."),
        severity="false", reproduce=reproduce_theorem1_private, corrected_by="pgfl.theorem1_private_rate",
    ),
    Claim(
        id="pgfl.theorem1_private_rate", paper="pgfl",
        title="Corrected private Theorem I: E||u^(n) - u*||^2 decays with factor max(r(T)^2, zeta), towards (Pc)",
        citations=(Citation(seed=SEED_A, label="Abstract and Section III (Theorem I for the private version)",
                            lines="229"),
                   Citation(seed=SEED_A, label="noise schedule delta^2(n) = zeta delta^2(n-1)", lines="145"),
                   Citation(seed=SEED_THESIS, label="Algorithm 5", lines="1297")),
        statement=("For privacy-preserving PGFL (Algorithm 2, literal dual reference) with tau = 0, full participation "
                   "and noise variance delta_k^2(n) = zeta^n delta_k^2(0), E||u^(n) - u*||^2 (u = server models and "
                   "duals, u* the noise-free fixed point, whose server part is (Pc), not (Pa)) decays with "
                   "per-iteration factor max(r(T)^2, zeta): zeta when the noise dominates (zeta > r(T)^2) and r(T)^2 "
                   "when the iteration does (zeta < r(T)^2)."),
        hypotheses=("ridge f_k, data Hessians with eigenvalues in [1, 4], lambda in [1e-3, 1]", "tau^(n) = 0",
                    "full participation", "|zeta - r(T)^2| >= 0.05: zeta in {0.9, 0.97} with rho/L_max in [0.1, 0.5] "
                    "([0.18, 0.5] for zeta = 0.9), so that the proven bound gives r(T)^2 <= zeta - 0.05; or "
                    "zeta in [0.05, r(T)^2 - 0.05] with rho/L_max in [0.1, 0.3]"),
        check=check_theorem1_private_rate, expected=Verdict.CONFIRMED,
        reason=("Algorithm 2 (literal) is affine in (state, noise) and contracts for every rho > 0 (proven bound). "
                "E||u^(n) - u*||^2 = ||T^n e_0||^2 + sum_j zeta^j tr(T^(n-j) B D B^T T^(n-j)^T): the first term decays "
                "like r(T)^(2n), the second like max(r(T)^2, zeta)^n. Noise branch: Monte Carlo (jackknife limits) "
                "and the exact covariance recursion give zeta within 0.01. Iteration branch (zeta < r(T)^2, which "
                "the earlier check excluded): the exact curve's factor, over the window where the noise term and the "
                "sub-dominant eigenmodes of T have fallen by 1e-6, matches r(T)^2 to ~1e-7, and 200 Monte-Carlo runs "
                "agree with the exact curve within a few standard errors. The factor zeta alone (true for the noise "
                "term of any stable affine system) is refuted on that branch."),
        corrects="pgfl.theorem1_private",
    ),
)
