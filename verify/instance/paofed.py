r"""PAO-Fed (thesis ch. 4; ``docs/papers/paofed.md``) on a user's instance.

Parts of the :class:`~verify.instance.UserInstance`: ``instance`` (a :class:`theory.msd.PAOFedInstance`, or None
when the configuration simulates the nonlinear RFF data) and ``simulation`` (``(env, config, data)`` of the
configured algorithm, for the simulation claim). Settings: ``iterations``, ``runs``, ``algorithm``.

Evaluated: Theorem 1 (mean convergence, ch. (4.22)) and its corrected sufficiency form, Theorem 2 (mean-square
stability, ch. (4.31)), its corrected form for the truncated :math:`\mathcal F` and the real system's own threshold,
and, with simulations, that the steady-state MSD (4.34) of the exact :math:`\mathcal F` is conservative for the
algorithm as configured. Every other claim is an experiment on the paper's data or a statement about the closed
forms themselves.
"""

from __future__ import annotations

import math

import numpy as np

from verify.instance._common import conclude, default_reason, memo, not_applicable
from verify.instance.records import Evaluation, Hypothesis, NotConvergedOnInstance

__all__ = ["EVALUATORS", "SIMULATION_MAX_WORK", "not_evaluable"]

EVALUATORS: dict = {}
#: Largest iterations x runs x K x D a check simulates (about ten CPU-seconds); above it the claim says so.
SIMULATION_MAX_WORK = 2e8
#: Smallest number of Monte-Carlo runs of the simulation claim (the configured runs if more).
SIMULATION_MIN_RUNS = 16
#: Failure probability of the simulation claim's one-sided confidence limit.
SIMULATION_ALPHA = 1e-3

_REASONS = {
    "paofed.reference_table": "the regression table of the project's reference instance (docs/papers/paofed.md), not "
                              "of a user's instance",
    "paofed.paper_scale_seed_optimistic": "a comparison at the paper's own scale (K = 256, D = 200, l_max = 10)",
    "paofed.communication_savings": "the paper's m = 4 of D = 200 entries; `fedcheck run paofed` prints the "
                                    "configured savings",
}


def not_evaluable(claim, user) -> str:
    """Why ``claim`` is not evaluated on ``user``."""
    if user.parts.get("instance") is None and not claim.id.startswith("paofed.experiment"):
        return ("the configuration simulates the nonlinear RFF data (data.source = 'synthetic-rff'); the mean and "
                "mean-square analysis is of the linear data model of [instance]")
    return default_reason(claim, _REASONS)


def _register(claim_id):
    from verify.instance._common import evaluates

    return evaluates(EVALUATORS, claim_id)


def _inst(user):
    return user.parts.get("instance")


def _basics(user) -> dict:
    def compute():
        from theory.msd import analysis_moments, expected_server_weight
        from theory.msd.instance import covariance_eigenvalues

        inst = _inst(user)
        m = analysis_moments(inst)
        eig = covariance_eigenvalues(inst.R)
        return {"moments": m, "lambda_max": float(m.lambda_max), "lambda_min": float(np.min(eig)),
                "EB": float(expected_server_weight(m)), "mu": float(inst.mu)}

    return memo(user, "basics", compute)


def _mean_radius(user) -> float:
    def compute():
        from theory.msd.routes import mean_spectral_radius

        return float(mean_spectral_radius(_basics(user)["moments"]))

    return memo(user, "rho_M", compute)


def _route(user) -> str:
    def compute():
        from theory.msd.routes import choose_route

        try:
            return choose_route(_basics(user)["moments"])
        except ValueError as exc:  # beyond the memory budget of every route
            return f"none ({' '.join(str(exc).split())})"

    return memo(user, "route", compute)


def _analysis(user, model: str):
    """``mean_square_analysis`` of ``model`` (None on the classes route, which computes no rho(F))."""
    def compute():
        from theory.msd.routes import mean_square_analysis

        if _route(user) not in ("grouped", "white", "structured", "naive"):
            return None
        try:
            return mean_square_analysis(_basics(user)["moments"], model)
        except ValueError as exc:
            if "converge" in str(exc):
                raise NotConvergedOnInstance(f"mean-square analysis of the {model} model: "
                                             f"{' '.join(str(exc).split())}") from None
            raise

    return memo(user, f"ms_{model}", compute)


def _too_big(user) -> Evaluation:
    b = _basics(user)
    N = b["moments"].N
    return Evaluation(status="not_evaluable", summary=(
        f"not evaluable on this instance: rho(F) of non-white covariances at N = {N} unknowns is not computed (the "
        f"classes route gives the MSD only, route {_route(user)}); `fedcheck msd CONFIG --certify-stability` decides "
        f"the exact model's stability"))


def _mu_hyp(b: dict, factor: float, label: str) -> Hypothesis:
    x = b["mu"] * b["lambda_max"]
    return Hypothesis(name="mu lambda_max", value=x, allowed=f"(0, {factor:g}) ({label})", met=0.0 < x < factor)


