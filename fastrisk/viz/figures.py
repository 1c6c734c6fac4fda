"""Figures of the error-rate studies, drawn as Urbano, Lima & Hanjalic (SIGIR 2019) draw them
(their ``R/99-paper.R``): type I error rate against the significance level on log-log axes with the nominal
diagonal; power and type III rate against the level (log x) at one delta, or against delta at
one level; one panel per measure and topic-set size, one line per test. We add the
Monte-Carlo band of a nominal test (l +- 1.96 sqrt(l (1 - l) / n) at level l) to the type I
panels, and the risk tests (TRisk at each alpha_risk, TRisk with the smooth value function,
the bootstrap test of URisk, ZRisk, GeoRisk) as dotted lines. Every legend entry names the
hypothesis its rate was measured under (``StudyResult.hypotheses``: "same margins" for the
study's H0, "URisk_1 = 0" for TRisk at 1 under its own null, ...).
Reachable from `fastrisk.viz.plot` (``plot.simulation_rates``, ``plot.plot_studies``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fastrisk._runtime import battery_tests as _bt
from fastrisk._runtime.atomic import save_figure
from fastrisk.errors import InputError
from fastrisk.viz._axes import _axes, _finish

#: The colours of the tests without their own (the registry's ``color`` None), in turn, dotted;
#: the others (the study's ``.TEST_COLORS``) are the battery registry's
#: (`fastrisk._runtime.battery_tests`).
_RISK_COLORS = ("#666666", "#000000", "#a65628", "#f781bf", "#999999", "#1b9e77", "#d95f02", "#7570b3",
                "#e7298a")
#: Inches of one panel of `plot_studies`, of the legend column beside them, and the raster
#: resolution (a one-panel PNG is about 810 x 780 px, readable at column width).
PANEL = (3.4, 2.6)
LEGEND_WIDTH = 2.0
DPI = 150
MEASURE_NAMES = {"ap": "AP", "p10": "P@10", "rr": "RR", "ndcg20": "nDCG@20", "err20": "ERR@20"}


def _record(test):
    """The registry's record of a test with its own figure style, or None."""
    try:
        b = _bt.lookup(test)[0]
    except KeyError:  # a result of tests the registry no longer has: drawn in the risk palette
        return None
    return b if b.color is not None else None


def _style(test, k, hypothesis=None):
    where = f" [{hypothesis}]" if hypothesis else ""
    b = _record(test)
    if b is not None:
        return dict(color=b.color, label=(b.label or b.name) + where, lw=1.0, ls=b.linestyle)
    return dict(color=_RISK_COLORS[k % len(_RISK_COLORS)], label=test + where, lw=1.0, ls=":")


def _renamed(x, significance, alpha):
    """``x`` and ``significance`` with the deprecated ``x="alpha"`` and ``alpha=`` (a
    `DeprecationWarning` naming the new spelling; alpha is the risk tests' own alpha)."""
    import warnings

    if x == "alpha":
        warnings.warn("x='alpha' is deprecated: use x='significance'", DeprecationWarning, stacklevel=3)
        x = "significance"
    if alpha is not None:
        warnings.warn("`alpha=` is deprecated: use `significance=`", DeprecationWarning, stacklevel=3)
        significance = alpha
    return x, significance


