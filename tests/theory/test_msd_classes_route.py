"""The ``classes`` route of theory.msd.routes: chosen for large grouped non-white instances, equal to structured."""

import math
from pathlib import Path

import numpy as np
import pytest

from theory.msd import PAOFedInstance, msd_steady_state
from theory.msd.instance import toeplitz_covariances
from theory.msd.routes import CLASSES_MIN_N, choose_route, mean_square_analysis
from verify.tolerance import GMRES_RTOL, MSD_AGREEMENT_RTOL


def _grouped(K, per, D, l_max, rho=(0.3, -0.6, 0.5, 0.7)):
    """K clients in classes of ``per`` (p, Toeplitz rho, noise shared within a class), window selection."""
    labels = np.arange(K) // per
    p = np.array([0.8, 0.3, 0.5, 0.1])[labels]
    return PAOFedInstance(K=K, D=D, l_max=l_max, m=1, selection="window", p=p, delta=0.3,
                          alpha=0.5 ** np.arange(l_max + 1), sigma2_eta=np.full(K, 0.01),
                          R=toeplitz_covariances(np.array(rho)[labels], D), w_star=np.ones(D), mu=0.5 / D)


def test_choice():
    small = _grouped(6, 3, 4, 2)        # N = 76 <= CLASSES_MIN_N: the structured route gives rho(F) and thresholds
    assert small.n_blocks * small.D <= CLASSES_MIN_N and choose_route(small) == "structured"
    assert choose_route(small, "classes") == "classes"
    large = _grouped(256, 64, 6, 10)    # the paper's federation at D = 6: N = 16,902
    assert large.n_blocks * large.D > CLASSES_MIN_N and choose_route(large) == "classes"
    distinct = _grouped(4, 1, 300, 1)   # every client its own class: no reduction, N = 2,700
    assert distinct.n_blocks * distinct.D > CLASSES_MIN_N and choose_route(distinct) == "structured"


@pytest.mark.parametrize("model", ["seed", "exact"])
def test_analysis_equals_structured(model):
    inst = _grouped(6, 3, 4, 2)
    res = mean_square_analysis(inst, model, route="classes", msd_rtol=GMRES_RTOL)
    ref = msd_steady_state(inst, model, rtol=GMRES_RTOL)
    assert res.route == "classes" and res.solver.startswith("classes") and res.residual <= 10 * GMRES_RTOL
    assert res.msd == pytest.approx(ref.msd, rel=MSD_AGREEMENT_RTOL)
    assert math.isnan(res.spectral_radius) and math.isnan(res.threshold.lo) and res.notes


def test_paper_scale_example_parses_to_the_classes_route():
    """The shipped example is the paper's federation with Toeplitz features shared in four groups of 64."""
    from fedcheck.msd import load_instance

    path = Path(__file__).resolve().parents[2] / "fedcheck" / "examples" / "paofed_paper_groups.toml"
    inst = load_instance(path)
    assert (inst.K, inst.D, inst.l_max, inst.m, inst.selection) == (256, 200, 10, 4, "window")
    assert sorted(set(inst.p.tolist())) == [0.005, 0.025, 0.1, 0.25]
    assert choose_route(inst) == "classes"
