r"""NPFL-RL (thesis ch. 6 / Publication 7; ``docs/papers/npfl_rl.md``) on a user's instance.

Parts of the :class:`~verify.instance.UserInstance`: ``problem`` (:class:`reference_impl.npfl_rl.NPFLProblem`, the
first replicate's instance of the configured generator), ``draws`` (the generator's ``w0`` and ``deltas``),
``config`` (:class:`reference_impl.npfl_rl.NPFLConfig`) and ``setup``. Settings: ``iterations`` (N), ``seed``,
``delta_kind``.

Evaluated:

* Assumption 1 (:math:`\lVert w^\star_q - w^\star_r\rVert^2 \le \eta`) with the generator's closed form
  :math:`\eta = (\max_q\delta_q - \min_q\delta_q)^2\lVert w_0\rVert^2` (:func:`theory.npfl_rl.assumption1_eta`)
  against the configured instance's cluster models;
* the closed form (6.11) and the dual update (6.6) in their corrected forms (the configuration may select the
  printed erratum modes, which are hypotheses not met);
* well-posedness of every primal step (:math:`\lambda_{\min}(H_k + (c_k + \omega_k a)I) > 0`): guaranteed by
  projecting :math:`\tau` and the SAC candidates onto :math:`[0, \tau_{\max}]`; with ``--simulate`` a short run
  counts the ill-posed evaluations (and, unprojected, shows the printed Algorithm 6's breaches);
* the SAC controller's step bound :math:`|\Delta\tau| \le \delta\nu/2` per inner step on a short run;
* for fixed :math:`\tau`, convergence of NPFL to the coupled (Nash) fixed point on a run of at most
  :data:`FIXED_POINT_ITERATIONS` iterations.
"""

from __future__ import annotations

import numpy as np

from verify.instance._common import conclude, default_reason, memo, not_applicable
from verify.instance.records import Evaluation, Hypothesis

__all__ = ["EVALUATORS", "FIXED_POINT_ITERATIONS", "SHORT_RUN_ITERATIONS", "not_evaluable"]

EVALUATORS: dict = {}
#: Iterations of the check's short run (the configured N if smaller).
SHORT_RUN_ITERATIONS = 100
#: Iterations of the fixed-tau run to the coupled fixed point (the claim's own check uses 2000).
FIXED_POINT_ITERATIONS = 2000

_REASONS: dict[str, str] = {}


def not_evaluable(claim, user) -> str:
    """Why ``claim`` is not evaluated on ``user``."""
    return default_reason(claim, _REASONS)


def _register(claim_id):
    from verify.instance._common import evaluates

    return evaluates(EVALUATORS, claim_id)


def _npfl(user) -> str | None:
    config = user.parts["config"]
    if config.algorithm != "npfl":
        return "algorithm.algorithm = 'nfl' (the single-model baseline, no inter-cluster term)"
    return None


def _corrected_hyps(user) -> list[Hypothesis]:
    config = user.parts["config"]
    return [Hypothesis(name="algorithm.diagonal", value=config.diagonal,
                       allowed="'corrected' (rho |N_k cap C_q| in (6.11); 'printed' is the erratum mode)",
                       met=config.diagonal == "corrected"),
            Hypothesis(name="algorithm.dual_sign", value=config.dual_sign,
                       allowed="'corrected' (w_k - w_l in (6.6); 'printed' is the erratum mode, it diverges)",
                       met=config.dual_sign == "corrected")]


def _short_run(user, options):
    """One run of the configured algorithm for min(N, SHORT_RUN_ITERATIONS) iterations (seeded from the options)."""
    def compute():
        from reference_impl.npfl_rl import run_npfl

        n = min(int(user.settings["iterations"]), SHORT_RUN_ITERATIONS)
        rng = np.random.default_rng(np.random.SeedSequence([options.seed, *b"npfl_rl.short_run"]))
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return run_npfl(user.parts["problem"], user.parts["config"], n, rng)

    return memo(user, f"npfl.short_run.{options.seed}", compute)


