r"""The primal map (6.11) in the eigenbasis of :math:`H_k`: the fast paths of :func:`reference_impl.npfl_rl.run_npfl`
for SAC and for a fixed :math:`\tau` (:func:`shifted_inverse`).

With :math:`H_k = U_k\Lambda_kU_k^\top` the primal map (6.11) of one state is, in the eigenbasis,

.. math::

    \hat P_k(a) = U_k^\top P_k(a) = \frac{\beta_k + a\,\mu_k}{\Lambda_k + c_k + \omega_k a}, \qquad
    \beta_k = U_k^\top(b_k + s_k),\quad \mu_k = U_k^\top m_k

(elementwise division), and the validation value (6.12) is, with :math:`\hat H_{v,k} = U_k^\top H_{v,k}U_k` and
:math:`\hat b_{v,k} = U_k^\top b_{v,k}` formed once per run (:math:`U_k` orthogonal),

.. math::

    V_v(P_k(a)) = \hat P^\top\hat H_v\hat P - 2\hat b_v^\top\hat P + c_v + \lambda_k\|\hat P\|^2.

So a SAC state costs two basis changes (:math:`\beta`, :math:`\mu`, one pass over :math:`U`) and one back
(:math:`P(\tau)`), and both candidates of an inner step one pass over :math:`\hat H_v`; a fixed :math:`\tau` one
product with :math:`(H_k + (c_k + \omega_k\tau)I)^{-1}` per iteration. The numbers are those of
:func:`reference_impl.npfl_rl.primal.primal_at` and :func:`~reference_impl.npfl_rl.primal.validation_value` up to
rounding (a few ulps times the conditioning; the signs of (6.14) the same), at a fraction of their products
(``tests/reference_impl/test_npfl_rl_eigen.py`` compares the paths). DPG keeps the direct products: its clipped
gradient steps amplify rounding, so only bit-identical reuse is made there.

References
----------
.. [1] seed 004_180cd372987d137b.txt, thesis Chapter 6, eqs. (6.11)-(6.14), Algorithm 6, lines 1637-1722.
.. [2] docs/papers/npfl_rl.md: the algorithm as fedcheck runs it (corrected (6.11), erratum D3).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reference_impl.npfl_rl.primal import Structure

__all__ = ["EigenState", "EigenValidation", "eigen_primal", "eigen_sac_step", "eigen_state",
           "eigen_validation", "from_eigen", "shifted_inverse", "to_eigen"]


def to_eigen(S: Structure, v: np.ndarray) -> np.ndarray:
    r""":math:`U_k^\top v_k` for every run and client: ``v`` (R, K, d) -> (R, K, d)."""
    return (v[..., None, :] @ S.U)[..., 0, :]


def from_eigen(S: Structure, coef: np.ndarray) -> np.ndarray:
    r""":math:`U_k\hat v_k` for every run and client: ``coef`` (R, K, d) -> (R, K, d)."""
    return (S.U @ coef[..., None])[..., 0]


def shifted_inverse(S: Structure, a: np.ndarray) -> np.ndarray:
    r""":math:`(H_k + (c_k + \omega_k a_k)I)^{-1} = U_k\,\mathrm{diag}(1/(\Lambda_k + c_k + \omega_k a_k))\,U_k^\top`,
    (R, K, d, d), for a fixed ``a`` (R, K): fixed :math:`\tau` then costs one matrix-vector product per client and
    iteration (:func:`reference_impl.npfl_rl.primal.primal_at` makes two)."""
    return (S.U / (S.Lam + (S.c + S.omega * a)[..., None])[..., None, :]) @ np.swapaxes(S.U, -1, -2)


@dataclass(frozen=True)
class EigenValidation:
    r"""The validation data of a :class:`~reference_impl.npfl_rl.primal.Structure` in the eigenbasis of
    :math:`H_k`: ``Hv`` (R, K, d, d) :math:`U^\top H_vU`, ``bv`` (R, K, d) :math:`U^\top b_v`."""

    Hv: np.ndarray
    bv: np.ndarray


def eigen_validation(S: Structure) -> EigenValidation:
    """:class:`EigenValidation` of ``S`` (once per run: K d^3 work)."""
    return EigenValidation(Hv=np.swapaxes(S.U, -1, -2) @ S.Hv @ S.U, bv=to_eigen(S, S.bv))


@dataclass(frozen=True)
class EigenState:
    r"""One state's primal map in the eigenbasis: ``beta`` :math:`U^\top(b + s)` and ``mu`` :math:`U^\top m`,
    (R, K, d) each."""

    beta: np.ndarray
    mu: np.ndarray


def eigen_state(S: Structure, m: np.ndarray, s: np.ndarray) -> EigenState:
    """The :class:`EigenState` of the inter-cluster average ``m`` and consensus term ``s`` (R, K, d): both carried
    into the eigenbasis in one pass over :math:`U`."""
    both = np.stack([S.b + s, m], axis=-2) @ S.U  # (R, K, 2, d)
    return EigenState(beta=both[..., 0, :], mu=both[..., 1, :])


def eigen_primal(S: Structure, E: EigenState, a: np.ndarray) -> np.ndarray:
    r""":math:`U^\top P(a)` (R, K, d) at ``a`` (R, K): the corrected (6.11) in the eigenbasis."""
    return (E.beta + a[..., None] * E.mu) / (S.Lam + (S.c + S.omega * a)[..., None])


def _values(S: Structure, V: EigenValidation, coefs: np.ndarray) -> np.ndarray:
    """V_v (6.12) of the primals whose eigen-coefficients are ``coefs`` (R, K, d, j): (R, K, j), one pass over
    :math:`\\hat H_v` for the j candidates."""
    quad = np.sum(coefs * (V.Hv @ coefs), axis=-2)
    return (quad - 2.0 * np.sum(V.bv[..., None] * coefs, axis=-2) + S.cv[..., None]
            + S.lam_k[..., None] * np.sum(coefs * coefs, axis=-2))


def eigen_sac_step(S: Structure, V: EigenValidation, E: EigenState, t: np.ndarray, alpha: np.ndarray,
                   delta: float) -> np.ndarray:
    """SAC (6.14) at ``t`` with draw ``alpha`` (R, K): -delta sign(V_v(P(t + alpha)) - V_v(P(t))) alpha, sign(0) = 0
    (before projection), in the eigenbasis."""
    values = _values(S, V, np.stack([eigen_primal(S, E, t + alpha), eigen_primal(S, E, t)], axis=-1))
    dv = values[..., 0] - values[..., 1]
    return -delta * np.sign(dv) * alpha
