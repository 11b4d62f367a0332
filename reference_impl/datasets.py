"""Real data sets from local files the user names, and scikit-learn's bundled digits (shared by every paper).

Nothing is downloaded. MNIST and MedMNIST (OrganAMNIST) are read from ``.npz`` files in their usual
published layouts.

Every ``.npy``/``.npz`` a user names is read through one guarded reader (:func:`read_npz_arrays`,
:func:`read_npy_array`), which refuses, before reading or allocating anything large: a missing path, a directory,
anything that is not a regular file (a FIFO, ``/dev/zero``), an unreadable file, a file that is not an ``.npy`` /
``.npz`` (an ``.npz`` where an ``.npy`` is expected, a corrupt or empty zip), a header whose shape claims more bytes
than the file holds or than :data:`MAX_ARRAY_BYTES`, and every dtype but real floating and integer (complex, object,
strings, structured; booleans only under the keys the caller allows). The data are read with
``allow_pickle=False``. Errors are :class:`DataFileError` (a ``ValueError``) naming the file; the CLI
(``fedcheck/_files.py``) prints them as its one-line usage errors.
"""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

import numpy as np

__all__ = ["MAX_ARRAY_BYTES", "DataFileError", "load_digits_images", "load_medmnist_npz", "load_mnist_npz",
           "check_real_dtype", "read_npy_array", "read_npz_arrays", "regular_file", "synthetic_organ_arrays"]

#: Largest single array read from an ``.npy``/``.npz`` (bytes, after decompression); an ``.npz`` may expand to at
#: most four times this.
MAX_ARRAY_BYTES = 2**30


class DataFileError(ValueError):
    """A data file that cannot be used; the message names the file (as the caller labelled it)."""