@_register("npfl_rl.assumption1_eta")
def assumption1_eta(user, options) -> Evaluation:
    """Assumption 1 with eta = (max delta_q - min delta_q)^2 ||w_0||^2 on the configured generator's models."""
    from theory.npfl_rl import assumption1_eta as eta_of
    from verify.tolerance import NPFL_ETA_RTOL

    if user.settings.get("delta_kind", "scalar") != "scalar":
        return not_applicable("instance.delta_kind = 'elementwise' (the closed form is for scalar delta_q)")
    problem, draws = user.parts["problem"], user.parts["draws"]
    W = problem.true_models
    largest = float(np.max(np.sum((W[:, None, :] - W[None, :, :]) ** 2, axis=-1)))
    eta = float(eta_of(draws["w0"], draws["deltas"]))
    rel = abs(eta - largest) / max(largest, 1e-300)
    return Evaluation(status="holds" if rel <= NPFL_ETA_RTOL else "violated", quantity="relative gap to the largest "
                      "pairwise ||w_q - w_r||^2", value=rel, bound=NPFL_ETA_RTOL,
                      summary=f"eta = {eta:.6g} against max_q,r ||w_q - w_r||^2 = {largest:.6g} on the configured "
                              f"instance (Assumption 1 holds with this eta and no smaller)")


@_register("npfl_rl.closed_form")
def closed_form(user, options) -> Evaluation:
    """Closed form (6.11), corrected: the configuration must use the corrected diagonal rho |N_k cap C_q|."""
    why = _npfl(user)
    if why is not None:
        return not_applicable(why)
    config = user.parts["config"]
    hyp = _corrected_hyps(user)[0]
    return conclude((hyp,), holds=True, summary=f"the primal step is the corrected (6.11) at rho = {config.rho:g}")


@_register("npfl_rl.convergence_tau0")
def convergence_tau0(user, options) -> Evaluation:
    """The dual update must be the corrected (6.6) (w_k - w_l); the printed sign diverges."""
    why = _npfl(user)
    if why is not None:
        return not_applicable(why)
    hyp = _corrected_hyps(user)[1]
    return conclude((hyp,), holds=True, summary="the dual update is the corrected (6.6)")


def _well_posed_hyps(user) -> list[Hypothesis]:
    config = user.parts["config"]
    hyps = [Hypothesis(name="algorithm.projection", value=config.projection,
                       allowed="true (tau projected onto [0, tau_max] after every inner step)", met=config.projection),
            Hypothesis(name="algorithm.tau0", value=config.tau0, allowed=f"[0, tau_max = {config.tau_max:g}]",
                       met=0.0 <= config.tau0 <= config.tau_max)]
    if config.policy == "sac":
        hyps.append(Hypothesis(name="algorithm.clip_candidates", value=config.clip_candidates,
                               allowed="true with policy 'sac' (the candidate tau + alpha projected too; else "
                                       "t + alpha < -c_k/omega_k is evaluated when t is near 0)",
                               met=config.clip_candidates))
    return hyps


@_register("npfl_rl.well_posed")
def well_posed(user, options) -> Evaluation:
    """With tau and the SAC candidates projected onto [0, tau_max], every primal step is well posed."""
    why = _npfl(user)
    if why is not None:
        return not_applicable(why)
    config = user.parts["config"]
    if config.policy == "fixed":
        hyp = Hypothesis(name="algorithm.tau0", value=config.tau0, allowed=">= 0 (fixed tau)", met=config.tau0 >= 0)
        return conclude((hyp,), holds=True, summary="fixed tau >= 0: c_k + omega_k tau > 0 at every primal step")
    hyps = _well_posed_hyps(user)
    if not all(h.met for h in hyps):
        return conclude(hyps, holds=None, summary="some primal steps may be evaluated at an indefinite matrix")
    if not options.simulate:
        return conclude(hyps, holds=True, summary="every evaluated tau lies in [0, tau_max]: c_k + omega_k a > 0 (not "
                                                  "simulated: --no-simulate)")
    run = _short_run(user, options)
    ill = int(run.ill_posed[0])
    return conclude(hyps, holds=ill == 0, quantity="ill-posed evaluations", value=float(ill), bound=0.0,
                    summary=f"{ill} ill-posed evaluations in a run of {run.iterations} iterations (smallest shift "
                            f"c_k + omega_k a = {float(run.min_shift[0]):.3g})",
                    details={"iterations": run.iterations, "seed": options.seed})


