"""Build the report directory: index.html, results.json and figures/*.png.

Output safety: :func:`prepare_out_dir` checks the directory before any check runs (it exists or can be
created, is writable, and holds no ``index.html``/``results.json`` that fedcheck did not write).
:func:`build_report` writes every file to a temporary name in the same directory and renames it into
place (an interrupted write leaves the previous report intact), records what it wrote in
:data:`MANIFEST`, and deletes only figures that an earlier fedcheck run listed there -- never a file it
did not write.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from reports.figures import display_size, figure_digest, render_figure
from reports.html import render_html
from verify.records import CheckResult, Claim, FigureSpec

__all__ = ["DEFAULT_OUT_DIR", "MANIFEST", "SCHEMA", "OutputError", "build_report", "prepare_out_dir",
           "results_document", "take_new_name"]

DEFAULT_OUT_DIR = Path("reports") / "out"
#: Identifier of the results.json layout documented in README.md.
SCHEMA = "fedcheck.results/1"
#: The list of files fedcheck wrote in a report directory (relative paths); only these are ever replaced
#: or deleted.
MANIFEST = ".fedcheck-manifest.json"
_OWN_TOP = ("results.json", "index.html")


class OutputError(ValueError):
    """The output directory cannot be used; the message names it."""


def _owned(out_dir: Path) -> set[str]:
    """Relative paths fedcheck wrote in ``out_dir``: its manifest, else a legacy results.json's own list."""
    manifest = out_dir / MANIFEST
    if manifest.is_file():
        try:
            files = json.loads(manifest.read_text(encoding="utf-8"))["files"]
            return {f for f in files if isinstance(f, str)}
        except (OSError, ValueError, KeyError, TypeError):
            return set()
    legacy = out_dir / "results.json"
    if legacy.is_file():  # a report written before the manifest existed: trust only its own schema
        try:
            doc = json.loads(legacy.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return set()
        if isinstance(doc, dict) and doc.get("schema") == SCHEMA:
            figures = {rel for r in doc.get("results", []) if isinstance(r, dict)
                       for rel in (r.get("figures") or []) if isinstance(rel, str) and rel.startswith("figures/")}
            return set(_OWN_TOP) | figures
    return set()


def prepare_out_dir(out_dir) -> Path:
    """Create ``out_dir`` if needed and check it can take a report, before any work is done.

    Raises :class:`OutputError` when it is a file, cannot be created or written, or holds an
    ``index.html``, ``results.json`` or ``figures`` entry that fedcheck did not write.
    """
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputError(f"{str(out_dir)!r} exists and is not a directory")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".fedcheck-probe-", dir=out_dir)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputError(f"{str(out_dir)!r} is not a writable directory ({exc.strerror or exc})") from None
    owned = _owned(out_dir)
    for name in _OWN_TOP:
        path = out_dir / name
        if (path.exists() or path.is_symlink()) and (name not in owned or not path.is_file()):
            raise OutputError(f"{str(out_dir)!r} already holds {name}, which fedcheck did not write; "
                              f"choose another directory or move it")
    figures = out_dir / "figures"
    if figures.exists() and not figures.is_dir():
        raise OutputError(f"{str(figures)!r} exists and is not a directory")
    if figures.is_dir():  # figures/<claim>__<name>.png is fedcheck's name space: refuse to take over a user's file
        for path in sorted(figures.iterdir()):
            rel = f"figures/{path.name}"
            if "__" in path.name and path.name.endswith(".png") and not path.name.startswith(".") and rel not in owned:
                raise OutputError(f"{str(path)!r} has the name of a fedcheck figure but fedcheck did not write it; "
                                  f"move it or choose another directory")
    return out_dir


def _umask_mode() -> int:
    """The mode a new file gets from the user's umask (0644 under 022): mkstemp's 0600 must not survive the rename."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _atomic_write_text(path: Path, text: str, temporaries: list[Path]) -> Path:
    """Write ``text`` to a temporary file next to ``path``; returns it (renamed later by the caller)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    temporaries.append(Path(tmp))
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.chmod(tmp, _umask_mode())
    return Path(tmp)


