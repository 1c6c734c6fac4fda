"""The matplotlib plumbing every figure of `fastrisk.viz` shares: a new column-width Axes,
or the caller's, and the column-width typography of the figures fastrisk creates. matplotlib is
imported on the first figure (the optional extra ``fastrisk[plot]``)."""

from __future__ import annotations

from fastrisk._runtime.extras import require
from fastrisk._runtime.style import COLUMN_FIGSIZE, FONT_SIZE, SMALL_FONT_SIZE


def _pyplot():
    return require("matplotlib.pyplot", what="a figure")


def new_axes(figsize=COLUMN_FIGSIZE, *, pyplot: bool = True):
    """The Axes of a new figure of ``figsize`` inches (constrained layout) that this module's
    functions style for column width (font sizes). With ``pyplot=False`` the figure is built
    without pyplot (nothing is shown or kept open: for scripts and reports)."""
    if pyplot:
        fig, ax = _pyplot().subplots(figsize=figsize, layout="constrained")
    else:
        Figure = require("matplotlib.figure", what="a figure").Figure
        fig = Figure(figsize=figsize, layout="constrained")
        ax = fig.add_subplot()
    ax._fastrisk_styled = True
    return ax


def _axes(ax, figsize):
    """(ax, styled): ``ax`` if given, else the Axes of a new figure of ``figsize`` inches (via
    pyplot, so it shows in notebooks). ``styled``: the Axes is ours to give column-width type."""
    if ax is not None:
        return ax, bool(getattr(ax, "_fastrisk_styled", False))
    return new_axes(figsize), True


def _finish(ax, created: bool):
    """Column-width typography for figures we created (a given ``ax`` keeps its owner's style)."""
    if created:
        ax.tick_params(labelsize=SMALL_FONT_SIZE)
        ax.xaxis.label.set_size(FONT_SIZE)
        ax.yaxis.label.set_size(FONT_SIZE)
        for title in (ax.title, ax._left_title, ax._right_title):
            title.set_size(FONT_SIZE)
        legend = ax.get_legend()
        if legend is not None:
            for text in legend.get_texts():
                text.set_fontsize(SMALL_FONT_SIZE)
            legend.get_title().set_fontsize(FONT_SIZE)
    return ax
