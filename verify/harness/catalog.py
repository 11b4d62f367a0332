"""The experiments declared in this process, by claim id (filled as the declaring modules are imported).

The harness reads it for two things only: the group of experiments a design's :attr:`~verify.harness.Design.prefetch`
simulates together, and :func:`verify.harness.reproduce_experiment` given just a counterexample. It never imports a
paper module to fill it: the registry (:mod:`verify.registry`) imports them.
"""

from __future__ import annotations

import threading

__all__ = ["declared", "lookup", "register"]

_DECLARED: dict = {}
_LOCK = threading.Lock()


def register(experiment) -> None:
    """Record a declared experiment; ValueError if another declaration already holds its claim id."""
    with _LOCK:
        previous = _DECLARED.get(experiment.claim_id)
        if previous is not None and previous.module != experiment.module:
            raise ValueError(f"experiment {experiment.claim_id!r} is declared twice ({previous.module} and "
                             f"{experiment.module})")
        _DECLARED[experiment.claim_id] = experiment


def declared() -> tuple:
    """Every experiment declared so far, in declaration order."""
    with _LOCK:
        return tuple(_DECLARED.values())


def lookup(claim_id: str):
    """The declared experiment ``claim_id``; ValueError naming what is known otherwise."""
    with _LOCK:
        found = _DECLARED.get(claim_id)
    if found is None:
        raise ValueError(f"claim_id must be a declared experiment (its module imported first: verify.registry "
                         f"imports every one), got {claim_id!r}")
    return found
