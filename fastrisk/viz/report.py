"""A self-contained risk report: one HTML page (or a PDF) with the figures, the tables beside
them, and the parameters and data provenance at the top, for a paper's supplementary material.

``write_report(path, matrix, baseline, ...)`` computes URisk/TRisk (Wang et al. 2012; Dinçer,
Macdonald & Ounis 2014), the exploratory per-topic TR_i/TJ_i and, when fastrisk has it, the
all-baseline table (Dinçer, Ounis & Macdonald, ECIR 2014), then draws every figure with
`fastrisk.viz.plot` (figures are built without pyplot, so nothing is shown or kept open) and
embeds them as inline SVG (default) or base64 PNG: the page needs no other file and no network.
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import html
import io
import platform
import re
import textwrap
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numba
import numpy as np
import scipy

from fastrisk._runtime import atomic as _atomic
from fastrisk._runtime.aliases import AlphaLike, BaselineLike, MatrixLike
from fastrisk._runtime.extras import require
from fastrisk._version import __version__
from fastrisk.core.baselines import Baseline, resolve_baseline
from fastrisk.core.inference import INFERENCES, t_level_note
from fastrisk.core.tables import baseline_table
from fastrisk.core.urisk import risk, topic_risk
from fastrisk.data.publication import format_number, format_pvalue
from fastrisk.errors import InputError, ZeroVarianceWarning
from fastrisk.measures.metrics import parse_measure
from fastrisk.viz import plot
from fastrisk.viz.plot import new_axes

IMAGE_FORMATS = ("svg", "png")
REPORT_FORMATS = ("html", "pdf")
#: Systems highlighted (drawn individually) when the caller does not choose them.
DEFAULT_HIGHLIGHT = 5


# ---------------------------------------------------------------------- provenance
def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _modified(st) -> str:
    return _dt.datetime.fromtimestamp(st.st_mtime, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def file_provenance(path) -> dict:
    """Name, size, SHA-256 and modification time of an input file or directory.

    Parameters
    ----------
    path : str or os.PathLike
        A file, or a directory (e.g. of TREC runs).

    Returns
    -------
    dict
        ``path`` (the file's or directory's name only: a report shared with others does not
        disclose where its inputs lived; the SHA-256 identifies them), ``bytes``, ``sha256``,
        ``modified``; for a directory also ``files``: one
        ``{"name", "bytes", "sha256"}`` per file below it (sorted by relative name), ``bytes``
        their total, ``sha256`` the digest of the listing (one ``name\tsha256`` line per file)
        and ``modified`` the latest modification.
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file or directory")
    if not p.is_dir():
        st = p.stat()
        return {"path": p.name, "bytes": st.st_size, "sha256": _sha256(p), "modified": _modified(st)}
    files, latest = [], None
    for f in sorted((f for f in p.rglob("*") if f.is_file()), key=lambda f: f.relative_to(p).as_posix()):
        st = f.stat()
        files.append({"name": f.relative_to(p).as_posix(), "bytes": st.st_size, "sha256": _sha256(f)})
        latest = st if latest is None or st.st_mtime > latest.st_mtime else latest
    listing = "".join(f"{f['name']}\t{f['sha256']}\n" for f in files)
    return {"path": p.resolve().name, "bytes": sum(f["bytes"] for f in files),
            "sha256": hashlib.sha256(listing.encode()).hexdigest(),
            "modified": _modified(latest or p.stat()), "files": files}


def measure_definition(name) -> str | None:
    """A one-sentence definition of a measure.

    Parameters
    ----------
    name : str
        An ir_measures name such as ``ERR@20``.

    Returns
    -------
    str or None
        None when fastrisk does not know the measure.
    """
    if not name:
        return None
    try:
        return parse_measure(str(name)).definition()
    except (InputError, ValueError):
        return None


def _versions() -> str:
    import matplotlib  # optional dependency (fastrisk[plot])

    return (f"fastrisk {__version__}, Python {platform.python_version()}, NumPy {np.__version__}, "
            f"SciPy {scipy.__version__}, Numba {numba.__version__}, Matplotlib {matplotlib.__version__}")


# ---------------------------------------------------------------------- sections
@dataclass
class Section:
    """One block of the report: a heading, a caption, figures and HTML tables side by side."""

    title: str
    caption: str = ""
    figures: list = field(default_factory=list)  # (matplotlib Figure, alt text)
    tables: list = field(default_factory=list)  # Table
    note: str = ""


