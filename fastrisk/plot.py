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

from collections.abc import Mapping, Sequence

import numpy as np

from fastrisk.errors import InputError

#: Okabe & Ito (2008) colour-blind-safe palette, most contrasting colours first (yellow last).
OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", "-.", ":")
#: Colours of significant losses and wins (vermillion and bluish green of Okabe-Ito).
LOSS_COLOR, WIN_COLOR, NEUTRAL_COLOR, CRITICAL_COLOR = "#D55E00", "#009E73", "#7F7F7F", "#444444"

#: Font sizes (points) for figures this module creates: readable when a 3.5-inch-wide figure
#: is printed at the width of one column.
FONT_SIZE, SMALL_FONT_SIZE = 8.0, 7.0
COLUMN_FIGSIZE = (3.5, 2.6)
WIDE_FIGSIZE = (7.2, 2.8)


# ---------------------------------------------------------------------- matplotlib plumbing
def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("fastrisk.plot needs matplotlib: pip install 'fastrisk[plot]'") from None
    return plt


def _axes(ax, figsize):
    """``ax`` if given, else the Axes of a new figure of ``figsize`` inches (via pyplot, so it
    shows in notebooks; the report builds its figures without pyplot)."""
    if ax is not None:
        return ax, False
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax, True


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


def system_styles(systems: Sequence[str]) -> dict:
    """``{system: {"color", "marker", "linestyle"}}`` in the order given: Okabe-Ito colours, then
    the same colours with other line styles (so 32 systems stay distinguishable)."""
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
            raise InputError(f"`alphas`: alpha={a:g} was not computed; the result has alpha = "
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


# ---------------------------------------------------------------------- risk (Dinçer et al. 2014)
def trisk_alpha(result, systems=None, *, statistic: str = "trisk", ax=None, colors=None, legend: bool = True):
    """TRisk (or URisk) of chosen systems against α, with the ±t critical lines.

    Dinçer, Macdonald & Ounis (SIGIR 2014), Fig. 1. ``result`` is a :class:`fastrisk.RiskResult`
    (compute it on a fine α grid for smooth curves, e.g. ``alpha=np.linspace(0, 10, 41)``);
    ``systems`` (default: all) fixes which systems are drawn and their order and colours.
    """
    if statistic not in ("trisk", "urisk"):
        raise InputError(f"`statistic` must be 'trisk' or 'urisk', got {statistic!r}")
    if getattr(result, "value", "linear") != "linear":
        raise InputError(f"trisk_alpha plots risk against \u03b1; the result uses the {result.value!r} "
                         "value function, which has no \u03b1")
    rows = _pick_systems(result.systems, systems)
    names = [result.systems[k] for k in rows]
    styles = _styles(names, colors)
    ax, created = _axes(ax, COLUMN_FIGSIZE)
    x, xlabel = _alpha_axis(result)
    values = getattr(result, statistic)
    _zero_line(ax)
    if statistic == "trisk":
        _critical_lines(ax, result.critical_t, result.significance, result.df)
    few = len(x) <= 12
    for k, name in zip(rows, names):
        st = styles[name]
        (line,) = ax.plot(x, values[k], color=st["color"], linestyle=st["linestyle"],
                          marker=st["marker"] if few else None, markersize=3.5, linewidth=1.2, label=name)
        line.set_gid(f"system:{name}")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"{_risk_name(result, 'TRisk' if statistic == 'trisk' else 'URisk')} vs {result.baseline}")
    if legend:
        ax.legend(frameon=False, ncols=1 if len(names) <= 6 else 2, loc="best")
    return _finish(ax, created)


