"""Figures of fastrisk results (the optional extra ``fastrisk[plot]``: matplotlib).

Every function takes a result object and an optional ``ax``; it draws on ``ax`` (or on a new
figure of a size readable at column width) and returns the ``Axes``. Nothing here calls
``plt.show()`` or changes matplotlib's global settings, and ``import fastrisk`` never imports
matplotlib: it is imported the first time a figure is drawn.

Colours come from the Okabe-Ito palette (safe for the common colour-vision deficiencies) and
every system also gets its own marker and line style, so figures survive greyscale printing.
A system's style depends on its position in the ``systems`` list a function is given; pass
the same list (or the same ``colors=system_styles(...)`` mapping) to every figure to keep
colours consistent across figures.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from fastrisk._runtime.style import (  # noqa: F401 - the figure style, also read as fastrisk.viz.plot.X
    COLUMN_FIGSIZE,
    CRITICAL_COLOR,
    FONT_SIZE,
    LINESTYLES,
    LOSS_COLOR,
    MARKERS,
    NEUTRAL_COLOR,
    OKABE_ITO,
    SMALL_FONT_SIZE,
    WIDE_FIGSIZE,
    WIN_COLOR,
)
from fastrisk.errors import InputError
from fastrisk.viz._axes import _axes, _finish, new_axes  # noqa: F401 - new_axes is public here
from fastrisk.viz.figures import plot_studies, simulation_rates  # noqa: F401 - also read as fastrisk.viz.plot.X


def _legend_outside(ax, **kwargs):
    """A legend to the right of the data area, so that it never covers a curve, a box or a point
    (constrained layout makes room for it)."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False, **kwargs)


