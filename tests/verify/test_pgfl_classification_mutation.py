"""Mutation and plumbing tests of the PGFL classification checks M-2 (and the arm cache M-1 ... M-3 share).

A flipped comparison or a zero effect must turn ``check_m2`` into a refutation with a counterexample that
reproduces; the blocks M-2 concatenates must be the arms M-3 uses; the numbers must not depend on the executor.
"""

import dataclasses

import numpy as np
import pytest

from verify.executor import ProcessExecutor, SerialExecutor
from verify.pgfl import classification as cl
from verify.records import CheckContext, Verdict

CI = CheckContext(profile="ci", seed=0)
#: A tiny scale (2 servers of 3 clients, 3 iterations, 2 replicates per block) for the plumbing tests.
TINY = cl.Scale(servers=2, clients_per_server=3, iterations=3, replicates=2, private_replicates=2, tau_grid=(0.0,),
                private=False, m2_blocks=2)


def test_m2_check_refutes_when_the_comparison_kind_is_flipped():
    """check_m2 asked whether tau = 0.4 *lowers* the accuracy refutes, and its counterexample reproduces: the
    confirmation of the registered claim comes from the data's direction, not from the check."""
    result = cl.check_m2(CI, kind="below")
    assert result.verdict is Verdict.REFUTED, result.summary
    assert result.counterexample["kind"] == "below"
    assert result.counterexample["replicates"] == cl.SCALES["ci"].m2_blocks * cl.SCALES["ci"].replicates
    assert not cl.evaluate_comparison(result.counterexample).holds


def test_m2_check_refutes_a_zero_effect():
    """tau = 0 against itself (the same arms, a zero paired difference) is never a significant improvement."""
    result = cl.check_m2(CI, tau=0.0)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert result.counterexample["mean_difference"] == 0.0


def test_m2_check_confirms_with_figure_and_effect_details():
    result = cl.check_m2(CI)
    assert result.verdict is Verdict.CONFIRMED, result.summary
    assert result.monte_carlo.n == cl.SCALES["ci"].m2_blocks * cl.SCALES["ci"].replicates
    (fig,) = result.figures
    assert fig.name == "m2_accuracy" and len(fig.series) == 2          # tau = 0 and 0.4 (no private arms at ci)
    assert all(len(s.y) == cl.SCALES["ci"].iterations for s in fig.series)
    (mean, sd, dz), = result.details["effect (no privacy): mean paired difference, sd, d_z = mean/sd"]
    assert mean > 0 and sd > 0 and dz == pytest.approx(mean / sd)


def test_m2_block_zero_is_the_m3_arm():
    """The first block of the M-2 replicates is bit-for-bit the single-block arm M-3 compares (shared cache)."""
    scale = cl.SCALES["ci"]
    blocks = cl.accuracy_curves("M-2", scale, 0, 0.4, False, blocks=scale.m2_blocks)
    single = cl.accuracy_curves("M-2", scale, 0, 0.4, False)
    assert blocks.shape == (scale.iterations, scale.m2_blocks * scale.replicates)
    assert np.array_equal(blocks[:, :scale.replicates], single)


def test_blocks_are_distinct_instances_and_prefix_stable():
    """Block b holds new instances (not a copy of block 0), and the first blocks do not depend on how many are
    requested."""
    two = cl.accuracy_curves("M-2", TINY, 0, 0.4, False, blocks=2)
    three = cl.accuracy_curves("M-2", TINY, 0, 0.4, False, blocks=3)
    assert np.array_equal(three[:, :4], two)
    problem0, _, _ = cl._blocks("M-2", TINY, 0, 0)
    problem1, _, _ = cl._blocks("M-2", TINY, 0, 1)
    assert not all(np.array_equal(a, b) for a, b in zip(problem0.X, problem1.X))


def test_arms_do_not_depend_on_the_executor():
    """The same arm keys simulated in a spawn process pool and serially give identical arrays."""
    keys = cl._keys("M-1", TINY, 3, (0.0, 0.4), False, blocks=2)
    with ProcessExecutor(2) as pool:
        pooled = pool.map(cl._simulate_arm, keys)
    serial = SerialExecutor().map(cl._simulate_arm, keys)
    assert all(np.array_equal(a, b) for a, b in zip(pooled, serial))


def test_prefetch_fills_the_cache_once():
    class Counting(SerialExecutor):
        calls = 0

        def map(self, fn, items):
            items = list(items)
            Counting.calls += len(items)
            return super().map(fn, items)

    keys = cl._keys("M-2", TINY, 7, (0.0, 1.0), False, blocks=2)
    ex = Counting()
    cl._prefetch(ex, keys + keys)
    cl._prefetch(ex, keys)
    assert Counting.calls == len(keys)
    assert cl.accuracy_curves("M-2", TINY, 7, 1.0, False, blocks=2).flags.writeable is False


def test_validation():
    with pytest.raises(ValueError, match="m2_blocks must be an integer >= 1"):
        dataclasses.replace(TINY, m2_blocks=0)
    with pytest.raises(ValueError, match="blocks must be an integer >= 1"):
        cl.accuracy_curves("M-2", TINY, 0, 0.4, False, blocks=0)
    with pytest.raises(ValueError, match="setting must be one of"):
        cl.accuracy_curves("M-4", TINY, 0, 0.4, False)
    record = {"claim": "t", "setting": "M-2", "scale": dataclasses.asdict(TINY), "seed": 0, "tau_a": 0.4,
              "tau_b": 0.0, "private": False, "alpha": cl.ALPHA, "kind": "sideways"}
    with pytest.raises(ValueError, match="kind must be 'above' or 'below'"):
        cl.evaluate_comparison(record)
