"""Data for the PGFL experiments: local files the user names, and scikit-learn's bundled digits.

Nothing is downloaded. MNIST and MedMNIST (OrganAMNIST) are read from ``.npz`` files in their usual
published layouts; a PGFL problem can also be read from a user's ``.npz`` (layout in
:func:`load_pgfl_npz`).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np

from reference_impl.pgfl import PGFLProblem

__all__ = [
    "DIGIT_TASKS",
    "ClassificationTask",
    "classification_problem",
    "load_digits_images",
    "load_medmnist_npz",
    "load_mnist_npz",
    "load_pgfl_npz",
    "pgfl_problem_from_arrays",
    "synthetic_organ_arrays",
]

#: Spec pgfl.md 5.2: per cluster, (classes labelled 0, classes labelled 1). M-1 low similarity, M-2 high.
DIGIT_TASKS = {
    "M-1": (((1,), (8,)), ((1,), (9,)), ((7,), (8,))),
    "M-2": (((1, 2, 3), (6, 7, 8)), ((1, 2, 3), (7, 8, 9)), ((1, 2, 3), (6, 8, 9))),
}


def _require(path: Path, keys: tuple[str, ...]) -> dict:
    """Every array of the ``.npz`` at ``path`` (which must hold ``keys``); ValueError naming the file otherwise.

    Refuses what is not a regular file (a FIFO, a device), what is not an ``.npz`` (zip) archive, a corrupt
    or empty archive, and arrays that are not plain numbers (object, structured, strings); the data are
    read with ``allow_pickle=False``.
    """
    import stat
    import zipfile

    path = Path(path)
    try:
        mode = path.stat().st_mode
    except OSError:
        raise ValueError(f"path must name an existing .npz file, got {str(path)!r}") from None
    if not stat.S_ISREG(mode):
        raise ValueError(f"path must name a regular .npz file, got {str(path)!r} (a directory, FIFO or device)")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path.name} is not an .npz file (not a zip archive)")
    try:
        with np.load(path, allow_pickle=False) as data:
            missing = [k for k in keys if k not in data.files]
            if missing:
                raise ValueError(f"{path.name} must contain arrays {', '.join(keys)}; missing {', '.join(missing)}")
            out = {k: np.asarray(data[k]) for k in data.files}
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{path.name} could not be read as an .npz file ({' '.join(str(exc).split())})") from None
    for key, arr in out.items():
        if arr.dtype.kind not in "biuf":
            raise ValueError(f"{path.name}: array {key!r} has dtype {arr.dtype}; it must hold real numbers")
    return out


def _integers(name: str, value) -> np.ndarray:
    """A 1-D integer array: integer dtype, or floats that are exact integers (checked before any cast)."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold integers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {arr.shape}")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if np.any(bad):
            raise ValueError(f"{name} must hold integers, got {float(arr[np.flatnonzero(bad)[0]])!r} at index "
                             f"{np.flatnonzero(bad)[0]}")
    if arr.size and (arr.min() < 0 or arr.max() > 2**31):
        raise ValueError(f"{name} must hold integers in [0, 2**31], got {(arr.min() if arr.min() < 0 else arr.max()).item()!r}")
    return arr.astype(np.int64)


