"""Property tests of the gap (34) is +inf off range(X_i^T)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl.gtv.data import sbm_instance
from theory.gtv import squared_loss_conjugate
from verify.budget import examples
from verify.gtv.gap import conjugate_cvxpy
from verify.tolerance import GTV_RANGE_RTOL


@pytest.mark.claim("gtv.e15_gap_domain")
@settings(max_examples=examples("several"))
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(1, 4), scale=st.floats(1e-6, 1.0))
def test_conjugate_is_infinite_exactly_off_the_range(seed, m, scale):
    """Property: for m_i < d, L_i*(s) = +inf for s with a component outside range(X_i^T) (CVXPY: unbounded) and
    equals the closed form on the range (CVXPY: same value)."""
    rng = np.random.default_rng(seed)
    inst, _ = sbm_instance(rng, sizes=(3, 3), p_in=1.0, p_out=0.5, d=5, m=m, noise=0.1, lam=0.1)
    s_in = inst.X[0, :m].T @ rng.normal(size=m)
    null = np.linalg.svd(inst.X[0, :m])[2][-1]
    s_out = s_in + scale * np.linalg.norm(s_in) * null
    S = np.zeros((inst.n, inst.d))
    S[0] = s_in
    closed_in, _ = squared_loss_conjugate(inst, S, GTV_RANGE_RTOL)
    status, value = conjugate_cvxpy(inst, 0, s_in)
    assert status == "optimal" and value == pytest.approx(closed_in[0], rel=1e-7, abs=1e-7)
    S[0] = s_out
    closed_out, rel = squared_loss_conjugate(inst, S, GTV_RANGE_RTOL)
    assert np.isinf(closed_out[0]) and rel[0] > GTV_RANGE_RTOL
    assert conjugate_cvxpy(inst, 0, s_out)[0] == "unbounded"
