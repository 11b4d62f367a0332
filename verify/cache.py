"""Results cached by what determines them: the claim, the profile, the root seed and the code it runs.

A claim's *code digest* is the SHA-256 of the source of its check's module and of every fedcheck module that
module imports, transitively (``theory``, ``reference_impl``, ``verify``; found by reading the import statements),
together with the versions of the numerical libraries. Editing one claim's module, or a module only it uses,
re-runs that claim alone; editing a shared module (``verify/records.py``) re-runs all that import it.

Entries are pickled :class:`~verify.records.CheckResult` records under one directory that fedcheck owns (default
``.fedcheck-cache`` in the working directory, ``FEDCHECK_CACHE_DIR`` to move it), written to a temporary name and
renamed. Errors are never cached. A corrupt or unreadable entry is a miss.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import json
import os
import pickle
import sys
import tempfile
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

from verify.records import CheckResult, Claim, Verdict

__all__ = ["CACHE_ENV", "ResultCache", "code_digest", "default_cache_dir"]

#: Environment variable naming the cache directory.
CACHE_ENV = "FEDCHECK_CACHE_DIR"
_PACKAGES = ("theory", "reference_impl", "verify")
_LIBRARIES = ("numpy", "scipy", "cvxpy", "networkx", "dp-accounting", "scikit-learn", "clarabel")
#: Bump when the pickled record layout changes incompatibly.
_FORMAT = 1


def default_cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or ".fedcheck-cache")


@functools.cache
def _module_file(name: str) -> str | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and spec.origin and spec.origin.endswith(".py") else None


@functools.cache
def _imports(name: str) -> tuple[str, ...]:
    """The fedcheck modules ``name`` imports (absolute and relative), with their parent packages."""
    path = _module_file(name)
    if path is None:
        return ()
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        for target in targets:
            if target.split(".")[0] in _PACKAGES:
                pieces = target.split(".")
                found.update(".".join(pieces[:i]) for i in range(1, len(pieces) + 1))
    return tuple(sorted(m for m in found if _module_file(m) is not None))


def _closure(name: str) -> list[str]:
    seen, stack = set(), [name]
    while stack:
        module = stack.pop()
        if module in seen:
            continue
        seen.add(module)
        stack.extend(_imports(module))
    return sorted(seen)


@functools.cache
def _libraries() -> str:
    versions = []
    for lib in _LIBRARIES:
        try:
            versions.append(f"{lib}={metadata.version(lib)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{lib}=absent")
    return ";".join(versions) + f";python={sys.version_info[:3]}"


def code_digest(claim: Claim) -> str:
    """SHA-256 of the claim's check module, its transitive fedcheck imports and the library versions."""
    h = hashlib.sha256(f"format={_FORMAT};{_libraries()}".encode())
    for module in _closure(claim.check.__module__):
        h.update(module.encode() + b"\0" + Path(_module_file(module)).read_bytes() + b"\0")
    return h.hexdigest()


class ResultCache:
    """``get(claim, profile, seed)`` / ``put(...)`` of check results, and the last runtime of every claim."""

    def __init__(self, directory: Path | str):
        self.directory = Path(directory)

    def _key(self, claim: Claim, profile: str, seed: int, data: Mapping[str, str] | None) -> str:
        from verify.data_files import fingerprint

        files = "".join(f"|{name}={fingerprint(data[name])}" for name in claim.data_files if name in (data or {}))
        return hashlib.sha256(f"{claim.id}|{profile}|{seed}|{code_digest(claim)}{files}".encode()).hexdigest()[:32]

    def _path(self, claim: Claim, profile: str, seed: int, data: Mapping[str, str] | None) -> Path:
        return self.directory / f"{claim.id}.{profile}.{self._key(claim, profile, seed, data)}.pkl"

    def get(self, claim: Claim, profile: str, seed: int, data: Mapping[str, str] | None = None) -> CheckResult | None:
        """The stored result, if the claim's code (and the data files it reads, ``data``: name -> path) match."""
        path = self._path(claim, profile, seed, data)
        try:
            with path.open("rb") as fh:
                result = pickle.load(fh)
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError, ValueError):
            return None
        return result if isinstance(result, CheckResult) and result.claim_id == claim.id else None

    def put(self, claim: Claim, profile: str, seed: int, result: CheckResult,
            data: Mapping[str, str] | None = None) -> None:
        if result.verdict is Verdict.ERROR:
            return
        self._write(self._path(claim, profile, seed, data), pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
        times = self.runtimes(profile)
        times[claim.id] = float(result.runtime_s if result.cpu_s is None else result.cpu_s)
        self._write(self.directory / f"runtimes.{profile}.json", json.dumps(times, sort_keys=True).encode())

    def runtimes(self, profile: str) -> dict[str, float]:
        """The last measured cost (s) of every claim at ``profile``: its CPU time, or its runtime where no CPU time
        was measured (for scheduling the longest first; wall time would count waiting for busy workers)."""
        try:
            data = json.loads((self.directory / f"runtimes.{profile}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def _write(self, path: Path, payload: bytes) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=path.suffix)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(payload)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
