"""One PGFL run from checked settings, as ``fedcheck run pgfl`` and the Python API run it (docs/papers/pgfl.md).

The problem (:func:`pgfl_run_problem`: a user's arrays or the synthetic regression of the PGFL paper's experiments),
the configuration of Algorithm 1 or 2 resolved against the problem (:func:`pgfl_run_config`: the geometric tau
schedule, rho as a multiple of L_max, the scheduling bound) and the run's JSON document (:func:`pgfl_run_document`).
Bad settings raise ``ValueError`` naming this module's argument (``scheduled``, ``rho_over_Lmax``), which the caller
maps to its own field names.
"""

from __future__ import annotations

__all__ = ["npz_sizes", "pgfl_algorithm_kwargs", "pgfl_run_config", "pgfl_run_document", "pgfl_run_problem",
           "synthetic_sizes"]


def pgfl_algorithm_kwargs(*, name: str, rho: float | None, tau: float | None = None, tau0: float | None = None,
                          tau_decay: float | None = None, taus=None, scheduled: int | None = None,
                          convention: str | None = None, **optional) -> dict:
    """The keyword arguments of :class:`reference_impl.pgfl.PGFLConfig` for Algorithm ``name`` ('alg1' or 'alg2').

    The tau schedule is ``taus``, a constant ``tau`` (default 0), or the first value of the geometric schedule
    ``tau0 tau_decay^n`` (:func:`pgfl_run_config` spreads it over the run); ``convention`` is Algorithm 2's noise
    convention; ``optional`` (``dual_ref``, ``aggregation``, ``phi0``, ``zeta``, ``C``, ``rho_over_Lmax``) are passed
    on when not None (``rho_over_Lmax`` is resolved by :func:`pgfl_run_config`).
    """
    from reference_impl.pgfl.config import PGFLConfig

    if tau0 is not None:
        schedule = PGFLConfig.geometric_tau(tau0, tau_decay, 1)
    elif taus is not None:
        schedule = tuple(taus)
    else:
        schedule = (tau if tau is not None else 0.0,)
    out = dict(rho=rho, taus=schedule, algorithm=name, scheduled=scheduled)
    optional.pop("rho_over_Lmax", None)
    optional["noise_convention"] = convention
    out.update({k: x for k, x in optional.items() if x is not None})
    return out


def npz_sizes(arrays: dict) -> dict:
    """``{"K", "S", "Q", "d", "data"}`` of a PGFL ``.npz`` (``X_k``, ``client_server``, ``client_cluster``), read from
    the headers only and forgiving of a malformed file (:func:`pgfl_run_problem` names what is wrong)."""
    K = sum(1 for k in arrays if k.startswith("X_"))
    X = [arrays.get(f"X_{k}") for k in range(K)]
    d = 1 if any(x is None or x.ndim != 2 for x in X) or not X else X[0].shape[1]

    def count(key: str, most: int) -> int:
        # an index beyond the layout (2^63 in client_server) is the file's error, which pgfl_run_problem names: the
        # sizes stay within the layout, so the estimate does not blame --runs for it
        a = arrays.get(key)
        return min(max(int(a.max()) + 1 if a is not None and a.size else 1, 1), max(most, 1))

    adjacency = arrays.get("adjacency")
    servers = adjacency.shape[0] if adjacency is not None and adjacency.ndim == 2 else K
    return dict(K=K, S=count("client_server", servers), Q=count("client_cluster", K), d=d,
                data=sum(x.size for x in X if x is not None))


def synthetic_sizes(synthetic: dict) -> dict:
    """``{"K", "S", "Q", "d", "data"}`` of the ``synthetic`` regression settings (see :func:`pgfl_run_problem`)."""
    S, per, d = synthetic["servers"], synthetic["clients_per_server"], synthetic["d"]
    return dict(K=S * per, S=S, Q=synthetic["clusters"], d=d, data=S * per * synthetic["samples_max"] * d)


def pgfl_run_problem(*, loss: str, lam: float, arrays: dict | None = None, synthetic: dict | None = None):
    """The :class:`theory.pgfl.problem.PGFLProblem` of a user's ``arrays`` (``pgfl_problem_from_arrays``) or of the
    ``synthetic`` regression settings: :func:`reference_impl.pgfl.synthetic_regression`'s arguments, with
    ``samples_min``/``samples_max`` for its ``samples`` and ``seed`` for its generator."""
    import numpy as np

    from reference_impl.pgfl.data import pgfl_problem_from_arrays, synthetic_regression

    if arrays is not None:
        return _squares_finite(pgfl_problem_from_arrays(arrays, loss=loss, lam=lam), "the arrays")
    opts = dict(synthetic)
    seed, samples = opts.pop("seed"), (opts.pop("samples_min"), opts.pop("samples_max"))
    return _squares_finite(synthetic_regression(np.random.default_rng(seed), lam=lam, samples=samples, **opts),
                           "gamma (or noise_variance)")


