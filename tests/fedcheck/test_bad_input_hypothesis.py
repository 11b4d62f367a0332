"""Hypothesis-generated malformed configurations (issue 12): one field of a valid config replaced by a value
of the wrong type or outside its range always gives exit 2, one stderr line naming ``section.field``, no
traceback and nothing on stdout -- for ``run pgfl``, ``run paofed`` and ``msd``."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings

from fedcheck import cli
from verify.strategies import malformed_config

#: Small valid configurations (so that a mutation the parser wrongly accepted would still end quickly).
PGFL_BASE = {
    "data": {"servers": 2, "clients_per_server": 2, "d": 2, "clusters": 1, "samples_min": 2, "samples_max": 3,
             "gamma": 0.1, "noise_variance": 0.1, "average_degree": 1.0, "seed": 0},
    "model": {"loss": "ridge", "lam": 1.0},
    "algorithm": {"name": "alg1", "rho": 1.0, "tau": 0.4, "aggregation": "cache", "scheduled": 1},
}
PGFL_FIELDS = {
    "data.servers": "pos_int", "data.clients_per_server": "pos_int", "data.d": "pos_int", "data.clusters": "pos_int",
    "data.samples_min": "pos_int", "data.samples_max": "pos_int", "data.gamma": "nonneg_real",
    "data.noise_variance": "nonneg_real", "data.average_degree": "nonneg_real", "data.seed": "nonneg_int",
    "model.loss": "choice", "model.lam": "nonneg_real", "algorithm.name": "choice", "algorithm.rho": "pos_real",
    "algorithm.tau": "unit_real", "algorithm.aggregation": "choice",
    "algorithm.scheduled": "pos_int",
}
INSTANCE_BASE = {
    "instance": {"K": 2, "D": 2, "l_max": 1, "m": 1, "selection": "subset", "p": [0.9, 0.5], "delta": 0.3,
                 "alpha": [1.0, 0.5], "sigma2_eta": [0.01, 0.02], "toeplitz_rho": [0.1, 0.5], "w_star": [1.0, -1.0],
                 "mu_times_lambda_max": 0.1},
    "data": {"source": "linear"},
}
INSTANCE_FIELDS = {
    "instance.K": "pos_int", "instance.D": "pos_int", "instance.l_max": "nonneg_int", "instance.m": "pos_int",
    "instance.selection": "choice", "instance.p": "real_list", "instance.delta": "unit_real",
    "instance.alpha": "real_list", "instance.sigma2_eta": "real_list", "instance.toeplitz_rho": "real_list",
    "instance.w_star": "real_list", "instance.mu_times_lambda_max": "pos_real", "data.source": "choice",
}


#: capsys is shared by the examples on purpose: each example reads (and so clears) it before the next one.
_CAPSYS_OK = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


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


def _mutated(base: dict, section: str, field: str, bad) -> dict:
    table = {sec: dict(body) for sec, body in base.items()}
    table[section][field] = bad
    return table


def _assert_contract(capsys, argv, field):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    out, err = capsys.readouterr()
    assert exc.value.code == 2, err
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert field in err, err


def test_the_base_configs_are_valid(capsys):
    """The mutations start from configurations the commands accept."""
    with tempfile.TemporaryDirectory() as tmp:
        assert cli.main(["run", "pgfl", str(_write(PGFL_BASE, Path(tmp) / "p.toml")), "--iterations", "2"]) == 0
        assert cli.main(["run", "paofed", str(_write(INSTANCE_BASE, Path(tmp) / "i.toml")), "--iterations", "2"]) == 0
    capsys.readouterr()


@given(mutation=malformed_config(PGFL_FIELDS))
@example(mutation=("algorithm", "rho", float("nan")))
@example(mutation=("algorithm", "scheduled", 3))
@_CAPSYS_OK
def test_run_pgfl_malformed_fields(capsys, mutation):
    section, field, bad = mutation
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(_mutated(PGFL_BASE, section, field, bad), Path(tmp) / "c.toml")
        _assert_contract(capsys, ["run", "pgfl", str(path), "--iterations", "2"], f"{section}.{field}")


@given(mutation=malformed_config(INSTANCE_FIELDS))
@example(mutation=("instance", "p", [True, False]))
@_CAPSYS_OK
def test_run_paofed_malformed_fields(capsys, mutation):
    section, field, bad = mutation
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(_mutated(INSTANCE_BASE, section, field, bad), Path(tmp) / "c.toml")
        _assert_contract(capsys, ["run", "paofed", str(path), "--iterations", "2"], f"{section}.{field}")


@given(mutation=malformed_config(INSTANCE_FIELDS))
@example(mutation=("instance", "mu_times_lambda_max", 1e-300))
@_CAPSYS_OK
def test_msd_malformed_fields(capsys, mutation):
    section, field, bad = mutation
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(_mutated(INSTANCE_BASE, section, field, bad), Path(tmp) / "c.toml")
        _assert_contract(capsys, ["msd", str(path)], f"{section}.{field}")
