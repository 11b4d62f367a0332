r"""zCDP-NFL (P2 Algorithm 1) and the baselines of the paper's experiments, as a package.

* :mod:`.problem`: the instance :class:`NFLProblem` (sparse graph, data, objective), :func:`synthetic_problem`,
  the metric :func:`normalized_error`, :func:`graph_product` (a graph matrix on client rows);
* :mod:`.ground_truth`: the centralised optimum in CVXPY with its certificate (:func:`centralized_optimum`);
* :mod:`.schedules`: step sizes (:class:`StepSchedule`), noise (:class:`PrivacySchedule`)
  and :class:`NFLConfig`;
* :mod:`.algorithm`: the vectorised private ADMM (:func:`run_zcdp_nfl`, :func:`nfl_round`, :func:`run_arm`,
  the one-step update :func:`zcdp_nfl_primal_update`) and its cost estimate :func:`estimate_run_cost`;
* :mod:`.baselines`: reconstructions (docs/papers/zcdp_nfl.md) of the compared methods (ε,δ)DP-NFL,
  zCDP-grad-NFL and P-ADMM.

Every public name is re-exported here, so ``from reference_impl.zcdp_nfl import X`` works for all of them.
"""

from reference_impl.zcdp_nfl.algorithm import (
    NFLRun,
    RunCost,
    estimate_run_cost,
    nfl_round,
    run_arm,
    run_zcdp_nfl,
    zcdp_nfl_primal_update,
)
from reference_impl.zcdp_nfl.baselines import (
    BASELINES,
    EPS_DELTA_COMPOSITIONS,
    EPS_DELTA_SPLITS,
    BaselineRun,
    EpsDeltaBudget,
    accounted_privacy,
    matched_gradient_step,
    metropolis_weights,
    p_admm_config,
    run_eps_delta_dp_nfl,
    run_p_admm,
    run_zcdp_grad_nfl,
)
from reference_impl.zcdp_nfl.ground_truth import GroundTruth, centralized_optimum
from reference_impl.zcdp_nfl.problem import (
    OBJECTIVES,
    NFLProblem,
    as_sparse_adjacency,
    elastic_net_lambda1,
    graph_product,
    normalized_error,
    synthetic_problem,
)
from reference_impl.zcdp_nfl.run_report import zcdp_graph, zcdp_run_document
from reference_impl.zcdp_nfl.schedules import NOISE_SCHEDULES, STEP_KINDS, NFLConfig, PrivacySchedule, StepSchedule

__all__ = [
    "BASELINES",
    "EPS_DELTA_COMPOSITIONS",
    "EPS_DELTA_SPLITS",
    "NOISE_SCHEDULES",
    "OBJECTIVES",
    "STEP_KINDS",
    "BaselineRun",
    "EpsDeltaBudget",
    "GroundTruth",
    "NFLConfig",
    "NFLProblem",
    "NFLRun",
    "PrivacySchedule",
    "RunCost",
    "StepSchedule",
    "accounted_privacy",
    "as_sparse_adjacency",
    "centralized_optimum",
    "elastic_net_lambda1",
    "estimate_run_cost",
    "graph_product",
    "matched_gradient_step",
    "metropolis_weights",
    "nfl_round",
    "normalized_error",
    "p_admm_config",
    "run_arm",
    "run_eps_delta_dp_nfl",
    "run_p_admm",
    "run_zcdp_grad_nfl",
    "run_zcdp_nfl",
    "synthetic_problem",
    "zcdp_nfl_primal_update",
    "zcdp_graph",
    "zcdp_run_document",
]

# The noise-free step sweep of matched_gradient_step, every step at once; several budgets on one noise stream.
from reference_impl.zcdp_nfl.algorithm import shared_noise_ne_curves  # noqa: E402
from reference_impl.zcdp_nfl.baselines import noise_free_grad_curves  # noqa: E402

__all__ += ["noise_free_grad_curves", "shared_noise_ne_curves"]
