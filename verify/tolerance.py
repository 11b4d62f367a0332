r"""The one tolerance policy of fedcheck.

* Deterministic arithmetic: multiples of machine epsilon, from the standard forward-error
  bound :math:`\gamma_n = n u / (1 - n u)` (Higham, *Accuracy and Stability of Numerical
  Algorithms*, 2nd ed., Lemma 3.1), :math:`u = \varepsilon/2`.
* Iterative solvers and quadrature: the tolerance handed to the solver, plus its own error
  estimate where it returns one.
* Monte Carlo: a one-sided confidence limit at failure probability ``alpha``, split across the
  checks of a run with :func:`bonferroni`.

A bound is checked one-sided (the upper confidence limit of the measured quantity against the
bound); an identity between two independent evaluations is checked against the sum of their
error bounds.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from theory._rounding import EPS, UNIT_ROUNDOFF, gamma  # one definition, shared with theory/ and reference_impl/

__all__ = [
    "ARNOLDI_TOL",
    "CHI2_ALPHA",
    "CLARABEL_TOL",
    "CONVERSION_RTOL",
    "EPS",
    "FACTOR_BAND",
    "FIXED_POINT_RTOL",
    "GMRES_RTOL",
    "MC_ALPHA",
    "MSD_AGREEMENT_RTOL",
    "NOISE_DOMINANCE_GAP",
    "QUAD_EPSREL",
    "RATE_BAND",
    "RDP_GRID_RTOL",
    "RECORDED_ALPHA",
    "SPECTRAL_RADIUS_RTOL",
    "TARGET_RTOL",
    "THRESHOLD_RTOL",
    "UNIT_ROUNDOFF",
    "bonferroni",
    "gamma",
    "mean_upper_confidence_limit",
    "relative_gap",
]

#: Relative tolerance requested from adaptive quadrature (scipy.integrate.quad). Integrands built
#: from differences of large log densities carry ~1e-12 relative noise, so 1e-12 is not reachable.
QUAD_EPSREL = 1e-10

# --- Monte Carlo: failure probabilities (split with bonferroni over the comparisons of one check) ---------------

#: Bounds and identities checked by simulation (theorems, privacy profiles, simulation vs theory).
MC_ALPHA = 1e-3
#: Figure-level experiment statements and descriptive sweeps: a wrong decision mislabels a qualitative
#: observation, not a bound, so the usual 5 % family-wise level is used.
RECORDED_ALPHA = 0.05
#: Two-sided chi-square test that the noise injected by the running algorithm has the calibrated variance
#: (millions of draws: a very small alpha keeps the false-alarm rate negligible at full power).
CHI2_ALPHA = 1e-6

# --- Deterministic arithmetic -------------------------------------------------------------------------------

#: Privacy-conversion comparisons (zCDP -> (epsilon, delta), exact Gaussian profile, their inverses): the exact
#: profile is accurate to a few ulps times a condition number <= 1e3 plus u |log delta| (<= 745 u), which
#: dominates the converters' root-finder tolerance (4 EPS, then moved to the conservative side) and the rounding
#: of the closed forms; gamma(40_000) ~ 4.4e-12 covers it about 4-8 times.
CONVERSION_RTOL = gamma(40_000)

# --- Iterative solvers: the tolerance handed to the solver, and what follows from it ----------------------------

#: Tolerance handed to Clarabel through CVXPY (gap, feasibility, KKT ratio).
CLARABEL_TOL = 1e-10
#: Relative residual handed to the structured PAO-Fed (S2) solvers (GMRES).
GMRES_RTOL = 1e-13
#: Agreement of MSD values from the naive and structured routes: GMRES_RTOL times 1e3 for the condition number of
#: I - F (about 1/(1 - rho(F)) <= 1e2 on the sampled instances, times a non-normality margin) -> 1e-10 (spec
#: paofed.md 4.3 item 8).
MSD_AGREEMENT_RTOL = GMRES_RTOL * 1e3
#: Relative tolerance handed to ARPACK (scipy.sparse.linalg.eigs) for rho(F).
ARNOLDI_TOL = 1e-12
#: Agreement of rho(F) between routes: ARNOLDI_TOL times 1e4 for non-normal eigenvalue conditioning.
SPECTRAL_RADIUS_RTOL = ARNOLDI_TOL * 1e4
#: Relative half-width of the bisection brackets of stability thresholds (mu at rho(.) = 1).
THRESHOLD_RTOL = 1e-7
#: The dp-accounting RDP accountant's excess over continuous CKS: its order grid is finite (measured <= 4.1e-3
#: relative up to rho = 56; tests/theory/test_conversions.py).
RDP_GRID_RTOL = 1e-2
#: PGFL Theorem I (docs/papers/pgfl.md#theorem-1): with S = 1 the iteration must reach the centralised optimum (Pa) to
#: this relative accuracy (docs/papers/pgfl.md asks 1e-8; the iterations run to 1e-14).
TARGET_RTOL = 1e-10
#: PGFL Theorem I (R1.3, docs/papers/pgfl.md#theorem-1): the final iterate lies this close (relative) to the solved
#: fixed point (Pc).
FIXED_POINT_RTOL = 1e-9
#: PGFL Theorem I (R1.2, docs/papers/pgfl.md#theorem-1): the fitted linear rate lies in [r(T) - RATE_BAND[0], r(T) +
#: RATE_BAND[1]] (the fit on a finite window of the error sequence sees the transient of the non-dominant modes, hence
#: the wider low side).
RATE_BAND = (0.05, 0.01)
#: PGFL Theorem I with privacy noise (R1.4, docs/papers/pgfl.md#theorem-1): |fitted mean-square factor - max(r(T)^2,
#: zeta)| allowed.
FACTOR_BAND = 0.01
#: R1.4 (docs/papers/pgfl.md#theorem-1): gap between zeta and r(T)^2 above which the noise dominates the mean-square
#: factor.
NOISE_DOMINANCE_GAP = 0.05


def relative_gap(a, b):
    r"""Elementwise :math:`|a - b| / \max(|a|, |b|)`, with 0 where both are 0."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    scale = np.maximum(np.abs(a), np.abs(b))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(scale > 0, np.abs(a - b) / np.where(scale > 0, scale, 1.0), 0.0)


