"""The Theorem II checks discriminate: a correct bound passes the same measurements, a wrong identity fails."""

import numpy as np

from reference_impl.pgfl import PGFLConfig, run_pgfl
from verify.pgfl.theorem2 import anisotropic_instance, equal_optima_instance, evaluate_steady_state, gap_sequence


def test_equal_curvatures_give_no_gap():
    """Control: equal optima AND equal curvatures make both clusters identical, so D_n = 0 = B_n."""
    gaps = gap_sequence(equal_optima_instance(2.0, 2.0, 1.0), PGFLConfig(rho=1.0, taus=(0.4,)), 30, seed=0)
    assert np.max(gaps) <= (8 * np.finfo(float).eps) ** 2  # (1 - tau) x + tau x rounds, nothing more


def test_steady_state_evidence_records_a_contracting_iteration():
    evidence = evaluate_steady_state(anisotropic_instance().max_curvature, 0.4, iterations=2)
    assert evidence.parameters["spectral_radius"] < 1.0 and evidence.parameters["fixed_point_residual"] < 1e-12


def test_gap_sequence_uses_common_random_numbers():
    """Scheduled, noisy runs with tau = 0 on both sides coincide exactly (same draws)."""
    p = anisotropic_instance()
    cfg = PGFLConfig(rho=1.0, taus=(0.0,), algorithm="alg2", phi0=0.1, C=0.1, scheduled=1)
    assert np.max(gap_sequence(p, cfg, 5, seed=3, runs=2)) == 0.0
    a = run_pgfl(p, cfg, 3, np.random.default_rng(1)).state.w_servers
    b = run_pgfl(p, cfg, 3, np.random.default_rng(1)).state.w_servers
    assert np.array_equal(a, b)
