"""Privacy accounting closed forms: Gaussian mechanism, zCDP, conversions."""

from theory.privacy.composition import zcdp_compose, zcdp_total_geometric, zcdp_total_variance_decay
from theory.privacy.conversions import (
    approx_dp_to_zcdp_bun_steinke,
    approx_dp_to_zcdp_cks,
    approx_dp_to_zcdp_exact_gaussian,
    gaussian_delta_exact,
    gaussian_sigma_analytic,
    gaussian_sigma_classical,
    zcdp_delta_cks,
    zcdp_to_approx_dp_bun_steinke,
    zcdp_to_approx_dp_cks,
    zcdp_to_approx_dp_exact_gaussian,
)
from theory.privacy.gaussian import gaussian_sigma_for_zcdp, gaussian_zcdp, renyi_divergence_gaussians
from theory.privacy.sensitivity import sensitivity_fedpdm, sensitivity_pgfl, sensitivity_zcdp_nfl

__all__ = [
    "approx_dp_to_zcdp_bun_steinke",
    "approx_dp_to_zcdp_cks",
    "approx_dp_to_zcdp_exact_gaussian",
    "gaussian_delta_exact",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classical",
    "zcdp_delta_cks",
    "zcdp_to_approx_dp_bun_steinke",
    "zcdp_to_approx_dp_cks",
    "zcdp_to_approx_dp_exact_gaussian",
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
