r"""The design of the GTV paper's Table I (Section VI-A-1; the acceptance bands
R2 (docs/papers/gtv.md#review-r2)/R3 (docs/papers/gtv.md#review-r3)) for :mod:`verify.harness`.

Replicate :math:`i` draws one SBM instance of §5.1 (graph, planted :math:`\bar w^{(c)}`, data; seeds from the root
seed and :math:`i` only) and one algorithm seed; every arm of the replicate sees them (common random numbers).
Arms: ``algorithm1`` (nLasso, λ = 1e-2, θ-rescaled steps, stopped by the R4 (docs/papers/gtv.md#review-r4) fixed-point
residual), ``fedavg`` (server FedAvg, 5 local GD steps), ``ifca`` (k = 2 models, model averaging), ``pooled`` (FedAvg's
fixed point) and ``oracle`` (FedAvgC's fixed point). The grid choice ``IFCA initialisation`` (random N(0, I) or
identical models at
0) is the one the paper leaves open that decides IFCA's row; the other arms ignore it (:func:`_arm_key`).

An arm's outcome per replicate is ``[MSE (41), R3 expectation, iterations, converged, MSE curve ...]``: the R3
expectation :math:`\frac14\lVert\bar w^{(1)}-\bar w^{(2)}\rVert^2(1 + d/(N-d))` of the pooled-LS MSE (N pooled
samples) normalises the baselines' read-out, so the band "2.5 - 4.3 at the paper's size" is the ratio band
:data:`R3_RATIO_BAND` at every size; the curve is Algorithm 1's MSE every ``record_every`` iterations (padded
with its final value after it stopped), empty (NaN) for the baselines.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from threadpoolctl import threadpool_limits

from reference_impl.gtv import fedavg, ifca, mse, oracle_clusterwise, pooled_solution, run_algorithm1
from reference_impl.gtv.data import sbm_instance
from theory._validate import positive_int
from verify.harness import Design, replicate_seed
from verify.tolerance import GTV_ALG1_TOL

__all__ = ["ARMS", "DESIGN", "R2_BAND", "R3_EXPECTATION_PAPER", "R3_RATIO_BAND", "SCALES", "Scale",
           "r3_expectation", "simulate_table1"]

#: Shared seed key: every Table I claim sees the same replicates.
EXPERIMENT_KEY = "gtv.experiments.table1"
ARMS = ("algorithm1", "fedavg", "ifca", "pooled", "oracle")
#: R2 (docs/papers/gtv.md#review-r2): acceptance band of Algorithm 1's converged MSE at the paper's size (1.42e-5 is
#: matched in order only).
R2_BAND = (1e-6, 1e-3)
#: R3 (docs/papers/gtv.md#review-r3): the pooled-LS expectation at the paper's size and its acceptance band "about 2.5 -
#: 4.3", as a ratio.
R3_EXPECTATION_PAPER = 3.29
R3_RATIO_BAND = (2.5 / R3_EXPECTATION_PAPER, 4.3 / R3_EXPECTATION_PAPER)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Scale:
    """Instance and run sizes of one profile (the SBM of §5.1: p_in = 0.5, σ = 1e-3, λ = 1e-2, nLasso).

    ``sizes``, ``d``, ``m``, ``p_out``: the SBM; ``theta``: Algorithm 1's step rescaling; ``max_iterations``: its
    cap; ``rounds``: FedAvg's and IFCA's rounds; ``record_every``, ``curve_points``: the MSE curve's grid.
    """

    sizes: tuple[int, ...]
    d: int
    m: int
    p_out: float
    theta: float
    max_iterations: int
    rounds: int
    record_every: int
    curve_points: int

    def __post_init__(self) -> None:
        for name in ("d", "m", "max_iterations", "rounds", "record_every", "curve_points"):
            positive_int(name, getattr(self, name))
        if len(self.sizes) != 2 or min(self.sizes) < 2:
            raise ValueError(f"sizes must be two cluster sizes >= 2 (Table I has two clusters), got {self.sizes!r}")
        if not 0.0 <= self.p_out <= 1.0:
            raise ValueError(f"p_out must be in [0, 1], got {self.p_out!r}")
        if not (np.isfinite(self.theta) and self.theta > 0):
            raise ValueError(f"theta must be a finite real > 0, got {self.theta!r}")

    @property
    def sbm(self) -> dict:
        return {"sizes": self.sizes, "d": self.d, "m": self.m, "p_out": self.p_out, "p_in": 0.5, "noise": 1e-3,
                "lam": 1e-2, "penalty": "l2"}


SCALES = {
    # m_i = 10 < d as in the paper; 2 x 40 nodes keep the expected number of boundary edges (16) in the paper's
    # range of a few dozen (100 at the paper's size).
    "ci": Scale(sizes=(40, 40), d=40, m=10, p_out=0.01, theta=10.0, max_iterations=3000, rounds=100,
                record_every=10, curve_points=60),
    "thorough": Scale(sizes=(100, 100), d=100, m=10, p_out=0.01, theta=10.0, max_iterations=3000, rounds=200,
                      record_every=10, curve_points=60),
}


def r3_expectation(inst, w_true: np.ndarray) -> float:
    r"""R3 (docs/papers/gtv.md#review-r3): :math:`E[\mathrm{MSE}(\text{pooled LS})] = \frac14\lVert\bar w^{(1)}-\bar
    w^{(2)}\rVert^2(1 + d/(N - d))` for two equal clusters, N pooled samples (N > d)."""
    w_bar = np.stack([w_true[inst.clusters == c][0] for c in (0, 1)])
    N, d = int(inst.m.sum()), inst.d
    return float(np.sum((w_bar[0] - w_bar[1]) ** 2) / 4.0 * (1.0 + d / (N - d)))


def _seeds(root_seed: int, replicate: int) -> tuple[np.random.SeedSequence, np.random.SeedSequence]:
    """(data seed, algorithm seed) of replicate ``replicate``: streams 0 and 1 of
    :func:`verify.harness.replicate_seed`."""
    data, algorithm = (replicate_seed(EXPERIMENT_KEY, root_seed, replicate, stream=s) for s in (0, 1))
    return data, algorithm


def _run_arm(arm: str, inst, w_true, algorithm_seed, scale: Scale, ifca_init: str) -> np.ndarray:
    curve = np.full(scale.curve_points, np.nan)
    iterations, converged = 0, 1.0
    if arm == "algorithm1":
        run = run_algorithm1(inst, theta=scale.theta, max_iterations=scale.max_iterations, tol=GTV_ALG1_TOL,
                             record_every=scale.record_every, monitor=lambda w: mse(w, w_true), record_objective=False)
        recorded = run.meta["monitor"][: scale.curve_points]
        curve[: recorded.size] = recorded
        curve[recorded.size:] = mse(run.w, w_true)
        w, iterations, converged = run.w, run.iterations, float(run.converged)
    elif arm == "fedavg":
        w, iterations = fedavg(inst, rounds=scale.rounds), scale.rounds
    elif arm == "ifca":
        w = ifca(inst, np.random.default_rng(algorithm_seed), k=2, rounds=scale.rounds, init=ifca_init)
        iterations = scale.rounds
    elif arm == "pooled":
        w = pooled_solution(inst)
    elif arm == "oracle":
        w = oracle_clusterwise(inst)
    else:
        raise ValueError(f"arm must be one of {ARMS}, got {arm!r}")
    return np.concatenate([[mse(w, w_true), r3_expectation(inst, w_true), iterations, converged], curve])


def simulate_table1(arms, point, scale: Scale, root_seed: int, replicates) -> list[np.ndarray]:
    """Outcomes ``(len(replicates), 4 + curve_points)`` of every arm at ``point`` (the design's ``simulate``)."""
    ifca_init = dict(point).get("IFCA initialisation", "random")
    out = [[] for _ in arms]
    # One BLAS thread: threads only contend on a shared machine, and the oracle's LAPACK solve then rounds the
    # same on every machine (threaded, its last bits depended on the core count).
    with threadpool_limits(limits=1, user_api="blas"):
        for replicate in replicates:
            data_seed, algorithm_seed = _seeds(root_seed, replicate)
            inst, w_true = sbm_instance(np.random.default_rng(data_seed), **scale.sbm)
            for index, arm in enumerate(arms):
                out[index].append(_run_arm(arm, inst, w_true, algorithm_seed, scale, ifca_init))
    return [np.stack(rows) for rows in out]


def _readout(name: str, scale: Scale, outcome: np.ndarray) -> np.ndarray:
    """``log10_mse``, ``r3_ratio`` (MSE over the replicate's R3 (docs/papers/gtv.md#review-r3) expectation) or
    ``iterations``."""
    if name == "log10_mse":
        return np.log10(outcome[:, 0])
    if name == "r3_ratio":
        return outcome[:, 0] / outcome[:, 1]
    if name == "iterations":
        return outcome[:, 2]
    raise ValueError(f"read-out must be one of ('log10_mse', 'r3_ratio', 'iterations'), got {name!r}")


def _arm_key(arm, point, scale, root_seed):
    """Only IFCA depends on the grid point (its initialisation)."""
    return (arm, point) if arm == "ifca" else (arm,)


#: 8, 16 replicates at ci, 8, 16, 24 at the paper's size. The per-look alpha (GTV's family alpha over the looks, in the
#: result's details) is below 2^-8 = 0.0039 for any family of more than four claims, so the bands are decided at 16,
#: not 8; IFCA, which separates the clusters on most but not all replicates, needs more.
DESIGN = Design(namespace=EXPERIMENT_KEY, simulate=simulate_table1, readout=_readout, scales=SCALES,
                stages={"ci": (8, 16), "thorough": (8, 16, 24)}, chunk={"ci": 4, "thorough": 4},
                arm_key=_arm_key)
