r"""FedPDM-DP Remark 2 (lines 233-239) and E27: the choice (23) and what it means for privacy.

Remark 2 sets :math:`T = 4(\mathcal L^0 - \underline f)C_0/\zeta`, :math:`\nu = \zeta/(4C_1)`,
:math:`\phi^2 = \zeta/(4C_2)`, :math:`\sigma^2 = \zeta/(4C_3)` (23) so that each term of (22) is :math:`\zeta/4`, hence
:math:`T = O(1/\zeta)`, and line 239 contrasts this with the :math:`O(1/\zeta^2)` of "most state-of-the-art FL
algorithms". Two claims, on the reconstructed constants of spec 3.11 (:func:`verify.fedpdm.theorem3_constants.
theorem3_constants`, conservative reading):

* ``fedpdm.remark2`` (confirmed): the arithmetic -- with :math:`T` rounded up, :math:`A_0 \le \zeta/4` and
  :math:`A_1 = A_2 = A_3 = \zeta/4` within rounding, and :math:`T \le 4(\mathcal L^0 - \underline f)C_0/\zeta + 1`.
* ``fedpdm.remark2_private`` (refuted, spec E27): the rate as one of the *private* algorithm at the paper's budget
  :math:`(\bar\varepsilon, \delta) = (7, 10^{-5})`. (23) fixes the noise by :math:`\zeta`, not by the budget: the
  round-0 release of a legal one-record client (every client uploads at round 0, :math:`S_0 = [N]`), whose two
  uploads differ by exactly :math:`s` of (19) (simulated with the update equations), is already a Gaussian
  mechanism with :math:`\mu = s/\sigma` far above what :math:`(7, 10^{-5})` allows. The exact
  :math:`\delta_G(7; \mu)` of that single release is a lower bound on the whole run's (post-processing), so the
  refutation does not lean on any accountant's slack.
"""

from __future__ import annotations

import math

import numpy as np

from theory.fedpdm.convergence import theorem3_constants
from theory.privacy.conversions import gaussian_delta_exact, zcdp_to_approx_dp_exact_gaussian
from theory.privacy.subsampled import rdp_poisson_subsampled_gaussian, rdp_to_approx_dp
from verify.evidence import report_counterexample, result_from_evidence, sample_evidence
from verify.fedpdm import cite
from verify.fedpdm.upload_simulation import evaluate_upload_sensitivity
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, Series, Verdict
from verify.sampling import sampler
from verify.tolerance import gamma

__all__ = ["CLAIMS", "PAPER_POINT", "check_remark2", "check_remark2_private", "evaluate_remark2_private",
           "evaluate_remark2_terms", "remark2_choice", "remark2_space", "reproduce_remark2_private"]

#: Fig. 2's budget (line 278) and delta (line 263).
EPSILON_BAR, DELTA = 7.0, 1e-5
#: The paper's set-up (spec 5.2): rho = 10, N = 100, K = 5, Q = 5, eta rho = 1 (the E25 fix at t = 0), G = 28.6
#: (certified for MNIST pixels, E32), L = 1 (inside 1/2 < L < rho/4), L^0 - f = ln 2 (F(0) with f >= 0), zeta = 0.1.
PAPER_POINT = {"rho": 10.0, "L": 1.0, "N": 100, "K": 5, "Q": 5, "eta_rho": 1.0, "G": 28.6, "gap": math.log(2.0),
               "zeta": 0.1, "seed": 0}


@sampler
def remark2_space(draw) -> dict:
    """rho in [3, 20], L uniform in (1/2, rho/4) (the corrected condition), N in [5, 200], K in [1, min(N, 20)],
    Q in [1, 10], eta rho in [0.05, 1] (same-sign local coefficients), G log-uniform in [0.1, 30], the initial gap
    log-uniform in [0.1, 10], zeta log-uniform in [1e-6, 1]."""
    rho = draw.uniform(3.0, 20.0)
    N = draw.integers(5, 200)
    return {"rho": rho, "L": draw.uniform(0.51, 0.99 * rho / 4.0), "N": N, "K": draw.integers(1, min(N, 20)),
            "Q": draw.integers(1, 10), "eta_rho": draw.uniform(0.05, 1.0), "G": draw.log10_uniform(-1.0, math.log10(30.0)),
            "gap": draw.log10_uniform(-1.0, 1.0), "zeta": draw.log10_uniform(-6.0, 0.0), "seed": draw.seed()}