@dataclass
class Table:
    """A table of the report, rendered as HTML (`html_table`) or as PDF pages.

    ``rows`` hold numbers or ready-made strings (p-values are formatted by
    `pvalue_text`); ``classes[i][j]`` is an optional CSS class per cell (``risk`` /
    ``reward``); ``numeric[j]`` right-aligns column j; ``empty`` is shown when there are no rows.
    """

    title: str
    headers: list
    rows: list
    classes: list | None = None
    numeric: list | None = None
    empty: str = ""

    def html(self) -> str:
        if not self.rows and self.empty:
            return f"<p>{html.escape(self.empty)}</p>"
        return html_table(self.headers, self.rows, classes=self.classes, numeric=self.numeric)

    def text_rows(self) -> list[list[str]]:
        """Every cell as the text the HTML shows."""
        return [[v if isinstance(v, str) else _fmt(v) for v in row] for row in self.rows]


def _figure(width: float, height: float):
    ax = new_axes((width, height), pyplot=False)
    return ax.figure, ax


def _fmt(v, digits: int = 4) -> str:
    """A cell of the report: `format_number` with the typographic minus and infinity, and an
    empty cell for False."""
    return format_number(v, digits, no="", infinity="∞", minus="−")


def pvalue_text(p, digits: int = 4) -> str:
    """A p-value as the report prints it: ``< 0.0001`` below the precision, ``–`` for NaN.

    Parameters
    ----------
    p : float
        The p-value.
    digits : int
        Decimals printed.

    Returns
    -------
    str
    """

    return format_pvalue(p, digits)


