"""One result model for every fastrisk result.

A result is a frozen dataclass deriving from `Result`. Each array field declares its
dimensions with `array` (``urisk: np.ndarray = array("alpha", "system")``); computed
arrays (properties) declare theirs in ``_derived``. Axis order is the same everywhere:
parameters first, then systems (and baselines), then topics, the resampled axis last —
``[alpha, system]``, ``[alpha, system, baseline]``, ``[alpha, system, topic]``,
``[alpha, system, replicate]``; a batch of independent collections leads (``[batch, ...]``).

A batch is a dimension, not a class: a function given a stack of K collections returns the
class it returns for one collection, every declared array with a leading ``batch`` axis of
length K (``urisk`` ``[batch, alpha, system]``). `Result.array_dims` on such a result
(`Result.batched`) puts ``batch`` first in every array's dims, so the long form, the sizes
and the publication tables (``at={"batch": k}``) need nothing else; the long form's
``batch`` column numbers the collections from 0.

The labels of a dimension come from the attributes named in ``_coords`` (dim -> {column:
attribute}); a dimension without labels is numbered from 0. `Result.to_arrow` builds
the long form from these declarations alone: one row per cell of the table dims (by default
the dims of the first largest array), one column per coordinate, one column per array whose
dims are an ordered subset of the table dims (broadcast), the ``_constants`` parameters as
constant columns and every scalar parameter in the schema metadata (key ``fastrisk``, JSON).
Nothing else needs to be written by a result class.

Every result class's docstring gets a numpydoc ``Attributes`` section built from the same
declarations when the class is created (`_attributes_section`): one entry per public field and
derived array, its type, its dims and its meaning — the text given to `array` (or `param`, for a
scalar field: ``doc=``), else the one meaning of the name in `GLOSSARY`; a derived array's is the
first paragraph of its property's docstring. So a name means one thing in every result and the
section cannot drift from the fields (``tests/test_api_contract.py`` fails on an entry without
text).
"""

from __future__ import annotations

import functools
import html
import inspect
import json
import math
import re
import textwrap
import warnings
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pyarrow as pa

from fastrisk._runtime.extras import require
from fastrisk.data.publication import format_number, layout_to_arrow, to_latex, to_markdown, wide_layout
from fastrisk.errors import InputError

#: Coordinates of the common dimensions: dim -> {long-form column: attribute of the result}.
COORDS: dict[str, dict[str, str]] = {
    "system": {"system": "systems"},
    "baseline": {"baseline": "baselines"},
    "topic": {"topic": "topics"},
    "alpha": {"alpha": "alpha", "loss_weight": "loss_weight"},
}


class ConfidenceInterval(NamedTuple):
    """Lower and upper confidence limits (arrays of the statistic's shape); unpacks like scipy's.

    References
    ----------
    Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> res = fastrisk.bootstrap(matrix, baseline, replicates=1000, rng=1)
    >>> low, high = res.confidence_interval
    >>> k = res.systems.index('uogTrA44xi')
    >>> round(float(low[0, k]), 3), round(float(high[0, k]), 3)
    (0.012, 0.221)
    """

    low: Any
    high: Any


