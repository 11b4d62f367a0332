r"""Statements on a paired contrast of arms, and the sign-test evidence on one statement.

A *statement* is a claim about the per-replicate contrast :math:`d_i = \sum_t w_t\, r_t(\text{arm}_t)_i` (usually
:math:`r(A)_i - r(B)_i`, a paired difference of a read-out such as the NMSD in dB at an iteration):

* ordering ``below``: :math:`\operatorname{med}(d) < c` ("A below B by more than m": :math:`c = -m`; "A not
  more than m above B": :math:`c = +m`), and ``above`` symmetrically;
* equivalence ``within``: :math:`|\operatorname{med}(d)| < m`.

:func:`decide_statement` gives the exact sign-test p-values of a statement and of its negation
(:mod:`verify.harness.sign_test`); how they decide a claim is :mod:`verify.harness.decision`'s rule.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable

import numpy as np

from verify.harness.sign_test import p_median_above, p_median_below, sign_bounds

__all__ = ["RELATIONS", "Statement", "StatementOutcome", "Term", "above", "below", "decide_statement", "swapped",
           "within"]

#: The relations a statement may state.
RELATIONS = ("below", "above", "within")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Term:
    """One arm's read-out with its weight in a contrast."""

    arm: Hashable
    readout: str
    weight: float = 1.0


@dataclasses.dataclass(frozen=True, kw_only=True)
class Statement:
    """A statement on the median of the contrast :math:`d_i = \\sum_t w_t\\,r_t(\\mathrm{arm}_t)_i`.

    Attributes
    ----------
    text : str
        How the report names the statement.
    terms : tuple of Term
        The weighted read-outs whose sum is the contrast.
    relation : {"below", "above", "within"}
        ``below``: med d < threshold; ``above``: med d > threshold; ``within``: |med d| < threshold (the margin,
        > 0).
    threshold : float
        The statement's threshold (finite).
    """

    text: str
    terms: tuple[Term, ...]
    relation: str
    threshold: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "terms", tuple(self.terms))
        if not self.terms:
            raise ValueError("terms must name at least one arm read-out")
        if self.relation not in RELATIONS:
            raise ValueError(f"relation must be one of {RELATIONS}, got {self.relation!r}")
        if not math.isfinite(self.threshold):
            raise ValueError(f"threshold must be finite, got {self.threshold!r}")
        if self.relation == "within" and not self.threshold > 0:
            raise ValueError(f"an equivalence needs a margin > 0, got threshold = {self.threshold!r}")

    @property
    def arms(self) -> tuple:
        """The arms the contrast reads, in order of first appearance."""
        return tuple(dict.fromkeys(t.arm for t in self.terms))


def _label(arm: Hashable) -> str:
    return getattr(arm, "label", str(arm))


def below(a: Hashable, b: Hashable, at: str, *, margin: float = 0.0, text: str = "") -> Statement:
    """"``a`` below ``b`` by more than ``margin``" (``margin`` < 0: "``a`` not more than ``-margin`` above ``b``")."""
    what = text or (f"{_label(a)} below {_label(b)}" + (f" by more than {margin:g}" if margin > 0 else
                    f" + {-margin:g}" if margin < 0 else "") + f" ({at})")
    return Statement(text=what, terms=(Term(arm=a, readout=at), Term(arm=b, readout=at, weight=-1.0)),
                     relation="below", threshold=-margin)


def above(a: Hashable, b: Hashable, at: str, *, margin: float = 0.0, text: str = "") -> Statement:
    """"``a`` above ``b`` by more than ``margin``"."""
    what = text or (f"{_label(a)} above {_label(b)}" + (f" by more than {margin:g}" if margin > 0 else
                    f" - {-margin:g}" if margin < 0 else "") + f" ({at})")
    return Statement(text=what, terms=(Term(arm=a, readout=at), Term(arm=b, readout=at, weight=-1.0)),
                     relation="above", threshold=margin)


def within(a: Hashable, b: Hashable, at: str, *, margin: float, text: str = "") -> Statement:
    """"``a`` within ``margin`` of ``b``" (equivalence, two one-sided tests)."""
    what = text or f"{_label(a)} within +-{margin:g} of {_label(b)} ({at})"
    return Statement(text=what, terms=(Term(arm=a, readout=at), Term(arm=b, readout=at, weight=-1.0)),
                     relation="within", threshold=margin)


def swapped(statement: Statement) -> Statement:
    """The same statement with its arms exchanged (every term's weight negated): for a strict ordering with
    threshold 0, its negation. Mutation tests use it to show a confirmation is not built in."""
    return dataclasses.replace(statement, text="swapped: " + statement.text,
                               terms=tuple(dataclasses.replace(t, weight=-t.weight) for t in statement.terms))


@dataclasses.dataclass(frozen=True, kw_only=True)
class StatementOutcome:
    """The evidence on one statement: sign-test p-values for it and for its negation, and the bounds."""

    n: int
    median: float
    mean: float
    lower: float
    upper: float
    p_confirm: float
    p_refute: float
    confirm_fraction: float
    refute_fraction: float

    def as_dict(self) -> dict:
        """The fields, non-finite bounds as None (strict JSON)."""
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in dataclasses.asdict(self).items()}


def decide_statement(statement: Statement, d, alpha: float) -> StatementOutcome:
    """Sign-test evidence on ``statement`` from the per-replicate contrast ``d`` (bounds at level ``alpha``).

    ``p_confirm`` is the p-value of the statement (a TOST maximum for ``within``); ``p_refute`` of its negation
    (for ``within`` the smaller of the two directions, doubled). The fractions are the shares of replicates on
    each side (used to estimate the replicates that would decide).

    Examples
    --------
    >>> out = decide_statement(below("a", "b", "x"), -np.arange(1.0, 13.0), 0.01)
    >>> out.p_confirm == 0.5 ** 12 and out.upper < 0
    True
    """
    d = np.asarray(d, dtype=np.float64).ravel()
    if d.size < 1 or not np.all(np.isfinite(d)):
        raise ValueError(f"d must hold finite values (a diverged arm?), got {d.size} values")
    c, rel = statement.threshold, statement.relation
    lower, upper = sign_bounds(d, alpha)
    if rel == "below":
        p_c, p_r = p_median_below(d, c), p_median_above(d, c)
        f_c, f_r = np.mean(d < c), np.mean(d > c)
    elif rel == "above":
        p_c, p_r = p_median_above(d, c), p_median_below(d, c)
        f_c, f_r = np.mean(d > c), np.mean(d < c)
    else:
        p_c = max(p_median_below(d, c), p_median_above(d, -c))
        p_r = min(1.0, 2.0 * min(p_median_above(d, c), p_median_below(d, -c)))
        f_c = min(np.mean(d < c), np.mean(d > -c))
        f_r = max(np.mean(d > c), np.mean(d < -c))
    return StatementOutcome(n=int(d.size), median=float(np.median(d)), mean=float(d.mean()), lower=lower,
                            upper=upper, p_confirm=float(p_c), p_refute=float(p_r), confirm_fraction=float(f_c),
                            refute_fraction=float(f_r))
