r"""Simulation of a FedPDM-DP client's uploads for two neighbouring data sets (the evidence of Theorem 1's claims).

The uploads follow the algorithm's own update equations (10a)-(10d) (seed lines 114-120), with a running
first-order forward-error bound (Higham, Ch. 3: :math:`\gamma_k` per rounded operation, propagated through the
affine update with its Lipschitz constants); a comparison holds when the realised norm is within that bound plus
:math:`\gamma` of the closed form's own rounding. Three evaluators, each returning one :class:`Evidence`:

* :func:`evaluate_upload_sensitivity`: constructed per-step gradient differences (adversarial, random, the legal
  one-record linear-loss pair) over a schedule of participations, against a bound (eq. (19) or :math:`\kappa_n s_n`);
* :func:`evaluate_logistic_neighbours`: replace-one neighbours of docs/papers/fedpdm.md#instance-nc logistic instance,
  one round;
* :func:`evaluate_adaptive_q`: one round with the data-dependent :math:`Q` of rule (11), exact divergence of the pair.

The claims are in :mod:`verify.fedpdm.theorem1_sensitivity` and :mod:`verify.fedpdm.theorem1_history`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from scipy import special

from theory.privacy.gaussian_pair import gaussian_pair_delta
from theory.privacy.history import history_coefficients_fedpdm, history_factors_fedpdm
from theory.privacy.sensitivity import sensitivity_fedpdm
from theory.privacy.subsampled import noise_multiplier_fedpdm
from verify.records import Evidence
from verify.tolerance import gamma

__all__ = [
    "ADAPTIVE_Q_PAPER_POINT",
    "adaptive_round",
    "evaluate_adaptive_q",
    "evaluate_logistic_neighbours",
    "evaluate_upload_sensitivity",
    "history_sensitivity_bound",
    "paper_sensitivity_bound",
    "simulate_uploads",
]

_G6, _G3 = gamma(6), gamma(3)


# --------------------------------------------------------------------------------------------------
# Simulation of a client's uploads, (10a)-(10d), with a running forward-error bound


def simulate_uploads(x_init, lam_init, x0s, etas, Qs, rho: float, gradient: Callable, *, local_start: str,
                     lipschitz: float = 0.0, copies: int = 2) -> tuple[np.ndarray, np.ndarray]:
    r"""Uploads :math:`y_i^{t+1}` of a client over its participations, for a batch of data sets at once.

    Parameters
    ----------
    x_init, lam_init : numpy.ndarray
        Initial :math:`x_i`, :math:`\lambda_i`, shape ``(d,)`` (shared by the data sets) or ``(copies, d)``.
    x0s : numpy.ndarray
        The public global model at each participation, shape ``(n, d)`` (the same for all data sets:
        the released history is conditioned on).
    etas, Qs : sequences
        Step size and number of local steps of each participation.
    rho : float
        Penalty.
    gradient : callable
        ``gradient(j, r, x) -> (g, g_err)``: mini-batch gradients of every data set at step ``r`` of
        participation ``j`` at the iterates ``x`` (shape ``(m, d)``), and a coordinatewise bound on
        their rounding error.
    copies : int
        Number of data sets simulated side by side (the leading axis, ``m``).
    local_start : {"warm", "global"}
        :math:`x_i^{t,0} = x_i^t` or :math:`x_0^t`.
    lipschitz : float
        Lipschitz constant of ``gradient`` in ``x`` (0 for the per-step model), used to propagate errors.

    Returns
    -------
    (ys, errors) : tuple of numpy.ndarray
        Shape ``(n, m, d)``: the uploads and first-order bounds on their absolute rounding errors.
    """
    d = np.shape(x_init)[-1]
    x = np.array(np.broadcast_to(x_init, (copies, d)), dtype=np.float64)
    lam = np.array(np.broadcast_to(lam_init, (copies, d)), dtype=np.float64)
    ex = np.zeros_like(x)
    elam = np.zeros_like(x)
    ys, errors = [], []
    for j, (eta, Q) in enumerate(zip(etas, Qs, strict=True)):
        x0 = np.asarray(x0s[j], dtype=np.float64)
        if local_start == "global":
            x = np.broadcast_to(x0, x.shape).copy()
            ex = np.zeros_like(x)
        contraction = abs(1.0 - eta * rho) + eta * lipschitz
        for r in range(int(Q)):
            g, g_err = gradient(j, r, x)
            scale = np.abs(x) + eta * (np.abs(g) + np.abs(lam) + rho * np.abs(x) + rho * np.abs(x0))
            x = x - eta * ((g - lam) + rho * (x - x0))  # (10a), six rounded operations
            ex = contraction * ex + eta * g_err + eta * elam + _G6 * scale
        lam_new = lam + rho * (x0 - x)  # (10c)
        elam = elam + rho * ex + _G3 * (np.abs(lam) + rho * np.abs(x0) + rho * np.abs(x))
        lam = lam_new
        y = x - lam / rho  # (10d)
        ys.append(y)
        errors.append(ex + elam / rho + _G3 * (np.abs(x) + np.abs(lam) / rho))
    return np.array(ys), np.array(errors)


def paper_sensitivity_bound(etas, Qs, rho, G, local_start, *, sensitivity_fn=sensitivity_fedpdm) -> float:
    """Eq. (19) at the current (last) participation: the seed's bound, which ignores the history."""
    return sensitivity_fn(float(etas[-1]), float(rho), int(Qs[-1]), float(G))


