"""zCDP-NFL's experiment design: the arms that run together give each arm's own run, bit for bit
(verify/zcdp_nfl/_experiment_design.py)."""

import numpy as np
import pytest

from verify.zcdp_nfl._experiment_design import DEFAULT_CHOICES, SCALES, _run, simulate_nfl
from verify.zcdp_nfl.experiments import ELASTIC_NET_TRADEOFF, LAD_EPS_DELTA, LAD_GRAD, RIDGE_TRADEOFF


@pytest.mark.parametrize("point", [(), (("eta0", 2.0), ("rho", 0.3)), (("split", "constant"),)])
def test_simulate_nfl_equals_each_arm_run_alone(point):
    """The trade-off claims' zCDP-NFL and P-ADMM-like arms (five budgets each, run together on the replicate's noise
    stream) and the arms that run alone ((eps, delta)DP-NFL, zCDP-grad-NFL) equal their single runs."""
    arms = list(dict.fromkeys((*RIDGE_TRADEOFF.arms, *ELASTIC_NET_TRADEOFF.arms[:3], *LAD_EPS_DELTA.arms,
                               *LAD_GRAD.arms)))
    scale = SCALES["ci"]
    curves = simulate_nfl(arms, point, scale, 4, (0, 3))
    choices = {**DEFAULT_CHOICES, **dict(point)}
    assert len(curves) == len(arms) == 16  # 10 + 3 trade-off arms, (eps, delta)DP-NFL, zCDP-NFL and grad on LAD
    for arm, got in zip(arms, curves, strict=True):
        want = np.stack([_run(arm, choices, scale, 4, i) for i in (0, 3)])
        assert got.shape == (2, scale.T + 1)
        np.testing.assert_array_equal(got, want, err_msg=arm.label)