def _version() -> str:
    try:
        return metadata.version("fedcheck")
    except metadata.PackageNotFoundError:
        return "unknown"


def _figure_file(claim_id: str, name: str) -> str:
    """Unique per (claim, figure): claim ids are unique and figure names unique within a result."""
    return f"figures/{claim_id}__{name}.png"


def results_document(
    claims: Sequence[Claim], results: Sequence[CheckResult], meta: Mapping[str, Any],
    figure_errors: Mapping[str, Mapping[str, str]] | None = None,
    figure_paths: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """The results.json document (figure paths are relative to the report directory; a figure named in
    ``figure_errors[claim_id]`` was not drawn: listed under ``figure_errors``, not among the result's figures;
    ``figure_paths[claim_id][name]`` where a figure was written, by default ``figures/<claim_id>__<name>.png`` --
    one file may serve several claims whose figures are identical)."""
    by_id = {c.id: c for c in claims}
    failed = figure_errors or {}
    paths = figure_paths or {}
    return {
        "data": {},   # --data NAME=PATH files (path, sha256); {} when none was given
        **meta,
        "schema": SCHEMA,
        "fedcheck_version": _version(),
        "claims": [by_id[r.claim_id].to_json() for r in results],
        "results": [r.to_json({f.name: paths.get(r.claim_id, {}).get(f.name, _figure_file(r.claim_id, f.name))
                               for f in r.figures if f.name not in failed.get(r.claim_id, {})}) for r in results],
        "figure_errors": [{"claim_id": c, "figure": f, "error": e} for c, errors in failed.items()
                          for f, e in errors.items()],
    }


def build_report(
    claims: Sequence[Claim],
    results: Sequence[CheckResult],
    out_dir: Path,
    meta: Mapping[str, Any],
) -> dict[str, Any]:
    """Write ``out_dir/index.html``, ``out_dir/results.json`` and ``out_dir/figures/*.png``.

    Returns the results document. ``meta`` (profile, seed, executor, ...) is copied into both.
    """
    out_dir = prepare_out_dir(out_dir)
    previous = _owned(out_dir)
    meta = {"generated_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), **meta}
    temporaries: list[Path] = []
    renames: list[tuple[Path, Path]] = []  # (temporary, final), applied only once everything is written
    try:
        # A figure that cannot be drawn is named in results.json ("figure_errors") and on its card; it never
        # loses the results or the other figures.
        # Identical figures (same digest: what the image shows) are drawn once, under the name of the first claim
        # that has one, and linked from every card that shows it.
        figure_paths: dict[str, dict[str, str]] = {}
        figure_errors: dict[str, dict[str, str]] = {}
        figure_info: dict[str, dict[str, Any]] = {}
        drawn: dict[str, str | Exception] = {}  # digest -> relative path, or the error that stopped it
        for result in results:
            for spec in result.figures:
                digest = figure_digest(spec)
                if digest not in drawn:
                    drawn[digest] = _draw(spec, _figure_file(result.claim_id, spec.name), out_dir, temporaries,
                                          renames, figure_info)
                outcome = drawn[digest]
                if isinstance(outcome, Exception):
                    figure_errors.setdefault(result.claim_id, {})[spec.name] = f"{type(outcome).__name__}: {outcome}"
                    continue
                figure_paths.setdefault(result.claim_id, {})[spec.name] = outcome
                if result.claim_id not in figure_info[outcome]["claims"]:
                    figure_info[outcome]["claims"].append(result.claim_id)
        document = results_document(claims, results, meta, figure_errors, figure_paths)
        text = json.dumps(document, indent=2, allow_nan=False) + "\n"
        renames.insert(0, (_atomic_write_text(out_dir / "results.json", text, temporaries), out_dir / "results.json"))
        html = render_html(claims, results, figure_paths, meta, figure_errors=figure_errors, figure_info=figure_info)
        renames.append((_atomic_write_text(out_dir / "index.html", html, temporaries), out_dir / "index.html"))
        written = sorted({final.relative_to(out_dir).as_posix() for _, final in renames})
        # The manifest first lists old and new files, so an interruption during the renames loses no ownership.
        _write_manifest(out_dir, sorted(previous | set(written)), temporaries)
        # A name fedcheck did not own when it began is taken first, with a hard link, which fails if a file appeared
        # there meanwhile (prepare_out_dir checked before the figures were drawn): a user's file is never replaced,
        # and on such a failure the names just taken are given back, so the previous report stays as it was. Then
        # the owned files are replaced in order, results.json, the figures, index.html: index.html never points at a
        # missing figure.
        owned = [(tmp, final) for tmp, final in renames if final.relative_to(out_dir).as_posix() in previous]
        taken: list[Path] = []
        try:
            for tmp, final in renames:
                if (tmp, final) not in owned:
                    _take_name(tmp, final)
                    taken.append(final)
        except OutputError:
            for final in taken:
                final.unlink()
            _write_manifest(out_dir, sorted(previous), temporaries)   # the user's file is not fedcheck's
            raise
        for tmp, final in owned:
            os.replace(tmp, final)
    finally:
        for tmp in temporaries:
            try:
                tmp.unlink()
            except FileNotFoundError:
                pass
    for rel in sorted(previous - set(written)):  # figures an earlier fedcheck run wrote and no longer needs
        path = out_dir / rel
        if rel.startswith("figures/") and "/" not in rel[len("figures/"):] and path.is_file() and not path.is_symlink():
            path.unlink()
    _write_manifest(out_dir, written, [])
    return document


def take_new_name(tmp, final) -> bool:
    """Give the finished file ``tmp`` the name ``final`` unless a file is there: True when it took the name, False
    when the name was taken (nothing changed). ``os.link`` is atomic and never replaces, so a file created after any
    earlier check of ``final`` is never replaced (a check before the work and a rename after it would replace it);
    ``tmp`` keeps its own name, which the caller removes."""
    try:
        os.link(tmp, final)
        return True
    except FileExistsError:
        return False
    except OSError:  # a file system without hard links: the narrow check-then-rename is what remains
        if Path(final).exists() or Path(final).is_symlink():
            return False
        os.replace(tmp, final)
        return True


def _take_name(tmp: Path, final: Path) -> None:
    """Give ``tmp``'s file the new name ``final`` without ever replacing a file there (OutputError if one is)."""
    if take_new_name(tmp, final):
        return
    raise OutputError(f"{str(final)!r} appeared while the report was written and fedcheck did not write it; it was "
                      f"left as it is and the previous report too (move it or choose another directory)")


def _draw(spec: FigureSpec, rel: str, out_dir: Path, temporaries: list[Path], renames: list[tuple[Path, Path]],
          figure_info: dict[str, dict[str, Any]]) -> str | Exception:
    """Render ``spec`` to a temporary file that will become ``out_dir/rel``; returns ``rel``, or the plotting error
    (an OSError -- the output cannot be written -- propagates: the previous report stays as it was)."""
    final = out_dir / rel
    final.parent.mkdir(exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{final.stem}.", suffix=".tmp.png", dir=final.parent)
    os.close(fd)
    temporaries.append(Path(tmp))
    try:
        rendered = render_figure(spec, Path(tmp))
    except OSError:
        raise
    except Exception as exc:  # noqa: BLE001 - a plotting failure: named in the document and on its card
        return exc
    os.chmod(tmp, _umask_mode())
    renames.append((Path(tmp), final))
    width, height = display_size(rendered)
    figure_info[rel] = {"width": width, "height": height, "claims": []}
    return rel


def _write_manifest(out_dir: Path, files: list[str], temporaries: list[Path]) -> None:
    text = json.dumps({"schema": SCHEMA, "files": files}, indent=2) + "\n"
    os.replace(_atomic_write_text(out_dir / MANIFEST, text, temporaries), out_dir / MANIFEST)
