"""The steps of PAO-Fed's tuned baselines (thesis Section 4.4: "learning rates set to yield identical initial
convergence rates"), resolved before the experiments' arms are simulated.

A tuned baseline's step is matched to PAO-Fed-U1's MSE-test at ``tune_at`` within the 0.5 dB tolerance
(:func:`reference_impl.paofed.tuning.match_initial_rates`), and the smallest and largest steps still within it are
found (:func:`reference_impl.paofed.tuning.steps_within_tolerances`): the grid choice ``baseline step`` picks one.
The tuning runs have their own seed (``(TUNING_KEY, root seed)``), so the choice of step does not select on the
replicates that decide. :func:`prepare_steps` (the design's ``prepare``) resolves them once in the calling process,
for several experiments together, and hands them to the simulation inside the arms; :func:`steps_report` (the
design's ``report``) records them in a result's details.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
from collections.abc import Mapping, Sequence

from reference_impl.paofed.tuning import (
    StepMatch,
    StepRange,
    initial_rate_db,
    match_initial_rates,
    step_field,
    steps_within_tolerances,
)
from verify.harness import replicate_seed
from verify.paofed._experiment_setting import (
    DEFAULTS,
    STEP,
    TUNING_KEY,
    TUNING_REFERENCE,
    Arm,
    Scale,
    base_config,
    data_source,
    environment,
)
from verify.records import CheckContext

__all__ = ["config_at", "prepare_steps", "step_for", "steps_report", "tuning_seed", "tuning_target"]


def tuning_seed(root_seed: int) -> int:
    """The seed of the tuning runs: :func:`verify.harness.replicate_seed` of ``TUNING_KEY`` without a replicate."""
    return int(replicate_seed((TUNING_KEY,), root_seed, scheme="key-list").generate_state(1)[0])


@functools.lru_cache(maxsize=16)
def tuning_target(setting: str, reading: str | None, scale: Scale, root_seed: int) -> float:
    """PAO-Fed-U1's MSE-test (dB) at ``tune_at`` on the tuning runs: the target of every baseline of a setting."""
    reference = Arm(label="U1", algorithm=TUNING_REFERENCE, setting=setting)
    return initial_rate_db(environment(setting, scale, reading), base_config(reference, scale, {}),
                           data_source(setting, scale), scale.tune_at, tuning_seed(root_seed), scale.tune_runs)


def _tune_group(group: tuple) -> list[tuple[StepMatch, StepRange]]:
    """(match, band) of each baseline of ``group = (tuning arms, reading, scale, root seed, target dB)``, arms of one
    setting: their searches run in lockstep on the shared tuning runs
    (:func:`reference_impl.paofed.tuning.match_initial_rates`), each result as if tuned alone."""
    arms, reading, scale, root_seed, target = group
    env, data = environment(arms[0].setting, scale, reading), data_source(arms[0].setting, scale)
    configs = [base_config(arm, scale, {}) for arm in arms]
    seed = tuning_seed(root_seed)
    matches = match_initial_rates(env, configs, data, target_db=target, n_eval=scale.tune_at, seed=seed,
                                  runs=scale.tune_runs)
    bands = steps_within_tolerances(env, configs, data, matches, n_eval=scale.tune_at, seed=seed,
                                    runs=scale.tune_runs, refine=4)
    return list(zip(matches, bands, strict=True))


#: (arm key, reading, scale, root seed) -> (StepMatch, StepRange), bounded.
_TUNED: collections.OrderedDict = collections.OrderedDict()
_TUNED_SIZE = 64


def _tuning_arm(arm: Arm) -> Arm:
    """The part of an arm its tuning depends on (algorithm, setting, fractions), unmutated."""
    return Arm(label="tuning", algorithm=arm.algorithm, setting=arm.setting, m_index=arm.m_index,
               server_fraction=arm.server_fraction, full_downlink=arm.full_downlink)


def _tunings(units: list[tuple], executor=None) -> dict:
    """Tune the units not yet known (through ``executor``, the units of one setting and reading together),
    remember them; ``{unit: (match, band)}``."""
    missing = [u for u in dict.fromkeys(units) if u not in _TUNED]
    if missing:
        groups: dict[tuple, list[tuple]] = {}
        for unit in missing:
            groups.setdefault((unit[0].setting, *unit[1:]), []).append(unit)
        work = [(tuple(u[0] for u in members), reading, scale, seed, tuning_target(setting, reading, scale, seed))
                for (setting, reading, scale, seed), members in groups.items()]
        done = executor.map(_tune_group, work) if executor is not None else [_tune_group(w) for w in work]
        for members, results in zip(groups.values(), done, strict=True):
            for unit, result in zip(members, results, strict=True):
                _TUNED[unit] = result
                while len(_TUNED) > _TUNED_SIZE:
                    _TUNED.popitem(last=False)
    return {u: _TUNED[u] if u in _TUNED else _tune_group(((u[0],), *u[1:], tuning_target(u[0].setting, *u[1:])))[0]
            for u in units}


