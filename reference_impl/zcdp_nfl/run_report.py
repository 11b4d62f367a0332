"""One zCDP-NFL run (or a reconstructed baseline) from checked settings, as ``fedcheck run zcdp-nfl`` and the Python
API run it (thesis Chapter 3 / Publication 2, Algorithm 1; docs/papers/zcdp_nfl.md).

The network (:func:`zcdp_graph`), the problem on it (:func:`synthetic_zcdp_problem`, :func:`arrays_zcdp_problem`),
the configuration (:func:`privacy_schedule`, :func:`nfl_config`), where a privacy schedule leaves the double range
(:func:`privacy_overflow_iteration`, :func:`accounting_overflow`) and the run's JSON document
(:func:`zcdp_run_document`). Bad settings raise ``ValueError`` naming this module's argument.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["BudgetError", "accounting_overflow", "zcdp_run_costs", "arrays_zcdp_problem", "model_kwargs", "nfl_config",
           "privacy_overflow_iteration", "privacy_schedule", "synthetic_zcdp_problem", "zcdp_graph",
           "zcdp_run_document"]

#: Smallest normal double: S1's noise variance sigma2_0 tau^n must stay above it.
_TINY = 2.2250738585072014e-308


class BudgetError(ValueError):
    """The (epsilon, delta) budget matched to zCDP-NFL's accounted privacy is not valid for the eps_delta_dp_nfl
    baseline (its message is the budget's)."""


def zcdp_graph(source: str, *, K: int, mean_degree: float | None = None, seed: int | None = None, edges=None,
               generator: str | None = None, params: dict | None = None, seeded: bool = False):
    """``(graph, label)``: a connected networkx graph on nodes 0..K-1 and its description.

    ``source`` 'erdos_renyi': G(K, m = round(K mean_degree / 2)) redrawn (at most 1000 times) until connected, the
    draws seeded from ``seed``; 'edges': the edge list ``edges``; 'generator': ``networkx.<generator>(**params)``
    (with ``seed`` when ``seeded``). ValueError names ``mean_degree``, ``params`` or ``graph`` (not connected).
    """
    import networkx as nx
    import numpy as np

    if source == "erdos_renyi":
        m = int(round(K * mean_degree / 2.0))
        rng = np.random.default_rng(seed)
        for _ in range(1000):
            g = nx.gnm_random_graph(K, m, seed=int(rng.integers(2**32)))
            if nx.is_connected(g):
                return g, f"connected G({K}, {m}) (seed {seed})"
        raise ValueError(f"mean_degree = {mean_degree!r}: no connected G({K}, {m}) in 1000 draws")
    if source == "edges":
        g = nx.Graph()
        g.add_edges_from(edges)
        g.add_nodes_from(range(max(max(e) for e in edges) + 1))
        label = f"edge list ({K} nodes, {g.number_of_edges()} edges)"
    else:
        kwargs = dict(params, **({"seed": seed} if seeded else {}))
        try:
            g = getattr(nx, generator)(**kwargs)
        except (TypeError, ValueError, nx.NetworkXError) as exc:
            raise ValueError(f"params for {generator}: {' '.join(str(exc).split())}") from None
        g = nx.convert_node_labels_to_integers(g)
        label = f"networkx {generator}({', '.join(f'{k}={x}' for k, x in params.items())})"
    if g.number_of_nodes() < 2 or not nx.is_connected(g):
        raise ValueError(f"graph must be connected with at least 2 nodes, got {g.number_of_nodes()} nodes in "
                         f"{nx.number_connected_components(g) if g.number_of_nodes() else 0} components")
    return g, label


def model_kwargs(*, objective: str, lam: float | None, lam1: float | None, lam2: float | None,
                 clip: float | None) -> dict:
    """The objective's keyword arguments of :class:`reference_impl.zcdp_nfl.NFLProblem` (``lam``, ``lam2`` default
    1; ``lam1`` None: the default 0.001 ||X^T y||_inf)."""
    return dict(objective=objective, lam=lam if lam is not None else 1.0, lam1=lam1,
                lam2=lam2 if lam2 is not None else 1.0, clip=clip)


def synthetic_zcdp_problem(graph, model: dict, *, seed: int, P: int, M: int, noise_std: float,
                           heterogeneity: float, zero_coordinates: int):
    """The problem of :func:`reference_impl.zcdp_nfl.synthetic_problem` on ``graph`` (data seeded from ``seed``)
    with the objective ``model`` (:func:`model_kwargs`)."""
    import numpy as np

    from reference_impl.zcdp_nfl.problem import NFLProblem, synthetic_problem

    problem = synthetic_problem(
        np.random.default_rng(seed), K=graph.number_of_nodes(), P=P, M=M, objective=model["objective"],
        lam=model["lam"], lam2=model["lam2"], noise_std=noise_std, heterogeneity=heterogeneity,
        zero_coordinates=zero_coordinates, clip=model["clip"], graph=graph)
    if model["lam1"] is not None:
        problem = NFLProblem(adjacency=problem.adjacency, X=problem.X, y=problem.y, **model)
    return problem


def arrays_zcdp_problem(graph, X, y, model: dict):
    """The problem of a user's data ``X`` (K, M, P) and ``y`` (K, M) on ``graph``; the adjacency stays sparse (CSR):
    memory linear in the edges, never K x K."""
    import networkx as nx
    import numpy as np

    from reference_impl.zcdp_nfl.problem import NFLProblem

    A = nx.to_scipy_sparse_array(graph, nodelist=range(X.shape[0]), dtype=np.int64, format="csr")
    return NFLProblem(adjacency=A, X=X, y=y, **model)


def privacy_schedule(*, kind: str, phi1=None, tau=None, c1=None, delta=None, sigma2_0=None):
    """The :class:`reference_impl.zcdp_nfl.PrivacySchedule` of the settings given (None: its default)."""
    from reference_impl.zcdp_nfl.schedules import PrivacySchedule

    given = {k: x for k, x in (("phi1", phi1), ("tau", tau), ("c1", c1), ("delta", delta)) if x is not None}
    return PrivacySchedule(kind=kind, **given, sigma2_0=sigma2_0 if kind == "S1" else 0.0)


def nfl_config(privacy, *, rho: float | None, step: str | None, eta0: float | None):
    """The :class:`reference_impl.zcdp_nfl.NFLConfig` (defaults rho = 1, a constant step eta0 = 0.5)."""
    from reference_impl.zcdp_nfl.schedules import NFLConfig, StepSchedule

    return NFLConfig(rho=rho if rho is not None else 1.0, privacy=privacy,
                     step=StepSchedule(kind=step or "constant", eta0=eta0 if eta0 is not None else 0.5))


def privacy_overflow_iteration(kind: str, tau: float | None, *, sigma2_0: float | None = None,
                               phi1: float | None = None) -> float | None:
    """The iteration from which schedule ``kind`` has no finite privacy (None: never): S1's variance sigma2_0 tau^n
    underflows below the smallest normal double, S2's per-round budget phi1 tau^-(n-1) exceeds 1e300."""
    if kind == "none" or tau == 1.0:
        return None
    if kind == "S1":
        return (math.log(_TINY) - math.log(sigma2_0)) / math.log(tau)
    return 1 + (math.log(1e300) - math.log(phi1)) / -math.log(tau)


def accounting_overflow(problem, config, iterations: int) -> str | None:
    """Which closed form of the accounting is not finite over ``iterations``: "sensitivity" (Delta of Lemma I),
    "total" (the accounted total zCDP max_k sum_n phi_k(n)) or None."""
    import numpy as np

    if config.privacy.kind == "none":
        return None
    etas = config.step.etas(iterations)
    if not np.all(np.isfinite(config.privacy.sensitivities(problem, config.rho, etas))):
        return "sensitivity"
    total = float(np.max(config.privacy.budgets(problem, config.rho, etas).sum(axis=0)))
    return None if math.isfinite(total) else "total"


def zcdp_run_costs(K: int, M: int, P: int, n_edges: int, *, iterations: int, runs: int, clip: bool) -> dict:
    """The costs of a run before anything is drawn: ``one`` and ``full`` (:func:`reference_impl.zcdp_nfl.
    estimate_run_cost` of one iteration and run, and of the whole run), the data ``K M P``, the CVXPY ground truth's
    ``truth_memory`` and ``truth_work``, and ``runs_dominate``: whether the states that grow with the runs (16 K P +
    4 K M per run, and the clipped gradients) outweigh the schedules that grow with the iterations (8 T K)."""
    from reference_impl.zcdp_nfl.algorithm import estimate_run_cost

    data = float(K) * M * P
    per_run = 16.0 * K * P + 4.0 * K * M + (2.0 * K * M * P if clip else 0.0)
    return {"one": estimate_run_cost(K, M, P, n_edges, iterations=1, runs=1, clip=clip),
            "full": estimate_run_cost(K, M, P, n_edges, iterations=iterations, runs=runs, clip=clip),
            "data": data, "truth_memory": 20 * data, "truth_work": 200.0 * K * M * (P + 1) ** 2,
            "runs_dominate": runs * per_run >= 8.0 * iterations * K}


@dataclass(frozen=True)
class _BaselineView:
    """The fields of a run the document reads (a baseline's run has no zCDP total under basic composition: inf)."""

    ne: object
    diverged: bool
    total_zcdp: float
    epsilon: float
    privacy_certified: bool


def _run_method(method: str, problem, config, w_c, iterations: int, rng, *, runs: int, split: str | None,
                mu: float | None, composition: str = "basic"):
    """Run the method: (run, extra JSON fields)."""
    import numpy as np

    from reference_impl.zcdp_nfl.algorithm import run_zcdp_nfl
    from reference_impl.zcdp_nfl.baselines import (
        EpsDeltaBudget,
        accounted_privacy,
        matched_gradient_step,
        run_eps_delta_dp_nfl,
        run_p_admm,
        run_zcdp_grad_nfl,
    )

    T = iterations
    if method == "zcdp_nfl":
        return run_zcdp_nfl(problem, config, T, rng, runs=runs, w_c=w_c), {}
    if method == "p_admm":
        return run_p_admm(problem, config, T, rng, runs=runs, w_c=w_c), {"reconstruction": True,
                                                                          "constant_eta": config.step.eta0}
    noisy = config.privacy.kind != "none"
    bound = problem.gradient_bound
    # as run_zcdp_nfl: rows normalised to ||x|| = 1 carry a few ulps of rounding, allow 8 eps relative
    certified = bool(noisy and bound is not None and bound <= config.privacy.c1 * (1.0 + 8.0 * np.finfo(float).eps))
    if method == "eps_delta_dp_nfl":
        epsilon = accounted_privacy(problem, config, T)[1]
        try:  # the budget is zCDP-NFL's accounted epsilon, set by phi1 (and tau, the iterations)
            budget = EpsDeltaBudget(epsilon=epsilon, delta=config.privacy.delta, split=split,
                                    composition=composition, tau=config.privacy.tau, c1=config.privacy.c1)
            base = run_eps_delta_dp_nfl(problem, config.rho, config.step, budget, T, rng, runs=runs, w_c=w_c)
        except ValueError as exc:
            raise BudgetError(str(exc)) from exc
        extra = {"reconstruction": False, "split": split, "composition": composition}
    else:
        mu_run = mu if mu is not None else matched_gradient_step(problem, config, w_c)
        base = run_zcdp_grad_nfl(problem, mu_run, config.privacy, T, rng, runs=runs, w_c=w_c)
        extra = {"reconstruction": True, "mu": mu_run, "mu_matched": mu is None}
    return _BaselineView(ne=base.ne, diverged=base.diverged,
                         total_zcdp=math.inf if base.total_zcdp is None else base.total_zcdp,
                         epsilon=base.epsilon, privacy_certified=certified), extra


def zcdp_run_document(problem, config, truth, method: str, iterations: int, rng, *, runs: int, seed: int,
                      label: str, split: str | None = None, mu: float | None = None,
                      composition: str = "basic") -> dict:
    """Run ``method`` ('zcdp_nfl' or a reconstructed baseline: 'eps_delta_dp_nfl', 'zcdp_grad_nfl', 'p_admm') against
    the CVXPY optimum ``truth`` and return ``{"algorithm", "objective", "graph", "K", "P", "M", "edges", "iterations",
    "runs", "seed", "rho", "step": {"kind", "eta0"}, "status", "ne_curve", "ne_final", "privacy": {"schedule", "c1",
    "certified", "delta", "total_zcdp", "epsilon", "status"}, "ground_truth": {"F_star", "certificate",
    "residual"}}`` (baselines add their own keys; ``"_summary"``: the method's ``name`` and the composition ``rule``
    of its epsilon, for a summary); NE(n) is the normalised error, mean over runs. ``split``: the
    eps_delta_dp_nfl budget split and ``composition`` its composition theorem ('basic' or 'advanced');
    ``mu``: zcdp_grad_nfl's step (None: matched). BudgetError when the matched
    (epsilon, delta) budget is not valid."""
    import numpy as np

    run_, extra = _run_method(method, problem, config, truth.w_c, iterations, rng, runs=runs, split=split, mu=mu,
                              composition=composition)
    curve = np.mean(run_.ne, axis=0)
    noisy = config.privacy.kind != "none"
    privacy = {"schedule": config.privacy.kind, "c1": config.privacy.c1 if noisy else None,
               "certified": run_.privacy_certified, "delta": config.privacy.delta if noisy else None,
               "total_zcdp": run_.total_zcdp if noisy else None,
               "epsilon": run_.epsilon if noisy else None,
               "status": ("accounted" if noisy else "no noise: no privacy guarantee")
               + ("" if run_.privacy_certified or not noisy else
                  "; not certified: c1 does not bound the per-sample gradients (set model.clip <= privacy.c1)")}
    if method in ("zcdp_grad_nfl", "p_admm"):
        privacy["status"] += f"; {method} is a RECONSTRUCTION (the paper gives no rule), not the paper's baseline"
    name = {"zcdp_nfl": "zCDP-NFL", "eps_delta_dp_nfl": "(eps,delta)DP-NFL"}.get(method, f"{method} (reconstruction)")
    rules = {"basic": "basic composition", "advanced": "advanced composition", "moments": "moments accountant"}
    summary = {"name": name, "rule": rules[composition] if method == "eps_delta_dp_nfl" else "Bun-Steinke"}
    from reference_impl.divergence import diverging

    why = None if run_.diverged else diverging(curve, db=False, name="the normalized error NE")
    status = "diverged" if run_.diverged else ("diverging" if why is not None else "ok")
    return {"algorithm": "zcdp-nfl" if method == "zcdp_nfl" else method, **extra, "objective": problem.objective,
            "graph": label, "K": problem.K, "P": problem.P, "M": problem.M, "edges": problem.n_edges,
            "iterations": iterations, "runs": runs, "seed": seed, "rho": config.rho,
            "step": {"kind": config.step.kind, "eta0": config.step.eta0},
            "status": status, **({"warning": why} if why is not None else {}), "ne_curve": [float(x) for x in curve],
            "ne_final": float(curve[-1]), "privacy": privacy,
            "ground_truth": {"F_star": truth.F_star, "certificate": truth.certificate, "residual": truth.residual},
            "_summary": summary}
