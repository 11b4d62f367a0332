"""``fedcheck run pgfl CONFIG.toml``: run the reference PGFL on a user's configuration."""

from __future__ import annotations

import sys
from pathlib import Path

from fedcheck._config import ConfigError, load_table
from fedcheck._config import scalar as _field

__all__ = ["add_run_parser", "load_pgfl_config", "run_command"]

_SECTIONS = {
    "data": {"source", "path", "servers", "clients_per_server", "d", "clusters", "samples_min", "samples_max",
             "gamma", "noise_variance", "average_degree", "seed"},
    "model": {"loss", "lam"},
    "algorithm": {"name", "rho", "rho_over_Lmax", "tau", "tau0", "tau_decay", "taus", "dual_ref", "scheduled",
                  "aggregation"},
    "privacy": {"phi0", "zeta", "C", "convention"},
}


_NPZ_DATA_FIELDS = {"source", "path"}
_SYNTHETIC_DATA_FIELDS = _SECTIONS["data"] - {"path"}


def load_pgfl_config(path: Path, iterations: int, runs: int = 1):
    """Parse CONFIG.toml into (problem, config); ConfigError names the offending field.

    Fields that do not apply are refused (``data.path`` with the synthetic source, the synthetic sizes with
    ``source = 'npz'``, ``tau_decay`` without ``tau0``), and so is a problem whose state or work exceeds
    :data:`fedcheck._files.MAX_STATE_ELEMENTS` / :data:`fedcheck._files.MAX_WORK` (checked before allocating).
    """
    from fedcheck._files import MAX_STATE_ELEMENTS, MAX_WORK, check_budget, load_npz
    from reference_impl.pgfl import PGFLConfig, pgfl_problem_from_arrays, synthetic_regression

    table = load_table(path, _SECTIONS)
    pos_int = dict(check=lambda v: v >= 1, allowed="an integer >= 1")
    loss = _field(table, "model", "loss", str, "ridge", check=lambda v: v in ("ridge", "logistic"),
                  allowed="'ridge' or 'logistic'")
    lam = _field(table, "model", "lam", float, 1.0, check=lambda v: v >= 0, allowed="a real >= 0")
    source = _field(table, "data", "source", str, "synthetic", check=lambda v: v in ("synthetic", "npz"),
                    allowed="'synthetic' or 'npz'")
    given = set(table.get("data", {}))
    if source == "npz":
        extra = sorted(given - _NPZ_DATA_FIELDS)
        if extra:
            raise ConfigError(f"data.{extra[0]} does not apply to data.source = 'npz' (the sizes come from the file)")
        data_path = _field(table, "data", "path", str, allowed="a path to a .npz file")
        if data_path is None:
            raise ConfigError("data.path must name the .npz file when data.source = 'npz'")
        resolved = (Path(path).parent / data_path) if not Path(data_path).is_absolute() else Path(data_path)
        arrays = load_npz(resolved, "data.path", bool_keys=("adjacency",))  # FileError names the file
        try:
            problem = pgfl_problem_from_arrays(arrays, loss=loss, lam=lam)
        except ValueError as exc:
            raise ConfigError(f"data.path {str(resolved)!r}: {exc}") from None
        state = problem.K * problem.d + problem.S * problem.n_clusters * problem.d
        size = int(problem.samples.sum()) * problem.d + state
    else:
        if "path" in given:
            raise ConfigError("data.path does not apply to data.source = 'synthetic' (set source = 'npz' to read it)")
        if loss != "ridge":
            raise ConfigError("model.loss must be 'ridge' for data.source = 'synthetic' (regression data)")
        import numpy as np

        smin = _field(table, "data", "samples_min", int, 2, **pos_int)
        smax = _field(table, "data", "samples_max", int, 9, check=lambda v: v >= smin, allowed="an integer >= samples_min")
        servers = _field(table, "data", "servers", int, 10, **pos_int)
        per_server = _field(table, "data", "clients_per_server", int, 15, **pos_int)
        d = _field(table, "data", "d", int, 60, **pos_int)
        clusters = _field(table, "data", "clusters", int, 3, **pos_int)
        K = servers * per_server
        check_budget("the data K samples_max d", K * smax * d, MAX_STATE_ELEMENTS,
                     "data.d (with data.servers, clients_per_server, samples_max)")
        check_budget("the server graph S^2", servers * servers, MAX_STATE_ELEMENTS, "data.servers")
        state = K * d + servers * clusters * d
        size = K * smax * d + state
        real = dict(check=lambda v: v >= 0, allowed="a real >= 0")
        options = dict(
            servers=servers, clients_per_server=per_server, d=d, clusters=clusters, samples=(smin, smax),
            gamma=_field(table, "data", "gamma", float, 0.15, check=lambda v: 0 <= v <= 1e300,
                         allowed="a real in [0, 1e300]"),
            noise_variance=_field(table, "data", "noise_variance", float, 0.1, **real),
            average_degree=_field(table, "data", "average_degree", float, 3.0, check=lambda v: 0 <= v <= servers - 1,
                                  allowed=f"a real in [0, servers - 1 = {servers - 1}]"), lam=lam)
        seed = _field(table, "data", "seed", int, 0, check=lambda v: v >= 0, allowed="an integer >= 0")
        try:
            problem = synthetic_regression(np.random.default_rng(seed), **options)
        except ValueError as exc:
            raise ConfigError(f"data.{exc}") from None
    check_budget("the state runs x (K d + S Q d)", runs * state, MAX_STATE_ELEMENTS, "--runs (with the data sizes)")
    check_budget("the work iterations x runs x (data + state)", iterations * runs * size, MAX_WORK,
                 "--iterations (with --runs and the data sizes)")
    algo = "algorithm"
    rho = _field(table, algo, "rho", float, check=lambda v: v > 0, allowed="a real > 0")
    rho_rel = _field(table, algo, "rho_over_Lmax", float, check=lambda v: v > 0, allowed="a real > 0")
    if (rho is None) == (rho_rel is None):
        raise ConfigError("algorithm.rho: give exactly one of algorithm.rho and algorithm.rho_over_Lmax")
    if rho is None:
        rho = rho_rel * problem.max_curvature
        if not (rho > 0 and rho < float("inf")):
            raise ConfigError(f"algorithm.rho_over_Lmax: rho = rho_over_Lmax x L_max = {rho_rel:g} x "
                              f"{problem.max_curvature:g} is not a finite real > 0")
    unit = dict(check=lambda v: 0 <= v <= 1, allowed="a real in [0, 1]")
    tau = _field(table, algo, "tau", float, **unit)
    tau0 = _field(table, algo, "tau0", float, **unit)
    taus = table.get(algo, {}).get("taus")
    if sum(x is not None for x in (tau, tau0, taus)) > 1:
        raise ConfigError("algorithm.tau: give at most one of tau, tau0 (with tau_decay) and taus")
    if "tau_decay" in table.get(algo, {}) and tau0 is None:
        raise ConfigError("algorithm.tau_decay does not apply without algorithm.tau0 (the first tau of the schedule)")
    if tau0 is not None:
        decay = _field(table, algo, "tau_decay", float, 1.0, **unit)
        schedule = PGFLConfig.geometric_tau(tau0, decay, iterations)
    elif taus is not None:
        if (not isinstance(taus, list) or not taus or len(taus) > iterations
                or not all(isinstance(t, (int, float)) and not isinstance(t, bool) and 0 <= t <= 1 for t in taus)):
            raise ConfigError(f"algorithm.taus must be a non-empty list of at most --iterations = {iterations} reals "
                              f"in [0, 1], got {str(taus)[:80]}")
        schedule = tuple(float(t) for t in taus)
    else:
        schedule = (tau if tau is not None else 0.0,)
    smallest = int(problem.clients_per_server.min())
    kwargs = dict(
        rho=rho, taus=schedule,
        algorithm=_field(table, algo, "name", str, "alg1", check=lambda v: v in ("alg1", "alg2"), allowed="'alg1' or 'alg2'"),
        dual_ref=_field(table, algo, "dual_ref", str, "local_aggregate",
                        check=lambda v: v in ("local_aggregate", "server_model"), allowed="'local_aggregate' or 'server_model'"),
        scheduled=_field(table, algo, "scheduled", int, check=lambda v: 1 <= v <= smallest,
                         allowed=f"an integer in [1, {smallest}] (the fewest clients of a server)"),
        aggregation=_field(table, algo, "aggregation", str, "cache", check=lambda v: v in ("cache", "fresh"),
                           allowed="'cache' or 'fresh'"))
    if "privacy" in table:
        if kwargs["algorithm"] != "alg2":
            raise ConfigError("privacy: the [privacy] section needs algorithm.name = 'alg2'")
        kwargs.update(
            phi0=_field(table, "privacy", "phi0", float, check=lambda v: v > 0, allowed="a real > 0"),
            zeta=_field(table, "privacy", "zeta", float, 1.0, check=lambda v: 0 < v <= 1, allowed="a real in (0, 1]"),
            C=_field(table, "privacy", "C", float, 1.0, check=lambda v: v > 0, allowed="a real > 0"),
            noise_convention=_field(table, "privacy", "convention", str, "I", check=lambda v: v in ("I", "II"),
                                    allowed="'I' or 'II'"))
        if kwargs["phi0"] is None:
            raise ConfigError("privacy.phi0 must be given (a real > 0) in the [privacy] section")
    try:
        config = PGFLConfig(**kwargs)
    except ValueError as exc:
        raise ConfigError(f"algorithm: {exc}") from None
    return problem, config