def _reals(name: str, value, ndim: int) -> np.ndarray:
    """A real (floating or integer dtype, not complex or bool), finite array with ``ndim`` axes."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf":
        kind = {"c": "complex numbers", "b": "booleans"}.get(arr.dtype.kind, f"dtype {arr.dtype}")
        raise ValueError(f"{name} must hold real numbers, got {kind}")
    if arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} axes, got shape {arr.shape}")
    out = arr.astype(np.float64)
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name} must be finite (it holds NaN or infinity)")
    return out


def _images(name: str, images: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    images = np.asarray(images)
    labels = np.asarray(labels).reshape(-1)
    if images.ndim < 2 or images.shape[0] != labels.shape[0]:
        raise ValueError(f"{name}: images must be (n, ...) with one label each, got {images.shape} and {labels.shape}")
    flat = images.reshape(images.shape[0], -1).astype(np.float64)
    top = flat.max() if flat.size else 1.0
    return flat / (top if top > 0 else 1.0), labels.astype(np.int64)


def load_mnist_npz(path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """MNIST from a local ``.npz`` with ``x_train, y_train, x_test, y_test`` (the Keras layout).

    Returns flattened images scaled to [0, 1] and integer labels: ``(X_train, y_train, X_test, y_test)``.
    """
    data = _require(path, ("x_train", "y_train", "x_test", "y_test"))
    return (*_images("train", data["x_train"], data["y_train"]), *_images("test", data["x_test"], data["y_test"]))


def load_medmnist_npz(path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """MedMNIST (e.g. ``organamnist.npz``) with ``train_images, train_labels, test_images, test_labels``."""
    data = _require(path, ("train_images", "train_labels", "test_images", "test_labels"))
    return (*_images("train", data["train_images"], data["train_labels"]),
            *_images("test", data["test_images"], data["test_labels"]))


def load_digits_images() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's bundled 8x8 digits (no network): a stratified 2/3 - 1/3 train/test split, seed 0."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    X, y = _images("digits", digits.images, digits.target)
    rng = np.random.default_rng(0)
    test = np.zeros(y.size, dtype=bool)
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        test[rng.permutation(idx)[: idx.size // 3]] = True
    return X[~test], y[~test], X[test], y[test]


class ClassificationTask(NamedTuple):
    """A logistic PGFL problem and each cluster's test set (features, {0, 1} labels)."""

    problem: PGFLProblem
    X_test: tuple
    y_test: tuple


def _unit_ball(X: np.ndarray) -> np.ndarray:
    """Scale rows to norm <= 1, so the logistic gradient bound is C_k = 1 (spec 5.2)."""
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.maximum(norms, 1.0)


def classification_problem(rng: np.random.Generator, X_train, y_train, X_test, y_test, tasks, *, servers: int = 10,
                           clients_per_server: int = 15, samples: tuple[int, int] = (2, 4),
                           average_degree: float = 3.0, lam: float = 1e-2) -> ClassificationTask:
    """Spec 5.2: clients of cluster q hold D_k samples from its two class sets (label 0 / 1, Bernoulli(1/2)).

    ``tasks[q] = (classes_labelled_0, classes_labelled_1)``. The server graph is drawn as in
    :func:`reference_impl.pgfl.synthetic_regression`; clusters are assigned i.i.d. uniformly.
    Returns the logistic :class:`PGFLProblem` and each cluster's test set.
    """
    from reference_impl.pgfl import synthetic_regression

    Q = len(tasks)
    graph = synthetic_regression(rng, servers=servers, clients_per_server=1, d=1, clusters=1,
                                 average_degree=average_degree).adjacency
    K = servers * clients_per_server
    client_cluster = rng.integers(Q, size=K)
    X_train, X_test = _unit_ball(np.asarray(X_train, float)), _unit_ball(np.asarray(X_test, float))
    pools = []
    for zero, one in tasks:
        pools.append((np.flatnonzero(np.isin(y_train, zero)), np.flatnonzero(np.isin(y_train, one))))
        if pools[-1][0].size == 0 or pools[-1][1].size == 0:
            raise ValueError(f"tasks: classes {zero} or {one} have no training image")
    X, y = [], []
    for k in range(K):
        zero_pool, one_pool = pools[client_cluster[k]]
        D = int(rng.integers(samples[0], samples[1] + 1))
        labels = (rng.random(D) < 0.5).astype(np.float64)
        idx = np.where(labels == 1.0, rng.choice(one_pool, D), rng.choice(zero_pool, D))
        X.append(X_train[idx])
        y.append(labels)
    tests_X, tests_y = [], []
    for zero, one in tasks:
        mask = np.isin(y_test, zero) | np.isin(y_test, one)
        tests_X.append(X_test[mask])
        tests_y.append(np.isin(y_test[mask], one).astype(np.float64))
    problem = PGFLProblem(adjacency=graph, client_server=np.repeat(np.arange(servers), clients_per_server),
                          client_cluster=client_cluster, n_clusters=Q, X=tuple(X), y=tuple(y), lam=lam,
                          loss="logistic")
    return ClassificationTask(problem, tuple(tests_X), tuple(tests_y))


