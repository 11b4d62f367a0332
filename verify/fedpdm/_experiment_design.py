r"""The design of FedPDM-DP's Section V experiment for :mod:`verify.harness`.

Replicate :math:`i` fixes the data (a fresh MNIST-shaped synthetic set, or a fresh IID split of scikit-learn's
digits or of the user's MNIST file) and one run seed that every arm uses (common random numbers: the same client
sampling, the same data partition). Arms (:class:`Arm`): FedPDM-DP (:func:`reference_impl.fedpdm.run_fedpdm`)
and the reconstructed baselines FedAvg-DP, FedProx-DP and SCAFFOLD-DP (docs/papers/fedpdm.md#choice-baselines, labelled
reconstructions), each with the DP noise of a total budget :math:`\bar\varepsilon` (``target_total_eps`` on the realised
participation count, docs/papers/fedpdm.md#choice-calibration; the same noise multiplier for every arm) or without noise
("without DP").

Fixed set-up (docs/papers/fedpdm.md#experiments, line 263): :math:`\rho = 10`, :math:`\nu = 10^{-2}`, :math:`\gamma =
10^{-4}`,
:math:`\beta = 10^{-2}`, :math:`\delta = 10^{-5}`; the step :math:`\eta^t = 1/(\rho\sqrt{1+t})` (the fix of
erratum E25 (docs/papers/fedpdm.md#erratum-e25): the literal :math:`1/\sqrt{1+t}` diverges for the first ~25 rounds),
:math:`Q_{\max} = 5` (unstated, erratum E31 (docs/papers/fedpdm.md#erratum-e31)), warm start, disjoint batches,
:math:`G` certified from the data (erratum E32, docs/papers/fedpdm.md#erratum-e32). Curves: the training loss
:math:`F(x_0^t)` of (24) on all training data and the test accuracy (26), every ``eval_every`` rounds.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
from threadpoolctl import threadpool_limits

from reference_impl.fedpdm import (
    BaselineConfig,
    FedPDMConfig,
    accuracy,
    certified_G,
    classification_problem,
    digits_problem,
    global_objective,
    mnist_like_problem,
    run_baseline,
    run_fedpdm,
)
from verify.data_files import load
from verify.harness import Design, replicate_seed

__all__ = ["ALGORITHMS", "DATASETS", "DESIGN", "EPSILON_PAPER", "FIG1_BUDGETS", "ONE_LOOK", "SCALES", "STAGES", "Arm",
           "Scale", "replicate_problem", "simulate_fedpdm"]

EXPERIMENT_KEY = "fedpdm.experiments"
ALGORITHMS = ("fedpdm", "fedavg", "fedprox", "scaffold")
DATASETS = ("synthetic", "digits", "mnist")
#: Fig. 2 (c, d): the paper's total privacy budget epsbar = 7 (line 278).
EPSILON_PAPER = 7.0
#: Fig. 1's budgets (line 268).
FIG1_BUDGETS = (10.0, 20.0, 30.0)
#: Cumulative replicates of the looks per profile (verify.harness: alpha split over the looks).
STAGES = {"ci": (10,), "thorough": (10, 20)}
#: docs/papers/fedpdm.md#experiments (seed line 263), and the erratum E25 (docs/papers/fedpdm.md#erratum-e25) step fix
#: eta0 = 1/rho.
RHO, NU, GAMMA, BETA, DELTA = 10.0, 1e-2, 1e-4, 1e-2, 1e-5
#: FedProx's mu is unreported (docs/papers/fedpdm.md#choice-baselines sweeps {0.01, 0.1, 1}); the middle value.
MU = 0.1


@dataclasses.dataclass(frozen=True, kw_only=True)
class Scale:
    """One profile's size: data set, clients ``N`` (``K`` sampled), samples, batch ``b``, ``Q_max``, rounds ``T``,
    image side (synthetic), the loss/accuracy evaluation period, and the user's file (``mnist``: path, SHA-256)."""

    dataset: str
    N: int
    K: int
    b: int
    Q_max: int
    T: int
    eval_every: int
    n_train: int = 0
    n_test: int = 0
    side: int = 28
    path: str = ""
    sha256: str = ""

    def __post_init__(self) -> None:
        if self.dataset not in DATASETS:
            raise ValueError(f"dataset must be one of {DATASETS}, got {self.dataset!r}")
        for name in ("N", "K", "b", "Q_max", "T", "eval_every", "side"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if self.K > self.N:
            raise ValueError(f"K must be in [1, N = {self.N}], got {self.K}")
        if self.T % self.eval_every:
            raise ValueError(f"eval_every must divide T = {self.T}, got {self.eval_every}")

    @property
    def rounds(self) -> np.ndarray:
        """The rounds at which the curves are evaluated (0, eval_every, ..., T)."""
        return np.arange(0, self.T + 1, self.eval_every)


#: The paper's size for synthetic and MNIST (N = 100, |D_i| = 600, b = 30, K = 5, T = 300); ci scaled down
#: (20 clients of 120 samples, 14 x 14 images, b = 6 so that q = Q_max b/|D_i| = 0.25 as at the paper's size).
SCALES = {
    "synthetic": {
        "ci": Scale(dataset="synthetic", N=20, K=5, b=6, Q_max=5, T=30, eval_every=3, n_train=2400, n_test=600,
                    side=14),
        "thorough": Scale(dataset="synthetic", N=100, K=5, b=30, Q_max=5, T=300, eval_every=20, n_train=60_000,
                          n_test=10_000),
    },
    "digits": {
        "ci": Scale(dataset="digits", N=10, K=3, b=5, Q_max=5, T=30, eval_every=3),
        "thorough": Scale(dataset="digits", N=10, K=3, b=5, Q_max=5, T=300, eval_every=10),
    },
    "mnist": {
        "ci": Scale(dataset="mnist", N=100, K=5, b=30, Q_max=5, T=60, eval_every=10),
        "thorough": Scale(dataset="mnist", N=100, K=5, b=30, Q_max=5, T=300, eval_every=20),
    },
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Arm:
    """One curve: an algorithm, with the DP noise of total budget ``epsilon`` or without noise (``None``)."""

    label: str
    algorithm: str
    epsilon: float | None = EPSILON_PAPER

    def __post_init__(self) -> None:
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {self.algorithm!r}")
        if self.epsilon is not None and not (math.isfinite(self.epsilon) and self.epsilon > 0):
            raise ValueError(f"epsilon must be None or a finite real in (0, inf), got {self.epsilon!r}")

    @property
    def key(self) -> tuple:
        return (self.algorithm, self.epsilon)


def _replicate_seeds(root_seed: int, replicate: int) -> tuple[int, int]:
    """(data seed, run seed) of replicate ``replicate``: streams 0 and 1 of :func:`verify.harness.replicate_seed`
    (the same for every data set)."""
    data, run = (replicate_seed(EXPERIMENT_KEY, root_seed, replicate, stream=s) for s in (0, 1))
    return int(data.generate_state(1)[0]), int(run.generate_state(1)[0])


@functools.lru_cache(maxsize=4)
def replicate_problem(scale: Scale, root_seed: int, replicate: int):
    """The data of replicate ``replicate`` (the same for every arm)."""
    rng = np.random.default_rng(_replicate_seeds(root_seed, replicate)[0])
    if scale.dataset == "synthetic":
        return mnist_like_problem(rng, N=scale.N, n_train=scale.n_train, n_test=scale.n_test, beta=BETA, gamma=GAMMA,
                                  side=scale.side)
    if scale.dataset == "digits":
        return digits_problem(rng, N=scale.N, beta=BETA, gamma=GAMMA)
    if not scale.path:
        raise ValueError("scale.path must name the user's MNIST .npz for dataset = 'mnist'")
    X_train, y_train, X_test, y_test = load("mnist", scale.path)
    return classification_problem(rng, X_train, y_train, X_test, y_test, N=scale.N, beta=BETA, gamma=GAMMA)


def _one_gemm(scale: Scale) -> bool:
    """Evaluate the models by GEMMs over all samples (:func:`reference_impl.fedpdm.global_objective`'s ``one_gemm``):
    at the paper's sizes, not on the small digits."""
    return scale.dataset != "digits"


@functools.lru_cache(maxsize=1)  # a label-sorted copy of the training data; a replicate's arms run in turn
def _pooled(scale: Scale, root_seed: int, replicate: int):
    """The replicate's training data as one client, its samples sorted by label: F of (24) is the same (equal client
    sizes: the mean of the clients' means is the mean over all samples, in any order), evaluated with one GEMM per
    class on contiguous rows (each sample's labelled score only), not one product per client and model. The digits
    (per-model products, :func:`_run`) keep the clients' order: their loss is the old one bit for bit."""
    problem = replicate_problem(scale, root_seed, replicate)
    labels = problem.labels.reshape(-1)
    if not _one_gemm(scale):
        return dataclasses.replace(problem, features=problem.features.reshape(1, -1, problem.n_features),
                                   labels=labels[None], test_features=None, test_labels=None)
    order = np.argsort(labels, kind="stable")
    features, labels = np.take(problem.features.reshape(-1, problem.n_features), order, axis=0), labels[order]
    for array in (features, labels):  # fresh arrays nobody else holds: the instance keeps them without a copy
        array.setflags(write=False)
    return dataclasses.replace(problem, features=features[None], labels=labels[None], test_features=None,
                               test_labels=None)


@functools.lru_cache(maxsize=4)
def _replicate_G(scale: Scale, root_seed: int, replicate: int) -> float:
    """A3's certified G of the replicate's data, computed once for all its arms (each arm would recompute it)."""
    return certified_G(replicate_problem(scale, root_seed, replicate))


def fedpdm_config(scale: Scale, epsilon: float | None, G: float | None = None) -> FedPDMConfig:
    """Algorithm 1's configuration of the experiment (every arm takes its K, b, T, schedule and noise from it);
    ``G``: A3's bound (None: certified from the data by the run)."""
    noise = {"noise": "none"} if epsilon is None else {"noise": "dp", "dp_calibration": "target_total_eps",
                                                       "epsilon_total": epsilon}
    return FedPDMConfig(K=scale.K, rounds=scale.T, batch_size=scale.b, rho=RHO, eta0=1.0 / RHO,
                        eta_schedule="inv_sqrt", nu=NU, Q_max=scale.Q_max, delta=DELTA, G=G, **noise)


def _run(key: tuple, scale: Scale, root_seed: int, replicate: int) -> np.ndarray:
    """``(2, len(scale.rounds))``: training loss and test accuracy of the global model at the evaluation rounds of
    the arm ``key = (algorithm, epsilon)``."""
    algorithm, epsilon = key
    problem = replicate_problem(scale, root_seed, replicate)
    rng = np.random.default_rng(_replicate_seeds(root_seed, replicate)[1])
    config = fedpdm_config(scale, epsilon, _replicate_G(scale, root_seed, replicate))
    observers = {"x0": lambda state: state.x0.copy()}
    if algorithm == "fedpdm":
        run = run_fedpdm(problem, config, rng, observers=observers, in_place=True)
    else:
        run = run_baseline(problem, config, BaselineConfig(name=algorithm, eta_cap=1.0 / RHO, mu=MU), rng,
                           observers=observers)
    x0 = run.observations["x0"][scale.rounds, 0]  # (len(rounds), d)
    # GEMMs for all evaluated models at the paper's size (the loss: one per class on the label-sorted pool, within an
    # ulp of the per-model products there, measured); digits' products are small enough for OpenBLAS's small-matrix
    # kernels, whose last bit differs, and cost nothing.
    one_gemm = _one_gemm(scale)
    loss = global_objective(_pooled(scale, root_seed, replicate), x0, one_gemm=one_gemm)
    acc = accuracy(problem, x0, one_gemm=one_gemm)
    if not np.all(np.isfinite(loss)):
        raise ArithmeticError(f"{algorithm} at epsilon = {epsilon} diverged on replicate {replicate} ({scale.dataset})")
    return np.stack([loss, acc])


def simulate_fedpdm(arms, point, scale: Scale, root_seed: int, replicates) -> list[np.ndarray]:
    """Curves ``(len(replicates), 2, len(scale.rounds))`` (loss, accuracy) of every arm (the design's ``simulate``);
    each arm's curves depend only on the arm, the scale, the root seed and the replicate."""
    with threadpool_limits(limits=1, user_api="blas"):  # one BLAS thread per worker process
        per_replicate = [[_run(arm.key, scale, root_seed, i) for arm in arms] for i in replicates]  # data built once
    return [np.stack([runs[j] for runs in per_replicate]) for j in range(len(arms))]


def _readout(name: str, scale: Scale, curves: np.ndarray) -> np.ndarray:
    """``final_loss`` / ``final_accuracy``: at round T; ``mean_loss``: averaged over the evaluation rounds."""
    if name == "final_loss":
        return curves[:, 0, -1]
    if name == "final_accuracy":
        return curves[:, 1, -1]
    if name == "mean_loss":
        return curves[:, 0].mean(axis=-1)
    raise ValueError(f"read-out must be final_loss, final_accuracy or mean_loss, got {name!r}")


def design(dataset: str, stages=STAGES) -> Design:
    """The design of one data set (each is its own arm-store namespace: its claims share the arms and replicates).

    The first claim checked on a data set simulates the first look of every arm the claims on that data set compare
    (``prefetch``), each replicate's arms together: a replicate's data (70,000 images at the paper's size, as dear as
    several arms) is then built once for all the claims, not once per claim."""
    return Design(namespace=f"{EXPERIMENT_KEY}.{dataset}", simulate=simulate_fedpdm, readout=_readout,
                  scales=SCALES[dataset], stages=stages, prefetch={"ci": 1, "thorough": 1},
                  chunk={"ci": 10, "thorough": 5})  # thorough: the first look is two tasks for two worker processes


DESIGN = {name: design(name) for name in DATASETS}
#: The synthetic design with one look of 10 replicates at thorough too, for the claims that cannot be refuted and
#: that 20 replicates cannot confirm at the paper's size (the report's replicates_that_would_decide: 48 to 320).
ONE_LOOK = design("synthetic", stages={"ci": (10,), "thorough": (10,)})
