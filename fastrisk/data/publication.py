"""Publication tables: a wide system × α layout sorted by score, as LaTeX or Markdown, with
significance markers.

The layout follows what IR papers print (Dinçer, Macdonald & Ounis, SIGIR 2014, Tables 1–2):
one row per system, one column per α (or per baseline), rows sorted by the tabulated value.
As in ranx's ``Report`` (Bassani, ECIR 2022), a superscript marks a cell whose p-value is
below a significance level and the caption (LaTeX) or a note (Markdown) says what it means;
here every system is compared with one baseline, so the marker is one ``*`` per level passed
(``significance=(0.05, 0.01)``: ``*`` for p < 0.05, ``**`` for p < 0.01).

`wide_layout` computes the layout from a result of the one model
(`fastrisk.data.results.Result`); ``Result.to_wide`` / ``to_latex`` / ``to_markdown``
call it. `arrow_to_latex` / `arrow_to_markdown` render any long table as it is
(the CLI's ``--format latex|markdown``).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from fastrisk.errors import InputError

SORTS = ("descending", "ascending", None)
#: LaTeX special characters and their escapes.
_LATEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def format_pvalue(p, digits: int = 4) -> str:
    """A p-value to ``digits`` decimals; below ``10**-digits`` as ``< 0.0001`` (4 digits)."""
    p = float(p)
    if math.isnan(p):
        return "–"
    floor = 10.0 ** -digits
    if p < floor:
        return f"< {floor:.{digits}f}"
    return f"{p:.{digits}f}"


def format_number(v, digits: int = 4, *, significant: bool = False, no: str = "no", infinity: str = "inf",
                  minus: str = "-") -> str:
    """A number as every output of fastrisk writes it (tables, reports, notebook views): a float
    to ``digits`` decimals (``significant``: to ``digits`` significant digits, ``.4g``), NaN as
    ``–``, infinities as ``infinity`` / ``-infinity``; an integer as it is; a boolean as ``yes``
    / ``no``. ``minus`` replaces the minus sign (the report's typographic ``−``)."""
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else no
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    v = float(v)
    if math.isnan(v):
        return "–"
    if math.isinf(v):
        return infinity if v > 0 else minus + infinity
    text = f"{v:.{digits}g}" if significant else f"{v:.{digits}f}"
    return text if minus == "-" else text.replace("-", minus)


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped, and line breaks and other control
    characters as spaces (a blank line inside a ``tabular`` would end it)."""
    return "".join(_LATEX_ESCAPES.get(c, " " if c < " " or c == "\x7f" else c) for c in str(text))


def markdown_escape(text: str) -> str:
    """``text`` safe inside a Markdown table cell: pipes and backslashes escaped, a line break
    as ``<br>`` and other control characters as spaces (a raw newline would end the table)."""
    text = str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r\n", "\n").replace("\r", "\n")
    return "".join("<br>" if c == "\n" else " " if c < " " or c == "\x7f" else c for c in text)


# ---------------------------------------------------------------------- wide layout
@dataclass(frozen=True)
class WideLayout:
    """One value per (row, column) cell with its p-value; rows sorted as asked."""

    value: str
    title: str
    rows: list[str]
    column_dim: str | None
    columns: list[Any]
    cells: np.ndarray  # [row, column]
    pvalues: np.ndarray | None  # [row, column] or None
    levels: tuple[float, ...]

    def marker(self, i: int, j: int) -> int:
        """Number of significance levels the cell's p-value is below."""
        if self.pvalues is None:
            return 0
        p = self.pvalues[i, j]
        return 0 if np.isnan(p) else sum(p < lev for lev in self.levels)


#: How captions name the arrays they tabulate.
DISPLAY_NAMES = {"trisk": "TRisk", "urisk": "URisk", "zrisk": "ZRisk", "georisk": "GeoRisk", "se_jack": "SE_J",
                 "standard_error": "standard error", "pvalue": "p-value"}


def _alias(result, name: str) -> str:
    """The declared array a property such as ``statistic`` returns (itself when declared)."""
    dims = result.array_dims()
    if name in dims:
        return name
    value = getattr(result, name, None)
    for other in dims:
        if other != name and getattr(result, other, None) is value and value is not None:
            return other
    return name


def _array_dims(result, name: str) -> tuple[str, ...]:
    dims = result.array_dims()
    if name in dims:
        return dims[name]
    value = getattr(result, name, None)
    if value is None:
        raise InputError(f"`value`: {type(result).__name__} has no array {name!r}; it has {', '.join(dims)}")
    shape = np.shape(value)
    for other, d in dims.items():  # a property aliasing a declared array (statistic = trisk)
        if other != name and getattr(result, other, None) is not None and np.shape(getattr(result, other)) == shape:
            return d
    raise InputError(f"`value`: cannot tell the dimensions of {name!r} of {type(result).__name__}")


def _levels(result, significance) -> tuple[float, ...]:
    if significance is None:
        significance = getattr(result, "significance", None) or 0.05
    if significance is False:
        return ()
    levels = (significance,) if np.ndim(significance) == 0 else tuple(significance)
    for lev in levels:
        if isinstance(lev, bool) or not isinstance(lev, (int, float, np.floating)) or not 0.0 < float(lev) < 1.0:
            raise InputError(f"`significance` must be a level in (0, 1) or a sequence of them, got {significance!r}")
    return tuple(sorted((float(v) for v in levels), reverse=True))


def _row_labels(result, n: int) -> list[str]:
    systems = [str(s) for s in result.coordinate("system")]
    if "baseline" not in result._coord_columns("system"):
        return systems
    baselines = [str(b) for b in result.coordinate("system", "baseline")]
    if len(baselines) == n and len(set(baselines)) > 1:  # pairs of systems, not one baseline
        return [f"{s} vs {b}" for s, b in zip(systems, baselines)]
    return systems


def _column_labels(result, dim: str, n: int) -> list:
    if dim == "alpha":
        alpha = np.asarray(result.coordinate("alpha"), dtype=float)
        value = getattr(result, "value", None)
        return [value if np.isnan(a) and isinstance(value, str) else float(a) for a in alpha]
    return [str(v) for v in result.coordinate(dim)][:n]


def wide_layout(result, value: str = "statistic", *, at: dict | None = None, significance=None,
                sort: str | None = "descending", sort_by=None) -> WideLayout:
    """Rows = systems, columns = the value's other dim (α, or baselines), from ``result``.

    ``at`` picks one label of extra dims (``{"alpha": 5}`` for an all-baseline table);
    ``significance`` a level or levels for the markers (default: the result's
    ``significance``, else 0.05; False: no markers); ``sort`` orders the rows by the row mean
    of ``value`` (NaN rows last), or by ``sort_by``: one column (its label, e.g. ``0`` for
    α = 0) or a per-system array of the result (e.g. ``"ugain"``, ``"effectiveness"``).
    """
    if sort not in SORTS:
        raise InputError(f"`sort` must be 'descending', 'ascending' or None, got {sort!r}")
    if not isinstance(value, str):
        raise InputError(f"`value` must be the name of an array of the result, got {value!r}")
    dims = _array_dims(result, value)
    if "system" not in dims:
        raise InputError(f"`value`: {value!r} has dims {list(dims)}, without a system axis")
    cells = np.asarray(getattr(result, value), dtype=float)
    pvalues = None
    if "pvalue" in result.array_dims() and getattr(result, "pvalue", None) is not None:
        pvalues = np.asarray(result.pvalue, dtype=float)
        if _array_dims(result, "pvalue") != dims:
            pvalues = None
    at = dict(at or {})
    for dim in list(at):
        if dim not in dims or dim == "system":
            raise InputError(f"`at`: {value!r} has no dimension {dim!r} to pick from; its dims are {list(dims)}")
    keep = []
    for axis, dim in enumerate(dims):
        if dim in at:
            labels = list(result.coordinate(dim))
            idx = _find_label(labels, at[dim], dim)
            cells = np.take(cells, [idx], axis=axis)
            pvalues = None if pvalues is None else np.take(pvalues, [idx], axis=axis)
        else:
            keep.append((axis, dim))
    cells = cells.reshape([cells.shape[a] for a, _ in keep])
    pvalues = None if pvalues is None else pvalues.reshape(cells.shape)
    free = [d for _, d in keep]
    if len(free) > 2:
        others = [d for d in free if d != "system"]
        raise InputError(f"`at`: {value!r} has dims {list(dims)}; pick one label of all but one of "
                         f"{others}, e.g. at={{{others[0]!r}: ...}}")
    col_dim = next((d for d in free if d != "system"), None)
    sys_axis = free.index("system")
    if col_dim is None:
        cells = cells[:, None]
        pvalues = None if pvalues is None else pvalues[:, None]
    elif sys_axis != 0:
        cells = cells.T
        pvalues = None if pvalues is None else pvalues.T
    rows = _row_labels(result, cells.shape[0])
    columns = _column_labels(result, col_dim, cells.shape[1]) if col_dim else [value]
    order = np.arange(cells.shape[0])
    if sort is not None:
        key = _sort_key(result, cells, columns, col_dim, sort_by)
        nan = np.isnan(key)
        order = np.argsort(-key if sort == "descending" else key, kind="stable")
        order = np.concatenate([order[~nan[order]], order[nan[order]]])  # NaN rows last either way
    name = _alias(result, value)
    # a risk result's standard error is the parametric SE_x, beside its jackknife SE_J
    title = "SE_x" if name == "standard_error" and hasattr(result, "se_jack") else DISPLAY_NAMES.get(name, name)
    baseline = getattr(result, "baseline", None)
    if isinstance(baseline, str):
        title += f" of every system against the baseline {baseline}"
    return WideLayout(value=value, title=title, rows=[rows[k] for k in order], column_dim=col_dim, columns=columns,
                      cells=cells[order], pvalues=None if pvalues is None else pvalues[order],
                      levels=_levels(result, significance) if pvalues is not None else ())


def _sort_key(result, cells, columns, col_dim, sort_by) -> np.ndarray:
    """One number per row (system, in the result's order) to sort on."""
    if sort_by is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a row of NaN: mean of empty slice
            return np.nanmean(cells, axis=1)
    dims = result.array_dims()
    if isinstance(sort_by, str) and dims.get(sort_by) == ("system",):
        return np.asarray(getattr(result, sort_by), dtype=float)
    if col_dim is None:
        raise InputError(f"`sort_by` must name a per-system array of the result, got {sort_by!r}")
    j = _find_label(columns, sort_by, col_dim, name="sort_by")
    return cells[:, j]


def _find_label(labels, wanted, dim, *, name="at"):
    for k, lab in enumerate(labels):
        try:
            if lab == wanted or float(lab) == float(wanted):
                return k
        except (TypeError, ValueError):
            continue
    raise InputError(f"`{name}`: no {dim} {wanted!r}; the labels are {', '.join(map(str, labels[:10]))}")


def layout_to_arrow(layout: WideLayout) -> pa.Table:
    """The wide layout as an Arrow table: ``system`` then one column per label (``alpha=5``)."""
    cols: dict[str, Any] = {"system": pa.array(layout.rows, pa.string())}
    for j, lab in enumerate(layout.columns):
        cols[_plain_label(layout, lab)] = pa.array(layout.cells[:, j])
    return pa.table(cols)


def _plain_label(layout: WideLayout, lab) -> str:
    if layout.column_dim == "alpha" and isinstance(lab, float):
        return f"alpha={lab:g}"
    return str(lab)


def _marker_note(layout: WideLayout) -> list[tuple[str, float]]:
    return [("*" * (k + 1), lev) for k, lev in enumerate(layout.levels)] if layout.pvalues is not None else []


def to_markdown(layout: WideLayout, *, digits: int = 4, caption: str | None = None) -> str:
    """A GitHub/MkDocs Markdown table; markers as ``<sup>*</sup>`` and a note below."""
    def head(lab):
        if layout.column_dim == "alpha" and isinstance(lab, float):
            return f"α = {lab:g}"
        return markdown_escape(lab)

    lines = []
    if caption:
        lines += [caption, ""]
    lines.append("| system | " + " | ".join(head(c) for c in layout.columns) + " |")
    lines.append("|:--|" + "--:|" * len(layout.columns))
    for i, row in enumerate(layout.rows):
        cells = []
        for j in range(len(layout.columns)):
            text = format_number(layout.cells[i, j], digits, infinity="∞")
            k = layout.marker(i, j)
            cells.append(text + (f"<sup>{'*' * k}</sup>" if k else ""))
        lines.append(f"| {markdown_escape(row)} | " + " | ".join(cells) + " |")
    notes = _marker_note(layout)
    if notes:
        lines += ["", "; ".join(f"<sup>{m}</sup> p < {lev:g}" for m, lev in notes) + "."]
    return "\n".join(lines) + "\n"


def to_latex(layout: WideLayout, *, digits: int = 4, caption: str | None = None, label: str | None = None,
             environment: bool = True) -> str:
    """A booktabs ``tabular`` (inside a ``table`` environment unless ``environment=False``);
    markers as ``$^{*}$``, explained in the caption."""
    def head(lab):
        if layout.column_dim == "alpha" and isinstance(lab, float):
            return f"$\\alpha = {lab:g}$"
        return latex_escape(lab)

    notes = _marker_note(layout)
    note = "; ".join(f"$^{{{m}}}$: $p < {lev:g}$" for m, lev in notes)
    cap = " ".join(t for t in (caption if caption is not None else f"{latex_escape(layout.title)}.",
                               (note + ".") if note else "") if t)
    body = [f"\\begin{{tabular}}{{l{'r' * len(layout.columns)}}}", "\\toprule",
            "System & " + " & ".join(head(c) for c in layout.columns) + " \\\\", "\\midrule"]
    for i, row in enumerate(layout.rows):
        cells = []
        for j in range(len(layout.columns)):
            text = format_number(layout.cells[i, j], digits)
            k = layout.marker(i, j)
            if text == "–":
                cells.append("--")
            else:  # one math group: a minus sign, then the marker as a superscript
                text = {"inf": "\\infty", "-inf": "-\\infty"}.get(text, text)
                cells.append(f"${text}" + (f"^{{{'*' * k}}}" if k else "") + "$")
        body.append(f"{latex_escape(row)} & " + " & ".join(cells) + " \\\\")
    body += ["\\bottomrule", "\\end{tabular}"]
    if not environment:
        return "\n".join(body) + "\n"
    out = ["\\begin{table}", "\\centering"]
    if cap:
        out.append(f"\\caption{{{cap}}}")
    if label:
        out.append(f"\\label{{{label}}}")
    return "\n".join(out + body + ["\\end{table}"]) + "\n"


# ---------------------------------------------------------------------- any long table (the CLI)
def _arrow_cells(table: pa.Table, digits: int):
    names = table.column_names
    cols = []
    for name in names:
        values = table.column(name).to_pylist()
        if name == "pvalue" or name.endswith("_pvalue"):
            cols.append([("" if v is None else format_pvalue(v, digits)) for v in values])
        else:
            cols.append([("" if v is None else v if isinstance(v, str) else format_number(v, digits))
                         for v in values])
    numeric = [pa.types.is_integer(t) or pa.types.is_floating(t) for t in table.schema.types]
    return names, list(zip(*cols)) if cols else [], numeric


def arrow_to_markdown(table: pa.Table, *, digits: int = 4) -> str:
    """Any Arrow table as a Markdown table (p-values as ``< 0.0001`` below the precision)."""
    names, rows, numeric = _arrow_cells(table, digits)
    lines = ["| " + " | ".join(markdown_escape(n) for n in names) + " |",
             "|" + "".join("--:|" if n else ":--|" for n in numeric)]
    lines += ["| " + " | ".join(markdown_escape(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def arrow_to_latex(table: pa.Table, *, digits: int = 4) -> str:
    """Any Arrow table as a booktabs ``tabular``."""
    names, rows, numeric = _arrow_cells(table, digits)

    def cell(text):
        text = latex_escape(text).replace("–", "--")
        return text.replace("< ", "$<$ ") if text.startswith("< ") else text

    lines = [f"\\begin{{tabular}}{{{''.join('r' if n else 'l' for n in numeric)}}}", "\\toprule",
             " & ".join(latex_escape(n) for n in names) + " \\\\", "\\midrule"]
    lines += [" & ".join(cell(c) for c in row) + " \\\\" for row in rows]
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"