def remark2_choice(p) -> dict:
    r"""Remark 2's (23) with T rounded up: ``T`` :math:`= \lceil 4(\mathcal L^0 - \underline f)C_0/\zeta\rceil`,
    ``nu`` :math:`= \zeta/(4C_1)`, ``phi2`` :math:`= \zeta/(4C_2)`, ``sigma2`` :math:`= \zeta/(4C_3)`, and the constants
    (``params``: ``rho, L, N, K, gap, zeta``; seed 001 lines 233-239, spec 3.8)."""
    c = theorem3_constants(float(p["L"]), float(p["rho"]), int(p["N"]), int(p["K"]))
    zeta = float(p["zeta"])
    T = math.ceil(4.0 * float(p["gap"]) * c["C0"] / zeta)
    return {**c, "T": T, "nu": zeta / (4.0 * c["C1"]), "phi2": zeta / (4.0 * c["C2"]), "sigma2": zeta / (4.0 * c["C3"])}


def evaluate_remark2_terms(params) -> Evidence:
    r"""The four terms of (22) under (23): ``measured`` = largest :math:`A_k/(\zeta/4)` (holds when <= 1 within
    :math:`\gamma_8`, :math:`A_1..A_3` at least :math:`1 - \gamma_8` of it, and T within one round of
    :math:`4(\mathcal L^0 - \underline f)C_0/\zeta`)."""
    p = dict(params)
    ch = remark2_choice(p)
    quarter = float(p["zeta"]) / 4.0
    terms = {"A0": float(p["gap"]) * ch["C0"] / ch["T"], "A1": ch["C1"] * ch["nu"], "A2": ch["C2"] * ch["phi2"],
             "A3": ch["C3"] * ch["sigma2"]}
    ratios = {k: v / quarter for k, v in terms.items()}
    tol = gamma(8)
    exact_T = 4.0 * float(p["gap"]) * ch["C0"] / float(p["zeta"])
    holds = (max(ratios.values()) <= 1.0 + tol and min(ratios[k] for k in ("A1", "A2", "A3")) >= 1.0 - tol
             and ch["T"] <= exact_T + 1.0)
    return Evidence(measured=max(ratios.values()), bound=1.0, holds=bool(holds),
                    parameters={**p, "T": ch["T"], "T_times_zeta": ch["T"] * float(p["zeta"]), **ratios})


def evaluate_remark2_private(params) -> Evidence:
    r"""The round-0 release of a legal one-record client under (23)'s :math:`\sigma`: exact :math:`\delta_G(7; \mu)` / δ.

    The client (one record, linear loss :math:`\xi^\top x`, :math:`\lVert\xi\rVert = G`) against its neighbour
    :math:`-\xi`: the uploads of round 0 differ by :math:`\lVert\Delta y\rVert` (simulated, = :math:`s` of (19) for
    :math:`\eta\rho \le 1`), each coordinate with noise std :math:`\sigma = \sqrt{\zeta/(4C_3)}`.
    ``measured`` = :math:`\delta_G(\bar\varepsilon; \lVert\Delta y\rVert/\sigma)/\delta`; holds iff <= 1.
    """
    p = dict(params)
    ch = remark2_choice(p)
    rho = float(p["rho"])
    sim = evaluate_upload_sensitivity({"etas": [float(p["eta_rho"]) / rho], "Qs": [int(p["Q"])], "rho": rho,
                                       "G": float(p["G"]), "d": 2, "local_start": "warm",
                                       "construction": "linear_loss", "seed": int(p["seed"])})
    delta_y = sim.parameters["norm_delta_y"]
    sigma = math.sqrt(ch["sigma2"])
    mu = delta_y / sigma
    exact = float(gaussian_delta_exact(EPSILON_BAR, mu))
    return Evidence(measured=exact / DELTA, bound=1.0, holds=bool(exact <= DELTA),
                    parameters={**p, "T": ch["T"], "sigma": sigma, "norm_delta_y": delta_y,
                                "s_eq19": sim.parameters["s_eq19"], "mu": mu, "delta_exact_round0": exact,
                                "epsilon_exact_round0": float(zcdp_to_approx_dp_exact_gaussian(mu * mu / 2.0, DELTA))})