#: The other ``fedcheck run`` sub-commands: module -> its ``add_run_parser(run_subparsers, int_at_least)``, which
#: registers the sub-command with ``set_defaults(subparser=..., handler=run_fn)``; ``run_fn(args) -> int``.
RUN_PLUGINS = ("fedcheck.paofed_cli", "fedcheck.fedpdm_cli", "fedcheck.zcdp_nfl_cli", "fedcheck.gtv_cli", "fedcheck.npfl_rl_cli")


def add_run_parser(sub, int_at_least) -> None:
    import importlib

    run = sub.add_parser("run", help="run a reference implementation on a configuration")
    algorithms = run.add_subparsers(dest="algorithm", required=True, parser_class=type(run))
    for module in RUN_PLUGINS:
        importlib.import_module(module).add_run_parser(algorithms, int_at_least)
    pgfl = algorithms.add_parser("pgfl", help="PGFL (Algorithms 1-2) from a TOML configuration")
    pgfl.add_argument("config", type=Path, metavar="CONFIG.toml")
    pgfl.add_argument("--iterations", type=int_at_least(1), default=300, metavar="N", help="iterations (default 300)")
    pgfl.add_argument("--runs", type=int_at_least(1), default=1, metavar="R", help="Monte-Carlo runs (default 1)")
    pgfl.add_argument("--seed", type=int_at_least(0), default=0, metavar="S", help="seed of scheduling and noise")
    pgfl.add_argument("--json", action="store_true", help="print the result as JSON")
    pgfl.set_defaults(subparser=pgfl)


