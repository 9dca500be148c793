"""Figure helpers for the figure checks: loss and parameter panels with ODE overlays (matplotlib, Agg).

A figure is a row of :class:`Panel` s, each a list of :class:`Series`; one PNG per time axis
(log and linear: a run spans decades of time, and each axis shows what the other hides).
Optimiser runs are drawn as solid lines with a ±2 SE band when standard errors are given; ODE
predictions as dashed or dotted lines, in the line style a paper's descriptor gives each reading
(``checks.papers.Paper.styles``). Every file is written through ``Context.figure_path`` so the
report finds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Series:
    """One line: label, times, values, optional standard errors, matplotlib style keywords."""

    label: str
    t: np.ndarray
    y: np.ndarray
    se: np.ndarray | None = None
    style: dict = field(default_factory=dict)


@dataclass
class Panel:
    """One axes: a title, a y label, its series, whether y is logarithmic, vertical marker lines."""

    title: str
    ylabel: str
    series: list[Series]
    log_y: bool = True
    markers: dict[str, float] = field(default_factory=dict)
    #: a fixed legend corner: matplotlib's "best" searches every data point and dominates the run time
    legend: str = "lower left"


def _draw(ax, panel: Panel, log_t: bool) -> None:
    for s in panel.series:
        t, y = np.asarray(s.t, float), np.asarray(s.y, float)
        keep = np.isfinite(y) & ((t > 0) if log_t else np.ones_like(t, bool))
        if panel.log_y:
            keep &= y > 0
        line, = ax.plot(t[keep], y[keep], label=s.label, lw=1.2, **s.style)
        if s.se is not None:
            se = np.asarray(s.se, float)[keep]
            lo, hi = y[keep] - 2 * se, y[keep] + 2 * se
            if panel.log_y:
                lo = np.where(lo > 0, lo, np.nan)
            ax.fill_between(t[keep], lo, hi, color=line.get_color(), alpha=0.2, lw=0)
    for name, when in panel.markers.items():
        if np.isfinite(when) and (when > 0 or not log_t):
            ax.axvline(when, color="grey", lw=0.6, ls=":")
            ax.annotate(name, (when, 1.0), xycoords=("data", "axes fraction"), fontsize=6, rotation=90,
                        va="top", ha="right", color="grey")
    if log_t:
        ax.set_xscale("log")
    if panel.log_y:
        ax.set_yscale("log")
    ax.set_title(panel.title, fontsize=9)
    ax.set_xlabel("t = η × iteration" if log_t else "t = η × iteration (linear)", fontsize=8)
    ax.set_ylabel(panel.ylabel, fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=6, loc=panel.legend)


def save_panels(panels: Sequence[Panel], path, *, log_t: bool, suptitle: str = "") -> str:
    """Draw ``panels`` side by side with a log or linear time axis and save a PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4), squeeze=False)
    for ax, panel in zip(axes[0], panels, strict=True):
        _draw(ax, panel, log_t)
    if suptitle:
        fig.suptitle(suptitle, fontsize=9)
    # fixed margins: tight_layout measures every tick label and costs seconds per figure
    fig.subplots_adjust(left=0.06, right=0.99, bottom=0.15, top=0.86, wspace=0.28)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return str(path)


def save_both_axes(ctx, stem: str, panels: Sequence[Panel], suptitle: str = "") -> list[str]:
    """Save ``<stem>_log.png`` and ``<stem>_linear.png`` through ``ctx.figure_path``; return the paths."""
    return [save_panels(panels, ctx.figure_path(f"{stem}_{axis}.png"), log_t=(axis == "log"), suptitle=suptitle)
            for axis in ("log", "linear")]