def _eb_hyp(b: dict) -> Hypothesis:
    return Hypothesis(name="E[B_n] = 1 - p_m sum_l alpha_l P(K_l nonempty)", value=b["EB"], allowed=">= 0",
                      met=b["EB"] >= 0.0)


def _pd_hyp(b: dict) -> Hypothesis:
    return Hypothesis(name="min_k lambda_min(R_k)", value=b["lambda_min"], allowed="> 0 (R_k positive definite)",
                      met=b["lambda_min"] > 0.0)


@_register("paofed.theorem1")
def theorem1(user, options) -> Evaluation:
    """Theorem 1 as printed: mean convergence iff mu < 2 / lambda_max; on the instance, do both sides agree?"""
    if _inst(user) is None:
        return not_applicable("data.source = 'synthetic-rff' (the analysis is of linear data)")
    b, rho = _basics(user), _mean_radius(user)
    printed = b["mu"] * b["lambda_max"] < 2.0
    agree = printed == (rho < 1.0)
    return Evaluation(status="holds" if agree else "violated", quantity="rho(M(mu))", value=rho, bound=1.0,
                      summary=f"mu lambda_max = {b['mu'] * b['lambda_max']:.4g} is {'inside' if printed else 'outside'}"
                              f" (0, 2) and rho(M(mu)) = {rho:.6g}: the printed 'iff' "
                              f"{'agrees' if agree else 'disagrees'} on this instance")


@_register("paofed.theorem1_sufficient")
def theorem1_sufficient(user, options) -> Evaluation:
    """Corrected Theorem 1: E[B_n] >= 0, R_k > 0 and 0 < mu < 2 / lambda_max give rho(M(mu)) < 1."""
    if _inst(user) is None:
        return not_applicable("data.source = 'synthetic-rff' (the analysis is of linear data)")
    b = _basics(user)
    hyps = (_eb_hyp(b), _pd_hyp(b), _mu_hyp(b, 2.0, "Theorem 1's step-size bound 2 / lambda_max"))
    rho = _mean_radius(user)
    return conclude(hyps, holds=rho < 1.0, quantity="rho(M(mu))", value=rho, bound=1.0,
                    summary=f"rho(M(mu)) = {rho:.6g} (mean convergence needs < 1)")


@_register("paofed.theorem2")
def theorem2(user, options) -> Evaluation:
    """Theorem 2 as printed: mean-square stable iff mu < 1 / lambda_max; on the instance, against rho(F_exact)."""
    if _inst(user) is None:
        return not_applicable("data.source = 'synthetic-rff' (the analysis is of linear data)")
    a = _analysis(user, "exact")
    if a is None:
        return _too_big(user)
    b = _basics(user)
    printed = b["mu"] * b["lambda_max"] < 1.0
    stable = a.spectral_radius < 1.0
    agree = printed == stable
    return Evaluation(status="holds" if agree else "violated", quantity="rho(F_exact)", value=a.spectral_radius,
                      bound=1.0, summary=f"mu lambda_max = {b['mu'] * b['lambda_max']:.4g} is "
                                         f"{'inside' if printed else 'outside'} (0, 1) and rho(F_exact) = "
                                         f"{a.spectral_radius:.6g}: the printed 'iff' "
                                         f"{'agrees' if agree else 'disagrees'} on this instance")


@_register("paofed.theorem2_seed_model")
def theorem2_seed_model(user, options) -> Evaluation:
    """Corrected Theorem 2: E[B_n] >= 0, R_k > 0 and mu < 1 / lambda_max give rho(F_seed) < 1."""
    if _inst(user) is None:
        return not_applicable("data.source = 'synthetic-rff' (the analysis is of linear data)")
    b = _basics(user)
    hyps = (_eb_hyp(b), _pd_hyp(b), _mu_hyp(b, 1.0, "Theorem 2's step-size bound 1 / lambda_max"))
    if not all(h.met for h in hyps):
        return conclude(hyps, holds=None, summary="rho(F_seed) not computed")
    a = _analysis(user, "seed")
    if a is None:
        return _too_big(user)
    return conclude(hyps, holds=a.spectral_radius < 1.0, quantity="rho(F_seed)", value=a.spectral_radius, bound=1.0,
                    summary=f"rho(F_seed) = {a.spectral_radius:.6g} (mean-square stability of the truncated F needs "
                            f"< 1); seed MSD_inf = {_db(a.msd)} dB",
                    details={"route": a.route, "threshold_times_lambda_max": list(a.threshold.scaled())})


def _db(x) -> str:
    return "n/a" if x is None or not x > 0 or not math.isfinite(x) else f"{10.0 * math.log10(x):.4g}"