@_register("npfl_rl.well_posed_unprojected")
def well_posed_unprojected(user, options) -> Evaluation:
    """Algorithm 6 as printed (no constraint on tau): on the configured run, are all primal steps well posed?"""
    why = _npfl(user)
    if why is not None:
        return not_applicable(why)
    config = user.parts["config"]
    if config.policy == "fixed" or (config.projection and (config.policy != "sac" or config.clip_candidates)):
        return not_applicable("the configuration projects tau (and the SAC candidates): the corrected statement "
                              "npfl_rl.well_posed applies")
    if not options.simulate:
        return Evaluation(status="not_evaluable", summary="not evaluated: the claim needs a run (--no-simulate)")
    run = _short_run(user, options)
    ill = int(run.ill_posed[0])
    return Evaluation(status="holds" if ill == 0 else "violated", quantity="ill-posed evaluations", value=float(ill),
                      bound=0.0, summary=f"{ill} ill-posed evaluations in a run of {run.iterations} iterations "
                                         f"(smallest shift {float(run.min_shift[0]):.3g})")


@_register("npfl_rl.sac_step")
def sac_step(user, options) -> Evaluation:
    """SAC moves tau by at most delta nu / 2 per inner step (before projection) on a short run."""
    why = _npfl(user)
    if why is not None:
        return not_applicable(why)
    config = user.parts["config"]
    if config.policy != "sac":
        return not_applicable(f"algorithm.policy = {config.policy!r} (the claim is about the SAC controller)")
    bound = config.delta * config.nu / 2.0
    if not options.simulate:
        return Evaluation(status="not_evaluable", summary=f"not evaluated: the step bound delta nu / 2 = {bound:.6g} "
                                                          "is checked on a run (--no-simulate)")
    run = _short_run(user, options)
    step = float(run.max_inner_step)
    eps = float(np.finfo(float).eps)
    return Evaluation(status="holds" if step <= bound * (1.0 + 4 * eps) else "violated",
                      quantity="largest inner step |Delta tau|", value=step, bound=bound,
                      summary=f"largest inner step {step:.6g} in {run.iterations} iterations against delta nu / 2 = "
                              f"{bound:.6g}")


@_register("npfl_rl.fixed_point")
def fixed_point(user, options) -> Evaluation:
    """NPFL with a fixed tau >= 0 converges to the coupled (Nash) fixed point."""
    from reference_impl.npfl_rl import run_npfl
    from reference_impl.npfl_rl.ground_truth import coupled_fixed_point
    from verify.tolerance import NPFL_CONVERGED_RTOL

    why = _npfl(user)
    if why is not None:
        return not_applicable(why)
    config, problem = user.parts["config"], user.parts["problem"]
    if config.policy != "fixed":
        return not_applicable(f"algorithm.policy = {config.policy!r} (the claim is about a fixed tau)")
    hyps = [*_corrected_hyps(user),
            Hypothesis(name="algorithm.tau0", value=config.tau0, allowed=">= 0", met=config.tau0 >= 0)]
    if not all(h.met for h in hyps):
        return conclude(hyps, holds=None, summary="the fixed point is that of the corrected iteration")
    if not options.simulate:
        return Evaluation(status="not_evaluable", hypotheses=tuple(hyps),
                          summary="not evaluated: the claim needs a run (--no-simulate)")
    tau = np.full(problem.K, config.tau0)
    fp = coupled_fixed_point(problem, tau, convention=config.convention)
    run = run_npfl(problem, config, FIXED_POINT_ITERATIONS, reference=fp.w, tau_init=tau)
    err = float(run.reference_error[0, -1])
    settled = float(run.last_increment[0]) <= 1e-12 * max(1.0, float(np.max(np.abs(fp.w))))
    if bool(run.finite[0]) and err > NPFL_CONVERGED_RTOL and not settled:
        return Evaluation(status="not_evaluable", hypotheses=tuple(hyps), summary=(
            f"not decided: after {FIXED_POINT_ITERATIONS} iterations the run is still moving (relative squared "
            f"distance {err:.3g}, last increment {float(run.last_increment[0]):.3g})"))
    return conclude(hyps, holds=bool(np.isfinite(err) and err <= NPFL_CONVERGED_RTOL),
                    quantity="relative squared distance to the fixed point", value=err, bound=NPFL_CONVERGED_RTOL,
                    summary=f"after {FIXED_POINT_ITERATIONS} iterations at tau = {config.tau0:g}: relative squared "
                            f"distance {err:.3g} to the coupled fixed point")
