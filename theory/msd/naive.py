r"""Naive (explicit) mean-square analysis of PAO-Fed: form :math:`\mathcal Q_A`, :math:`\mathcal Q_B`,
:math:`\mathcal F`.

Literal route of the seed: build the :math:`(N_bD)^2 \times (N_bD)^2` matrices and solve densely.
Memory :math:`8N^4` bytes, time :math:`O(N^6)`; refused for :math:`N = N_bD > 100` (use
:mod:`theory.msd.structured`). Used as the independent reference for the structured route.

Closed forms (docs/papers/paofed.md#mean-square), written with the mixed product
:math:`(X \otimes Y) \otimes_b (X' \otimes Y') = (X \otimes X') \otimes (Y \otimes Y')` for
block-scalar factors. With :math:`A_e = I + \sum_k E_k \otimes a_kM_k`,
:math:`E_k = e_k(e_0 - e_k)^T`, and :math:`B_e = T \otimes I + \sum_q F_q \otimes \beta_qS_q`,
:math:`F_q = e_0(e_{\iota(q)} - e_0)^T`:

.. math::

    \mathcal Q_A &= (\bar A \otimes \bar A) \otimes I_{D^2}
        + \sum_k (E_k \otimes E_k) \otimes (p_k\Gamma - c_k^2 I_{D^2}),\\
    \mathcal Q_B &= (\bar B \otimes \bar B) \otimes I_{D^2}
        + \sum_{q,q'} (F_q \otimes F_{q'}) \otimes (E[\beta_q\beta_{q'}] - \bar\beta_q\bar\beta_{q'})p_m^2 I_{D^2}
        + \sum_q (F_q \otimes F_q) \otimes E[\beta_q^2](\Gamma - p_m^2 I_{D^2}),

:math:`\Gamma = E[M \otimes M] = \mathrm{Diag}(\mathrm{vec}\,\Pi)`; block by block these are the formulas
of docs/papers/paofed.md#mean-square ("Closed form of Q_A / Q_B").

References
----------
.. [1] seed 004_180cd372987d137b.txt, Ch. (4.26)-(4.34) lines 1016-1072; P4 (28)-(38) lines 2712-2785;
   P4 App. A/B lines 2887-2947 (with errata E1-E4 (docs/papers/paofed.md#erratum-e1 to #erratum-e4),
   errata E10-E14 (docs/papers/paofed.md#erratum-e10 to #erratum-e14) of docs/papers/paofed.md#errata).
.. [2] docs/papers/paofed.md#mean-square.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp
from scipy.sparse import linalg as spla

from theory.msd.block import bvec
from theory.msd.expectations import AnalysisMoments, _moments, expected_A, expected_B
from theory.msd.structured import _check_model, initial_covariance, noise_covariance

__all__ = [
    "NAIVE_MAX_N",
    "f_matrix",
    "middle_factor",
    "msd_steady_state_naive",
    "msd_transient_naive",
    "noise_vector_h",
    "qa_matrix",
    "qb_matrix",
    "r4_gaussian",
    "spectral_radius_naive",
]

#: Largest extended-state size N = N_b D for which the explicit (N^2 x N^2) F is formed (800 MB at N = 100).
NAIVE_MAX_N = 100


def _check_size(m: AnalysisMoments) -> None:
    if m.N > NAIVE_MAX_N:
        raise ValueError(f"N = N_b D = {m.n_blocks} x {m.D} = {m.N} exceeds the naive limit N <= {NAIVE_MAX_N} "
                         f"(F would be {m.N ** 2} x {m.N ** 2}, {8 * m.N ** 4 / 1e9:.3g} GB); "
                         "use theory.msd.structured")


def _unit(n: int, i: int, j: int) -> sp.csr_matrix:
    return sp.csr_matrix(([1.0], ([i], [j])), shape=(n, n))


def _gamma(m: AnalysisMoments) -> sp.dia_matrix:
    return sp.diags(m.Pi.reshape(-1))  # E[M (x) M] = Diag(vec Pi) (Pi symmetric)


def qa_matrix(x) -> sp.csr_matrix:
    r""":math:`\mathcal Q_A = E[A_e \otimes_b A_e]` (sparse, :math:`N^2 \times N^2`).

    Raises
    ------
    ValueError
        If :math:`N > 100`.

    Examples
    --------
    Right-stochastic with non-negative entries (P4 App. B, true for :math:`\mathcal Q_A`; entries that
    are exactly zero in the closed form, e.g. :math:`c_kc_{k'} - c_kc_{k'}`, come out as
    :math:`\pm` a few ulps):

    >>> import numpy as np
    >>> from theory.msd.instance import reference_instance
    >>> Q = qa_matrix(reference_instance())
    >>> bool(np.allclose(Q.sum(axis=1), 1.0)) and bool(Q.min() >= -4 * np.finfo(float).eps)
    True
    """
    m = _moments(x)
    _check_size(m)
    nb, D = m.n_blocks, m.D
    EA = expected_A(m, sparse=True)
    I2 = sp.identity(D * D, format="csr")
    out = sp.kron(sp.kron(EA, EA), I2, format="csr")
    gamma = _gamma(m)
    for k in range(1, m.K + 1):
        Ek = _unit(nb, k, 0) - _unit(nb, k, k)
        out = out + sp.kron(sp.kron(Ek, Ek), m.p[k - 1] * gamma - m.c[k - 1] ** 2 * I2, format="csr")
    return out.tocsr()


def qb_matrix(x) -> sp.csr_matrix:
    r""":math:`\mathcal Q_B = E[B_e \otimes_b B_e]` (sparse, :math:`N^2 \times N^2`).

    Row sums are one; entries can be negative (erratum E10 (docs/papers/paofed.md#erratum-e10): P4 App. B's
    non-negativity claim fails).

    Raises
    ------
    ValueError
        If :math:`N > 100`.
    """
    m = _moments(x)
    _check_size(m)
    nb, D, K, L = m.n_blocks, m.D, m.K, m.l_max
    EB = expected_B(m, sparse=True)
    I2 = sp.identity(D * D, format="csr")
    out = sp.kron(sp.kron(EB, EB), I2, format="csr")
    Q = K * (L + 1)
    U = np.zeros((nb, Q))  # column q: e_{iota(q)} - e_0, iota(q) = q + 1
    U[np.arange(1, nb), np.arange(Q)] = 1.0
    U[0, :] = -1.0
    cov = np.zeros((Q, Q))
    diag2 = np.zeros(Q)
    for ell in range(L + 1):
        sl = slice(ell * K, (ell + 1) * K)
        cov[sl, sl] = m.beta_second[ell] - np.outer(m.beta_bar[:, ell], m.beta_bar[:, ell])
        diag2[sl] = np.diag(m.beta_second[ell])
    row00 = sp.csr_matrix((U @ cov @ U.T).reshape(1, -1))
    rowd = sp.csr_matrix(((U * diag2) @ U.T).reshape(1, -1))
    e00 = sp.csr_matrix(([1.0], ([0], [0])), shape=(nb * nb, 1))
    out = out + sp.kron(e00 @ row00, m.p_m ** 2 * I2, format="csr")
    out = out + sp.kron(e00 @ rowd, _gamma(m) - m.p_m ** 2 * I2, format="csr")
    return out.tocsr()


def r4_gaussian(x) -> sp.csr_matrix:
    r""":math:`\mathcal R_4 = E[Z_eZ_e^T \otimes_b Z_eZ_e^T]` for zero-mean Gaussian :math:`z_{k,n} \sim N(0, R_k)`.

    Non-zero blocks only at local pairs: :math:`R_k \otimes R_{k'}` (:math:`k \ne k'`) and
    :math:`(I + K_{DD})(R_k \otimes R_k) + \mathrm{vec}(R_k)\mathrm{vec}(R_k)^T` (Isserlis).

    References
    ----------
    .. [1] docs/papers/paofed.md#mean-square (the seed neglects this term under A5 and states no fourth-moment model).
    """
    m = _moments(x)
    _check_size(m)
    nb, D, K = m.n_blocks, m.D, m.K
    perm = np.arange(D * D).reshape(D, D).T.reshape(-1)  # commutation matrix K_DD
    Kdd = sp.csr_matrix((np.ones(D * D), (np.arange(D * D), perm)), shape=(D * D, D * D))
    out = sp.csr_matrix((nb * nb * D * D, nb * nb * D * D))
    for k in range(1, K + 1):
        for kk in range(1, K + 1):
            RR = np.kron(m.R[k - 1], m.R[kk - 1])
            if k == kk:
                vr = m.R[k - 1].reshape(-1)
                RR = RR + Kdd @ RR + np.outer(vr, vr)
            out = out + sp.kron(sp.kron(_unit(nb, k, k), _unit(nb, kk, kk)), sp.csr_matrix(RR), format="csr")
    return out.tocsr()


def middle_factor(x, model: str = "seed", mu: float | None = None) -> sp.csr_matrix:
    r""":math:`I - \mu(I \otimes_b R_e) - \mu(R_e \otimes_b I)` [:math:`+\,\mu^2\mathcal R_4` for ``exact``]."""
    m = _moments(x)
    _check_size(m)
    _check_model(model)
    mu = m.mu if mu is None else float(mu)
    nb, D = m.n_blocks, m.D
    I_nb = sp.identity(nb, format="csr")
    I_D = sp.identity(D, format="csr")
    out = sp.identity(nb * nb * D * D, format="csr")
    for k in range(1, m.K + 1):
        Ekk = _unit(nb, k, k)
        muRk = sp.csr_matrix(mu * m.R[k - 1])  # scaled first: finite when mu is huge and R tiny
        out = out - sp.kron(sp.kron(I_nb, Ekk), sp.kron(I_D, muRk), format="csr")
        out = out - sp.kron(sp.kron(Ekk, I_nb), sp.kron(muRk, I_D), format="csr")
    if model == "exact":
        out = out + r4_gaussian(dataclasses.replace(m, R=mu * m.R))
    return out.tocsr()


def f_matrix(x, model: str = "seed", mu: float | None = None, *, dense: bool = True):
    r""":math:`\mathcal F = \mathcal Q_B[I - \mu(I \otimes_b R_e) - \mu(R_e \otimes_b I) (+\mu^2\mathcal R_4)]
    \mathcal Q_A`.

    ``model="seed"``: Ch. (4.26) / P4 (28) (Assumption A5 drops the :math:`\mu^2` term);
    ``model="exact"``: docs/papers/paofed.md#mean-square :math:`\mathcal F_{exact} = E[P_e \otimes_b P_e]` with Gaussian
    regressors.

    Raises
    ------
    ValueError
        If :math:`N > 100` or the model is unknown.

    References
    ----------
    .. [1] seed 004_180cd372987d137b.txt, Ch. (4.26) line 1018, P4 (28) line 2717; docs/papers/paofed.md#mean-square.
    """
    m = _moments(x)
    F = qb_matrix(m) @ middle_factor(m, model, mu) @ qa_matrix(m)
    return F.toarray() if dense else F.tocsr()


def noise_vector_h(x) -> np.ndarray:
    r""":math:`h = \mathcal Q_B\,\mathrm{bvec}(E[\Phi])` (Ch. (4.29), P4 (32))."""
    m = _moments(x)
    return qb_matrix(m) @ bvec(noise_covariance(m), m.D)


def _sigma_J(m: AnalysisMoments) -> np.ndarray:
    J = np.zeros((m.N, m.N))
    J[:m.D, :m.D] = np.eye(m.D)
    return bvec(J, m.D)


def msd_steady_state_naive(x, model: str = "seed", mu: float | None = None, *, solver: str = "dense") -> float:
    r""":math:`\mathrm{MSD}_\infty = \mu^2h^T(I - \mathcal F^T)^{-1}\sigma_J` by a direct LU solve of the explicit
    :math:`\mathcal F`.

    ``solver="dense"`` (LAPACK ``gesv`` on the dense :math:`N^2 \times N^2` matrix, the literal route) or
    ``"sparse"`` (SuperLU on the same explicit matrix stored sparse; same equations, much faster).

    :math:`\sigma_J = \mathrm{bvec}(\mathrm{blockdiag}(I_D, 0, \dots, 0))` (Ch. line 1072; the P4 sentence at
    line 2785 is truncated, erratum E14 (docs/papers/paofed.md#erratum-e14)).

    Raises
    ------
    ValueError
        If :math:`N > 100`.

    Examples
    --------
    >>> from theory.msd.instance import reference_instance
    >>> 0 < msd_steady_state_naive(reference_instance(0.1).with_mu(0.03)) < 1
    True
    """
    m = _moments(x)
    if solver not in ("dense", "sparse"):
        raise ValueError(f"solver must be 'dense' or 'sparse', got {solver!r}")
    mu = m.mu if mu is None else float(mu)
    h = noise_vector_h(m)
    if solver == "dense":
        F = f_matrix(m, model, mu)
        A = np.eye(F.shape[0]) - F.T
        del F
        y = np.linalg.solve(A, _sigma_J(m))
    else:
        F = f_matrix(m, model, mu, dense=False)
        A = (sp.identity(F.shape[0], format="csr") - F.T).tocsc()
        y = spla.spsolve(A, _sigma_J(m))
    return float(mu * ((mu * h) @ y))


def msd_transient_naive(x, n_iter: int, model: str = "seed", mu: float | None = None) -> np.ndarray:
    r"""Transient MSD by the seed's weighting recursion (P4 (35), Ch. (4.32)-(4.33),
    erratum E13 (docs/papers/paofed.md#erratum-e13)).

    .. math:: \mathrm{MSD}_n = w_e^{\star T}\mathrm{bvec}^{-1}\{(\mathcal F^T)^n\sigma_J\}w_e^\star
              + \mu^2h^T\sum_{j=0}^{n-1}(\mathcal F^T)^j\sigma_J

    Returns
    -------
    (n_iter + 1,) array.
    """
    m = _moments(x)
    if isinstance(n_iter, bool) or not isinstance(n_iter, (int, np.integer)) or n_iter < 0:
        raise ValueError(f"n_iter must be an integer >= 0, got {n_iter!r}")
    mu = m.mu if mu is None else float(mu)
    Ft = f_matrix(m, model, mu, dense=False).T.tocsr()
    h = noise_vector_h(m)
    w0 = bvec(initial_covariance(m), m.D)
    s = _sigma_J(m)
    out = np.empty(int(n_iter) + 1)
    noise = 0.0
    for n in range(int(n_iter) + 1):
        out[n] = w0 @ s + mu * (mu * noise)
        noise += h @ s
        s = Ft @ s
    return out


def spectral_radius_naive(x, model: str = "seed", mu: float | None = None) -> float:
    r""":math:`\rho(\mathcal F)` from all eigenvalues of the dense :math:`\mathcal F` (LAPACK ``geev``)."""
    return float(np.max(np.abs(np.linalg.eigvals(f_matrix(x, model, mu)))))