def load_pgfl_npz(path, *, loss: str = "ridge", lam: float = 1.0) -> PGFLProblem:
    """A PGFL problem from a user's ``.npz``.

    Keys: ``X_0 .. X_{K-1}`` (each ``(D_k, d)``), ``y_0 .. y_{K-1}`` (each ``(D_k,)``), ``client_server``
    ``(K,)`` and ``client_cluster`` ``(K,)`` integer arrays, optionally ``adjacency`` ``(S, S)`` (symmetric
    0/1, zero diagonal; default: the complete graph on the servers that appear) and ``true_models``
    ``(Q, d)`` (enables the NMSD metric).
    """
    data = _require(path, ("client_server", "client_cluster"))
    try:
        return pgfl_problem_from_arrays(data, loss=loss, lam=lam)
    except ValueError as exc:
        raise ValueError(f"{Path(path).name}: {exc}") from None


def pgfl_problem_from_arrays(data, *, loss: str = "ridge", lam: float = 1.0) -> PGFLProblem:
    """The :class:`PGFLProblem` of the arrays of a PGFL ``.npz`` (layout in :func:`load_pgfl_npz`), validated.

    Every array is checked before any cast: ``client_server``/``client_cluster`` integers (exact-integer
    floats allowed, never truncated) >= 0, every server ``0..S-1`` holding at least one client;
    every cluster ``0..Q-1`` holding at least one client; ``adjacency`` entries exactly 0 or 1 (bool allowed),
    symmetric, zero diagonal; ``X_k``, ``y_k`` and ``true_models``
    real (not complex or boolean) and finite. Keys outside the layout are refused. ValueError names the array.
    """
    for key in ("client_server", "client_cluster"):
        if key not in data:
            raise ValueError(f"array {key!r} is missing")
    servers = _integers("client_server", data["client_server"])
    clusters = _integers("client_cluster", data["client_cluster"])
    K = servers.size
    if K < 1 or clusters.shape != servers.shape:
        raise ValueError(f"client_server and client_cluster must have the same length K >= 1, got {servers.size} "
                         f"and {clusters.size}")
    allowed = {"client_server", "client_cluster", "adjacency", "true_models"}
    allowed |= {f"X_{k}" for k in range(K)} | {f"y_{k}" for k in range(K)}
    extra = sorted(set(data) - allowed)
    if extra:
        raise ValueError(f"array {extra[0]!r} is not part of the layout (X_k and y_k for k = 0..{K - 1}, "
                         f"client_server, client_cluster, adjacency, true_models)")
    missing = [f"X_{k}" for k in range(K) if f"X_{k}" not in data] + [f"y_{k}" for k in range(K) if f"y_{k}" not in data]
    if missing:
        raise ValueError(f"X_k and y_k are needed for k = 0..{K - 1}; missing {', '.join(missing[:5])}")
    adjacency = data.get("adjacency")
    if adjacency is not None:
        adjacency = np.asarray(adjacency)
        adj = _reals("adjacency", adjacency.astype(np.float64) if adjacency.dtype.kind == "b" else adjacency, 2)
        if adj.shape[0] != adj.shape[1] or adj.shape[0] < 1:
            raise ValueError(f"adjacency must be a square (S, S) matrix, got shape {adj.shape}")
        if not np.all((adj == 0.0) | (adj == 1.0)):
            bad = adj[(adj != 0.0) & (adj != 1.0)][0]
            raise ValueError(f"adjacency entries must be 0 or 1, got {float(bad)!r}")
        S = adj.shape[0]
        if servers.max() >= S:
            raise ValueError(f"client_server entries must be in [0, S - 1 = {S - 1}] (S from adjacency), got "
                             f"{int(servers.max())}")
    else:
        S = int(servers.max()) + 1
        adj = ~np.eye(S, dtype=bool)
    empty = np.setdiff1d(np.arange(S), servers)
    if empty.size:
        raise ValueError(f"client_server: server {int(empty[0])} has no client (every server 0..{S - 1} needs one)")
    unused = np.setdiff1d(np.arange(int(clusters.max()) + 1), clusters)
    if unused.size:
        raise ValueError(f"client_cluster: cluster {int(unused[0])} has no client (clusters are numbered "
                         f"0..Q-1 and each needs one)")
    X = tuple(_reals(f"X_{k}", data[f"X_{k}"], 2) for k in range(K))
    y = tuple(_reals(f"y_{k}", data[f"y_{k}"], 1) for k in range(K))
    true_models = data.get("true_models")
    if true_models is not None:
        true_models = _reals("true_models", true_models, 2)
    return PGFLProblem(adjacency=np.asarray(adj).astype(bool), client_server=servers, client_cluster=clusters,
                       n_clusters=int(clusters.max()) + 1, X=X, y=y, lam=lam, true_models=true_models, loss=loss)


