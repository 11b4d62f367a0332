"""One sampler per claim: the parameter space written once, drawn by the check and by its Hypothesis test.

A sampler is a plain function ``space(draw, **options) -> params`` written against the small ``Draw``
interface below. ``Sampler.sample(rng)`` draws it with a ``numpy.random.Generator`` (what a claim's check
uses inside ``fedcheck report``); ``Sampler.strategy()`` draws it with Hypothesis (what the claim's property
test uses, through ``verify.strategies``). Both read the same ranges, so the check and its test cannot
disagree on the space they sample.

>>> import numpy as np
>>> @sampler
... def unit_box(draw, *, dim=2):
...     return {"x": [draw.uniform(0.0, 1.0) for _ in range(dim)], "k": draw.integers(1, 3)}
>>> p = unit_box.sample(np.random.default_rng(0))
>>> all(0.0 <= x <= 1.0 for x in p["x"]) and 1 <= p["k"] <= 3
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from hypothesis import strategies as st

__all__ = ["Draw", "HypothesisDraw", "RngDraw", "Sampler", "sampler"]

T = TypeVar("T")


class Draw:
    """The draws a sampler may make; bounds are inclusive, as in Hypothesis."""

    def integers(self, low: int, high: int) -> int:
        raise NotImplementedError

    def uniform(self, low: float, high: float) -> float:
        raise NotImplementedError

    def log10_uniform(self, low_exponent: float, high_exponent: float) -> float:
        """``10**u`` with u uniform in [low_exponent, high_exponent] (a log-uniform scale parameter)."""
        return float(10.0 ** self.uniform(low_exponent, high_exponent))

    def choice(self, options: Sequence[T]) -> T:
        raise NotImplementedError

    def subset(self, options: Sequence[T]) -> list[T]:
        """A sub-list of ``options`` (order kept), each element kept or not."""
        raise NotImplementedError

    def seed(self) -> int:
        """A 32-bit seed for the instance's own generator."""
        return self.integers(0, 2**32 - 1)


class RngDraw(Draw):
    """Draws from a ``numpy.random.Generator`` (the claim's check)."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def integers(self, low: int, high: int) -> int:
        return int(self.rng.integers(low, high + 1))

    def uniform(self, low: float, high: float) -> float:
        return float(self.rng.uniform(low, high))

    def choice(self, options: Sequence[T]) -> T:
        return options[int(self.rng.integers(len(options)))]

    def subset(self, options: Sequence[T]) -> list[T]:
        keep = self.rng.random(len(options)) < 0.5
        return [o for o, k in zip(options, keep, strict=True) if k]


class HypothesisDraw(Draw):
    """Draws through Hypothesis' ``draw`` (the claim's property test); shrinks towards the low ends."""

    def __init__(self, draw: Callable):
        self.draw = draw

    def integers(self, low: int, high: int) -> int:
        return self.draw(st.integers(min_value=low, max_value=high))

    def uniform(self, low: float, high: float) -> float:
        return self.draw(st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False))

    def choice(self, options: Sequence[T]) -> T:
        return self.draw(st.sampled_from(list(options)))

    def subset(self, options: Sequence[T]) -> list[T]:
        keep = self.draw(st.lists(st.booleans(), min_size=len(options), max_size=len(options)))
        return [o for o, k in zip(options, keep, strict=True) if k]


@dataclass(frozen=True)
class Sampler:
    """A parameter space written once (``space(draw, **options)``), drawn by numpy or by Hypothesis."""

    space: Callable[..., Any]

    def __call__(self, draw: Draw, **options) -> Any:
        return self.space(draw, **options)

    def sample(self, rng: np.random.Generator, **options) -> Any:
        """One point drawn with ``rng`` (the check's generator)."""
        return self.space(RngDraw(rng), **options)

    def strategy(self, **options) -> st.SearchStrategy:
        """The same space as a Hypothesis strategy."""
        return st.composite(lambda draw: self.space(HypothesisDraw(draw), **options))()


def sampler(space: Callable[..., Any]) -> Sampler:
    """Decorator: turn ``space(draw, **options)`` into a ``Sampler``."""
    return Sampler(space)