def reproduce_remark2_private(counterexample) -> Evidence:
    """Re-evaluate a recorded point (the keys of :data:`PAPER_POINT`)."""
    return evaluate_remark2_private({k: counterexample[k] for k in PAPER_POINT})


def _batch(rng: np.random.Generator, count: int, evaluate) -> list[Evidence]:
    return [evaluate(remark2_space.sample(rng)) for _ in range(count)]


_COUNT = {"ci": (2, 10), "thorough": (8, 50)}
#: Participation probability K/N and data fraction q = Q b/|D_i| of the paper (spec 5.2) for the accountant's curve.
_P, _Q_FRACTION = 0.05, 0.25
_ORDERS = tuple(range(2, 257))


def _privacy_figure() -> FigureSpec:
    """Lower bound (exact epsilon of the round-0 release) and upper bound (RDP, whole run) vs zeta, paper's point."""
    zetas = np.geomspace(1e-6, 1.0, 13)
    lower, upper = [], []
    for zeta in zetas:
        e = evaluate_remark2_private({**PAPER_POINT, "zeta": float(zeta)})
        lower.append(e.parameters["epsilon_exact_round0"])
        z = e.parameters["sigma"] / e.parameters["s_eq19"]
        n = 1.0 + _P * (e.parameters["T"] - 1)
        upper.append(rdp_to_approx_dp(n * rdp_poisson_subsampled_gaussian(_Q_FRACTION, z, _ORDERS), _ORDERS, DELTA)[0])
    series = (Series(label="exact epsilon of the round-0 release alone (lower bound)", x=zetas, y=lower),
              Series(label="RDP-accounted total over T(zeta) rounds (upper bound; p = 0.05, q = 0.25)", x=zetas,
                     y=upper, style="points"),
              Series(label="the paper's budget epsbar = 7", x=(zetas[0], zetas[-1]), y=(EPSILON_BAR, EPSILON_BAR),
                     style="dashed"))
    return FigureSpec(name="remark2_privacy_vs_zeta", title="FedPDM-DP Remark 2: privacy of the (23) noise vs zeta "
                      "(rho = 10, G = 28.6, delta = 1e-5)", xlabel="zeta (target of (22))",
                      ylabel="epsilon at delta = 1e-5", series=series, xscale="log", yscale="log")


def check_remark2(ctx: CheckContext) -> CheckResult:
    """The paper's point and random points of :func:`remark2_space`."""
    batches, per = _COUNT[ctx.profile]
    evidence = [evaluate_remark2_terms(PAPER_POINT)]
    evidence += sample_evidence(ctx, "fedpdm.remark2", _batch, batches, (per, evaluate_remark2_terms))
    return result_from_evidence("fedpdm.remark2", evidence, ctx=ctx, quantity="max_k A_k / (zeta/4) under (23)",
                                what="with (23) each term of (22) is zeta/4 and T = O(1/zeta)",
                                details={"T_times_zeta_paper_point": evidence[0].parameters["T_times_zeta"]})


