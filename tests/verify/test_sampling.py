"""The one-sampler-per-claim adapter: numpy and Hypothesis draws read the same space."""

import numpy as np
from hypothesis import given, settings

from verify.budget import examples
from verify.sampling import sampler


@sampler
def _space(draw, *, high: int = 4):
    k = draw.integers(1, high)
    return {"k": k, "x": draw.uniform(-1.0, 2.0), "scale": draw.log10_uniform(-3.0, 0.0),
            "kind": draw.choice(("a", "b")), "kept": draw.subset(list(range(k))), "seed": draw.seed()}


def _in_space(p: dict, high: int) -> bool:
    return (1 <= p["k"] <= high and -1.0 <= p["x"] <= 2.0 and 1e-3 <= p["scale"] <= 1.0
            and p["kind"] in ("a", "b") and set(p["kept"]) <= set(range(p["k"])) and 0 <= p["seed"] < 2**32)


def test_numpy_draws_stay_in_the_space_and_cover_it():
    points = [_space.sample(np.random.default_rng(i), high=3) for i in range(200)]
    assert all(_in_space(p, 3) for p in points)
    assert {p["k"] for p in points} == {1, 2, 3}          # inclusive upper bound, as Hypothesis
    assert {p["kind"] for p in points} == {"a", "b"}


def test_numpy_draws_are_reproducible_from_the_generator():
    assert _space.sample(np.random.default_rng(7)) == _space.sample(np.random.default_rng(7))


@settings(max_examples=examples("some"))
@given(_space.strategy(high=3))
def test_hypothesis_draws_stay_in_the_same_space(p):
    assert _in_space(p, 3)
