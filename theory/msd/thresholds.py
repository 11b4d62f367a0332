r"""Fast certified thresholds and warm-started spectral radii for the PAO-Fed mean-square analysis.

Thresholds (:func:`fast_threshold_bracket`) start at the paper's bound and move outwards, so :math:`\rho` is
never evaluated at tiny :math:`\mu` (where the top :math:`D^2` eigenvalues of :math:`\mathcal F` cluster at
:math:`1 - O(\mu)` and Arnoldi needs thousands of restarts); every :math:`\rho` evaluation starts Arnoldi
from the previous Perron vector (:func:`warm_spectral_radius`, :func:`consensus_start`). The bracket is certified as
in :func:`theory.msd.stability.threshold_bracket`: :math:`\rho(lo) < 1 \le \rho(hi)`. The mean-stability
threshold is searched the same way from Theorem 1's :math:`2/\lambda_{\max}` (:func:`mean_threshold_fast`).
:mod:`theory.msd.routes` runs these on the route it chooses.

References
----------
.. [1] Gauthier's thesis (seed 004_180cd372987d137b.txt), Ch. 4, Theorems 1-2 (mean and mean-square stability);
   docs/papers/paofed.md (the exact thresholds, the exact :math:`\mathcal F`, slow convergence at small
   :math:`\mu`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import optimize

from theory.msd.expectations import _moments, expected_A, expected_B
from theory.msd.grouped import (
    client_grouping,
    grouped_spectral_radius,
)
from theory.msd.krylov import generic_start, top_eigenpair
from theory.msd.stability import ThresholdBracket
from theory.msd.structured import (
    ARNOLDI_MAXITER,
    SymmetricPacking,
    _check_model,
    f_matvec,
)
from theory.msd.white import apply_F_component, is_white, white_components

__all__ = [
    "STABILITY_MARGIN",
    "consensus_start",
    "fast_threshold_bracket",
    "mean_spectral_radius",
    "mean_threshold_fast",
    "threshold_start",
    "warm_spectral_radius",
    "white_threshold_bracket",
]

#: rho(F) must be below 1 - STABILITY_MARGIN to count as stable (above Arnoldi's tolerance 1e-10).
STABILITY_MARGIN = 1e-9


def _eigs_top(matvec: Callable[[np.ndarray], np.ndarray], n: int, v0, *, tol: float, ncv: int, maxiter: int,
              what: str, decide: float = 0.0):
    if n <= 400:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1):  # a small dense eig is slower threaded (and much slower on a shared machine)
            F = np.column_stack([np.array(matvec(e)) for e in np.eye(n)])  # copies: matvec may reuse a buffer
            vals = np.linalg.eigvals(F)
        return float(np.max(np.abs(vals))), None
    res = top_eigenpair(matvec, n, v0, tol=tol, ncv=min(ncv, n - 1), maxiter=maxiter, what=what, decide=decide)
    return abs(res.value), res.vector


def _ritz_radius(matvec: Callable[[np.ndarray], np.ndarray], n: int, v0, *, tol: float, what: str, basis=None):
    """``(|theta|, Ritz vector, Ritz residual)`` of the top eigenpair (ncv 20), from ``v0`` or from the Krylov
    decomposition ``basis`` (:func:`theory.msd.krylov.top_eigenpair`); dense eigenvalues (residual None) for
    ``n <= 400`` as in :func:`_eigs_top`."""
    if n <= 400:
        r, v = _eigs_top(matvec, n, v0, tol=tol, ncv=20, maxiter=ARNOLDI_MAXITER, what=what)
        return r, v, None
    res = top_eigenpair(matvec, n, v0, tol=tol, ncv=20, maxiter=ARNOLDI_MAXITER, what=what, basis=basis)
    return abs(res.value), res.vector, res.residual


def _component_rho(m, model: str, route: str, comp, starts: dict, *, tol: float, ncv: int, maxiter: int,
                   grouping=None) -> Callable[[float], float]:
    """mu -> rho(F_c(mu)) of one white component on the white or grouped route, warm-started via ``starts``."""
    nb = m.n_blocks

    def rho(mu: float) -> float:
        if route == "grouped":
            r, v = grouped_spectral_radius(m, comp, model, grouping=grouping, mu=mu, tol=tol, ncv=ncv,
                                           maxiter=maxiter, v0=starts.get(comp.name))
        else:
            r, v = _eigs_top(lambda v: apply_F_component(m, comp, v.reshape(nb, nb), model, mu).ravel(), nb * nb,
                             starts.get(comp.name), tol=tol, ncv=ncv, maxiter=maxiter,
                             what=f"rho(F_{model}) of the white component {comp.name} at mu = {mu!r}")
        starts[comp.name] = v
        return r

    return rho


def warm_spectral_radius(x, model: str, *, route: str = "structured", tol: float = 1e-10, ncv: int = 20,
                         maxiter: int = ARNOLDI_MAXITER, decide: float = 0.0) -> Callable[[float], float]:
    r"""A function :math:`\mu \mapsto \rho(\mathcal F(\mu))` that warm-starts Arnoldi from its previous Perron vector.

    ``decide > 0`` (structured route) stops each eigen-solve once its Ritz residual is below ``decide``
    :math:`|\rho - 1|` (or ``tol``): threshold searches need the radius accurately only near 1.

    ``route="white"`` evaluates :math:`\max_c\rho(\mathcal F_c)` over the white components, ``route="grouped"``
    the same on the refined grouped reduction of each component (:func:`theory.msd.grouped.grouped_spectral_radius`).
    """
    m = _moments(x)
    _check_model(model)
    if route in ("white", "grouped"):
        starts: dict = {}
        grouping = client_grouping(m) if route == "grouped" else None
        fns = [_component_rho(m, model, route, c, starts, tol=tol, ncv=ncv, maxiter=maxiter, grouping=grouping)
               for c in white_components(m, model)]
        return lambda mu: max(f(mu) for f in fns)
    packing, n = _structured_space(m, model)
    state: dict = {"v": consensus_start(m, packing)}

    def rho(mu: float) -> float:
        r, v = _eigs_top(f_matvec(m, model, mu, packing=packing), n, state["v"], tol=tol,
                         ncv=ncv, maxiter=maxiter, what=f"rho(F_{model}) at mu = {mu!r}", decide=decide)
        state["v"] = v
        return r

    return rho


#: Weights of the identity and of :func:`theory.msd.krylov.generic_start` in :func:`consensus_start` (unit vectors
#: each).
CONSENSUS_START_MIX = 0.1


def consensus_start(m, packing: SymmetricPacking) -> np.ndarray:
    r"""Cold Krylov start for :math:`\rho(\mathcal F)` on the structured route (packed): the consensus covariance
    :math:`11^T \otimes uu^T`, :math:`u` the eigenvector of the smallest eigenvalue of the clients' mean
    :math:`R_k`, plus :data:`CONSENSUS_START_MIX` times the identity and times :func:`generic_start` (unit norms).

    :math:`\mathcal F` fixes every consensus covariance :math:`11^T \otimes W` at :math:`\mu = 0` and damps it by
    about :math:`\mu(R W + W R)` for small :math:`\mu`, so its least damped direction :math:`uu^T` is close to the
    top eigenvector (cosine 0.987 at N = 980, exact F at the instance's :math:`\mu`). The identity part gives a positive
    inner product with the PSD Perron eigenvector of the exact model; the generic part is invariant under no
    permutation of clients, so modes that differ within a class of exchangeable clients stay reachable. Measured at
    N = 980 (threshold search's first solve, decide-side stop): 50 matvecs instead of 159 (seed F), 78 instead of
    130 (exact F), same side of 1; the explicit residual certifies the result either way."""
    N, Nb = m.N, m.n_blocks
    _, U = np.linalg.eigh(m.R.mean(axis=0))
    u = U[:, 0]
    parts = [packing.pack(np.kron(np.ones((Nb, Nb)), np.outer(u, u))), packing.pack(np.eye(N)),
             generic_start(packing.size)]
    lift, eye, generic = (v / np.linalg.norm(v) for v in parts)
    return lift + CONSENSUS_START_MIX * (eye + generic)


def _structured_space(m, model: str) -> tuple[SymmetricPacking, int]:
    """The structured route's eigen-solves run on packed symmetric matrices (half the vector length).

    F maps symmetric matrices to symmetric ones. Exact model: completely positive, so rho(F) has a PSD
    eigenvector and rho(F) = rho(F on Sym) (Evans and Hoegh-Krohn). The seed's truncated F is not completely
    positive and no such theorem holds; what holds is that its covariance recursion never leaves Sym, so
    rho(F on Sym) is what decides its mean-square stability; it equalled the full rho(F) (dense eigenvalues) on
    every small instance tested, and Arnoldi on all of R^(N^2) from a symmetric start (as this route ran before)
    computes the same rho(F on Sym): its Krylov space stays in Sym.
    """
    packing = SymmetricPacking(m.N)
    return packing, packing.size


def fast_threshold_bracket(rho: Callable[[float], float], lambda_max: float, *, start: float, rtol: float = 1e-7,
                           mu_min: float | None = None, max_steps: int = 60, margin: float = STABILITY_MARGIN
                           ) -> ThresholdBracket:
    r"""Certified bracket :math:`\rho(lo) < 1 \le \rho(hi)` of a crossing of :math:`\rho(\mu) = 1`, searched from
    ``start``.

    From ``start`` the step is halved until :math:`\rho < 1` (down to ``mu_min``, default
    :math:`10^{-4}/\lambda_{\max}`; below it the bracket ``(0, mu_min)`` says no stable step was found) or grown
    by 1.5 until :math:`\rho \ge 1`; then Brent's method with ``xtol = rtol * hi``. Both ends of the result are
    evaluated points: Brent's last two points on either side of the root when they are within ``2 xtol``,
    else root :math:`\pm` ``xtol`` evaluated (bisection from the last certified bracket if a side fails). A step
    counts as stable only if
    :math:`\rho < 1 - ` ``margin`` (above the eigensolver's tolerance). Same semantics as
    :func:`theory.msd.stability.threshold_bracket`, which starts at ``mu_min`` instead.

    Raises
    ------
    ValueError
        If ``rtol`` is not in (0, 0.1), ``lambda_max`` is not positive, or no unstable step is found.
    """
    if not (0.0 < rtol < 0.1):
        raise ValueError(f"rtol must be in (0, 0.1), got {rtol!r}")
    if not (lambda_max > 0 and math.isfinite(lambda_max)):
        raise ValueError(f"lambda_max must be a finite real > 0, got {lambda_max!r}")
    mu_min = 1e-4 / lambda_max if mu_min is None else float(mu_min)
    cache: dict[float, float] = {}

    def f(mu: float) -> float:
        # rho within `margin` of 1 counts as not stable: Arnoldi's own tolerance cannot tell (e.g. singular R,
        # where rho(F) = 1 for every mu)
        if mu not in cache:
            cache[mu] = rho(mu)
        return cache[mu] - 1.0 + margin

    x = max(float(start), mu_min)
    if f(x) < 0:
        lo, hi = x, x * 1.5
        for _ in range(max_steps):
            if f(hi) >= 0:
                break
            lo, hi = hi, hi * 1.5
        else:
            raise ValueError(f"no unstable step size found up to mu = {hi!r}")
    else:
        hi, lo = x, x / 2
        for _ in range(max_steps):
            if lo < mu_min:
                lo = mu_min
                if f(lo) >= 0:
                    return ThresholdBracket(0.0, mu_min, 0.0, float("nan"), cache[mu_min], lambda_max)
                break
            if f(lo) < 0:
                break
            hi, lo = lo, lo / 2
    xtol = rtol * hi
    if hi - lo > 2 * xtol:
        root = optimize.brentq(f, lo, hi, xtol=0.9 * xtol, rtol=4 * np.finfo(float).eps)
        # Brent stops with evaluated points on both sides of the root within ~2 xtol: certified as they are
        below = max(s for s, r in cache.items() if r - 1.0 + margin < 0 and s < hi)
        above = min(s for s, r in cache.items() if r - 1.0 + margin >= 0 and s > below)
        a, b = max(lo, root - xtol), min(hi, root + xtol)
        if above - below <= 2 * xtol:
            lo, hi = below, above
        elif f(a) < 0 <= f(b):
            lo, hi = a, b
        else:
            while hi - lo > 2 * xtol:
                mid = 0.5 * (lo + hi)
                if f(mid) < 0:
                    lo = mid
                else:
                    hi = mid
    return ThresholdBracket(lo, hi, xtol, cache[lo], cache[hi], lambda_max)


def threshold_start(x, model: str) -> float:
    r"""Where the threshold search starts: Theorem 2's :math:`1/\lambda_{\max}` for the seed's F; for the exact F
    the Gaussian LMS estimate :math:`2/\max_k(\mathrm{tr}R_k + 2\lambda_{\max}(R_k))` (the fourth-moment term
    :math:`\mathrm{tr}(R_kX)R_k` makes :math:`\mathrm{tr}R_k` matter), capped at :math:`1/\lambda_{\max}`."""
    m = _moments(x)
    lam = m.lambda_max
    if model == "seed":
        return 1.0 / lam
    from theory.msd.instance import covariance_eigenvalues

    lam_k = covariance_eigenvalues(m.R)[:, -1]
    tr = np.einsum("kii->k", m.R)
    return float(min(1.0 / lam, 2.0 / np.max(tr + 2.0 * lam_k)))


def white_threshold_bracket(x, model: str, *, rtol: float = 1e-7, start: float | None = None,
                            tol: float = 1e-10, route: str = "white") -> ThresholdBracket:
    r"""Mean-square threshold for white R: bracket on the identity component, certified for all components.

    :math:`\rho(\mathcal F) = \max_c\rho(\mathcal F_c)`. The bracket :math:`[lo, hi]` of the identity component
    (the one that holds the noise) is certified for :math:`\mathcal F` if every other component has
    :math:`\rho_c(lo) < 1 - ` margin (then :math:`\rho(lo) < 1 \le \rho_{identity}(hi) \le \rho(hi)`);
    otherwise the search is redone on the maximum over all components. ``route="grouped"`` evaluates each
    component on its grouped reduction (:mod:`theory.msd.grouped`).
    """
    if route not in ("white", "grouped"):
        raise ValueError(f"route must be white or grouped, got {route!r}")
    m = _moments(x)
    comps = white_components(m, model)
    lam = m.lambda_max
    start = threshold_start(m, model) if start is None else start
    grouping = client_grouping(m) if route == "grouped" else None
    starts: dict = {}

    def component_rho(c):
        return _component_rho(m, model, route, c, starts, tol=tol, ncv=20, maxiter=ARNOLDI_MAXITER,
                              grouping=grouping)

    br = fast_threshold_bracket(component_rho(comps[0]), lam, start=start, rtol=rtol)
    if br.lo > 0:
        others = [component_rho(c)(br.lo) for c in comps[1:]]
        if all(r < 1.0 - STABILITY_MARGIN for r in others):
            return ThresholdBracket(br.lo, br.hi, br.tol, max([br.rho_lo, *others]), br.rho_hi, lam)
    return fast_threshold_bracket(warm_spectral_radius(m, model, route=route, tol=tol), lam, start=start, rtol=rtol)


def _white_mean_radius(m, mu: float, state: dict) -> float:
    """rho(M(mu)) for white R: M = (E_B Lambda E_A) (x) I_D, an N_b x N_b problem."""
    EA = expected_A(m, sparse=True)
    EB = expected_B(m, sparse=True)
    d = np.ones(m.n_blocks)
    d[1:m.K + 1] = 1.0 - mu * m.R[:, 0, 0]
    M = (EB @ EA.multiply(d[:, None])).tocsr()
    n = M.shape[0]
    if n <= 1500:
        return float(np.max(np.abs(np.linalg.eigvals(M.toarray()))))
    r, v = _eigs_top(M.dot, n, state.get("v"), tol=1e-12, ncv=20, maxiter=ARNOLDI_MAXITER,
                     what=f"rho(M) at mu = {mu!r}")
    state["v"] = v
    return r


def mean_threshold_fast(x, *, rtol: float = 1e-7) -> ThresholdBracket:
    r"""Mean-stability threshold bracket searched from Theorem 1's :math:`2/\lambda_{\max}`.

    White R: :math:`\mathcal M(\mu) = (E_B\Lambda_\mu E_A) \otimes I_D` (an :math:`N_b \times N_b` problem);
    otherwise :func:`theory.msd.stability.spectral_radius_M`.
    """

    from threadpoolctl import threadpool_limits

    m = _moments(x)
    state: dict = {}
    with threadpool_limits(1):
        return fast_threshold_bracket(lambda mu: mean_spectral_radius(m, mu, state), m.lambda_max,
                                      start=2.0 / m.lambda_max, rtol=rtol)


def mean_spectral_radius(x, mu: float | None = None, state: dict | None = None, *,
                         fallback_tol: float | None = None) -> float:
    r""":math:`\rho(\mathcal M(\mu))`: the :math:`N_b \times N_b` problem for white R, dense for :math:`N \le 300`,
    the class decomposition (:func:`theory.msd.classes.classes_mean_spectral_radius`) when clients form fewer classes
    than there are clients, else Arnoldi on the sparse :math:`\mathcal M` warm-started from ``state["v"]`` (updated).

    A cold Arnoldi start is :func:`theory.msd.krylov.generic_start`, never all ones: a start invariant under the
    permutations of exchangeable clients stays in their symmetric subspace and misses the modes that differ within a
    class (0.9687 instead of 0.9741 at the paper's federation in four Toeplitz groups, D = 6).

    Every path runs on one BLAS thread, as inside :func:`mean_threshold_fast`: a caller's thread pool (the CLI's
    parent process, a test, a notebook) does not change the arithmetic, so the same instance gives the same number
    whoever asks.

    ``fallback_tol``: for a value that is only shown, the class decomposition's Krylov-Schur may stop at this Ritz
    residual where its 1e-13 is out of reach (:func:`theory.msd.classes.classes_mean_spectral_radius`); then
    ``state["ritz_tol"]`` holds it."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return _mean_spectral_radius(x, mu, state, fallback_tol)


def _mean_spectral_radius(x, mu: float | None, state: dict | None, fallback_tol: float | None = None) -> float:
    from theory.msd.classes import class_grouping, classes_mean_spectral_radius
    from theory.msd.expectations import mean_operator
    from theory.msd.stability import spectral_radius_M

    m = _moments(x)
    mu = m.mu if mu is None else float(mu)
    state = {} if state is None else state
    if is_white(m):
        return _white_mean_radius(m, mu, state)
    if m.N <= 300:
        return spectral_radius_M(m, mu)
    if "grouping" not in state:
        try:
            state["grouping"] = class_grouping(m)
        except ValueError:  # staleness moments not exchangeable: no class decomposition
            state["grouping"] = None
    grouping = state["grouping"]
    if grouping is not None and grouping.C < m.K:
        return classes_mean_spectral_radius(m, mu, grouping=grouping, fallback_tol=fallback_tol, info=state)
    M = mean_operator(m, mu)
    v0 = state.get("v")
    r, v = _eigs_top(M.dot, M.shape[0], generic_start(M.shape[0]) if v0 is None else v0, tol=1e-13, ncv=20,
                     maxiter=ARNOLDI_MAXITER, what=f"rho(M) at mu = {mu!r}")
    state["v"] = v
    return r
