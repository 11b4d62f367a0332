"""Property tests of the PGFL regression experiments R-1 (docs/papers/pgfl.md#exp-r1) ...
R-7 (docs/papers/pgfl.md#exp-r6) (findings and corrected statements).

Each property decides one of the claim's statements with the harness (:func:`verify.harness.evaluate_statement`,
exact sign-test bounds of the median paired dB difference) on a reduced instance (S = 4, 15 clients per server,
d = 30, 60 iterations, 12 replicates) for a drawn root seed and, where the paper's statement generalises, a drawn
parameter around the paper's value; the ``@example`` is the paper's value. A property asserts that a statement is
*shown* (p <= ALPHA), never that something failed to reach significance.
"""


import pytest
from hypothesis import example, given, settings, target

from verify.budget import examples
from verify.harness import below, evaluate_statement, within
from verify.pgfl._regression import DESIGN, Arm, Scale
from verify.pgfl.experiments import (
    LOW_SIMILARITY_GAMMA,
    NEAR_IDENTICAL_DB,
    PAPER_PHI0,
    PAPER_TAU,
    PAPER_TAU_DECAY,
    PAPER_ZETA,
    PHI0_GRID,
    ZETA_GRID,
)
from verify.records import CheckContext
from verify.strategies import (
    pgfl_dissimilar_gammas,
    pgfl_experiment_seeds,
    pgfl_large_taus,
    pgfl_moderate_taus,
    pgfl_phi0_pairs,
    pgfl_tau_decays,
    pgfl_zeta_pairs,
)

#: Level of each property's one statement (12 replicates: a sign test can reach 2^-12 = 2.4e-4).
ALPHA = 0.01
MINI = Scale(servers=4, clients_per_server=15, d=30, scheduled=3, iterations=60, sweep_iteration=40,
             early_iteration=10, limit_iterations=150, C=0.5)
R1 = {"scheduling": False, "phi0": None}
R2 = {"scheduling": True, "phi0": None}
R3 = {"scheduling": True, "phi0": PAPER_PHI0, "zeta": PAPER_ZETA}


def _sweep(**arm) -> Arm:
    return Arm(horizon="sweep", **arm)


def assert_shown(seed, statement, *, n=12, point=None):
    """The statement's p-value on the reduced instance is <= ALPHA; target() pushes toward a violation."""
    outcome = evaluate_statement(CheckContext(seed=seed), DESIGN, statement, n, ALPHA, point=point, scale=MINI)
    target(outcome.p_confirm, label=f"p-value of: {statement.text}")
    assert outcome.p_confirm <= ALPHA, (statement.text, outcome)
    return outcome


@pytest.mark.claim("pgfl.experiment_r1_tau")
@settings(max_examples=examples("few"))
@given(seed=pgfl_experiment_seeds(), tau=pgfl_moderate_taus())
@example(seed=0, tau=PAPER_TAU)
def test_inter_cluster_learning_speeds_up_the_start(seed, tau):
    """Property: without privacy or scheduling, PGFL with tau in [0.2, 0.5] has a significantly lower NMSD
    than tau = 0 after 10 iterations (the improved convergence speed of R-1 (docs/papers/pgfl.md#exp-r1))."""
    assert_shown(seed, below(Arm(label="tau", tau=tau, **R1), Arm(label="tau=0", tau=0.0, **R1), "early"))


@pytest.mark.claim("pgfl.experiment_r1_gfl")
@pytest.mark.claim("pgfl.experiment_r1_gfl_competitive")
@settings(max_examples=examples("few"))
@given(seed=pgfl_experiment_seeds())
@example(seed=0)
def test_gfl_is_within_one_db_of_pgfl_when_clusters_are_similar(seed):
    """Property: with gamma ~ U(-0.15, 0.15), GFL's NMSD at the horizon is less than 1 dB above PGFL's
    (tau = 0.4, the better PGFL curve): the 'significant' superiority of PGFL over GFL is absent."""
    assert_shown(seed, below(Arm(label="GFL", architecture="gfl", **R1), Arm(label="PGFL", tau=PAPER_TAU, **R1),
                             "horizon", margin=-NEAR_IDENTICAL_DB))


