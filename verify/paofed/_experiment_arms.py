r"""The vocabulary of the PAO-Fed experiments X1-X11 (docs/papers/paofed.md#exp-x1 to #exp-x11)
(:mod:`verify.paofed.experiments`): the arms compared, the grids of the unreported choices they are decided over, and
the figures.

The arms are :class:`verify.paofed._experiment_setting.Arm` records (an algorithm in a setting); a grid's first point
is its default, drawn in the figures. Each figure draws every arm in its own colour and style with its band, marks
the compared window and captions the decision.
"""

from __future__ import annotations

import numpy as np

from verify.harness import curve_figure
from verify.paofed._experiment_setting import C2_MU, CHOICES, HEAVY_TAIL, STEP, STRAGGLER_LAW, Arm

__all__ = ["APPROX_DB", "C0", "C1", "C1_IDEAL", "C2", "C2_CAL", "C2_FULL", "C2_HEAVY", "C2_STRAG", "FEDSGD",
           "FEDSGD_CAL", "FEDSGD_HEAVY", "FEDSGD_IDEAL", "FEDSGD_STRAG", "HEAVY_GRID", "HEAVY_MU_GRID", "ONLINE_FED",
           "ONLINE_FED_50", "ONLINE_FED_QUARTER", "PSO_FED", "SIGNSGD", "STEP_GRID", "STRAGGLER_GRID",
           "STRAGGLER_LAW_GRID", "U0", "U1", "U1_CAL", "U1_FULL", "U1_HEAVY", "U1_IDEAL", "U1_M", "U1_STRAG", "U2",
           "choices", "figures"]

#: "≈ means within 1 dB": the operational reading of the paper's "performs like" (docs/papers/paofed.md).
APPROX_DB = 1.0

# ------------------------------------------------------------------------------------------------
# Arms.

C0, U0 = Arm(label="PAO-Fed-C0", algorithm="paofed-c0"), Arm(label="PAO-Fed-U0", algorithm="paofed-u0")
C1, U1 = Arm(label="PAO-Fed-C1", algorithm="paofed-c1"), Arm(label="PAO-Fed-U1", algorithm="paofed-u1")
C2, U2 = Arm(label="PAO-Fed-C2", algorithm="paofed-c2"), Arm(label="PAO-Fed-U2", algorithm="paofed-u2")
U1_M = tuple(Arm(label=f"PAO-Fed-U1, m = {name}", algorithm="paofed-u1", m_index=i)
             for i, name in enumerate(("m_1 (1 at paper size)", "m (4)", "m_3 (32)")))
FEDSGD = Arm(label="Online-FedSGD", algorithm="online-fedsgd")
ONLINE_FED = Arm(label="Online-Fed (s = m/D)", algorithm="online-fed")
ONLINE_FED_QUARTER = Arm(label="Online-Fed (s = 0.25)", algorithm="online-fed", server_fraction=0.25)
ONLINE_FED_50 = Arm(label="Online-Fed (50 %)", algorithm="online-fed-50")
PSO_FED = Arm(label="PSO-Fed (98 %)", algorithm="pso-fed")
SIGNSGD = Arm(label="SignSGD", algorithm="signsgd")
U1_FULL = Arm(label="PAO-Fed-U1, M = I", algorithm="paofed-u1", full_downlink=True)
C2_FULL = Arm(label="PAO-Fed-C2, M = I", algorithm="paofed-c2", full_downlink=True)


def _in(setting: str, arm: Arm, tag: str) -> Arm:
    """``arm`` in another setting, labelled with ``tag``."""
    return Arm(label=f"{arm.label} ({tag})", algorithm=arm.algorithm, setting=setting, m_index=arm.m_index,
               server_fraction=arm.server_fraction, full_downlink=arm.full_downlink)


