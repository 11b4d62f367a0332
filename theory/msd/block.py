r"""Block vectorisation and the block Kronecker (Tracy-Singh) product of Koning-Neudecker-Wansbeek.

All partitions are into :math:`D \times D` blocks. For an :math:`N \times N` matrix
(:math:`N = N_b D`) with blocks :math:`X_{ij}`:

* :math:`\mathrm{bvec}(X) = \mathrm{col}\{\mathrm{vec} X_{11}, \mathrm{vec} X_{21}, \dots,
  \mathrm{vec} X_{N_b 1}, \mathrm{vec} X_{12}, \dots, \mathrm{vec} X_{N_b N_b}\}` (block columns left to
  right, blocks top to bottom, :math:`\mathrm{vec}` column stacking);
* :math:`A \otimes_b B` has block :math:`((k,i),(l,j)) = A_{kl} \otimes B_{ij}` (:math:`D^2 \times D^2`),
  block rows ordered with :math:`k` major.

Identities (docs/papers/paofed.md#mean-square): :math:`\mathrm{bvec}(X\Sigma Y) = (Y^T \otimes_b
X)\,\mathrm{bvec}(\Sigma)`,
:math:`\mathrm{tr}(\Sigma^T\Gamma) = \mathrm{bvec}(\Sigma)^T\mathrm{bvec}(\Gamma)`,
:math:`(A \otimes_b B)(C \otimes_b D) = (AC) \otimes_b (BD)`, and for block-scalar factors
:math:`(X \otimes Y) \otimes_b (X' \otimes Y') = (X \otimes X') \otimes (Y \otimes Y')`.

References
----------
.. [1] seed 004_180cd372987d137b.txt, Ch. (4.26)-(4.27) lines 1016-1022, P4 (28)-(29) lines 2714-2722
   (bvec and the block Kronecker product, P4 ref. [51] Koning, Neudecker and Wansbeek 1991).
.. [2] docs/papers/paofed.md#mean-square (definitions and identities used here).
"""

from __future__ import annotations

import numpy as np

__all__ = ["block_kron", "bvec", "bvec_inverse"]


def _block_count(n: int, D: int, name: str) -> int:
    if isinstance(D, bool) or not isinstance(D, (int, np.integer)) or D < 1:
        raise ValueError(f"D must be an integer >= 1, got {D!r}")
    if n % D:
        raise ValueError(f"{name} has size {n}, which is not a multiple of the block size D = {D}")
    return n // D


def _square(name: str, X) -> np.ndarray:
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] != X.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {X.shape}")
    return X


def bvec(X, D: int) -> np.ndarray:
    r"""Block vectorisation of an :math:`N \times N` matrix with :math:`D \times D` blocks.

    .. math:: \mathrm{bvec}(X)[(j N_b + i) D^2 + b D + a] = [X_{ij}]_{ab}

    (block column :math:`j` major, then block row :math:`i`, then :math:`\mathrm{vec}` of the block).

    Raises
    ------
    ValueError
        If ``X`` is not square or its size is not a multiple of ``D``.

    References
    ----------
    .. [1] docs/papers/paofed.md#mean-square; seed 004_180cd372987d137b.txt P4 (28), line 2712.

    Examples
    --------
    ``bvec`` is a permutation of ``vec`` (so inner products are preserved) and
    :func:`bvec_inverse` undoes it:

    >>> import numpy as np
    >>> X = np.arange(36.0).reshape(6, 6)
    >>> bool(np.array_equal(bvec_inverse(bvec(X, 2), 2), X))
    True
    >>> bool(np.isclose(bvec(X, 3) @ bvec(X.T, 3), np.trace(X @ X.T)))
    False
    >>> bool(np.isclose(bvec(X, 3) @ bvec(X, 3), np.trace(X.T @ X)))
    True
    """
    X = _square("X", X)
    nb = _block_count(X.shape[0], D, "X")
    # X4 (docs/papers/paofed.md#exp-x4)[i, a, j, b] = [X_ij]_ab  ->  order (j, i, b, a)
    return np.ascontiguousarray(X.reshape(nb, D, nb, D).transpose(2, 0, 3, 1)).reshape(-1)


def bvec_inverse(x, D: int) -> np.ndarray:
    r"""Inverse of :func:`bvec`: the :math:`N \times N` matrix whose block vectorisation is ``x``.

    Raises
    ------
    ValueError
        If ``x`` is not one-dimensional of length :math:`(N_b D)^2`.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(16.0)
    >>> bool(np.array_equal(bvec(bvec_inverse(x, 2), 2), x))
    True
    """
    x = np.asarray(x)
    if x.ndim != 1:
        raise ValueError(f"x must be one-dimensional, got shape {x.shape}")
    n = int(round(np.sqrt(x.size)))
    if n * n != x.size:
        raise ValueError(f"x must have length N^2, got {x.size}")
    nb = _block_count(n, D, "bvec_inverse(x)")
    return np.ascontiguousarray(x.reshape(nb, nb, D, D).transpose(1, 3, 0, 2)).reshape(n, n)


def block_kron(A, B, D: int) -> np.ndarray:
    r"""Tracy-Singh product :math:`A \otimes_b B` for :math:`D \times D` partitions.

    .. math:: [A \otimes_b B]_{(k,i),(l,j)} = A_{kl} \otimes B_{ij}

    Dense; meant for tests and toy sizes (the result has :math:`N^4` entries).

    Raises
    ------
    ValueError
        If ``A`` or ``B`` is not square, their sizes differ, or the size is not a multiple of ``D``.

    References
    ----------
    .. [1] docs/papers/paofed.md#mean-square; seed 004_180cd372987d137b.txt P4 (28)-(29), lines 2714-2722.

    Examples
    --------
    The defining identity :math:`\mathrm{bvec}(X\Sigma Y) = (Y^T \otimes_b X)\,\mathrm{bvec}(\Sigma)`:

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X, S, Y = (rng.standard_normal((6, 6)) for _ in range(3))
    >>> bool(np.allclose(bvec(X @ S @ Y, 2), block_kron(Y.T, X, 2) @ bvec(S, 2)))
    True
    """
    A = _square("A", A)
    B = _square("B", B)
    if A.shape != B.shape:
        raise ValueError(f"A and B must have the same shape, got {A.shape} and {B.shape}")
    nb = _block_count(A.shape[0], D, "A")
    A4 = A.reshape(nb, D, nb, D)  # [k, a, l, b]
    B4 = B.reshape(nb, D, nb, D)  # [i, c, j, d]
    # block ((k,i),(l,j)), inner (a c),(b d) of A_kl (x) B_ij
    out = np.einsum("kalb,icjd->kiacljbd", A4, B4)
    n2 = A.shape[0] ** 2
    return out.reshape(n2, n2)
