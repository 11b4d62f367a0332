"""Hypothesis-generated malformed configurations for all six ``fedcheck run`` commands (issues 12, 25, 28).

One field of a small valid configuration is replaced by a value of the wrong type or outside its range
(``verify.strategies.malformed_config``); the fields and their kinds come from the plug-in's own declarations
(``SCHEMA``), so a field added to a plug-in is mutated without touching this file. The contract: exit 2, one stderr
line naming ``section.field``, no traceback, nothing on stdout. The work limit is lowered so that a mutation that
were wrongly accepted would still end in about a second.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fedcheck import cli
from fedcheck.run import plugin
from verify.strategies import malformed_config

#: Small valid configurations, one per command (each runs in well under a second).
BASES = {
    "pgfl": {
        "data": {"servers": 2, "clients_per_server": 2, "d": 2, "clusters": 1, "samples_min": 2, "samples_max": 3,
                 "gamma": 0.1, "noise_variance": 0.1, "average_degree": 1.0, "seed": 0},
        "model": {"loss": "ridge", "lam": 1.0},
        "algorithm": {"name": "alg1", "rho": 1.0, "tau": 0.4, "aggregation": "cache", "scheduled": 1}},
    "paofed": {
        "simulation": {"iterations": 2},
        "instance": {"K": 2, "D": 2, "l_max": 1, "m": 1, "selection": "subset", "p": [0.9, 0.5], "delta": 0.3,
                     "alpha": [1.0, 0.5], "sigma2_eta": [0.01, 0.02], "toeplitz_rho": [0.1, 0.5],
                     "w_star": [1.0, -1.0], "mu_times_lambda_max": 0.1},
        "data": {"source": "linear"},
        "algorithm": {"overlap_rule": "none"}},
    "zcdp-nfl": {
        "graph": {"source": "erdos_renyi", "K": 6, "mean_degree": 3.0, "seed": 0},
        "data": {"source": "synthetic", "P": 2, "M": 5, "noise_std": 0.1, "heterogeneity": 0.0,
                 "zero_coordinates": 0, "seed": 0},
        "model": {"objective": "ridge", "lam": 1.0, "clip": 1.0},
        "privacy": {"schedule": "S2", "phi1": 1e-3, "tau": 0.99, "c1": 1.0, "delta": 1e-5},
        "algorithm": {"method": "zcdp_nfl", "rho": 1.0, "step": "constant", "eta0": 0.5},
        "simulation": {"iterations": 3, "runs": 1, "seed": 0}},
    "gtv": {
        "graph": {"generator": "sbm", "p_in": 0.8, "p_out": 0.1},
        "data": {"source": "synthetic", "d": 2, "m": 3, "noise": 0.01, "seed": 0},
        "model": {"penalty": "l2", "loss": "squared", "lam": 0.01},
        "algorithm": {"theta": 1.0, "iterations": 5, "tol": 1e-10, "record_every": 1}},
    "fedpdm": {
        "problem": {"source": "nc", "N": 4, "n": 10, "d": 3, "beta": 0.1, "gamma": 0.01, "data_seed": 0},
        "algorithm": {"K": 2, "rounds": 2, "batch_size": 2, "rho": 10.0, "eta0": 0.05, "eta_schedule": "constant",
                      "nu": 0.01, "Q_max": 2, "noise": "dp", "epsilon": 1.0, "delta": 1e-5},
        "arm": {"name": "fedpdm"}},
    "npfl-rl": {
        "simulation": {"iterations": 3},
        "instance": {"K": 6, "Q": 2, "d": 2, "mean_degree": 3.0, "D_min": 2, "D_max": 4, "noise_min": 0.005,
                     "noise_max": 0.03, "lam": 0.1, "delta_half_width": 0.5, "delta_kind": "scalar"},
        "algorithm": {"algorithm": "npfl", "rho": 3.0, "policy": "sac", "tau0": 0.05, "delta": 0.1, "nu": 0.05,
                      "epochs": 1, "tau_max": 1.0, "timing": "literal"}},
}


def _kind(field) -> str | None:
    """The ``malformed_config`` kind whose every value is invalid for ``field`` (None: not mutated here)."""
    lo = None if callable(field.lo) else field.lo
    hi = None if callable(field.hi) else field.hi
    if field.kind == "choice":
        return "choice"
    if field.kind == "reals" and (field.lo is not None or field.length is not None):
        return "real_list"
    if field.kind == "int" and (callable(field.lo) or (lo is not None and lo >= 1)):
        return "pos_int"
    if field.kind == "int" and lo == 0:
        return "nonneg_int"
    if field.kind == "real":
        if hi == 1.0 and lo is not None and lo >= 0:
            return "unit_real"
        if lo == 0 and field.lo_open:
            return "pos_real"
        if lo == 0 or callable(field.lo):
            return "nonneg_real"
    return None


def mutable_fields(command: str) -> dict[str, str]:
    """``section.field -> kind`` for the fields of the base configuration that have a kind."""
    schema = plugin(command).SCHEMA
    out = {}
    for section, body in BASES[command].items():
        for name in body:
            kind = _kind(schema.field(f"{section}.{name}"))
            if kind is not None:
                out[f"{section}.{name}"] = kind
    return out


_CAPSYS_OK = settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=25)


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, (int, str)):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"


def _write(table: dict, path: Path) -> Path:
    path.write_text("".join(f"[{sec}]\n" + "".join(f"{k} = {_toml_value(v)}\n" for k, v in body.items())
                            for sec, body in table.items()), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def small_work_limit(monkeypatch):
    monkeypatch.setattr("fedcheck.run._budget.MAX_WORK", 10**9)


@pytest.mark.parametrize("command", sorted(BASES))
def test_the_base_configs_are_valid_and_every_command_has_mutable_fields(capsys, command):
    assert len(mutable_fields(command)) >= 5
    with tempfile.TemporaryDirectory() as tmp:
        assert cli.main(["run", command, str(_write(BASES[command], Path(tmp) / "c.toml")), "--json"]) == 0
    json.loads(capsys.readouterr().out)


@given(data=st.data())
@_CAPSYS_OK
@pytest.mark.parametrize("command", sorted(BASES))
def test_malformed_field_exits_2_naming_it(capsys, command, data):
    section, field, bad = data.draw(malformed_config(mutable_fields(command)))
    table = {sec: dict(body) for sec, body in BASES[command].items()}
    table[section][field] = bad
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(table, Path(tmp) / "c.toml")
        with pytest.raises(SystemExit) as exc:
            cli.main(["run", command, str(path)])
    out, err = capsys.readouterr()
    assert exc.value.code == 2, err
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{section}.{field}" in err, err


@given(data=st.data())
@_CAPSYS_OK
@pytest.mark.parametrize("command", sorted(BASES))
def test_unknown_or_misplaced_field_exits_2_naming_it(capsys, command, data):
    """A field name from another section (or no section) is refused as 'not a field', naming it."""
    sections = sorted(BASES[command])
    section = data.draw(st.sampled_from(sections))
    name = data.draw(st.sampled_from(["bogus", "Rho", "iterations_", "seed2", "x"]))
    table = {sec: dict(body) for sec, body in BASES[command].items()}
    table[section][name] = 1
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(table, Path(tmp) / "c.toml")
        with pytest.raises(SystemExit) as exc:
            cli.main(["run", command, str(path)])
    out, err = capsys.readouterr()
    assert exc.value.code == 2 and out == "" and err.count("\n") == 1, err
    assert f"{section}.{name} is not a field" in err, err
