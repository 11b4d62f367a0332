"""Property tests of the stopping rule (34): the two-node orbit never has a finite gap; the projected-dual gap is a
certificate that reaches every eta."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reference_impl.gtv import run_algorithm1
from reference_impl.gtv.data import sbm_instance
from theory.gtv import dual_objective, primal_objective
from theory.gtv.stopping import (
    DualDomainProjector,
    projected_duality_gap,
    two_node_orbit,
    two_node_primal_gap,
    two_node_step,
)
from verify.budget import examples
from verify.gtv.stopping_rule import symbolic_orbit_certificate
from verify.tolerance import GTV_RANGE_RTOL


@pytest.mark.claim("gtv.gap_stopping_rule")
@given(k=st.integers(1, 400))
@example(k=1)
@example(k=44)
def test_two_node_orbit_never_enters_the_dual_domain(k):
    """Property: on the two-node instance (MOCHA, lambda = 1/2, L_1 = 0, L_2 = (w - 1)^2, seed step sizes) exact
    Algorithm 1 equals the closed form (1 - (3/2) r^k, 1 - (1/2) r^k, -(1/2) r^k), r = 2/3, and u_k != 0, so
    -s^(1) is outside dom L_1* = {0} and gap_k (34) = +inf."""
    x = (Fraction(0), Fraction(0), Fraction(0))
    for _ in range(k):
        x = two_node_step(*x)
    assert x == two_node_orbit(k)
    assert x[2] != 0


@pytest.mark.claim("gtv.gap_stopping_rule")
def test_closed_form_orbit_is_certified_symbolically():
    """Property: the closed-form orbit satisfies Algorithm 1's step for symbolic k >= 1 and starts at the first
    iterate (sympy), i.e. u_k = -(1/2)(2/3)^k for every k by induction."""
    cert = symbolic_orbit_certificate()
    assert cert["induction_residual_zero"] and cert["first_iterate_matches"]


@pytest.mark.claim("gtv.gap_projected_stopping_rule")
@given(k=st.integers(1, 300))
def test_projected_gap_is_exact_on_the_two_node_orbit(k):
    """Property: on the two-node orbit the projected dual point is 0, Dual(0) = P* = 0, so the projected gap equals
    P(w_k) - P* = (1/2)(4/9)^k exactly."""
    w1, w2, _ = two_node_orbit(k)
    assert two_node_primal_gap(w1, w2) == Fraction(1, 2) * Fraction(4, 9) ** k


@pytest.mark.claim("gtv.gap_projected_stopping_rule")
@settings(max_examples=examples("few"))
@given(seed=st.integers(0, 2**31 - 1), penalty=st.sampled_from(["l2", "l1", "mocha"]), m=st.integers(1, 3),
       iterations=st.integers(1, 300))
@example(seed=0, penalty="l2", m=2, iterations=50)
def test_projected_dual_point_is_feasible_and_bounds_the_suboptimality(seed, penalty, m, iterations):
    """Property: for squared losses with m_i < d the projected dual point lies in the dual domain (out-of-range part
    at rounding level, capacities respected) and its dual value is below the primal value of every iterate, so
    gap^Pi_k >= P(w_k) - P* (weak duality) while the gap (34) itself is +inf at non-converged iterates."""
    inst, _ = sbm_instance(np.random.default_rng(seed), sizes=(4, 4), p_in=0.8, p_out=0.2, d=4, m=m, noise=0.1,
                           lam=0.1)
    inst = inst.with_(penalty=penalty)
    projector = DualDomainProjector.build(inst)
    run = run_algorithm1(inst, max_iterations=iterations, tol=0.0, record_every=0)
    gap_pi, dual = projected_duality_gap(inst, run.w, run.u, range_rtol=GTV_RANGE_RTOL, projector=projector)
    assert dual.finite and dual.out_of_range.max() < 1e-12
    assert dual.capacity_excess <= 1e-12
    assert dual.value <= primal_objective(inst, run.w) + 1e-12 * max(1.0, abs(dual.value))
    assert gap_pi >= -1e-12
    assert dual_objective(inst, projector(projector(run.u)), range_rtol=GTV_RANGE_RTOL).value == pytest.approx(
        dual.value, rel=1e-9, abs=1e-12)
