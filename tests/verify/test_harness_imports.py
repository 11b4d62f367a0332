"""verify.harness stands below the papers: importing it loads no paper module and not the registry (which imports
every paper module, which import the harness: a cycle), and it never imports a module by name at run time."""

from __future__ import annotations

import ast
import json
import pathlib
import subprocess
import sys

import verify

HARNESS = pathlib.Path(verify.__file__).parent / "harness"
#: The verify sub-packages that hold claims (one per paper, and the DP background): never imported by the harness.
PAPER_PACKAGES = sorted(p.name for p in pathlib.Path(verify.__file__).parent.iterdir()
                        if p.is_dir() and (p / "__init__.py").exists() and p.name != "harness")
#: What the harness may import of verify: the shared records and policies below every paper.
ALLOWED = {"verify", "verify.records", "verify.tolerance", "verify.data_files", "verify.harness"}


def test_the_paper_packages_are_known():
    assert {"pgfl", "paofed", "zcdp_nfl", "gtv", "fedpdm", "npfl_rl"} <= set(PAPER_PACKAGES)


def test_importing_the_harness_loads_no_paper_module_and_not_the_registry():
    """Property: in a fresh interpreter, ``import verify.harness`` (and its use: a decision on a toy design) leaves
    every ``verify.<paper>`` module and ``verify.registry`` unimported."""
    code = ("import json, sys\n"
            "import numpy as np\n"
            "import verify.harness as hs\n"
            "from verify.records import CheckContext, Citation, Verdict\n"
            "def simulate(arms, point, scale, seed, replicates):\n"
            "    return [np.full((len(replicates), 1), float(a == 'b')) + np.arange(len(replicates))[:, None]\n"
            "            for a in arms]\n"
            "design = hs.Design(namespace='toy', simulate=simulate, readout=lambda name, scale, o: o[:, 0],\n"
            "                   scales={'ci': 1}, stages={'ci': (12,)}, chunk={'ci': 4})\n"
            "family = hs.Family(paper='toy', name='toy', members=('toy.x',))\n"
            "spec = hs.experiment(claim_id='toy.x', family=family, title='t', citations=(Citation(label='t', "
            "external='t'),), statement='s', hypotheses=(), design=design, statements=(hs.below('a', 'b', 'r'),), "
            "what='w', baselines=(), expected=Verdict.CONFIRMED, reason='r', readout_kind='db', no_choices='toy')\n"
            "assert spec.check(CheckContext(profile='ci', seed=0)).verdict is Verdict.CONFIRMED\n"
            "print(json.dumps(sorted(m for m in sys.modules if m == 'verify' or m.startswith('verify.'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert "verify.harness" in loaded and "verify.harness.decision" in loaded
    papers = [m for m in loaded if m.split(".")[1:2] and m.split(".")[1] in PAPER_PACKAGES]
    assert not papers, f"verify.harness imported paper modules: {papers}"
    assert "verify.registry" not in loaded and "verify.runner" not in loaded


def _imported_names(path: pathlib.Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_the_harness_imports_only_the_shared_layer_and_never_by_name():
    """Property: every import statement in verify/harness names a module of the shared layer (no paper package, no
    registry), and no module calls ``importlib.import_module`` or ``__import__`` (which a static scan cannot
    follow)."""
    modules = sorted(HARNESS.glob("*.py"))
    assert len(modules) >= 8
    for path in modules:
        ours = {n for n in _imported_names(path) if n == "verify" or n.startswith("verify.")}
        strangers = {n for n in ours if n not in ALLOWED and not n.startswith("verify.harness.")}
        assert not strangers, f"{path.name} imports {sorted(strangers)}"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                assert name not in ("import_module", "__import__"), f"{path.name}:{node.lineno} imports by name"


def test_the_harness_modules_stay_small():
    """Property: one concern per module, none over 600 lines."""
    for path in HARNESS.glob("*.py"):
        assert len(path.read_text(encoding="utf-8").splitlines()) <= 600, path.name
