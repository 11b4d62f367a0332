"""Designs: how an experiment's arms are simulated on paired replicates and read out.

A :class:`Design` is what a paper's experiments share: the simulation of a set of arms on replicates ``i`` (seeded by
:func:`verify.harness.seeding.replicate_seed`, common random numbers across the arms), the read-outs the statements
compare, the instance sizes and staged replicate counts per profile, and the options of how the harness batches the
work (:attr:`Design.lockstep`, :attr:`Design.prefetch`) and prepares it (:attr:`Design.prepare`,
:attr:`Design.report`). Nothing in a design decides: :mod:`verify.harness.decision` does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import numpy as np

__all__ = ["Design", "Pinned", "identity"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Pinned:
    """An arm simulated at a given grid point, whatever point the simulation is asked at.

    The harness pins arms to simulate the arms of several grid points (and of several claims) in one call of a
    design's ``simulate`` (:attr:`Design.lockstep`); a lockstep design's ``simulate`` unpins them (:meth:`unpin`).
    """

    arm: Hashable
    point: tuple

    def __post_init__(self) -> None:
        object.__setattr__(self, "point", tuple(self.point))

    @property
    def label(self) -> str:
        """The arm's label (figures and executors' logs)."""
        return getattr(self.arm, "label", str(self.arm))

    @staticmethod
    def unpin(arm: Hashable, point) -> tuple[Hashable, dict]:
        """``(arm, point as a dict)``: a pinned arm's own point, else ``point``."""
        if isinstance(arm, Pinned):
            return arm.arm, dict(arm.point)
        return arm, dict(point)


def identity(arm: Hashable) -> Hashable:
    """What determines an arm's simulation: its ``key`` if it has one (labels do not), else the arm itself."""
    return getattr(arm, "key", arm)


def _profiles(name: str, value, allowed) -> None:
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise ValueError(f"{name} has profiles without stages: {unknown} (profiles with stages: {sorted(allowed)})")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Design:
    """How a set of experiment claims simulates its arms.

    Attributes
    ----------
    namespace : str
        Namespace of the arm store (every claim on designs of one namespace shares the simulated arms) and the
        group of declared experiments :attr:`prefetch` simulates together.
    simulate : callable
        Module-level ``simulate(arms, point, scale, root_seed, replicates) -> list of arrays``: one array per arm,
        shape ``(len(replicates), ...)``, for the replicate indices ``replicates`` (replicate ``i``'s draws depend
        only on ``(root_seed, i)`` and the point, through :func:`verify.harness.replicate_seed`), run with common
        random numbers across the arms.
    readout : callable
        ``readout(name, scale, outcome) -> (replicates,)``: the scalar a statement compares (e.g. the NMSD in dB
        at an iteration, or a window mean).
    scales : mapping of profile to a hashable scale record (instance sizes passed to ``simulate``).
    stages : mapping of profile to increasing cumulative replicate counts (the last is the budget).
    chunk : mapping of profile to the replicates per ``simulate`` call (the stages are multiples of it).
    arm_key : callable, optional
        ``arm_key(arm, point, scale, root_seed) -> hashable``: everything the arm's simulation at ``point`` depends
        on (an arm that ignores a grid choice is then simulated once for all its values). Default: the whole point
        and the arm's identity (:func:`identity`).
    lockstep : bool
        ``simulate`` accepts :class:`Pinned` arms (each simulated at its own point): the harness then simulates, per
        stage, the arms of every grid point of a claim still undecided in one call before deciding the points
        (the arms of one setting share a replicate's draws across the grid). Without it the harness calls
        ``simulate`` once per point.
    prefetch : mapping of profile to int
        At these profiles the first claim checked on this namespace (in a process, per root seed) simulates the
        first ``prefetch[profile]`` stages of every experiment declared on the namespace together, predicting which
        grid points stay open after each stage: a replicate's data, or a setting's draws, are then made once for
        all claims. Each claim still decides on its own from the store, so this costs or saves time, never a number.
    prefetch_group : callable, optional
        ``prefetch_group(experiment) -> hashable``: :attr:`prefetch` simulates together only the declared experiments
        of the checked claim's group (default: the whole namespace), so that no single claim carries a large
        family's simulation; arms shared across groups are still simulated once (the store).
    prepare : callable, optional
        ``prepare(ctx, experiments) -> experiments``: resolves, once and in the calling process, what the arms
        need before any simulation (e.g. baseline steps tuned on separate runs), for several experiments at once;
        returns them with their arms updated.
    report : callable, optional
        ``report(ctx, experiment) -> dict``: extra details of a decided (prepared) experiment (e.g. the tuned
        steps); an empty dict adds nothing.
    """

    namespace: str
    simulate: Callable[..., list]
    readout: Callable[[str, Any, np.ndarray], np.ndarray]
    scales: Mapping[str, Hashable]
    stages: Mapping[str, tuple[int, ...]]
    chunk: Mapping[str, int]
    arm_key: Callable[..., Hashable] | None = None
    lockstep: bool = False
    prefetch: Mapping[str, int] = dataclasses.field(default_factory=dict)
    prefetch_group: Callable[[Any], Hashable] | None = None
    prepare: Callable[..., Any] | None = None
    report: Callable[..., dict] | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.namespace, str) and self.namespace):
            raise ValueError(f"namespace must be a non-empty string, got {self.namespace!r}")
        for profile, stages in self.stages.items():
            chunk = self.chunk.get(profile)
            if not (isinstance(chunk, int) and chunk >= 1):
                raise ValueError(f"{self.namespace}: chunk[{profile!r}] must be an integer >= 1, got {chunk!r}")
            if (not stages or any(not isinstance(s, int) or s < 2 or s % chunk for s in stages)
                    or list(stages) != sorted(set(stages))):
                raise ValueError(f"{self.namespace}: stages[{profile!r}] must be increasing multiples of chunk = "
                                 f"{chunk} (>= 2), got {stages!r}")
            if profile not in self.scales:
                raise ValueError(f"{self.namespace}: scales has no entry for profile {profile!r}")
        _profiles(f"{self.namespace}: prefetch", self.prefetch, self.stages)
        for profile, looks in self.prefetch.items():
            if isinstance(looks, bool) or not isinstance(looks, int) or not 1 <= looks <= len(self.stages[profile]):
                raise ValueError(f"{self.namespace}: prefetch[{profile!r}] must be an integer in [1, "
                                 f"{len(self.stages[profile])}] (the stages), got {looks!r}")

    def store_key(self, arm: Hashable, point: tuple, scale: Hashable, root_seed: int) -> tuple:
        """The key of ``arm``'s replicates at ``point`` in the arm store (a pinned arm: at its own point)."""
        if isinstance(arm, Pinned):
            arm, point = arm.arm, arm.point
        what = (point, identity(arm)) if self.arm_key is None else self.arm_key(arm, point, scale, root_seed)
        return (self.namespace, scale, root_seed, what)

    def with_data_file(self, path: str, sha256: str) -> Design:
        """The design on a user's data file: every scale carries ``path`` and ``sha256`` (scales with those fields),
        so the arms of different files never share the store."""
        scales = {p: dataclasses.replace(s, path=str(path), sha256=sha256) for p, s in self.scales.items()}
        return dataclasses.replace(self, scales=scales)
