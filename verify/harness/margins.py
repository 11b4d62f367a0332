r"""Practical margins: the smallest effect an ordering must show, chosen once per kind of read-out.

"A beats B", "attenuates", "improves" are statements about what a reader of the paper's figure would see. A
sign test can make a difference of 0.01 dB significant with enough replicates; such a difference is invisible on
any figure the papers print and confirms nothing. So an *ordering* (a ``below`` / ``above`` statement whose
threshold is 0: "A below B") is confirmed only when it is significant at the claim's level **and** the median
paired difference lies beyond the practical margin of its read-out's kind in the stated direction; it is refuted
only when the opposite ordering is significant and its median lies beyond the margin the other way. A significant
effect inside the margin is ``not_checkable`` ("effect below the practical margin"). Statements that carry their
own threshold (an equivalence margin, a non-inferiority allowance, a stated effect size, or a level such as
"tau near 0") already state their practical level and are decided at it.

The margins (:data:`READOUT_KINDS`), each justified once:

* ``db`` -- 0.5 dB of a mean-square quantity (MSD, NMSD, MSE, NE) in decibels: a 12 % change of the
  mean-square error, about the width of a plotted line on the papers' learning-curve figures, whose y-axes span
  20-60 dB; a smaller gap is not something the figures can show.
* ``log10`` -- 0.05 in :math:`\log_{10}` of a mean-square quantity: the same 0.5 dB.
* ``mse`` -- 12 % of the compared arm's mean-square error read out in its own units: the same 0.5 dB.
* ``ratio`` -- 0.05 of a ratio to a reference value (1 where the two agree): a 5 % disagreement.
* ``accuracy`` -- 1 accuracy point (0.01 as a fraction): the resolution at which the papers print accuracies
  (two significant digits in percent) and below which test-set noise on 10^3-10^4 test points dominates.
* ``loss`` -- 5 % of the compared arm's loss (a loss ratio of 1.05): the papers plot training losses on linear or
  log axes spanning an order of magnitude, where a 5 % gap is the smallest visible one.
* ``iterations`` -- 10 % of the compared arm's iteration count.
* ``tau`` -- 0.005 of a regularisation weight tau in [0, 1]: a tenth of the initial tau^(0) = 0.05 of the
  thesis's Fig. 6.3, the resolution of that figure's y-axis.
* ``roughness`` -- 10 % of the compared arm's roughness (mean absolute second difference of a curve): a curve
  "noisier" or "smoother" than another by less than a tenth is not a visible difference.

A relative margin (``loss``, ``iterations``, ``roughness``) is taken of the median read-out of the statement's
last (reference) arm; a single-arm statement of a relative kind has no reference and is decided at its threshold.
Each paper's page (``docs/papers/<slug>.md``, "Experiments") names the kinds its experiments read.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import numpy as np

__all__ = ["READOUT_KINDS", "ReadoutKind", "practical_margin", "readout_kind_of"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReadoutKind:
    """A kind of read-out and its practical margin.

    Attributes
    ----------
    name : str
    unit : str
        What the read-out is measured in (shown with the margin).
    margin : float
        The margin (>= 0): in the read-out's units, or a fraction of the reference arm's median read-out when
        ``relative``.
    relative : bool
    why : str
        One line: why the margin is a visible effect.
    """

    name: str
    unit: str
    margin: float
    relative: bool = False
    why: str = ""

    def __post_init__(self) -> None:
        if not (isinstance(self.margin, (int, float)) and math.isfinite(self.margin) and self.margin >= 0):
            raise ValueError(f"{self.name}: margin must be a finite real >= 0, got {self.margin!r}")
        if not self.why.strip():
            raise ValueError(f"{self.name}: why must say why the margin is a visible effect")

    def text(self) -> str:
        """The margin as the card shows it."""
        return (f"{self.margin:.0%} of the reference arm's {self.unit}" if self.relative
                else f"{self.margin:g} {self.unit}")


#: The read-out kinds and their practical margins (see the module docstring for the justification).
READOUT_KINDS: dict[str, ReadoutKind] = {k.name: k for k in (
    ReadoutKind(name="db", unit="dB", margin=0.5,
                why="a 12% change of a mean-square error, about a plotted line's width on the papers' dB figures"),
    ReadoutKind(name="log10", unit="log10 units", margin=0.05, why="the same 0.5 dB as the db kind"),
    ReadoutKind(name="mse", unit="mean-square error", margin=0.12, relative=True,
                why="the same 0.5 dB as the db kind, on a mean-square error read out in its own units"),
    ReadoutKind(name="ratio", unit="ratio", margin=0.05, why="5% of a ratio to a reference value of 1"),
    ReadoutKind(name="accuracy", unit="accuracy (fraction)", margin=0.01,
                why="one accuracy point: the papers' printed resolution, and test-set noise below it"),
    ReadoutKind(name="loss", unit="loss", margin=0.05, relative=True,
                why="a loss ratio of 1.05: the smallest gap visible on the papers' loss figures"),
    ReadoutKind(name="iterations", unit="iteration count", margin=0.10, relative=True,
                why="a tenth of the iterations: smaller savings are within run-to-run variation"),
    ReadoutKind(name="tau", unit="tau", margin=0.005,
                why="a tenth of tau^(0) = 0.05, the resolution of the tau trajectories' figure"),
    ReadoutKind(name="roughness", unit="roughness", margin=0.10, relative=True,
                why="a curve rougher or smoother by less than a tenth is not a visible difference"),
)}


def readout_kind_of(kinds: str | Mapping[str, str], readout: str) -> ReadoutKind:
    """The kind of ``readout`` under an experiment's declaration ``kinds`` (one kind, or read-out -> kind)."""
    name = kinds if isinstance(kinds, str) else kinds.get(readout)
    if name is None:
        raise ValueError(f"readout_kind has no kind for read-out {readout!r} (declared: {dict(kinds)})")
    return READOUT_KINDS[name]


def practical_margin(statement, kinds: str | Mapping[str, str], reference: np.ndarray | None) -> float:
    """The practical margin of ``statement`` (0 for a statement that carries its own threshold).

    Parameters
    ----------
    statement : verify.harness.Statement
    kinds : str or mapping
        The experiment's ``readout_kind``.
    reference : ndarray or None
        The read-out of the statement's last term (its reference arm), per replicate; used by relative kinds.
    """
    if statement.relation == "within" or statement.threshold != 0.0:
        return 0.0
    kind = readout_kind_of(kinds, statement.terms[-1].readout)
    if not kind.relative:
        return kind.margin
    if len(statement.terms) < 2 or reference is None:
        return 0.0
    return kind.margin * abs(float(np.median(reference)))
