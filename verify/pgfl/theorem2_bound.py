r"""PGFL Theorem II and its Corollary: the right-hand side of the inter-cluster bound.

Checks the closed form :func:`theory.bounds.intercluster_bound` against the paper's literal sum
of products and the one-step recursion (three independent evaluations), its range
:math:`0 \le B_n \le \eta\min(1, \sum_{j\le n}\tau^{(j)})`, and the Corollary's value
:math:`\tau^{(n)}\eta`. Whether simulated PGFL iterates obey the bound is a different claim
(``pgfl.theorem2``, which needs the reference implementation).
"""

from __future__ import annotations

import numpy as np

from theory.bounds import (
    corollary_single_step_bound,
    intercluster_bound,
    intercluster_bound_recursive,
    intercluster_bound_sum,
)
from verify.evidence import result_from_evidence, sample_evidence
from verify.papers import SEED_THESIS
from verify.pgfl import cite
from verify.pgfl._instances import TAU_SEQUENCES
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import UNIT_ROUNDOFF, gamma, relative_gap

__all__ = ["CLAIMS", "check_bound_identity", "check_corollary_value", "evaluate_bound_identity",
           "evaluate_corollary_value", ]

#: The paper's own schedules (seed 000, Section V: tau = 0.4 and 0.4 * 0.98^n, N = 200 iterations).
PAPER_SCHEDULES = {
    "tau = 0.1": lambda n: np.full(n, 0.1),
    "tau = 0.4": lambda n: np.full(n, 0.4),
    "tau = 0.9": lambda n: np.full(n, 0.9),
    "tau = 0.4 * 0.98^n": lambda n: 0.4 * 0.98 ** np.arange(1, n + 1),
}
_PROFILE = {"ci": {"batches": 8, "per_batch": 40, "max_len": 300},
            "thorough": {"batches": 32, "per_batch": 100, "max_len": 2000}}


def _error_bounds(n: int):
    """Relative rounding-error bounds of the three evaluations of B_1..B_n (see their docstrings)."""
    gamma(3 * n + 1)  # validates the largest count (below 1/u)
    m = np.arange(1, n + 1, dtype=np.float64)
    # gamma_k = k u / (1 - k u), elementwise (k u is exact: u is a power of two)
    closed, literal = (m + 4.0) * UNIT_ROUNDOFF, (3.0 * m + 1.0) * UNIT_ROUNDOFF
    return closed / (1.0 - closed), literal / (1.0 - literal)


def evaluate_bound_identity(taus, eta, *, bound=intercluster_bound) -> Evidence:
    r"""Compare ``bound(taus, eta)`` with the literal sum and the recursion; check its range.

    ``measured`` is the largest discrepancy between two evaluations divided by the sum of their
    certified rounding-error bounds (so the identity holds when it is at most 1). The range
    conditions :math:`B_m \le \eta(1+\gamma)`, :math:`B_m \le \eta\sum_{j\le m}\tau^{(j)}(1+\gamma)`
    and :math:`B_m \ge 0` must hold as well.
    """
    taus = np.asarray(taus, dtype=np.float64)
    closed = np.asarray(bound(taus, eta), dtype=np.float64)
    literal = intercluster_bound_sum(taus, eta)
    recursive = intercluster_bound_recursive(taus, eta)
    tol_closed, tol_literal = _error_bounds(taus.size)
    scale = tol_closed + tol_literal
    ratio = max(float(np.max(relative_gap(closed, literal) / scale)),
                float(np.max(relative_gap(closed, recursive) / scale)))
    slack = 1.0 + tol_closed
    in_range = bool(np.all(closed >= 0.0) and np.all(closed <= eta * slack)
                    and np.all(closed <= eta * np.cumsum(taus) * slack * (1.0 + tol_literal)))
    return Evidence(measured=ratio, bound=1.0, holds=bool(ratio <= 1.0 and in_range),
                    parameters={"taus": taus.tolist(), "eta": float(eta), "in_range": in_range})


def _identity_batch(rng: np.random.Generator, count: int, max_len: int, bound) -> list[Evidence]:
    out = []
    for _ in range(count):
        taus = TAU_SEQUENCES.sample(rng, max_len=max_len)
        eta = float(10.0 ** rng.uniform(-6.0, 6.0))
        out.append(evaluate_bound_identity(taus, eta, bound=bound))
    return out


def _bound_figure() -> FigureSpec:
    n = np.arange(1, 201)
    series = []
    for label, schedule in PAPER_SCHEDULES.items():
        taus = schedule(n.size)
        series.append(Series(label=f"{label} (product form)", x=n, y=intercluster_bound(taus, 1.0), group=label))
        every = np.unique(np.geomspace(1, n.size, 12).astype(int)) - 1
        series.append(Series(label=f"{label} (literal sum)", x=n[every],
                             y=intercluster_bound_sum(taus, 1.0)[every], style="points", group=label))
    series.append(Series(label="eta", x=(1, 200), y=(1.0, 1.0), style="dashed"))
    return FigureSpec(name="bound_sequence", title="PGFL Theorem II bound B_n / eta",
                      xlabel="iteration n", ylabel="B_n / eta", series=tuple(series), xscale="log")


