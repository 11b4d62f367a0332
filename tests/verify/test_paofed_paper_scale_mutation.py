"""Mutation: a white reduction that drops the Gaussian fourth-moment term makes the paper-scale card REFUTED."""

import theory.msd.thresholds as thresholds
import theory.msd.white as white
from verify.paofed.paper_scale import check_paper_scale
from verify.records import CheckContext, Verdict


def test_dropping_the_fourth_moment_term_is_refuted(monkeypatch):
    original = white.apply_F_component

    def truncated(m, comp, S, model="seed", mu=None):
        return original(m, comp, S, "seed", mu)  # the exact model silently replaced by the seed's

    monkeypatch.setattr(white, "apply_F_component", truncated)
    monkeypatch.setattr(thresholds, "apply_F_component", truncated)  # the spectral radii of the white route
    result = check_paper_scale(CheckContext(profile="ci"))
    assert result.verdict is Verdict.REFUTED
