"""``fedcheck run gtv CONFIG.toml``: Algorithm 1 of the GTV paper (seed 002) on a user's configuration.

Sections (every field documented in ``fedcheck/examples/gtv.toml``):

* ``[graph]``: ``generator`` = ``"sbm"`` (sizes, p_in, p_out, weights), ``"chain"`` (n, eps), ``"dense"`` (N, k,
  n_inter, eps) or ``"edges"`` (edges, A, clusters); absent with ``data.source = "npz"`` (the file holds the graph);
* ``[data]``: ``source`` = ``"synthetic"`` (d, m, noise, rho, seed; data model (39)) or ``"npz"`` (path; arrays
  X, y, m, edges, A and optional clusters, see :data:`reference_impl.gtv.data.NPZ_KEYS`);
* ``[model]``: penalty (l2, l1, mocha, quad), loss (squared, logistic), lam, Q (for quad), gamma (logistic ridge);
* ``[algorithm]``: theta, iterations, tol, record_every.

``--json`` prints ``{"status", "n", "d", "edges", "penalty", "loss", "lam", "theta", "iterations", "converged",
"models", "objective": {"iterations", "values"}, "residual", "kkt": {"node", "edge"}, "clusters"}``; ``clusters``
(when the partition is known) holds the labels, the clustering errors delta^(i) (11), the per-cluster deviation
from the oracle w-bar^(c) and the spread, and for synthetic data the MSE (41). Non-finite numbers are null and
``status`` says why. A bad field exits with status 2 and one line naming ``section.field``.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from fedcheck._config import ConfigError, load_table
from fedcheck._config import reals as _reals
from fedcheck._config import scalar as _scalar

__all__ = ["GENERATORS", "add_run_parser", "load_gtv_config", "run_gtv"]

GENERATORS = ("sbm", "chain", "dense", "edges")
_SECTIONS = {
    "graph": {"generator", "sizes", "p_in", "p_out", "weights", "n", "eps", "N", "k", "n_inter", "edges", "A",
              "clusters"},
    "data": {"source", "path", "d", "m", "noise", "rho", "seed"},
    "model": {"penalty", "loss", "lam", "Q", "gamma"},
    "algorithm": {"theta", "iterations", "tol", "record_every"},
}


def _int_list(table, sec, name, default, allowed):
    v = table.get(sec, {}).get(name, default)
    if v is None:
        return None
    if not isinstance(v, list) or not v or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise ConfigError(f"{sec}.{name} must be {allowed}, got {v!r}")
    return v


def load_gtv_config(path, *, seed: int | None = None, iterations: int | None = None) -> dict:
    """Parse CONFIG.toml into ``{"instance", "w_true", "theta", "iterations", "tol", "record_every"}``."""
    import numpy as np

    from reference_impl.gtv.data import chain_instance, dense_clusters_instance, load_npz_instance, sbm_instance
    from theory.gtv import LOSSES, PENALTIES, GTVInstance

    path = Path(path)
    table = load_table(path, _SECTIONS)
    pos = dict(check=lambda v: v > 0, allowed="a real > 0")
    pos_int = dict(check=lambda v: v >= 1, allowed="an integer >= 1")
    penalty = _scalar(table, "model", "penalty", str, "l2", check=lambda v: v in PENALTIES,
                      allowed=" or ".join(repr(p) for p in PENALTIES))
    loss = _scalar(table, "model", "loss", str, "squared", check=lambda v: v in LOSSES,
                   allowed=" or ".join(repr(x) for x in LOSSES))
    lam = _scalar(table, "model", "lam", float, 1e-2, **pos)
    gamma = _scalar(table, "model", "gamma", float, 0.01 if loss == "logistic" else 0.0,
                    check=lambda v: v >= 0, allowed="a real >= 0")
    if loss == "squared" and gamma != 0:
        raise ConfigError(f"model.gamma must be 0 for the squared loss, got {gamma!r}")
    Q = _reals(table, "model", "Q", None, allowed="a d x d nested list of reals (symmetric PSD)")
    if (penalty == "quad") != (Q is not None):
        raise ConfigError("model.Q must be given exactly when model.penalty = 'quad'")
    theta = _scalar(table, "algorithm", "theta", float, 1.0, **pos)
    n_iter = _scalar(table, "algorithm", "iterations", int, 2000, **pos_int)
    n_iter = iterations if iterations is not None else n_iter
    tol = _scalar(table, "algorithm", "tol", float, 1e-10, check=lambda v: v >= 0, allowed="a real >= 0")
    record_every = _scalar(table, "algorithm", "record_every", int, 1, check=lambda v: v >= 0,
                           allowed="an integer >= 0")
    source = _scalar(table, "data", "source", str, "synthetic", check=lambda v: v in ("synthetic", "npz"),
                     allowed="'synthetic' or 'npz'")
    w_true = None
    if source == "npz":
        if "graph" in table:
            raise ConfigError("graph: the [graph] section needs data.source = 'synthetic' (the .npz holds the graph)")
        extra = set(table.get("data", {})) - {"source", "path"}
        if extra:
            raise ConfigError(f"data.{sorted(extra)[0]} needs data.source = 'synthetic'")
        data_path = _scalar(table, "data", "path", str, allowed="a path to a .npz file")
        if data_path is None:
            raise ConfigError("data.path must name the .npz file when data.source = 'npz'")
        resolved = Path(data_path) if Path(data_path).is_absolute() else path.parent / data_path
        try:
            inst = load_npz_instance(resolved, lam=lam, penalty=penalty, loss=loss, Q=Q, gamma=gamma)
        except ValueError as exc:
            raise ConfigError(f"data.path: {exc}") from None
    else:
        if "path" in table.get("data", {}):
            raise ConfigError("data.path needs data.source = 'npz'")
        data_seed = _scalar(table, "data", "seed", int, 0, check=lambda v: v >= 0, allowed="an integer >= 0")
        rng = np.random.default_rng(data_seed if seed is None else seed)
        d = _scalar(table, "data", "d", int, 10, **pos_int)
        m = _scalar(table, "data", "m", int, 10, **pos_int)
        noise = _scalar(table, "data", "noise", float, 1e-3, check=lambda v: v >= 0, allowed="a real >= 0")
        gen = _scalar(table, "graph", "generator", str, "sbm", check=lambda v: v in GENERATORS,
                      allowed=" or ".join(repr(g) for g in GENERATORS))
        allowed_fields = {"sbm": {"sizes", "p_in", "p_out", "weights"}, "chain": {"n", "eps"},
                          "dense": {"N", "k", "n_inter", "eps"}, "edges": {"edges", "A", "clusters"}}[gen]
        extra = set(table.get("graph", {})) - allowed_fields - {"generator"}
        if extra:
            raise ConfigError(f"graph.{sorted(extra)[0]} is not a field of graph.generator = {gen!r} "
                              f"(allowed: {', '.join(sorted(allowed_fields))})")
        if "rho" in table.get("data", {}) and gen != "chain":
            raise ConfigError("data.rho needs graph.generator = 'chain'")
        try:
            if gen == "sbm":
                sizes = _int_list(table, "graph", "sizes", [100, 100], "a list of cluster sizes >= 2")
                unit = dict(check=lambda v: 0 <= v <= 1, allowed="a real in [0, 1]")
                weights = _reals(table, "graph", "weights", None, allowed="a list [lo, hi] of reals, 0 < lo <= hi")
                if weights is not None and (weights.shape != (2,) or not 0 < weights[0] <= weights[1]):
                    raise ConfigError(f"graph.weights must be a list [lo, hi] of reals, 0 < lo <= hi, got "
                                      f"{weights.tolist()}")
                inst, w_true = sbm_instance(rng, sizes=tuple(sizes), p_in=_scalar(table, "graph", "p_in", float, 0.5, **unit),
                                            p_out=_scalar(table, "graph", "p_out", float, 0.01, **unit), d=d, m=m,
                                            noise=noise, lam=lam, penalty=penalty, Q=Q,
                                            weights=None if weights is None else tuple(weights))
            elif gen == "chain":
                inst, w_true = chain_instance(rng, n=_scalar(table, "graph", "n", int, 50, **pos_int),
                                              eps=_scalar(table, "graph", "eps", float, 0.1, check=lambda v: v >= 0,
                                                          allowed="a real >= 0"),
                                              d=d, m=m, noise=noise, lam=lam, penalty=penalty,
                                              rho=_scalar(table, "data", "rho", float, 1.0,
                                                          check=lambda v: 0 < v <= 1, allowed="a real in (0, 1]"))
            elif gen == "dense":
                inst, w_true = dense_clusters_instance(
                    rng, N=_scalar(table, "graph", "N", int, 20, **pos_int), k=_scalar(table, "graph", "k", int, 2, **pos_int),
                    d=d, m=m, noise=noise, n_inter=_scalar(table, "graph", "n_inter", int, 10, check=lambda v: v >= 0,
                                                           allowed="an integer >= 0"),
                    eps=_scalar(table, "graph", "eps", float, 0.1, **pos), lam=lam, penalty=penalty)
            else:
                edges = table.get("graph", {}).get("edges")
                if (not isinstance(edges, list) or not edges
                        or not all(isinstance(e, list) and len(e) == 2 and all(isinstance(x, int) for x in e) for e in edges)):
                    raise ConfigError(f"graph.edges must be a non-empty list of [i, j] node pairs, got {edges!r}")
                e = np.sort(np.array(edges), axis=1)
                n = int(e.max()) + 1
                A = _reals(table, "graph", "A", [1.0] * len(edges), allowed=f"a list of {len(edges)} weights > 0")
                if A.shape != (len(edges),) or np.any(A <= 0):
                    raise ConfigError(f"graph.A must be a list of {len(edges)} weights > 0, got {A.tolist()}")
                clusters = _int_list(table, "graph", "clusters", None, f"a list of {n} cluster labels 0..k-1")
                if clusters is None:
                    raise ConfigError("graph.clusters must be given with graph.generator = 'edges' and synthetic data "
                                      "(the data model draws one parameter per cluster)")
                if len(clusters) != n:
                    raise ConfigError(f"graph.clusters must be a list of {n} cluster labels 0..k-1, got {len(clusters)}")
                labels = np.array(clusters)
                w_bar = 0.5 * rng.integers(0, 2, size=(int(labels.max()) + 1, d))
                w_true = w_bar[labels]
                X = rng.normal(size=(n, m, d))
                y = np.einsum("nrj,nj->nr", X, w_true) + noise * rng.normal(size=(n, m))
                inst = GTVInstance(n=n, edges=e, A=A, X=X, y=y, m=np.full(n, m), lam=lam, penalty=penalty, Q=Q,
                                   clusters=labels)
        except ConfigError:
            raise
        except ValueError as exc:
            raise ConfigError(f"graph.{gen}: {exc}") from None
        if loss == "logistic":
            inst = inst.with_(loss="logistic", y=np.where(inst.y > 0, 1.0, -1.0) * inst.row_mask, gamma=gamma)
            w_true = None
    return {"instance": inst, "w_true": w_true, "theta": theta, "iterations": n_iter, "tol": tol,
            "record_every": record_every}


def add_run_parser(run_subparsers, int_at_least) -> None:
    """Add ``gtv`` to the sub-commands of ``fedcheck run``."""
    p = run_subparsers.add_parser("gtv", help="Algorithm 1 of GTV clustered FL (seed 002) from a TOML file")
    p.add_argument("config", type=Path, metavar="CONFIG.toml")
    p.add_argument("--iterations", type=int_at_least(1), default=None, metavar="N",
                   help="iteration cap R (default: [algorithm] iterations, else 2000)")
    p.add_argument("--seed", type=int_at_least(0), default=None, metavar="S",
                   help="seed of the synthetic graph and data (default: [data] seed, else 0)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(subparser=p, handler=run_gtv)


def _finite(x):
    return float(x) if math.isfinite(float(x)) else None


def run_gtv(args) -> int:
    """Run Algorithm 1 on the configured instance and print the models, curves and cluster diagnostics."""
    import numpy as np

    from reference_impl.gtv import mse, run_algorithm1
    from theory.gtv import cluster_constants, cluster_deviation

    parser = args.subparser
    try:
        setup = load_gtv_config(args.config, seed=args.seed, iterations=args.iterations)
    except ValueError as exc:
        parser.error(str(exc).replace("\n", " "))
    inst = setup["instance"]
    try:
        run = run_algorithm1(inst, theta=setup["theta"], max_iterations=setup["iterations"], tol=setup["tol"],
                             record_every=setup["record_every"])
    except ValueError as exc:
        parser.error(f"algorithm.theta: {exc}")
    node, edge = run.kkt(inst)
    clusters = None
    if inst.clusters is not None:
        clusters = {"labels": inst.clusters.tolist()}
        if inst.loss == "squared" and penalty_is_norm(inst):
            try:
                k = cluster_constants(inst)
                dev, spread = cluster_deviation(run.w, k)
                clusters.update({"clustering_error_delta": k.delta.tolist(), "deviation_from_oracle": dev.tolist(),
                                 "spread": spread.tolist(), "boundary": k.boundary.tolist(), "alpha": k.alpha.tolist()})
            except ValueError as exc:           # singular cluster features: no oracle
                clusters["oracle_status"] = str(exc)
        if setup["w_true"] is not None:
            clusters["mse"] = mse(run.w, setup["w_true"])
    values = [float(v) for v in run.objectives]
    finite_ok = all(math.isfinite(v) for v in values) and bool(np.all(np.isfinite(run.w)))
    status = ("converged" if run.converged else "iteration cap reached") if finite_ok else "non-finite values (null)"
    out = {"status": status, "n": inst.n, "d": inst.d, "edges": inst.n_edges, "penalty": inst.penalty,
           "loss": inst.loss, "lam": inst.lam, "theta": run.theta, "iterations": run.iterations,
           "converged": run.converged,
           "models": [[_finite(x) for x in row] for row in run.w],
           "objective": {"iterations": run.objective_iterations.tolist(), "values": [_finite(v) for v in values]},
           "residual": [_finite(r) for r in run.residuals], "kkt": {"node": _finite(node), "edge": _finite(edge)},
           "clusters": clusters}
    if args.json:
        sys.stdout.write(json.dumps(out, allow_nan=False) + "\n")
        return 0
    print(f"GTV Algorithm 1: n = {inst.n}, |E| = {inst.n_edges}, d = {inst.d}, penalty {inst.penalty}, loss {inst.loss}, "
          f"lam = {inst.lam:g}, theta = {run.theta:g}")
    print(f"{status} after {run.iterations} iterations; fixed-point residual {run.residuals[-1]:.3e}; "
          f"KKT residuals node {node:.3e}, edge {edge:.3e}")
    if values:
        print(f"objective (16): {values[-1]:.10g}")
    if clusters is not None and "mse" in clusters:
        print(f"MSE (41) against the generating parameters: {clusters['mse']:.4g}")
    if clusters is not None and "deviation_from_oracle" in clusters:
        print("per cluster: max deviation from the oracle " + ", ".join(f"{v:.3g}" for v in clusters["deviation_from_oracle"])
              + "; spread " + ", ".join(f"{v:.3g}" for v in clusters["spread"]))
    print("models and curves: use --json")
    return 0


def penalty_is_norm(inst) -> bool:
    return inst.penalty in ("l2", "l1")