def topic_risk_bars(result, system: str, *, alphas=None, statistic: str = "tr", sort: bool = False, ax=None):
    """Per-topic TR_i (or TJ_i) bars of one system at several α, the ±t lines and the
    significant topics marked (▼ significant loss, ▲ significant win; bold topic labels).

    Dinçer, Macdonald & Ounis (SIGIR 2014), Fig. 2. ``result`` is a
    :class:`fastrisk.TopicRiskResult`; ``statistic`` is ``"tr"``, ``"tj"`` or ``"both"`` (TR_i
    bars with TJ_i as black ticks on them, to show that the two agree). ``sort`` orders topics
    by the score at the first α.
    """
    if statistic not in ("tr", "tj", "both"):
        raise InputError(f"`statistic` must be 'tr', 'tj' or 'both', got {statistic!r}")
    (row,) = _pick_systems(result.systems, [system], "system")
    cols = _pick_alphas(result.alpha, alphas)
    bars_of = result.tj if statistic == "tj" else result.tr
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
        if statistic == "both":
            (tj,) = ax.plot(xs, result.tj[col, row][order], linestyle="none", marker="_", color="black",
                            markersize=max(2.0, 20.0 * width), markeredgewidth=0.9,
                            label="TJ$_i$" if j == 0 else None)
            tj.set_gid(f"tj:{j}")
        if statistic == "tj":
            loss, win = v < -crit, v > crit
        else:
            loss, win = result.loss[col, row][order], result.win[col, row][order]
        for flag, sign in ((loss, -1.0), (win, 1.0)):
            for i in np.flatnonzero(flag):
                sig_x.append(xs[i])
                sig_y.append(v[i] + sign * 0.06 * max(crit, 1.0))
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
    significant = (result.loss[cols, row] | result.win[cols, row]).any(axis=0)[order] if statistic != "tj" \
        else (np.abs(values) > crit).any(axis=0)[order]
    ax.set_xticks(pos, topics, rotation=90)
    for lab, sig in zip(ax.get_xticklabels(), significant):
        if sig:
            lab.set_fontweight("bold")
    ax.set_xlim(-0.7, c - 0.3)
    ax.set_xlabel("topic" + (" (sorted)" if sort else ""))
    name = {"tr": "TR$_i$", "tj": "TJ$_i$", "both": "TR$_i$ (bars), TJ$_i$ (ticks)"}[statistic]
    ax.set_ylabel(f"{name}{' (minus)' if _minus(result) else ''}")
    ax.legend(frameon=False, ncols=n + 3, loc="lower left", bbox_to_anchor=(0.0, 1.0), borderaxespad=0.2,
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
    lo, hi = np.array([0x9E, 0xCA, 0xE9]) / 255.0, np.array([0x08, 0x30, 0x6B]) / 255.0
    return [tuple(lo + (hi - lo) * t) for t in np.linspace(0.0, 1.0, n)]


def urisk_distribution(result, systems=None, *, alpha=None, kind: str = "box", sort: bool = True, ax=None,
                       colors=None, legend: bool = True):
    """Per-topic risk-reward scores x_i (URisk's summands) of systems against the baseline.

    Dinçer, Ounis & Macdonald (ECIR 2014), Figs. 3-4. ``result`` has ``x`` of shape (A, S, c)
    (:class:`fastrisk.TopicRiskResult` or :class:`fastrisk.RiskScores`). ``kind="box"``: one
    box per system (quartiles, whiskers at 1.5 IQR, URisk = mean as a diamond), sorted by URisk
    when ``sort``; ``kind="sorted"``: each system's x_i sorted in decreasing order against the
    topic rank, so wins, ties and losses read off as the areas above and below zero.
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
        styles = _styles(names, colors) if len(names) <= len(OKABE_ITO) or colors is not None else {}
        for patch, name in zip(box["boxes"], names):
            patch.set_facecolor(styles[name]["color"] if name in styles else "#9ECAE9")
            patch.set_alpha(0.6)
            patch.set_gid(f"box:{name}")
        (mean_pts,) = ax.plot(pos, means, linestyle="none", marker="D", markersize=3, color="black",
                              label=f"{ux} (mean)")
        mean_pts.set_gid("urisk")
        ax.set_xticks(pos, names, rotation=90 if len(names) > 4 else 0)
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
        ax.legend(frameon=False, ncols=1 if len(names) <= 6 or kind == "box" else 2)
    _finish(ax, created)
    if created and kind == "box":
        ax.tick_params(axis="x", labelsize=max(4.5, min(SMALL_FONT_SIZE, 300.0 / len(names))))
    return ax
