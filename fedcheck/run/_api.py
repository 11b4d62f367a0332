"""What a ``run`` plug-in imports from the layer: its declarations (fields, sections, options, costs), the errors it
raises and the guarded readers of the files its configuration names.

The plug-ins import these from here, not from :mod:`fedcheck.run` (which loads the plug-ins by name), so that no
import cycle runs through the package; :mod:`fedcheck.run` re-exports them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fedcheck._errors import ConfigError, NotConverged
from fedcheck.run._budget import Cost
from fedcheck.run._output import Line, Plot, Row
from fedcheck.run._schema import Field, Schema, Section, Values, applies_when

__all__ = ["RUNS_SEED_OPTIONS", "ConfigError", "Cost", "Field", "Line", "NotConverged", "Option", "Plot", "Row",
           "RunSetup", "Schema", "Section", "Values", "applies_when", "check_mnist_layout", "read_npy", "read_npz",
           "read_table", "runs_seed_options"]


@dataclass(frozen=True, kw_only=True)
class Option:
    """A command-line option of a ``run`` sub-command.

    ``field``: the ``section.field`` it overrides (its default and range then come from the field); without one,
    its value is ``values.options[dest]`` (default ``default``). ``lo``: smallest integer; ``choices``: the
    allowed strings.
    """

    flag: str
    doc: str
    field: str | None = None
    default: Any = None
    lo: int | None = 1
    choices: tuple[str, ...] = ()
    metavar: str = "N"

    def __post_init__(self) -> None:
        if not self.flag.startswith("--"):
            raise ValueError(f"flag must start with '--', got {self.flag!r}")

    @property
    def dest(self) -> str:
        return self.flag[2:].replace("-", "_")


@dataclass(frozen=True, kw_only=True)
class RunSetup:
    """What every plug-in's setup holds (a plug-in's ``Setup`` extends it): the parsed values ``v`` and the run's
    ``iterations`` (or rounds), Monte-Carlo ``runs`` and root ``seed``."""

    v: Values
    iterations: int = 0
    runs: int = 1
    seed: int = 0

    def __post_init__(self) -> None:
        if self.runs < 1 or self.iterations < 0 or self.seed < 0:
            raise ValueError(f"runs must be >= 1, iterations and seed >= 0, got runs {self.runs}, iterations "
                             f"{self.iterations}, seed {self.seed}")


def runs_seed_options(*, runs_doc: str = "Monte-Carlo runs", seed_doc: str = "root seed") -> tuple[Option, Option]:
    """``--runs R`` (default 1) and ``--seed S`` (default 0), read from ``values.options["runs"]`` / ``["seed"]``."""
    return (Option(flag="--runs", default=1, doc=runs_doc),
            Option(flag="--seed", default=0, lo=0, metavar="S", doc=seed_doc))


#: The ``--runs``/``--seed`` options of most plug-ins (Monte-Carlo runs, root seed).
RUNS_SEED_OPTIONS = runs_seed_options()


def read_table(path: Path) -> dict:
    """The TOML document at ``path`` (guarded reader: regular, readable, bounded, UTF-8)."""
    try:  # Python >= 3.11
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    from fedcheck._files import read_config_text

    text = read_config_text(path, "CONFIG")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"CONFIG {str(path)!r} is not valid TOML: {' '.join(str(exc).split())}") from None


def _resolve(values: Values, key: str) -> Path:
    path = Path(values[key])
    return path if path.is_absolute() else Path(values.base_dir) / path


def read_npz(values: Values, key: str, *, bool_keys: tuple[str, ...] = (), require: tuple[str, ...] = (),
             require_text: str = "", allowed: tuple[str, ...] | None = None,
             integer_keys: tuple[str, ...] = ()) -> tuple[Path, dict]:
    """The arrays of the ``.npz`` named by field ``key`` (relative to the config; headers checked first).

    ``require``: the arrays it must hold (ConfigError naming the field, the file and the missing ones;
    ``require_text`` describes them, default their names). ``allowed``: the arrays it may hold (default: any); another
    array is refused, not ignored. ``integer_keys``: arrays of indices, which must hold integers (a float index such
    as 0.5 used to be truncated silently).
    """
    import numpy as np

    from fedcheck._files import load_npz

    path = _resolve(values, key)
    arrays = load_npz(path, key, bool_keys=bool_keys)
    missing = [k for k in require if k not in arrays]
    if missing:
        raise ConfigError(f"{key} {str(path)!r} must hold arrays {require_text or ', '.join(require)}; missing "
                          f"{', '.join(missing)}")
    extra = sorted(set(arrays) - set(allowed)) if allowed is not None else []
    if extra:
        raise ConfigError(f"{key} {str(path)!r}: array {extra[0]!r} is not part of the layout (allowed: "
                          f"{', '.join(allowed)})")
    for name in integer_keys:
        a = arrays.get(name)
        if a is not None and not np.issubdtype(a.dtype, np.integer) and not (
                np.issubdtype(a.dtype, np.floating) and np.all(np.isfinite(a)) and np.all(a == np.round(a))):
            raise ConfigError(f"{key} {str(path)!r}: array {name!r} must hold integer indices, got non-integral "
                              f"values")
    return path, arrays


def read_npy(values: Values, key: str) -> tuple[Path, Any]:
    """The array of the ``.npy`` named by field ``key`` (relative to the config; header checked first)."""
    from fedcheck._files import load_npy

    path = _resolve(values, key)
    return path, load_npy(path, key)


#: The arrays of an MNIST ``.npz`` in the Keras layout.
MNIST_KEYS = ("x_train", "y_train", "x_test", "y_test")


def check_mnist_layout(path: Path, arrays: dict, key: str) -> None:
    """ConfigError naming field ``key`` unless ``arrays`` (of the ``.npz`` at ``path``) are MNIST in the Keras layout:
    :data:`MNIST_KEYS`, real finite images ``(n, ...)`` with n >= 1 and one integer label 0..9 each."""
    from fedcheck._files import real_array

    missing = [k for k in MNIST_KEYS if k not in arrays]
    if missing:
        raise ConfigError(f"{key} {str(path)!r} must hold arrays {', '.join(MNIST_KEYS)}; missing {', '.join(missing)}")
    for split in ("train", "test"):
        x, y = arrays[f"x_{split}"], arrays[f"y_{split}"]
        real_array(x, f"{key} {str(path)!r} array 'x_{split}'")
        if x.ndim < 2 or y.reshape(-1).shape[0] != x.shape[0]:
            raise ConfigError(f"{key} {str(path)!r}: x_{split} must be (n, ...) images with one label each in "
                              f"y_{split}, got shapes {x.shape} and {y.shape}")
        if x.shape[0] == 0:
            raise ConfigError(f"{key} {str(path)!r}: x_{split} holds no image")
        labels = y.reshape(-1)
        if labels.dtype.kind not in "iu" and not (labels.dtype.kind == "f" and bool(
                (labels == labels.round()).all())):
            raise ConfigError(f"{key} {str(path)!r}: y_{split} must hold integer labels 0..9")
        if labels.size and (labels.min() < 0 or labels.max() > 9):
            raise ConfigError(f"{key} {str(path)!r}: y_{split} must hold labels in 0..9, got "
                              f"{float(labels.min()) if labels.min() < 0 else float(labels.max())!r}")
