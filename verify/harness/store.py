"""The bounded store of simulated arms, and the one function that simulates what it lacks.

An arm's replicates at a grid point are kept under everything that determines them (:meth:`Design.store_key`:
namespace, scale, root seed, the arm's identity and the choices it reads), so claims that share an arm, later stages
of a claim and other grid points that the arm ignores reuse them. Missing replicates are simulated through
``ctx.executor`` in chunks of the design's ``chunk`` replicates; a replicate's draws depend only on the root seed and
its index, so what is stored, evicted or simulated again never changes a number.
"""

from __future__ import annotations

import collections
import contextlib
import threading
from collections.abc import Hashable, Iterator, Sequence

import numpy as np

from verify.harness.design import Design, Pinned
from verify.records import CheckContext

__all__ = ["STORE_SIZE", "clear_store", "prefetch_once", "simulate_arms"]

#: Arms kept in the store (each is a (replicates, ...) array of one arm at one grid point).
STORE_SIZE = 256

_STORE: collections.OrderedDict = collections.OrderedDict()
_STORE_LOCK = threading.Lock()  # the report may run claims of different modules in threads
_PREFETCHED: dict[Hashable, threading.Lock] = {}


def _store_get(key):
    with _STORE_LOCK:
        hit = _STORE.get(key)
        if hit is not None:
            _STORE.move_to_end(key)
        return hit


def _store_put(key, value) -> None:
    value = np.asarray(value)
    value.setflags(write=False)
    with _STORE_LOCK:
        _STORE[key] = value
        _STORE.move_to_end(key)
        while len(_STORE) > STORE_SIZE:
            _STORE.popitem(last=False)


def clear_store() -> None:
    """Forget every stored arm and every prefetch (tests and benchmarks that count simulations start from here)."""
    with _STORE_LOCK:
        _STORE.clear()
        _PREFETCHED.clear()


@contextlib.contextmanager
def prefetch_once(key: Hashable) -> Iterator[bool]:
    """``True`` to the first caller with ``key`` in this process (it fills the store while the block runs),
    ``False`` to every later one, which first waits for the first caller's block to end."""
    with _STORE_LOCK:
        gate = _PREFETCHED.get(key)
        first = gate is None
        if first:
            gate = _PREFETCHED[key] = threading.Lock()
            gate.acquire()
    if first:
        try:
            yield True
        finally:
            gate.release()
    else:
        with gate:
            pass
        yield False


def _run_chunk(task):
    simulate, arms, point, scale, seed, replicates = task
    return simulate(arms, point, scale, seed, replicates)


def simulate_arms(ctx: CheckContext, design: Design, arms: Sequence[Hashable], point: tuple, n: int,
                  *, scale: Hashable | None = None) -> dict:
    """The first ``n`` replicates of every arm at grid point ``point``: ``{arm: array (n, ...)}``, in the arms' order.

    A :class:`Pinned` arm is simulated at its own point. Arms already in the store are sliced or extended (only the
    missing replicates are simulated); the missing work goes through ``ctx.executor`` in chunks of
    ``design.chunk[profile]`` replicates: one ``simulate`` call per chunk for all missing arms when the design is a
    lockstep design, else one per chunk and grid point.
    """
    scale = design.scales[ctx.profile] if scale is None else scale
    chunk = design.chunk.get(ctx.profile, 1)
    point = tuple(point)
    out, have = {}, {}
    keys = {arm: design.store_key(arm, point, scale, ctx.seed) for arm in dict.fromkeys(arms)}
    for arm, key in keys.items():
        hit = _store_get(key)
        have[arm] = 0 if hit is None else hit.shape[0]
        if hit is not None and hit.shape[0] >= n:
            out[arm] = hit[:n]
    missing = []  # one arm per store key still short of n replicates
    for arm, key in keys.items():
        if arm not in out and all(keys[m] != key for m in missing):
            missing.append(arm)
    if missing:
        # (point of the call, [(arm as asked, arm as simulate gets it)]): one group for a lockstep design
        groups: dict[tuple, list[tuple]] = {}
        for arm in missing:
            if design.lockstep:
                groups.setdefault(point, []).append((arm, arm))
            else:
                at, plain = (arm.point, arm.arm) if isinstance(arm, Pinned) else (point, arm)
                groups.setdefault(at, []).append((arm, plain))
        tasks, spans = [], []
        for at, members in groups.items():
            start = min(have[a] for a, _ in members)
            start -= start % chunk
            chunks = [tuple(range(i, min(i + chunk, n))) for i in range(start, n, chunk)]
            spans.append((members, start, len(tasks), len(chunks)))
            tasks += [(design.simulate, tuple(p for _, p in members), at, scale, ctx.seed, c) for c in chunks]
        done = list(ctx.executor.map(_run_chunk, tasks))
        fresh = {}
        for members, start, first, count in spans:
            parts = done[first:first + count]
            for index, (arm, _) in enumerate(members):
                new = np.concatenate([np.asarray(part[index]) for part in parts], axis=0)
                old = _store_get(keys[arm])
                fresh[keys[arm]] = new if start == 0 or old is None else np.concatenate([old[:start], new], axis=0)
                _store_put(keys[arm], fresh[keys[arm]])
        for arm, key in keys.items():  # arms sharing a key (relabelled, or independent of a grid choice)
            if arm not in out:
                out[arm] = fresh[key][:n]
    return {arm: out[arm] for arm in keys}  # the arms' order, whatever was stored (figures list series in it)

