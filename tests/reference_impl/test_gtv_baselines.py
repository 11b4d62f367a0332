"""reference_impl.gtv.baselines: data-form gradients agree with the quadratic form, IFCA's initialisations,
validation."""

import numpy as np
import pytest

from reference_impl.gtv import IFCA_INITIALISATIONS, fedavg, ifca, mse, pooled_solution
from reference_impl.gtv.data import sbm_instance

#: Rounding of one batched gradient / loss evaluation (entries of order 10, sums over <= 40 terms).
FORM_ATOL = 1e-10


def _small(d: int, m: int):
    inst, w_true = sbm_instance(np.random.default_rng(3), sizes=(8, 8), d=d, m=m, p_out=0.1)  # 16 nodes: fast
    return inst, w_true


@pytest.mark.parametrize("d, m", [(12, 5), (4, 9)])   # m < d (data form) and m > d (quadratic form)
def test_fedavg_one_local_step_matches_the_quadratic_form(d, m):
    inst, _ = _small(d, m)
    _, b, _ = inst.quadratic
    lr = 0.01                                          # any stable step: one step of GD from 0 is lr * mean(b)
    w = fedavg(inst, rounds=1, local_steps=1, lr=lr)
    p = inst.m / inst.m.sum()
    assert np.allclose(w[0], p @ (lr * b), atol=FORM_ATOL)


@pytest.mark.parametrize("d, m", [(12, 5), (4, 9)])
def test_fedavg_with_one_local_step_is_gd_on_the_pooled_loss(d, m):
    inst, w_true = _small(d, m)
    # One local step: FedAvg is GD on sum_i m_i L_i (no client drift), so it tends to the pooled LS solution;
    # 3000 rounds contract the error of these 16-node instances far below the pooled solution's own MSE.
    gap = mse(fedavg(inst, rounds=3000, local_steps=1), pooled_solution(inst))
    assert gap <= 1e-6 * mse(pooled_solution(inst), w_true)   # six decades: GD's linear rate, well inside 3000 rounds


def test_ifca_identical_start_first_round_is_fedavg():
    inst, _ = _small(12, 5)
    one = ifca(inst, np.random.default_rng(0), k=2, rounds=1, init="identical")
    assert np.allclose(one, fedavg(inst, rounds=1), atol=FORM_ATOL)   # every node ties and joins model 0


def test_ifca_with_one_model_is_fedavg():
    inst, _ = _small(12, 5)
    one = ifca(inst, np.random.default_rng(0), k=1, rounds=5, init="identical")   # both start at 0
    assert np.allclose(one, fedavg(inst, rounds=5), atol=FORM_ATOL)   # one model: every node joins it each round


@pytest.mark.parametrize("kwargs, field", [({"init": "zeros"}, "init"), ({"k": 0}, "k"), ({"rounds": 0}, "rounds"),
                                           ({"local_steps": 0}, "local_steps")])
def test_ifca_rejects_bad_arguments(kwargs, field):
    inst, _ = _small(12, 5)
    args = {"k": 2, "rounds": 1, **kwargs}
    with pytest.raises(ValueError, match=field):
        ifca(inst, np.random.default_rng(0), **args)


def test_every_documented_initialisation_runs():
    inst, _ = _small(12, 5)
    for init in IFCA_INITIALISATIONS:
        assert ifca(inst, np.random.default_rng(0), k=2, rounds=2, init=init).shape == (inst.n, inst.d)
