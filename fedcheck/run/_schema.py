"""Configuration fields declared once: type, range, default, when they apply, and what they mean.

A ``fedcheck run`` plug-in declares its TOML sections as a :class:`Schema` of :class:`Section` s of
:class:`Field` s. :meth:`Schema.parse` then does every check a field needs, in declaration order, and returns
:class:`Values` (``values["section.field"]``):

* unknown sections and fields are refused, and so is a field given where it does not apply (``applies``, a
  predicate on the values parsed before it, described for people by ``when``);
* the type (booleans are not numbers), finiteness and range (``lo``/``hi``, which may depend on earlier fields),
  the choices, the length of a list and the shape of a nested list;
* defaults (a value or a function of the earlier values) and required fields.

Every refusal is a :class:`fedcheck._errors.ConfigError` whose message starts with the user's field
(``algorithm.rho must be a real > 0, got -1.0``) -- or with the command-line option that set it. The
validated records of ``reference_impl`` and ``theory`` raise ``ValueError`` naming *their* field; the
:meth:`Schema.blame` context turns those into the same one line naming the user's field.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from fedcheck._errors import ConfigError

__all__ = ["KINDS", "Field", "Schema", "Section", "Values", "applies_when", "blame_file", "clean_message"]

#: The kinds of value a field can hold (the TOML type in parentheses).
KINDS = {
    "int": "an integer",
    "real": "a real",
    "bool": "true or false",
    "str": "a string",
    "choice": "one of the listed strings",
    "reals": "a list of reals",
    "ints": "a list of integers",
    "matrix": "a nested list of reals",
    "pairs": "a list of [i, j] pairs of distinct integers >= 0",
    "table": "a table of named values",
    "tables": "an array of tables [[section.field]]",
}

Bound = float | int | Callable[["Values"], float] | None


def clean_message(text: object) -> str:
    """One line without numpy reprs: ``np.float64(-1.0)`` -> ``-1.0``."""
    text = re.sub(r"np\.(?:float|int|uint|bool_?)\w*\(([^()]*)\)", r"\1", str(text))
    text = re.sub(r"array\(([^()]*)\)", r"\1", text)
    return " ".join(text.split())


def applies_when(key: str, *values: Any) -> dict[str, Any]:
    """``applies`` and ``when`` of a field that applies only when field ``key`` is one of ``values``, to spread into a
    :class:`Field` or :class:`Section`: ``Field(..., **applies_when("data.source", "npz"))``.

    >>> applies_when("graph.generator", "chain", "dense")["when"]
    "graph.generator is 'chain' or 'dense'"
    """
    if not values:
        raise ValueError(f"values must be non-empty (the values of {key} where the field applies)")
    shown = [("true" if x else "false") if isinstance(x, bool) else repr(x) for x in values]
    when = f"{key} = {shown[0]}" if len(values) == 1 else f"{key} is " + " or ".join(shown)
    return {"applies": lambda v: v[key] in values, "when": when}


@contextlib.contextmanager
def blame_file(key: str, path: object):
    """Turn a ``ValueError`` raised inside (a reader's complaint about the file's content) into one line naming the
    field and its file: ``data.path 'd.npz': <message>``."""
    try:
        yield
    except ConfigError:
        raise
    except ValueError as exc:
        raise ConfigError(f"{key} {str(path)!r}: {clean_message(exc)}") from None


def _short(value: Any, limit: int = 80) -> str:
    text = clean_message(_toml_text(value))
    return text if len(text) <= limit else text[:limit] + "..."


def _toml_text(value: Any) -> str:
    """``value`` as the TOML the user wrote (``true``, ``[1.0, 2.0]``, ``{a = 1}``, a date-time in ISO form), not as
    a Python repr (``True``, ``datetime.datetime(...)``, ``{'a': 1}``, a numpy array's spacing)."""
    import datetime as _dt

    import numpy as np

    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        kind = ("date-time" if isinstance(value, _dt.datetime) else "date" if isinstance(value, _dt.date) else "time")
        return f"the {kind} {value.isoformat()}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_text(v) for v in value) + "]"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (np.integer, np.floating)):
        value = value.item()
    return repr(value)


