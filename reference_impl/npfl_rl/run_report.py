"""One arm of NPFL-RL on generated instances, as ``fedcheck run npfl-rl`` and the Python API run it.

Thesis Chapter 6 (NPFL-RL, Algorithm 6) on the instance generator I0 (docs/papers/npfl_rl.md#instance-i0): the costs
of drawing the instances (:func:`graph_draw_cost`, :func:`labels_log_probability`), of a run at given sizes and which
size drives them (:func:`run_cost`, :func:`cost_driver`), the instances of the replicate seeds
(:func:`npfl_run_problems`) and the run's JSON document (:func:`npfl_run_document`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["MAX_DRAWS", "SIZE_DEFAULTS", "NPFLRunCosts", "cost_driver", "edges_upper", "generator_kwargs",
           "graph_draw_cost", "labels_log_probability", "npfl_run_costs", "npfl_run_document", "npfl_run_problems",
           "run_cost"]

#: Draws of the generator's graph tried until an admissible one (its own cap).
MAX_DRAWS = 10_000
#: The sizes that drive a run's cost and their defaults (K, d, D_max, iterations, runs, epochs).
SIZE_DEFAULTS = {"K": 30, "d": 60, "D_max": 35, "iterations": 300, "runs": 1, "epochs": 1}


def generator_kwargs(*, D_min: int, D_max: int, noise_min: float, noise_max: float, **rest) -> dict:
    """The keyword arguments of :func:`reference_impl.npfl_rl.data.synthetic_problem` from flat settings (``D_min``,
    ``D_max`` for ``D_range``; ``noise_min``, ``noise_max`` for ``noise_range``; ``rest`` as they are)."""
    return dict(rest, D_range=(D_min, D_max), noise_range=(noise_min, noise_max))


def edges_upper(K: int, mean_degree: float) -> int:
    """An upper value of the edges of G(K, p = mean_degree / (K - 1)): the mean plus six standard deviations."""
    pairs = K * (K - 1) // 2
    p = min(mean_degree / (K - 1), 1.0)
    return int(min(pairs, math.ceil(pairs * p + 6.0 * math.sqrt(pairs * p * (1.0 - p)))))


def run_cost(sizes: dict, mean_degree: float, policy: str):
    """:func:`reference_impl.npfl_rl.estimate_run_cost` at ``sizes`` (the keys of :data:`SIZE_DEFAULTS`), with the
    edges at :func:`edges_upper`."""
    from reference_impl.npfl_rl.cost import estimate_run_cost

    return estimate_run_cost(sizes["K"], sizes["d"], edges_upper(sizes["K"], mean_degree),
                             iterations=sizes["iterations"], runs=sizes["runs"], policy=policy,
                             epochs=sizes["epochs"], D_max=sizes["D_max"])


def cost_driver(sizes: dict, mean_degree: float, policy: str, measure: Callable) -> str:
    """The key of :data:`SIZE_DEFAULTS` whose value lifts ``measure`` (of :func:`run_cost`) furthest above its value
    at that size's default (``epochs`` only with a controller)."""
    full = measure(run_cost(sizes, mean_degree, policy))
    ratios = {}
    for key, default in SIZE_DEFAULTS.items():
        if key == "epochs" and policy == "fixed":
            continue
        at_default = dict(sizes, **{key: default})
        if key == "K":
            at_default["K"] = max(default, 2)
            degree = min(mean_degree, at_default["K"] - 1)
        else:
            degree = mean_degree
        ratios[key] = full / max(measure(run_cost(at_default, degree, policy)), 1.0)
    return max(ratios, key=ratios.get)


def labels_log_probability(K: int, Q: int) -> float:
    """An upper value of the log-probability that K uniform labels use all Q clusters (the union bound)."""
    return Q * math.log1p(-math.exp(min(K * math.log1p(-1.0 / Q), 0.0))) if Q > 1 else 0.0


def graph_draw_cost(K: int, mean_degree: float) -> tuple[float, float]:
    """``(work, memory)`` of one draw of the generator's graph G(K, p): one uniform per pair, the K x K mask and the
    pair indices up to ``PAIRS_SAMPLER_MAX_PAIRS`` pairs; beyond, only the edges (geometric gaps) and a search."""
    from reference_impl.npfl_rl.data import PAIRS_SAMPLER_MAX_PAIRS

    pairs = K * (K - 1) / 2.0
    edges = K * mean_degree / 2.0
    if pairs <= PAIRS_SAMPLER_MAX_PAIRS:
        return 10.0 * pairs + 20.0 * (K + edges), 2.5 * pairs + K * K / 8.0
    return 60.0 * (K + edges), 8.0 * (K + edges)


@dataclass(frozen=True, kw_only=True)
class NPFLRunCosts:
    """The costs of a run before anything is drawn (:func:`npfl_run_costs`): the log-probability that a draw's labels
    use every cluster, one graph draw's work and memory, the run's peak memory (elements) and work, the size of
    :data:`SIZE_DEFAULTS` that drives each (:func:`cost_driver`), and the Python-level steps."""

    log_labels: float
    draw_work: float
    draw_memory: float
    memory: float
    work: float
    memory_driver: str
    work_driver: str
    steps: float

    def __post_init__(self) -> None:
        if not (self.memory >= 0 and self.work >= 0 and self.steps >= 0):
            raise ValueError(f"memory, work and steps must be >= 0, got {self.memory}, {self.work}, {self.steps}")


