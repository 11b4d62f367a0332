r"""FedPDM-DP: sensitivity of an upload given only the released history (the history factor :math:`\kappa`).

Theorem 1 of the seed (eq. (19)) bounds the sensitivity of client :math:`i`'s upload
:math:`y_i^{t+1} = x_i^{t+1} - \lambda_i^{t+1}/\rho` for a *fixed* round-start state
:math:`(x_i^{t,0}, \lambda_i^t, x_0^t)`. That state is private: it depends on the client's data
through all its earlier rounds and is never released. Given only the released history (the
public :math:`x_0` sequence), two neighbouring data sets carry different states into round
:math:`t`, and under the same per-step model that (19) uses (every mini-batch gradient of the
two neighbours differs by at most :math:`2G`) the upload differs by up to :math:`\kappa\, s_{i,t}`.

Linear model (exact for the algorithm's update equations (10a)-(10d), lines 114-120). With
:math:`a = 1 - \eta\rho`, :math:`b = a^Q`, the state difference :math:`(e, \ell) = (\Delta x_i,
\Delta\lambda_i/\rho)` before a participation and the gradient differences :math:`d^r` of its
:math:`Q` steps, put :math:`u = \eta\sum_{r<Q} a^{Q-1-r} d^r`. Then

* warm start (:math:`x_i^{t,0} = x_i^t`): :math:`(e, \ell) \mapsto (b e + (1-b)\ell - u,\; -b e + b\ell + u)`
  and :math:`\Delta y = 2b e + (1 - 2b)\ell - 2u`;
* global start (:math:`x_i^{t,0} = x_0^t`, so :math:`e = 0`): :math:`\ell \mapsto b\ell + u` and
  :math:`\Delta y = (1 - 2b)\ell - 2u`.

Rounds without participation leave the state unchanged. So :math:`\Delta y_n = \sum_{j\le n} c_j u_j`
with scalar impulse-response coefficients :math:`c_j` (:math:`c_n = -2`), and since the map is a
scalar multiple of the identity in every coordinate the worst case over
:math:`\lVert d_j^r\rVert \le 2G` aligns all :math:`d_j^r` along one direction with the signs of their
coefficients: :math:`\max\lVert\Delta y_n\rVert = 2G\sum_j |c_j|\,\eta_j\sum_{r<Q_j}|a_j|^r`. Dividing by
:math:`s_n = 4G\eta_n\sum_{r<Q_n}|a_n|^r` gives :math:`\kappa_n`; :math:`\kappa_1 = 1` recovers (19).

References
----------
.. [1] seed 001_322f61f9958f64f9.txt, Theorem 1, eqs. (18)-(19), lines 187-195; updates (10a)-(10d),
   lines 114-120; Algorithm 1, lines 158-180.
.. [2] docs/papers/fedpdm.md#theorem-1 (caveats), 4.2.4, erratum E4 (docs/papers/fedpdm.md#erratum-e4)
       and docs/papers/fedpdm.md#erratum-e4.
"""

from __future__ import annotations

import math

import numpy as np

from theory._validate import real_scalar, real_vector
from theory.privacy.sensitivity import sensitivity_fedpdm

__all__ = ["history_coefficients_fedpdm", "history_factor_limit_fedpdm", "history_factors_fedpdm"]

_STARTS = ("warm", "global")
#: Largest block length tried when bounding the tail of the warm-start series (see the limit function).
_MAX_BLOCK = 2**21
_U = 2.0**-53


def _start(local_start: str) -> str:
    if local_start not in _STARTS:
        raise ValueError(f"local_start must be one of {_STARTS}, got {local_start!r}")
    return local_start


