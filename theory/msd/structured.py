r"""Structured (matrix-free) mean-square analysis of PAO-Fed: the covariance recursion (S1)/(S2).

With :math:`C_n = E[\tilde w_{e,n}\tilde w_{e,n}^T]` (:math:`N \times N`) and hypotheses I1-I5,
:math:`\mathrm{bvec}(C_{n+1}) = \mathcal F\,\mathrm{bvec}(C_n) + \mu^2 h`, i.e.

.. math::

    C_{n+1} &= \mathcal B(\mathcal R_\mu(\mathcal A(C_n))) + \mu^2\mathcal B(E[\Phi]),
    \qquad C_0 = w_e^\star w_e^{\star T},\qquad \mathrm{MSD}_n = \mathrm{tr}([C_n]_{00}) \qquad (S1)\\
    C_\infty &= \mathcal B\mathcal R_\mu\mathcal A(C_\infty) + \mu^2\mathcal B(E[\Phi]),
    \qquad \mathrm{MSD}_\infty = \mathrm{tr}([C_\infty]_{00}) \qquad (S2)

with :math:`\mathcal A(X) = E[A_eXA_e^T]`, :math:`\mathcal B(Y) = E[B_eYB_e^T]`,
:math:`\mathcal R_\mu(X) = X - \mu(R_eX + XR_e)` (the seed's :math:`\mathcal F`, Assumption A5) plus
:math:`\mu^2E[Z_eZ_e^TXZ_eZ_e^T]` for the exact :math:`\mathcal F` (zero-mean Gaussian regressors:
:math:`RXR + RX^TR + \mathrm{tr}(RX)R` on local diagonal blocks, :math:`R_kXR_{k'}` off the diagonal).
:math:`\mathcal F` itself, :math:`(N_bD)^2 \times (N_bD)^2`, is never formed.

Models: ``"seed"`` = Ch. (4.26) / P4 (28) (the :math:`\mu^2` term dropped); ``"exact"`` = spec 3.5
:math:`\mathcal F_{exact}` with Gaussian regressors :math:`z_{k,n} \sim N(0, R_k)`.

References
----------
.. [1] seed 004_180cd372987d137b.txt, Ch. (4.23)-(4.34) lines 1004-1072, P4 (25)-(38) lines 2698-2785
   (with errata E12-E14 of spec 6).
.. [2] shared/spec/paofed.md 3.5 (F_exact, noise term) and 3.6 (block formulas of A, R_mu, B; (S1), (S2)).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.sparse import linalg as spla

from theory.msd.expectations import AnalysisMoments, _moments
from theory.msd.krylov import LEAN_ETA, arpack_eigs, gmres

__all__ = [
    "MODELS",
    "SteadyState",
    "apply_A",
    "apply_B",
    "apply_F",
    "SymmetricPacking",
    "f_matvec",
    "apply_R",
    "initial_covariance",
    "msd_steady_state",
    "msd_transient",
    "noise_covariance",
    "spectral_radius_F",
]

#: Default cap on the Krylov steps of one (S2) solve round and on the Arnoldi restarts of one rho(F).
KRYLOV_MAXITER = 5000
ARNOLDI_MAXITER = 3000

#: Harmonic Ritz vectors kept at each restart of the ``gmres-dr`` (S2) solve (the slow modes of I - F).
DEFLATED_VECTORS = 10

#: Mean-square models: the seed's truncated F (Ch. (4.26), P4 (28)) and the exact F with Gaussian regressors.
MODELS = ("seed", "exact")


def _check_model(model: str) -> str:
    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}, got {model!r}")
    return model


def _matrix(X: np.ndarray, m: AnalysisMoments) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.shape != (m.N, m.N):
        raise ValueError(f"X must have shape (N, N) = ({m.N}, {m.N}), got {X.shape}")
    return X


def _add_diagonal_blocks(Z: np.ndarray, first_block: int, D: int, blocks: np.ndarray, *, col0: int = 0) -> None:
    """Z[b, b + col0 / D] += blocks[k] for the consecutive blocks b = first_block + k (in place)."""
    for k, blk in enumerate(blocks):
        r = (first_block + k) * D
        Z[r:r + D, col0 + r:col0 + r + D] += blk


def _weighted_block_sum(cov: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """sum_kj cov_kj Y[k, :, j, :] of the (K, D, K, D) block view ``Y``: ``einsum("kj,kajb->ab")`` as a batched
    matrix-vector product over j, then a sum over k (2.3x faster on the strided views of N = 2336)."""
    return np.matmul(Y.transpose(0, 1, 3, 2), cov[:, None, :, None])[..., 0].sum(axis=0)


def _symmetrize_square(A: np.ndarray, col0: int, n: int, diagonal: np.ndarray) -> None:
    """The n x n square A[:n, col0:col0 + n], zero below its diagonal, made symmetric (in place; ``diagonal`` is its
    diagonal: the sum with the transpose, buffered by numpy as the operands overlap, doubles it)."""
    sq = A[:n, col0:col0 + n]
    np.add(sq, sq.T, out=sq)
    stride = A.shape[1] + 1  # A is C-contiguous: its flat view is a view
    A.reshape(-1)[col0:col0 + n * stride:stride] = diagonal


def _output(X: np.ndarray, out: np.ndarray | None) -> np.ndarray:
    if out is None:
        return np.empty_like(X)
    if out.shape != X.shape or out.dtype != np.float64 or np.shares_memory(out, X):
        raise ValueError("out must be a float64 array of the shape of the input that does not share its memory")
    return out


def apply_A(m: AnalysisMoments, X: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    r""":math:`\mathcal A(X) = E[A_e X A_e^T]` (spec 3.6).

    .. math::

        \mathcal A(X) = \bar A X \bar A^T + \sum_k e_ke_k^T \otimes \bigl((p_k\Pi - c_k^2 11^T)\circ
        (X_{00} - X_{0k} - X_{k0} + X_{kk})\bigr)

    with :math:`\bar A = E[A_e]`; block-wise this is the formula of spec 3.6 (local/non-local,
    :math:`k \ne k'`, :math:`k = k'`). Cost :math:`O(K N_b D^2)`.

    Examples
    --------
    :math:`\mathcal A` fixes :math:`11^T \otimes W` (all blocks equal):

    >>> import numpy as np
    >>> from theory.msd.instance import reference_instance
    >>> from theory.msd.expectations import analysis_moments
    >>> m = analysis_moments(reference_instance())
    >>> X = np.kron(np.ones((13, 13)), np.eye(5) + 1.0)
    >>> bool(np.allclose(apply_A(m, X), X))
    True
    """
    X = _matrix(X, m)
    K, D, N = m.K, m.D, m.N
    c = m.c
    loc = slice(D, (K + 1) * D)
    # blocks of X needed by the correction term (before X is combined)
    x00 = X[:D, :D]
    x0k = X[:D, loc].reshape(D, K, D).transpose(1, 0, 2)
    xk0 = X[loc, :D].reshape(K, D, D)
    xkk = np.stack([X[(k + 1) * D:(k + 2) * D, (k + 1) * D:(k + 2) * D] for k in range(K)])
    delta = x00[None] - x0k - xk0 + xkk
    Z = _output(X, out)
    Z[...] = X
    # local block rows, then columns: c_k X_0 + (1 - c_k) X_k as X_0 + (1 - c_k)(X_k - X_0), in place (no (K, D, N)
    # temporaries: 2x less time at N = 2336)
    Zr = Z[loc].reshape(K, D, N)
    np.subtract(Zr, X[None, :D], out=Zr)
    Zr *= (1.0 - c)[:, None, None]
    Zr += X[None, :D]
    Zc = Z[:, loc].reshape(N, K, D)  # a view of Z's local columns
    Zc -= Z[:, None, :D]
    Zc *= (1.0 - c)[None, :, None]
    Zc += Z[:, None, :D]
    weight = m.p[:, None, None] * m.Pi[None] - (c ** 2)[:, None, None]
    _add_diagonal_blocks(Z, 1, D, weight * delta)
    return Z


def apply_R(m: AnalysisMoments, X: np.ndarray, model: str = "seed", mu: float | None = None, *,
            out: np.ndarray | None = None) -> np.ndarray:
    r""":math:`\mathcal R_\mu(X) = X - \mu(R_eX + XR_e)` [:math:`+\,\mu^2E[Z_eZ_e^TXZ_eZ_e^T]` for ``exact``].

    Gaussian fourth moment (``exact``): :math:`\mu^2R_kX_{kk'}R_{k'}` on local blocks :math:`k \ne k'`,
    :math:`\mu^2(R_kX_{kk}R_k + R_kX_{kk}^TR_k + \mathrm{tr}(R_kX_{kk})R_k)` on local diagonal blocks.
    Cost :math:`O(K N_b D^3)` (+ :math:`O(K^2D^3)`).

    References
    ----------
    .. [1] spec 3.5 (R_4 for zero-mean Gaussian z, Isserlis) and 3.6.
    """
    _check_model(model)
    mu = m.mu if mu is None else float(mu)
    X = _matrix(X, m)
    K, D, N = m.K, m.D, m.N
    loc = slice(D, (K + 1) * D)
    Z = _output(X, out)
    Z[...] = X
    muR = mu * m.R  # scaled first: mu^2 R X R stays finite when mu is huge and R tiny
    # batched matmul (BLAS per block) rather than einsum: 3.5x less CPU at N = 980
    Z[loc] -= np.matmul(muR, X[loc].reshape(K, D, N)).reshape(K * D, N)
    Zc = Z[:, loc].reshape(N, K, D)  # a view of Z's local columns
    Zc -= np.matmul(X[:, loc].reshape(N, K, D).transpose(1, 0, 2), muR).transpose(1, 0, 2)
    if model == "exact":
        XL = X[loc, loc]
        Y = np.matmul(muR, XL.reshape(K, D, K * D)).reshape(K * D, K, D).transpose(1, 0, 2)  # (K, KD, D)
        Z[loc, loc] += np.matmul(Y, muR).transpose(1, 0, 2).reshape(K * D, K * D)  # R_k X_kk' R_k'
        k = np.arange(K)
        xkk = XL.reshape(K, D, K, D)[k, :, k]  # (K, D, D)
        diag = muR @ xkk.transpose(0, 2, 1) @ muR + np.einsum("kab,kba->k", muR, xkk)[:, None, None] * muR
        _add_diagonal_blocks(Z, 1, D, diag)
    return Z


def apply_B(m: AnalysisMoments, Y: np.ndarray, *, out: np.ndarray | None = None,
            work: np.ndarray | None = None) -> np.ndarray:
    r""":math:`\mathcal B(Y) = E[B_e Y B_e^T]` (spec 3.6).

    .. math::

        \mathcal B(Y) = \bar BY\bar B^T + e_0e_0^T \otimes \Bigl(\sum_{q,q'}(E[\beta_q\beta_{q'}]
        - \bar\beta_q\bar\beta_{q'})p_m^2\hat Y_{qq'} + \sum_q E[\beta_q^2](\Pi - p_m^211^T)\circ\hat Y_{qq}\Bigr),

    :math:`\hat Y_{qq'} = Y_{\iota(q)\iota(q')} - Y_{\iota(q)0} - Y_{0\iota(q')} + Y_{00}`,
    :math:`\bar B = E[B_e]` (its rows :math:`i \ge 1` copy block :math:`\mathrm{src}(i)`: the local blocks
    stay, delay group :math:`l \ge 1` takes group :math:`l - 1`). The covariance of the weights vanishes
    across delay groups (I5). Cost :math:`O(N_b^2D^2 + K^2(l_{\max}+1)D^2)`.
    """
    Y = _matrix(Y, m)
    K, L, D, N = m.K, m.l_max, m.D, m.N
    w = m.p_m * m.beta_bar.T.reshape(-1)  # server-row weight of block iota(q) = q + 1, q = l K + (k - 1)
    s = float(np.sum(w))
    head = (K + 1) * D  # rows of the server and the local blocks (src(i) = i)
    W = _output(Y, work)  # B-bar Y (block rows)
    W[:head] = Y[:head]
    W[head:] = Y[D:N - K * D]  # delay group l takes group l - 1 (group 1 takes the local blocks)
    # the server row: (1 - s) Y_0 + sum_q w_q Y_q, a weighted sum of block rows (not a product with kron(w, I_D))
    W[:D] = (1.0 - s) * Y[:D] + np.tensordot(w, Y[D:].reshape(-1, D, N), axes=1)
    Z = _output(Y, out)  # (B-bar Y) B-bar^T (block columns)
    if np.shares_memory(Z, W):
        raise ValueError("out and work must not share memory")
    Z[:, :head] = W[:, :head]
    Z[:, head:] = W[:, D:N - K * D]
    Z[:, :D] = (1.0 - s) * W[:, :D] + W[:, D:].reshape(N, -1, D).transpose(0, 2, 1) @ w
    # correction on the (0, 0) block (second moments of the random weights and selections)
    corr = np.zeros((D, D))
    y00 = Y[:D, :D]
    for lag in range(L + 1):
        sl = slice((lag * K + 1) * D, ((lag + 1) * K + 1) * D)
        cov = m.beta_second[lag] - np.outer(m.beta_bar[:, lag], m.beta_bar[:, lag])
        yqq = Y[sl, sl].reshape(K, D, K, D)
        yq0 = Y[sl, :D].reshape(K, D, D)
        y0q = Y[:D, sl].reshape(D, K, D).transpose(1, 0, 2)
        rs, cs = cov.sum(axis=1), cov.sum(axis=0)
        hat = (np.einsum("kj,kajb->ab", cov, yqq) - np.einsum("k,kab->ab", rs, yq0)
               - np.einsum("k,kab->ab", cs, y0q) + cov.sum() * y00)
        corr += m.p_m ** 2 * hat
        ar = np.arange(K)
        diag_hat = yqq[ar, :, ar] - yq0 - y0q + y00[None]  # (K, D, D)
        corr += np.einsum("k,kab->ab", np.diag(m.beta_second[lag]), diag_hat) * (m.Pi - m.p_m ** 2)
    Z[:D, :D] += corr
    return Z


def apply_F(m: AnalysisMoments, C: np.ndarray, model: str = "seed", mu: float | None = None, *,
            out: np.ndarray | None = None, work: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    r"""One application of :math:`C \mapsto \mathcal B(\mathcal R_\mu(\mathcal A(C)))`, i.e.
    :math:`\mathrm{bvec}^{-1}(\mathcal F\,\mathrm{bvec}(C))`.

    ``out`` and the two ``work`` arrays (N x N, distinct from ``C`` and each other) let iterative solvers at
    large N reuse memory instead of allocating four N x N arrays per application.

    Examples
    --------
    At :math:`\mu = 0`, :math:`\mathcal F = \mathcal Q_B\mathcal Q_A` fixes :math:`11^T \otimes W`:

    >>> import numpy as np
    >>> from theory.msd.instance import reference_instance
    >>> from theory.msd.expectations import analysis_moments
    >>> m = analysis_moments(reference_instance())
    >>> X = np.kron(np.ones((13, 13)), np.ones((5, 5)))
    >>> bool(np.allclose(apply_F(m, X, mu=0.0), X))
    True
    """
    w1, w2 = (None, None) if work is None else work
    a = apply_A(m, C, out=w1)
    r = apply_R(m, a, model, mu, out=w2)
    return apply_B(m, r, out=out, work=a)


class SymmetricPacking:
    r"""Isometry between symmetric N x N matrices and :math:`\mathbb R^{N(N+1)/2}`: the diagonal, then the strict
    upper triangle times :math:`\sqrt 2` (so the Euclidean norm and inner product are Frobenius').

    :math:`\mathcal F` maps symmetric matrices to symmetric matrices (:math:`\mathcal F(X^T) = \mathcal F(X)^T`), so
    Krylov solvers on the symmetric part run on vectors of half the length: the (S2) solution is symmetric, and
    for the exact model, completely positive, :math:`\rho(\mathcal F)` is an eigenvalue with a positive semidefinite
    eigenvector, hence :math:`\rho(\mathcal F) = \rho(\mathcal F|_{\mathrm{Sym}})`.
    """

    #: From this N on, rows are copied one by one and the lower triangle filled by blocked transposes (measured at
    #: N = 2336: pack 6 ms, unpack 14 ms, against 16 and 28 ms with index arrays, whose scatter to the lower triangle
    #: strides through memory); below it the index arrays are faster (1.4 + 3.0 ms at N = 980).
    ROW_LOOP_MIN_N = 1500
    #: Side of the square blocks of the blocked transpose.
    BLOCK = 128

    def __init__(self, N: int, *, row_loops: bool | None = None):
        self.N = N
        self.size = N * (N + 1) // 2
        self.row_loops = N >= self.ROW_LOOP_MIN_N if row_loops is None else bool(row_loops)
        if self.row_loops:  # where row i's strict upper part starts in the packed vector
            self._starts = N + np.concatenate(([0], np.cumsum(np.arange(N - 1, 0, -1))))
        else:
            iu = np.triu_indices(N, 1)
            self._upper = iu[0] * N + iu[1]
            self._lower = iu[1] * N + iu[0]

    def pack(self, X: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """The packed vector of the symmetric matrix ``X`` (its upper triangle is read)."""
        N = self.N
        v = np.empty(self.size) if out is None else out
        flat = np.ascontiguousarray(X).reshape(-1)
        v[:N] = flat[::N + 1]
        if self.row_loops:
            r2 = math.sqrt(2.0)
            for i, o in enumerate(self._starts[:N - 1].tolist()):
                np.multiply(X[i, i + 1:], r2, out=v[o:o + N - 1 - i])
            return v
        np.take(flat, self._upper, out=v[N:])
        v[N:] *= math.sqrt(2.0)
        return v

    def unpack(self, v: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """The symmetric matrix of the packed vector ``v``."""
        N = self.N
        X = np.empty((N, N)) if out is None else out
        if self.row_loops:
            self._unpack_upper(v, X)
            bs = self.BLOCK
            for a in range(0, N, bs):
                blk = X[a:a + bs, a:a + bs]
                low = np.tril_indices(blk.shape[0], -1)
                blk[low] = blk.T[low]
                for b in range(a + bs, N, bs):
                    X[b:b + bs, a:a + bs] = X[a:a + bs, b:b + bs].T
            return X
        flat = X.reshape(-1)
        flat[::N + 1] = v[:N]
        t = v[N:] / math.sqrt(2.0)
        flat[self._upper] = t
        flat[self._lower] = t
        return X

    def _unpack_upper(self, v: np.ndarray, X: np.ndarray) -> np.ndarray:
        """The diagonal and strict upper triangle of the matrix of ``v`` into ``X`` (C-contiguous); the strict lower
        triangle is not written (half the memory traffic of :meth:`unpack`: 5.4 against 12.7 ms at N = 2336)."""
        N = self.N
        flat = X.reshape(-1)
        flat[::N + 1] = v[:N]
        if self.row_loops:
            r2 = math.sqrt(2.0)
            for i, o in enumerate(self._starts[:N - 1].tolist()):
                np.divide(v[o:o + N - 1 - i], r2, out=X[i, i + 1:])
        else:
            flat[self._upper] = v[N:] / math.sqrt(2.0)
        return X


class _SymmetricF:
    r""":math:`\mathcal F = \mathcal B\mathcal R_\mu\mathcal A` from packed symmetric matrices to packed symmetric
    matrices (:class:`SymmetricPacking`): the packed path of :func:`f_matvec`.

    Equal to :func:`apply_F` to rounding without its full passes over N x N arrays. Write
    :math:`T = \mathcal R_\mu\mathcal A(X)` and split the blocks into the server S, the local group
    :math:`G_0` and the delay groups :math:`G_1..G_{l_{\max}}`. :math:`T = X` outside the rows and columns of
    :math:`G_0`, and :math:`\mathcal B(T) = \bar BT\bar B^T` + a (0, 0) correction, where :math:`\bar B` copies
    block rows (:math:`G_0 \leftarrow G_0`, :math:`G_1 \leftarrow G_0`, :math:`G_l \leftarrow G_{l-1}`) except the
    server row. So only the head rows :math:`T_{S\cup G_0,\cdot}` are computed (:math:`(K+1)D \times N`, the
    arithmetic of :func:`apply_A` and :func:`apply_R` on those rows); the other rows of :math:`T` are rows of
    :math:`X` (their :math:`G_0` columns are the head rows' transposes, by symmetry). The server row of
    :math:`\bar BT` is one weighted sum of block rows, and the upper block triangle of :math:`\mathcal B(T)` is
    block copies: :math:`Z_{G_0 G_0} = T_{G_0G_0}`, :math:`Z_{G_0 \cup G_1, G_{\ge 1}} = T_{G_0, G_{0..l_{\max}-1}}`,
    :math:`Z_{G_{\ge 2}G_{\ge 2}} = X_{G_{\ge 1}G_{\ge 1}}` (shifted by one group), so that the packed result is
    gathered straight from ``Zs`` (Z's server rows), ``H`` (T's head rows) and ``v`` (:meth:`_pack`), never as an
    N x N matrix.

    ``v`` is unpacked to :math:`U`, the upper triangle of :math:`X` (diagonal included) with a zero strict lower
    triangle, skipping the transposes: sums over the delay rows of :math:`X` are :math:`\Omega^TX =
    \Omega^TU + (U\Omega)^T - \Omega^T\mathrm{diag}(U)` and :math:`\sum_{kj}c_{kj}X_{kj} = E + E^T -
    \sum_k c_{kk}\mathrm{diag}(U_{kk})` with :math:`E = \sum_{kj}c_{kj}U_{kj}` (:math:`c` symmetric).
    """

    #: Bytes of the local block rows processed together: 2 MiB measured best of 256 KiB .. 16 MiB at N = 2336 (matvec
    #: 31.8 ms against 32.1-35.4); at N = 980 every size is within 0.4 ms.
    CHUNK_BYTES = 1 << 21

    def __init__(self, m: AnalysisMoments, model: str, mu: float | None, packing: SymmetricPacking):
        if packing.N != m.N:
            raise ValueError(f"packing must be of N = {m.N} (the instance's), got a packing of N = {packing.N}")
        self.m, self.model, self.packing = m, _check_model(model), packing
        mu = m.mu if mu is None else float(mu)
        K, D, N = m.K, m.D, m.N
        KD, head = K * D, (K + 1) * D
        # one flat buffer (the packing's index path gathers from it): Z's server rows, T's head rows, then U (the upper
        # triangle of X: its strict lower triangle stays zero)
        self._flat = np.zeros((D + head + N) * N)
        self.Zs = self._flat[:D * N].reshape(D, N)
        self.H = self._flat[D * N:(D + head) * N].reshape(head, N)
        self.U = self._flat[(D + head) * N:].reshape(N, N)
        if packing.row_loops:
            self._starts = packing._starts.tolist()
        else:  # flat source of every packed entry (diagonal, then the strict upper triangle by rows)
            i, j = np.triu_indices(N, 1)
            i, j = np.concatenate((np.arange(N), i)), np.concatenate((np.arange(N), j))
            row, col, base = i.copy(), j.copy(), np.zeros_like(i)
            local, g1, rest = (i >= D) & (i < head), (i >= head) & (i < head + KD), i >= head + KD
            col[local & (j >= head)] -= KD
            row[g1 | rest] -= KD
            col[g1 | rest] -= KD
            base[local | g1] = D * N
            base[rest] = (D + head) * N
            self._sources = base + row * N + col
        self.chunk = max(1, min(K, self.CHUNK_BYTES // (8 * D * N)))  # local block rows per chunk
        self.P = np.empty((self.chunk, D, N))  # mu R_k U_k (block rows of a chunk)
        self.X0 = np.empty((D, N))  # X's server rows
        self.Q = np.empty((K, self.chunk * D, D))  # U_{jk} mu R_k (local block columns of a chunk's rows)
        self.muR = mu * m.R
        self.I_minus_muR = np.eye(D)[None] - self.muR
        self.w = m.p_m * m.beta_bar.T.reshape(-1)
        self.s = float(np.sum(self.w))
        self.weight = m.p[:, None, None] * m.Pi[None] - (m.c ** 2)[:, None, None]
        self.cov = [m.beta_second[lag] - np.outer(m.beta_bar[:, lag], m.beta_bar[:, lag]) for lag in range(m.l_max + 1)]

    def _head_rows(self, U: np.ndarray) -> None:
        r"""``H`` = the head rows of :math:`T = \mathcal R_\mu\mathcal A(X)`: the server rows, then the local block rows
        in chunks of about :attr:`CHUNK_BYTES` that stay in cache through every step (apply_A's and apply_R's
        arithmetic: A's rows, A's columns, A's correction on the local diagonal, then R's products from A's rows;
        for ``exact`` the local columns as one two-sided product, equal to rounding)."""
        m = self.m
        K, D, N = m.K, m.D, m.N
        head = (K + 1) * D
        loc = slice(D, head)
        c, H, muR, X0, exact = m.c, self.H, self.muR, self.X0, self.model == "exact"
        k = np.arange(K)
        udiag = np.diagonal(U)
        # X's server rows (kept for A's local rows) and A's correction delta_k = X_00 - X_0k - X_k0 + X_kk
        X0[...] = U[:D]
        _symmetrize_square(X0, 0, D, udiag[:D])
        x0k = X0[:, loc].reshape(D, K, D).transpose(1, 0, 2)
        xkk = U[loc, loc].reshape(K, D, K, D)[k, :, k]
        xkk = xkk + xkk.transpose(0, 2, 1)
        xkk.reshape(K, -1)[:, ::D + 1] = udiag[loc].reshape(K, D)
        added = self.weight * (X0[None, :, :D] - x0k - x0k.transpose(0, 2, 1) + xkk)
        # the server rows of T: A's local columns, then R's
        H[:D] = X0
        hs = H[:D, loc].reshape(D, K, D)
        hs -= H[:D, None, :D]
        hs *= (1.0 - c)[None, :, None]
        hs += H[:D, None, :D]
        hs -= np.matmul(hs.transpose(1, 0, 2), muR).transpose(1, 0, 2)
        for k0 in range(0, K, self.chunk):
            k1 = min(K, k0 + self.chunk)
            nk, r0, r1 = k1 - k0, (k0 + 1) * D, (k1 + 1) * D
            Hk = H[r0:r1]
            Hk[:, r0:] = U[r0:r1, r0:]
            Hk[:, :r0] = U[:r0, r0:r1].T
            _symmetrize_square(Hk, r0, nk * D, udiag[r0:r1])
            Hr = Hk.reshape(nk, D, N)
            np.subtract(Hr, X0[None], out=Hr)
            Hr *= (1.0 - c[k0:k1])[:, None, None]
            Hr += X0[None]
            Hc = Hk[:, loc].reshape(nk * D, K, D)
            Hc -= Hk[:, None, :D]
            Hc *= (1.0 - c)[None, :, None]
            Hc += Hk[:, None, :D]
            _add_diagonal_blocks(Hk, 0, D, added[k0:k1], col0=r0)
            if not exact:
                P = np.matmul(muR[k0:k1], Hr, out=self.P[:nk])
                Q = np.matmul(Hc.transpose(1, 0, 2), muR, out=self.Q[:, :nk * D])
                Hr -= P
                Hc -= Q.transpose(1, 0, 2)
                continue
            # exact: on the local columns U_jk - mu R_j U_jk - U_jk mu R_k + mu R_j U_jk mu R_k as
            # (I - mu R_j) U_jk (I - mu R_k) (two products instead of four), plus the Gaussian terms on the diagonal
            mr = muR[k0:k1]
            xjj = Hc.reshape(nk, D, K, D)[np.arange(nk), :, np.arange(k0, k1)]
            diag = mr @ xjj.transpose(0, 2, 1) @ mr + np.einsum("kab,kba->k", mr, xjj)[:, None, None] * mr
            P = self.P[:nk]
            np.matmul(mr, Hr[:, :, :D], out=P[:, :, :D])
            np.matmul(mr, Hr[:, :, head:], out=P[:, :, head:])
            Hr[:, :, :D] -= P[:, :, :D]
            Hr[:, :, head:] -= P[:, :, head:]
            Y = np.matmul(self.I_minus_muR[k0:k1], Hr[:, :, loc], out=P[:, :, loc])
            np.matmul(Y.reshape(nk * D, K, D).transpose(1, 0, 2), self.I_minus_muR, out=Hc.transpose(1, 0, 2))
            _add_diagonal_blocks(Hk, 0, D, diag, col0=r0)

    def __call__(self, v: np.ndarray, res: np.ndarray) -> np.ndarray:
        r"""``res`` = the packed :math:`\mathcal F(X)` of the packed symmetric ``v``."""
        m = self.m
        K, L, D, N = m.K, m.l_max, m.D, m.N
        KD, head = K * D, (K + 1) * D
        loc = slice(D, head)
        H, Z, w, s = self.H, self.Zs, self.w, self.s
        U = self.packing._unpack_upper(v, self.U)
        k = np.arange(K)
        self._head_rows(U)
        # server row of B-bar T: (1 - s) T_S + sum_q w_q T_q. The delay rows of T are rows of X, except their local
        # columns (the head rows' transposes); their sum over the delay columns from U (Omega^T U + (U Omega)^T minus
        # the diagonal counted twice), over the server columns from the server rows
        wG = w[K:]
        g = np.tensordot(wG, U[head:].reshape(-1, D, N), axes=1)  # Omega^T U: zero on the head columns
        if L:
            gG = g[:, head:]
            gG += (U[head:, head:].reshape(-1, K * L, D).transpose(0, 2, 1) @ wG).T
            ar = np.arange(D)
            gG.reshape(D, K * L, D)[ar, :, ar] -= (wG[:, None] * np.diagonal(U)[head:].reshape(K * L, D)).T
            g[:, :D] = (H[:D, head:].reshape(D, K * L, D).transpose(0, 2, 1) @ wG).T
            g[:, loc] = (H[loc, head:].reshape(KD, K * L, D).transpose(0, 2, 1) @ wG).T
        g += np.tensordot(w[:K], H[loc].reshape(K, D, N), axes=1)
        W = (1.0 - s) * H[:D]
        W += g
        Z[:D, :head] = W[:, :head]
        Z[:D, head:] = W[:, D:N - KD]
        Z[:D, :D] = (1.0 - s) * W[:, :D] + W[:, D:].reshape(D, -1, D).transpose(0, 2, 1) @ w
        # apply_B's correction on the (0, 0) block; T's blocks: the head rows for l = 0, else X's (from U)
        corr = np.zeros((D, D))
        y00 = H[:D, :D]
        for lag in range(L + 1):
            sl = slice((lag * K + 1) * D, ((lag + 1) * K + 1) * D)
            cov = self.cov[lag]
            y0q = H[:D, sl].reshape(D, K, D).transpose(1, 0, 2)
            if lag == 0:
                yqq = H[sl, sl].reshape(K, D, K, D)
                yq0 = H[sl, :D].reshape(K, D, D)
                xkk = yqq[k, :, k]
                sum_qq = _weighted_block_sum(cov, yqq)
            else:
                uqq = U[sl, sl].reshape(K, D, K, D)
                yq0 = y0q.transpose(0, 2, 1)
                ukk = uqq[k, :, k]
                udiag = np.diagonal(U)[sl].reshape(K, D)
                xkk = ukk + ukk.transpose(0, 2, 1)
                xkk.reshape(K, -1)[:, ::D + 1] = udiag
                half = _weighted_block_sum(cov, uqq)
                sum_qq = half + half.T
                sum_qq.reshape(-1)[::D + 1] -= np.diag(cov) @ udiag
            rs, cs = cov.sum(axis=1), cov.sum(axis=0)
            hat = sum_qq - np.einsum("k,kab->ab", rs, yq0) - np.einsum("k,kab->ab", cs, y0q) + cov.sum() * y00
            corr += m.p_m ** 2 * hat
            diag_hat = xkk - yq0 - y0q + y00[None]
            corr += np.einsum("k,kab->ab", np.diag(m.beta_second[lag]), diag_hat) * (m.Pi - m.p_m ** 2)
        Z[:D, :D] += corr
        return self._pack(v, res)

    def _pack(self, v: np.ndarray, res: np.ndarray) -> np.ndarray:
        r"""Pack the upper triangle of :math:`Z = \mathcal B(T)` straight from its sources: the server rows ``Zs``,
        :math:`Z_{i,j} = T_{i,j}` / :math:`T_{i,j-KD}` (local rows, local / delay columns), :math:`T_{i-KD,j-KD}`
        (rows of :math:`G_1`) and :math:`X_{i-KD,j-KD}` (rows of :math:`G_{\ge 2}`: a prefix of a packed row of
        ``v``)."""
        m, pk = self.m, self.packing
        D, N, KD = m.D, m.N, m.K * m.D
        head = KD + D
        if not pk.row_loops:
            np.take(self._flat, self._sources, out=res)
            res[N:] *= math.sqrt(2.0)
            return res
        H, Z, r2 = self.H, self.Zs, math.sqrt(2.0)
        res[:D] = np.diagonal(Z)[:D]
        res[D:head] = np.diagonal(H)[D:]
        if m.l_max:
            res[head:head + KD] = res[D:head]
            res[head + KD:N] = v[head:N - KD]
        starts = self._starts
        for i in range(min(head, N - 1)):
            o = starts[i]
            if i < D:
                np.multiply(Z[i, i + 1:], r2, out=res[o:o + N - 1 - i])
            else:
                n = head - 1 - i
                np.multiply(H[i, i + 1:head], r2, out=res[o:o + n])
                np.multiply(H[i, D:N - KD], r2, out=res[o + n:o + N - 1 - i])
        for i in range(head, min(head + KD, N - 1)):
            o = starts[i]
            np.multiply(H[i - KD, i - KD + 1:N - KD], r2, out=res[o:o + N - 1 - i])
        for i in range(head + KD, N - 1):
            o, src = starts[i], starts[i - KD]
            res[o:o + N - 1 - i] = v[src:src + N - 1 - i]
        return res


def f_matvec(m: AnalysisMoments, model: str = "seed", mu: float | None = None, *,
             identity_minus: bool = False, packing: SymmetricPacking | None = None
             ) -> Callable[[np.ndarray], np.ndarray]:
    r"""``v -> vec(F(v))`` (or ``vec(v - F(v))``) on :math:`N^2`-long vectors for the Krylov solvers, with its
    output and work arrays allocated once: the result is a buffer overwritten by the next call. With ``packing``
    the vectors are packed symmetric matrices (:class:`SymmetricPacking`) and F is applied by the private
    :class:`_SymmetricF` (from the upper triangle, head rows only, packed straight from its sources: matvec CPU
    10.0 -> 4.8 ms at N = 980, 62 -> 28 ms at N = 2336, seed model). Equal to :func:`apply_F` to rounding (which
    allocates four N x N arrays per call: 2-3x the CPU at N = 980)."""
    N = m.N

    if packing is None:
        out, w1, w2 = np.empty((N, N)), np.empty((N, N)), np.empty((N, N))

        def matvec(v: np.ndarray) -> np.ndarray:
            X = v.reshape(N, N)
            apply_F(m, X, model, mu, out=out, work=(w1, w2))
            if identity_minus:
                np.subtract(X, out, out=out)
            return out.reshape(-1)

        return matvec
    fused = _SymmetricF(m, model, mu, packing)
    res = np.empty(packing.size)

    def packed_matvec(v: np.ndarray) -> np.ndarray:
        fused(v, res)
        if identity_minus:
            np.subtract(v, res, out=res)
        return res

    return packed_matvec


def noise_covariance(x) -> np.ndarray:
    r""":math:`E[\Phi] = \mathrm{blockdiag}(0_D, \sigma^2_{\eta,1}R_1, \dots, \sigma^2_{\eta,K}R_K, 0_{DKl_{\max}})`.

    References
    ----------
    .. [1] seed 004_180cd372987d137b.txt, P4 (30)-(32) lines 2730-2748 ([E4], [E12]); spec 3.5.
    """
    m = _moments(x)
    P = np.zeros((m.n_blocks, m.D, m.n_blocks, m.D))
    k = np.arange(1, m.K + 1)
    P[k, :, k] = m.sigma2_eta[:, None, None] * m.R
    return P.reshape(m.N, m.N)


def initial_covariance(x) -> np.ndarray:
    r""":math:`C_0 = w_e^\star w_e^{\star T}`, :math:`w_e^\star = 1_{N_b} \otimes w^\star` (all models start at 0)."""
    m = _moments(x)
    we = np.tile(m.w_star, m.n_blocks)
    return np.outer(we, we)


def msd_transient(x, n_iter: int, model: str = "seed", *, mu: float | None = None) -> np.ndarray:
    r"""Transient :math:`\mathrm{MSD}_n = E\lVert w^\star - w_n\rVert^2`, :math:`n = 0..n_{iter}`, by (S1).

    Returns
    -------
    (n_iter + 1,) array, entry 0 is :math:`\lVert w^\star\rVert^2`.

    References
    ----------
    .. [1] seed 004_180cd372987d137b.txt, Ch. (4.32)-(4.33) lines 1058-1066, P4 (35), (37) ([E13]); spec 3.6 (S1).

    Examples
    --------
    >>> import numpy as np
    >>> from theory.msd.instance import reference_instance
    >>> inst = reference_instance(0.1)
    >>> msd = msd_transient(inst, 3)
    >>> bool(np.isclose(msd[0], inst.w_star @ inst.w_star)) and bool(msd[3] < msd[0])
    True
    """
    m = _moments(x)
    _check_model(model)
    if isinstance(n_iter, bool) or not isinstance(n_iter, (int, np.integer)) or n_iter < 0:
        raise ValueError(f"n_iter must be an integer >= 0, got {n_iter!r}")
    mu = m.mu if mu is None else float(mu)
    Q = mu * (mu * apply_B(m, noise_covariance(m)))
    C = initial_covariance(m)
    out = np.empty(int(n_iter) + 1)
    D = m.D
    out[0] = np.trace(C[:D, :D])
    nxt = np.empty_like(C)
    work = (np.empty_like(C), np.empty_like(C))  # reused buffers: no N x N allocation per step
    for n in range(1, int(n_iter) + 1):
        apply_F(m, C, model, mu, out=nxt, work=work)
        nxt += Q
        C, nxt = nxt, C
        out[n] = np.trace(C[:D, :D])
    return out


@dataclass(frozen=True)
class SteadyState:
    r"""Solution of (S2).

    Attributes
    ----------
    msd : float
        :math:`\mathrm{MSD}_\infty = \mathrm{tr}([C_\infty]_{00})`.
    C : (N, N) array
        :math:`C_\infty`.
    residual : float
        :math:`\lVert C - \mathcal B\mathcal R_\mu\mathcal A(C) - Q\rVert_F / \lVert Q\rVert_F`, recomputed
        after the solve (the certificate of (S2)).
    iterations : int
    method : str
    tolerance : float
        The relative tolerance handed to the solver.
    krylov : (basis, H) or None
        ``method="gmres-dr"`` only: a Krylov decomposition of :math:`\mathcal F` on packed symmetric matrices
        (:class:`SymmetricPacking`), ``F @ basis[:j].T = basis.T @ H``, orthonormal rows, holding the slow modes the
        solve met: :func:`theory.msd.krylov.top_eigenpair` continues from it (``basis=``); None after fewer than
        three steps.
    """

    msd: float
    C: np.ndarray
    residual: float
    iterations: int
    method: str
    tolerance: float
    krylov: tuple[np.ndarray, np.ndarray] | None = None

    def __repr__(self) -> str:  # brief: shapes and summary numbers, never the arrays
        return (f"SteadyState(msd={self.msd:.6g}, C=<{self.C.shape[0]}x{self.C.shape[1]}>, "
                f"residual={self.residual:.3g}, iterations={self.iterations}, method={self.method!r})")


def _s2_residual(m, C, Q, model, mu) -> float:
    r = C - apply_F(m, C, model, mu) - Q
    return float(np.linalg.norm(r) / np.linalg.norm(Q))


def msd_steady_state(x, model: str = "seed", *, mu: float | None = None, method: str = "gmres",
                     rtol: float = 1e-13, maxiter: int | None = None, refinements: int = 3,
                     restart: int = 200, progress: Callable[[int, float], None] | None = None) -> SteadyState:
    r"""Steady-state :math:`\mathrm{MSD}_\infty` by solving (S2) without forming :math:`\mathcal F`.

    .. math:: C - \mathcal B\mathcal R_\mu\mathcal A(C) = \mu^2\mathcal B(E[\Phi]),
              \qquad \mathrm{MSD}_\infty = \mathrm{tr}([C]_{00}) = \mu^2 h^T(I - \mathcal F^T)^{-1}\sigma_J

    Parameters
    ----------
    method : {"gmres", "gmres-dr", "bicgstab", "fixed_point"}
        GMRES (:func:`theory.msd.krylov.gmres`) / BiCGSTAB (scipy.sparse.linalg) on the vectorised operator,
        with up to ``refinements`` further rounds on the recomputed residual; GMRES with deflated restarting
        (:func:`theory.msd.gmres_dr.gmres_dr`, m = ``restart``, k = :data:`DEFLATED_VECTORS`; it also returns the
        Krylov decomposition of :math:`\mathcal F` it built, ``SteadyState.krylov``); or the fixed-point iteration
        :math:`C \leftarrow \mathcal B\mathcal R_\mu\mathcal A(C) + Q` (converges iff
        :math:`\rho(\mathcal F) < 1`, at rate :math:`\rho(\mathcal F)`).
    rtol : float
        Relative residual tolerance
        :math:`\lVert C - \mathcal B\mathcal R_\mu\mathcal A(C) - Q\rVert_F / \lVert Q\rVert_F`
        (stopping rule of all methods; for the fixed point the step size, which equals this residual).
    maxiter, refinements, restart : int
        Iteration cap (default :data:`KRYLOV_MAXITER` Krylov steps per round; 100000 for the fixed point),
        further rounds when a round stops above ``rtol`` (GMRES restarted from its iterate, BiCGSTAB by
        iterative refinement), GMRES restart length (memory: ``restart + 1`` vectors of length :math:`N^2`).
    progress : callable, optional
        ``progress(step, residual estimate)`` after every GMRES step.

    Raises
    ------
    ValueError
        On a bad model/method/tolerance, or if the solver does not reach ``rtol`` (e.g. when
        :math:`\rho(\mathcal F) \ge 1`, where no steady state exists).

    Notes
    -----
    Requires :math:`\rho(\mathcal F) < 1` (spec 3.5). Exact under I1-I5; see spec 6 [E15] for how the
    real algorithm departs from them.

    References
    ----------
    .. [1] seed 004_180cd372987d137b.txt, Ch. (4.34) + line 1072, P4 (38) + line 2785 ([E14]); spec 3.6 (S2).
    """
    m = _moments(x)
    _check_model(model)
    if method not in ("gmres", "gmres-dr", "bicgstab", "fixed_point"):
        raise ValueError(f"method must be one of gmres, gmres-dr, bicgstab, fixed_point, got {method!r}")
    if not (isinstance(rtol, float) and 0.0 < rtol < 1.0):
        raise ValueError(f"rtol must be a float in (0, 1), got {rtol!r}")
    mu = m.mu if mu is None else float(mu)
    if not (math.isfinite(mu) and mu > 0):
        raise ValueError(f"mu must be a finite real > 0, got {mu!r}")
    N = m.N
    Q = mu * (mu * apply_B(m, noise_covariance(m)))
    qnorm = float(np.linalg.norm(Q))
    if qnorm == 0.0:
        C = np.zeros((N, N))
        return SteadyState(0.0, C, 0.0, 0, method, rtol)
    iterations, krylov = 0, None
    if method == "fixed_point":
        maxiter = 100000 if maxiter is None else int(maxiter)
        C = Q.copy()
        C_new = np.empty_like(C)
        work = (np.empty_like(C), np.empty_like(C))
        for iterations in range(1, maxiter + 1):  # noqa: B007 -- the count is reported after the loop
            apply_F(m, C, model, mu, out=C_new, work=work)
            C_new += Q
            C -= C_new
            step = float(np.linalg.norm(C))
            C, C_new = C_new, C
            if step <= rtol * qnorm or not math.isfinite(step):
                break
    elif method == "gmres-dr":  # deflated restarts on packed symmetric matrices; the relation of F is kept
        from theory.msd.gmres_dr import gmres_dr

        sym = SymmetricPacking(N)
        m_dr = min(restart, sym.size - 1)
        sol = gmres_dr(f_matvec(m, model, mu, identity_minus=True, packing=sym), sym.pack(0.5 * (Q + Q.T)),
                       rtol=0.5 * rtol, m=m_dr, k=min(DEFLATED_VECTORS, m_dr - 2),
                       maxiter=KRYLOV_MAXITER if maxiter is None else int(maxiter), callback=progress)
        iterations = sol.steps
        C = sym.unpack(sol.x)
        # (I - F) V_j = V_{j+1} H  <=>  F V_j = V_{j+1} (I_bar - H); kept from 3 steps on (top_eigenpair's minimum)
        if sol.basis is not None and sol.hessenberg.shape[1] >= 3:
            j = sol.hessenberg.shape[1]
            H = -sol.hessenberg
            H[:j, :j] += np.eye(j)
            krylov = (sol.basis, H)
    elif method == "gmres":  # lean restarted GMRES (theory.msd.krylov) on packed symmetric matrices
        cap = KRYLOV_MAXITER if maxiter is None else int(maxiter)
        sym = SymmetricPacking(N)
        x, b = None, sym.pack(0.5 * (Q + Q.T))
        mv = f_matvec(m, model, mu, identity_minus=True, packing=sym)
        for _ in range(refinements + 1):
            x, steps, res = gmres(mv, b, rtol=0.5 * rtol, restart=min(sym.size, restart), maxiter=cap, x0=x,
                                  callback=progress, eta=LEAN_ETA)
            iterations += steps
            if res <= rtol:
                break
        C = sym.unpack(x)
    else:
        op = spla.LinearOperator((N * N, N * N), dtype=np.float64,
                                 matvec=lambda v: (v.reshape(N, N) - apply_F(m, v.reshape(N, N), model, mu)).ravel())
        C = np.zeros((N, N))
        rhs = Q.ravel()
        for _ in range(refinements + 1):
            r = rhs - op.matvec(C.ravel())
            if np.linalg.norm(r) <= rtol * qnorm:
                break
            counter = [0]

            def cb(_x, counter=counter):
                counter[0] += 1

            # inner tolerance relative to the current residual, so that the refined residual meets rtol
            inner = min(0.5, 0.5 * rtol * qnorm / float(np.linalg.norm(r)))
            # iteration cap (scipy's default, 10 N^2, is unbounded in practice): maxiter Krylov steps per round
            cap = KRYLOV_MAXITER if maxiter is None else int(maxiter)
            dx, _info = spla.bicgstab(op, r, rtol=inner, atol=0.0, maxiter=cap, callback=cb)
            iterations += counter[0]
            C = C + dx.reshape(N, N)
    residual = _s2_residual(m, C, Q, model, mu)
    if not (residual <= 10 * rtol):
        raise ValueError(f"(S2) not solved: relative residual {residual:.3g} > 10 rtol = {10 * rtol:.3g} after "
                         f"{iterations} {method} iterations (is rho(F) < 1 at mu = {mu!r}?)")
    return SteadyState(float(np.trace(C[:m.D, :m.D])), C, residual, iterations, method, rtol, krylov)


def spectral_radius_F(x, model: str = "seed", *, mu: float | None = None, tol: float = 1e-12,
                      ncv: int | None = None) -> float:
    r""":math:`\rho(\mathcal F)`: spectral radius of :math:`C \mapsto \mathcal B\mathcal R_\mu\mathcal A(C)`.

    Arnoldi (``scipy.sparse.linalg.eigs``, largest magnitude) on the matrix-free operator; for
    :math:`N^2 \le 64` the operator is materialised column by column and all eigenvalues computed.

    References
    ----------
    .. [1] spec 3.5 (rho(F) < 1 is the mean-square stability criterion) and 3.6.
    """
    m = _moments(x)
    _check_model(model)
    mu = m.mu if mu is None else float(mu)
    N = m.N
    n2 = N * N

    def mv(v):
        return apply_F(m, v.reshape(N, N), model, mu).ravel()

    if n2 <= 64:
        F = np.column_stack([mv(e) for e in np.eye(n2)])
        return float(np.max(np.abs(np.linalg.eigvals(F))))
    op = spla.LinearOperator((n2, n2), matvec=mv, dtype=np.float64)
    ncv = min(n2 - 1, 40) if ncv is None else ncv
    v0 = np.ones(n2) / math.sqrt(n2)
    try:
        vals = arpack_eigs(op, k=1, which="LM", tol=tol, ncv=ncv, v0=v0, return_eigenvectors=False,
                         maxiter=ARNOLDI_MAXITER)
    except spla.ArpackNoConvergence as exc:
        raise ValueError(f"rho(F_{model}) at mu = {mu!r}: Arnoldi did not converge to tol {tol:g} within "
                         f"{ARNOLDI_MAXITER} restarts (eigenvalues cluster near 1 at small mu)") from exc
    return float(np.max(np.abs(vals)))