@dataclass(frozen=True, kw_only=True)
class Field:
    """One configuration field.

    Parameters
    ----------
    name : str
        The TOML key.
    kind : str
        One of :data:`KINDS`.
    doc : str
        What it means, with its unit; the reference documentation is generated from it.
    default : object or callable
        The value when the field is absent (a function of the earlier :class:`Values` when it depends on them);
        ``None``: absent means "not set".
    lo, hi : number or callable, optional
        Range of an ``int``/``real`` field or of every entry of a list; a callable bound depends on earlier fields
        and is named by ``lo_text``/``hi_text`` (e.g. ``"instance.D"``).
    lo_open, hi_open : bool
        Whether the bound is excluded.
    choices : tuple of str
        The allowed strings of a ``choice`` field.
    length : int or callable, optional
        Required length of a list (``reals``/``ints``); ``length_text`` names it.
    shape : callable, optional
        Required shape of a ``matrix`` (a function of earlier values); ``shape_text`` names it.
    applies : callable, optional
        Whether the field applies, from the earlier values; a field given where it does not apply is refused.
    when : str
        ``applies`` in words (``"data.source = 'npz'"``), for messages and docs.
    required : bool or callable
        Whether the field must be given where it applies.
    option : str, optional
        The command-line option that overrides it (``"--iterations"``).
    sub : tuple of Field
        The fields of each table of a ``tables`` field.
    """

    name: str
    kind: str
    doc: str
    default: Any = None
    lo: Bound = None
    hi: Bound = None
    lo_open: bool = False
    hi_open: bool = False
    lo_text: str = ""
    hi_text: str = ""
    choices: tuple[str, ...] = ()
    length: int | Callable[[Values], int] | None = None
    length_text: str = ""
    shape: Callable[[Values], tuple[int, ...]] | None = None
    shape_text: str = ""
    applies: Callable[[Values], bool] | None = None
    when: str = ""
    required: bool | Callable[[Values], bool] = False
    option: str | None = None
    sub: tuple[Field, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if not self.name or not self.doc:
            raise ValueError(f"name and doc must be non-empty, got name {self.name!r}")
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"choices must be non-empty for the choice field {self.name!r}")
        if (self.applies is None) != (not self.when):
            raise ValueError(f"applies and when must be given together (field {self.name!r})")

    # -- descriptions ---------------------------------------------------------------------------------------
    def _bound(self, bound: Bound, text: str, values: Values | None) -> tuple[float | None, str]:
        if bound is None:
            return None, ""
        if callable(bound):
            value = bound(values) if values is not None else None
            shown = text if value is None else f"{text} = {_num(value)}"
            return value, shown
        return bound, _num(bound)

    def allowed(self, values: Values | None = None) -> str:
        """The allowed values in words (``"an integer in [1, instance.D = 5]"``)."""
        if self.kind == "choice":
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind in ("bool", "str", "pairs", "table", "tables"):
            return KINDS[self.kind]
        noun = {"int": "an integer", "real": "a real", "reals": "a list of reals", "ints": "a list of integers",
                "matrix": "a nested list of reals"}[self.kind]
        if self.kind in ("reals", "ints"):
            n = self.length(values) if callable(self.length) and values is not None else self.length
            if callable(n) or (n is None and self.length_text):
                noun = f"a list of {self.length_text} {noun[len('a list of '):]}"
            elif n is not None:
                named = f"{self.length_text} = " if self.length_text else ""
                noun = f"a list of {named}{n} " + noun[len("a list of "):]
        if self.kind == "matrix" and self.shape_text:
            noun = f"a {self.shape_text} nested list of reals"
        rng = self.range_text(values)
        if not rng:
            return noun
        return f"{noun} {'each ' if self.kind in ('reals', 'ints') else ''}{rng}".replace("  ", " ")

    def range_text(self, values: Values | None = None) -> str:
        lo, lo_s = self._bound(self.lo, self.lo_text, values)
        hi, hi_s = self._bound(self.hi, self.hi_text, values)
        if self.lo is None and self.hi is None:
            return ""
        if self.hi is None:
            return f"{'>' if self.lo_open else '>='} {lo_s}"
        if self.lo is None:
            return f"{'<' if self.hi_open else '<='} {hi_s}"
        return f"in {'(' if self.lo_open else '['}{lo_s}, {hi_s}{')' if self.hi_open else ']'}"

    # -- checks ---------------------------------------------------------------------------------------------
    def _in_range(self, x: float, values: Values) -> bool:
        lo, _ = self._bound(self.lo, self.lo_text, values)
        hi, _ = self._bound(self.hi, self.hi_text, values)
        if lo is not None and (x < lo or (self.lo_open and x == lo)):
            return False
        return not (hi is not None and (x > hi or (self.hi_open and x == hi)))

    def check(self, key: str, value: Any, values: Values) -> Any:
        """``value`` converted and checked; ConfigError naming ``key`` otherwise."""
        def bad() -> ConfigError:
            return ConfigError(f"{key} must be {self.allowed(values)}, got {_short(value)}")

        kind = self.kind
        if kind == "bool":
            if not isinstance(value, bool):
                raise bad()
            return value
        if kind in ("str", "choice"):
            if not isinstance(value, str) or (kind == "choice" and value not in self.choices):
                raise bad()
            return value
        if kind == "int":
            if isinstance(value, bool) or not isinstance(value, int) or not self._in_range(value, values):
                raise bad()
            return value
        if kind == "real":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise bad()
            try:
                x = float(value)
            except OverflowError:
                raise bad() from None
            if not math.isfinite(x) or not self._in_range(x, values):
                raise bad()
            return x
        if kind in ("reals", "ints"):
            if not isinstance(value, list) or not value:
                raise bad()
            out = []
            for i, v in enumerate(value):
                ok_type = (not isinstance(v, bool) and (isinstance(v, int) if kind == "ints" else
                                                        isinstance(v, (int, float))))
                try:
                    x = v if kind == "ints" or not ok_type else float(v)
                except OverflowError:
                    ok_type = False
                if not ok_type or (kind == "reals" and not math.isfinite(x)) or not self._in_range(x, values):
                    raise ConfigError(f"{key}[{i}] must be {self.allowed(values)}, got {_short(v)}")
                out.append(x)
            n = self.length(values) if callable(self.length) else self.length
            if n is not None and len(out) != n:
                raise ConfigError(f"{key} must be {self.allowed(values)}, got {len(out)} entries")
            return out
        if kind == "matrix":
            import numpy as np

            def flat(v, depth=0):
                if isinstance(v, list):
                    return all(flat(u, depth + 1) for u in v) and depth < 8
                return not isinstance(v, bool) and isinstance(v, (int, float))

            if not isinstance(value, list) or not value or not flat(value):
                raise bad()
            try:
                arr = np.array(value, dtype=np.float64)
            except (ValueError, OverflowError):
                raise ConfigError(f"{key} must be {self.allowed(values)} (rows of equal length), got "
                                  f"{_short(value)}") from None
            if not np.all(np.isfinite(arr)):
                raise ConfigError(f"{key} must be finite, got {_short(value)}")
            if self.lo is not None or self.hi is not None:
                bad_at = [i for i, x in enumerate(arr.reshape(-1)) if not self._in_range(float(x), values)]
                if bad_at:
                    raise ConfigError(f"{key} entries must be {self.range_text(values)}, got "
                                      f"{float(arr.reshape(-1)[bad_at[0]])!r}")
            if self.shape is not None and arr.shape != tuple(self.shape(values)):
                raise ConfigError(f"{key} must be {self.allowed(values)} = shape {tuple(self.shape(values))}, got "
                                  f"shape {arr.shape}")
            return arr
        if kind == "pairs":
            if (not isinstance(value, list) or not value or not all(
                    isinstance(e, list) and len(e) == 2 and all(isinstance(x, int) and not isinstance(x, bool)
                                                                and x >= 0 for x in e) and e[0] != e[1]
                    for e in value)):
                raise bad()
            seen: dict[frozenset, int] = {}
            for i, e in enumerate(value):   # an undirected edge given twice was merged silently
                first = seen.setdefault(frozenset(e), i)
                if first != i:
                    raise ConfigError(f"{key}[{i}] = {_toml_text(e)} repeats {key}[{first}] = "
                                      f"{_toml_text(value[first])} (the pairs are undirected edges: give each once)")
            return [tuple(e) for e in value]
        if kind == "table":
            if not isinstance(value, dict):
                raise bad()
            return dict(value)
        # tables: an array of tables with the sub-fields
        if not isinstance(value, list) or not value or not all(isinstance(t, dict) for t in value):
            raise bad()
        out = []
        for i, body in enumerate(value):
            name = f"{key}[{i}]"
            known = {f.name for f in self.sub}
            unknown = sorted(set(body) - known)
            if unknown:
                raise ConfigError(f"{name}.{unknown[0]} is not a field (allowed: {', '.join(sorted(known))})")
            inner = Values()
            for sub in self.sub:
                sub_key = f"{name}.{sub.name}"
                applies = sub.applies is None or sub.applies(inner)
                given = sub.name in body
                if given and not applies:
                    raise ConfigError(f"{sub_key} does not apply here (it applies only when {sub.when})")
                if given:
                    inner.set(sub.name, sub.check(sub_key, body[sub.name], inner), given=True)
                elif applies and (sub.required(inner) if callable(sub.required) else sub.required):
                    raise ConfigError(f"{sub_key} must be given ({sub.allowed(inner)})")
                else:
                    inner.set(sub.name, (sub.default(inner) if callable(sub.default) else sub.default)
                              if applies else None)
            out.append(inner)
        return out