#: The one meaning of every name shared by results (the ``Attributes`` sections say it; a
#: field's own ``array(doc=...)`` overrides it where a result needs more).
GLOSSARY: dict[str, str] = {
    "systems": "Names of the systems (the labels of the ``system`` dim).",
    "baselines": "Name of the baseline of each column (the ``baseline`` column of the long form).",
    "baseline": "Name of the baseline (a system, or a virtual baseline such as ``mean``).",
    "topics": "Topic identifiers (the labels of the ``topic`` dim).",
    "alpha": "Risk aversion α of each row (NaN for a non-linear value function).",
    "loss_weight": "Weight of the losses, ``1 + alpha``.",
    "given": "Which of ``alpha`` / ``loss_weight`` the caller gave.",
    "value": "Name of the value function of the per-topic difference (None: the per-topic scores as given).",
    "convention": "``classic`` (larger is better) or ``minus`` (Benham et al. 2019: larger is riskier, "
                  "estimates negated).",
    "statistic": "The test statistic whose p-value is ``pvalue`` (scipy's meaning).",
    "pvalue": "p-value of the test of ``statistic``.",
    "urisk": "URisk: the mean per-topic risk-reward score, ``mean(x)`` with ``x = d + alpha min(d, 0)`` "
             "(Wang et al. 2012; the mean difference at alpha = 0).",
    "trisk": "TRisk: ``urisk / SE`` (Dinçer et al. 2014), the paired t statistic.",
    "zrisk": "ZRisk (Dinçer et al. 2016): standardised sum over topics of the system's deviations "
             "from expectation, losses weighted by ``1 + alpha``. No test statistic: it has no p-value.",
    "georisk": "GeoRisk (Dinçer et al. 2016): ``sqrt(effectiveness * Phi(ZRisk / c))``.",
    "effectiveness": "Mean score of each system over the topics.",
    "standard_error": "Standard error of the estimate.",
    "se_jack": "Jackknife standard error of URisk (SE_J).",
    "df": "Degrees of freedom of the t distribution (``c - 1``).",
    "alternative": "The alternative hypothesis: ``two-sided``, ``less`` or ``greater``.",
    "significance": "Significance level of ``at_risk`` / ``rewarding``.",
    "critical_t": "Two-sided critical value of t at ``significance``.",
    "at_risk": "Significantly worse than the baseline at ``significance`` (in either convention).",
    "rewarding": "Significantly better than the baseline at ``significance`` (in either convention).",
    "freward": "FReward (Wang et al. 2012): the mean gain over the baseline, ``sum(max(d, 0)) / c``.",
    "frisk": "FRisk (Wang et al. 2012): the mean loss to the baseline, ``-sum(min(d, 0)) / c`` (>= 0).",
    "replicates": "Number of resampling replicates (``2^c`` for an exact enumeration).",
    "seed": "The seed that reproduces the random numbers: pass it as ``rng=`` to reproduce the result (an integer "
            "``rng`` records itself; None or a Generator the integer drawn from it; None when nothing was random).",
    "exact": "Whether every sign pattern was enumerated (an exact p-value).",
    "bias": "Bias estimate of the statistic.",
    "n_topics": "Number of topics c.",
    "measure": "Name of the evaluation measure.",
    "null_distribution": "The test statistic under the null, per replicate (None unless kept).",
    "pseudo_values": "Jackknife pseudo-values ``c theta - (c - 1) theta_(i)``.",
    "method": "The method used (see the function that made the result).",
    "confidence_interval": "``(low, high)`` confidence limits (a named tuple of arrays, as scipy's).",
    "confidence_level": "Coverage of ``confidence_interval``.",
    "labels": "Labels of the rankings (the ``a`` and ``b`` coordinates).",
    "p": "RBO's persistence p: depth d weighs ``p^(d-1)`` (Webber, Moffat & Zobel, TOIS 2010).",
    "ties": "RBO's treatment of ties (Corsi & Urbano, SIGIR 2024): ``w`` (tied items share the rank), ``a`` (the "
            "expected RBO over random tie-breaking) or ``b`` (corrected for the information lost to ties).",
    "ext": "RBO_EXT: the point estimate extrapolated from the seen prefixes (Webber, Moffat & Zobel, TOIS 2010).",
    "min": "RBO_MIN: the lower bound (the unseen items all disagree).",
    "max": "RBO_MAX: the upper bound (the unseen items all agree), ``min + res``.",
    "res": "RBO_RES: the residual uncertainty ``max - min``.",
    "baseline_system": "Row of the baseline in the matrix (None for a virtual baseline).",
    "test": "The bootstrap test: ``shift`` (replicates shifted to the null) or ``t`` (also studentised).",
}


def array(*dims: str, column: str | None = None, default=MISSING, doc: str | None = None):
    """A dataclass field holding an array with dimensions ``dims`` (long-form column ``column``).

    Parameters
    ----------
    *dims : str
        The array's dimensions, in the one axis order (``"alpha", "system"``).
    column : str, optional
        Its long-form column (default: the field's name).
    default : optional
        Default value (default: none, the field is required).
    doc : str, optional
        What the array holds, for the ``Attributes`` section (default: its `GLOSSARY` entry).

    Returns
    -------
    dataclasses.Field
    """
    meta = {"dims": tuple(dims), "column": column, "doc": doc}
    if default is MISSING:
        return field(metadata=meta)
    return field(default=default, metadata=meta)


def param(default=MISSING, *, doc: str):
    """A dataclass field holding a scalar parameter or labels (no dims), with its text.

    Parameters
    ----------
    default : optional
        Default value (default: none, the field is required).
    doc : str
        What the field holds, for the ``Attributes`` section.

    Returns
    -------
    dataclasses.Field
    """
    meta = {"doc": doc}
    if default is MISSING:
        return field(metadata=meta)
    return field(default=default, metadata=meta)


