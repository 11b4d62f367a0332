r"""PGFL Theorem II: the bound on the impact of inter-cluster learning.

Three independent evaluations of the same sequence :math:`B_1, \dots, B_n` are provided so that
checks can certify each against the others (agreement of independent methods, not a pinned
number): the collapsed product form (the one to use), the paper's literal sum of products, and
the one-step recursion.
"""

from __future__ import annotations

import numpy as np

from theory._validate import real_scalar, real_vector

__all__ = [
    "corollary_single_step_bound",
    "intercluster_bound",
    "intercluster_bound_recursive",
    "intercluster_bound_sum",
]


def intercluster_bound(taus, eta):
    r"""Bound :math:`B_1, \dots, B_n` of PGFL Theorem II, in collapsed product form.

    .. math::

        B_n \;=\; \sum_{i=1}^{n} \Bigl(\prod_{j=i+1}^{n} (1-\tau^{(j)})\Bigr)\tau^{(i)}\eta
            \;=\; \eta\Bigl(1 - \prod_{j=1}^{n}(1-\tau^{(j)})\Bigr),

    evaluated as :math:`-\eta\,\operatorname{expm1}\bigl(\sum_{j\le n}\operatorname{log1p}(-\tau^{(j)})\bigr)`,
    which has no cancellation when the :math:`\tau^{(j)}` are small.

    Parameters
    ----------
    taus : array_like of float, shape (n,)
        Inter-cluster learning weights :math:`\tau^{(1)}, \dots, \tau^{(n)}`, each in [0, 1].
    eta : float
        Maximum squared distance between cluster optima,
        :math:`\eta = \max_{q,r}\lVert w^\star_{(q)} - w^\star_{(r)}\rVert_2^2 \ge 0`.

    Returns
    -------
    numpy.ndarray, shape (n,)
        Read-only array whose entry ``m - 1`` is :math:`B_m`.

    Raises
    ------
    ValueError
        If ``taus`` is empty or has an entry outside [0, 1] (NaN included), or ``eta`` is
        negative or not finite.

    Notes
    -----
    The identity between the sum and the product form telescopes:
    :math:`1-\prod_{j\le n}(1-\tau^{(j)})` satisfies the same recursion
    :math:`B_n = (1-\tau^{(n)})B_{n-1} + \tau^{(n)}\eta`, :math:`B_0 = 0`, as the sum. It shows
    :math:`0 \le B_n \le \eta\min(1, \sum_{j\le n}\tau^{(j)})` and that :math:`B_n` is
    non-decreasing in :math:`n`. It is a statement about the right-hand side only: whether the
    simulated distance obeys it is a separate claim (``pgfl.theorem2``).

    Rounding: relative error at most about :math:`(n + 3)\,u` (:math:`u` the unit roundoff),
    since every term of the log-sum has the same sign and :math:`x e^x/(e^x-1) \le 1` for
    :math:`x \le 0` bounds the conditioning of expm1.

    References
    ----------
    .. [1] seed 000_133b71fd0aa99eb4.txt, Theorem II, eqs. (27)-(28) (thesis seed 004, Theorem 5.2,
       eq. (5.27)); collapsed form derived in docs/papers/pgfl.md#results "Theorem II".

    Examples
    --------
    Constant :math:`\tau` gives :math:`B_n = \eta(1-(1-\tau)^n)`:

    >>> import numpy as np
    >>> B = intercluster_bound([0.4, 0.4, 0.4], eta=1.0)
    >>> bool(np.allclose(B, [0.4, 0.64, 0.784], rtol=8 * np.finfo(float).eps))
    True
    """
    tau = real_vector("taus", taus, "[0, 1]")
    eta = real_scalar("eta", eta, "[0, inf)")
    with np.errstate(divide="ignore"):  # log1p(-1) = -inf is the exact value for tau = 1
        log_survival = np.cumsum(np.log1p(-tau))
    bound = -eta * np.expm1(log_survival)
    bound.setflags(write=False)
    return bound


