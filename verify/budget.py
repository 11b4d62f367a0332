"""Hypothesis example budgets derived from the active profile (``--hypothesis-profile``), never per-test literals.

A property test names how expensive one example is; the number of examples is that tier's share of the profile's
``max_examples`` (``ci``/``dev``: 100, ``thorough``: 2000), at least one:

* ``one`` (1 %: 1 at ci, 20 at thorough): a whole Monte-Carlo experiment or report-sized simulation per example;
* ``few`` (2 %: 2 / 40): a simulation of a few hundred iterations or a CVXPY solve per example;
* ``several`` (5 %: 5 / 100): several small simulations or solves per example;
* ``some`` (10 %: 10 / 200): an iterative solver or a small simulation per example;
* ``many`` (25 %: 25 / 500): closed forms with an inner root-finder or quadrature;
* ``most`` (50 %: 50 / 1000): cheap closed forms checked numerically.

Closed forms that cost microseconds use the profile's own budget (no ``@settings``).
"""

from __future__ import annotations

from hypothesis import settings

__all__ = ["TIERS", "examples"]

#: Share of the profile's ``max_examples`` per tier.
TIERS = {"one": 0.01, "few": 0.02, "several": 0.05, "some": 0.10, "many": 0.25, "most": 0.50}


def examples(tier: str) -> int:
    """The number of examples of ``tier`` under the active Hypothesis profile.

    >>> examples("one") >= 1
    True
    """
    if tier not in TIERS:
        raise ValueError(f"tier must be one of {', '.join(TIERS)}, got {tier!r}")
    return max(1, round(settings.default.max_examples * TIERS[tier]))
