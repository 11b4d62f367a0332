"""Data and config files of the CLI: one validation layer, every error one line naming the file.

Every file the CLI reads goes through :func:`read_config_text` (TOML), :func:`load_npy` or
:func:`load_npz`. They refuse, before reading or allocating anything large:

* a missing path, a directory, or anything that is not a regular file (a FIFO, ``/dev/zero``);
* an unreadable file, a text file that is not UTF-8 or holds NUL bytes (binary);
* for ``.npy``/``.npz``: a file that is not one (an ``.npz`` where an ``.npy`` is expected, a corrupt or
  empty zip), a header whose shape claims more bytes than the file holds or than
  :data:`MAX_ARRAY_BYTES`, and every dtype but real floating and integer (complex, bool, object,
  strings, structured) -- the data are read with ``allow_pickle=False``. The ``.npy``/``.npz`` reader itself is
  :mod:`reference_impl.datasets`' guarded reader (the simulations read users' files through it too); its
  :class:`~reference_impl.datasets.DataFileError` becomes :class:`FileError` here.

:func:`real_array` and :func:`integer_array` then check dtype, finiteness and shape of one array, and
:func:`check_budget` refuses a computation whose size estimate exceeds a documented cap, with the
estimate in the message. All errors are :class:`FileError` / :class:`fedcheck._config.ConfigError`
(``ValueError``), which the CLI prints as one line with exit status 2.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fedcheck._errors import ConfigError
from reference_impl.datasets import MAX_ARRAY_BYTES as _MAX_ARRAY_BYTES

__all__ = [
    "MAX_ARRAY_BYTES",
    "MAX_CONFIG_BYTES",
    "MAX_STATE_ELEMENTS",
    "MAX_WORK",
    "FileError",
    "check_budget",
    "integer_array",
    "load_npy",
    "load_npz",
    "read_config_text",
    "real_array",
    "regular_file",
    "same_file",
    "write_new_or_replace",
]

#: Largest TOML configuration read (bytes): configs are small; this stops ``/dev/zero``-like inputs.
MAX_CONFIG_BYTES = 16 * 2**20
#: Largest single array read from an ``.npy``/``.npz`` (bytes, after decompression; the guarded reader's limit).
MAX_ARRAY_BYTES = _MAX_ARRAY_BYTES
#: Largest state a command allocates (float64 elements, 8 bytes each: 10**8 is 800 MB).
MAX_STATE_ELEMENTS = 10**8
#: Largest work estimate (iterations x runs x state elements) a command accepts.
MAX_WORK = 10**12


class FileError(ConfigError):
    """A file the CLI cannot use; the message names the file (and the field that named it)."""


def _label(path: Path, field: str) -> str:
    return f"{field}: {str(path)!r}" if field else repr(str(path))


def regular_file(path, field: str = "") -> Path:
    """``path`` as a :class:`Path` if it names an existing regular file; :class:`FileError` otherwise."""
    from reference_impl.datasets import DataFileError
    from reference_impl.datasets import regular_file as _regular

    try:
        return _regular(path, _label(Path(path), field))
    except DataFileError as exc:
        raise FileError(str(exc)) from None


def _read_bytes(path: Path, field: str, limit: int) -> bytes:
    path = regular_file(path, field)
    size = path.stat().st_size
    if size > limit:
        raise FileError(f"{_label(path, field)} is {size} bytes, more than the limit of {limit} bytes")
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except PermissionError:
        raise FileError(f"{_label(path, field)} cannot be read (permission denied)") from None
    except OSError as exc:
        raise FileError(f"{_label(path, field)} cannot be read ({exc.strerror or exc})") from None
    if len(data) > limit:  # the file grew while we read it
        raise FileError(f"{_label(path, field)} is more than the limit of {limit} bytes")
    return data


def read_config_text(path, field: str = "CONFIG") -> str:
    """The UTF-8 text of a configuration file (regular, readable, at most :data:`MAX_CONFIG_BYTES`)."""
    data = _read_bytes(Path(path), field, MAX_CONFIG_BYTES)
    if b"\x00" in data:
        raise FileError(f"{_label(Path(path), field)} is a binary file, not a TOML text file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileError(f"{_label(Path(path), field)} is not UTF-8 text (byte {exc.start} is 0x{data[exc.start]:02x})"
                        ) from None


def _check_dtype(dtype: np.dtype, name: str) -> None:
    from reference_impl.datasets import DataFileError, check_real_dtype

    try:
        check_real_dtype(dtype, name)
    except DataFileError as exc:
        raise FileError(str(exc)) from None


def load_npy(path, field: str) -> np.ndarray:
    """One array from an ``.npy`` file named by config field ``field`` (header checked before reading).

    The guarded reader is :func:`reference_impl.datasets.read_npy_array` (so the simulations read users' files the
    same way); its error becomes :class:`FileError`.
    """
    from reference_impl.datasets import DataFileError, read_npy_array

    try:
        return read_npy_array(path, _label(Path(path), field))
    except DataFileError as exc:
        raise FileError(str(exc)) from None


def load_npz(path, field: str, *, bool_keys: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` file named by ``field``: ``{key: array}`` (headers checked before reading).

    Boolean arrays are refused except under the keys ``bool_keys`` (e.g. a 0/1 adjacency matrix). The guarded
    reader is :func:`reference_impl.datasets.read_npz_arrays`; its error becomes :class:`FileError`.
    """
    from reference_impl.datasets import DataFileError, read_npz_arrays

    try:
        return read_npz_arrays(path, _label(Path(path), field), bool_keys=bool_keys)
    except DataFileError as exc:
        raise FileError(str(exc)) from None


