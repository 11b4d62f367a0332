"""An experiment is declared once: the harness builds its claim, check and reproduction; its family and alpha are
declared; its replicates are seeded by one function. The registry, the runner and the result cache see the generated
checks as written ones."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pathlib
from collections import Counter

import numpy as np
import pytest

import verify
from verify import harness as hs
from verify.cache import ResultCache, code_digest
from verify.records import CheckContext, Citation, Verdict
from verify.registry import all_claims, all_experiments, get_claim
from verify.runner import _units

EXPERIMENTS = all_experiments()
#: Each paper's experiment family as declared before families were explicit: its size was the paper's number of
#: experiment claims, and each claim's alpha 0.05 over it (the verdicts depend on these exact alphas).
FAMILY_SIZES = {"pgfl": 21, "paofed": 25, "zcdp_nfl": 7, "gtv": 10, "fedpdm": 8, "npfl_rl": 16}


def _toy_design(namespace="toy.declaration"):
    def simulate(arms, point, scale, root_seed, replicates):  # pragma: no cover - never simulated here
        raise AssertionError("not simulated")

    return hs.Design(namespace=namespace, simulate=simulate, readout=lambda name, scale, o: o,
                     scales={"ci": 1}, stages={"ci": (4,)}, chunk={"ci": 4})


def _toy_fields(claim_id="toy.one", family=None, **changes):
    family = family or hs.Family(paper="toy", name="toy", members=(claim_id,))
    fields = dict(claim_id=claim_id, family=family, title="t", citations=(Citation(label="t", external="t"),),
                  statement="s", hypotheses=(), design=_toy_design(), statements=(hs.below("a", "b", "r"),),
                  what="w", baselines=(), expected=Verdict.CONFIRMED, reason="r", readout_kind="db",
                  no_choices="toy: nothing left unsaid")
    if "grid" in changes:
        del fields["no_choices"]
    return {**fields, **changes}


# --- families ------------------------------------------------------------------------------------------------


def test_every_family_lists_exactly_its_declared_claims_and_keeps_its_alpha():
    """Property: each paper's experiments name one family; its declared members are exactly the claims declared in
    it, and every claim's alpha is 0.05 over that declared size (today's alphas, so no verdict moves)."""
    families = {e.family for e in EXPERIMENTS}
    assert {f.paper for f in families} == set(FAMILY_SIZES) and len(families) == len(FAMILY_SIZES)
    for family in families:
        declared = sorted(e.claim_id for e in EXPERIMENTS if e.family == family)
        assert declared == sorted(family.members), family.name
        assert family.size == FAMILY_SIZES[family.paper]
    for e in EXPERIMENTS:
        assert e.alpha == hs.FAMILY_ALPHA / FAMILY_SIZES[e.family.paper]


def test_a_family_whose_members_and_claims_disagree_is_refused():
    """A member without a declared claim, a claim its family does not list, and two records of one family are
    refused naming the family and the ids."""
    family = hs.Family(paper="toy", name="pair", members=("toy.a", "toy.b"))
    one = hs.Experiment(module=__name__, **_toy_fields("toy.a", family))
    with pytest.raises(ValueError, match=r"members without a declared claim: \['toy.b'\]"):
        hs.validate_families([one])
    stray = hs.Experiment(module=__name__, **_toy_fields("toy.c", family))
    with pytest.raises(ValueError, match=r"claims not listed as members: \['toy.c'\]"):
        hs.validate_families([one, dataclasses.replace(one, claim_id="toy.b"), stray])
    hs.validate_families([one, dataclasses.replace(one, claim_id="toy.b")])
    other = dataclasses.replace(one, family=hs.Family(paper="toy", name="pair", members=("toy.a",)))
    with pytest.raises(ValueError, match="declared twice"):
        hs.validate_families([one, other])
    with pytest.raises(ValueError, match="not a member of its family"):
        hs.experiment(**_toy_fields("toy.d", family))


def test_a_claims_alpha_depends_on_its_own_family_only():
    """Adding a member to another family changes nothing: a claim's alpha is its family's."""
    small = hs.Family(paper="toy", name="small", members=("toy.a",))
    grown = hs.Family(paper="toy", name="other", members=tuple(f"toy.o{i}" for i in range(40)))
    claim = hs.Experiment(module=__name__, **_toy_fields("toy.a", small))
    assert claim.alpha == 0.05 and grown.alpha == 0.05 / 40
    with pytest.raises(ValueError, match="listed twice"):
        hs.Family(paper="toy", name="x", members=("toy.a", "toy.a"))
    with pytest.raises(ValueError, match="members must be claim ids of paper"):
        hs.Family(paper="toy", name="x", members=("pgfl.a",))


# --- the generated claim and check ---------------------------------------------------------------------------


def test_each_experiment_is_one_declaration_and_no_check_wrapper_is_left():
    """Property: the registry's experiment claims are the declarations' (one record each), and no module that
    declares experiments defines a ``check_*`` function of its own."""
    by_id = {c.id: c for c in all_claims()}
    assert len(EXPERIMENTS) == sum(FAMILY_SIZES.values())
    for e in EXPERIMENTS:
        assert by_id[e.claim_id] is e.claim and get_claim(e.claim_id).check is e.check
    for module in {e.module for e in EXPERIMENTS}:
        path = pathlib.Path(importlib.import_module(module).__file__)
        defined = [n.name for n in ast.parse(path.read_text(encoding="utf-8")).body
                   if isinstance(n, ast.FunctionDef) and n.name.startswith("check_")]
        assert not defined, f"{module} still defines {defined}"


def test_the_generated_check_reports_its_declaring_module():
    """The check's ``__module__`` is the declaring module: the report's ``check`` field names it, the runner groups
    the claims of one module, and the result cache digests that module with everything it imports (the harness
    included), the same key at every call."""
    from verify.npfl_rl import experiments as npfl

    claim = npfl.C1.claim
    assert claim.check.__module__ == "verify.npfl_rl.experiments"
    assert claim.to_json()["check"] == "verify.npfl_rl.experiments.check_experiment_c1_nfl"
    assert code_digest(claim) == code_digest(claim)
    cache = ResultCache("unused")
    assert cache._key(claim, "ci", 0, None) == cache._key(claim, "ci", 0, None)
    assert cache._key(claim, "ci", 0, None) != cache._key(npfl.C2.claim, "ci", 0, None)
    from verify.cache import _closure

    closure = _closure(claim.check.__module__)
    assert "verify.harness.decision" in closure and "verify.npfl_rl._experiment_design" in closure
    units = _units([e.claim for e in EXPERIMENTS], {})
    modules = [{EXPERIMENTS[i].module for i in unit} for unit in units]
    assert all(len(m) == 1 for m in modules) and len(modules) == len({e.module for e in EXPERIMENTS})


def test_declarations_record_their_baselines():
    """Property: every declaration states where each compared baseline comes from; the baselines the paper only
    names are reconstructions, and every such claim is checked outside the paper's setting where the verdict
    rests on them (zCDP-NFL, FedPDM-DP)."""
    counts = Counter(b.source for e in EXPERIMENTS for b in e.baselines)
    assert counts["reconstruction"] > 0 and counts["paper"] > 0
    for e in EXPERIMENTS:
        assert len({b.name for b in e.baselines}) == len(e.baselines)
        if e.family.paper in ("zcdp_nfl", "fedpdm") and any(b.source == "reconstruction" for b in e.baselines):
            assert e.outside_setting, e.claim_id


def test_a_claim_needing_a_data_file_names_the_deciding_command_without_it(tmp_path):
    """Without the user's file the generated check is not_checkable naming the command; with it the design runs
    on scales carrying the file's path and SHA-256."""

    @dataclasses.dataclass(frozen=True)
    class FileScale:
        path: str = ""
        sha256: str = ""

    seen = []

    def simulate(arms, point, scale, root_seed, replicates):
        seen.append(scale)
        return [np.zeros((len(replicates), 1)) - (a == "a") for a in arms]

    design = hs.Design(namespace="toy.file", simulate=simulate, readout=lambda name, scale, o: o[:, 0],
                       scales={"ci": FileScale()}, stages={"ci": (12,)}, chunk={"ci": 12})
    data = hs.DataFile(name="medmnist", what="OrganAMNIST", absent="none given", file="organamnist.npz")
    spec = hs.Experiment(module=__name__, **_toy_fields("toy.file", design=design, data=data))
    assert spec.claim.data_files == ("medmnist",)
    result = spec.check(CheckContext(profile="ci", seed=0))
    assert result.verdict is Verdict.NOT_CHECKABLE and not seen
    assert result.summary.startswith("needs OrganAMNIST from a local file (none given); decide it with: fedcheck "
                                     "report --only toy.file")
    path = tmp_path / "organ.npz"
    path.write_bytes(b"toy")
    result = spec.check(CheckContext(profile="ci", seed=0, data={"medmnist": str(path)}))
    assert result.verdict is Verdict.CONFIRMED
    assert seen and seen[0].path == str(path) and len(seen[0].sha256) == 64


