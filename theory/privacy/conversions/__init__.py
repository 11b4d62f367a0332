r"""Conversions between zero-concentrated DP (zCDP) and approximate :math:`(\varepsilon, \delta)`-DP.

Three zCDP :math:`\to (\varepsilon, \delta)` converters, from loosest to tightest, with their inverses:

* Bun & Steinke 2016, Prop. 1.3 (the conversion the papers use: seed 000 eq. (51), seed 004 Chapter 3
  Corollary): valid for every :math:`\rho`-zCDP mechanism, closed form;
* Canonne, Kamath & Steinke 2020, Prop. 12 / Cor. 13: valid for every :math:`\rho`-zCDP mechanism,
  an infimum over the Rényi order, computed numerically;
* the exact privacy profile of the Gaussian mechanism (Balle & Wang 2018, Thm. 8) with
  :math:`\mu = \sqrt{2\rho}`: valid **only** for (adaptive) compositions of Gaussian mechanisms, for
  which it is tight.

Plus the Gaussian-mechanism noise calibrations for :math:`(\varepsilon, \delta)`-DP that fedcheck's
baselines use: classical (Dwork & Roth 2014, Thm. A.1) and analytic (Balle & Wang 2018).

Every numerically computed quantity errs on the safe side: a converter never returns an
:math:`\varepsilon` (or :math:`\delta`, or :math:`\sigma`) below the true value, nor a :math:`\rho`
above it, beyond the rounding of its last floating-point evaluation. Natural logarithms
throughout; ``rho`` is the zCDP parameter (the papers' :math:`\phi` / :math:`\varphi`, see
docs/papers/dp.md#notation).

References
----------
.. [BS16] M. Bun and T. Steinke, "Concentrated differential privacy: simplifications, extensions,
   and lower bounds", TCC 2016-B, arXiv:1605.02065, Proposition 1.3.
.. [CKS20] C. Canonne, G. Kamath and T. Steinke, "The discrete Gaussian for differential privacy",
   NeurIPS 2020, arXiv:2004.00010, Proposition 12 and Corollary 13 (Section 2.3).
.. [BW18] B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for differential privacy:
   analytical calibration and optimal denoising", ICML 2018, arXiv:1805.06530, Theorem 8.
.. [DR14] C. Dwork and A. Roth, *The Algorithmic Foundations of Differential Privacy*, 2014,
   Theorem A.1.
.. [M17] I. Mironov, "Rényi differential privacy", CSF 2017, Proposition 3.
"""

from theory.privacy.conversions.bun_steinke import (
    approx_dp_to_zcdp_bun_steinke,
    zcdp_to_approx_dp_bun_steinke,
)
from theory.privacy.conversions.calibration import (
    gaussian_sigma_analytic,
    gaussian_sigma_classical,
)
from theory.privacy.conversions.cks import (
    approx_dp_to_zcdp_cks,
    zcdp_delta_cks,
    zcdp_to_approx_dp_cks,
)
from theory.privacy.conversions.exact_gaussian import (
    approx_dp_to_zcdp_exact_gaussian,
    gaussian_delta_exact,
    zcdp_to_approx_dp_exact_gaussian,
)

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
]
