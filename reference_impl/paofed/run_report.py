"""One PAO-Fed (or baseline) run from checked settings, as ``fedcheck run paofed``, ``fedcheck msd`` and the Python
API run it (thesis Chapter 4 / Publication P4; docs/papers/paofed.md).

The analysis instance of per-client or per-group settings (:func:`expand_groups`, :func:`paofed_instance`), the
algorithm's configuration on it (:func:`paofed_algorithm`) and the run's JSON document (:func:`paofed_run_document`).
Bad settings raise ``ValueError`` naming this module's argument (``group[i]``, ``mu``, ``m``, ...), which the caller
maps to its own field names.
"""

from __future__ import annotations

import math

# the rule of a diverging run, shared by every run document (re-exported: the reference instance with w* / 1000 rises
# by 28 dB to its steady state, and a rise from the start alone used to call it diverging)
from reference_impl.divergence import DIVERGING_RISE_DB, STILL_RISING_DB

__all__ = ["DIVERGING_RISE_DB", "STILL_RISING_DB", "WINDOW_CONFIDENCE", "expand_groups", "linear_simulation",
           "paofed_algorithm", "paofed_instance", "paofed_run_document", "rff_data", "rff_environment", "window_drift"]

def expand_groups(groups: list) -> dict:
    """Per-client ``p``, ``sigma2_eta`` and ``white_variances`` or ``toeplitz_rho`` of client groups (each a mapping
    with ``count``, ``p``, ``sigma2_eta`` and exactly one of ``white_variance``, ``toeplitz_rho``; every group
    describes its covariance the same way), clients numbered group by group."""
    kinds = set()
    for i, g in enumerate(groups):
        given = [f for f in ("white_variance", "toeplitz_rho") if g[f] is not None]
        if len(given) != 1:
            raise ValueError(f"group[{i}]: give exactly one of white_variance (a real > 0) and toeplitz_rho (a real in "
                             f"(-1, 1)), got {given or 'neither'}")
        kinds.add(given[0])
        if len(kinds) > 1:
            raise ValueError(f"group[{i}].{given[0]}: every group must describe R the same way (all white_variance or "
                             f"all toeplitz_rho)")
    key = "white_variances" if kinds == {"white_variance"} else "toeplitz_rho"
    one = "white_variance" if key == "white_variances" else key
    return dict(p=[g["p"] for g in groups for _ in range(g["count"])],
                sigma2_eta=[g["sigma2_eta"] for g in groups for _ in range(g["count"])],
                **{key: [g[one] for g in groups for _ in range(g["count"])]})


