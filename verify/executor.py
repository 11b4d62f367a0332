"""One interface for independent runs: serial, a local process pool, or a dask.distributed cluster.

Checks hand independent work (Monte-Carlo batches, points of a parameter sweep) to
``executor.map``. Seeds are derived *before* dispatch with :meth:`numpy.random.SeedSequence.spawn`
and results come back in submission order, so the same root seed gives the same numbers whichever
executor ran them. Functions and arguments must be picklable (module-level functions, not lambdas).
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Protocol, TypeVar

import numpy as np

__all__ = ["BLAS_ENV_VARS", "DASK_TIMEOUT", "CpuMeter", "DaskExecutor", "Executor", "ProcessExecutor", "SerialExecutor",
           "blas_threads_per_worker", "make_executor", "map_seeded", "measure_cpu"]

T = TypeVar("T")

#: Seconds to wait for a dask scheduler's answer, again for its first worker, and for a worker while runs are
#: unfinished and the cluster has none (``--dask-timeout``).
DASK_TIMEOUT = 30.0
#: Seconds between two looks at the cluster's workers while :meth:`DaskExecutor.map` waits for its runs.
DASK_POLL = 1.0
#: The environment variables that cap the threads of the BLAS / OpenMP libraries a worker loads after it starts.
BLAS_ENV_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                 "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def _cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform tells it, else the CPU count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def blas_threads_per_worker(workers: int, cores: int | None = None) -> int:
    """BLAS / OpenMP threads for each of ``workers`` processes on ``cores`` cores (default: this process's):
    ``max(1, cores // workers)``, so the pool never runs more threads than cores."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    cores = _cores() if cores is None else cores
    if isinstance(cores, bool) or not isinstance(cores, int) or cores < 1:
        raise ValueError(f"cores must be an integer >= 1, got {cores!r}")
    return max(1, cores // workers)


def _limit_worker_threads(threads: int) -> None:
    """A pool worker's initializer: at most ``threads`` BLAS / OpenMP threads, for the libraries already loaded
    (threadpoolctl) and for those loaded later (the environment variables they read when they load)."""
    for name in BLAS_ENV_VARS:
        os.environ[name] = str(threads)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=threads)  # kept for the worker's life (never restored)


def _probe_scheduler(address: str, timeout: float) -> dict:
    """Ask the scheduler at ``address`` for its identity within ``timeout`` seconds (whole exchange).

    ``distributed.Client(address, timeout=...)`` bounds only the TCP connection: a server that accepts TCP
    but does not speak the dask protocol (an HTTP server) makes it wait forever. This probe runs the
    handshake under :func:`asyncio.wait_for`, so it always ends.
    """
    import asyncio
    import socket

    from distributed.comm import connect
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        if scheme in ("tcp", "tls"):  # fail fast when nothing listens (distributed retries until the timeout)
            with socket.create_connection(parse_host_port(location), timeout=timeout):
                pass
    except ConnectionRefusedError:
        raise OSError(f"nothing accepts connections at {address} (is the dask scheduler running?)") from None
    except TimeoutError:
        raise TimeoutError(f"no answer from {address} within {timeout:g} s "
                           f"(change the wait with --dask-timeout)") from None
    except (OSError, ValueError, TypeError) as exc:
        raise OSError(f"cannot reach a dask scheduler at {address}: {' '.join(str(exc).split())}") from None

    async def identity():
        comm = await connect(address, timeout=timeout)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    async def bounded():
        return await asyncio.wait_for(identity(), timeout)

    try:
        reply = asyncio.run(bounded())
    except (TimeoutError, asyncio.TimeoutError):
        raise TimeoutError(f"no dask scheduler answered at {address} within {timeout:g} s "
                           f"(is it a dask scheduler? change the wait with --dask-timeout)") from None
    except (OSError, ValueError, TypeError) as exc:
        raise OSError(f"cannot reach a dask scheduler at {address}: {' '.join(str(exc).split())}") from None
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        raise OSError(f"{address} answered but is not a dask scheduler")
    return reply


_METER = threading.local()


class CpuMeter:
    """CPU seconds of one piece of work (a claim's check): the calling thread's own, plus those of every run it
    handed to a worker process or a dask worker (measured there, as that process's CPU time while the run ran).

    ``whole_process``: count the calling process's CPU time (every thread, BLAS helpers included) instead of the
    calling thread's; right only when nothing else runs in the process meanwhile.
    """

    def __init__(self, *, whole_process: bool = False):
        self._clock = time.process_time if whole_process else time.thread_time
        self._start = self._clock()
        self.remote_s = 0.0

    @property
    def seconds(self) -> float:
        """CPU seconds so far (local and remote)."""
        return self._clock() - self._start + self.remote_s


@contextlib.contextmanager
def measure_cpu(*, whole_process: bool = False):
    """Measure the CPU time of the work this thread does inside the block, the runs it hands to
    :class:`ProcessExecutor` / :class:`DaskExecutor` workers included; yields the :class:`CpuMeter`."""
    meter, outer = CpuMeter(whole_process=whole_process), getattr(_METER, "meter", None)
    _METER.meter = meter
    try:
        yield meter
    finally:
        _METER.meter = outer
        if outer is not None:
            outer.remote_s += meter.remote_s


class _Timed:
    """``fn`` run in a worker, returning ``(fn(item), CPU seconds of the worker process while it ran)``."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, item):
        start = time.process_time()
        out = self.fn(item)
        return out, time.process_time() - start


def _remote_map(submit, fn, items) -> list:
    """``submit(_Timed(fn), items)``'s results, their workers' CPU time added to this thread's meter."""
    timed = submit(_Timed(fn), items)
    meter = getattr(_METER, "meter", None)
    if meter is not None:
        meter.remote_s += sum(cpu for _, cpu in timed)
    return [out for out, _ in timed]


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
    """A local pool of ``workers`` processes (``spawn`` start method: safe with BLAS threads).

    Each worker runs with ``blas_threads`` BLAS / OpenMP threads (default :func:`blas_threads_per_worker`:
    ``max(1, cores // workers)``), so ``workers`` processes do not each start one thread per core and contend.
    """

    def __init__(self, workers: int, *, blas_threads: int | None = None):
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
        if blas_threads is None:
            blas_threads = blas_threads_per_worker(workers)
        if isinstance(blas_threads, bool) or not isinstance(blas_threads, int) or blas_threads < 1:
            raise ValueError(f"blas_threads must be an integer >= 1, got {blas_threads!r}")
        self.workers = workers
        self.blas_threads = blas_threads
        self.name = f"process-pool({workers})"
        self._pool: ProcessPoolExecutor | None = None

    def map(self, fn, items):
        items = list(items)
        if len(items) <= 1:
            return [fn(item) for item in items]
        pool = self._ensure_pool()
        return _remote_map(lambda timed, xs: list(pool.map(timed, xs)), fn, items)

    def submit(self, fn, item):
        """``fn(item)`` in a worker process, as a :class:`concurrent.futures.Future` (whole units of work that should
        not share this process's GIL; nothing is measured into the caller's :func:`measure_cpu`)."""
        return self._ensure_pool().submit(fn, item)

    def _ensure_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_limit_worker_threads, initargs=(self.blas_threads,))
        return self._pool

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

    def __init__(self, address: str, *, timeout: float = DASK_TIMEOUT):
        if not isinstance(address, str) or "://" not in address:
            raise ValueError(f"dask_scheduler must be an address like 'tcp://127.0.0.1:8786', got {address!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
            raise ValueError(f"timeout must be a number of seconds in (0, inf), got {timeout!r}")
        from distributed import Client  # optional dependency: fedcheck[dask]

        self.address = address
        self.timeout = float(timeout)
        self.name = f"dask({address})"
        _probe_scheduler(address, timeout)
        self._client = Client(address, timeout=timeout, set_as_default=False)
        try:
            self._client.wait_for_workers(1, timeout=timeout)
        except Exception:  # distributed raises its own TimeoutError subclass
            self._client.close()
            raise TimeoutError(f"the dask scheduler at {address} has no worker after {timeout:g} s "
                               f"(start one with `dask worker {address}`; "
                               f"change the wait with --dask-timeout)") from None

    def map(self, fn, items):
        """``[fn(item) ...]`` on the cluster. While runs are unfinished the scheduler is asked every
        :data:`DASK_POLL` seconds for its workers: after ``timeout`` seconds without any (all lost: killed,
        disconnected), the runs are cancelled and ``TimeoutError`` names the address (a plain gather would wait
        forever for a worker that never comes)."""
        items = list(items)
        if not items:
            return []
        return _remote_map(self._gather, fn, items)

    def _gather(self, fn, items):
        futures = self._client.map(fn, items, pure=False)
        try:
            without_workers, pending = None, list(futures)
            while pending:
                try:
                    pending[0].result(timeout=DASK_POLL)  # a failed run raises its own error here
                    pending.pop(0)
                    continue
                except TimeoutError:
                    if pending[0].done():  # the run itself raised a TimeoutError
                        raise
                if self._client.nthreads():
                    without_workers = None
                    continue
                now = time.monotonic()
                without_workers = now if without_workers is None else without_workers
                if now - without_workers >= self.timeout:
                    unfinished = sum(not f.done() for f in futures)
                    raise TimeoutError(f"the dask scheduler at {self.address} has had no worker for "
                                       f"{self.timeout:g} s with {unfinished} of {len(futures)} runs unfinished "
                                       f"(workers lost? start one with `dask worker {self.address}`; change the wait "
                                       f"with --dask-timeout)")
            return self._client.gather(futures)
        except BaseException:
            self._client.cancel(futures)
            raise

    def close(self) -> None:
        self._client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def make_executor(workers: int = 1, dask_scheduler: str | None = None, *, timeout: float = DASK_TIMEOUT) -> Executor:
    """Serial for ``workers == 1``, a process pool for more, dask when a scheduler is given.

    ``timeout``: seconds to wait for the dask scheduler's answer and then for its first worker; both
    end in a ``TimeoutError`` naming the address.
    """
    if dask_scheduler is not None:
        return DaskExecutor(dask_scheduler, timeout=timeout)
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
