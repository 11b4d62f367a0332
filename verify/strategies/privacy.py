"""Hypothesis strategies of the differential-privacy background shared by the papers: Gaussian mechanisms, Renyi orders,
zCDP conversions and compositions (verify/dp).

Part of :mod:`verify.strategies` (import them from there).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

__all__ = ["etas", "gaussian_mechanisms", "geometric_privacy_schedules", "renyi_orders", "zcdp_conversion_points"]


def etas() -> st.SearchStrategy[float]:
    """Squared cluster distances eta >= 0 (zero included), over twelve decades."""
    return st.one_of(st.just(0.0), st.floats(min_value=-6.0, max_value=6.0).map(lambda e: 10.0**e))


@st.composite
def gaussian_mechanisms(draw, *, max_ratio: float = 10.0) -> tuple[float, float]:
    """(sensitivity Delta >= 0, sigma > 0) with Delta / sigma <= max_ratio, sigma in [1e-3, 1e3]."""
    sigma = 10.0 ** draw(st.floats(min_value=-3.0, max_value=3.0))
    ratio = draw(st.one_of(st.just(0.0), st.floats(min_value=1e-4, max_value=max_ratio)))
    return ratio * sigma, sigma


def renyi_orders() -> st.SearchStrategy[float]:
    """Rényi orders alpha in (1, 256]."""
    return st.floats(min_value=1.0, max_value=256.0, exclude_min=True)


@st.composite
def geometric_privacy_schedules(draw) -> tuple[float, float, int, float]:
    """(phi0 > 0, zeta in [0.5, 1], rounds N >= 1, sensitivity > 0) with zeta^-N inside the double range."""
    phi0 = 10.0 ** draw(st.floats(min_value=-6.0, max_value=1.0))
    zeta = draw(st.floats(min_value=0.5, max_value=1.0))
    log_decay = -np.log(zeta)
    max_rounds = int(min(2000, 600.0 / log_decay)) if log_decay > 0 else 2000
    rounds = draw(st.integers(min_value=1, max_value=max_rounds))
    sensitivity = 10.0 ** draw(st.floats(min_value=-3.0, max_value=3.0))
    return phi0, zeta, rounds, sensitivity


@st.composite
def zcdp_conversion_points(draw) -> tuple[float, float]:
    """(rho, delta) with rho in [1e-8, 1e5] (log scale) and delta in [1e-300, 0.999] (log scale, or near 1)."""
    rho = 10.0 ** draw(st.floats(min_value=-8.0, max_value=5.0))
    kind = draw(st.sampled_from(["log", "near_one"]))
    if kind == "log":
        delta = 10.0 ** draw(st.floats(min_value=-300.0, max_value=-1e-3))
    else:
        delta = 1.0 - 10.0 ** draw(st.floats(min_value=-3.0, max_value=-0.3))
    return rho, delta
