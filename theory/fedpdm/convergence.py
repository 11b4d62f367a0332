r"""FedPDM-DP Theorem 3 (FedPDM-DP paper, Theorem 3, proof (B.1)-(B.3)): the constants the proof leaves
implicit, reconstructed from it, and the condition on L.

The paper never gives :math:`C_0..C_3`; they are reconstructed from the proof (B.3):


.. math::

    \theta_1 = \min\{N\rho/2,\ (\rho - 4L)(\rho + 2L)/(2\rho)\},\quad
    \theta_2 = \max\{2,\ B_6,\ B_7,\ B_8\},\quad C_0 = \theta_2/\theta_1,

    C_1 = K\theta_2 + C_0 c_K (8/\rho + L/(4L-2)),\quad C_2 = K\theta_2 + C_0 c_K\,16/\rho,\quad C_3 = 8\rho,

with :math:`B_6 = (1 + 4\rho/N)16/\rho^2`, :math:`B_7 = (L^2+\rho^2) + \frac4N(\rho + 4L^2/\rho) + 4L^2/\rho^2`,
:math:`B_8 = L^2/(4L-2) + (1 + 4\rho/N)8/\rho^2` and :math:`c_K = K + 2` (conservative sign reading of Lemma 2,
erratum E19 (docs/papers/fedpdm.md#erratum-e19)) or :math:`2 - K` (literal).

See ``docs/papers/fedpdm.md`` for the reconstruction and the errata it exposes
(erratum E17, docs/papers/fedpdm.md#erratum-e17, erratum E18 (docs/papers/fedpdm.md#erratum-e18)).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["CONDITION_COUNTEREXAMPLE", "L_LOWER_SEED", "theorem3_conditions", "theorem3_constants"]

#: The seed's lower bound on L (lines 221, 343): 2 sqrt 5 - 4, the positive root of L^2 + 8L - 4.
L_LOWER_SEED = 2.0 * math.sqrt(5.0) - 4.0
#: The seed's own endpoint: L = 2 sqrt 5 - 4 with rho = 10 (4L - 2 = -0.111: B_3 and B_8 are negative).
CONDITION_COUNTEREXAMPLE = {"L": L_LOWER_SEED, "rho": 10.0, "N": 10, "K": 10}


def theorem3_constants(L: float, rho: float, N: int, K: int, *, reading: str = "conservative") -> dict:
    r"""The reconstructed constants of docs/papers/fedpdm.md#theorem-3 (seed 001, (B.1)-(B.3), lines 343-372) as a dict.

    Keys: ``B2`` (coefficient :math:`(\rho-4L)(\rho+2L)/(2\rho)`), ``B3_coef`` (:math:`8/\rho + L/(4L-2)`),
    ``B4_coef``, ``B6``, ``B7``, ``B8_coef``, ``theta1``, ``theta2``, ``C0``..``C3``. Division by :math:`4L - 2 = 0`
    or :math:`\theta_1 = 0` gives ``inf``/``nan`` (recorded, never clamped). ``reading``: ``conservative``
    (:math:`c_K = K + 2`) or ``literal`` (:math:`c_K = 2 - K`).
    """
    if reading not in ("conservative", "literal"):
        raise ValueError(f"reading must be 'conservative' or 'literal', got {reading!r}")
    if not (math.isfinite(L) and L > 0):
        raise ValueError(f"L must be a finite real > 0, got {L!r}")
    if not (math.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be a finite real > 0, got {rho!r}")
    if isinstance(N, bool) or not isinstance(N, (int, np.integer)) or N < 1:
        raise ValueError(f"N must be an integer >= 1, got {N!r}")
    if isinstance(K, bool) or not isinstance(K, (int, np.integer)) or not 1 <= K <= N:
        raise ValueError(f"K must be an integer in [1, N = {N}], got {K!r}")
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.float64(L) / np.float64(4.0 * L - 2.0)
        frac2 = np.float64(L * L) / np.float64(4.0 * L - 2.0)
    B2 = (rho - 4.0 * L) * (rho + 2.0 * L) / (2.0 * rho)
    B3 = 8.0 / rho + float(frac)
    B4 = 16.0 / rho
    B6 = (1.0 + 4.0 * rho / N) * 16.0 / rho**2
    B7 = (L * L + rho * rho) + 4.0 / N * (rho + 4.0 * L * L / rho) + 4.0 * L * L / rho**2
    B8 = float(frac2) + (1.0 + 4.0 * rho / N) * 8.0 / rho**2
    theta1 = min(N * rho / 2.0, B2)
    theta2 = max(2.0, B6, B7, B8)
    with np.errstate(divide="ignore", invalid="ignore"):
        C0 = float(np.float64(theta2) / np.float64(theta1)) if theta1 != 0 else math.inf
    c_K = K + 2.0 if reading == "conservative" else 2.0 - K
    return {"B2": B2, "B3_coef": B3, "B4_coef": B4, "B6": B6, "B7": B7, "B8_coef": B8, "theta1": theta1,
            "theta2": theta2, "C0": C0, "C1": K * theta2 + C0 * c_K * B3, "C2": K * theta2 + C0 * c_K * B4,
            "C3": 8.0 * rho}


def theorem3_conditions(L: float, rho: float) -> dict:
    r"""docs/papers/fedpdm.md#theorem-3: ``{"seed": 2 sqrt5 - 4 <= L <= rho/4, "corrected": 1/2 < L < rho/4, "warning":
    str}``."""
    seed = L_LOWER_SEED <= L <= rho / 4.0
    corrected = 0.5 < L < rho / 4.0
    warning = "" if corrected or not seed else ("only the seed's non-strict / 2 sqrt5 - 4 bounds hold "
                                                "(erratum E17, docs/papers/fedpdm.md#erratum-e17, "
                                                "erratum E18 (docs/papers/fedpdm.md#erratum-e18))")
    return {"seed": seed, "corrected": corrected, "warning": warning}
