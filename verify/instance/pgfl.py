r"""PGFL (seeds 000/003, thesis ch. 5; ``docs/papers/pgfl.md``) on a user's instance.

Parts of the :class:`~verify.instance.UserInstance`: ``problem`` (:class:`theory.pgfl.PGFLProblem`: the server graph,
the clients, their clusters and data), ``config`` (:class:`reference_impl.pgfl.PGFLConfig`: rho, the tau schedule,
Algorithm 1 or 2 and the privacy schedule) and ``setup``. Settings: ``iterations`` (N), ``seed``.

Evaluated:

* Theorem I's hypothesis on rho: the spectral radius :math:`r(T)` of the :math:`\tau = 0` iteration at the configured
  rho (:func:`theory.pgfl.stability.iteration_radius`) must be below 1 (the step :math:`1/\rho` small enough); the
  corrected Theorem I (linear convergence at rate :math:`r(T)` to the fixed point (Pc)) with, under ``--simulate``,
  a run of the :math:`\tau = 0` iteration to (Pc); Theorem I as printed ((Pc) is the cluster optimum (Pa));
* Theorem II as printed, :math:`D_n \le B_n = \eta(1 - \prod_{j\le n}(1 - \tau^{(j)}))`, on a short pair of coupled
  runs (``--simulate``), and its corrected limit :math:`\lim D_n = D_\infty` (the squared gap of the two fixed points)
  where the dense fixed point is affordable;
* Algorithm 2's privacy: Lemma 1's sensitivity :math:`2C_k/(\rho D_k)` (it needs :math:`C_k` to bound every
  per-sample gradient), Theorem III's per-release zCDP and Theorem IV's total
  :math:`\phi^{(0)}(\zeta^{-N} - 1)/(1 - \zeta)` against the composition of the releases, with the
  :math:`(\varepsilon, \delta)` conversion (Bun-Steinke) at :data:`REPORT_DELTA`.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from verify.instance._common import conclude, default_reason, memo, not_applicable
from verify.instance.records import Evaluation, Hypothesis

__all__ = ["EVALUATORS", "FIXED_POINT_RTOL", "REPORT_DELTA", "SIMULATION_MAX_ITERATIONS", "not_evaluable"]

EVALUATORS: dict = {}
#: The delta at which the zCDP totals are converted to (epsilon, delta) for the report (the configuration has none).
REPORT_DELTA = 1e-5
#: Longest tau = 0 run of the simulation claim (beyond it the claim says so).
SIMULATION_MAX_ITERATIONS = 5000
#: Relative distance of the simulated server models from (Pc) at which the run has reached it.
FIXED_POINT_RTOL = 1e-6
#: Largest state dimension S Q d + K d for which the dense fixed point of a tau > 0 iteration is solved.
DENSE_MAX_STATE = 2500

_REASONS = {
    "pgfl.privacy_on_algorithm": "compares the noise each running client releases with its calibration over the "
                                 "project's instances; `fedcheck run pgfl` with algorithm.name = 'alg2' runs the "
                                 "configured algorithm",
}


def not_evaluable(claim, user) -> str:
    """Why ``claim`` is not evaluated on ``user``."""
    return default_reason(claim, _REASONS)


def _register(claim_id):
    from verify.instance._common import evaluates

    return evaluates(EVALUATORS, claim_id)


def _tau0(user):
    return dataclasses.replace(user.parts["config"], taus=(0.0,))


def _radius(user) -> float:
    def compute():
        from theory.pgfl.stability import iteration_radius

        return float(iteration_radius(user.parts["problem"], _tau0(user)))

    return memo(user, "pgfl.radius", compute)


def _radius_hyp(user) -> Hypothesis:
    config, problem = user.parts["config"], user.parts["problem"]
    r = _radius(user)
    return Hypothesis(name="r(T) of the tau = 0 iteration", value=r,
                      allowed=f"< 1 (Theorem I's 'rho large enough'; rho = {config.rho:.6g} = "
                              f"{config.rho / problem.max_curvature:.4g} L_max)", met=r < 1.0)


def _fixed_point(user):
    def compute():
        from theory.pgfl.consensus import fixed_point_state

        return fixed_point_state(user.parts["problem"], _tau0(user))

    return memo(user, "pgfl.fixed_point", compute)


@_register("pgfl.theorem1_fixed_point")
def theorem1_fixed_point(user, options) -> Evaluation:
    """Corrected Theorem I: with r(T) < 1 the tau = 0 iteration converges linearly at rate r(T) to (Pc)."""
    from verify.pgfl._tau0_iteration import relative_distance

    hyp = _radius_hyp(user)
    r = hyp.value
    if not hyp.met:
        return conclude((hyp,), holds=None, summary=f"the tau = 0 iteration diverges at this rho (r(T) = {r:.6g}): "
                                                    "the step 1/rho is too large; increase algorithm.rho")
    config = user.parts["config"]
    why = ("--no-simulate" if not options.simulate else "Algorithm 2 releases noise; the claim is of the noise-free "
           "map" if config.algorithm == "alg2" else "client scheduling changes the map" if config.scheduled is not None
           else None)
    if why is not None:
        return conclude((hyp,), holds=True, quantity="r(T)", value=r, bound=1.0,
                        summary=f"r(T) = {r:.6g} < 1: linear convergence to (Pc) at rate r(T) (not simulated: {why})")
    needed = int(math.ceil(math.log(FIXED_POINT_RTOL * 1e-3) / math.log(max(r, 1e-3)))) + 50
    if needed > SIMULATION_MAX_ITERATIONS:
        return conclude((hyp,), holds=True, quantity="r(T)", value=r, bound=1.0,
                        summary=f"r(T) = {r:.6g} < 1; the run to (Pc) would need {needed} iterations, above the "
                                f"check's {SIMULATION_MAX_ITERATIONS} (not simulated)")
    from reference_impl.pgfl import run_pgfl

    problem = user.parts["problem"]
    _, w_star, residual = _fixed_point(user)
    rng = np.random.default_rng(np.random.SeedSequence([options.seed, *b"pgfl.theorem1_fixed_point"]))
    run = run_pgfl(problem, _tau0(user), needed, rng, runs=1)
    dist = relative_distance(run.state.w_servers[0], w_star)
    return conclude((hyp,), holds=dist <= FIXED_POINT_RTOL, quantity="relative distance to (Pc)", value=dist,
                    bound=FIXED_POINT_RTOL,
                    summary=f"r(T) = {r:.6g}; after {needed} iterations (r^N <= {FIXED_POINT_RTOL * 1e-3:g}) the "
                            f"server models are {dist:.3g} (relative) from (Pc)",
                    details={"iterations": needed, "fixed_point_residual": residual, "seed": options.seed})


@_register("pgfl.theorem1")
def theorem1(user, options) -> Evaluation:
    """Theorem I as printed: the tau = 0 iteration converges to the cluster optimum (Pa) of (2)."""
    from reference_impl.pgfl import cluster_optima
    from verify.pgfl._tau0_iteration import relative_distance

    hyp = _radius_hyp(user)
    if not hyp.met:
        return conclude((hyp,), holds=None, summary="the tau = 0 iteration diverges: no limit at all")
    _, w_star, _ = _fixed_point(user)
    gap = relative_distance(w_star, cluster_optima(user.parts["problem"]))
    return conclude((hyp,), holds=gap <= FIXED_POINT_RTOL, quantity="relative distance (Pc) to (Pa)", value=gap,
                    bound=FIXED_POINT_RTOL, summary=f"the limit (Pc) is {gap:.3g} (relative) from the cluster optima "
                                                    f"(Pa) on this instance")


def _taus(config, n: int) -> np.ndarray:
    taus = np.asarray(config.taus, dtype=np.float64)
    return np.concatenate([taus, np.full(max(n - taus.size, 0), taus[-1])])[:n]


@_register("pgfl.theorem2")
def theorem2(user, options) -> Evaluation:
    """Theorem II as printed: D_n <= B_n = eta (1 - prod_{j<=n}(1 - tau^(j))) on coupled runs of the configuration."""
    from reference_impl.pgfl import cluster_optima, eta_cluster_distance
    from verify.pgfl._coupled_runs import gap_sequence

    problem, config = user.parts["problem"], user.parts["config"]
    if not any(t > 0 for t in config.taus):
        return not_applicable("tau = 0 throughout (no inter-cluster learning: D_n = 0)")
    hyp = _radius_hyp(user)
    if not hyp.met:
        return conclude((hyp,), holds=None, summary="Theorem II needs rho large enough")
    if not options.simulate:
        return Evaluation(status="not_evaluable", summary="not evaluated: D_n needs coupled runs (--no-simulate)",
                          hypotheses=(hyp,))
    n = int(user.settings["iterations"])
    D = gap_sequence(problem, config, n, int(options.seed))
    eta = float(eta_cluster_distance(cluster_optima(problem)))
    B = eta * (1.0 - np.cumprod(1.0 - _taus(config, n)))
    worst = int(np.argmax(D - B))
    return conclude((hyp,), holds=bool(np.all(D <= B)), quantity="D_n at the worst n", value=float(D[worst]),
                    bound=float(B[worst]), summary=f"max_n (D_n - B_n) at n = {worst + 1}: D_n = {D[worst]:.6g}, "
                                                   f"B_n = {B[worst]:.6g} (eta = {eta:.6g}, {n} iterations)",
                    details={"iterations": n, "eta": eta, "D_last": float(D[-1]), "seed": options.seed})


@_register("pgfl.theorem2_limit_identity")
def theorem2_limit_identity(user, options) -> Evaluation:
    """Corrected Theorem II: lim D_n = D_inf, the squared gap of the two iterations' fixed points."""
    from verify.pgfl.theorem2_limit import evaluate_limit_identity

    problem, config = user.parts["problem"], user.parts["config"]
    if len(set(config.taus)) != 1 or config.taus[0] == 0.0:
        return not_applicable("the identity is stated for a constant tau > 0")
    if config.algorithm == "alg2" or config.scheduled is not None:
        return not_applicable("the identity is stated for the noise-free iteration with full participation")
    hyp = _radius_hyp(user)
    if not hyp.met:
        return conclude((hyp,), holds=None, summary="the tau = 0 iteration diverges: no limit")
    state = problem.S * problem.n_clusters * problem.d + len(problem.X) * problem.d
    if state > DENSE_MAX_STATE or not options.simulate:
        why = (f"the state dimension S Q d + K d = {state} is above {DENSE_MAX_STATE}, where the dense fixed point of "
               f"the tau > 0 iteration is solved" if state > DENSE_MAX_STATE else "simulations are off (--no-simulate)")
        return Evaluation(status="not_evaluable", summary=f"not evaluated on this instance: {why}", hypotheses=(hyp,))
    try:
        ev = evaluate_limit_identity(int(options.seed), problem.S, float(config.taus[0]),
                                     config.rho / problem.max_curvature, problem=problem)
    except ValueError as exc:
        return conclude((hyp, Hypothesis(name="r of the tau > 0 iteration", value=" ".join(str(exc).split()),
                                         allowed="< 1", met=False)), holds=None, summary="no limit")
    p = ev.parameters
    return conclude((hyp,), holds=ev.holds, quantity="|D_N - D_inf|", value=ev.measured, bound=ev.bound,
                    summary=f"D_inf = {p['D_inf']:.6g} = {p['D_inf_over_eta']:.4g} eta; D_N = {p['D_N']:.6g} after "
                            f"{p['iterations']} iterations")


