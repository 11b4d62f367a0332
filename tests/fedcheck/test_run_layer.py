"""The pieces of the run layer: field declarations and their messages, the translation of a record's ValueError to
the user's field, the resource checks, the summary's digits and when progress is shown."""

from __future__ import annotations

import io
import math

import pytest

from fedcheck._errors import ConfigError
from fedcheck.run import Cost, Field, Schema, Section
from fedcheck.run._budget import check, connected_gnm
from fedcheck.run._output import Progress, fmt

SCHEMA = Schema(sections=(
    Section(name="a", doc="first", fields=(
        Field(name="kind", kind="choice", choices=("x", "y"), default="x", doc="which"),
        Field(name="n", kind="int", lo=1, default=3, doc="a size"),
        Field(name="m", kind="int", lo=1, hi=lambda v: v["a.n"], hi_text="a.n", default=1, doc="at most n"),
        Field(name="only_y", kind="real", lo=0.0, lo_open=True, applies=lambda v: v["a.kind"] == "y",
              when="a.kind = 'y'", doc="y's real"),
        Field(name="w", kind="reals", lo=0.0, length=lambda v: v["a.n"], length_text="a.n", doc="n weights"),
    )),
    Section(name="b", doc="second", applies=lambda v: v["a.kind"] == "y", when="a.kind = 'y'", fields=(
        Field(name="rate", kind="real", lo=0.0, hi=1.0, default=0.5, doc="a rate"),
    )),
), renames={"rate_internal": "b.rate"})


def test_defaults_and_given_fields():
    v = SCHEMA.parse({"a": {"n": 4}})
    assert (v["a.kind"], v["a.n"], v["a.m"], v["a.only_y"], v["b.rate"]) == ("x", 4, 1, None, None)
    assert v.given("a.n") and not v.given("a.m")


@pytest.mark.parametrize(("table", "message"), [
    ({"a": {"n": 0}}, "a.n must be an integer >= 1, got 0"),
    ({"a": {"n": True}}, "a.n must be an integer >= 1, got true"),      # as written in TOML, not Python's repr
    ({"a": {"n": {"x": 1}}}, "a.n must be an integer >= 1, got {x = 1}"),
    ({"a": {"n": __import__("datetime").date(1979, 5, 27)}}, "a.n must be an integer >= 1, got the date 1979-05-27"),
    ({"a": {"n": 2, "m": 3}}, "a.m must be an integer in [1, a.n = 2], got 3"),
    ({"a": {"only_y": 1.0}}, "a.only_y does not apply here (it applies only when a.kind = 'y')"),
    ({"b": {"rate": 0.1}}, "b: the [b] section does not apply here (it applies only when a.kind = 'y')"),
    ({"a": {"kind": "y", "only_y": math.inf}}, "a.only_y must be a real > 0, got inf"),
    ({"a": {"w": [1.0, -1.0, 2.0]}}, "a.w[1] must be a list of a.n = 3 reals each >= 0, got -1.0"),
    ({"a": {"w": [1.0]}}, "a.w must be a list of a.n = 3 reals each >= 0, got 1 entries"),
    ({"a": {"bogus": 1}}, "a.bogus is not a field (allowed: kind, m, n, only_y, w)"),
    ({"c": {}}, "c is not a section (allowed: a, b)"),
])
def test_one_message_naming_the_field(table, message):
    with pytest.raises(ConfigError) as exc:
        SCHEMA.parse(table)
    assert str(exc.value) == message


def test_an_option_overrides_the_field_and_is_named_in_its_errors():
    v = SCHEMA.parse({"a": {"n": 5}}, {"a.n": ("--size", 7)})
    assert v["a.n"] == 7 and v.label("a.n") == "argument --size"
    with pytest.raises(ConfigError, match=r"^argument --size must be an integer >= 1, got 0$"):
        SCHEMA.parse({}, {"a.n": ("--size", 0)})
    with pytest.raises(ConfigError, match=r"^a.n must be an integer >= 1, got -1$"):  # the file's value is checked too
        SCHEMA.parse({"a": {"n": -1}}, {"a.n": ("--size", 7)})


