"""One interface for independent runs: serial, a local process pool, or a dask.distributed cluster.

Checks hand independent work (Monte-Carlo batches, points of a parameter sweep) to
``executor.map``. Seeds are derived *before* dispatch with :meth:`numpy.random.SeedSequence.spawn`
and results come back in submission order, so the same root seed gives the same numbers whichever
executor ran them. Functions and arguments must be picklable (module-level functions, not lambdas).
"""

from __future__ import annotations

import functools
import multiprocessing
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Protocol, TypeVar

import numpy as np

__all__ = ["DaskExecutor", "Executor", "ProcessExecutor", "SerialExecutor", "make_executor", "map_seeded"]

T = TypeVar("T")


class Executor(Protocol):
    """``map(fn, items)`` returns ``[fn(x) for x in items]`` in order; ``close()`` frees resources."""

    name: str

    def map(self, fn: Callable[[Any], T], items: Iterable[Any]) -> list[T]: ...

    def close(self) -> None: ...


class SerialExecutor:
    """Runs everything in the calling process, in order."""

    name = "serial"

    def map(self, fn, items):
        return [fn(item) for item in items]

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class ProcessExecutor:
    """A local pool of ``workers`` processes (``spawn`` start method: safe with BLAS threads)."""

    def __init__(self, workers: int):
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
        self.workers = workers
        self.name = f"process-pool({workers})"
        self._pool: ProcessPoolExecutor | None = None

    def map(self, fn, items):
        items = list(items)
        if len(items) <= 1:
            return [fn(item) for item in items]
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"))
        return list(self._pool.map(fn, items))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class DaskExecutor:
    """Submits to an existing dask.distributed scheduler at ``address`` (e.g. ``tcp://host:8786``).

    The workers must be able to import fedcheck (install it on them).
    """

    def __init__(self, address: str, *, timeout: float = 10.0):
        if not isinstance(address, str) or "://" not in address:
            raise ValueError(f"dask_scheduler must be an address like 'tcp://127.0.0.1:8786', got {address!r}")
        from distributed import Client  # optional dependency: fedcheck[dask]

        self.address = address
        self.name = f"dask({address})"
        self._client = Client(address, timeout=timeout, set_as_default=False)

    def map(self, fn, items):
        items = list(items)
        if not items:
            return []
        futures = self._client.map(fn, items, pure=False)
        return self._client.gather(futures)

    def close(self) -> None:
        self._client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def make_executor(workers: int = 1, dask_scheduler: str | None = None) -> Executor:
    """Serial for ``workers == 1``, a process pool for more, dask when a scheduler is given."""
    if dask_scheduler is not None:
        return DaskExecutor(dask_scheduler)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    return SerialExecutor() if workers == 1 else ProcessExecutor(workers)


def _call_with_generator(fn: Callable[..., T], args: tuple, seed: np.random.SeedSequence) -> T:
    return fn(np.random.default_rng(seed), *args)


def map_seeded(
    executor: Executor,
    fn: Callable[..., T],
    seed: np.random.SeedSequence,
    n_runs: int,
    args: Sequence[Any] = (),
) -> list[T]:
    """Run ``fn(rng_i, *args)`` for ``i < n_runs`` with independent generators spawned from ``seed``.

    Each run's generator comes from ``seed.spawn(n_runs)[i]``, fixed before dispatch, so the list
    returned is identical for every executor. Batch Monte-Carlo repetitions inside ``fn`` (a leading
    batch axis) and use ``n_runs`` for the number of batches: dispatch costs far more than a run.
    """
    if isinstance(n_runs, bool) or not isinstance(n_runs, int) or n_runs < 1:
        raise ValueError(f"n_runs must be an integer >= 1, got {n_runs!r}")
    children = seed.spawn(n_runs)
    return executor.map(functools.partial(_call_with_generator, fn, tuple(args)), children)