def html_table(headers, rows, *, classes=None, numeric=None) -> str:
    """An HTML table, numbers right-aligned.

    Parameters
    ----------
    headers : sequence of str
        The column headings.
    rows : sequence of sequence
        The cells, row by row (escaped).
    classes : sequence of sequence of str, optional
        ``classes[i][j]``: a CSS class of cell (i, j), or None.
    numeric : sequence of bool, optional
        Which columns are numbers (right-aligned).

    Returns
    -------
    str
    """
    esc = html.escape
    numeric = numeric or [False] * len(headers)
    out = ["<table><thead><tr>"]
    out += [("<th class='num'>" if n else "<th>") + f"{esc(str(h))}</th>" for h, n in zip(headers, numeric)]
    out.append("</tr></thead><tbody>")
    for i, row in enumerate(rows):
        cells = []
        for j, v in enumerate(row):
            cls = [c for c in ("num" if numeric[j] else "", (classes[i][j] if classes else "") or "") if c]
            attr = f' class="{" ".join(cls)}"' if cls else ""
            cells.append(f"<td{attr}>{esc(v if isinstance(v, str) else _fmt(v))}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


#: Two systems whose per-topic scores all differ by at most this much are near-duplicates: the
#: default choice highlights one of them only (identical panels say nothing new).
NEAR_DUPLICATE = 1e-5


def _near_duplicate(values, k, chosen) -> bool:
    return any(np.all(np.abs(values[k] - values[c]) <= NEAR_DUPLICATE) for c in chosen)


def _choose_highlight(matrix, systems, baseline_row, res):
    """The highlighted systems and why: ``systems`` when given, else a spread of the TRisk
    distribution (at the largest α) — the systems nearest its quantiles 0, 1/4, 1/2, 3/4, 1 —
    with near-duplicates collapsed. Returns ``(names, reason)``."""
    if systems is not None:
        names = [systems] if isinstance(systems, str) else list(systems)
        for s in names:
            if s not in matrix.systems:
                raise InputError(f"`systems`: unknown system {s!r}; the matrix has "
                                 f"{', '.join(matrix.systems[:8])}{', ...' if matrix.n_systems > 8 else ''}")
        if not names:
            raise InputError("`systems` must name at least one system")
        return names, "chosen by the caller with `systems=` / `--systems`"
    finite = np.isfinite(res.alpha)
    j = int(np.nanargmax(res.alpha)) if finite.any() else 0
    trisk = res.trisk[j]
    cand = [k for k in range(matrix.n_systems) if k != baseline_row]
    ranked = sorted(cand, key=lambda k: (not np.isfinite(trisk[k]), -trisk[k] if np.isfinite(trisk[k]) else 0.0))
    ranked = [k for k in ranked if np.isfinite(trisk[k])] or ranked  # undefined TRisk only when nothing else
    values = matrix.values
    n = len(ranked)
    chosen: list[int] = []
    for q in np.linspace(0.0, 1.0, DEFAULT_HIGHLIGHT):
        target = round(q * (n - 1))
        # the nearest rank to the quantile that is neither chosen nor a near-duplicate of a chosen one
        for pos in sorted(range(n), key=lambda i: (abs(i - target), i)):
            k = ranked[pos]
            if k not in chosen and not _near_duplicate(values, k, chosen):
                chosen.append(k)
                break
    chosen.sort(key=ranked.index)
    at = plot._alpha_text(res, j)
    reason = (f"chosen as the systems nearest the minimum, quartiles and maximum of {plot._risk_name(res, 'TRisk')} "
              f"at {at}, near-duplicates (per-topic scores all within {NEAR_DUPLICATE:g}) collapsed; choose with "
              "`--systems` / `systems=`")
    return [matrix.systems[k] for k in chosen], reason


def _alpha_grid(result):
    """A fine grid over the user's α range (in the parametrisation given) plus their values."""
    if result.given == "loss_weight":
        top = max(float(result.loss_weight.max()), 2.0)
        return {"loss_weight": np.unique(np.concatenate([np.linspace(1.0, top, 41), result.loss_weight]))}
    top = max(float(result.alpha.max()), 1.0)
    return {"alpha": np.unique(np.concatenate([np.linspace(0.0, top, 41), result.alpha]))}


def _sections(matrix, base, *, kwargs, systems, significance, heatmap_alpha=None):
    """Compute every result and build the report's sections."""

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        res = risk(matrix, base, significance=significance, **kwargs)
        topic = topic_risk(matrix, base, significance=significance,
                           **{k: v for k, v in kwargs.items() if k not in _INFERENCE_OPTIONS})
    highlight, why = _choose_highlight(matrix, systems, base.system, res)
    styles = plot.system_styles(highlight)
    linear = res.value == "linear"
    A = len(res.alpha)
    urisk_n, trisk_n = plot._risk_name(res, "URisk"), plot._risk_name(res, "TRisk")
    alpha_labels = [plot._alpha_text(res, j) for j in range(A)]
    rows_h = [res.systems.index(s) for s in highlight]
    sections = []

    # 1. TRisk against alpha, with the table of the highlighted systems
    riskier, rewarding = ("above", "below") if res.convention == "minus" else ("below", "above")
    sec = Section(f"{trisk_n} of the highlighted systems",
                  f"{urisk_n} = {'−' if res.convention == 'minus' else ''}mean of x<sub>i</sub> (x<sub>i</sub> = d<sub>i</sub> for wins, (1 + α) d<sub>i</sub> "
                  f"for losses, d<sub>i</sub> = system − baseline); {trisk_n} = {urisk_n} / SE<sub>x</sub>, "
                  f"Student t with {res.df} degrees of freedom{_inference_text(res)}. Dashed lines: ±t({significance / 2:g}, {res.df}) = "
                  f"±{res.critical_t:.3f}; beyond them a system is significantly riskier ({riskier}) or more "
                  f"rewarding ({rewarding}) than the baseline. Dinçer, Macdonald &amp; Ounis (SIGIR 2014), Fig. 1. "
                  f"{html.escape(_highlight_text(highlight, why))}.")
    if linear:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ZeroVarianceWarning)
            grid_kwargs = {k: v for k, v in kwargs.items() if k not in ("alpha", "loss_weight")}
            fine = risk(matrix.select(systems=highlight), _rows_baseline(base, rows_h),
                        significance=significance, **grid_kwargs, **_alpha_grid(res))
        fig, ax = _figure(4.8, 3.0)  # room for the legend beside the curves
        plot.trisk_alpha(fine, highlight, ax=ax, colors=styles)
        sec.figures.append((fig, f"{trisk_n} against α for {', '.join(highlight)}"))
    else:
        sec.note = f"The {html.escape(res.value)} value function has no α: no curve over α is drawn."
    headers = ["system", "α" if res.given != "loss_weight" else "α̂", urisk_n, "SE", trisk_n, "p"]
    rows, classes = [], []
    for k in rows_h:
        for j in range(A):
            a = res.loss_weight[j] if res.given == "loss_weight" else res.alpha[j]
            rows.append([res.systems[k], "–" if np.isnan(a) else f"{a:g}", res.urisk[j, k], res.standard_error[j, k],
                         res.trisk[j, k], pvalue_text(res.pvalue[j, k])])
            flag = "risk" if res.at_risk[j, k] else "reward" if res.rewarding[j, k] else ""
            classes.append(["", "", "", "", flag, flag])
    sec.tables.append(Table("Risk against the baseline", headers, rows, classes,
                            [False, True, True, True, True, True]))
    sections.append(sec)

    # 2. per-topic TR_i / TJ_i
    for k, name in zip(rows_h, highlight):
        sec = Section(f"Per-topic risk of {name}",
                      "Bars: TR<sub>i</sub> = x<sub>i</sub> / s<sub>x</sub> per topic at each α; black ticks: the "
                      "jackknife TJ<sub>i</sub> (the topic's leave-one-out influence on URisk, same scale). "
                      "▼/▲ and bold topic ids: significant losses/wins (|TR<sub>i</sub>| beyond the dashed "
                      "±t lines). Dinçer, Macdonald &amp; Ounis (SIGIR 2014), Fig. 2.")
        fig, ax = _figure(7.2, 3.0)
        plot.topic_risk_bars(topic, name, show="both", ax=ax)
        sec.figures.append((fig, f"per-topic TR and TJ of {name}"))
        rows = []
        for j in range(A):
            for i in np.flatnonzero(topic.loss[j, k] | topic.win[j, k]):
                rows.append([topic.topics[i], alpha_labels[j], topic.x[j, k, i], topic.tr[j, k, i],
                             topic.tj[j, k, i], "loss" if topic.loss[j, k, i] else "win"])
        classes = [[""] * 5 + ["risk" if r[-1] == "loss" else "reward"] for r in rows]
        sec.tables.append(Table(f"Significant topics of {name}", ["topic", "α", "x_i", "TR_i", "TJ_i", ""], rows,
                                classes, [False, False, True, True, True, False], empty="No topic is significant."))
        sections.append(sec)

    # 3. distributions of per-topic scores
    j = next((j for j in range(A) if res.alpha[j] > 0), 0)
    sec = Section("Per-topic scores of every system",
                  f"Distribution of the per-topic scores x<sub>i</sub> ({alpha_labels[j]}) of every system "
                  f"against the baseline, sorted by {urisk_n} (diamond; box: quartiles, whiskers 1.5 IQR; highlighted systems in colour and bold); "
                  "right: the highlighted systems' x<sub>i</sub> sorted in decreasing order, so the area below "
                  "zero is the loss the baseline avoids. Dinçer, Ounis &amp; Macdonald (ECIR 2014), Figs. 3–4.")
    a_sel = None if np.isnan(res.alpha[j]) else float(res.alpha[j])
    fig, ax = _figure(7.2, 3.0)
    plot.urisk_distribution(topic, kind="box", alpha=a_sel, ax=ax, legend=True, colors=styles)
    sec.figures.append((fig, "per-topic score distributions of every system"))
    fig, ax = _figure(3.6, 2.8)
    plot.urisk_distribution(topic, highlight, kind="sorted", alpha=a_sel, ax=ax, colors=styles)
    sec.figures.append((fig, "sorted per-topic scores of the highlighted systems"))
    sections.append(sec)

    # 4. the all-baseline heat map (when fastrisk.core.tables is available)
    sections.append(_baseline_section(matrix, res, significance, heatmap_alpha))

    # 5. every system
    sec = Section("Every system", f"{urisk_n}, {trisk_n} and two-sided p-value of every system, "
                  "sorted by mean score; red: significantly riskier than the baseline, green: significantly "
                  "more rewarding.")
    headers = ["system", "mean score"]
    for lab in alpha_labels:
        headers += [f"{urisk_n} ({lab})", f"{trisk_n} ({lab})", f"p ({lab})"]
    means = matrix.values.mean(axis=1)
    rows, classes = [], []
    for k in np.argsort(-means, kind="stable"):
        row, cls = [res.systems[k], means[k]], ["", ""]
        for j in range(A):
            flag = "risk" if res.at_risk[j, k] else "reward" if res.rewarding[j, k] else ""
            row += [res.urisk[j, k], res.trisk[j, k], pvalue_text(res.pvalue[j, k])]
            cls += ["", flag, flag]
        rows.append(row)
        classes.append(cls)
    sec.tables.append(Table(f"All {matrix.n_systems} systems", headers, rows, classes,
                            [False] + [True] * (len(headers) - 1)))
    sections.append(sec)
    return res, sections, _highlight_text(highlight, why)


