"""Tests of the digits split of the GTV paper's §5.4 stand-in (reference_impl.gtv.data.digits_split)."""

import numpy as np
import pytest

from reference_impl.gtv.data import DigitsSplit, digits_split

#: A small split: 2 clusters x 4 nodes, 5 train / 3 validation images per node, 20 test images per cluster.
SMALL = dict(nodes_per_cluster=4, split=(5, 3), test_per_cluster=20)


def _rows(X):
    return {tuple(r) for r in X.reshape(-1, X.shape[-1])}


def test_split_shapes_labels_and_disjoint_parts():
    data = digits_split(np.random.default_rng(0), **SMALL)
    inst = data.instance
    assert isinstance(data, DigitsSplit) and data.pairs == ((0, 1), (2, 3))
    assert inst.n == 8 and inst.d == 65 and inst.loss == "logistic"       # 64 pixels + the intercept
    assert data.X_val.shape == (8, 3, 65) and data.X_test.shape == (8, 20, 65)
    assert inst.clusters.tolist() == [0] * 4 + [1] * 4
    for y in (inst.y, data.y_val, data.y_test):
        assert set(np.unique(y)) == {-1.0, 1.0}
    assert np.all(inst.X[..., -1] == 1.0) and 0.0 <= inst.X[..., :64].min() and inst.X[..., :64].max() <= 1.0
    # every node of a cluster is scored on the same held-out pool, which no node trains or validates on
    for c in (0, 1):
        rows = np.flatnonzero(inst.clusters == c)
        assert np.all(data.X_test[rows] == data.X_test[rows[0]])
        held = _rows(np.concatenate([inst.X[rows], data.X_val[rows]], axis=1))
        # the digits set holds a few exact duplicate images; none of this draw's test images is one of them
        assert not held & _rows(data.X_test[rows[0]])
    with pytest.raises(ValueError, match="read-only"):
        data.X_test[0, 0, 0] = 1.0


def test_graph_from_training_images_is_symmetric_knn_and_mostly_intra_cluster():
    data = digits_split(np.random.default_rng(1), nodes_per_cluster=10, split=(10, 4), test_per_cluster=40)
    inst = data.instance
    e = inst.edges
    assert np.all(e[:, 0] < e[:, 1]) and len(np.unique(e, axis=0)) == len(e)
    assert inst.degree.min() >= 4                                          # each node joins its 4 nearest
    assert np.all((0 < inst.A) & (inst.A <= 1))                            # exp(-dist), dist > 0
    assert np.mean(inst.clusters[e[:, 0]] == inst.clusters[e[:, 1]]) >= 0.9  # digit pairs differ in mean image
    same = digits_split(np.random.default_rng(1), nodes_per_cluster=10, split=(10, 4), test_per_cluster=40)
    np.testing.assert_array_equal(same.instance.edges, e)                  # the rng fixes the draw


@pytest.mark.parametrize("kwargs, field", [
    (dict(split=(5,)), "split"),
    (dict(split=(0, 3)), "split"),
    (dict(nodes_per_cluster=1), "nodes_per_cluster"),
    (dict(test_per_cluster=0), "test_per_cluster"),
    (dict(pairs=((0, 1), (1, 2))), "pairs"),
    (dict(pairs=((0, 10),)), "pairs"),
    (dict(knn=0), "knn"),
    (dict(nodes_per_cluster=20, split=(10, 4), test_per_cluster=100), "test_per_cluster"),   # 380 > ~360 images
])
def test_bad_arguments_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        digits_split(np.random.default_rng(0), **{**SMALL, **kwargs})
