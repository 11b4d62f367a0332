r"""FedPDM-DP Theorem 1: the upload sensitivity (19), for a fixed round-start state and given only the released history.

The uploads are simulated with the algorithm's own update equations (10a)-(10d) (seed lines
114-120), for two neighbouring data sets, and the realised :math:`\lVert y(D) - y(D')\rVert` is
compared with a closed form. Three claims:

* ``fedpdm.theorem1``: with the **same** round-start state :math:`(x_i^{t,0}, \lambda_i^t, x_0^t)` and
  the same :math:`Q`, :math:`\lVert\Delta y\rVert \le s` of eq. (19). Evidence: the adversarial
  per-step construction of the derivation in spec 3.5 (gradient differences :math:`\pm 2G e` with
  the signs of :math:`(1-\eta\rho)^{Q-1-r}`, which attains :math:`s`), random bounded gradient
  sequences, and replace-one neighbours of a small logistic instance (same state, same batch
  permutation, same :math:`Q`), where the slack is large (spec E6).
* ``fedpdm.theorem1_history``: the seed's reading — the noise (18)-(19) protects every upload given
  the released history. Refuted: the state is private and data dependent, and the worst case under
  the same per-step model is :math:`\kappa_n s_n` (:mod:`theory.privacy.history`), exactly
  :math:`1.5\,s` at :math:`\eta\rho = 1` from the second participation on; a legal replace-one pair
  (one-record client, linear loss) exceeds (19) by 2.4x at its second participation
  (:math:`\eta = 0.001`, :math:`\rho = 10`, :math:`Q = 5`, warm start).
* ``fedpdm.theorem1_history_corrected``: :math:`\lVert\Delta y_n\rVert \le \kappa_n s_n` for every
  gradient-difference sequence with per-step norms :math:`\le 2G`, with equality for the adversarial
  construction (so :math:`\kappa_n` is the exact worst case).

Rounding: every simulated trajectory carries a first-order running forward-error bound
(Higham, Ch. 3: :math:`\gamma_k` per rounded operation, propagated through the affine update with
its Lipschitz constants); a comparison holds when the realised norm is within that bound plus
:math:`\gamma` of the closed form's own rounding.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from scipy import special

from theory.privacy.conversions import gaussian_delta_exact
from theory.privacy.gaussian_pair import gaussian_pair_delta
from theory.privacy.history import history_coefficients_fedpdm, history_factor_limit_fedpdm, history_factors_fedpdm
from theory.privacy.sensitivity import sensitivity_fedpdm
from theory.privacy.subsampled import noise_multiplier_fedpdm
from verify.evidence import report_counterexample, result_from_evidence, sample_evidence
from verify.fedpdm._common import SEED
from verify.records import CheckContext, CheckResult, Citation, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import gamma

__all__ = [
    "CLAIMS",
    "HISTORY_COUNTEREXAMPLE",
    "LIMIT_CONFIGS",
    "check_history_corrected",
    "ADAPTIVE_Q_PAPER_POINT",
    "adaptive_round",
    "check_adaptive_q",
    "check_history_paper",
    "check_same_state",
    "evaluate_adaptive_q",
    "e25_fix_schedule",
    "evaluate_logistic_neighbours",
    "evaluate_upload_sensitivity",
    "history_sensitivity_bound",
    "paper_sensitivity_bound",
    "simulate_uploads",
]

_G6, _G3 = gamma(6), gamma(3)
#: (eta, Q) at rho = 10 whose history factors the spec's Review notes tabulate (warm start).
LIMIT_CONFIGS = ((0.1, 5), (0.05, 5), (0.15, 5), (0.02, 5), (0.01, 5), (0.001, 5), (0.12, 1), (0.133, 1))
#: The minimal counterexample to fedpdm.theorem1_history: eta rho = 1, second participation.
HISTORY_COUNTEREXAMPLE = {"etas": [0.1, 0.1], "Qs": [5, 5], "rho": 10.0, "G": 1.0, "d": 3, "local_start": "warm",
                          "construction": "adversarial", "seed": 0, "state_scale": 1.0}
_PROFILE = {"ci": {"batches": 2, "per_batch": 6, "logistic_batches": 2, "logistic_per_batch": 4, "e25_draws": 2},
            "thorough": {"batches": 16, "per_batch": 40, "logistic_batches": 8, "logistic_per_batch": 25,
                         "e25_draws": 64}}


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
    for j, (eta, Q) in enumerate(zip(etas, Qs)):
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
    r"""Simulate two neighbours' uploads and compare :math:`\lVert\Delta y_n\rVert` at the last participation with ``bound_fn``.

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
# Logistic instance (spec 4.0 "NC"): replace-one neighbours, one round from the same state


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
    r"""One round of a logistic client (spec 4.0 NC) for :math:`D` and a replace-one neighbour :math:`D'`.

    Same round-start state, same batch permutation (disjoint batches of ``batch`` records), same
    :math:`Q`. ``neighbour``: ``random`` (a fresh record) or ``flip_label`` (the record with the
    largest gradient norm at the state gets the opposite label; the spec's "flip the label and negate
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
# fedpdm.theorem1: same round-start state


def _same_state_batch(rng: np.random.Generator, count: int, sensitivity_fn) -> list[Evidence]:
    out = []
    bound_fn = _paper_bound(sensitivity_fn)
    for _ in range(count):
        rho = float(10.0 ** rng.uniform(-1.0, 2.0))
        eta = float(rng.uniform(0.01, 2.5)) / rho
        params = {"etas": [eta], "Qs": [int(rng.integers(1, 21))], "rho": rho, "G": float(10.0 ** rng.uniform(-2, 2)),
                  "d": int(rng.integers(1, 11)), "local_start": "warm", "seed": int(rng.integers(2**31)),
                  "state_scale": float(10.0 ** rng.uniform(-2, 1))}
        for construction in ("adversarial", "random"):
            out.append(evaluate_upload_sensitivity({**params, "construction": construction}, bound_fn=bound_fn))
    return out


def _logistic_batch(rng: np.random.Generator, count: int, sensitivity_fn) -> list[Evidence]:
    return [evaluate_logistic_neighbours({"seed": int(rng.integers(2**31)), "n_samples": 60, "d": 20, "batch": 10,
                                          "Q": int(rng.integers(1, 7)), "eta": float(rng.uniform(0.02, 0.15)),
                                          "rho": 10.0, "beta": 0.1, "neighbour": neighbour},
                                         sensitivity_fn=sensitivity_fn)
            for _ in range(count) for neighbour in ("random", "flip_label")]


class _paper_bound:  # noqa: N801 - a picklable partial of paper_sensitivity_bound
    def __init__(self, sensitivity_fn):
        self.sensitivity_fn = sensitivity_fn

    def __call__(self, etas, Qs, rho, G, local_start):
        return paper_sensitivity_bound(etas, Qs, rho, G, local_start, sensitivity_fn=self.sensitivity_fn)


#: The paper's own setting (rho = 10, eta^t = 1/sqrt(1+t) at t = 0, 24, 99, 299; Q in {1, 5, 19}) and the
#: spec's 4.2.1 table.
PAPER_POINTS = tuple((1.0 / math.sqrt(1.0 + t), 10.0, Q, 1.0) for t in (0, 24, 99, 299) for Q in (1, 5, 19)) + (
    (0.05, 10.0, 5, 1.0), (0.2, 10.0, 6, 1.0), (1.0, 10.0, 3, 1.0), (0.1, 10.0, 1, 1.0))


def check_same_state(ctx: CheckContext, *, sensitivity_fn=sensitivity_fedpdm) -> CheckResult:
    """Adversarial and random per-step gradients (random state, eta rho in (0, 2.5)), the paper's points, logistic neighbours."""
    claim_id = "fedpdm.theorem1_fixed_q"
    prof = _PROFILE[ctx.profile]
    bound_fn = _paper_bound(sensitivity_fn)
    evidence = [evaluate_upload_sensitivity({"etas": [eta], "Qs": [Q], "rho": rho, "G": G, "d": 3,
                                             "local_start": "warm", "construction": "adversarial", "seed": i,
                                             "state_scale": 1.0}, bound_fn=bound_fn)
                for i, (eta, rho, Q, G) in enumerate(PAPER_POINTS)]
    evidence += sample_evidence(ctx, claim_id, _same_state_batch, prof["batches"], (prof["per_batch"], sensitivity_fn))
    logistic = sample_evidence(ctx, claim_id + ".logistic", _logistic_batch, prof["logistic_batches"],
                               (prof["logistic_per_batch"], sensitivity_fn))
    evidence += logistic
    adversarial = [e.measured for e in evidence if e.parameters.get("construction") == "adversarial"]
    random_ratios = [e.measured for e in evidence if e.parameters.get("construction") == "random"]
    qs = np.arange(1, 13)
    series = []
    for eta in (0.05, 0.15, 0.2, 0.25):
        series.append(Series(label=f"eq. (19) s/G, eta = {eta:g}", x=qs, group=str(eta),
                             y=[sensitivity_fn(eta, 10.0, int(q), 1.0) for q in qs]))
        series.append(Series(label=f"realised ||dy||/G (adversarial), eta = {eta:g}", x=qs, style="points",
                             group=str(eta),
                             y=[evaluate_upload_sensitivity({"etas": [eta], "Qs": [int(q)], "rho": 10.0, "G": 1.0,
                                                             "d": 2, "local_start": "warm", "construction":
                                                             "adversarial", "seed": int(q)},
                                                            bound_fn=bound_fn).parameters["norm_delta_y"] for q in qs]))
    figure = FigureSpec(name="theorem1_sensitivity_vs_q", title="FedPDM-DP (19): one-round sensitivity, rho = 10, G = 1",
                        xlabel="local steps Q", ylabel="||y(D) - y(D')|| / G", series=tuple(series), yscale="log")
    return result_from_evidence(
        claim_id, evidence, ctx=ctx, quantity="||y(D) - y(D')|| / s_(19) (one-sided, <= 1 + rounding allowance)",
        what="||dy|| <= s of eq. (19) given the same round-start state and Q", figures=[figure],
        details={"tightness_adversarial_min_max": [min(adversarial), max(adversarial)],
                 "random_per_step_max_ratio": max(random_ratios),
                 "logistic_max_ratio": max(e.measured for e in logistic),
                 "logistic_points": len(logistic),
                 "e25_literal_s_over_G": {f"t={t}, Q={Q}": sensitivity_fedpdm(1.0 / math.sqrt(1.0 + t), 10.0, Q, 1.0)
                                          for t, Q in ((0, 5), (0, 19), (24, 5), (99, 5))}})


