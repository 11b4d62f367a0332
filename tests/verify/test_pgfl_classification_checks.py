"""Mutation tests of the PGFL V0 (docs/papers/pgfl.md#single-step) (single-step) and classification
(M-1 (docs/papers/pgfl.md#exp-m) ... M-3 (docs/papers/pgfl.md#exp-m)) checks: a slightly wrong closed form or arm flips
the verdict, so each check can fail."""

import numpy as np
import pytest

from reference_impl.pgfl import cluster_optima
from verify.pgfl import single_step as ss
from verify.records import CheckContext, Verdict

CI = CheckContext(profile="ci", seed=0)


def _pa_optimum(problem):
    """A slightly wrong limit: (Pa), the unweighted cluster optimum, instead of the group-weighted one."""
    return np.asarray(cluster_optima(problem)), 1.0


def test_corrected_single_step_check_refutes_the_unweighted_limit():
    result = ss.check_single_step_corrected(CI, limit_fn=_pa_optimum)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert not ss.evaluate_single_step_corrected(result.counterexample, limit_fn=_pa_optimum).holds


def test_printed_single_step_check_confirms_a_convergent_update():
    """Handing the printed-claim check the corrected update makes it confirm: the check is not refuting blindly."""
    result = ss.check_single_step_printed(CI, server_update="single_step_corrected")
    assert result.verdict is Verdict.CONFIRMED, result.summary


def test_single_step_affine_map_matches_the_simulation():
    """The affine map (restricted to sum_s psi = 0) reproduces 5 simulated iterations exactly (to rounding)."""
    from reference_impl.pgfl import PGFLConfig, run_pgfl
    from verify.pgfl._instances import build_instance

    problem = build_instance(ss.PAPER_LIKE_INSTANCE)
    config = PGFLConfig(rho=0.7 * problem.max_curvature, server_update="single_step_corrected")
    T, c, B = ss.single_step_affine_map(problem, config)
    u = np.zeros(T.shape[0])
    for _ in range(5):
        u = T @ u + c
    run = run_pgfl(problem, config, 5, np.random.default_rng(0))
    full = B @ u
    n_srv = problem.S * problem.n_clusters * problem.d
    assert np.allclose(full[:n_srv], run.state.w_servers.ravel(), rtol=0, atol=1e-12)
    assert np.allclose(full[-n_srv:], run.state.psi.ravel(), rtol=0, atol=1e-12)


# --- classification experiments (verify/pgfl/classification.py) ---------------------------------------------

import dataclasses  # noqa: E402

from verify.harness import above, below, decide  # noqa: E402
from verify.pgfl import classification as cl  # noqa: E402


def test_m1_check_confirms_the_opposite_direction():
    """The M-1 (docs/papers/pgfl.md#exp-m) spec with the opposite statement (tau = 0.4 *lowers* accuracy) confirms: the
    check is not withholding blindly, and its evidence is directional."""
    spec = dataclasses.replace(cl.M1, statements=(below(("M-1", 0.4), ("M-1", 0.0), "final"),))
    assert decide(CI, spec).verdict is Verdict.CONFIRMED


def test_m1_inside_the_setting_would_be_refuted():
    """Without the outside-setting guard the same evidence refutes M-1 (docs/papers/pgfl.md#exp-m) (its negation is
    shown), with a counterexample that names the statement."""
    result = decide(CI, dataclasses.replace(cl.M1, outside_setting=""))
    assert result.verdict is Verdict.REFUTED, result.summary
    assert result.counterexample["statement"] == 0


def test_an_arm_against_itself_never_confirms_an_ordering():
    """A zero effect (the same arm twice) is never shown above or below itself."""
    for make in (above, below):
        spec = dataclasses.replace(cl.M2, statements=(make(("M-2", 0.4), ("M-2", 0.4), "final"),))
        assert decide(CI, spec).verdict is Verdict.NOT_CHECKABLE


def test_m3_is_not_checkable_outside_the_setting_and_tau_one_shows_no_effect():
    """At ci tau = 0.4 and 0.8 are above tau = 0, but 'tau = 1.0 degrades' has its interval inside the one-point
    accuracy margin: no number of replicates would show it, so the point is 'no effect beyond the practical margin
    either way' (and no replicates are promised), outside the paper's setting."""
    result = cl.M3.check(CI)
    assert result.verdict is Verdict.NOT_CHECKABLE, result.summary
    assert result.details["outside_paper_setting"]
    assert "no effect beyond the practical margin either way" in result.summary
    assert not result.details["replicates_that_would_decide"]


def test_scale_validation():
    with pytest.raises(ValueError, match="replicates must be an integer >= 2"):
        cl.Scale(servers=2, clients_per_server=5, iterations=3, replicates=1, private_replicates=2)
    with pytest.raises(ValueError, match="clients_per_server must be >= 3"):
        cl.Scale(servers=2, clients_per_server=2, iterations=3, replicates=2, private_replicates=2)