def simulation_rates(result, *, tails: str = "two-sided", x: str = "significance", delta=None,
                     significance: float = 0.05, tests=None, ax=None, legend: bool = True, band: bool = True,
                     alpha: float | None = None):
    """One panel: rate per test against ``x`` of a `StudyResult` (type I / power / type III).

    Parameters
    ----------
    result : StudyResult
        A simulation study's result.
    tails : {"two-sided", "one-tailed"}
        Which tests' rates are drawn.
    x : {"significance", "delta"}
        The horizontal axis: significance level or effect size (``"alpha"``: the deprecated
        spelling of ``"significance"``; alpha is the risk tests' own alpha).
    delta : float, optional
        The effect size of a by-level panel (default: the result's first).
    significance : float
        The significance level of a by-delta panel (``alpha``: its deprecated spelling).
    alpha : float, optional
        Deprecated spelling of ``significance``.
    tests : sequence of str, optional
        The tests drawn (default: all).
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).
    legend : bool
        Draw a legend.
    band : bool
        Shade the Monte-Carlo band of a nominal test, ``l ± 1.96 sqrt(l (1 - l) / n)`` at level l,
        on type I panels.

    Returns
    -------
    matplotlib.axes.Axes
    """
    if tails not in result.tails:
        raise InputError(f"`tails` must be one of {', '.join(result.tails)}, got {tails!r}")
    x, significance = _renamed(x, significance, alpha)
    if x not in ("significance", "delta"):
        raise InputError(f"`x` must be 'significance' or 'delta', got {x!r}")
    ax, created = _axes(ax, (2.6, 2.4))
    tl = result.tails.index(tails)
    alphas = np.asarray(result.significance)
    deltas = np.asarray(result.deltas)
    if x == "significance":
        d = 0 if delta is None else int(np.argmin(np.abs(deltas - delta)))
        xs, sel = alphas, (lambda k: result.rate[d, k, tl])
        ax.set_xscale("log")
        ax.set_xlabel("Significance level")
    else:
        a = int(np.argmin(np.abs(alphas - significance)))
        xs, sel = deltas, (lambda k: result.rate[:, k, tl, a])
        ax.set_xlabel("Effect size δ")
    if result.study == "type1" and x == "significance":
        ax.set_yscale("log")
        ax.plot(alphas, alphas, color="darkgrey", lw=0.8, label="nominal (rate = level)")
        if band:
            n = float(np.nanmax(result.n))
            half = 1.96 * np.sqrt(alphas * (1 - alphas) / max(n, 1))
            ax.fill_between(alphas, np.maximum(alphas - half, alphas * 0.05), alphas + half, color="0.85", lw=0,
                            label=f"nominal ± 95% Monte-Carlo\n({n:,.0f} trials)")
        ax.set_ylabel("Type I error rate")
        ax.set_xlim(alphas[0], alphas[-1])
        ax.set_ylim(alphas[0] * 0.5, alphas[-1] * 2)
    else:
        ax.set_ylabel({"power": "Power", "type3": "Type III error rate"}.get(result.study, "rate"))
        if result.study == "power":
            ax.set_ylim(0, 1)
    risk = 0
    for k, test in enumerate(result.tests):
        if tests is not None and test not in tests:
            continue
        style = _style(test, risk, getattr(result, "hypotheses", None) and result.hypotheses[k])
        risk += _record(test) is None
        ax.plot(xs, sel(k), **style)
    what = f" δ={deltas[0 if delta is None else int(np.argmin(np.abs(deltas - delta)))]:g}" \
        if (x == "significance" and result.study != "type1") else (f" level={significance:g}" if x == "delta" else "")
    ax.set_title(f"{MEASURE_NAMES.get(result.measure, result.measure)} n={result.topics} "
                 f"tails={1 if tails == 'one-tailed' else 2}{what}", fontsize=8)
    ax.grid(True, which="major", ls=":", color="darkgrey", lw=0.5)
    if legend:  # beside the panel, never over the curves
        ax.legend(fontsize=6, frameon=False, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    return _finish(ax, created)


def plot_studies(results, path, *, tails=("one-tailed", "two-sided"), tests=None, delta: float = 0.05,
                 significance: float = 0.05, alpha: float | None = None):
    """Every panel of a list of StudyResults (one row per measure and tail, one column per
    topic-set size; power and type III: by level at ``delta`` and by delta at ``significance``)
    in one figure saved at ``path``.

    Parameters
    ----------
    results : sequence of StudyResult
        The studies drawn.
    path : str or path-like
        Where the figure is saved (SVG, PNG or PDF by its suffix).
    tails : sequence of {"one-tailed", "two-sided"}
        The tails, one row each.
    tests : sequence of str, optional
        The tests drawn (default: all).
    delta : float
        Effect size of the by-level panels.
    significance : float
        Significance level of the by-delta panels (``alpha``: its deprecated spelling).
    alpha : float, optional
        Deprecated spelling of ``significance``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.figure import Figure

    _, significance = _renamed("significance", significance, alpha)
    results = list(results)
    if not results:
        raise InputError("no study result to plot")
    study = results[0].study
    tails = [t for t in tails if study != "type3" or t == "two-sided"]
    measures = list(dict.fromkeys(r.measure for r in results))
    sizes = sorted({r.topics for r in results})
    views = [("significance", None)] if study == "type1" else [("significance", delta), ("delta", significance)]
    rows = [(m, t, v) for m in measures for t in tails for v in views]
    fig = Figure(figsize=(PANEL[0] * len(sizes) + LEGEND_WIDTH, PANEL[1] * len(rows)), layout="constrained")
    axes = fig.subplots(len(rows), len(sizes), squeeze=False)
    for i, (m, t, (x, level)) in enumerate(rows):
        for j, n in enumerate(sizes):
            ax = axes[i, j]
            r = next((r for r in results if r.measure == m and r.topics == n), None)
            if r is None:
                ax.set_visible(False)
                continue
            kw = {"delta": level} if x == "significance" else {"significance": level}
            simulation_rates(r, tails=t, x=x, tests=tests, ax=ax, legend=False, **kw)
    shown = next(ax for ax in axes.flat if ax.get_visible())
    handles, labels = shown.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right upper", fontsize=7, frameon=False)  # one, beside the panels
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, path, dpi=DPI)
    return fig
