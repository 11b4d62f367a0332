"""Mutation and plumbing tests of the PGFL classification design (M-1 (docs/papers/pgfl.md#exp-m) ...
M-3 (docs/papers/pgfl.md#exp-m) on verify.harness).

A flipped statement must turn the M-2 (docs/papers/pgfl.md#exp-m) decision around; the chunks of replicates must be the
same instances whatever the stage; the numbers must not depend on the executor.
"""

import dataclasses

import numpy as np
import pytest

from verify.executor import ProcessExecutor, SerialExecutor
from verify.harness import below, decide, simulate_arms
from verify.pgfl import classification as cl
from verify.records import CheckContext, Verdict

CI = CheckContext(profile="ci", seed=0)
#: A tiny scale (2 servers of 3 clients, 3 iterations, 2 replicates per block) for the plumbing tests.
TINY = cl.Scale(servers=2, clients_per_server=3, iterations=3, replicates=2, private_replicates=2,
                private=False)


def test_m2_flipped_statement_is_refuted_inside_the_setting():
    """M-2 (docs/papers/pgfl.md#exp-m) asked whether tau = 0.4 *lowers* the accuracy, with the outside-setting guard
    removed, is refuted and its counterexample reproduces: the confirmation comes from the data's direction, not from
    the check."""
    spec = dataclasses.replace(cl.M2, claim_id="pgfl.experiment_m2_flipped", outside_setting="",
                               statements=(below(("M-2", 0.4), ("M-2", 0.0), "final"),))
    result = decide(CI, spec)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert not spec.reproduce(result.counterexample).holds


def test_m2_check_confirms_with_figure_and_details():
    result = cl.M2.check(CI)
    assert result.verdict is Verdict.CONFIRMED, result.summary
    assert result.figures and result.figures[0].caption
    assert result.details["grid"][0]["statements"][0]["median"] > 0


def test_chunks_are_prefix_stable():
    """The first two replicates are the same instances whether two or four are simulated."""
    ctx = CheckContext(seed=1)
    design = dataclasses.replace(cl.DESIGN, namespace="test.classification.prefix", chunk={"ci": 2},
                                 stages={"ci": (2, 4)})
    two = simulate_arms(ctx, design, [("M-2", 0.4)], (), 2, scale=TINY)[("M-2", 0.4)]
    four = simulate_arms(ctx, design, [("M-2", 0.4)], (), 4, scale=TINY)[("M-2", 0.4)]
    np.testing.assert_array_equal(four[:2], two)


def test_arms_do_not_depend_on_the_executor():
    design = dataclasses.replace(cl.DESIGN, chunk={"ci": 2}, stages={"ci": (2, 4)})
    serial = cl.simulate_classification((("M-1", 0.4),), (), TINY, 3, (0, 1))
    with ProcessExecutor(2) as pool:
        ctx = CheckContext(seed=3, executor=pool)
        pooled = simulate_arms(ctx, dataclasses.replace(design, namespace="test.classification.pool"), [("M-1", 0.4)],
                               (), 2, scale=TINY)[("M-1", 0.4)]
    np.testing.assert_array_equal(serial[0], pooled)
    assert isinstance(CheckContext().executor, SerialExecutor)


def test_validation():
    with pytest.raises(ValueError, match="one whole block"):
        cl.simulate_classification((("M-1", 0.4),), (), TINY, 0, (1, 2))
    with pytest.raises(ValueError, match="read-out"):
        cl.DESIGN.readout("early", TINY, np.zeros((2, 3)))