def _num(x) -> str:
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:g}" if isinstance(x, float) else str(x)


class Values(Mapping):
    """The parsed fields, ``values["section.field"]``; :meth:`given` tells what the user wrote."""

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self._given: dict[str, str] = {}
        #: directory of the configuration file (relative paths are resolved against it)
        self.base_dir = "."
        #: values of the command-line options that override no field (option dest -> value)
        self.options: dict[str, Any] = {}
        self._table: Mapping[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def set(self, key: str, value: Any, *, given: bool = False, label: str = "") -> None:
        self._data[key] = value
        if given:
            self._given[key] = label or key
        else:
            self._given.pop(key, None)

    def raw(self, key: str, default: Any = None) -> Any:
        """The unchecked value of a field parsed *later* (for ``applies`` of an earlier section), or ``default``."""
        sec, name = key.split(".", 1)
        body = self._table.get(sec, {})
        return body.get(name, default) if isinstance(body, dict) else default

    def section(self, name: str, *, drop_none: bool = False) -> dict[str, Any]:
        """The fields of section ``name`` by their bare names (``{"rho": 1.0, ...}``); ``drop_none``: without those
        that are not set."""
        prefix = name + "."
        return {k[len(prefix):]: x for k, x in self._data.items()
                if k.startswith(prefix) and not (drop_none and x is None)}

    def given(self, key: str) -> bool:
        """Whether the user set ``key`` (in the file or by its option)."""
        return key in self._given

    def label(self, key: str) -> str:
        """How the user named ``key``: the field, or the option that set it (``--iterations``)."""
        return self._given.get(key, key)


@dataclass(frozen=True, kw_only=True)
class Section:
    """One TOML section ``[name]`` and its fields (``applies``/``when`` for the whole section)."""

    name: str
    doc: str
    fields: tuple[Field, ...]
    applies: Callable[[Values], bool] | None = None
    when: str = ""

    def __post_init__(self) -> None:
        names = [f.name for f in self.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"fields of section {self.name!r} must have distinct names, got {names}")


@dataclass(frozen=True, kw_only=True)
class Schema:
    """The sections of one configuration, parsed in order; ``renames`` maps a record's field to the user's."""

    sections: tuple[Section, ...]
    renames: Mapping[str, str] = field(default_factory=dict)

    def section(self, name: str) -> Section:
        return next(s for s in self.sections if s.name == name)

    def keys(self) -> list[str]:
        return [f"{s.name}.{f.name}" for s in self.sections for f in s.fields]

    def field(self, key: str) -> Field:
        sec, name = key.split(".", 1)
        return next(f for f in self.section(sec).fields if f.name == name)

    def parse(self, table: Mapping[str, Any], options: Mapping[str, tuple[str, Any]] | None = None,
              plain: Mapping[str, Any] | None = None) -> Values:
        """Check ``table`` (a parsed TOML document) against the schema.

        ``options``: ``{"section.field": (option, value)}`` for the command-line options given, which override
        the file (``value`` already checked by the option parser; the range is checked again here). ``plain``:
        the values of the options that override no field (``values.options``; ``applies`` may read them).
        """
        options = dict(options or {})
        known = {s.name: s for s in self.sections}
        for name, body in table.items():
            if name not in known:
                raise ConfigError(f"{name} is not a section (allowed: {', '.join(known)})")
            if not isinstance(body, dict):
                raise ConfigError(f"{name} must be a table [{name}], got {_short(body)}")
            fields = {f.name for f in known[name].fields}
            unknown = sorted(set(body) - fields)
            if unknown:
                raise ConfigError(f"{name}.{unknown[0]} is not a field (allowed: {', '.join(sorted(fields))})")
        values = Values()
        values.options = dict(plain or {})
        values._table = table
        for sec in self.sections:
            body = table.get(sec.name, {})
            sec_applies = sec.applies is None or sec.applies(values)
            if sec.name in table and not sec_applies:
                raise ConfigError(f"{sec.name}: the [{sec.name}] section does not apply here (it applies only when "
                                  f"{sec.when})")
            for f in sec.fields:
                key = f"{sec.name}.{f.name}"
                applies = sec_applies and (f.applies is None or f.applies(values))
                if key in options:
                    if f.name in body and applies:  # the file's value must be valid too
                        f.check(key, body[f.name], values)
                    label, value = options[key]
                    if not applies:
                        raise ConfigError(f"argument {label}: does not apply here (it applies only when {f.when})")
                    try:
                        values.set(key, f.check(key, value, values), given=True, label=f"argument {label}")
                    except ConfigError as exc:
                        raise ConfigError(str(exc).replace(key, f"argument {label}", 1)) from None
                    continue
                if f.name in body:
                    if not applies:
                        raise ConfigError(f"{key} does not apply here (it applies only when "
                                          f"{f.when if sec_applies else sec.when})")
                    values.set(key, f.check(key, body[f.name], values), given=True)
                    continue
                if applies and (f.required(values) if callable(f.required) else f.required):
                    raise ConfigError(f"{key} must be given ({f.allowed(values)})")
                default = (f.default(values) if callable(f.default) else f.default) if applies else None
                values.set(key, default)
        return values

    # -- errors of the validated records ----------------------------------------------------------------
    def user_field(self, name: str, section: str | None = None, renames: Mapping[str, str] | None = None) -> str | None:
        """The user's ``section.field`` for a record's field ``name`` (None when there is none)."""
        if renames and name in renames:
            return renames[name]
        if name in self.renames:
            return self.renames[name]
        keys = self.keys()
        if section is not None and f"{section}.{name}" in keys:
            return f"{section}.{name}"
        matches = [k for k in keys if k.split(".", 1)[1] == name]
        return matches[0] if len(matches) == 1 else None

    def translate(self, exc: BaseException, section: str | None = None,
                  renames: Mapping[str, str] | None = None) -> ConfigError:
        """A record's ``ValueError`` as one line naming the user's field."""
        if isinstance(exc, ConfigError):
            return exc
        msg = clean_message(exc)
        match = re.match(r"([A-Za-z_]\w*)(\[[^\]]*\])?", msg)
        if match:
            key = self.user_field(match.group(1), section, renames)
            if key is not None:
                return ConfigError(f"{key}{match.group(2) or ''}{msg[match.end():]}")
        return ConfigError(f"{section or 'CONFIG'}: {msg}")

    @contextlib.contextmanager
    def blame(self, section: str | None = None, **renames: str):
        """Turn a record's ``ValueError``/``TypeError`` raised inside into a ConfigError naming the user's field.

        ``section``: where an ambiguous or unknown name belongs; ``renames``: record field -> ``section.field``.
        """
        try:
            yield
        except ConfigError:
            raise
        except (ValueError, TypeError) as exc:
            raise self.translate(exc, section, renames) from None