# --------------------------------------------------------------------------------------------------
# fedpdm.theorem1 as stated: one round's release with the data-dependent Q of rule (11)

#: Paper-like point: rho = 10, nu = 1e-2 (the experiment's threshold), eta rho = 0.1, batch 10, G = 1, eps = 0.5.
ADAPTIVE_Q_PAPER_POINT = {"d": 1, "b": 10, "Q_max": 5, "eta": 0.01, "rho": 10.0, "G": 1.0, "nu": 1e-2,
                          "epsilon": 0.5, "delta": 1e-5}


def adaptive_round(samples: np.ndarray, b: int, x_start: np.ndarray, lam: np.ndarray, x0: np.ndarray, eta: float,
                   rho: float, nu: float, Q_max: int) -> tuple[np.ndarray, int]:
    r"""One local round of Algorithm 1 with the adaptive stopping rule (11), linear per-sample loss.

    Spec 2 lines 5-13, written out: the per-sample loss is :math:`\ell(x; a) = a^\top x` (gradient :math:`a`,
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
    (``"cap"``, the E5 fix). Holds iff the exact divergence of the pair (:func:`theory.privacy.gaussian_pair.
    gaussian_pair_delta`, both directions) is at most :math:`\delta`.
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


def _adaptive_batch(rng: np.random.Generator, count: int, noise_q: str) -> list[Evidence]:
    """eta rho in [0.02, 1.5], rho in [1, 20], G in [0.1, 2], b in [1, 20], Q_max in [2, 10], d in [1, 5],
    nu a fraction in [0.01, 0.9] of 4 G^2 / b^2, eps in [0.1, 0.99] (the classical calibration is valid there)."""
    out = []
    for _ in range(count):
        rho = float(rng.uniform(1.0, 20.0))
        G = float(10 ** rng.uniform(-1.0, math.log10(2.0)))
        b = int(rng.integers(1, 21))
        params = {"d": int(rng.integers(1, 6)), "b": b, "Q_max": int(rng.integers(2, 11)),
                  "eta": float(rng.uniform(0.02, 1.5)) / rho, "rho": rho, "G": G,
                  "nu": float(rng.uniform(0.01, 0.9)) * 4.0 * G**2 / b**2, "epsilon": float(rng.uniform(0.1, 0.99)),
                  "delta": float(rng.choice([1e-3, 1e-5, 1e-8]))}
        out.append(evaluate_adaptive_q(params, noise_q=noise_q))
    return out


def check_adaptive_q(ctx: CheckContext, *, noise_q: str = "adaptive") -> CheckResult:
    """The paper-like point and random legal pairs; the same pairs with Q capped at Q_max are recorded as control."""
    claim_id = "fedpdm.theorem1"
    count = 2 if not ctx.thorough else 8
    evidence = [evaluate_adaptive_q(ADAPTIVE_Q_PAPER_POINT, noise_q=noise_q)]
    evidence += sample_evidence(ctx, claim_id, _adaptive_batch, count, (10, noise_q))
    capped = [evaluate_adaptive_q(e.parameters, noise_q="cap") for e in evidence]
    differ = sum(e.parameters["Q_D"] != e.parameters["Q_D_prime"] for e in evidence)
    eps = np.linspace(0.05, 2.0, 40)
    point = evidence[0].parameters
    series = []
    for mode in ("adaptive", "cap"):
        pts = [evaluate_adaptive_q({**ADAPTIVE_Q_PAPER_POINT, "epsilon": float(e)}, noise_q=mode) for e in eps]
        series.append(Series(label=f"exact delta of the round's release, sigma from s({'Q' if mode == 'adaptive' else 'Q_max'})",
                             x=eps, y=[max(q.parameters["delta_exact"], 1e-300) for q in pts], group=mode))
    series.append(Series(label="target delta = 1e-5", x=(eps[0], eps[-1]), y=(1e-5, 1e-5), style="dashed", group="t"))
    figure = FigureSpec(name="adaptive_q_exact_delta",
                        title=(f"FedPDM-DP Theorem 1 with rule (11): Q(D) = {point['Q_D']}, Q(D') = {point['Q_D_prime']} "
                               f"(eta = 0.01, rho = 10, nu = 1e-2, b = 10)"),
                        xlabel="per-round epsilon", ylabel="exact delta of the pair", yscale="log",
                        series=tuple(series))
    return result_from_evidence(
        claim_id, evidence, ctx=ctx, quantity="exact delta of the round-t release on a neighbouring pair / target delta",
        what="noise (18)-(19) with the rule-(11) Q makes the round-t upload (eps, delta)-DP", figures=[figure],
        corrected_claim="fedpdm.theorem1_fixed_q",
        details={"pairs_with_different_Q": differ, "pairs": len(evidence),
                 "max_delta_exact_over_delta_with_Q_capped": max(e.measured for e in capped),
                 "paper_point": {k: point[k] for k in ("Q_D", "Q_D_prime", "s_D", "s_D_prime", "mean_gap",
                                                       "delta_exact")}})


def reproduce_adaptive_q(counterexample) -> Evidence:
    """Re-evaluate the release at a recorded pair (the keys of :data:`ADAPTIVE_Q_PAPER_POINT`)."""
    return evaluate_adaptive_q({k: counterexample[k] for k in ADAPTIVE_Q_PAPER_POINT})


# --------------------------------------------------------------------------------------------------
# fedpdm.theorem1_history and its correction


def e25_fix_schedule(rng: np.random.Generator, rounds: int = 300, p: float = 0.05, rho: float = 10.0,
                     Q: int = 5) -> tuple[list[float], list[int]]:
    r"""A client's participations under the spec's E25 step-size fix :math:`\eta^t = 1/(\rho\sqrt{1+t})`.

    Round 0 has every client (:math:`S_0 = [N]`, seed line 161); afterwards the client is in
    :math:`S_t` with probability :math:`p = K/N` independently over rounds (uniform K-subsets).
    """
    rounds_in = [0] + [t for t in range(1, rounds) if rng.uniform() < p]
    return [1.0 / (rho * math.sqrt(1.0 + t)) for t in rounds_in], [Q] * len(rounds_in)


def _history_batch(rng: np.random.Generator, count: int, bound_fn, require_tight: bool, constructions) -> list[Evidence]:
    out = []
    for _ in range(count):
        n = int(rng.integers(1, 31))
        rho = float(10.0 ** rng.uniform(-1.0, 2.0))
        params = {"etas": (rng.uniform(0.01, 1.99, n) / rho).tolist(), "Qs": rng.integers(1, 9, n).tolist(),
                  "rho": rho, "G": float(10.0 ** rng.uniform(-2, 2)), "d": int(rng.integers(1, 6)),
                  "local_start": str(rng.choice(["warm", "global"])), "seed": int(rng.integers(2**31)),
                  "state_scale": float(10.0 ** rng.uniform(-2, 1))}
        for construction in constructions:
            out.append(evaluate_upload_sensitivity({**params, "construction": construction}, bound_fn=bound_fn,
                                                   require_tight=require_tight and construction == "adversarial"))
    return out


def _e25_batch(rng: np.random.Generator, count: int, bound_fn, require_tight: bool) -> list[Evidence]:
    out = []
    for _ in range(count):
        etas, Qs = e25_fix_schedule(rng)
        for start in ("warm", "global"):
            out.append(evaluate_upload_sensitivity({"etas": etas, "Qs": Qs, "rho": 10.0, "G": 1.0, "d": 2,
                                                    "local_start": start, "construction": "adversarial",
                                                    "seed": int(rng.integers(2**31)), "state_scale": 1.0,
                                                    "schedule": "E25 fix: eta_t = 1/(rho sqrt(1+t)), p = 0.05"},
                                                   bound_fn=bound_fn, require_tight=require_tight))
    return out


def _config_points(bound_fn, require_tight: bool) -> list[Evidence]:
    out = []
    for eta, Q in LIMIT_CONFIGS:
        for start in ("warm", "global"):
            for n in (2, 3, 10, 30):
                out.append(evaluate_upload_sensitivity(
                    {"etas": [eta] * n, "Qs": [Q] * n, "rho": 10.0, "G": 1.0, "d": 3, "local_start": start,
                     "construction": "adversarial", "seed": n, "state_scale": 1.0},
                    bound_fn=bound_fn, require_tight=require_tight))
    for n in (2, 10, 50):  # the legal replace-one pair (spec Review notes)
        out.append(evaluate_upload_sensitivity(
            {"etas": [0.001] * n, "Qs": [5] * n, "rho": 10.0, "G": 1.0, "d": 3, "local_start": "warm",
             "construction": "linear_loss", "seed": n, "state_scale": 1.0}, bound_fn=bound_fn))
    return out


def _kappa_figure(factor_fn=history_factors_fedpdm) -> FigureSpec:
    n = np.arange(1, 31)
    series = [Series(label=f"warm, eta = {eta:g}, Q = {Q}", x=n, group=f"{eta}{Q}",
                     y=factor_fn([eta] * n.size, [Q] * n.size, 10.0, local_start="warm"))
              for eta, Q in ((0.1, 5), (0.05, 5), (0.15, 5), (0.02, 5), (0.01, 5), (0.12, 1))]
    series.append(Series(label="global, eta = 0.02, Q = 5", x=n, style="dashed",
                         y=factor_fn([0.02] * n.size, [5] * n.size, 10.0, local_start="global")))
    legal = [evaluate_upload_sensitivity({"etas": [0.001] * int(k), "Qs": [5] * int(k), "rho": 10.0, "G": 1.0, "d": 2,
                                          "local_start": "warm", "construction": "linear_loss", "seed": 0})
             .parameters["ratio_to_eq19"] for k in n]
    series.append(Series(label="legal one-record pair (linear loss), eta = 0.001, Q = 5", x=n, y=legal,
                         style="points"))
    series.append(Series(label="eq. (19) (kappa = 1)", x=(1, 30), y=(1.0, 1.0), style="dashed"))
    return FigureSpec(name="history_factor_vs_participation",
                      title="FedPDM-DP: upload sensitivity given the released history / s_(19), rho = 10",
                      xlabel="participation n", ylabel="kappa_n = max ||dy_n|| / s_n", series=tuple(series),
                      yscale="log")


def reproduce_history(counterexample) -> Evidence:
    """Re-simulate a recorded counterexample against eq. (19) (the seed's bound)."""
    return evaluate_upload_sensitivity(counterexample)


def check_history_paper(ctx: CheckContext, *, bound_fn=paper_sensitivity_bound) -> CheckResult:
    """Constant schedules, the legal one-record pair, random schedules and the E25-fix schedule against eq. (19)."""
    claim_id = "fedpdm.theorem1_history"
    prof = _PROFILE[ctx.profile]
    chosen = evaluate_upload_sensitivity(HISTORY_COUNTEREXAMPLE, bound_fn=bound_fn)
    evidence = [chosen, *_config_points(bound_fn, False)]
    evidence += sample_evidence(ctx, claim_id, _history_batch, prof["batches"],
                                (prof["per_batch"], bound_fn, False, ("adversarial", "random")))
    e25 = sample_evidence(ctx, claim_id + ".e25", _e25_batch, prof["e25_draws"], (1, bound_fn, False))
    evidence += e25
    z = noise_multiplier_fedpdm(0.5, 1e-5)
    details = {
        "kappa_limit_rho10": {f"eta={eta:g}, Q={Q}": {s: history_factor_limit_fedpdm(eta, 10.0, Q, local_start=s)
                                                      for s in ("warm", "global")} for eta, Q in LIMIT_CONFIGS},
        "warm_start_finite_iff": "b = (1 - eta rho)^Q > -1/3",
        "legal_pair_ratio_eta0.001_Q5": {e.parameters["participation"]: e.parameters["ratio_to_eq19"]
                                         for e in evidence if e.parameters.get("construction") == "linear_loss"},
        "e25_fix_kappa_at_last_participation": {
            s: sorted(e.parameters["kappa_n"] for e in e25 if e.parameters["local_start"] == s) for s in ("warm", "global")},
        "dp_consequence": {"epsilon": 0.5, "delta": 1e-5, "z_eq18": z,
                           "delta_exact_over_delta_kappa_1": gaussian_delta_exact(0.5, 1.0 / z) / 1e-5,
                           "delta_exact_over_delta_kappa_1.5": gaussian_delta_exact(0.5, 1.5 / z) / 1e-5},
    }
    result = result_from_evidence(
        claim_id, evidence, ctx=ctx, quantity="||y_n(D) - y_n(D')|| / s_(19) given the released history",
        what="eq. (19) bounds the upload's sensitivity given only the released history",
        figures=[_kappa_figure()], corrected_claim="fedpdm.theorem1_history_corrected", details=details)
    return report_counterexample(result, chosen, "eta rho = 1, second participation (6 eta G vs 4 eta G)")


class _history_bound:  # noqa: N801 - a picklable partial of history_sensitivity_bound
    def __init__(self, factor_fn):
        self.factor_fn = factor_fn

    def __call__(self, etas, Qs, rho, G, local_start):
        return history_sensitivity_bound(etas, Qs, rho, G, local_start, factor_fn=self.factor_fn)


def check_history_corrected(ctx: CheckContext, *, factor_fn=history_factors_fedpdm) -> CheckResult:
    """The same schedules against kappa_n s_n: never exceeded, and attained by the adversarial construction."""
    claim_id = "fedpdm.theorem1_history_corrected"
    prof = _PROFILE[ctx.profile]
    bound_fn = _history_bound(factor_fn)
    evidence = _config_points(bound_fn, True)
    evidence += sample_evidence(ctx, claim_id, _history_batch, prof["batches"],
                                (prof["per_batch"], bound_fn, True, ("adversarial", "random")))
    evidence += sample_evidence(ctx, claim_id + ".e25", _e25_batch, prof["e25_draws"], (1, bound_fn, True))
    adversarial = [e.measured for e in evidence if e.parameters["construction"] == "adversarial"]
    n = np.arange(1, 21)
    series = []
    for eta, Q, start in ((0.05, 5, "warm"), (0.12, 1, "warm"), (0.19, 5, "global")):
        kappas = factor_fn([eta] * n.size, [Q] * n.size, 10.0, local_start=start)
        series.append(Series(label=f"kappa_n, {start}, eta = {eta:g}, Q = {Q}", x=n, y=kappas, group=f"{eta}{start}"))
        series.append(Series(label=f"simulated adversarial ||dy_n||/s_n, {start}, eta = {eta:g}", x=n, style="points",
                             group=f"{eta}{start}",
                             y=[evaluate_upload_sensitivity({"etas": [eta] * int(k), "Qs": [Q] * int(k), "rho": 10.0,
                                                             "G": 1.0, "d": 2, "local_start": start,
                                                             "construction": "adversarial", "seed": int(k)})
                                .parameters["ratio_to_eq19"] for k in n]))
    figure = FigureSpec(name="history_factor_tightness", title="History factor kappa_n: closed form vs simulated worst case",
                        xlabel="participation n", ylabel="||dy_n|| / s_n", series=tuple(series), yscale="log")
    return result_from_evidence(
        claim_id, evidence, ctx=ctx, quantity="||y_n(D) - y_n(D')|| / (kappa_n s_n)",
        what="||dy_n|| <= kappa_n s_n, with equality for the adversarial construction", figures=[figure],
        details={"tightness_adversarial_min_max": [min(adversarial), max(adversarial)],
                 "global_start_limit": "kappa_inf = 1 + |1 - 2b| / (2 (1 - |b|)), b = (1 - eta rho)^Q"})


_CITE_T1 = (Citation(seed=SEED, label="Theorem 1", equation="(18)-(19)", lines="187-195"),
            Citation(seed=SEED, label="local update", equation="(10a)-(10d)", lines="114-120"))

CLAIMS = (
    Claim(
        id="fedpdm.theorem1",
        paper="fedpdm",
        title="Theorem 1 as stated: noise (18)-(19) with the adaptive Q of rule (11) makes each round's upload "
              "(eps, delta)-DP",
        citations=(*_CITE_T1, Citation(seed=SEED, label="stopping rule (11): Q_i^t adaptive", equation="(11)",
                                       lines="122-126")),
        statement=("Adding xi ~ N(0, sigma_{i,t}^2 I) to client i's round-t upload, with sigma_{i,t}^2 = "
                   "2 s_{i,t}^2 ln(1.25/delta)/eps^2 (18) and s_{i,t} of (19) evaluated at the number of local steps "
                   "Q_i^t that rule (11) determines, makes the round-t release (eps, delta)-DP for client i."),
        hypotheses=("Assumption 3 (per-sample gradients bounded by G)", "Q_i^t from rule (11) (adaptive), capped at "
                    "Q_max", "eps in (0, 1), where the classical calibration (18) itself is valid (fedpdm.lemma1)",
                    "the same round-start state for both neighbours (the best case for the claim)"),
        check=check_adaptive_q,
        expected=Verdict.REFUTED,
        reason=("Q_i^t is data dependent (spec E5): a legal pair (linear per-sample loss with |a| = G, the round "
                "starting at the client's stationary point, one record negated) stops after Q = 1 step on D and "
                "keeps stepping on D' (||g_0||^2 = 4G^2/b^2 > nu), so the two releases have different noise scales "
                "z s(Q) and means further apart than s(Q(D)). The exact divergence of the two Gaussians (non-central "
                "chi-square, cross-checked by quadrature and Monte Carlo in tests) is far above delta: at the "
                "paper-like point eta = 0.01, rho = 10, nu = 1e-2, b = 10, eps = 0.5, delta = 1e-5 it is 2.3e4 delta "
                "(Q = 1 vs 2), and up to ~6e7 delta on the random pairs (19 of 21 at ci exceed delta; the others have "
                "eta rho near 1, where s(Q) hardly depends on Q). With sigma from s(Q_max) (Q public, fixed in advance) the "
                "same pairs are within delta; that is fedpdm.theorem1_fixed_q."),
        severity="correction_as_useful",
        reproduce=reproduce_adaptive_q,
        corrected_by="fedpdm.theorem1_fixed_q",
    ),
    Claim(
        id="fedpdm.theorem1_fixed_q",
        paper="fedpdm",
        title="Proof step of Theorem 1 (and its corrected form): for the same round-start state and a Q fixed in "
              "advance, eq. (19) bounds the one-round upload sensitivity",
        citations=_CITE_T1,
        statement=("With the same round-start state (x_i^{t,0}, lambda_i^t, x_0^t) and the same number Q of local "
                   "steps, fixed in advance (Q = Q_max, public: the fix of spec E5), for two neighbouring data sets, "
                   "the upload y_i^{t+1} of (10d) changes by at most s_{i,t} of eq. (19) (4 eta Q G when eta rho = 2), "
                   "under Assumption 3 (mini-batch gradients bounded by G); so noise (18) calibrated with s(Q_max) "
                   "makes the round's release (eps, delta)-DP given that state, for eps in the calibration's validity "
                   "range (fedpdm.lemma1_corrected)."),
        hypotheses=("same round-start state for both neighbours", "same Q, fixed in advance (E5)",
                    "||mini-batch gradient|| <= G (A3)", "eta > 0, rho > 0"),
        check=check_same_state,
        expected=Verdict.CONFIRMED,
        reason=("The literal update equations reach exactly s under the adversarial construction of spec 3.5 "
                "(ratio 1 within rounding, including the paper's eta = 1 points with s/G up to 6.8e17) and stay "
                "below it for random bounded gradients (ratio <= 0.83) and for replace-one neighbours of a logistic "
                "instance (ratio < 0.04: one record moves one batch mean by at most 2G/b, spec E6). This is the "
                "step the proof of Theorem 1 needs; it was registered as fedpdm.theorem1 before Theorem 1 itself "
                "(with the adaptive Q of rule (11)) was decided."),
        corrects="fedpdm.theorem1",
    ),
    Claim(
        id="fedpdm.theorem1_history",
        paper="fedpdm",
        title="Theorem 1 as used: the per-round noise (18)-(19) protects each upload given the released history",
        citations=(*_CITE_T1, Citation(seed=SEED, label="Algorithm 1 (state carried across rounds)", lines="158-180")),
        statement=("The noise N(0, sigma_{i,t}^2 I) with sigma_{i,t} from (18)-(19) makes client i's upload at "
                   "round t (eps, delta)-DP, i.e. (19) bounds ||y_i^{t+1}(D) - y_i^{t+1}(D')|| given everything "
                   "released before (the x_0 sequence), although the state (x_i^t, lambda_i^t) is private and "
                   "depends on the data."),
        hypotheses=("released history (x_0^0..x_0^t) identical for D and D'", "same Q", "A3",
                    "per-step gradient differences of norm <= 2G, as in the proof of (19)"),
        check=check_history_paper,
        expected=Verdict.REFUTED,
        reason=("Given only the released history the state differs between neighbours and the worst case is "
                "kappa_n s_n: exactly 1.5 s at eta rho = 1 from the 2nd participation on (6 eta G vs 4 eta G), "
                "1.73 (eta = 0.02, Q = 5), 61 (eta = 0.001), unbounded for b = (1 - eta rho)^Q <= -1/3 (warm "
                "start). A legal one-record pair with a linear loss exceeds (19) by 2.40x at its 2nd and 16.5x at "
                "its 10th participation (eta = 0.001, rho = 10, Q = 5). At kappa = 1.5 the round's exact delta is "
                "3.3 delta (eps = 0.5, delta = 1e-5). Spec E4 and Review notes."),
        severity="false",
        reproduce=reproduce_history,
        corrected_by="fedpdm.theorem1_history_corrected",
    ),
    Claim(
        id="fedpdm.theorem1_history_corrected",
        paper="fedpdm",
        title="Theorem 1 corrected: the upload sensitivity given the history is kappa_n s_n (exact worst case)",
        citations=_CITE_T1,
        statement=("Given the released history, ||y_n(D) - y_n(D')|| <= kappa_n s_n at a client's n-th "
                   "participation, where kappa_n = sum_j |c_j| w_j / (2 w_n) is computed from the client's own "
                   "(eta, Q) sequence (theory.privacy.history), and the bound is attained. For constant (eta, Q) "
                   "and b = (1 - eta rho)^Q: warm start bounded iff -1/3 < b < 1; global start "
                   "kappa_inf = 1 + |1 - 2b| / (2 (1 - |b|)). Calibrating sigma to kappa_n s_n restores Theorem 1."),
        hypotheses=("same released history", "per-step gradient differences of norm <= 2G (A3)",
                    "(eta_j, Q_j) fixed in advance", "same initial state"),
        check=check_history_corrected,
        expected=Verdict.CONFIRMED,
        reason=("The literal update equations, run for up to 300 rounds with random public x_0 sequences, never "
                "exceed kappa_n s_n and the adversarial construction attains it within rounding, for random "
                "schedules (both starts), the Review notes' configurations and the E25-fix schedule."),
        corrects="fedpdm.theorem1_history",
    ),
)
