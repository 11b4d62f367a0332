r"""PGFL and privacy-preserving PGFL, vectorised over clients and Monte-Carlo runs: one import for every public name.

Reference implementation of Algorithm 1 (non-private, multi-step server update) and Algorithm 2 (dynamic zCDP)
of the PGFL paper, with every detail the paper leaves open a validated field of :class:`PGFLConfig`. All clients
of all servers advance as arrays of shape ``(runs, K, d)``; servers' models are ``(runs, S, Q, d)``. Randomness
only through the ``rng`` argument; two runs called with generators from the same seed share data-independent draws
(privacy noise and client scheduling) exactly: common random numbers, as Theorem II's check needs.

Variants: a generic convex loss through CVXPY (``PGFLProblem(loss="cvxpy", cvxpy_loss=...)``; the slow path, one
conic solve per client and run) and the single-step server update V0 (docs/papers/pgfl.md#single-step) as printed or
sign-corrected (``PGFLConfig(server_update=...)``, :func:`single_step_server_update`).

It is split along its seams: :mod:`~reference_impl.pgfl.config` (settings and state),
:mod:`~reference_impl.pgfl.solvers` (client sub-problems), :mod:`~reference_impl.pgfl.algorithm` (one iteration, a
run), :mod:`~reference_impl.pgfl.arms` (configurations in lockstep), :mod:`~reference_impl.pgfl.observers`,
:mod:`~reference_impl.pgfl.analysis` (the noiseless affine map) and :mod:`~reference_impl.pgfl.data` (problems);
:mod:`~reference_impl.pgfl.client` is one client's sub-problem with its certificate.

References
----------
.. [1] seed 000_133b71fd0aa99eb4.txt, Algorithms 1-2, eqs. (4)-(5), (8)-(12); seed
   004_180cd372987d137b.txt, Algorithms 4-5, eqs. (5.4)-(5.12).
"""

from __future__ import annotations

from reference_impl.pgfl.algorithm import run_pgfl, single_step_server_update, step
from reference_impl.pgfl.analysis import affine_map, fixed_point, iteration_spectral_radius
from reference_impl.pgfl.arms import iterate_pgfl_arms, run_pgfl_arms
from reference_impl.pgfl.config import SERVER_UPDATES, PGFLConfig, PGFLRun, PGFLState, initial_state
from reference_impl.pgfl.data import (
    DIGIT_TASKS,
    ClassificationTask,
    classification_problem,
    load_pgfl_npz,
    pgfl_problem_from_arrays,
    synthetic_regression,
)
from reference_impl.pgfl.observers import accuracy_observer, nmsd_observer, server_models_observer
from reference_impl.pgfl.run_report import pgfl_algorithm_kwargs, pgfl_run_config, pgfl_run_document, pgfl_run_problem
from reference_impl.pgfl.solvers import CVXPY_CLIENT_TOL, LOGISTIC_GRADIENT_TOL, client_solver
from theory.pgfl.optima import cluster_gradient_norm, cluster_optima, eta_cluster_distance, fixed_point_tau0
from theory.pgfl.problem import PGFLProblem

__all__ = [
    "CVXPY_CLIENT_TOL",
    "DIGIT_TASKS",
    "LOGISTIC_GRADIENT_TOL",
    "SERVER_UPDATES",
    "ClassificationTask",
    "PGFLConfig",
    "PGFLProblem",
    "PGFLRun",
    "PGFLState",
    "accuracy_observer",
    "affine_map",
    "classification_problem",
    "client_solver",
    "cluster_gradient_norm",
    "cluster_optima",
    "eta_cluster_distance",
    "fixed_point",
    "fixed_point_tau0",
    "initial_state",
    "iterate_pgfl_arms",
    "iteration_spectral_radius",
    "load_pgfl_npz",
    "nmsd_observer",
    "pgfl_problem_from_arrays",
    "run_pgfl",
    "run_pgfl_arms",
    "server_models_observer",
    "single_step_server_update",
    "step",
    "synthetic_regression",
    "pgfl_algorithm_kwargs",
    "pgfl_run_config",
    "pgfl_run_document",
    "pgfl_run_problem",
]