def history_sensitivity_bound(etas, Qs, rho, G, local_start, *, factor_fn=history_factors_fedpdm) -> float:
    r"""Corrected bound :math:`\kappa_n s_n` at the last participation (:mod:`theory.privacy.history`)."""
    kappa = float(factor_fn(list(map(float, etas)), list(map(int, Qs)), float(rho), local_start=local_start)[-1])
    return kappa * sensitivity_fedpdm(float(etas[-1]), float(rho), int(Qs[-1]), float(G))


def _unit(rng: np.random.Generator, d: int) -> np.ndarray:
    v = rng.standard_normal(d)
    return v / np.linalg.norm(v)


def _in_ball(rng: np.random.Generator, shape: tuple[int, ...], radius: float) -> np.ndarray:
    """Uniform points in the l2 ball of ``radius`` (last axis), shrunk by 4 ulps so the norm stays <= radius."""
    v = rng.standard_normal(shape)
    v /= np.linalg.norm(v, axis=-1, keepdims=True)
    return v * radius * rng.uniform(0.0, 1.0, shape[:-1] + (1,)) ** (1.0 / shape[-1]) * (1.0 - 4 * gamma(1))


def evaluate_upload_sensitivity(params: Mapping[str, Any], *, bound_fn=paper_sensitivity_bound,
                                require_tight: bool = False) -> Evidence:
    r"""Simulate two neighbours' uploads and compare :math:`\lVert\Delta y_n\rVert` at the last participation with
    ``bound_fn``.

    ``params``: ``etas``, ``Qs`` (one entry per participation), ``rho``, ``G``, ``d``, ``local_start``,
    ``construction`` and ``seed`` (initial state, public :math:`x_0` sequence and random draws; the
    state is the same for both neighbours), ``state_scale``. Constructions of the per-step gradient
    differences :math:`d_j^r = g_j^r(D) - g_j^r(D')`, every gradient of norm at most :math:`G` (A3):

    * ``adversarial``: :math:`g(D) = -g(D') = G\,\mathrm{sign}(c_j a_j^{Q_j-1-r})\,e` — the worst case;
    * ``random``: independent uniform points of the :math:`G`-ball for both data sets;
    * ``linear_loss``: a one-record client with loss :math:`\xi^\top x`, :math:`\lVert\xi\rVert = G`,
      against the neighbour :math:`-\xi` (a legal replace-one pair; the record is the whole batch).

    ``measured`` = :math:`\lVert\Delta y_n\rVert` / bound; holds when it is at most
    :math:`1 + \text{allowance}` (and at least :math:`1 - \text{allowance}` if ``require_tight``),
    the allowance being the running error bound over the bound plus :math:`\gamma_{8n+64}`.
    """
    p = dict(params)
    etas = [float(e) for e in p["etas"]]
    Qs = [int(q) for q in p["Qs"]]
    rho, G, d, n = float(p["rho"]), float(p["G"]), int(p["d"]), len(etas)
    rng = np.random.default_rng(int(p["seed"]))
    scale = float(p.get("state_scale", 1.0))
    x_init, lam_init = scale * rng.standard_normal(d), scale * rng.standard_normal(d)
    x0s = scale * rng.standard_normal((n, d))
    e = _unit(rng, d)
    construction = p["construction"]
    if construction == "adversarial":
        coef = history_coefficients_fedpdm(etas, Qs, rho, local_start=p["local_start"])
        signs = [[float(np.sign(coef[j] * (1.0 - etas[j] * rho) ** (Qs[j] - 1 - r))) for r in range(Qs[j])]
                 for j in range(n)]

        def gradient(j, r, x):
            g = G * signs[j][r] * e
            return np.stack([g, -g]), 0.0
    elif construction == "random":
        draws = [_in_ball(rng, (q, 2, d), G) for q in Qs]

        def gradient(j, r, x):
            return draws[j][r], 0.0
    elif construction == "linear_loss":
        xi = G * e

        def gradient(j, r, x):
            return np.stack([xi, -xi]), 0.0
    else:
        raise ValueError(f"construction must be adversarial, random or linear_loss, got {construction!r}")
    ys, errors = simulate_uploads(x_init, lam_init, x0s, etas, Qs, rho, gradient, local_start=p["local_start"])
    delta_y = ys[-1, 0] - ys[-1, 1]
    realised = float(np.linalg.norm(delta_y))
    err = float(np.linalg.norm(errors[-1, 0] + errors[-1, 1])) + gamma(d + 3) * realised
    bound = float(bound_fn(etas, Qs, rho, G, p["local_start"]))
    s_n = sensitivity_fedpdm(etas[-1], rho, Qs[-1], G)
    kappa = float(history_factors_fedpdm(etas, Qs, rho, local_start=p["local_start"])[-1])
    ratio = realised / bound
    allowance = err / bound + gamma(8 * n + 64)
    holds = ratio <= 1.0 + allowance and (not require_tight or ratio >= 1.0 - allowance)
    return Evidence(measured=ratio, bound=1.0, holds=bool(holds),
                    parameters={**p, "participation": n, "norm_delta_y": realised, "bound_value": bound,
                                "s_eq19": s_n, "ratio_to_eq19": realised / s_n, "kappa_n": kappa,
                                "error_bound": err, "allowance": allowance})


