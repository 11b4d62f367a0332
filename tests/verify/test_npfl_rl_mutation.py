"""Mutation tests of the NPFL-RL checks: a slightly wrong closed form or algorithm must be caught (REFUTED)."""

import numpy as np

import reference_impl.npfl_rl as npfl
from reference_impl.npfl_rl import admm, ground_truth
from verify.npfl_rl import assumption1, closed_form, convergence, dpg, fixed_point, sac, similarity, well_posedness
from verify.npfl_rl._common import paper_point
from verify.records import CheckContext, Verdict

CI = CheckContext(profile="ci")
SMALL = {"seed": 11, "K": 8, "d": 4, "D_lo": 2, "D_hi": 6, "mean_degree": 2.5, "lam": 0.1, "symmetric": False}


def test_k1_catches_a_diagonal_off_by_1e_3(monkeypatch):
    real = closed_form.npfl_primal_closed_form
    monkeypatch.setattr(closed_form, "npfl_primal_closed_form",
                        lambda H, b, m, s, c, omega, a: real(H, b, m, s, c + 1e-3, omega, a))
    assert closed_form.check_closed_form(CI).verdict is Verdict.REFUTED


def test_k2_catches_the_whole_cluster_ground_truth(monkeypatch):
    """(6.1) with tau = 0 over the whole cluster (ignoring the components) is not the
    limit (docs/papers/npfl_rl.md#review-notes)."""
    def whole_cluster(problem, *, method="cvxpy", tol=1e-10):
        reg = np.full(problem.Q, problem.lam)
        return ground_truth.ridge_groups(problem, problem.labels, reg, "normal", tol)

    monkeypatch.setitem(convergence.KINDS, "tau0", (dict(tau0=0.0), whole_cluster, 2000))
    evidence = convergence.evaluate_convergence(paper_point(0), "tau0")
    assert not evidence.holds


def test_k2_catches_the_printed_diagonal():
    """rho|N_k| instead of rho|N_k cap C_q| converges to a biased point
    (erratum D3, docs/papers/npfl_rl.md#erratum-d3)."""
    problem = convergence.problem_from(SMALL)
    gt = npfl.per_component_ridge(problem, method="normal")
    run = npfl.run_npfl(problem, npfl.NPFLConfig(tau0=0.0, diagonal="printed"), 2000, reference=gt.w)
    assert run.reference_error[0, -1] > 1e-3


def test_k4_catches_a_ten_percent_tau_error(monkeypatch):
    real = fixed_point.coupled_fixed_point
    monkeypatch.setattr(fixed_point, "coupled_fixed_point", lambda p, tau, **kw: real(p, 1.1 * np.asarray(tau), **kw))
    evidence = fixed_point.evaluate_fixed_point({**SMALL, "tau_seed": 0, "tau_hi": 1.0})
    assert not evidence.holds


def test_k5_catches_a_derivative_off_by_1e_6(monkeypatch):
    real = npfl.PrimalMap.derivative
    monkeypatch.setattr(npfl.PrimalMap, "derivative", lambda self, a: real(self, a) * (1 + 1e-6))
    assert not dpg.evaluate_dpg_derivative({**SMALL, "n0": 20}).holds


def test_k6_catches_an_ascent_step(monkeypatch):
    real = npfl.PrimalMap.derivative
    monkeypatch.setattr(npfl.PrimalMap, "derivative", lambda self, a: -real(self, a))
    assert not dpg.evaluate_dpg_descent({**SMALL, "n0": 20}).holds


def test_k7_catches_a_reversed_sac_direction(monkeypatch):
    real = npfl.PrimalMap.sac_step
    monkeypatch.setattr(npfl.PrimalMap, "sac_step", lambda self, t, alpha, delta: -real(self, t, alpha, delta))
    assert not sac.evaluate_sac_rule({**SMALL, "state_seed": 1, "delta": 0.1, "nu": 0.05}).holds


def test_k7_catches_a_step_of_delta_nu(monkeypatch):
    real = admm.sac_step
    monkeypatch.setattr(admm, "sac_step", lambda S, m, s, t, alpha, delta: 2.0 * real(S, m, s, t, alpha, delta))
    assert not sac.evaluate_sac_run({**SMALL, "run_seed": 0, "delta": 0.1, "nu": 0.05, "epochs": 1, "N": 30}).holds


def test_k8_catches_a_reversed_tau_grid(monkeypatch):
    real = similarity.coupled_fixed_point
    monkeypatch.setattr(similarity, "coupled_fixed_point", lambda p, tau, **kw: real(p, 1.6 - tau, **kw))
    assert similarity.check_similarity_monotone(CI).verdict is Verdict.REFUTED


def test_k9_catches_an_unsquared_spread(monkeypatch):
    monkeypatch.setattr(assumption1, "assumption1_eta",
                        lambda w0, dq: float(np.ptp(dq)) * float(np.asarray(w0) @ np.asarray(w0)))
    assert assumption1.check_assumption1(CI).verdict is Verdict.REFUTED


def test_k10_catches_a_missing_projection():
    settings = dict(well_posedness.PAPER_BREACH)
    assert not well_posedness.evaluate_well_posed(settings, False).holds
    assert well_posedness.evaluate_well_posed(settings, True).holds
