r"""zCDP-NFL (thesis ch. 3 / Publication 2; ``docs/papers/zcdp_nfl.md``) on a user's instance.

Parts of the :class:`~verify.instance.UserInstance`: ``problem`` (:class:`reference_impl.zcdp_nfl.NFLProblem`: the
graph, the data, the objective) and ``config`` (:class:`reference_impl.zcdp_nfl.NFLConfig`: rho, the step and the
privacy schedules). Settings: ``iterations`` (T), ``method``.

Evaluated: Lemma I's sensitivity bound and Theorem I's per-release zCDP at the configured calibration (both need
Assumption 1, a per-sample gradient bound at most the calibration's :math:`c_1`), the accounted totals against the
Corollary's closed form :math:`\Phi = \phi^{(1)}(1-\tau^T)/(\tau^{T-1}-\tau^T)` and
:math:`\varepsilon = \Phi + 2\sqrt{\Phi\log(1/\delta)}` (schedule S2), and the Corollary proof's printed sum range.
"""

from __future__ import annotations

import math

import numpy as np

from verify.instance._common import conclude, default_reason, not_applicable
from verify.instance.records import Evaluation, Hypothesis

__all__ = ["EVALUATORS", "not_evaluable"]

EVALUATORS: dict = {}

_REASONS = {
    "zcdp_nfl.theorem2_bound_corrected": "the corrected bound (19) is an expectation over the noise at the optimum w*; "
                                         "`fedcheck report --only zcdp_nfl.theorem2_bound_corrected` decides it over "
                                         "the paper's instances",
    "zcdp_nfl.constant_step_conditions": "linear convergence to w_c is decided from long noise-free runs over the "
                                         "paper's instances; `fedcheck run zcdp-nfl` with privacy.schedule = 'none' "
                                         "shows the configured run's error curve",
}
#: Rows normalised to ||x|| = 1 carry a few ulps of rounding: a gradient bound within 8 eps of c1 is c1.
_ULPS = 8.0 * float(np.finfo(float).eps)


def not_evaluable(claim, user) -> str:
    """Why ``claim`` is not evaluated on ``user``."""
    return default_reason(claim, _REASONS)


def _register(claim_id):
    from verify.instance._common import evaluates

    return evaluates(EVALUATORS, claim_id)


def _privacy_set_up(user):
    """None when the privacy claims apply, else the reason they do not."""
    config, method = user.parts["config"], user.settings.get("method", "zcdp_nfl")
    if config.privacy.kind == "none":
        return "privacy.schedule = 'none' (no noise is released)"
    if method not in ("zcdp_nfl", "p_admm"):
        return f"algorithm.method = {method!r} is a reconstructed baseline with its own calibration"
    return None


def _assumption1(user) -> tuple[Hypothesis, float]:
    """Assumption 1 at the calibration: the per-sample gradient bound G of the problem against c1; (hypothesis, G)."""
    problem, c1 = user.parts["problem"], user.parts["config"].privacy.c1
    G = problem.gradient_bound
    if G is None:
        return Hypothesis(name="per-sample gradient bound G", value="unbounded (squared loss without model.clip)",
                          allowed=f"<= privacy.c1 = {c1:g} (Assumption 1)", met=False), math.inf
    return Hypothesis(name="per-sample gradient bound G", value=float(G),
                      allowed=f"<= privacy.c1 = {c1:g} (Assumption 1)", met=G <= c1 * (1.0 + _ULPS)), float(G)


def _budgets(user) -> np.ndarray:
    problem, config = user.parts["problem"], user.parts["config"]
    etas = config.step.etas(int(user.settings["iterations"]))
    return config.privacy.budgets(problem, config.rho, etas)


