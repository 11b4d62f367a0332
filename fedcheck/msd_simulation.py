"""``fedcheck msd CONFIG --simulate RUNS`` and ``--plot FILE``: PAO-Fed's theory beside a simulation, and its figure.

:func:`simulate` runs :func:`reference_impl.paofed.theory_vs_simulation` on the analysis instance with the analyses
``fedcheck msd`` already computed (no second solve), after checking the simulation's cost; :func:`simulation_lines`
prints one line per model ("simulation (faithful, R runs, last W of N iterations): X dB [lo, hi] (95 %); seed F:
Y dB agrees / outside by +g dB"); :func:`msd_figures` builds the figure of ``--plot``: the simulated learning curve
with its confidence band, each model's transient MSD_n (thesis Ch. 4, (4.32)-(4.33)) and a line at each model's
steady-state MSD_inf ((4.26) for the seed's truncated F; with the Gaussian mu^2 term for the exact F). See
``docs/papers/paofed.md``.
"""

from __future__ import annotations

import math

from fedcheck._errors import ConfigError
from fedcheck.run._budget import Cost, check

__all__ = ["SIMULATION_CONFIDENCE", "msd_figures", "simulate", "simulation_cost", "simulation_json", "simulation_plan",
           "simulation_lines"]

#: Two-sided level of the simulated steady-state interval and of the figure's band.
SIMULATION_CONFIDENCE = 0.95


def simulation_cost(instance, runs: int, iterations: int) -> list[Cost]:
    """The faithful simulation's phases: the state runs x K x D x (l_max + 1), the recorded curve, and the work
    iterations x runs x K x D^2 (a correlated regressor per client and iteration; white ones cost K D)."""
    K, D, L = instance.K, instance.D, instance.l_max
    return [Cost(phase="the simulated state runs x K x D x (l_max + 1)", field="argument --simulate",
                 memory=float(runs) * K * D * (L + 1)),
            Cost(phase="the simulated curves runs x (iterations + 1)", field="argument --simulate",
                 memory=float(runs) * (iterations + 1)),
            Cost(phase="the simulation iterations x runs x K x D^2", field="argument --simulate",
                 work=float(iterations) * runs * K * D * D, steps=float(iterations))]


def simulation_plan(instance, report: dict, analyses: dict, runs: int) -> tuple[int, dict | None]:
    """How many iterations to simulate, or why not to simulate: ``(iterations, None)`` or ``(iterations, block)``
    with ``block`` the ``"simulation"`` JSON of a simulation that is not run.

    The default is :func:`reference_impl.paofed.theory_vs_simulation.default_iterations` of the largest rho(F) (at most
    20,000). When the a-priori settling time (:func:`~reference_impl.paofed.theory_vs_simulation.settling_time`, from
    rho(F) or rho(M)^2) says the averaged second half would start too early, the run is lengthened to twice that time,
    if its cost is within the limits of :func:`fedcheck.run._budget.check`; otherwise it is not run (it could decide
    nothing) and the block says why. Nor is it run when the exact model is mean-square unstable (rho(F_exact) >= 1):
    the simulation, whose second moments that model propagates, has no steady state to compare."""
    from fedcheck.run import _budget
    from reference_impl.paofed.theory_vs_simulation import (
        default_iterations,
        model_radii,
        settling_need,
        settling_time,
        unstable_note,
    )

    largest, exact_rho = model_radii(analyses)
    iterations = default_iterations(largest)
    unstable = unstable_note(exact_rho)
    if unstable is not None:
        return iterations, {"skipped": True, "settled": False, "iterations": iterations,
                            "settlement": {"start_needed": None, "radius_source": "rho(F)",
                                           "note": f"{unstable}; it was not run and no model is judged"}}
    needed, source, rho = settling_time(exact_rho, report.get("mean_spectral_radius"))
    if needed is None or iterations + 1 - iterations // 2 >= needed:
        return iterations, None
    longer = 2 * needed
    try:
        _budget.check(simulation_cost(instance, runs, longer))
    except ConfigError as exc:
        note = (f"{settling_need(needed, source, rho)} before the averaged second half may start, so a simulation "
                f"that can settle runs {longer} iterations, and {exc}; it was not run and no model is judged")
        return longer, {"skipped": True, "settled": False, "iterations": longer,
                        "settlement": {"start_needed": needed, "radius_source": source, "note": note}}
    return longer, None


def simulate(instance, report: dict, analyses: dict, runs: int, seed: int, *, quiet: bool, iterations: int):
    """The :class:`reference_impl.paofed.TheoryVsSimulation` of ``instance`` (``runs`` faithful runs of ``iterations``
    iterations (:func:`simulation_plan`), randomness ``numpy.random.default_rng(seed)``), beside the models of
    ``report`` with their ``analyses``."""
    import numpy as np

    from fedcheck.run import _budget
    from fedcheck.run._output import Progress
    from reference_impl.paofed.theory_vs_simulation import theory_vs_simulation

    models = tuple(report["models"])
    total = check(simulation_cost(instance, runs, iterations))
    with Progress("fedcheck msd --simulate", _budget.seconds(total), quiet=quiet), \
            np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        return theory_vs_simulation(instance, runs, rng=np.random.default_rng(seed), iterations=iterations,
                                    models=models, method=report["route"], analyses=analyses,
                                    confidence=SIMULATION_CONFIDENCE,
                                    mean_radius=report.get("mean_spectral_radius"))