def _squares_finite(problem, fields: str):
    """``problem``, if the squares of its data and true models stay in the double range (the objectives square them);
    else ValueError naming ``fields`` (an adversarial audit: gamma = 1e300 gave NaN limits, a 'diverged' run blamed on
    the step and a claim 'violated' on NaN)."""
    import numpy as np

    with np.errstate(over="ignore", invalid="ignore"):
        sums = [float(np.sum(np.square(a))) for a in (*problem.X, *problem.y)]
        if problem.true_models is not None:
            sums.append(float(np.sum(np.square(problem.true_models))))
    if not all(np.isfinite(sums)):
        raise ValueError(f"{fields}: the data's squares leave the double range (the objectives square them); "
                         f"scale the data down")
    return problem


def pgfl_run_config(problem, algorithm: dict, iterations: int, *, tau0: tuple[float, float] | None = None,
                    rho_over_Lmax: float | None = None):
    """The :class:`reference_impl.pgfl.PGFLConfig` of ``algorithm`` (its keyword arguments) on ``problem``.

    ``tau0``: ``(tau0, decay)`` of the geometric schedule tau0 decay^n over ``iterations``; ``rho_over_Lmax``: rho as
    a multiple of the largest curvature L_max of the local losses. ValueError names ``scheduled`` when more clients
    are scheduled than the smallest server holds, and ``rho_over_Lmax`` when rho is not a finite real > 0.
    """
    from reference_impl.pgfl.config import PGFLConfig

    kwargs = dict(algorithm)
    if tau0 is not None:
        kwargs["taus"] = PGFLConfig.geometric_tau(*tau0, iterations)
    smallest = int(problem.clients_per_server.min())
    if kwargs["scheduled"] is not None and kwargs["scheduled"] > smallest:
        raise ValueError(f"scheduled must be an integer in [1, {smallest}] (the fewest clients of a server), got "
                         f"{kwargs['scheduled']}")
    if rho_over_Lmax is not None:
        rho = rho_over_Lmax * problem.max_curvature
        if not (rho > 0 and rho < float("inf")):
            raise ValueError(f"rho_over_Lmax: rho = rho_over_Lmax x L_max = {rho_over_Lmax:g} x "
                             f"{problem.max_curvature:g} is not a finite real > 0")
        kwargs["rho"] = rho
    return PGFLConfig(**kwargs)


def pgfl_run_document(problem, config, iterations: int, rng, *, runs: int) -> dict:
    """Run PGFL and return ``{"iterations", "runs", "status", "server_models": [S][Q][d], "client_models": [K][d],
    "nmsd_db": [...]}``: models averaged over the runs, ``nmsd_db`` (the NMSD learning curve in dB) only when the true
    cluster models are known, ``status`` "ok", "diverged" (some values are not finite) or "diverging" (the NMSD keeps
    rising: :func:`reference_impl.divergence.diverging`, with ``"warning"`` saying so)."""
    import numpy as np

    from reference_impl.divergence import diverging
    from reference_impl.pgfl.algorithm import run_pgfl
    from reference_impl.pgfl.observers import nmsd_observer

    observe = nmsd_observer(problem) if problem.true_models is not None else None
    result = run_pgfl(problem, config, iterations, rng, runs=runs, observe=observe)
    servers, clients = result.state.w_servers.mean(axis=0), result.state.w_clients.mean(axis=0)
    nmsd_db = 10.0 * np.log10(result.observations.mean(axis=1)) if observe is not None else None
    finite = bool(np.all(np.isfinite(servers)) and np.all(np.isfinite(clients))
                  and (nmsd_db is None or np.all(np.isfinite(nmsd_db))))
    out = {"iterations": iterations, "runs": runs, "status": "ok" if finite else "diverged",
           "server_models": servers.tolist(), "client_models": clients.tolist()}
    if nmsd_db is not None:
        out["nmsd_db"] = nmsd_db.tolist()
        why = diverging(nmsd_db, db=True, name="the NMSD") if finite else None
        if why is not None:
            out["status"], out["warning"] = "diverging", why
    return out