@_register("zcdp_nfl.lemma1")
def lemma1(user, options) -> Evaluation:
    """Lemma I: the primal update's sensitivity is at most 2 c1 / (M_k (2 rho |N_k| + 1/eta^(n)))."""
    why = _privacy_set_up(user)
    if why is not None:
        return not_applicable(why)
    problem, config = user.parts["problem"], user.parts["config"]
    hyp, G = _assumption1(user)
    etas = config.step.etas(int(user.settings["iterations"]))
    calibrated = float(np.max(config.privacy.sensitivities(problem, config.rho, etas)))
    actual = calibrated * G / config.privacy.c1
    return conclude((hyp,), holds=True, quantity="max_k,n Delta_k(n)", value=actual, bound=calibrated,
                    summary=f"Lemma I's bound with c1 = {config.privacy.c1:g}: max_k,n Delta_k(n) = {calibrated:.6g}"
                            + ("" if hyp.met else f"; with the data's G the sensitivity can reach {actual:.6g}"))


@_register("zcdp_nfl.theorem1")
def theorem1(user, options) -> Evaluation:
    """Theorem I: each release with sigma^2 = Delta^2 / (2 phi) is phi-zCDP; the accounted total is a guarantee."""
    from theory.privacy.conversions import zcdp_to_approx_dp_bun_steinke

    why = _privacy_set_up(user)
    if why is not None:
        return not_applicable(why)
    config = user.parts["config"]
    hyp, G = _assumption1(user)
    accounted = float(np.max(_budgets(user).sum(axis=0)))
    real = accounted * (G / config.privacy.c1) ** 2  # the releases' zCDP with the data's sensitivity
    eps = zcdp_to_approx_dp_bun_steinke(accounted, config.privacy.delta)
    return conclude((hyp,), holds=real <= accounted * (1.0 + _ULPS), quantity="total zCDP max_k sum_n phi_k(n)",
                    value=real, bound=accounted,
                    summary=f"accounted total zCDP {accounted:.6g} (epsilon {eps:.6g} at delta = "
                            f"{config.privacy.delta:g})" + ("" if hyp.met else
                                                              f"; the releases are only {real:.6g}-zCDP"))


@_register("zcdp_nfl.corollary")
def corollary(user, options) -> Evaluation:
    """Corollary (corrected range): schedule S2's accounted total is Phi = phi1 (1 - tau^T)/(tau^(T-1) - tau^T)."""
    from theory.privacy.conversions import zcdp_to_approx_dp_bun_steinke
    from verify.tolerance import gamma, relative_gap
    from verify.zcdp_nfl.corollary_total import corollary_total

    why = _privacy_set_up(user)
    if why is not None:
        return not_applicable(why)
    config, T = user.parts["config"], int(user.settings["iterations"])
    if config.privacy.kind != "S2":
        return not_applicable(f"privacy.schedule = {config.privacy.kind!r} (the Corollary is about S2: "
                              f"phi(n) = phi1 tau^-(n-1))")
    p = config.privacy
    closed = float(corollary_total(p.phi1, p.tau, T))
    accounted = float(np.max(_budgets(user).sum(axis=0)))
    gap = float(relative_gap(accounted, closed))
    allowance = gamma(4 * T + 64)
    eps = zcdp_to_approx_dp_bun_steinke(closed, p.delta)
    return conclude((), holds=gap <= allowance, quantity="relative gap accounted / closed form", value=gap,
                    bound=allowance, summary=f"Phi = {closed:.6g} (closed form), accounted {accounted:.6g}; epsilon = "
                                             f"{eps:.6g} at delta = {p.delta:g}")


@_register("zcdp_nfl.corollary_sum_range")
def corollary_sum_range(user, options) -> Evaluation:
    """The Corollary proof's printed range 0 < n < T against the closed form, at the configured phi1, tau, T."""
    from verify.zcdp_nfl.corollary_total import evaluate_sum_range

    why = _privacy_set_up(user)
    if why is not None:
        return not_applicable(why)
    p, T = user.parts["config"].privacy, int(user.settings["iterations"])
    if p.kind != "S2":
        return not_applicable(f"privacy.schedule = {p.kind!r} (the Corollary is about S2)")
    ev = evaluate_sum_range(p.phi1, p.tau, T)
    printed, closed = ev.parameters["sum_over_0_lt_n_lt_T"], ev.parameters["closed_form"]
    return Evaluation(status="holds" if ev.holds else "violated", quantity="relative gap", value=ev.measured,
                      bound=ev.bound, summary=f"the printed sum over 0 < n < T is {printed:.6g} against the closed "
                                              f"form {closed:.6g}")
