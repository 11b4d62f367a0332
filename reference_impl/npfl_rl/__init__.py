r"""NPFL-RL (thesis Algorithm 6 / P7 Algorithm 1) for ridge regression, vectorised over clients and runs.

Modules: :mod:`.config` (settings), :mod:`.primal` (the closed form (6.11) and V_v), :mod:`.controllers` (DPG,
SAC, the primal map), :mod:`.admm` (the iteration), :mod:`.arms` (the paper's experiment arms),
:mod:`.ground_truth` (K2-K4, docs/papers/npfl_rl.md#k2 to #k4), :mod:`.cost` (a run's cost from the sizes). This package
re-exports every public name.

Every client is a row of arrays of shape ``(R, K, ...)``, ``R`` the Monte-Carlo runs (stacked instances with
the same K and d, or one instance repeated for the SAC draws); neighbour sums are products with sparse
block-diagonal graph operators (one stored entry per directed edge), so there is no Python loop over clients
and no K x K array in an iteration: its time and memory are linear in K d^2 and the edges (:func:`estimate_run_cost`).
Iteration :math:`n = 1..N` (docs/papers/npfl_rl.md):

.. math::

    m_k^{(n)} &= \sum_{r\ne q}\omega_{k,r}\,\hat w_{k,(r)}^{(n-1)}, \qquad
    s_k^{(n)} = \tfrac{\rho}{2}\sum_{l\in N_k\cap C_{(q)}}(w_k^{(n-1)} + w_l^{(n-1)}) - \tfrac12\gamma_k^{(n-1)} \\
    P_k^{(n)}(a) &= (H_k + (c_k + \omega_k a) I)^{-1}(b_k + a m_k^{(n)} + s_k^{(n)}), \qquad
    w_k^{(n)} = P_k^{(n)}(\tau_k^{(n)}) \\
    \gamma_k^{(n)} &= \gamma_k^{(n-1)} + \rho\sum_{l\in N_k\cap C_{(q)}}(w_k^{(n)} - w_l^{(n)})
    \quad\text{(corrected; printed: } w_l - w_k\text{, erratum D1 (docs/papers/npfl_rl.md#erratum-d1))}

with :math:`c_k = \lambda/|C_{(q)}| + \rho|N_k\cap C_{(q)}|` (corrected, erratum D3 (docs/papers/npfl_rl.md#erratum-d3);
``diagonal="printed"`` uses
:math:`\rho|N_k|`). :math:`H_k = U\Lambda U^\top` is diagonalised once, so :math:`P(a)` costs :math:`O(d^2)`.

The inter-cluster parameter :math:`\tau_k^{(n)}` is fixed (NPFL), or set by a controller (docs/papers/npfl_rl.md): DPG
(6.13) :math:`t \leftarrow t - \delta\,\frac{d}{da}V_v(P(a))|_{a=t}`, or SAC (6.14)
:math:`t \leftarrow t - \delta\,\mathrm{sign}(V_v(P(t+\alpha)) - V_v(P(t)))\,\alpha`,
:math:`\alpha\sim U[-\nu/2,\nu/2]`,
``epochs`` inner steps per iteration (BRL), each followed by the projection :math:`\Pi = [0, \tau_{\max}]` when
enabled. NFL (the baseline) is the single-task ADMM over all neighbours with :math:`\lambda/K`.

Ground truths: :func:`per_component_ridge` (K2, docs/papers/npfl_rl.md#k2), :func:`global_ridge`
(K3, docs/papers/npfl_rl.md#k3), :func:`coupled_fixed_point` and
:func:`symmetric_fixed_point_cvxpy` (K4, docs/papers/npfl_rl.md#k4); each carries a certificate.

References
----------
.. [1] seed 004_180cd372987d137b.txt, thesis Chapter 6, eqs. (6.5)-(6.14), Algorithm 6, lines 1637-1722;
   Publication 7, eqs. (5)-(14), Algorithm 1, lines 3489-3562.
.. [2] docs/papers/npfl_rl.md: the algorithm as fedcheck runs it, errata D1-D4 (docs/papers/npfl_rl.md#erratum-d1 to
       #erratum-d4) and errata D11-D14 (docs/papers/npfl_rl.md#erratum-d11 to #erratum-d14), readings C-npfl-1..9.
"""

from reference_impl.npfl_rl.admm import NPFLRun, run_npfl, test_mse
from reference_impl.npfl_rl.arms import PAPER_ARMS, run_arm, simulate_replicates
from reference_impl.npfl_rl.config import ALGORITHMS, DIAGONALS, DUAL_SIGNS, POLICIES, TIMINGS, NPFLConfig
from reference_impl.npfl_rl.controllers import PrimalMap, npfl_primal_map
from reference_impl.npfl_rl.cost import RunCost, estimate_run_cost
from reference_impl.npfl_rl.ground_truth import (
    GroundTruth,
    coupled_fixed_point,
    global_ridge,
    per_component_ridge,
    symmetric_fixed_point_cvxpy,
)
from reference_impl.npfl_rl.run_report import NPFLRunCosts, npfl_run_costs, npfl_run_document, npfl_run_problems

__all__ = [
    "ALGORITHMS",
    "DIAGONALS",
    "DUAL_SIGNS",
    "PAPER_ARMS",
    "POLICIES",
    "TIMINGS",
    "GroundTruth",
    "NPFLConfig",
    "NPFLRun",
    "PrimalMap",
    "RunCost",
    "coupled_fixed_point",
    "estimate_run_cost",
    "global_ridge",
    "npfl_primal_map",
    "per_component_ridge",
    "run_arm",
    "run_npfl",
    "simulate_replicates",
    "symmetric_fixed_point_cvxpy",
    "test_mse",
    "NPFLRunCosts",
    "npfl_run_costs",
    "npfl_run_document",
    "npfl_run_problems",
]
