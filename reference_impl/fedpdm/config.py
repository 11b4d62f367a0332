r"""Algorithm 1's configuration: every input of docs/papers/fedpdm.md#choices and every detail the seed leaves open
(erratum E16, docs/papers/fedpdm.md#erratum-e16), validated.

References
----------
.. [1] seed 001_322f61f9958f64f9.txt, Algorithm 1 (lines 158-180), line 263 (hyperparameters);
   docs/papers/fedpdm.md#choice-calibration, docs/papers/fedpdm.md#erratum-e5, docs/papers/fedpdm.md#erratum-e16,
   docs/papers/fedpdm.md#erratum-e25.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from reference_impl.fedpdm._validate import check_choice, check_int, check_real
from reference_impl.fedpdm.problem import FedPDMProblem

__all__ = ["FedPDMConfig"]


@dataclass(frozen=True, kw_only=True)
class FedPDMConfig:
    r"""Algorithm 1's inputs and every choice (docs/papers/fedpdm.md#choices) of docs/papers/fedpdm.md#erratum-e16,
    validated.

    Attributes
    ----------
    K : int
        Clients sampled per round for :math:`t \ge 1` (seed; experiment 5).
    rounds : int
        :math:`T` (experiment 300).
    batch_size : int
        :math:`b` (experiment 30).
    batch_rule : {"disjoint", "fresh"}
        choice ``disjoint`` (default; line 166 read as disjoint batches of one permutation within a round,
        consistent with :math:`q = Qb/|D_i|`; needs ``Q_max * batch_size <= |D_i|``) or ``fresh`` (each local
        step draws its own batch without replacement; ``batch_size = |D_i|`` gives full-batch steps).
    rho : float
        Penalty :math:`\rho > 0` (experiment 10).
    eta0, eta_schedule : float, {"inv_sqrt", "constant"}
        :math:`\eta^t = \eta_0/\sqrt{1+t}` (the seed's literal schedule with :math:`\eta_0 =
        1`, docs/papers/fedpdm.md#erratum-e25) or
        :math:`\eta^t = \eta_0`.
    nu : float
        Stopping threshold of (11) on :math:`\lVert g\rVert^2` (>= 0; 0 never stops early).
    Q_max : int
        choice Cap on the local steps (the seed's loop is unbounded,
        erratum E5 (docs/papers/fedpdm.md#erratum-e5)/erratum E31 (docs/papers/fedpdm.md#erratum-e31)).
    local_start : {"warm", "global"}
        choice :math:`x_i^{t,0} = x_i^t` (default) or :math:`x_0^t`.
    init : {"zeros", "normal"}
        choice :math:`x_0^0 = 0` (default) or :math:`\mathcal N(0, \text{init\_scale}^2 I)`; always
        :math:`x_i^0 = x_0^0`, :math:`\lambda_i^0 = 0`.
    first_round_all : bool
        :math:`S_0 = [N]` (line 161; default True).
    noise : {"dp", "none", "fixed"}
        ``dp``: :math:`\sigma_{i,t} = z\,s_{i,t}` by (18)-(19); ``none``: no noise (the "without DP" curves);
        ``fixed``: :math:`\sigma_{i,t} = ` ``sigma`` for every upload (Theorem 3's checks).
    sigma : float
        Per-coordinate noise std for ``noise = "fixed"``.
    epsilon, delta : float
        Per-round :math:`(\varepsilon, \delta)` for ``dp_calibration = "per_round_eps"`` (:math:`\delta` also the
        accounting target).
    dp_calibration : {"per_round_eps", "target_total_eps", "target_total_eps_bound"}
        ``per_round_eps``: :math:`z = \sqrt{2\ln(1.25/\delta)}/\varepsilon` (18). ``target_total_eps`` (the paper's
        accounting, Theorem 2): the smallest :math:`z` whose Poisson-subsampled-Gaussian RDP total at rate
        :math:`q = Q_{\max}b/|D_i|` over the **realised maximum participation count** :math:`\max_i n_i` of the
        (data-independent, pre-drawn) schedule is ``epsilon_total`` at :math:`\delta`; with the client state kept
        across rounds this total is **not** a bound on the privacy loss of the run (``privacy_model``).
        ``target_total_eps_bound``: the smallest :math:`z` for which the ``history_gaussian`` total of every client
        (a bound) is ``epsilon_total`` at :math:`\delta` (needs ``nu = 0`` or ``Q_max = 1``: a fixed :math:`Q`).
    epsilon_total : float
        Target :math:`\bar\varepsilon` for ``target_total_eps`` and ``target_total_eps_bound``.
    noise_Q : {"adaptive", "cap"}
        Q in (19): the realised :math:`Q_i^t` (literal; data dependent, E5) or ``Q_max`` (the fix).
    G : float or None
        A3's gradient bound; None takes :func:`certified_G` of the problem (a proven bound;
        erratum E32 (docs/papers/fedpdm.md#erratum-e32)).
    sensitivity_model : {"eq19", "history"}
        ``eq19``: :math:`\sigma_{i,t} = z\,s_{i,t}` as the seed calibrates (valid only for a fixed round-start
        state, erratum E4 (docs/papers/fedpdm.md#erratum-e4)). ``history``: :math:`\sigma_{i,t} = z\,\kappa_n s_{i,t}`
        with the history factor :math:`\kappa_n` of the client's :math:`n`-th participation computed from its actual
        :math:`\eta/Q` sequence (:func:`theory.privacy.history.history_factors_fedpdm`, no
        cap; docs/papers/fedpdm.md#review-notes), which makes each upload
        :math:`(\varepsilon, \delta)`-DP given the released history. Needs ``noise_Q = "cap"``. With warm start and
        :math:`(1-\eta\rho)^Q \le -1/3` the factor grows geometrically with the participation count (it is computed,
        never capped); a factor beyond the double range raises.
    privacy_model : {"history_gaussian", "paper"}
        How a run's privacy totals are accounted (:func:`reference_impl.fedpdm.accounting.account_run`).
        ``history_gaussian`` (default, a bound for Algorithm 1 as run): every upload is a Gaussian mechanism whose mean
        moves by at most the history sensitivity :math:`\kappa_n s_n` given the released history, composed exactly
        (:math:`\mu = \sqrt{\sum_n(\kappa_n s_n/\sigma_n)^2}`), without amplification by data subsampling (which the
        kept state voids). ``paper``: the paper's Theorem 2 accountant (Poisson-subsampled Gaussian at :math:`q`
        composed over the realised count), reported with a status saying it is not a bound for the run.
    prox_threshold_factor : float
        Threshold = factor :math:`\cdot\gamma/\rho`. 1 is the seed's (13); other values exist only to show that the
        wrong thresholds of
        erratum E12 (docs/papers/fedpdm.md#erratum-e12)/erratum E13 (docs/papers/fedpdm.md#erratum-e13)
        (:math:`\gamma/(N\rho)`, :math:`\rho\gamma`) miss the optimum.
    """

    K: int
    rounds: int
    batch_size: int
    rho: float
    eta0: float
    nu: float
    Q_max: int
    eta_schedule: str = "inv_sqrt"
    batch_rule: str = "disjoint"
    local_start: str = "warm"
    init: str = "zeros"
    init_scale: float = 0.0
    first_round_all: bool = True
    noise: str = "dp"
    sigma: float = 0.0
    epsilon: float = 1.0
    delta: float = 1e-5
    dp_calibration: str = "per_round_eps"
    epsilon_total: float = 7.0
    noise_Q: str = "cap"
    G: float | None = None
    prox_threshold_factor: float = 1.0
    sensitivity_model: str = "eq19"
    privacy_model: str = "history_gaussian"

    def __post_init__(self) -> None:
        check_int("K", self.K, 1)
        check_int("rounds", self.rounds, 1)
        check_int("batch_size", self.batch_size, 1)
        check_int("Q_max", self.Q_max, 1)
        check_real("rho", self.rho, 0.0, lower_open=True)
        check_real("eta0", self.eta0, 0.0, lower_open=True)
        check_real("nu", self.nu, 0.0)
        check_real("init_scale", self.init_scale, 0.0)
        check_real("sigma", self.sigma, 0.0)
        check_real("epsilon", self.epsilon, 0.0, lower_open=True)
        check_real("delta", self.delta, 0.0, 1.0, lower_open=True, upper_open=True)
        check_real("epsilon_total", self.epsilon_total, 0.0, lower_open=True)
        check_real("prox_threshold_factor", self.prox_threshold_factor, 0.0)
        if self.G is not None:
            check_real("G", self.G, 0.0, lower_open=True)
        check_choice("eta_schedule", self.eta_schedule, ("inv_sqrt", "constant"))
        check_choice("batch_rule", self.batch_rule, ("disjoint", "fresh"))
        check_choice("local_start", self.local_start, ("warm", "global"))
        check_choice("init", self.init, ("zeros", "normal"))
        check_choice("noise", self.noise, ("dp", "none", "fixed"))
        check_choice("dp_calibration", self.dp_calibration, ("per_round_eps", "target_total_eps",
                                                              "target_total_eps_bound"))
        check_choice("noise_Q", self.noise_Q, ("adaptive", "cap"))
        check_choice("sensitivity_model", self.sensitivity_model, ("eq19", "history"))
        check_choice("privacy_model", self.privacy_model, ("history_gaussian", "paper"))
        if self.dp_calibration == "target_total_eps_bound" and self.nu > 0.0 and self.Q_max > 1:
            raise ValueError(f"dp_calibration = 'target_total_eps_bound' needs a fixed number of local steps (nu = 0 "
                             f"or Q_max = 1), got nu = {self.nu!r} and Q_max = {self.Q_max}")
        if self.sensitivity_model == "history" and self.noise_Q != "cap":
            raise ValueError(f"sensitivity_model = 'history' needs noise_Q = 'cap' (Q fixed in advance), got noise_Q = "
                             f"{self.noise_Q!r}")
        if not isinstance(self.first_round_all, bool):
            raise ValueError(f"first_round_all must be true or false, got {self.first_round_all!r}")

    def eta(self, t: int) -> float:
        """Step size of round ``t``."""
        return self.eta0 / math.sqrt(1.0 + t) if self.eta_schedule == "inv_sqrt" else self.eta0

    def validate_for(self, problem: FedPDMProblem) -> None:
        """Checks that need the problem: K <= N, batch sizes, q < 1 for the accountant."""
        check_int("K", self.K, 1, problem.N)
        check_int("batch_size", self.batch_size, 1, problem.n)
        if self.batch_rule == "disjoint" and self.Q_max * self.batch_size > problem.n:
            raise ValueError(f"Q_max * batch_size must be <= |D_i| = {problem.n} with batch_rule = 'disjoint', got "
                             f"{self.Q_max} * {self.batch_size} = {self.Q_max * self.batch_size}")
        if self.noise == "dp" and self.dp_calibration == "target_total_eps" and self.q(problem) >= 1.0:
            raise ValueError(f"Q_max * batch_size must be < |D_i| = {problem.n} for target_total_eps (q < 1), got "
                             f"{self.Q_max * self.batch_size}")

    def q(self, problem: FedPDMProblem) -> float:
        r"""Data fraction per round :math:`q = Q_{\max} b/|D_i|` (Q public,
        erratum E5 (docs/papers/fedpdm.md#erratum-e5))."""
        return self.Q_max * self.batch_size / problem.n