C1_IDEAL, U1_IDEAL, FEDSGD_IDEAL = (_in("ideal", a, "ideal") for a in (C1, U1, FEDSGD))
U1_CAL, C2_CAL, FEDSGD_CAL = (_in("calcofi", a, "CalCOFI-like") for a in (U1, C2, FEDSGD))
U1_HEAVY, FEDSGD_HEAVY = (_in("heavy_delay", a, "heavy delay") for a in (U1, FEDSGD))
C2_HEAVY = Arm(label="PAO-Fed-C2, raised mu (heavy delay)", algorithm="paofed-c2", setting="heavy_delay",
               mu_from_grid=True)
C2_STRAG, U1_STRAG, FEDSGD_STRAG = (_in("stragglers", a, "stragglers") for a in (C2, U1, FEDSGD))

# ------------------------------------------------------------------------------------------------
# Grids of the unreported choices (the first point is the default, drawn in the figures).

STEP_GRID = {"ci": [{STEP: "matched"}], "thorough": [{STEP: c} for c in ("matched", "low", "high")]}
HEAVY_GRID = {"ci": [{STEP: "matched", HEAVY_TAIL: "discard"}],
              "thorough": [{STEP: "matched", HEAVY_TAIL: "discard"}, {STEP: "low", HEAVY_TAIL: "discard"},
                           {STEP: "high", HEAVY_TAIL: "discard"}, {STEP: "matched", HEAVY_TAIL: "cap"}]}
HEAVY_MU_GRID = {"ci": [{STEP: "matched", HEAVY_TAIL: "discard", C2_MU: 0.9}],
                 "thorough": [{**p, C2_MU: 0.9} for p in HEAVY_GRID["thorough"]]
                 + [{STEP: "matched", HEAVY_TAIL: "discard", C2_MU: 0.8}]}
STRAGGLER_GRID = {"ci": [{STEP: "matched", STRAGGLER_LAW: "lattice"}],
                  "thorough": [{STEP: "matched", STRAGGLER_LAW: "lattice"}, {STEP: "low", STRAGGLER_LAW: "lattice"},
                               {STEP: "high", STRAGGLER_LAW: "lattice"},
                               {STEP: "matched", STRAGGLER_LAW: "every iteration"}]}
STRAGGLER_LAW_GRID = {"ci": [{STRAGGLER_LAW: "lattice"}],
                      "thorough": [{STRAGGLER_LAW: "lattice"}, {STRAGGLER_LAW: "every iteration"}]}

def choices(*names: str) -> dict:
    """The lines of :data:`CHOICES` saying why the paper leaves ``names`` open."""
    return {name: CHOICES[name] for name in names}


# ------------------------------------------------------------------------------------------------
# Figures: each arm in its own colour and style with its band, the compared windows marked, the decision captioned.


def figures(name: str, title: str, arms=None, windows=("final",)):
    """``figures(curves, scale, outcomes)``: the binned median MSE-test curves of the arms (all, or ``arms``)."""
    def draw(curves, scale, outcomes):
        shown = [a for a in curves if arms is None or a in arms]
        width = scale.iterations // scale.bins
        x = (np.arange(scale.bins) + 0.5) * width
        binned = {a.label: 10.0 * np.log10(np.nanmean(curves[a][:, 1:].reshape(curves[a].shape[0], scale.bins, width),
                                                      axis=2)) for a in shown}  # the recorded samples of each bin
        spans = {"final": (scale.iterations - scale.window, scale.iterations), "early": scale.early}
        caption = "; ".join(
            f"{s.text}: median difference {o.median:+.2f} dB, {100 * (1 - 2 * 0.025):.0f} %-level sign-test bounds "
            f"[{o.lower:+.2f}, {o.upper:+.2f}] at the claim's alpha, n = {o.n}" for s, o in outcomes)
        return [curve_figure(name, title, x, binned, xlabel="iteration n",
                             ylabel="MSE-test (dB): median over replicates, 95 % band",
                             windows=[spans[w] for w in windows], caption=caption)]

    return draw