def real_array(value, name: str, *, shape: tuple | None = None, finite: bool = True) -> np.ndarray:
    """``value`` as a float64 array after checking its dtype (real floating or integer), finiteness, shape."""
    arr = np.asarray(value)
    _check_dtype(arr.dtype, name)
    if shape is not None and arr.shape != tuple(shape):
        raise ConfigError(f"{name} must have shape {tuple(shape)}, got {arr.shape}")
    out = arr.astype(np.float64)
    if finite and not np.all(np.isfinite(out)):
        bad = np.flatnonzero(~np.isfinite(out.reshape(-1)))[0]
        raise ConfigError(f"{name} must be finite, got {float(out.reshape(-1)[bad])!r} at flat index {bad}")
    return out


def integer_array(value, name: str, *, lo: int | None = None, hi: int | None = None,
                  shape: tuple | None = None) -> np.ndarray:
    """``value`` as an int64 array: integer dtype, or floats that are exact integers (never truncated)."""
    arr = np.asarray(value)
    _check_dtype(arr.dtype, name)
    if shape is not None and arr.shape != tuple(shape):
        raise ConfigError(f"{name} must have shape {tuple(shape)}, got {arr.shape}")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.round(arr)) if arr.size else np.zeros(0, bool)
        if np.any(bad):
            first = float(arr.reshape(-1)[np.flatnonzero(bad.reshape(-1))[0]])
            raise ConfigError(f"{name} must hold integers, got {first!r}")
        if arr.size and np.max(np.abs(arr)) > 2**62:
            raise ConfigError(f"{name} holds integers too large for int64")
    out = arr.astype(np.int64)
    rng = f"[{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"
    if out.size and ((lo is not None and out.min() < lo) or (hi is not None and out.max() > hi)):
        v = out.min() if lo is not None and out.min() < lo else out.max()
        raise ConfigError(f"{name} must hold integers in {rng}, got {int(v)}")
    return out


def check_budget(what: str, estimate: int | float, cap: int | float, hint: str) -> None:
    """Refuse work whose size ``estimate`` exceeds ``cap`` (before allocating); ``hint`` names the options."""
    if estimate > cap:
        raise ConfigError(f"{hint}: {what} would be {estimate:.3g}, more than the limit of {cap:.3g}")


def write_new_or_replace(path: Path, write, *, may_replace, option: str, binary: bool = True) -> None:
    """Write a command's output file atomically without replacing a file fedcheck may not replace.

    ``write(fh)`` fills a temporary file next to ``path`` (mode of a new file under the user's umask). The finished
    file then takes a free name with ``os.link``, which fails when the name exists: unlike a check of the path before
    the work and a rename after it, a file that someone created meanwhile is never replaced. An existing file is
    replaced (``os.replace``, atomic) only when ``may_replace(path)`` says so at that moment (a file fedcheck wrote, or
    ``--force``); else ConfigError naming ``option``, and nothing is written there.
    """
    import os
    import tempfile

    from reports.build import take_new_name

    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"newline": "", "encoding": "utf-8"})) as fh:
            write(fh)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # the mode the user's umask gives a new file, not mkstemp's 0600
        if take_new_name(tmp, path):
            return
        if not may_replace(path):
            raise ConfigError(f"argument {option}: {str(path)!r} appeared during the run and fedcheck did not write "
                              f"it; it was left as it is and nothing was written (add --force to replace it)")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name one file (an output must never be a command's own input, even with --force)."""
    import os

    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()
