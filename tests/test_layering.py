"""The shape of the code (docs/ARCHITECTURE.md), enforced.

* One footprint per paper: each slug has ``reference_impl/<slug>/`` (a package), ``verify/<slug>/``,
  ``fedcheck/run/<slug>.py``, ``fedcheck/examples/<slug>*.toml``, ``benchmarks/bench_<slug>*.py`` and its page
  ``docs/papers/<slug>.md``, and nothing of a paper lives outside them under another name.
* Layers: theory <- reference_impl <- verify <- reports <- fedcheck; nothing imports a layer to its right.
* ``fedcheck/`` imports nothing from a paper's checks (``verify/<slug>/``); the shared verify modules
  (``verify.registry``, ``verify.runner``, ``verify.records``, ...) are allowed.
* No import cycle among the product modules, counting imports inside functions and the dynamic ones:
  ``importlib.import_module`` with a literal name, with an f-string whose literal prefix names a package (every child
  of that package counts), with a name looked up in the module's own string constants (e.g. a plug-in table), and the
  registry's discovery of every paper module.

Each rule is a function of an import graph or a file list, so the tests at the end can feed it a synthetic violation.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: The layers, lowest first: a module may import its own layer and those to its left only.
LAYERS = ("theory", "reference_impl", "verify", "reports", "fedcheck")
SLUGS = ("pgfl", "paofed", "zcdp_nfl", "gtv", "fedpdm", "npfl_rl")
#: Each slug's places: a glob (``{slug}`` filled in) that must match at least one file.
PLACES = ("reference_impl/{slug}/__init__.py", "verify/{slug}/__init__.py", "fedcheck/run/{slug}.py",
          "fedcheck/examples/{slug}*.toml", "benchmarks/bench_{slug}*.py", "docs/papers/{slug}.md")
#: Modules of reference_impl/ that belong to no paper (the shared loaders, the run-cost record and the rule of a
#: diverging run that every run document applies).
SHARED_REFERENCE = {"__init__.py", "cost.py", "datasets.py", "divergence.py"}
#: Known strays awaiting their owner's move, each with the move that removes it. An entry must still exist (see
#: test_known_strays_still_exist), so the list cannot outlive the stray.
KNOWN_STRAYS: set[str] = set()
#: Known cycles awaiting their owner's fix, each exactly as found (test_known_cycles_still_exist removes them).
KNOWN_CYCLES: list[list[str]] = []


# --------------------------------------------------------------------------------------------------- the import graph
def _modules(root: pathlib.Path = ROOT, packages: tuple[str, ...] = LAYERS) -> dict[str, pathlib.Path]:
    """Dotted module name -> file, for every product module (test files excluded)."""
    out = {}
    for package in packages:
        for path in (root / package).rglob("*.py"):
            rel = path.relative_to(root)
            if path.name.startswith(("test_", "conftest")) or "__pycache__" in rel.parts:
                continue
            name = ".".join(rel.with_suffix("").parts)
            out[name.removesuffix(".__init__")] = path
    return out


def _package_of(name: str, path: pathlib.Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _is_import_module_call(node: ast.AST) -> bool:
    """``importlib.import_module(arg, ...)`` or ``import_module(arg, ...)``."""
    return (isinstance(node, ast.Call) and bool(node.args)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module")


def _imports(tree: ast.AST, package: str, modules: set[str], packages: set[str]) -> set[str]:
    """The product modules a module's source imports, anywhere in the file, statically or via ``import_module``.

    ``from X import a`` counts as an import of ``X.a`` when that is a module, of ``X`` otherwise (importing a
    submodule runs its parent package's ``__init__`` first, but that implicit step is Python's, not a dependency).
    """
    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    names: list[str] = []
    constants = [node.value for node in ast.walk(tree)
                 if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")
                parent = parent[: len(parent) - (node.level - 1)]
                base = ".".join(parent + ([base] if base else []))
            for alias in node.names:
                names.append(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
        elif _is_import_module_call(node):
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                names.append(arg.value)
            elif (isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant)
                  and str(arg.values[0].value).endswith(".")):
                prefix = str(arg.values[0].value)  # names a sub-package (e.g. a paper's): any of them may be it
                names += [m for m in packages if m.startswith(prefix) and "." not in m[len(prefix):]]
            else:  # a name computed at run time: any product module named by a string of this file may be it
                names += [c for c in constants if c in modules]
    return {target for target in map(resolve, names) if target is not None}


def missing_imports(tree: ast.AST, package: str, modules: set[str]) -> list[str]:
    """Product modules a source names that do not exist (``import X.Y``, ``from X import a`` for the module ``X``,
    ``import_module("X")``): an import the graph would otherwise resolve to the nearest existing package."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")
                base = ".".join(parent[: len(parent) - (node.level - 1)] + ([base] if base else []))
            names.append(base)
        elif _is_import_module_call(node) and isinstance(node.args[0], ast.Constant):
            names.append(str(node.args[0].value))
    return sorted({n for n in names if n.split(".")[0] in LAYERS and n not in modules})


