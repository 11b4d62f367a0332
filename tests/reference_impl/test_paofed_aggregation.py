"""The server aggregation of the vectorised PAO-Fed step: its fast paths add the messages in np.add.at's order."""

import numpy as np


def test_several_runs_add_their_rows_per_segment_as_add_at_does():
    """Several runs, messages listed run by run (as the step delivers them): the per-run reductions of ``_add_rows``
    equal np.add.at bit for bit (rows over 16 decades, where another order rounds differently); a run without
    messages keeps its row; an unsorted listing falls back to np.add.at itself."""
    from reference_impl.paofed.simulation import _add_rows

    rng = np.random.default_rng(8)
    r = np.sort(rng.choice([0, 1, 3, 4], size=400))  # run 2 gets no message
    rows = rng.standard_normal((400, 30)) * 10.0 ** rng.integers(-8, 8, size=(400, 1))
    w = rng.standard_normal((5, 30))
    expected = w.copy()
    np.add.at(expected, r, rows)
    assert np.array_equal(_add_rows(w, r, rows), expected)
    assert np.array_equal(_add_rows(w, r, rows)[2], w[2])
    shuffled = rng.permutation(400)
    expected = w.copy()
    np.add.at(expected, r[shuffled], rows[shuffled])
    assert np.array_equal(_add_rows(w, r[shuffled], rows[shuffled]), expected)
