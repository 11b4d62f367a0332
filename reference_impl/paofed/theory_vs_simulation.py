r"""PAO-Fed's mean-square theory beside a simulation of the same instance (``fedcheck msd CONFIG --simulate RUNS``).

:func:`theory_vs_simulation` runs the simulation on the analysis instance, estimates the steady-state MSD as the mean
over runs of each run's time average over the last ``window`` iterations, with its Student-t confidence interval, and
sets it beside :math:`\mathrm{MSD}_\infty` of each model (the seed's truncated :math:`\mathcal F`, Ch. (4.26) of the
thesis / P4 (28), and the exact one with the Gaussian :math:`\mu^2` term, P4 (29)): a model *agrees* when its value
lies inside the interval, else the gap says by how many dB it lies outside (positive: the theory is above the
interval). The record also carries the data of one figure as plain arrays: the simulated learning curve with a
pointwise confidence band and each model's transient (Ch. (4.32)-(4.33), where the instance is small enough for the
structured (S1) recursion).

Two simulations: ``"faithful"`` is the algorithm itself (steps P1-P9, :func:`reference_impl.paofed.run_faithful`),
``"analysis"`` the process the closed forms describe exactly (independent draws at every iteration, assumptions
I1-I5 (docs/papers/paofed.md#assumption-i1 to #assumption-i5), :func:`reference_impl.paofed.run_analysis_model`). The
algorithm violates I1-I5 by construction (the selection it sends is the one it received, a message is delivered exactly
once), so a faithful simulation may disagree with both models by a fraction of a dB; the analysis simulation agrees with
the exact model up to the Monte-Carlo interval. See ``docs/papers/paofed.md``.

A comparison is only as good as the simulation's steady state, so the record says whether it has *settled*
(:func:`settlement`): a priori, the averaged window must start after the transient has lost four decades
(:math:`\ln 10^4 / (1 - \rho)` iterations, from :math:`\rho(\mathcal F)`, or from :math:`\rho(\mathcal M)^2 \le
\rho(\mathcal F_{exact})` when the route computes no :math:`\rho(\mathcal F)`, which then gives only a necessary
condition); a posteriori, the window's older half must not lie above or below its newer half by more than the
steady-state interval's half width with the drift's own interval excluding 0 (paired over runs). A simulation that
has not settled decides no agreement: each model's ``agrees`` and ``gap_db`` are None, with the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from reference_impl.paofed.analysis import run_analysis_model, time_average
from reference_impl.paofed.simulation import run_faithful
from theory.msd.instance import PAOFedInstance

__all__ = ["DRIFT_DECISIVE", "SIMULATORS", "TRANSIENT_MAX_N", "ModelComparison", "Settlement", "TheoryVsSimulation",
           "default_iterations", "model_radii", "settlement", "settling_need", "settling_note", "settling_time",
           "theory_vs_simulation", "unstable_note"]

#: The simulations :func:`theory_vs_simulation` can run.
SIMULATORS = ("faithful", "analysis")
#: The theoretical transient (structured (S1): N x N covariances per step) is computed up to this N = N_b D.
TRANSIENT_MAX_N = 1500


def _db(x: float) -> float:
    return 10.0 * math.log10(x) if x > 0 else -math.inf


@dataclass(frozen=True, kw_only=True)
class ModelComparison:
    """One model's steady-state MSD beside the simulated interval.

    Attributes
    ----------
    model : str
        ``"seed"`` or ``"exact"``.
    msd, msd_db : float or None
        :math:`\\mathrm{MSD}_\\infty` (None when the model is not mean-square stable at this mu).
    agrees : bool or None
        The value lies inside the simulated confidence interval (None without a value).
    gap_db : float or None
        0 when it agrees, else the distance in dB from the interval to the value (positive: above the upper end).
    route, note : str
        The theory route used; why there is no value, or "".
    """

    model: str
    msd: float | None
    msd_db: float | None
    agrees: bool | None
    gap_db: float | None
    route: str
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class Settlement:
    r"""Whether a simulated learning curve has reached its steady state over the averaged window.

    Attributes
    ----------
    settled : bool or None
        False when either test below fails; True when the a-priori test passes on :math:`\rho(\mathcal F)` and no
        drift is found; None when no drift is found but the a-priori test had only a necessary condition (or none).
    start_needed : int or None
        Iterations the transient needs to lose four decades, :math:`\lceil\ln 10^4 / (1 - \rho)\rceil`, with
        :math:`\rho` the one named in ``radius_source`` (None without one).
    radius_source : str
        ``"rho(F)"``, ``"rho(M)^2"`` (a lower bound of :math:`\rho(\mathcal F_{exact})`: its ``start_needed`` is
        necessary, not sufficient) or ``"none"``.
    drift, drift_low, drift_high : float
        Mean over runs of (older half - newer half of the window) relative to the window's mean, and its interval.
    note : str
        Why the simulation has not settled, or what is not known; "" when it has settled.
    """

    settled: bool | None
    start_needed: int | None
    radius_source: str
    drift: float
    drift_low: float
    drift_high: float
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class TheoryVsSimulation:
    """Theory beside simulation for one instance (plain data: numbers and numpy arrays, for JSON and plotting).

    Attributes
    ----------
    simulator : str
    runs, iterations, window : int
        Monte-Carlo runs, iterations per run, and the last iterations averaged for the steady state.
    confidence : float
        Two-sided confidence level of the intervals (1 - alpha).
    seed : int or None
        The seed of the generator when one was given as an integer.
    simulated_msd, simulated_low, simulated_high : float
        Steady-state MSD of the simulation (mean over runs of the per-run time averages) and its interval.
    simulated_db, simulated_low_db, simulated_high_db : float
        The same in dB (``-inf`` for a non-positive lower end).
    models : tuple of ModelComparison
    n : (iterations + 1,) int array
        Iteration index of the curves.
    curve_db, band_low_db, band_high_db : (iterations + 1,) arrays
        Mean simulated MSD per iteration in dB and its pointwise confidence band (NaN where the lower end is <= 0).
    transient_db : dict
        Model -> theoretical MSD_n in dB, n = 0..iterations (models whose transient was computed).
    settlement : Settlement
        Whether the simulation reached its steady state over the window (if not, no model's agreement is decided).
    """

    simulator: str
    runs: int
    iterations: int
    window: int
    confidence: float
    seed: int | None
    simulated_msd: float
    simulated_low: float
    simulated_high: float
    simulated_db: float
    simulated_low_db: float
    simulated_high_db: float
    models: tuple
    n: np.ndarray
    curve_db: np.ndarray
    band_low_db: np.ndarray
    band_high_db: np.ndarray
    transient_db: dict
    settlement: Settlement | None = None


def default_iterations(radius: float | None, *, lo: int = 500, hi: int = 20000) -> int:
    r"""Iterations for the learning curve to settle: :math:`\lceil 2\ln(10^{4}) / (1 - \rho)\rceil` (the transient
    decays like :math:`\rho^n`; twice the time to lose four decades, so the averaged second half is settled),
    within ``[lo, hi]``; ``hi`` without a radius (the classes route computes none) or for :math:`\rho \ge 1`."""
    if radius is None or not math.isfinite(radius) or radius >= 1.0:
        return hi
    if radius <= 0.0:
        return lo
    return int(min(hi, max(lo, math.ceil(2.0 * math.log(1e4) / -math.log(radius)))))


def model_radii(analyses: dict) -> tuple[float | None, float | None]:
    """(the largest finite rho(F) of the models' analyses, which sets :func:`default_iterations`; rho(F_exact), the
    radius of the simulation's own second-moment dynamics, which sets its settling time); None where there is none.

    The simulators draw Gaussian regressors, whose second moments the exact F propagates; the seed's truncated F is
    an approximation of them, so its radius says nothing about when a simulation settles (it used to be taken when
    the exact model was unstable, and a diverging simulation was called settled). A rho(F_exact) >= 1 is returned as
    it is: the simulation has no steady state (:func:`unstable_note`)."""
    radii = [a.spectral_radius for a in analyses.values() if a.spectral_radius is not None
             and math.isfinite(a.spectral_radius)]
    exact = analyses.get("exact")
    rho = exact.spectral_radius if exact is not None else None
    return (max(radii) if radii else None), (float(rho) if rho is not None and math.isfinite(rho) else None)


def unstable_note(radius: float | None) -> str | None:
    """Why a simulation has no steady state when rho(F_exact) = ``radius`` >= 1 (None otherwise)."""
    if radius is None or radius < 1.0:
        return None
    return (f"the exact model, the simulation's own second-moment dynamics, is mean-square unstable at this mu "
            f"(rho(F_exact) = {radius:.6g} >= 1): the simulated MSD has no steady state")


def _four_decades(radius: float) -> int:
    """Iterations for rho^n to fall by 10^-4."""
    return int(math.ceil(math.log(1e4) / -math.log(radius)))


def settling_time(radius: float | None = None, mean_radius: float | None = None) -> tuple[int | None, str, float]:
    r"""The a-priori test of :func:`settlement`: (iterations the transient needs to lose four decades, the radius's
    source ``"rho(F)"`` / ``"rho(M)^2"`` / ``"none"``, that radius) from :math:`
ho(\mathcal F)` if it is in (0, 1),
    else from :math:`
ho(\mathcal M)^2` (a lower bound of :math:`
ho(\mathcal F_{exact})`: a necessary time)."""
    if radius is not None and math.isfinite(radius) and 0.0 < radius < 1.0:
        return _four_decades(radius), "rho(F)", float(radius)
    if mean_radius is not None and math.isfinite(mean_radius) and 0.0 < mean_radius < 1.0:
        return _four_decades(mean_radius ** 2), "rho(M)^2", float(mean_radius ** 2)
    return None, "none", math.nan


def settling_need(needed: int, source: str, rho: float) -> str:
    """:func:`settling_time`'s answer in words ("at least" when it is only necessary)."""
    why = "needs" if source == "rho(F)" else "needs at least"
    return f"the transient {why} {needed} iterations to lose four decades ({source} = {rho:.6g})"


def settling_note(start: int, needed: int, source: str, rho: float) -> str:
    """Why a window starting at ``start`` is too early for :func:`settling_time`'s ``needed``."""
    return f"the averaged window starts at iteration {start}, but {settling_need(needed, source, rho)}"


#: A significant drift between the window's halves larger than this fraction of their mean is a trend whatever the
#: steady-state interval's width (a diverging simulation's interval is so wide that it contains any model).
DRIFT_DECISIVE = 0.5


def settlement(curve: np.ndarray, window: int, confidence: float, *, radius: float | None = None,
               mean_radius: float | None = None) -> Settlement:
    r"""Whether ``curve`` ((iterations + 1, runs), MSD per iteration and run) has settled over its last ``window``
    iterations.

    A priori: the window starts at iteration ``iterations + 1 - window``, which must be at least the four-decade time
    of :math:`\rho(\mathcal F)` (``radius``) or, without it, of :math:`\rho(\mathcal M)^2` (``mean_radius``; since
    :math:`\mathcal F_{exact}(X) \succeq \mathcal M X \mathcal M^T`, :math:`\rho(\mathcal F_{exact}) \ge
    \rho(\mathcal M)^2`, so that time is a lower bound of the real one); a ``radius`` >= 1 (rho(F_exact), see
    :func:`model_radii`) means no steady state at all. A posteriori: per run, the mean of the window's older half minus
    that of its newer half, relative to the two halves' mean (in [-2, 2], so that no run outweighs the others, and of
    mean exactly 0 when the halves are exchangeable, as in a steady state); the simulation has drifted when that
    difference's Student-t interval excludes 0 and its mean exceeds the steady-state interval's relative half width
    (an effect that would move the verdict, not only a significant one) or :data:`DRIFT_DECISIVE` (a trend: a
    diverging simulation's interval is wide enough to contain any model).
    """
    curve = np.asarray(curve, dtype=np.float64)
    iterations = curve.shape[0] - 1
    start = iterations + 1 - int(window)
    unstable = unstable_note(radius)
    needed, source, rho = settling_time(radius, mean_radius)
    half = int(window) // 2
    level = float(np.mean(curve[start:]))
    if not (math.isfinite(level) and level > 0.0):
        return Settlement(settled=False, start_needed=needed, radius_source=source, drift=math.nan,
                          drift_low=math.nan, drift_high=math.nan,
                          note=unstable or "the window's mean MSD is not finite and positive: no steady state")
    notes = []
    settled: bool | None = True
    drift = d_lo = d_hi = math.nan
    if half < 1:
        settled = None
        notes.append("a window of one iteration has no halves to compare")
    else:
        older = curve[start:start + half].mean(axis=0)
        newer = curve[iterations + 1 - half:].mean(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            per_run = (older - newer) / ((older + newer) / 2.0)   # in [-2, 2]; mean 0 when the halves are exchangeable
        per_run = np.where(np.isfinite(per_run), per_run, 0.0)    # a run at 0 in both halves has not moved
        drift, d_lo, d_hi = _interval(per_run, confidence)
        _, lo, hi = _interval(curve[start:].mean(axis=0), confidence)
        width = (hi - lo) / 2.0 / level
        if (d_lo > 0.0 or d_hi < 0.0) and abs(drift) > min(width, DRIFT_DECISIVE):
            settled = False
            notes.append(f"the window's older half lies {'above' if drift > 0 else 'below'} its newer half by "
                         f"{100 * abs(drift):.3g} % of their mean [{100 * d_lo:.3g}, {100 * d_hi:.3g}] %, more than "
                         + (f"the interval's half width ({100 * width:.3g} %)" if width <= DRIFT_DECISIVE else
                            f"{100 * DRIFT_DECISIVE:g} % (a trend, whatever the interval's width)"))
    if unstable is not None:
        settled = False
        notes.insert(0, unstable)
    if needed is not None and start < needed:
        settled = False
        notes.insert(0, settling_note(start, needed, source, rho))
    if settled is True and source != "rho(F)":
        settled = None
        notes.append("no drift found, but without rho(F) there is no a-priori settling time "
                     + ("(rho(M)^2 gives only a necessary one, which is met)" if source == "rho(M)^2" else
                        "(the route computes neither rho(F) nor rho(M))"))
    return Settlement(settled=settled, start_needed=needed, radius_source=source, drift=drift, drift_low=d_lo,
                      drift_high=d_hi, note="; ".join(notes))


def _interval(samples: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """Mean and two-sided Student-t interval of i.i.d. samples."""
    from scipy import stats

    k = samples.size
    mean = float(np.mean(samples))
    if k < 2:
        return mean, -math.inf, math.inf
    half = float(stats.t.ppf(0.5 + confidence / 2.0, k - 1)) * float(np.std(samples, ddof=1)) / math.sqrt(k)
    return mean, mean - half, mean + half


def _compare(model: str, analysis, lo: float, hi: float, settled: bool | None = True) -> ModelComparison:
    msd = analysis.msd
    if msd is None:
        note = "; ".join(analysis.notes) or "not mean-square stable at this mu: no steady state"
        return ModelComparison(model=model, msd=None, msd_db=None, agrees=None, gap_db=None, route=analysis.route,
                               note=note)
    value = float(msd)
    if settled is False:
        return ModelComparison(model=model, msd=value, msd_db=_db(value), agrees=None, gap_db=None,
                               route=analysis.route, note="undecided: the simulation has not settled")
    if not lo > 0.0:
        return ModelComparison(model=model, msd=value, msd_db=_db(value), agrees=None, gap_db=None,
                               route=analysis.route, note="undecided: the simulated interval reaches 0 (too few runs "
                                                          "for the runs' spread: more runs)")
    if lo <= value <= hi:
        gap = 0.0
    elif value > hi:
        gap = _db(value) - _db(hi)
    else:
        gap = _db(value) - _db(lo) if lo > 0 else 0.0
    return ModelComparison(model=model, msd=value, msd_db=_db(value), agrees=bool(gap == 0.0), gap_db=float(gap),
                           route=analysis.route)


def theory_vs_simulation(instance: PAOFedInstance, runs: int, *, rng: np.random.Generator | int,
                         iterations: int | None = None, window: int | None = None, models=("seed", "exact"),
                         simulator: str = "faithful", confidence: float = 0.95, method: str = "auto",
                         transient: bool = True, analyses: dict | None = None,
                         mean_radius: float | None = None) -> TheoryVsSimulation:
    r"""Simulate ``instance`` ``runs`` times and set the simulated steady-state MSD beside each model's theory.

    Parameters
    ----------
    instance : PAOFedInstance
    runs : int
        Monte-Carlo runs (>= 2 for an interval).
    rng : numpy.random.Generator or int
        The simulation's randomness (an int seeds ``numpy.random.default_rng``).
    iterations : int, optional
        Iterations per run; default :func:`default_iterations` of the largest :math:`\rho(\mathcal F)` of the models.
    window : int, optional
        The last ``window`` iterations are averaged per run (default: the second half).
    models : tuple of str
        Any of ``"seed"``, ``"exact"``.
    simulator : {"faithful", "analysis"}
    confidence : float
        Two-sided level in (0, 1) of the steady-state interval and of the figure's band.
    method : str
        The theory route (:func:`theory.msd.routes.mean_square_analysis`).
    transient : bool
        Also each model's theoretical MSD_n for the figure (for ``N <=`` :data:`TRANSIENT_MAX_N`).
    analyses : dict, optional
        Model -> an already computed :class:`theory.msd.routes.MeanSquareAnalysis` (the CLI has them).
    mean_radius : float, optional
        :math:`\rho(\mathcal M)` at mu (``fedcheck msd``'s report has it): the a-priori test of :func:`settlement`
        when no model's :math:`\rho(\mathcal F)` is known.

    Returns
    -------
    TheoryVsSimulation

    Raises
    ------
    ValueError
        On a bad argument (named, with its allowed range).
    """
    from theory.msd.routes import mean_square_analysis
    from theory.msd.structured import msd_transient

    if not isinstance(instance, PAOFedInstance):
        raise TypeError(f"instance must be a PAOFedInstance, got {type(instance).__name__}")
    if isinstance(runs, bool) or not isinstance(runs, (int, np.integer)) or runs < 2:
        raise ValueError(f"runs must be an integer >= 2, got {runs!r}")
    if simulator not in SIMULATORS:
        raise ValueError(f"simulator must be one of {', '.join(SIMULATORS)}, got {simulator!r}")
    if not (isinstance(confidence, float) and 0.0 < confidence < 1.0):
        raise ValueError(f"confidence must be a real in (0, 1), got {confidence!r}")
    if mean_radius is not None and (isinstance(mean_radius, bool) or not isinstance(mean_radius, (int, float))
                                    or not (math.isfinite(mean_radius) and mean_radius >= 0.0)):
        raise ValueError(f"mean_radius must be None or a finite real >= 0 (rho(M) at mu), got {mean_radius!r}")
    models = tuple(models)
    if not models or any(m not in ("seed", "exact") for m in models):
        raise ValueError(f"models must be a non-empty tuple of 'seed' / 'exact', got {models!r}")
    seed = None
    if not isinstance(rng, np.random.Generator):
        if isinstance(rng, bool) or not isinstance(rng, (int, np.integer)) or rng < 0:
            raise ValueError(f"rng must be a numpy.random.Generator or an integer seed >= 0, got {rng!r}")
        seed, rng = int(rng), np.random.default_rng(int(rng))
    analyses = dict(analyses or {})
    for model in models:
        if model not in analyses:
            analyses[model] = mean_square_analysis(instance, model, route=method)
    largest, exact_rho = model_radii(analyses)
    if iterations is None:
        iterations = default_iterations(largest)
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 2:
        raise ValueError(f"iterations must be an integer >= 2, got {iterations!r}")
    iterations = int(iterations)
    window = iterations // 2 if window is None else window
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or not 1 <= window <= iterations:
        raise ValueError(f"window must be an integer in [1, iterations = {iterations}], got {window!r}")
    if simulator == "faithful":
        curve = run_faithful(instance, iterations, rng, runs=int(runs)).curve
    else:
        curve = run_analysis_model(instance, iterations, rng, runs=int(runs)).msd
    samples = time_average(curve, iterations + 1 - int(window))
    mean, lo, hi = _interval(samples, confidence)
    settled = settlement(curve, int(window), confidence, radius=exact_rho, mean_radius=mean_radius)
    comparisons = tuple(_compare(model, analyses[model], lo, hi, settled.settled) for model in models)
    # the figure: mean curve and pointwise band over runs
    from scipy import stats

    t = float(stats.t.ppf(0.5 + confidence / 2.0, int(runs) - 1))
    cm = curve.mean(axis=1)
    half = t * curve.std(axis=1, ddof=1) / math.sqrt(int(runs))
    with np.errstate(divide="ignore", invalid="ignore"):
        low = np.where(cm - half > 0, 10.0 * np.log10(np.maximum(cm - half, 1e-300)), np.nan)
        curve_db = 10.0 * np.log10(cm)
        high = 10.0 * np.log10(cm + half)
    trans = {}
    if transient and instance.n_blocks * instance.D <= TRANSIENT_MAX_N:
        for c in comparisons:
            if c.msd is not None:
                with np.errstate(divide="ignore"):
                    trans[c.model] = 10.0 * np.log10(msd_transient(instance, iterations, c.model))
    return TheoryVsSimulation(
        simulator=simulator, runs=int(runs), iterations=iterations, window=int(window), confidence=confidence,
        seed=seed, simulated_msd=mean, simulated_low=lo, simulated_high=hi, simulated_db=_db(mean),
        simulated_low_db=_db(lo), simulated_high_db=_db(hi), models=comparisons, n=np.arange(iterations + 1),
        curve_db=curve_db, band_low_db=low, band_high_db=high, transient_db=trans, settlement=settled)
