r"""Assumption 1 of Publication 7 (:math:`\|w^*_q - w^*_r\|^2 \le \eta`) holds for the experiment's generator with
:math:`\eta = (\max_q\delta_q - \min_q\delta_q)^2\|w_0\|^2` (scalar :math:`\delta_q`; docs/papers/npfl_rl.md#k9,
docs/papers/npfl_rl.md#erratum-d17).

Compared with the largest pairwise squared distance of the generated cluster models. The assumption is never used in
a result of the seed (docs/papers/npfl_rl.md#erratum-d19); this checks the closed form
:func:`theory.npfl_rl.assumption1_eta` on the generator: an identity (the smallest admissible eta), not a bound.
"""

from __future__ import annotations

import numpy as np

from theory.npfl_rl import assumption1_eta
from verify.evidence import result_from_evidence, sample_evidence
from verify.npfl_rl import cite
from verify.npfl_rl._common import paper_point, problem_and_draws, random_settings
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import NPFL_ETA_RTOL

__all__ = ["CLAIMS", "check_assumption1", "evaluate_assumption1"]

_PROFILE = {"ci": {"seeds": tuple(range(5)), "batches": 2, "per_batch": 10},
            "thorough": {"seeds": tuple(range(50)), "batches": 10, "per_batch": 50}}


def evaluate_assumption1(settings: dict) -> Evidence:
    """|eta closed form - max_{q,r} ||w_q - w_r||^2| / max_{q,r} ||w_q - w_r||^2, / NPFL_ETA_RTOL."""
    problem, draws = problem_and_draws(settings)
    W = problem.true_models
    gaps = np.sum((W[:, None, :] - W[None, :, :]) ** 2, axis=-1)
    largest = float(gaps.max())
    eta = assumption1_eta(draws["w0"], draws["deltas"])
    rel = abs(eta - largest) / max(largest, 1e-300)
    return Evidence(measured=rel / NPFL_ETA_RTOL, bound=1.0, holds=bool(rel <= NPFL_ETA_RTOL),
                    parameters={**settings, "eta": eta, "max_pairwise": largest})


def _batch(rng: np.random.Generator, count: int) -> list[Evidence]:
    return [evaluate_assumption1(random_settings(rng)) for _ in range(count)]


def check_assumption1(ctx: CheckContext) -> CheckResult:
    claim_id = "npfl_rl.assumption1_eta"
    p = _PROFILE[ctx.profile]
    evidence = [evaluate_assumption1(paper_point(s)) for s in p["seeds"]]
    evidence += sample_evidence(ctx, claim_id, _batch, p["batches"], (p["per_batch"],))
    eta = [e.parameters["eta"] for e in evidence]
    mx = [e.parameters["max_pairwise"] for e in evidence]
    fig = FigureSpec(name="assumption1_eta", title="Assumption 1: closed-form eta vs max ||w_q - w_r||^2",
                     xlabel="max pairwise squared distance", ylabel="eta (closed form)", xscale="log", yscale="log",
                     series=(Series(label="instances", x=mx, y=eta, style="points"),
                             Series(label="y = x", x=(min(mx), max(mx)), y=(min(mx), max(mx)), style="dashed")))
    return result_from_evidence(claim_id, evidence, ctx=ctx, quantity="relative mismatch / NPFL_ETA_RTOL",
                                what="eta = (max delta - min delta)^2 ||w0||^2", figures=[fig],
                                form="identity",
                                form_reason=("the smallest eta of Assumption 1 equals a closed form (the largest "
                                             "pairwise squared distance), checked to rounding"))


CLAIMS = (
    Claim(
        id="npfl_rl.assumption1_eta",
        title="Assumption 1 (Publication 7) holds for the generator with eta = (max delta_q - min delta_q)^2 ||w_0||^2",
        citations=(cite("Publication 7, Assumption 1", "", "3459"),
                   cite("Thesis Chapter 6, experiment set-up (w_q = w_0 + delta_q w_0)", "", "1714")),
        statement=("For the experiment's cluster models w_q = (1 + delta_q) w_0 with scalar delta_q, "
                   "||w_q - w_r||^2 <= eta for all q, r, with the smallest such eta equal to "
                   "(max_q delta_q - min_q delta_q)^2 ||w_0||^2."),
        hypotheses=("scalar delta_q ~ U(-0.5, 0.5) (docs/papers/npfl_rl.md#erratum-d17)", "w_0 any", "Q >= 1"),
        check=check_assumption1,
        expected=Verdict.CONFIRMED,
        reason=("The closed form equals the largest pairwise squared distance to <= 1e-12 relative at the paper's size "
                "and on random instances. Assumption 1 itself is not used by any result of the seed "
                "(docs/papers/npfl_rl.md#erratum-d19)."),
    ),
)
