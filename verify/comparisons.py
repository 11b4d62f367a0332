"""Deprecated: the experiment harness is :mod:`verify.harness`.

Only :data:`DECISION_RULE` is left here, for ``reports/html.py``, which still imports it from this module; once it
imports ``verify.harness.DECISION_RULE`` this module goes.
"""

from verify.harness.decision import DECISION_RULE

__all__ = ["DECISION_RULE"]
