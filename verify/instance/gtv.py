r"""GTV (seed 002; ``docs/papers/gtv.md``) on a user's instance: the claims decidable from one configuration.

Parts of the :class:`~verify.instance.UserInstance`: ``instance`` (:class:`theory.gtv.GTVInstance`: graph, weights,
data, loss, penalty, lambda and, when the configuration gives them, the clusters) and ``setup``. Settings: ``theta``
(the step rescaling), ``iterations`` and ``tol`` (Algorithm 1's cap and stopping tolerance), ``seed``; optionally
explicit step sizes ``tau`` (per node) and ``sigma`` (per edge), which replace :math:`\theta` (API use).

Evaluated:

* Algorithm 1's step-size condition :math:`\lVert\Sigma^{1/2}DT^{1/2}\rVert^2 \le 1` (Pock-Chambolle) on the
  configured steps, and, with ``--simulate``, that a short run of Algorithm 1 reaches a point whose KKT residuals
  of (23)/(25) are small (``gtv.algorithm1_convergence``);
* the duality gap's domain: the gap (34) is :math:`+\infty` whenever some :math:`-s^{(i)}` lies outside
  :math:`\mathrm{range}(X_i^\top)` (every node with :math:`m_i < d` and the squared loss), so the printed stopping
  rule never fires on such an instance, while the gap with the dual projected onto its domain certifies the run's
  suboptimality (``--simulate``);
* Theorem 2's condition (35) (well-connected clusters, decided exactly by max-flow/min-cut) on the configured
  partition, and, where it holds, the deviation bound (37) :math:`2\lambda|\partial C|/\alpha` and its sharper form
  :math:`\lambda|\partial C|/\alpha` on the run's models; Corollary (38) for a configuration with a single cluster.

Condition (35) is a property of the user's data and graph, not a parameter they set: where it is not certified the
theorem gives no guarantee and is reported ``not_applicable`` with the hypothesis (its value: the exact slack) listed,
not as a failure of the configuration.
"""

from __future__ import annotations

import math

import numpy as np

from verify.instance._common import conclude, default_reason, memo, not_applicable
from verify.instance.records import Evaluation, Hypothesis

__all__ = ["EVALUATORS", "GAP_MAX_ND", "SIMULATION_MAX_ITERATIONS", "WELL_CONNECTED_MAX_NODES", "not_evaluable"]

EVALUATORS: dict = {}
#: Largest iteration cap of the check's run of Algorithm 1 (the configured cap if smaller).
SIMULATION_MAX_ITERATIONS = 5000
#: Largest cluster on which (35) is decided (|C| - 1 min-cuts per anchor).
WELL_CONNECTED_MAX_NODES = 400
#: Largest n d on which the duality gaps are evaluated (the dense node-space eigendecomposition of the losses).
GAP_MAX_ND = 4000
#: Absolute allowance on the deviation of the run's models (the run stops at a tolerance, not at the minimiser).
DEVIATION_ATOL = 1e-6

_REASONS = {
    "gtv.kkt_25": "a statement about the printed optimality condition (25) itself; `fedcheck report --only "
                  "gtv.kkt_25` decides it",
    "gtv.e15_gap_domain": "a statement about the conjugate of the squared loss itself (the gap (34) is +inf off "
                          "range(X_i^T)); gtv.gap_stopping_rule reports the gap (34) at the end of the configured run",
    "gtv.kkt_25_corrected": "a statement about the corrected optimality condition itself; the run's KKT residuals are "
                            "reported under gtv.algorithm1_convergence",
}


def not_evaluable(claim, user) -> str:
    """Why ``claim`` is not evaluated on ``user``."""
    return default_reason(claim, _REASONS)


def _register(claim_id):
    from verify.instance._common import evaluates

    return evaluates(EVALUATORS, claim_id)


