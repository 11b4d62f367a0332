r"""The PAO-Fed analysis instance: the parameters the mean / mean-square analysis depends on.

Notation of docs/papers/paofed.md#notation (seed 004_180cd372987d137b.txt, Chapter 4 and
Publication 4). The instance describes the analysis model (assumptions I1-I5 (docs/papers/paofed.md#assumption-i1 to
#assumption-i5) of docs/papers/paofed.md#assumptions): linear data
:math:`y = z^T w^\star + \eta`, every client has a sample every iteration, regressors independent
over clients and time, random selection matrices with :math:`E[M] = p_m I`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from theory._validate import readonly

__all__ = ["SELECTION_LAWS", "PAOFedInstance", "covariance_eigenvalues", "reference_instance",
           "selection_second_moment", "toeplitz_covariances"]

#: Selection laws of docs/papers/paofed.md#mean-square: uniform random m-subset, cyclic window at a random offset,
#: i.i.d. Bernoulli.
SELECTION_LAWS = ("subset", "window", "bernoulli")


def covariance_eigenvalues(R) -> np.ndarray:
    r"""Eigenvalues (ascending) of every :math:`R_k`, shape (K, D); equal matrices are decomposed once.

    Clients usually share a few covariances (the paper's 256 clients one): this turns K eigendecompositions of
    :math:`D \times D` matrices into as many as there are distinct :math:`R_k`.

    >>> import numpy as np
    >>> covariance_eigenvalues(np.stack([np.eye(2), 2 * np.eye(2), np.eye(2)])).tolist()
    [[1.0, 1.0], [2.0, 2.0], [1.0, 1.0]]
    """
    R = np.asarray(R, dtype=np.float64)
    index: dict[bytes, int] = {}
    inverse = np.array([index.setdefault(np.ascontiguousarray(Rk).tobytes(), len(index)) for Rk in R], dtype=np.int64)
    first = np.unique(inverse, return_index=True)[1]     # bitwise-equal matrices share one decomposition
    vals = np.linalg.eigvalsh(R[first])
    return vals[inverse]


def selection_second_moment(D: int, m: int, law: str) -> np.ndarray:
    r""":math:`\Pi = E[\mathrm{diag}(M)\,\mathrm{diag}(M)^T]` (D x D), so that :math:`E[M Y M] = \Pi \circ Y`.

    * ``subset``: :math:`\Pi_{ii} = m/D`, :math:`\Pi_{ij} = m(m-1)/(D(D-1))`;
    * ``window`` (cyclic window of length m at a uniform offset): :math:`\Pi_{ij} = (\max(0, m - a) +
      \max(0, m - (D - a)))/D`, :math:`a = (j - i) \bmod D` (the second term: windows that wrap round the end,
      non-zero once :math:`m + \min(a, D - a) > D`);
    * ``bernoulli`` (i.i.d. entries with probability :math:`p_m = m/D`): :math:`\Pi_{ij} = p_m^2`,
      :math:`\Pi_{ii} = p_m`.

    References
    ----------
    .. [1] docs/papers/paofed.md#mean-square (selection second moment; erratum E11 (docs/papers/paofed.md#erratum-e11)
           of P4 App. A, seed 004 line 2899).

    Examples
    --------
    Every law has :math:`E[M] = p_m I` on the diagonal:

    >>> import numpy as np
    >>> all(np.allclose(np.diag(selection_second_moment(5, 2, law)), 0.4) for law in SELECTION_LAWS)
    True
    """
    if isinstance(D, bool) or not isinstance(D, (int, np.integer)) or D < 1:
        raise ValueError(f"D must be an integer >= 1, got {D!r}")
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 1 <= m <= D:
        raise ValueError(f"m must be an integer in [1, D = {D}], got {m!r}")
    if law not in SELECTION_LAWS:
        raise ValueError(f"selection must be one of {', '.join(SELECTION_LAWS)}, got {law!r}")
    p = m / D
    if law == "subset":
        off = m * (m - 1) / (D * (D - 1)) if D > 1 else 0.0
        Pi = np.full((D, D), off)
    elif law == "window":
        i = np.arange(D)
        gap = (i[None, :] - i[:, None]) % D          # forward cyclic gap a = (j - i) mod D
        # windows holding both i and j: m - a of them without wrapping, m - (D - a) wrapping round the end
        Pi = (np.maximum(0, m - gap) + np.maximum(0, m - (D - gap))) / D
    else:
        Pi = np.full((D, D), p * p)
    np.fill_diagonal(Pi, p)
    return readonly(Pi, np.float64)


@dataclass(frozen=True, kw_only=True)
class PAOFedInstance:
    r"""Parameters of the PAO-Fed mean / mean-square analysis.

    Attributes
    ----------
    K, D, l_max, m : int
        Clients, model dimension, maximum delay, entries shared per message (:math:`1 \le m \le D`).
    selection : {"subset", "window", "bernoulli"}
        Law of the random selection matrices (docs/papers/paofed.md#mean-square).
    p : (K,) array
        Participation probabilities :math:`p_k \in (0, 1]`.
    delta : float
        Delay parameter :math:`\delta \in [0, 1)`: :math:`\pi_l = (1-\delta)\delta^l`.
    alpha : (l_max + 1,) array
        Staleness weights, :math:`\alpha_0 = 1`, :math:`\alpha_l \ge 0`.
    sigma2_eta : (K,) array
        Observation-noise variances :math:`\sigma^2_{\eta,k} \ge 0`.
    R : (K, D, D) array
        Regressor covariances :math:`R_k` (symmetric positive semi-definite).
    w_star : (D,) array
        Optimum :math:`w^\star`.
    mu : float
        Step size :math:`\mu > 0`.
    """

    K: int
    D: int
    l_max: int
    m: int
    selection: str
    p: np.ndarray
    delta: float
    alpha: np.ndarray
    sigma2_eta: np.ndarray
    R: np.ndarray
    w_star: np.ndarray
    mu: float

    def __post_init__(self) -> None:
        for name, lower in (("K", 1), ("D", 1), ("l_max", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lower:
                raise ValueError(f"{name} must be an integer >= {lower}, got {value!r}")
        if isinstance(self.m, bool) or not isinstance(self.m, (int, np.integer)) or not 1 <= self.m <= self.D:
            raise ValueError(f"m must be an integer in [1, D = {self.D}], got {self.m!r}")
        if self.selection not in SELECTION_LAWS:
            raise ValueError(f"selection must be one of {', '.join(SELECTION_LAWS)}, got {self.selection!r}")
        p = np.asarray(self.p, dtype=np.float64)
        if p.shape != (self.K,) or not np.all((p > 0) & (p <= 1)):
            raise ValueError(f"p must have shape (K,) = ({self.K},) with entries in (0, 1], got {p.tolist()}")
        if not (isinstance(self.delta, (int, float)) and 0.0 <= self.delta < 1.0):
            raise ValueError(f"delta must be a real in [0, 1), got {self.delta!r}")
        alpha = np.asarray(self.alpha, dtype=np.float64)
        if alpha.shape != (self.l_max + 1,) or alpha[0] != 1.0 or np.any(alpha < 0) or not np.all(np.isfinite(alpha)):
            raise ValueError(f"alpha must have shape (l_max + 1,) = ({self.l_max + 1},), alpha[0] = 1 and "
                             f"finite entries >= 0, got {alpha.tolist()}")
        s2 = np.asarray(self.sigma2_eta, dtype=np.float64)
        if s2.shape != (self.K,) or np.any(s2 < 0) or not np.all(np.isfinite(s2)):
            raise ValueError(f"sigma2_eta must have shape (K,) = ({self.K},) with finite entries >= 0")
        R = np.asarray(self.R, dtype=np.float64)
        if R.shape != (self.K, self.D, self.D) or not np.all(np.isfinite(R)):
            raise ValueError(f"R must have shape (K, D, D) = ({self.K}, {self.D}, {self.D}) with finite entries")
        asym = np.max(np.abs(R - np.swapaxes(R, 1, 2)))
        if asym > 1e-12 * max(1.0, np.max(np.abs(R))):
            raise ValueError(f"R must be symmetric (max asymmetry {asym:.3g})")
        if np.min(covariance_eigenvalues(R)) < -1e-12 * max(1.0, np.max(np.abs(R))):
            raise ValueError("R must be positive semi-definite")
        w = np.asarray(self.w_star, dtype=np.float64)
        if w.shape != (self.D,) or not np.all(np.isfinite(w)):
            raise ValueError(f"w_star must have shape (D,) = ({self.D},) with finite entries")
        if not (isinstance(self.mu, (int, float)) and math.isfinite(self.mu) and self.mu > 0):
            raise ValueError(f"mu must be a finite real in (0, inf), got {self.mu!r}")
        for name, value in (("p", p), ("alpha", alpha), ("sigma2_eta", s2), ("R", R), ("w_star", w)):
            object.__setattr__(self, name, readonly(value, np.float64))
        object.__setattr__(self, "delta", float(self.delta))
        object.__setattr__(self, "mu", float(self.mu))

    @property
    def p_m(self) -> float:
        """Selection density m / D."""
        return self.m / self.D

    @property
    def n_blocks(self) -> int:
        """N_b = 1 + K (l_max + 1) D-blocks of the extended state (docs/papers/paofed.md#extended-state, corrected
        layout)."""
        return 1 + self.K * (self.l_max + 1)

    @functools.cached_property
    def delay_pmf(self) -> np.ndarray:
        """pi_l = (1 - delta) delta^l, l = 0..l_max."""
        return readonly((1.0 - self.delta) * self.delta ** np.arange(self.l_max + 1), np.float64)

    @functools.cached_property
    def lambda_max(self) -> float:
        """max_{k,i} lambda_i(R_k)."""
        return float(np.max(covariance_eigenvalues(self.R)))

    @functools.cached_property
    def Pi(self) -> np.ndarray:
        """Selection second moment (see :func:`selection_second_moment`)."""
        return selection_second_moment(self.D, self.m, self.selection)

    def with_mu(self, mu: float) -> PAOFedInstance:
        """The same instance with another step size."""
        return PAOFedInstance(**{f: getattr(self, f) for f in self.__dataclass_fields__ if f != "mu"}, mu=mu)


def toeplitz_covariances(rhos, D: int) -> np.ndarray:
    r"""Per-client Toeplitz input covariances :math:`[R_k]_{ij} = \rho_k^{|i-j|}`, shape (K, D, D).

    >>> toeplitz_covariances([0.5], 3)[0]
    array([[1.  , 0.5 , 0.25],
           [0.5 , 1.  , 0.5 ],
           [0.25, 0.5 , 1.  ]])
    """
    rhos = np.asarray(rhos, dtype=np.float64)
    if rhos.ndim != 1 or not np.all(np.isfinite(rhos)) or np.any(np.abs(rhos) >= 1):
        raise ValueError(f"rhos must be a 1-D sequence of reals in (-1, 1), got {rhos.tolist()!r}")
    if isinstance(D, bool) or not isinstance(D, (int, np.integer)) or D < 1:
        raise ValueError(f"D must be an integer >= 1, got {D!r}")
    idx = np.arange(D)
    return rhos[:, None, None] ** np.abs(idx[:, None] - idx[None, :])


def reference_instance(mu_times_lambda_max: float = 0.1) -> PAOFedInstance:
    """The deterministic reference instance of docs/papers/paofed.md#instance-reference (mu given as mu *
    lambda_max)."""
    K, D = 4, 5
    R = toeplitz_covariances((0.1, 0.3, 0.5, 0.7), D)
    lam = float(np.max(np.linalg.eigvalsh(R)))
    return PAOFedInstance(K=K, D=D, l_max=2, m=2, selection="subset", p=np.array([0.9, 0.6, 0.4, 0.2]), delta=0.3,
                          alpha=np.array([1.0, 0.5, 0.25]), sigma2_eta=np.array([0.01, 0.02, 0.015, 0.03]), R=R,
                          w_star=np.array([1.0, -0.5, 0.25, 0.0, 0.5]), mu=mu_times_lambda_max / lam)