# --------------------------------------------------------------------------------------------------
# Logistic instance (docs/papers/fedpdm.md#instance-nc "NC"): replace-one neighbours, one round from the same state


def _logistic_instance(rng: np.random.Generator, n_samples: int, d: int):
    truth = np.where(rng.uniform(size=d) < 0.3, rng.standard_normal(d), 0.0)
    a = rng.standard_normal((n_samples, d)) + rng.standard_normal(d)
    a *= (rng.uniform(0.5, 1.0, n_samples) / np.linalg.norm(a, axis=1))[:, None]  # ||a_j|| <= 1
    y = np.where(rng.uniform(size=n_samples) < special.expit(a @ truth), 1.0, -1.0)
    return a, y


def _logistic_gradients(a_sets, y_sets, batch_index, beta: float):
    """Mini-batch gradient of mean logistic loss + beta sum x^2/(1+x^2) for each data set, and its error bound."""
    b = batch_index.size
    d = a_sets.shape[-1]

    def gradient(j, r, x):
        idx = batch_index[r]
        a = a_sets[:, idx, :]  # (m, b, d)
        y = y_sets[:, idx]
        margins = np.einsum("mbd,md->mb", a, x)
        weights = special.expit(-y * margins)
        g = -np.einsum("mb,mbd->md", y * weights, a) / b + beta * 2.0 * x / (1.0 + x * x) ** 2
        products = np.einsum("mbd,md->mb", np.abs(a), np.abs(x))
        g_err = (np.einsum("mbd,mb->md", np.abs(a), gamma(d) * products / 4.0 + gamma(b + 4)) / b
                 + beta * gamma(8) * np.abs(2.0 * x / (1.0 + x * x) ** 2))
        return g, g_err

    return gradient