def _steps(user):
    from reference_impl.gtv.algorithm import step_sizes

    inst = user.parts["instance"]
    tau, sigma = user.settings.get("tau"), user.settings.get("sigma")
    if tau is None and sigma is None:
        return step_sizes(inst, float(user.settings.get("theta", 1.0)))
    theta_tau, theta_sigma = step_sizes(inst, float(user.settings.get("theta", 1.0)))
    tau = theta_tau if tau is None else np.broadcast_to(np.asarray(tau, dtype=np.float64), (inst.n,))
    sigma = theta_sigma if sigma is None else np.broadcast_to(np.asarray(sigma, dtype=np.float64), (inst.n_edges,))
    return tau, sigma


def _step_hyp(user) -> Hypothesis:
    def compute():
        from reference_impl.gtv.algorithm import preconditioned_norm_squared
        from verify.tolerance import gamma

        inst = user.parts["instance"]
        tau, sigma = _steps(user)
        positive = bool(np.all(tau > 0) and np.all(sigma > 0) and np.all(np.isfinite(tau))
                        and np.all(np.isfinite(sigma)))
        norm2 = float(preconditioned_norm_squared(inst, tau, sigma)) if positive else float("nan")
        limit = 1.0 + gamma(10 * inst.n)
        return Hypothesis(name="||Sigma^1/2 D T^1/2||^2", value=norm2,
                          allowed="<= 1 (Algorithm 1's primal-dual step condition; tau, sigma > 0)",
                          met=positive and norm2 <= limit)

    return memo(user, "gtv.step_hyp", compute)


def _run(user, options):
    """Algorithm 1 on the instance (the configured steps, cap min(iterations, SIMULATION_MAX_ITERATIONS))."""
    def compute():
        from reference_impl.gtv import run_algorithm1

        inst = user.parts["instance"]
        cap = min(int(user.settings.get("iterations", 2000)), SIMULATION_MAX_ITERATIONS)
        tol = float(user.settings.get("tol", 1e-10))
        kwargs = {}
        if user.settings.get("tau") is not None or user.settings.get("sigma") is not None:
            kwargs["tau"], kwargs["sigma"] = _steps(user)
        return run_algorithm1(inst, theta=float(user.settings.get("theta", 1.0)), max_iterations=cap, tol=tol,
                              record_every=0, **kwargs)

    return memo(user, "gtv.run", compute)


def _sim_off(hyps=()) -> Evaluation:
    return Evaluation(status="not_evaluable", summary="not evaluated: the claim needs a run of Algorithm 1 "
                      "(--no-simulate)", hypotheses=tuple(hyps))


@_register("gtv.algorithm1_convergence")
def algorithm1_convergence(user, options) -> Evaluation:
    """Algorithm 1 converges to a GTV minimiser under the step condition; the run's KKT residuals show it."""
    hyp = _step_hyp(user)
    if not hyp.met:
        return conclude((hyp,), holds=None, summary="the step sizes break the convergence condition of Algorithm 1")
    if not options.simulate:
        return conclude((hyp,), holds=True, quantity="||Sigma^1/2 D T^1/2||^2", value=hyp.value, bound=1.0,
                        summary=f"step condition {hyp.value:.6g} <= 1: Algorithm 1 converges (not simulated)")
    from verify.gtv.algorithm1 import _kkt_bound

    with np.errstate(over="ignore", invalid="ignore"):   # an overflowing run is reported below, not warned about
        run = _run(user, options)
        node, edge = run.kkt(user.parts["instance"])
    kkt = max(float(node), float(edge))
    allowed = _kkt_bound(user.parts["instance"], run)
    if not math.isfinite(kkt):
        return Evaluation(status="not_evaluable", hypotheses=(hyp,), summary=(
            f"not decided: the run's values left the double range (KKT residual {kkt:.3g}) although the step "
            f"condition holds: the instance's scales (e.g. algorithm.theta, the data) overflow in floating point, and "
            f"more iterations would not help"))
    if not run.converged:
        return Evaluation(status="not_evaluable", hypotheses=(hyp,), summary=(
            f"not decided: the check's run stopped at its cap of {run.iterations} iterations before the residual test "
            f"(KKT residual {kkt:.3g}); raise algorithm.iterations"))
    return conclude((hyp,), holds=kkt <= allowed, quantity="max KKT residual of (23)/(25)", value=kkt,
                    bound=allowed, summary=f"the run stopped after {run.iterations} iterations (fixed-point "
                                                f"residual test at tol = {run.tol:g}); KKT residuals node {node:.3g}, "
                                                f"edge {edge:.3g} (implied by the residual: {allowed:.3g})",
                    details={"iterations": run.iterations, "theta": run.theta})


