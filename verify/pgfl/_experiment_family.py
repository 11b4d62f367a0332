"""PGFL's experiment family: the figure-level claims of its Section V / thesis Section 5.4 that share the family-wise
alpha of :class:`verify.harness.Family` (each claim's alpha is 0.05 over the members listed here), declared in
:mod:`verify.pgfl.experiments` (R-1 (docs/papers/pgfl.md#exp-r1) ... R-7 (docs/papers/pgfl.md#exp-r6)),
:mod:`verify.pgfl.classification` (M-1 (docs/papers/pgfl.md#exp-m) ... M-3 (docs/papers/pgfl.md#exp-m)) and
:mod:`verify.pgfl.organ_classification` (O-1, docs/papers/pgfl.md#exp-o, O-2 (docs/papers/pgfl.md#exp-o))."""

from verify.harness import Family

__all__ = ["FAMILY"]

FAMILY = Family(paper="pgfl", name="experiments of thesis Section 5.4", members=(
    "pgfl.experiment_r1_tau",
    "pgfl.experiment_r1_gfl",
    "pgfl.experiment_r1_gfl_competitive",
    "pgfl.experiment_r1_clusterfl",
    "pgfl.experiment_r2_scheduling",
    "pgfl.experiment_r2_gfl",
    "pgfl.experiment_r2_gfl_slower",
    "pgfl.experiment_r3_privacy_slows",
    "pgfl.experiment_r3_privacy_cost",
    "pgfl.experiment_r4_tau_sweep",
    "pgfl.experiment_r4_large_tau",
    "pgfl.experiment_r4_large_tau_flat",
    "pgfl.experiment_r5_fixed_tau",
    "pgfl.experiment_r5_decaying_tau",
    "pgfl.experiment_r6_phi0",
    "pgfl.experiment_r7_zeta",
    "pgfl.experiment_m1",
    "pgfl.experiment_m2",
    "pgfl.experiment_m3",
    "pgfl.experiment_o1",
    "pgfl.experiment_o2",
))
