"""The repository stands alone: no tracked file cites a document or a path that users do not have.

fedcheck's code, docstrings, claim texts, comments, tests and docs cite the papers themselves (title, the paper's own
label such as "Theorem 2", equation numbers) and the project's own pages ``docs/papers/<slug>.md#<anchor>``
(issues 25/26). They never cite the former internal per-paper specifications (``shared/spec/...``, "spec 5.3",
"(spec)", "the spec's", their "Review notes", their bracketed tags such as ``[CHOICE]`` or ``[E8]``) nor a path
outside the repository (``/work/``, ``../shared/``, a ``seeds/`` directory; ``/tmp/`` in docs and claim texts).
``docs/papers/spec_map.json`` maps every former form to the page anchor that replaced it; the files it lists under
``ignore_files`` (and ``docs/papers/`` itself) quote the forms on purpose and are not scanned, nor is this file.
Every ``docs/papers/<page>.md#<anchor>`` that a tracked file cites must be an anchor the page declares.

In Python files only prose is scanned (comments and string literals), so a variable named ``spec`` or a class
``FigureSpec`` is not an offence.
"""

from __future__ import annotations

import fnmatch
import io
import json
import pathlib
import re
import subprocess
import tokenize

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SELF = "tests/test_stands_alone.py"
SUFFIXES = (".py", ".md", ".toml", ".json", ".txt", ".cfg", ".ini", ".yml", ".yaml", ".rst")

#: Citations of the internal specifications, wherever they appear in prose.
SPEC_REFERENCES = (
    ("internal specification path", re.compile(r"shared/spec\b")),
    ("specification section", re.compile(r"\b[Ss]pec\s+\d")),
    ("specification file", re.compile(r"\b[Ss]pec\s+(?:pgfl|zcdp_nfl|paofed|gtv|fedpdm(?:_dp)?|npfl_rl|dp_background)"
                                      r"\b|\b(?:fedpdm_dp|dp_background)\.md\b")),
    ("'(spec)' citation", re.compile(r"\([Ss]pec\s*[):]")),
    ("'the spec' citation", re.compile(r"\b[Tt]he spec\b|\bspec's\b|\bspec-default")),
    ("the specifications' review notes", re.compile(r"(?<![#\w/-])[Rr]eview[- ]notes?\b")),
    ("bracketed specification tag", re.compile(r"\[(?:CHOICE|SEED|ext|decision|unspecified|derived|erratum\?)\]"
                                               r"|\[E\d+\]")),
)
#: Paths outside the repository, wherever they appear in prose.
OUTSIDE_PATHS = (
    ("machine path /work/", re.compile(r"/work/")),
    ("path to ../shared/", re.compile(r"\.\./shared/")),
    ("seeds/ directory", re.compile(r"\bseeds/")),
)
#: ``/tmp/`` is an offence in docs and in claim texts (the verify/ packages); tests may use temporary paths.
TMP_PATH = ("machine path /tmp/", re.compile(r"(?<![\w.])/tmp/"))


def _ignore_globs(root: pathlib.Path) -> list[str]:
    path = root / "docs" / "papers" / "spec_map.json"
    globs = ["docs/papers/*", SELF]
    if path.is_file():
        globs += json.loads(path.read_text(encoding="utf-8")).get("ignore_files", [])
    return globs


def _prose_lines(rel: str, text: str):
    """(line number, text) of the prose of a file: comments and string literals of Python, every line otherwise."""
    if not rel.endswith(".py"):
        yield from enumerate(text.splitlines(), 1)
        return
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        yield from enumerate(text.splitlines(), 1)
        return
    for tok in tokens:
        if tok.type not in (tokenize.COMMENT, tokenize.STRING):
            continue
        body = tok.string
        if tok.type == tokenize.STRING and "f" in re.match(r"[a-zA-Z]*", body).group(0).lower():
            body = re.sub(r"\{[^{}]*\}", "{}", body)  # the expressions of an f-string are code
        for k, line in enumerate(body.splitlines()):
            yield tok.start[0] + k, line


def offences(root: pathlib.Path, files: list[str]) -> list[str]:
    """``file:line: what: text`` for every reference to the internal specifications or to an outside path."""
    ignore = _ignore_globs(root)
    out = []
    for rel in sorted(files):
        if not rel.endswith(SUFFIXES) or any(fnmatch.fnmatch(rel, g) for g in ignore):
            continue
        path = root / rel
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        checks = SPEC_REFERENCES + OUTSIDE_PATHS
        if rel.endswith((".md", ".rst", ".txt")) or (rel.startswith("verify/") and "/test_" not in rel):
            checks = (*checks, TMP_PATH)
        for number, line in _prose_lines(rel, text):
            for what, pattern in checks:
                if pattern.search(line):
                    out.append(f"{rel}:{number}: {what}: {line.strip()[:140]}")
    return out


