"""Shared pieces of the PAO-Fed simulation checks (SIM-A, docs/papers/paofed.md#choice-simulators,
SIM-F (docs/papers/paofed.md#choice-simulators), communication counts).

No claims here. Monte-Carlo statistics: every run of a simulator gives one i.i.d. sample (its time average
over the second half of the horizon); a two-sided confidence interval for their mean is the pair of
one-sided Student-t limits of :func:`verify.tolerance.mean_upper_confidence_limit`, each at half the
failure probability.
"""

from __future__ import annotations

import math

import numpy as np

from verify.records import Citation
from verify.tolerance import MC_ALPHA, mean_upper_confidence_limit

__all__ = ["MC_ALPHA", "REFERENCE_TABLE", "SEED", "cite", "mean_confidence_interval", "seed_integers", "to_db"]

SEED = "004_180cd372987d137b.txt"
#: Labelled regression values (docs/papers/paofed.md#instance-reference, computed by docs/papers/paofed.md's authors
#: with 1000 runs x 6000 iterations, time average over the last 3000): MSD_inf in dB of the reference instance, by mu
#: lambda_max.
REFERENCE_TABLE = {
    0.05: {"seed_F": -33.321, "exact": -33.125, "sim_a": -33.139, "sim_f": -34.326},
    0.10: {"seed_F": -30.496, "exact": -30.073, "sim_a": -30.076, "sim_f": -31.189},
    0.20: {"seed_F": -27.683, "exact": -26.734, "sim_a": -26.735, "sim_f": -27.762},
}


def cite(label: str, equation: str = "", lines: str = "") -> Citation:
    """A citation of the PAO-Fed seed (004)."""
    return Citation(seed=SEED, label=label, equation=equation, lines=lines)


def to_db(x: float) -> float:
    """10 log10(x); -inf for 0, ValueError for x < 0."""
    if x < 0:
        raise ValueError(f"x must be >= 0 to be expressed in dB, got {x!r}")
    return -math.inf if x == 0 else 10.0 * math.log10(x)


def mean_confidence_interval(samples, alpha: float) -> tuple[float, float]:
    """Two-sided interval for the mean of i.i.d. samples: one-sided t limits at ``alpha / 2`` each."""
    x = np.asarray(samples, dtype=np.float64)
    upper = mean_upper_confidence_limit(x, alpha / 2.0)
    lower = -mean_upper_confidence_limit(-x, alpha / 2.0)
    return lower, upper


def seed_integers(seed_sequence: np.random.SeedSequence, n: int) -> list[int]:
    """n independent integer seeds spawned from a claim's seed sequence (recorded with the evidence)."""
    return [int(child.generate_state(1, dtype=np.uint32)[0]) for child in seed_sequence.spawn(n)]
