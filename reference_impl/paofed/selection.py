"""Which model entries a message carries: circshift windows (docs/papers/paofed.md#partial-sharing) and the random laws
of the analysis (docs/papers/paofed.md#mean-square)."""

from __future__ import annotations

import math

import numpy as np

from reference_impl.paofed.setup import AlgorithmConfig, AsyncEnvironment
from theory.msd.instance import SELECTION_LAWS

__all__ = ["Selector", "circshift_window", "draw_selection"]

# --------------------------------------------------------------------------------------------------
# Selections
# --------------------------------------------------------------------------------------------------


def circshift_window(D: int, m: int, starts) -> np.ndarray:
    r"""0/1 masks of the cyclic windows :math:`\{(s + j) \bmod D: j = 0..m-1\}`, shape ``starts.shape + (D,)``.

    ``diag(M_{k,n}) = circshift(diag(M_{1,0}), s)`` with :math:`M_{1,0} = [1_m;
    0_{D-m}]` (docs/papers/paofed.md#partial-sharing; MATLAB circshift = numpy.roll).

    >>> circshift_window(5, 2, np.array([4])).astype(int).tolist()
    [[1, 0, 0, 0, 1]]
    """
    starts = np.asarray(starts)
    return (np.arange(D) - starts[..., None]) % D < m


def draw_selection(rng: np.random.Generator, law: str, D: int, m: int, shape: tuple) -> np.ndarray:
    r"""Random selection masks of shape ``shape + (D,)`` from a law of docs/papers/paofed.md#mean-square.

    ``subset``: a uniform m-subset; ``window``: a cyclic window of length m at a uniform offset;
    ``bernoulli``: i.i.d. entries with probability m/D. :math:`E[\mathrm{diag}\,M] = (m/D) 1` for all three.
    """
    if law == "subset":
        if m == D:
            return np.ones(shape + (D,), dtype=bool)
        u = rng.random(shape + (D,))
        kth = np.partition(u, m - 1, axis=-1)[..., m - 1:m]
        return u <= kth
    if law == "window":
        return circshift_window(D, m, rng.integers(D, size=shape))
    if law == "bernoulli":
        return rng.random(shape + (D,)) < m / D
    raise ValueError(f"law must be one of {', '.join(SELECTION_LAWS)}, got {law!r}")


class Selector:
    """M_{k,n} and S_{k,n} for every run and client (broadcastable to (R, K, D), bool)."""

    def __init__(self, config: AlgorithmConfig, env: AsyncEnvironment, rng: np.random.Generator, runs: int):
        self.config, self.D, self.K, self.R = config, env.D, env.K, runs
        self.m = env.D if config.schedule == "full" else config.m
        if self.m > env.D:
            raise ValueError(f"m must be an integer in [1, D = {env.D}], got {config.m!r}")
        self.shape = (runs, 1 if config.coordinated else env.K)
        self.current = None
        if config.schedule in SELECTION_LAWS:
            self.current = draw_selection(rng, config.schedule, self.D, self.m, self.shape)
        self.clients = np.arange(1, env.K + 1)
        self._windows: dict[int, np.ndarray] = {}
        self._period = self.D // math.gcd(self.m, self.D)
        self._full = np.ones((1, 1, self.D), dtype=bool)   # M = I or S = I (read only: every iteration shares it)
        self._full.flags.writeable = False

    def _window(self, n: int) -> np.ndarray:
        """Circshift masks of iteration n, (1, K or 1, D); periodic in n with period D / gcd(m, D) (cached)."""
        key = n % self._period
        if key not in self._windows:
            starts = np.full(1, self.m * (key + 1)) if self.config.coordinated else self.m * (key + self.clients)
            self._windows[key] = circshift_window(self.D, self.m, starts % self.D)[None]
        return self._windows[key]

    def masks(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        cfg = self.config
        if cfg.schedule == "full":
            return self._full, self._full
        if cfg.schedule == "circshift":
            M = self._window(n)
            S = self._window(n + 1) if cfg.uplink == "next" else M
        else:
            M = self.current
            nxt = draw_selection(rng, cfg.schedule, self.D, self.m, self.shape)
            S = nxt if cfg.uplink == "next" else M
            self.current = nxt
        if cfg.full_downlink:
            M = self._full
        return M, S