def _pick(match: StepMatch, band: StepRange, choice: str) -> float:
    return {"matched": match.step, "low": band.low, "high": band.high}[choice]


def step_for(arm: Arm, scale: Scale, point: Mapping, root_seed: int) -> float:
    """The tuned step of a baseline arm at ``point`` (from the arm's resolved steps, else tuned here)."""
    reading, choice = arm.reading(point), point.get(STEP, DEFAULTS[STEP])
    for (r, c), step in arm.steps:
        if (r, c) == (reading, choice):
            return step
    match, band = _tunings([(_tuning_arm(arm), reading, scale, root_seed)])[(_tuning_arm(arm), reading, scale,
                                                                              root_seed)]
    return _pick(match, band, choice)


def config_at(arm: Arm, scale: Scale, point: Mapping, root_seed: int):
    """The arm's algorithm configuration at ``point``, with its tuned step if it is a tuned baseline."""
    config = base_config(arm, scale, point)
    if arm.tuned:
        config = dataclasses.replace(config, **{step_field(config): step_for(arm, scale, point, root_seed)})
    return config


def prepare_steps(ctx: CheckContext, experiments: Sequence) -> list:
    """The design's ``prepare``: ``experiments`` with every tuned arm carrying its steps at every grid point of
    ``ctx.profile`` (tuned once per (arm, setting, reading, scale, root seed) and remembered; the tuning runs of all
    the experiments go through ``ctx.executor`` together, the baselines of one setting and reading in lockstep)."""
    experiments = list(experiments)
    _tunings([(_tuning_arm(arm), arm.reading(dict(p)), e.design.scales[ctx.profile], ctx.seed) for e in experiments
              for p in e.points(ctx.profile) for arm in e.arms if arm.tuned], ctx.executor)
    return [_resolve(ctx, e) for e in experiments]


def _resolve(ctx: CheckContext, experiment):
    scale = experiment.design.scales[ctx.profile]
    points = [dict(p) for p in experiment.points(ctx.profile)]
    units = {arm: [(_tuning_arm(arm), arm.reading(p), scale, ctx.seed) for p in points]
             for arm in experiment.arms if arm.tuned}
    tuned = _tunings([u for us in units.values() for u in us], ctx.executor)
    replaced = {}
    for arm, us in units.items():
        steps = tuple(dict.fromkeys(((u[1], p.get(STEP, DEFAULTS[STEP])), _pick(*tuned[u], p.get(STEP,
                                                                                                   DEFAULTS[STEP])))
                                    for u, p in zip(us, points, strict=True)))
        replaced[arm] = dataclasses.replace(arm, steps=steps)
    statements = tuple(dataclasses.replace(s, terms=tuple(dataclasses.replace(t, arm=replaced.get(t.arm, t.arm))
                                                          for t in s.terms)) for s in experiment.statements)
    return dataclasses.replace(experiment, statements=statements)


def steps_report(ctx: CheckContext, experiment) -> dict:
    """The design's ``report``: the tuned steps of the experiment's baselines (``baseline_steps``), if it has any."""
    scale = experiment.design.scales[ctx.profile]
    rows = []
    for arm in experiment.arms:
        if not arm.tuned:
            continue
        for reading in dict.fromkeys(arm.reading(dict(p)) for p in experiment.points(ctx.profile)):
            match, band = _tunings([(_tuning_arm(arm), reading, scale, ctx.seed)])[(_tuning_arm(arm), reading,
                                                                                    scale, ctx.seed)]
            rows.append({"arm": arm.label, "setting": arm.setting, "delay reading": reading, "field": match.field,
                         "matched step": match.step, "low": band.low, "high": band.high,
                         "target_db": match.target_db, "achieved_db": match.achieved_db, "low_db": band.low_db,
                         "high_db": band.high_db, "matched": match.matched, "reason": match.reason,
                         "tune_at": scale.tune_at, "tuning_runs": scale.tune_runs})
    return {"baseline_steps": rows} if rows else {}
