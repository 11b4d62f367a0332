"""Shared pieces of the FedPDM-DP checks: the seed file and the choice of a minimal counterexample."""

from __future__ import annotations

import dataclasses

from verify.records import CheckResult, Evidence, Verdict

__all__ = ["SEED", "with_minimal_counterexample"]

#: Li, Huang, Wang, Chi, Quek, "Privacy-preserving federated primal-dual learning for non-convex
#: problems with non-smooth regularization" (shared/spec/fedpdm_dp.md).
SEED = "001_322f61f9958f64f9.txt"


def with_minimal_counterexample(result: CheckResult, chosen: Evidence, what: str) -> CheckResult:
    """Report ``chosen`` (a violating point at the paper's own parameters) as the counterexample.

    ``what`` names the point in the summary. ``result_from_evidence`` reports the most severe
    violation; the conventions ask for a minimal one. The worst point stays in
    ``details["worst_violation"]``. Nothing changes unless the result is refuted and ``chosen``
    itself violates the claim.
    """
    if result.verdict is not Verdict.REFUTED or chosen.holds:
        return result
    details = dict(result.details)
    details["worst_violation"] = {"measured": result.measured, "bound": result.bound, **dict(result.counterexample)}
    summary = f"{result.summary}; reported counterexample {chosen.measured:.6g} > {chosen.bound:.6g} at {what}"
    return dataclasses.replace(result, summary=summary, measured=chosen.measured, bound=chosen.bound,
                               margin=chosen.bound - chosen.measured, counterexample=dict(chosen.parameters),
                               details=details)
