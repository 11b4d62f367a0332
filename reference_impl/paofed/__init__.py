r"""PAO-Fed and its baselines, vectorised over Monte-Carlo runs x clients x model entries.

Reference implementation of docs/papers/paofed.md (seed 004_180cd372987d137b.txt, Chapter 4,
Algorithm 3, eqs. (4.5)-(4.14); Publication P4, Algorithm 1, eqs. (7)-(15)):

* :func:`run_paofed` -- the algorithm itself, steps P1-P9 of docs/papers/paofed.md#algorithm, with every variant
  of docs/papers/paofed.md#variants (C0/U0/C1/U1/C2/U2), the baselines of docs/papers/paofed.md#choice-baselines
  (Online-Fed, Online-FedSGD, PSO-Fed, SignSGD), the asynchronous environment of docs/papers/paofed.md#participation,
  docs/papers/paofed.md#choice-delay-law (data arrival, Bernoulli availability, geometric message delays with a message
  buffer of ``l_max + 1`` slots per client and exactly-once delivery) and the optional overlap rule of P4
  (``overlap_rule``). With linear data (:class:`LinearData`) and the settings of :func:`faithful_setup` this is
  **SIM-F (docs/papers/paofed.md#choice-simulators)** of docs/papers/paofed.md#choice-simulators; with the experiment
  data of
  :mod:`reference_impl.paofed.data` it is **SIM-E (docs/papers/paofed.md#choice-simulators)**.
* :func:`run_analysis_model` -- **SIM-A (docs/papers/paofed.md#choice-simulators)**
  of docs/papers/paofed.md#choice-simulators: the model the mean-square analysis is exact for (independent draws of a,
  M, b, S and z at every iteration, assumptions I1-I5 (docs/papers/paofed.md#assumption-i1 to #assumption-i5)
  of docs/papers/paofed.md#assumptions).

Arrays are ``(runs, K, D)`` for clients and ``(runs, D)`` for the server; no Python loop over runs or
clients inside an iteration. Randomness only through the ``rng`` argument, which is split into three
independent streams (behaviour: data arrival, availability, delays; data: regressors, inputs, noise;
algorithm: random selections, server sub-sampling, sign noise). Every stream draws arrays of a fixed
shape at every iteration, so two algorithms run with generators from the same seed see exactly the same
asynchronous behaviour and the same data (docs/papers/paofed.md#experiments: "the asynchronous behaviours are simulated
once per Monte-Carlo iteration and are identical for all the algorithms", seed line 1097).

Iteration indices start at 0 (the seed counts from 1); ``curve[n]`` is the metric of the server model
:math:`w_n`, so ``curve[0]`` is the metric of :math:`w_0 = 0`.

References
----------
.. [1] seed 004_180cd372987d137b.txt, Chapter 4 (lines 789-1181): (4.5)-(4.6) selection rotation,
   (4.9)-(4.12) local and autonomous updates, (4.13)-(4.14) aggregation, Algorithm 3 (lines 936-939).
.. [2] docs/papers/paofed.md#algorithms (algorithms and choice (docs/papers/paofed.md#choices) defaults), 3.1-3.2
       (analysis model,
   extended state), 4.2 (simulators SIM-A / SIM-F / SIM-E).
"""

from reference_impl.paofed.analysis import run_analysis_model, time_average
from reference_impl.paofed.run_report import paofed_algorithm, paofed_instance, paofed_run_document
from reference_impl.paofed.selection import circshift_window, draw_selection
from reference_impl.paofed.setup import (
    ALGORITHMS,
    BITS_PER_PARAMETER,
    ONLINE_FED_FRACTION,
    PSO_FED_FRACTION,
    PSO_FED_M,
    SCHEDULES,
    SIGN_STEP,
    AlgorithmConfig,
    AnalysisRun,
    AsyncEnvironment,
    CommunicationCounts,
    LinearData,
    SimulationRun,
    StepRecord,
    algorithm_config,
    environment_from_instance,
    experiment_environment,
    faithful_setup,
    staleness_weights,
)
from reference_impl.paofed.simulation import (
    run_faithful,
    run_paofed,
)
from reference_impl.paofed.theory_vs_simulation import TheoryVsSimulation, theory_vs_simulation

__all__ = [
    "ALGORITHMS",
    "BITS_PER_PARAMETER",
    "ONLINE_FED_FRACTION",
    "PSO_FED_FRACTION",
    "PSO_FED_M",
    "SCHEDULES",
    "SIGN_STEP",
    "AlgorithmConfig",
    "AnalysisRun",
    "AsyncEnvironment",
    "CommunicationCounts",
    "LinearData",
    "SimulationRun",
    "StepRecord",
    "TheoryVsSimulation",
    "algorithm_config",
    "circshift_window",
    "draw_selection",
    "environment_from_instance",
    "experiment_environment",
    "faithful_setup",
    "run_analysis_model",
    "run_faithful",
    "run_paofed",
    "staleness_weights",
    "theory_vs_simulation",
    "time_average",
    "paofed_algorithm",
    "paofed_instance",
    "paofed_run_document",
]
