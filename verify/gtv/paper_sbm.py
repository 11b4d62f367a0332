r"""The paper's own SBM setting (§5.1, Table I) violates (35), yet every GTV minimiser is cluster-constant.

docs/papers/gtv.md (D3, docs/papers/gtv.md#derived-d3) and fedcheck's re-derivation. Instance:
:func:`reference_impl.gtv.data.sbm_instance` with the paper's parameters (2 x 100 nodes, p_in = 0.5, p_out = 1e-2, d =
100, m_i = 10 < d, σ = 1e-3, λ = 1e-2, nLasso); the ci profile uses one replicate, thorough three.

* (35) is decided exactly for every cluster and every anchor (:func:`theory.gtv.well_connected`): here every
  anchor already fails the necessary condition D3 (the total demand of C \ {i_0} exceeds the in-cluster
  degree of i_0 by thousands), so the decision needs no max-flow.
* Dual certificate: Algorithm 1 (θ = 10) run to GTV_ALG1_TOL/100 gives a dual point û with node and edge KKT
  residuals at round-off. By (28), an edge with :math:`\lVert\hat u^{(e)}\rVert_* < \lambda A_e` forces
  :math:`\hat w^{(e_+)} = \hat w^{(e_-)}` for *every* minimiser ŵ (the saddle-point set is a product, so any
  dual optimum pairs with any primal optimum). If every internal edge is unsaturated and each cluster's induced
  subgraph is connected, every minimiser is constant on each cluster -- although m_i < d makes the minimiser
  possibly non-unique. ``measured`` = max internal saturation :math:`\lVert\hat u^{(e)}\rVert/(\lambda A_e)`, bound
  1 - GTV_SATURATION_MARGIN; the margin (about 0.5 measured) exceeds the dual's residual error by ~10 decades.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
from threadpoolctl import threadpool_limits

from reference_impl.gtv import mse, run_algorithm1
from reference_impl.gtv.data import sbm_instance
from theory.gtv import (
    cluster_constants,
    cluster_deviation,
    deviation_bound_d1,
    deviation_bound_theorem2,
    dual_norm,
    well_connected,
)
from verify.evidence import result_from_evidence, sample_evidence
from verify.gtv import cite
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import GTV_ALG1_TOL, GTV_SATURATION_MARGIN, GTV_WELL_CONNECTED_RTOL

__all__ = ["CLAIMS", "PAPER_SBM", "check_paper_sbm", "evaluate_paper_sbm"]

#: §5.1 parameters (Table I).
PAPER_SBM = {"sizes": (100, 100), "p_in": 0.5, "p_out": 0.01, "d": 100, "m": 10, "noise": 1e-3, "lam": 1e-2}
_REPLICATES = {"ci": 1, "thorough": 3}


def evaluate_paper_sbm(seed: int, *, settings: dict | None = None) -> Evidence:
    """(35) decided for both clusters, Algorithm 1's dual certificate of cluster-constancy; bound 1 - margin."""
    s = {**PAPER_SBM, **(settings or {})}
    inst, w_true = sbm_instance(np.random.default_rng(seed), **s)
    with threadpool_limits(limits=1, user_api="blas"):
        k = cluster_constants(inst)
        b = k.demands(inst.lam)
        certs = [well_connected(inst, c, b, margin_rtol=GTV_WELL_CONNECTED_RTOL) for c in range(len(k.alpha))]
        run = run_algorithm1(inst, theta=10.0, max_iterations=20_000, tol=GTV_ALG1_TOL / 100, record_every=0)
    node, edge = run.kkt(inst)
    c = inst.clusters
    internal = c[inst.edges[:, 0]] == c[inst.edges[:, 1]]
    sat = dual_norm(inst, run.u) / (inst.lam * inst.A)
    connected = all(nx.is_connected(nx.Graph([tuple(e) for e in inst.edges[internal & (c[inst.edges[:, 0]] == j)]]))
                    and len(set(inst.edges[internal & (c[inst.edges[:, 0]] == j)].ravel())) == int(np.sum(c == j))
                    for j in range(len(k.alpha)))
    dev, spread = cluster_deviation(run.w, k)
    measured = float(sat[internal].max())
    bound = 1.0 - GTV_SATURATION_MARGIN
    violates_35 = not any(cert.certified for cert in certs)
    holds = bool(run.converged and connected and violates_35 and measured <= bound)
    return Evidence(measured=measured, bound=bound, holds=holds,
                    parameters={"seed": seed, **{k_: (list(v) if isinstance(v, tuple) else v) for k_, v in s.items()},
                                "violates_35": violates_35, "d3_slack_best": [cert.d3_slack_best for cert in certs],
                                "anchors_pruned_by_d3": [cert.anchors_pruned_by_d3 for cert in certs],
                                "min_boundary_saturation": float(sat[~internal].min()) if (~internal).any() else None,
                                "inter_cluster_edges": int((~internal).sum()), "clusters_connected": connected,
                                "iterations": run.iterations, "kkt_node": node, "kkt_edge": edge,
                                "spread": spread.tolist(), "deviation": dev.tolist(),
                                "bound_d1": deviation_bound_d1(inst.lam, k).tolist(),
                                "bound_37": deviation_bound_theorem2(inst.lam, k).tolist(),
                                "mse": mse(run.w, w_true),
                                "internal_saturation_quantiles": np.quantile(sat[internal], [0.5, 0.9, 1.0]).tolist()})


