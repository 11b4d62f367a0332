r"""The design of the GTV paper's handwritten-digits experiment (§5.4; seed L594-635) for :mod:`verify.harness`:
:data:`DESIGN` two clusters (Figs. 5-6), :data:`DESIGN_FIVE` the five clusters of Table II (Fig. 7).

Replicate :math:`i` draws one :func:`reference_impl.gtv.data.digits_split` (which images each node holds, its
train / validation parts, each cluster's held-out test pool, the graph from the training parts) and one seed for
IFCA's initial models; every arm of the replicate sees them (common random numbers). Arms:

* ``algorithm1``: Algorithm 1 (nLasso, the seed's steps θ = 1, R = 50 iterations as in the paper) at every λ of
  the scale's grid; the reported model is the λ with the lowest validation cross-entropy (the paper's loss; the
  validation accuracy on 4 images per node ties between λ values), its accuracy is read on the test pool. All λ
  run in one call on the disjoint union of λ-scaled copies of the graph (:func:`algorithm1_lambda_path`);
* ``local``: λ = 0, every node's own ridge-logistic minimiser (Fig. 5's "independent local training");
* ``pooled``: λ → ∞, one ridge-logistic model on all training parts (Fig. 5's pooled extreme; FedAvg's fixed
  point, docs/papers/gtv.md#choice-baselines);
* ``ifca``: IFCA [19] with k = number of clusters, model averaging, 5 local GD steps per round, R rounds;
* ``oracle``: one model per true cluster (FedAvgC's fixed point).

Outcome per replicate: ``[test accuracy (%), validation accuracy (%), λ chosen, test-accuracy curve]`` (the
curve every ``record_every`` iterations / rounds, constant for the closed-form arms); Algorithm 1 appends the
test-accuracy curve of every λ of the grid (Fig. 5). Read-outs ``test_accuracy`` and ``mean_test_accuracy``
(the curve's mean after the start: Fig. 6's convergence rate).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
from threadpoolctl import threadpool_limits

from reference_impl.gtv import run_algorithm1
from reference_impl.gtv.data import digits_split
from theory._validate import positive_int
from theory.gtv import GTVInstance, loss_gradients, loss_values
from theory.logistic import GLMData, ProximalGLM, solve_proximal_newton
from verify.harness import Design, replicate_seed

__all__ = ["ARMS", "DESIGN", "DESIGN_FIVE", "EXPERIMENT_KEY", "IFCA_STEPS", "SCALES", "SCALES_FIVE", "TABLE2_PAIRS",
           "DigitsScale", "algorithm1_lambda_path", "fit_logistic", "ifca_logistic", "node_accuracy", "simulate_digits"]

EXPERIMENT_KEY = "gtv.experiments.digits"
ARMS = ("algorithm1", "local", "pooled", "ifca", "oracle")
#: Certified gradient norm of the closed-form arms' Newton solves (far below what moves a classification).
FIT_GTOL = 1e-9


@dataclasses.dataclass(frozen=True, kw_only=True)
class DigitsScale:
    """Sizes of one profile: ``pairs`` (one digit pair per cluster, Table II), ``nodes_per_cluster``, ``split``
    (train, validation images per node), ``test_per_cluster`` (the held-out test pool), the λ grid ``lams`` searched
    on validation, Algorithm 1's ``iterations`` R and step rescaling ``theta``, IFCA's ``rounds`` and
    ``local_steps``, the ridge ``gamma`` and the curves' ``record_every``."""

    pairs: tuple
    nodes_per_cluster: int
    split: tuple
    test_per_cluster: int
    lams: tuple
    iterations: int = 50
    theta: float = 1.0
    rounds: int = 50
    local_steps: int = 5
    gamma: float = 1e-2
    record_every: int = 5

    def __post_init__(self) -> None:
        for name in ("nodes_per_cluster", "test_per_cluster", "iterations", "rounds", "local_steps", "record_every"):
            positive_int(name, getattr(self, name))
        if self.iterations % self.record_every or self.rounds != self.iterations:
            raise ValueError(f"iterations ({self.iterations}) must equal rounds ({self.rounds}) and be a multiple of "
                             f"record_every ({self.record_every}): the curves share one grid")
        if not self.lams or any(not (np.isfinite(x) and x > 0) for x in self.lams):
            raise ValueError(f"lams must be finite reals > 0, got {self.lams!r}")
        if not (np.isfinite(self.theta) and self.theta > 0 and np.isfinite(self.gamma) and self.gamma > 0):
            raise ValueError(f"theta and gamma must be finite reals > 0, got {self.theta!r}, {self.gamma!r}")

    @property
    def curve_points(self) -> int:
        return self.iterations // self.record_every + 1