def paofed_instance(f: dict, R_npy=None, *, min_mu_lambda: float = 0.0, max_mu_lambda: float = math.inf):
    """The :class:`theory.msd.instance.PAOFedInstance` of the settings ``f`` (``K``, ``D``, ``l_max``, ``m``,
    ``selection``, ``p``, ``delta``, ``alpha``, ``sigma2_eta``, ``w_star``, one covariance description --
    ``R_npy`` (an array), ``white_variances``, ``R`` or ``toeplitz_rho`` -- and ``mu`` or ``mu_times_lambda_max``,
    default mu lambda_max = 0.1).

    ``min_mu_lambda``, ``max_mu_lambda``: the accepted range of mu lambda_max (the mean-square analysis needs rho(F)
    = 1 - O(mu) resolvable, and rho(F) ~ (mu lambda_max)^2 within the double range); ValueError names ``mu`` or
    ``mu_times_lambda_max`` outside it, the covariance setting when every R_k is zero or (with ``min_mu_lambda`` > 0)
    when a client's own mu lambda_max(R_k) is below ``min_mu_lambda``, and ``w_star`` when ||w*||^2 overflows.
    """
    import numpy as np

    from theory.msd.instance import PAOFedInstance, toeplitz_covariances

    K, D = f["K"], f["D"]
    if R_npy is not None:
        R, source = R_npy, "R_npy"
    elif f.get("white_variances") is not None:
        R, source = np.asarray(f["white_variances"])[:, None, None] * np.eye(D)[None], "white_variances"
    elif f.get("R") is not None:
        R, source = np.asarray(f["R"], dtype=np.float64), "R"
    else:
        R, source = toeplitz_covariances(np.asarray(f["toeplitz_rho"], dtype=np.float64), D), "toeplitz_rho"
    inst = PAOFedInstance(K=K, D=D, l_max=f["l_max"], m=f["m"], selection=f["selection"], R=R,
                          w_star=np.asarray(f["w_star"], dtype=np.float64), p=np.asarray(f["p"], dtype=np.float64),
                          delta=f["delta"], alpha=np.asarray(f["alpha"], dtype=np.float64),
                          sigma2_eta=np.asarray(f["sigma2_eta"], dtype=np.float64), mu=1.0)
    w2 = float(np.dot(inst.w_star, inst.w_star))
    if not math.isfinite(w2):
        raise ValueError(f"w_star: ||w*||^2 (the initial MSD) overflows the double range; its entries must be below "
                         f"about {math.sqrt(np.finfo(np.float64).max / D):.3g} in magnitude")
    lam_max = inst.lambda_max
    if not lam_max > 0:
        raise ValueError(f"{source}: every covariance R_k is zero (lambda_max = 0); the regressors must have some "
                         f"variance")
    mu, scale = f["mu"], f["mu_times_lambda_max"]
    if mu is None:
        mu = (0.1 if scale is None else scale) / lam_max
        if not 0 < mu < float("inf"):
            raise ValueError(f"mu_times_lambda_max: mu = mu_times_lambda_max / lambda_max = "
                             f"{0.1 if scale is None else scale:g} / {lam_max:g} is not a finite real > 0")
    field = "mu" if scale is None else "mu_times_lambda_max"
    if mu * lam_max < min_mu_lambda:
        raise ValueError(f"{field}: mu lambda_max = {mu * lam_max:.3g} is below {min_mu_lambda:g}, where rho(F) = "
                         f"1 - O(mu) is not resolvable in double precision")
    if min_mu_lambda > 0.0:   # every client's own step, not only the largest: a client 300 decades below would not move
        from theory.msd.instance import covariance_eigenvalues

        lam = covariance_eigenvalues(inst.R)[:, -1]
        slow = np.flatnonzero((lam > 0) & (mu * lam < min_mu_lambda))
        if slow.size:
            k = int(slow[0])
            raise ValueError(f"{source}: client {k}'s mu lambda_max(R_{k}) = {mu * lam[k]:.3g} is below "
                             f"{min_mu_lambda:g} (mu lambda_max = {mu * lam_max:.3g} over all clients): its covariance "
                             f"lies {math.log10(lam_max / lam[k]):.0f} decades below the largest, beyond what the "
                             f"analysis resolves in double precision")
    if not mu * lam_max <= max_mu_lambda:
        raise ValueError(f"{field}: mu lambda_max = {mu * lam_max:.3g} is above {max_mu_lambda:g}, where rho(F) ~ "
                         f"(mu lambda_max)^2 leaves the double range (every mu above 2/lambda_max = "
                         f"{2 / lam_max:.3g} is unstable in the mean already)")
    return inst.with_mu(mu)


def linear_simulation(inst) -> tuple:
    """``(env, data, label)`` of SIM-F (docs/papers/paofed.md#choice-simulators) on the analysis instance ``inst``: its
    asynchronous environment (p, delta, l_max) and linear Gaussian data."""
    from reference_impl.paofed.setup import AsyncEnvironment, LinearData

    env = AsyncEnvironment(K=inst.K, D=inst.D, p=inst.p, delta=inst.delta, l_max=inst.l_max)
    return env, LinearData.from_instance(inst), "SIM-F: linear data of the instance"


def rff_environment(*, K: int, D: int, l_max: int, p_groups, data_groups, horizon: int, delta: float,
                    delay_step: int, delay_tail: str):
    """SIM-E's asynchronous environment (:func:`reference_impl.paofed.experiment_environment`): ``p_groups``
    availability groups crossed with ``data_groups`` (samples per client over ``horizon`` iterations)."""
    from reference_impl.paofed.setup import experiment_environment

    return experiment_environment(K=K, D=D, p_groups=tuple(p_groups), data_groups=tuple(float(x) for x in data_groups),
                                  horizon=horizon, delta=delta, l_max=l_max, delay_step=delay_step,
                                  delay_tail=delay_tail)


