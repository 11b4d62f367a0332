"""The digits design's speed-ups give the numbers of the paths they replace, bit for bit (verify/gtv/digits_design.py).

IFCA's assignment is computed once per round (the monitor's and the next round's were two identical argmins), and a
replicate's split is built once per process for all grid points (each ``simulate_digits`` call rebuilt it).
"""

import numpy as np
import pytest

from reference_impl.gtv.data import digits_split
from theory.gtv import loss_gradients, loss_values
from verify.gtv import digits_design
from verify.gtv.digits_design import DigitsScale, ifca_logistic, node_accuracy, simulate_digits

#: 2 clusters x 3 nodes, two lambdas, R = 10 recorded every 5 iterations.
TINY = DigitsScale(pairs=((0, 1), (2, 3)), nodes_per_cluster=3, split=(6, 2), test_per_cluster=5, lams=(0.1, 1.0),
                   iterations=10, rounds=10, record_every=5)


def _old_ifca_logistic(inst, rng, *, k, rounds, local_steps, init="random", monitor=None):
    """IFCA as it was written before: the assignment recomputed for the monitor and again for the next round."""
    draw = rng.normal(size=(k, inst.d))
    theta = draw if init == "random" else np.zeros((k, inst.d))
    gram = np.matmul(inst.X.transpose(0, 2, 1), inst.X)
    beta = np.linalg.eigvalsh(gram)[:, -1] / (4.0 * np.maximum(inst.m, 1)) + inst.gamma
    lr = 1.0 / float(beta.max())
    m = inst.m.astype(np.float64)

    def assign(theta):
        losses = np.stack([loss_values(inst, np.broadcast_to(t, (inst.n, inst.d))) for t in theta], axis=1)
        return np.argmin(losses, axis=1)

    if monitor is not None:
        monitor(theta[assign(theta)])
    for _ in range(rounds):
        j = assign(theta)
        local = theta[j].copy()
        for _ in range(local_steps):
            local -= lr * loss_gradients(inst, local)
        onehot = np.zeros((inst.n, k))
        onehot[np.arange(inst.n), j] = m
        mass = onehot.sum(axis=0)
        theta = np.where((mass > 0)[:, None], (onehot.T @ local) / np.where(mass > 0, mass, 1.0)[:, None], theta)
        if monitor is not None:
            monitor(theta[assign(theta)])
    return theta[assign(theta)]


@pytest.mark.parametrize("init", ["random", "identical"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ifca_logistic_equals_the_old_loop(init, seed):
    data = digits_split(np.random.default_rng(seed), pairs=((0, 1), (2, 3), (4, 5)), nodes_per_cluster=3,
                        split=(6, 2), test_per_cluster=5)
    runs = []
    for fn in (ifca_logistic, _old_ifca_logistic):
        curve = []
        w = fn(data.instance, np.random.default_rng(seed + 10), k=3, rounds=12, local_steps=5, init=init,
               monitor=lambda w, curve=curve: curve.append(node_accuracy(w, data.X_test, data.y_test)))
        runs.append((w, np.array(curve)))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    assert runs[0][1].shape == (13,)  # before the first round and after each of the 12
    w_plain = ifca_logistic(data.instance, np.random.default_rng(seed + 10), k=3, rounds=12, local_steps=5, init=init)
    np.testing.assert_array_equal(w_plain, runs[0][0])


def test_simulate_digits_with_the_cached_split_equals_fresh_splits():
    """Every arm at two grid points, the split built once, equals each call on a freshly built split; the cached
    split is not changed by the arms."""
    arms = ("algorithm1", "local", "pooled", "ifca", "oracle")
    points = ((("IFCA initialisation", "random"),), (("IFCA initialisation", "identical"),))
    digits_design._replicate_data.cache_clear()
    cached = [simulate_digits(arms, p, TINY, 3, (0, 1)) for p in points]
    again = [simulate_digits(arms, p, TINY, 3, (0, 1)) for p in points]   # from the cache, after the arms ran
    fresh = []
    for p in points:
        digits_design._replicate_data.cache_clear()
        fresh.append(simulate_digits(arms, p, TINY, 3, (0, 1)))
    for a, b, c in zip(cached, again, fresh, strict=True):
        for x, y, z in zip(a, b, c, strict=True):
            np.testing.assert_array_equal(x, y)
            np.testing.assert_array_equal(x, z)
    assert digits_design._replicate_data.cache_info().currsize == 2


def test_ifca_step_is_the_grid_points_and_stays_stable():
    """IFCA's step (an unreported choice on the grid): the default factor 1 is the old run bit for bit, 1.9 is another
    run, and a factor outside (0, 2) (unstable GD) is refused naming the field."""
    from verify.gtv.digits_design import IFCA_STEPS

    assert IFCA_STEPS == {"1/beta_max": 1.0, "1.9/beta_max": 1.9}
    data = digits_split(np.random.default_rng(4), pairs=((0, 1), (2, 3)), nodes_per_cluster=3, split=(6, 2),
                        test_per_cluster=5)
    kw = dict(k=2, rounds=6, local_steps=5, init="random")
    base = _old_ifca_logistic(data.instance, np.random.default_rng(7), **kw)
    np.testing.assert_array_equal(ifca_logistic(data.instance, np.random.default_rng(7), **kw, step_factor=1.0), base)
    assert not np.array_equal(ifca_logistic(data.instance, np.random.default_rng(7), **kw, step_factor=1.9), base)
    with pytest.raises(ValueError, match="step_factor"):
        ifca_logistic(data.instance, np.random.default_rng(7), **kw, step_factor=2.0)