def _schedule(etas, Qs, rho) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Validated (b_j, w_j = s_j/(4G), Q_j, rho) of a participation schedule."""
    etas = real_vector("etas", etas, "(0, inf)")
    try:
        qs = np.array(Qs, ndmin=1)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"Qs must be a sequence of integers, got {Qs!r}") from exc
    if qs.shape != etas.shape:
        raise ValueError(f"Qs must have the shape of etas {etas.shape}, got {qs.shape}")
    if not np.issubdtype(qs.dtype, np.integer) or (qs < 1).any():
        raise ValueError(f"Qs must hold integers >= 1, got {qs.tolist()!r}")
    rho = real_scalar("rho", rho, "(0, inf)")
    w = np.array([sensitivity_fedpdm(float(e), rho, int(q), 1.0) / 4.0 for e, q in zip(etas, qs, strict=True)])
    if not np.all(np.isfinite(w)):
        j = int(np.flatnonzero(~np.isfinite(w))[0])
        raise ValueError(f"etas[{j}] = {etas[j]!r} with Qs[{j}] = {int(qs[j])} gives an overflowing sensitivity "
                         f"(|1 - eta rho|^Q beyond the double range)")
    b = (1.0 - etas * rho) ** qs.astype(np.float64)
    return b, w, qs, rho


def _output_row(b: float, local_start: str) -> np.ndarray:
    return np.array([2.0 * b, 1.0 - 2.0 * b]) if local_start == "warm" else np.array([0.0, 1.0 - 2.0 * b])


def _transition(b: float, local_start: str) -> np.ndarray:
    if local_start == "warm":
        return np.array([[b, 1.0 - b], [-b, b]])
    return np.array([[0.0, 0.0], [0.0, b]])


_IMPULSE = np.array([-1.0, 1.0])  # a participation's own u enters as (e, l) += (-u, +u)


def history_coefficients_fedpdm(etas, Qs, rho, *, local_start="warm"):
    r"""Impulse-response coefficients :math:`c_j` of :math:`\Delta y_n = \sum_{j\le n} c_j u_j` at the last
    participation.

    Parameters
    ----------
    etas : array_like of float
        Step sizes :math:`\eta_j > 0` of the client's participations :math:`j = 1..n`, in order.
    Qs : array_like of int
        Local step counts :math:`Q_j \ge 1` of those participations (fixed in advance).
    rho : float
        Penalty :math:`\rho > 0`.
    local_start : {"warm", "global"}
        Local initialisation :math:`x_i^{t,0} = x_i^t` (warm) or :math:`x_0^t` (global).

    Returns
    -------
    numpy.ndarray
        :math:`c_1, \dots, c_n` (:math:`c_n = -2`). Here :math:`u_j = \eta_j\sum_{r<Q_j}
        a_j^{Q_j-1-r} d_j^r` with :math:`a_j = 1 - \eta_j\rho` and :math:`d_j^r` the difference of the
        two neighbours' mini-batch gradients at step :math:`r` of participation :math:`j`.

    Raises
    ------
    ValueError
        If a step size or count is out of range, the lengths differ, ``rho`` is not in (0, inf),
        ``local_start`` is unknown, or a sensitivity overflows.

    Notes
    -----
    Derived in the module docstring; both neighbours start from the same initial state and see
    the same public :math:`x_0` sequence, which cancels from the differences. A coefficient
    :math:`d_j^r` of :math:`\Delta y_n` is :math:`c_j\eta_j a_j^{Q_j-1-r}`.

    References
    ----------
    .. [1] seed 001_322f61f9958f64f9.txt, (10a)-(10d), lines 114-120; docs/papers/fedpdm.md#review-notes.

    Examples
    --------
    At :math:`\eta\rho = 1` only the previous participation leaks, with coefficient 1:

    >>> history_coefficients_fedpdm([0.1, 0.1, 0.1], [5, 5, 5], 10.0).tolist()
    [0.0, 1.0, -2.0]
    """
    local_start = _start(local_start)
    b, _, _, _ = _schedule(etas, Qs, rho)
    n = b.size
    coefficients = np.empty(n)
    coefficients[-1] = -2.0
    h = _output_row(float(b[-1]), local_start)
    # Propagate backwards: row vector r_j = h M_{n-1} ... M_{j+1}, c_j = r_j . impulse.
    row = h.copy()
    for j in range(n - 2, -1, -1):
        coefficients[j] = float(row @ _IMPULSE)
        row = row @ _transition(float(b[j]), local_start)
    return coefficients


def history_factors_fedpdm(etas, Qs, rho, *, local_start="warm"):
    r"""History factors :math:`\kappa_1, \dots, \kappa_n`: worst-case upload sensitivity given the released history
    over (19).

    .. math::

        \kappa_m = \frac{\max \lVert \Delta y_m \rVert}{s_m}
                 = \frac{\sum_{j \le m} |c^{(m)}_j|\, w_j}{2\, w_m}, \qquad
        w_j = \eta_j \sum_{r<Q_j} |1 - \eta_j\rho|^r = s_j/(4G),

    the maximum over all gradient-difference sequences with :math:`\lVert d_j^r\rVert \le 2G`
    (the per-step model of Theorem 1), for the :math:`m`-th participation of a client.

    Parameters
    ----------
    etas, Qs, rho, local_start
        As in :func:`history_coefficients_fedpdm`.

    Returns
    -------
    numpy.ndarray
        :math:`\kappa_m` for :math:`m = 1..n`; :math:`\kappa_1 = 1` (eq. (19) is exact for the first
        participation). ``inf`` where the value exceeds the double range.

    Raises
    ------
    ValueError
        As :func:`history_coefficients_fedpdm`.

    Notes
    -----
    Exact worst case of the linear model in the module docstring (tight: attained by
    :math:`d_j^r = 2G\,\mathrm{sign}(c_j a_j^{Q_j-1-r})\,e`). Vectorised forward propagation,
    :math:`O(n^2)` flops. :math:`\kappa_m` is nondecreasing in :math:`m` for a constant schedule.
    Corrects the seed's implicit claim :math:`\kappa \equiv 1` (docs/papers/fedpdm.md#erratum-e4).

    References
    ----------
    .. [1] seed 001_322f61f9958f64f9.txt, Theorem 1, eq. (19), lines 187-195.
    .. [2] docs/papers/fedpdm.md#erratum-e4 ("exactly 1.5 s at eta rho = 1").

    Examples
    --------
    At :math:`\eta\rho = 1` the upload leaks :math:`6\eta G` instead of :math:`4\eta G` from the second
    participation on:

    >>> kappa = history_factors_fedpdm([0.1] * 4, [3] * 4, 10.0)
    >>> bool(kappa[0] == 1.0 and np.all(np.abs(kappa[1:] - 1.5) <= 1e-15))
    True
    """
    local_start = _start(local_start)
    b, w, _, _ = _schedule(etas, Qs, rho)
    n = b.size
    kappas = np.empty(n)
    states = np.empty((0, 2))  # row j: M_{m-1} ... M_{j+1} impulse, for j < m
    for m in range(n):
        h = _output_row(float(b[m]), local_start)
        with np.errstate(over="ignore", invalid="ignore"):
            leak = float(np.abs(states @ h) @ w[:m]) if m else 0.0
            kappas[m] = (leak + 2.0 * w[m]) / (2.0 * w[m])
            states = np.vstack([states @ _transition(float(b[m]), local_start).T, _IMPULSE])
    kappas[~np.isfinite(kappas)] = math.inf
    return kappas


def history_factor_limit_fedpdm(eta, rho, Q, *, local_start="warm"):
    r"""Supremum over participations of :math:`\kappa_n` for a constant step size and step count.

    With :math:`b = (1 - \eta\rho)^Q`:

    * global start: :math:`\kappa_\infty = 1 + \dfrac{|1 - 2b|}{2(1 - |b|)}` if :math:`|b| < 1`, else ``inf``;
    * warm start: :math:`\kappa_\infty = 1 + \tfrac12\sum_{m\ge0} |h M^m v|` with
      :math:`M = \begin{pmatrix} b & 1-b\\ -b & b\end{pmatrix}`, :math:`h = (2b, 1-2b)`,
      :math:`v = (-1, 1)`; finite iff :math:`-1/3 < b < 1` (spectral radius :math:`\sqrt b` for
      :math:`b \ge 0`, :math:`|b| + \sqrt{b^2 + |b|}` for :math:`b < 0`), else ``inf``.

    Parameters
    ----------
    eta : float
        Constant local step size :math:`\eta > 0`.
    rho : float
        Penalty :math:`\rho > 0`.
    Q : int
        Constant number of local steps :math:`Q \ge 1`.
    local_start : {"warm", "global"}
        Local initialisation.

    Returns
    -------
    float
        :math:`\kappa_\infty \ge 1`, or ``math.inf`` when the history factor grows without bound.

    Raises
    ------
    ValueError
        If a parameter is out of range, or if the warm-start series converges too slowly to be
        bounded (:math:`\lVert M^{B}\rVert_2 \ge 1/2` for :math:`B = 2^{21}`, i.e. :math:`\eta\rho Q`
        below about 1e-6).

    Notes
    -----
    Warm start: the series is summed in blocks of :math:`B` terms with :math:`\lVert M^B\rVert_2 \le 1/2`;
    after each block the remaining tail is bounded by :math:`\lVert h\rVert \sum_{i<B}\lVert M^{kB+i}v\rVert
    /(1 - \lVert M^B\rVert_2)` and added, so the value returned errs upward (by at most :math:`4u`
    relative plus rounding of the partial sum). Global start: closed form (geometric series).

    References
    ----------
    .. [1] docs/papers/fedpdm.md#review-notes (correction to erratum E4 (docs/papers/fedpdm.md#erratum-e4), 3.5
           "Caveats" and 4.2.4).

    Examples
    --------
    At :math:`b = 0` (:math:`\eta\rho = 1`) both starts give 3/2; :math:`b \le -1/3` is unbounded:

    >>> history_factor_limit_fedpdm(0.1, 10.0, 5), history_factor_limit_fedpdm(0.1, 10.0, 5, local_start="global")
    (1.5, 1.5)
    >>> history_factor_limit_fedpdm(0.15, 10.0, 1)
    inf
    """
    local_start = _start(local_start)
    eta = real_scalar("eta", eta, "(0, inf)")
    rho = real_scalar("rho", rho, "(0, inf)")
    if isinstance(Q, bool) or not isinstance(Q, (int, np.integer)) or Q < 1:
        raise ValueError(f"Q must be an integer >= 1, got {Q!r}")
    with np.errstate(over="ignore"):
        b = float((1.0 - eta * rho) ** int(Q))
    if local_start == "global":
        return 1.0 + abs(1.0 - 2.0 * b) / (2.0 * (1.0 - abs(b))) if abs(b) < 1.0 else math.inf
    if not -1.0 / 3.0 < b < 1.0:
        return math.inf
    M = _transition(b, "warm")
    h = _output_row(b, "warm")
    # columns = [v, Mv, ..., M^{B-1} v], built by doubling alongside power = M^B.
    block, power, columns = 1, M.copy(), _IMPULSE.reshape(2, 1)
    while np.linalg.norm(power, 2) > 0.5:
        if block >= _MAX_BLOCK:
            raise ValueError(f"eta*rho*Q = {eta * rho * Q!r} is too small: the warm-start series converges too "
                             f"slowly to be bounded (need ||M^B|| <= 1/2 for some B <= {_MAX_BLOCK})")
        columns = np.hstack([columns, power @ columns])
        power, block = power @ power, 2 * block
    theta = float(np.linalg.norm(power, 2))
    total = 0.0
    h_norm = float(np.linalg.norm(h))
    while True:
        total += float(np.abs(h @ columns).sum())
        columns = power @ columns
        tail = h_norm * float(np.linalg.norm(columns, axis=0).sum()) / (1.0 - theta)
        if tail <= 4.0 * _U * total or tail == 0.0:
            return 1.0 + 0.5 * (total + tail)
