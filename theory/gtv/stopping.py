r"""Stopping rules of Algorithm 1: the gap (34), an orbit on which it is never finite, and the projected-dual gap.

The primal-dual gap (34) of the GTV paper is :math:`\mathrm{gap}_k = P(\hat w_{k+1}) - \mathrm{Dual}(\hat u_{k+1})`
with :math:`\mathrm{Dual}(u) = -\sum_i L_i^*(-s^{(i)}) - \lambda\sum_e A_e\phi^*(u^{(e)}/(\lambda A_e))`,
:math:`s = D^Tu`. It is :math:`+\infty` whenever some :math:`-s^{(i)}` lies outside :math:`\mathrm{dom}\,L_i^*`
(:math:`\{0\}` for a trivial loss :math:`L_i \equiv 0`, :math:`\mathrm{range}(X_i^T)` for the squared loss (40) with
:math:`m_i < d`).

**Two-node orbit.** Nodes 1, 2, one edge :math:`e = (1, 2)` with :math:`A_e = 1`, :math:`d = 1`, the MOCHA penalty
:math:`\phi(v) = \tfrac12 v^2`, :math:`\lambda = 1/2`, :math:`L_1 \equiv 0`, :math:`L_2(w) = (w - 1)^2` (squared loss
(40) with :math:`m_2 = 1`, :math:`x = y = 1`), the seed's steps :math:`\tau_i = 1/|\mathcal N^{(i)}| = 1`,
:math:`\sigma_e = 1/2` and start :math:`\hat w_0 = 0, \hat u_0 = 0`. Algorithm 1's steps 3-8 read

.. math::

    w_1' = w_1 - u,\quad w_2' = \frac{2 + w_2 + u}{3},\quad
    u' = \frac{u + \tfrac12\,(2(w_1' - w_2') - (w_1 - w_2))}{1 + \sigma_e/(\lambda A_e)}

and the orbit is, for every :math:`k \ge 1` (by induction; :func:`two_node_orbit`),

.. math::

    \hat w_{1,k} = 1 - \tfrac32 r^k,\quad \hat w_{2,k} = 1 - \tfrac12 r^k,\quad \hat u_k = -\tfrac12 r^k,
    \qquad r = 2/3.

So :math:`s^{(1)} = \hat u_k \ne 0` for every k: :math:`-s^{(1)} \notin \mathrm{dom}\,L_1^* = \{0\}` and
:math:`\mathrm{gap}_k = +\infty` at every iterate, while the iterates converge (to :math:`w^* = (1, 1)`,
:math:`u^* = 0`, :math:`P^* = 0`).

**Projected-dual gap.** For squared (or trivial) losses the dual domain is the linear subspace
:math:`V = \{u : (D^Tu)^{(i)} \in \mathrm{range}(X_i^T)\ \forall i\}` (intersected, for a norm penalty, with the
balls :math:`\lVert u^{(e)}\rVert_* \le \lambda A_e`). :math:`\Pi(u) = t\,P_V u` with :math:`P_V` the orthogonal
projection onto :math:`V` and :math:`t = \min(1, \min_e \lambda A_e/\lVert(P_Vu)^{(e)}\rVert_*)` (:math:`t = 1` for
MOCHA) is dual feasible, so by weak duality

.. math::

    0 \le P(\hat w_k) - P^* \le \mathrm{gap}^\Pi_k := P(\hat w_k) - \mathrm{Dual}(\Pi(\hat u_k)).

:math:`\Pi` is continuous and fixes every feasible point, so :math:`\Pi(\hat u_k) \to \hat u` when Algorithm 1
converges to a saddle point :math:`(\hat w, \hat u)`; Dual is continuous on its (closed, polyhedral-times-ball)
domain along such sequences (a finite quadratic on :math:`V`), :math:`P` is continuous, and strong duality (22) gives
:math:`\mathrm{gap}^\Pi_k \to 0`: the rule :math:`\mathrm{gap}^\Pi_k \le \eta` stops after finitely many iterations
for every :math:`\eta > 0`, and certifies :math:`P(\hat w_k) - P^* \le \eta` when it does. On the two-node orbit
:math:`\Pi(u) = 0` and :math:`\mathrm{gap}^\Pi_k = P(\hat w_k) - P^* = \tfrac12 r^{2k}` exactly.

References
----------
SarcheshmehPour et al., "Clustered Federated Learning via Generalized Total Variation Minimization", seed
002_26677b31336d654c.txt: Algorithm 1, (19)-(24), the stopping criterion (34) (lines 465-475) and the local loss
(40); docs/papers/gtv.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from theory.gtv.instance import GTVInstance
from theory.gtv.operators import DualEvaluation, _range_projector, dual_norm, dual_objective, primal_objective

__all__ = ["DualDomainProjector", "TWO_NODE_LAM", "TWO_NODE_RATIO", "projected_duality_gap", "two_node_instance",
           "two_node_orbit", "two_node_primal_gap", "two_node_step"]

#: The counterexample's GTV parameter and the contraction factor of its orbit.
TWO_NODE_LAM = Fraction(1, 2)
TWO_NODE_RATIO = Fraction(2, 3)


def two_node_instance(lam: float = float(TWO_NODE_LAM)) -> GTVInstance:
    """The two-node instance in floating point: L_1 = 0 (m_1 = 0), L_2(w) = (w - 1)^2, MOCHA, A = 1, d = 1."""
    return GTVInstance(n=2, edges=[(0, 1)], A=[1.0], X=np.array([[[0.0]], [[1.0]]]), y=np.array([[0.0], [1.0]]),
                       m=[0, 1], lam=lam, penalty="mocha", loss="squared")


def two_node_step(w1: Fraction, w2: Fraction, u: Fraction, lam: Fraction = TWO_NODE_LAM
                  ) -> tuple[Fraction, Fraction, Fraction]:
    r"""One iteration of Algorithm 1 on the two-node instance, in exact rational arithmetic.

    Steps 3-4 (:math:`\tau = 1`): :math:`v_1 = w_1 - u`, :math:`v_2 = w_2 + u`; PU of :math:`L_1 = 0` is the identity,
    PU of :math:`(z - 1)^2` with :math:`\tau = 1` is :math:`(2 + v_2)/3`. Steps 7-8 (:math:`\sigma = 1/2`): the MOCHA
    DU :math:`\tilde u/(1 + \sigma/(\lambda A_e))`.
    """
    lam = Fraction(lam)
    if lam <= 0:
        raise ValueError(f"lam must be > 0, got {lam}")
    sigma = Fraction(1, 2)
    n1 = w1 - u
    n2 = (2 + (w2 + u)) / 3
    u_tilde = u + sigma * (2 * (n1 - n2) - (w1 - w2))
    return n1, n2, u_tilde / (1 + sigma / lam)


def two_node_orbit(k: int) -> tuple[Fraction, Fraction, Fraction]:
    r"""The closed-form iterate :math:`(\hat w_{1,k}, \hat w_{2,k}, \hat u_k)` at :math:`\lambda = 1/2`, k >= 1.

    >>> two_node_orbit(1) == two_node_step(Fraction(0), Fraction(0), Fraction(0))
    True
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    r = TWO_NODE_RATIO**k
    return 1 - Fraction(3, 2) * r, 1 - Fraction(1, 2) * r, -Fraction(1, 2) * r