def npfl_run_costs(*, K: int, Q: int, d: int, mean_degree: float, D_max: int, iterations: int, runs: int,
                   policy: str, epochs: int) -> NPFLRunCosts:
    """The costs of ``runs`` instances of the generator I0 and the arm's ``iterations`` (``epochs`` inner policy steps
    with a controller), by :func:`run_cost` (the edges at their mean plus six standard deviations)."""
    epochs = epochs if policy != "fixed" else 1
    sizes = {"K": K, "d": d, "D_max": D_max, "iterations": iterations, "runs": runs, "epochs": epochs}
    full = run_cost(sizes, mean_degree, policy)
    draw_work, draw_memory = graph_draw_cost(K, mean_degree)
    return NPFLRunCosts(log_labels=labels_log_probability(K, Q), draw_work=draw_work, draw_memory=draw_memory,
                        memory=float(full.peak_elements), work=full.work,
                        memory_driver=cost_driver(sizes, mean_degree, policy, lambda r: float(r.peak_elements)),
                        work_driver=cost_driver(sizes, mean_degree, policy, lambda r: r.work),
                        steps=float(iterations) * (1 + (epochs if policy != "fixed" else 0)))


def npfl_run_problems(instance: dict, seed: int, runs: int) -> list:
    """The instances of replicate seeds ``seed .. seed + runs - 1`` (:func:`reference_impl.npfl_rl.data.
    synthetic_problem` with ``instance`` as its keyword arguments, generator ``default_rng([seed + r, 0])``)."""
    import numpy as np

    from reference_impl.npfl_rl.data import synthetic_problem

    return [synthetic_problem(np.random.default_rng([seed + r, 0]), **instance)[0] for r in range(runs)]


def npfl_run_document(problems: list, config, iterations: int, rng, *, seed: int) -> dict:
    """Run the arm ``config`` on ``problems`` (run r: the instance of replicate seed ``seed + r``; the runs are
    vectorised) and return ``{"label", "iterations", "runs", "seed", "status", "test_mse_db": [N+1], "nmsd_db": [N+1],
    "test_mse_db_runs": [R][N+1], "tau": {"clients": [R][3], "D_k": [R][3], "trajectories": [R][3][N+1]},
    "tau_final": [R][K], "ill_posed_evaluations": [R], "config": {...}}``: the Test MSE (6.15) as printed
    (denominator ||w_q||) and with ||w_q||^2, averaged over the runs in the linear domain then in dB; the tau
    trajectories of the clients with the largest, median and smallest D_k; ``status`` "ok", "ill_posed" (some
    evaluation of P(a) was not positive definite: unprojected mode), "diverged" or "diverging" (finite, but the Test
    MSE keeps rising: :func:`reference_impl.divergence.diverging`, with ``"warning"`` saying so). ``"_summary"``
    holds what a summary shows besides: the replicate ``seeds``, the ``ill_posed`` evaluations and the final tau's
    ``tau_ends`` (min, median, max)."""
    from dataclasses import asdict

    import numpy as np

    from reference_impl.npfl_rl.admm import run_npfl

    result = run_npfl(problems, config, iterations, rng)
    with np.errstate(divide="ignore", invalid="ignore"):
        mse_db = 10.0 * np.log10(np.mean(result.test_mse, axis=0))
        nmsd_db = 10.0 * np.log10(np.mean(result.nmsd, axis=0))
        runs_db = 10.0 * np.log10(result.test_mse)
    tracked = [np.argsort(p.D, kind="stable")[[-1, p.K // 2, 0]] for p in problems]  # largest, median, smallest D_k
    finite = bool(result.finite.all()) and bool(np.all(np.isfinite(mse_db)))
    status = "diverged" if not finite else ("ill_posed" if int(result.ill_posed.sum()) else "ok")
    from reference_impl.divergence import diverging

    why = diverging(mse_db, db=True, name="the Test MSE") if finite else None
    if why is not None:
        status = "diverging"
    final = np.asarray(result.tau[:, -1], dtype=np.float64)
    summary = {"seeds": f"{seed}..{seed + len(problems) - 1}", "ill_posed": int(np.sum(result.ill_posed)),
               "tau_ends": [float(np.min(final)), float(np.median(final)), float(np.max(final))]}
    return {"label": config.label, "iterations": iterations, "runs": len(problems), "seed": seed, "status": status,
            **({"warning": why} if why is not None else {}),
            "test_mse_db": mse_db, "nmsd_db": nmsd_db, "test_mse_db_runs": runs_db,
            "tau": {"clients": [t.tolist() for t in tracked],
                    "D_k": [p.D[t].tolist() for p, t in zip(problems, tracked, strict=True)],
                    "trajectories": [result.tau[r][:, t].T for r, t in enumerate(tracked)]},
            "tau_final": result.tau[:, -1], "ill_posed_evaluations": result.ill_posed, "config": asdict(config),
            "_summary": summary}