def check_remark2_private(ctx: CheckContext) -> CheckResult:
    """The paper's point (zeta = 0.1) and random points: the exact delta of one release vs the budget's delta."""
    batches, per = _COUNT[ctx.profile]
    chosen = evaluate_remark2_private(PAPER_POINT)
    evidence = [chosen, *sample_evidence(ctx, "fedpdm.remark2_private", _batch, batches,
                                         (per, evaluate_remark2_private))]
    result = result_from_evidence(
        "fedpdm.remark2_private", evidence, ctx=ctx, figures=[_privacy_figure()],
        quantity="exact delta at epsbar = 7 of the round-0 release under sigma^2 = zeta/(4 C_3), / 1e-5",
        what="(23)'s sigma keeps FedPDM-DP (7, 1e-5)-DP while reaching zeta in O(1/zeta) rounds",
        details={"paper_point": {k: chosen.parameters[k] for k in ("T", "sigma", "mu", "epsilon_exact_round0")},
                 "points_violating": sum(not e.holds for e in evidence), "points": len(evidence)})
    return report_counterexample(result, chosen, "the paper's set-up at zeta = 0.1")


_CITE = (cite("Remark 2", equation="(23)", lines="233-239"), cite("Theorem 3", equation="(22)", lines="221-227"))
_HYP = ("the reconstructed C_0..C_3 of spec 3.11 (conservative reading of Lemma 2, C_3 = 8 rho as printed)",
        "1/2 < L < rho/4 (the corrected condition, fedpdm.theorem3_conditions_corrected)")

CLAIMS = (
    Claim(id="fedpdm.remark2", title="Remark 2: with (23) each term of (22) is zeta/4, so T = O(1/zeta)",
          citations=_CITE,
          statement=("With T = 4(L^0 - f)C_0/zeta, nu = zeta/(4C_1), phi^2 = zeta/(4C_2) and sigma^2 = zeta/(4C_3) "
                     "(23), each of the four terms of the bound (22) equals zeta/4, so the bound is zeta after "
                     "T = O(1/zeta) rounds."),
          hypotheses=_HYP, check=check_remark2, expected=Verdict.CONFIRMED,
          reason=("Arithmetic on the reconstructed constants: A_1 = A_2 = A_3 = zeta/4 to rounding, A_0 <= zeta/4 with "
                  "T rounded up, T zeta bounded (= 4 (L^0 - f) C_0 up to one round). The constants are a "
                  "reconstruction (E23) and C_3 = 8 rho has the wrong scaling (E21), so this confirms the algebra of "
                  "(23), not Theorem 3.")),
    Claim(id="fedpdm.remark2_private", title="Remark 2 as a private rate: (23) reaches zeta in O(1/zeta) rounds at "
          "the paper's budget (epsbar = 7, delta = 1e-5)", citations=_CITE,
          statement=("Line 239 contrasts FedPDM-DP's T = O(1/zeta) with the O(1/zeta^2) of other FL algorithms; read "
                     "as a statement about the private algorithm: with sigma^2 = zeta/(4C_3) of (23), FedPDM-DP is "
                     "still (epsbar, delta)-DP at the paper's budget (7, 1e-5) for every target zeta."),
          hypotheses=(*_HYP, "a legal neighbouring pair: a one-record client with linear loss against its negation "
                      "(|D_i| = b = 1), eta rho <= 1, every client uploads at round 0 (S_0 = [N])"),
          check=check_remark2_private, expected=Verdict.REFUTED, severity="false",
          reproduce=reproduce_remark2_private,
          uncorrected_because=("A joint privacy-utility rate needs the noise set by the budget and the floor C_3 sigma^2 "
                               "bounded with the correct noise scaling (E21: C_3 = O(rho^2 d / K)), neither of which "
                               "the seed or its reconstructed constants give."),
          reason=("(23) sets the noise by the accuracy target, not by the budget: at the paper's set-up and zeta = 0.1 "
                  "the round-0 release alone has mu = s/sigma = 647 and an exact epsilon of 2.1e5 at delta = 1e-5 (the "
                  "whole run's is larger: post-processing); every ci point violates the budget (points with small "
                  "eta rho, G and large zeta can satisfy it, but each fails once zeta is small enough). The privacy "
                  "loss grows without bound as zeta -> 0 (sigma ~ sqrt(zeta) while T ~ 1/zeta), so no joint "
                  "privacy-utility rate follows (spec E27); the O(1/zeta) round count is not comparable with "
                  "non-private O(1/zeta^2) rates at a fixed privacy level. No corrected joint statement is in the "
                  "seed; none is claimed here.")),
)