def _squared(user) -> str | None:
    inst = user.parts["instance"]
    if inst.loss != "squared":
        return f"model.loss = {inst.loss!r} (the claim is about the squared loss (40))"
    return None


def _gap_too_big(user, hyps=()) -> Evaluation | None:
    inst = user.parts["instance"]
    if inst.n * inst.d <= GAP_MAX_ND:
        return None
    return Evaluation(status="not_evaluable", hypotheses=tuple(hyps), summary=(
        f"not evaluated on this instance: the gaps need a dense eigendecomposition in node space, n d = "
        f"{inst.n * inst.d} is above {GAP_MAX_ND}"))


@_register("gtv.gap_stopping_rule")
def gap_stopping_rule(user, options) -> Evaluation:
    """The printed stopping rule gap_k <= eta: never reached when the gap is +inf (m_i < d)."""
    why = _squared(user)
    if why is not None:
        return not_applicable(why)
    if not options.simulate:
        return _sim_off()
    too_big = _gap_too_big(user)
    if too_big is not None:
        return too_big
    from theory.gtv.operators import duality_gap
    from verify.tolerance import GTV_RANGE_RTOL

    run = _run(user, options)
    gap = float(duality_gap(user.parts["instance"], run.w, run.u, range_rtol=GTV_RANGE_RTOL))
    return Evaluation(status="holds" if np.isfinite(gap) else "violated", quantity="gap (34) at the run's end",
                      value=gap, summary=f"after {run.iterations} iterations the printed gap (34) is {gap:.6g}"
                                         + ("" if np.isfinite(gap) else ": the rule gap <= eta never fires"))


@_register("gtv.gap_projected_stopping_rule")
def gap_projected_stopping_rule(user, options) -> Evaluation:
    """Corrected rule: the gap with the dual projected onto its domain bounds P(w_k) - P* and reaches eta."""
    why = _squared(user)
    if why is not None:
        return not_applicable(why)
    hyp = _step_hyp(user)
    if not hyp.met:
        return conclude((hyp,), holds=None, summary="the step sizes break Algorithm 1's convergence condition")
    if not options.simulate:
        return _sim_off((hyp,))
    too_big = _gap_too_big(user, (hyp,))
    if too_big is not None:
        return too_big
    from theory.gtv.operators import primal_objective
    from theory.gtv.stopping import projected_duality_gap
    from verify.gtv.stopping_rule import ETAS
    from verify.tolerance import GTV_RANGE_RTOL

    inst = user.parts["instance"]
    run = _run(user, options)
    try:
        gap, _ = projected_duality_gap(inst, run.w, run.u, range_rtol=GTV_RANGE_RTOL)
    except ValueError as exc:   # the dense projector's size limit
        return Evaluation(status="not_evaluable", hypotheses=(hyp,),
                          summary=f"not evaluable on this instance: {' '.join(str(exc).split())}")
    scale = max(1.0, abs(float(primal_objective(inst, run.w))))
    eta = max(ETAS) * scale
    if not run.converged:
        return Evaluation(status="not_evaluable", hypotheses=(hyp,), summary=(
            f"not decided: the check's run stopped at its cap of {run.iterations} iterations (projected gap "
            f"{gap:.3g}); raise algorithm.iterations"))
    return conclude((hyp,), holds=bool(0.0 <= gap + 1e-12 * scale and gap <= eta), quantity="projected gap",
                    value=float(gap), bound=eta,
                    summary=f"after {run.iterations} iterations the projected gap is {gap:.3g} (finite, a certificate "
                            f"of P(w) - P*), below eta = {max(ETAS):g} max(1, |P(w)|) = {eta:.3g}")


# ------------------------------------------------------------------------------------------ Theorem 2, (38)


def _constants(user):
    def compute():
        from theory.gtv.clustering import cluster_constants

        return cluster_constants(user.parts["instance"])

    return memo(user, "gtv.constants", compute)


