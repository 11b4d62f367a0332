"""Loaders read local files only; the tests write small files in the published layouts."""

import numpy as np
import pytest

from reference_impl.datasets import load_digits_images, load_medmnist_npz, load_mnist_npz
from reference_impl.pgfl import (
    DIGIT_TASKS,
    PGFLConfig,
    accuracy_observer,
    classification_problem,
    load_pgfl_npz,
    run_pgfl,
)


def _fake_images(rng, n, side=28):
    return rng.integers(0, 256, size=(n, side, side), dtype=np.uint8), rng.integers(0, 10, size=n)


def test_mnist_npz_layout(tmp_path):
    rng = np.random.default_rng(0)
    (xtr, ytr), (xte, yte) = _fake_images(rng, 30), _fake_images(rng, 10)
    path = tmp_path / "mnist.npz"
    np.savez(path, x_train=xtr, y_train=ytr, x_test=xte, y_test=yte)
    X, y, Xt, yt = load_mnist_npz(path)
    assert X.shape == (30, 784) and Xt.shape == (10, 784) and 0.0 <= X.min() and X.max() == 1.0  # 28 x 28 flattened
    assert np.array_equal(y, ytr) and np.array_equal(yt, yte)


def test_medmnist_npz_layout_and_missing_keys(tmp_path):
    rng = np.random.default_rng(1)
    (xtr, ytr), (xte, yte) = _fake_images(rng, 12), _fake_images(rng, 6)
    path = tmp_path / "organamnist.npz"
    np.savez(path, train_images=xtr, train_labels=ytr[:, None], test_images=xte, test_labels=yte[:, None])
    X, y, _, _ = load_medmnist_npz(path)
    assert X.shape == (12, 784) and y.shape == (12,)  # the 12 fake training images, 28 x 28
    bad = tmp_path / "bad.npz"
    np.savez(bad, train_images=xtr)
    with pytest.raises(ValueError, match="missing train_labels, test_images, test_labels"):
        load_medmnist_npz(bad)
    with pytest.raises(ValueError, match="path must name an existing .npz file"):
        load_mnist_npz(tmp_path / "nope.npz")


def test_digits_classification_runs_and_learns():
    X, y, Xt, yt = load_digits_images()
    assert X.shape[1] == 64 and set(np.unique(y)) == set(range(10))  # 8 x 8 images of the ten digits
    task = classification_problem(np.random.default_rng(0), X, y, Xt, yt, DIGIT_TASKS["M-1"], servers=3,
                                  clients_per_server=5, samples=(2, 4))
    p = task.problem
    assert p.loss == "logistic" and max(np.linalg.norm(x, axis=1).max() for x in p.X) <= 1.0 + 1e-12  # unit ball + ulps
    acc = run_pgfl(p, PGFLConfig(rho=1.0), 60, np.random.default_rng(0),
                   observe=accuracy_observer(p, task.X_test, task.y_test)).observations[:, 0]
    assert acc[-1] > 0.8  # digits 1/8, 1/9, 7/8 are easy: chance is 0.5


def test_user_npz_problem(tmp_path):
    rng = np.random.default_rng(3)
    arrays = {"client_server": np.array([0, 0, 1, 1]), "client_cluster": np.array([0, 1, 0, 1]),
              "true_models": rng.standard_normal((2, 3))}
    for k in range(4):
        arrays[f"X_{k}"] = rng.standard_normal((3, 3))
        arrays[f"y_{k}"] = rng.standard_normal(3)
    path = tmp_path / "mine.npz"
    np.savez(path, **arrays)
    p = load_pgfl_npz(path)
    assert (p.S, p.K, p.n_clusters, p.d) == (2, 4, 2, 3) and p.adjacency[0, 1] and not p.adjacency[0, 0]  # as written
    del arrays["y_3"]
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match="missing y_3"):
        load_pgfl_npz(path)


def test_a_file_with_no_images_says_so(tmp_path):
    """An MNIST file with 0 training images said numpy's 'cannot reshape array of size 0' (an adversarial audit)."""
    path = tmp_path / "m.npz"
    np.savez(path, x_train=np.zeros((0, 28, 28)), y_train=np.zeros(0, dtype=np.int64),
             x_test=np.zeros((5, 28, 28)), y_test=np.zeros(5, dtype=np.int64))
    with pytest.raises(ValueError, match="holds no train images"):
        load_mnist_npz(path)
