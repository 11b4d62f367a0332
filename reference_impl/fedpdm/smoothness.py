r"""The smoothness constant of FedPDM-DP's loss (25) as a certified bracket, at a cost linear in the data.

Assumption 1 of the paper asks every :math:`f_i` to be :math:`L`-smooth, and Theorem 3 needs
:math:`2\sqrt5 - 4 \le L \le \rho/4`; the step sizes are read against :math:`L` too. For the loss (25) the Hessian of
the logistic part is block diagonal over the classes with sample weights :math:`\sigma(s)\sigma(-s) \le 1/4`, and the
second derivative of :math:`x^2/(1+x^2)` lies in :math:`[-1/2, 2]`, so

.. math:: L = 0.25\,\max_i\max_k\lambda_{\max}(H_{ik}) + 2\beta, \qquad
          H_{ik} = \frac1{|D_i|}\sum_{j:\,k'_j = k} a_{ij}a_{ij}^\top

is a valid constant (docs/papers/fedpdm.md). Any larger value is valid too, so :func:`smoothness_bracket` returns a
bracket of the eigenvalue term whose *upper* end is certified: exact eigenvalues of small Gram matrices, or Lanczos
with a trace-based certificate, both with a rounding allowance. It works on each (client, class) block's smaller
side, so it never forms an :math:`f\times f` matrix for a block of fewer rows than features, and never diagonalises
a matrix of side above :data:`GRAM_FALLBACK_SIDE` (by default); :func:`estimate_smoothness_cost` bounds its work
and memory from the sizes alone, before any data is drawn.

References
----------
.. [1] Li, Huang, Wang, Chi, Quek, "Privacy-preserving federated primal-dual learning for non-convex problems with
   non-smooth regularization" (seed 001_322f61f9958f64f9.txt): Assumption 1, Theorem 3, loss (25).
.. [2] B. N. Parlett, *The Symmetric Eigenvalue Problem*, SIAM 1998, Thm. 4.5.1 (an interval
   :math:`[\theta - \lVert r\rVert, \theta + \lVert r\rVert]` around a Ritz value holds an eigenvalue) and Ch. 13
   (Lanczos with full reorthogonalisation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from reference_impl.fedpdm._validate import check_int, check_real

__all__ = [
    "CHUNK_ELEMENTS",
    "GRAM_FALLBACK_SIDE",
    "GRAM_SIDE_MAX",
    "LANCZOS_MAX_STEPS",
    "LANCZOS_RTOL",
    "SmoothnessBracket",
    "SmoothnessCost",
    "estimate_smoothness_cost",
    "smoothness_bracket",
]

#: Blocks whose smaller side is at most this are diagonalised exactly through their Gram matrix on that side.
GRAM_SIDE_MAX = 256
#: Default ``fallback_side``: a Lanczos block that has not closed its bracket is diagonalised exactly if its smaller
#: side is at most this.
GRAM_FALLBACK_SIDE = 1024
#: Lanczos steps per block at most (the Krylov space of a block of rank s is exhausted after s steps).
LANCZOS_MAX_STEPS = 300
#: Relative width of the bracket at which Lanczos stops.
LANCZOS_RTOL = 1e-10
#: Float64 elements a batch of gathered blocks and their Gram matrices may hold.
CHUNK_ELEMENTS = 2**22
_EPS = float(np.finfo(np.float64).eps)
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


@dataclass(frozen=True, kw_only=True)
class SmoothnessCost:
    """An upper estimate of the cost of :func:`smoothness_bracket`, known before any data is drawn.

    Attributes
    ----------
    work : float
        Multiply-adds (and copied elements) at most, the unit of the CLI's work limits.
    peak_elements : int
        Float64 elements of temporary memory at most (beyond the instance's own arrays).
    """

    work: float
    peak_elements: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "work", check_real("work", self.work, 0.0))
        object.__setattr__(self, "peak_elements", check_int("peak_elements", self.peak_elements, 0))


@dataclass(frozen=True, kw_only=True)
class SmoothnessBracket:
    r"""A certified bracket :math:`\Lambda^- \le \Lambda \le \Lambda^+` of the data term of the smoothness constant,

    .. math:: \Lambda = \max_i\max_k\lambda_{\max}(H_{ik}), \qquad
              H_{ik} = \frac1{|D_i|}\sum_{j:\,k'_j = k} a_{ij}a_{ij}^\top,

    and the constant :math:`L = 0.25\,\Lambda^+ + 2\beta` it certifies (Assumption 1 for the loss (25)).

    Attributes
    ----------
    lower, upper : float
        :math:`\Lambda^-` (an exact eigenvalue or a Ritz value, less a rounding allowance: errs low) and
        :math:`\Lambda^+` (an exact eigenvalue or a Lanczos certificate, plus the allowance: errs high).
    beta : float
        The weight :math:`\beta` of the non-convex term.
    gram_blocks, lanczos_blocks, fallback_blocks : int
        Non-empty (client, class) blocks bounded exactly through their Gram matrix (smaller side at most
        :data:`GRAM_SIDE_MAX`), by Lanczos, and by Lanczos then exactly (Lanczos did not close the bracket, side at
        most :data:`GRAM_FALLBACK_SIDE`); the last are also counted in ``lanczos_blocks``.
    lanczos_steps : int
        The most Lanczos steps one block took (0 without Lanczos).
    converged : bool
        Whether every block's bracket closed (exact, or Lanczos to :data:`LANCZOS_RTOL`); if not, ``upper`` is still
        certified, only wider.
    work : float
        Multiply-adds (and copied elements) spent, at most :func:`estimate_smoothness_cost`'s ``work``.
    """

    lower: float
    upper: float
    beta: float
    gram_blocks: int
    lanczos_blocks: int
    fallback_blocks: int
    lanczos_steps: int
    converged: bool
    work: float

    def __post_init__(self) -> None:
        lower = check_real("lower", self.lower, 0.0)
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", check_real("upper", self.upper, lower))
        object.__setattr__(self, "beta", check_real("beta", self.beta, 0.0))
        check_int("gram_blocks", self.gram_blocks, 0)
        check_int("lanczos_blocks", self.lanczos_blocks, 0)
        check_int("fallback_blocks", self.fallback_blocks, 0, self.lanczos_blocks)
        check_int("lanczos_steps", self.lanczos_steps, 0)
        if not isinstance(self.converged, bool):
            raise ValueError(f"converged must be a bool, got {self.converged!r}")
        object.__setattr__(self, "work", check_real("work", self.work, 0.0))

    @property
    def route(self) -> str:
        """``"gram"``, ``"lanczos"`` or ``"gram+lanczos"``: how the blocks were bounded (``"none"`` without blocks)."""
        kinds = [name for name, count in (("gram", self.gram_blocks), ("lanczos", self.lanczos_blocks)) if count]
        return "+".join(kinds) or "none"

    @property
    def L_smooth(self) -> float:
        """The certified smoothness constant :math:`0.25\\,\\Lambda^+ + 2\\beta` (an upper bound)."""
        return 0.25 * self.upper + 2.0 * self.beta

    @property
    def L_lower(self) -> float:
        """:math:`0.25\\,\\Lambda^- + 2\\beta`: the same formula at the lower end (the formula's value lies between)."""
        return 0.25 * self.lower + 2.0 * self.beta


def _gram_row_work(f: int, s: int) -> float:
    """Work per row of a block of ``s <= r`` sides through its Gram matrix: gather, trace, product, eigensolver
    (``4 s^3 <= 4 s^2 r``)."""
    return f * (2.0 + s) + 4.0 * s * s


def _lanczos_row_work(f: int, k: int) -> float:
    """Work per row of a block (``k <= s <= r``) through ``k`` Lanczos steps: gather and trace, two products per step,
    the reorthogonalisation, restarts and the eigenproblems of the tridiagonal matrix at the checks."""
    return 2.0 * f + k * (2.0 * f + 16.0 * k + 18.0) + 31.0 * k * k


def _block_cost(r: int, f: int, max_steps: int, fallback_side: int) -> tuple[float, int]:
    """Work per row and peak elements of one block of ``r`` rows (at most: Lanczos takes ``max_steps`` and falls
    back when allowed)."""
    s = min(r, f)
    if s <= GRAM_SIDE_MAX:
        # gathered blocks with their row indices; Gram matrices with the eigensolver's copy, traces and eigenvalues
        return _gram_row_work(f, s), max(CHUNK_ELEMENTS, r * f + s * s) + max(2 * CHUNK_ELEMENTS, 2 * s * s + 4 * s + r)
    k = min(s, max_steps)
    fallback = s if s <= fallback_side else 0
    work = _lanczos_row_work(f, k) + (_gram_row_work(f, fallback) if fallback else 0.0)
    peak = r * f + r + (k + 6) * s + 6 * k * k + 4 * k + 2 * fallback * fallback + fallback  # block, basis, T
    return work, peak


def estimate_smoothness_cost(N: int, n: int, n_features: int, n_classes: int = 1, *,
                             max_steps: int = LANCZOS_MAX_STEPS, fallback_side: int = GRAM_FALLBACK_SIDE,
                             class_counts=None) -> SmoothnessCost:
    r"""Upper estimate of the cost of :func:`smoothness_bracket` from the sizes (no data needed) or the class counts.

    Every (client, class) block of :math:`r` rows and :math:`f` = ``n_features`` columns costs at most :math:`r`
    times a per-row figure, nondecreasing in :math:`r`: the Gram route :math:`f(2 + s) + 4s^2` with
    :math:`s = \min(r, f)` at most :data:`GRAM_SIDE_MAX`; Lanczos :math:`2f + k(2f + 16k + 18) + 31k^2` with
    :math:`k` at most ``max_steps``, plus the Gram route at :math:`s` up to ``fallback_side`` when it falls back.
    Without ``class_counts`` every client's rows are taken in one class (the worst case, :math:`r = n`): at most
    :math:`Nn` times the figure at :math:`n`, linear in the data :math:`Nnf`; with them, the sum over the actual
    blocks. Lanczos blocks are counted at ``max_steps`` steps and a fallback: the instances of the paper and of
    fedcheck's examples need a few dozen steps and no fallback (``work`` of the returned :class:`SmoothnessBracket`
    says what was spent). Pass smaller ``max_steps`` / ``fallback_side`` to both functions to cap the cost; the
    bracket stays certified, only possibly wider.

    Parameters
    ----------
    N, n, n_features : int
        Clients, samples per client :math:`|D_i|`, features per class row (:math:`d/m`); all >= 1.
    n_classes : int
        :math:`m \ge 1`.
    max_steps, fallback_side : int
        As passed to :func:`smoothness_bracket`.
    class_counts : (N, n_classes) array of int, optional
        Samples of each class at each client (rows summing to ``n``), e.g. ``np.stack([np.bincount(l, minlength=m)
        for l in labels])``: a tighter estimate once the labels are known.

    Returns
    -------
    SmoothnessCost
        ``work`` in multiply-adds, ``peak_elements`` in float64 elements; both are upper bounds.

    Examples
    --------
    >>> from reference_impl.fedpdm.problem import instance_nc
    >>> problem = instance_nc(np.random.default_rng(0), N=4, n=30, d=500)
    >>> estimate_smoothness_cost(4, 30, 500).work >= smoothness_bracket(problem).work
    True
    """
    N, n, f = check_int("N", N, 1), check_int("n", n, 1), check_int("n_features", n_features, 1)
    m, max_steps = check_int("n_classes", n_classes, 1), check_int("max_steps", max_steps, 1)
    fallback_side = check_int("fallback_side", fallback_side, 0)
    if class_counts is None:  # the worst case: all rows in one class (also a Gram-route block for the memory)
        sizes, weights = np.array([min(n, GRAM_SIDE_MAX), n]), np.array([0, N * n])
    else:
        counts = np.asarray(class_counts)
        if counts.shape != (N, m) or counts.dtype.kind not in "iu" or np.any(counts < 0) or np.any(
                counts.sum(axis=1) != n):
            raise ValueError(f"class_counts must be non-negative integers of shape (N, n_classes) = ({N}, {m}) with "
                             f"rows summing to n = {n}, got shape {counts.shape} dtype {counts.dtype}")
        sizes, multiplicity = np.unique(counts[counts > 0], return_counts=True)
        weights = sizes * multiplicity
    work, peak = 0.0, 0
    for r, rows in zip(sizes.tolist(), weights.tolist(), strict=True):
        per_row, block_peak = _block_cost(int(r), f, max_steps, fallback_side)
        work += rows * per_row
        peak = max(peak, block_peak)
    bookkeeping = 2.0 * math.log2(n + 1) + 4.0
    work += float(N) * n * bookkeeping + 2.0 * N * m
    return SmoothnessCost(work=work, peak_elements=int(3 * N * n + 4 * N * m + peak))


def _allowance(r: int, f: int, s: int, steps: int, trace: float) -> float:
    """Rounding allowance of a block's eigenvalue: first-order bounds of the products (gamma_{r+f} ||W||_F^2/|D_i|)
    and a backward-stable eigensolver / twice-reorthogonalised Lanczos (8 (s + steps) eps ||H||, constant assumed),
    over sqrt(steps + 1) Lanczos columns; it errs high."""
    return (r + f + 8.0 * (s + steps) + 16.0) * math.sqrt(steps + 1.0) * _EPS * trace


def _class_groups(labels: np.ndarray, m: int):
    """Yield ``(r, clients, starts, order)``: the clients holding exactly ``r >= 1`` samples of one class, the start
    of that class in each one's label-sorted order (``order``; None when every sample has class 0)."""
    N, _ = labels.shape
    counts = np.bincount((labels + m * np.arange(N)[:, None]).ravel(), minlength=N * m).reshape(N, m)
    order = np.argsort(labels, axis=1, kind="stable") if m > 1 else None
    starts = np.cumsum(counts, axis=1) - counts
    for k in range(m):
        rk = counts[:, k]
        for r in np.unique(rk[rk > 0]):
            clients = np.flatnonzero(rk == r)
            yield int(r), clients, starts[clients, k], order


def _gather(features: np.ndarray, clients: np.ndarray, starts: np.ndarray, r: int, order) -> np.ndarray:
    """The ``(len(clients), r, f)`` blocks of one class (a view when they are whole, consecutive clients)."""
    if order is None or r == features.shape[1]:
        if clients[-1] - clients[0] == clients.size - 1:
            return features[clients[0]:clients[-1] + 1]
        return features[clients]
    rows = order[clients[:, None], starts[:, None] + np.arange(r)]
    return features[clients[:, None], rows]


def _gram_bracket(blocks: np.ndarray, n: int) -> tuple[float, float]:
    """Exact top eigenvalues of the blocks' :math:`W^\\top W/n` through their Gram matrices on the smaller side;
    ``(max lower, max upper)`` with the rounding allowance."""
    _, r, f = blocks.shape
    if r <= f:
        gram = blocks @ np.swapaxes(blocks, 1, 2)
    else:
        gram = np.swapaxes(blocks, 1, 2) @ blocks
    gram /= n
    trace = np.einsum("cii->c", gram)
    top = np.linalg.eigvalsh(gram)[:, -1]
    allowance = np.array([_allowance(r, f, min(r, f), 0, float(t)) for t in trace])
    return float(np.max(top - allowance)), float(np.max(top + allowance))


def _start_vector(s: int, shift: int) -> np.ndarray:
    """A fixed positive, generic start vector (golden-ratio sequence in [0.5, 1.5)); ``shift`` gives others."""
    return 0.5 + np.mod((np.arange(s) + 1.0 + 7919.0 * shift) * _GOLDEN, 1.0)


def _certified_upper(theta: np.ndarray, resid: np.ndarray, beta: float, trace: float, trace_T: float) -> float:
    r"""A certified upper bound of :math:`\lambda_{\max}(H)` (PSD, trace ``trace``) from a Lanczos decomposition
    :math:`HV = VT + \beta v e_k^\top` with Ritz values ``theta`` (descending) and residual norms ``resid``.

    The smallest of three bounds:

    * intervals :math:`[\theta_j - r_j, \theta_j + r_j]` each hold an eigenvalue; for a pairwise disjoint set
      :math:`J` holding the top one, an eigenvalue above every interval of :math:`J` leaves the others to the
      trace, so :math:`\lambda_{\max} \le \max(\max_J(\theta_j + r_j), \operatorname{tr}H - \sum_J(\theta_j - r_j)_+)`;
    * in the basis :math:`[V, V_\perp]`, :math:`H = [[T, B^\top], [B, C]]` with :math:`\lVert B\rVert = \beta` and
      :math:`\lambda_{\max}(C) \le \operatorname{tr}C = \operatorname{tr}H - \operatorname{tr}T =: c`, so
      :math:`\lambda_{\max} \le \lambda_{\max}\begin{pmatrix}\theta_1 & \beta\\ \beta & c\end{pmatrix}`;
    * :math:`\lambda_{\max} \le \operatorname{tr}H`.
    """
    chosen = [0]
    for j in range(1, theta.size):
        if all(abs(theta[j] - theta[i]) > resid[j] + resid[i] for i in chosen):
            chosen.append(j)
    top = max(theta[j] + resid[j] for j in chosen)
    tail = trace - sum(max(theta[j] - resid[j], 0.0) for j in chosen)
    c = max(trace - trace_T, 0.0)
    block = 0.5 * (theta[0] + c) + math.hypot(0.5 * (theta[0] - c), beta)
    return float(min(max(top, tail), block, trace))


def _restart(V: np.ndarray, k: int, s: int, attempt: int) -> np.ndarray:
    """A unit vector orthogonal to ``V[:k]`` (``k < s``): a new golden-ratio vector, or if it lies too close to the
    span, the least covered coordinate vector (its squared distance to the span is at least ``1 - k/s >= 1/s``)."""
    basis = V[:k]
    w = _start_vector(s, attempt)
    for _ in range(2):
        w = w - basis.T @ (basis @ w)
    if float(w @ w) < 0.25 * (1.0 - k / s) * float(_start_vector(s, attempt) @ _start_vector(s, attempt)):
        w = np.eye(1, s, int(np.argmin(np.einsum("ks,ks->s", basis, basis))))[0]
        for _ in range(2):
            w = w - basis.T @ (basis @ w)
    return w / np.linalg.norm(w)


def _lanczos_bracket(W: np.ndarray, n: int, *, max_steps: int, rtol: float):
    r"""Certified bracket of :math:`\lambda_{\max}(W^\top W/n)` by Lanczos with full reorthogonalisation.

    The operator is applied on the smaller side (:math:`WW^\top/n` or :math:`W^\top W/n`, same non-zero spectrum)
    as two products, never formed; an invariant subspace restarts from a vector orthogonal to the basis, so after
    :math:`s = \min(r, f)` steps the basis spans the space and the bracket is exact. Stops when the certified
    :math:`\Lambda^+` (:func:`_certified_upper`) is within ``rtol`` of :math:`\theta_1` (checked at geometrically
    spaced steps) or after ``max_steps``. Returns ``(lower, upper, steps, converged, work)``, allowance included.
    """
    r, f = W.shape
    s = min(r, f)
    trace = float(np.einsum("ij,ij->", W, W)) / n
    work = 2.0 * r * f
    if trace == 0.0:
        return 0.0, 0.0, 0, True, work
    if r <= f:
        def apply(v):
            return W @ (W.T @ v) / n
    else:
        def apply(v):
            return W.T @ (W @ v) / n
    cap = min(s, max_steps)
    V = np.zeros((cap + 1, s))
    alpha, betas = np.zeros(cap), np.zeros(cap)
    v = _start_vector(s, 0)
    V[0] = v / np.linalg.norm(v)
    breakdown = s * _EPS * trace
    next_check, attempts = 4, 0
    for j in range(cap):
        k = j + 1
        w = apply(V[j])
        alpha[j] = V[j] @ w
        for _ in range(2):  # full reorthogonalisation, twice (CGS2)
            w -= V[:k].T @ (V[:k] @ w)
        betas[j] = float(np.linalg.norm(w))
        work += 2.0 * r * f + 8.0 * k * s + 12.0 * s
        if betas[j] <= breakdown:  # invariant subspace: T decouples, the next vector restarts orthogonally
            betas[j] = 0.0
        if k >= next_check or k == cap:
            next_check = max(k + 1, int(1.25 * k))
            T = np.diag(alpha[:k]) + np.diag(betas[: k - 1], 1) + np.diag(betas[: k - 1], -1)
            theta, S = np.linalg.eigh(T)
            work += 10.0 * k**3
            theta, S = theta[::-1], S[:, ::-1]
            upper = _certified_upper(theta, betas[j] * np.abs(S[-1]), float(betas[j]), trace, float(alpha[:k].sum()))
            lower = max(float(theta[0]), 0.0)
            closed = upper - lower <= rtol * lower
            if closed or k == cap:
                allowance = _allowance(r, f, s, k, trace)
                return max(lower - allowance, 0.0), upper + allowance, k, bool(closed), work
        if betas[j] == 0.0:
            attempts += 1
            V[k] = _restart(V, k, s, attempts)
            work += 8.0 * k * s + 6.0 * s
        else:
            V[k] = w / betas[j]
    raise AssertionError("unreachable: the last step returns")  # pragma: no cover


def smoothness_bracket(problem, *, max_steps: int = LANCZOS_MAX_STEPS, rtol: float = LANCZOS_RTOL,
                       fallback_side: int = GRAM_FALLBACK_SIDE) -> SmoothnessBracket:
    r"""Certified bracket of :math:`\Lambda = \max_i\max_k\lambda_{\max}(H_{ik})`, :math:`H_{ik} = \frac1{|D_i|}
    \sum_{j: k'_j = k}a_{ij}a_{ij}^\top`, at a cost linear in the data (:func:`estimate_smoothness_cost`).

    Each (client, class) block :math:`W` (:math:`r` rows of class :math:`k`, :math:`f` features) is bounded on its
    smaller side :math:`s = \min(r, f)`:

    * :math:`s \le` :data:`GRAM_SIDE_MAX`: the :math:`s\times s` Gram matrix, batched over the clients with the same
      :math:`r`, diagonalised exactly;
    * otherwise Lanczos on :math:`W^\top W/|D_i|` applied as two products, with the certified upper bound of
      :func:`_certified_upper` (a Ritz value alone is only a lower bound, and a Ritz value plus its residual norm
      only brackets *some* eigenvalue: the trace rules out a larger one that the Krylov space missed). At most
      ``max_steps`` steps; if the bracket is still open and :math:`s \le` ``fallback_side``, the block is
      diagonalised exactly instead, else its certified but wider bracket stands (``converged`` False).

    Both ends carry a rounding allowance, so ``lower`` errs low and ``upper`` high: the exact value of the formula
    lies in between. BLAS runs on one thread (the products are small; threads only contend).

    Parameters
    ----------
    problem : reference_impl.fedpdm.problem.FedPDMProblem
        Its ``features`` (N, n, f), ``labels`` (N, n), ``n_classes`` and ``beta`` are read.
    max_steps : int
        Lanczos steps per block at most (>= 1).
    rtol : float
        Relative bracket width at which Lanczos stops, in (0, 1).
    fallback_side : int
        Largest smaller side of a block diagonalised exactly when Lanczos left its bracket open (>= 0; 0: never).

    Returns
    -------
    SmoothnessBracket

    Examples
    --------
    The bracket holds the top eigenvalue computed the direct way (one client, :math:`d = 300 > |D_i| = 20`):

    >>> from reference_impl.fedpdm.problem import instance_nc
    >>> problem = instance_nc(np.random.default_rng(1), N=1, n=20, d=300)
    >>> a = problem.features[0]
    >>> lam = np.linalg.eigvalsh(a.T @ a / 20)[-1]
    >>> b = smoothness_bracket(problem)
    >>> bool(b.lower <= lam <= b.upper and b.upper - b.lower < 1e-12)
    True
    """
    max_steps = check_int("max_steps", max_steps, 1)
    rtol = check_real("rtol", rtol, 0.0, 1.0, lower_open=True, upper_open=True)
    fallback_side = check_int("fallback_side", fallback_side, 0)
    with threadpool_limits(limits=1, user_api="blas"):
        return _bracket(problem, max_steps, rtol, fallback_side)


def _bracket(problem, max_steps: int, rtol: float, fallback_side: int) -> SmoothnessBracket:
    features, n, f = problem.features, problem.n, problem.n_features
    lower = upper = 0.0
    counts = {"gram": 0, "lanczos": 0, "fallback": 0, "steps": 0}
    converged = True
    work = float(problem.N * n * (2.0 * math.log2(n + 1) + 4.0) + 2.0 * problem.N * problem.n_classes)
    for r, clients, starts, order in _class_groups(problem.labels, problem.n_classes):
        s = min(r, f)
        if s <= GRAM_SIDE_MAX:
            counts["gram"] += clients.size
            chunk = max(1, CHUNK_ELEMENTS // (r * f + s * s))
            for c0 in range(0, clients.size, chunk):
                part = _gather(features, clients[c0:c0 + chunk], starts[c0:c0 + chunk], r, order)
                lo, hi = _gram_bracket(part, n)
                lower, upper = max(lower, lo), max(upper, hi)
                work += part.shape[0] * r * _gram_row_work(f, s)
            continue
        for c, start in zip(clients, starts, strict=True):
            W = _gather(features, np.array([c]), np.array([start]), r, order)[0]
            lo, hi, steps, closed, spent = _lanczos_bracket(W, n, max_steps=max_steps, rtol=rtol)
            counts["lanczos"] += 1
            counts["steps"] = max(counts["steps"], steps)
            work += spent
            if not closed and s <= fallback_side:
                lo, hi = _gram_bracket(W[None], n)
                counts["fallback"] += 1
                work += r * _gram_row_work(f, s)
                closed = True
            converged &= closed
            lower, upper = max(lower, lo), max(upper, hi)
    return SmoothnessBracket(lower=max(lower, 0.0), upper=upper, beta=problem.beta, gram_blocks=counts["gram"],
                             lanczos_blocks=counts["lanczos"], fallback_blocks=counts["fallback"],
                             lanczos_steps=counts["steps"], converged=converged, work=work)