def intercluster_bound_sum(taus, eta):
    r"""Bound of PGFL Theorem II evaluated literally as the paper prints it.

    .. math::

        B_m = \sum_{i=1}^{m} \Bigl(\prod_{j=i+1}^{m} (1-\tau^{(j)})\Bigr)\tau^{(i)}\eta,
        \qquad m = 1, \dots, n,

    with the empty product (:math:`i = m`) equal to 1. Cost :math:`O(n^2)`; it exists as an
    independent cross-check of :func:`intercluster_bound`.

    Parameters
    ----------
    taus : array_like of float, shape (n,)
        :math:`\tau^{(1)}, \dots, \tau^{(n)}`, each in [0, 1].
    eta : float
        :math:`\eta \ge 0`, as in :func:`intercluster_bound`.

    Returns
    -------
    numpy.ndarray, shape (n,)
        Read-only array of :math:`B_1, \dots, B_n`.

    Notes
    -----
    All terms are non-negative, so the rounding error is at most about :math:`(2m + 2)\,u`
    relative for :math:`B_m`.

    References
    ----------
    .. [1] seed 000_133b71fd0aa99eb4.txt, Theorem II, eq. (27).

    Examples
    --------
    >>> import numpy as np
    >>> taus = [0.1, 0.7, 0.3]
    >>> bool(np.allclose(intercluster_bound_sum(taus, 2.0), intercluster_bound(taus, 2.0),
    ...                  rtol=16 * np.finfo(float).eps))
    True
    """
    tau = real_vector("taus", taus, "[0, 1]")
    eta = real_scalar("eta", eta, "[0, inf)")
    n = tau.size
    reverse = np.ascontiguousarray((1.0 - tau)[::-1])   # 1 - tau_j for j = n..1
    bound = np.empty_like(tau)
    terms = np.empty(n)
    for m in range(1, n + 1):
        # suffix[i] = prod_{j=i+1}^{m} (1 - tau_j) for i = 1..m (0-based i = 0..m-1), multiplied from j = m down
        suffix = terms[:m]
        np.cumprod(reverse[n - m:n - 1], out=suffix[-2::-1] if m > 1 else suffix[:0])
        suffix[-1] = 1.0
        np.multiply(suffix, tau[:m], out=suffix)
        np.multiply(suffix, eta, out=suffix)
        bound[m - 1] = np.add.reduce(suffix)
    bound.setflags(write=False)
    return bound


def intercluster_bound_recursive(taus, eta):
    r"""Bound of PGFL Theorem II by the one-step recursion.

    .. math::

        B_0 = 0, \qquad B_m = (1-\tau^{(m)})\,B_{m-1} + \tau^{(m)}\eta .

    Each step is a convex combination of :math:`B_{m-1}` and :math:`\eta`, so
    :math:`B_m \le \eta` holds step by step. This is the form the induction in the paper's
    proof uses.

    Parameters
    ----------
    taus : array_like of float, shape (n,)
        :math:`\tau^{(1)}, \dots, \tau^{(n)}`, each in [0, 1].
    eta : float
        :math:`\eta \ge 0`.

    Returns
    -------
    numpy.ndarray, shape (n,)
        Read-only array of :math:`B_1, \dots, B_n`.

    References
    ----------
    .. [1] seed 000_133b71fd0aa99eb4.txt, proof of Theorem II (induction step, eqs. (29)-(39));
       recursion stated in docs/papers/pgfl.md#results "Theorem II".

    Examples
    --------
    >>> import numpy as np
    >>> taus = np.linspace(0.0, 1.0, 7)
    >>> bool(np.allclose(intercluster_bound_recursive(taus, 3.0), intercluster_bound(taus, 3.0),
    ...                  rtol=32 * np.finfo(float).eps))
    True
    """
    tau = real_vector("taus", taus, "[0, 1]")
    eta = real_scalar("eta", eta, "[0, inf)")
    bound = np.empty_like(tau)
    previous = 0.0
    for m, t in enumerate(tau):
        previous = (1.0 - t) * previous + t * eta
        bound[m] = previous
    bound.setflags(write=False)
    return bound


def corollary_single_step_bound(tau_n, eta):
    r"""Bound of the Corollary to PGFL Theorem II: a single step of inter-cluster learning.

    If :math:`\tau^{(i)} = 0` for all :math:`i < n` and :math:`\tau^{(n)} \ne 0`, the bound of
    Theorem II reduces to

    .. math::

        B_n = \tau^{(n)}\eta .

    Parameters
    ----------
    tau_n : float
        The single non-zero weight :math:`\tau^{(n)}`, in [0, 1].
    eta : float
        :math:`\eta \ge 0`.

    Returns
    -------
    float

    References
    ----------
    .. [1] seed 000_133b71fd0aa99eb4.txt, Corollary, eq. (40) (seed 004, eq. (5.29)).

    Examples
    --------
    It is the last entry of the Theorem II bound for the sequence ``(0, ..., 0, tau_n)``
    (exactly so for the literal sum, whose other terms vanish):

    >>> float(intercluster_bound_sum([0.0, 0.0, 0.25], 2.0)[-1]) == corollary_single_step_bound(0.25, 2.0)
    True
    """
    tau_n = real_scalar("tau_n", tau_n, "[0, 1]")
    eta = real_scalar("eta", eta, "[0, inf)")
    return tau_n * eta