def _cluster_set_up(user) -> str | None:
    inst = user.parts["instance"]
    if inst.clusters is None:
        return "the configuration gives no clusters (graph.generator 'sbm', 'chain', 'dense' or 'edges' with clusters)"
    if inst.loss != "squared" or inst.penalty not in ("l2", "l1"):
        return (f"Theorem 2 is stated for the squared loss with a norm penalty (model.loss = {inst.loss!r}, "
                f"model.penalty = {inst.penalty!r})")
    sizes = np.bincount(inst.clusters)
    if sizes.max() > WELL_CONNECTED_MAX_NODES:
        return f"a cluster of {int(sizes.max())} nodes is above the {WELL_CONNECTED_MAX_NODES} (35) is decided on"
    return None


def _well_connected(user) -> list[Hypothesis]:
    def compute():
        from theory.gtv.clustering import well_connected
        from verify.tolerance import GTV_WELL_CONNECTED_RTOL

        inst = user.parts["instance"]
        k = _constants(user)
        b = k.demands(inst.lam)
        out = []
        for c in range(k.oracle.shape[0]):
            wc = well_connected(inst, c, b, margin_rtol=GTV_WELL_CONNECTED_RTOL)
            out.append(Hypothesis(name=f"(35) slack of cluster {c}", value=float(wc.slack),
                                  allowed=f"> {wc.margin:.3g} (well connected: some anchor with sum_A b_i < "
                                          f"cut(A, C \\ A) for every A; lam = {inst.lam:g})", met=wc.certified))
        return out

    return memo(user, "gtv.well_connected", compute)


def _theorem2(user, options, factor: float, label: str) -> Evaluation:
    why = _cluster_set_up(user)
    if why is not None:
        return not_applicable(why)
    try:
        hyps = _well_connected(user)
    except ValueError as exc:   # singular cluster features: no oracle
        return not_applicable(f"no cluster oracle: {' '.join(str(exc).split())}")
    if not all(h.met for h in hyps):
        bad = next(h for h in hyps if not h.met)
        return Evaluation(status="not_applicable", hypotheses=tuple(hyps), summary=(
            f"not applicable: condition (35) is not met on this partition ({bad.line()}); {label} gives no "
            f"guarantee for it"))
    if not options.simulate:
        return _sim_off(hyps)
    from theory.gtv.clustering import cluster_deviation

    inst, k = user.parts["instance"], _constants(user)
    run = _run(user, options)
    bound = factor * inst.lam * k.boundary / k.alpha
    dev, _ = cluster_deviation(run.w, k)
    slack = bound + DEVIATION_ATOL - dev
    worst = int(np.argmin(slack))
    return conclude(hyps, holds=bool(np.all(slack >= 0)), quantity=f"max deviation from the oracle, cluster {worst}",
                    value=float(dev[worst]), bound=float(bound[worst]),
                    summary=f"run of {run.iterations} iterations: deviations {np.array2string(dev, precision=3)} "
                            f"against {label} {np.array2string(bound, precision=3)}")


@_register("gtv.theorem2")
def theorem2(user, options) -> Evaluation:
    """Theorem 2: with (35), every minimiser is within 2 lam |dC| / alpha of the cluster oracle."""
    return _theorem2(user, options, 2.0, "(37) 2 lam |dC| / alpha")


@_register("gtv.theorem2_sharper")
def theorem2_sharper(user, options) -> Evaluation:
    """Sharper Theorem 2: with (35), the deviation is at most lam |dC| / alpha."""
    return _theorem2(user, options, 1.0, "lam |dC| / alpha")


@_register("gtv.corollary38")
def corollary38(user, options) -> Evaluation:
    """Corollary (38): one well-connected cluster is learnt exactly as the pooled minimiser."""
    inst = user.parts["instance"]
    why = _cluster_set_up(user)
    if why is None and int(np.max(inst.clusters)) > 0:
        why = f"the configuration gives {int(np.max(inst.clusters)) + 1} clusters (Corollary (38) is about one)"
    if why is not None:
        return not_applicable(why)
    return _theorem2(user, options, 0.0, "Corollary (38) (zero deviation)")
