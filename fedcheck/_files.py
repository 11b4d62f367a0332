"""Data and config files of the CLI: one validation layer, every error one line naming the file.

Every file the CLI reads goes through :func:`read_config_text` (TOML), :func:`load_npy` or
:func:`load_npz`. They refuse, before reading or allocating anything large:

* a missing path, a directory, or anything that is not a regular file (a FIFO, ``/dev/zero``);
* an unreadable file, a text file that is not UTF-8 or holds NUL bytes (binary);
* for ``.npy``/``.npz``: a file that is not one (an ``.npz`` where an ``.npy`` is expected, a corrupt or
  empty zip), a header whose shape claims more bytes than the file holds or than
  :data:`MAX_ARRAY_BYTES`, and every dtype but real floating and integer (complex, bool, object,
  strings, structured) -- the data are read with ``allow_pickle=False``.

:func:`real_array` and :func:`integer_array` then check dtype, finiteness and shape of one array, and
:func:`check_budget` refuses a computation whose size estimate exceeds a documented cap, with the
estimate in the message. All errors are :class:`FileError` / :class:`fedcheck._config.ConfigError`
(``ValueError``), which the CLI prints as one line with exit status 2.
"""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

import numpy as np

from fedcheck._errors import ConfigError

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
]

#: Largest TOML configuration read (bytes): configs are small; this stops ``/dev/zero``-like inputs.
MAX_CONFIG_BYTES = 16 * 2**20
#: Largest single array read from an ``.npy``/``.npz`` (bytes, after decompression).
MAX_ARRAY_BYTES = 2**30
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
    path = Path(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise FileError(f"{_label(path, field)} does not exist") from None
    except PermissionError:
        raise FileError(f"{_label(path, field)} cannot be read (permission denied)") from None
    except OSError as exc:
        raise FileError(f"{_label(path, field)} cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise FileError(f"{_label(path, field)} is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise FileError(f"{_label(path, field)} is not a regular file (a FIFO, device or socket)")
    return path


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
        raise FileError(f"{_label(Path(path), field)} is not UTF-8 text (byte {exc.start}: "
                        f"{data[exc.start:exc.start + 1]!r})") from None


def _check_dtype(dtype: np.dtype, name: str, *, bool_ok: bool = False) -> None:
    if dtype.names is not None or dtype.kind == "V":
        raise FileError(f"{name} holds a structured array (dtype {dtype}); it must be a plain real array")
    if dtype.kind == "c":
        raise FileError(f"{name} holds complex numbers (dtype {dtype}); it must be real")
    if dtype.kind == "b" and not bool_ok:
        raise FileError(f"{name} holds booleans (dtype {dtype}); it must hold real numbers")
    if dtype.kind == "O":
        raise FileError(f"{name} holds Python objects (dtype object); it must be a plain real array")
    if dtype.kind not in "iufb":
        raise FileError(f"{name} holds dtype {dtype}; it must hold real floating or integer numbers")


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
        raise FileError(f"{name} is not a valid .npy array ({' '.join(str(exc).split())[:120]})") from None
    _check_dtype(dtype, name, bool_ok=bool_ok)
    try:
        available -= fh.tell()  # the data follow the header
    except (OSError, AttributeError, ValueError):
        pass
    count = 1
    for n in shape:
        count *= int(n)
    nbytes = count * dtype.itemsize
    if nbytes > MAX_ARRAY_BYTES:
        raise FileError(f"{name}: its header claims shape {tuple(shape)} ({nbytes} bytes), more than the limit of "
                        f"{MAX_ARRAY_BYTES} bytes")
    if nbytes > available:
        raise FileError(f"{name}: its header claims shape {tuple(shape)} ({nbytes} bytes) but the file holds only "
                        f"{max(available, 0)} bytes of data (truncated, or a header claiming a huge shape)")
    try:
        data = fh.read(nbytes) if count else b""
    except (ValueError, OSError, EOFError) as exc:
        raise FileError(f"{name} could not be read ({' '.join(str(exc).split())[:120]})") from None
    if len(data) != nbytes:
        raise FileError(f"{name}: its header claims {nbytes} bytes of data but the file holds only {len(data)} "
                        f"(truncated or corrupt)")
    arr = np.frombuffer(data, dtype=dtype, count=count).reshape(shape, order="F" if fortran else "C")
    return arr.copy()


def load_npy(path, field: str) -> np.ndarray:
    """One array from an ``.npy`` file named by config field ``field`` (header checked before reading)."""
    path = regular_file(path, field)
    name = _label(path, field)
    try:
        with open(path, "rb") as fh:
            head = fh.read(6)
            if head.startswith(b"PK"):
                raise FileError(f"{name} is an .npz (zip) archive; {field or 'it'} must name an .npy file")
            if head != b"\x93NUMPY":
                raise FileError(f"{name} is not an .npy file (no .npy header)")
            fh.seek(0)
            size = path.stat().st_size
            arr = _read_array(fh, name, size)
    except PermissionError:
        raise FileError(f"{name} cannot be read (permission denied)") from None
    except OSError as exc:
        raise FileError(f"{name} cannot be read ({exc.strerror or exc})") from None
    return arr


def load_npz(path, field: str, *, bool_keys: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` file named by ``field``: ``{key: array}`` (headers checked before reading).

    Boolean arrays are refused except under the keys ``bool_keys`` (e.g. a 0/1 adjacency matrix).
    """
    path = regular_file(path, field)
    name = _label(path, field)
    out: dict[str, np.ndarray] = {}
    try:
        with zipfile.ZipFile(path) as zf:
            members = zf.infolist()
            total = sum(info.file_size for info in members)
            if total > 4 * MAX_ARRAY_BYTES:
                raise FileError(f"{name} expands to {total} bytes, more than the limit of {4 * MAX_ARRAY_BYTES} bytes")
            for info in members:
                if not info.filename.endswith(".npy"):
                    raise FileError(f"{name} holds {info.filename!r}, which is not an .npy array")
                key = info.filename[:-4]
                with zf.open(info) as fh:
                    out[key] = _read_array(fh, f"{name} array {key!r}", info.file_size, bool_ok=key in bool_keys)
    except zipfile.BadZipFile:
        raise FileError(f"{name} is not an .npz file (not a valid zip archive)") from None
    except PermissionError:
        raise FileError(f"{name} cannot be read (permission denied)") from None
    except (OSError, EOFError, zipfile.LargeZipFile, NotImplementedError) as exc:
        raise FileError(f"{name} could not be read ({' '.join(str(exc).split())[:120]})") from None
    if not out:
        raise FileError(f"{name} holds no arrays")
    return out


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
