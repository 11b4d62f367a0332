"""What a PGFL run records at each iteration: NMSD, accuracy, the server models."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from reference_impl.pgfl.config import PGFLState
from theory.pgfl.problem import PGFLProblem

__all__ = ["accuracy_observer", "nmsd_observer", "server_models_observer"]


def nmsd_observer(problem: PGFLProblem) -> Callable[[PGFLState], np.ndarray]:
    """NMSD of the client models against the data-generating models (docs/papers/pgfl.md#choice-regression-data), per
    run: (R,)."""
    if problem.true_models is None:
        raise ValueError("problem.true_models is None: the NMSD needs the data-generating models")
    truth = problem.true_models[problem.client_cluster]                       # (K, d)
    norms = np.sum(truth**2, axis=1)

    def observe(state: PGFLState) -> np.ndarray:
        return np.mean(np.sum((state.w_clients - truth) ** 2, axis=2) / norms, axis=1)

    return observe


def accuracy_observer(problem: PGFLProblem, X_test, y_test) -> Callable[[PGFLState], np.ndarray]:
    """Mean test accuracy of the client models on their cluster's test set, per run: (R,).

    ``X_test[q]``, ``y_test[q]`` are cluster q's test features and {0, 1} labels (docs/papers/pgfl.md#exp-m).
    """
    if problem.loss != "logistic":
        raise ValueError("accuracy_observer needs a logistic problem")
    Q = problem.n_clusters
    if len(X_test) != Q or len(y_test) != Q:
        raise ValueError(f"X_test and y_test must hold one array per cluster (Q = {Q})")

    def observe(state: PGFLState) -> np.ndarray:
        acc = np.zeros(state.w_clients.shape[0])
        for q in range(Q):
            members = problem.client_cluster == q
            scores = np.einsum("id,rkd->rki", X_test[q], state.w_clients[:, members, :])
            acc += np.sum(np.mean((scores > 0) == (np.asarray(y_test[q]) > 0.5), axis=-1), axis=-1)
        return acc / problem.K

    return observe


def server_models_observer(state: PGFLState) -> np.ndarray:
    """The server models w_{s,(q)}, (R, S, Q, d)."""
    return state.w_servers.copy()
