"""Hypothesis strategies of the command line's input contract: a configuration with one field replaced by a value that
is wrong for its kind.

Part of :mod:`verify.strategies` (import them from there).
"""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["malformed_config"]


# --- cli (issue 12: malformed configuration fields) ---
#: Values that are wrong for a field of each kind, whatever the rest of the configuration says.
_BAD_BY_KIND = {
    "pos_int": (0, -1, -(10**6), 2.5, "3", True, [1], {"a": 1}),
    "nonneg_int": (-1, -(10**6), 0.5, "0", False, [0], {"a": 1}),
    "pos_real": (0.0, -1.0, -1e-300, float("nan"), float("inf"), float("-inf"), "1.0", True, [1.0], {"a": 1}),
    "nonneg_real": (-1.0, -1e-300, float("nan"), float("inf"), "0", False, [0.5], {"a": 1}),
    "unit_real": (-0.1, 1.5, float("nan"), float("inf"), "0.5", True, [0.5], {"a": 1}),
    "choice": ("", "bogus", "RIDGE", " alg1", 3, 1.5, True, ["x"], {"a": 1}),
    "real_list": ([], ["a"], [True, False], [float("nan")], [float("inf")], [[1.0], [2.0, 3.0]], "x", {"a": 1}),
}


@st.composite
def malformed_config(draw, fields: dict) -> tuple[str, str, object]:
    """One field of a valid configuration replaced by a value that is wrong for it.

    ``fields`` maps ``"section.field"`` to its kind (a key of ``_BAD_BY_KIND``). Returns
    ``(section, field, bad_value)``; every value drawn is invalid by construction (wrong type, outside the
    allowed range, non-finite, an unknown choice, or an empty/ragged/non-numeric list).
    """
    name = draw(st.sampled_from(sorted(fields)))
    section, field = name.split(".", 1)
    bad = draw(st.sampled_from(_BAD_BY_KIND[fields[name]]))
    return section, field, bad
