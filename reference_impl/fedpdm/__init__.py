r"""FedPDM-DP (Algorithm 1) and its DP baselines, vectorised over sampled clients and Monte-Carlo runs, as a package.

* :mod:`.problem`: the instance :class:`FedPDMProblem` (federated data, objective (24)-(25), certified
  :func:`certified_G` and ``L_smooth``) and the data sets (docs/papers/fedpdm.md#instance-nc NC/CVX, MNIST-shaped
  synthetic, scikit-learn digits, a user's MNIST ``.npz``);
* :mod:`.objective`: losses, gradients, the Lagrangian (9), the stationarity measure (21), the prox (13);
* :mod:`.config`: :class:`FedPDMConfig`, every input and every choice (docs/papers/fedpdm.md#choices) the seed leaves
  open (erratum E16, docs/papers/fedpdm.md#erratum-e16);
* :mod:`.accounting`: client sampling, the sensitivity (19) table, the run's noise multiplier (per-round ε or a
  target total on the realised participation count), the history factors (docs/papers/fedpdm.md#review-notes);
* :mod:`.carryover`: the privacy oracle's builder: a client with linear or quadratic loss as an affine map of
  its noise and data, for the exact privacy loss with state carried over (``fedpdm.theorem2_carryover``);
* :mod:`.algorithm`: Algorithm 1 (:func:`fedpdm_round`, :func:`run_fedpdm`);
* :mod:`.baselines`: FedAvg-DP, FedProx-DP and SCAFFOLD-DP as docs/papers/fedpdm.md#choice-baselines reconstructs them
  (labelled reconstructions), and :func:`run_arm` (one experiment arm on one replicate seed).

Every public name is re-exported here, so ``from reference_impl.fedpdm import X`` works for all of them.

References
----------
.. [1] seed 001_322f61f9958f64f9.txt, Algorithm 1 (lines 158-180), eqs. (9)-(13) (lines 102-136),
   (18)-(19) (lines 187-195), loss (24)-(25) (lines 247-253); docs/papers/fedpdm.md#algorithms,
   docs/papers/fedpdm.md#instance-nc.
"""

from reference_impl.fedpdm.accounting import (
    ORDERS,
    PRIVACY_MODELS,
    FedPDMPrivacy,
    account_run,
    calibrate_noise_multiplier,
    calibrate_noise_multiplier_bound,
    history_factor_table,
    history_gaussian_mu,
    participation_schedule,
    run_noise_multiplier,
    sensitivity_table,
)
from reference_impl.fedpdm.algorithm import (
    FedPDMRun,
    FedPDMState,
    RoundRecord,
    fedpdm_round,
    initial_state,
    run_fedpdm,
)
from reference_impl.fedpdm.baselines import ARMS, ArmCurve, BaselineConfig, run_arm, run_baseline
from reference_impl.fedpdm.carryover import (
    NEIGHBOURS,
    AffineClient,
    CarryoverDelta,
    affine_client_from_config,
    carryover_delta,
    carryover_delta_lower_bound,
    carryover_pair,
    inclusion_options,
    response_matrix,
    sample_privacy_losses,
)
from reference_impl.fedpdm.config import FedPDMConfig
from reference_impl.fedpdm.objective import (
    accuracy,
    add_nonconvex_gradient,
    as_matrix,
    batch_gradient,
    client_gradients,
    client_losses,
    global_objective,
    lagrangian,
    soft_threshold,
    stationarity_measure,
)
from reference_impl.fedpdm.problem import (
    FedPDMProblem,
    binary_logistic_problem,
    certified_G,
    classification_problem,
    digits_problem,
    instance_nc,
    mnist_like_problem,
    mnist_npz_problem,
)
from reference_impl.fedpdm.run_report import account_clients, fedpdm_run_document, fedpdm_run_problem
from reference_impl.fedpdm.smoothness import (
    SmoothnessBracket,
    SmoothnessCost,
    estimate_smoothness_cost,
    smoothness_bracket,
)

__all__ = [
    "PRIVACY_MODELS",
    "FedPDMPrivacy",
    "account_run",
    "calibrate_noise_multiplier_bound",
    "history_gaussian_mu",
    "NEIGHBOURS",
    "AffineClient",
    "CarryoverDelta",
    "affine_client_from_config",
    "carryover_delta",
    "carryover_delta_lower_bound",
    "carryover_pair",
    "inclusion_options",
    "response_matrix",
    "sample_privacy_losses",

    "SmoothnessBracket",
    "SmoothnessCost",
    "estimate_smoothness_cost",
    "smoothness_bracket",
    "ARMS",
    "ORDERS",
    "ArmCurve",
    "BaselineConfig",
    "FedPDMConfig",
    "FedPDMProblem",
    "FedPDMRun",
    "FedPDMState",
    "RoundRecord",
    "accuracy",
    "add_nonconvex_gradient",
    "as_matrix",
    "batch_gradient",
    "binary_logistic_problem",
    "calibrate_noise_multiplier",
    "certified_G",
    "classification_problem",
    "client_gradients",
    "client_losses",
    "digits_problem",
    "fedpdm_round",
    "global_objective",
    "history_factor_table",
    "initial_state",
    "instance_nc",
    "lagrangian",
    "mnist_like_problem",
    "mnist_npz_problem",
    "participation_schedule",
    "run_arm",
    "run_baseline",
    "run_fedpdm",
    "run_noise_multiplier",
    "sensitivity_table",
    "soft_threshold",
    "stationarity_measure",
    "account_clients",
    "fedpdm_run_document",
    "fedpdm_run_problem",
]
