"""Graphs from a configuration: networkx generators whose parameters are checked and whose size is known first.

:data:`GENERATORS` lists the generators a ``[graph]`` section may name, with their parameters (type and range)
and the size of what they build, so the layer can estimate and refuse a graph before networkx draws it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from fedcheck._errors import ConfigError
from fedcheck.run._budget import GRAPH_ELEMENT_WORK, Cost

__all__ = ["GENERATORS", "Generator", "check_params", "generator_cost", "pairs_graph"]


@dataclass(frozen=True, kw_only=True)
class Generator:
    """A networkx generator: whether it takes a seed, its parameters (name -> 'int' | 'real' | 'ints') and
    ``size(params) -> (nodes, edges, work)`` (work: element operations, quadratic for the O(n^2) ones)."""

    seeded: bool
    params: dict[str, str]
    size: Callable[[dict], tuple[float, float, float]]


def _n(p):
    return float(p["n"])


GENERATORS: dict[str, Generator] = {
    "random_regular_graph": Generator(seeded=True, params={"d": "int", "n": "int"},
                                      size=lambda p: (_n(p), _n(p) * p["d"] / 2, _n(p) * p["d"] * 10)),
    "gnm_random_graph": Generator(seeded=True, params={"n": "int", "m": "int"},
                                  size=lambda p: (_n(p), float(p["m"]), _n(p) + p["m"])),
    "gnp_random_graph": Generator(seeded=True, params={"n": "int", "p": "real"},
                                  size=lambda p: (_n(p), _n(p) ** 2 * p["p"] / 2, _n(p) ** 2 / 2)),
    "watts_strogatz_graph": Generator(seeded=True, params={"n": "int", "k": "int", "p": "real"},
                                      size=lambda p: (_n(p), _n(p) * p["k"] / 2, _n(p) * p["k"])),
    "connected_watts_strogatz_graph": Generator(
        seeded=True, params={"n": "int", "k": "int", "p": "real", "tries": "int"},
        size=lambda p: (_n(p), _n(p) * p["k"] / 2, _n(p) * p["k"] * p.get("tries", 100))),
    "barabasi_albert_graph": Generator(seeded=True, params={"n": "int", "m": "int"},
                                       size=lambda p: (_n(p), _n(p) * p["m"], _n(p) * p["m"] * 2)),
    "random_geometric_graph": Generator(seeded=True, params={"n": "int", "radius": "real", "dim": "int"},
                                        size=lambda p: (_n(p), _n(p) ** 2 * min(1.0, p["radius"]) ** p.get("dim", 2),
                                                        _n(p) ** 2)),
    "cycle_graph": Generator(seeded=False, params={"n": "int"}, size=lambda p: (_n(p), _n(p), _n(p))),
    "path_graph": Generator(seeded=False, params={"n": "int"}, size=lambda p: (_n(p), _n(p), _n(p))),
    "complete_graph": Generator(seeded=False, params={"n": "int"},
                                size=lambda p: (_n(p), _n(p) ** 2 / 2, _n(p) ** 2 / 2)),
    "star_graph": Generator(seeded=False, params={"n": "int"}, size=lambda p: (_n(p) + 1, _n(p), _n(p))),
    "circulant_graph": Generator(seeded=False, params={"n": "int", "offsets": "ints"},
                                 size=lambda p: (_n(p), _n(p) * len(p["offsets"]), _n(p) * len(p["offsets"]))),
    "grid_2d_graph": Generator(seeded=False, params={"m": "int", "n": "int"},
                               size=lambda p: (float(p["m"]) * p["n"], 2.0 * p["m"] * p["n"], 4.0 * p["m"] * p["n"])),
}


def check_params(name: str, params: dict, key: str = "graph.params") -> dict:
    """``params`` of generator ``name`` with their types checked (integers >= 0, reals finite >= 0)."""
    spec = GENERATORS[name].params
    unknown = sorted(set(params) - set(spec))
    if unknown:
        raise ConfigError(f"{key}.{unknown[0]} is not a parameter of {name} (allowed: {', '.join(spec)})")
    for pname, kind in spec.items():
        if pname not in params:
            if pname in ("tries", "dim"):
                continue
            raise ConfigError(f"{key}.{pname} must be given for {name} (parameters: {', '.join(spec)})")
        value = params[pname]
        probability = kind == "real" and pname == "p"   # every generator's p is a probability
        ok = {"int": lambda x: isinstance(x, int) and not isinstance(x, bool) and x >= 0,
              "real": lambda x: isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0,
              "ints": lambda x: isinstance(x, list) and bool(x) and all(
                  isinstance(u, int) and not isinstance(u, bool) and u >= 0 for u in x)}[kind](value)
        ok = ok and not (probability and value > 1)
        if not ok:
            allowed = {"int": "an integer >= 0", "real": "a real in [0, 1] (a probability)" if probability else
                       "a finite real >= 0", "ints": "a list of integers >= 0"}[kind]
            from fedcheck.run._schema import _toml_text

            raise ConfigError(f"{key}.{pname} must be {allowed} for {name}, got {_toml_text(value)}"[:200])
    return dict(params)


def generator_cost(name: str, params: dict, field: str = "graph.params") -> tuple[Cost, int]:
    """The cost of building generator ``name``'s graph and its node count."""
    nodes, edges, work = GENERATORS[name].size(params)
    return Cost(phase=f"the graph {name} ({nodes:.3g} nodes, {edges:.3g} edges)", field=field,
                memory=nodes + edges, work=(work + nodes + edges) * GRAPH_ELEMENT_WORK), int(min(nodes, 2**62))


def pairs_graph(edges, n: int | None = None):
    """The networkx graph of an edge list on nodes 0..n-1 (n = largest index + 1 by default)."""
    import networkx as nx

    g = nx.Graph()
    g.add_edges_from(edges)
    g.add_nodes_from(range(n if n is not None else max(max(e) for e in edges) + 1))
    return g