@pytest.mark.claim("pgfl.experiment_r1_clusterfl")
@settings(max_examples=examples("few"))
@given(seed=pgfl_experiment_seeds(), tau=pgfl_moderate_taus())
@example(seed=0, tau=PAPER_TAU)
def test_clusterfl_is_worse_than_pgfl(seed, tau):
    """Property: ClusterFL (no server links) has a significantly higher NMSD than PGFL at the horizon."""
    assert_shown(seed, below(Arm(label="PGFL", tau=tau, **R1),
                             Arm(label="ClusterFL", architecture="clusterfl", tau=tau, **R1), "horizon"))


@pytest.mark.claim("pgfl.experiment_r2_scheduling")
@settings(max_examples=examples("few"))
@given(seed=pgfl_experiment_seeds(), tau=pgfl_moderate_taus())
@example(seed=0, tau=PAPER_TAU)
@example(seed=0, tau=0.0)
def test_scheduling_slows_pgfl(seed, tau):
    """Property: scheduling 3 of 15 clients per server gives PGFL a significantly higher NMSD after 10
    iterations than full participation."""
    assert_shown(seed, below(Arm(label="full", tau=tau, **R1), Arm(label="scheduled", tau=tau, **R2), "early"))


@pytest.mark.claim("pgfl.experiment_r2_gfl")
@pytest.mark.claim("pgfl.experiment_r2_gfl_slower")
@settings(max_examples=examples("few"))
@given(seed=pgfl_experiment_seeds())
@example(seed=0)
def test_scheduling_slows_gfl(seed):
    """Property: scheduled GFL has a significantly higher NMSD than full-participation GFL at the horizon
    (so GFL does not perform better with scheduling)."""
    assert_shown(seed, below(Arm(label="GFL full", architecture="gfl", **R1),
                             Arm(label="GFL scheduled", architecture="gfl", **R2), "horizon"))


@pytest.mark.claim("pgfl.experiment_r3_privacy_slows")
@settings(max_examples=examples("few"))
@given(seed=pgfl_experiment_seeds(), tau=pgfl_moderate_taus())
@example(seed=0, tau=PAPER_TAU)
def test_privacy_noise_slows_pgfl(seed, tau):
    """Property: with scheduling, the privacy noise (phi0 = 0.001, zeta = 0.99) gives a significantly higher NMSD
    half-way through the horizon."""
    assert_shown(seed, below(Arm(label="plain", tau=tau, **R2), Arm(label="private", tau=tau, **R3), "mid"))


@pytest.mark.claim("pgfl.experiment_r3_privacy_cost")
@settings(max_examples=examples("few"))
@given(seed=pgfl_experiment_seeds())
@example(seed=0)
def test_privacy_cost_exceeds_one_db_at_the_horizon(seed):
    """Property: at the horizon the private NMSD is significantly more than 1 dB above the non-private one
    (C = 1 scaled to the instance), so the two are not 'nearly identical' (the finding)."""
    assert_shown(seed, below(Arm(label="plain", tau=PAPER_TAU, **R2), Arm(label="private", tau=PAPER_TAU, **R3),
                             "horizon", margin=NEAR_IDENTICAL_DB))


@pytest.mark.claim("pgfl.experiment_r4_tau_sweep")
@settings(max_examples=examples("few"))
@given(seed=pgfl_experiment_seeds(), tau=pgfl_moderate_taus())
@example(seed=0, tau=PAPER_TAU)
def test_moderate_tau_beats_tau_zero_under_privacy(seed, tau):
    """Property: with scheduling and privacy, tau in [0.2, 0.5] gives a significantly lower NMSD at the sweep
    iteration than tau = 0."""
    assert_shown(seed, below(_sweep(label="tau", tau=tau, **R3), _sweep(label="tau=0", tau=0.0, **R3), "sweep"))


@pytest.mark.claim("pgfl.experiment_r4_large_tau")
@pytest.mark.claim("pgfl.experiment_r4_large_tau_flat")
@settings(max_examples=examples("few"))
@given(seed=pgfl_experiment_seeds(), large=pgfl_large_taus())
@example(seed=0, large=0.9)
def test_large_tau_is_within_one_db_of_the_paper_tau(seed, large):
    """Property: with scheduling and privacy, the NMSD at tau in [0.6, 0.95] is within 1 dB of the NMSD at
    tau = 0.4 at the sweep iteration (two one-sided tests): no visible degradation."""
    big, ref = _sweep(label="large", tau=large, **R3), _sweep(label="0.4", tau=PAPER_TAU, **R3)
    assert_shown(seed, within(big, ref, "sweep", margin=NEAR_IDENTICAL_DB))


