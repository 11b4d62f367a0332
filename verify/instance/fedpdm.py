r"""FedPDM-DP (``docs/papers/fedpdm.md``) on a user's instance: the claims decidable from one configuration.

Parts of the :class:`~verify.instance.UserInstance`: ``problem`` (:class:`reference_impl.fedpdm.FedPDMProblem`, the
configured data and loss (25)), ``config`` (:class:`reference_impl.fedpdm.FedPDMConfig`) and ``setup`` (the run
layer's loaded set-up, read only). Settings: ``seed``, ``arm`` (``fedpdm`` or a reconstructed baseline).

Evaluated:

* Lemma 1 (eq. (5)/(18)): the classical calibration :math:`z = \sqrt{2\ln(1.25/\delta)}/\varepsilon` at the
  configured per-round :math:`(\varepsilon, \delta)` against the exact Gaussian privacy profile, as printed and in
  its corrected range :math:`\varepsilon < \varepsilon^*(\delta)`;
* Theorems 1-2 corrected (the history sensitivity :math:`\kappa_n s_n` composed without subsampling amplification):
  the privacy totals of the configuration under the ``history_gaussian`` model of
  :func:`reference_impl.fedpdm.account_run` on a participation schedule drawn with the configured seed, with its
  hypotheses (a fixed number of local steps, Assumption 3's :math:`G` at least the certified gradient bound, finite
  history factors) and, for ``dp_calibration = "target_total_eps_bound"``, the configured target; the paper's own
  accountant (Theorem 2, eq. (20)) is reported beside it, labelled as not a bound;
* Theorem 3's condition on :math:`L` (as printed, :math:`2\sqrt5 - 4 \le L \le \rho/4`, and corrected,
  :math:`1/2 < L < \rho/4`) with the certified smoothness constant of the data, and the constants
  :math:`C_0..C_3` of :func:`theory.fedpdm.convergence.theorem3_constants` it makes finite and positive.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from verify.instance._common import conclude, default_reason, not_applicable
from verify.instance.records import Evaluation, Hypothesis

__all__ = ["EVALUATORS", "not_evaluable"]

EVALUATORS: dict = {}

_REASONS = {
    "fedpdm.theorem2_carryover": "refuted in general by an exact two-round counterexample (the client keeps "
                                 "(x_i, lambda_i) across rounds); this configuration's number under the paper's "
                                 "accountant is printed beside the bound of fedpdm.theorem2_carryover_corrected",
    "fedpdm.theorem3_corrected": "the noise term of the corrected bound is an empirical constant measured over runs "
                                 "of the paper's instances; `fedcheck report --only fedpdm.theorem3_corrected` "
                                 "decides it",
    "fedpdm.algorithm_properties": "properties of every round of Algorithm 1 checked over the project's instances; "
                                   "`fedcheck run fedpdm CONFIG` runs the configured algorithm",
}


def not_evaluable(claim, user) -> str:
    """Why ``claim`` is not evaluated on ``user``."""
    return default_reason(claim, _REASONS)


def _register(claim_id):
    from verify.instance._common import evaluates

    return evaluates(EVALUATORS, claim_id)


def _baseline(user) -> str | None:
    arm = user.settings.get("arm", "fedpdm")
    return None if arm == "fedpdm" else f"arm.name = {arm!r} is a reconstructed baseline, not FedPDM-DP"


def _per_round_calibration(user) -> str | None:
    """None when the configuration uses Lemma 1's calibration (18) at a per-round epsilon, else why not."""
    why = _baseline(user)
    if why is not None:
        return why
    config = user.parts["config"]
    if config.noise != "dp":
        return f"algorithm.noise = {config.noise!r} (no calibrated Gaussian noise)"
    if config.dp_calibration != "per_round_eps":
        return (f"algorithm.dp_calibration = {config.dp_calibration!r} (the noise is calibrated to a total, not by "
                f"Lemma 1 at a per-round epsilon)")
    return None