def regular_file(path, name: str | None = None) -> Path:
    """``path`` as a :class:`Path` if it names an existing regular file; :class:`DataFileError` naming ``name``
    (default: the path) otherwise."""
    path = Path(path)
    name = repr(str(path)) if name is None else name
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise DataFileError(f"{name} does not exist") from None
    except PermissionError:
        raise DataFileError(f"{name} cannot be read (permission denied)") from None
    except OSError as exc:
        raise DataFileError(f"{name} cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise DataFileError(f"{name} is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise DataFileError(f"{name} is not a regular file (a FIFO, device or socket)")
    return path


def check_real_dtype(dtype: np.dtype, name: str, *, bool_ok: bool = False) -> None:
    """Refuse every dtype but real floating and integer (booleans with ``bool_ok``): :class:`DataFileError` naming
    ``name``."""
    if dtype.names is not None or dtype.kind == "V":
        raise DataFileError(f"{name} holds a structured array (dtype {dtype}); it must be a plain real array")
    if dtype.kind == "c":
        raise DataFileError(f"{name} holds complex numbers (dtype {dtype}); it must hold real numbers")
    if dtype.kind == "b" and not bool_ok:
        raise DataFileError(f"{name} holds booleans (dtype {dtype}); it must hold real numbers")
    if dtype.kind == "O":
        raise DataFileError(f"{name} holds Python objects (dtype object); it must be a plain real array")
    if dtype.kind not in "iufb":
        raise DataFileError(f"{name} holds dtype {dtype}; it must hold real floating or integer numbers")


def _read_array(fh, name: str, available: int, *, bool_ok: bool = False) -> np.ndarray:
    """Read one ``.npy`` stream after checking its header against ``available`` bytes and the caps."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(fh)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = fmt.read_array_header_2_0(fh)
        else:
            raise ValueError(f"unsupported .npy format version {version}")
    except (ValueError, OSError, EOFError, SyntaxError, TypeError) as exc:
        raise DataFileError(f"{name} is not a valid .npy array ({' '.join(str(exc).split())[:120]})") from None
    check_real_dtype(dtype, name, bool_ok=bool_ok)
    try:
        available -= fh.tell()  # the data follow the header
    except (OSError, AttributeError, ValueError):
        pass
    count = 1
    for n in shape:
        count *= int(n)
    nbytes = count * dtype.itemsize
    if nbytes > MAX_ARRAY_BYTES:
        raise DataFileError(f"{name}: its header claims shape {tuple(shape)} ({nbytes} bytes), more than the limit "
                            f"of {MAX_ARRAY_BYTES} bytes")
    if nbytes > available:
        raise DataFileError(f"{name}: its header claims shape {tuple(shape)} ({nbytes} bytes) but the file holds only "
                            f"{max(available, 0)} bytes of data (truncated, or a header claiming a huge shape)")
    try:
        data = fh.read(nbytes) if count else b""
    except (ValueError, OSError, EOFError) as exc:
        raise DataFileError(f"{name} could not be read ({' '.join(str(exc).split())[:120]})") from None
    if len(data) != nbytes:
        raise DataFileError(f"{name}: its header claims {nbytes} bytes of data but the file holds only {len(data)} "
                            f"(truncated or corrupt)")
    arr = np.frombuffer(data, dtype=dtype, count=count).reshape(shape, order="F" if fortran else "C")
    return arr.copy()


def read_npy_array(path, name: str | None = None) -> np.ndarray:
    """The array of an ``.npy`` file (header checked before the data are read); :class:`DataFileError` naming
    ``name`` (default: the path)."""
    path = regular_file(path, name)
    name = repr(str(path)) if name is None else name
    try:
        with open(path, "rb") as fh:
            head = fh.read(6)
            if head.startswith(b"PK"):
                raise DataFileError(f"{name} is an .npz (zip) archive; it must be an .npy file")
            if head != b"\x93NUMPY":
                raise DataFileError(f"{name} is not an .npy file (no .npy header)")
            fh.seek(0)
            return _read_array(fh, name, path.stat().st_size)
    except PermissionError:
        raise DataFileError(f"{name} cannot be read (permission denied)") from None
    except OSError as exc:
        raise DataFileError(f"{name} cannot be read ({exc.strerror or exc})") from None


def read_npz_arrays(path, name: str | None = None, *, bool_keys: tuple[str, ...] | None = ()) -> dict:
    """Every array of an ``.npz`` file, ``{key: array}``, each header checked before its data are read.

    Boolean arrays are refused except under the keys ``bool_keys`` (None: allowed under every key).
    :class:`DataFileError` naming ``name`` (default: the path) otherwise.
    """
    path = regular_file(path, name)
    name = repr(str(path)) if name is None else name
    out: dict[str, np.ndarray] = {}
    try:
        with zipfile.ZipFile(path) as zf:
            members = zf.infolist()
            total = sum(info.file_size for info in members)
            if total > 4 * MAX_ARRAY_BYTES:
                raise DataFileError(f"{name} expands to {total} bytes, more than the limit of {4 * MAX_ARRAY_BYTES} "
                                    f"bytes")
            for info in members:
                if not info.filename.endswith(".npy"):
                    raise DataFileError(f"{name} holds {info.filename!r}, which is not an .npy array")
                key = info.filename[:-4]
                with zf.open(info) as fh:
                    out[key] = _read_array(fh, f"{name} array {key!r}", info.file_size,
                                           bool_ok=bool_keys is None or key in bool_keys)
    except zipfile.BadZipFile:
        raise DataFileError(f"{name} is not an .npz file (not a valid zip archive)") from None
    except PermissionError:
        raise DataFileError(f"{name} cannot be read (permission denied)") from None
    except (OSError, EOFError, zipfile.LargeZipFile, NotImplementedError) as exc:
        raise DataFileError(f"{name} could not be read ({' '.join(str(exc).split())[:120]})") from None
    if not out:
        raise DataFileError(f"{name} holds no arrays")
    return out


def _require(path: Path, keys: tuple[str, ...]) -> dict:
    """Every array of the ``.npz`` at ``path`` (which must hold ``keys``); ValueError naming the file otherwise.

    Refuses what is not a regular file (a FIFO, a device), what is not an ``.npz`` (zip) archive, a corrupt
    or empty archive, a header claiming more than the file holds or :data:`MAX_ARRAY_BYTES`, and arrays that are not
    plain numbers (complex, object, structured, strings); the data are read by :func:`read_npz_arrays`.
    """
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except OSError:
        raise ValueError(f"path must name an existing .npz file, got {str(path)!r}") from None
    if not stat.S_ISREG(mode):
        raise ValueError(f"path must name a regular .npz file, got {str(path)!r} (a directory, FIFO or device)")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path.name} is not an .npz file (not a zip archive)")
    out = read_npz_arrays(path, path.name, bool_keys=None)   # headers checked before the data are read
    missing = [k for k in keys if k not in out]
    if missing:
        raise ValueError(f"{path.name} must contain arrays {', '.join(keys)}; missing {', '.join(missing)}")
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
        worst = arr.min() if arr.min() < 0 else arr.max()
        raise ValueError(f"{name} must hold integers in [0, 2**31], got {worst.item()!r}")
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
    """Images flattened and scaled to [0, 1], labels as int64: integer labels, or floats that are exact integers
    (a fractional label is refused, never truncated)."""
    images = np.asarray(images)
    labels = np.asarray(labels)
    if images.ndim < 2 or labels.size != images.shape[0] or labels.ndim > 2 or (labels.ndim == 2
                                                                                 and labels.shape[1] != 1):
        raise ValueError(f"{name}: images must be (n, ...) with one label each, got {images.shape} and {labels.shape}")
    if images.shape[0] == 0:   # numpy's "cannot reshape array of size 0" said nothing of the file
        raise ValueError(f"{name}: the file holds no {name} images (n = 0); at least one is needed")
    labels = _integers(f"{name} labels", labels.reshape(-1))
    flat = images.reshape(images.shape[0], -1).astype(np.float64)
    top = flat.max() if flat.size else 1.0
    if not np.isfinite(top):  # NaN or infinite pixels: left unscaled, so that the file's check names the real value
        return flat, labels
    return flat / (top if top > 0 else 1.0), labels


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
    """An OrganAMNIST-shaped data set in the MedMNIST ``.npz`` layout (docs/papers/pgfl.md#exp-o's offline substitute).

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
        images = np.stack([np.roll(protos[c], tuple(s), axis=(0, 1)) for c, s in zip(labels, shifts, strict=True)])
        images = np.clip(255 * (images + noise * rng.standard_normal(images.shape)), 0, 255).astype(np.uint8)
        return images, labels[:, None]

    train_images, train_labels = draw(train_per_class)
    test_images, test_labels = draw(test_per_class)
    return {"train_images": train_images, "train_labels": train_labels, "test_images": test_images,
            "test_labels": test_labels}