def _registry_imports(modules: set[str]) -> set[str]:
    """What ``verify.registry`` imports by discovery: every sub-package of ``verify`` but those it names in
    ``_NOT_PAPERS``, and each of their modules whose name does not start with ``_``, ``test_`` or ``conftest``
    (mirrors ``verify.registry._claim_modules``)."""
    tree = ast.parse((ROOT / "verify" / "registry.py").read_text())
    skipped = next(ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                   and getattr(node.targets[0], "id", None) == "_NOT_PAPERS")
    packages = {m for m in modules if m.count(".") == 1 and m.startswith("verify.")
                and m[len("verify."):] not in skipped and (ROOT / m.replace(".", "/") / "__init__.py").exists()}
    children = {m for m in modules if m.count(".") == 2 and m.rpartition(".")[0] in packages
                and not m.rpartition(".")[2].startswith(("_", "test_", "conftest"))
                and not (ROOT / m.replace(".", "/") / "__init__.py").exists()}
    return packages | children


def _import_graph() -> dict[str, set[str]]:
    modules = _modules()
    packages = {name for name, path in modules.items() if path.name == "__init__.py"}
    graph = {}
    for name, path in modules.items():
        graph[name] = _imports(ast.parse(path.read_text()), _package_of(name, path), set(modules), packages) - {name}
    # the registry's discovery is modelled exactly: its f-string import_module names only the sub-packages it does not
    # skip, so the generic f-string edges to the skipped ones go (unless a plain import statement names them too)
    registry_tree = ast.parse((ROOT / "verify" / "registry.py").read_text())
    plain = {alias.name for node in ast.walk(registry_tree) if isinstance(node, ast.Import) for alias in node.names}
    plain |= {node.module for node in ast.walk(registry_tree) if isinstance(node, ast.ImportFrom) and node.module}
    discovered = _registry_imports(set(modules))
    generic = {m for m in packages if m.count(".") == 1 and m.startswith("verify.")}
    graph["verify.registry"] = {m for m in graph["verify.registry"]
                                if m not in generic or m in plain or m in discovered}
    graph["verify.registry"] |= discovered
    return graph


# ------------------------------------------------------------------------------------------------------- the rules
def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Edges that import a higher layer (``theory`` importing ``verify``, ``verify`` importing ``reports`` ...)."""
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    return sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets
                  if rank[b.split(".")[0]] > rank[a.split(".")[0]])


def cli_paper_imports(graph: dict[str, set[str]]) -> list[str]:
    """Edges from ``fedcheck`` into a paper's checks ``verify.<slug>``."""
    return sorted(f"{a} -> {b}" for a, targets in graph.items() if a.split(".")[0] == "fedcheck"
                  for b in targets if b.split(".")[:2][-1] in SLUGS and b.startswith("verify."))


def missing_places(root: pathlib.Path, slug: str) -> list[str]:
    return [place.format(slug=slug) for place in PLACES if not list(root.glob(place.format(slug=slug)))]


def stray_paper_files(root: pathlib.Path) -> list[str]:
    """reference_impl/ holds one package per slug and the shared modules only; fedcheck/run/ one plug-in per slug and
    the layer's private modules; no paper-named module elsewhere in fedcheck/ (e.g. a ``*_cli.py``)."""
    ref = root / "reference_impl"
    stray = [f"reference_impl/{p.name}" for p in ref.iterdir() if p.suffix == ".py" and p.name not in SHARED_REFERENCE]
    stray += [f"reference_impl/{p.name}" for p in ref.iterdir()
              if p.is_dir() and p.name not in SLUGS and p.name != "__pycache__"]
    stray += [f"fedcheck/run/{p.name}" for p in (root / "fedcheck" / "run").glob("*.py")
              if p.stem not in SLUGS and not p.stem.startswith("_")]
    stray += [f"fedcheck/{p.name}" for p in (root / "fedcheck").glob("*.py") if any(slug in p.stem for slug in SLUGS)]
    return sorted(stray)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return sorted(out)


# ------------------------------------------------------------------------------------------------- the tree obeys them
@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return _import_graph()


@pytest.mark.parametrize("slug", SLUGS)
def test_each_paper_has_its_footprint(slug):
    assert not missing_places(ROOT, slug), f"{slug}: missing {missing_places(ROOT, slug)}"


def test_nothing_of_a_paper_lives_outside_its_footprint():
    stray = [s for s in stray_paper_files(ROOT) if s not in KNOWN_STRAYS]
    assert not stray, stray


def test_known_strays_still_exist():
    """An allowance for a stray is removed with the stray (so it cannot hide a later one of the same name)."""
    gone = sorted(s for s in KNOWN_STRAYS if not (ROOT / s).exists())
    assert not gone, f"remove {gone} from KNOWN_STRAYS"


def test_every_import_names_an_existing_module():
    modules = _modules()
    missing = {name: found for name, path in modules.items()
               if (found := missing_imports(ast.parse(path.read_text()), _package_of(name, path), set(modules)))}
    assert not missing, missing