def _lemma1_point(user) -> dict:
    from verify.fedpdm.lemma1_gaussian import crossover_epsilon, evaluate_classical_calibration

    config = user.parts["config"]
    evidence = evaluate_classical_calibration(config.epsilon, config.delta)
    return {"evidence": evidence, "eps_star": crossover_epsilon(config.delta), "epsilon": config.epsilon,
            "delta": config.delta}


@_register("fedpdm.lemma1")
def lemma1(user, options) -> Evaluation:
    """Lemma 1 as printed: (5) gives (eps, delta)-DP at the configured per-round (eps, delta), for any eps."""
    why = _per_round_calibration(user)
    if why is not None:
        return not_applicable(why)
    p = _lemma1_point(user)
    ev = p["evidence"]
    return Evaluation(status="holds" if ev.holds else "violated", quantity="delta_exact / delta", value=ev.measured,
                      bound=1.0, summary=f"z = {ev.parameters['z']:.6g} at epsilon = {p['epsilon']:g}, delta = "
                                         f"{p['delta']:g}: the exact Gaussian profile gives delta_exact = "
                                         f"{ev.parameters['delta_exact']:.6g}")


@_register("fedpdm.lemma1_corrected")
def lemma1_corrected(user, options) -> Evaluation:
    """Lemma 1 corrected: the classical calibration is (eps, delta)-DP exactly for eps < eps*(delta)."""
    why = _per_round_calibration(user)
    if why is not None:
        return not_applicable(why)
    from verify.tolerance import CONVERSION_RTOL

    p = _lemma1_point(user)
    ev = p["evidence"]
    hyp = Hypothesis(name="algorithm.epsilon (per round)", value=p["epsilon"],
                     allowed=f"(0, eps*(delta = {p['delta']:g}) = {p['eps_star']:.6g}) (the range where (18) is DP)",
                     met=0.0 < p["epsilon"] < p["eps_star"])
    ratio = ev.measured
    summary = (f"noise multiplier z = {ev.parameters['z']:.6g} of (18): delta_exact = "
               f"{ev.parameters['delta_exact']:.6g} against delta = {p['delta']:g}")
    if not hyp.met:
        summary += (f"; the noise is below what epsilon = {p['epsilon']:g} needs: each round is only "
                    f"(epsilon, {ev.parameters['delta_exact']:.3g})-DP")
    return conclude((hyp,), holds=ratio <= 1.0 + CONVERSION_RTOL, quantity="delta_exact / delta", value=ratio,
                    bound=1.0, summary=summary, details={"eps_star": p["eps_star"], "z": ev.parameters["z"]})


def _schedule(user, options):
    """A run-like record for :func:`reference_impl.fedpdm.account_run`: the participation schedule of the seed, the
    per-upload noise of the configured calibration (Q_max local steps) and Assumption 3's G."""
    from reference_impl.fedpdm import certified_G, participation_schedule
    from reference_impl.fedpdm.accounting import history_factor_table, run_noise_multiplier
    from theory.privacy.sensitivity import sensitivity_fedpdm

    problem, config = user.parts["problem"], user.parts["config"]
    rng = np.random.default_rng(np.random.SeedSequence([options.seed, *b"fedpdm.schedule"]))
    participation = participation_schedule(problem.N, config.K, config.rounds, rng, runs=1,
                                           first_round_all=config.first_round_all)
    G = certified_G(problem) if config.G is None else float(config.G)
    z = run_noise_multiplier(problem, config, participation)
    s = np.array([sensitivity_fedpdm(config.eta(t), config.rho, config.Q_max, G) for t in range(config.rounds)])
    if config.noise == "dp":
        unit = s[None, :, None] * np.ones(participation.shape)
        if config.sensitivity_model == "history":
            unit = unit * history_factor_table(participation, [config.eta(t) for t in range(config.rounds)],
                                               config.Q_max, config.rho, config.local_start)
        sigma = np.where(participation, z * unit, 0.0)
    elif config.noise == "fixed":
        sigma = np.where(participation, config.sigma, 0.0)
    else:
        sigma = np.zeros(participation.shape)
    return SimpleNamespace(participation=participation, sigma=sigma, G=G, z=z)