def _tracked(root: pathlib.Path) -> list[str]:
    try:
        res = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    return res.stdout.splitlines()


def test_no_tracked_file_cites_the_internal_specifications_or_an_outside_path():
    found = offences(ROOT, _tracked(ROOT))
    assert not found, (f"{len(found)} reference(s) to documents or paths users do not have; cite the paper or "
                       "docs/papers/<slug>.md#<anchor> instead (docs/papers/spec_map.json maps every former form):\n"
                       + "\n".join(found))


PLANTED = '''"""A module whose docstring cites the spec 5.2 experiment and (spec)."""
x = 1  # see shared/spec/gtv.md and the Review notes


def f(spec):  # a variable named spec is not a citation
    return f"{', '.join(spec)}", "FigureSpec", "docs/papers/gtv.md#review-notes", "the spec's default"
'''


def test_planted_offences_are_caught_one_line_each(tmp_path):
    (tmp_path / "verify").mkdir()
    (tmp_path / "verify" / "planted.py").write_text(PLANTED, encoding="utf-8")
    (tmp_path / "notes.md").write_text("Clean line.\nData in /work/shared/seeds/000.txt and [CHOICE] 2.\n"
                                       "Output went to /tmp/run.\n", encoding="utf-8")
    (tmp_path / "clean.toml").write_text('# docs/papers/paofed.md#review-note-1\nx = "S2"\n', encoding="utf-8")
    found = offences(tmp_path, ["verify/planted.py", "notes.md", "clean.toml"])
    where = sorted({line.split(": ")[0] for line in found})
    assert where == ["notes.md:2", "notes.md:3", "verify/planted.py:1", "verify/planted.py:2",
                     "verify/planted.py:6"], found
    kinds = {line.split(": ")[1] for line in found}
    assert {"specification section", "'(spec)' citation", "internal specification path",
            "the specifications' review notes", "'the spec' citation", "machine path /work/", "seeds/ directory",
            "bracketed specification tag", "machine path /tmp/"} <= kinds, kinds


def test_ignored_files_are_not_scanned(tmp_path):
    (tmp_path / "docs" / "papers").mkdir(parents=True)
    (tmp_path / "docs" / "papers" / "spec_map.json").write_text('{"ignore_files": ["tests/quoting.py"]}',
                                                                encoding="utf-8")
    (tmp_path / "docs" / "papers" / "gtv.md").write_text("Formerly spec 5.2.\n", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "quoting.py").write_text('FORMS = ("spec 5.2",)\n', encoding="utf-8")
    (tmp_path / "tests" / "other.py").write_text('FORMS = ("spec 5.2",)\n', encoding="utf-8")
    found = offences(tmp_path, ["docs/papers/gtv.md", "tests/quoting.py", "tests/other.py"])
    assert [line.split(": ")[0] for line in found] == ["tests/other.py:1"], found


LINK = re.compile(r"docs/papers/(\w+)\.md#([\w.-]*[\w-])(?: to #([\w-]+))?")


def dangling_anchors(root: pathlib.Path, files: list[str]) -> list[str]:
    """``file:line: link`` for every ``docs/papers/<page>.md#<anchor>`` (or ``... to #<anchor>``) no page declares."""
    declared = {page.stem: set(re.findall(r'<a id="([^"]+)"></a>', page.read_text(encoding="utf-8")))
                for page in (root / "docs" / "papers").glob("*.md")}
    out = []
    for rel in sorted(files):
        if not rel.endswith(SUFFIXES) or rel.startswith("docs/papers/") or rel == SELF:
            continue
        path = root / rel
        if not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in LINK.finditer(line):
                page, anchors = m.group(1), [a for a in m.group(2, 3) if a]
                if any(a not in declared.get(page, ()) for a in anchors):
                    out.append(f"{rel}:{number}: {m.group(0)}")
    return out


def test_every_cited_page_anchor_exists():
    found = dangling_anchors(ROOT, _tracked(ROOT))
    assert not found, "citations of anchors that docs/papers does not declare:\n" + "\n".join(found)


def test_a_dangling_anchor_is_caught(tmp_path):
    (tmp_path / "docs" / "papers").mkdir(parents=True)
    (tmp_path / "docs" / "papers" / "gtv.md").write_text('<a id="exp-chain"></a>\n## Chain\n', encoding="utf-8")
    (tmp_path / "a.py").write_text("# docs/papers/gtv.md#exp-chain\n# docs/papers/gtv.md#exp-chain to #exp-nowhere\n"
                                   "# docs/papers/pgfl.md#theorem-1.\n", encoding="utf-8")
    found = dangling_anchors(tmp_path, ["a.py"])
    assert [line.split(": ")[0] for line in found] == ["a.py:2", "a.py:3"], found