def rff_data(**fields) -> tuple:
    """``(data, label)`` of SIM-E: the paper's nonlinear data in the RFF space (:class:`reference_impl.paofed.data.
    SyntheticRFFData` of ``fields``)."""
    from reference_impl.paofed.data import SyntheticRFFData

    return SyntheticRFFData(**fields), ("SIM-E (docs/papers/paofed.md#choice-simulators): the paper's nonlinear data "
                                        "in the RFF space")


def paofed_algorithm(name: str, a: dict, D: int, instance=None):
    """The :func:`reference_impl.paofed.algorithm_config` of algorithm ``name`` with the settings ``a`` (``mu``,
    ``m``, ``schedule``, ``staleness``, ``overlap_rule``, ``full_downlink``, ``online_fed_fraction``, ``pso_fed_m``,
    ``pso_fed_fraction``, ``sign_step``, ``sign_noise``, ``sign_aggregation``, ``baseline_aggregation``; those of
    other algorithms are ignored); on an analysis ``instance`` its mu, m, selection law and staleness weights
    ('instance'). ValueError names ``m`` (or ``pso_fed_m``) above the dimension ``D``."""
    from reference_impl.paofed.setup import algorithm_config

    overrides = {k: a[k] for k in ("overlap_rule", "full_downlink")}
    overrides.update(sign_step=a["sign_step"] if a["sign_step"] is not None else 1e-3,
                     sign_noise=a["sign_noise"] if a["sign_noise"] is not None else 0.0)
    mu, m = (instance.mu, instance.m) if instance is not None else (a["mu"], a["m"])
    if name.startswith("paofed-") or name == "pso-fed":
        overrides["schedule"] = instance.selection if a["schedule"] == "instance" else a["schedule"]
        if a["staleness"] == "instance":
            overrides["alpha"] = tuple(instance.alpha)
    if name == "online-fed":
        overrides["server_fraction"] = a["online_fed_fraction"]
    if name == "pso-fed":
        overrides["server_fraction"] = a["pso_fed_fraction"]
        m = a["pso_fed_m"] if a["pso_fed_m"] is not None else (m if instance is not None else None)
    if name in ("online-fed", "online-fedsgd"):
        overrides["aggregation"] = a["baseline_aggregation"]
        if a["baseline_aggregation"] == "partial":
            overrides["alpha"] = None
            overrides["staleness_decay"] = 1.0
    if name == "signsgd":
        overrides["aggregation"] = a["sign_aggregation"]
    config = algorithm_config(name, mu=mu, m=m, **overrides)
    if config.schedule != "full" and config.m > D:
        field = "pso_fed_m" if name == "pso-fed" and a["pso_fed_m"] is not None else "m"
        raise ValueError(f"{field} must be an integer in [1, D = {D}], got {config.m}")
    return config


#: Confidence of the window's drift interval (over the runs).
WINDOW_CONFIDENCE = 0.95


def window_drift(curve, start: int) -> dict:
    r"""Whether the mean of ``curve`` ((iterations + 1, runs), the metric per iteration and run) over iterations
    ``start``..iterations is a steady state, by the a-posteriori test of
    :func:`reference_impl.paofed.theory_vs_simulation.settlement`: per run, the mean of the window's older half minus
    that of its newer half, relative to the window's mean, with its Student-t interval over the runs
    (:data:`WINDOW_CONFIDENCE`).

    Returns ``{"start", "drift", "drift_interval", "settled", "note"}`` (``drift`` None when the window's mean is not
    finite and positive): ``settled`` is False when the older half lies
    significantly above (below) the newer one by more than the window mean's own half width (the curve was still
    falling (rising): the mean is not a steady state), else None (no drift found; a simulation alone cannot show a
    steady state, its a-priori settling time needs :math:`\rho(\mathcal F)`, which ``fedcheck msd CONFIG --simulate
    RUNS`` uses); ``drift_interval`` is None for one run (no interval: give ``--runs`` 2 or more).
    """
    import numpy as np

    from reference_impl.paofed.theory_vs_simulation import settlement

    curve = np.asarray(curve, dtype=np.float64)
    iterations, runs = curve.shape[0] - 1, curve.shape[1]
    s = settlement(curve, iterations + 1 - int(start), WINDOW_CONFIDENCE)
    interval = [s.drift_low, s.drift_high] if runs >= 2 and math.isfinite(s.drift_low) else None
    settled = False if s.settled is False else None
    if settled is False:
        advice = ("the curve was still falling: more iterations (--iterations)" if s.drift > 0 else
                  "the curve was rising: mu may be beyond the stable range (`fedcheck msd CONFIG` gives it)")
        note = (f"NOT SETTLED: {s.note}; the mean over n = {start}..{iterations} is not a steady state ({advice})"
                if math.isfinite(s.drift) else f"NOT SETTLED: {s.note}")
    elif not math.isfinite(s.drift):
        note = s.note
    elif interval is None:
        note = ("one run: the drift has no interval, so it decides nothing (--runs 2 or more gives one); "
                "`fedcheck msd CONFIG --simulate RUNS` compares a settled simulation with the theory")
    else:
        note = ("no drift shown (the interval contains 0, or the drift is within the window mean's own half width); "
                "a simulation alone cannot show a steady state (`fedcheck msd CONFIG --simulate RUNS` sets the window "
                "after the model's settling time)")
    drift = s.drift if math.isfinite(s.drift) else None   # strict JSON: no NaN
    return {"start": int(start), "drift": drift, "drift_interval": interval, "settled": settled, "note": note}


