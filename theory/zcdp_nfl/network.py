r"""The network (matrix) form of zCDP-NFL (P2 Section 4.1; docs/papers/zcdp_nfl.md#network-form) and the terms of Lemma
II / Theorem II.

Built independently of the reference implementation (:mod:`reference_impl.zcdp_nfl`), from the oriented-link incidence
blocks of P2:
for each oriented link :math:`q = (k, l)`, :math:`(A_1)_{q,k} = (A_2)_{q,l} = 1`;
:math:`H_\pm = A_1^\top \pm A_2^\top`, :math:`L_\pm = \tfrac12 H_\pm H_\pm^\top`,
:math:`M = \tfrac12(L_+ + L_-)`, :math:`Q = (L_-/2)^{1/2}` (eigendecomposition). All are K x K; the
:math:`\otimes I_P` acts on the columns of (K, P) arrays.

Identities of docs/papers/zcdp_nfl.md#network-form evaluated on a recorded trajectory (index n = iteration n,
:math:`\tilde w^{(0)} = 0`):

.. math::

    \hat f'(\mathfrak w^{(n+1)}) &= \operatorname{diag}(1/\eta^{(n+1)})(\mathfrak w^{(n+1)} - \tilde w^{(n)}) +
    f'(\tilde w^{(n)})
        \quad [= 2D^2(\cdot) + f'] \\
    0 &= \hat f' + \alpha^{(n)} + 2\rho M\mathfrak w^{(n+1)} - \rho L_+\tilde w^{(n)}  \qquad (16) \\
    \alpha^{(n+1)} &= \alpha^{(n)} + \rho L_-\tilde w^{(n+1)} \\
    L_-\xi^{(n+1)} &= \hat f'/\rho + 2Qr^{(n+1)} + L_+(\mathfrak w^{(n+1)} - \tilde w^{(n)})
    \qquad (17)\ \text{corrected (erratum E14, docs/papers/zcdp_nfl.md#erratum-e14)}

with :math:`\alpha^{(n)} = \gamma^{(n)}` stacked, :math:`r^{(n)} = \sum_{s=0}^n Q\tilde w^{(s)}`. The printed forms
use :math:`2D` for :math:`2D^2` (erratum E13, docs/papers/zcdp_nfl.md#erratum-e13) and :math:`2M\xi^{(n+1)}` on the
right of (17) (E14).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["BOUND_VARIANTS", "NetworkMatrices", "lemma2_sides", "network_matrices", "network_residuals",
           "theorem2_sides"]

#: The forms of the bound (19) of Theorem II: as printed, and with the corrections
#: erratum E13 (docs/papers/zcdp_nfl.md#erratum-e13) (2D^2 for 2D) and
#: erratum E17 (docs/papers/zcdp_nfl.md#erratum-e17).
BOUND_VARIANTS = ("printed", "D2", "D_half_L_plus", "D2_half_L_plus")

#: ``problem`` arguments below are any object with the attributes of ``reference_impl.zcdp_nfl.NFLProblem`` that
#: they read (``adjacency``, ``K``, ``subgradients``, ``stacked_objective``); theory imports no simulation code.


@dataclass(frozen=True, kw_only=True)
class NetworkMatrices:
    """K x K blocks of the matrix form and the constant c_xi of Lemma II."""

    L_plus: np.ndarray
    L_minus: np.ndarray
    M: np.ndarray
    Q: np.ndarray
    c_xi: float


def network_matrices(problem) -> NetworkMatrices:
    r"""Incidence-built :math:`L_\pm, M, Q` and
    :math:`c_\xi = 4(\Phi_{\max}(L_-)^2 + \Phi_{\max}(L_+)^2)/\Phi_{\min}(L_-)`."""
    A = problem.adjacency
    K = problem.K
    k_idx, l_idx = np.nonzero(A)  # both orientations: 2E oriented links
    A1 = np.zeros((k_idx.size, K))
    A2 = np.zeros((k_idx.size, K))
    A1[np.arange(k_idx.size), k_idx] = 1.0
    A2[np.arange(k_idx.size), l_idx] = 1.0
    H_plus, H_minus = A1.T + A2.T, A1.T - A2.T
    L_plus, L_minus = 0.5 * H_plus @ H_plus.T, 0.5 * H_minus @ H_minus.T
    vals, vecs = np.linalg.eigh(0.5 * L_minus)
    Q = (vecs * np.sqrt(np.clip(vals, 0.0, None))) @ vecs.T
    sv_minus = np.linalg.svd(L_minus, compute_uv=False)
    sv_plus = np.linalg.svd(L_plus, compute_uv=False)
    nonzero = sv_minus[sv_minus > 1e-9 * sv_minus[0]]
    c_xi = 4.0 * (sv_minus[0] ** 2 + sv_plus[0] ** 2) / nonzero[-1]
    return NetworkMatrices(L_plus=L_plus, L_minus=L_minus, M=0.5 * (L_plus + L_minus), Q=Q, c_xi=float(c_xi))


def _rel(res, scale):
    return float(np.max(np.abs(res)) / max(float(np.max(scale)), np.finfo(float).tiny))


def network_residuals(problem, rho: float, etas, traj: dict, run: int = 0) -> dict[str, np.ndarray]:
    r"""Relative residuals of (16), the dual recursion and (17), corrected and printed, for n = 0..T-1.

    Each residual is :math:`\max|\text{lhs} - \text{rhs}|` over the (K, P) entries divided by the largest
    magnitude of the terms it sums (so rounding gives a few multiples of machine epsilon).
    """
    net = network_matrices(problem)
    w, wt, alpha, xi = (traj[k][run] for k in ("w", "w_tilde", "gamma", "xi"))
    T = wt.shape[0] - 1
    r = np.cumsum(np.einsum("ij,njp->nip", net.Q, wt), axis=0)  # r^(n), n = 0..T
    r_scale = np.cumsum(np.einsum("ij,njp->nip", np.abs(net.Q), np.abs(wt)), axis=0)  # sum of |terms| of r^(n)
    out = {name: np.zeros(T) for name in ("eq16", "eq16_printed_D", "dual", "eq17", "eq17_printed")}
    for n in range(T):
        eta = etas[n]  # eta^(n+1)
        g = problem.subgradients(wt[n])
        step = w[n + 1] - wt[n]
        fhat = step / eta + g
        fhat_printed = np.sqrt(2.0 / eta) * step + g
        tail = alpha[n] + 2.0 * rho * net.M @ w[n + 1] - rho * net.L_plus @ wt[n]
        spread = np.abs(w[n + 1]) + np.abs(wt[n])  # the step is a difference: its rounding scales with both ends
        scale16 = spread / eta + np.abs(g) + np.abs(alpha[n]) + np.abs(2.0 * rho * net.M @ w[n + 1]) + np.abs(
            rho * net.L_plus @ wt[n])
        out["eq16"][n] = _rel(fhat + tail, scale16)
        out["eq16_printed_D"][n] = _rel(fhat_printed + tail, scale16)
        dual = alpha[n + 1] - alpha[n] - rho * net.L_minus @ wt[n + 1]
        out["dual"][n] = _rel(dual, np.abs(alpha[n + 1]) + np.abs(alpha[n]) + np.abs(rho * net.L_minus @ wt[n + 1]))
        lhs17 = fhat / rho + 2.0 * net.Q @ r[n + 1] + net.L_plus @ step
        scale17 = ((spread / eta + np.abs(g)) / rho + 2.0 * np.abs(net.Q) @ r_scale[n + 1] + net.L_plus @ spread
                   + np.abs(net.L_minus @ xi[n + 1]) + np.abs(2.0 * net.M @ xi[n + 1]))
        out["eq17"][n] = _rel(lhs17 - net.L_minus @ xi[n + 1], scale17)
        out["eq17_printed"][n] = _rel(lhs17 - 2.0 * net.M @ xi[n + 1], scale17)
    return out


def _ip(a, b):
    return np.sum(a * b, axis=(-2, -1))


def _quad(L, a):
    return _ip(a, np.einsum("ij,...jp->...ip", L, a))


def lemma2_sides(problem, rho: float, etas, traj: dict, w_star, *, variant: str = "D2"):
    r"""Both sides of Lemma II with :math:`r = 0` for n = 1..T-1, every run: arrays (runs, T-1).

    ``variant="D"``: the printed last term
    :math:`\langle\tilde w^{(n)} - \mathfrak w^*, (2/\rho)D^{(n+1)}(\tilde w^{(n)} - \tilde w^{(n+1)})\rangle`;
    ``"D2"``: :math:`2D^2 = \operatorname{diag}(1/\eta^{(n+1)})` in its place
    (erratum E13, docs/papers/zcdp_nfl.md#erratum-e13). Terms of docs/papers/zcdp_nfl.md#lemma-2:

    .. math::

        \text{LHS} &= (f(\tilde w^{(n)}) - f(\mathfrak w^*))/\rho \\
        \text{RHS} &= \tfrac1\rho(\lVert q^{(n-1)} - q^*\rVert_G^2 - \lVert q^{(n)} - q^*\rVert_G^2)
            - 2\langle Q\tilde w^{(n)}, Q\tilde w^{(n+1)}\rangle - \lVert\tilde w^{(n)} - \tilde
            w^{(n-1)}\rVert^2_{L_+/2} \\
            &\quad + \langle\tilde w^{(n)} - \mathfrak w^*, L_+(2\tilde w^{(n)} - \tilde w^{(n-1)} - \tilde
            w^{(n+1)})\rangle
            + c_\xi\lVert\xi^{(n+1)}\rVert^2 + \text{last term}

    with :math:`\lVert q - q^*\rVert_G^2
    = \rho\lVert r^{(n)}\rVert^2 + \tfrac\rho2\lVert\tilde w^{(n)} - \mathfrak w^*\rVert^2_{L_+}`.
    """
    if variant not in ("D", "D2"):
        raise ValueError(f"variant must be 'D' or 'D2', got {variant!r}")
    net = network_matrices(problem)
    wt, xi = traj["w_tilde"], traj["xi"]  # (runs, T + 1, K, P)
    T = wt.shape[1] - 1
    w_star = np.broadcast_to(np.asarray(w_star, dtype=np.float64), wt.shape[-2:])
    Qw = np.einsum("ij,rnjp->rnip", net.Q, wt)
    r = np.cumsum(Qw, axis=1)
    dev = wt - w_star
    G = rho * np.sum(r**2, axis=(-2, -1)) + 0.5 * rho * _quad(net.L_plus, dev)  # (runs, T + 1)
    n = np.arange(1, T)
    cur, prev, nxt = wt[:, n], wt[:, n - 1], wt[:, n + 1]
    f_star = problem.stacked_objective(w_star)
    lhs = (problem.stacked_objective(cur) - f_star) / rho
    eta_next = np.asarray(etas)[n][None, :, None, None]  # eta^(n+1) is etas[n]
    weight = np.sqrt(1.0 / (2.0 * eta_next)) * 2.0 / rho if variant == "D" else 1.0 / (rho * eta_next)
    rhs = ((G[:, n - 1] - G[:, n]) / rho - 2.0 * _ip(Qw[:, n], Qw[:, n + 1]) - 0.5 * _quad(net.L_plus, cur - prev)
           + _ip(dev[:, n], np.einsum("ij,rnjp->rnip", net.L_plus, 2.0 * cur - prev - nxt))
           + net.c_xi * np.sum(xi[:, n + 1] ** 2, axis=(-2, -1))
           + _ip(dev[:, n], weight * (cur - nxt)))
    return lhs, rhs


def theorem2_sides(problem, *, rho: float, etas, w_tilde, w_star, sigma2_0: float, tau: float, T: int,
                   variant: str = "printed") -> tuple[np.ndarray, np.ndarray]:
    r"""Per run: LHS :math:`f(\hat w^{(T)}) - f(\mathfrak w^*)` and the RHS of (19) (docs/papers/zcdp_nfl.md#theorem-2),
    shape (runs,).

    ``variant``: ``printed`` ((2/rho) D and the identically-zero
    :math:`\rho\lVert\tilde w^{(0)} - \mathfrak w^*\rVert^2_{L_-}/T`),
    ``D2`` (:math:`2D^2` for :math:`2D`), ``D_half_L_plus`` / ``D2_half_L_plus`` (last term
    :math:`(\rho/2)\lVert\tilde w^{(0)} - \mathfrak w^*\rVert^2_{L_+}/T`,
    erratum E17 (docs/papers/zcdp_nfl.md#erratum-e17)). The noise term uses S1's
    :math:`\sigma^2(0)` (``sigma2_0``) and decay ``tau``. ``w_tilde``: the run's :math:`\tilde w^{(n)}`, shape
    (runs, rounds + 1, K, P), at least T + 2 entries; ``etas[n]`` is :math:`\eta^{(n+1)}`.
    """
    if variant not in BOUND_VARIANTS:
        raise ValueError(f"variant must be one of {BOUND_VARIANTS}, got {variant!r}")
    net = network_matrices(problem)
    rho = float(rho)
    wt = np.asarray(w_tilde)
    etas = np.asarray(etas)
    if wt.shape[1] < T + 2:
        raise ValueError(f"the run needs at least T + 1 = {T + 1} rounds, got {wt.shape[1] - 1}")
    w_star = np.broadcast_to(np.asarray(w_star, dtype=np.float64), (problem.K, problem.P))
    Lp = lambda a: np.einsum("ij,...jp->...ip", net.L_plus, a)  # noqa: E731
    Q = lambda a: np.einsum("ij,...jp->...ip", net.Q, a)  # noqa: E731
    n = np.arange(1, T + 1)
    cur, prev, nxt = wt[:, n], wt[:, n - 1], wt[:, n + 1]
    eta_next = etas[n][None, :, None, None]  # eta^(n+1)
    weight = (2.0 / rho) * np.sqrt(1.0 / (2.0 * eta_next)) if variant.startswith("D_") or variant == "printed" \
        else 1.0 / (rho * eta_next)
    terms = (-2.0 * _ip(Q(cur), Q(nxt)) - 0.5 * _ip(cur - prev, Lp(cur - prev))
             + _ip(cur - w_star, weight * (cur - nxt))
             - _ip(w_star, Lp(2.0 * cur - prev - nxt)) + _ip(nxt - cur, Lp(nxt - cur)))
    noise = rho * problem.P * net.c_xi * problem.K * float(sigma2_0) / (1.0 - float(tau)) / T
    w0 = wt[:, 0]
    last = (0.5 * rho * _ip(w0 - w_star, Lp(w0 - w_star)) if variant.endswith("half_L_plus")
            else rho * _ip(w0 - w_star, np.einsum("ij,...jp->...ip", net.L_minus, w0 - w_star)))
    rhs = ((rho / T) * terms.sum(axis=1) + noise + _ip(wt[:, 1], Lp(wt[:, 1] - w0)) / T
           + rho * _ip(Q(w0), Q(w0)) / T + last / T)
    w_hat = wt[:, 1:T + 1].mean(axis=1)
    lhs = problem.stacked_objective(w_hat) - problem.stacked_objective(w_star)
    return lhs, rhs
