"""The PAO-Fed analysis checks discriminate: a slightly wrong closed form flips every verdict."""

import numpy as np
import pytest

from theory.msd import expected_B, mean_operator, msd_steady_state, qb_matrix
from verify.paofed._common import SOLVER_RTOL
from verify.paofed.appendix_b import check_appendix_b
from verify.paofed.expectations_enumeration import check_expectations
from verify.paofed.naive_structured import check_naive_equals_structured
from verify.paofed.reference_table import check_reference_table
from verify.paofed.theorem1 import check_theorem1, check_theorem1_sufficient
from verify.paofed.theorem2 import _default_rho, check_theorem2, check_theorem2_seed_model
from verify.records import CheckContext, Verdict


def _qb_inflated(m):
    return qb_matrix(m) * (1.0 + 1e-10)


def _eb_literal_app_a(m):
    """E[B_e] with the server's own weight left at I (App. A's blocks without the -sum beta S term)."""
    EB = expected_B(m)
    EB[0, 0] = 1.0
    return EB


def _qb_clamped(m):
    """Q_B with negative entries clipped to zero (what App. B asserts)."""
    q = qb_matrix(m).tocsr(copy=True)
    q.data = np.maximum(q.data, 0.0)
    return q


def _mean_doubled_step(m, mu):
    return mean_operator(m, 2.0 * mu)


def _mean_proof_restricted(m, mu):
    """The proof's reduced recursion (P4 line 2694): the local blocks only, E[A_e] and E[B_e] dropped."""
    import scipy.sparse as sp

    return sp.block_diag([np.eye(m.D) - mu * m.R[k] for k in range(m.K)], format="csr")


def _rho_exact_as_seed(moments, model, mu):
    return _default_rho(moments, "exact", mu)


def _rho_proof_bound(moments, model, mu):
    """P4 (36)'s middle-factor bound max |1 - mu (lambda_i + lambda_j)| (zero blocks of R_e left out)."""
    lam = np.linalg.eigvalsh(moments.R).ravel()
    return float(np.max(np.abs(1.0 - mu * (lam[:, None] + lam[None, :]))))


def _msd_off_by_step(m, model):
    return msd_steady_state(m, model, mu=m.mu * (1.0 + 1e-8), rtol=SOLVER_RTOL).msd  # a step off by 1e-8 relative


def _msd_biased(m, model, mu):
    return msd_steady_state(m, model, mu=mu, rtol=SOLVER_RTOL).msd * (1.0 + 3e-4)  # a 3e-4 bias: far above rounding


@pytest.mark.parametrize(
    ("check", "kwargs"),
    [(check_expectations, {"qb_fn": _qb_inflated}),
     (check_expectations, {"eb_fn": _eb_literal_app_a}),
     (check_theorem1_sufficient, {"mean_matrix_fn": _mean_doubled_step}),
     (check_theorem2_seed_model, {"rho_fn": _rho_exact_as_seed}),
     (check_naive_equals_structured, {"structured_msd_fn": _msd_off_by_step}),
     (check_reference_table, {"msd_fn": _msd_biased})],
    ids=["qb-1e-10", "eb-server-weight", "mean-2mu", "seed-model-uses-exact-F", "structured-mu-1e-8",
         "table-msd-3e-4"],
)
def test_confirmed_checks_refute_a_slightly_wrong_closed_form(check, kwargs):
    """A wrong closed form must be caught: the confirmed checks can fail."""
    result = check(CheckContext(), **kwargs)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert result.counterexample and result.measured > result.bound


@pytest.mark.parametrize(
    ("check", "kwargs"),
    [(check_appendix_b, {"qb_fn": _qb_clamped}),
     (check_theorem1, {"mean_matrix_fn": _mean_proof_restricted}),
     (check_theorem2, {"rho_fn": _rho_proof_bound})],
    ids=["qb-clamped", "theorem1-proof-recursion", "theorem2-proof-bound"],
)
def test_refuting_checks_confirm_the_papers_own_model(check, kwargs):
    """The refutations come from the full model, not from the check: fed the paper's own (reduced or clipped)
    object, each refuting check confirms the claim."""
    result = check(CheckContext(), **kwargs)
    assert result.verdict is Verdict.CONFIRMED, result.summary