def paofed_run_document(env, config, data, iterations: int, rng, *, runs: int, label: str) -> dict:
    """Run :func:`reference_impl.paofed.run_paofed` and return ``{"algorithm", "iterations", "runs", "status",
    "curve_db", "metric"}`` (and ``"warning"``): ``curve_db[n]`` is the metric (the server MSD on linear data, MSE-test
    on RFF data) of the server model w_n, n = 0..iterations, in dB, mean over the runs; ``status`` "ok", "diverged"
    (values beyond the double range) or "diverging" (the curve rose by more than :data:`DIVERGING_RISE_DB`).
    ``"window"`` (a finite curve of two iterations or more) says whether the mean over the second half is a steady
    state: :func:`window_drift`.
    ``"_summary"`` holds what a summary shows besides: the ``label``, the metric's ``name``, the mean over the second
    half ``steady_db`` from ``half`` (``window_tag`` marks it when it is not settled), and the communication
    (``entries``, ``messages``, ``savings`` and in per cent ``uplink_pct``/``downlink_pct``, ``load``)."""
    import numpy as np

    from reference_impl.paofed.simulation import run_paofed

    result = run_paofed(env, config, data, iterations, rng, runs=runs)
    curve_db = result.curve_db()
    finite = bool(np.all(np.isfinite(curve_db)))
    half = iterations // 2
    comm = result.communication
    messages = int(np.sum(comm.messages))
    extra = {
        "label": label, "steady_db": float(10.0 * np.log10(np.mean(result.curve[half:]))), "half": half,
        "entries": env.D if config.schedule == "full" else config.m, "messages": messages,
        "savings": comm.savings(env.D) if messages else None, "load": comm.load_bits() if messages else None,
        "name": result.metric.upper()}
    extra["uplink_pct"], extra["downlink_pct"] = (100 * x for x in extra["savings"]) if messages else (None, None)
    out = {"algorithm": config.name, "iterations": iterations, "runs": runs, "status": "ok" if finite else "diverged",
           "curve_db": [float(v) for v in curve_db], "metric": result.metric, "_summary": extra}
    extra["window_tag"] = ""
    if finite and iterations - half >= 1:
        out["window"] = window_drift(result.curve, half)
        extra["window_tag"] = " (NOT SETTLED)" if out["window"]["settled"] is False else ""
    from reference_impl.divergence import rise_db

    rise, rising = rise_db(np.mean(result.curve, axis=1), db=False) if finite else (0.0, 0.0)
    if rise > DIVERGING_RISE_DB and rising > STILL_RISING_DB:
        out["status"] = "diverging"
        out["warning"] = (f"the {result.metric.upper()} rose by {rise:.0f} dB over the run, {rising:.0f} dB within its "
                          f"second half: mu = {config.mu:.4g} is beyond the algorithm's mean-square stable range "
                          f"(`fedcheck msd CONFIG` gives the thresholds of the instance; with Gaussian regressors the "
                          f"exact model's applies)")
        if "window" in out and out["window"]["settled"] is not False:
            out["window"].update(settled=False, note=f"NOT SETTLED: the curve diverges ({out['warning']})")
            extra["window_tag"] = " (NOT SETTLED)"
    return out