# ---------------------------------------------------------------------------------------------------- privacy


def _private(user) -> str | None:
    config = user.parts["config"]
    if config.algorithm != "alg2":
        return "algorithm.name = 'alg1' (no privacy noise)"
    return None


def _gradient_hyp(user) -> Hypothesis:
    """Lemma 1 needs C_k to bound every per-sample gradient of the loss."""
    problem, config = user.parts["problem"], user.parts["config"]
    allowed = f"<= privacy.C = {config.C:g} (Lemma 1: C_k bounds every per-sample gradient)"
    if problem.loss != "logistic":
        return Hypothesis(name="per-sample gradient bound", value=f"unbounded ({problem.loss} loss)", allowed=allowed,
                          met=False)
    # logistic: ||(sigma(x^T w) - y) x|| <= ||x|| for every w
    G = max(float(np.max(np.linalg.norm(x, axis=1))) for x in problem.X)
    return Hypothesis(name="per-sample gradient bound max ||x||", value=G, allowed=allowed, met=G <= config.C)


def _sensitivity(user) -> float:
    problem, config = user.parts["problem"], user.parts["config"]
    return 2.0 * config.C / (config.rho * float(np.min(problem.samples)))


def _totals(user) -> tuple[float, float]:
    """(total zCDP of a client over N iterations, epsilon at REPORT_DELTA)."""
    from theory.privacy.composition import zcdp_total_variance_decay
    from theory.privacy.conversions.bun_steinke import zcdp_to_approx_dp_bun_steinke

    config, N = user.parts["config"], int(user.settings["iterations"])
    total = float(zcdp_total_variance_decay(config.phi0, config.zeta, N,
                                            first_release_decayed=config.noise_convention == "I"))
    return total, float(zcdp_to_approx_dp_bun_steinke(total, REPORT_DELTA))


