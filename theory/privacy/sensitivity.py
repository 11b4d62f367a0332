r"""Closed-form :math:`\ell_2` sensitivities of the papers' local updates (replace-one neighbours).

Each is the bound a paper states; whether it holds, and how tight it is, is checked in
``verify/`` (empirical sensitivity over adversarial neighbouring data sets).
"""

from __future__ import annotations

import math

from theory._validate import real_scalar

__all__ = ["sensitivity_fedpdm", "sensitivity_pgfl", "sensitivity_zcdp_nfl"]


def _count(name: str, value, lower: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < lower:
        raise ValueError(f"{name} must be an integer >= {lower}, got {value!r}")
    return value


def sensitivity_pgfl(C, rho, D):
    r"""PGFL Lemma 1: sensitivity of a client's primal update.

    .. math:: \Delta_{k,2} \le \frac{2 C_k}{\rho D_k}

    Parameters
    ----------
    C : float
        Per-sample gradient bound :math:`C_k \ge 0` (Assumption 3: :math:`\lVert\nabla\ell\rVert \le C_k`).
    rho : float
        ADMM penalty :math:`\rho > 0`.
    D : int
        Number of samples :math:`D_k \ge 1` of the client.

    Returns
    -------
    float

    Notes
    -----
    The paper writes "=", but only "≤" holds in general (the objective of the client subproblem is
    :math:`\rho`-strongly convex and swapping one sample changes its gradient by at most
    :math:`2C_k/D_k`). It is attained for some convex losses with bounded gradients (Huber in its
    linear region, :math:`D_k = 1`), never for logistic loss. Hypotheses: Assumptions 1 and 3.

    References
    ----------
    .. [1] seed 000_133b71fd0aa99eb4.txt, Lemma 1, eqs. (42)/(45), lines 346-370; seed
       004_180cd372987d137b.txt, Lemma 5.1, eq. (5.31), line 1462.

    Examples
    --------
    Halving the penalty doubles the sensitivity:

    >>> sensitivity_pgfl(1.0, 0.25, 10) == 2 * sensitivity_pgfl(1.0, 0.5, 10)
    True
    """
    C = real_scalar("C", C, "[0, inf)")
    rho = real_scalar("rho", rho, "(0, inf)")
    D = _count("D", D, 1)
    return 2.0 * C / (rho * D)


def sensitivity_zcdp_nfl(c1, M, rho, degree, eta):
    r"""zCDP-NFL Lemma I: sensitivity of a client's linearised primal update at iteration :math:`n`.

    .. math:: \Delta_{k,2}(n) \le \frac{2 c_1}{M_k\,(2\rho\,|\mathcal N_k| + 1/\eta^{(n)})}

    Parameters
    ----------
    c1 : float
        Per-sample subgradient bound :math:`c_1 \ge 0` (Assumption 1).
    M : int
        Number of samples :math:`M_k \ge 1` of the client.
    rho : float
        ADMM penalty :math:`\rho > 0`.
    degree : int
        Number of neighbours :math:`d_k = |\mathcal N_k| \ge 0`.
    eta : float
        Step size :math:`\eta_k^{(n)} > 0` of the iteration (``math.inf`` drops the prox term).

    Returns
    -------
    float

    Notes
    -----
    Given the released history, the update is affine in the data term, so
    :math:`w_{k,D} - w_{k,D'} = -[\ell'(x_M, y_M) - \ell'(x', y')]/(M_k(2\rho d_k + 1/\eta))` exactly;
    the bound is attained when the two subgradients are antiparallel with norm :math:`c_1`.

    References
    ----------
    .. [1] seed 004_180cd372987d137b.txt, Lemma I, eq. (3.12), line 594; Publication 2, eq. (11),
       line 2025. Test vector (docs/papers/zcdp_nfl.md#lemma-1): c1 = 1, M = 50, rho = 1, d = 3,
       eta = 0.1 gives 0.0025.

    Examples
    --------
    >>> abs(sensitivity_zcdp_nfl(1.0, 50, 1.0, 3, 0.1) - 2.0 / (50 * (6.0 + 10.0))) < 1e-18
    True
    """
    c1 = real_scalar("c1", c1, "[0, inf)")
    M = _count("M", M, 1)
    rho = real_scalar("rho", rho, "(0, inf)")
    degree = _count("degree", degree, 0)
    if isinstance(eta, (int, float)) and not isinstance(eta, bool) and eta == math.inf:
        inv_eta = 0.0
    else:
        inv_eta = 1.0 / real_scalar("eta", eta, "(0, inf)")
    denominator = M * (2.0 * rho * degree + inv_eta)
    if denominator == 0.0:
        raise ValueError("degree and eta give an unbounded sensitivity: need degree >= 1 or a finite eta")
    return 2.0 * c1 / denominator


def sensitivity_fedpdm(eta, rho, Q, G):
    r"""FedPDM-DP Theorem 1, eq. (19): sensitivity of a client's upload after :math:`Q` local steps.

    .. math::

        s = 4\eta G \sum_{k=0}^{Q-1} |1 - \eta\rho|^k
          = \begin{cases} 4\eta G\,\dfrac{1 - |1-\eta\rho|^{Q}}{1 - |1-\eta\rho|}, & \eta\rho \ne 2,\\[4pt]
                          4\eta Q G, & \eta\rho = 2. \end{cases}

    Parameters
    ----------
    eta : float
        Local step size :math:`\eta^t > 0`.
    rho : float
        Penalty :math:`\rho > 0`.
    Q : int
        Number of local steps :math:`Q_i^t \ge 1` (must be fixed in advance, not data-dependent).
    G : float
        Mini-batch gradient bound :math:`G \ge 0` (Assumption 3).

    Returns
    -------
    float
        ``inf`` when :math:`|1-\eta\rho|^Q` exceeds the double range.

    Notes
    -----
    Evaluated as the geometric sum through expm1/log, which is continuous across
    :math:`\eta\rho = 2` (no branch tolerance needed). Hypotheses: the same round-start state
    :math:`(x_i^t, \lambda_i^t, x_0^t)` and the same :math:`Q` for both neighbours; the state is private
    and data-dependent, so (19) does not bound the sensitivity given only the released history
    (docs/papers/fedpdm.md#erratum-e4).

    References
    ----------
    .. [1] seed 001_322f61f9958f64f9.txt, Theorem 1, eqs. (18)-(19), lines 187-195; derivation in
       docs/papers/fedpdm.md#theorem-1.

    Examples
    --------
    At :math:`\eta\rho = 1` one step already saturates: :math:`s = 4\eta G` for every :math:`Q`.

    >>> sensitivity_fedpdm(0.1, 10.0, 7, 1.0) == sensitivity_fedpdm(0.1, 10.0, 1, 1.0) == 4 * 0.1
    True
    """
    eta = real_scalar("eta", eta, "(0, inf)")
    rho = real_scalar("rho", rho, "(0, inf)")
    Q = _count("Q", Q, 1)
    G = real_scalar("G", G, "[0, inf)")
    contraction = abs(1.0 - eta * rho)
    if contraction == 0.0:
        geometric = 1.0
    elif contraction == 1.0:
        geometric = float(Q)
    else:
        log_a = math.log(contraction)
        if Q * log_a > 709.0:
            return 0.0 if G == 0.0 else math.inf
        geometric = math.expm1(Q * log_a) / math.expm1(log_a)
    return 4.0 * eta * G * geometric
