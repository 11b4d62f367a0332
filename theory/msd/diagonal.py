r"""Exact diagonal (white-feature) reduction of the seed's mean-square model: D scalar problems.

If every :math:`R_k` is diagonal, the seed's truncated :math:`\mathcal F` (Ch. (4.26), P4 (28)) maps the
diagonals of the :math:`D \times D` blocks of :math:`C` to themselves: in :math:`\mathcal A` and
:math:`\mathcal B` the selection enters through :math:`\Pi \circ (\cdot)` whose diagonal is
:math:`p_m\,\mathrm{diag}(\cdot)`, and :math:`(R_kX + XR_{k'})_{ii} = ([R_k]_{ii} + [R_{k'}]_{ii})X_{ii}`.
Since :math:`\mathrm{MSD}_n = \mathrm{tr}([C_n]_{00})` needs only these diagonals, (S1)/(S2) split into
:math:`D` independent scalar problems (:math:`N_b \times N_b` unknowns each): coordinate :math:`i` is
the :math:`D = 1` model with :math:`E[M] = \Pi = p_m` (the density of the full model),
regressor variances :math:`r_k = [R_k]_{ii}`, noise :math:`\sigma^2_{\eta,k}` and
:math:`C_0 = (w^\star_i)^2\,11^T`. Coordinates with equal :math:`(r_1, \dots, r_K)` collapse into one
problem (the recursion is linear: :math:`C_0` scales with :math:`\sum_i (w^\star_i)^2`, the noise with
the number of coordinates). With :math:`R_k = r_kI` a single problem remains, which makes the
paper's scale (:math:`K = 256`, :math:`D = 200`, :math:`l_{\max} = 10`, :math:`N_b = 2817`) computable.

Not for the exact :math:`\mathcal F` with the Gaussian :math:`\mu^2` term: its
:math:`\mathrm{tr}(R_kX_{kk})R_k` part couples the coordinates (refused with ``ValueError``).

References
----------
.. [1] docs/papers/paofed.md#structured ("diagonal R_k ... (S2) splits into D independent scalar problems").
.. [2] seed 004_180cd372987d137b.txt, Ch. (4.26)-(4.34) lines 1016-1072, P4 (28)-(38) lines 2712-2785.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from theory.msd.expectations import AnalysisMoments, _moments
from theory.msd.structured import msd_steady_state, msd_transient

__all__ = ["ScalarProblem", "diagonal_msd_steady_state", "diagonal_msd_transient", "scalar_problems"]


@dataclass(frozen=True)
class ScalarProblem:
    """One scalar (D = 1) problem of the reduction and the coordinates it stands for."""

    moments: AnalysisMoments
    coordinates: tuple[int, ...]


def scalar_problems(x, model: str = "seed") -> tuple[ScalarProblem, ...]:
    r"""Split an instance with diagonal :math:`R_k` into scalar problems, one per distinct coordinate.

    Raises
    ------
    ValueError
        If some :math:`R_k` has a non-zero off-diagonal entry, or ``model`` is not ``"seed"``.

    Examples
    --------
    White features collapse to one problem:

    >>> import numpy as np
    >>> from theory.msd.instance import PAOFedInstance
    >>> inst = PAOFedInstance(K=2, D=3, l_max=1, m=2, selection="subset", p=np.array([0.9, 0.5]),
    ...                       delta=0.3, alpha=np.array([1.0, 0.5]), sigma2_eta=np.array([0.01, 0.02]),
    ...                       R=np.stack([np.eye(3), 2 * np.eye(3)]), w_star=np.ones(3), mu=0.1)
    >>> [p.coordinates for p in scalar_problems(inst)]
    [(0, 1, 2)]
    """
    m = _moments(x)
    if model != "seed":
        raise ValueError(f"model must be 'seed' for the diagonal reduction (the Gaussian mu^2 term couples "
                         f"coordinates through tr(R_k X_kk) R_k), got {model!r}")
    off = m.R - np.einsum("kii->ki", m.R)[:, :, None] * np.eye(m.D)[None]
    if np.any(off != 0.0):
        k, i, j = np.argwhere(off != 0.0)[0]
        raise ValueError(f"R must be diagonal for the diagonal reduction, got R[{k}][{i}, {j}] = {m.R[k, i, j]!r}")
    diag = np.einsum("kii->ik", m.R)  # (D, K): coordinate i's regressor variances
    groups: dict[tuple[float, ...], list[int]] = {}
    for i in range(m.D):
        groups.setdefault(tuple(diag[i].tolist()), []).append(i)
    out = []
    for key, coords in groups.items():
        w2 = float(np.sum(m.w_star[coords] ** 2))
        scalar = dataclasses.replace(
            m, D=1, Pi=np.array([[m.p_m]]), R=np.array(key).reshape(m.K, 1, 1),
            sigma2_eta=m.sigma2_eta * len(coords), w_star=np.array([np.sqrt(w2)]))
        out.append(ScalarProblem(scalar, tuple(coords)))
    return tuple(out)


def diagonal_msd_steady_state(x, *, mu: float | None = None, method: str = "bicgstab", rtol: float = 1e-12,
                              maxiter: int | None = None) -> tuple[float, float]:
    r"""Steady-state MSD of the seed's :math:`\mathcal F` for diagonal :math:`R_k`, via the scalar problems.

    Returns
    -------
    msd : float
        :math:`\sum_{\text{problems}}\mathrm{tr}[C_\infty]_{00}`.
    residual : float
        The largest relative (S2) residual over the scalar problems.

    Raises
    ------
    ValueError
        As :func:`scalar_problems`, or if a scalar (S2) solve does not converge.
    """
    total, worst = 0.0, 0.0
    for prob in scalar_problems(x):
        sol = msd_steady_state(prob.moments, "seed", mu=mu, method=method, rtol=rtol, maxiter=maxiter)
        total += sol.msd
        worst = max(worst, sol.residual)
    return total, worst


def diagonal_msd_transient(x, n_iter: int, *, mu: float | None = None) -> np.ndarray:
    r"""Transient MSD (S1) of the seed's :math:`\mathcal F` for diagonal :math:`R_k`, via the scalar problems."""
    probs = scalar_problems(x)
    return np.sum([msd_transient(p.moments, n_iter, "seed", mu=mu) for p in probs], axis=0)
