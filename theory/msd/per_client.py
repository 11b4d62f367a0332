r"""Per-client feature covariances: the class-mean *estimate* of :math:`\mathrm{MSD}_\infty` (not certified).

When every client has its own :math:`R_k` (the experiments' RFF data model draws a law per client), no exact route
fits at the paper's scale (K = 256, D = 200, l_max = 10: 256 client classes, see
:func:`theory.msd.routes.choose_route`). :func:`class_mean_msd_estimate` replaces each client's :math:`R_k` in the
dynamics by its mean over a class of clients (default: the clients of equal :math:`p_k`, which share the staleness
moments), keeps each client's own noise :math:`\sigma^2_{\eta,k}R_k` (exact against the class-mean dynamics, see
there), and solves (S2) exactly on the classes (:mod:`theory.msd.classes`). The steady-state MSD of LMS-type
recursions depends on :math:`R_k` only weakly, and with class means the first-order term of the seed model's change
(linear in :math:`R`) cancels when the sensitivities are equal within a class; measured on per-client RFF federations
small enough for the exact routes, the estimate was within 0.07 dB of the per-client value, either side
(docs/msd.md#per-client).

It is an estimate, not a bound: no certificate of its error is computed (``certified`` is always False). A
certified bracket needs a bound on the per-client resolvent :math:`(I - \mathcal F)^{-1}` that does not grow like
:math:`1/(1 - \rho(\mathcal F))`; the generic norm bounds do, and the estimate's error has no fixed sign (see
``docs/msd.md#per-client``, which gives the measured errors and the bounds that fail).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from theory.msd.instance import PAOFedInstance

__all__ = ["ClassMeanEstimate", "class_mean_instance", "class_mean_msd_estimate", "class_mean_noise",
           "class_mean_spread"]


@dataclass(frozen=True, kw_only=True)
class ClassMeanEstimate:
    r"""The class-mean estimate of one model's :math:`\mathrm{MSD}_\infty`.

    Attributes
    ----------
    model : str
    msd, msd_db : float
        The estimate (the exact MSD of the class-mean dynamics with the noise of ``own_noise``).
    classes : int
        Number of client classes.
    spread : float
        :math:`\max_k \lVert R_k - \bar R_{c(k)}\rVert_F / \lVert \bar R_{c(k)}\rVert_F` (0: the estimate is exact).
    residual : float
        Relative residual of the class-reduced (S2) solve.
    solver : str
    certified : bool
        Always False: no bound on the estimate's error is computed.
    """

    model: str
    msd: float
    msd_db: float
    classes: int
    spread: float
    residual: float
    solver: str
    certified: bool = False


def _labels(instance: PAOFedInstance, labels) -> np.ndarray:
    if labels is None:
        _, out = np.unique(instance.p, return_inverse=True)
        return out.ravel()
    out = np.asarray(labels)
    if out.shape != (instance.K,) or not np.issubdtype(out.dtype, np.integer):
        raise ValueError(f"labels must be K = {instance.K} integers (one class per client), got {out.dtype} "
                         f"{out.shape}")
    for c in np.unique(out):
        if np.ptp(instance.p[out == c]) != 0.0:
            raise ValueError(f"labels: class {int(c)} mixes clients of different p_k (the classes must share p_k)")
    return out


def class_mean_instance(instance: PAOFedInstance, labels=None) -> PAOFedInstance:
    r"""``instance`` with each :math:`R_k` and :math:`\sigma^2_{\eta,k}` replaced by its mean over the client's class
    (``labels``: one integer per client, classes of equal :math:`p_k`; default the clients of equal :math:`p_k`)."""
    if not isinstance(instance, PAOFedInstance):
        raise TypeError(f"instance must be a PAOFedInstance, got {type(instance).__name__}")
    lab = _labels(instance, labels)
    R = np.array(instance.R, dtype=np.float64, copy=True)
    s2 = np.array(instance.sigma2_eta, dtype=np.float64, copy=True)
    for c in np.unique(lab):
        idx = lab == c
        R[idx] = R[idx].mean(axis=0)
        s2[idx] = s2[idx].mean()
    fields = {f: getattr(instance, f) for f in instance.__dataclass_fields__}
    fields.update(R=R, sigma2_eta=s2)
    return PAOFedInstance(**fields)


def class_mean_spread(instance: PAOFedInstance, labels=None, *, mean: PAOFedInstance | None = None) -> float:
    r""":math:`\max_k \lVert R_k - \bar R_{c(k)}\rVert_F / \lVert \bar R_{c(k)}\rVert_F` over the classes (0: the
    class-mean federation is ``instance`` itself); ``mean`` is :func:`class_mean_instance` if already formed."""
    lab = _labels(instance, labels)
    mean = class_mean_instance(instance, labels) if mean is None else mean
    spread = 0.0
    for c in np.unique(lab):
        idx = np.flatnonzero(lab == c)
        ref = float(np.linalg.norm(mean.R[idx[0]]))
        if ref > 0.0:
            spread = max(spread, float(np.max(np.linalg.norm(instance.R[idx] - mean.R[idx[0]], axis=(1, 2)))) / ref)
    return spread


def class_mean_noise(instance: PAOFedInstance, labels=None, *, mean: PAOFedInstance | None = None) -> np.ndarray:
    r"""Each class's mean of the clients' own noise matrices :math:`\sigma^2_{\eta,k}R_k`, ``(C, D, D)`` in the order
    of the classes of :func:`class_mean_instance` (:func:`theory.msd.classes.class_grouping`); ``mean`` is that
    instance if already formed."""
    from theory.msd.classes import class_grouping

    mean = class_mean_instance(instance, labels) if mean is None else mean
    g = class_grouping(mean)   # classes with equal means are one class here
    own = np.asarray(instance.sigma2_eta)[:, None, None] * np.asarray(instance.R)
    return np.stack([own[g.labels == c].mean(axis=0) for c in range(g.C)])


def class_mean_msd_estimate(instance: PAOFedInstance, model: str = "seed", *, labels=None, rtol: float = 1e-12,
                            maxiter: int = 5000, own_noise: bool = True, progress=None) -> ClassMeanEstimate:
    r"""Estimate :math:`\mathrm{MSD}_\infty` of a federation with per-client :math:`R_k` by the exact MSD of its
    class-mean dynamics (:func:`class_mean_instance`), solved on the client classes
    (:func:`theory.msd.classes.classes_msd_steady_state`, 3.6 GB and a few CPU-minutes per model at K = 256 in four
    classes, D = 200, l_max = 10). Not certified (module docstring).

    ``own_noise`` (default): the noise each client injects keeps its own :math:`\sigma^2_{\eta,k}R_k`
    (:func:`class_mean_noise`). The MSD is :math:`\langle V, Q\rangle`, linear in the noise, and the class-mean
    dynamics' dual :math:`\bar V` is the same for the clients of a class, so the noise enters exactly against
    :math:`\bar V` and only the dynamics are averaged; with ``own_noise=False`` the noise is
    :math:`\bar\sigma^2_c\bar R_c`, which also averages the covariance of :math:`\sigma^2_{\eta,k}` and
    :math:`R_k` away (2-3x larger errors with the paper's noise variances, docs/msd.md#per-client).

    Raises
    ------
    ValueError
        On bad ``labels`` or ``model``, or if the class-reduced solve does not converge.
    """
    from theory.msd.classes import classes_msd_steady_state

    mean = class_mean_instance(instance, labels)
    lab = _labels(instance, labels)
    spread = class_mean_spread(instance, labels, mean=mean)
    sol = classes_msd_steady_state(mean, model, rtol=rtol, maxiter=maxiter, progress=progress,
                                   noise=class_mean_noise(instance, labels, mean=mean) if own_noise else None)
    db = 10.0 * math.log10(sol.msd) if sol.msd > 0 else -math.inf
    return ClassMeanEstimate(model=model, msd=float(sol.msd), msd_db=db, classes=int(np.unique(lab).size),
                             spread=spread, residual=float(sol.residual), solver=f"classes {sol.method}")
