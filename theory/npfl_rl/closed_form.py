r"""Closed forms of NPFL-RL for ridge regression: the primal step (6.11), dP/da, V_v and Assumption 1's eta.

All functions are pure and batched: leading axes of the arrays are batch axes (runs, clients).

References
----------
.. [1] seed 004_180cd372987d137b.txt, thesis Chapter 6, eqs. (6.5), (6.11)-(6.13), lines 1637-1701;
   Publication 7, eqs. (5), (11)-(13), Assumption 1, lines 3459, 3489-3555.
.. [2] docs/papers/npfl_rl.md#closed-form (corrected (6.11), #erratum-d2 to #erratum-d4), #controller (derivative),
   #k9.
"""

from __future__ import annotations

import numpy as np

__all__ = ["assumption1_eta", "npfl_primal_closed_form", "npfl_primal_derivative", "validation_value",
           "validation_value_derivative"]


def _arrays(H, b, m, s, c, omega, a):
    H = np.asarray(H, dtype=np.result_type(H, np.float64))
    b, m, s = (np.asarray(v) for v in (b, m, s))
    c, omega, a = (np.asarray(v) for v in (c, omega, a))
    if H.ndim < 2 or H.shape[-1] != H.shape[-2]:
        raise ValueError(f"H must have shape (..., d, d), got {H.shape}")
    d = H.shape[-1]
    for name, v in (("b", b), ("m", m), ("s", s)):
        if v.shape[-1:] != (d,):
            raise ValueError(f"{name} must have shape (..., d) with d = {d}, got {v.shape}")
    return H, b, m, s, c, omega, a, d


def npfl_primal_closed_form(H, b, m, s, c, omega, a):
    r"""Corrected closed-form primal update (6.11): :math:`P(a) = (H + (c + \omega a) I)^{-1}(b + a m + s)`.

    .. math::

        P_k(a) = \bigl(H_k + (c_k + \omega_k a) I_d\bigr)^{-1}\bigl(b_k + a\,m_k + s_k\bigr),\qquad
        c_k = \frac{\lambda}{|C_{(q)}|} + \rho |N_k \cap C_{(q)}|

    with :math:`H_k = X_k^\top X_k/D_k`, :math:`b_k = X_k^\top y_k/D_k`,
    :math:`m_k = \sum_{r\ne q}\omega_{k,r}\hat w_{k,(r)}`, :math:`\omega_k = \sum_r \omega_{k,r}` and
    :math:`s_k = (\rho/2)\sum_{l\in N_k\cap C_{(q)}}(w_k + w_l) - \gamma_k/2`.

    Parameters
    ----------
    H : array_like, shape (..., d, d)
        Symmetric positive semidefinite :math:`H_k`.
    b, m, s : array_like, shape (..., d)
    c, omega, a : array_like, shape (...)
        Diagonal shift :math:`c_k`, inter-cluster weight :math:`\omega_k \ge 0` and the value :math:`a` of
        :math:`\tau_k`. Complex ``a`` is allowed (complex-step derivatives).

    Returns
    -------
    numpy.ndarray, shape (..., d)

    Notes
    -----
    Exact argmin of the corrected (6.5) (norm of each difference, not of the sum, docs/papers/npfl_rl.md#erratum-d2;
    :math:`\rho|N_k\cap C_{(q)}|`, not :math:`\rho|N_k|`, #erratum-d3; the "+" restored, #erratum-d4) if and only if
    :math:`c_k + \omega_k a > 0` (then the Hessian is positive definite); otherwise only a stationary point, or none
    (docs/papers/npfl_rl.md#k10). The factor :math:`\omega_k` of :math:`a` on the diagonal replaces the printed 1 when a
    cluster is missing from :math:`N_k` (docs/papers/npfl_rl.md#choice-empty-cluster).

    References
    ----------
    .. [1] seed 004_180cd372987d137b.txt, thesis eq. (6.11), lines 1689-1690; Publication 7 eq. (11), 3539-3540;
       corrected per docs/papers/npfl_rl.md#closed-form (#erratum-d2 to #erratum-d4).

    Examples
    --------
    The gradient of the local objective vanishes at :math:`P(a)`:

    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(4, 3)); H = X.T @ X / 4; b, m, s = rng.normal(size=(3, 3))
    >>> w = npfl_primal_closed_form(H, b, m, s, 0.5, 1.0, 0.3)
    >>> bool(np.allclose(H @ w - b + 0.5 * w + 0.3 * (w * 1.0) - 0.3 * m - s, 0.0, atol=1e-12))
    True
    """
    H, b, m, s, c, omega, a, d = _arrays(H, b, m, s, c, omega, a)
    shift = c + omega * a
    A = H + shift[..., None, None] * np.eye(d)
    rhs = b + a[..., None] * m + s
    return np.linalg.solve(A, rhs[..., None])[..., 0]


