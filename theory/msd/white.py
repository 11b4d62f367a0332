r"""Exact reduction of both mean-square models for white features :math:`R_k = v_kI_D`: a few :math:`N_b^2` problems.

With :math:`R_k = v_kI`, every operation inside :math:`C \mapsto \mathcal B\mathcal R_\mu\mathcal A(C)` acts on a
:math:`D \times D` block :math:`Y` through scalars and four block maps only: :math:`Y`, the selection Hadamard
product :math:`\Pi \circ Y`, the transpose :math:`Y^T` and :math:`\mathrm{tr}(Y)I` (the Gaussian term
:math:`R_kYR_k + R_kY^TR_k + \mathrm{tr}(R_kY)R_k = v_k^2(Y + Y^T + \mathrm{tr}(Y)I)`). Each of them maps the
following subspaces of :math:`\mathbb R^{D \times D}` to themselves, as a scalar:

============  ===============================  =====================  =========================
component     basis                            :math:`\Pi \circ`      Gaussian diagonal factor
============  ===============================  =====================  =========================
identity      :math:`I`                        :math:`p_m`            :math:`(D + 2)v_k^2`
diagonal      traceless diagonal (D - 1)       :math:`p_m`            :math:`2v_k^2`
symmetric     :math:`e_ie_j^T + e_je_i^T`      :math:`\Pi_{ij}`       :math:`2v_k^2`
antisymmetric :math:`e_ie_j^T - e_je_i^T`      :math:`\Pi_{ij}`       0
============  ===============================  =====================  =========================

so :math:`\mathcal F(S \otimes E) = \mathcal F_c(S) \otimes E` for a basis matrix :math:`E` of component
:math:`c`, with :math:`\mathcal F_c` the :math:`D = 1` operator on :math:`N_b \times N_b` matrices :math:`S` whose
Hadamard factor is the component's :math:`\pi` and whose local diagonal Gaussian factor is the component's
(the selection law only enters through :math:`\Pi`, which is permutation invariant for subsets and Bernoulli
and circulant for windows; the reduction holds for any symmetric :math:`\Pi` with diagonal :math:`p_m`).
Components with the same :math:`(\pi, \text{factor})` share one operator. Hence

* :math:`\rho(\mathcal F) = \max_c\rho(\mathcal F_c)` and the mean-square threshold is the smallest of the
  components' thresholds;
* the noise :math:`E[\Phi] = \mathrm{blockdiag}(0, \sigma^2_{\eta,k}v_kI, \dots) = S_\Phi \otimes I` lies in the
  identity component, so :math:`C_\infty = S_\infty \otimes I` and :math:`\mathrm{MSD}_\infty = D[S_\infty]_{00}`
  with :math:`S_\infty - \mathcal F_{identity}(S_\infty) = \mu^2\mathcal B_{identity}(S_\Phi)`: one problem of
  :math:`N_b^2` unknowns (no :math:`D^2` factor) for both models.

The seed's truncated :math:`\mathcal F` has no Gaussian factor, so identity = diagonal and symmetric =
antisymmetric there.

References
----------
.. [1] docs/papers/paofed.md#mean-square (F_exact, Gaussian R_4), 3.6 (block formulas of A, R_mu, B; (S2)) and its
   "diagonal R_k" bullet (which this reduction extends to the exact F).
.. [2] seed 004_180cd372987d137b.txt, Ch. (4.26)-(4.34) lines 1016-1072, P4 (28)-(38) lines 2712-2785.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.sparse import linalg as spla

from theory.msd.expectations import AnalysisMoments, _moments
from theory.msd.krylov import arpack_eigs
from theory.msd.structured import _check_model

__all__ = [
    "WhiteComponent",
    "WhiteSteadyState",
    "apply_F_component",
    "is_white",
    "white_components",
    "white_msd_steady_state",
    "white_spectral_radius",
]


def is_white(x) -> bool:
    r"""Whether every :math:`R_k` is a multiple :math:`v_kI` of the identity (exactly)."""
    m = _moments(x)
    v = m.R[:, 0, 0]
    return bool(np.array_equal(m.R, v[:, None, None] * np.eye(m.D)[None]))


@dataclass(frozen=True, kw_only=True)
class WhiteComponent:
    r"""One invariant component of the white reduction.

    Attributes
    ----------
    name : str
        ``identity``, ``diagonal``, ``symmetric`` or ``antisymmetric`` (with the :math:`\Pi` value).
    pi : float
        Factor of :math:`\Pi \circ` on the component.
    gauss : float
        Local diagonal Gaussian factor over :math:`v_k^2` (:math:`D + 2`, 2 or 0).
    dimension : int
        Dimension of the component inside :math:`\mathbb R^{D \times D}` (copies of :math:`\mathcal F_c`).
    """

    name: str
    pi: float
    gauss: float
    dimension: int


def white_components(x, model: str = "exact") -> tuple[WhiteComponent, ...]:
    r"""The distinct components of the white reduction (merged when their operators coincide).

    Raises
    ------
    ValueError
        If some :math:`R_k` is not a multiple of the identity, or ``model`` is not a known model.

    Examples
    --------
    Uniform subsets: :math:`\Pi` has one off-diagonal value, so the exact model has four components and the
    seed's two:

    >>> from theory.msd.instance import PAOFedInstance
    >>> import numpy as np
    >>> inst = PAOFedInstance(K=2, D=4, l_max=1, m=2, selection="subset", p=np.array([0.9, 0.5]), delta=0.3,
    ...                       alpha=np.array([1.0, 0.5]), sigma2_eta=np.array([0.01, 0.02]),
    ...                       R=np.stack([np.eye(4), 2 * np.eye(4)]), w_star=np.ones(4), mu=0.1)
    >>> [c.dimension for c in white_components(inst)], [c.dimension for c in white_components(inst, "seed")]
    ([1, 3, 6, 6], [4, 12])
    """
    m = _moments(x)
    _check_model(model)
    if not is_white(m):
        raise ValueError("R must be white (every R_k a multiple v_k I of the identity) for the white reduction")
    D = m.D
    iu = np.triu_indices(D, 1)
    off = np.asarray(m.Pi)[iu]
    values, counts = np.unique(off, return_counts=True) if off.size else (np.zeros(0), np.zeros(0, dtype=int))
    raw = [("identity", m.p_m, D + 2.0, 1)]
    if D > 1:
        raw.append(("diagonal", m.p_m, 2.0, D - 1))
    for v, c in zip(values.tolist(), counts.tolist(), strict=True):
        raw.append((f"symmetric(pi={v:.6g})", v, 2.0, c))
        raw.append((f"antisymmetric(pi={v:.6g})", v, 0.0, c))
    merged: dict[tuple[float, float], list] = {}
    for name, pi, g, dim in raw:
        key = (float(pi), float(g) if model == "exact" else 0.0)
        if key in merged:
            merged[key][1] += dim
        else:
            merged[key] = [name, dim]
    return tuple(WhiteComponent(name=name, pi=k[0], gauss=k[1], dimension=dim) for k, (name, dim) in merged.items())


def apply_F_component(m: AnalysisMoments, comp: WhiteComponent, S: np.ndarray, model: str = "seed",
                      mu: float | None = None) -> np.ndarray:
    r""":math:`\mathcal F_c(S)` on an :math:`N_b \times N_b` matrix:
    :math:`\mathcal F(S \otimes E) = \mathcal F_c(S) \otimes E`.

    The :math:`D = 1` form of :func:`theory.msd.structured.apply_A`, ``apply_R`` and ``apply_B`` with the
    component's Hadamard factor and Gaussian factor. Cost :math:`O(N_b^2 + K^2(l_{\max}+1))`.
    """
    _check_model(model)
    mu = m.mu if mu is None else float(mu)
    K = m.K
    nb = m.n_blocks
    S = np.asarray(S, dtype=np.float64)
    if S.shape != (nb, nb):
        raise ValueError(f"S must have shape (N_b, N_b) = ({nb}, {nb}), got {S.shape}")
    v = m.R[:, 0, 0]
    mv = mu * v  # scaled first: mu^2 v^2 stays finite when mu is huge and v tiny
    c = m.c
    pi = comp.pi
    loc = slice(1, K + 1)
    ar = np.arange(1, K + 1)
    # A
    delta = S[0, 0] - S[0, loc] - S[loc, 0] + S[ar, ar]
    Z = S.copy()
    Z[loc] = c[:, None] * S[0][None, :] + (1.0 - c)[:, None] * S[loc]
    Z[:, loc] = c[None, :] * Z[:, :1] + (1.0 - c)[None, :] * Z[:, loc]
    Z[ar, ar] += (m.p * pi - c ** 2) * delta
    # R_mu
    X = Z
    Y = X.copy()
    Y[loc] -= mv[:, None] * X[loc]
    Y[:, loc] -= X[:, loc] * mv[None, :]
    if model == "exact":
        Y[loc, loc] += np.outer(mv, mv) * X[loc, loc]
        Y[ar, ar] += (comp.gauss - 1.0) * mv ** 2 * X[ar, ar]
    return _apply_B_scalar(m, Y, pi)


def _apply_B_scalar(m: AnalysisMoments, Y: np.ndarray, pi: float) -> np.ndarray:
    K, L = m.K, m.l_max
    nb = m.n_blocks
    w = m.p_m * m.beta_bar.T.reshape(-1)
    s = float(np.sum(w))
    head = K + 1
    W = np.empty_like(Y)
    W[:head] = Y[:head]
    W[head:] = Y[1:nb - K]
    W[0] = (1.0 - s) * Y[0] + w @ Y[1:]
    Z = np.empty_like(Y)
    Z[:, :head] = W[:, :head]
    Z[:, head:] = W[:, 1:nb - K]
    Z[:, 0] = (1.0 - s) * W[:, 0] + W[:, 1:] @ w
    corr = 0.0
    y00 = Y[0, 0]
    for lag in range(L + 1):
        sl = slice(lag * K + 1, (lag + 1) * K + 1)
        cov = m.beta_second[lag] - np.outer(m.beta_bar[:, lag], m.beta_bar[:, lag])
        yqq = Y[sl, sl]
        yq0 = Y[sl, 0]
        y0q = Y[0, sl]
        hat = (np.sum(cov * yqq) - cov.sum(axis=1) @ yq0 - cov.sum(axis=0) @ y0q + cov.sum() * y00)
        corr += m.p_m ** 2 * hat
        diag_hat = np.diag(yqq) - yq0 - y0q + y00
        corr += (np.diag(m.beta_second[lag]) @ diag_hat) * (pi - m.p_m ** 2)
    Z[0, 0] += corr
    return Z


@dataclass(frozen=True)
class WhiteSteadyState:
    r"""(S2) through the white reduction: :math:`C_\infty = S \otimes I_D`.

    Attributes
    ----------
    msd : float
        :math:`D\,S_{00}`.
    S : (N_b, N_b) array
    residual : float
        :math:`\lVert S - \mathcal F_{identity}(S) - Q_S\rVert_F/\lVert Q_S\rVert_F`, equal to the relative
        (S2) residual of :math:`C = S \otimes I` in the full space.
    iterations : int
    method : str
    tolerance : float
    """

    msd: float
    S: np.ndarray
    residual: float
    iterations: int
    method: str
    tolerance: float


def white_msd_steady_state(x, model: str = "seed", *, mu: float | None = None, method: str = "bicgstab",
                           rtol: float = 1e-12, maxiter: int = 5000, restart: int = 40,
                           progress=None) -> WhiteSteadyState:
    r"""Steady-state MSD of either model for white :math:`R_k` by the identity component (see the module).

    Parameters
    ----------
    method : {"bicgstab", "gmres"}
        Krylov solver on the :math:`N_b^2` unknowns (``restart`` vectors of :math:`N_b^2` for GMRES).
    maxiter : int
        Iteration cap (per refinement round); non-convergence raises ``ValueError``.
    progress : callable or None
        Called as ``progress(iteration, residual_estimate)`` by the solver.

    Raises
    ------
    ValueError
        If R is not white, or the solve stops above ``10 rtol`` (e.g. :math:`\rho(\mathcal F) \ge 1`).
    """
    m = _moments(x)
    _check_model(model)
    if method not in ("bicgstab", "gmres"):
        raise ValueError(f"method must be bicgstab or gmres, got {method!r}")
    if isinstance(maxiter, bool) or not isinstance(maxiter, (int, np.integer)) or maxiter < 1:
        raise ValueError(f"maxiter must be an integer >= 1, got {maxiter!r}")
    mu = m.mu if mu is None else float(mu)
    if not (math.isfinite(mu) and mu > 0):
        raise ValueError(f"mu must be a finite real > 0, got {mu!r}")
    comp = white_components(m, model)[0]  # the identity component is listed first
    nb = m.n_blocks
    noise = np.zeros((nb, nb))
    ar = np.arange(1, m.K + 1)
    noise[ar, ar] = m.sigma2_eta * (mu * m.R[:, 0, 0]) * mu
    Q = _apply_B_scalar(m, noise, comp.pi)
    qnorm = float(np.linalg.norm(Q))
    if qnorm == 0.0:
        return WhiteSteadyState(0.0, np.zeros((nb, nb)), 0.0, 0, method, rtol)
    S, iterations = krylov_solve(lambda X: X - apply_F_component(m, comp, X, model, mu), Q, rtol=rtol,
                                 method=method, maxiter=maxiter, restart=restart, progress=progress)
    r = S - apply_F_component(m, comp, S, model, mu) - Q
    residual = float(np.linalg.norm(r) / qnorm)
    if not residual <= 10 * rtol:
        raise ValueError(f"white (S2) not solved: relative residual {residual:.3g} > 10 rtol = {10 * rtol:.3g} "
                         f"after {iterations} {method} iterations (cap {maxiter}; is rho(F) < 1 at mu = {mu!r}?)")
    return WhiteSteadyState(float(m.D * S[0, 0]), S, residual, iterations, method, rtol)


def krylov_solve(op, rhs: np.ndarray, *, rtol: float, method: str = "gmres", maxiter: int = 2000,
                 restart: int = 40, refinements: int = 3, progress=None, x0: np.ndarray | None = None,
                 precondition=None):
    r"""Solve ``op(X) = rhs`` (matrices) by capped GMRES / BiCGSTAB with iterative refinement.

    Returns ``(X, iterations)``; the caller certifies the result by its recomputed residual. ``maxiter`` caps
    the iterations of each round (GMRES: restart cycles of ``restart`` inner steps are counted as inner steps),
    so the total work is at most ``(refinements + 1) * maxiter`` operator applications. ``precondition`` (a
    callable on matrices) is used as a right preconditioner.
    """
    shape = rhs.shape
    n = rhs.size
    if precondition is None:
        A = spla.LinearOperator((n, n), dtype=np.float64, matvec=lambda v: op(v.reshape(shape)).ravel())
    else:
        A = spla.LinearOperator((n, n), dtype=np.float64,
                                matvec=lambda v: op(precondition(v.reshape(shape))).ravel())
    X = np.zeros(shape) if x0 is None else np.array(x0, dtype=np.float64)
    bnorm = float(np.linalg.norm(rhs))
    total = 0
    for _ in range(refinements + 1):
        r = rhs - (op(X) if np.any(X) else 0.0)
        rn = float(np.linalg.norm(r))
        if rn <= rtol * bnorm:
            break
        count = [0]

        def cb(res, count=count, total=total):
            count[0] += 1
            if progress is not None and count[0] % 10 == 0:
                progress(total + count[0], float(np.linalg.norm(res)) if np.ndim(res) else float(res))

        inner = min(0.5, 0.5 * rtol * bnorm / rn)
        if method == "gmres":
            rs = int(min(n, restart))
            dx, _info = spla.gmres(A, r.ravel(), rtol=inner, atol=0.0, restart=rs,
                                   maxiter=max(1, int(maxiter) // rs), callback=cb, callback_type="pr_norm")
        else:
            dx, _info = spla.bicgstab(A, r.ravel(), rtol=inner, atol=0.0, maxiter=int(maxiter), callback=cb)
        total += count[0]
        dx = dx.reshape(shape)
        X = X + (dx if precondition is None else precondition(dx))
        if not np.all(np.isfinite(X)):
            break
    return X, total


def white_spectral_radius(x, model: str = "seed", *, mu: float | None = None, tol: float = 1e-12,
                          ncv: int = 20, maxiter: int = 3000, v0: dict | None = None) -> tuple[float, dict]:
    r""":math:`\rho(\mathcal F) = \max_c\rho(\mathcal F_c)` over the white components.

    Returns ``(rho, eigenvectors)``, the latter a dict component name -> Ritz vector (for warm starts via ``v0``).
    Dense eigenvalues when :math:`N_b^2 \le 400`, otherwise Arnoldi (``eigs``, largest magnitude, capped at
    ``maxiter`` restarts; non-convergence raises ``ValueError``).
    """
    m = _moments(x)
    _check_model(model)
    mu = m.mu if mu is None else float(mu)
    nb = m.n_blocks
    n2 = nb * nb
    best = 0.0
    vecs = {}
    for comp in white_components(m, model):
        def mv(v, comp=comp):
            return apply_F_component(m, comp, v.reshape(nb, nb), model, mu).ravel()

        if n2 <= 400:
            from threadpoolctl import threadpool_limits

            with threadpool_limits(1):
                F = np.column_stack([mv(e) for e in np.eye(n2)])
                r = float(np.max(np.abs(np.linalg.eigvals(F))))
        else:
            start = None if v0 is None else v0.get(comp.name)
            start = np.ones(n2) / nb if start is None else start
            op = spla.LinearOperator((n2, n2), matvec=mv, dtype=np.float64)
            try:
                vals, vv = arpack_eigs(op, k=1, which="LM", tol=tol, ncv=min(ncv, n2 - 1), v0=start, maxiter=maxiter)
            except spla.ArpackNoConvergence as exc:
                raise ValueError(f"rho(F) of the white component {comp.name}: Arnoldi did not converge to tol "
                                 f"{tol:g} within {maxiter} restarts at mu = {mu!r}") from exc
            r = float(np.abs(vals[0]))
            vecs[comp.name] = np.real(vv[:, 0]) if abs(vals[0].imag) <= 1e-12 * r else None
        best = max(best, r)
    return best, vecs