def bonferroni(alpha: float, n_checks: int) -> float:
    """Per-check failure probability so that ``n_checks`` checks fail jointly with probability <= alpha."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if isinstance(n_checks, bool) or not isinstance(n_checks, int) or n_checks < 1:
        raise ValueError(f"n_checks must be an integer >= 1, got {n_checks!r}")
    return alpha / n_checks


def mean_upper_confidence_limit(samples, alpha: float) -> float:
    r"""One-sided upper confidence limit of a mean from i.i.d. samples (Student t).

    .. math:: \bar x + t_{1-\alpha,\,n-1}\, s/\sqrt n

    Errs toward a larger value. Asymptotic (CLT) for non-normal samples, so use it with
    ``n`` in the hundreds at least; the run records ``n`` and ``alpha``.
    """
    x = np.asarray(samples, dtype=np.float64).ravel()
    if x.size < 2:
        raise ValueError(f"samples must hold at least 2 values, got {x.size}")
    if not np.all(np.isfinite(x)):
        raise ValueError("samples must be finite")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    t = stats.t.ppf(1.0 - alpha, df=x.size - 1)
    return float(x.mean() + t * x.std(ddof=1) / math.sqrt(x.size))

# --- zCDP-NFL network form and convergence checks (verify/zcdp_nfl) -------------------------------------------
__all__ += ["NFL_NETWORK_RTOL", "NFL_CONVERGED_NE", "NFL_FROZEN_FRACTION"]


def NFL_NETWORK_RTOL(K: int, T: int) -> float:
    """Relative residual allowed for the identities of P2 4.1 on a run of T rounds with K agents: the forward-error
    bound gamma of the K-term products and the (T+1)-term sum r^(n), over the eight terms of an identity, twice
    (the algorithm's rounding and the matrix form's): gamma(4 (K + T + 8))."""
    return gamma(4 * (K + T + 8))


#: Normalised error NE (sum over K agents, relative to ||w_c||^2) below which a noise-free run counts as having
#: reached the CVXPY optimum: well above the solver's certified accuracy (CLARABEL_TOL, KKT residuals ~1e-14)
#: and far below the NE(0) = K start.
NFL_CONVERGED_NE = 1e-6
#: A run is 'frozen' (no convergence) when the distance still to travel exceeds this fraction of the starting
#: distance after the remaining motion (extrapolated from the summable steps) has been subtracted.
NFL_FROZEN_FRACTION = 0.5

# --- FedPDM-DP (seed 001): reference algorithm vs CVXPY, Theorem 3 -----------------------------------------
#: Noiseless FedPDM vs the CVXPY optimum (docs/papers/fedpdm.md#instance-cvx): F(x_0^T) - F* allowed; Clarabel certifies
#: its optimum to a gap of CLARABEL_TOL, the polishing below moves F by at most gamma * d * FEDPDM_POLISH_ZERO-scale
#: entries it zeroes (measured entries ~1e-11), so 1e-8 leaves a factor >= 100 for
#: both (docs/papers/fedpdm.md#instance-cvx suggests 1e-6).
FEDPDM_F_GAP_TOL = 1e-8
#: Entries of the CVXPY solution with |x_k| below this are set to exact zeros before subgradient
#: residuals (docs/papers/fedpdm.md#instance-cvx).
FEDPDM_POLISH_ZERO = 1e-6
#: P (21) at the polished CVXPY point of a convex instance must be at most this (docs/papers/fedpdm.md#instance-cvx).
FEDPDM_P_STAR_TOL = 1e-10

__all__ += ["FEDPDM_F_GAP_TOL", "FEDPDM_POLISH_ZERO", "FEDPDM_P_STAR_TOL"]

# --- GTV clustered FL (seed 002; verify/gtv) ----------------------------------------------------------------------
#: Relative fixed-point residual handed to Algorithm 1 (docs/papers/gtv.md#review-r4 stopping rule): far below the CVXPY
#: accuracy it is compared with (CLARABEL_TOL, or Clarabel's 1e-8 default where it stalls on second-order cones).
GTV_ALG1_TOL = 1e-10
#: Domain test of the gap (34) (erratum E15, docs/papers/gtv.md#erratum-e15): relative component of -s^(i) outside
#: range(X_i^T). Converged iterates sit at <= 7e-13, non-converged ones at 0.26-0.48 (docs/papers/gtv.md#review-notes),
#: so 1e-8 separates them by four decades either way.
GTV_RANGE_RTOL = 1e-8
#: Strict inequality of (35): slack must exceed this times (internal weight + total
#: demand) (docs/papers/gtv.md#derived-d4).
GTV_WELL_CONNECTED_RTOL = 1e-9
#: Intra-cluster spread of a converged Algorithm 1 solution counted as "constant" (docs/papers/gtv.md#instances,
#: docs/papers/gtv.md#theorem-2: 1e-8 for Alg. 1).
GTV_SPREAD_ATOL = 1e-8
#: An edge is unsaturated when ||u_e||_* <= (1 - margin) lam A_e (docs/papers/gtv.md#instances,
#: docs/papers/gtv.md#convergence).
GTV_SATURATION_MARGIN = 1e-6

__all__ += ["GTV_ALG1_TOL", "GTV_RANGE_RTOL", "GTV_SATURATION_MARGIN", "GTV_SPREAD_ATOL", "GTV_WELL_CONNECTED_RTOL"]

# --- NPFL-RL (seed 004 ch. 6 / P7; verify/npfl_rl) -------------------------------------------------------------
#: CVXPY/Clarabel (CLARABEL_TOL) argmin of a ridge subproblem vs a closed form or the normal equations, relative l2:
#: a gap tolerance of 1e-10 on an O(1) strongly convex QP with condition number <= 1e4 bounds the error well below
#: this (measured <= 1e-8); 1e-6 is 10x stricter than docs/papers/npfl_rl.md#k1's 1e-5.
NPFL_CVXPY_RTOL = 1e-6
#: K2-K4 (docs/papers/npfl_rl.md#k2 to #k4): relative squared distance to the ground truth after N = 2000
#: iterations (docs/papers/npfl_rl.md's threshold; worst measured 1.2e-7 over 100
#: I0 (docs/papers/npfl_rl.md#instance-i0) seeds in docs/papers/npfl_rl.md#review-notes, median 4e-21).
NPFL_CONVERGED_RTOL = 1e-6
#: K5 (docs/papers/npfl_rl.md#k5): complex-step derivative vs the analytic dV/da, relative (no cancellation in the
#: complex step; what remains is the conditioning of two eigen-solves, measured <=
#: 1e-11; docs/papers/npfl_rl.md#review-notes: tolerance 1e-9).
NPFL_DERIVATIVE_RTOL = 1e-9
#: K6 (docs/papers/npfl_rl.md#k6), K8 (docs/papers/npfl_rl.md#k8): rounding slack relative to the compared values V_v or
#: S(tau) (docs/papers/npfl_rl.md#k8: 1e-9 relative).
NPFL_ROUNDING_RTOL = 1e-9
#: K9 (docs/papers/npfl_rl.md#k9): closed-form eta vs the generator's max pairwise distance (a handful of
#: flops; docs/papers/npfl_rl.md#k9: 1e-12 relative).
NPFL_ETA_RTOL = 1e-12

__all__ += ["NPFL_CONVERGED_RTOL", "NPFL_CVXPY_RTOL", "NPFL_DERIVATIVE_RTOL", "NPFL_ETA_RTOL", "NPFL_ROUNDING_RTOL"]


# --- zCDP-NFL empirical rate (verify/zcdp_nfl/empirical_rate.py) ---
#: docs/papers/zcdp_nfl.md#theorem-4's reading of "consistent with O(1/T)": fitted slope of log E[F(w_bar^(T)) - F*] on
#: log T at most -1 + 0.1.
NFL_RATE_SLACK = 0.1
__all__ += ["NFL_RATE_SLACK"]
