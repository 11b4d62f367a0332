"""Real data sets a claim may read from a user's local file: ``fedcheck report --data NAME=PATH``.

Nothing is downloaded. A claim that needs one names it in ``Claim.data_files``; its check finds the path in
``ctx.data`` and, without it, returns ``not_checkable`` naming the command that decides it
(:func:`deciding_command`). The result cache keys such a claim by the file's SHA-256 too, so a report with the
file never reuses a result computed without it (or with another file).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from pathlib import Path

__all__ = ["ARRAY_KEYS", "CLASSES", "DATA_FILES", "check_arrays", "deciding_command", "fingerprint", "load",
           "parse_data_option"]

#: Name -> (what the file holds, loader in reference_impl.datasets, its usual file name).
DATA_FILES: dict[str, tuple[str, str, str]] = {
    "mnist": ("MNIST as an .npz with x_train, y_train, x_test, y_test (the Keras layout)", "load_mnist_npz",
              "mnist.npz"),
    "medmnist": ("OrganAMNIST as an .npz with train_images, train_labels, test_images, test_labels (the MedMNIST "
                 "layout)", "load_medmnist_npz", "organamnist.npz"),
}


#: Name -> the file's (train images, train labels, test images, test labels) keys.
ARRAY_KEYS: dict[str, tuple[str, str, str, str]] = {
    "mnist": ("x_train", "y_train", "x_test", "y_test"),
    "medmnist": ("train_images", "train_labels", "test_images", "test_labels"),
}
#: Name -> number of classes (labels must be integers in 0..CLASSES - 1).
CLASSES: dict[str, int] = {"mnist": 10, "medmnist": 11}


def _loader(name: str) -> Callable:
    import reference_impl.datasets as datasets

    if name not in DATA_FILES:
        raise ValueError(f"data set name must be one of {', '.join(DATA_FILES)}, got {name!r}")
    return getattr(datasets, DATA_FILES[name][1])


def parse_data_option(text: str) -> tuple[str, Path]:
    """``NAME=PATH`` -> (name, path); ValueError naming the allowed names.

    >>> parse_data_option("medmnist=organamnist.npz")
    ('medmnist', PosixPath('organamnist.npz'))
    """
    name, sep, path = str(text).partition("=")
    if not sep or not path:
        raise ValueError(f"must be NAME=PATH with NAME one of {', '.join(DATA_FILES)}, got {text!r}")
    if name not in DATA_FILES:
        raise ValueError(f"NAME must be one of {', '.join(DATA_FILES)}, got {name!r}")
    return name, Path(path)


def load(name: str, path: str | Path):
    """The data set ``name`` from ``path`` (``(X_train, y_train, X_test, y_test)``), cached per file version.

    Checked before any claim reads it (:func:`check_arrays`): ValueError naming the file's array otherwise.
    """
    p = Path(path).resolve()
    stat = p.stat() if p.exists() else None
    return _load_cached(name, str(p), None if stat is None else (stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=2)
def _load_cached(name: str, path: str, version):
    arrays = _loader(name)(path)
    check_arrays(name, arrays, Path(path).name)
    return arrays


def check_arrays(name: str, arrays, label: str = "the file") -> None:
    """Refuse a loaded data set ``(X_train, y_train, X_test, y_test)`` whose images are not finite real
    ``(n, features)`` arrays with at least one row, or whose labels are not integers of its classes, one per image.

    The message names the array by its key in the file (``x_train``, ``test_labels``).
    """
    import numpy as np

    keys = ARRAY_KEYS[name]
    X_train, y_train, X_test, y_test = arrays
    for X, y, kx, ky in ((X_train, y_train, keys[0], keys[1]), (X_test, y_test, keys[2], keys[3])):
        X, y = np.asarray(X), np.asarray(y)
        if X.dtype.kind not in "iuf" or X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
            raise ValueError(f"{label}: {kx} must be a non-empty array of real images, got dtype {X.dtype} and shape "
                             f"{X.shape}")
        bad = ~np.isfinite(X)
        if bad.any():
            raise ValueError(f"{label}: {kx} must be finite, got {float(X[bad][0])!r} in image "
                             f"{int(np.argwhere(bad)[0][0])} (NaN or infinite pixels)")
        if y.shape != (X.shape[0],):
            raise ValueError(f"{label}: {ky} must hold one label per image of {kx} ({X.shape[0]}), got shape {y.shape}")
        if y.size and (y.min() < 0 or y.max() >= CLASSES[name]):
            raise ValueError(f"{label}: {ky} must hold labels in 0..{CLASSES[name] - 1}, got "
                             f"{int(y.min() if y.min() < 0 else y.max())}")


@functools.lru_cache(maxsize=8)
def _fingerprint_cached(path: str, version) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fingerprint(path: str | Path) -> str:
    """SHA-256 of the file's bytes (cached per path, modification time and size)."""
    p = Path(path).resolve()
    stat = p.stat()
    return _fingerprint_cached(str(p), (stat.st_mtime_ns, stat.st_size))


def deciding_command(claim_id: str, name: str) -> str:
    """The command that decides ``claim_id`` on the user's copy of data set ``name``."""
    return f"fedcheck report --only {claim_id} --profile thorough --data {name}=PATH/TO/{DATA_FILES[name][2]}"
