r"""The cost of an NPFL(-RL) / NFL run from the sizes alone: :func:`estimate_run_cost`, for a caller (the CLI) that
must refuse a run before it allocates anything.

One iteration of :func:`reference_impl.npfl_rl.run_npfl` costs, per run, :math:`O(K d^2)` for the primal steps in
the eigenbasis of :math:`H_k` and :math:`O(|E| d)` for the two sparse graph products (the consensus neighbours and
the inter-cluster averages, one stored entry per directed edge); the set-up adds one eigendecomposition per client,
:math:`O(K d^3)`. Memory is linear in :math:`K d^2` and the edges: no K x K array is formed.

References
----------
.. [1] seed 004_180cd372987d137b.txt, thesis Chapter 6, eqs. (6.5)-(6.14), Algorithm 6, lines 1637-1722;
   Publication 7, eqs. (5)-(14), Algorithm 1, lines 3489-3562.
.. [2] docs/papers/npfl_rl.md (the iteration as implemented).
"""

from __future__ import annotations

from reference_impl.cost import RunCost
from reference_impl.npfl_rl.config import POLICIES
from theory._validate import positive_int

__all__ = ["RunCost", "estimate_run_cost"]


def estimate_run_cost(K: int, d: int, n_edges: int, *, iterations: int, runs: int = 1, policy: str = "fixed",
                      epochs: int = 1, D_max: int = 0) -> RunCost:
    r"""Upper estimate of :func:`~reference_impl.npfl_rl.run_npfl`'s work and memory on ``runs`` instances of K
    clients, before anything is drawn.

    Per iteration and run: the primal step :math:`2Kd^2` (two products with the eigenvectors of :math:`H_k`) and
    :math:`25Kd` elementwise, the graph products :math:`2|E|d` (every directed edge is a consensus or an
    inter-cluster entry), and with a controller (``policy`` ``"dpg"`` or ``"sac"``) ``epochs`` inner steps of at
    most :math:`8Kd^2 + 20Kd` each (SAC: two primal maps and two validation values; DPG: the derivative, :math:`5Kd^2`).
    Set-up: one eigendecomposition per client, :math:`10d^3`, and the sparse operators, :math:`40|E|`; with ``D_max``
    the instances' statistics :math:`H_k, b_k` of the three data sets, :math:`3 D_{\max}(d^2 + d)` per client.

    Memory: per run, the instance (:math:`H_k` of the three sets, :math:`3Kd^2`; the sparse graph; with ``D_max``
    the data, :math:`3KD_{\max}(d + 1)` twice while the generator holds its draws, and 12 small arrays per client,
    counted as :math:`200K`), the set-up (eigenvectors, :math:`H_v`, the stacked :math:`H`:
    :math:`3Kd^2`; the operators and their construction, :math:`20|E|`), the state and an iteration's temporaries
    (:math:`30Kd`), and the recorded curves and :math:`\tau` trajectories, :math:`2(N+1)K`. Everything is linear in
    K, :math:`d^2` and the edges. Not counted: drawing the graph
    (:func:`~reference_impl.npfl_rl.data.synthetic_problem`; its pair-by-pair sampler, used up to 2,000 clients,
    holds :math:`K^2` elements per draw, and :func:`~reference_impl.npfl_rl.data.estimate_graph_draws` gives the
    number of draws).

    Parameters
    ----------
    K, d : int
        Clients (>= 2) and features (>= 1).
    n_edges : int
        Undirected edges :math:`|E|`, in :math:`[0, K(K-1)/2]` (an Erdős–Rényi draw of mean degree :math:`\bar d`
        has :math:`K\bar d/2` on average; pass an upper value, e.g. the mean plus six standard deviations).
    iterations, runs : int
        :math:`N` and the stacked runs R (>= 1).
    policy : {"fixed", "dpg", "sac"}
        The controller of :math:`\tau` (as in :class:`~reference_impl.npfl_rl.NPFLConfig`; NFL is ``"fixed"``).
    epochs : int
        Inner policy steps per iteration (>= 1; ignored for ``"fixed"``).
    D_max : int
        Rows per client and data set at most (>= 0); 0 leaves the instances' data and statistics out (instances
        already drawn).

    Returns
    -------
    RunCost
        ``work`` in multiply-adds, ``peak_elements`` in float64 elements; both are upper estimates.

    Examples
    --------
    >>> small = estimate_run_cost(1_000, 20, 5_000, iterations=100)
    >>> large = estimate_run_cost(10_000, 20, 50_000, iterations=100)
    >>> bool(large.work <= 10 * small.work and large.peak_elements <= 10 * small.peak_elements)
    True
    """
    K, d = positive_int("K", K, 2), positive_int("d", d)
    max_edges = K * (K - 1) // 2
    if isinstance(n_edges, bool) or not isinstance(n_edges, int) or not 0 <= n_edges <= max_edges:
        raise ValueError(f"n_edges must be an integer in [0, K(K - 1)/2] = [0, {max_edges}], got {n_edges!r}")
    N, R = positive_int("iterations", iterations), positive_int("runs", runs)
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    epochs = positive_int("epochs", epochs)
    D_max = positive_int("D_max", D_max, 0)
    E = n_edges
    inner = 0 if policy == "fixed" else epochs
    per_iteration = K * (2 * d * d + 25 * d + 30) + 2 * E * d + inner * K * (8 * d * d + 20 * d + 60)
    setup = K * 10 * d ** 3 + 40 * E + 20 * K + (3 * K * D_max * (d * d + 3 * d) if D_max else 0)
    work = float(R) * (N * per_iteration + setup)
    data = 6 * K * D_max * (d + 1) + 200 * K  # drawn and read-only copies, 12 small arrays per client
    instance = 3 * K * d * d + 4 * K * d + 5 * K + 3 * E + 1 + (data if D_max else 0)
    structure = 3 * K * d * d + 4 * K * d + 10 * K + 20 * E + 4
    state = 30 * K * d + 20 * K
    records = 2 * (N + 1) * K + 3 * (N + 1) + K * d + K
    return RunCost(work=work, peak_elements=int(R * (instance + structure + state + records)))
