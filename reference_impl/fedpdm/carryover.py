r"""FedPDM-DP with kept client state as an affine Gaussian mechanism: the privacy oracle's builder and sampler.

With a linear (or quadratic) loss every upload of Algorithm 1 is affine in the noise and in the data. Fix one client
and one record of its data set. Conditioned on everything released before round :math:`t` (the global models
:math:`x_0`, public and identical for both neighbours), the client's upload :math:`\tilde y_m` at its :math:`m`-th
participation is :math:`\mathcal N(\bar y_m + \Delta_m(\pi), \sigma_m^2 I)`, where :math:`\bar y_m` is what both
neighbours share (a function of the released history) and :math:`\Delta_m(\pi)` depends only on the record's
**inclusion pattern** :math:`\pi` (in which of the client's participations its batches held the record, and at which
local step). Subtracting :math:`\bar y_m` and dividing by :math:`\sigma_m` is a bijection with unit Jacobian shared by
both neighbours, so the privacy loss of the whole run is that of a pair of Gaussian mixtures over the patterns
(:class:`theory.privacy.carryover.GaussianMixturePair`).

The record's effect, along the direction of its gradient difference, follows the two-dimensional state
:math:`(e, \ell) = (\Delta x_i, \Delta\lambda_i/\rho)` of (10a)-(10d): with :math:`a = 1 - \eta(\rho + h)` (:math:`h`
the curvature of a quadratic loss, 0 for a linear one), :math:`b = a^Q` and :math:`k = \eta\rho\sum_{r<Q} a^r`, a
participation maps :math:`e_0 = e` (warm start) or :math:`0` (global start) to :math:`e' = b e_0 + k\ell - u`,
:math:`\ell' = \ell - e'`, and its upload moves by :math:`\Delta y = 2e' - \ell`, where
:math:`u = \eta a^{Q-1-r}\,\text{gap}` if the record is in the batch of local step :math:`r` (disjoint batches: at
most one step, probability :math:`q/Q` each, :math:`q = Q b/|D_i|`) and 0 otherwise. ``carry_state = False`` resets
:math:`(e, \ell)` before every participation: the independent-rounds model of the paper's accountant.

Neighbouring pairs (replace-one, both legal under Assumption 3 with a linear loss):

* ``extremal``: the client's other records all have gradient :math:`-G v`; the record has :math:`(2b - 1)G v` in
  :math:`D` and :math:`-G v` in :math:`D'`. Every batch gradient has norm :math:`\le G`, the batch holding the record
  differs by exactly ``gap`` :math:`= 2G` (the per-step model of (19)), and :math:`D'` behaves as if the record were
  absent: :math:`P` = mixture, :math:`Q = \mathcal N(0, I)`. Without state this is exactly the Poisson-subsampled
  Gaussian pair of the accountant (both directions).
* ``symmetric``: record :math:`G v` against :math:`-G v` (:math:`b = 1`): :math:`P`, :math:`Q` the mixtures shifted
  by :math:`\pm` half of it.

References
----------
.. [1] Li, Huang, Wang, Chi, Quek, "Privacy-Preserving Federated Primal-Dual Learning for Non-Convex Problems with
   Non-Smooth Regularization", Algorithm 1, eqs. (10a)-(10d), (18)-(19), Theorem 2 eq. (20); docs/papers/fedpdm.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from reference_impl.fedpdm._validate import check_choice, check_int, check_real, readonly_array
from reference_impl.fedpdm.config import FedPDMConfig
from theory.privacy.carryover import (
    GaussianMixturePair,
    hockey_stick_bracket,
    hockey_stick_terms,
    mixture_privacy_loss,
    projected_delta_lower_bound,
)
from theory.privacy.history import history_factors_fedpdm
from theory.privacy.sensitivity import sensitivity_fedpdm
from theory.privacy.subsampled import noise_multiplier_fedpdm

__all__ = [
    "NEIGHBOURS",
    "AffineClient",
    "CarryoverDelta",
    "affine_client_from_config",
    "carryover_delta",
    "carryover_delta_lower_bound",
    "carryover_pair",
    "inclusion_options",
    "response_matrix",
    "sample_privacy_losses",
]

NEIGHBOURS = ("extremal", "symmetric")
#: Default cap on the mixture's components (after merging equal means); the Monte-Carlo cost is linear in it.
MAX_COMPONENTS = 2**15


@dataclass(frozen=True, kw_only=True)
class AffineClient:
    r"""One client's participations in the affine regime (linear or quadratic loss, fixed :math:`Q`).

    Attributes
    ----------
    etas : (n,) array
        Step size :math:`\eta` of each of the client's participations, in order.
    Q : int
        Local steps per participation (fixed in advance; rule (11) off).
    rho : float
        Penalty :math:`\rho > 0`.
    q : float
        Probability that a participation's batches hold the record, in (0, 1] (:math:`Q b/|D_i|` for disjoint
        batches); the step is then uniform over the :math:`Q` steps.
    sigmas : (n,) array
        Noise std :math:`\sigma_m > 0` of each upload.
    gap : float
        Difference of the two neighbours' batch gradients when the record's batch is used (:math:`2G` for the
        extremal pair).
    local_start : {"warm", "global"}
    curvature : float
        :math:`h \ge 0` of a quadratic loss along the gradient difference (0: linear loss).
    neighbour : {"extremal", "symmetric"}
    carry_state : bool
        False resets the state difference before every participation (the paper's independent-rounds model).
    """

    etas: np.ndarray
    Q: int
    rho: float
    q: float
    sigmas: np.ndarray
    gap: float
    local_start: str = "warm"
    curvature: float = 0.0
    neighbour: str = "extremal"
    carry_state: bool = True

    def __post_init__(self) -> None:
        etas = np.array(self.etas, dtype=np.float64, ndmin=1)
        sigmas = np.array(self.sigmas, dtype=np.float64, ndmin=1)
        if etas.ndim != 1 or etas.size == 0 or not (np.all(np.isfinite(etas)) and np.all(etas > 0)):
            raise ValueError(f"etas must be a non-empty 1-D array of finite reals > 0, got {self.etas!r}")
        if sigmas.shape != etas.shape or not (np.all(np.isfinite(sigmas)) and np.all(sigmas > 0)):
            raise ValueError(f"sigmas must be finite reals > 0, one per participation ({etas.size}), got "
                             f"{self.sigmas!r}")
        check_int("Q", self.Q, 1)
        check_real("rho", self.rho, 0.0, lower_open=True)
        check_real("q", self.q, 0.0, 1.0, lower_open=True)
        check_real("gap", self.gap, 0.0)
        check_real("curvature", self.curvature, 0.0)
        check_choice("local_start", self.local_start, ("warm", "global"))
        check_choice("neighbour", self.neighbour, NEIGHBOURS)
        if not isinstance(self.carry_state, bool):
            raise ValueError(f"carry_state must be true or false, got {self.carry_state!r}")
        object.__setattr__(self, "etas", readonly_array(etas))
        object.__setattr__(self, "sigmas", readonly_array(sigmas))

    @property
    def n(self) -> int:
        """Number of participations."""
        return int(self.etas.size)


def _step_constants(client: AffineClient) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per participation: a = 1 - eta (rho + h), b = a^Q, k = eta rho sum_{r<Q} a^r."""
    a = 1.0 - client.etas * (client.rho + client.curvature)
    powers = a[:, None] ** np.arange(client.Q)
    b = a ** client.Q
    k = client.etas * client.rho * powers.sum(axis=1)
    if not (np.all(np.isfinite(b)) and np.all(np.isfinite(k))):
        raise ValueError("|1 - eta (rho + curvature)|^Q overflows the double range")
    return a, b, k


def response_matrix(client: AffineClient) -> np.ndarray:
    r"""``C[m, j]``: the move of upload :math:`m` per unit impulse :math:`u_j` of participation :math:`j`.

    Lower triangular with diagonal :math:`-2`; the last row equals
    :func:`theory.privacy.history.history_coefficients_fedpdm` for a linear loss. ``carry_state = False`` keeps the
    diagonal only.
    """
    _, b, k = _step_constants(client)
    n = client.n
    e = np.zeros(n)  # state difference (e, l) after each participation, one column per impulse source j
    ell = np.zeros(n)
    out = np.zeros((n, n))
    for m in range(n):
        if not client.carry_state:
            e[:], ell[:] = 0.0, 0.0
        start = e if client.local_start == "warm" else np.zeros(n)
        impulse = np.zeros(n)
        impulse[m] = 1.0
        e_new = b[m] * start + k[m] * ell - impulse
        out[m] = 2.0 * e_new - ell
        ell = ell - e_new
        e = e_new
    return out


def inclusion_options(client: AffineClient) -> tuple[np.ndarray, np.ndarray]:
    r"""``(u, p)`` of shape ``(n, Q + 1)``: option 0 is "not in the batches" (:math:`u = 0`, :math:`1 - q`), option
    :math:`r + 1` is "in the batch of local step :math:`r`" (:math:`u = \eta a^{Q-1-r}\,\text{gap}`, :math:`q/Q`)."""
    a, _, _ = _step_constants(client)
    Q = client.Q
    u = np.zeros((client.n, Q + 1))
    u[:, 1:] = client.etas[:, None] * a[:, None] ** (Q - 1 - np.arange(Q)) * client.gap
    p = np.empty((client.n, Q + 1))
    p[:, 0] = 1.0 - client.q
    p[:, 1:] = client.q / Q
    return u, p


def carryover_pair(client: AffineClient, *, max_components: int = MAX_COMPONENTS) -> GaussianMixturePair:
    r"""The pair of Gaussian mixtures of the client's noise-standardised uploads under the two neighbours.

    Patterns are enumerated participation by participation; components with equal means (e.g. every step but the
    last when :math:`a = 0`) are merged exactly (``numpy.unique`` on the mean vectors), so the mixture has at most
    :math:`(Q+1)^n` components. Raises ValueError when it would exceed ``max_components``.
    """
    check_int("max_components", max_components, 1)
    C = response_matrix(client)
    u, p = inclusion_options(client)
    means = np.zeros((1, client.n))
    weights = np.ones(1)
    for j in range(client.n):
        keep = p[j] > 0.0
        shift = u[j, keep][:, None] * C[:, j][None, :]  # (options, n)
        if means.shape[0] * shift.shape[0] > 4 * max_components:
            raise ValueError(f"the mixture needs more than max_components = {max_components} components after "
                             f"participation {j + 1} of {client.n} (Q = {client.Q}); use fewer rounds or Q")
        means = (means[:, None, :] + shift[None, :, :]).reshape(-1, client.n)
        weights = (weights[:, None] * p[j, keep][None, :]).ravel()
        means, inverse = np.unique(means, axis=0, return_inverse=True)
        weights = np.bincount(inverse.ravel(), weights=weights, minlength=means.shape[0])
        if means.shape[0] > max_components:
            raise ValueError(f"the mixture has {means.shape[0]} components after participation {j + 1} of {client.n},"
                             f" more than max_components = {max_components}")
    weights = weights / math.fsum(weights)
    scaled = means / client.sigmas[None, :]
    if client.neighbour == "extremal":
        return GaussianMixturePair(weights_p=weights, means_p=scaled, weights_q=[1.0], means_q=np.zeros((1, client.n)))
    return GaussianMixturePair(weights_p=weights, means_p=0.5 * scaled, weights_q=weights, means_q=-0.5 * scaled)


def affine_client_from_config(config: FedPDMConfig, rounds, *, n_records: int, G: float, z: float | None = None,
                              gap: float | None = None, curvature: float = 0.0, neighbour: str = "extremal",
                              carry_state: bool = True) -> AffineClient:
    r"""The :class:`AffineClient` of one client of a FedPDM-DP configuration that takes part in ``rounds``.

    Step sizes :math:`\eta^t` of the configuration's schedule at those rounds, :math:`Q = Q_{\max}` (needs
    ``nu = 0``: rule (11) would make :math:`Q` data dependent, and ``batch_rule = "disjoint"``),
    :math:`q = Q_{\max} b/|D_i|` with :math:`|D_i|` = ``n_records``, and the noise of the configuration:
    ``noise = "dp"``: :math:`\sigma_m = z\,s_m` (``sensitivity_model = "eq19"``) or :math:`z\,\kappa_m s_m`
    (``"history"``, :math:`\kappa_m` of the client's own participations), :math:`s_m` = (19) with ``G``; ``z`` given or
    (18) for ``per_round_eps``; ``noise = "fixed"``: ``sigma``. ``gap`` defaults to :math:`2G` (the extremal pair).
    """
    check_int("n_records", n_records, 1)
    G = check_real("G", G, 0.0, lower_open=True)
    if config.nu != 0.0:
        raise ValueError(f"nu must be 0 for the affine oracle (rule (11) makes Q data dependent), got {config.nu!r}")
    if config.batch_rule != "disjoint":
        raise ValueError(f"batch_rule must be 'disjoint' for the affine oracle, got {config.batch_rule!r}")
    if config.Q_max * config.batch_size > n_records:
        raise ValueError(f"Q_max * batch_size must be <= n_records = {n_records}, got "
                         f"{config.Q_max * config.batch_size}")
    rounds = np.array(rounds, ndmin=1)
    if rounds.ndim != 1 or rounds.size == 0 or not np.issubdtype(rounds.dtype, np.integer) or np.any(rounds < 0) or (
            np.any(np.diff(rounds) <= 0)):
        raise ValueError(f"rounds must be increasing integers >= 0, got {rounds.tolist()!r}")
    etas = np.array([config.eta(int(t)) for t in rounds])
    Q = config.Q_max
    if config.noise == "none":
        raise ValueError("noise must be 'dp' or 'fixed' (noise = 'none' releases the uploads exactly)")
    if config.noise == "fixed":
        if config.sigma <= 0.0:
            raise ValueError(f"sigma must be > 0 with noise = 'fixed', got {config.sigma!r}")
        sigmas = np.full(etas.size, config.sigma)
    else:
        if z is None:
            if config.dp_calibration != "per_round_eps":
                raise ValueError("z must be given unless dp_calibration = 'per_round_eps' (it depends on the schedule)")
            z = noise_multiplier_fedpdm(config.epsilon, config.delta)
        z = check_real("z", z, 0.0, lower_open=True)
        s = np.array([sensitivity_fedpdm(float(e), config.rho, Q, G) for e in etas])
        kappa = (history_factors_fedpdm(etas, [Q] * etas.size, config.rho, local_start=config.local_start)
                 if config.sensitivity_model == "history" else np.ones(etas.size))
        sigmas = z * s * kappa
    return AffineClient(etas=etas, Q=Q, rho=config.rho, q=Q * config.batch_size / n_records, sigmas=sigmas,
                        gap=2.0 * G if gap is None else gap, local_start=config.local_start, curvature=curvature,
                        neighbour=neighbour, carry_state=carry_state)


def sample_privacy_losses(pair: GaussianMixturePair, rng: np.random.Generator, samples: int, *,
                          chunk: int = 50_000) -> np.ndarray:
    r"""``samples`` draws of the privacy loss :math:`L(Y) = \ln p(Y) - \ln q(Y)` with :math:`Y \sim P`."""
    check_int("samples", samples, 1)
    check_int("chunk", chunk, 1)
    out = np.empty(samples)
    p = pair.weights_p / pair.weights_p.sum()
    for start in range(0, samples, chunk):
        m = min(chunk, samples - start)
        k = rng.choice(p.size, size=m, p=p)
        y = pair.means_p[k] + rng.standard_normal((m, pair.T))
        out[start:start + m] = mixture_privacy_loss(pair, y)
    return out


@dataclass(frozen=True, kw_only=True)
class CarryoverDelta:
    r"""Certified brackets of the real :math:`\delta(\varepsilon) = \max(\delta_{P\Vert Q}, \delta_{Q\Vert P})`.

    ``lower``/``estimate``/``upper`` are over both directions (``forward`` = :math:`P\Vert Q`, ``backward`` =
    :math:`Q\Vert P`, each ``(3, len(epsilons))``); all brackets hold together with probability at least
    :math:`1 - \alpha` (``alpha`` split over the ``2 len(epsilons)`` brackets).
    """

    epsilons: np.ndarray
    lower: np.ndarray
    estimate: np.ndarray
    upper: np.ndarray
    forward: np.ndarray
    backward: np.ndarray
    samples: int
    alpha: float

    def to_dict(self) -> dict:
        return {"epsilons": self.epsilons.tolist(), "lower": self.lower.tolist(), "estimate": self.estimate.tolist(),
                "upper": self.upper.tolist(), "samples_per_direction": self.samples, "alpha": self.alpha}


def carryover_delta(pair: GaussianMixturePair, epsilons, rng: np.random.Generator, *, samples: int = 200_000,
                    alpha: float = 1e-3) -> CarryoverDelta:
    r"""The real :math:`\delta(\varepsilon)` of the pair, both directions, by Monte Carlo of the privacy loss.

    ``samples`` draws per direction (the same draws serve every :math:`\varepsilon`); each of the
    ``2 len(epsilons)`` brackets (:func:`theory.privacy.carryover.hockey_stick_bracket`) is taken at
    ``alpha / (2 len(epsilons))``, so all hold together with probability at least :math:`1 - \alpha`.
    """
    eps = np.array(epsilons, dtype=np.float64, ndmin=1)
    if eps.ndim != 1 or eps.size == 0 or not (np.all(np.isfinite(eps)) and np.all(eps >= 0)):
        raise ValueError(f"epsilons must be finite reals >= 0, got {epsilons!r}")
    alpha = check_real("alpha", alpha, 0.0, 1.0, lower_open=True, upper_open=True)
    each = alpha / (2 * eps.size)
    brackets = []
    for direction in (pair, pair.swapped()):
        losses = sample_privacy_losses(direction, rng, samples)
        brackets.append(np.array([hockey_stick_bracket(hockey_stick_terms(losses, float(e)), each) for e in eps]).T)
    fwd, bwd = brackets
    return CarryoverDelta(epsilons=readonly_array(eps), lower=readonly_array(np.maximum(fwd[0], bwd[0])),
                          estimate=readonly_array(np.maximum(fwd[1], bwd[1])),
                          upper=readonly_array(np.maximum(fwd[2], bwd[2])), forward=readonly_array(fwd),
                          backward=readonly_array(bwd), samples=int(samples), alpha=float(alpha))


def carryover_delta_lower_bound(pair: GaussianMixturePair, epsilon: float, *, coordinates: bool = False) -> float:
    r"""Deterministic certified lower bound on the real :math:`\delta(\varepsilon)`: the best 1-D projection.

    Directions tried, for both directions of the pair: the difference of the mixtures' means and the mean of the
    heaviest-shift component minus :math:`Q`'s mean (and every coordinate if ``coordinates``); each gives a valid lower
    bound (:func:`theory.privacy.carryover.projected_delta_lower_bound`). Sharp when one inclusion dominates the
    leak (strong carry-over); far below the real value when many rounds leak comparably.
    """
    best = 0.0
    for p in (pair, pair.swapped()):
        base = p.weights_q @ p.means_q
        heaviest = p.means_p[int(np.argmax(np.linalg.norm(p.means_p, axis=1)))]
        directions = [p.weights_p @ p.means_p - base, heaviest - base]
        if coordinates:
            directions += list(np.eye(pair.T))
        for w in directions:
            if np.any(w) and np.all(np.isfinite(w)):
                best = max(best, projected_delta_lower_bound(p, epsilon, w))
    return best
