"""The ``run`` plug-ins estimate from the reference code's own cost functions (issue 28), not from constants.

* zCDP-NFL: ``reference_impl.zcdp_nfl.estimate_run_cost`` (and the npz branch keeps the adjacency sparse);
* FedPDM-DP: ``reference_impl.fedpdm.estimate_smoothness_cost`` for the certified smoothness bracket;
* GTV: ``reference_impl.gtv.data.estimate_sbm_cost`` for the SBM;
* NPFL-RL: ``reference_impl.npfl_rl.estimate_run_cost`` for the run (sparse iteration), a refusal naming the size
  that lifts the cost furthest above its default;
* NPFL-RL and zCDP-NFL's Erdos-Renyi loop: ``reference_impl.npfl_rl.data.estimate_graph_draws``, refused near the
  draw cap with the smallest mean degree that works -- which is then accepted (a round trip).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from fedcheck.run import ConfigError, load
from fedcheck.run._budget import DRAW_MARGIN, smallest_mean_degree


def _setup(tmp_path, name, text, **options):
    path = tmp_path / "c.toml"
    path.write_text(text)
    mod, _values, setup = load(name, path, **options)
    return mod, setup


def _phase(costs, words):
    (cost,) = [c for c in costs if words in c.phase]
    return cost


#: (config, iterations, runs): zCDP-NFL sizes; the run's phases must be estimate_run_cost's figures.
ZCDP = [
    ("[graph]\nK = 50\n", 200, 1),
    ("[graph]\nK = 400\nmean_degree = 8.0\n[data]\nP = 3\nM = 20\n", 30, 4),
    ("[graph]\nsource = 'edges'\nedges = [[0, 1], [1, 2], [2, 0], [2, 3]]\n[model]\nobjective = 'ridge'\nclip = 1.0\n",
     10, 2),
]


@pytest.mark.parametrize(("text", "iterations", "runs"), ZCDP)
def test_zcdp_nfl_estimate_is_estimate_run_cost(tmp_path, text, iterations, runs):
    from reference_impl.zcdp_nfl import estimate_run_cost

    mod, s = _setup(tmp_path, "zcdp-nfl", text, iterations=iterations, runs=runs)
    costs = mod.estimate(s)
    E = mod._n_edges(s)
    clip = s.v["model.clip"] is not None
    full = estimate_run_cost(s.K, s.M, s.P, E, iterations=iterations, runs=runs, clip=clip)
    one = estimate_run_cost(s.K, s.M, s.P, E, iterations=1, runs=1, clip=clip)
    assert _phase(costs, "the work iterations").work == full.work
    assert _phase(costs, "the schedules").memory == full.peak_elements
    assert _phase(costs, "the instance and one run").memory == one.peak_elements
    assert all("K^2" not in c.phase for c in costs)  # no dense K x K phase is left


def test_zcdp_nfl_npz_adjacency_is_never_dense(tmp_path, monkeypatch, capsys):
    """The npz branch builds the CSR adjacency from networkx directly (no K x K array on the way)."""
    import networkx as nx

    from fedcheck import cli

    def dense(*_args, **_kwargs):
        raise AssertionError("a dense K x K adjacency was formed")

    monkeypatch.setattr(nx, "to_numpy_array", dense)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 5, 2))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=-1, keepdims=True))
    np.savez(tmp_path / "d.npz", X=X, y=rng.normal(size=(6, 5)))
    (tmp_path / "c.toml").write_text("[data]\nsource = 'npz'\npath = 'd.npz'\n[graph]\nsource = 'edges'\n"
                                     "edges = [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5]]\n")
    assert cli.main(["run", "zcdp-nfl", str(tmp_path / "c.toml"), "--iterations", "3", "--json"]) == 0
    assert '"K": 6' in capsys.readouterr().out


@pytest.mark.parametrize("text", [
    "[problem]\nsource = 'nc'\nN = 10\nn = 60\nd = 20\n",
    "[problem]\nsource = 'digits'\nN = 10\n",
])
def test_fedpdm_estimate_is_estimate_smoothness_cost(tmp_path, text):
    from reference_impl.fedpdm import estimate_smoothness_cost

    algorithm = ("[algorithm]\nK = 5\nrounds = 4\nbatch_size = 5\nrho = 10.0\neta0 = 0.05\nnu = 0.0\nQ_max = 2\n")
    mod, s = _setup(tmp_path, "fedpdm", text + algorithm)
    cost = _phase(mod.estimate(s), "smoothness bracket")
    expected = estimate_smoothness_cost(s.N, s.n, s.n_features, s.n_classes)
    assert (cost.work, cost.memory) == (expected.work, expected.peak_elements)


@pytest.mark.parametrize(("sizes", "p_in", "p_out", "d", "m"), [
    ([100, 100], 0.5, 0.01, 10, 10), ([30, 40, 50], 0.2, 0.05, 3, 7)])
def test_gtv_estimate_is_estimate_sbm_cost(tmp_path, sizes, p_in, p_out, d, m):
    from reference_impl.gtv.data import estimate_sbm_cost

    mod, s = _setup(tmp_path, "gtv", f"[graph]\nsizes = {sizes}\np_in = {p_in}\np_out = {p_out}\n"
                                     f"[data]\nd = {d}\nm = {m}\n")
    costs = mod.estimate(s)
    full = estimate_sbm_cost(sizes, p_in, p_out, d, m)
    graph = estimate_sbm_cost(sizes, p_in, p_out, 1, 1)
    assert _phase(costs, "the SBM graph").memory == graph.peak_elements
    assert _phase(costs, "the SBM's data").memory == full.peak_elements
    assert _phase(costs, "the SBM graph").work + _phase(costs, "the SBM's data").work == pytest.approx(full.work)


#: (plug-in, config with K and mean degree, the field refused, the draw cap)
DRAWS = [
    ("npfl-rl", "[instance]\nK = 4000\n", "instance.K", 10_000),                      # mean degree 6 needs ~2e4 draws
    ("npfl-rl", "[instance]\nK = 1000\nmean_degree = 3.0\n", "instance.mean_degree", 10_000),
    ("zcdp-nfl", "[graph]\nK = 3000\n", "graph.K", 1000),
    ("zcdp-nfl", "[graph]\nK = 200\nmean_degree = 2.5\n", "graph.mean_degree", 1000),
]


@pytest.mark.parametrize(("name", "text", "field", "max_draws"), DRAWS)
def test_improbable_graphs_are_refused_with_a_mean_degree_that_works(tmp_path, name, text, field, max_draws):
    from reference_impl.npfl_rl.data import estimate_graph_draws

    mod, s = _setup(tmp_path, name, text)
    with pytest.raises(ConfigError) as exc:
        mod.estimate(s)
    message = str(exc.value)
    assert message.startswith(f"{field}: ") and "too unlikely" in message, message
    least = float(re.search(r"raise the mean degree to at least ([0-9.e+]+)", message).group(1))
    K = s.K if name == "zcdp-nfl" else s.instance["K"]
    assert estimate_graph_draws(K, least)["expected_draws"] <= max_draws / DRAW_MARGIN
    assert estimate_graph_draws(K, least * 0.99)["expected_draws"] > max_draws / DRAW_MARGIN * 0.9  # not far above
    # the config's only section is the graph's: the suggested degree goes at its end
    mod, s = _setup(tmp_path, name, re.sub(r"mean_degree = [0-9.]+\n", "", text) + f"mean_degree = {least}\n")
    assert any("until connected" in c.phase for c in mod.estimate(s))  # accepted at the suggested degree


@pytest.mark.parametrize(("n", "max_draws"), [(50, 1000), (1000, 10_000), (4000, 10_000), (10**5, 1000)])
def test_smallest_mean_degree_is_the_threshold(n, max_draws):
    from reference_impl.npfl_rl.data import estimate_graph_draws

    least = smallest_mean_degree(n, max_draws)
    assert estimate_graph_draws(n, least)["expected_draws"] <= max_draws / DRAW_MARGIN
    below = float(f"{least - 10 ** (np.floor(np.log10(least)) - 2):.3g}")  # one unit of the third digit less
    assert estimate_graph_draws(n, below)["expected_draws"] > max_draws / DRAW_MARGIN


#: (config, options): NPFL-RL sizes; the run's phases must be estimate_run_cost's figures.
NPFL_SIZES = [
    ("", {}),
    ("[instance]\nK = 500\nd = 8\nmean_degree = 10.0\nD_max = 50\n", {"runs": 3}),
    ("[algorithm]\npolicy = \"sac\"\nepochs = 3\n", {"iterations": 40}),
]


@pytest.mark.parametrize(("text", "options"), NPFL_SIZES)
def test_npfl_rl_estimate_is_estimate_run_cost(tmp_path, text, options):
    from reference_impl.npfl_rl import estimate_run_cost

    mod, s = _setup(tmp_path, "npfl-rl", text, **options)
    K, d, c = s.instance["K"], s.instance["d"], s.instance["mean_degree"]
    pairs = K * (K - 1) // 2
    p = c / (K - 1)
    edges = min(pairs, int(np.ceil(pairs * p + 6 * np.sqrt(pairs * p * (1 - p)))))  # mean + 6 sd
    full = estimate_run_cost(K, d, edges, iterations=s.iterations, runs=s.runs, policy=s.config.policy,
                             epochs=s.config.epochs, D_max=s.instance["D_range"][1])
    costs = mod.estimate(s)
    assert _phase(costs, "estimate_run_cost: K d^2").memory == full.peak_elements
    assert _phase(costs, "the work iterations").work == full.work
    assert not any("K x K" in c.phase for c in costs)  # the iteration is sparse: no dense adjacency phase


#: (config, options, the field a refusal names): each lifts one size far above its default.
NPFL_REFUSED = [
    ("[instance]\nK = 200000\nd = 20\nmean_degree = 12.0\n", {}, "instance.K"),
    ("[instance]\nd = 3000\n", {}, "instance.d"),
    ("[instance]\nD_min = 5\nD_max = 2000000\n", {}, "instance.D_max"),
    ("", {"runs": 5000}, "argument --runs"),
    ("", {"iterations": 10**8}, "argument --iterations"),
    ("[simulation]\niterations = 100000000\n", {}, "simulation.iterations"),
    ("[instance]\nd = 100\n[algorithm]\npolicy = \"sac\"\nepochs = 3000\n", {}, "algorithm.epochs"),
]


@pytest.mark.parametrize(("text", "options", "field"), NPFL_REFUSED)
def test_npfl_rl_over_budget_is_refused_naming_the_driving_field(tmp_path, text, options, field):
    from fedcheck.run._budget import check

    mod, s = _setup(tmp_path, "npfl-rl", text, **options)
    with pytest.raises(ConfigError) as exc:
        check(mod.estimate(s))
    message = str(exc.value)
    bare = field.removeprefix("argument ")
    assert message.startswith(f"{field}: ") and message.endswith(f"reduce {bare}"), message
