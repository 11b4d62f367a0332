"""Executors: same seed gives the same numbers on serial, process-pool and dask executors."""

import os

import numpy as np
import pytest

from verify.executor import (
    DaskExecutor,
    ProcessExecutor,
    SerialExecutor,
    blas_threads_per_worker,
    make_executor,
    map_seeded,
)
from verify.pgfl.theorem2_bound import check_bound_identity
from verify.records import CheckContext


def _seeded_runs(executor):
    return map_seeded(executor, np.random.Generator.standard_normal, np.random.SeedSequence(42), 6, (3,))


def test_map_seeded_is_deterministic_and_runs_are_independent():
    a = np.array(_seeded_runs(SerialExecutor()))
    b = np.array(_seeded_runs(SerialExecutor()))
    assert a.shape == (6, 3) and np.array_equal(a, b)  # the 6 runs of shape (3,) requested above
    assert len({tuple(row) for row in a}) == 6  # six distinct streams


def test_process_pool_matches_serial():
    with ProcessExecutor(2) as pool:
        assert np.array_equal(np.array(_seeded_runs(pool)), np.array(_seeded_runs(SerialExecutor())))


def test_dask_local_cluster_matches_serial():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      protocol="tcp://") as cluster:
        with DaskExecutor(cluster.scheduler_address) as dask_executor:
            assert np.array_equal(np.array(_seeded_runs(dask_executor)), np.array(_seeded_runs(SerialExecutor())))
            via_dask = check_bound_identity(CheckContext(seed=1, executor=dask_executor))
    serial = check_bound_identity(CheckContext(seed=1))
    assert (via_dask.verdict, via_dask.measured, via_dask.counterexample) == (
        serial.verdict, serial.measured, serial.counterexample)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"workers": 0}, "workers must be an integer >= 1"),
    ({"workers": 2.5}, "workers must be an integer >= 1"),
    ({"dask_scheduler": "localhost"}, "dask_scheduler must be an address like"),
])
def test_bad_executor_settings_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_executor(**kwargs)


def test_map_seeded_validates_run_count():
    with pytest.raises(ValueError, match="n_runs must be an integer >= 1"):
        map_seeded(SerialExecutor(), np.random.Generator.random, np.random.SeedSequence(0), 0)


def _sleep_then(seconds):
    import time

    time.sleep(seconds)
    return seconds


def test_dask_map_raises_when_the_cluster_loses_its_workers():
    """Workers gone while runs are unfinished: after --dask-timeout seconds without any worker the runs are cancelled
    and TimeoutError names the scheduler (before, gather waited for ever)."""
    import threading

    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        with DaskExecutor(cluster.scheduler_address, timeout=1.0) as dask_executor:
            assert dask_executor.map(_sleep_then, [0.0, 0.0]) == [0.0, 0.0]  # a healthy cluster answers
            threading.Timer(0.5, lambda: cluster.scale(0)).start()  # every worker leaves during the runs
            with pytest.raises(TimeoutError, match=r"no worker for 1 s with \d of 4 runs unfinished"):
                dask_executor.map(_sleep_then, [2.0] * 4)  # 8 s of work on one worker thread: cannot finish first


@pytest.mark.parametrize(("workers", "cores", "threads"), [(1, 2, 2), (2, 2, 1), (3, 2, 1), (2, 8, 4), (3, 8, 2)])
def test_blas_threads_per_worker_share_the_cores(workers, cores, threads):
    assert blas_threads_per_worker(workers, cores) == threads


@pytest.mark.parametrize(("args", "match"), [((0, 2), "workers"), ((True, 2), "workers"), ((2, 0), "cores"),
                                             ((2, 1.5), "cores")])
def test_blas_threads_per_worker_validates(args, match):
    with pytest.raises(ValueError, match=match):
        blas_threads_per_worker(*args)


def _worker_blas_threads(_):
    import scipy.linalg  # noqa: F401 - a BLAS loaded after the worker started (scipy's own OpenBLAS, if bundled)
    from threadpoolctl import threadpool_info

    return (os.environ.get("OPENBLAS_NUM_THREADS"), os.environ.get("OMP_NUM_THREADS"),
            sorted({lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}))


def test_process_pool_workers_run_the_given_blas_threads():
    """Each worker caps its BLAS / OpenMP threads (libraries loaded before and after it started)."""
    with ProcessExecutor(2, blas_threads=1) as pool:
        results = pool.map(_worker_blas_threads, [0, 1])
    assert results == [("1", "1", [1])] * 2
    assert ProcessExecutor(2).blas_threads == blas_threads_per_worker(2)
    with pytest.raises(ValueError, match="blas_threads"):
        ProcessExecutor(2, blas_threads=0)
