"""Meta-evaluation figures: Sakai's ASL curves and Voorhees & Buckley's swap rates.

- `asl_curves` — the ASL of every pair, sorted, one curve per measure or statistic (Sakai 2006,
  Figure 2: the lower and the longer the curve stays under the significance level, the more
  discriminative the measure).
- `swap_rate_curves` — the error (swap) rate against the difference between two systems, one
  curve per topic-set size (Voorhees & Buckley 2002, Figure 2).

Both draw on a new column-width Axes or the caller's ``ax`` and return it.
"""

from __future__ import annotations

import numpy as np

from fastrisk.viz._axes import _axes, _finish


def asl_curves(results, *, ax=None, level: float | None = None, figsize=(4.8, 3.4)):
    """Sakai's ASL curves: the sorted ASLs of every pair, one curve per result (x: the share
    of pairs, so that unordered and ordered pairs, and collections of different sizes, compare).

    Parameters
    ----------
    results : mapping of str to DiscriminativePowerResult
        Label -> result (e.g. ``{"AP": ..., "P@10": ...}``).
    ax : matplotlib Axes, optional
        Draw here (default: a new figure).
    level : float, optional
        Draw the significance level as a horizontal line (default: the first result's).
    figsize : tuple
        Size of a new figure, inches.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax, created = _axes(ax, figsize)
    first = None
    for label, r in results.items():
        first = first or r
        curve = r.asl_curve
        ax.plot(np.arange(1, curve.size + 1) / curve.size, curve, lw=1.2,
                label=f"{label} ({100 * r.discriminative_power:.0f}%)")
    if first is not None:
        lv = first.level if level is None else level
        ax.axhline(lv, color="0.5", lw=0.8, ls="--")
    ax.set_xlabel("share of system pairs, sorted by ASL")
    ax.set_ylabel("achieved significance level (ASL)")
    ax.set_ylim(0, None)
    ax.legend(frameon=False)
    return _finish(ax, created)


def swap_rate_curves(result, *, ax=None, figsize=(4.8, 3.4)):
    """Voorhees & Buckley's error rate against the difference, one curve per topic-set size.

    Parameters
    ----------
    result : SwapRateResult
        From `fastrisk.swap_rates`.
    ax : matplotlib Axes, optional
        Draw here (default: a new figure).
    figsize : tuple
        Size of a new figure, inches.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax, created = _axes(ax, figsize)
    edges = np.asarray(result.edges, dtype=float)
    width = np.diff(edges).mean() if edges.size > 1 else 1.0
    mid = edges + width / 2
    for z, n in enumerate(result.set_sizes):
        ok = result.total[z] > 0
        ax.plot(mid[ok], result.rate[z, ok], marker="o", ms=2.5, lw=1.0, label=f"{n} topics")
    ax.set_xlabel("relative difference" if result.relative else "absolute difference in mean score")
    ax.set_ylabel("swap rate")
    ax.set_ylim(0, None)
    ax.legend(frameon=False)
    return _finish(ax, created)