@pytest.mark.claim("pgfl.experiment_r5_fixed_tau")
@settings(max_examples=examples("few"))
@given(seed=pgfl_experiment_seeds(), gamma=pgfl_dissimilar_gammas())
@example(seed=0, gamma=LOW_SIMILARITY_GAMMA)
def test_fixed_tau_starts_faster_with_dissimilar_clusters(seed, gamma):
    """Property: with gamma >= 0.5, scheduling and privacy, tau = 0.4 has a significantly lower NMSD than tau = 0
    after 10 iterations."""
    noisy = {**R3, "gamma": gamma}
    assert_shown(seed, below(Arm(label="0.4", tau=PAPER_TAU, **noisy), Arm(label="0", tau=0.0, **noisy), "early"))


@pytest.mark.claim("pgfl.experiment_r5_fixed_tau")
@settings(max_examples=examples("one"))
@given(seed=pgfl_experiment_seeds(), gamma=pgfl_dissimilar_gammas())
@example(seed=0, gamma=LOW_SIMILARITY_GAMMA)
def test_fixed_tau_has_a_worse_steady_state_with_dissimilar_clusters(seed, gamma):
    """Property: with gamma >= 0.5, the noise-free full-participation limit (the steady state) of tau = 0.4 has a
    significantly higher NMSD than that of tau = 0."""
    limit = {**R1, "gamma": gamma, "horizon": "limit"}
    assert_shown(seed, below(Arm(label="0", tau=0.0, **limit), Arm(label="0.4", tau=PAPER_TAU, **limit), "limit"), n=24)


@pytest.mark.claim("pgfl.experiment_r5_decaying_tau")
@settings(max_examples=examples("one"))
@given(seed=pgfl_experiment_seeds(), beta=pgfl_tau_decays())
@example(seed=0, beta=PAPER_TAU_DECAY)
def test_decaying_tau_keeps_the_start_and_reaches_tau_zero(seed, beta):
    """Property: with gamma = 0.5, tau = 0.4 beta^n (beta in [0.95, 0.99]) has a significantly lower NMSD than
    tau = 0 after 10 iterations (scheduling, privacy), and its noise-free run is less than 1 dB above tau = 0's."""
    noisy = {**R3, "gamma": LOW_SIMILARITY_GAMMA}
    limit = {**R1, "gamma": LOW_SIMILARITY_GAMMA, "horizon": "limit"}
    assert_shown(seed, below(Arm(label="decaying", tau_decay=beta, **noisy), Arm(label="0", tau=0.0, **noisy), "early"))
    assert_shown(seed, below(Arm(label="decaying", tau_decay=beta, **limit), Arm(label="0", tau=0.0, **limit), "limit",
                      margin=-NEAR_IDENTICAL_DB), n=24)  # the limit differences are heavy-tailed: 24 replicates


@pytest.mark.claim("pgfl.experiment_r6_phi0")
@settings(max_examples=examples("few"))
@given(seed=pgfl_experiment_seeds(), phi0s=pgfl_phi0_pairs())
@example(seed=0, phi0s=(PHI0_GRID[0], PHI0_GRID[-1]))
def test_more_privacy_gives_a_higher_nmsd(seed, phi0s):
    """Property: with scheduling, a larger phi0 (less privacy) gives a significantly lower NMSD at the sweep
    iteration than a 30-1000 times smaller one."""
    small, large = phi0s
    assert_shown(seed, below(_sweep(label="large phi0", **{**R3, "phi0": large}),
                             _sweep(label="small phi0", **{**R3, "phi0": small}), "sweep"))


@pytest.mark.claim("pgfl.experiment_r7_zeta")
@settings(max_examples=examples("few"))
@given(seed=pgfl_experiment_seeds(), zetas=pgfl_zeta_pairs())
@example(seed=0, zetas=(ZETA_GRID[0], ZETA_GRID[-1]))
def test_slower_variance_decay_gives_a_higher_nmsd(seed, zetas):
    """Property: with scheduling and phi0 = 0.001, zeta in [0.9, 0.95] gives a significantly lower NMSD at the
    sweep iteration than zeta in [0.995, 0.999]."""
    small, large = zetas
    assert_shown(seed, below(_sweep(label="small zeta", **{**R3, "zeta": small}),
                             _sweep(label="large zeta", **{**R3, "zeta": large}), "sweep"))