@_register("pgfl.lemma1_upper_bound")
def lemma1_upper_bound(user, options) -> Evaluation:
    """Lemma 1 corrected: ||w - w'|| <= 2 C_k / (rho D_k) when C_k bounds every per-sample gradient."""
    why = _private(user)
    if why is not None:
        return not_applicable(why)
    hyp = _gradient_hyp(user)
    delta = _sensitivity(user)
    return conclude((hyp,), holds=True, quantity="max_k 2 C_k / (rho D_k)", value=delta,
                    summary=f"sensitivity bound 2 C / (rho min_k D_k) = {delta:.6g}")


@_register("pgfl.theorem3")
def theorem3(user, options) -> Evaluation:
    """Theorem III: noise variance Delta^2/(2 phi) makes each release phi-zCDP (Delta of Lemma 1)."""
    why = _private(user)
    if why is not None:
        return not_applicable(why)
    config, N = user.parts["config"], int(user.settings["iterations"])
    hyp = _gradient_hyp(user)
    total, eps = _totals(user)
    last = config.phi0 * config.zeta ** -(N if config.noise_convention == "I" else N - 1)
    return conclude((hyp,), holds=True, quantity="total zCDP over N iterations", value=total,
                    summary=f"per-release phi from {config.phi0:g} to {last:.6g} (zeta = {config.zeta:g}, convention "
                            f"{config.noise_convention}); total {total:.6g}-zCDP over N = {N} iterations, i.e. "
                            f"({eps:.6g}, {REPORT_DELTA:g})-DP (Bun-Steinke)",
                    details={"sensitivity": _sensitivity(user), "epsilon": eps, "delta": REPORT_DELTA})


