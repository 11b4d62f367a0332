r"""Packed symmetric matrices and the packed :math:`\mathcal F` of PAO-Fed's mean-square recursion.

:class:`SymmetricPacking` maps symmetric :math:`N \times N` matrices isometrically to vectors of length
:math:`N(N+1)/2`; :func:`f_matvec` is ``v -> F(v)`` (or ``v - F(v)``) on full or packed vectors for the Krylov
solvers of :mod:`theory.msd.structured` and :mod:`theory.msd.routes`, with its buffers allocated once. The packed
path (the private ``_SymmetricF``) computes only the head rows of :math:`\mathcal R_\mu\mathcal A(X)` and equals
:func:`theory.msd.maps.apply_F` to rounding.

References
----------
.. [1] Gauthier's thesis (seed 004_180cd372987d137b.txt), Ch. 4, (4.23)-(4.34) lines 1004-1072 (the maps
   :math:`\mathcal A`, :math:`\mathcal R_\mu`, :math:`\mathcal B`); docs/papers/paofed.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from theory.msd.expectations import AnalysisMoments
from theory.msd.maps import _add_diagonal_blocks, _check_model, _symmetrize_square, _weighted_block_sum, apply_F

__all__ = ["SymmetricPacking", "f_matvec"]


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
