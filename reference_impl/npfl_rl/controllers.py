r"""The controllers of :math:`\tau_k` (docs/papers/npfl_rl.md) and the primal map they act on.

DPG (6.13): :math:`t \leftarrow t - \delta\,\frac{d}{da}V_v(P(a))|_{a=t}`; SAC (6.14):
:math:`t \leftarrow t - \delta\,\mathrm{sign}(V_v(P(t+\alpha)) - V_v(P(t)))\,\alpha`,
:math:`\alpha\sim U[-\nu/2,\nu/2]`, sign(0) = 0. Both return the increment before the projection.

References
----------
.. [1] seed 004_180cd372987d137b.txt, thesis Chapter 6, eqs. (6.5)-(6.14), Algorithm 6, lines 1637-1722;
   Publication 7, eqs. (5)-(14), Algorithm 1, lines 3489-3562.
.. [2] docs/papers/npfl_rl.md: the algorithm as fedcheck runs it, errata D1-D4 (docs/papers/npfl_rl.md#erratum-d1 to
       #erratum-d4) and errata D11-D14 (docs/papers/npfl_rl.md#erratum-d11 to #erratum-d14), readings C-npfl-1..9.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reference_impl.npfl_rl.config import NPFLConfig, one_blas_thread
from reference_impl.npfl_rl.data import NPFLProblem
from reference_impl.npfl_rl.primal import (
    Structure,
    build_structure,
    graph_product,
    primal_at,
    validation_value,
    value_derivative,
)

__all__ = ["PrimalMap", "dpg_step", "npfl_primal_map", "sac_step"]


def dpg_step(S: Structure, m, s, t, delta, *, P=None):
    """DPG (6.13): -delta * dV_v(P(a))/da at a = t (before projection); ``P``: P(t) if already computed (the same
    array :func:`~reference_impl.npfl_rl.primal.primal_at` gives, so the step is bit for bit the same)."""
    g, _ = value_derivative(S, m, s, t, P=P)
    return -delta * g


def sac_step(S: Structure, m, s, t, alpha, delta):
    """SAC (6.14): -delta * sign(V_v(P(t + alpha)) - V_v(P(t))) * alpha, sign(0) = 0 (before projection)."""
    dv = validation_value(S, primal_at(S, m, s, t + alpha)) - validation_value(S, primal_at(S, m, s, t))
    return -delta * np.sign(dv) * alpha


@dataclass(frozen=True)
class PrimalMap:
    r"""The map :math:`a \mapsto P_k^{(n)}(a)` of every client of one instance at one state.

    Built by :func:`npfl_primal_map` from :math:`w^{(n-1)}, \gamma^{(n-1)}`; arrays have shape (K, ...) and ``a``
    has shape (K,) (complex allowed: complex-step derivatives). The DPG and SAC updates of :func:`run_npfl` are
    these methods.
    """

    structure: Structure
    m: np.ndarray
    s: np.ndarray

    @property
    def c(self) -> np.ndarray:
        return self.structure.c[0]

    @property
    def omega(self) -> np.ndarray:
        return self.structure.omega[0]

    def _a(self, a):
        return np.broadcast_to(np.asarray(a), self.c.shape)[None]

    def primal(self, a) -> np.ndarray:
        """:math:`P_k(a_k)`, shape (K, d)."""
        return primal_at(self.structure, self.m[None], self.s[None], self._a(a))[0]

    def value(self, a) -> np.ndarray:
        """:math:`V_v(P_k(a_k))` (6.12), shape (K,)."""
        return validation_value(self.structure, primal_at(self.structure, self.m[None], self.s[None], self._a(a)))[0]

    def derivative(self, a) -> np.ndarray:
        """:math:`\frac{d}{da}V_v(P_k(a))` at :math:`a_k`, shape (K,)."""
        return value_derivative(self.structure, self.m[None], self.s[None], self._a(a))[0][0]

    def dpg_step(self, t, delta) -> np.ndarray:
        """The DPG increment of (6.13) at :math:`t` (before projection)."""
        return dpg_step(self.structure, self.m[None], self.s[None], self._a(t), delta)[0]

    def sac_step(self, t, alpha, delta) -> np.ndarray:
        """The SAC increment of (6.14) at :math:`t` with exploration draw ``alpha`` (before projection)."""
        return sac_step(self.structure, self.m[None], self.s[None], self._a(t), self._a(alpha), delta)[0]


@one_blas_thread
def npfl_primal_map(problem: NPFLProblem, config: NPFLConfig, w, gamma) -> PrimalMap:
    r"""The primal map :math:`P^{(n)}` that iteration :math:`n` builds from :math:`w^{(n-1)}, \gamma^{(n-1)}` (K, d)."""
    S = build_structure((problem,), config)
    w = np.asarray(w, dtype=np.float64)[None]
    gamma = np.asarray(gamma, dtype=np.float64)[None]
    if w.shape != S.b.shape or gamma.shape != S.b.shape:
        raise ValueError(f"w and gamma must have shape (K, d) = {S.b.shape[1:]}, got {w.shape[1:]} and "
                         f"{gamma.shape[1:]}")
    m = graph_product(S.B, w)
    s = 0.5 * config.rho * (S.deg_in[..., None] * w + graph_product(S.A_in, w)) - 0.5 * gamma
    return PrimalMap(structure=S, m=m[0], s=s[0])