def simulation_json(tvs, seed: int) -> dict:
    """The ``"simulation"`` block of ``fedcheck msd --json`` (non-finite values become null in strict JSON)."""
    st = tvs.settlement
    return {"simulator": tvs.simulator, "runs": tvs.runs, "iterations": tvs.iterations, "window": tvs.window,
            "confidence": tvs.confidence, "seed": seed, "msd": tvs.simulated_msd, "msd_db": tvs.simulated_db,
            "interval": [tvs.simulated_low, tvs.simulated_high],
            "interval_db": [tvs.simulated_low_db, tvs.simulated_high_db],
            "models": {c.model: {"msd_db": c.msd_db, "agrees": c.agrees, "gap_db": c.gap_db, "route": c.route,
                                 **({"note": c.note} if c.note else {})} for c in tvs.models},
            "settled": st.settled, "settlement": {"start_needed": st.start_needed, "radius_source": st.radius_source,
                                                  "drift": st.drift, "drift_interval": [st.drift_low, st.drift_high],
                                                  "note": st.note},
            "curve_db": tvs.curve_db, "band_db": {"low": tvs.band_low_db, "high": tvs.band_high_db}}


def _decimals(lo_db: float, hi_db: float) -> int:
    """Decimals that resolve an interval of this width in dB (one significant digit of its half width, 1 to 4)."""
    half = (hi_db - lo_db) / 2.0
    if not (math.isfinite(half) and half > 0):
        return 2
    return int(min(4, max(1, 1 - math.floor(math.log10(half)))))


def simulation_lines(tvs) -> list[str]:
    """One line per model: the simulated steady state with its interval, and the model's value beside it."""
    k = _decimals(tvs.simulated_low_db, tvs.simulated_high_db)

    def db(x) -> str:
        if x is None or math.isnan(x):
            return "not finite"
        return f"{x:.{k}f}" if math.isfinite(x) else ("inf" if x > 0 else "-inf")

    head = (f"simulation ({tvs.simulator}, {tvs.runs} runs, last {tvs.window} of {tvs.iterations} iterations): "
            f"{db(tvs.simulated_db)} dB [{db(tvs.simulated_low_db)}, {db(tvs.simulated_high_db)}] "
            f"({100 * tvs.confidence:g} %)")
    lines = []
    st = tvs.settlement
    for c in tvs.models:
        if c.msd_db is None:
            verdict = "no steady state (not mean-square stable at this mu)"
        elif st.settled is False:
            verdict = f"{db(c.msd_db)} dB, undecided: the simulation has not settled"
        elif c.agrees:
            verdict = f"{db(c.msd_db)} dB agrees"
        else:
            verdict = f"{db(c.msd_db)} dB outside by {c.gap_db:+.{k}f} dB"
        if c.msd_db is not None and not math.isfinite(tvs.simulated_low_db):
            verdict += (" (the interval reaches 0, -inf dB: the runs differ too much to decide; more runs, or a mu "
                        "at which every model is stable)")
        lines.append(f"{head}; {c.model} F: {verdict}")
    if st.settled is False:
        lines.append(f"NOT SETTLED: {st.note}")
    elif st.settled is None:
        lines.append(f"settling not certain: {st.note}")
    return lines


def msd_figures(report: dict, tvs=None) -> list:
    """The figure of ``--plot``: each model's transient and steady-state line, and with ``tvs`` the simulated curve
    and its band (the averaged window shaded)."""
    import numpy as np

    from fedcheck._plot import figure_spec, series

    curves, spans = [], ()
    if tvs is not None:
        n = tvs.n
        curves.append(series(f"simulation ({tvs.simulator}, {tvs.runs} runs): mean and "
                             f"{100 * tvs.confidence:g} % band", n, tvs.curve_db, group="simulation",
                             lower=np.where(np.isfinite(tvs.band_low_db), tvs.band_low_db, np.nan),
                             upper=tvs.band_high_db))
        spans = ((float(tvs.iterations - tvs.window), float(tvs.iterations)),)
        transients = {m: np.asarray(v) for m, v in tvs.transient_db.items()}
        last = tvs.iterations
    else:
        transients = {m: np.asarray(e["transient_db"]) for m, e in report["models"].items()
                      if e.get("transient_db") is not None}
        last = max((len(v) - 1 for v in transients.values()), default=1)
    # a figure travels without the text: an uncertified estimate says so in its own legend
    what_f = " (class-mean estimate, not certified)" if report.get("class_mean_estimate") else ""
    for model, entry in report["models"].items():
        if model in transients:
            values = transients[model]
            curves.append(series(f"{model} F{what_f}: transient MSD$_n$", np.arange(values.size), values,
                                 style="dashed", group=model))
        value = entry.get("msd_db")
        if value is not None and math.isfinite(value):
            curves.append(series(f"{model} F{what_f}: MSD$_\\infty$ = {value:.2f} dB", [0, last], [value, value],
                                 style="dashed" if model in transients else "line", group=model))
    if not curves:
        raise ConfigError("argument --plot: nothing to draw (no model is mean-square stable at this mu and there is "
                          "no simulation)")
    what = "simulation beside theory" if tvs is not None else "theoretical transient"
    return [figure_spec("msd", f"PAO-Fed MSD: {what} (N = {report['N']}, $\\mu$ = {report['mu']:.4g})",
                        "iteration n", "MSD (dB)", curves, spans=spans)]
