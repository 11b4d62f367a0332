"""NPFL-RL's experiment family: the claims of thesis Section 6.3 (Figs. 6.1-6.3) that share the family-wise alpha
of :class:`verify.harness.Family` (each claim's alpha is 0.05 over the members listed here)."""

from verify.harness import Family

__all__ = ["FAMILY"]

FAMILY = Family(paper="npfl_rl", name="experiments of thesis Section 6.3", members=(
    "npfl_rl.experiment_c1_nfl",
    "npfl_rl.experiment_c1_nfl_inter_cluster",
    "npfl_rl.experiment_c2_cluster_model",
    "npfl_rl.experiment_c2_component_model",
    "npfl_rl.experiment_c3_small_tau",
    "npfl_rl.experiment_c4_large_tau",
    "npfl_rl.experiment_c4_interior_tau",
    "npfl_rl.experiment_c5_rl_beats_fixed",
    "npfl_rl.experiment_c6_sac_beats_dpg",
    "npfl_rl.experiment_c7_sac_randomness",
    "npfl_rl.experiment_c8_brl_dpg",
    "npfl_rl.experiment_c9_dpg_smooth",
    "npfl_rl.experiment_c9_dpg_smooth_short",
    "npfl_rl.experiment_c9_large_client",
    "npfl_rl.experiment_c9_median_client",
    "npfl_rl.experiment_c9_small_client",
))