def npfl_primal_derivative(H, b, m, s, c, omega, a):
    r""":math:`dP/da = A(a)^{-1}(m - \omega P(a))` with :math:`A(a) = H + (c + \omega a) I`
    (docs/papers/npfl_rl.md#controller, #k5).

    Differentiating :math:`A(a)P(a) = b + a m + s` in :math:`a` gives :math:`\omega P + A\,dP/da = m`.

    References
    ----------
    .. [1] docs/papers/npfl_rl.md#controller (the derivative the seed omits, Publication 7 line 3553).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> X = rng.normal(size=(5, 3)); H = X.T @ X / 5; b, m, s = rng.normal(size=(3, 3))
    >>> f = lambda a: npfl_primal_closed_form(H, b, m, s, 0.4, 0.5, a)
    >>> fd = (f(0.2 + 1e-6) - f(0.2 - 1e-6)) / 2e-6
    >>> bool(np.allclose(npfl_primal_derivative(H, b, m, s, 0.4, 0.5, 0.2), fd, atol=1e-7))
    True
    """
    H, b, m, s, c, omega, a, d = _arrays(H, b, m, s, c, omega, a)
    P = npfl_primal_closed_form(H, b, m, s, c, omega, a)
    A = H + (c + omega * a)[..., None, None] * np.eye(d)
    return np.linalg.solve(A, (m - omega[..., None] * P)[..., None])[..., 0]


def validation_value(Hv, bv, cv, lam_q, w):
    r"""State/action value (6.12): :math:`V_v(w) = \frac{1}{D_k}\|y_v - X_v w\|^2 + \frac{\lambda}{|C_{(q)}|}\|w\|^2`.

    In sufficient statistics :math:`H_v = X_v^\top X_v/D_k`, :math:`b_v = X_v^\top y_v/D_k`,
    :math:`c_v = y_v^\top y_v/D_k`: :math:`V_v(w) = w^\top H_v w - 2 b_v^\top w + c_v + \lambda_q \|w\|^2`
    (no conjugation: complex ``w`` gives the analytic continuation needed by the complex-step derivative).

    References
    ----------
    .. [1] seed 004_180cd372987d137b.txt, thesis eq. (6.12), lines 1696-1697; Publication 7 eq. (12), 3550-3551.
    """
    w = np.asarray(w)
    quad = np.einsum("...i,...ij,...j->...", w, Hv, w)
    return quad - 2.0 * np.einsum("...i,...i->...", bv, w) + cv + lam_q * np.einsum("...i,...i->...", w, w)


def validation_value_derivative(H, b, m, s, c, omega, a, Hv, bv, lam_q):
    r""":math:`\frac{d}{da}V_v(P(a)) = \nabla V_v(P(a))^\top A(a)^{-1}(m - \omega P(a))`
    (docs/papers/npfl_rl.md#controller, the DPG step (6.13)).

    :math:`\nabla V_v(w) = 2H_v w - 2b_v + 2\lambda_q w`.

    References
    ----------
    .. [1] seed 004_180cd372987d137b.txt, thesis eq. (6.13), line 1701; docs/papers/npfl_rl.md#controller.
    """
    P = npfl_primal_closed_form(H, b, m, s, c, omega, a)
    grad = 2.0 * np.einsum("...ij,...j->...i", Hv, P) - 2.0 * np.asarray(bv) + 2.0 * np.asarray(lam_q)[..., None] * P
    dP = npfl_primal_derivative(H, b, m, s, c, omega, a)
    return np.einsum("...i,...i->...", grad, dP)


def assumption1_eta(w0, deltas):
    r"""Assumption 1 of P7 for the scalar generator :math:`w_q = (1 + \delta_q) w_0`: the smallest valid :math:`\eta`.

    .. math::

        \eta = \max_{q,r}\|w_q - w_r\|^2 = (\max_q\delta_q - \min_q\delta_q)^2\,\|w_0\|^2

    References
    ----------
    .. [1] seed 004_180cd372987d137b.txt, Publication 7, Assumption 1, line 3459; experiment set-up line 3570
       (thesis line 1714); docs/papers/npfl_rl.md#k9, #erratum-d17.

    Examples
    --------
    >>> w0 = np.array([3.0, 4.0]); dq = np.array([0.1, -0.2, 0.4])
    >>> W = (1 + dq)[:, None] * w0
    >>> eta = assumption1_eta(w0, dq)
    >>> bool(np.isclose(eta, max(np.sum((W[i] - W[j]) ** 2) for i in range(3) for j in range(3))))
    True
    """
    w0 = np.asarray(w0, dtype=np.float64)
    deltas = np.asarray(deltas, dtype=np.float64)
    if w0.ndim != 1 or deltas.ndim != 1 or deltas.size < 1:
        raise ValueError(f"w0 and deltas must be non-empty vectors, got shapes {w0.shape} and {deltas.shape}")
    if not (np.all(np.isfinite(w0)) and np.all(np.isfinite(deltas))):
        raise ValueError("w0 and deltas must be finite")
    spread = float(deltas.max() - deltas.min())
    return spread * spread * float(w0 @ w0)
