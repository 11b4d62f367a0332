"""Helpers of the ``fedcheck run`` plug-in tests: run the console script in-process, load a plug-in's setup."""

from fedcheck import cli


def run_plugin(argv):
    """``fedcheck ARGV`` in this process (exit status; a usage error raises SystemExit(2))."""
    return cli.main([str(a) for a in argv])


def load_setup(name: str, path, **options):
    """The validated setup of ``fedcheck run NAME PATH`` (options: dest -> value), nothing run."""
    from fedcheck.run import load

    return load(name, path, **options)[2]


def failing_analysis(job):
    """``fedcheck.msd._analyse`` whose exact model fails as a non-converged solver does (run in a worker process)."""
    from fedcheck.msd import _analyse

    if job[1] == "exact":
        raise ValueError("rho(F_exact): did not converge")
    return _analyse(job)


def dying_analysis(job):
    """``fedcheck.msd._analyse`` whose exact model's process dies without an answer (a killed worker)."""
    import os

    from fedcheck.msd import _analyse

    if job[1] == "exact":
        os._exit(3)
    return _analyse(job)