def check_bound_identity(ctx: CheckContext, *, bound=intercluster_bound) -> CheckResult:
    """Random tau sequences (six shapes) and the paper's schedules; three evaluations must agree."""
    p = _PROFILE[ctx.profile]
    evidence = sample_evidence(ctx, "pgfl.theorem2.bound_closed_form", _identity_batch, p["batches"],
                               (p["per_batch"], p["max_len"], bound))
    evidence += [evaluate_bound_identity(schedule(200), 1.0, bound=bound) for schedule in PAPER_SCHEDULES.values()]
    return result_from_evidence(
        "pgfl.theorem2.bound_closed_form", evidence, ctx=ctx,
        quantity="max |discrepancy| between evaluations / certified rounding-error bound",
        what="sum-of-products = eta(1 - prod(1 - tau)) = recursion, 0 <= B_n <= eta min(1, sum tau)",
        figures=[_bound_figure()],
        details={"max_sequence_length": p["max_len"]},
        form="identity",
        form_reason=("an algebraic identity (three evaluations of the same closed form agree to their certified "
                     "rounding), not a bound on the algorithm"),
    )


def evaluate_corollary_value(n: int, tau_n: float, eta: float, *, bound=intercluster_bound) -> Evidence:
    r"""With :math:`\tau^{(i)} = 0` for :math:`i < n`, every evaluation of :math:`B_n` must equal
    :math:`\tau^{(n)}\eta`."""
    taus = np.zeros(n)
    taus[-1] = tau_n
    target = corollary_single_step_bound(tau_n, eta)
    closed = float(np.asarray(bound(taus, eta))[-1])
    literal = float(intercluster_bound_sum(taus, eta)[-1])
    tol = gamma(n + 4) + gamma(3 * n + 1)
    ratio = max(float(relative_gap(closed, target)), float(relative_gap(literal, target))) / tol
    return Evidence(measured=ratio, bound=1.0, holds=ratio <= 1.0,
                    parameters={"n": int(n), "tau_n": float(tau_n), "eta": float(eta)})


def _corollary_batch(rng: np.random.Generator, count: int, max_len: int, bound) -> list[Evidence]:
    return [evaluate_corollary_value(int(rng.integers(1, max_len + 1)), float(rng.uniform(0.0, 1.0)),
                                     float(10.0 ** rng.uniform(-6.0, 6.0)), bound=bound) for _ in range(count)]


def check_corollary_value(ctx: CheckContext, *, bound=intercluster_bound) -> CheckResult:
    """Random (n, tau_n, eta) and the paper's tau in {0.1, 0.4, 0.9}: B_n equals tau_n * eta."""
    p = _PROFILE[ctx.profile]
    evidence = sample_evidence(ctx, "pgfl.corollary.bound_value", _corollary_batch, p["batches"],
                               (p["per_batch"], p["max_len"], bound))
    evidence += [evaluate_corollary_value(400, tau, 1.0, bound=bound) for tau in (0.1, 0.4, 0.9)]
    tau_grid = np.linspace(0.0, 1.0, 21)
    figure = FigureSpec(
        name="corollary_value", title="PGFL Corollary: B_n with a single non-zero tau (eta = 1)",
        xlabel="tau_n", ylabel="B_n / eta",
        series=(Series(label="tau_n * eta (Corollary)", x=tau_grid, y=tau_grid, group="c"),
                Series(label="Theorem II bound at n = 50, tau_i = 0 for i < n", x=tau_grid,
                       y=[intercluster_bound(np.r_[np.zeros(49), t], 1.0)[-1] for t in tau_grid],
                       style="points", group="c")))
    return result_from_evidence(
        "pgfl.corollary.bound_value", evidence, ctx=ctx,
        quantity="max relative gap to tau_n * eta / certified rounding-error bound",
        what="B_n = tau_n eta when tau_i = 0 for i < n", figures=[figure],
        form="identity", form_reason="an algebraic identity (the sum of products reduces to one term), to rounding")


CLAIMS = (
    Claim(
        id="pgfl.theorem2.bound_closed_form",
        title="Theorem II: the bound's sum of products collapses to eta(1 - prod(1 - tau))",
        citations=(cite(label="Theorem II", equation="(27)-(28)", lines="258-264"),
                   cite(label="Theorem 5.2", equation="(5.27)-(5.28)", seed=SEED_THESIS)),
        statement=("The right-hand side of Theorem II, B_n = sum_{i=1}^n (prod_{j=i+1}^n (1 - tau_j)) "
                   "tau_i eta, equals eta (1 - prod_{j=1}^n (1 - tau_j)) and the recursion "
                   "B_n = (1 - tau_n) B_{n-1} + tau_n eta (B_0 = 0) for every tau sequence in [0, 1]; "
                   "hence 0 <= B_n <= eta min(1, sum_{j<=n} tau_j)."),
        hypotheses=("tau_j in [0, 1] for every j", "eta >= 0", "n >= 1"),
        check=check_bound_identity,
        expected=Verdict.CONFIRMED,
        reason=("Telescoping identity (docs/papers/pgfl.md#theorem-2); the three "
                "evaluations agree within their certified rounding-error bounds. It concerns the "
                "bound only: B_n does not shrink once tau_n -> 0 (B_200 ~ eta for tau = 0.4 * 0.98^n)."),
    ),
    Claim(
        id="pgfl.corollary.bound_value",
        title="Corollary: a single step of inter-cluster learning gives the bound tau_n eta",
        citations=(cite(label="Corollary", equation="(40)", lines="326-330"),
                   cite(label="Corollary to Theorem 5.2", equation="(5.29)", seed=SEED_THESIS)),
        statement=("If tau_i = 0 for all i < n and tau_n != 0, the bound of Theorem II equals tau_n eta."),
        hypotheses=("tau_i = 0 for i < n", "tau_n in (0, 1]", "eta >= 0"),
        check=check_corollary_value,
        expected=Verdict.CONFIRMED,
        reason=("Only the i = n term of the sum survives and its product is empty. This is the "
                "Corollary's right-hand side; whether PGFL iterates obey it is a separate claim."),
    ),
)