def _batch(rng, n):
    return [evaluate_paper_sbm(int(rng.integers(2**31))) for _ in range(n)]


def check_paper_sbm(ctx: CheckContext) -> CheckResult:
    evidence = sample_evidence(ctx, "gtv.paper_sbm_cluster_constant", _batch, 1, (_REPLICATES[ctx.profile],))
    series = []
    for j, e in enumerate(evidence):
        q = e.parameters["internal_saturation_quantiles"]
        series.append(Series(label=f"replicate {j}: internal edges (median, 90%, max)", x=(0.5, 0.9, 1.0), y=q,
                             style="points", group=str(j)))
        series.append(Series(label=f"replicate {j}: min over boundary edges", x=(1.0,),
                             y=(e.parameters["min_boundary_saturation"],), style="points", group=str(j)))
    series.append(Series(label="saturation 1 - margin", x=(0.5, 1.0), y=(1 - GTV_SATURATION_MARGIN,) * 2,
                         style="dashed"))
    fig = FigureSpec(name="paper_sbm_dual_certificate", title="Paper SBM: ||u_e|| / (lam A_e) of the optimal flow",
                     xlabel="quantile over edges", ylabel="saturation ||u_e||_2 / (lam A_e)", series=tuple(series))
    details = {"d3_slack_best (negative: every anchor fails D3)": [e.parameters["d3_slack_best"] for e in evidence],
               "max_spread": max(max(e.parameters["spread"]) for e in evidence),
               "deviation / D1": [max(np.array(e.parameters["deviation"]) / np.array(e.parameters["bound_d1"]))
                                  for e in evidence],
               "mse": [e.parameters["mse"] for e in evidence]}
    return result_from_evidence("gtv.paper_sbm_cluster_constant", evidence, ctx=ctx,
                                form="decision",
                                form_reason=("a certificate (every internal edge strictly below its capacity) decides "
                                             "cluster-constancy; its margin is the certificate's robustness, not a "
                                             "bound's slack"),
                                quantity="max over internal edges of ||u_e||_2 / (lam A_e)",
                                what="(35) fails yet every internal edge is unsaturated (all minimisers "
                                     "cluster-constant)",
                                figures=[fig], details=details)


CLAIMS = (
    Claim(
        id="gtv.paper_sbm_cluster_constant",
        title="Paper SBM (Table I setting): (35) fails, yet every GTV minimiser is cluster-constant",
        citations=(cite("Section VI-A, SBM with two clusters", equation="(39)-(41)", lines="533-570"),
                   cite("Definition 1 and Theorem 2", equation="(35)-(37)", lines="483-507"),
                   cite("optimality conditions for norms", equation="(28)", lines="380-392")),
        statement=("In the SBM experiment (2 x 100 nodes, p_in = 0.5, p_out = 0.01, d = 100, m_i = 10, lam = 1e-2, "
                   "nLasso) GTV minimisation recovers the clusters: every minimiser is constant on each cluster. "
                   "The well-connectedness condition (35) of Theorem 2 does not hold there, so this is not an "
                   "instance of Theorem 2 ((35) is sufficient, not necessary; D3 (docs/papers/gtv.md#derived-d3))."),
        hypotheses=("the paper's SBM parameters, all nodes accessible", "nLasso penalty",
                    "dual optimum approximated by Algorithm 1 to KKT residuals at round-off"),
        check=check_paper_sbm,
        expected=Verdict.CONFIRMED,
        reason=("Every anchor of both clusters fails the necessary condition D3 (docs/papers/gtv.md#derived-d3) "
                "(demand exceeds in-cluster degree by ~3700), so (35) fails exactly; Algorithm 1's optimal flow leaves "
                "every internal edge at <= ~0.5 of its "
                "capacity while boundary edges are saturated, which by (28) certifies that all minimisers are "
                "cluster-constant (deviation within D1 (docs/papers/gtv.md#derived-d1) and (37))."),
    ),
)