def run_command(args) -> int:
    import numpy as np

    if getattr(args, "handler", None) is not None:
        return args.handler(args)

    from fedcheck._config import strict_json
    from reference_impl.pgfl import nmsd_observer, run_pgfl

    problem, config = load_pgfl_config(args.config, args.iterations, args.runs)  # ConfigError: exit 2, one line
    observe = nmsd_observer(problem) if problem.true_models is not None else None
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        run = run_pgfl(problem, config, args.iterations, np.random.default_rng(args.seed), runs=args.runs,
                       observe=observe)
        servers, clients = run.state.w_servers.mean(axis=0), run.state.w_clients.mean(axis=0)
        nmsd_db = 10.0 * np.log10(run.observations.mean(axis=1)) if observe is not None else None
    finite = bool(np.all(np.isfinite(servers)) and np.all(np.isfinite(clients))
                  and (nmsd_db is None or np.all(np.isfinite(nmsd_db))))
    result = {
        "iterations": args.iterations,
        "runs": args.runs,
        # "ok", or "diverged": some values are not finite and are printed as null
        "status": "ok" if finite else "diverged",
        "server_models": servers.tolist(),
        "client_models": clients.tolist(),
    }
    if nmsd_db is not None:
        result["nmsd_db"] = nmsd_db.tolist()
    if args.json:
        sys.stdout.write(strict_json(result) + "\n")
    else:
        print(f"PGFL {config.algorithm}, rho = {config.rho:.6g}, {args.iterations} iterations, {args.runs} run(s)")
        if not finite:
            print("status: diverged (some models are not finite: try a smaller step, i.e. a larger rho)")
        if nmsd_db is not None:
            print(f"NMSD after the last iteration: {result['nmsd_db'][-1]:.3f} dB")
        print("server models (mean over runs): " + f"{len(result['server_models'])} servers x "
              f"{problem.n_clusters} clusters x d = {problem.d} (use --json for the values)")
    return 0