@_register("pgfl.theorem4.total_closed_form")
def theorem4_total(user, options) -> Evaluation:
    """Theorem IV: the total is phi0 (zeta^-N - 1)/(1 - zeta), against the composition of the N releases."""
    why = _private(user)
    if why is not None:
        return not_applicable(why)
    config, N = user.parts["config"], int(user.settings["iterations"])
    if config.noise_convention != "I":
        return not_applicable("privacy.convention = 'II' (the closed form is of the stated schedule, release n at "
                              "zeta^n delta2(0): convention 'I'); its total is under pgfl.theorem3")
    if config.zeta == 1.0:
        return not_applicable("privacy.zeta = 1 (constant noise: the total is N phi0)")
    from verify.pgfl.theorem4_total import evaluate_total_closed_form

    ev = evaluate_total_closed_form(config.phi0, config.zeta, N, _sensitivity(user))
    _, eps = _totals(user)
    return Evaluation(status="holds" if ev.holds else "violated", quantity="relative gap / rounding allowance",
                      value=ev.measured, bound=1.0,
                      summary=f"closed form {ev.parameters['closed_form']:.6g} against the composed "
                              f"{ev.parameters['composed']:.6g}-zCDP (epsilon {eps:.6g} at delta = {REPORT_DELTA:g})")
