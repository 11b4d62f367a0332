r""":math:`\rho(\mathcal F)` for exchangeable client classes with any :math:`R_k`, by the refined grouping.

:math:`\mathcal F` commutes with :math:`G = \prod_c S_{n_c}` (permutations inside the classes), so
:math:`\rho(\mathcal F)` is the maximum over the isotypic components of the state space; the class-symmetric reduction
of
:mod:`theory.msd.classes` holds only the trivial one. Split :math:`\min(2, n_c - 1)` clients off every class
(:func:`theory.msd.grouped.refined_grouping`): the subgroup :math:`\prod_c S_{n_c - 2}` fixes a nonzero vector in
every irreducible representation of :math:`G` that occurs (triv, std, (n-2,2) and (n-2,1,1) of each
:math:`S_{n_c}` and their products; Young's rule, Kostka numbers 1), so the reduced operator on the refined classes
has the same nonzero spectrum as :math:`\mathcal F` (the singleton fold only adds zeros). Its size is that of the
classes reduction with up to :math:`3C` classes: :math:`(1 + 3C(l_{\max}+1))^2` blocks of :math:`D^2` (19,141 blocks at
the paper's four groups, l_max = 10: about 7 10^5 unknowns at D = 6, 7.7 10^8 at D = 200, beyond Arnoldi's memory).

The exact model needs no refinement: :math:`\mathcal F_{exact}` is completely positive, so :math:`\rho` has a PSD
eigenvector :math:`P`, and its average :math:`\sum_g gPg^T` over :math:`G` is a nonzero PSD class-symmetric
eigenvector for the same :math:`\rho`. It also has a certificate that scales to the paper's D
(:func:`classes_stability_certificate`): :math:`\mu` is mean-square stable iff :math:`S - \mathcal F(S) = I` has a
positive definite solution, and the class-symmetric :math:`S` is positive definite iff
:math:`\mathcal N X\mathcal N + \mathrm{blockdiag}_c(n_cZ_c)` (:math:`\mathcal N` = class sizes, on the
:math:`n_ED` symmetric coordinates) and every :math:`Z_c` with :math:`n_c \ge 2` (the within-class differences) are.
The seed's truncated :math:`\mathcal F` is not completely positive: neither shortcut holds there. Measured at the
paper's four Toeplitz groups, D = 200, mu = 0.004: stable, smallest eigenvalues 19.5 and 1.0, residual 2.1e-11,
20 iterations, 166 CPU-s, peak RSS 3.5 GB; with the RFF covariances of ``bench_paofed_msd_groups.py --covariance rff``
(ridge 1e-2, mu = 0.4): stable, 20.75 and 1.0, 2.8e-11, 15 iterations, 201 CPU-s, 3.5 GB.

References
----------
.. [1] docs/papers/paofed.md#mean-square (rho(F) < 1 is the mean-square stability criterion).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse.linalg as spla
from threadpoolctl import threadpool_limits

from theory.msd.classes_operator import ClassLayout, apply_F_inplace, as_moments, check_model, class_grouping
from theory.msd.classes_preconditioner import StiffPartSolver
from theory.msd.classes_solver import PackedClasses, packed_bicgstab
from theory.msd.grouped import Grouping, refined_grouping
from theory.msd.krylov import arpack_eigs, generic_start

__all__ = ["DENSE_EIG_MAX", "StabilityCertificate", "classes_spectral_radius", "classes_stability_certificate"]

#: refined problems up to this many scalar unknowns: all eigenvalues of the explicit operator
DENSE_EIG_MAX = 2000


def classes_spectral_radius(x, model: str = "seed", *, mu: float | None = None, grouping: Grouping | None = None,
                            tol: float = 1e-12, ncv: int = 30, maxiter: int = 3000) -> tuple[float, float]:
    r"""``(rho(F), certificate)`` on the refined grouping (the seed model) or the classes (exact; see the module).

    All eigenvalues of the explicit refined operator up to :data:`DENSE_EIG_MAX` unknowns (certificate 0.0), else
    Arnoldi (largest magnitude, :func:`theory.msd.krylov.generic_start`, capped at ``maxiter`` restarts); the
    certificate is the Ritz residual :math:`\lVert\mathcal F v - \lambda v\rVert / \lVert v\rVert` recomputed.

    Raises
    ------
    ValueError
        On a bad model, or if Arnoldi does not converge within ``maxiter`` restarts.
    """
    m = as_moments(x)
    check_model(model)
    mu = m.mu if mu is None else float(mu)
    g = class_grouping(m) if grouping is None else grouping
    lay = ClassLayout(m, g if model == "exact" else refined_grouping(g))   # exact: the symmetric part suffices
    n = lay.n

    def mv(v):
        out = np.array(np.real(v), dtype=np.float64, copy=True)
        apply_F_inplace(lay, *lay.split(out), model, mu)
        return out

    with threadpool_limits(1):
        if n <= DENSE_EIG_MAX:
            F = np.column_stack([mv(e) for e in np.eye(n)])
            return float(np.max(np.abs(np.linalg.eigvals(F)))), 0.0
        op = spla.LinearOperator((n, n), matvec=mv, dtype=np.float64)
        try:
            vals, vecs = arpack_eigs(op, k=1, which="LM", tol=tol, ncv=min(ncv, n - 1), v0=generic_start(n),
                                   maxiter=maxiter)
        except spla.ArpackNoConvergence as exc:
            raise ValueError(f"rho(F_{model}) on the refined classes at mu = {mu!r}: Arnoldi did not converge to tol "
                             f"{tol:g} within {maxiter} restarts") from exc
        lam, v = vals[0], vecs[:, 0]
        Fv = mv(v.real) + 1j * mv(v.imag)
        return float(abs(lam)), float(np.linalg.norm(Fv - lam * v) / np.linalg.norm(v))


@dataclass(frozen=True)
class StabilityCertificate:
    r"""Mean-square stability of the exact :math:`\mathcal F` from :math:`S - \mathcal F(S) = I` (see the module).

    Attributes
    ----------
    stable : bool
        Both smallest eigenvalues positive (and the solve's error cannot change the conclusion: ``perturbation`` < 1).
    lambda_min_symmetric, lambda_min_difference : float
        Smallest eigenvalue of the class-symmetric part / of the :math:`Z_c` (``inf`` without classes of two or more).
    residual : float
        Relative residual of the reduced solve.
    perturbation : float
        Bound on the spectral norm of the full-space error :math:`\lVert S - \mathcal F(S) - I\rVert_2` (the largest
        class size times the reduced residual norm); below 1 the computed :math:`S` solves the equation for a
        positive definite right side, which is what the argument needs.
    iterations : int
    """

    stable: bool
    lambda_min_symmetric: float
    lambda_min_difference: float
    residual: float
    perturbation: float
    iterations: int


def classes_stability_certificate(x, *, mu: float | None = None, grouping: Grouping | None = None, rtol: float = 1e-10,
                                  maxiter: int = 3000, progress=None) -> StabilityCertificate:
    r"""Decide mean-square stability of the exact model on the class reduction (any D; see the module).

    Solves :math:`S - \mathcal F_{exact}(S) = I` by :func:`theory.msd.classes_solver.packed_bicgstab` (the memory of
    one MSD solve) and tests :math:`S \succ 0` by two symmetric eigenvalue problems of sizes :math:`n_ED` and
    :math:`(l_{\max}+1)D`. If :math:`\rho \ge 1` the solve may still converge (to an indefinite :math:`S`) or not
    (``ValueError``).
    """
    m = as_moments(x)
    mu = m.mu if mu is None else float(mu)
    g = class_grouping(m) if grouping is None else grouping
    lay = ClassLayout(m, g)
    nE, D, C, L1 = lay.nE, lay.D, lay.C, lay.L1

    def identity(X, Z):
        X[...] = 0.0
        Z[...] = 0.0
        X[0, 0] = np.eye(D)
        for c in range(C):
            for lag in range(L1):
                Z[c, lag, lag] = np.eye(D)

    s = np.empty(lay.n)
    X, Z = lay.split(s)
    pk = PackedClasses(lay)
    with threadpool_limits(1):
        its, res = packed_bicgstab(pk, (X, Z), lambda A, B: apply_F_inplace(lay, A, B, "exact", mu),
                                   StiffPartSolver(lay, "exact", mu), identity, rtol=rtol, maxiter=maxiter,
                                   progress=progress)
    if not res <= 10 * rtol:
        raise ValueError(f"S - F(S) = I not solved on the classes: relative residual {res:.3g} at mu = {mu!r}")
    identity(*lay.split(q := np.empty(lay.n)))
    qnorm = float(np.linalg.norm(q))
    del q
    counts = np.concatenate([[1.0], np.tile(lay.sizes, L1)])            # clients behind each E index
    M = (counts[:, None, None, None] * X * counts[None, :, None, None]).transpose(0, 2, 1, 3).reshape(nE * D, nE * D)
    for c in range(C):
        idx = 1 + np.arange(L1) * C + c
        for i, a in enumerate(idx):
            for j, b in enumerate(idx):
                M[a * D:(a + 1) * D, b * D:(b + 1) * D] += lay.sizes[c] * Z[c, i, j]
    lam_sym = float(np.linalg.eigvalsh(0.5 * (M + M.T))[0])
    del M
    lam_diff = np.inf
    for c in np.flatnonzero(~lay.single):
        Zc = Z[c].transpose(0, 2, 1, 3).reshape(L1 * D, L1 * D)
        lam_diff = min(lam_diff, float(np.linalg.eigvalsh(0.5 * (Zc + Zc.T))[0]))
    pert = float(np.max(lay.sizes)) * res * qnorm
    stable = lam_sym > 0 and lam_diff > 0 and pert < 1.0
    return StabilityCertificate(stable, lam_sym, lam_diff, res, pert, its)
