"""``fedcheck run zcdp-nfl CONFIG.toml``: run the reference zCDP-NFL (P2 Algorithm 1) on a user's configuration.

Sections (all optional; ``fedcheck/examples/zcdp_nfl.toml`` documents every field):

* ``[graph]``: ``source`` = ``"erdos_renyi"`` (connected G(K, m), m = round(K mean_degree / 2), resampled until
  connected), ``"generator"`` (a networkx generator named by ``generator`` with the parameters ``params``) or
  ``"edges"`` (an edge list ``edges = [[0, 1], ...]`` on nodes 0..K-1);
* ``[data]``: ``source`` = ``"synthetic"`` (spec zcdp_nfl.md 5 generator) or ``"npz"`` (arrays ``X`` (K, M, P) and
  ``y`` (K, M) in the file ``path``);
* ``[model]``: objective (elastic_net, lad, ridge), lam, lam1, lam2, clip;
* ``[algorithm]``: method (zcdp_nfl, or one of the baselines RECONSTRUCTED by spec 7: eps_delta_dp_nfl, zcdp_grad_nfl,
  p_admm), rho, step, eta0, mu (zcdp_grad_nfl), split (eps_delta_dp_nfl);
* ``[privacy]``: schedule (none, S1, S2), phi1, tau, sigma2_0, c1, delta;
* ``[simulation]``: iterations, runs, seed.

Prints the normalised error NE(n) against the CVXPY optimum and the accounted privacy (``--json``: strict JSON,
non-finite values as null with a status). A bad field exits with status 2 and one line naming ``section.field``.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

from fedcheck._config import ConfigError, load_table
from fedcheck._config import scalar as _scalar

__all__ = ["GENERATORS", "ZcdpNflSetup", "add_run_parser", "load_zcdp_nfl_config", "run_zcdp_nfl_command"]

_SECTIONS = {
    "graph": {"source", "K", "mean_degree", "generator", "params", "edges", "seed"},
    "data": {"source", "path", "P", "M", "noise_std", "heterogeneity", "zero_coordinates", "seed"},
    "model": {"objective", "lam", "lam1", "lam2", "clip"},
    "algorithm": {"method", "rho", "step", "eta0", "mu", "split"},
    "privacy": {"schedule", "phi1", "tau", "sigma2_0", "c1", "delta"},
    "simulation": {"iterations", "runs", "seed"},
}
#: networkx generators allowed in ``graph.generator`` (name -> whether it takes a ``seed``).
GENERATORS = {"random_regular_graph": True, "gnm_random_graph": True, "gnp_random_graph": True,
              "watts_strogatz_graph": True, "connected_watts_strogatz_graph": True, "barabasi_albert_graph": True,
              "random_geometric_graph": True, "cycle_graph": False, "path_graph": False, "complete_graph": False,
              "star_graph": False, "circulant_graph": False, "grid_2d_graph": False}


@dataclass(frozen=True)
class ZcdpNflSetup:
    """What a configuration describes."""

    problem: object
    config: object
    iterations: int
    runs: int
    seed: int
    graph_label: str
    method: str = "zcdp_nfl"
    mu: float | None = None
    split: str = "dynamic"


def _graph(table, K_data):
    import networkx as nx
    import numpy as np

    sec = "graph"
    source = _scalar(table, sec, "source", str, "erdos_renyi", check=lambda v: v in ("erdos_renyi", "generator", "edges"),
                     allowed="'erdos_renyi', 'generator' or 'edges'")
    seed = _scalar(table, sec, "seed", int, 0, check=lambda v: v >= 0, allowed="an integer >= 0")
    if source == "erdos_renyi":
        K = _scalar(table, sec, "K", int, 50 if K_data is None else K_data, check=lambda v: v >= 2,
                    allowed="an integer >= 2")
        deg = _scalar(table, sec, "mean_degree", float, 3.0, check=lambda v: v > 0, allowed="a real > 0")
        m = int(round(K * deg / 2.0))
        if not K - 1 <= m <= K * (K - 1) // 2:
            raise ConfigError(f"graph.mean_degree must give between K - 1 and K(K - 1)/2 edges for K = {K}, got {deg!r}")
        rng = np.random.default_rng(seed)
        for _ in range(1000):
            g = nx.gnm_random_graph(K, m, seed=int(rng.integers(2**32)))
            if nx.is_connected(g):
                return g, f"connected G({K}, {m}) (seed {seed})"
        raise ConfigError(f"graph.mean_degree = {deg!r}: no connected G({K}, {m}) in 1000 draws")
    if source == "edges":
        edges = table.get(sec, {}).get("edges")
        if (not isinstance(edges, list) or not edges or not all(
                isinstance(e, list) and len(e) == 2 and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                                                            for v in e) and e[0] != e[1] for e in edges)):
            raise ConfigError(f"graph.edges must be a non-empty list of [k, l] pairs of distinct integers >= 0, got {edges!r}")
        g = nx.Graph()
        g.add_edges_from(tuple(e) for e in edges)
        K = max(max(e) for e in edges) + 1
        g.add_nodes_from(range(K))
        label = f"edge list ({K} nodes, {g.number_of_edges()} edges)"
    else:
        name = _scalar(table, sec, "generator", str, check=lambda v: v in GENERATORS,
                       allowed="one of " + ", ".join(sorted(GENERATORS)))
        if name is None:
            raise ConfigError("graph.generator must name a networkx generator when graph.source = 'generator'")
        params = table.get(sec, {}).get("params", {})
        if not isinstance(params, dict):
            raise ConfigError(f"graph.params must be a table of generator parameters, got {params!r}")
        kwargs = dict(params)
        if GENERATORS[name]:
            kwargs["seed"] = seed
        try:
            g = getattr(nx, name)(**kwargs)
        except (TypeError, ValueError, nx.NetworkXError) as exc:
            raise ConfigError(f"graph.params for {name}: {exc}") from None
        g = nx.convert_node_labels_to_integers(g)
        label = f"networkx {name}({', '.join(f'{k}={v}' for k, v in params.items())})"
    if g.number_of_nodes() < 2 or not nx.is_connected(g):
        raise ConfigError(f"graph must be connected with at least 2 nodes, got {g.number_of_nodes()} nodes in "
                          f"{nx.number_connected_components(g) if g.number_of_nodes() else 0} components")
    return g, label


def load_zcdp_nfl_config(path, *, iterations: int | None = None, runs: int | None = None,
                         seed: int | None = None) -> ZcdpNflSetup:
    """Parse CONFIG.toml; ConfigError names the offending ``section.field``."""
    import networkx as nx
    import numpy as np

    from reference_impl.zcdp_nfl import (
        BASELINES,
        EPS_DELTA_SPLITS,
        NOISE_SCHEDULES,
        OBJECTIVES,
        STEP_KINDS,
        NFLConfig,
        NFLProblem,
        PrivacySchedule,
        StepSchedule,
        synthetic_problem,
    )

    table = load_table(Path(path), _SECTIONS)
    pos_int = dict(check=lambda v: v >= 1, allowed="an integer >= 1")
    nonneg = dict(check=lambda v: v >= 0, allowed="a real >= 0")
    positive = dict(check=lambda v: v > 0, allowed="a real > 0")
    objective = _scalar(table, "model", "objective", str, "lad", check=lambda v: v in OBJECTIVES,
                        allowed=" or ".join(repr(o) for o in OBJECTIVES))
    model = {"lam": _scalar(table, "model", "lam", float, 1.0, **nonneg),
             "lam1": _scalar(table, "model", "lam1", float, None, **nonneg),
             "lam2": _scalar(table, "model", "lam2", float, 1.0, **nonneg),
             "clip": _scalar(table, "model", "clip", float, None, **positive)}
    if model["clip"] is not None and objective == "lad":
        raise ConfigError("model.clip must be absent for objective 'lad' (its subgradients are bounded by ||x||)")
    source = _scalar(table, "data", "source", str, "synthetic", check=lambda v: v in ("synthetic", "npz"),
                     allowed="'synthetic' or 'npz'")
    X = y = None
    if source == "npz":
        data_path = _scalar(table, "data", "path", str, allowed="a path to a .npz file")
        if data_path is None:
            raise ConfigError("data.path must name the .npz file when data.source = 'npz'")
        resolved = Path(data_path) if Path(data_path).is_absolute() else Path(path).parent / data_path
        try:
            with np.load(resolved, allow_pickle=False) as f:
                X, y = np.asarray(f["X"], dtype=np.float64), np.asarray(f["y"], dtype=np.float64)
        except (OSError, KeyError, ValueError) as exc:
            raise ConfigError(f"data.path must name a readable .npz file with arrays X (K, M, P) and y (K, M), got "
                              f"{data_path!r} ({exc})") from None
        extra = set(table.get("data", {})) - {"source", "path"}
        if extra:
            raise ConfigError(f"data.{sorted(extra)[0]} needs data.source = 'synthetic'")
        if X.ndim != 3 or y.shape != X.shape[:2]:
            raise ConfigError(f"data.path: X must be (K, M, P) and y (K, M), got {X.shape} and {y.shape}")
    graph, label = _graph(table, None if X is None else X.shape[0])
    K = graph.number_of_nodes()
    if X is not None and X.shape[0] != K:
        raise ConfigError(f"data.path: X has {X.shape[0]} clients but the graph has K = {K} nodes")
    try:
        if X is None:
            problem = synthetic_problem(
                np.random.default_rng(_scalar(table, "data", "seed", int, 0, check=lambda v: v >= 0,
                                              allowed="an integer >= 0")),
                K=K, P=_scalar(table, "data", "P", int, 8, **pos_int), M=_scalar(table, "data", "M", int, 50, **pos_int),
                objective=objective, lam=model["lam"], lam2=model["lam2"],
                noise_std=_scalar(table, "data", "noise_std", float, 0.1, **nonneg),
                heterogeneity=_scalar(table, "data", "heterogeneity", float, 0.0, **nonneg),
                zero_coordinates=_scalar(table, "data", "zero_coordinates", int, 0, check=lambda v: v >= 0,
                                         allowed="an integer >= 0"),
                clip=model["clip"], graph=graph)
            if model["lam1"] is not None:
                problem = NFLProblem(adjacency=problem.adjacency, X=problem.X, y=problem.y, objective=objective,
                                     lam=model["lam"], lam1=model["lam1"], lam2=model["lam2"], clip=model["clip"])
        else:
            A = nx.to_numpy_array(graph, nodelist=range(K), dtype=np.int64)
            problem = NFLProblem(adjacency=A, X=X, y=y, objective=objective, **model)
    except ValueError as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"data.{exc}") from None
    step = _scalar(table, "algorithm", "step", str, "constant", check=lambda v: v in STEP_KINDS,
                   allowed=" or ".join(repr(s) for s in STEP_KINDS))
    schedule = _scalar(table, "privacy", "schedule", str, "S2", check=lambda v: v in NOISE_SCHEDULES,
                       allowed=" or ".join(repr(s) for s in NOISE_SCHEDULES))
    unit = dict(check=lambda v: 0 < v <= 1, allowed="a real in (0, 1]")
    try:
        privacy = PrivacySchedule(kind=schedule, phi1=_scalar(table, "privacy", "phi1", float, 1e-3, **positive),
                                  tau=_scalar(table, "privacy", "tau", float, 0.99, **unit),
                                  sigma2_0=_scalar(table, "privacy", "sigma2_0", float,
                                                   0.01 if schedule == "S1" else 0.0, **nonneg),
                                  c1=_scalar(table, "privacy", "c1", float, 1.0, **positive),
                                  delta=_scalar(table, "privacy", "delta", float, 1e-5,
                                                check=lambda v: 0 < v < 1, allowed="a real in (0, 1)"))
    except ValueError as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"privacy.{exc}") from None
    config = NFLConfig(rho=_scalar(table, "algorithm", "rho", float, 1.0, **positive),
                       step=StepSchedule(kind=step, eta0=_scalar(table, "algorithm", "eta0", float, 0.5, **positive)),
                       privacy=privacy)
    methods = ("zcdp_nfl", *BASELINES)
    method = _scalar(table, "algorithm", "method", str, "zcdp_nfl", check=lambda v: v in methods,
                     allowed=" or ".join(repr(m) for m in methods))
    mu = _scalar(table, "algorithm", "mu", float, None, **positive)
    split = _scalar(table, "algorithm", "split", str, "dynamic", check=lambda v: v in EPS_DELTA_SPLITS,
                    allowed=" or ".join(repr(s) for s in EPS_DELTA_SPLITS))
    if mu is not None and method != "zcdp_grad_nfl":
        raise ConfigError(f"algorithm.mu is the step of zcdp_grad_nfl only, got method {method!r}")
    if "split" in table.get("algorithm", {}) and method != "eps_delta_dp_nfl":
        raise ConfigError(f"algorithm.split is the budget split of eps_delta_dp_nfl only, got method {method!r}")
    if method == "eps_delta_dp_nfl" and privacy.kind == "none":
        raise ConfigError("algorithm.method 'eps_delta_dp_nfl' is matched to zCDP-NFL's accounted (epsilon, delta): "
                          "privacy.schedule must be 'S1' or 'S2'")
    n_iter = iterations or _scalar(table, "simulation", "iterations", int, 200, **pos_int)
    n_runs = runs or _scalar(table, "simulation", "runs", int, 1, **pos_int)
    root = seed if seed is not None else _scalar(table, "simulation", "seed", int, 0, check=lambda v: v >= 0,
                                                 allowed="an integer >= 0")
    return ZcdpNflSetup(problem=problem, config=config, iterations=n_iter, runs=n_runs, seed=root, graph_label=label,
                        method=method, mu=mu, split=split)


def add_run_parser(run_subparsers, int_at_least) -> None:
    """Add ``zcdp-nfl`` to the sub-commands of ``fedcheck run``."""
    p = run_subparsers.add_parser("zcdp-nfl", help="zCDP-NFL (P2 Algorithm 1) on a graph and data from a TOML file")
    p.add_argument("config", type=Path, metavar="CONFIG.toml")
    p.add_argument("--iterations", type=int_at_least(1), default=None, metavar="N",
                   help="iterations (default: [simulation] iterations, else 200)")
    p.add_argument("--runs", type=int_at_least(1), default=None, metavar="R",
                   help="Monte-Carlo runs (default: [simulation] runs, else 1)")
    p.add_argument("--seed", type=int_at_least(0), default=None, metavar="S",
                   help="noise seed (default: [simulation] seed, else 0)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(subparser=p, handler=run_zcdp_nfl_command)


def _finite(x):
    x = float(x)
    return x if math.isfinite(x) else None


def run_zcdp_nfl_command(args) -> int:
    """Run the configured simulation; print NE(n) and the accounted privacy (exit status 0)."""
    import numpy as np

    from reference_impl.zcdp_nfl import centralized_optimum

    parser = args.subparser
    try:
        setup = load_zcdp_nfl_config(args.config, iterations=args.iterations, runs=args.runs, seed=args.seed)
    except ValueError as exc:
        parser.error(str(exc).replace("\n", " "))
    problem, config = setup.problem, setup.config
    truth = centralized_optimum(problem)
    try:
        run, extra = _run_method(setup, truth.w_c)
    except ValueError as exc:  # (eps, delta) budget outside the classical Gaussian mechanism's range
        parser.error(f"privacy.phi1: {exc}")
    with np.errstate(invalid="ignore"):
        curve = np.mean(run.ne, axis=0)
    noisy = config.privacy.kind != "none"
    status = "diverged" if run.diverged else "ok"
    privacy = {"schedule": config.privacy.kind, "c1": config.privacy.c1 if noisy else None,
               "certified": run.privacy_certified, "delta": config.privacy.delta if noisy else None,
               "total_zcdp": _finite(run.total_zcdp) if noisy else None,
               "epsilon": _finite(run.epsilon) if noisy else None,
               "status": ("accounted" if noisy else "no noise: no privacy guarantee")
               + ("" if run.privacy_certified or not noisy else
                  "; not certified: c1 does not bound the per-sample gradients (set model.clip <= privacy.c1)")}
    if setup.method != "zcdp_nfl":
        privacy["status"] += f"; {setup.method} is a RECONSTRUCTION (spec 7), not the paper's baseline"
    if args.json:
        out = {"algorithm": "zcdp-nfl" if setup.method == "zcdp_nfl" else setup.method, **extra, "objective": problem.objective, "graph": setup.graph_label, "K": problem.K,
               "P": problem.P, "M": problem.M, "edges": problem.n_edges, "iterations": setup.iterations,
               "runs": setup.runs, "seed": setup.seed, "rho": config.rho,
               "step": {"kind": config.step.kind, "eta0": config.step.eta0},
               "status": status, "ne_curve": [_finite(v) for v in curve], "ne_final": _finite(curve[-1]),
               "privacy": privacy,
               "ground_truth": {"F_star": truth.F_star, "certificate": truth.certificate, "residual": truth.residual}}
        sys.stdout.write(json.dumps(out, allow_nan=False) + "\n")
        return 0
    name = "zCDP-NFL" if setup.method == "zcdp_nfl" else f"{setup.method} (reconstruction, spec 7)"
    extra_text = "".join(f", {k} = {v}" for k, v in extra.items() if k != "reconstruction")
    print(f"{name} ({problem.objective}) on {setup.graph_label}: K = {problem.K}, P = {problem.P}, M = {problem.M}, "
          f"rho = {config.rho:g}, step {config.step.kind} eta0 = {config.step.eta0:g}, {setup.iterations} iterations, "
          f"{setup.runs} run(s), seed {setup.seed}{extra_text}")
    print(f"ground truth (CVXPY/Clarabel): F* = {truth.F_star:.6g}; {truth.certificate} = {truth.residual:.2e}")
    if run.diverged:
        print("the run diverged (an iterate exceeded 1e150); NE after divergence is not defined")
    else:
        print(f"NE(0) = {curve[0]:.4g}; NE({setup.iterations}) = {curve[-1]:.4g} (mean over runs)")
    if noisy and setup.method == "eps_delta_dp_nfl":
        print(f"privacy: (epsilon, delta) = ({run.epsilon:.6g}, {config.privacy.delta:g}) by basic composition of "
              f"per-round classical Gaussian mechanisms ({setup.split} split), matched to zCDP-NFL's accounted value "
              f"under privacy.schedule {config.privacy.kind}; {privacy['status']}")
    elif noisy:
        print(f"privacy ({config.privacy.kind}): total zCDP max_k sum_n phi_k = {run.total_zcdp:.6g}, "
              f"(epsilon, delta) = ({run.epsilon:.6g}, {config.privacy.delta:g}) by Bun-Steinke; {privacy['status']}")
    else:
        print("privacy: none (no noise)")
    print("error curve: use --json for all values")
    return 0


def _run_method(setup: ZcdpNflSetup, w_c):
    """Run the configured method; returns (run, extra JSON fields). Every run exposes ne, diverged, total_zcdp,
    epsilon and privacy_certified (the baselines' runs are wrapped)."""
    import numpy as np

    from reference_impl.zcdp_nfl import (
        EpsDeltaBudget,
        accounted_privacy,
        matched_gradient_step,
        run_eps_delta_dp_nfl,
        run_p_admm,
        run_zcdp_grad_nfl,
        run_zcdp_nfl,
    )

    problem, config, T = setup.problem, setup.config, setup.iterations
    rng = np.random.default_rng(setup.seed)
    if setup.method == "zcdp_nfl":
        return run_zcdp_nfl(problem, config, T, rng, runs=setup.runs, w_c=w_c), {}
    if setup.method == "p_admm":
        run = run_p_admm(problem, config, T, rng, runs=setup.runs, w_c=w_c)
        return run, {"reconstruction": True, "constant_eta": config.step.eta0}
    noisy = config.privacy.kind != "none"
    bound = problem.gradient_bound
    # as run_zcdp_nfl: rows normalised to ||x|| = 1 carry a few ulps of rounding, allow 8 eps relative
    certified = bool(noisy and bound is not None and bound <= config.privacy.c1 * (1.0 + 8.0 * np.finfo(float).eps))
    if setup.method == "eps_delta_dp_nfl":
        epsilon = accounted_privacy(problem, config, T)[1]
        budget = EpsDeltaBudget(epsilon=epsilon, delta=config.privacy.delta, split=setup.split, tau=config.privacy.tau,
                                c1=config.privacy.c1)
        base = run_eps_delta_dp_nfl(problem, config.rho, config.step, budget, T, rng, runs=setup.runs, w_c=w_c)
        extra = {"reconstruction": True, "split": setup.split, "composition": "basic (sum of per-round epsilon, delta)"}
    else:
        mu = setup.mu if setup.mu is not None else matched_gradient_step(problem, config, w_c)
        base = run_zcdp_grad_nfl(problem, mu, config.privacy, T, rng, runs=setup.runs, w_c=w_c)
        extra = {"reconstruction": True, "mu": mu, "mu_matched": setup.mu is None}
    run = _BaselineView(ne=base.ne, diverged=base.diverged,
                        total_zcdp=math.inf if base.total_zcdp is None else base.total_zcdp,
                        epsilon=base.epsilon, privacy_certified=certified)
    return run, extra


@dataclass(frozen=True)
class _BaselineView:
    """The fields of a run the output reads (a baseline's run has no zCDP total under basic composition: inf)."""

    ne: object
    diverged: bool
    total_zcdp: float
    epsilon: float
    privacy_certified: bool
