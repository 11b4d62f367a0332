"""The CLI contract's lower-layer fixes (issue 28): the simulations and loaders the commands call refuse or report
instead of truncating silently or raising after the work.

* ``reference_impl.zcdp_nfl.run_zcdp_nfl``: a total zCDP that is not finite gives ``epsilon = inf`` and a
  ``privacy_status`` saying why (it used to raise ValueError after the whole run);
* ``reference_impl.datasets``: a fractional label is refused (it used to be truncated to an integer);
* ``reference_impl.gtv.data.load_npz_instance``: reads through the guarded ``.npz`` reader (it used raw
  ``np.load``: no header check, no size limit).
"""

from __future__ import annotations

import io
import math
import zipfile

import numpy as np
import pytest


# -- zCDP-NFL: non-finite total zCDP ------------------------------------------------------------------------------
def _nfl_run(kind: str, **privacy):
    from reference_impl.zcdp_nfl import NFLConfig, PrivacySchedule, StepSchedule, run_zcdp_nfl, synthetic_problem

    problem = synthetic_problem(np.random.default_rng(0), K=5, P=3, M=4, objective="lad")
    config = NFLConfig(rho=1.0, step=StepSchedule(kind="constant", eta0=0.5),
                       privacy=PrivacySchedule(kind=kind, **privacy))
    with np.errstate(over="ignore", divide="ignore"):
        return run_zcdp_nfl(problem, config, 20, np.random.default_rng(0))


#: (schedule, its parameters, finite epsilon?, what the status must say)
NFL_TOTALS = [
    ("S2", {"phi1": 1e-3, "tau": 0.9}, True, "accounted"),
    ("S1", {"sigma2_0": 1e-300, "tau": 0.1}, False, "no finite (epsilon, delta) guarantee"),  # variances underflow
    ("S2", {"phi1": 1e300, "tau": 1e-3}, False, "leaves the double range"),                   # budgets overflow
    ("none", {}, False, "no noise"),
]


@pytest.mark.parametrize(("kind", "privacy", "finite", "needle"), NFL_TOTALS)
def test_zcdp_nfl_reports_a_non_finite_total_instead_of_raising(kind, privacy, finite, needle):
    run = _nfl_run(kind, **privacy)
    assert math.isfinite(run.epsilon) is finite and needle in run.privacy_status
    if finite:  # the Bun-Steinke conversion of the total, as before
        from theory.privacy.conversions import zcdp_to_approx_dp_bun_steinke

        assert run.epsilon == zcdp_to_approx_dp_bun_steinke(run.total_zcdp, 1e-5)
    else:
        assert run.epsilon == math.inf
    assert run.ne is None and run.w.shape == (1, 5, 3)  # the run itself completed


# -- datasets: fractional labels ----------------------------------------------------------------------------------
def _mnist(tmp_path, y_train):
    rng = np.random.default_rng(0)
    path = tmp_path / "mnist.npz"
    np.savez(path, x_train=rng.integers(0, 256, size=(4, 3, 3), dtype=np.uint8), y_train=y_train,
             x_test=rng.integers(0, 256, size=(2, 3, 3), dtype=np.uint8), y_test=np.array([0, 1]))
    return path


#: (labels as stored, accepted labels or the message of the refusal)
LABELS = [
    (np.array([0, 1, 2, 3]), [0, 1, 2, 3]),
    (np.array([0.0, 1.0, 2.0, 3.0]), [0, 1, 2, 3]),                   # exact integers stored as floats
    (np.array([[0], [1], [2], [3]]), [0, 1, 2, 3]),                  # MedMNIST's (n, 1) layout
    (np.array([0.0, 1.5, 2.0, 3.0]), "train labels must hold integers, got 1.5"),   # used to become 1
    (np.array([0.0, 1.0, np.nan, 3.0]), "train labels must hold integers, got nan"),
    (np.array([0, -1, 2, 3]), "train labels must hold integers in [0, 2**31], got -1"),
    (np.array([[0, 1], [2, 3]]), "one label each"),
]