def system_styles(systems: Sequence[str]) -> dict:
    """``{system: {"color", "marker", "linestyle"}}`` in the order given: Okabe-Ito colours, then
    the same colours with other line styles (so 32 systems stay distinguishable).

    Parameters
    ----------
    systems : sequence of str
        The systems, in the order their styles are handed out.

    Returns
    -------
    dict
        System -> matplotlib keyword arguments (``color``, ``marker``, ``linestyle``).
    """
    out = {}
    for k, name in enumerate(systems):
        out[str(name)] = {"color": OKABE_ITO[k % len(OKABE_ITO)], "marker": MARKERS[k % len(MARKERS)],
                          "linestyle": LINESTYLES[(k // len(OKABE_ITO)) % len(LINESTYLES)]}
    return out


def _styles(systems, colors):
    base = system_styles(systems)
    if colors is None:
        return base
    if not isinstance(colors, Mapping):
        raise InputError(f"`colors` must map system names to styles (see system_styles), got {type(colors).__name__}")
    for name in systems:
        given = colors.get(name)
        if given is None:
            continue
        base[name] = {**base[name], **({"color": given} if isinstance(given, str) else dict(given))}
    return base


def _pick_systems(all_systems: Sequence[str], systems, what: str = "systems") -> list[int]:
    """Row positions of ``systems`` (default: all) in ``all_systems``, with a clear error."""
    if systems is None:
        return list(range(len(all_systems)))
    if isinstance(systems, str):
        systems = [systems]
    index = {s: k for k, s in enumerate(all_systems)}
    rows = []
    for s in systems:
        if s not in index:
            shown = ", ".join(list(all_systems)[:8]) + (", ..." if len(all_systems) > 8 else "")
            raise InputError(f"`{what}`: unknown system {s!r}; the result has {shown}")
        rows.append(index[s])
    if not rows:
        raise InputError(f"`{what}` must name at least one system")
    return rows


def _pick_alphas(alpha: np.ndarray, wanted) -> list[int]:
    """Positions of the wanted alphas (default: all) in the result's ``alpha`` array."""
    if wanted is None:
        return list(range(len(alpha)))
    if np.isscalar(wanted):
        wanted = [wanted]
    out = []
    for a in wanted:
        hit = np.flatnonzero(np.isclose(alpha, float(a)))
        if hit.size == 0:
            raise InputError(f"`alpha`: alpha={a:g} was not computed; the result has alpha = "
                             + ", ".join(f"{v:g}" for v in alpha))
        out.append(int(hit[0]))
    return out


def _minus(result) -> bool:
    return getattr(result, "convention", "classic") == "minus"


def _risk_name(result, name: str) -> str:
    """'URisk' / 'TRisk', with the minus convention's superscript."""
    return name + ("\u207b" if _minus(result) else "")


def _alpha_axis(result) -> tuple[np.ndarray, str]:
    """x values and label of the risk-sensitivity axis, in the parametrisation the user gave."""
    if getattr(result, "given", "alpha") == "loss_weight":
        return np.asarray(result.loss_weight), "loss weight \u03b1\u0302 = 1 + \u03b1"
    return np.asarray(result.alpha), "risk sensitivity \u03b1"


def _alpha_text(result, j: int) -> str:
    a = float(result.alpha[j])
    if np.isnan(a):
        return f"value {getattr(result, 'value', 'custom')}"
    if getattr(result, "given", "alpha") == "loss_weight":
        return f"\u03b1\u0302 = {float(result.loss_weight[j]):g}"
    return f"\u03b1 = {a:g}"


def _critical_lines(ax, crit: float, significance: float, df: int, *, horizontal: bool = True):
    """Dashed lines at ±t(significance/2, df); gids ``critical-upper`` / ``critical-lower``."""
    label = f"\u00b1t({significance / 2:g}, {df}) = \u00b1{crit:.2f}"
    draw = ax.axhline if horizontal else ax.axvline
    upper = draw(crit, color=CRITICAL_COLOR, linestyle="--", linewidth=0.8, label=label, zorder=1)
    lower = draw(-crit, color=CRITICAL_COLOR, linestyle="--", linewidth=0.8, zorder=1)
    upper.set_gid("critical-upper")
    lower.set_gid("critical-lower")
    return upper, lower


def _zero_line(ax, *, horizontal: bool = True):
    line = (ax.axhline if horizontal else ax.axvline)(0.0, color="black", linewidth=0.6, zorder=1)
    line.set_gid("zero")
    return line


def _shown(show: str, statistic: str | None, choices: tuple) -> str:
    """The array a plot draws: ``show``, or its deprecated name ``statistic`` (with a warning)."""
    if statistic is not None:
        warnings.warn("the plot argument `statistic=` is deprecated; use `show=` (`statistic` names "
                      "the test statistic of a p-value)", DeprecationWarning, stacklevel=3)
        show = statistic
    if show not in choices:
        raise InputError(f"`show` must be one of {', '.join(map(repr, choices))}, got {show!r}")
    return show


# ---------------------------------------------------------------------- risk (Dinçer et al. 2014)
def trisk_alpha(result, systems=None, *, show: str = "trisk", ax=None, colors=None, legend: bool = True,
                statistic: str | None = None):
    """TRisk (or URisk) of chosen systems against α, with the ±t critical lines.

    Dinçer, Macdonald & Ounis (SIGIR 2014), Fig. 1.

    Parameters
    ----------
    result : RiskResult
        `fastrisk.risk`'s result (compute it on a fine α grid for smooth curves, e.g.
        ``alpha=np.linspace(0, 10, 41)``).
    systems : sequence of str, optional
        Which systems are drawn, their order and colours (default: all).
    show : {"trisk", "urisk"}
        The array drawn.
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).
    colors : dict or sequence, optional
        Colours of the systems (default: `system_styles`).
    legend : bool
        Draw a legend.
    statistic : str, optional
        Deprecated name of ``show`` (``statistic`` names the test statistic of a p-value).

    Returns
    -------
    matplotlib.axes.Axes
    """
    show = _shown(show, statistic, ("trisk", "urisk"))
    if getattr(result, "value", "linear") != "linear":
        raise InputError(f"trisk_alpha plots risk against \u03b1; the result uses the {result.value!r} "
                         "value function, which has no \u03b1")
    rows = _pick_systems(result.systems, systems)
    names = [result.systems[k] for k in rows]
    styles = _styles(names, colors)
    ax, created = _axes(ax, COLUMN_FIGSIZE)
    x, xlabel = _alpha_axis(result)
    values = getattr(result, show)
    _zero_line(ax)
    if show == "trisk":
        _critical_lines(ax, result.critical_t, result.significance, result.df)
    few = len(x) <= 12
    for k, name in zip(rows, names):
        st = styles[name]
        (line,) = ax.plot(x, values[:, k], color=st["color"], linestyle=st["linestyle"],
                          marker=st["marker"] if few else None, markersize=3.5, linewidth=1.2, label=name)
        line.set_gid(f"system:{name}")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"{_risk_name(result, 'TRisk' if show == 'trisk' else 'URisk')} vs {result.baseline}")
    if legend:
        _legend_outside(ax, ncols=1 if len(names) <= 12 else 2)
    return _finish(ax, created)


def topic_risk_bars(result, system: str, *, alpha=None, show: str = "tr", sort: bool = False, ax=None,
                    statistic: str | None = None):
    """Per-topic TR_i (or TJ_i) bars of one system at several α, the ±t lines and the
    significant topics marked (▼ significant loss, ▲ significant win; bold topic labels).

    Dinçer, Macdonald & Ounis (SIGIR 2014), Fig. 2.

    Parameters
    ----------
    result : TopicRiskResult
        `fastrisk.topic_risk`'s result.
    system : str
        The system drawn.
    alpha : float or sequence of float, optional
        The α values drawn (default: all of the result's).
    show : {"tr", "tj", "both"}
        TR_i bars, TJ_i bars, or TR_i bars with TJ_i as black ticks on them (to show that the
        two agree).
    sort : bool
        Order the topics by the score at the first α.
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new wide figure).
    statistic : str, optional
        Deprecated name of ``show`` (``statistic`` names the test statistic of a p-value).

    Returns
    -------
    matplotlib.axes.Axes
    """
    show = _shown(show, statistic, ("tr", "tj", "both"))
    (row,) = _pick_systems(result.systems, [system], "system")
    cols = _pick_alphas(result.alpha, alpha)
    bars_of = result.tj if show == "tj" else result.tr
    values = bars_of[cols, row]  # (A', c)
    c = values.shape[1]
    order = np.argsort(-np.nan_to_num(values[0]), kind="stable") if sort else np.arange(c)
    ax, created = _axes(ax, WIDE_FIGSIZE)
    crit = result.critical_t
    _zero_line(ax)
    _critical_lines(ax, crit, result.significance, result.df)
    n = len(cols)
    width = 0.84 / n
    shades = _sequential(n)
    pos = np.arange(c, dtype=float)
    sig_x, sig_y, sig_kind = [], [], []
    for j, (col, vals) in enumerate(zip(cols, values)):
        xs = pos - 0.42 + width * (j + 0.5)
        v = vals[order]
        bars = ax.bar(xs, v, width=width, color=shades[j], edgecolor="none", label=_alpha_text(result, col))
        for patch in bars:
            patch.set_gid(f"bar:{j}")
        if show == "both":
            (tj,) = ax.plot(xs, result.tj[col, row][order], linestyle="none", marker="_", color="black",
                            markersize=max(2.0, 20.0 * width), markeredgewidth=0.9,
                            label="TJ$_i$" if j == 0 else None)
            tj.set_gid(f"tj:{j}")
        if show == "tj":  # judged on TJ_i itself; in the minus convention losses are positive
            loss, win = (v > crit, v < -crit) if _minus(result) else (v < -crit, v > crit)
        else:
            loss, win = result.loss[col, row][order], result.win[col, row][order]
        for flag, sign in ((loss, -1.0), (win, 1.0)):
            for i in np.flatnonzero(flag):  # the marker sits just beyond the bar's tip
                sig_x.append(xs[i])
                sig_y.append(v[i] + np.sign(v[i]) * 0.06 * max(crit, 1.0))
                sig_kind.append(sign)
    sig_kind = np.array(sig_kind)
    for sign, marker, color, label in ((-1.0, "v", LOSS_COLOR, "significant loss"),
                                       (1.0, "^", WIN_COLOR, "significant win")):
        pick = sig_kind == sign
        (pts,) = ax.plot(np.array(sig_x)[pick] if pick.any() else [], np.array(sig_y)[pick] if pick.any() else [],
                         linestyle="none", marker=marker, color=color, markersize=3.5,
                         label=label if pick.any() else None)
        pts.set_gid("significant-loss" if sign < 0 else "significant-win")
    topics = [result.topics[i] for i in order]
    significant = (result.loss[cols, row] | result.win[cols, row]).any(axis=0)[order] if show != "tj" \
        else (np.abs(values) > crit).any(axis=0)[order]
    ax.set_xticks(pos, topics, rotation=90)
    for lab, sig in zip(ax.get_xticklabels(), significant):
        if sig:
            lab.set_fontweight("bold")
    ax.set_xlim(-0.7, c - 0.3)
    ax.set_xlabel("topic" + (" (sorted)" if sort else ""))
    name = {"tr": "TR$_i$", "tj": "TJ$_i$", "both": "TR$_i$ (bars), TJ$_i$ (ticks)"}[show]
    ax.set_ylabel(f"{name}{' (minus)' if _minus(result) else ''}")
    ax.legend(frameon=False, ncols=min(n + 3, 6), loc="lower left", bbox_to_anchor=(0.0, 1.0), borderaxespad=0.2,
              handlelength=1.5, columnspacing=1.0, title=f"{result.systems[row]} vs {result.baseline}",
              alignment="left")
    _finish(ax, created)
    if created:
        ax.tick_params(axis="x", labelsize=max(4.5, min(SMALL_FONT_SIZE, 300.0 / c)))
    return ax


def _sequential(n: int) -> list:
    """``n`` blues from light to dark (monotone in lightness: readable in greyscale)."""
    if n == 1:
        return ["#0072B2"]
    lo, hi = np.array([0x74, 0xB3, 0xE0]) / 255.0, np.array([0x08, 0x30, 0x6B]) / 255.0
    return [tuple(lo + (hi - lo) * t) for t in np.linspace(0.0, 1.0, n)]


def urisk_distribution(result, systems=None, *, alpha=None, kind: str = "box", sort: bool = True, ax=None,
                       colors=None, legend: bool = True):
    """Per-topic risk-reward scores x_i (URisk's summands) of systems against the baseline.

    Dinçer, Ounis & Macdonald (ECIR 2014), Figs. 3-4.

    Parameters
    ----------
    result : TopicRiskResult or RiskScores
        A result with ``x`` of shape (A, S, c).
    systems : sequence of str, optional
        The systems drawn and their order (default: all).
    alpha : float, optional
        The α drawn (default: the result's first).
    kind : {"box", "sorted"}
        ``"box"``: one box per system (quartiles, whiskers at 1.5 IQR, URisk = mean as a
        diamond); ``"sorted"``: each system's x_i sorted in decreasing order against the topic
        rank, so wins, ties and losses read off as the areas above and below zero.
    sort : bool
        Order the boxes by URisk.
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).
    colors : dict or sequence, optional
        Colours of the systems (default: `system_styles`).
    legend : bool
        Draw a legend.

    Returns
    -------
    matplotlib.axes.Axes
    """
    if kind not in ("box", "sorted"):
        raise InputError(f"`kind` must be 'box' or 'sorted', got {kind!r}")
    col = 0 if alpha is None else _pick_alphas(result.alpha, [alpha])[0]
    rows = _pick_systems(result.systems, systems)
    X = result.x[col][rows]  # (S', c)
    names = [result.systems[k] for k in rows]
    means = X.mean(axis=1)
    if kind == "box" and sort:
        order = np.argsort(-means, kind="stable")
        X, names, means = X[order], [names[i] for i in order], means[order]
    ux = _risk_name(result, "URisk")
    title = f"vs {result.baseline}, {_alpha_text(result, col)}"
    if kind == "box":
        ax, created = _axes(ax, WIDE_FIGSIZE if len(names) > 8 else COLUMN_FIGSIZE)
        _zero_line(ax)
        pos = np.arange(1, len(names) + 1)
        box = ax.boxplot(list(X), positions=pos, widths=0.6, patch_artist=True, showfliers=True,
                         medianprops={"color": "black", "linewidth": 1.0},
                         flierprops={"marker": ".", "markersize": 2.5, "markeredgecolor": NEUTRAL_COLOR},
                         boxprops={"linewidth": 0.6}, whiskerprops={"linewidth": 0.6},
                         capprops={"linewidth": 0.6})
        if colors is not None:  # colour the systems the mapping names, the others neutral
            styles = {n: st for n, st in _styles(names, colors).items() if n in colors}
        else:
            styles = _styles(names, None) if len(names) <= len(OKABE_ITO) else {}
        for patch, name in zip(box["boxes"], names):
            patch.set_facecolor(styles[name]["color"] if name in styles else "#C6DBEF")
            patch.set_alpha(0.6)
            patch.set_gid(f"box:{name}")
        (mean_pts,) = ax.plot(pos, means, linestyle="none", marker="D", markersize=3, color="black",
                              label=f"{ux} (mean)")
        mean_pts.set_gid("urisk")
        ax.set_xticks(pos, names, rotation=90 if len(names) > 4 else 0)
        if colors is not None:
            for lab in ax.get_xticklabels():
                if lab.get_text() in colors:
                    lab.set_fontweight("bold")
        ax.set_xlim(0.4, len(names) + 0.6)
        ax.set_xlabel("system" + (f" (sorted by {ux})" if sort else ""))
        ax.set_ylabel(f"per-topic score x$_i$ ({_alpha_text(result, col)})")
    else:
        ax, created = _axes(ax, COLUMN_FIGSIZE)
        styles = _styles(names, colors)
        _zero_line(ax)
        ranks = np.arange(1, X.shape[1] + 1)
        for name, xs in zip(names, X):
            st = styles[name]
            (line,) = ax.plot(ranks, np.sort(xs)[::-1], color=st["color"], linestyle=st["linestyle"],
                              linewidth=1.2, drawstyle="steps-mid", label=name)
            line.set_gid(f"system:{name}")
        ax.set_xlabel("topic rank (decreasing x$_i$)")
        ax.set_ylabel(f"per-topic score x$_i$ ({_alpha_text(result, col)})")
    ax.set_title(f"{ux} summands {title}", loc="left")
    if legend:
        _legend_outside(ax, ncols=1 if len(names) <= 12 or kind == "box" else 2)
    _finish(ax, created)
    if created and kind == "box":
        ax.tick_params(axis="x", labelsize=max(4.5, min(SMALL_FONT_SIZE, 300.0 / len(names))))
    return ax


# ---------------------------------------------------------------------- bootstrap (Benham et al. 2019)
def _qq_items(results, system):
    """[(label, QQData, system row)] from one result, a sequence or a {label: result} mapping."""
    if isinstance(results, Mapping):
        items = list(results.items())
    elif isinstance(results, (list, tuple)):
        items = [(None, r) for r in results]
    else:
        items = [(None, results)]
    out = []
    for label, res in items:
        qq = res.qq(points=None) if hasattr(res, "qq") else res
        if not all(hasattr(qq, f) for f in ("theoretical", "sample", "systems")):
            raise InputError("`results` must be bootstrap results (with .qq()) or Q-Q data, "
                             f"got {type(res).__name__}")
        row = _pick_systems(qq.systems, [system] if system is not None else [qq.systems[0]], "system")[0]
        value = getattr(res, "value", None)
        out.append((label if label is not None else (value or "linear"), res, qq, row))
    return out


def qq(results, system=None, *, points: int = 400, ax=None, legend: bool = True):
    """Q-Q plot of standardised bootstrap replicates of one system against the standard normal,
    for several value functions (Benham, Moffat & Culpepper 2019, Fig. 3). Points on the
    diagonal mean the replicates are normal.

    Parameters
    ----------
    results : BootstrapResult, QQData, list or dict of them
        One bootstrap result (every α it holds is drawn), a list of them, or a mapping
        ``{label: result}`` (e.g. ``{"linear": b1, "smooth": b2}``); bootstrap results need
        their replicates (``keep_replicates=True``).
    system : str, optional
        The system drawn (default: the first).
    points : int
        Plotting positions per curve.
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).
    legend : bool
        Draw a legend.

    Returns
    -------
    matplotlib.axes.Axes
    """
    items = _qq_items(results, system)
    ax, created = _axes(ax, (3.0, 3.0))
    curves = []
    for label, res, _, row in items:
        data = res.qq(points=points) if hasattr(res, "qq") else res
        alpha = getattr(data, "alpha", None)
        for j in range(data.sample.shape[0]):
            name = str(label)
            if alpha is not None and len(alpha) and not np.isnan(alpha[j]) and (data.sample.shape[0] > 1
                                                                                or name == "linear"):
                name += f", \u03b1 = {alpha[j]:g}"
            curves.append((name, data.theoretical, data.sample[j, row]))
    styles = _styles([c[0] for c in curves], None)
    lo, hi = np.inf, -np.inf
    for name, x, y in curves:
        st = styles[name]
        (line,) = ax.plot(x, y, linestyle="none", marker=st["marker"], markersize=2.2, color=st["color"],
                          markerfacecolor="none", markeredgewidth=0.6, label=name)
        line.set_gid(f"qq:{name}")
        finite = np.isfinite(y)
        lo, hi = min(lo, x.min(), y[finite].min(initial=np.inf)), max(hi, x.max(), y[finite].max(initial=-np.inf))
    (diag,) = ax.plot([lo, hi], [lo, hi], color="black", linewidth=0.7, label="normal")
    diag.set_gid("diagonal")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("standard normal quantile")
    ax.set_ylabel("standardised replicate quantile")
    sysname = items[0][2].systems[items[0][3]]
    base = getattr(items[0][1], "baselines", None)
    vs = f" vs {base[items[0][3]]}" if base else ""
    ax.set_title(f"bootstrap of {sysname}{vs}", loc="left")
    if legend:
        _legend_outside(ax, markerscale=2.0)
    return _finish(ax, created)


# ---------------------------------------------------------------------- agreement
def rbo_prefix(result, *, ax=None, label_a: str = "a", label_b: str = "b"):
    """RBO of two orderings over growing prefix depths: bars up to the lower bound (RBO_min),
    the residual band above them up to RBO_max, and the extrapolated RBO_ext as a line
    (Benham, Moffat & Culpepper 2019, Fig. 4).

    Parameters
    ----------
    result : PrefixAgreement
        `fastrisk.prefix_agreement`'s result.
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).
    label_a, label_b : str
        Names of the two orderings, for the axis label.

    Returns
    -------
    matplotlib.axes.Axes
    """
    depth = np.asarray(result.depth)
    ax, created = _axes(ax, COLUMN_FIGSIZE)
    low, res = np.asarray(result.min), np.asarray(result.res)
    width = 0.8 if depth.size < 2 else 0.8 * float(np.min(np.diff(np.sort(depth))))
    bars = ax.bar(depth, low, width=width, color=OKABE_ITO[0], label="RBO$_{min}$ (lower bound)")
    band = ax.bar(depth, res, bottom=low, width=width, color="#9ECAE9", hatch="////", edgecolor="white",
                  linewidth=0.0, label="residual (RBO$_{max}$ \u2212 RBO$_{min}$)")
    for patch in bars:
        patch.set_gid("rbo-min")
    for patch in band:
        patch.set_gid("rbo-residual")
    (ext,) = ax.plot(depth, result.ext, color=OKABE_ITO[1], marker="o", markersize=2.5, linewidth=1.0,
                     label="RBO$_{ext}$")
    ext.set_gid("rbo-ext")
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel("prefix depth k (systems)")
    ax.set_ylabel(f"RBO of {label_a} and {label_b} (p = {result.p:g})")
    ax.legend(frameon=False, loc="lower left", bbox_to_anchor=(0.0, 1.0), borderaxespad=0.2, ncols=2,
              handlelength=1.5, columnspacing=1.0)
    return _finish(ax, created)


# ---------------------------------------------------------------------- all-baseline table (ECIR 2014)
def baseline_heatmap(table, *, alpha=None, show: str = "trisk", significance: float = 0.05,
                     systems=None, order: str = "given", ax=None, colorbar: bool = True, statistic: str | None = None):
    """Heat map of URisk or TRisk of every system (rows) against every baseline (columns) at one
    α, significant cells (|TRisk| > t(significance/2, df)) marked with a dot.

    The colour map (PuOr) is diverging and colour-blind safe; the diagonal (a system against
    itself) is grey.

    Parameters
    ----------
    table : BaselineTable
        `fastrisk.baseline_table`'s result.
    alpha : float, optional
        The α drawn (default: the table's first).
    show : {"trisk", "urisk"}
        The array drawn.
    significance : float
        Level of the significance dots.
    systems : sequence of str, optional
        Restricts and orders the rows and, when the baselines are the systems, the columns.
    order : {"given", "mean"}
        ``"mean"`` sorts rows and columns by mean URisk over the baselines.
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).
    colorbar : bool
        Draw a colour bar.
    statistic : str, optional
        Deprecated name of ``show`` (``statistic`` names the test statistic of a p-value).

    Returns
    -------
    matplotlib.axes.Axes
    """
    from scipy import stats  # scipy.stats: ~0.3 s to import, needed here only

    show = _shown(show, statistic, ("trisk", "urisk"))
    if order not in ("given", "mean"):
        raise InputError(f"`order` must be 'given' or 'mean', got {order!r}")
    if not (isinstance(significance, (int, float)) and 0.0 < significance < 1.0):
        raise InputError(f"`significance` must be a level in (0, 1), got {significance!r}")
    col = 0 if alpha is None else _pick_alphas(table.alpha, [alpha])[0]
    rows = _pick_systems(table.systems, systems)
    square = tuple(table.baselines) == tuple(table.systems)
    cols = rows if square else list(range(len(table.baselines)))
    if order == "mean":
        mean = np.nanmean(table.urisk[col][np.ix_(rows, cols)], axis=1)
        perm = np.argsort(-mean, kind="stable")
        rows = [rows[i] for i in perm]
        cols = rows if square else cols
    V = getattr(table, show)[col][np.ix_(rows, cols)]
    T = table.trisk[col][np.ix_(rows, cols)]
    crit = float(stats.t.isf(significance / 2, table.df))
    nS, nB = V.shape
    big = max(nS, nB) > 12
    ax, created = _axes(ax, (6.0, 5.4) if big else (3.6, 3.2))
    finite = np.abs(V[np.isfinite(V)])
    vmax = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    import matplotlib as mpl  # optional dependency (fastrisk[plot])

    cmap = mpl.colormaps["PuOr"].with_extremes(bad="#A6A6A6")
    image = ax.imshow(np.ma.masked_invalid(V), cmap=cmap, vmin=-vmax, vmax=vmax, aspect="auto",
                      interpolation="nearest")
    image.set_gid("heatmap")
    sig = np.isfinite(T) & (np.abs(T) > crit)
    yy, xx = np.nonzero(sig)
    dots = ax.scatter(xx, yy, s=(4 if big else 12), c="black", marker="o", linewidths=0,
                      label=f"|TRisk| > t({significance / 2:g}, {table.df}) = {crit:.2f}")
    dots.set_gid("significant")
    names_r = [table.systems[k] for k in rows]
    names_c = [table.baselines[k] for k in cols]
    fs = max(3.5, min(SMALL_FONT_SIZE, 300.0 / max(nS, nB)))
    ax.set_xticks(np.arange(nB), names_c, rotation=90, fontsize=fs)
    ax.set_yticks(np.arange(nS), names_r, fontsize=fs)
    ax.set_xlabel("baseline")
    ax.set_ylabel("system")
    name = _risk_name(table, "TRisk" if show == "trisk" else "URisk")
    if colorbar:
        cb = ax.figure.colorbar(image, ax=ax, shrink=0.8, pad=0.02)
        cb.set_label(f"{name} ({_alpha_text(table, col)})", fontsize=FONT_SIZE)
        cb.ax.tick_params(labelsize=SMALL_FONT_SIZE)
    ax.legend(frameon=False, loc="lower left", bbox_to_anchor=(0.0, 1.0), borderaxespad=0.2, handletextpad=0.2)
    _finish(ax, created)
    ax.tick_params(labelsize=fs)
    return ax


# ---------------------------------------------------------------------- pooling (Webber & Park 2009)
def pooling_bias(result, *, ax=None):
    """Bias of unpooled runs (true − unpooled mean score) per pool width: the quartile range as
    a bar, the median as a tick, the mean as a diamond, min-max whiskers (Webber & Park 2009,
    Fig. 1).

    Parameters
    ----------
    result : PoolingExperiment
        `fastrisk.pooling_experiment`'s result.
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).

    Returns
    -------
    matplotlib.axes.Axes
    """
    bias = np.asarray(result.bias)  # (W, repeats)
    widths = list(result.widths)
    ax, created = _axes(ax, COLUMN_FIGSIZE)
    pos = np.arange(len(widths))
    q0, q1, q2, q3, q4 = np.quantile(bias, [0.0, 0.25, 0.5, 0.75, 1.0], axis=1)
    _zero_line(ax)
    whisk = ax.vlines(pos, q0, q4, color=NEUTRAL_COLOR, linewidth=0.8, label="min\u2013max")
    whisk.set_gid("range")
    boxes = ax.bar(pos, q3 - q1, bottom=q1, width=0.45, color="#9ECAE9", edgecolor=OKABE_ITO[0], linewidth=0.8,
                   label="quartiles")
    for patch in boxes:
        patch.set_gid("quartiles")
    (med,) = ax.plot(pos, q2, linestyle="none", marker="_", markersize=12, markeredgewidth=1.2, color="black",
                     label="median")
    med.set_gid("median")
    (mean,) = ax.plot(pos, bias.mean(axis=1), linestyle="none", marker="D", markersize=3.5, color=OKABE_ITO[1],
                      label="mean")
    mean.set_gid("mean")
    ax.set_xticks(pos, [str(w) for w in widths])
    ax.set_xlabel("pool width (pooled systems)")
    ax.set_ylabel(f"bias of {result.measure}\n(true \u2212 unpooled)")
    _legend_outside(ax)
    return _finish(ax, created)


_ESTIMATOR_STYLE = {"adjusted": ("-", "o"), "mixed": ("--", "s"), "unadjusted": (":", None),
                    "leave-one-out": ("-.", None)}


def pooling_mae(result, *, estimators=("adjusted", "mixed"), widths=None, ax=None):
    """Mean absolute error of a run's estimated mean score against the number of common
    (fully judged) topics n, one colour per pool width and one line style per estimator; the
    estimators that do not use common topics (``unadjusted``, ``leave-one-out``) are
    horizontal lines.

    Parameters
    ----------
    result : PoolingExperiment
        `fastrisk.pooling_experiment`'s result.
    estimators : sequence of {"adjusted", "mixed", "unadjusted", "leave-one-out"}
        ``adjusted``: Algorithm 2 (Webber & Park 2009); ``mixed``: n true + N − n unadjusted
        scores.
    widths : sequence of int, optional
        The pool widths drawn (default: all).
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).

    Returns
    -------
    matplotlib.axes.Axes
    """
    known = tuple(_ESTIMATOR_STYLE)
    if isinstance(estimators, str):
        estimators = (estimators,)
    for e in estimators:
        if e not in known:
            raise InputError(f"`estimators` must be among {', '.join(known)}, got {e!r}")
    all_widths = list(result.widths)
    wi = list(range(len(all_widths))) if widths is None else []
    for w in ([] if widths is None else ([widths] if np.isscalar(widths) else widths)):
        if w not in all_widths:
            raise InputError(f"`widths`: width {w} was not simulated; the result has {all_widths}")
        wi.append(all_widths.index(w))
    n = np.asarray(result.common_topics)
    ax, created = _axes(ax, (4.4, 2.8))
    shades = _sequential(len(wi))
    flat = {"unadjusted": np.abs(result.bias).mean(axis=1),
            "leave-one-out": np.abs(result.true - (result.unpooled + result.loo_adjustment)).mean(axis=1)}
    for k, w in enumerate(wi):
        for e in estimators:
            ls, marker = _ESTIMATOR_STYLE[e]
            label = f"{e}, width {all_widths[w]}"
            if e in flat:
                line = ax.axhline(flat[e][w], color=shades[k], linestyle=ls, linewidth=1.0, label=label)
            else:
                arr = result.adjusted_abs if e == "adjusted" else result.mixed_abs
                (line,) = ax.plot(n, arr[w].mean(axis=0), color=shades[k], linestyle=ls, marker=marker,
                                  markersize=3, linewidth=1.2, label=label)
            line.set_gid(f"mae:{e}:{all_widths[w]}")
    ax.set_xscale("log")
    ax.set_xticks(n, [str(v) for v in n])
    ax.minorticks_off()
    ax.set_xlabel("common topics n (log scale)")
    ax.set_ylabel(f"MAE of mean {result.measure}")
    ax.set_ylim(bottom=0.0)
    from matplotlib.lines import Line2D  # optional dependency (fastrisk[plot])

    handles = [Line2D([], [], color=shades[k], linewidth=2.0, label=f"width {all_widths[w]}")
               for k, w in enumerate(wi)]
    handles += [Line2D([], [], color="black", linestyle=_ESTIMATOR_STYLE[e][0], marker=_ESTIMATOR_STYLE[e][1],
                       markersize=3, linewidth=1.0, label=e) for e in estimators]
    ax.legend(handles=handles, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0), borderaxespad=0.2,
              handlelength=2.2)
    return _finish(ax, created)


def pca_map(result, *, components=(1, 2), highlight=None, ax=None, colors=None, legend: bool = True):
    """PCA map of systems (Dinçer, Ounis & Macdonald, ECIR 2014, Figs. 1-2).

    Every system is a grey point; the highlighted systems get their styles and a legend entry,
    and the projected extra points (virtual baselines MEAN, MEDIAN, MAX, ...) are black stars
    with their names. Axis labels give each component's share of the variance.

    Parameters
    ----------
    result : PCAResult
        `fastrisk.pca`'s result.
    components : tuple of int
        The two components drawn (1-based).
    highlight : sequence of str, optional
        Systems drawn in colour with a legend entry.
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).
    colors : dict or sequence, optional
        Colours of the highlighted systems (default: `system_styles`).
    legend : bool
        Draw a legend.

    Returns
    -------
    matplotlib.axes.Axes
    """
    first, second = components
    m = result.scores.shape[1]
    if not (1 <= first <= m and 1 <= second <= m) or first == second:
        raise InputError(f"`components` must be two different components in 1..{m}, got {components!r}")
    ax, created = _axes(ax, COLUMN_FIGSIZE)
    i, j = first - 1, second - 1
    ax.plot(result.scores[:, i], result.scores[:, j], linestyle="none", marker="o", markersize=3.5,
            color=NEUTRAL_COLOR, alpha=0.6, markeredgewidth=0, label="systems", zorder=2, gid="pca-systems")
    rows = [] if highlight is None else _pick_systems(result.systems, highlight, "highlight")
    names = [result.systems[k] for k in rows]
    styles = _styles(names, colors)
    for k, name in zip(rows, names):
        st = styles[name]
        ax.plot(result.scores[k, i], result.scores[k, j], linestyle="none", marker=st["marker"], markersize=6,
                color=st["color"], markeredgecolor="white", markeredgewidth=0.5, label=name, zorder=3,
                gid=f"pca-{name}")
    right = np.max(np.r_[result.scores[:, i], result.extra_scores[:, i]]) if len(result.extra_names) else 0.0
    for name, point in zip(result.extra_names, result.extra_scores):
        ax.plot(point[i], point[j], linestyle="none", marker="*", markersize=9, color="black", zorder=4,
                gid="pca-extra")
        at_right = point[i] >= 0.8 * right > 0  # keep labels of right-most points inside the axes
        ax.annotate(name, (point[i], point[j]), xytext=(-5 if at_right else 5, 4), textcoords="offset points",
                    ha="right" if at_right else "left", fontsize=SMALL_FONT_SIZE, zorder=5)
    ratio = result.explained_variance_ratio
    ax.set_xlabel(f"PC{first} ({100 * ratio[i]:.1f}% of variance)")
    ax.set_ylabel(f"PC{second} ({100 * ratio[j]:.1f}% of variance)")
    ax.axhline(0.0, color=CRITICAL_COLOR, linewidth=0.5, zorder=1)
    ax.axvline(0.0, color=CRITICAL_COLOR, linewidth=0.5, zorder=1)
    if legend:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, borderaxespad=0.0)
    return _finish(ax, created)
