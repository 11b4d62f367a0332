r"""First- and second-order moments of the PAO-Fed analysis model (docs/papers/paofed.md#expectations,
docs/papers/paofed.md#mean-square) and the mean matrix.

Extended state (docs/papers/paofed.md#extended-state, corrected layout errata E1-E3 (docs/papers/paofed.md#erratum-e1 to
#erratum-e3)): :math:`N_b = 1 + K(l_{\max}+1)` blocks of size
:math:`D`; block 0 is the server, block :math:`\iota(l,k) = lK + k` (:math:`l = 0..l_{\max}`,
:math:`k = 1..K`) holds :math:`w_{k,n}` for :math:`l = 0` and :math:`w_{k,n+1-l}` for :math:`l \ge 1`.
Every D-block of :math:`E[A_e]` and :math:`E[B_e]` is a scalar multiple of :math:`I_D`, so both are
returned as :math:`N_b \times N_b` scalar matrices.

Under the independence assumptions I1-I5 (docs/papers/paofed.md#assumption-i1 to #assumption-i5)
of docs/papers/paofed.md#assumptions (selection law with :math:`E[M] = p_m I`,
:math:`b_{k,n,l} \sim \mathrm{Bernoulli}(p_k\pi_l)` independent over :math:`(k,l)`):

.. math::

    c_k = p_k p_m, \qquad
    \bar\beta_{kl} = E[\beta_{k,n,l}] = \alpha_l r_{kl}\sum_{j=0}^{K-1}\frac{P(X_l^{(-k)} = j)}{1+j},
    \qquad r_{kl} = p_k\pi_l,

with :math:`X_l^{(-k)} = \sum_{i \ne k}\mathrm{Bernoulli}(r_{il})` Poisson-binomial.

References
----------
.. [1] seed 004_180cd372987d137b.txt, P4 App. A lines 2887-2913 (E[A_e], E[B_e]; E[B_e] is only asserted
   right-stochastic there), P4 (16)-(24) lines 2617-2692, Ch. (4.15)-(4.21) lines 930-969.
.. [2] docs/papers/paofed.md#extended-state (layout), 3.4 (E[A_e], E[B_e], beta-bar), 3.5 (E[beta beta']).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from theory._validate import readonly
from theory.msd.instance import PAOFedInstance, covariance_eigenvalues

__all__ = [
    "AnalysisMoments",
    "analysis_moments",
    "beta_moments",
    "block_index",
    "expected_A",
    "expected_B",
    "expected_server_weight",
    "mean_matrix",
    "mean_operator",
    "nonempty_group_probability",
    "poisson_binomial_pmf",
    "source_blocks",
]


def _prob_vector(name: str, r) -> np.ndarray:
    r = np.asarray(r, dtype=np.float64)
    if r.ndim != 1 or not np.all((r >= 0.0) & (r <= 1.0)):
        raise ValueError(f"{name} must be a one-dimensional array of probabilities in [0, 1], got {r!r}")
    return r


def poisson_binomial_pmf(r) -> np.ndarray:
    r"""pmf of :math:`\sum_i \mathrm{Bernoulli}(r_i)` (independent), by convolving :math:`[1-r_i, r_i]`.

    Exact up to rounding: every coefficient is a sum of non-negative products, so the relative error
    of each entry is at most :math:`\gamma_{2n}`.

    Raises
    ------
    ValueError
        If ``r`` is not a vector of probabilities in [0, 1].

    References
    ----------
    .. [1] docs/papers/paofed.md#expectations ("pmf by convolving the vectors [1 - r, r]").

    Examples
    --------
    >>> import numpy as np
    >>> pmf = poisson_binomial_pmf([0.5, 0.5])
    >>> bool(np.allclose(pmf, [0.25, 0.5, 0.25]))
    True
    """
    r = _prob_vector("r", r)
    pmf = np.ones(1)
    for ri in r:
        pmf = np.convolve(pmf, [1.0 - ri, ri])
    return pmf


def _leave_one_out_pmfs(r: np.ndarray, which: np.ndarray) -> np.ndarray:
    """Row i: pmf (length K) of the sum of all Bernoulli(r_j) except j = which[i] (prefix/suffix convolution)."""
    K = r.size
    prefix = [np.ones(1)]
    for ri in r:
        prefix.append(np.convolve(prefix[-1], [1.0 - ri, ri]))
    suffix = [np.ones(1)]
    for ri in r[::-1]:
        suffix.append(np.convolve(suffix[-1], [1.0 - ri, ri]))
    suffix = suffix[::-1]  # suffix[k] = pmf of r[k:]
    return np.stack([np.convolve(prefix[k], suffix[k + 1]) for k in which]).reshape(len(which), K)


def _remove_bernoulli(pmf: np.ndarray, r: np.ndarray) -> np.ndarray:
    r"""Deconvolve a Bernoulli(r) factor from pmfs (last axis), in the numerically stable direction.

    ``pmf`` has shape (..., n + 1) and ``r`` broadcasts against pmf[..., 0]; returns shape (..., n).
    Forward recursion :math:`q_j = (f_j - r q_{j-1})/(1-r)` for :math:`r \le 1/2` (error amplification
    :math:`r/(1-r) \le 1` per step), backward :math:`q_{j-1} = (f_j - (1-r) q_j)/r` otherwise.
    """
    n = pmf.shape[-1] - 1
    r = np.broadcast_to(r, pmf.shape[:-1])
    fwd = r <= 0.5
    q = np.zeros(pmf.shape[:-1] + (n,))
    with np.errstate(divide="ignore", invalid="ignore"):
        one_minus = np.where(fwd, 1.0 - r, 1.0)
        rr = np.where(fwd, 1.0, r)
        # forward
        qf = np.zeros_like(q)
        prev = np.zeros(pmf.shape[:-1])
        for j in range(n):
            prev = (pmf[..., j] - r * prev) / one_minus
            qf[..., j] = prev
        # backward
        qb = np.zeros_like(q)
        nxt = np.zeros(pmf.shape[:-1])
        for j in range(n, 0, -1):
            nxt = (pmf[..., j] - (1.0 - r) * nxt) / rr
            qb[..., j - 1] = nxt
    q = np.where(fwd[..., None], qf, qb)
    # probabilities: only rounding (a few ulps) can make an entry negative; the entries for k = k' (removing
    # a factor that is not there) are garbage and never used
    return np.maximum(q, 0.0)


def nonempty_group_probability(p, delta: float, l_max: int) -> np.ndarray:
    r""":math:`P(\mathcal K_{n,l} \ne \emptyset) = 1 - \prod_k (1 - p_k\pi_l)`, :math:`l = 0..l_{\max}`.

    Equal to :math:`\sum_k \bar\beta_{kl}/\alpha_l` (docs/papers/paofed.md#expectations).

    Raises
    ------
    ValueError
        If ``p`` has an entry outside (0, 1], ``delta`` is outside [0, 1) or ``l_max`` < 0.

    Examples
    --------
    >>> import numpy as np
    >>> bool(np.isclose(nonempty_group_probability([1.0], 0.0, 0)[0], 1.0))
    True
    """
    p = _prob_vector("p", p)
    if not (isinstance(delta, (int, float, np.floating)) and 0.0 <= float(delta) < 1.0):
        raise ValueError(f"delta must be a real in [0, 1), got {delta!r}")
    if isinstance(l_max, bool) or not isinstance(l_max, (int, np.integer)) or l_max < 0:
        raise ValueError(f"l_max must be an integer >= 0, got {l_max!r}")
    pi = (1.0 - delta) * float(delta) ** np.arange(l_max + 1)
    r = p[:, None] * pi[None, :]
    return 1.0 - np.prod(1.0 - r, axis=0)


def beta_moments(p, delta: float, alpha, l_max: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Moments of the aggregation weights :math:`\beta_{k,n,l} = \alpha_l b_{k,n,l}/\max(1, |\mathcal K_{n,l}|)`.

    .. math::

        \bar\beta_{kl} &= \alpha_l r_{kl}\sum_j \frac{P(X_l^{(-k)} = j)}{1+j},\\
        E[\beta_{kl}^2] &= \alpha_l^2 r_{kl}\sum_j \frac{P(X_l^{(-k)} = j)}{(1+j)^2},\\
        E[\beta_{kl}\beta_{k'l}] &= \alpha_l^2 r_{kl} r_{k'l}\sum_j \frac{P(X_l^{(-k,-k')} = j)}{(2+j)^2}
        \quad (k \ne k'),

    and :math:`E[\beta_{kl}\beta_{k'l'}] = \bar\beta_{kl}\bar\beta_{k'l'}` for :math:`l \ne l'`
    (:math:`r_{kl} = p_k\pi_l`, :math:`\pi_l = (1-\delta)\delta^l`).

    Returns
    -------
    beta_bar : (K, l_max + 1) array
    second : (l_max + 1, K, K) array
        ``second[l, k, k'] = E[beta_{kl} beta_{k'l}]`` (same delay group).

    Raises
    ------
    ValueError
        If a parameter is outside its range (p in (0, 1], delta in [0, 1), alpha >= 0 of length l_max + 1).

    Notes
    -----
    Hypothesis I5 (docs/papers/paofed.md#assumptions): :math:`b_{k,n,l} \sim \mathrm{Bernoulli}(p_k\pi_l)` independent
    over
    :math:`(k, l)`. Leave-one-out pmfs by prefix/suffix convolution; leave-two-out pmfs by a stable
    deconvolution of one more Bernoulli factor. Clients with equal :math:`p_k` are exchangeable, so
    each moment is computed once per group of equal :math:`p_k` (the paper's 256 clients form 4 groups).

    References
    ----------
    .. [1] docs/papers/paofed.md#expectations (beta-bar) and 3.5 (E[beta_q beta_q']); the seed gives neither
       (seed 004_180cd372987d137b.txt, P4 App. A, lines 2887-2913, only asserts row-stochasticity).

    Examples
    --------
    The weights of a non-empty group sum to :math:`\alpha_l`:

    >>> import numpy as np
    >>> bb, _ = beta_moments([0.9, 0.5, 0.2], 0.3, [1.0, 0.5], 1)
    >>> bool(np.allclose(bb.sum(axis=0), [1.0, 0.5] * nonempty_group_probability([0.9, 0.5, 0.2], 0.3, 1)))
    True
    """
    p = _prob_vector("p", p)
    if np.any(p <= 0.0):
        raise ValueError(f"p must have entries in (0, 1], got {p!r}")
    if isinstance(l_max, bool) or not isinstance(l_max, (int, np.integer)) or l_max < 0:
        raise ValueError(f"l_max must be an integer >= 0, got {l_max!r}")
    if not (isinstance(delta, (int, float, np.floating)) and 0.0 <= float(delta) < 1.0):
        raise ValueError(f"delta must be a real in [0, 1), got {delta!r}")
    alpha = np.asarray(alpha, dtype=np.float64)
    if alpha.shape != (l_max + 1,) or np.any(alpha < 0) or not np.all(np.isfinite(alpha)):
        raise ValueError(f"alpha must have shape (l_max + 1,) = ({l_max + 1},) with finite entries >= 0, "
                         f"got {alpha!r}")
    K = p.size
    pi = (1.0 - float(delta)) * float(delta) ** np.arange(l_max + 1)
    # Clients with equal p are exchangeable: compute each moment once per group of equal p.
    values, reps, group = np.unique(p, return_index=True, return_inverse=True)
    counts = np.bincount(group, minlength=values.size)
    beta_bar = np.zeros((K, l_max + 1))
    second = np.zeros((l_max + 1, K, K))
    j = np.arange(K, dtype=np.float64)
    for ell in range(l_max + 1):
        r = p * pi[ell]
        rg = values * pi[ell]
        loo = _leave_one_out_pmfs(r, reps)  # (G, K): pmf of X^(-k) for a representative k of each group
        bb_g = alpha[ell] * rg * (loo @ (1.0 / (1.0 + j)))
        sq_g = alpha[ell] ** 2 * rg * (loo @ (1.0 / (1.0 + j) ** 2))
        beta_bar[:, ell] = bb_g[group]
        if K >= 2:
            G = values.size
            pmfs = np.broadcast_to(loo[:, None, :], (G, G, K))
            lto = _remove_bernoulli(pmfs, np.broadcast_to(rg[None, :], (G, G)))  # [g, g']: removes k and k'
            pair_g = alpha[ell] ** 2 * np.outer(rg, rg) * (lto @ (1.0 / (2.0 + j[:-1]) ** 2))
            pair_g = 0.5 * (pair_g + pair_g.T)  # the two deconvolution orders agree up to rounding
            # a pair (g, g) exists only if the group has two members; other entries are never read
            pair_g[np.diag_indices(G)] = np.where(counts >= 2, np.diag(pair_g), 0.0)
            second[ell] = pair_g[np.ix_(group, group)]
        np.fill_diagonal(second[ell], sq_g[group])
    return beta_bar, second


def block_index(ell: int, k: int, K: int) -> int:
    r"""Block index :math:`\iota(l,k) = lK + k` of client :math:`k \in \{1..K\}`, delay group :math:`l`.

    Examples
    --------
    >>> block_index(0, 1, 4), block_index(2, 4, 4)
    (1, 12)
    """
    if not 1 <= k <= K or ell < 0:
        raise ValueError(f"need 1 <= k <= K = {K} and ell >= 0, got k = {k!r}, ell = {ell!r}")
    return ell * K + k


def source_blocks(K: int, l_max: int) -> np.ndarray:
    r"""``src[i]``: the block that block row :math:`i \ge 1` of :math:`B_e` copies (``src[0] = 0``).

    :math:`\mathrm{src}(\iota(0,k)) = \iota(0,k)`, :math:`\mathrm{src}(\iota(1,k)) = \iota(0,k)`,
    :math:`\mathrm{src}(\iota(l,k)) = \iota(l-1,k)` for :math:`l \ge 2` (docs/papers/paofed.md#extended-state).

    Examples
    --------
    >>> source_blocks(2, 2).tolist()
    [0, 1, 2, 1, 2, 3, 4]
    """
    nb = 1 + K * (l_max + 1)
    i = np.arange(nb)
    return np.where(i <= K, i, i - K)


@dataclass(frozen=True, kw_only=True)
class AnalysisMoments:
    r"""Everything the mean / mean-square operators need, precomputed from an instance.

    Unlike :class:`~theory.msd.instance.PAOFedInstance` the selection is described by its moments
    (:math:`p_m`, :math:`\Pi`) only, so reduced problems (e.g. the scalar per-coordinate problems of
    :mod:`theory.msd.diagonal`, :math:`D = 1` with :math:`p_m = m/D` of the full model) are representable.

    Attributes
    ----------
    K, D, l_max : int
    p : (K,) array
        Participation probabilities.
    p_m : float
        Selection density :math:`E[M] = p_m I`.
    Pi : (D, D) array
        Selection second moment :math:`E[\mathrm{diag}(M)\mathrm{diag}(M)^T]` (diagonal :math:`p_m`).
    beta_bar : (K, l_max + 1) array
    beta_second : (l_max + 1, K, K) array
        :math:`E[\beta_{kl}\beta_{k'l}]` (see :func:`beta_moments`).
    R : (K, D, D) array
    sigma2_eta : (K,) array
    w_star : (D,) array
    mu : float
    """

    K: int
    D: int
    l_max: int
    p: np.ndarray
    p_m: float
    Pi: np.ndarray
    beta_bar: np.ndarray
    beta_second: np.ndarray
    R: np.ndarray
    sigma2_eta: np.ndarray
    w_star: np.ndarray
    mu: float

    def __post_init__(self) -> None:
        for name in ("K", "D"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if isinstance(self.l_max, bool) or not isinstance(self.l_max, (int, np.integer)) or self.l_max < 0:
            raise ValueError(f"l_max must be an integer >= 0, got {self.l_max!r}")
        K, D, L = int(self.K), int(self.D), int(self.l_max)
        if not (0.0 < float(self.p_m) <= 1.0):
            raise ValueError(f"p_m must be in (0, 1], got {self.p_m!r}")
        shapes = {"p": (K,), "Pi": (D, D), "beta_bar": (K, L + 1), "beta_second": (L + 1, K, K),
                  "R": (K, D, D), "sigma2_eta": (K,), "w_star": (D,)}
        for name, shape in shapes.items():
            a = np.asarray(getattr(self, name), dtype=np.float64)
            if a.shape != shape or not np.all(np.isfinite(a)):
                raise ValueError(f"{name} must have shape {shape} with finite entries, got shape {a.shape}")
            object.__setattr__(self, name, readonly(a, np.float64))
        if not np.allclose(np.diag(self.Pi), self.p_m, rtol=0, atol=4 * np.finfo(float).eps):
            raise ValueError(f"Pi must have diagonal p_m = {self.p_m}, got {np.diag(self.Pi)!r}")
        if not (isinstance(self.mu, (int, float, np.floating)) and math.isfinite(self.mu) and self.mu >= 0):
            raise ValueError(f"mu must be a finite real >= 0, got {self.mu!r}")
        object.__setattr__(self, "p_m", float(self.p_m))
        object.__setattr__(self, "mu", float(self.mu))
        object.__setattr__(self, "K", K)
        object.__setattr__(self, "D", D)
        object.__setattr__(self, "l_max", L)

    @property
    def n_blocks(self) -> int:
        """N_b = 1 + K (l_max + 1)."""
        return 1 + self.K * (self.l_max + 1)

    @property
    def N(self) -> int:
        """N = N_b D, the size of the extended state."""
        return self.n_blocks * self.D

    @property
    def c(self) -> np.ndarray:
        """c_k = p_k p_m."""
        return self.p * self.p_m

    @functools.cached_property
    def lambda_max(self) -> float:
        """max_{k,i} lambda_i(R_k) (computed once: K eigendecompositions of D x D matrices)."""
        return float(np.max(covariance_eigenvalues(self.R)))

    def with_mu(self, mu: float) -> AnalysisMoments:
        """The same moments with another step size."""
        return dataclasses.replace(self, mu=mu)


def analysis_moments(instance: PAOFedInstance) -> AnalysisMoments:
    """The :class:`AnalysisMoments` of a :class:`~theory.msd.instance.PAOFedInstance`.

    Examples
    --------
    >>> from theory.msd.instance import reference_instance
    >>> mom = analysis_moments(reference_instance())
    >>> mom.n_blocks, mom.N
    (13, 65)
    """
    if not isinstance(instance, PAOFedInstance):
        raise TypeError(f"instance must be a PAOFedInstance, got {type(instance).__name__}")
    bb, second = beta_moments(instance.p, instance.delta, instance.alpha, instance.l_max)
    return AnalysisMoments(K=instance.K, D=instance.D, l_max=instance.l_max, p=instance.p, p_m=instance.p_m,
                           Pi=instance.Pi, beta_bar=bb, beta_second=second, R=instance.R,
                           sigma2_eta=instance.sigma2_eta, w_star=instance.w_star, mu=instance.mu)


def _moments(x) -> AnalysisMoments:
    if isinstance(x, AnalysisMoments):
        return x
    if isinstance(x, PAOFedInstance):
        return analysis_moments(x)
    raise TypeError(f"expected a PAOFedInstance or AnalysisMoments, got {type(x).__name__}")


def expected_A(x, *, sparse: bool = False):
    r""":math:`E[A_e]` as an :math:`N_b \times N_b` scalar matrix (each entry multiplies :math:`I_D`).

    Identity except rows :math:`\iota(0,k)`: entry :math:`c_k` at column 0 and :math:`1 - c_k` on the
    diagonal, :math:`c_k = p_k p_m`.

    References
    ----------
    .. [1] seed 004_180cd372987d137b.txt, P4 App. A lines 2889-2895; docs/papers/paofed.md#expectations.

    Examples
    --------
    Right-stochastic:

    >>> import numpy as np
    >>> from theory.msd.instance import reference_instance
    >>> bool(np.allclose(expected_A(reference_instance()).sum(axis=1), 1.0))
    True
    """
    m = _moments(x)
    nb, K = m.n_blocks, m.K
    rows = np.concatenate([np.arange(nb), np.arange(1, K + 1)])
    cols = np.concatenate([np.arange(nb), np.zeros(K, dtype=int)])
    vals = np.concatenate([np.ones(1), 1.0 - m.c, np.ones(nb - 1 - K), m.c])
    A = sp.csr_matrix((vals, (rows, cols)), shape=(nb, nb))
    return A if sparse else A.toarray()


def expected_server_weight(x) -> float:
    r""":math:`E[B_n] = (1 - p_m\sum_{l,k}\bar\beta_{kl}) I`: the server's weight on its own model.

    Negative when :math:`p_m\sum_l \alpha_l P(\mathcal K_{n,l} \ne \emptyset) > 1`
    (erratum E8, docs/papers/paofed.md#erratum-e8).

    Examples
    --------
    >>> from theory.msd.instance import reference_instance
    >>> 0 < expected_server_weight(reference_instance()) < 1
    True
    """
    m = _moments(x)
    return float(1.0 - m.p_m * np.sum(m.beta_bar))


def expected_B(x, *, sparse: bool = False):
    r""":math:`E[B_e]` as an :math:`N_b \times N_b` scalar matrix.

    Row 0: :math:`1 - p_m\sum_q\bar\beta_q` at column 0 and :math:`p_m\bar\beta_q` at column
    :math:`\iota(q)`; row :math:`i \ge 1`: 1 at column :math:`\mathrm{src}(i)` (docs/papers/paofed.md#extended-state,
    docs/papers/paofed.md#expectations).

    References
    ----------
    .. [1] seed 004_180cd372987d137b.txt, P4 (21) line 2645 with the off-by-one
           erratum E2 (docs/papers/paofed.md#erratum-e2) corrected, App. A
       lines 2901-2913; docs/papers/paofed.md#expectations.

    Examples
    --------
    >>> import numpy as np
    >>> from theory.msd.instance import reference_instance
    >>> bool(np.allclose(expected_B(reference_instance()).sum(axis=1), 1.0))
    True
    """
    m = _moments(x)
    nb, K, L = m.n_blocks, m.K, m.l_max
    src = source_blocks(K, L)
    q_cols = np.arange(1, nb)  # iota(l, k) = l K + k, beta_bar[k-1, l]
    q_vals = m.p_m * m.beta_bar.T.reshape(-1)
    rows = np.concatenate([[0], np.zeros(nb - 1, dtype=int), np.arange(1, nb)])
    cols = np.concatenate([[0], q_cols, src[1:]])
    vals = np.concatenate([[1.0 - np.sum(q_vals)], q_vals, np.ones(nb - 1)])
    B = sp.csr_matrix((vals, (rows, cols)), shape=(nb, nb))
    return B if sparse else B.toarray()


def _r_e_blocks(m: AnalysisMoments, mu: float) -> sp.csr_matrix:
    """I_N - mu R_e as a sparse N x N matrix."""
    nb, K, D = m.n_blocks, m.K, m.D
    blocks = [sp.identity(D, format="csr")] + [sp.csr_matrix(np.eye(D) - mu * m.R[k]) for k in range(K)]
    blocks += [sp.identity(D * (nb - 1 - K), format="csr")] if nb - 1 - K > 0 else []
    return sp.block_diag(blocks, format="csr")


def mean_operator(x, mu: float | None = None) -> sp.csr_matrix:
    r"""The mean matrix :math:`\mathcal M(\mu) = E[B_e](I_N - \mu R_e)E[A_e]` as a sparse :math:`N \times N` matrix.

    :math:`E[\tilde w_{e,n+1}] = \mathcal M(\mu)E[\tilde w_{e,n}]`, :math:`R_e = \mathrm{blockdiag}(0_D,
    R_1, \dots, R_K, 0_{DKl_{\max}})`. ``mu`` defaults to the instance's step size.

    References
    ----------
    .. [1] seed 004_180cd372987d137b.txt, P4 (24) line 2690 (R_e with "R_1, R_1" read as R_1, R_2
           erratum E3 (docs/papers/paofed.md#erratum-e3));
       docs/papers/paofed.md#expectations.
    """
    m = _moments(x)
    mu = m.mu if mu is None else float(mu)
    if not (math.isfinite(mu) and mu >= 0):
        raise ValueError(f"mu must be a finite real >= 0, got {mu!r}")
    I_D = sp.identity(m.D, format="csr")
    EA = sp.kron(expected_A(m, sparse=True), I_D, format="csr")
    EB = sp.kron(expected_B(m, sparse=True), I_D, format="csr")
    return (EB @ _r_e_blocks(m, mu) @ EA).tocsr()


def mean_matrix(x, mu: float | None = None) -> np.ndarray:
    r"""Dense :math:`\mathcal M(\mu)` (see :func:`mean_operator`); refuses :math:`N > 5000`.

    Examples
    --------
    :math:`\mathcal M(\mu)` maps :math:`w_e^\star`-aligned directions :math:`1 \otimes v` with
    :math:`R_k v = 0` to themselves (rows of :math:`E[B_e]`, :math:`E[A_e]` sum to one); at
    :math:`\mu = 0` it is right-stochastic:

    >>> import numpy as np
    >>> from theory.msd.instance import reference_instance
    >>> bool(np.allclose(mean_matrix(reference_instance(), 0.0).sum(axis=1), 1.0))
    True
    """
    m = _moments(x)
    if m.N > 5000:
        raise ValueError(f"N = N_b D = {m.N} is too large for a dense mean matrix (allowed N <= 5000); "
                         "use mean_operator")
    return mean_operator(m, mu).toarray()
