r"""Instances and gap records of PGFL Lemma 1 / Theorem III: sampled instances in
R3 (docs/papers/pgfl.md#instance-lemma1)'s ranges, the paper's first iteration, constructed Huber instances that attain
the bound, and the records shared by the three checks.

Gap records are computed once per (seed, profile) from the stream ``ctx.seed_sequence("pgfl.lemma1")`` and shared
by the three checks (Theorem III uses the gaps of Lemma 1, as the recipe says).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from reference_impl.pgfl.client import ClientSubproblem
from theory.pgfl.sensitivity import certified_logistic_sensitivity, check_feature_radius
from verify.executor import map_seeded
from verify.pgfl._neighbour_search import adversarial_neighbour_gap, solve_neighbour_pairs, sphere
from verify.records import CheckContext
from verify.sampling import sampler

__all__ = ["HUBER_ATTAINING_INSTANCES", "LAMS", "NEIGHBOURING_INSTANCES", "PROFILE", "RHOS", "STREAM",
           "attained_huber_instance", "attained_huber_record", "conditioning_sweep",
           "gap_record", "instance_record", "neighbour_gap_records", "neighbour_record", "paper_first_iteration_record",
           "problem_from_record", "sample_instance", "unit_rows"]


#: R3 (docs/papers/pgfl.md#instance-lemma1)'s penalties and regularisation weights.
RHOS = (0.1, 0.5, 1.0, 5.0)


LAMS = (0.0, 0.01)


PROFILE = {"ci": {"batches": 4, "per_batch": 3, "candidates": 48, "restarts": 2, "sup_points": 6},
            "thorough": {"batches": 16, "per_batch": 8, "candidates": 256, "restarts": 4, "sup_points": 14}}


STREAM = "pgfl.lemma1"


def problem_from_record(record: Mapping[str, Any]) -> ClientSubproblem:
    """The base instance (data set D_k, whose last sample is ``x_old``) of a gap record."""
    return ClientSubproblem(X=record["X"], y=record["y"], w_server=record["w_server"], phi_dual=record["phi_dual"],
                            rho=record["rho"], lam=record["lam"], n_server_clients=record["n_server_clients"],
                            loss=record["loss"], huber_threshold=record["huber_threshold"])


def unit_rows(draw, n_rows: int, dim: int) -> np.ndarray:
    """``n_rows`` unit vectors in R^dim from coordinates in [-1, 1] (a near-zero draw becomes e_1: constructed, not
    filtered)."""
    raw = np.array([[draw.uniform(-1.0, 1.0) for _ in range(dim)] for _ in range(n_rows)]).reshape(n_rows, dim)
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    raw[norms[:, 0] < 1e-6] = np.eye(dim)[0]   # below 1e-6 the direction is rounding noise: take e_1 instead
    return raw / np.linalg.norm(raw, axis=1, keepdims=True)


def _penalty(draw) -> float:
    """rho: one of R3 (docs/papers/pgfl.md#instance-lemma1)'s values or uniform in [0.05, 10]."""
    return float(draw.choice(RHOS)) if draw.choice((True, False)) else draw.uniform(0.05, 10.0)


@sampler
def NEIGHBOURING_INSTANCES(draw, *, losses=("logistic", "huber"), max_dim: int = 8, max_samples: int = 10) -> dict:
    r"""A client subproblem (4) and a replace-one neighbour satisfying Assumption 3
    (docs/papers/pgfl.md#instance-lemma1, widened).

    The loss from ``losses``, :math:`d \in [2, max\_dim]`, :math:`D_k \in [1, max\_samples]`, every feature (also the
    replacement) on the sphere of radius :math:`B = 10^{U(-0.5, 0.5)}`, logistic labels in {0, 1} or Huber responses
    in [-10, 10] with threshold :math:`\kappa = 10^{U(-0.5, 0.5)}`, :math:`w_{s,(q)} \in [-3, 3]^d`,
    :math:`\varphi_k \in [-1, 1]^d`, :math:`\rho` in R3 (docs/papers/pgfl.md#instance-lemma1)'s {0.1, 0.5, 1, 5} or
    [0.05, 10], :math:`\lambda` in {0, 0.01} or [0, 1], :math:`|\mathcal C_s| \in [1, 15]`. The last row of ``X`` is the
    sample replaced by (``x_new``, ``y_new``); the fields are those of :class:`ClientSubproblem` plus
    ``feature_radius``.
    """
    loss = draw.choice(tuple(losses))
    dim = draw.integers(2, max_dim)
    n = draw.integers(1, max_samples)
    radius = draw.log10_uniform(-0.5, 0.5)
    rows = unit_rows(draw, n + 1, dim) * radius
    if loss == "logistic":
        labels = [float(draw.integers(0, 1)) for _ in range(n + 1)]
    else:
        labels = [draw.uniform(-10.0, 10.0) for _ in range(n + 1)]
    return {"loss": loss, "feature_radius": radius, "X": rows[:n], "y": np.array(labels[:n]),
            "x_new": rows[n], "y_new": labels[n],
            "w_server": np.array([draw.uniform(-3.0, 3.0) for _ in range(dim)]),
            "phi_dual": np.array([draw.uniform(-1.0, 1.0) for _ in range(dim)]), "rho": _penalty(draw),
            "lam": float(draw.choice(LAMS)) if draw.choice((True, False)) else draw.uniform(0.0, 1.0),
            "n_server_clients": draw.integers(1, 15),
            "huber_threshold": draw.log10_uniform(-0.5, 0.5) if loss == "huber" else 1.0}


@sampler
def HUBER_ATTAINING_INSTANCES(draw, *, max_dim: int = 6, max_samples: int = 10, dim: int | None = None,
                              n_samples: int | None = None) -> dict:
    r"""Parameters of :func:`attained_huber_instance` (Huber, :math:`\lambda = 0`): unit feature directions (D, d),
    residual signs of the first D - 1 samples, :math:`w_{s,(q)} \in [-3, 3]^d`, :math:`\varphi_k \in [-1, 1]^d`,
    :math:`\rho` in R3 (docs/papers/pgfl.md#instance-lemma1)'s values or [0.05, 10], :math:`\kappa` and :math:`B` in
    :math:`[10^{-0.5}, 10^{0.5}]`,
    :math:`|\mathcal C_s| \in [1, 15]`; d in [1, max_dim] and D in [1, max_samples] unless given."""
    dim = draw.integers(1, max_dim) if dim is None else int(dim)
    n = draw.integers(1, max_samples) if n_samples is None else int(n_samples)
    return {"X": unit_rows(draw, n, dim), "signs": np.array([draw.choice((-1.0, 1.0)) for _ in range(n)]),
            "w_server": np.array([draw.uniform(-3.0, 3.0) for _ in range(dim)]),
            "phi_dual": np.array([draw.uniform(-1.0, 1.0) for _ in range(dim)]), "rho": _penalty(draw),
            "huber_threshold": draw.log10_uniform(-0.5, 0.5), "feature_radius": draw.log10_uniform(-0.5, 0.5),
            "n_server_clients": draw.integers(1, 15)}


def sample_instance(rng: np.random.Generator, loss: str) -> tuple[ClientSubproblem, float]:
    """One base instance of :data:`NEIGHBOURING_INSTANCES` with the given loss; returns (problem, feature radius B)."""
    params = NEIGHBOURING_INSTANCES.sample(rng, losses=(loss,))
    return problem_from_record(params), float(params["feature_radius"])


def gap_record(problem: ClientSubproblem, B: float, pair: Mapping[str, Any], kind: str) -> dict[str, Any]:
    X = np.array(problem.X)
    y = np.array(problem.y)
    X[-1], y[-1] = pair["x_old"], pair["y_old"]
    check_feature_radius(X, B, "X")
    check_feature_radius(pair["x_new"], B, "x_new")
    rec = {"kind": kind, "loss": problem.loss, "feature_radius": B, "X": X.tolist(), "y": y.tolist(),
           "w_server": problem.w_server.tolist(), "phi_dual": problem.phi_dual.tolist(), "rho": problem.rho,
           "lam": problem.lam, "n_server_clients": problem.n_server_clients,
           "huber_threshold": problem.huber_threshold, "n_samples": problem.n_samples, "dim": problem.dim,
           **{k: pair[k] for k in ("x_old", "y_old", "x_new", "y_new", "gap", "gap_error")}}
    if problem.loss == "logistic":
        rec["certified"] = certified_logistic_sensitivity(problem_from_record(rec), B)
    return rec


def gap_batch(rng: np.random.Generator, count: int, candidates: int, restarts: int) -> list[dict[str, Any]]:
    out = []
    for i in range(count):
        loss = ("logistic", "huber")[i % 2]
        problem, B = sample_instance(rng, loss)
        pair = adversarial_neighbour_gap(problem, B, rng, candidates=candidates, restarts=restarts)
        out.append(gap_record(problem, B, pair, "sampled"))
    return out


def paper_first_iteration_record(rng: np.random.Generator, *, candidates: int = 48,
                                 restarts: int = 2) -> dict[str, Any]:
    r"""The paper's first iteration: :math:`w_{s,(q)}^{(0)} = 0`, :math:`\varphi_k^{(0)} = 0`, logistic, :math:`B = 1`.

    :math:`D_k = 2` (OrganAMNIST: "each client having access to two data samples", seed
    003 line 484), :math:`d = 2`, :math:`\rho = 1` (not reported), :math:`\lambda = 0`,
    :math:`|\mathcal C_s| = 15` (seed 000 line 410); first sample :math:`x = (1, 0)`, :math:`y = 1`.
    """
    problem = ClientSubproblem(X=[[1.0, 0.0], [0.0, 1.0]], y=[1.0, 0.0], w_server=[0.0, 0.0], phi_dual=[0.0, 0.0],
                               rho=1.0, lam=0.0, n_server_clients=15)
    pair = adversarial_neighbour_gap(problem, 1.0, rng, candidates=candidates, restarts=restarts)
    return gap_record(problem, 1.0, pair, "paper_first_iteration")


def attained_huber_record(rng: np.random.Generator, n_samples: int, dim: int = 3) -> dict[str, Any]:
    """A gap record of :func:`attained_huber_instance` at a draw of :data:`HUBER_ATTAINING_INSTANCES`."""
    return attained_huber_instance(HUBER_ATTAINING_INSTANCES.sample(rng, dim=dim, n_samples=n_samples))


def attained_huber_instance(params: Mapping[str, Any]) -> dict[str, Any]:
    r"""A Huber instance with :math:`\lambda = 0` on which :math:`\lVert w - w'\rVert = 2\kappa B/(\rho D_k)` exactly.

    ``params``: unit feature directions ``X`` (D, d) (scaled to radius ``feature_radius``), ``signs``
    (D,) of the residuals of the first D - 1 samples, ``w_server``, ``phi_dual``, ``rho``,
    ``huber_threshold`` and ``n_server_clients``. Every residual is put in the linear region at both
    minimisers (margin :math:`m = 2\kappa B^2/(\rho D) + 1`), the replaced sample on opposite pieces with
    the same :math:`x`: then :math:`w = c - \frac{\kappa}{\rho D}(\sum_{i<D}s_i x_i + x_D)`,
    :math:`w' = c - \frac{\kappa}{\rho D}(\sum_{i<D}s_i x_i - x_D)` with :math:`c = w_{s,(q)} + \varphi_k/\rho`,
    and :math:`w - w' = -2\kappa x_D/(\rho D)` (docs/papers/pgfl.md#erratum-r-c). Returns the gap record
    of the solver on this pair.
    """
    B, kappa, rho = float(params["feature_radius"]), float(params["huber_threshold"]), float(params["rho"])
    X = sphere(np.asarray(params["X"], dtype=float), B)
    D = X.shape[0]
    signs = np.array(params["signs"], dtype=float)
    signs[-1] = 1.0
    w_server, phi = np.asarray(params["w_server"], dtype=float), np.asarray(params["phi_dual"], dtype=float)
    w = w_server + phi / rho - kappa / (rho * D) * (signs @ X)
    margin = 2.0 * kappa * B * B / (rho * D) + 1.0
    y = X @ w - signs * (kappa + margin)
    x_last = X[-1]
    y_new = float(x_last @ (w + 2.0 * kappa * x_last / (rho * D)) + kappa + margin)
    problem = ClientSubproblem(X=X, y=y, w_server=w_server, phi_dual=phi, rho=rho, lam=0.0,
                               n_server_clients=int(params["n_server_clients"]), loss="huber", huber_threshold=kappa)
    return neighbour_record(problem, B, x_last, float(y[-1]), x_last, y_new, kind="huber_attained")


def neighbour_record(problem: ClientSubproblem, feature_radius: float, x_old, y_old, x_new, y_new, *,
                     kind: str = "given") -> dict[str, Any]:
    """Gap record of one given neighbouring pair (``problem``'s last sample is replaced by both)."""
    gap, err, _, _ = solve_neighbour_pairs(problem, x_old, y_old, x_new, y_new)
    pair = {"x_old": np.asarray(x_old, dtype=float).tolist(), "y_old": float(y_old),
            "x_new": np.asarray(x_new, dtype=float).tolist(), "y_new": float(y_new),
            "gap": float(gap[0]), "gap_error": float(err[0])}
    return gap_record(problem, feature_radius, pair, kind)


def instance_record(params: Mapping[str, Any], *, kind: str = "given") -> dict[str, Any]:
    """Gap record of a base instance and its neighbour given as plain parameters.

    ``params`` holds the :class:`ClientSubproblem` fields (``X``, ``y``, ``w_server``, ``phi_dual``,
    ``rho``, ``lam``, ``n_server_clients``, ``loss``, ``huber_threshold``), ``feature_radius`` and the
    replacement ``x_new``, ``y_new`` of the last sample (the form of ``verify.strategies.pgfl_neighbouring_instances``).
    """
    problem = problem_from_record(params)
    return neighbour_record(problem, float(params["feature_radius"]), problem.X[-1], float(problem.y[-1]),
                            params["x_new"], float(params["y_new"]), kind=kind)


_CACHE: dict[tuple[int, str], tuple[dict[str, Any], ...]] = {}


def neighbour_gap_records(ctx: CheckContext) -> tuple[dict[str, Any], ...]:
    """All gap records of a run: sampled logistic/Huber instances, the paper's first iteration, attained Huber.

    Deterministic in ``(ctx.seed, ctx.profile)`` (the executor does not change the numbers), so the
    records are computed once per process and shared by the three checks.
    """
    key = (ctx.seed, ctx.profile)
    if key not in _CACHE:
        p = PROFILE[ctx.profile]
        seq = ctx.seed_sequence(STREAM)
        sampled_seq, fixed_seq = seq.spawn(2)
        batches = map_seeded(ctx.executor, gap_batch, sampled_seq, p["batches"],
                             (p["per_batch"], p["candidates"], p["restarts"]))
        rng = np.random.default_rng(fixed_seq)
        fixed = [paper_first_iteration_record(rng, candidates=p["candidates"], restarts=p["restarts"]),
                 *(attained_huber_record(rng, n) for n in (1, 1, 3, 10))]
        _CACHE[key] = tuple(r for batch in batches for r in batch) + tuple(fixed)
    return _CACHE[key]


def conditioning_sweep(rng: np.random.Generator, norms, *, candidates: int = 24, restarts: int = 1):
    r"""Worst ratio vs the size of the conditioning inputs (logistic, :math:`D_k = 1`, :math:`\lambda = 0`).

    :math:`d = 2`, :math:`B = \rho = 1`, :math:`w_{s,(q)} = (t, 0)`, :math:`\varphi_k = 0`.

    Returns the empirical and certified ratios for each :math:`t` in ``norms``: both tend to 1 as
    :math:`t \to \infty`, so :math:`2C_k/(\rho D_k)` is the supremum over conditioning inputs.
    """
    empirical, certified = [], []
    for t in norms:
        problem = ClientSubproblem(X=[[0.0, 1.0]], y=[0.0], w_server=[float(t), 0.0], phi_dual=[0.0, 0.0], rho=1.0,
                                   lam=0.0, n_server_clients=1)
        pair = adversarial_neighbour_gap(problem, 1.0, rng, candidates=candidates, restarts=restarts)
        empirical.append((pair["gap"] - pair["gap_error"]) / 2.0)
        certified.append(certified_logistic_sensitivity(problem, 1.0)["ratio"])
    return empirical, certified
