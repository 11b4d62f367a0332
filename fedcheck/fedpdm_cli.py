"""``fedcheck run fedpdm CONFIG.toml``: run FedPDM-DP (or a reconstructed DP baseline) on a user's configuration.

Sections (``fedcheck/examples/fedpdm.toml`` documents every field):

* ``[problem]``: the data and the objective (24): ``source`` = ``"nc"`` (spec 4.0 synthetic l1-logistic, ``N, n, d``),
  ``"digits"`` (scikit-learn's 8x8 digits, loss (25)), ``"mnist_like"`` (synthetic MNIST-shaped data, ``n_train,
  n_test``) or ``"mnist_npz"`` (a local Keras-layout ``.npz``, ``path`` relative to the config); ``beta``, ``gamma``,
  ``data_seed``.
* ``[algorithm]``: every field of :class:`reference_impl.fedpdm.FedPDMConfig`.
* ``[arm]``: ``name`` = ``"fedpdm"`` or a baseline ``"fedavg" | "fedprox" | "scaffold"`` (reconstructions, spec
  5.3) with ``local_steps``, ``eta_cap``, ``mu``.

Output (``--json``, strict JSON): ``{"arm", "rounds", "runs", "seed", "problem", "curves", "noise", "privacy",
"status"}``: curves are means over runs for t = 0..T (``loss`` = F(x_0^t) of (24), ``accuracy`` on the test set or
null, ``stationarity`` = P of (21) for FedPDM); ``noise`` the noise multiplier z and the largest per-round sigma;
``privacy`` the accounted total per client at its **realised** participation count (run 0): dp-accounting's RDP
accountant for every client and its PLD accountant for the busiest one (Poisson-subsampled Gaussian at
q = Q_max b/|D_i|, the seed's moments-accountant model). Non-finite values are null and ``status`` says why. A bad
field exits with status 2 and one line naming ``section.field``.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from fedcheck._config import ConfigError, load_table
from fedcheck._config import scalar as _scalar

__all__ = ["ConfigError", "FedPDMSetup", "account_clients", "add_run_parser", "load_fedpdm_config", "run_fedpdm_cli"]

_SECTIONS = {
    "problem": {"source", "path", "N", "n", "d", "n_train", "n_test", "beta", "gamma", "data_seed"},
    "algorithm": {"K", "rounds", "batch_size", "batch_rule", "rho", "eta0", "eta_schedule", "nu", "Q_max",
                  "local_start", "init", "init_scale", "first_round_all", "noise", "sigma", "epsilon", "delta",
                  "dp_calibration", "epsilon_total", "noise_Q", "G", "prox_threshold_factor", "sensitivity_model"},
    "arm": {"name", "local_steps", "eta_cap", "mu"},
}
_SOURCES = ("nc", "digits", "mnist_like", "mnist_npz")
_ARMS = ("fedpdm", "fedavg", "fedprox", "scaffold")


class FedPDMSetup:
    """What a configuration describes: the problem, the algorithm config, the arm and its baseline config."""

    def __init__(self, problem, config, arm, baseline, source):
        self.problem, self.config, self.arm, self.baseline, self.source = problem, config, arm, baseline, source


def _problem(table, base_dir: Path):
    import numpy as np

    from reference_impl import fedpdm as fp

    sec = "problem"
    pos = dict(check=lambda v: v >= 1, allowed="an integer >= 1")
    nonneg = dict(check=lambda v: v >= 0, allowed="a real >= 0")
    source = _scalar(table, sec, "source", str, "nc", check=lambda v: v in _SOURCES,
                     allowed=" or ".join(repr(s) for s in _SOURCES))
    beta = _scalar(table, sec, "beta", float, 0.1 if source == "nc" else 1e-2, **nonneg)
    gamma = _scalar(table, sec, "gamma", float, 0.01 if source == "nc" else 1e-4, **nonneg)
    rng = np.random.default_rng(_scalar(table, sec, "data_seed", int, 0, check=lambda v: v >= 0,
                                        allowed="an integer >= 0"))
    allowed_fields = {"nc": {"N", "n", "d"}, "digits": {"N"}, "mnist_like": {"N", "n_train", "n_test"},
                      "mnist_npz": {"N", "path"}}[source] | {"source", "beta", "gamma", "data_seed"}
    extra = sorted(set(table.get(sec, {})) - allowed_fields)
    if extra:
        raise ConfigError(f"problem.{extra[0]} is not used with problem.source = {source!r} "
                          f"(allowed: {', '.join(sorted(allowed_fields))})")
    try:
        if source == "nc":
            return fp.instance_nc(rng, N=_scalar(table, sec, "N", int, 10, **pos), n=_scalar(table, sec, "n", int, 60, **pos),
                                  d=_scalar(table, sec, "d", int, 20, **pos), beta=beta, gamma=gamma), source
        if source == "digits":
            return fp.digits_problem(rng, N=_scalar(table, sec, "N", int, 10, **pos), beta=beta, gamma=gamma), source
        if source == "mnist_like":
            return fp.mnist_like_problem(rng, N=_scalar(table, sec, "N", int, 100, **pos),
                                         n_train=_scalar(table, sec, "n_train", int, 60_000, **pos),
                                         n_test=_scalar(table, sec, "n_test", int, 10_000, **pos),
                                         beta=beta, gamma=gamma), source
        path = _scalar(table, sec, "path", str, allowed="a path to a Keras-layout MNIST .npz")
        if path is None:
            raise ConfigError("problem.path must name the MNIST .npz file when problem.source = 'mnist_npz'")
        resolved = Path(path) if Path(path).is_absolute() else base_dir / path
        return fp.mnist_npz_problem(resolved, rng, N=_scalar(table, sec, "N", int, 100, **pos), beta=beta,
                                    gamma=gamma), source
    except ConfigError:
        raise
    except ValueError as exc:
        raise ConfigError(f"problem.{exc}".replace("\n", " ")) from None


def _algorithm(table):
    from reference_impl.fedpdm import FedPDMConfig

    sec = "algorithm"
    body = dict(table.get(sec, {}))
    required = ("K", "rounds", "batch_size", "rho", "eta0", "nu", "Q_max")
    missing = [k for k in required if k not in body]
    if missing:
        raise ConfigError(f"algorithm.{missing[0]} must be given (required: {', '.join(required)})")
    kinds = {"K": int, "rounds": int, "batch_size": int, "Q_max": int, "first_round_all": bool, "batch_rule": str,
             "eta_schedule": str, "local_start": str, "init": str, "noise": str, "dp_calibration": str, "noise_Q": str,
             "sensitivity_model": str}
    kwargs = {}
    for name in body:
        kind = kinds.get(name, float)
        kwargs[name] = _scalar(table, sec, name, kind, allowed={int: "an integer", bool: "true or false",
                                                                 str: "a string", float: "a real"}[kind])
    try:
        return FedPDMConfig(**kwargs)
    except ValueError as exc:
        raise ConfigError(f"algorithm.{exc}".replace("\n", " ")) from None


def load_fedpdm_config(path, *, rounds: int | None = None) -> FedPDMSetup:
    """Parse CONFIG.toml into a :class:`FedPDMSetup`; ConfigError names the offending ``section.field``."""
    import dataclasses

    from reference_impl.fedpdm import BaselineConfig

    path = Path(path)
    table = load_table(path, _SECTIONS)
    problem, source = _problem(table, path.parent)
    config = _algorithm(table)
    if rounds is not None:
        config = dataclasses.replace(config, rounds=rounds)
    try:
        config.validate_for(problem)
    except ValueError as exc:
        raise ConfigError(f"algorithm.{exc}".replace("\n", " ")) from None
    arm = _scalar(table, "arm", "name", str, "fedpdm", check=lambda v: v in _ARMS, allowed=" or ".join(map(repr, _ARMS)))
    baseline = None
    if arm == "fedpdm":
        extra = sorted(set(table.get("arm", {})) - {"name"})
        if extra:
            raise ConfigError(f"arm.{extra[0]} applies to the baselines only (arm.name = 'fedavg', 'fedprox', 'scaffold')")
    else:
        try:
            baseline = BaselineConfig(name=arm, local_steps=_scalar(table, "arm", "local_steps", int, None,
                                                                     allowed="an integer >= 1"),
                                      eta_cap=_scalar(table, "arm", "eta_cap", float, 0.1, allowed="a real > 0"),
                                      mu=_scalar(table, "arm", "mu", float, 0.1, allowed="a real >= 0"))
        except ConfigError:
            raise
        except ValueError as exc:
            raise ConfigError(f"arm.{exc}".replace("\n", " ")) from None
    return FedPDMSetup(problem, config, arm, baseline, source)


def account_clients(counts, z: float, q: float, delta: float, *, pld: bool = True) -> dict:
    """Per-client (epsilon, delta) at the realised counts: dp-accounting RDP for every distinct count, PLD for the max.

    Each participation is ``PoissonSampledDpEvent(q, GaussianDpEvent(z))`` (the seed's moments-accountant model).
    """
    import dp_accounting
    from dp_accounting import pld as dpa_pld
    from dp_accounting import rdp as dpa_rdp

    event = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z))
    rdp_by_count = {}
    for n in sorted(set(int(c) for c in counts)):
        if n == 0:
            rdp_by_count[n] = 0.0
            continue
        acc = dpa_rdp.RdpAccountant()
        acc.compose(event, n)
        rdp_by_count[n] = float(acc.get_epsilon(delta))
    n_max = int(max(counts))
    out = {"epsilon_rdp_per_client": [rdp_by_count[int(c)] for c in counts], "max_count": n_max,
           "epsilon_rdp_max_client": rdp_by_count[n_max]}
    if pld and n_max > 0:
        acc = dpa_pld.PLDAccountant(value_discretization_interval=1e-3)
        acc.compose(event, n_max)
        out["epsilon_pld_max_client"] = float(acc.get_epsilon(delta))
    return out


def _history_factor(run, config) -> dict:
    """History factor kappa of the busiest client's last upload (run 0), from its actual eta/Q sequence (Review notes)."""
    import numpy as np

    from theory.privacy.history import history_factors_fedpdm

    busiest = int(np.argmax(run.participation_counts[0]))
    rounds = np.flatnonzero(run.participation[0, :, busiest])
    Qs = [config.Q_max] * rounds.size if config.noise_Q == "cap" else [int(q) for q in run.Q[0, rounds, busiest]]
    try:
        kappa = float(history_factors_fedpdm(run.etas[rounds], Qs, config.rho, local_start=config.local_start)[-1])
    except ValueError as exc:  # (19) itself overflows (eta rho > 2, spec E25)
        return {"history_factor_busiest_client": None, "history_factor_status": f"not computable: {exc}"}
    covered = config.sensitivity_model == "history"
    return {"history_factor_busiest_client": kappa if math.isfinite(kappa) else None,
            "history_factor_status": (
                ("noise calibrated to kappa s: the accounted totals hold given the released history" if covered else
                 "noise calibrated to s of (19): given the released history the per-round sensitivity is kappa s, so "
                 "the accounted totals assume kappa = 1 (spec E4; set algorithm.sensitivity_model = 'history')")
                if math.isfinite(kappa) else "kappa overflows (warm start with (1 - eta rho)^Q <= -1/3)")}


def _finite_list(values):
    vals = [float(v) for v in values]
    return [v if math.isfinite(v) else None for v in vals], all(math.isfinite(v) for v in vals)


def run_fedpdm_cli(args) -> int:
    """Run the configured arm and print its curves, noise and per-client privacy (exit status 0)."""
    import numpy as np

    from reference_impl import fedpdm as fp
    from theory.fedpdm.convergence import theorem3_conditions

    parser = args.subparser
    try:
        setup = load_fedpdm_config(args.config, rounds=args.rounds)
    except ValueError as exc:
        parser.error(str(exc).replace("\n", " "))
    problem, config = setup.problem, setup.config
    rng = np.random.default_rng(args.seed)
    observers = {"loss": lambda s: fp.global_objective(problem, s.x0), "accuracy": lambda s: fp.accuracy(problem, s.x0)}
    with np.errstate(over="ignore", invalid="ignore"):
        if setup.arm == "fedpdm":
            observers["stationarity"] = lambda s: fp.stationarity_measure(problem, s.x, s.x0, s.lam, config.rho)["P"]
            run = fp.run_fedpdm(problem, config, rng, runs=args.runs, observers=observers)
        else:
            run = fp.run_baseline(problem, config, setup.baseline, rng, runs=args.runs, observers=observers)
    status = []
    curves = {}
    for name, values in run.observations.items():
        if name == "accuracy" and problem.test_features is None:
            curves[name] = None
            continue
        curves[name], finite = _finite_list(np.mean(values, axis=1))
        if not finite:
            status.append(f"curves.{name}: non-finite values (divergence, e.g. eta rho > 2, spec E25) are null")
    sigma_max, finite = _finite_list(run.sigma.max(axis=(0, 2)))
    if not finite:
        status.append("noise.sigma_max_per_round: overflow of (19) (eta rho > 2) is null")
    counts = run.participation_counts[0]
    steps = config.Q_max if setup.baseline is None else (setup.baseline.local_steps or config.Q_max)
    q = steps * config.batch_size / problem.n
    privacy: dict = {"delta": config.delta, "q": q, "participations": [int(c) for c in counts],
                     "pT": config.K / problem.N * config.rounds, "accountant": "Poisson-subsampled Gaussian, dp-accounting"}
    if config.noise != "dp":
        privacy["status"] = f"algorithm.noise = {config.noise!r}: no DP accounting"
    elif q >= 1.0:
        privacy["status"] = "q = Q_max b/|D_i| >= 1: the subsampled accountant does not apply"
    else:
        privacy.update(account_clients(counts, run.z * (2.0 if setup.arm == "scaffold" else 1.0) ** -0.5, q,
                                       config.delta))
        privacy["status"] = ("ok" if setup.arm != "scaffold" else
                             "ok (SCAFFOLD releases two Gaussians per round: accounted as one at z/sqrt(2))")
    if setup.arm == "fedpdm" and config.noise == "dp":
        privacy.update(_history_factor(run, config))
    out = {"arm": setup.arm, "rounds": config.rounds, "runs": args.runs, "seed": args.seed,
           "problem": {"source": setup.source, "N": problem.N, "n": problem.n, "d": problem.d,
                       "L_smooth": problem.L_smooth, "G": run.G,
                       "theorem3_conditions": theorem3_conditions(problem.L_smooth, config.rho)},
           "curves": curves, "noise": {"mode": config.noise, "z": run.z, "sigma_max_per_round": sigma_max},
           "privacy": privacy, "status": "; ".join(status) or "ok"}
    if args.json:
        sys.stdout.write(json.dumps(out, allow_nan=False) + "\n")
        return 0
    loss = curves["loss"]
    print(f"{setup.arm} on {setup.source}: N = {problem.N}, |D_i| = {problem.n}, d = {problem.d}, T = {config.rounds}, "
          f"{args.runs} run(s), seed {args.seed}")
    print(f"training loss F(x_0): {loss[0]} -> {loss[-1]}" + (
        f"; test accuracy {curves['accuracy'][-1]}" if curves.get("accuracy") else ""))
    print(f"noise multiplier z = {run.z:.6g} ({config.noise})")
    if "epsilon_rdp_max_client" in privacy:
        print(f"busiest client: {privacy['max_count']} participations (pT = {privacy['pT']:g}); eps at delta = "
              f"{config.delta:g}: RDP {privacy['epsilon_rdp_max_client']:.4g}, PLD {privacy['epsilon_pld_max_client']:.4g}")
    else:
        print(f"privacy: {privacy['status']}")
    if status:
        print(f"status: {out['status']}")
    print("curves and per-client privacy: use --json")
    return 0


def add_run_parser(run_subparsers, int_at_least) -> None:
    """Add ``fedpdm`` to the sub-commands of ``fedcheck run``."""
    p = run_subparsers.add_parser("fedpdm", help="FedPDM-DP (or a DP baseline) from a TOML file")
    p.add_argument("config", type=Path, metavar="CONFIG.toml")
    p.add_argument("--rounds", type=int_at_least(1), default=None, metavar="N",
                   help="rounds T (default: algorithm.rounds of the config)")
    p.add_argument("--runs", type=int_at_least(1), default=1, metavar="R", help="Monte-Carlo runs (default 1)")
    p.add_argument("--seed", type=int_at_least(0), default=0, metavar="S", help="root seed (default 0)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(subparser=p, handler=run_fedpdm_cli)