def _own_fields(cls) -> dict[str, tuple[Any, dict]]:
    """Public fields of ``cls`` at class creation (before `dataclass` runs): those of its
    dataclass bases, then its own annotations; name -> (annotation, field metadata)."""
    out: dict[str, tuple[Any, dict]] = {}
    for base in reversed(cls.__mro__[1:]):
        if "__dataclass_fields__" in base.__dict__:
            out.update((f.name, (f.type, f.metadata)) for f in fields(base))
    for name, ann in cls.__dict__.get("__annotations__", {}).items():
        if "ClassVar" in str(ann):
            continue
        value = cls.__dict__.get(name)
        out[name] = (ann, value.metadata if isinstance(value, Field) else {})
    return {k: v for k, v in out.items() if not k.startswith("_")}


def _type_name(ann) -> str:
    text = ann if isinstance(ann, str) else getattr(ann, "__name__", str(ann))
    return text.replace("np.ndarray", "ndarray")


def _first_paragraph(attribute) -> str | None:
    """The first paragraph of a derived array's property docstring (its ``Attributes`` text)."""
    doc = getattr(attribute, "__doc__", None) if isinstance(attribute, property) or hasattr(attribute, "func") \
        else None
    return " ".join(inspect.cleandoc(doc).split("\n\n", 1)[0].split()) if doc else None


def _attributes_section(cls) -> str:
    """The numpydoc ``Attributes`` section of a result class, from its declarations."""
    lines = ["Attributes", "----------"]
    derived = getattr(cls, "_derived", {})
    entries = [(name, _type_name(ann), meta.get("dims"), meta.get("doc")) for name, (ann, meta) in
               _own_fields(cls).items()]
    entries += [(name, "ndarray", dims, None if name in GLOSSARY else _first_paragraph(getattr(cls, name, None)))
                for name, dims in derived.items() if not name.startswith("_")]
    for name, kind, dims, doc in entries:
        shape = f" ``[{', '.join(dims)}]``" if dims else ""
        lines.append(f"{name} : {kind}{shape}")
        text = doc or GLOSSARY.get(name)
        if text:
            lines.append(textwrap.fill(text, 92, initial_indent="    ", subsequent_indent="    "))
    return "\n".join(lines)


def deprecated_alias(old: str, new: str, since: str = "0.6"):
    """A read-only property ``old`` that returns the attribute ``new`` with a `DeprecationWarning`
    (kept for one release after a field is renamed).

    Parameters
    ----------
    old : str
        The former name.
    new : str
        The attribute it now reads.
    since : str
        The release that renamed it.

    Returns
    -------
    property
    """

    def get(self):
        warnings.warn(f"`{type(self).__name__}.{old}` is deprecated since {since}; use `.{new}`"
                      f"{' (ZRisk has no p-value: it is no test statistic)' if new == 'zrisk' else ''}",
                      DeprecationWarning, stacklevel=2)
        return getattr(self, new)

    get.__doc__ = f"Deprecated alias of ``{new}``."
    return property(get)


def _scalar(value) -> bool:
    return value is None or isinstance(value, (str, bool, int, float, np.integer, np.floating, np.bool_))


def _jsonable(value):
    if isinstance(value, (np.integer, np.bool_)):
        return value.item()
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else str(v)
    return value


class _class_or_instance:
    """A method that receives the class when called on the class and the instance when called
    on an instance (`Result.array_dims`: the declared dims, or a result's own)."""

    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __get__(self, obj, cls=None):
        return functools.partial(self.fn, cls if obj is None else obj)


@functools.cache
def _declared_dims(cls) -> dict[str, tuple[str, ...]]:
    out = {f.name: f.metadata["dims"] for f in fields(cls) if "dims" in f.metadata}
    out.update(cls._derived)
    return out


#: class -> (field names, required names, plain defaults, needs the real __init__, the tuples of
#: names accepted so far): see `Result._trusted`.
_DEFAULTS: dict = {}


def _field_defaults(cls) -> tuple[frozenset, frozenset, dict, bool, set]:
    fs = [f for f in fields(cls) if f.init]
    plain = {f.name: f.default for f in fs if f.default is not MISSING}
    fallback = hasattr(cls, "__post_init__") or any(f.default_factory is not MISSING for f in fs)
    names = frozenset(f.name for f in fs)
    return names, names - plain.keys(), plain, fallback, set()


