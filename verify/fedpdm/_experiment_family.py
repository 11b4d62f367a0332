"""FedPDM-DP's experiment family: the claims of its Section V (Figs. 1-2) that share the family-wise alpha of
:class:`verify.harness.Family` (each claim's alpha is 0.05 over the members listed here)."""

from verify.harness import Family

__all__ = ["FAMILY"]

FAMILY = Family(paper="fedpdm", name="experiments of Section V", members=(
    "fedpdm.experiment_dp_loss",
    "fedpdm.experiment_dp_accuracy",
    "fedpdm.experiment_nodp_loss",
    "fedpdm.experiment_nodp_accuracy",
    "fedpdm.experiment_dp_gap",
    "fedpdm.experiment_fig1_budget_order",
    "fedpdm.experiment_digits_dp_loss",
    "fedpdm.experiment_mnist_dp_loss",
))