# --- seeding ---------------------------------------------------------------------------------------------------


def test_replicate_seeds_are_the_derivations_the_designs_used():
    """Property: replicate_seed reproduces each design's former derivation exactly (so no number moved): the
    family sequence is CheckContext.seed_sequence(key); replicate i its child i, stream s the grandchild (the
    child's spawn(2)[s]); a grid point p the child i * 100 + p; 'root-list' the integer root of the family sequence
    with [root, i, s]; 'key-list' [*key, root_seed, i]."""
    key = "pgfl.experiments.regression"
    for root in (0, 7, 2**31):
        family = CheckContext(seed=root).seed_sequence(key)
        assert (hs.replicate_seed(key, root).generate_state(4) == family.generate_state(4)).all()
        child = np.random.SeedSequence(family.entropy, spawn_key=(3,))
        assert (hs.replicate_seed(key, root, 3).generate_state(4) == child.generate_state(4)).all()
        for s, grandchild in enumerate(np.random.SeedSequence(family.entropy, spawn_key=(3,)).spawn(2)):
            assert (hs.replicate_seed(key, root, 3, stream=s).generate_state(4) == grandchild.generate_state(4)).all()
        pointed = np.random.SeedSequence(family.entropy, spawn_key=(3 * 100 + 4,))
        assert (hs.replicate_seed(key, root, 3, point=4).generate_state(4) == pointed.generate_state(4)).all()
        integer_root = int(family.generate_state(1)[0])
        assert (np.random.default_rng(hs.replicate_seed(key, root, 3, stream=1, scheme="root-list")).random(3)
                == np.random.default_rng([integer_root, 3, 1]).random(3)).all()
        assert (np.random.default_rng(hs.replicate_seed((40_041,), root, 3, scheme="key-list")).random(3)
                == np.random.default_rng([40_041, root, 3]).random(3)).all()
        assert (hs.replicate_seed((5, 2, 9), root).generate_state(2)
                == np.random.SeedSequence([root, 5, 2, 9]).generate_state(2)).all()


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"scheme": "other"}, "scheme must be one of"),
    ({"replicate": -1}, "replicate must be an integer"),
    ({"replicate": 1, "point": 100}, "point must be an integer in"),
    ({"replicate": 1, "point": 1, "scheme": "root-list", "stream": 0}, "point is only for scheme 'spawn'"),
    ({"replicate": 1, "scheme": "root-list"}, "needs a replicate and a stream"),
    ({"point": 1}, "need a replicate"),
])
def test_bad_seed_arguments_are_refused_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        hs.replicate_seed("toy", 0, **kwargs)
    with pytest.raises(ValueError, match="key must be"):
        hs.replicate_seed("", 0)


def test_no_design_builds_a_check_context_or_its_own_seed_sequence():
    """Property: the experiment designs take their replicate seeds from verify.harness.replicate_seed only: none
    builds a throw-away CheckContext or a SeedSequence of its own."""
    root = pathlib.Path(verify.__file__).parent
    modules = {e.module for e in EXPERIMENTS} | {e.design.simulate.__module__ for e in EXPERIMENTS}
    for name in sorted(modules):
        source = (root.parent / (name.replace(".", "/") + ".py")).read_text(encoding="utf-8")
        assert "CheckContext(" not in source, name
        assert "SeedSequence(" not in source, name