def evaluate_logistic_neighbours(params: Mapping[str, Any], *, sensitivity_fn=sensitivity_fedpdm) -> Evidence:
    r"""One round of a logistic client (docs/papers/fedpdm.md#instance-nc NC) for :math:`D` and a replace-one neighbour
    :math:`D'`.

    Same round-start state, same batch permutation (disjoint batches of ``batch`` records), same
    :math:`Q`. ``neighbour``: ``random`` (a fresh record) or ``flip_label`` (the record with the
    largest gradient norm at the state gets the opposite label; docs/papers/fedpdm.md's "flip the label and negate
    the features" leaves :math:`y a` and hence the loss unchanged). :math:`G = \max\lVert a\rVert +
    (3\sqrt3/8)\beta\sqrt d` is a proven bound on every mini-batch gradient. ``measured`` =
    :math:`\lVert\Delta y\rVert / s`.
    """
    p = dict(params)
    rng = np.random.default_rng(int(p["seed"]))
    n_samples, d, b, Q = int(p["n_samples"]), int(p["d"]), int(p["batch"]), int(p["Q"])
    eta, rho, beta = float(p["eta"]), float(p["rho"]), float(p["beta"])
    if Q * b > n_samples:
        raise ValueError(f"Q * batch must be <= n_samples (disjoint batches), got {Q} * {b} > {n_samples}")
    a, y = _logistic_instance(rng, n_samples, d)
    x_i, lam, x0 = (0.5 * rng.standard_normal(d) for _ in range(3))
    a2, y2 = a.copy(), y.copy()
    if p["neighbour"] == "random":
        k = int(rng.integers(n_samples))
        fresh = rng.standard_normal(d)
        a2[k] = fresh * rng.uniform(0.5, 1.0) / np.linalg.norm(fresh)
        y2[k] = rng.choice([-1.0, 1.0])
    elif p["neighbour"] == "flip_label":
        k = int(np.argmax(np.linalg.norm(a, axis=1) * special.expit(-y * (a @ x_i))))
        y2[k] = -y[k]
    else:
        raise ValueError(f"neighbour must be random or flip_label, got {p['neighbour']!r}")
    G = float(max(np.linalg.norm(a, axis=1).max(), np.linalg.norm(a2, axis=1).max())
              + 3.0 * math.sqrt(3.0) / 8.0 * beta * math.sqrt(d))
    batches = rng.permutation(n_samples)[: Q * b].reshape(Q, b)
    gradient = _logistic_gradients(np.stack([a, a2]), np.stack([y, y2]), batches, beta)
    lipschitz = 0.25 * float(max(np.max(np.sum(a * a, axis=1)), np.max(np.sum(a2 * a2, axis=1)))) + 2.0 * beta
    ys, errors = simulate_uploads(x_i, lam, x0[None, :], [eta], [Q], rho, gradient, local_start="warm",
                                  lipschitz=lipschitz)
    realised = float(np.linalg.norm(ys[-1, 0] - ys[-1, 1]))
    err = float(np.linalg.norm(errors[-1, 0] + errors[-1, 1])) + gamma(d + 3) * realised
    s = sensitivity_fn(eta, rho, Q, G)
    ratio = realised / s
    allowance = err / s + gamma(64)
    return Evidence(measured=ratio, bound=1.0, holds=bool(ratio <= 1.0 + allowance),
                    parameters={**p, "G": G, "changed_record": k, "norm_delta_y": realised, "s_eq19": s,
                                "error_bound": err})



# --------------------------------------------------------------------------------------------------
# fedpdm.theorem1 as stated: one round's release with the data-dependent Q of rule (11)

#: Paper-like point: rho = 10, nu = 1e-2 (the experiment's threshold), eta rho = 0.1, batch 10, G = 1, eps = 0.5.
ADAPTIVE_Q_PAPER_POINT = {"d": 1, "b": 10, "Q_max": 5, "eta": 0.01, "rho": 10.0, "G": 1.0, "nu": 1e-2,
                          "epsilon": 0.5, "delta": 1e-5}


