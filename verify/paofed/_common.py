"""Shared pieces of the PAO-Fed analysis checks: citations, instances as plain data, random instances.

Instances travel inside counterexamples (``CheckResult.counterexample``) as plain dicts/lists so that a
report can print them and ``reproduce`` can rebuild them (:func:`instance_to_dict`, :func:`instance_from_dict`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from theory.msd import PAOFedInstance, reference_instance
from theory.msd.expectations import nonempty_group_probability
from verify.records import Citation
from verify.sampling import sampler
from verify.tolerance import GMRES_RTOL as SOLVER_RTOL

__all__ = ["E8_PARAMETERS", "REVIEW_NOTE2_PARAMETERS", "SEED", "SOLVER_RTOL", "cite", "e8_instance",
           "reference_msd", "reference_thresholds", "scale_staleness_weights",
           "instance_from_dict", "instance_space", "instance_to_dict", "reference_radii",
           "review_note2_instance", "spd_matrices"]

SEED = "004_180cd372987d137b.txt"


#: erratum E8 (docs/papers/paofed.md#erratum-e8) (docs/papers/paofed.md#expectations,
#: docs/papers/paofed.md#review-note-4): m = D, alpha_l = 1, p_k = 1, delta = 0.8, l_max = 5, K = 4, D = 5.
E8_PARAMETERS = {"K": 4, "D": 5, "l_max": 5, "m": 5, "p": 1.0, "delta": 0.8, "alpha": 1.0}
#: docs/papers/paofed.md#review-notes 2 (docs/papers/paofed.md): K = 4, D = 2, R_k = I_2, m = D, p_k = 1, delta = 0.01,
#: l_max = 0.
REVIEW_NOTE2_PARAMETERS = {"K": 4, "D": 2, "l_max": 0, "m": 2, "p": 1.0, "delta": 0.01, "alpha": 1.0}


def cite(label: str, equation: str = "", lines: str = "") -> Citation:
    """A citation of the PAO-Fed seed."""
    return Citation(seed=SEED, label=label, equation=equation, lines=lines)


def instance_to_dict(inst: PAOFedInstance) -> dict[str, Any]:
    """Plain-data form of an instance (lists and floats)."""
    return {"K": int(inst.K), "D": int(inst.D), "l_max": int(inst.l_max), "m": int(inst.m),
            "selection": inst.selection, "p": inst.p.tolist(), "delta": float(inst.delta),
            "alpha": inst.alpha.tolist(), "sigma2_eta": inst.sigma2_eta.tolist(), "R": inst.R.tolist(),
            "w_star": inst.w_star.tolist(), "mu": float(inst.mu)}


def instance_from_dict(d: Mapping[str, Any]) -> PAOFedInstance:
    """Inverse of :func:`instance_to_dict` (extra keys are ignored)."""
    return PAOFedInstance(K=int(d["K"]), D=int(d["D"]), l_max=int(d["l_max"]), m=int(d["m"]),
                          selection=str(d["selection"]), p=np.array(d["p"], dtype=float), delta=float(d["delta"]),
                          alpha=np.array(d["alpha"], dtype=float), sigma2_eta=np.array(d["sigma2_eta"], dtype=float),
                          R=np.array(d["R"], dtype=float), w_star=np.array(d["w_star"], dtype=float),
                          mu=float(d["mu"]))


def _reference_R() -> np.ndarray:
    return reference_instance().R


def e8_instance(R: np.ndarray | None = None, mu: float = 0.05) -> PAOFedInstance:
    """The erratum E8 (docs/papers/paofed.md#erratum-e8) configuration with the reference instance's
    R_k (docs/papers/paofed.md#review-note-4 states R_k explicitly)."""
    p = E8_PARAMETERS
    R = _reference_R() if R is None else R
    return PAOFedInstance(K=p["K"], D=p["D"], l_max=p["l_max"], m=p["m"], selection="subset",
                          p=np.full(p["K"], p["p"]), delta=p["delta"], alpha=np.full(p["l_max"] + 1, p["alpha"]),
                          sigma2_eta=np.full(p["K"], 0.01), R=R, w_star=reference_instance().w_star, mu=mu)


def review_note2_instance(mu: float = 0.5) -> PAOFedInstance:
    """docs/papers/paofed.md#review-note-2's instance (1/lambda_max is not necessary for rho(F_exact) < 1)."""
    p = REVIEW_NOTE2_PARAMETERS
    return PAOFedInstance(K=p["K"], D=p["D"], l_max=p["l_max"], m=p["m"], selection="subset",
                          p=np.full(p["K"], p["p"]), delta=p["delta"], alpha=np.ones(1),
                          sigma2_eta=np.full(p["K"], 0.01), R=np.stack([np.eye(p["D"])] * p["K"]),
                          w_star=np.ones(p["D"]), mu=mu)


def spd_matrices(rng: np.random.Generator, K: int, D: int, lo: float = 0.2, hi: float = 2.0) -> np.ndarray:
    """K random symmetric positive definite D x D matrices with eigenvalues in [lo, hi]."""
    out = []
    for _ in range(K):
        Q, _ = np.linalg.qr(rng.standard_normal((D, D)))
        out.append((Q * rng.uniform(lo, hi, D)) @ Q.T)
    R = np.array(out)
    return 0.5 * (R + R.transpose(0, 2, 1))


def scale_staleness_weights(p, delta: float, alpha, p_m: float) -> np.ndarray:
    r"""Scale :math:`\alpha_{l \ge 1}` down (never up) so that :math:`p_m\sum_l\alpha_lP_l \le 1 - 10^{-9}`.

    :math:`\alpha_0 = 1` and :math:`p_mP_0 \le p_m \le 1` always; only the delayed groups can push
    :math:`E[B_n]` below zero.
    """
    alpha = np.array(alpha, dtype=float)
    P = nonempty_group_probability(np.asarray(p, dtype=float), delta, alpha.size - 1)
    rest = p_m * float(np.sum(alpha[1:] * P[1:]))
    budget = (1.0 - 1e-9) - p_m * P[0]
    if rest > budget and rest > 0.0:
        alpha[1:] *= max(budget, 0.0) / rest
    return alpha


@functools.lru_cache(maxsize=1)
def reference_thresholds() -> dict[str, tuple[float, float]]:
    """Certified brackets (lo, hi), in units of mu, of the reference instance's mean, seed-F and exact-F
    thresholds (cached: the reference table and the theorem checks use them; the functions are pure)."""
    from theory.msd import mean_square_threshold, mean_threshold

    inst = reference_instance()
    out = {}
    for key, fn in (("mean", lambda: mean_threshold(inst)), ("seed", lambda: mean_square_threshold(inst, "seed")),
                    ("exact", lambda: mean_square_threshold(inst, "exact"))):
        b = fn()
        out[key] = (b.lo, b.hi)
    return out


@functools.lru_cache(maxsize=64)
def reference_msd(model: str, mu_times_lambda: float) -> tuple[float, float]:
    """(MSD_inf, (S2) residual) of the reference instance by the structured solver at rtol SOLVER_RTOL (cached)."""
    from theory.msd import msd_steady_state

    sol = msd_steady_state(reference_instance(mu_times_lambda), model, rtol=SOLVER_RTOL)
    return sol.msd, sol.residual


@functools.lru_cache(maxsize=64)
def reference_radii(mu_times_lambda: float) -> dict[str, float]:
    """rho(M), rho(F_seed), rho(F_exact) of the reference instance at mu = mu_times_lambda / lambda_max (cached:
    several checks and figures use the same points; the functions are pure)."""
    from theory.msd import spectral_radius_F, spectral_radius_M

    inst = reference_instance(mu_times_lambda)
    return {"mean": spectral_radius_M(inst), "seed": spectral_radius_F(inst, "seed"),
            "exact": spectral_radius_F(inst, "exact")}


@sampler
def instance_space(draw, *, max_K: int = 3, max_D: int = 3, max_l: int = 2, max_N: int | None = None,
                   nonnegative_server_weight: bool = True, mu_times_lambda: tuple[float, float] = (0.05, 0.4)) -> dict:
    r"""A PAO-Fed analysis instance as plain data (:func:`instance_to_dict` form): the space written once, drawn by
    the checks (``instance_space.sample(rng)``) and by the property tests (``verify.strategies.paofed_instances``).

    K in [2, max_K], l_max in [0, max_l], D in [2, max_D] with N = (1 + K(l_max + 1)) D <= max_N (D is drawn
    from the sizes that fit), m in [1, D], selection law subset / window / bernoulli, p in [0.05, 1], delta in
    [0, 0.9], alpha_0 = 1 and alpha_l in [0, 1], R_k positive definite (eigenvalues in [0.2, 2], rotation from the
    QR factor of a drawn matrix, orthogonal even when that matrix is singular), noise in [0.001, 0.05],
    mu lambda_max in ``mu_times_lambda``. With ``nonnegative_server_weight`` the weights alpha_{l >= 1} are
    scaled down so that p_m sum_l alpha_l P(K_{n,l} nonempty) <= 1 - 1e-9, i.e. E[B_n] >= 0
    (erratum E8 (docs/papers/paofed.md#erratum-e8)'s condition), by construction.
    """
    K = draw.integers(2, max_K)
    L = draw.integers(0, max_l)
    n_blocks = 1 + K * (L + 1)
    top_D = max_D if max_N is None else max(2, min(max_D, max_N // n_blocks))
    D = draw.integers(2, top_D)
    m = draw.integers(1, D)
    p = np.array([draw.uniform(0.05, 1.0) for _ in range(K)])
    delta = draw.uniform(0.0, 0.9)
    alpha = np.array([1.0] + [draw.uniform(0.0, 1.0) for _ in range(L)])
    if nonnegative_server_weight and L > 0:
        pi = (1.0 - delta) * delta ** np.arange(L + 1)
        P = 1.0 - np.prod(1.0 - p[:, None] * pi[None, :], axis=0)  # P(K_{n,l} nonempty)
        rest = (m / D) * float(np.sum(alpha[1:] * P[1:]))
        budget = (1.0 - 1e-9) - (m / D) * P[0]
        if rest > budget and rest > 0.0:
            alpha[1:] *= max(budget, 0.0) / rest
    R = []
    for _ in range(K):
        raw = np.array([draw.uniform(-1.0, 1.0) for _ in range(D * D)]).reshape(D, D)
        Q, _ = np.linalg.qr(raw + 1e-3 * np.eye(D))
        ev = np.array([draw.uniform(0.2, 2.0) for _ in range(D)])
        Rk = (Q * ev) @ Q.T
        R.append((0.5 * (Rk + Rk.T)).tolist())
    lam = float(np.max(np.linalg.eigvalsh(np.array(R))))
    return {"K": K, "D": D, "l_max": L, "m": m, "selection": draw.choice(["subset", "window", "bernoulli"]),
            "p": p.tolist(), "delta": delta, "alpha": alpha.tolist(),
            "sigma2_eta": [draw.uniform(0.001, 0.05) for _ in range(K)], "R": R,
            "w_star": [draw.uniform(-1.0, 1.0) for _ in range(D)],
            "mu": draw.uniform(mu_times_lambda[0], mu_times_lambda[1]) / lam}