#: OrganAMNIST's mirrored organ pairs (left, right): femur, kidney, lung.
_MIRRORED = ((1, 2), (4, 5), (7, 8))


def synthetic_organ_arrays(rng: np.random.Generator, *, side: int = 28, train_per_class: int = 40,
                           test_per_class: int = 20, noise: float = 0.3) -> dict[str, np.ndarray]:
    """An OrganAMNIST-shaped data set in the MedMNIST ``.npz`` layout (spec pgfl.md 5.3's offline substitute).

    11 class prototypes on a ``side x side`` grid (sums of three Gaussian blobs; the left/right organs of
    :data:`_MIRRORED` are mirror images of each other); a sample is its prototype shifted by up to one pixel plus
    Gaussian pixel noise of standard deviation ``noise``, clipped to [0, 255] as uint8. Returns
    ``train_images (n, side, side)``, ``train_labels (n, 1)``, ``test_images``, ``test_labels`` -- a stand-in for
    tests and demonstrations, never a reproduction of MedMNIST.
    """
    if isinstance(side, bool) or not isinstance(side, int) or side < 4:
        raise ValueError(f"side must be an integer >= 4, got {side!r}")
    grid = np.stack(np.meshgrid(np.arange(side), np.arange(side), indexing="ij"), axis=-1) / side
    protos = []
    for _ in range(11):
        centres, widths = rng.uniform(0.2, 0.8, size=(3, 2)), rng.uniform(0.05, 0.2, size=3)
        d2 = np.sum((grid[None] - centres[:, None, None]) ** 2, axis=-1)
        protos.append(np.sum(np.exp(-d2 / (2 * widths[:, None, None] ** 2)), axis=0))
    for left, right in _MIRRORED:
        protos[right] = protos[left][:, ::-1]
    protos = np.stack(protos) / max(float(np.max(protos)), 1e-12)

    def draw(per_class: int):
        labels = np.repeat(np.arange(11), per_class)
        shifts = rng.integers(-1, 2, size=(labels.size, 2))
        images = np.stack([np.roll(protos[c], tuple(s), axis=(0, 1)) for c, s in zip(labels, shifts)])
        images = np.clip(255 * (images + noise * rng.standard_normal(images.shape)), 0, 255).astype(np.uint8)
        return images, labels[:, None]

    train_images, train_labels = draw(train_per_class)
    test_images, test_labels = draw(test_per_class)
    return {"train_images": train_images, "train_labels": train_labels, "test_images": test_images,
            "test_labels": test_labels}