#: The options of `build_report` that only `fastrisk.risk` takes (not `topic_risk`).
_INFERENCE_OPTIONS = ("inference", "score_bounds", "replicates", "rng")


def _inference_text(res) -> str:
    """How the report's p-values and flags were formed, when not by Student's t."""
    if res.inference == "t":
        return ""
    spec = INFERENCES[res.inference]
    return (f"; the p-values and the red/green flags are {html.escape(spec.name)}'s "
            f"({html.escape(spec.citation)}), not Student's t")


def _highlight_text(highlight, why) -> str:
    return f"highlighted: {', '.join(highlight)} ({why})"


def _rows_baseline(base, rows):
    values = base.values if base.values.shape[0] == 1 else base.values[rows]
    return Baseline(base.name, np.ascontiguousarray(values))


def _baseline_section(matrix, res, significance, heatmap_alpha=None):
    sec = Section("Every system as the baseline", "")
    if res.value != "linear":
        sec.note = f"All-baseline tables use the linear value function; not drawn for {html.escape(res.value)}."
        return sec
    if heatmap_alpha is not None:
        key, value = "alpha", float(heatmap_alpha)
    else:  # the largest alpha asked for, in the parametrisation given
        j = int(np.argmax(res.alpha))
        key = "loss_weight" if res.given == "loss_weight" else "alpha"
        value = float(getattr(res, key)[j])
    at = f"α = {value:g}" if key == "alpha" else f"loss weight α̂ = {value:g} (α = {value - 1:g})"
    sec.caption = (f"{plot._risk_name(res, 'TRisk')} at {at} of every system (rows) against every other system as "
                   "the baseline (columns), systems sorted by mean URisk; dots: significant at level "
                   f"{significance:g}. Dinçer, Ounis &amp; Macdonald (ECIR 2014).")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        table = baseline_table(matrix, **{key: [value]}, convention=res.convention)
    big = matrix.n_systems > 12
    fig, ax = _figure(7.0 if big else 4.2, 6.2 if big else 3.6)
    plot.baseline_heatmap(table, show="trisk", significance=significance, order="mean", ax=ax)
    sec.figures.append((fig, f"all-baseline TRisk heat map at {at}"))
    return sec