@pytest.mark.parametrize(("labels", "expected"), LABELS)
def test_image_labels_are_integers_or_refused(tmp_path, labels, expected):
    from reference_impl.datasets import load_mnist_npz

    path = _mnist(tmp_path, labels)
    if isinstance(expected, str):
        with pytest.raises(ValueError, match=expected.replace("[", r"\[").replace("]", r"\]").replace("*", r"\*")):
            load_mnist_npz(path)
    else:
        _, y, _, _ = load_mnist_npz(path)
        assert y.dtype == np.int64 and y.tolist() == expected


# -- GTV: the guarded .npz reader ---------------------------------------------------------------------------------
def _gtv_arrays():
    from reference_impl.gtv.data import dense_clusters_instance

    inst, _ = dense_clusters_instance(np.random.default_rng(0), N=3, d=2, m=3, n_inter=1)
    return {"X": inst.X, "y": inst.y, "m": inst.m, "edges": inst.edges, "A": inst.A, "clusters": inst.clusters}


def _huge_member(name: str) -> bytes:
    """An .npz whose member header claims a (10**6, 10**6) float64 array but holds 16 bytes."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6)})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr(f"{name}.npy", header.getvalue() + b"\0" * 16)
    return buffer.getvalue()


def _write(tmp_path, kind):
    path = tmp_path / "data.npz"
    arrays = _gtv_arrays()
    if kind == "missing":
        return tmp_path / "nope.npz"
    if kind == "directory":
        path.mkdir()
    elif kind == "not_zip":
        path.write_bytes(b"not a zip archive at all")
    elif kind == "npy":
        np.save(path.with_suffix(".npy"), arrays["X"])
        path.with_suffix(".npy").rename(path)
    elif kind == "huge_header":
        path.write_bytes(_huge_member("X"))
    elif kind == "complex":
        np.savez(path, **{**arrays, "X": arrays["X"] + 0j})
    elif kind == "object":
        np.savez(path, **{**arrays, "A": np.array([object()] * 3, dtype=object)})
    elif kind == "missing_key":
        np.savez(path, X=arrays["X"])
    return path


#: (what is wrong with the file, what the ValueError must say)
GTV_FILES = [
    ("missing", "does not exist"),
    ("directory", "is a directory"),
    ("not_zip", "not an .npz file"),
    ("npy", "not an .npz file"),
    ("huge_header", "header claims shape (1000000, 1000000)"),
    ("complex", "holds complex numbers"),
    ("object", "Python objects"),
    ("missing_key", "missing y, m, edges, A"),
]


@pytest.mark.parametrize(("kind", "needle"), GTV_FILES)
def test_gtv_npz_goes_through_the_guarded_reader(tmp_path, kind, needle):
    from reference_impl.gtv.data import load_npz_instance

    path = _write(tmp_path, kind)
    with pytest.raises(ValueError) as exc:
        load_npz_instance(path, lam=0.1)
    message = str(exc.value)
    assert needle in message, message
    assert "\n" not in message


def test_gtv_npz_round_trip_still_reads(tmp_path):
    from reference_impl.gtv.data import load_npz_instance

    arrays = _gtv_arrays()
    np.savez(tmp_path / "ok.npz", **arrays)
    inst = load_npz_instance(tmp_path / "ok.npz", lam=0.1)
    np.testing.assert_array_equal(inst.X, arrays["X"])
    np.testing.assert_array_equal(inst.clusters, arrays["clusters"])


def test_the_cli_reader_is_the_guarded_reader(tmp_path):
    """fedcheck's load_npz delegates to reference_impl.datasets (one reader) and keeps its FileError type."""
    from fedcheck._files import FileError, load_npz

    path = tmp_path / "data.npz"
    path.write_bytes(_huge_member("X"))
    with pytest.raises(FileError, match=r"^data.path: '.*data.npz' array 'X': its header claims shape"):
        load_npz(path, "data.path")
