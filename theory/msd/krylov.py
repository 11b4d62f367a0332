r"""Lean Krylov solvers for operators on long vectors (the structured route's :math:`N^2`-long covariances).

ARPACK's ``eigs`` and SciPy's ``gmres`` spend more time in their own bookkeeping than in :math:`\mathcal F` when
the vectors are :math:`N^2`-long (profiled at :math:`N = 980`: 1.7x the matvec time in ARPACK, 2x in GMRES). Both
solvers here keep the Krylov basis in one preallocated ``(m + 1, n)`` array and orthogonalise with classical
Gram-Schmidt (two matrix-vector products with the basis per step instead of a loop of dot products; repeated
when cancellation demands it, the DGKS criterion, in GMRES; always twice in Arnoldi, whose steps nearly all
cancel, with the second pass delayed into the next step (DCGS2 [3]_, [4]_) so that one fused pass computes both
the new vector's projections and the previous vector's reorthogonalisation and one more pass applies both), so
one step costs two passes over the basis plus the matvec; what certifies a result is a residual recomputed from
the operator, never the basis alone.

* :func:`top_eigenpair`: the eigenvalue of largest magnitude by Krylov-Schur (Stewart 2001): the Ritz pair's
  residual is estimated after every step (a warm start from a nearby eigenvector stops after a few matvecs) and
  recomputed explicitly before it is accepted; a restart keeps the Schur vectors of the ``ncv // 2`` largest
  Ritz values;
* :func:`gmres`: restarted GMRES with Givens rotations, the true residual recomputed at every restart.

References
----------
.. [1] G. W. Stewart, "A Krylov-Schur algorithm for large eigenproblems", SIAM J. Matrix Anal. Appl. 23 (2001).
.. [2] Y. Saad and M. H. Schultz, "GMRES", SIAM J. Sci. Stat. Comput. 7 (1986); Saad, Iterative Methods for
   Sparse Linear Systems, 2nd ed., Alg. 6.9 and Sec. 6.5.3 (Givens rotations).
.. [3] K. Swirydowicz, J. Langou, S. Ananthan, U. Yang and S. Thomas, "Low synchronization Gram-Schmidt and
   generalized minimal residual algorithms", Numer. Linear Algebra Appl. 28 (2021) (DCGS2).
.. [4] D. Bielich, J. Langou, S. Thomas, K. Swirydowicz, I. Yamazaki and E. G. Boman, "Low-synch Gram-Schmidt with
   delayed reorthogonalization for Krylov solvers", Parallel Computing 112 (2022) (DCGS2 in Arnoldi).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import linalg as sla

__all__ = ["EigenResult", "FUSED_CHUNK", "arpack_eigs", "combine_rows", "generic_start", "gmres", "orthogonalise_twice",
           "top_eigenpair"]


def generic_start(n: int) -> np.ndarray:
    """A fixed, generic Krylov start vector of length ``n`` (standard normal, seed 0): unlike all ones it is not
    invariant under any permutation of the coordinates, so it reaches every invariant subspace of a symmetric
    operator (e.g. the modes that differ within a class of exchangeable clients)."""
    return np.random.default_rng(0).standard_normal(n)


def arpack_eigs(A, *, v0: np.ndarray | None = None, **kwargs):
    """``scipy.sparse.linalg.eigs(A, v0=..., **kwargs)`` with nothing left to chance: the start vector is ``v0``, or
    :func:`generic_start` when it is None, and (SciPy >= 1.15) the generator ARPACK draws a new vector from after a
    breakdown is seeded too.

    SciPy's ``eigs`` without ``v0`` starts from ``numpy.random.default_rng()``, seeded from the operating system: the
    same call then converges in a different number of restarts from run to run, or not at all (rho(M_sym) of the
    paper's federation at mu = 0.004: 24 to 66 s, and one start in four hit the 3000-restart cap), and its last digits
    change. Every Arnoldi solve of :mod:`theory.msd` goes through this function or :func:`top_eigenpair`."""
    import inspect

    from scipy.sparse import linalg as spla

    n = A.shape[0]
    start = generic_start(n) if v0 is None else np.asarray(v0)
    if "rng" in inspect.signature(spla.eigs).parameters:
        kwargs["rng"] = np.random.default_rng(0)
    return spla.eigs(A, v0=start, **kwargs)


#: Daniel-Gragg-Kaufman-Stewart reorthogonalisation threshold of the classical textbook rule (ARPACK: 0.717).
DGKS_ETA = 0.7071
#: Reorthogonalise only on severe cancellation (norm below this fraction of its start): GMRES only, whose result
#: is certified by the true residual recomputed at every restart. Not for Arnoldi: with one pass the basis of a
#: Krylov-Schur run lost all orthogonality on a 144 x 144 F (spurious Ritz values); the DGKS 0.7071 kept it.
LEAN_ETA = 0.1


def _orthogonalise(V: np.ndarray, j: int, w: np.ndarray, eta: float = DGKS_ETA) -> tuple[np.ndarray, float]:
    """w minus its projection on the rows 0..j of V (in place): classical Gram-Schmidt, repeated once when the
    norm drops below ``eta`` of its start (Daniel-Gragg-Kaufman-Stewart); returns the coefficients and the norm."""
    B = V[:j + 1]
    before = float(np.linalg.norm(w))
    h = B @ w
    w -= h @ B
    after = float(np.linalg.norm(w))
    if after < eta * before:
        h2 = B @ w
        w -= h2 @ B
        h += h2
        after = float(np.linalg.norm(w))
    return h, after


#: Columns per chunk of the fused Gram-Schmidt pass: a (ncv + 1) x 4096 block of the basis (<= 0.7 MB at ncv 20)
#: stays in cache between its two uses.
FUSED_CHUNK = 4096


def orthogonalise_twice(V: np.ndarray, j: int, w: np.ndarray) -> tuple[np.ndarray, float]:
    """Classical Gram-Schmidt applied twice (CGS2) to w against the rows 0..j of V, in place, in three passes over
    the basis instead of four: the first update ``w -= h @ B`` and the second projection ``B @ w`` run chunk by
    chunk of columns, so each chunk of B is read from memory once for both (same arithmetic as two separate CGS
    passes up to the order of the sums). Returns the summed coefficients and the final norm.

    Arnoldi on a converging Krylov space cancels heavily at every step (``F v`` nearly in the span), so the
    DGKS test of :func:`_orthogonalise` asks for the second pass at nearly every step anyway (184 of 186 steps
    measured on the structured F at N = 250). :func:`top_eigenpair` now lags the second pass into the next step
    (:func:`_arnoldi_step_dcgs2`, two passes) and calls this only as that step's fallback on severe cancellation."""
    B = V[:j + 1]
    h = B @ w
    h2 = np.zeros_like(h)
    for s in range(0, w.shape[0], FUSED_CHUNK):
        wc, Bc = w[s:s + FUSED_CHUNK], B[:, s:s + FUSED_CHUNK]
        wc -= h @ Bc
        h2 += Bc @ wc
    w -= h2 @ B
    return h + h2, float(np.linalg.norm(w))


#: Columns per chunk of the two DCGS2 passes (:func:`_gram_pair`, :func:`combine_rows`): a block of at most 22
#: rows x 8192 (1.4 MB) stays in cache between its uses (measured on the 2-core AMD EPYC with OpenBLAS 0.3.31 at
#: n = 480,690 and 2.7 M: 4096 slower, 16384 the same within noise, 32768 twice slower at 21 rows).
DCGS2_CHUNK = 8192
#: Rows per product in :func:`combine_rows`: OpenBLAS' dgemm with 2 output rows slows down about twofold beyond
#: ~13 inner rows (measured at n = 480,690: 21 rows 6.1 ms in one product, 3.4 ms in two of 11 and 10; one pass 2.9).
COMBINE_ROWS = 12


def _gram_pair(V: np.ndarray, j: int, chunk: int = DCGS2_CHUNK) -> np.ndarray:
    """``V[:j + 1] @ V[j:j + 2].T`` (a (j + 1) x 2 array) column chunk by chunk: each chunk of the rows 0..j+1 is
    read from memory once for both products (one BLAS call over the whole length is 2x slower: its packing of a
    2-column operand)."""
    G = np.zeros((j + 1, 2))
    for s in range(0, V.shape[1], chunk):
        G += V[:j + 1, s:s + chunk] @ V[j:j + 2, s:s + chunk].T
    return G


def combine_rows(V: np.ndarray, M: np.ndarray, m: int, first: int = 0, chunk: int = DCGS2_CHUNK, *,
                 source: np.ndarray | None = None) -> float:
    """``V[first:first + p] = M @ S[:m]`` for ``S = source`` (default ``V`` itself, ``first + p <= m``; ``M`` is
    p x m) in place, column chunk by chunk: no
    (p, n) temporary (at N^2 = 10^6 a 77 MB array freshly paged in at every restart), each chunk of the basis read
    from memory once, in products of at most :data:`COMBINE_ROWS` rows summed in cache. Returns the norm of the
    last new row (summed chunk by chunk while it is in cache).

    Used for the DCGS2 update (``p = 2``, ``first = j``) and the Krylov-Schur restart (``p ~ ncv / 2``, measured
    at n = 480,690, ncv 20: 8.7 ms in two products of 10 rows against 11.9 ms in one)."""
    p = M.shape[0]
    S = V if source is None else source
    groups = -(-m // COMBINE_ROWS)
    cuts = [(g * m) // groups for g in range(groups + 1)]  # near-equal groups of rows
    width = min(chunk, V.shape[1])
    out, tmp = np.empty((p, width)), np.empty((p, width))
    sq = 0.0
    for s in range(0, V.shape[1], chunk):
        blk = S[:m, s:s + chunk]
        o, t = out[:, :blk.shape[1]], tmp[:, :blk.shape[1]]
        np.matmul(M[:, :cuts[1]], blk[:cuts[1]], out=o)
        for lo, hi in zip(cuts[1:-1], cuts[2:], strict=True):
            np.matmul(M[:, lo:hi], blk[lo:hi], out=t)
            o += t
        V[first:first + p, s:s + chunk] = o
        sq += float(o[-1] @ o[-1])
    return math.sqrt(sq)


def _arnoldi_step_dcgs2(V: np.ndarray, H: np.ndarray, j: int, matvec) -> tuple[float, int]:
    r"""One Arnoldi step with delayed reorthogonalisation (DCGS2): two passes over the basis instead of three.

    On entry the rows ``V[:j]`` are orthonormal and ``u = V[j]`` is *pending*: orthogonalised once (its second
    Gram-Schmidt pass is lagged into this step) and not normalised, with
    :math:`A V_{:j}^T = V_{:j}^T H_{:j,:j} + u\,b` for the row :math:`b` = ``H[j, :j]`` (:math:`e_{j-1}` after a
    step, the Krylov-Schur row after a restart; the Arnoldi relation with basis vectors as rows). The step:

    1. applies the operator to the pending vector, ``w = V[j + 1] = A u`` (the Krylov space is the same);
    2. reads the basis once for :math:`[s, t] = V_{:j+1}[u, w]` (``_gram_pair``): :math:`s = Q^T u` are the lagged
       second-pass coefficients of ``u`` and :math:`\alpha^2 = u^Tu - s^Ts` the squared norm of :math:`u - Qs`;
    3. finishes ``u``: :math:`u = Qs + \alpha q`, so :math:`H_{:j,:j} \mathrel{+}= s b`,
       :math:`H_{j,:j} = \alpha b` (the previous column's Hessenberg correction);
    4. projects :math:`Aq = (w - A Q s)/\alpha = (w - [Q, q] H_{:j+1,:j} s)/\alpha` (linearity and the corrected
       relation; no second matvec): coefficients :math:`c = ([Q,q]^T w - H_{:j+1,:j} s)/\alpha`, new pending
       vector :math:`z = (w - [Q,q][Q,q]^T w)/\alpha`, so that :math:`A q = [Q, q] c + z`;
    5. writes ``q`` and ``z`` over ``u`` and ``w`` in one more pass (``combine_rows``), with ``||z||``.

    On exit ``V[:j + 1]`` is orthonormal, ``V[j + 1] = z`` is pending, ``H[:j + 1, j] = c`` and ``H[j + 1, :j + 1]
    = e_j``: the relation :math:`A V_{:j+1}^T = V_{:j+1}^T H_{:j+1,:j+1} + z e_j^T` holds to rounding, so the Ritz
    residual estimate :math:`\lVert z\rVert |y_j|` of the Hessenberg matrix with this first-pass last column is the
    residual of the Ritz pair in this step (not one step later). ``z`` is orthogonal to :math:`[Q, q]` to one
    Gram-Schmidt pass only; its second pass is the next step's ``s``.

    Fallback: if the lagged pass cancels too (:math:`\alpha^2 < u^Tu / 2`, the DGKS test of :func:`_orthogonalise`
    at 0.7071), ``u`` is finished by :func:`orthogonalise_twice` (two more passes) and the matvec is redone on ``q``
    (one more matvec), then the step is taken from the finished vector. Returns ``(||z||, matvecs used)``.

    This is DCGS2 (module references [3], [4]) with the norm of ``z`` computed in the update pass, not lagged.
    Measured per step without the matvec (one core, load average 2.7): 3.6 ms at j = 9 and 7.1 ms at j = 19 against
    6.1 and 12.7 ms for :func:`orthogonalise_twice` at n = 480,690; 28 and 49 ms against 46 and 86 ms at 2.7 M.

    Raises
    ------
    ValueError
        If ``u`` is zero or not finite, or still fails the test once finished (unreachable from
        :func:`top_eigenpair`, which stops at a breakdown ``||z|| <= 1e-14 |theta|`` before the next step).

    """
    used = 0
    for attempt in range(2):
        V[j + 1] = matvec(V[j])
        used += 1
        G = _gram_pair(V, j)
        s, uu, t, uw = G[:j, 0], float(G[j, 0]), G[:j, 1], float(G[j, 1])
        alpha2 = uu - float(s @ s)
        if alpha2 >= 0.5 * uu and alpha2 > 0.0:
            break
        if attempt == 1 or j == 0:  # a finished vector failed the test: zero, not finite or in the span (breakdown)
            raise ValueError(f"Arnoldi step {j}: the new basis vector is zero, not finite or in the span of the "
                             f"basis (norm^2 {uu:.3e}, {alpha2:.3e} outside the span)")
        # the lagged pass cancelled severely (u nearly in span Q): finish u eagerly, then redo the matvec on it
        sigma, alpha = orthogonalise_twice(V, j - 1, V[j])
        b = H[j, :j].copy()
        H[:j, :j] += np.outer(sigma, b)
        H[j, :j] = alpha * b
        V[j] /= alpha
    alpha = math.sqrt(alpha2)
    b = H[j, :j].copy()
    H[:j, :j] += np.outer(s, b)
    H[j, :j] = alpha * b
    dq = (uw - float(s @ t)) / alpha  # q^T w
    H[:j + 1, j] = (np.append(t, dq) - H[:j + 1, :j] @ s) / alpha
    H[j + 1, :j + 1] = 0.0
    H[j + 1, j] = 1.0
    M = np.zeros((2, j + 2))
    M[0, :j], M[0, j] = -s / alpha, 1.0 / alpha  # q = (u - Q s) / alpha
    M[1, :j] = -(t - s * (dq / alpha)) / alpha  # z = (w - Q t - q dq) / alpha
    M[1, j], M[1, j + 1] = -dq / alpha**2, 1.0 / alpha
    return combine_rows(V, M, j + 2, first=j), used


@dataclass(frozen=True)
class EigenResult:
    """Largest-magnitude eigenvalue ``value`` (complex), a real start vector for the next solve, the Ritz
    residual ``||F x - value x|| / |value|`` (``||x|| = 1``) and the matvec count."""

    value: complex
    vector: np.ndarray | None
    residual: float
    matvecs: int


def _explicit_residual(matvec, theta: complex, y: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, float, int]:
    """Ritz vector ``y @ B`` (unit norm, real part of a real pair), ``||F x - theta x|| / |theta|`` and the matvecs."""
    if theta.imag == 0.0:
        x = np.real(y) @ B
        x /= np.linalg.norm(x)
        r = np.asarray(matvec(x), dtype=np.float64) - theta.real * x
        return x, float(np.linalg.norm(r)) / max(abs(theta), 1e-300), 1
    xr, xi = np.real(y) @ B, np.imag(y) @ B
    scale = math.hypot(float(np.linalg.norm(xr)), float(np.linalg.norm(xi)))
    fr = np.array(matvec(xr), dtype=np.float64)  # a copy: matvec may reuse its output buffer
    fi = np.asarray(matvec(xi), dtype=np.float64)
    a, b = theta.real, theta.imag
    res = math.hypot(float(np.linalg.norm(fr - a * xr + b * xi)), float(np.linalg.norm(fi - b * xr - a * xi)))
    x = xr + xi  # a real start vector in the pair's invariant subspace (for warm starts)
    return x / np.linalg.norm(x), res / (scale * max(abs(theta), 1e-300)), 2


def _schur_truncate(V: np.ndarray, H: np.ndarray, W: np.ndarray, G: np.ndarray, keep: int, cap: int) -> int:
    """The Krylov-Schur truncation of a Krylov decomposition ``F W[:q]^T = W^T G`` (W: (q + 1) x n, orthonormal rows,
    G: (q + 1) x q; ``W`` may be ``V`` itself and ``G`` a view of ``H``), in place into ``(V, H)``: ``V[:p]`` the
    Schur vectors of G's ``keep`` largest-magnitude Ritz values (at most ``cap``, never splitting a complex pair),
    ``V[p] = W[q]`` (the pending vector of :func:`_arnoldi_step_dcgs2`'s entry state, finished by the next step)
    with the row ``H[p, :p]``; returns p."""
    q = G.shape[1]
    T, Z, sdim = _schur_sorted(G[:q, :q], keep)
    p = int(min(sdim, cap))
    if p < sdim and T[p, p - 1] != 0.0:  # do not split a 2 x 2 block (complex pair) of the real Schur form
        p -= 1
    b = G[q, :q] @ Z[:, :p]  # before H (which G may view) is cleared
    combine_rows(V, np.ascontiguousarray(Z[:, :p].T), q, source=W)
    V[p] = W[q]
    H[:] = 0.0
    H[:p, :p] = T[:p, :p]
    H[p, :p] = b
    return p


def _krylov_schur_restart(V: np.ndarray, H: np.ndarray, ncv: int) -> int:
    """Krylov-Schur restart in place: keep the Schur vectors of the ``ncv // 2`` largest-magnitude Ritz values
    (:func:`_schur_truncate` of the current decomposition); returns their number ``p``."""
    return _schur_truncate(V, H, V, H[:ncv + 1, :ncv], ncv // 2, ncv - 2)


def _schur_sorted(Hm: np.ndarray, keep: int):
    """Real Schur form of ``Hm`` with the Ritz values of the ``keep`` largest magnitudes leading: ``(T, Z, sdim)``."""
    cut = np.sort(np.abs(np.linalg.eigvals(Hm)))[::-1][keep - 1]
    return sla.schur(Hm, output="real", sort=lambda re, im: math.hypot(re, im) >= cut * (1 - 1e-12))


def top_eigenpair(matvec: Callable[[np.ndarray], np.ndarray], n: int, v0: np.ndarray | None = None, *,
                  tol: float = 1e-10, ncv: int = 20, maxiter: int = 3000, what: str = "top eigenvalue",
                  decide: float = 0.0, basis: tuple[np.ndarray, np.ndarray] | None = None) -> EigenResult:
    r"""Eigenvalue of largest magnitude of the linear map ``matvec`` on :math:`\mathbb R^n` (Krylov-Schur).

    Stops when the Ritz pair :math:`(\theta, x)` of largest :math:`|\theta|` has
    :math:`\lVert Fx - \theta x\rVert \le` ``tol`` :math:`|\theta|\,\lVert x\rVert` (ARPACK's criterion), or, with
    ``decide > 0``, below ``decide`` :math:`\bigl||\theta| - 1\bigr|` (enough to tell on which side of 1 the spectral
    radius lies, far from 1; near 1 this is the tighter rule). The Hessenberg estimate of the residual is checked
    after every step; once it passes, the residual is recomputed explicitly (one or two more matvecs) and that
    value, returned as ``residual``, must pass too (otherwise the iteration goes on with a ten times smaller
    estimate required). ``matvec`` may return a buffer it reuses.

    A cold start (``v0`` None, zero or not finite) is :func:`generic_start`. ``basis = (W, G)``, a Krylov
    decomposition ``F @ W[:q].T = W.T @ G`` (W: (q + 1) x n with orthonormal rows, G: (q + 1) x q, q >= 3; e.g. of
    the (S2) solve by :func:`theory.msd.gmres_dr.gmres_dr`), replaces ``v0``: the search starts from the Schur vectors
    of its ``ncv // 2`` largest Ritz values (the Krylov-Schur restart applied to it).

    Raises
    ------
    ValueError
        If ``maxiter`` restarts do not reach ``tol`` (the message starts with ``what``).
    """
    if not 4 <= ncv < n:
        raise ValueError(f"ncv must be in [4, n) = [4, {n}), got {ncv}")
    V = np.empty((ncv + 1, n))
    H = np.zeros((ncv + 1, ncv))
    p = 0
    if basis is not None:
        W, G = basis
        q = G.shape[1] if G.ndim == 2 else -1
        if q < 3 or W.shape != (q + 1, n) or G.shape != (q + 1, q):
            raise ValueError(f"basis must be (W, G) with W of shape (q + 1, {n}), G of shape (q + 1, q), q >= 3; "
                             f"got {W.shape} and {G.shape}")
        keep = min(ncv // 2, q - 1)
        p = _schur_truncate(V, H, W, G, keep, keep)  # the Krylov-Schur restart applied to the given decomposition
    else:
        # a cold start is generic, never all ones: a start with (almost) no component along the top eigenvector lets
        # the decide-side stop accept a lower eigenvalue (seed F at N = 980, mu = 0.1973: 0.85199 from all ones, rho
        # 0.85793)
        bad = v0 is None or not np.all(np.isfinite(v0)) or not np.any(v0)
        start = generic_start(n) if bad else np.asarray(v0, float)
        V[0] = start / np.linalg.norm(start)
    matvecs, residual, strict = 0, math.inf, 1.0
    for _restart in range(maxiter):
        for j in range(p, ncv):
            beta, used = _arnoldi_step_dcgs2(V, H, j, matvec)  # V[j] finished, V[j + 1] pending (norm beta)
            matvecs += used
            vals, vecs = np.linalg.eig(H[:j + 1, :j + 1])
            i = int(np.argmax(np.abs(vals)))
            theta, y = vals[i], vecs[:, i]
            if abs(theta.imag) <= 1e-10 * abs(theta):
                theta, y = complex(theta.real, 0.0), np.real(y)
            residual = beta * float(abs(y[j])) / max(abs(theta), 1e-300)  # ||A V^T y - theta V^T y|| = beta |y_j|
            goal = max(tol, decide * abs(abs(theta) - 1.0))
            breakdown = beta <= 1e-14 * max(abs(theta), 1e-300)  # an invariant subspace: the Ritz pair is exact
            if residual <= strict * goal or breakdown:
                x, residual, used = _explicit_residual(matvec, theta, y, V[:j + 1])
                matvecs += used
                if residual <= goal:
                    return EigenResult(complex(theta), x, residual, matvecs)
                if breakdown:
                    break
                strict *= 0.1  # the estimate was optimistic (rounding in the basis): go on
        else:
            p = _krylov_schur_restart(V, H, ncv)
            continue
        break
    raise ValueError(f"{what}: Krylov-Schur did not converge to tol {tol:g} within {maxiter} restarts "
                     f"({matvecs} matvecs, Ritz residual {residual:.2e})")


def gmres(matvec: Callable[[np.ndarray], np.ndarray], b: np.ndarray, *, rtol: float, restart: int = 40,
          maxiter: int = 5000, x0: np.ndarray | None = None, eta: float = DGKS_ETA,
          callback: Callable[[int, float], None] | None = None) -> tuple[np.ndarray, int, float]:
    r"""Restarted GMRES for :math:`Ax = b` (``matvec`` = :math:`A`), stopping at :math:`\lVert b - Ax\rVert \le`
    ``rtol`` :math:`\lVert b\rVert` (true residual, recomputed at each restart) or after ``maxiter`` steps.

    Returns ``(x, steps, relative true residual)``; the caller decides what a residual above ``rtol`` means.
    ``callback(step, residual estimate)`` is called after every step; ``eta``: reorthogonalisation threshold
    (``LEAN_ETA``: one Gram-Schmidt pass unless the cancellation is severe; the true residual at each restart
    certifies the result either way). ``matvec`` may return a buffer it reuses.
    """
    n = b.shape[0]
    bnorm = float(np.linalg.norm(b))
    x = np.zeros(n) if x0 is None else np.array(x0, dtype=np.float64)
    if bnorm == 0.0:
        return x, 0, 0.0
    r = b - matvec(x) if x0 is not None else b.copy()
    rnorm = float(np.linalg.norm(r))
    m = max(1, min(restart, n))
    V = np.empty((m + 1, n))
    steps = 0
    while rnorm > rtol * bnorm and steps < maxiter:
        H = np.zeros((m + 1, m))
        cs, sn = np.zeros(m), np.zeros(m)
        g = np.zeros(m + 1)
        g[0] = rnorm
        V[0] = r / rnorm
        k = 0
        for j in range(m):
            w = V[j + 1]  # the new basis vector is built in place
            w[:] = matvec(V[j])
            steps += 1
            h, beta = _orthogonalise(V, j, w, eta)
            col = np.append(h, beta)
            for i in range(j):  # previous rotations
                col[i], col[i + 1] = cs[i] * col[i] + sn[i] * col[i + 1], -sn[i] * col[i] + cs[i] * col[i + 1]
            d = math.hypot(col[j], col[j + 1])
            cs[j], sn[j] = (1.0, 0.0) if d == 0.0 else (col[j] / d, col[j + 1] / d)
            col[j], col[j + 1] = d, 0.0
            g[j + 1] = -sn[j] * g[j]
            g[j] = cs[j] * g[j]
            H[:j + 2, j] = col
            k = j + 1
            if callback is not None:
                callback(steps, abs(g[j + 1]) / bnorm)
            if abs(g[j + 1]) <= rtol * bnorm or beta <= 1e-300 or steps >= maxiter:
                break
            w /= beta
        yk = sla.solve_triangular(H[:k, :k], g[:k])
        x += yk @ V[:k]
        r = b - matvec(x)
        rnorm = float(np.linalg.norm(r))
    return x, steps, rnorm / bnorm