# ---------------------------------------------------------------------- rendering
_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:2em auto;
max-width:1200px;padding:0 1em;color:#222;line-height:1.4}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.25em;border-bottom:1px solid #ccc;padding-bottom:.2em;
margin-top:2em}p.caption{color:#444;font-size:.92em;max-width:70em}
.pair{display:flex;flex-wrap:wrap;gap:1.5em;align-items:flex-start}
figure{margin:0;flex:0 1 auto;max-width:100%}figure.wide{flex:1 1 100%}figure.wide svg,figure.wide img{width:100%}figure svg,figure img{max-width:100%;height:auto;display:block}
.tables{flex:1 1 22em;min-width:18em}
table{border-collapse:collapse;font-size:.85em;margin:.3em 0 1em}
th,td{padding:.15em .6em;border-bottom:1px solid #e3e3e3;text-align:left;white-space:nowrap}
th{background:#f4f4f4;white-space:normal;vertical-align:bottom}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
thead{display:table-header-group}tr{break-inside:avoid}
@page{size:A4;margin:12mm}@media print{body{margin:0;max-width:none;padding:0}table{font-size:.7em}th,td{padding:.1em .35em}
h2{break-after:avoid}figure{break-inside:avoid}}
td.risk{color:#A63603;font-weight:600}td.reward{color:#00664A;font-weight:600}
dl.params{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em;font-size:.92em}
dl.params dt{font-weight:600}dl.params dd{margin:0}code{font-size:.95em}
.note{color:#7a5b00;font-style:italic}footer{margin-top:3em;color:#666;font-size:.85em}
"""


def _figure_html(fig, alt: str, image_format: str) -> str:
    buf = io.BytesIO()
    cls = ' class="wide"' if fig.get_figwidth() > 5.0 else ""
    if image_format == "svg":
        fig.savefig(buf, format="svg", metadata={"Date": None})
        text = buf.getvalue().decode("utf-8")
        text = text[text.index("<svg"):]  # drop the XML prolog and doctype: inline SVG
        size = "" if cls else f' style="width:{fig.get_figwidth() * 140:.0f}px"'
        text = text.replace("<svg ", f'<svg role="img" aria-label="{html.escape(alt)}"{size} ', 1)
        return f"<figure{cls}>{text}</figure>"
    fig.savefig(buf, format="png", dpi=150)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    w, h = fig.get_size_inches() * 140
    return (f'<figure{cls}><img src="data:image/png;base64,{data}" alt="{html.escape(alt)}" '
            f'width="{w:.0f}" height="{h:.0f}"></figure>')


def _params(matrix, res, base_name, provenance, significance) -> list[tuple[str, str]]:
    esc = html.escape
    alphas = ", ".join("–" if np.isnan(a) else f"{a:g}" for a in res.alpha)
    lws = ", ".join("–" if np.isnan(a) else f"{a:g}" for a in res.loss_weight)
    definition = measure_definition(matrix.measure)
    items = [("measure", esc(matrix.measure or "(unnamed)") + (f" — {esc(definition)}" if definition else "")),
             ("systems", f"{matrix.n_systems}"),
             ("topics", f"{matrix.n_topics} ({esc(matrix.topics[0])} … {esc(matrix.topics[-1])})"),
             ("baseline", esc(base_name)),
             ("value function", esc(res.value)),
             ("risk sensitivity", f"α = {alphas} (loss weight α̂ = 1 + α = {lws}; given as "
                                  f"{esc(res.given if res.given != 'none' else 'default α')})"),
             ("convention", esc(res.convention) + (" (URisk⁻ = −URisk, TRisk⁻ = −TRisk: larger is riskier)"
                                                    if res.convention == "minus" else " (larger is better)")),
             ("significance", f"{significance:g} two-sided, t({significance / 2:g}, {res.df}) = {res.critical_t:.4f}")]
    spec = INFERENCES[res.inference]
    items.append(("inference", f"{esc(spec.name)} — {esc(spec.citation)}; assumes {esc(spec.assumes)}"))
    note = t_level_note(res.alpha, res.n_topics) if res.inference == "t" and res.value == "linear" else None
    if note:
        items.append(("level of t", esc(note)))
    for key, value in (provenance or {}).items():
        if isinstance(value, dict) and "files" in value:  # a directory's provenance
            listing = "".join(f"<li><code>{esc(f['name'])}</code> — {f['bytes']:,} bytes, SHA-256 "
                              f"<code>{esc(f['sha256'])}</code></li>" for f in value["files"])
            value = (f"<code>{esc(value['path'])}</code> — directory of {len(value['files'])} files, "
                     f"{value['bytes']:,} bytes, modified {esc(value['modified'])}, SHA-256 of the listing "
                     f"<code>{esc(value['sha256'])}</code><details><summary>files</summary><ul>{listing}</ul>"
                     "</details>")
        elif isinstance(value, dict):  # a file's provenance
            value = (f"<code>{esc(value['path'])}</code> — {value['bytes']:,} bytes, modified {esc(value['modified'])}, "
                     f"SHA-256 <code>{esc(value['sha256'])}</code>")
        else:
            value = esc(str(value))
        items.append((esc(key), value))
    return items


def render_html(sections, params, *, title: str, image_format: str = "svg") -> str:
    """The report page from built sections and (name, HTML value) parameter pairs.

    Parameters
    ----------
    sections : list of Section
        `build_report`'s sections.
    params : list of (str, str)
        `build_report`'s header rows.
    title : str
        The page title.
    image_format : {"svg", "png"}
        How figures are embedded.

    Returns
    -------
    str
        A self-contained HTML page.
    """
    esc = html.escape
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>",
             f"<header><h1>{esc(title)}</h1><p>Generated {now} by {esc(_versions())}.</p>",
             '<dl class="params">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in params) + "</dl></header>"]
    for sec in sections:
        parts.append(f"<section><h2>{esc(sec.title)}</h2>")
        if sec.caption:
            parts.append(f'<p class="caption">{sec.caption}</p>')
        if sec.note:
            parts.append(f'<p class="note">{sec.note}</p>')
        if sec.figures or sec.tables:
            parts.append('<div class="pair">')
            parts += [_figure_html(fig, alt, image_format) for fig, alt in sec.figures]
            if sec.tables:
                parts.append('<div class="tables">' + "".join(f"<h3>{esc(t.title)}</h3>{t.html()}" for t in sec.tables)
                             + "</div>")
            parts.append("</div>")
        parts.append("</section>")
    parts.append("<footer>References: Wang, Bennett &amp; Collins-Thompson (SIGIR 2012); Dinçer, Macdonald &amp; "
                 "Ounis, Hypothesis testing for the risk-sensitive evaluation of retrieval systems (SIGIR 2014); "
                 "Dinçer, Ounis &amp; Macdonald, Tackling biased baselines in the risk-sensitive evaluation of "
                 "retrieval systems (ECIR 2014).</footer></body></html>")
    return "\n".join(parts)


#: Rows of a table on one PDF page (A4); lines of the parameter page.
PDF_TABLE_ROWS, PDF_COVER_LINES = 40, 110
_PDF_COLORS = {"risk": "#A63603", "reward": "#00664A"}


def _table_pages(table: Table, heading: str):
    """The PDF pages (matplotlib Figures) of one report table, ``PDF_TABLE_ROWS`` rows a page."""
    from matplotlib.figure import Figure  # optional dependency (fastrisk[plot])

    rows = table.text_rows()
    if not rows:
        rows, classes = [[table.empty or "(no rows)"] + [""] * (len(table.headers) - 1)], None
    else:
        classes = table.classes
    numeric = table.numeric or [False] * len(table.headers)
    wide = len(table.headers) > 7
    pages = []
    n_pages = -(-len(rows) // PDF_TABLE_ROWS)
    for page in range(n_pages):
        lo, hi = page * PDF_TABLE_ROWS, min(len(rows), (page + 1) * PDF_TABLE_ROWS)
        fig = Figure(figsize=(11.69, 8.27) if wide else (8.27, 11.69))
        ax = fig.add_axes((0.04, 0.04, 0.92, 0.88))
        ax.set_axis_off()
        cont = f" ({page + 1}/{n_pages})" if n_pages > 1 else ""
        fig.text(0.04, 0.96, f"{heading}: {table.title}{cont}", fontsize=10, weight="bold", va="top")
        height = min(0.9, (hi - lo + 1) * 0.022 * (1.4 if wide else 1.0))
        tab = ax.table(cellText=rows[lo:hi], colLabels=[str(h) for h in table.headers], loc="top",
                       bbox=(0.0, 1.0 - height, 1.0, height), edges="horizontal")
        tab.auto_set_font_size(False)
        tab.set_fontsize(6.5 if wide else 7.5)
        for (r, c), cell in tab.get_celld().items():
            cell.set_linewidth(0.3)
            cell.get_text().set_horizontalalignment("right" if numeric[c] else "left")
            if r == 0:
                cell.get_text().set_weight("bold")
            elif classes is not None and classes[lo + r - 1][c] in _PDF_COLORS:
                cell.get_text().set_color(_PDF_COLORS[classes[lo + r - 1][c]])
                cell.get_text().set_weight("bold")
        pages.append(fig)
    return pages


def _plain(value: str) -> str:
    """HTML parameter text as plain text (list items on their own lines)."""

    value = re.sub(r"<summary>.*?</summary>", "", value)
    value = re.sub(r"<li>", "\n  ", value)
    return html.unescape(re.sub("<[^>]+>", "", value))


def _write_pdf(path: Path, sections, params, title: str) -> None:
    from matplotlib.backends.backend_pdf import PdfPages  # optional dependency (fastrisk[plot])
    from matplotlib.figure import Figure  # optional dependency (fastrisk[plot])

    with _atomic.atomic_open(path, "wb") as fh, PdfPages(fh, metadata={"Title": title, "Creator": "fastrisk"}) as pdf:
        cover = Figure(figsize=(8.27, 11.69))
        cover.text(0.08, 0.94, title, fontsize=16, weight="bold", va="top")
        lines = [line for k, v in params for line in f"{k}: {_plain(v)}".split("\n")]
        wrapped = [w for line in lines for w in textwrap.wrap(line, 100, subsequent_indent="    ")]
        if len(wrapped) > PDF_COVER_LINES:  # e.g. a directory of hundreds of runs: the HTML lists them all
            more = len(wrapped) - PDF_COVER_LINES + 1
            wrapped = wrapped[:PDF_COVER_LINES - 1] + [f"... {more} more lines (the HTML report lists every file)"]
        wrapped = "\n".join(wrapped)
        cover.text(0.08, 0.90, wrapped, fontsize=7, va="top", family="monospace")
        pdf.savefig(cover)
        for sec in sections:
            for fig, _ in sec.figures:
                fig.suptitle(sec.title, fontsize=9, x=0.01, ha="left")
                pdf.savefig(fig)
            for table in sec.tables:
                for page in _table_pages(table, sec.title):
                    pdf.savefig(page)


# ---------------------------------------------------------------------- public API
def _report_iv(image_format, format, path, significance, heatmap_alpha=None):
    if image_format not in IMAGE_FORMATS:
        raise InputError(f"`image_format` must be 'svg' or 'png', got {image_format!r}")
    if format is None:
        format = "pdf" if Path(path).suffix.lower() == ".pdf" else "html"
    if format not in REPORT_FORMATS:
        raise InputError(f"`format` must be 'html' or 'pdf', got {format!r}")
    if not (isinstance(significance, (int, float)) and 0.0 < significance < 1.0):
        raise InputError(f"`significance` must be a level in (0, 1), got {significance!r}")
    if heatmap_alpha is not None and (isinstance(heatmap_alpha, bool) or not isinstance(heatmap_alpha, (int, float))
                                      or not np.isfinite(heatmap_alpha) or heatmap_alpha < 0):
        raise InputError(f"`heatmap_alpha` must be a finite alpha >= 0, got {heatmap_alpha!r}")
    return format


def build_report(matrix: MatrixLike, baseline: BaselineLike, *, alpha: AlphaLike | None = None,
                 loss_weight: AlphaLike | None = None, value=None, convention: str = "classic",
                 significance: float = 0.05, systems=None, missing: str = "raise", threads: int | None = None,
                 title: str | None = None, provenance: dict | None = None, heatmap_alpha: float | None = None,
                 inference: str = "t", score_bounds=(0.0, 1.0), replicates: int | None = None, rng=None):
    """The report's content without writing it.

    Parameters
    ----------
    matrix, baseline, alpha, loss_weight, value, convention, significance, systems, missing, threads, title, provenance, heatmap_alpha
        As in `write_report`.
    inference, score_bounds, replicates, rng
        As in `write_report`.

    Returns
    -------
    sections : list of Section
        Headings, captions, figures and `Table`s, in page order.
    parameters : list of (str, str)
        The header's (name, HTML value) rows: measure and its definition, systems, topics,
        baseline, highlighted systems and why, α, convention, significance, then ``provenance``.
    title : str
    """

    _report_iv("svg", "html", "report.html", significance, heatmap_alpha)
    matrix, base = resolve_baseline(matrix, baseline, missing=missing)
    kwargs = dict(alpha=alpha, loss_weight=loss_weight, value=value, convention=convention, threads=threads,
                  inference=inference, score_bounds=score_bounds, replicates=replicates, rng=rng)
    res, sections, highlighted = _sections(matrix, base, kwargs=kwargs, systems=systems, significance=significance,
                                           heatmap_alpha=heatmap_alpha)
    title = title or f"Risk-sensitive evaluation against {base.name}"
    params = _params(matrix, res, base.name, provenance, significance)
    params.insert(4, ("highlighted", html.escape(highlighted.split(": ", 1)[1])))
    return sections, params, title


def write_report(path=None, matrix: MatrixLike = None, baseline: BaselineLike = None, *, out=None,
                 format: str | None = None,
                 image_format: str = "svg", alpha: AlphaLike | None = None, loss_weight: AlphaLike | None = None,
                 value=None, convention: str = "classic", significance: float = 0.05, systems=None,
                 missing: str = "raise", threads: int | None = None, title: str | None = None,
                 provenance: dict | None = None, heatmap_alpha: float | None = None, inference: str = "t",
                 score_bounds=(0.0, 1.0), replicates: int | None = None, rng=None) -> Path:
    """Write the risk report of ``matrix`` against ``baseline`` to ``path``.

    URisk/TRisk (Wang, Bennett & Collins-Thompson, SIGIR 2012; Dinçer, Macdonald & Ounis,
    SIGIR 2014), per-topic TR_i/TJ_i, score distributions and the all-baseline heat map
    (Dinçer, Ounis & Macdonald, ECIR 2014), each figure with its table.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write (atomically). Or give it as ``out=``, after the matrix and the
        baseline: ``write_report(matrix, baseline, out="report.html")``.
    matrix : MatrixLike
        Per-topic scores, systems × topics.
    baseline : BaselineLike
        A system name, a file, a mapping topic -> score, a `Baseline`, ``"best"`` or
        ``"mean"`` / ``"median"`` / ``"max"``.
    out : str or os.PathLike, optional
        The file to write, as a keyword (then the first two arguments are the matrix and the
        baseline).
    format : {"html", "pdf"}, optional
        One self-contained HTML page (default unless ``path`` ends in ``.pdf``), or a PDF: a
        parameter page, then each figure and each table on pages of their own.
    image_format : {"svg", "png"}
        Figures of the HTML page as inline SVG (scalable) or base64 PNG (smaller for huge
        matrices).
    alpha, loss_weight, value, convention, missing, threads
        As in `fastrisk.risk`.
    significance : float
        Two-sided level of the critical lines, the flags and the markers (default 0.05).
    systems : sequence of str, optional
        The systems drawn individually; they keep their colours in every figure. Default: a
        spread of the risk distribution, the systems nearest the minimum, quartiles and
        maximum of TRisk at the largest α, near-duplicates (per-topic scores all within
        1e-5) collapsed so no two panels are the same. The report says which and why.
    title : str, optional
        The page's title.
    provenance : dict, optional
        Extra header rows ``{label: text or file_provenance(path)}`` (the CLI records its input
        files and directories there).
    heatmap_alpha : float, optional
        The α of the all-baseline heat map (default: the largest α of the report).
    inference, score_bounds, replicates, rng
        How the p-values and flags test URisk = 0, as in `fastrisk.risk` (default ``"t"``, the
        published TRisk); the report's header names it (and, for ``t`` at α ≥ 2 with fewer than
        100 topics, the level docs/risk-tests.md measured).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    if out is not None:
        if baseline is not None:
            raise InputError("write_report: give the file once, as the first argument or as out=")
        path, matrix, baseline = out, path, matrix
    if path is None or matrix is None or baseline is None:
        raise InputError("write_report needs the file (out=), the matrix and the baseline: "
                         "write_report(matrix, baseline, out='report.html')")
    require("matplotlib", what="a report")
    format = _report_iv(image_format, format, path, significance, heatmap_alpha)
    sections, params, title = build_report(matrix, baseline, alpha=alpha, loss_weight=loss_weight, value=value,
                                           convention=convention, significance=significance, systems=systems,
                                           missing=missing, threads=threads, title=title, provenance=provenance,
                                           heatmap_alpha=heatmap_alpha, inference=inference, score_bounds=score_bounds,
                                           replicates=replicates, rng=rng)
    path = Path(path)
    if format == "pdf":
        _write_pdf(path, sections, params, title)
    else:
        _atomic.write_text(path, render_html(sections, params, title=title, image_format=image_format))
    return path
