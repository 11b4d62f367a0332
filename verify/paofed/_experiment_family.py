"""PAO-Fed's experiment family: the claims X1-X11 (docs/papers/paofed.md#exp-x1 to #exp-x11) of thesis Section 4.4
(Publication 4 Section V) that share the family-wise alpha of :class:`verify.harness.Family` (each claim's alpha is 0.05
over the members listed here)."""

from verify.harness import Family

__all__ = ["FAMILY"]

FAMILY = Family(paper="paofed", name="experiments X1-X11 of thesis Section 4.4", members=(
    "paofed.experiment_x1_next_portion_beats_last_received",
    "paofed.experiment_x1_uncoordinated_beats_coordinated",
    "paofed.experiment_x2_larger_m_faster_initial",
    "paofed.experiment_x2_larger_m_higher_final",
    "paofed.experiment_x3_decaying_weights_beat_unit_weights",
    "paofed.experiment_x3_c2_approx_u2",
    "paofed.experiment_x4_paofed_beats_online_fedsgd",
    "paofed.experiment_x4_online_fed_poor",
    "paofed.experiment_x4_u2_beats_u1",
    "paofed.experiment_x5_online_fed_improves_with_load",
    "paofed.experiment_x5_paofed_nearly_flat_in_load",
    "paofed.experiment_x6_ideal_coordinated_matches_full_sharing",
    "paofed.experiment_x6_ideal_uncoordinated_slightly_worse",
    "paofed.experiment_x6_c2_with_stragglers_matches_ideal",
    "paofed.experiment_x7_u1_matches_online_fedsgd",
    "paofed.experiment_x7_c2_best",
    "paofed.experiment_x8_pso_fed_not_desirable",
    "paofed.experiment_x8_signsgd_beats_online_fed",
    "paofed.experiment_x8_c2_best",
    "paofed.experiment_x9_full_downlink_degrades_partial_sharing",
    "paofed.experiment_x9_full_downlink_loses_advantage",
    "paofed.experiment_x10_online_fedsgd_beats_u1",
    "paofed.experiment_x10_c2_beats_online_fedsgd",
    "paofed.experiment_x11_c2_u1_gap_grows",
    "paofed.experiment_x11_c2_beats_online_fedsgd",
))
