r"""Route selection and fast certified thresholds for the PAO-Fed mean-square analysis.

Four exact routes compute the same quantities (:math:`\rho(\mathcal F)`, the mean-square thresholds and
:math:`\mathrm{MSD}_\infty`):

* ``grouped`` (:mod:`theory.msd.grouped`): white R and classes of exchangeable clients (shared
  :math:`p_k, v_k, \sigma^2_{\eta,k}`); per-class self and cross blocks, no :math:`K` or :math:`D` factor;
* ``white`` (:mod:`theory.msd.white`): every :math:`R_k = v_kI`; a few :math:`N_b^2` problems, any :math:`D`;
* ``structured`` (:mod:`theory.msd.structured`): matrix-free (S2) on :math:`N^2` unknowns;
* ``naive`` (:mod:`theory.msd.naive`): the explicit :math:`\mathcal F` (:math:`N \le 100`), a direct LU solve,
  so it stays exact as :math:`\mu \to 0` where Krylov solves of (S2) stall (:math:`\rho(\mathcal F) = 1 -
  O(\mu)`, the MSD scales like :math:`\mu`).

:func:`choose_route` picks the cheapest that applies; :func:`mean_square_analysis` runs it with iteration caps
everywhere and falls back to ``naive`` (where it fits) when a Krylov solve does not converge, saying so.

Thresholds and warm-started spectral radii (:func:`fast_threshold_bracket`, :func:`warm_spectral_radius`, the mean
threshold) live in :mod:`theory.msd.thresholds` and are re-exported here.

For the exact model :math:`\mathcal F_{exact}(C) = E[P_eCP_e^T]` is completely positive, so the
(S2) solution :math:`C_\infty \succeq 0` with :math:`C_\infty - \mathcal F(C_\infty) = Q` is an additional
stability certificate (reported as ``psd_certificate``: the smallest relative diagonal shift that makes Cholesky of
:math:`C_\infty` succeed): with :math:`\Lambda \succeq 0` the left Perron eigenvector,
:math:`(1 - \rho)\langle\Lambda, C_\infty\rangle = \langle\Lambda, Q\rangle`, so :math:`\rho < 1` unless
:math:`\langle\Lambda, Q\rangle = 0`, which :math:`Q = \mu^2\mathcal B(E[\Phi])` (PSD, singular for
:math:`l_{\max} \ge 2`) does not exclude; a PD right side would (one more (S2) solve, not done). The seed's
truncated :math:`\mathcal F` is not a positive map (its middle factor :math:`X - \mu(RX + XR)` is not), so only
the Arnoldi bracket certifies it. :math:`\rho(\mathcal F)` at the instance's :math:`\mu` below the certified
threshold is reported to Ritz residual :data:`RADIUS_TOLS` [0] (1e-6, ``radius_residual``): its side of 1 is
decided with :math:`|\rho - 1| \ge` :data:`RADIUS_NEAR_ONE`, else by a second solve to 1e-10.

References
----------
.. [1] docs/papers/paofed.md (the exact F = E[P_e (x)_b P_e], (S2) and its cost, slow convergence at small mu).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from theory.msd.expectations import _moments
from theory.msd.grouped import (
    client_grouping,
    grouped_msd_steady_state,
    grouped_psd_margin,
    refined_grouping,
)
from theory.msd.krylov import arpack_eigs
from theory.msd.stability import ThresholdBracket
from theory.msd.structured import (
    ARNOLDI_MAXITER,
    KRYLOV_MAXITER,
    MEMORY_BUDGET,
    _check_model,
    f_matvec,
    msd_steady_state,
)
from theory.msd.thresholds import (
    STABILITY_MARGIN,
    _ritz_radius,
    _structured_space,
    consensus_start,
    fast_threshold_bracket,
    mean_spectral_radius,
    mean_threshold_fast,
    threshold_start,
    warm_spectral_radius,
    white_threshold_bracket,
)
from theory.msd.white import is_white, white_msd_steady_state

__all__ = [
    "ROUTES",
    "STABILITY_MARGIN",
    "MeanSquareAnalysis",
    "MEMORY_BUDGET",
    "choose_route",
    "route_peak_bytes",
    "consensus_start",
    "fast_threshold_bracket",
    "mean_spectral_radius",
    "mean_square_analysis",
    "mean_threshold_fast",
    "threshold_start",
    "warm_spectral_radius",
    "white_threshold_bracket",
]

#: Exact routes, cheapest first (``classes`` answers the MSD only).
ROUTES = ("grouped", "white", "classes", "structured", "naive")

#: Non-white R: up to this N (the issue-13 target N ~ 2,400) the structured route answers rho(F), the three
#: thresholds and the MSD in minutes; above it ``classes`` (MSD only) is chosen where client classes reduce (S2).
CLASSES_MIN_N = 2500



#: :data:`theory.msd.structured.MEMORY_BUDGET` (defined there, below this module, so that a direct structured solve
#: can refuse a basis beyond it too): :func:`choose_route` refuses a route whose estimated peak
#: (:func:`route_peak_bytes`) exceeds it.


def route_peak_bytes(x, route: str) -> float:
    r"""Estimated peak memory (bytes) of one model's analysis on ``route``: ``classes`` holds
    :data:`theory.msd.classes.PEAK_STATES` reduced states (3.6 GB at the paper's federation in four classes);
    ``structured`` a GMRES-DR basis of :data:`DEFLATED_RESTART` + 2 packed symmetric :math:`N \times N` states and
    about six more for the operator and rho(F); the other routes are small (the naive route is limited by
    :data:`theory.msd.naive.NAIVE_MAX_N`, white and grouped work on :math:`N_b^2` or per-class problems)."""
    m = _moments(x)
    if route == "classes":
        from theory.msd.classes import classes_peak_bytes

        return float(classes_peak_bytes(m))
    if route == "structured":
        return float((DEFLATED_RESTART + 8) * 8.0 * m.N * (m.N + 1) / 2.0)
    return 0.0


def _check_fits(m, route: str, budget: float | None) -> str:
    if budget is None:
        return route
    need = route_peak_bytes(m, route)
    if need <= budget:
        return route
    why = ""
    if route in ("classes", "structured") and not is_white(m):
        try:
            from theory.msd.classes import class_grouping

            C = class_grouping(m).C
            why = (f"; its K = {m.K} clients form {C} classes of equal (p, R, sigma2_eta)"
                   + (": per-client feature covariances do not reduce (S2), so group the clients that share R_k, lower "
                      "K, D or l_max, or ask for an uncertified estimate (fedcheck msd --method class-mean, "
                      "theory.msd.per_client.class_mean_msd_estimate; docs/msd.md#per-client)"
                      if C > m.K // 2 else ""))
        except ValueError:
            why = ""
    raise ValueError(f"the {route} route would need about {need / 1e9:.3g} GB for this instance (N = {m.N}), more "
                     f"than the {budget / 1e9:.3g} GB a model may use{why}")


def choose_route(x, method: str = "auto", *, memory_budget: float | None = MEMORY_BUDGET) -> str:
    r"""The cheapest exact route: ``grouped`` if every :math:`R_k = v_kI` and some class of exchangeable clients
    has three or more members (:mod:`theory.msd.grouped`), else ``white`` if every :math:`R_k = v_kI`; for
    non-white R ``classes`` (:mod:`theory.msd.classes`: the MSD of (S2) on per-class D x D blocks, no
    :math:`\rho(\mathcal F)` or thresholds) when :math:`N >` :data:`CLASSES_MIN_N` and classes of clients
    sharing :math:`(p_k, R_k, \sigma^2_{\eta,k})` make it smaller than (S2), else ``structured``.

    ``method`` forces ``naive``, ``structured`` or ``classes`` (``white`` and ``grouped`` only when R is white).
    A route whose estimated peak memory (:func:`route_peak_bytes`) exceeds ``memory_budget`` (default
    :data:`MEMORY_BUDGET`; None: no check) is refused at once instead of being started: a federation whose clients
    all have their own :math:`R_k` (K = 256, D = 200, l_max = 10: 256 classes, about 12 TB on the classes route) is
    told so in a second rather than exhausting the machine.

    Raises
    ------
    ValueError
        On an unknown ``method``, ``white`` for non-white R, ``naive`` above its size limit, or a route that does
        not fit in ``memory_budget`` (the message names the route, the estimate and the number of client classes).
    """
    from theory.msd.naive import NAIVE_MAX_N

    m = _moments(x)
    if method not in ("auto",) + ROUTES:
        raise ValueError(f"method must be one of auto, {', '.join(ROUTES)}, got {method!r}")
    if method == "naive" and m.N > NAIVE_MAX_N:
        raise ValueError(f"--method naive needs N = N_b D <= {NAIVE_MAX_N}, this instance has N = {m.N}")
    if method in ("white", "grouped") and not is_white(m):
        raise ValueError(f"--method {method} needs white features (every R_k a multiple of the identity)")
    if method == "classes" or (method == "auto" and not is_white(m) and m.N > CLASSES_MIN_N):
        from theory.msd.classes import class_grouping, class_unknowns

        try:
            g = class_grouping(m)
        except ValueError as exc:
            if method == "classes":
                raise ValueError(f"--method classes: {exc}") from exc
            return "structured"
        if method == "classes" or class_unknowns(m.l_max, g.C, m.D)[1] < m.N * m.N:
            return _check_fits(m, "classes", memory_budget)
    if method != "auto":
        return _check_fits(m, method, memory_budget)
    if not is_white(m):
        return _check_fits(m, "structured", memory_budget)
    try:
        grouping = client_grouping(m)
    except ValueError:  # classes whose staleness moments are not exchangeable: no grouped reduction
        return "white"
    return "grouped" if refined_grouping(grouping).C < m.K else "white"


#: Ritz residual tolerances of rho(F) at the instance's mu (structured route, below the certified threshold): 1e-6,
#: the precision the report needs (rho printed to 6 digits; the stability decision needs the side of 1, and the
#: radius is then >= RADIUS_NEAR_ONE from it). Measured eigenvalue errors against 1e-12 solves: 1.5e-7 (N = 250),
#: 6e-8 / 1.1e-7 (exact / seed, N = 980), i.e. 0.06-0.15 x the residual; the top of the spectrum at small mu is
#: clustered (gaps ~1e-4), so each further decade of residual costs ~50-100 Krylov-Schur steps (N = 980, exact:
#: 223 steps at 1e-6, 315 at 1e-7, 471 at 1e-9). Within RADIUS_NEAR_ONE of 1 a second, warm solve to 1e-10 follows,
#: where the 1e-9 stability margin decides. The residual reached is reported (MeanSquareAnalysis.radius_residual).
RADIUS_TOLS = (1e-6, 1e-10)
RADIUS_NEAR_ONE = 1e-4

#: Memory for the GMRES basis of a structured (S2) solve: restart + 1 vectors of N^2 doubles (restart 40 up to N =
#: 2200).
GMRES_BASIS_BYTES = 1.6e9


#: GMRES-DR(m, k) of the structured (S2) solve: m = 30 (measured at N = 980, exact F: 120 steps and then 103 matvecs
#: for rho(F) from its Krylov decomposition, against 120 + 102 at m = 40 and 118 + 106 at (40, 15), 2.9 + 1.8 CPU-s
#: against 3.4 + 2.0 at m = 40); k = theory.msd.structured.DEFLATED_VECTORS.
DEFLATED_RESTART = 30


def _gmres_restart(N: int) -> int:
    """GMRES restart length: 40 (measured at N = 980: 117 steps as with 60 or 120, 3.5 CPU-s against 4.5 and 7.6:
    the basis passes grow with the restart), fewer when the basis would exceed GMRES_BASIS_BYTES."""
    return int(max(10, min(40, GMRES_BASIS_BYTES // (8 * N * N) - 1)))


@dataclass
class MeanSquareAnalysis:
    """Result of :func:`mean_square_analysis` for one model (plain data for reports)."""

    model: str
    route: str
    spectral_radius: float
    threshold: ThresholdBracket
    msd: float | None = None
    residual: float | None = None
    solver: str | None = None
    psd_certificate: float | None = None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: Ritz residual ||F x - rho x|| / rho of the reported spectral radius when it comes from Krylov-Schur at mu
    #: below the threshold (:data:`RADIUS_TOLS`); None where rho was computed to 1e-10 or densely.
    radius_residual: float | None = None
    #: Classes route with ``certify_stability`` (exact model): the certificate of
    #: :func:`theory.msd.classes_stability.classes_stability_certificate` as plain data; ``stable`` is True / False
    #: when it decides (the solve's error bound ``perturbation`` < 1), else None with ``reason``.
    stability_certificate: dict | None = None


def _psd_margin(C: np.ndarray) -> float | None:
    r"""Smallest :math:`\epsilon` of :math:`\{10^{-14}, 10^{-12}, \dots, 10^{-6}\}` with
    :math:`(C + C^T)/2 + \epsilon\max_i|C_{ii}|I` positive definite (Cholesky), i.e.
    :math:`C \succeq -\epsilon\max|C_{ii}|I`;
    None if none is (C is then not PSD: no certificate)."""
    from scipy.linalg import cho_factor

    S = 0.5 * (C + C.T)
    scale = float(np.max(np.abs(np.diag(S))))
    if scale == 0.0:
        return None
    for eps in (1e-14, 1e-12, 1e-10, 1e-8, 1e-6):
        try:
            cho_factor(S + eps * scale * np.eye(S.shape[0]), check_finite=False)
            return eps
        except np.linalg.LinAlgError:
            continue
    return None


def _naive_msd(m, model: str, mu: float) -> float:
    from theory.msd.naive import msd_steady_state_naive

    return msd_steady_state_naive(m, model, mu, solver="sparse")


def _naive_rho(m, model: str, mu: float) -> float:
    from theory.msd.naive import f_matrix

    F = f_matrix(m, model, mu, dense=False)
    vals = arpack_eigs(F, k=1, which="LM", return_eigenvectors=False, tol=1e-13, maxiter=ARNOLDI_MAXITER)
    return float(abs(vals[0]))


def mean_square_analysis(x, model: str, *, route: str = "auto", threshold_rtol: float = 1e-7,
                         msd_rtol: float = 1e-12, progress: Callable[[str], None] | None = None,
                         certify_stability: bool = False, noise=None) -> MeanSquareAnalysis:
    r""":math:`\rho(\mathcal F)`, the certified mean-square threshold and :math:`\mathrm{MSD}_\infty` by one exact
    route (``noise``: per-class noise matrices of
    :func:`theory.msd.classes.classes_msd_steady_state`, on the ``classes`` route only).

    Every iterative solve is capped (:data:`KRYLOV_MAXITER` Krylov steps, :data:`ARNOLDI_MAXITER` Arnoldi
    restarts). When the structured (S2) solve or Arnoldi does not converge (e.g. :math:`\rho(\mathcal F) \to 1`
    as :math:`\mu \to 0`) the naive route answers if :math:`N \le 100`; otherwise ``ValueError`` says what did
    not converge. ``progress(message)`` receives one line per stage. ``certify_stability``: on the ``classes``
    route (which computes no :math:`\rho(\mathcal F)`), decide the exact model's stability by
    :func:`theory.msd.classes_stability.classes_stability_certificate` (one more solve of the MSD's size); other
    routes decide stability by :math:`\rho(\mathcal F)` either way.
    """
    from threadpoolctl import threadpool_limits

    # one BLAS thread: the work is matrix-free passes and Krylov bookkeeping on long vectors, which threaded BLAS
    # slows down (measured 17x slower at N = 250 on the shared 2-core machine)
    with threadpool_limits(1):
        return _mean_square_analysis(x, model, route=route, threshold_rtol=threshold_rtol, msd_rtol=msd_rtol,
                                     progress=progress, certify_stability=certify_stability, noise=noise)


def _mean_square_analysis(x, model, *, route, threshold_rtol, msd_rtol, progress, certify_stability=False,
                          noise=None):
    from theory.msd.naive import NAIVE_MAX_N

    m = _moments(x)
    _check_model(model)
    route = choose_route(m, route)
    if route == "classes":
        return _classes_analysis(m, model, msd_rtol=msd_rtol, progress=progress, certify=certify_stability,
                                 noise=noise)
    if noise is not None:
        raise ValueError(f"noise: per-class noise matrices are taken on the classes route only, not {route}")
    say = progress or (lambda _msg: None)
    t0 = time.perf_counter()
    notes: list[str] = []
    mu = m.mu
    lam = m.lambda_max
    start = threshold_start(m, model)
    if route == "naive":
        rho_fn = lambda s: _naive_rho(m, model, s)  # noqa: E731
    else:
        rho_fn = warm_spectral_radius(m, model, route=route)
    search_rho = warm_spectral_radius(m, model, route=route, decide=1e-3) if route == "structured" else rho_fn
    say(f"{model}: threshold search ({route} route)")
    if route in ("white", "grouped"):
        bracket = white_threshold_bracket(m, model, rtol=threshold_rtol, start=start, route=route)
    else:
        bracket = fast_threshold_bracket(search_rho, lam, start=start, rtol=threshold_rtol)
    say(f"{model}: mu* in [{bracket.lo:.6g}, {bracket.hi:.6g}]")

    def structured_solve():
        def cb(it, res):
            if it % 20 == 0:
                say(f"{model}: (S2) iteration {it}, residual estimate {res:.2e}")

        cb = cb if progress else None
        if route == "grouped":
            sol = grouped_msd_steady_state(m, model, mu=mu, rtol=msd_rtol, maxiter=KRYLOV_MAXITER, progress=cb)
            return sol.msd, sol.residual, f"grouped {sol.method} ({sol.unknowns} unknowns)", sol.state, None
        if route == "white":
            sol = white_msd_steady_state(m, model, mu=mu, rtol=msd_rtol, maxiter=KRYLOV_MAXITER, progress=cb)
            return sol.msd, sol.residual, f"white {sol.method}", sol.S, None
        sol = msd_steady_state(m, model, mu=mu, method="gmres-dr", rtol=msd_rtol, maxiter=KRYLOV_MAXITER,
                               restart=min(DEFLATED_RESTART, _gmres_restart(m.N)), progress=cb)
        return sol.msd, sol.residual, f"structured {sol.method}", sol.C, sol.krylov

    out = MeanSquareAnalysis(model=model, route=route, spectral_radius=math.nan, threshold=bracket, notes=notes)

    def solve_into(out):
        if route == "naive":
            out.msd, out.residual, out.solver = _naive_msd(m, model, mu), None, "naive sparse LU"
            return None
        try:
            out.msd, out.residual, out.solver, C, basis = structured_solve()
        except ValueError as exc:
            if m.N <= NAIVE_MAX_N:
                notes.append(f"{exc}; naive route (direct LU of the explicit F) used instead")
                out.msd, out.residual, out.solver = _naive_msd(m, model, mu), None, "naive sparse LU (fallback)"
                return None
            raise ValueError(f"{model} model: {exc}; the naive route does not fit (N = {m.N} > {NAIVE_MAX_N})") from exc
        if model == "exact":
            out.psd_certificate = (grouped_psd_margin(m, C, client_grouping(m)) if route == "grouped"
                                   else _psd_margin(C))
        return C, basis

    def radius(warm):
        try:
            if warm is not None and route == "structured":
                packing, n = _structured_space(m, model)
                C, basis = warm
                v = packing.pack(C) if basis is None else None
                for tol in RADIUS_TOLS:
                    r, v, out.radius_residual = _ritz_radius(f_matvec(m, model, mu, packing=packing), n, v, tol=tol,
                                                             what=f"rho(F_{model}) at mu = {mu!r}", basis=basis)
                    basis = None  # a second, tighter solve starts from the first's Ritz vector
                    if abs(r - 1.0) > RADIUS_NEAR_ONE:
                        break
                return r
            return rho_fn(mu)
        except ValueError as exc:
            if route != "naive" and m.N <= NAIVE_MAX_N:
                notes.append(f"{exc}; naive route used for rho(F)")
                return _naive_rho(m, model, mu)
            raise

    if bracket.lo > 0 and mu <= bracket.lo:
        # below the bracket: solve first (its Krylov space holds the slowest modes: rho(F) continues from it)
        say(f"{model}: steady state (S2)")
        warm = solve_into(out)
        say(f"{model}: rho(F) at mu = {mu:.6g} (Krylov-Schur continued from the steady-state solve)")
        out.spectral_radius = float(radius(warm))
        say(f"{model}: rho(F) = {out.spectral_radius:.10g}")
        if not out.spectral_radius < 1.0 - STABILITY_MARGIN:
            out.msd = out.residual = out.solver = out.psd_certificate = None
    else:
        out.spectral_radius = float(radius(None))
        if out.spectral_radius < 1.0 - STABILITY_MARGIN:
            say(f"{model}: steady state (S2), rho(F) = {out.spectral_radius:.6g}")
            solve_into(out)
    out.seconds = time.perf_counter() - t0
    return out


def _classes_analysis(m, model: str, *, msd_rtol: float, progress, certify: bool = False,
                      noise=None) -> MeanSquareAnalysis:
    """The ``classes`` route: MSD_inf with its residual; rho(F) and the thresholds NaN (said in ``notes``); with
    ``certify`` the exact model's stability certificate (:func:`_classes_certificate`)."""
    from theory.msd.classes import classes_msd_steady_state

    say = progress or (lambda _msg: None)
    t0 = time.perf_counter()
    say(f"{model}: steady state (S2) on the client classes")
    cb = (lambda it, res: say(f"{model}: (S2) iteration {it}, residual estimate {res:.2e}")) if progress else None
    sol = classes_msd_steady_state(m, model, rtol=msd_rtol, maxiter=KRYLOV_MAXITER, progress=cb, noise=noise)
    nan = math.nan
    notes = ["classes route: rho(F) and the thresholds are not computed (the MSD alone, by (S2) on the client "
             "classes, certified by its residual); it assumes mu mean-square stable (--method structured decides "
             "that where N allows)"]
    certificate = None
    if certify and model == "exact":
        say("exact: stability certificate S - F(S) = I on the client classes")
        certificate = _classes_certificate(m, progress)
        if certificate["stable"] is True:
            notes.append("exact model: mu is mean-square stable (certificate: S - F(S) = I has a positive definite "
                         "solution)")
        if certificate["stable"] is False:
            notes.append("mu is not mean-square stable (certificate: S - F(S) = I has no positive definite solution); "
                         "the (S2) solution is not a steady state")
    elif certify:
        notes.append("--certify-stability: the seed's truncated F is not completely positive, so the classes route has "
                     "no stability certificate for it (--method structured decides it where N allows)")
    stable_no = certificate is not None and certificate["stable"] is False
    return MeanSquareAnalysis(model=model, route="classes", spectral_radius=nan,
                              threshold=ThresholdBracket(lo=nan, hi=nan, tol=nan, rho_lo=nan, rho_hi=nan,
                                                         lambda_max=m.lambda_max),
                              msd=None if stable_no else sol.msd, residual=None if stable_no else sol.residual,
                              solver=None if stable_no else f"classes {sol.method} ({sol.unknowns} unknowns)",
                              notes=notes, seconds=time.perf_counter() - t0, stability_certificate=certificate)


def _classes_certificate(m, progress) -> dict:
    """The exact model's stability on the classes route as plain data: ``stable`` True (S positive definite) or False
    (not) when the solve's full-space error bound is below 1, else None with ``reason``; a solve that does not converge
    gives None with its message."""
    from theory.msd.classes_stability import classes_stability_certificate

    say = progress or (lambda _msg: None)
    cb = (lambda it, res: say(f"exact: certificate iteration {it}, residual estimate {res:.2e}")) if progress else None
    try:
        c = classes_stability_certificate(m, maxiter=KRYLOV_MAXITER, progress=cb)
    except ValueError as exc:
        return {"stable": None, "reason": str(exc)}
    out = {"stable": c.stable if c.perturbation < 1.0 else None, "lambda_min_symmetric": c.lambda_min_symmetric,
           "lambda_min_difference": c.lambda_min_difference if math.isfinite(c.lambda_min_difference) else None,
           "residual": c.residual, "perturbation": c.perturbation, "iterations": c.iterations,
           "method": "S - F(S) = I solved on the client classes; stable iff S is positive definite"}
    if out["stable"] is None:
        out["reason"] = f"the solve's error bound {c.perturbation:.3g} is not below 1: S's sign is not decided"
    return out