@_register("fedpdm.theorem2_carryover_corrected")
def theorem2_carryover_corrected(user, options) -> Evaluation:
    """The configuration's privacy totals under the history_gaussian model (a bound for Algorithm 1 as run)."""
    why = _baseline(user)
    if why is not None:
        return not_applicable(why)
    problem, config = user.parts["problem"], user.parts["config"]
    if config.noise == "none":
        return not_applicable("algorithm.noise = 'none' (no privacy is claimed)")
    from reference_impl.fedpdm import account_run, certified_G

    certified = certified_G(problem)
    hyps = [Hypothesis(name="local steps fixed in advance (nu = 0 or Q_max = 1)",
                       value=f"nu = {config.nu:g}, Q_max = {config.Q_max}", allowed="nu = 0 or Q_max = 1 (rule (11) "
                       "with nu > 0 makes Q data dependent: no sensitivity bounds an upload)",
                       met=config.nu == 0.0 or config.Q_max == 1)]
    if config.G is not None:
        hyps.append(Hypothesis(name="algorithm.G (Assumption 3)", value=float(config.G),
                               allowed=f">= {certified:.6g} (the certified bound max||a|| + (3 sqrt3/8) beta sqrt d "
                                       f"on every mini-batch gradient)", met=float(config.G) >= certified))
    try:
        run = _schedule(user, options)
        bound = account_run(problem, config, run, model="history_gaussian")
    except (ValueError, OverflowError) as exc:
        hyps.append(Hypothesis(name="finite sensitivities (19) and history factors", value=" ".join(str(exc).split()),
                               allowed="finite (eta rho < 2; warm start needs (1 - eta rho)^Q_max > -1/3)", met=False))
        return conclude(hyps, holds=None, summary="the totals are not computable for this schedule")
    mu = float(np.max(bound.mu[0]))
    hyps.append(Hypothesis(name="max_i mu_i (GDP of the busiest client)", value=mu,
                           allowed="finite (eta rho < 2; warm start needs (1 - eta rho)^Q_max > -1/3)",
                           met=math.isfinite(mu)))
    eps = bound.epsilon_max()
    paper = account_run(problem, config, run, model="paper")
    details = {"model": "history_gaussian", "is_bound": bound.is_bound, "delta": bound.delta,
               "epsilon_max": eps, "worst_client": bound.worst_client(), "noise_multiplier_z": float(run.z),
               "G": float(run.G), "participations_worst_client": int(bound.participations[0, bound.worst_client()]),
               "paper_accountant": {"label": "the paper's accountant (Theorem 2, eq. (20)): NOT a bound for "
                                             "Algorithm 1 as run (each client keeps its state across rounds)",
                                    "epsilon_max": paper.epsilon_max(), "q": paper.q}}
    summary = (f"epsilon_max = {eps:.6g} at delta = {bound.delta:g} over {config.rounds} rounds (history_gaussian "
               f"bound, busiest client {bound.worst_client()}, z = {run.z:.6g}); the paper's accountant says "
               f"{paper.epsilon_max():.6g} (NOT a bound)")
    target = None
    if config.noise == "dp" and config.dp_calibration == "target_total_eps_bound":
        from verify.tolerance import CONVERSION_RTOL

        target = config.epsilon_total
        return conclude(hyps, holds=eps <= target * (1.0 + CONVERSION_RTOL), quantity="epsilon_max (bound)",
                        value=eps, bound=target, summary=summary + f"; target epsilon_total = {target:g}",
                        details=details)
    return conclude(hyps, holds=bound.is_bound, quantity="epsilon_max (bound)", value=eps, bound=target,
                    summary=summary if bound.is_bound else f"{summary}; {bound.status}", details=details)


