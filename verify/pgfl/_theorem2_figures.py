"""Figures of Theorem II's privacy-noise sweep: the maximal ratio against rho, and the ratio against n."""

from __future__ import annotations

import numpy as np

from verify.pgfl._noise_sweep import SweepScale
from verify.records import FigureSpec, Series

__all__ = ["noise_sweep_figures"]


def noise_sweep_figures(sweep: dict, scale: SweepScale) -> tuple[FigureSpec, ...]:
    grid = scale.rho_grid
    series = []
    for tau in scale.taus:
        cells = [r for r in sweep["table"] if r["tau"] == float(tau)]
        series.append(Series(label=f"tau = {tau:g}, privacy noise (phi0 = {sweep['privacy']['phi0']:g}, "
                                   f"zeta = {sweep['privacy']['zeta']:g})", x=grid, group=f"tau{tau:g}",
                             y=[max(r["noisy_max_ratio"], 1e-300) for r in cells]))
        series.append(Series(label=f"tau = {tau:g}, noise-free", x=grid, style="dashed", group=f"tau{tau:g}",
                             y=[max(r["noiseless_max_ratio"], 1e-300) for r in cells]))
    series.append(Series(label="bound (ratio 1)", x=(grid[0], grid[-1]), y=(1.0, 1.0), style="dashed"))
    figures = [FigureSpec(
        name="noise_sweep_max_ratio", xlabel="rho / L_max", ylabel="max_n E[D_n] / B_n", xscale="log", yscale="log",
        title="Theorem II (Algorithm 2, CRN): max_n E[D_n] / B_n against rho", series=tuple(series))]
    at = min((m for m in grid if m >= 1.0), default=grid[-1])
    curves = sweep["curves"][at]
    series = []
    for tau in scale.taus:
        c = curves[float(tau)]
        series.append(Series(label=f"tau = {tau:g}, privacy noise", x=c["n"], y=np.maximum(c["noisy"], 1e-300),
                             group=f"tau{tau:g}"))
        series.append(Series(label=f"tau = {tau:g}, noise-free", x=c["n"], y=np.maximum(c["noiseless"], 1e-300),
                             style="dashed", group=f"tau{tau:g}"))
    longest = max(int(curves[float(t)]["n"][-1]) for t in scale.taus)
    series.append(Series(label="bound (ratio 1)", x=(1, longest), y=(1.0, 1.0), style="dashed"))
    figures.append(FigureSpec(name="noise_sweep_ratio_vs_iteration", xlabel="iteration n", ylabel="E[D_n] / B_n",
                              title=f"Theorem II (Algorithm 2, CRN) at rho = {at:g} L_max: E[D_n] / B_n",
                              xscale="log", yscale="log", series=tuple(series)))
    return tuple(figures)
