r"""The design of the PAO-Fed experiments X1-X11 (docs/papers/paofed.md#exp-x1 to #exp-x11) (thesis Section 4.4,
Publication 4 Section V) for
:mod:`verify.harness`.

Replicate :math:`i` is one Monte-Carlo run of SIM-E (docs/papers/paofed.md#choice-simulators)
(:func:`reference_impl.paofed.run_paofed`, one run) seeded by ``(EVALUATION_KEY, root seed, i)``: every arm of the
replicate sees the same data stream, availability draws and delays (common random numbers, seed l.1097 "drawn once per
Monte-Carlo run and shared by all algorithms"). The read-outs are the MSE-test in dB averaged over a window of that run:
``final`` (the last ``window`` iterations) or ``early`` (initial convergence). The setting (sizes, arms, environments,
data, unreported choices) is
:mod:`verify.paofed._experiment_setting`; the baselines' tuned steps are :mod:`verify.paofed._baseline_steps`.

The design is a lockstep design (:attr:`verify.harness.Design.lockstep`): per stage, the harness simulates the arms
of every grid point still open in one call, so the arms of a setting run in lockstep across the grid (a tuned
baseline at its three steps, X10 (docs/papers/paofed.md#exp-x10)'s C2 at its two steps); at the paper's size the first
claim checked of a figure simulates the stages of that figure's claims together
(:attr:`~verify.harness.Design.prefetch`, :func:`figure_of`), so a replicate's environment and data draws (about half
the cost of a claim's simulation there) are made once for the figure's claims, and no single claim carries the whole
family.
The arms a claim shares with other claims, or with other grid points, are simulated once per replicate
(:func:`arm_key`).
"""

from __future__ import annotations

import numpy as np

from reference_impl.paofed.simulation import run_paofed_arms
from verify.harness import Design, Pinned, replicate_seed
from verify.paofed._baseline_steps import config_at, prepare_steps, step_for, steps_report
from verify.paofed._experiment_setting import (
    EVALUATION_KEY,
    SCALES,
    Arm,
    Scale,
    data_source,
    environment,
)

__all__ = ["DESIGN", "FIGURE_SAMPLES_PER_BIN", "arm_key", "figure_of", "readout", "recorded", "simulate"]


#: MSE-test samples a figure bin keeps outside the read-out windows (:func:`recorded`).
FIGURE_SAMPLES_PER_BIN = 4


def recorded(scale: Scale) -> np.ndarray:
    """The iterations whose MSE-test :func:`simulate` computes (bool, iterations + 1): every iteration up to the end of
    the ``early`` window (the transient, where the curve falls fastest) and of the ``final`` window, elsewhere every
    ``stride``-th, ``stride = max(1, (iterations / bins) //`` :data:`FIGURE_SAMPLES_PER_BIN`), enough for the
    figures' bin means (every iteration at ci; every 5th of the bins of 20 at thorough, where the metric is a third
    of an arm's cost per iteration). The read-outs are unchanged."""
    mask = np.zeros(scale.iterations + 1, dtype=bool)
    mask[::max(1, scale.iterations // scale.bins // FIGURE_SAMPLES_PER_BIN)] = True
    mask[:scale.early[1] + 1] = True
    mask[scale.iterations - scale.window + 1:] = True
    return mask


def simulate(arms, point, scale: Scale, root_seed: int, replicates) -> list[np.ndarray]:
    """MSE-test curves (len(replicates), iterations + 1) of each arm (a :class:`verify.harness.Pinned` arm at its
    own point); replicate i seeded by :func:`verify.harness.replicate_seed` ``(EVALUATION_KEY, root seed, i)``.

    The arms of one setting and delay reading run in lockstep (:func:`reference_impl.paofed.run_paofed_arms`),
    whatever grid point each is pinned to: the replicate's environment and data draws are made once for all of them,
    and each curve is bit for bit the one a separate run of the arm on the replicate's seed gives, at the iterations
    :func:`recorded` names (NaN elsewhere).
    """
    unpinned = [Pinned.unpin(a, point) for a in arms]
    groups: dict = {}
    for index, (a, at) in enumerate(unpinned):
        groups.setdefault((a.setting, a.reading(at)), []).append(index)
    setups = {key: (environment(key[0], scale, key[1]), data_source(key[0], scale),
                    [config_at(unpinned[i][0], scale, unpinned[i][1], root_seed) for i in idx])
              for key, idx in groups.items()}
    out = [np.empty((len(replicates), scale.iterations + 1)) for _ in arms]
    record = recorded(scale)
    for j, i in enumerate(replicates):
        for key, idx in groups.items():
            env, data, configs = setups[key]
            rng = np.random.default_rng(replicate_seed((EVALUATION_KEY,), root_seed, i, scheme="key-list"))
            with np.errstate(over="ignore", invalid="ignore"):
                runs = run_paofed_arms(env, configs, data, scale.iterations, rng, runs=1, record=record)
            for k, run in zip(idx, runs, strict=True):
                out[k][j] = 10.0 ** (unpinned[k][0].shift_db / 10.0) * run.curve[:, 0]
    return out


def figure_of(experiment) -> str:
    """The paper figure a claim reads (``x10`` of ``paofed.experiment_x10_…``): the claims of one figure are prefetched
    together, so no claim carries the whole family's simulation (the figures share only a few arms, which the store
    keeps)."""
    return experiment.claim_id.split(".", 1)[1].split("_")[1]


def readout(name: str, scale: Scale, outcome: np.ndarray) -> np.ndarray:
    """MSE-test in dB averaged over the ``final`` window (last ``window`` iterations) or the ``early`` window."""
    outcome = np.asarray(outcome)
    if name == "final":
        window = outcome[:, scale.iterations - scale.window + 1:]
    elif name == "early":
        window = outcome[:, scale.early[0]:scale.early[1] + 1]
    else:
        raise ValueError(f"readout must be 'final' or 'early', got {name!r}")
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return 10.0 * np.log10(window.mean(axis=1))


def arm_key(arm: Arm, point: tuple, scale: Scale, root_seed: int) -> tuple:
    """What an arm's simulation at ``point`` depends on (the design's ``arm_key``): its identity, the grid choices it
    reads (:meth:`Arm.projection`) and its resolved baseline step, so an arm that ignores a choice (PAO-Fed-U1 under
    ``baseline step``) is simulated once for all its values. The m index is replaced by the m it selects (at the
    paper's size PAO-Fed-U1 with ``m_sweep[1]`` is PAO-Fed-U1 with the scale's m: one simulation)."""
    p = dict(point)
    m = scale.m if arm.m_index is None else scale.m_sweep[arm.m_index]
    identity = (arm.algorithm, arm.setting, m) + arm.key[3:]
    return (identity, arm.projection(p), step_for(arm, scale, p, root_seed) if arm.tuned else None)


#: Replicates: one look of 10 at ci, 10 then 20 at the paper's size, where the first claim checked simulates the
#: family's two stages together.
DESIGN = Design(namespace="paofed.experiments", simulate=simulate, readout=readout, scales=SCALES,
                stages={"ci": (10,), "thorough": (10, 20)}, chunk={"ci": 5, "thorough": 5}, arm_key=arm_key,
                lockstep=True, prefetch={"thorough": 2}, prefetch_group=figure_of, prepare=prepare_steps,
                report=steps_report)
