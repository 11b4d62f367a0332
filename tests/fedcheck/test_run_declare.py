"""The run layer's declarations: summary rows, figures, ``applies_when`` and the shared ``--runs``/``--seed``."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from fedcheck.run._api import RUNS_SEED_OPTIONS, runs_seed_options
from fedcheck.run._output import Line, Plot, Row, figures_of, fmt_real, lookup, summary_of
from fedcheck.run._schema import Field, Schema, Section, applies_when

SETUP = SimpleNamespace(runs=3, iterations=10)
DOC = {"status": "ok", "curves": {"loss": [1.0, 0.5, float("nan")], "accuracy": None}, "privacy": {"delta": 1e-5},
       "list": [[1, 2], [3, 4]], "empty": []}


def test_lookup_follows_dotted_paths_and_list_indices():
    assert lookup(DOC, "curves.loss") is DOC["curves"]["loss"]
    assert lookup(DOC, "list.1.0") == 3
    assert lookup(DOC, "curves.accuracy.x", "dflt") == "dflt"


@pytest.mark.parametrize("path", ["nope", "curves.nope", "curves.accuracy.x", "list.7", "status.x"])
def test_lookup_of_a_missing_key_names_the_path(path):
    with pytest.raises(KeyError, match=path.replace(".", r"\.")):
        lookup(DOC, path)


def test_a_row_that_names_a_missing_key_fails_loudly_unless_optional():
    with pytest.raises(KeyError, match="curves.nmsd"):
        Row(label="NMSD", key="curves.nmsd").render(SETUP, DOC)
    assert Row(label="NMSD", key="curves.nmsd", optional=True).render(SETUP, DOC) == []


def test_an_optional_row_is_omitted_when_none_or_empty_and_shown_otherwise():
    assert Row(label="acc", key="curves.accuracy", optional=True).render(SETUP, DOC) == []
    assert Row(label="e", key="empty", optional=True).render(SETUP, DOC) == []
    assert Row(label="s", key="status", optional=True).render(SETUP, DOC) == [("s", "ok")]
    assert Row(label="acc", key="curves.accuracy").render(SETUP, DOC) == [("acc", None)]


def test_row_shows_first_last_and_the_arrow_with_non_finite_named():
    loss = "curves.loss"
    assert Row(label="a", key=loss, show="first").render(SETUP, DOC) == [("a", 1.0)]
    assert math.isnan(Row(label="a", key=loss, show="last").render(SETUP, DOC)[0][1])
    assert Row(label="a", key=loss, show="first->last").render(SETUP, DOC) == [("a", "1 -> not finite")]
    assert Row(label="a", key="empty", show="last").render(SETUP, DOC) == [("a", None)]


def test_row_labels_and_texts_are_format_strings_of_setup_and_document():
    row = Row(label="epsilon at delta = {r[privacy][delta]:g}", text="{s.runs} run(s), status {r[status]}")
    assert row.render(SETUP, DOC) == [("epsilon at delta = 1e-05", "3 run(s), status ok")]
    assert Row(label="x", key="status", when=lambda s, r: s.runs > 5).render(SETUP, DOC) == []


@pytest.mark.parametrize("kwargs", [dict(label="x"), dict(label="x", key="a", text="b"),
                                    dict(label="x", key="a", show="middle")])
def test_row_declarations_are_validated(kwargs):
    with pytest.raises(ValueError):
        Row(**kwargs)


def test_summary_of_renders_title_rows_and_the_escape_hatch():
    plugin = SimpleNamespace(SUMMARY_TITLE="{s.iterations} iterations", SUMMARY=(
        Row(label="status", key="status"), lambda s, r: [("extra", len(r["list"]))]))
    assert summary_of(plugin, SETUP, DOC) == ("10 iterations", [("status", "ok"), ("extra", 2)])
    plugin = SimpleNamespace(SUMMARY_TITLE=lambda s, r: f"T{s.runs}", SUMMARY=())
    assert summary_of(plugin, SETUP, DOC) == ("T3", [])


def test_plot_renders_declared_curves_and_skips_only_optional_missing_ones():
    plot = Plot(name="p", title="loss ({s.runs} run(s))", xlabel="n", ylabel="loss",
                lines=(Line(label="loss", key="curves.loss"), Line(label="b", key="list.0", x="list.1", style="dashed"),
                       Line(label="never", key="nope", when=lambda s, r: False)))
    (spec,) = figures_of(SimpleNamespace(FIGURES=(plot,)), SETUP, DOC)
    assert spec.title == "loss (3 run(s))" and spec.yscale == "linear"
    assert [c.label for c in spec.series] == ["loss", "b"]
    assert spec.series[0].x == (0.0, 1.0, 2.0) and spec.series[1].x == (3.0, 4.0)
    missing = Plot(name="m", title="t", xlabel="x", ylabel="y", lines=(Line(label="l", key="curves.nope"),))
    with pytest.raises(KeyError, match="curves.nope"):
        missing.render(SETUP, DOC)
    assert Plot(name="m", title="t", xlabel="x", ylabel="y", optional=True,
                lines=(Line(label="l", key="empty"),)).render(SETUP, DOC) == []


@pytest.mark.parametrize(("values", "scale", "expected"), [
    ([1.0, 2.0], "log-if-positive", "log"), ([1.0, -2.0], "log-if-positive", "linear"),
    ([None, float("nan")], "log-if-positive", "log"), ([None, float("nan")], "log-if-some-positive", "linear"),
    ([1.0, None], "log-if-some-positive", "log"),
])
def test_plot_yscale_rules(values, scale, expected):
    plot = Plot(name="p", title="t", xlabel="x", ylabel="y", lines=(Line(label="l", key="v"),), yscale=scale)
    assert plot.render(SETUP, {"v": values})[0].yscale == expected


def test_plot_declarations_are_validated():
    with pytest.raises(ValueError, match="yscale"):
        Plot(name="p", title="t", xlabel="x", ylabel="y", lines=(Line(label="l", key="v"),), yscale="symlog")
    with pytest.raises(ValueError, match="lines"):
        Plot(name="p", title="t", xlabel="x", ylabel="y", lines=())


def test_fmt_real():
    assert fmt_real(None) == fmt_real(float("inf")) == "not finite"
    assert fmt_real(0.123456) == "0.1235" and fmt_real(3) == "3"


def test_applies_when_reads_for_people_and_gates_the_field():
    assert applies_when("data.source", "npz")["when"] == "data.source = 'npz'"
    assert applies_when("g.kind", "a", "b")["when"] == "g.kind is 'a' or 'b'"
    assert applies_when("a.flag", True)["when"] == "a.flag = true"
    schema = Schema(sections=(Section(name="s", doc="d", fields=(
        Field(name="kind", kind="choice", choices=("a", "b", "c"), default="a", doc="k"),
        Field(name="x", kind="int", default=1, doc="x", **applies_when("s.kind", "a", "b")))),))
    assert schema.parse({"s": {"kind": "b", "x": 2}})["s.x"] == 2
    assert schema.parse({"s": {"kind": "c"}})["s.x"] is None
    with pytest.raises(Exception, match="s.x does not apply here .it applies only when s.kind is 'a' or 'b'."):
        schema.parse({"s": {"kind": "c", "x": 2}})
    with pytest.raises(ValueError, match="values must be non-empty"):
        applies_when("s.kind")


def test_runs_seed_options():
    runs, seed = RUNS_SEED_OPTIONS
    assert (runs.flag, runs.default, runs.lo, seed.flag, seed.default, seed.lo) == ("--runs", 1, 1, "--seed", 0, 0)
    assert runs_seed_options(seed_doc="first replicate seed")[1].doc == "first replicate seed"


def test_row_label_may_be_computed():
    row = Row(label=lambda s, r: f"status of {s.runs} run(s)", key="status")
    assert row.render(SETUP, DOC) == [("status of 3 run(s)", "ok")]


def test_values_section_gives_bare_names_and_drops_unset_on_request():
    schema = Schema(sections=(Section(name="a", doc="d", fields=(
        Field(name="x", kind="int", default=1, doc="x"), Field(name="y", kind="real", doc="y"))),
        Section(name="ab", doc="d", fields=(Field(name="z", kind="int", default=2, doc="z"),))))
    values = schema.parse({})
    assert values.section("a") == {"x": 1, "y": None} and values.section("ab") == {"z": 2}
    assert values.section("a", drop_none=True) == {"x": 1}


def test_blame_file_names_the_field_and_the_file_and_passes_config_errors():
    from fedcheck._errors import ConfigError
    from fedcheck.run._schema import blame_file

    with pytest.raises(ConfigError, match=r"^data.path 'd.npz': X must be 3-D, got 2$"):
        with blame_file("data.path", "d.npz"):
            raise ValueError("X must be\n 3-D, got np.int64(2)")
    with pytest.raises(ConfigError, match="^already named$"):
        with blame_file("data.path", "d.npz"):
            raise ConfigError("already named")


def test_run_setup_is_validated():
    from fedcheck.run._api import RunSetup

    assert RunSetup(v=None, iterations=3).runs == 1
    with pytest.raises(ValueError, match="runs must be >= 1"):
        RunSetup(v=None, runs=0)


@pytest.mark.parametrize("name", ["pgfl", "paofed", "zcdp-nfl", "gtv", "fedpdm", "npfl-rl"])
def test_every_plugin_declares_its_summary_and_figures(name):
    from fedcheck.run import plugin
    from fedcheck.run._api import RunSetup

    mod = plugin(name)
    assert isinstance(mod.SUMMARY_TITLE, str) or callable(mod.SUMMARY_TITLE)
    assert mod.SUMMARY and all(isinstance(row, Row) or callable(row) for row in mod.SUMMARY)
    assert mod.FIGURES and all(isinstance(plot, Plot) or callable(plot) for plot in mod.FIGURES)
    assert issubclass(mod.Setup, RunSetup)
    assert not hasattr(mod, "summarize") and not hasattr(mod, "figures")
