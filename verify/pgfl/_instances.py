r"""Instances of PGFL's convergence claims: the ridge instances of Theorem I (and of the single-step, Theorem II
noise and private claims that reuse them), the paper's sizes, the sharp four-cycle, the private claims' parameter
draws and Theorem II's one-server counterexamples. Everything is deterministic in its parameters, so a recorded
counterexample can be rebuilt.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from reference_impl.pgfl import PGFLConfig, PGFLProblem, iteration_spectral_radius
from theory.pgfl.stability import stability_threshold_factor
from verify.sampling import sampler
from verify.tolerance import NOISE_DOMINANCE_GAP

__all__ = ["ITERATION_BRANCH_INSTANCES", "PARAM_KEYS", "PRIVATE_INSTANCES", "SINGLE_STEP_INSTANCES", "TAU0_INSTANCES",
           "TAU_SEQUENCES",
            "adjacency_matrix", "anisotropic_instance", "build_instance", "connected_edges", "drawn_edges",
           "equal_optima_instance", "four_cycle_identical_params", "iteration_branch_params", "paper_params",
           "single_server_instance", "tau0_config"]

#: The keys of :func:`build_instance` (and ``rho_factor``): what a counterexample records to be rebuilt.
PARAM_KEYS = ("seed", "servers", "clients_per_server", "clusters", "d", "lam", "samples", "data", "edges",
              "average_degree", "rho_factor")


def connected_edges(rng: np.random.Generator, servers: int, n_edges: int) -> list[tuple[int, int]]:
    """A random spanning tree plus uniformly drawn extra edges (``n_edges`` in total, capped)."""
    edges = {tuple(sorted((int(rng.integers(i)), i))) for i in range(1, servers)}
    others = [(i, j) for i in range(servers) for j in range(i + 1, servers) if (i, j) not in edges]
    extra = max(0, min(n_edges - len(edges), len(others)))
    for idx in rng.permutation(len(others))[:extra]:
        edges.add(others[idx])
    return sorted(edges)


def adjacency_matrix(servers: int, edges) -> np.ndarray:
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
    :math:`\gamma_q \sim U(-0.15, 0.15)`, :math:`w_0 \sim N(0, I)`, observation noise variance 0.1
    (docs/papers/pgfl.md#choice-regression-data).

    ``data``:

    * ``"gaussian"``: :math:`x \sim N(0, I_d)` (docs/papers/pgfl.md#choice-regression-data);
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
        edges = connected_edges(rng, S, int(round(float(p.get("average_degree", 3.0)) * S / 2)))
    adjacency = adjacency_matrix(S, edges)
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


def paper_params(seed: int, rho_factor: float = 0.25) -> dict:
    """docs/papers/pgfl.md#choice-regression-data sizes: S = 10, 15 clients per server, d = 60, Q = 3, D_k in 2..9,
    average degree 3."""
    return {"seed": int(seed), "servers": 10, "clients_per_server": 15, "clusters": 3, "d": 60, "lam": 1.0,
            "samples": (2, 9), "data": "gaussian", "average_degree": 3.0, "rho_factor": rho_factor}


def four_cycle_identical_params(rho_factor: float) -> dict:
    """The sharp instability example: a 4-cycle of servers whose clients all share one feature matrix."""
    return {"seed": 4, "servers": 4, "clients_per_server": 2, "clusters": 2, "d": 3, "lam": 0.1, "samples": (3, 6),
            "data": "identical", "edges": [(0, 1), (1, 2), (2, 3), (0, 3)], "rho_factor": rho_factor}


def tau0_config(problem: PGFLProblem, params: Mapping[str, Any]) -> PGFLConfig:
    """Algorithm 1 with tau = 0 and rho = ``params["rho_factor"]`` L_max (no noise, full participation)."""
    return PGFLConfig(rho=float(params["rho_factor"]) * problem.max_curvature)


def iteration_branch_params(rng: np.random.Generator) -> dict:
    """An instance of the iteration-dominated branch: the 'conditioned' data of :data:`PRIVATE_INSTANCES` with rho/L_max
    in [0.1, 0.3] (r(T) large), zeta drawn in [0.05, r(T)^2 - 0.05] once r(T) is known (redrawn while r(T)^2 < 0.15)."""
    for _ in range(50):
        params = PRIVATE_INSTANCES.sample(rng, zeta=0.5)
        params["rho_factor"] = float(rng.uniform(0.1, 0.3))
        problem = build_instance(params)
        config = PGFLConfig(rho=params["rho_factor"] * problem.max_curvature, algorithm="alg2")
        r2 = float(iteration_spectral_radius(problem, config)) ** 2
        if r2 >= 0.15:
            params["zeta"] = float(rng.uniform(0.05, r2 - NOISE_DOMINANCE_GAP))
            return params
    raise RuntimeError("no instance with r(T)^2 >= 0.15 in 50 draws")


def _sqrtm_psd(H: np.ndarray) -> np.ndarray:
    vals, vecs = np.linalg.eigh(H)
    return (vecs * np.sqrt(np.clip(vals, 0.0, None))) @ vecs.T


def single_server_instance(hessians, optima) -> PGFLProblem:
    """One server, one client per cluster, lambda = 0, f_q(w) = (w - w_q)^T H_q (w - w_q) / 2 (Hessian H_q)."""
    hessians = [np.atleast_2d(np.asarray(h, dtype=np.float64)) for h in hessians]
    optima = [np.atleast_1d(np.asarray(w, dtype=np.float64)) for w in optima]
    d = hessians[0].shape[0]
    # ridge client loss (1/D)||y - X w||^2 has data Hessian (2/D) X^T X = H when X = sqrt(D/2) H^(1/2)
    X = tuple(math.sqrt(d / 2.0) * _sqrtm_psd(h) for h in hessians)
    y = tuple(x @ w for x, w in zip(X, optima, strict=True))
    Q = len(hessians)
    return PGFLProblem(adjacency=np.zeros((1, 1), dtype=bool), client_server=np.zeros(Q, dtype=np.int64),
                       client_cluster=np.arange(Q), n_clusters=Q, X=X, y=y, lam=0.0)


def equal_optima_instance(a1: float, a2: float, w0: float) -> PGFLProblem:
    """docs/papers/pgfl.md#erratum-r-a: S = 1, Q = 2, d = 1, f_q(w) = a_q (w - w0)^2 (Hessian 2 a_q; both optima w0,
    eta = 0)."""
    return single_server_instance([[[2.0 * a1]], [[2.0 * a2]]], [[w0], [w0]])


def anisotropic_instance() -> PGFLProblem:
    """S = 1, Q = 2, d = 2: cluster Hessians for which ||(H_1+H_2)^{-1} H_2|| = 12.4 (found by random search)."""
    H1 = np.array([[8.84737261, -0.0476630268], [-0.0476630268, 0.00276185202]])
    H2 = np.array([[3.50001744, -0.20463609], [-0.20463609, 0.01312955]])
    _, _, vt = np.linalg.svd(np.linalg.solve(H1 + H2, H2))
    return single_server_instance([H1, H2], [vt[0], np.zeros(2)])



# --------------------------------------------------------------------------------------------------
# Parameter spaces, drawn by the checks (``.sample(rng)``) and by verify.strategies (``.strategy()``)
# --------------------------------------------------------------------------------------------------

def drawn_edges(draw, servers: int, *, tree_only: bool = False) -> list[tuple[int, int]]:
    """A spanning tree (server i joins a drawn earlier server) plus, unless ``tree_only``, a drawn subset of the
    other pairs: every connected graph on ``servers`` nodes can occur."""
    edges = {(draw.integers(0, i - 1), i) for i in range(1, servers)}
    others = [(i, j) for i in range(servers) for j in range(i + 1, servers) if (i, j) not in edges]
    if others and not tree_only:
        edges |= set(draw.subset(others))
    return sorted(edges)


@sampler
def TAU0_INSTANCES(draw, *, min_servers: int = 1, max_servers: int = 4, tree_only: bool = False,
                   data: str | None = None) -> dict:
    """Ridge instances of Theorem I (tau = 0, Algorithm 1; built by :func:`build_instance`).

    S in [min_servers, max_servers], Q in {2, 3}, clients per server in [Q, 5] (every group C_{s,(q)} non-empty by
    construction), d in [2, 4], D_k in [d, 10], lambda in [1e-3, 1] (log-uniform), a connected graph (spanning tree
    plus drawn edges; a tree when ``tree_only``), data ``gaussian`` (the paper's) or ``identical`` (the sharp case of
    the stability threshold; drawn unless ``data`` is given), and rho/L_max uniform in
    [max(0.1, 1.1 m/(1+m)), 0.5] (m = -lambda_min(A_srv), at most 1/3 for S <= 4, so the range is non-empty).
    """
    S = draw.integers(min_servers, max_servers)
    Q = draw.integers(2, 3)
    d = draw.integers(2, 4)
    edges = drawn_edges(draw, S, tree_only=tree_only)
    low = max(0.1, 1.1 * stability_threshold_factor(adjacency_matrix(S, edges)))
    if low >= 0.5:
        raise ValueError(f"max_servers = {max_servers} allows graphs whose stability threshold exceeds 0.5 L_max / 1.1")
    return {"seed": draw.seed(), "servers": S, "clients_per_server": draw.integers(Q, 5), "clusters": Q, "d": d,
            "lam": draw.log10_uniform(-3.0, 0.0), "samples": (d, 10),
            "data": data if data is not None else draw.choice(["gaussian", "identical"]), "edges": edges,
            "rho_factor": draw.uniform(low, 0.5)}


@sampler
def PRIVATE_INSTANCES(draw, *, zeta: float | None = None, min_servers: int = 1) -> dict:
    """Instances of Theorem I with privacy noise (Algorithm 2): ``conditioned`` data (every client's data Hessian has
    eigenvalues in [1, 4]; with the ridge term h_max <= 5), S in [min_servers, 3], Q in {2, 3}, clients per server in
    [Q, 4], d in [2, 3], lambda in [1e-3, 1], zeta in {0.9, 0.97} (unless given) and rho/L_max in [0.18, 0.5]
    (zeta <= 0.9) or [0.1, 0.5]. Then the proven contraction bound r(T)^2 <= max(rho/(rho + h_min),
    L_max/(L_max + rho)) <= max(5f/(5f + 1), 1/(1 + f)) is at most zeta - 0.05 (f = rho/L_max): the noise dominates
    by construction."""
    S = draw.integers(min_servers, 3)
    Q = draw.integers(2, 3)
    d = draw.integers(2, 3)
    zeta = draw.choice([0.9, 0.97]) if zeta is None else float(zeta)
    return {"seed": draw.seed(), "servers": S, "clients_per_server": draw.integers(Q, 4), "clusters": Q, "d": d,
            "lam": draw.log10_uniform(-3.0, 0.0), "samples": (d, 10), "data": "conditioned",
            "edges": drawn_edges(draw, S), "rho_factor": draw.uniform(0.18 if zeta <= 0.9 else 0.1, 0.5),
            "zeta": zeta, "phi0": 0.05, "C": 1.0}


@sampler
def ITERATION_BRANCH_INSTANCES(draw) -> dict:
    """Instances of the iteration-dominated branch of the corrected private Theorem I (zeta <= r(T)^2 - 0.05):
    :func:`iteration_branch_params` of a drawn seed (it redraws the instance until r(T)^2 >= 0.15, so the space is
    drawn through one seed, a pure function of it)."""
    return iteration_branch_params(np.random.default_rng(draw.seed()))


@sampler
def SINGLE_STEP_INSTANCES(draw) -> dict:
    """Ridge instances of the single-step server-update claims (V0 (docs/papers/pgfl.md#single-step); built by
    :func:`build_instance`): S in [2, 5] with a connected graph (spanning tree plus drawn edges), Q in [1, 3], clients
    per server in [max(Q, 2), 5] (every group non-empty by construction), d in [1, 4], D_k in [2, 9], lambda in [1e-2,
    10^0.5] and rho/L_max in [0.05, 10] (log-uniform), gaussian data (the paper's); tau = 0 is the claims'."""
    S = draw.integers(2, 5)
    Q = draw.integers(1, 3)
    return {"seed": draw.seed(), "servers": S, "clients_per_server": draw.integers(max(Q, 2), 5), "clusters": Q,
            "d": draw.integers(1, 4), "lam": draw.log10_uniform(-2.0, 0.5), "samples": (2, 9), "data": "gaussian",
            "edges": drawn_edges(draw, S), "rho_factor": draw.log10_uniform(-1.3, 1.0)}


#: Values of the ``special`` tau sequences: exact 0 and 1, 1/2, a tiny weight and the largest double below 1.
SPECIAL_TAUS = (0.0, 1.0, 0.5, 1e-9, 1.0 - 2.0**-52)


@sampler
def TAU_SEQUENCES(draw, *, max_len: int = 300) -> np.ndarray:
    """Inter-cluster weights tau_1..tau_n in [0, 1], n in [1, max_len], of a drawn shape: arbitrary, constant,
    geometric (tau_0 beta^n), tiny (10^U(-15, 0)), near one (1 - 10^U(-15, 0)) or special (exact 0s and 1s, 1/2,
    1e-9, 1 - 2^-52)."""
    n = draw.integers(1, max_len)
    kind = draw.choice(("arbitrary", "constant", "geometric", "tiny", "near_one", "special"))
    if kind == "arbitrary":
        return np.array([draw.uniform(0.0, 1.0) for _ in range(n)])
    if kind == "constant":
        return np.full(n, draw.uniform(0.0, 1.0))
    if kind == "geometric":
        tau0 = draw.uniform(0.0, 1.0)
        return tau0 * draw.uniform(0.0, 1.0) ** np.arange(1, n + 1)
    if kind == "special":
        return np.array([draw.choice(SPECIAL_TAUS) for _ in range(n)])
    exponents = np.array([draw.uniform(-15.0, 0.0) for _ in range(n)])
    return 10.0**exponents if kind == "tiny" else 1.0 - 10.0**exponents
