"""What a reference run costs, estimated from its sizes alone before anything is drawn or allocated.

One record for every paper's ``estimate_run_cost`` (the ``run`` commands check it against their limits).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["RunCost"]


@dataclass(frozen=True, kw_only=True)
class RunCost:
    """An upper estimate of a run's cost, from the sizes alone.

    Attributes
    ----------
    work : float
        Multiply-adds and elementwise operations at most (the unit of the CLI's work limits).
    peak_elements : int
        Float64 elements held at once at most (8 bytes each; integer and boolean arrays counted as float64).
    """

    work: float
    peak_elements: int

    def __post_init__(self) -> None:
        if isinstance(self.work, bool) or not isinstance(self.work, (int, float)) or not 0.0 <= self.work < math.inf:
            raise ValueError(f"work must be a finite real >= 0, got {self.work!r}")
        if isinstance(self.peak_elements, bool) or not isinstance(self.peak_elements, int) or self.peak_elements < 0:
            raise ValueError(f"peak_elements must be an integer >= 0, got {self.peak_elements!r}")
