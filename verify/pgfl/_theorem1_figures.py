r"""Figures of Theorem I's checks: state error against :math:`r(T)^n`, and the limit (Pc) against :math:`\rho`."""

from __future__ import annotations

import numpy as np

from verify.pgfl._tau0_iteration import RATE_WINDOW
from verify.records import FigureSpec, Series

__all__ = ["bias_sweep_figure", "error_figure"]


def error_figure(cases: list[tuple[str, np.ndarray, float]], name: str, title: str) -> FigureSpec:
    series = []
    for label, errors, radius in cases:
        n = np.arange(1, errors.size + 1)
        keep = errors > 0
        series.append(Series(label=f"{label}: ||u^(n) - u*|| / ||u*||", x=n[keep], y=errors[keep], group=label))
        ref_n = np.array([1, errors.size])
        series.append(Series(label=f"{label}: r(T)^n = {radius:.4f}^n", x=ref_n,
                             y=np.maximum(radius ** ref_n.astype(float), 1e-300), style="dashed", group=label))
    series.append(Series(label="lower end of the fit window", x=(1, max(c[1].size for c in cases)),
                         y=(RATE_WINDOW[0],) * 2, style="dashed"))
    return FigureSpec(name=name, title=title, xlabel="iteration n", ylabel="relative state error", yscale="log",
                      series=tuple(series))


def bias_sweep_figure(sweep: dict, name: str, title: str) -> FigureSpec:
    x = sweep["rho_over_Lmax"]
    inv = [sweep["to_pi_weighted"][-1] * x[-1] / f for f in x]
    return FigureSpec(
        name=name, title=title, xlabel="rho / L_max", ylabel="max_{s,q} relative distance of (Pc)", xscale="log",
        yscale="log",
        series=(Series(label="(Pc) to (Pa)", x=x, y=sweep["to_Pa"], style="points", group="pa"),
                Series(label="(Pc) to the pi-weighted optimum", x=x, y=sweep["to_pi_weighted"], style="points",
                       group="pi"),
                Series(label="slope -1 (through the last point)", x=x, y=inv, style="dashed", group="pi"),
                Series(label="(Pa) to the pi-weighted optimum (weighting bias)", x=(x[0], x[-1]),
                       y=(sweep["Pa_vs_pi_weighted"],) * 2, style="dashed", group="pa")))
