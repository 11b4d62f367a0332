"""Whether a run's learning curve diverges: one rule for every ``fedcheck run`` document.

A run whose values leave the double range is ``"diverged"`` (each paper's document says so). A run that stays finite
but keeps growing used to be reported ``"ok"`` (PGFL's NMSD rising 53 dB, zCDP-NFL's error at 1e41, FedPDM's loss at
5e8, NPFL-RL's printed-sign variant at 2262 dB: found by an adversarial audit). :func:`diverging` names it: the curve
(an error, a loss: lower is better) ends more than :data:`DIVERGING_RISE_DB` above its start *and* is still rising, its
second half's newer half more than :data:`STILL_RISING_DB` above its older half. A rise from the start alone is no
divergence: a run that starts below its noise floor (a small true model) rises to its steady state and stays there.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["DIVERGING_RISE_DB", "STILL_RISING_DB", "diverging", "rise_db"]

#: A learning curve that ends this many dB above where it started ...
DIVERGING_RISE_DB = 10.0
#: ... and whose second half's newer half lies this many dB above its older half diverges.
STILL_RISING_DB = 3.0


def _db(curve, db: bool) -> np.ndarray:
    values = np.asarray(curve, dtype=np.float64).ravel()
    if db:
        return values
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(values > 0, 10.0 * np.log10(np.where(values > 0, values, 1.0)), np.nan)


def rise_db(curve, *, db: bool) -> tuple[float, float]:
    """(dB from the first to the last value; dB by which the newer half of the second half lies above its older half,
    their means taken in the linear domain). ``db``: whether ``curve`` is already in dB (else positive values). NaN
    where a value is not finite or not positive."""
    c = _db(curve, db)
    if c.size < 2:
        return math.nan, math.nan
    second = c[c.size // 2:]
    half = second.size // 2
    if half < 1:
        return float(c[-1] - c[0]), math.nan
    if not np.all(np.isfinite(second)):
        return float(c[-1] - c[0]), math.nan
    return float(c[-1] - c[0]), _mean_db(second[-half:]) - _mean_db(second[:half])


def _mean_db(values_db: np.ndarray) -> float:
    """10 log10 of the mean of 10^(x/10), without overflow (a diverging curve reaches thousands of dB)."""
    top = float(np.max(values_db))
    return top + 10.0 * math.log10(float(np.mean(10.0 ** ((values_db - top) / 10.0))))


def diverging(curve, *, db: bool, name: str) -> str | None:
    """Why the learning curve ``curve`` (lower is better; in dB when ``db``, else positive values) diverges while
    finite, in words naming it ``name``; None when it does not (or is not finite: that is ``"diverged"``)."""
    total, within = rise_db(curve, db=db)
    if not (math.isfinite(total) and math.isfinite(within)):
        return None
    if total > DIVERGING_RISE_DB and within > STILL_RISING_DB:
        return (f"{name} rose by {total:.3g} dB over the run and {within:.3g} dB within its second half: the run "
                f"diverges (a smaller step, or the setting's stability condition)")
    return None