def _smoothness(user) -> tuple[float, float, float]:
    """(certified L, rho/4, the L at which the constants are evaluated)."""
    problem, config = user.parts["problem"], user.parts["config"]
    L = float(problem.L_smooth)
    top = config.rho / 4.0
    # any L' >= the true constant is a smoothness constant: below 1/2 the corrected range is entered at its middle
    L_eval = L if L > 0.5 else 0.5 + 0.5 * (min(top, 1.0) - 0.5)
    return L, top, L_eval


@_register("fedpdm.theorem3_conditions")
def theorem3_conditions(user, options) -> Evaluation:
    """Theorem 3 as printed: 2 sqrt5 - 4 <= L <= rho/4 makes the constants of (22) positive and finite."""
    why = _baseline(user)
    if why is not None:
        return not_applicable(why)
    from verify.fedpdm.theorem3_constants import L_LOWER_SEED, evaluate_conditions

    problem, config = user.parts["problem"], user.parts["config"]
    L, top, _ = _smoothness(user)
    hyp = Hypothesis(name="certified smoothness L", value=L, allowed=f"[2 sqrt5 - 4, rho/4] = [{L_LOWER_SEED:.6g}, "
                     f"{top:.6g}] (the printed condition)", met=L_LOWER_SEED <= L <= top)
    ev = evaluate_conditions({"L": L, "rho": config.rho, "N": problem.N, "K": config.K})
    bad = ev.parameters["non_positive_or_undefined"]
    return conclude((hyp,), holds=ev.holds, quantity="constants non-positive or undefined", value=ev.measured,
                    bound=0.0, summary=f"at L = {L:.6g}, rho = {config.rho:g}: "
                                       + (f"non-positive or undefined: {', '.join(bad)}" if bad else
                                          "every constant of (22) is finite and positive"))


@_register("fedpdm.theorem3_conditions_corrected")
def theorem3_conditions_corrected(user, options) -> Evaluation:
    """Theorem 3's corrected condition 1/2 < L < rho/4 on the data's certified L; C0..C3 finite and positive."""
    why = _baseline(user)
    if why is not None:
        return not_applicable(why)
    from theory.fedpdm.convergence import theorem3_constants

    problem, config = user.parts["problem"], user.parts["config"]
    L, top, L_eval = _smoothness(user)
    hyps = (Hypothesis(name="certified smoothness L", value=L, allowed=f"< rho/4 = {top:.6g} (Theorem 3, corrected "
                       f"condition 1/2 < L < rho/4; algorithm.rho = {config.rho:g})", met=L < top),
            Hypothesis(name="rho/4", value=top, allowed="> 1/2 (else no L fits 1/2 < L < rho/4)", met=top > 0.5))
    if not all(h.met for h in hyps):
        return conclude(hyps, holds=None, summary=f"Theorem 3 does not cover this rho: it needs rho > 4 L = "
                                                  f"{4 * max(L, 0.5):.6g}")
    c = theorem3_constants(L_eval, config.rho, problem.N, config.K)
    keys = ("B2", "B3_coef", "B8_coef", "theta1", "C0", "C1", "C2", "C3")
    bad = [k for k in keys if not (math.isfinite(c[k]) and c[k] > 0)]
    return conclude(hyps, holds=not bad, quantity="constants non-positive or undefined", value=float(len(bad)),
                    bound=0.0, summary=f"at L = {L_eval:.6g}: C0 = {c['C0']:.6g}, C1 = {c['C1']:.6g}, C2 = "
                                       f"{c['C2']:.6g}, C3 = {c['C3']:.6g}"
                                       + (f"; non-positive or undefined: {', '.join(bad)}" if bad else ""),
                    details={k: c[k] for k in keys})