def two_node_primal_gap(w1: Fraction, w2: Fraction, lam: Fraction = TWO_NODE_LAM) -> Fraction:
    r""":math:`P(w) - P^* = (w_2 - 1)^2 + \lambda\,\tfrac12(w_1 - w_2)^2` (:math:`P^* = 0` at :math:`w = (1, 1)`);
    it equals the projected-dual gap, since :math:`\Pi(u) = 0` and :math:`\mathrm{Dual}(0) = 0`."""
    return (w2 - 1) ** 2 + Fraction(lam) * Fraction(1, 2) * (w1 - w2) ** 2


@dataclass(frozen=True, kw_only=True)
class DualDomainProjector:
    r""":math:`\Pi(u) = t\,P_Vu` (module docstring) for squared or trivial losses and the l2, l1 or MOCHA penalty.

    ``basis`` is an orthonormal basis of :math:`V^\perp = \mathrm{range}(C^T)`,
    :math:`C = \operatorname{blockdiag}_i(P_{\perp,i})(D^T \otimes I_d)`, built in node space from the eigenpairs
    :math:`(\mu_j, x_j)` of :math:`CC^T = [\mathrm{Lap}_{ij} P_{\perp,i}P_{\perp,j}]` (the graph Laplacian of the
    incidence): :math:`b_j = C^Tx_j/\sqrt{\mu_j}` for :math:`\mu_j > n d\,\varepsilon\,\mu_{\max}`. Dense in node
    space: meant for :math:`n d \le 4000`.
    """

    inst: GTVInstance
    basis: np.ndarray

    @classmethod
    def build(cls, inst: GTVInstance) -> DualDomainProjector:
        if inst.loss != "squared" or inst.penalty not in ("l2", "l1", "mocha"):
            raise ValueError(f"loss must be 'squared' and penalty l2, l1 or mocha; got {inst.loss!r}, {inst.penalty!r}")
        n, d, E = inst.n, inst.d, inst.n_edges
        if n * d > 4000:
            raise ValueError(f"instance too large for the dense node-space projector: n d = {n * d} > 4000")
        _, V, keep = _range_projector(inst)
        perp = np.einsum("nij,nj,nkj->nik", V, 1.0 - keep, V)          # P_perp,i = V diag(1 - keep) V^T
        D = inst.incidence.tocsr()                                       # (E, n), D_{e,e+} = 1, D_{e,e-} = -1
        lap = (D.T @ D).toarray()
        M = np.einsum("ij,iab,jbc->iajc", lap, perp, perp).reshape(n * d, n * d)
        mu, X = np.linalg.eigh(0.5 * (M + M.T))
        good = mu > n * d * np.finfo(np.float64).eps * max(float(mu[-1]), 0.0)
        X = X[:, good].reshape(n, d, -1) / np.sqrt(mu[good])
        Y = np.einsum("nab,nbr->nar", perp, X)                           # P_perp x_j, node-wise
        B = (D @ Y.reshape(n, -1)).reshape(E, d, -1).reshape(E * d, -1)  # C^T x_j / sqrt(mu_j)
        return cls(inst=inst, basis=B)

    def __call__(self, u: np.ndarray) -> np.ndarray:
        u = np.asarray(u, dtype=np.float64)
        flat = u.reshape(-1)
        p = (flat - self.basis @ (self.basis.T @ flat)).reshape(u.shape)
        if self.inst.penalty in ("l2", "l1"):
            norms = dual_norm(self.inst, p)
            cap = self.inst.lam * self.inst.A
            with np.errstate(divide="ignore"):
                t = float(min(1.0, np.min(np.where(norms > 0, cap / norms, np.inf))))
            p = t * p
        return p


def projected_duality_gap(inst: GTVInstance, w: np.ndarray, u: np.ndarray, *, range_rtol: float,
                          projector: DualDomainProjector | None = None) -> tuple[float, DualEvaluation]:
    r""":math:`\mathrm{gap}^\Pi = P(w) - \mathrm{Dual}(\Pi(u))` and the dual evaluation at :math:`\Pi(u)`.

    :math:`\Pi(u)` is feasible up to rounding (its out-of-range part is of the order of machine epsilon, far below
    ``range_rtol``); the gap is an upper bound on :math:`P(w) - P^*` up to that rounding.
    """
    projector = DualDomainProjector.build(inst) if projector is None else projector
    dual = dual_objective(inst, projector(u), range_rtol=range_rtol)
    return primal_objective(inst, w) - dual.value, dual
