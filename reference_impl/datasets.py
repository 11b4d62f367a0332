"""Real data sets from local files the user names, and scikit-learn's bundled digits (shared by every paper).

Nothing is downloaded. MNIST and MedMNIST (OrganAMNIST) are read from ``.npz`` files in their usual
published layouts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["load_digits_images", "load_medmnist_npz", "load_mnist_npz", "synthetic_organ_arrays"]


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