def adaptive_round(samples: np.ndarray, b: int, x_start: np.ndarray, lam: np.ndarray, x0: np.ndarray, eta: float,
                   rho: float, nu: float, Q_max: int) -> tuple[np.ndarray, int]:
    r"""One local round of Algorithm 1 with the adaptive stopping rule (11), linear per-sample loss.

    docs/papers/fedpdm.md#algorithms lines 5-13, written out: the per-sample loss is :math:`\ell(x; a) = a^\top x`
    (gradient :math:`a`,
    :math:`\lVert a\rVert \le G` is Assumption 3), batches are consecutive blocks of ``samples`` (a fixed
    permutation), :math:`g = \bar a_{B_r} - \lambda + \rho(x^{t,r} - x_0)`, :math:`x^{t,r+1} = x^{t,r} - \eta g`,
    stop with :math:`Q = r + 1` at the first :math:`\lVert g\rVert^2 \le \nu` (else :math:`Q_{max}`), then
    :math:`y = 2x^{t,Q} - x_0 - \lambda/\rho` ((10c)-(10d)). Returns ``(y, Q)``.
    """
    x = np.array(x_start, dtype=np.float64)
    Q = Q_max
    for r in range(Q_max):
        g = samples[r * b:(r + 1) * b].mean(axis=0) - lam + rho * (x - x0)
        x = x - eta * g
        if float(g @ g) <= nu:
            Q = r + 1
            break
    return 2.0 * x - x0 - lam / rho, Q


def evaluate_adaptive_q(params: Mapping[str, Any], *, noise_q: str = "adaptive") -> Evidence:
    r"""Theorem 1's round-t release on a legal neighbouring pair whose rule-(11) step counts differ.

    Data set :math:`D`: every record's gradient is :math:`a = G u` (unit :math:`u`); the round starts at the client's
    stationary point :math:`x^{t,0} = x_0`, :math:`\lambda = a`, so :math:`g = 0` and rule (11) stops :math:`D` at
    :math:`Q = 1`. Neighbour :math:`D'` replaces the first record by :math:`-a` (:math:`\lVert g_0\rVert^2 =
    4G^2/b^2 > \nu`), so it keeps stepping: :math:`Q' > 1`. Each release is :math:`N(y, \sigma(Q)^2 I_d)` with
    :math:`\sigma(Q) = z\, s(Q)` of (18)-(19) (``noise_q = "adaptive"``, as stated) or :math:`s(Q_{max})`
    (``"cap"``, the erratum E5 (docs/papers/fedpdm.md#erratum-e5) fix). Holds iff the exact divergence of the pair
    (:func:`theory.privacy.gaussian_pair. gaussian_pair_delta`, both directions) is at most :math:`\delta`.
    """
    d, b, Q_max = int(params["d"]), int(params["b"]), int(params["Q_max"])
    eta, rho, G, nu = float(params["eta"]), float(params["rho"]), float(params["G"]), float(params["nu"])
    epsilon, delta = float(params["epsilon"]), float(params["delta"])
    if not (0.0 < eta * rho < 2.0):
        raise ValueError(f"eta * rho must be in (0, 2) (stable local steps), got {eta * rho!r}")
    if not (0.0 < nu < 4.0 * G**2 / b**2):
        raise ValueError(f"nu must be in (0, 4 G^2 / b^2) = (0, {4.0 * G**2 / b**2:g}), got {nu!r}")
    u = np.zeros(d)
    u[0] = 1.0
    a = G * u
    data = np.tile(a, (Q_max * b, 1))
    neighbour = data.copy()
    neighbour[0] = -a
    x0 = np.zeros(d)
    y1, q1 = adaptive_round(data, b, x0, a, x0, eta, rho, nu, Q_max)
    y2, q2 = adaptive_round(neighbour, b, x0, a, x0, eta, rho, nu, Q_max)
    z = float(noise_multiplier_fedpdm(epsilon, delta))
    s1 = sensitivity_fedpdm(eta, rho, q1 if noise_q == "adaptive" else Q_max, G)
    s2 = sensitivity_fedpdm(eta, rho, q2 if noise_q == "adaptive" else Q_max, G)
    exact = gaussian_pair_delta(y1, z * s1, y2, z * s2, epsilon)
    return Evidence(measured=exact / delta, bound=1.0, holds=bool(exact <= delta),
                    parameters={**dict(params), "noise_q": noise_q, "Q_D": q1, "Q_D_prime": q2, "s_D": s1,
                                "s_D_prime": s2, "sigma_ratio": s2 / s1, "mean_gap": float(np.linalg.norm(y1 - y2)),
                                "mean_gap_over_s_D": float(np.linalg.norm(y1 - y2)) / s1, "delta_exact": exact})

