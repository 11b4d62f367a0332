"""The analysis model (SIM-A (docs/papers/paofed.md#choice-simulators) of docs/papers/paofed.md#choice-simulators):
independent draws of a, M, b, S and z at every iteration (assumptions I1-I5 (docs/papers/paofed.md#assumption-i1 to
#assumption-i5) of docs/papers/paofed.md#assumptions)."""

from __future__ import annotations

import numpy as np

from reference_impl.paofed.selection import draw_selection
from reference_impl.paofed.setup import AnalysisRun, LinearData, _is_int
from theory.msd.instance import PAOFedInstance

__all__ = ['run_analysis_model', 'time_average']

# --------------------------------------------------------------------------------------------------
# The analysis model (SIM-A, docs/papers/paofed.md#choice-simulators)
# --------------------------------------------------------------------------------------------------


def run_analysis_model(instance: PAOFedInstance, iterations: int, rng: np.random.Generator, *, runs: int = 1,
                       pool: np.ndarray | None = None) -> AnalysisRun:
    r"""SIM-A (docs/papers/paofed.md#choice-simulators) of docs/papers/paofed.md#choice-simulators: the recursion (4.20)
    with every random matrix drawn independently (I1-I5, docs/papers/paofed.md#assumption-i1 to #assumption-i5).

    At every iteration n, independently of everything else: :math:`a_{k,n} \sim \mathrm{Bern}(p_k)`;
    :math:`M_{k,n}` from the instance's selection law; :math:`z_{k,n} \sim N(0, R_k)` (or uniformly from
    ``pool``); :math:`y = z^T w^\star + \eta`; :math:`b_{k,n,l} \sim \mathrm{Bern}(p_k \pi_l)` independent
    over (k, l) and of :math:`a`; a fresh :math:`S_{k,n-l}` for every (k, l). Every client has a sample
    every iteration and updates (P3 if :math:`a = 1`, autonomous P4 otherwise). The server uses the stored
    :math:`w_{k,n+1-l}` for group l (the corrected layout of docs/papers/paofed.md#extended-state,
    docs/papers/paofed.md#erratum-e2); models before time 0 are 0, which is the extended-state initialisation
    :math:`w_{e,0} = 0`. The closed forms with the exact
    :math:`\mu^2` term describe exactly this process.

    Returns the server MSD :math:`\lVert w_n - w^\star\rVert^2` for n = 0..iterations, per run.
    """
    if not isinstance(instance, PAOFedInstance):
        raise TypeError(f"instance must be a PAOFedInstance, got {type(instance).__name__}")
    if not _is_int(iterations, 1):
        raise ValueError(f"iterations must be an integer >= 1, got {iterations!r}")
    if not _is_int(runs, 1):
        raise ValueError(f"runs must be an integer >= 1, got {runs!r}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    K, D, G, m, law = instance.K, instance.D, instance.l_max + 1, instance.m, instance.selection
    data = (LinearData.from_instance(instance) if pool is None
            else LinearData(R=instance.R, w_star=instance.w_star, sigma2_eta=instance.sigma2_eta, pool=pool))
    R = runs
    r_kl = instance.p[:, None] * instance.delay_pmf[None, :]                 # (K, G): P(b_{k,n,l} = 1)
    alpha = instance.alpha
    w = np.zeros((R, D))
    wk = np.zeros((R, K, D))
    hist = np.zeros((R, K, G, D))       # slot (t mod G) holds w_{k,t+1}
    msd = np.empty((iterations + 1, R))
    msd[0] = data.metric(None, w)
    ages = np.arange(G)
    ones = np.ones((R, K))
    for n in range(iterations):
        a = rng.random((R, K)) < instance.p
        M = draw_selection(rng, law, D, m, (R, K))
        z, y = data.draw(None, rng, n, ones)
        start = np.where(a[..., None] & M, w[:, None, :], wk)
        e = y - np.einsum("rkd,rkd->rk", start, z)
        wk = start + instance.mu * z * e[..., None]
        hist[:, :, n % G] = wk
        b = rng.random((R, K, G)) < r_kl
        S = draw_selection(rng, law, D, m, (R, K, G))
        stored = hist[:, :, (n - ages) % G]                                     # [..., l, :] = w_{k,n+1-l}
        counts = b.sum(axis=1)                                                   # (R, G) = |K_{n,l}|
        beta = alpha[None, None, :] * b / np.maximum(counts, 1)[:, None, :]      # (R, K, G)
        w = w + np.einsum("rkl,rkld->rd", beta, np.where(S, stored - w[:, None, None, :], 0.0))
        msd[n + 1] = data.metric(None, w)
    return AnalysisRun(msd=msd, w=w, w_clients=wk)


def time_average(curve: np.ndarray, start: int) -> np.ndarray:
    """Per-run time average of a learning curve (iterations + 1, R) over n = start..end: (R,) i.i.d. samples."""
    curve = np.asarray(curve, dtype=np.float64)
    if curve.ndim != 2:
        raise ValueError(f"curve must be 2-D (iterations + 1, runs), got shape {curve.shape}")
    if not _is_int(start, 0) or start >= curve.shape[0]:
        raise ValueError(f"start must be an integer in [0, {curve.shape[0] - 1}], got {start!r}")
    return curve[start:].mean(axis=0)
