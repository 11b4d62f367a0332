"""zCDP-NFL's experiment family: the claims of thesis Section 3.4 (Figs. 3.1-3.3) that share the family-wise alpha
of :class:`verify.harness.Family` (each claim's alpha is 0.05 over the members listed here)."""

from verify.harness import Family

__all__ = ["FAMILY"]

FAMILY = Family(paper="zcdp_nfl", name="experiments of thesis Section 3.4", members=(
    "zcdp_nfl.experiment_elastic_net_grad",
    "zcdp_nfl.experiment_elastic_net_eps_delta",
    "zcdp_nfl.experiment_elastic_net_tradeoff",
    "zcdp_nfl.experiment_lad_grad",
    "zcdp_nfl.experiment_lad_eps_delta",
    "zcdp_nfl.experiment_ridge_p_admm",
    "zcdp_nfl.experiment_ridge_tradeoff",
))
