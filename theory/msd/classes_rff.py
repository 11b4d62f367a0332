r"""Feature covariances :math:`R = E[z(x)z(x)^T]` of docs/papers/paofed.md's RFF map on stationary Gaussian AR(1)
inputs, exactly.

The choice (docs/papers/paofed.md#choices) map of docs/papers/paofed.md#choice-rff is :math:`z(x) = \sqrt{2/D}\cos(Vx +
b)`; the inputs of docs/papers/paofed.md#choice-data are the lag vector
:math:`x = [x_n, x_{n-1}, x_{n-4}, x_{n-3}]` (literal order, erratum E17 (docs/papers/paofed.md#erratum-e17)) of a
stationary Gaussian AR(1) process with mean :math:`\mu_k\sqrt{(1+\theta_k)/(1-\theta_k)}` and autocovariance
:math:`\sigma^2_{u,k}\theta_k^{|h|}`. For
:math:`x \sim N(m, \Sigma)`, :math:`E\cos(u^Tx + c) = \cos(u^Tm + c)\,e^{-u^T\Sigma u/2}`, so with
:math:`a_i = v_i^Tm + b_i` and :math:`Q = V\Sigma V^T`

.. math:: R_{ij} = \frac1D\Big[\cos(a_i + a_j)\,e^{-(Q_{ii} + Q_{jj} + 2Q_{ij})/2}
                   + \cos(a_i - a_j)\,e^{-(Q_{ii} + Q_{jj} - 2Q_{ij})/2}\Big],

the population covariance (no sampling error, unlike :func:`reference_impl.paofed.data.rff_calibration`).
For docs/papers/paofed.md's bandwidth :math:`\sigma_\kappa = 5` these :math:`R` are numerically
singular (docs/papers/paofed.md#choice-rff, docs/papers/paofed.md#choice-msd-instances):
:func:`rff_group_covariances` adds a stated ridge :math:`\epsilon I` so that (S2) has a unique steady state.

References
----------
.. [1] docs/papers/paofed.md#choice-rff (RFF map, sigma_kappa = 5, calibration target max lambda_max(R_k) = 1.02), 1.3
   (AR(1) inputs, client laws), 3.7 (singular R_k: work in a subspace or add a documented ridge).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["LITERAL_LAGS", "rff_client_covariances", "rff_covariance", "rff_group_covariances"]

#: lags of the literal input order [x_n, x_{n-1}, x_{n-4}, x_{n-3}] (docs/papers/paofed.md#choice-data,
#: docs/papers/paofed.md#erratum-e17)
LITERAL_LAGS = (0, 1, 4, 3)


def rff_covariance(V: np.ndarray, b: np.ndarray, mean: np.ndarray, cov: np.ndarray) -> np.ndarray:
    r""":math:`E[z z^T]` for :math:`z = \sqrt{2/D}\cos(Vx + b)`, :math:`x \sim N(\mathrm{mean}, \mathrm{cov})`.

    ``V`` is (D, L), ``b`` (D,), ``mean`` (L,), ``cov`` (L, L) positive semidefinite.

    >>> rng = np.random.default_rng(0)
    >>> V, b = rng.standard_normal((3, 2)), rng.uniform(0, 2 * np.pi, 3)
    >>> R = rff_covariance(V, b, np.zeros(2), np.zeros((2, 2)))   # a point mass: R = z z^T
    >>> z = np.sqrt(2 / 3) * np.cos(b)
    >>> bool(np.allclose(R, np.outer(z, z)))
    True
    """
    V = np.asarray(V, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    D = V.shape[0]
    if V.ndim != 2 or b.shape != (D,) or np.shape(mean) != (V.shape[1],) or np.shape(cov) != (V.shape[1],) * 2:
        raise ValueError(f"V must be (D, L), b (D,), mean (L,), cov (L, L); got {V.shape}, {b.shape}, "
                         f"{np.shape(mean)}, {np.shape(cov)}")
    a = V @ np.asarray(mean, dtype=np.float64) + b
    Q = V @ np.asarray(cov, dtype=np.float64) @ V.T
    d = np.diag(Q)
    plus = np.cos(a[:, None] + a[None, :]) * np.exp(-0.5 * (d[:, None] + d[None, :] + 2.0 * Q))
    minus = np.cos(a[:, None] - a[None, :]) * np.exp(-0.5 * (d[:, None] + d[None, :] - 2.0 * Q))
    R = (plus + minus) / D
    return 0.5 * (R + R.T)


def rff_client_covariances(D: int, K: int, rng: np.random.Generator, *, sigma_kappa: float = 5.0,
                           ridge: float = 0.0, lags=LITERAL_LAGS):
    r"""Per-client RFF covariances, every client with its own law (the experiments' data model, one map for all):
    :func:`rff_group_covariances` with ``groups = K``, so ``R`` is (K, D, D) with all :math:`R_k` different.

    >>> R, s2 = rff_client_covariances(6, 3, np.random.default_rng(0), ridge=1e-3)
    >>> R.shape, bool(np.all(np.linalg.eigvalsh(R) > 0)), bool(np.any(R[0] != R[1]))
    ((3, 6, 6), True, True)
    """
    return rff_group_covariances(D, K, rng, sigma_kappa=sigma_kappa, ridge=ridge, lags=lags)


def rff_group_covariances(D: int, groups: int, rng: np.random.Generator, *, sigma_kappa: float = 5.0,
                          ridge: float = 0.0, lags=LITERAL_LAGS):
    r"""One RFF map and one client law per group (docs/papers/paofed.md#choice-data): ``(R, sigma2_eta)``, R of shape
    (groups, D, D).

    Per group :math:`\theta \sim U(0.2, 0.9)`, :math:`\mu \sim U(-0.2, 0.2)`, :math:`\sigma^2_u \sim U(0.2, 1.2)`,
    :math:`\sigma^2_\eta \sim U(0.005, 0.03)`; :math:`V_{ij} \sim N(0, \sigma_\kappa^{-2})`,
    :math:`b_i \sim U[0, 2\pi)`; then :math:`R_c` = :func:`rff_covariance` :math:`+\ \mathrm{ridge}\cdot I`.
    """
    if isinstance(D, bool) or not isinstance(D, (int, np.integer)) or D < 1:
        raise ValueError(f"D must be an integer >= 1, got {D!r}")
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1:
        raise ValueError(f"groups must be an integer >= 1, got {groups!r}")
    if not (math.isfinite(sigma_kappa) and sigma_kappa > 0):
        raise ValueError(f"sigma_kappa must be a finite real in (0, inf), got {sigma_kappa!r}")
    if not (math.isfinite(ridge) and ridge >= 0):
        raise ValueError(f"ridge must be a finite real >= 0, got {ridge!r}")
    theta = rng.uniform(0.2, 0.9, groups)
    mu_in = rng.uniform(-0.2, 0.2, groups)
    var = rng.uniform(0.2, 1.2, groups)
    sigma2_eta = rng.uniform(0.005, 0.03, groups)
    L = len(lags)
    V = rng.standard_normal((D, L)) / sigma_kappa
    b = rng.uniform(0.0, 2.0 * np.pi, D)
    h = np.abs(np.subtract.outer(np.asarray(lags), np.asarray(lags)))
    R = np.empty((groups, D, D))
    for c in range(groups):
        mean = np.full(L, mu_in[c] * math.sqrt((1 + theta[c]) / (1 - theta[c])))
        R[c] = rff_covariance(V, b, mean, var[c] * theta[c] ** h) + ridge * np.eye(D)
    return R, sigma2_eta
