"""The selection second moment Pi = E[diag(M) diag(M)^T] against enumeration of every selection."""

import itertools

import numpy as np
import pytest

from theory.msd.instance import selection_second_moment


def _windows(D, m):
    for start in range(D):
        w = np.zeros(D)
        w[[(start + r) % D for r in range(m)]] = 1.0
        yield w


def _subsets(D, m):
    for chosen in itertools.combinations(range(D), m):
        w = np.zeros(D)
        w[list(chosen)] = 1.0
        yield w


@pytest.mark.parametrize("law, draws", [("window", _windows), ("subset", _subsets)])
@pytest.mark.parametrize("D", range(1, 8))
def test_pi_is_the_average_outer_product_of_every_selection(law, draws, D):
    """Every (D, m) with D <= 7, including m + d > D where cyclic windows wrap round the end (at m = D every
    pair is always selected together: Pi = 1)."""
    for m in range(1, D + 1):
        selections = list(draws(D, m))
        exact = sum(np.outer(w, w) for w in selections) / len(selections)
        # probabilities: equal to ulps
        np.testing.assert_allclose(selection_second_moment(D, m, law), exact, rtol=0, atol=1e-15)