def test_no_layer_imports_a_higher_one(graph):
    offenders = upward_imports(graph)
    assert not offenders, offenders


def test_the_cli_imports_no_paper_checks(graph):
    offenders = cli_paper_imports(graph)
    assert not offenders, offenders


def test_no_import_cycle(graph):
    found = [cycle for cycle in cycles(graph) if cycle not in KNOWN_CYCLES]
    assert not found, found


def test_known_cycles_still_exist(graph):
    gone = [cycle for cycle in KNOWN_CYCLES if cycle not in cycles(graph)]
    assert not gone, f"remove {gone} from KNOWN_CYCLES"


def test_the_graph_sees_the_dynamic_imports(graph):
    """The run plug-ins (a table of names handed to ``import_module``) and the registry's discovery are edges."""
    assert {f"fedcheck.run.{slug}" for slug in SLUGS} <= graph["fedcheck.run"]
    assert {f"verify.{slug}" for slug in SLUGS} <= graph["verify.registry"]
    assert {f"verify.{slug}.experiments" for slug in ("pgfl", "paofed", "npfl_rl")} <= graph["verify.registry"]


def test_the_registry_model_matches_the_registry():
    """The static model of the registry's discovery names exactly the modules it imports."""
    from verify import registry

    modules = set(_modules())
    assert set(registry._claim_modules()) == {m for m in _registry_imports(modules) if m.count(".") == 2}


# ----------------------------------------------------------------------------------- each rule can fail (synthetic)
def test_upward_imports_are_found():
    graph = {"theory.a": {"verify.b"}, "reference_impl.x": {"theory.a"}, "verify.b": {"reports.html"},
             "reports.html": {"verify.b"}, "fedcheck.cli": {"reports.html"}}
    assert upward_imports(graph) == ["theory.a -> verify.b", "verify.b -> reports.html"]


def test_cli_imports_of_paper_checks_are_found():
    graph = {"fedcheck.run.gtv": {"verify.gtv.theorem2", "verify.registry"}, "fedcheck.cli": {"verify.pgfl"},
             "reports.build": {"verify.pgfl"}}
    assert cli_paper_imports(graph) == ["fedcheck.cli -> verify.pgfl", "fedcheck.run.gtv -> verify.gtv.theorem2"]


def test_cycles_are_found():
    """A two-module cycle and a three-module cycle are found; an acyclic branch into one is not part of it."""
    graph = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert cycles(graph) == [["a", "b"], ["c", "d", "e"]]


def test_import_forms_are_edges():
    """Function-level imports, ``from pkg import submodule``, relative imports and the three ``import_module``
    forms all become edges, so a cycle through any of them is seen (an f-string prefix names each sub-package)."""
    source = '''
import importlib
from theory import helper
from . import sibling
TABLE = {"x": "verify.plugins.one"}

def load(name):
    from verify.records import Claim
    importlib.import_module("reports.html")
    importlib.import_module(f"verify.plugins.{name}")
    return importlib.import_module(TABLE[name])
'''
    modules = {"theory", "theory.helper", "verify", "verify.plugins", "verify.plugins.one", "verify.plugins.two",
               "verify.records", "verify.sibling", "reports.html"}
    packages = {"theory", "verify", "verify.plugins", "verify.plugins.one", "verify.plugins.two"}
    found = _imports(ast.parse(source), "verify", modules, packages)
    assert found == {"theory.helper", "verify.sibling", "verify.records", "reports.html", "verify.plugins.one",
                     "verify.plugins.two"}


def test_imports_of_missing_modules_are_found():
    source = "import theory.gone\nfrom verify.removed import X\nfrom verify import records\n" \
             "def f():\n    from verify.comparisons import RULE\n    import importlib\n" \
             "    importlib.import_module('reports.old')\n"
    modules = {"theory", "verify", "verify.records", "reports"}
    assert missing_imports(ast.parse(source), "verify", modules) == ["reports.old", "theory.gone", "verify.comparisons",
                                                                     "verify.removed"]


def test_missing_and_stray_places_are_found(tmp_path):
    for rel in ("reference_impl/__init__.py", "reference_impl/datasets.py", "reference_impl/gtv_solver.py",
                "reference_impl/pgfl/__init__.py", "fedcheck/run/pgfl.py", "fedcheck/run/_schema.py",
                "fedcheck/run/extra.py", "fedcheck/gtv_cli.py", "verify/pgfl/__init__.py",
                "fedcheck/examples/pgfl_small.toml", "benchmarks/bench_pgfl_x.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert missing_places(tmp_path, "pgfl") == ["docs/papers/pgfl.md"]
    assert len(missing_places(tmp_path, "gtv")) == len(PLACES)
    assert stray_paper_files(tmp_path) == ["fedcheck/gtv_cli.py", "fedcheck/run/extra.py",
                                           "reference_impl/gtv_solver.py"]