@dataclass(frozen=True)
class Result:
    """Base of every result: declared arrays, their coordinates, and the long form."""

    #: dim -> {column: attribute}; merged over `COORDS`.
    _coords: ClassVar[dict[str, dict[str, str]]] = {}
    #: computed arrays (properties or cached properties): name -> dims.
    _derived: ClassVar[dict[str, tuple[str, ...]]] = {}
    #: dims of the default long form (None: those of the first largest array).
    _table: ClassVar[tuple[str, ...] | None] = None
    #: parameters repeated as constant columns of the long form.
    _constants: ClassVar[tuple[str, ...]] = ()
    #: the array of the publication tables when none is named (`to_wide`).
    _headline: ClassVar[str] = "statistic"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        doc = cls.__dict__.get("__doc__")
        if doc and not cls.__name__.startswith("_") and not re.search(r"^\s*Attributes\n\s*-{5,}", doc, re.M):
            cls.__doc__ = inspect.cleandoc(doc) + "\n\n" + _attributes_section(cls)

    # ------------------------------------------------------------------ construction
    @classmethod
    def _trusted(cls, **values):
        """The result with these field values, built without the dataclass ``__init__``
        (a frozen one assigns each of its fields through ``object.__setattr__``: microseconds per
        small call). For results whose every field the caller gives with the right type and
        shape, as the kernels guarantee; omitted fields take their defaults, an unknown one is
        refused. Equal to ``cls(**values)``."""
        defaults = _DEFAULTS.get(cls)
        if defaults is None:
            defaults = _DEFAULTS[cls] = _field_defaults(cls)
        names, required, plain, fallback, accepted = defaults
        given = tuple(values)  # a call site passes the same names each time: checked once
        if given not in accepted:
            if fallback or not required <= values.keys() <= names:  # __post_init__, a factory, a missing or wrong name
                return cls(**values)  # (which raises what the constructor raises)
            accepted.add(given)
        obj = object.__new__(cls)
        state = obj.__dict__
        state.update(plain)
        state.update(values)
        return obj

    # ------------------------------------------------------------------ declarations
    @_class_or_instance
    def array_dims(self) -> dict[str, tuple[str, ...]]:
        """Every declared array (fields, then derived) and its dims, in declaration order; on a
        batched result (`batched`) each with ``batch`` first."""
        cls = self if isinstance(self, type) else type(self)
        out = _declared_dims(cls)
        if cls is self:
            return dict(out)
        batched = self._batched_fields()
        if not batched:
            return dict(out)
        derived = cls._derived
        return {name: ("batch", *dims) if name in batched or name in derived else dims for name, dims in out.items()}

    def _batched_fields(self) -> set:
        """The declared array fields holding one more (leading) axis than they declare."""
        out = set()
        for f in fields(self):
            dims = f.metadata.get("dims")
            if dims is not None:
                value = self.__dict__.get(f.name)
                if value is not None and np.ndim(value) == len(dims) + 1:
                    out.add(f.name)
        return out

    @property
    def batched(self) -> bool:
        """Whether the result holds a stack of collections: its per-collection arrays have a
        leading ``batch`` axis beyond the dims they declare (a stack given to the function
        that made it)."""
        return bool(self._batched_fields())

    @classmethod
    def _column_name(cls, name: str) -> str:
        for f in fields(cls):
            if f.name == name and f.metadata.get("column"):
                return f.metadata["column"]
        return name

    @classmethod
    def _coord_columns(cls, dim: str) -> dict[str, str]:
        return {**COORDS, **cls._coords}.get(dim, {})

    def parameters(self) -> dict[str, Any]:
        """The scalar parameters that produced the result (what goes into the metadata)."""
        return {f.name: _jsonable(getattr(self, f.name)) for f in fields(self)
                if "dims" not in f.metadata and not f.name.startswith("_") and _scalar(getattr(self, f.name))}

    def sizes(self) -> dict[str, int]:
        """Length of every dimension of the declared arrays."""
        out: dict[str, int] = {}
        for name, dims in self.array_dims().items():
            value = getattr(self, name)
            if value is None:
                continue
            shape = np.shape(value)
            if not shape:  # a scalar stands for a length-1 array along its dims
                shape = (1,) * len(dims)
            for d, n in zip(dims, shape):
                out.setdefault(d, n)
        return out

    def coordinate(self, dim: str, column: str | None = None) -> np.ndarray:
        """Labels of ``dim`` (the first coordinate column unless ``column`` is given)."""
        cols = self._coord_columns(dim)
        n = self.sizes()[dim]
        if cols:
            col = column or next(iter(cols))
            value = getattr(self, cols[col], None)
            if value is None:  # a parameter that does not apply (e.g. alpha of a plain array)
                return np.full(n, np.nan)
            out = np.asarray(value if not isinstance(value, tuple) else list(value))
            if out.ndim == 0:
                out = np.full(n, out.item())
            return out
        return np.arange(n)

    # ------------------------------------------------------------------ long form
    def _default_table(self) -> tuple[str, ...]:
        if self._table is not None:
            return ("batch", *self._table) if self.batched else self._table
        dims = [d for name, d in self.array_dims().items() if getattr(self, name) is not None]
        return max(dims, key=len) if dims else ()

    def to_arrow(self, dims: tuple[str, ...] | None = None) -> pa.Table:
        """Long form: one row per cell of ``dims`` (default: the result's main table)."""
        dims = tuple(dims) if dims is not None else self._default_table()
        sizes = self.sizes()
        unknown = [d for d in dims if d not in sizes]
        if unknown:
            raise InputError(f"{type(self).__name__} has no dimension {unknown[0]!r}; it has {sorted(sizes)}")
        shape = tuple(sizes[d] for d in dims)
        columns: dict[str, Any] = {}
        for axis, d in enumerate(dims):
            cols = self._coord_columns(d) or {d: None}
            for col in cols:
                labels = self.coordinate(d, col) if cols[col] else np.arange(shape[axis])
                view = [1] * len(dims)
                view[axis] = shape[axis]
                flat = np.broadcast_to(labels.reshape(view), shape).reshape(-1)
                columns[col] = pa.array(flat.astype(object) if labels.dtype.kind in "OUS" else flat,
                                        pa.string() if labels.dtype.kind in "OUS" else None)
        n = int(np.prod(shape)) if shape else 1
        for name in self._constants:
            value = getattr(self, name)
            columns[name] = pa.array([value] * n, pa.string() if isinstance(value, str) else None)
        for name, adims in self.array_dims().items():
            value = getattr(self, name)
            if value is None or not _ordered_subset(adims, dims):
                continue
            value = np.asarray(value)
            view = [sizes[d] if d in adims else 1 for d in dims]
            value = value if value.ndim == 0 else value.reshape(view)  # a scalar broadcasts to every row
            columns[self._column_name(name)] = np.broadcast_to(value, shape).reshape(-1)
        meta = {"fastrisk": json.dumps({"result": type(self).__name__, "dims": list(dims), **self.parameters()})}
        return pa.table(columns).replace_schema_metadata(meta)

    def to_pandas(self, dims: tuple[str, ...] | None = None):
        """The long form of `to_arrow` as a pandas DataFrame."""
        require("pandas", what="to_pandas()")
        return self.to_arrow(dims).to_pandas()

    # ------------------------------------------------------------------ publication tables
    def to_wide(self, value: str | None = None, *, at: dict | None = None, sort: str | None = "descending",
                sort_by=None) -> pa.Table:
        """Wide layout: one row per system (column ``system``), one column per α (``alpha=5``)
        or per label of the value's other dim, rows sorted by their mean ``value``.

        Parameters
        ----------
        value : str, optional
            The array to tabulate (default: the result's headline array, ``statistic``, or
            ``zrisk`` for ZRisk results).
        at : dict, optional
            One label per extra dim, e.g. ``{"alpha": 5}`` for the system × baseline table of
            `fastrisk.baseline_table`.
        sort : {"descending", "ascending", None}
            Order of the rows by their mean ``value`` (NaN rows last); None keeps the result's.
        sort_by : optional
            Sort on one column instead (its label, e.g. ``0`` for α = 0) or on a per-system
            array of the result (e.g. ``"ugain"``, the mean difference from the baseline).

        Returns
        -------
        pyarrow.Table
        """

        return layout_to_arrow(wide_layout(self, value or self._headline, at=at, significance=False, sort=sort, sort_by=sort_by))

    def to_markdown(self, value: str | None = None, *, digits: int = 4, significance=None, at: dict | None = None,
                    sort: str | None = "descending", sort_by=None, caption: str | None = None) -> str:
        """The wide layout of `to_wide` as a Markdown table with significance markers.

        A cell whose ``pvalue`` is below a level gets ``<sup>*</sup>`` (one ``*`` per level it
        is below) and a note under the table says what the markers mean, as ranx's report does.

        Parameters
        ----------
        value, at, sort, sort_by
            As in `to_wide`.
        digits : int
            Decimals of every number.
        significance : float or sequence of float or False, optional
            Level(s) of the markers; default the result's ``significance``, else 0.05. False:
            no markers. Results without a ``pvalue`` of the value's dims have no markers.
        caption : str, optional
            A line printed above the table; default: what the cells are and how the rows are
            sorted, e.g. "TRisk of every system against the baseline run24, one column per α;
            rows sorted by the mean of their cells, descending." ("" for none).

        Returns
        -------
        str
        """

        _digits_iv(digits)
        layout = wide_layout(self, value or self._headline, at=at, significance=significance, sort=sort,
                             sort_by=sort_by)
        return to_markdown(layout, digits=digits,
                           caption=_default_caption(layout, sort, sort_by) if caption is None else caption)

    def to_latex(self, value: str | None = None, *, digits: int = 4, significance=None, at: dict | None = None,
                 sort: str | None = "descending", sort_by=None, caption: str | None = None,
                 label: str | None = None, environment: bool = True) -> str:
        """The wide layout of `to_wide` as a LaTeX (booktabs) table with significance markers.

        Markers are ``$^{*}$`` (one ``*`` per level the p-value is below), explained in the
        caption. Needs ``\\usepackage{booktabs}``.

        Parameters
        ----------
        value, at, sort, sort_by, digits, significance
            As in `to_markdown`.
        caption : str, optional
            LaTeX caption text (default: what the table holds); the marker legend is appended.
        label : str, optional
            ``\\label`` of the table.
        environment : bool
            Wrap the ``tabular`` in a ``table`` float with caption and label (default True).

        Returns
        -------
        str
        """

        _digits_iv(digits)
        return to_latex(wide_layout(self, value or self._headline, at=at, significance=significance, sort=sort, sort_by=sort_by),
                        digits=digits, caption=caption, label=label, environment=environment)

    # ------------------------------------------------------------------ display
    def _summary(self) -> str:
        sizes = ", ".join(f"{d}={n}" for d, n in self.sizes().items())
        params = ", ".join(f"{k}={v!r}" for k, v in self.parameters().items())
        return f"{type(self).__name__}({sizes}{'; ' if params else ''}{params})"

    def __repr__(self) -> str:
        arrays = ", ".join(f"{name}[{','.join(d)}]" for name, d in self.array_dims().items()
                           if getattr(self, name) is not None)
        return f"{self._summary()}\n  arrays: {arrays}"

    def _repr_html_(self, rows: int = 10) -> str:
        return html_table(self.to_arrow(), self._summary(), rows)


