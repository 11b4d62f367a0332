"""Unit tests of the FedPDM-DP experiment claims' sharing: the first claim on a data set simulates the first look of
every arm that the claims on that data set compare, on each replicate together (its data built once), and the
later claims find their arms in the store."""

import numpy as np

from verify.fedpdm import _experiment_design as design
from verify.fedpdm import experiments
from verify.harness import clear_store
from verify.records import CheckContext


def test_the_first_claim_simulates_every_arm_of_its_data_set_once(monkeypatch):
    calls = []

    def fake_run(key, scale, root_seed, replicate):  # no simulation: only which arm and replicate are asked for
        calls.append((key, replicate))
        return np.zeros((2, len(scale.rounds)))

    monkeypatch.setattr(design, "_run", fake_run)
    clear_store()
    ctx = CheckContext(profile="ci", seed=12)  # a root seed of its own: no other test's arms in the store
    first_look = design.STAGES["ci"][0]
    family = {a.key for spec in (experiments.DP_LOSS, experiments.NODP_LOSS, experiments.DP_GAP,
                                 experiments.FIG1_ORDER) for a in spec.arms}
    experiments.DP_LOSS.check(ctx)
    assert sorted(calls, key=repr) == sorted(((k, i) for k in family for i in range(first_look)), key=repr)
    for check in (experiments.DP_ACCURACY.check, experiments.NODP_LOSS.check, experiments.NODP_ACCURACY.check,
                  experiments.DP_GAP.check, experiments.FIG1_ORDER.check):
        check(ctx)
    assert len(calls) == len(family) * first_look  # every later claim on the synthetic data read the store
    clear_store()
