r"""PGFL classification experiments M-1, M-2, M-3 (shared/spec/pgfl.md section 5.2) on scikit-learn's digits.

The paper (seed 000_133b71fd0aa99eb4.txt lines 445-466, Figs. 7-9; seed 004_180cd372987d137b.txt lines
1546-1570) reports only qualitative statements about its MNIST test-accuracy curves. MNIST needs a download,
so the spec's offline substitute is used: scikit-learn's bundled 8x8 digits (d = 64, features scaled to
[0, 1] and to the unit ball so that C_k = 1), with the same digit pairs / triplets
(:data:`reference_impl.datasets.DIGIT_TASKS`), logistic loss, :math:`\lambda = 10^{-2}`, :math:`\rho = 1`,
client scheduling 3 of each server's clients, Algorithm 2 (literal dual reference).

Each statement is one claim, decided by paired Monte-Carlo replicates with common random numbers: replicate
:math:`i` draws a fresh instance (server graph, cluster assignment, client data;
:func:`reference_impl.datasets.classification_problem`) and every arm runs on it with the same scheduling
draws and the same standard-normal privacy noise. Replicates are simulated in one call as disjoint blocks of
a single problem (a block-diagonal server graph: (9) mixes only neighbours and (10) only the clusters of one
server, so blocks evolve independently). "A above B" holds when the one-sided lower confidence limit
(Student t, :func:`verify.tolerance.mean_upper_confidence_limit`) of the mean paired accuracy difference is
above 0; "A below B" symmetrically. A claim's comparisons share :data:`ALPHA` by Bonferroni.

Privacy regime. The paper does not restate its privacy parameters for these experiments; the spec default
(R-3: :math:`\phi^{(0)} = 10^{-3}`, :math:`\zeta = 0.99`, C = 1) gives per-coordinate noise of standard
deviation :math:`\sqrt{(2/D_k)^2/(2\cdot 10^{-3})}\approx 11` at :math:`D_k = 3`, which keeps every arm at
chance accuracy for the whole horizon. Every claim therefore runs both regimes and reports both; the verdict
is decided in the regime in which learning happens (no privacy noise), as each claim's statement says, and
the private comparison (near 0.5 in every arm) is recorded in ``details`` and the figures.

Simulation blocks and sharing. One *arm* is the accuracy curves of ``replicates`` replicates for one
(setting, tau, privacy) at one profile and root seed: a single :func:`run_pgfl` call on the block-diagonal
problem. A claim that needs more replicates (M-2) concatenates arms of consecutive blocks: block ``b`` holds
the instances of the global replicate indices ``b * replicates .. (b + 1) * replicates - 1`` (children of one
SeedSequence) and its own scheduling/noise stream, and block 0 is exactly the arm M-1/M-3 use. Arms are
memoised in one module-level cache keyed by every input, so the M-2 arms tau = 0 and 0.4 (block 0, with and
without privacy) are computed once for M-2 and M-3; a check first dispatches all the arms it needs that are not
cached through ``ctx.executor`` (``fedcheck report --workers N`` runs them in parallel; the numbers do not
depend on the executor).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from reference_impl.datasets import DIGIT_TASKS, classification_problem, load_digits_images
from reference_impl.pgfl import PGFLConfig, PGFLProblem, run_pgfl
from verify.evidence import result_from_evidence
from verify.records import CheckContext, CheckResult, Citation, Claim, Evidence, FigureSpec, MonteCarlo, Series, Verdict
from verify.tolerance import RECORDED_ALPHA as ALPHA, bonferroni, mean_upper_confidence_limit

__all__ = ["ALPHA", "CLAIMS", "SCALES", "Scale", "accuracy_curves", "check_m1", "check_m2", "check_m3",
           "evaluate_comparison"]

SEED_A = "000_133b71fd0aa99eb4.txt"
SEED_THESIS = "004_180cd372987d137b.txt"
PAPER_TAU = 0.4
RHO = 1.0
LAM = 1e-2
PHI0 = 1e-3
ZETA = 0.99
SCHEDULED = 3
#: Samples per client (spec 5.2): M-1 low similarity D_k in [2, 4]; M-2/M-3 high similarity D_k in [6, 12].
SETTINGS = {"M-1": (2, 4), "M-2": (6, 12)}
EXPERIMENT_KEY = "pgfl.experiments.classification"
#: M-2 blocks of ``replicates`` replicates per profile (ci: 5 x 8 = 40, thorough: 4 x 10 = 40), chosen by the power
#: analysis in the reason of ``pgfl.experiment_m2`` (paired effect d_z ~ 0.6 at both sizes).
M2_BLOCKS_CI = 5
M2_BLOCKS_THOROUGH = 4


@dataclasses.dataclass(frozen=True, kw_only=True)
class Scale:
    """Size of one profile: servers, clients per server, iterations (the M-3 read-out is the last), replicates
    per simulated block, replicates of the reported private arms, the M-3 tau grid, and the number of blocks
    M-2 concatenates (M-2 decides on ``m2_blocks * replicates`` replicates; block 0 is shared with M-3)."""

    servers: int
    clients_per_server: int
    iterations: int
    replicates: int
    private_replicates: int
    tau_grid: tuple
    private: bool = True
    m2_blocks: int = 1

    def __post_init__(self) -> None:
        for name in ("servers", "clients_per_server", "iterations", "replicates", "private_replicates", "m2_blocks"):
            v = getattr(self, name)
            low = 2 if name.endswith("replicates") else 1
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
        if self.clients_per_server < SCHEDULED:
            raise ValueError(f"clients_per_server must be >= {SCHEDULED} (scheduling), got {self.clients_per_server}")


SCALES = {
    "ci": Scale(servers=4, clients_per_server=5, iterations=50, replicates=8, private_replicates=4,
                tau_grid=(0.0, 0.4, 1.0), private=False, m2_blocks=M2_BLOCKS_CI),
    "thorough": Scale(servers=10, clients_per_server=15, iterations=100, replicates=10, private_replicates=5,
                      tau_grid=(0.0, 0.4, 0.8, 1.0), m2_blocks=M2_BLOCKS_THOROUGH),
}


@functools.lru_cache(maxsize=1)
def _digits():
    return load_digits_images()


def _check_block(block: int) -> int:
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 0:
        raise ValueError(f"block must be an integer >= 0, got {block!r}")
    return int(block)


@functools.lru_cache(maxsize=32)
def _blocks(setting: str, scale: Scale, seed: int, block: int = 0):
    """Block ``block`` of the replicates as disjoint blocks of one logistic problem, and each cluster's test set.

    Replicate ``i`` of block ``b`` is the instance of global index ``b * scale.replicates + i``, drawn from child
    ``b * scale.replicates + i`` of one SeedSequence (the same instance whatever the number of replicates or
    blocks).
    """
    block = _check_block(block)
    Xtr, ytr, Xte, yte = _digits()
    task = "M-1" if setting == "M-1" else "M-2"
    entropy = [seed, 5, 2, 0 if task == "M-1" else 1]
    first = block * scale.replicates
    children = [np.random.SeedSequence(entropy, spawn_key=(first + i,)) for i in range(scale.replicates)]
    tasks = [classification_problem(np.random.default_rng(s), Xtr, ytr, Xte, yte, DIGIT_TASKS[task],
                                    servers=scale.servers, clients_per_server=scale.clients_per_server,
                                    samples=SETTINGS[task], lam=LAM) for s in children]
    S, R = scale.servers, scale.replicates
    adjacency = np.zeros((S * R, S * R), dtype=bool)
    for i, t in enumerate(tasks):
        adjacency[i * S:(i + 1) * S, i * S:(i + 1) * S] = t.problem.adjacency
    problem = PGFLProblem(adjacency=adjacency,
                          client_server=np.concatenate([t.problem.client_server + i * S for i, t in enumerate(tasks)]),
                          client_cluster=np.concatenate([t.problem.client_cluster for t in tasks]), n_clusters=3,
                          X=sum((t.problem.X for t in tasks), ()), y=sum((t.problem.y for t in tasks), ()), lam=LAM,
                          loss="logistic")
    return problem, tasks[0].X_test, tasks[0].y_test


def _observer(problem: PGFLProblem, X_test, y_test, replicates: int):
    """Per replicate: the mean over its clients of the accuracy of w_k on its cluster's test set, (replicates,)."""
    block = np.repeat(np.arange(replicates), problem.K // replicates)
    weights = np.zeros((replicates, problem.K))
    weights[block, np.arange(problem.K)] = 1.0 / (problem.K // replicates)
    labels = [np.asarray(y)[None, :] > 0.5 for y in y_test]
    members = [np.flatnonzero(problem.client_cluster == q) for q in range(problem.n_clusters)]
    tests = [np.ascontiguousarray(np.asarray(X, dtype=np.float64).T) for X in X_test]

    def observe(state) -> np.ndarray:
        acc = np.zeros(problem.K)
        for m, Xt, lab in zip(members, tests, labels):
            scores = state.w_clients[0, m] @ Xt                # (clients of cluster q, test points): BLAS
            acc[m] = np.mean((scores > 0) == lab, axis=1)
        return weights @ acc

    return observe


def _run_seed(seed: int, block: int) -> np.random.SeedSequence:
    """Scheduling/noise stream of one block: the root for block 0 (the M-1/M-3 arms), its child b for b >= 1."""
    return np.random.SeedSequence([seed, 5, 2, 9]) if block == 0 else np.random.SeedSequence([seed, 5, 2, 9],
                                                                                             spawn_key=(block,))


def _simulate_arm(key: tuple) -> np.ndarray:
    """One arm ``key = (setting, scale, seed, tau, private, block)``: (iterations, replicates). Module-level and
    pure, so :meth:`ctx.executor.map` can run it in another process."""
    setting, scale, seed, tau, private, block = key
    if private:
        scale = dataclasses.replace(scale, replicates=scale.private_replicates)
    problem, X_test, y_test = _blocks(setting, scale, seed, block)
    config = PGFLConfig(rho=RHO, taus=(tau,), algorithm="alg2", phi0=PHI0 if private else None, zeta=ZETA, C=1.0,
                        scheduled=SCHEDULED)
    rng = np.random.default_rng(_run_seed(seed, block))
    # One BLAS thread: the work is many 64 x 64 solves and small products, for which OpenBLAS threads cost more
    # than they give (3x slower wall time on a loaded 2-core machine); the numbers are bit-identical.
    with threadpool_limits(limits=1, user_api="blas"):
        run = run_pgfl(problem, config, scale.iterations, rng,
                       observe=_observer(problem, X_test, y_test, scale.replicates))
    return np.asarray(run.observations)            # (iterations, replicates)


#: Memoised arms (key -> read-only (iterations, replicates) array), least recently used dropped first.
_ARMS: collections.OrderedDict = collections.OrderedDict()
_ARMS_MAX = 128


def _arm_key(setting: str, scale: Scale, seed: int, tau: float, private: bool, block: int) -> tuple:
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {sorted(SETTINGS)}, got {setting!r}")
    return (setting, scale, int(seed), float(tau), bool(private), _check_block(block))


def _store(key: tuple, curves: np.ndarray) -> None:
    curves = np.asarray(curves)
    curves.setflags(write=False)
    _ARMS[key] = curves
    _ARMS.move_to_end(key)
    while len(_ARMS) > _ARMS_MAX:
        _ARMS.popitem(last=False)


def _prefetch(executor, keys: Iterable[tuple]) -> None:
    """Simulate the arms of ``keys`` that are not cached, through ``executor.map`` (in submission order)."""
    missing = list(dict.fromkeys(k for k in keys if k not in _ARMS))
    if missing:
        for key, curves in zip(missing, executor.map(_simulate_arm, missing)):
            _store(key, curves)


def _arm(key: tuple) -> np.ndarray:
    if key not in _ARMS:
        _store(key, _simulate_arm(key))
    _ARMS.move_to_end(key)
    return _ARMS[key]


def _keys(setting: str, scale: Scale, seed: int, taus: Iterable[float], private: bool, blocks: int = 1) -> list:
    return [_arm_key(setting, scale, seed, t, private, b) for t in taus for b in range(blocks)]


def accuracy_curves(setting: str, scale: Scale, seed: int, tau: float, private: bool, blocks: int = 1) -> np.ndarray:
    """Test accuracy per iteration and replicate, (iterations, blocks * replicates) (memoised per block).

    ``blocks`` consecutive blocks of ``scale.replicates`` replicates (``scale.private_replicates`` with
    ``private``); ``blocks = 1`` is the M-1/M-3 arm.
    """
    if isinstance(blocks, bool) or not isinstance(blocks, (int, np.integer)) or blocks < 1:
        raise ValueError(f"blocks must be an integer >= 1, got {blocks!r}")
    parts = [_arm(k) for k in _keys(setting, scale, seed, (tau,), private, int(blocks))]
    if len(parts) == 1:
        return parts[0]
    out = np.concatenate(parts, axis=1)
    out.setflags(write=False)
    return out


def evaluate_comparison(parameters: Mapping[str, Any]) -> Evidence:
    """Decide one comparison record: ``kind = "above"``: LCL(mean acc_a - acc_b) > 0; ``"below"``: UCL < 0.

    ``measured`` is the signed confidence limit oriented so that the comparison holds iff ``measured > 0``
    (``bound`` = 0): LCL for "above", -UCL for "below". The record's optional ``blocks`` (default 1) is the
    number of simulated blocks of replicates compared. Also the ``reproduce`` of the refuted claims.
    """
    p = dict(parameters)
    if p.get("kind") not in ("above", "below"):
        raise ValueError(f"kind must be 'above' or 'below', got {p.get('kind')!r}")
    blocks = p.get("blocks", 1)
    scale = Scale(**{**p["scale"], "tau_grid": tuple(p["scale"]["tau_grid"])})
    a = accuracy_curves(p["setting"], scale, p["seed"], p["tau_a"], p["private"], blocks)[-1]
    b = accuracy_curves(p["setting"], scale, p["seed"], p["tau_b"], p["private"], blocks)[-1]
    diff = a - b
    alpha = float(p["alpha"])
    if np.all(diff == diff[0]):
        lcl = ucl = float(diff[0])
        sd = 0.0
    else:
        lcl, ucl = -mean_upper_confidence_limit(-diff, alpha), mean_upper_confidence_limit(diff, alpha)
        sd = float(diff.std(ddof=1))
    measured = lcl if p["kind"] == "above" else -ucl
    record = {**p, "blocks": int(blocks), "mean_difference": float(diff.mean()), "sd_difference": sd,
              "effect_size_dz": float(diff.mean() / sd) if sd > 0 else 0.0, "lcl": lcl, "ucl": ucl,
              "accuracy_a": float(a.mean()), "accuracy_b": float(b.mean()), "replicates": int(diff.size),
              "fraction_positive": float(np.mean(diff > 0))}
    # Evidence is "measured <= bound holds"; orient so that holding means measured < 0 <= bound.
    return Evidence(measured=-measured, bound=0.0, holds=bool(measured > 0.0), parameters=record)


def _record(claim_id, setting, scale, seed, tau_a, tau_b, kind, private, alpha, blocks=1) -> dict:
    return {"claim": claim_id, "setting": setting, "scale": dataclasses.asdict(scale), "seed": int(seed),
            "tau_a": float(tau_a), "tau_b": float(tau_b), "kind": kind, "private": bool(private), "alpha": alpha,
            "blocks": int(blocks)}


def _describe(e: Evidence) -> str:
    p = e.parameters
    rel = ">" if p["kind"] == "above" else "<"
    return (f"acc(tau={p['tau_a']:g}) {rel} acc(tau={p['tau_b']:g}) [{'private' if p['private'] else 'no privacy'}, "
            f"{p['replicates']} replicates]: {p['accuracy_a']:.3f} vs {p['accuracy_b']:.3f}, diff "
            f"{p['mean_difference']:+.3f} [{p['lcl']:+.3f}, {p['ucl']:+.3f}] {'holds' if e.holds else 'FAILS'}")


def _curve_figure(name: str, title: str, setting: str, scale: Scale, seed: int, taus: Sequence[float],
                  blocks: int = 1) -> FigureSpec:
    n = np.arange(1, scale.iterations + 1)
    series = []
    for private in (False, True) if scale.private else (False,):
        for tau in taus:
            curves = accuracy_curves(setting, scale, seed, tau, private, 1 if private else blocks)
            series.append(Series(label=f"tau = {tau:g}, {'private (phi0 = 1e-3)' if private else 'no privacy'} "
                                       f"({curves.shape[1]} replicates)",
                                 x=n, y=curves.mean(axis=1), style="dashed" if private else "line",
                                 group=f"tau{tau:g}"))
    return FigureSpec(name=name, title=title, xlabel="iteration n", ylabel="mean test accuracy", series=tuple(series))


def _prefetch_comparisons(ctx: CheckContext, setting: str, comparisons: Sequence[tuple],
                          private_comparisons: Sequence[tuple] = (), blocks: int = 1) -> None:
    """Dispatch every arm a check needs (decisive arms over ``blocks`` blocks, private arms at thorough) at once."""
    scale = SCALES[ctx.profile]
    taus = dict.fromkeys(t for a, b, _ in comparisons for t in (a, b))
    keys = _keys(setting, scale, ctx.seed, taus, False, blocks)
    if scale.private:
        private_taus = dict.fromkeys(t for a, b, _ in private_comparisons for t in (a, b))
        keys += _keys(setting, scale, ctx.seed, private_taus, True)
    _prefetch(ctx.executor, keys)


def _decide(ctx: CheckContext, claim_id: str, setting: str, comparisons: Sequence[tuple], *, what: str,
            figures: Sequence[FigureSpec], private_comparisons: Sequence[tuple] = (), blocks: int = 1) -> CheckResult:
    """Evaluate the decisive comparisons (no privacy, ``blocks`` blocks, Bonferroni-split :data:`ALPHA`) and, at a
    profile with private arms, the reported private ones; confirmed iff every decisive comparison holds."""
    scale = SCALES[ctx.profile]
    alpha = bonferroni(ALPHA, len(comparisons))
    _prefetch_comparisons(ctx, setting, comparisons, private_comparisons, blocks)
    evidence = [evaluate_comparison(_record(claim_id, setting, scale, ctx.seed, a, b, kind, False, alpha, blocks))
                for a, b, kind in comparisons]
    private = [evaluate_comparison(_record(claim_id, setting, scale, ctx.seed, a, b, kind, True,
                                           bonferroni(ALPHA, max(len(private_comparisons), 1))))
               for a, b, kind in (private_comparisons if scale.private else ())]
    replicates = scale.replicates * blocks
    details = {"comparisons (no privacy; decisive)": [_describe(e) for e in evidence],
               "comparisons (private, phi0 = 1e-3, zeta = 0.99, C = 1; reported)": [_describe(e) for e in private],
               "effect (no privacy): mean paired difference, sd, d_z = mean/sd": [
                   (e.parameters["mean_difference"], e.parameters["sd_difference"], e.parameters["effect_size_dz"])
                   for e in evidence],
               "per_comparison_alpha": alpha, "replicates (decisive)": replicates, "scale": dataclasses.asdict(scale)}
    result = result_from_evidence(claim_id, evidence, ctx=ctx, what=what, figures=figures,
                                  quantity="minus the one-sided confidence limit of the mean paired accuracy "
                                           "difference in the predicted direction (holds iff < 0)",
                                  monte_carlo=MonteCarlo(n=replicates, alpha=ALPHA, seed=ctx.seed),
                                  details=details)
    verdict = "holds" if result.verdict is Verdict.CONFIRMED else "does not hold"
    summary = (f"{what}: {verdict} without privacy ({replicates} replicates, n = {scale.iterations}); "
               + "; ".join(_describe(e) for e in evidence + private))
    return dataclasses.replace(result, summary=summary)


def check_m1(ctx: CheckContext, *, tau: float = PAPER_TAU, kind: str = "above") -> CheckResult:
    """M-1 (low similarity): tau = 0.4 above tau = 0 at the horizon (``kind`` injectable for mutation tests)."""
    scale = SCALES[ctx.profile]
    comps = [(tau, 0.0, kind)]
    _prefetch_comparisons(ctx, "M-1", comps, comps)
    fig = _curve_figure("m1_accuracy", "M-1 (low similarity, digits): test accuracy", "M-1", scale, ctx.seed,
                        sorted({0.0, tau}))
    return _decide(ctx, "pgfl.experiment_m1", "M-1", comps, private_comparisons=comps,
                   what=f"M-1: tau = {tau:g} {'improves' if kind == 'above' else 'lowers'} test accuracy vs tau = 0",
                   figures=[fig])


def check_m2(ctx: CheckContext, *, tau: float = PAPER_TAU, kind: str = "above") -> CheckResult:
    """M-2 (high similarity): tau = 0.4 above tau = 0 at the horizon, on ``m2_blocks`` blocks of replicates
    (``kind`` injectable for mutation tests). Block 0 and the private arms are M-3's arms (shared cache)."""
    scale = SCALES[ctx.profile]
    comps = [(tau, 0.0, kind)]
    _prefetch_comparisons(ctx, "M-2", comps, comps, scale.m2_blocks)
    fig = _curve_figure("m2_accuracy", "M-2 (high similarity, digits): test accuracy", "M-2", scale, ctx.seed,
                        sorted({0.0, tau}), blocks=scale.m2_blocks)
    return _decide(ctx, "pgfl.experiment_m2", "M-2", comps, private_comparisons=comps, blocks=scale.m2_blocks,
                   what=(f"M-2: tau = {tau:g} {'significantly improves' if kind == 'above' else 'lowers'} test "
                         f"accuracy vs tau = 0"), figures=[fig])


def check_m3(ctx: CheckContext, *, medium: float = 0.4, large: float = 0.8, very_large: float = 1.0) -> CheckResult:
    """M-3: accuracy at the horizon vs tau (M-2 setting): medium and large tau above tau = 0, very large below medium."""
    scale = SCALES[ctx.profile]
    grid = sorted(set(scale.tau_grid) | {0.0, medium, very_large})
    # "large" tau is tested where the profile's grid holds it (thorough); ci tests medium and very large.
    comps = [(medium, 0.0, "above")] + ([(large, 0.0, "above")] if large in scale.tau_grid else []) \
        + [(very_large, medium, "below")]
    private_comps = [(PAPER_TAU, 0.0, "above")]
    _prefetch_comparisons(ctx, "M-2", comps + [(t, 0.0, "above") for t in grid], private_comps)
    means = [float(accuracy_curves("M-2", scale, ctx.seed, t, False)[-1].mean()) for t in grid]
    fig = FigureSpec(name="m3_accuracy_vs_tau", title=f"M-3: test accuracy after {scale.iterations} iterations vs tau",
                     xlabel="tau", ylabel="mean test accuracy",
                     series=(Series(label="no privacy", x=grid, y=means, style="points"),) + ((
                         Series(label="private (phi0 = 1e-3), tau = 0 and 0.4", x=(0.0, PAPER_TAU),
                                y=tuple(float(accuracy_curves("M-2", scale, ctx.seed, t, True)[-1].mean())
                                        for t in (0.0, PAPER_TAU)), style="points"),) if scale.private else ()))
    result = _decide(ctx, "pgfl.experiment_m3", "M-2", comps, private_comparisons=private_comps,
                     what=(f"M-3: tau = {' and '.join(f'{c[0]:g}' for c in comps[:-1])} improve accuracy over tau = 0, "
                           f"tau = {very_large:g} degrades below tau = {medium:g}"), figures=[fig])
    return dataclasses.replace(result, details={**result.details, "accuracy_vs_tau (no privacy)": dict(zip(grid, means))})


_CITE_M1 = (Citation(seed=SEED_A, label="Section V-B, Fig. 7", lines="462"),
            Citation(seed=SEED_THESIS, label="Section 5.4.2, Fig. 5.5(a)", lines="1546-1570"))
_CITE_M2 = (Citation(seed=SEED_A, label="Section V-B, Fig. 8", lines="464, 473"),
            Citation(seed=SEED_THESIS, label="Section 5.4.2, Fig. 5.5(b)", lines="1546-1570"))
_CITE_M3 = (Citation(seed=SEED_A, label="Section V-B, Fig. 9", lines="466"),
            Citation(seed=SEED_THESIS, label="Section 5.4.2, Fig. 5.5(c)", lines="1546-1570"))
_HYP = ("scikit-learn digits substitute for MNIST (d = 64, unit-ball features, C_k = 1), spec 5.2",
        "logistic loss, lambda = 1e-2, rho = 1, Algorithm 2 (literal dual reference)",
        "client scheduling 3 of each server's clients, cached aggregation",
        "decisive regime: no privacy noise; the spec-default privacy (phi0 = 1e-3, zeta = 0.99) is run and reported",
        "ci: S = 4, 5 clients per server, 50 iterations, 8 replicates (private arms only at thorough); thorough: "
        "S = 10, 15 per server, 100 iterations, 10 replicates (5 for the reported private arms)")
_HYP_M2 = _HYP + tuple(
    f"M-2 decides on {SCALES[p].m2_blocks} blocks of {SCALES[p].replicates} replicates at {p} "
    f"({SCALES[p].m2_blocks * SCALES[p].replicates}); block 0 is M-3's arm" for p in ("ci", "thorough"))

CLAIMS = (
    Claim(
        id="pgfl.experiment_m1",
        paper="pgfl",
        title="M-1 (low similarity): inter-cluster learning tau = 0.4 improves test accuracy over tau = 0",
        citations=_CITE_M1,
        statement=("Clusters {1} vs {8}, {1} vs {9}, {7} vs {8}, D_k in [2, 4]: with tau = 0.4 the clients' mean test "
                   "accuracy is higher than with tau = 0 ('inter-cluster learning does improve the accuracy'), read "
                   "at the end of the horizon, in the regime where the models learn (no privacy noise)."),
        hypotheses=_HYP,
        check=check_m1,
        expected=Verdict.REFUTED,
        reason=("On the digits substitute tau = 0.4 lowers the accuracy at low similarity: -0.03 to -0.065 "
                "(8 replicates, ci, seeds 0-5 all negative, 3 of 6 significantly; thorough seed 0: -0.050 "
                "[-0.075, -0.026]); the pooled cluster models "
                "disagree on the digit 8/9 labels. With the spec-default privacy every arm stays near chance (0.5)."),
        reproduce=evaluate_comparison,
    ),
    Claim(
        id="pgfl.experiment_m2",
        paper="pgfl",
        title="M-2 (high similarity): inter-cluster learning tau = 0.4 significantly improves test accuracy",
        citations=_CITE_M2,
        statement=("Clusters {1,2,3} vs {6,7,8}, {1,2,3} vs {7,8,9}, {1,2,3} vs {6,8,9} (triplets), D_k in [6, 12]: "
                   "with tau = 0.4 the clients' mean test accuracy is significantly higher than with tau = 0 "
                   "('inter-cluster learning significantly improves the accuracy'), read at the end of the horizon, "
                   "in the regime where the models learn (no privacy noise); 'significantly' is tested as a one-sided "
                   "lower confidence limit (alpha = 0.05) of the mean paired difference above 0."),
        hypotheses=_HYP_M2,
        check=check_m2,
        expected=Verdict.CONFIRMED,
        reason=("The improvement is real but small. ci (50 iterations, S = 4 x 5 clients): mean paired difference "
                "+0.038, sd 0.059, d_z = 0.64 (pooled over 768 replicates of root seeds 0-11); thorough (100 "
                "iterations, S = 10 x 15): +0.013 / +0.025 / +0.021, sd 0.022 / 0.025 / 0.015 on seeds 0 / 1 / 2 (40 "
                "replicates each). At the old 8 replicates the verdict flipped with the root seed (LCL > 0 on 3 of "
                "seeds 0-5). With 40 replicates the one-sided LCL (alpha = 0.05) is above 0 on every seed tried: ci "
                "seeds 0-11 (diff +0.025 to +0.055, smallest LCL +0.008 at seed 2; seed 0: +0.032 [+0.019, +0.046]), "
                "thorough seeds 0-2 (seed 0: +0.013, LCL +0.007); at d_z = 0.64 the chance that a root seed misses is "
                "about 1 % at ci. The gain is 1-4 accuracy points: significant in the statistical sense, smaller than "
                "'significantly improves' suggests of Fig. 8. With the spec-default privacy every arm stays near "
                "chance (0.5), as in M-1 and M-3."),
    ),
    Claim(
        id="pgfl.experiment_m3",
        paper="pgfl",
        title="M-3: accuracy after 100 iterations vs tau: medium/large tau help, very large tau degrades",
        citations=_CITE_M3,
        statement=("In the M-2 setting (triplets, D_k in [6, 12]), the accuracy at the horizon is higher for medium "
                   "(0.4) and large (0.8) tau than for tau = 0, and very large tau (1.0) degrades it below medium tau "
                   "(no privacy noise; the paper reads at 100 iterations)."),
        hypotheses=_HYP,
        check=check_m3,
        expected=Verdict.REFUTED,
        reason=("tau = 1.0 gives the same accuracy as tau = 0.4 to within +-0.01 (mean paired difference +0.001 to "
                "+0.005 on seeds 0-5, never significantly below), so the 'very large tau degrades' part fails. tau = "
                "0.4 above tau = 0 ranges from -0.006 (seed 2) to +0.056 (seed 5) on M-3's 8 ci replicates and is "
                "significant only on seed 5; pgfl.experiment_m2 decides that comparison on 40 replicates, where it "
                "holds on every seed (+0.025 to +0.048)."),
        reproduce=evaluate_comparison,
    ),
)
