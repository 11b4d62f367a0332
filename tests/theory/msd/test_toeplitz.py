"""theory.msd.instance.toeplitz_covariances: the per-client Toeplitz covariances of the PAO-Fed instances."""

import numpy as np
import pytest

from theory.msd.instance import reference_instance, toeplitz_covariances


def test_toeplitz_covariances_are_the_reference_instances_and_positive_definite():
    R = toeplitz_covariances((0.1, 0.3, 0.5, 0.7), 5)
    assert np.array_equal(R, reference_instance().R)
    assert np.all(np.linalg.eigvalsh(R) > 0) and np.array_equal(R, np.swapaxes(R, 1, 2))


@pytest.mark.parametrize("rhos, D, name", [((1.0,), 3, "rhos"), ((np.nan,), 3, "rhos"), ([[0.1]], 3, "rhos"),
                                           ((0.1,), 0, "D"), ((0.1,), 2.5, "D")])
def test_bad_input_names_the_parameter(rhos, D, name):
    with pytest.raises(ValueError, match=name):
        toeplitz_covariances(rhos, D)
