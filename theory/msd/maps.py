r"""The block maps of PAO-Fed's mean-square recursion, applied to an :math:`N \times N` matrix without forming them.

:math:`\mathcal A(X) = E[A_eXA_e^T]`, :math:`\mathcal B(Y) = E[B_eYB_e^T]`,
:math:`\mathcal R_\mu(X) = X - \mu(R_eX + XR_e)` (the seed's :math:`\mathcal F`, Assumption A5) plus
:math:`\mu^2E[Z_eZ_e^TXZ_eZ_e^T]` for the exact :math:`\mathcal F`, and their composition
:math:`\mathcal F = \mathcal B\mathcal R_\mu\mathcal A` (:func:`apply_F`), the operator of the recursions (S1)/(S2)
solved in :mod:`theory.msd.structured`.

Models: ``"seed"`` = Ch. (4.26) / P4 (28) (the :math:`\mu^2` term dropped); ``"exact"`` = the exact
:math:`\mathcal F` with Gaussian regressors :math:`z_{k,n} \sim N(0, R_k)` (docs/papers/paofed.md).

References
----------
.. [1] Gauthier's thesis (seed 004_180cd372987d137b.txt), Ch. 4, (4.23)-(4.34) lines 1004-1072, and PAO-Fed
   P4 (25)-(38) lines 2698-2785, with the errata listed on docs/papers/paofed.md.
"""

from __future__ import annotations

import numpy as np

from theory.msd.expectations import AnalysisMoments

__all__ = ["MODELS", "apply_A", "apply_B", "apply_F", "apply_R"]

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
    r""":math:`\mathcal A(X) = E[A_e X A_e^T]` (docs/papers/paofed.md).

    .. math::

        \mathcal A(X) = \bar A X \bar A^T + \sum_k e_ke_k^T \otimes \bigl((p_k\Pi - c_k^2 11^T)\circ
        (X_{00} - X_{0k} - X_{k0} + X_{kk})\bigr)

    with :math:`\bar A = E[A_e]`; block-wise this is the formula of docs/papers/paofed.md (local/non-local,
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
    .. [1] docs/papers/paofed.md (R_4 for zero-mean Gaussian z, Isserlis) and 3.6.
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
    r""":math:`\mathcal B(Y) = E[B_e Y B_e^T]` (docs/papers/paofed.md).

    .. math::

        \mathcal B(Y) = \bar BY\bar B^T + e_0e_0^T \otimes \Bigl(\sum_{q,q'}(E[\beta_q\beta_{q'}]
        - \bar\beta_q\bar\beta_{q'})p_m^2\hat Y_{qq'} + \sum_q E[\beta_q^2](\Pi - p_m^211^T)\circ\hat Y_{qq}\Bigr),

    :math:`\hat Y_{qq'} = Y_{\iota(q)\iota(q')} - Y_{\iota(q)0} - Y_{0\iota(q')} + Y_{00}`,
    :math:`\bar B = E[B_e]` (its rows :math:`i \ge 1` copy block :math:`\mathrm{src}(i)`: the local blocks
    stay, delay group :math:`l \ge 1` takes group :math:`l - 1`). The covariance of the weights vanishes
    across delay groups (I5, docs/papers/paofed.md#assumption-i5). Cost :math:`O(N_b^2D^2 + K^2(l_{\max}+1)D^2)`.
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
