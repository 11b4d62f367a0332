"""Privacy accounting closed forms: Gaussian mechanism, zCDP, conversions."""

from theory.privacy.composition import zcdp_compose, zcdp_total_geometric, zcdp_total_variance_decay
from theory.privacy.gaussian import gaussian_sigma_for_zcdp, gaussian_zcdp, renyi_divergence_gaussians
from theory.privacy.sensitivity import sensitivity_fedpdm, sensitivity_pgfl, sensitivity_zcdp_nfl

__all__ = [
    "gaussian_sigma_for_zcdp",
    "gaussian_zcdp",
    "renyi_divergence_gaussians",
    "sensitivity_fedpdm",
    "sensitivity_pgfl",
    "sensitivity_zcdp_nfl",
    "zcdp_compose",
    "zcdp_total_geometric",
    "zcdp_total_variance_decay",
]