#: The paper's size (thorough): 2 clusters x 20 nodes (digits {0, 1} and {2, 3}), 10 train / 4 validation images
#: per node and 80 held-out test images per cluster (all of a pair's ~360); ci: 2 x 6 nodes, 2 lambdas.
SCALES = {
    "ci": DigitsScale(pairs=((0, 1), (2, 3)), nodes_per_cluster=6, split=(10, 4), test_per_cluster=80,
                      lams=(0.1, 1.0)),
    "thorough": DigitsScale(pairs=((0, 1), (2, 3)), nodes_per_cluster=20, split=(10, 4), test_per_cluster=80,
                            lams=(0.01, 0.1, 1.0, 10.0)),
}

#: Fig. 7's five clusters (Table II: digits {0, 1}, ..., {8, 9}), 20 nodes each at the paper's size, the test pool 70
#: images per cluster (pair {8, 9} has 354 images: 20 x 14 + 70 = 350); λ = 0.01 is dropped from the grid (never
#: chosen at two clusters). ci: 5 x 3 nodes.
TABLE2_PAIRS = ((0, 1), (2, 3), (4, 5), (6, 7), (8, 9))
SCALES_FIVE = {
    "ci": DigitsScale(pairs=TABLE2_PAIRS, nodes_per_cluster=3, split=(10, 4), test_per_cluster=70, lams=(0.1, 1.0)),
    "thorough": DigitsScale(pairs=TABLE2_PAIRS, nodes_per_cluster=20, split=(10, 4), test_per_cluster=70,
                            lams=(0.1, 1.0, 10.0)),
}