def html_table(table: pa.Table, summary: str, rows: int = 10) -> str:
    """A notebook's view of a long form: the summary line and the first ``rows`` rows."""
    head = table.slice(0, rows).to_pylist()
    cells = "".join(
        "<tr>" + "".join(f"<td>{_fmt(v)}</td>" for v in row.values()) + "</tr>" for row in head)
    header = "".join(f"<th>{html.escape(c)}</th>" for c in table.column_names)
    more = f"<p>{table.num_rows - rows} more rows</p>" if table.num_rows > rows else ""
    return (f"<p><code>{html.escape(summary)}</code></p>"
            f"<table><thead><tr>{header}</tr></thead><tbody>{cells}</tbody></table>{more}")


def _digits_iv(digits) -> None:
    if isinstance(digits, bool) or not isinstance(digits, (int, np.integer)) or not 0 <= digits <= 15:
        raise InputError(f"`digits` must be an integer in [0, 15], got {digits!r}")


def _fmt(value) -> str:
    if isinstance(value, float):
        return format_number(value, 4, significant=True)
    return html.escape(str(value))


def _ordered_subset(sub: tuple[str, ...], full: tuple[str, ...]) -> bool:
    it = iter(full)
    return all(d in it for d in sub)


def _default_caption(layout, sort, sort_by) -> str:
    """`Result.to_markdown`'s line above the table: what a cell is, what the columns are, and
    the rows' order (`fastrisk.data.publication.wide_layout`'s ``sort`` and ``sort_by``)."""
    columns = {"alpha": "α"}.get(layout.column_dim, layout.column_dim)
    what = f"{layout.title}, one column per {columns}" if columns else layout.title
    if sort is None:
        order = "rows in the result's order"
    else:
        key = "the mean of their cells" if sort_by is None else (
            f"{sort_by}" if isinstance(sort_by, str) and not any(str(c) == sort_by for c in layout.columns)
            else f"the column {columns} = {sort_by}")
        order = f"rows sorted by {key}, {sort} (rows without a value last)"
    return f"{what}; {order}."