@_register("paofed.theorem2_exact_threshold")
def theorem2_exact_threshold(user, options) -> Evaluation:
    """The real system is mean-square stable exactly below its own threshold mu*_exact: is the configured mu?"""
    if _inst(user) is None:
        return not_applicable("data.source = 'synthetic-rff' (the analysis is of linear data)")
    a = _analysis(user, "exact")
    if a is None:
        return _too_big(user)
    b = _basics(user)
    lo, hi = a.threshold.scaled()
    x = b["mu"] * b["lambda_max"]
    stable = a.spectral_radius < 1.0
    consistent = stable == (x < hi) or lo <= x <= hi
    hyp = Hypothesis(name="mu lambda_max", value=x, allowed=f"below the certified threshold mu*_exact lambda_max in "
                     f"[{lo:.8g}, {hi:.8g}]", met=stable)
    return conclude((hyp,), holds=consistent, quantity="rho(F_exact)", value=a.spectral_radius, bound=1.0,
                    summary=f"rho(F_exact) = {a.spectral_radius:.6g}; MSD_inf (exact F) = {_db(a.msd)} dB",
                    details={"route": a.route, "threshold_times_lambda_max": [lo, hi],
                             "msd_exact_db": None if a.msd is None or not a.msd > 0 else 10 * math.log10(a.msd)})


@_register("paofed.sim_faithful_gap")
def sim_faithful_gap(user, options) -> Evaluation:
    """With simulations: the configured PAO-Fed's steady-state MSD is at most MSD_inf of the exact F."""
    from scipy import stats

    if _inst(user) is None:
        return not_applicable("data.source = 'synthetic-rff' (the analysis is of linear data)")
    algorithm = user.settings.get("algorithm", "paofed-u1")
    if not str(algorithm).startswith("paofed-"):
        return not_applicable(f"--algorithm {algorithm} is a baseline, not PAO-Fed")
    if not options.simulate:
        return Evaluation(status="not_evaluable", summary="not evaluated: simulations are off (--no-simulate)")
    a = _analysis(user, "exact")
    if a is None:
        return _too_big(user)
    if not a.spectral_radius < 1.0:
        return Evaluation(status="not_applicable", summary="not applicable: the exact model is not mean-square "
                          "stable at this mu (no steady state; see paofed.theorem2_exact_threshold)")
    inst = _inst(user)
    iterations = int(user.settings.get("iterations", 2000))
    runs = max(int(user.settings.get("runs", 1)), SIMULATION_MIN_RUNS)
    work = float(iterations) * runs * inst.K * inst.D
    if work > SIMULATION_MAX_WORK:
        return Evaluation(status="not_evaluable", summary=(
            f"not evaluated on this instance: the simulation (iterations x runs x K x D = {work:.3g}) is above the "
            f"check's budget {SIMULATION_MAX_WORK:.0e}; compare `fedcheck run paofed` with `fedcheck msd`"))
    from reference_impl.paofed import run_paofed

    env, config, data = user.parts["simulation"]
    rng = np.random.default_rng(np.random.SeedSequence([options.seed, *b"paofed.sim_faithful_gap"]))
    result = run_paofed(env, config, data, iterations, rng, runs=runs)
    curve = np.asarray(result.curve, dtype=np.float64)
    # A run still in its transient lies above its steady state: it would show a violation that is not there.
    from reference_impl.paofed.theory_vs_simulation import settlement

    st = settlement(curve, iterations + 1 - iterations // 2, 0.95, radius=a.spectral_radius)
    if st.settled is False:
        need = 2 * st.start_needed if st.start_needed is not None else 2 * iterations
        return Evaluation(status="not_evaluable", summary=(
            f"not evaluated: the simulation has not settled ({st.note}); set simulation.iterations to at least "
            f"{need} (about {need / iterations:.3g} times the cost)"),
            details={"runs": runs, "iterations": iterations, "start_needed": st.start_needed, "drift": st.drift,
                     "drift_interval": [st.drift_low, st.drift_high], "seed": options.seed})
    per_run = np.mean(curve[iterations // 2:], axis=0)  # (R,)
    steady = float(np.mean(per_run))
    sd = float(np.std(per_run, ddof=1))
    lower = steady - stats.t.ppf(1.0 - SIMULATION_ALPHA, per_run.size - 1) * sd / math.sqrt(per_run.size)
    bound = float(a.msd)
    return Evaluation(status="holds" if lower <= bound else "violated", quantity="steady-state MSD (lower "
                      "confidence limit)", value=lower, bound=bound,
                      summary=f"simulated steady-state MSD {_db(steady)} dB ({runs} runs, n = {iterations // 2}.."
                              f"{iterations}; lower {100 * (1 - SIMULATION_ALPHA):g} % limit {_db(lower)} dB) against "
                              f"MSD_inf of the exact F {_db(bound)} dB",
                      details={"runs": runs, "iterations": iterations, "alpha": SIMULATION_ALPHA,
                               "seed": options.seed})