# --- the arms --------------------------------------------------------------------------------------------------
def node_accuracy(w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    r"""Share of correctly classified images, pooled over the nodes (ACC of §5.4): ``w`` (..., n, d), ``X``
    (n, m, d), ``y`` (n, m) ±1; a margin of exactly 0 counts as an error."""
    margins = np.einsum("nrj,...nj->...nr", X, w)
    return np.mean(margins * y > 0, axis=(-2, -1))


def _log_loss(w, X, y) -> np.ndarray:
    return np.mean(np.logaddexp(0.0, -np.einsum("nrj,...nj->...nr", X, w) * y), axis=(-2, -1))


def fit_logistic(X: np.ndarray, y: np.ndarray, gamma: float, nodes: np.ndarray) -> np.ndarray:
    r"""Minimiser of :math:`\sum_{i\in G}L_i(w)` per group G (ridge logistic, equal :math:`m_i` in a group) by the
    certified damped Newton of :mod:`theory.logistic`: ``X`` (g, r, d) the group's stacked rows, ``y`` (g, r) ±1,
    ``nodes`` (g,) the nodes per group (each contributes :math:`\gamma/2\lVert w\rVert^2` and weight 1/m_i)."""
    nodes = np.asarray(nodes, dtype=np.float64)
    m = X.shape[1] / nodes
    data = GLMData(X=X, y=(y + 1.0) / 2.0, weights=np.broadcast_to((1.0 / m)[:, None], y.shape))
    problem = ProximalGLM(data=data, curvature=gamma * nodes, center=np.zeros((X.shape[0], X.shape[2])))
    return solve_proximal_newton(problem, gtol=FIT_GTOL).w


def algorithm1_lambda_path(inst: GTVInstance, lams, *, theta: float, iterations: int, record_every: int,
                           monitor=None) -> np.ndarray:
    r"""Algorithm 1 for every λ of ``lams`` at once: ``(len(lams), n, d)`` after ``iterations`` steps.

    The GTV objective with parameter λ is the one with λ = 1 and weights :math:`\lambda A_e`, and a disjoint union
    of graphs decouples, so the copies :math:`(V_l, E_l, \lambda_l A)` form one instance; steps, primal and dual
    updates act node / edge-wise, so every copy follows exactly its own run. ``monitor(w)`` gets (L, n, d)."""
    lams = np.asarray(lams, dtype=np.float64)
    L, n = lams.size, inst.n
    edges = (inst.edges[None] + n * np.arange(L)[:, None, None]).reshape(-1, 2)
    union = GTVInstance(n=L * n, edges=edges, A=(lams[:, None] * inst.A[None]).ravel(), X=np.tile(inst.X, (L, 1, 1)),
                        y=np.tile(inst.y, (L, 1)), m=np.tile(inst.m, L), lam=1.0, penalty=inst.penalty,
                        loss=inst.loss, gamma=inst.gamma)
    shape = (L, n, inst.d)

    def record(w):
        monitor(w.reshape(shape))
        return 0.0

    run = run_algorithm1(union, theta=theta, max_iterations=iterations, tol=0.0,
                         record_every=record_every if monitor is not None else 0,
                         monitor=record if monitor is not None else None)
    return run.w.reshape(shape)


#: IFCA's local step as a multiple of :math:`1/\max_i\beta^{(i)}` (the paper does not report it; GD on a
#: :math:`\beta`-smooth loss is stable below :math:`2/\beta`): the grid's values.
IFCA_STEPS = {"1/beta_max": 1.0, "1.9/beta_max": 1.9}


def ifca_logistic(inst: GTVInstance, rng: np.random.Generator, *, k: int, rounds: int, local_steps: int,
                  init: str = "random", monitor=None, step_factor: float = 1.0) -> np.ndarray:
    r"""IFCA [19] (model averaging, docs/papers/gtv.md#choice-baselines) for the logistic loss: k models (``init``:
    ``random`` N(0, I) or ``identical`` at 0); each round node i joins :math:`\arg\min_jL_i(\theta_j)` (ties: the lowest
    j), runs ``local_steps`` GD steps of size ``step_factor`` :math:`/\max_i\beta^{(i)}`, :math:`\beta^{(i)} =
    \lambda_{\max}(X_i^TX_i)/(4m_i) + \gamma`; the server averages per model (weights :math:`m_i`), an empty model is
    kept. Returns :math:`\theta_{\hat j(i)}` per node; ``monitor(w_nodes)`` before the first and after every round."""
    if init not in ("random", "identical"):
        raise ValueError(f"init must be 'random' or 'identical', got {init!r}")
    if not 0.0 < step_factor < 2.0:
        raise ValueError(f"step_factor must be in (0, 2) (stable GD steps), got {step_factor!r}")
    draw = rng.normal(size=(k, inst.d))
    theta = draw if init == "random" else np.zeros((k, inst.d))
    gram = np.matmul(inst.X.transpose(0, 2, 1), inst.X)
    beta = np.linalg.eigvalsh(gram)[:, -1] / (4.0 * np.maximum(inst.m, 1)) + inst.gamma
    lr = step_factor / float(beta.max())
    m = inst.m.astype(np.float64)

    def assign(theta):
        losses = np.stack([loss_values(inst, np.broadcast_to(t, (inst.n, inst.d))) for t in theta], axis=1)
        return np.argmin(losses, axis=1)

    j = assign(theta)       # each round's assignment, computed once: the monitor's and the next round's
    if monitor is not None:
        monitor(theta[j])
    for _ in range(rounds):
        local = theta[j].copy()
        for _ in range(local_steps):
            local -= lr * loss_gradients(inst, local)
        onehot = np.zeros((inst.n, k))
        onehot[np.arange(inst.n), j] = m
        mass = onehot.sum(axis=0)
        theta = np.where((mass > 0)[:, None], (onehot.T @ local) / np.where(mass > 0, mass, 1.0)[:, None], theta)
        j = assign(theta)
        if monitor is not None:
            monitor(theta[j])
    return theta[j]


# --- simulation ------------------------------------------------------------------------------------------------
def _seeds(root_seed: int, replicate: int):
    """(data seed, IFCA seed) of replicate ``replicate``: streams 0 and 1 of :func:`verify.harness.replicate_seed`."""
    return [replicate_seed(EXPERIMENT_KEY, root_seed, replicate, stream=s) for s in (0, 1)]


def _row(test, val, lam, curve):
    return np.concatenate([[100.0 * test, 100.0 * val, lam], 100.0 * np.asarray(curve, dtype=np.float64).ravel()])


def _run_arm(arm, data, scale: DigitsScale, ifca_seed, ifca_init, ifca_step: float = 1.0) -> np.ndarray:
    inst, k = data.instance, len(data.pairs)
    P = scale.curve_points
    if arm == "algorithm1":
        curves = []      # test accuracy of every lambda at each record
        w = algorithm1_lambda_path(inst, scale.lams, theta=scale.theta, iterations=scale.iterations,
                                   record_every=scale.record_every,
                                   monitor=lambda w: curves.append(node_accuracy(w, data.X_test, data.y_test)))
        val = node_accuracy(w, data.X_val, data.y_val)
        best = int(np.argmin(_log_loss(w, data.X_val, data.y_val)))        # the validation cross-entropy
        per_lam = np.array(curves).T                                        # (L, P)
        return np.concatenate([_row(per_lam[best, -1], val[best], scale.lams[best], per_lam[best]),
                               100.0 * per_lam.ravel()])
    if arm == "ifca":
        curve = []
        w = ifca_logistic(inst, np.random.default_rng(ifca_seed), k=k, rounds=scale.rounds,
                          local_steps=scale.local_steps, init=ifca_init, step_factor=ifca_step,
                          monitor=lambda w: curve.append(node_accuracy(w, data.X_test, data.y_test)))
        return _row(node_accuracy(w, data.X_test, data.y_test), node_accuracy(w, data.X_val, data.y_val), np.nan,
                    np.array(curve)[:: scale.record_every])
    n, m = inst.n, inst.X.shape[1]
    if arm == "local":
        w = fit_logistic(inst.X, inst.y, inst.gamma, np.ones(n))
    elif arm == "pooled":
        w = np.broadcast_to(fit_logistic(inst.X.reshape(1, n * m, -1), inst.y.reshape(1, -1), inst.gamma,
                                          np.array([n])), (n, inst.d))
    elif arm == "oracle":
        c = inst.clusters
        per = n // k
        order = np.argsort(c, kind="stable")
        w = fit_logistic(inst.X[order].reshape(k, per * m, -1), inst.y[order].reshape(k, -1), inst.gamma,
                         np.full(k, per))[c]
    else:
        raise ValueError(f"arm must be one of {ARMS}, got {arm!r}")
    test = node_accuracy(w, data.X_test, data.y_test)
    return _row(test, node_accuracy(w, data.X_val, data.y_val), np.nan, np.full(P, test))


@functools.lru_cache(maxsize=64)
def _replicate_data(scale: DigitsScale, root_seed: int, replicate: int):
    """Replicate ``replicate``'s split (the same for every arm and grid point; built once per process for the grid
    points' calls, which would each rebuild it: about half an IFCA arm)."""
    data_seed, _ = _seeds(root_seed, replicate)
    return digits_split(np.random.default_rng(data_seed), pairs=scale.pairs, nodes_per_cluster=scale.nodes_per_cluster,
                        split=scale.split, test_per_cluster=scale.test_per_cluster, gamma=scale.gamma)


def simulate_digits(arms, point, scale: DigitsScale, root_seed: int, replicates) -> list[np.ndarray]:
    """Outcomes of every arm at ``point`` (the design's ``simulate``): one row per replicate."""
    ifca_init = dict(point).get("IFCA initialisation", "random")
    ifca_step = IFCA_STEPS[dict(point).get("IFCA step", "1/beta_max")]
    out = [[] for _ in arms]
    with threadpool_limits(limits=1, user_api="blas"):     # small batched solves: threads only contend
        for replicate in replicates:
            _, ifca_seed = _seeds(root_seed, replicate)
            data = _replicate_data(scale, root_seed, replicate)
            for index, arm in enumerate(arms):
                out[index].append(_run_arm(arm, data, scale, ifca_seed, ifca_init, ifca_step))
    return [np.stack(rows) for rows in out]


def _readout(name: str, scale: DigitsScale, outcome: np.ndarray) -> np.ndarray:
    """``test_accuracy`` (%, pooled over the nodes' test parts, after R iterations / rounds),
    ``validation_accuracy`` (%) or ``mean_test_accuracy`` (%, the test-accuracy curve averaged over the records
    after the start, k = record_every, ..., R: the area under Fig. 6's curve, higher when a method converges
    faster; the start is left out, where Algorithm 1's w = 0 classifies nothing)."""
    if name == "test_accuracy":
        return outcome[:, 0]
    if name == "validation_accuracy":
        return outcome[:, 1]
    if name == "mean_test_accuracy":
        return outcome[:, 4: 3 + scale.curve_points].mean(axis=1)
    raise ValueError(f"read-out must be 'test_accuracy', 'validation_accuracy' or 'mean_test_accuracy', got {name!r}")


def _arm_key(arm, point, scale, root_seed):
    """Only IFCA depends on the grid point (its initialisation and its step)."""
    return (arm, point) if arm == "ifca" else (arm,)


#: ci: 8 replicates in one look (8 of 8 on one side, p = 2^-8, decides at the per-claim alpha of GTV's family, 0.05 over
#: its members, while it has at most 12); the paper's size: 16, 24 (two looks, each at the per-look alpha in the
#: result's details).
DESIGN = Design(namespace=EXPERIMENT_KEY, simulate=simulate_digits, readout=_readout, scales=SCALES,
                stages={"ci": (8,), "thorough": (16, 24)}, chunk={"ci": 4, "thorough": 4}, arm_key=_arm_key)
#: Fig. 7 (five clusters): the same simulation and replicates' seeds at the five-cluster scales.
DESIGN_FIVE = dataclasses.replace(DESIGN, scales=SCALES_FIVE)