@pytest.mark.parametrize(("raised", "section", "message"), [
    (ValueError("rate_internal must be in [0, 1], got np.float64(-1.0)"), None, "b.rate must be in [0, 1], got -1.0"),
    (ValueError("n must be an integer >= 1, got np.int64(0)"), "a", "a.n must be an integer >= 1, got 0"),
    (ValueError("w[2] must be finite"), None, "a.w[2] must be finite"),
    (ValueError("something\nwent   wrong"), "b", "b: something went wrong"),
])
def test_a_records_value_error_names_the_users_field_without_numpy_reprs(raised, section, message):
    with pytest.raises(ConfigError) as exc, SCHEMA.blame(section):
        raise raised
    assert str(exc.value) == message


def test_budget_refuses_memory_and_work_naming_the_field(monkeypatch):
    with pytest.raises(ConfigError, match=r"^graph.K: the adjacency K\^2 would hold about 1e\+10 float64 values"):
        check([Cost(phase="the adjacency K^2", field="graph.K", memory=1e10)])
    monkeypatch.setattr("fedcheck.run._budget.MAX_WORK", 100)
    with pytest.raises(ConfigError, match=r"^argument --iterations: the loop would take about 1e\+06 operations.*"
                                          r"reduce --iterations$"):
        check([Cost(phase="the loop", field="argument --iterations", steps=1)])
    assert check([Cost(phase="small", field="x", work=50)]) == 50


def test_connected_random_graphs_that_are_improbable_are_refused():
    assert connected_gnm(50, 75, "graph.K").work > 0          # the paper's size: about 12 draws
    with pytest.raises(ConfigError, match="never connected"):
        connected_gnm(10, 5, "graph.mean_degree")
    with pytest.raises(ConfigError, match="too unlikely"):
        connected_gnm(3000, 4500, "graph.K")


def test_summary_digits():
    assert fmt(0.123456789) == "0.1235" and fmt(float("nan")) == "not finite" and fmt(None) == "n/a"
    assert fmt([1.0, 2.0]) == "[1, 2]" and fmt(list(range(10))) == "10 values, 0 .. 9"


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize(("expected", "quiet", "tty", "shown"), [
    (10.0, False, True, True), (10.0, True, True, False), (10.0, False, False, False), (0.5, False, True, False)])
def test_progress_only_on_a_terminal_for_long_runs_and_never_with_quiet(monkeypatch, expected, quiet, tty, shown):
    monkeypatch.setattr("sys.stderr", _Terminal() if tty else io.StringIO())
    assert Progress("fedcheck run x", expected, quiet=quiet).enabled is shown


def test_repeated_undirected_pairs_and_a_probability_above_one_are_refused():
    """Found by an adversarial audit: graph.edges [[0, 1], [1, 0], [1, 2]] was merged silently into two edges, and a
    watts_strogatz_graph p = 1.5 accepted."""
    from fedcheck.run._graphs import check_params
    from fedcheck.run._schema import Field, Schema, Section

    schema = Schema(sections=(Section(name="g", doc="a graph", fields=(
        Field(name="edges", kind="pairs", doc="node pairs"),)),))
    with pytest.raises(ConfigError, match=r"g\.edges\[1\] = \[1, 0\] repeats g\.edges\[0\] = \[0, 1\]"):
        schema.parse({"g": {"edges": [[0, 1], [1, 0], [1, 2]]}})
    assert schema.parse({"g": {"edges": [[0, 1], [1, 2]]}})["g.edges"] == [(0, 1), (1, 2)]
    with pytest.raises(ConfigError, match=r"graph\.params\.p must be a real in \[0, 1\]"):
        check_params("watts_strogatz_graph", {"n": 20, "k": 4, "p": 1.5})
    assert check_params("watts_strogatz_graph", {"n": 20, "k": 4, "p": 1.0})["p"] == 1.0
