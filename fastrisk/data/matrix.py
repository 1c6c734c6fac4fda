"""ScoreMatrix: systems x topics scores in one contiguous, Arrow-backed float64 buffer.

The Arrow form is a table with a ``system`` string column and a ``scores`` column of type
``fixed_size_list<float64>[c]``; topic ids and the measure name live in the schema metadata.
The list's child buffer *is* the matrix: ``values`` is a read-only ``(S, c)`` NumPy view of
it, so kernels, Parquet and Arrow IPC all see the same bytes without copying.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import re
from collections.abc import Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fastrisk._runtime.extras import require
from fastrisk.errors import InputError

MISSING_POLICIES = ("raise", "drop", "zero")
#: Column names recognised in long-form tables when the defaults are not present.
ALIASES = {
    "system": ("system", "run", "run_id", "runid", "system_id", "tag", "name"),  # name: PyTerrier's column
    "topic": ("topic", "qid", "query_id", "query", "topic_id"),
    "score": ("score", "value"),
}
_META_TOPICS = b"fastrisk.topics"
_META_MEASURE = b"fastrisk.measure"


def label(value) -> str:
    """A system or topic label: ``str(value)`` without surrounding whitespace, so that
    ``" A"`` and ``"A"`` (a space after a comma, a padded column) are one label."""
    return str(value).strip()


def _labels(values: Iterable, what: str) -> tuple[str, ...]:
    labels = tuple(label(v) for v in values)
    seen: set[str] = set()
    for text in labels:
        if text in seen:
            raise InputError(f"duplicate {what} {text!r} (labels are compared without surrounding whitespace)")
        if not text:
            raise InputError(f"empty {what} label")
        seen.add(text)
    return labels


def _blank(value) -> bool:
    """A missing label: None, a float NaN (a null read by pandas) or only whitespace."""
    return value is None or (isinstance(value, float) and math.isnan(value)) or not label(value)


@functools.lru_cache(maxsize=32)
def _positions(n: int) -> tuple[str, ...]:
    """Labels "0" .. "n-1" of a bare array's rows or columns."""
    return tuple(str(i) for i in range(n))


@functools.lru_cache(maxsize=32)
def _topics_json(topics: tuple[str, ...]) -> bytes:
    """The topic labels as stored in the Arrow metadata (cached: simulation loops repeat them)."""
    return json.dumps(list(topics)).encode()


_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def natural_key(text: str):
    """Canonical topic order: ids that are decimal numbers in numeric order ("2" < "10"; ties,
    e.g. "010" and "10", by text), then every other id (``nan``, ``inf``, ``q7``) by text."""
    if _NUMBER.fullmatch(text):
        return (0, float(text), text)
    return (1, 0.0, text)


def check_missing_policy(missing: str) -> str:
    if missing not in MISSING_POLICIES:
        raise InputError(f"`missing` must be one of {', '.join(MISSING_POLICIES)}; got {missing!r}")
    return missing


def _score_array(values) -> np.ndarray:
    """``values`` as a fresh C-contiguous float64 (S, c) array, or a clear error."""
    try:
        arr = np.array(values, dtype=np.float64, order="C", copy=True)
    except (TypeError, ValueError) as exc:
        raise InputError(f"scores must be numeric: {exc}") from None
    if arr.ndim != 2:
        raise InputError(f"scores must be a 2-D (systems x topics) array, got {arr.ndim}-D")
    return arr


def _check_finite(values: np.ndarray, systems, topics, source: str | None) -> None:
    bad = ~np.isfinite(values)
    if bad.any():
        k, i = (int(j) for j in np.argwhere(bad)[0])
        where = f" in {source}" if source else ""
        raise InputError(
            f"score of system {systems[k]!r} on topic {topics[i]!r} is {values[k, i]}{where}; "
            f"scores must be finite ({int(bad.sum())} non-finite cell(s) in all)"
        )


class ScoreMatrix:
    """Per-topic effectiveness scores of ``S`` systems over ``c`` topics (higher is better).

    ``ScoreMatrix(values, systems, topics, measure=None)`` takes an ``(S, c)`` array (rows are
    systems). Every score must be finite; labels must be unique. The scores live in one
    Arrow buffer (a ``fixed_size_list<double>`` column) shared zero-copy with ``values``.

    Parameters
    ----------
    values : array_like
        ``(S, c)`` scores, rows are systems.
    systems, topics : sequence of str
        Unique labels of the rows and columns.
    measure : str, optional
        What the scores measure (e.g. ``"ERR@20"``); reports print its definition.

    Attributes
    ----------
    values : (S, c) float64 ndarray
        The scores (read-only view of the Arrow buffer).
    systems, topics : tuple of str
        Row and column labels.
    measure : str or None
        The measure's name.

    References
    ----------
    Voorhees, E. M. & Harman, D. K. (eds.) (2005). TREC: Experiment and Evaluation in Information Retrieval. MIT
    Press.

    MacAvaney, S., Macdonald, C. & Ounis, I. (2022). Streamlining evaluation with ir-measures. ECIR 2022.

    Examples
    --------
    >>> import fastrisk
    >>> m = fastrisk.ScoreMatrix([[0.5, 0.2, 0.9], [0.4, 0.3, 0.7]], ['bm25', 'rm3'], ['401', '402', '403'], 'AP')
    >>> m
    ScoreMatrix(2 systems x 3 topics, measure='AP')
    >>> m.scores_of('rm3').tolist()
    [0.4, 0.3, 0.7]
    """

    __slots__ = ("_table", "_values", "systems", "topics", "measure")

    def __init__(self, values, systems: Sequence, topics: Sequence, measure: str | None = None,
                 *, source: str | None = None):
        arr = _score_array(values)
        self._build(arr, _labels(systems, "system"), _labels(topics, "topic"), measure, source)

    @classmethod
    def from_array(cls, values, measure: str | None = None) -> ScoreMatrix:
        """An ``(S, c)`` array with systems and topics named by position (``"0"``, ``"1"``, ...):
        the cheap form for the many small matrices of a simulation loop.

        References
        ----------
        Voorhees, E. M. & Harman, D. K. (eds.) (2005). TREC: Experiment and Evaluation in Information
        Retrieval. MIT Press.

        Examples
        --------
        >>> import fastrisk
        >>> import numpy as np
        >>> m = fastrisk.ScoreMatrix.from_array(np.array([[0.5, 0.2, 0.9], [0.4, 0.3, 0.7]]), measure='AP')
        >>> m.systems, m.topics
        (('0', '1'), ('0', '1', '2'))
        """
        arr = _score_array(values)
        self = cls.__new__(cls)
        self._build(arr, _positions(arr.shape[0]), _positions(arr.shape[1]), measure, None)
        return self

    def _build(self, arr: np.ndarray, systems: tuple, topics: tuple, measure, source) -> None:
        """Check the labels against ``arr`` (a fresh C-contiguous float64 copy) and store both as Arrow."""
        if arr.shape != (len(systems), len(topics)):
            raise InputError(
                f"scores have shape {arr.shape} but there are {len(systems)} systems and {len(topics)} topics"
            )
        if arr.size == 0:
            raise InputError("empty score matrix: need at least one system and one topic")
        _check_finite(arr, systems, topics, source)
        scores = pa.FixedSizeListArray.from_arrays(pa.array(arr.reshape(-1)), len(topics))
        meta = {_META_TOPICS: _topics_json(topics)}
        if measure is not None:
            meta[_META_MEASURE] = str(measure).encode()
        table = pa.table({"system": pa.array(systems, pa.string()), "scores": scores}).replace_schema_metadata(meta)
        self._set(table, systems, topics, measure)

    def _set(self, table: pa.Table, systems, topics, measure) -> None:
        if table.column("scores").num_chunks != 1:
            table = table.combine_chunks()
        self._table = table
        self.systems = systems
        self.topics = topics
        self.measure = measure
        chunk = table.column("scores").chunk(0)
        flat = chunk.values.to_numpy(zero_copy_only=True)
        start = chunk.offset * len(topics)
        view = flat[start:start + len(systems) * len(topics)].reshape(len(systems), len(topics))
        view.flags.writeable = False
        self._values = view

    # ------------------------------------------------------------------ basics
    @property
    def values(self) -> np.ndarray:
        """The ``(S, c)`` float64 scores, C-contiguous and read-only (a view of the Arrow buffer)."""
        return self._values

    @property
    def n_systems(self) -> int:
        return len(self.systems)

    @property
    def n_topics(self) -> int:
        return len(self.topics)

    @property
    def shape(self) -> tuple[int, int]:
        return self._values.shape

    def __repr__(self) -> str:
        measure = f", measure={self.measure!r}" if self.measure else ""
        return f"ScoreMatrix({self.n_systems} systems x {self.n_topics} topics{measure})"

    def __eq__(self, other) -> bool:
        if not isinstance(other, ScoreMatrix):
            return NotImplemented
        return (self.systems == other.systems and self.topics == other.topics
                and self.measure == other.measure and np.array_equal(self._values, other._values))

    __hash__ = None

    def system_index(self, name: str) -> int:
        """Row of system ``name``, or of the one system whose name equals it but for case;
        InputError naming the known systems (and the closest names) if absent."""
        k = find_name(self.systems, name)
        if k is None:
            known = ", ".join(self.systems[:10]) + (", ..." if self.n_systems > 10 else "")
            raise InputError(f"unknown system {name!r}{did_you_mean(name, self.systems)}; the matrix has: {known}")
        return k

    def scores_of(self, name: str) -> np.ndarray:
        """Per-topic scores of one system (a read-only view)."""
        return self._values[self.system_index(name)]

    def select(self, systems: Sequence[str] | None = None, topics: Sequence[str] | None = None) -> "ScoreMatrix":
        """A new matrix with the given systems and/or topics, in the given order."""
        rows = slice(None) if systems is None else [self.system_index(s) for s in systems]
        if topics is None:
            cols = slice(None)
        else:
            index = {t: j for j, t in enumerate(self.topics)}
            missing = [str(t) for t in topics if str(t) not in index]
            if missing:
                raise InputError(f"unknown topic(s) {', '.join(map(repr, missing[:10]))}")
            cols = [index[str(t)] for t in topics]
        new_systems = self.systems if systems is None else [self.systems[k] for k in rows]
        new_topics = self.topics if topics is None else [str(t) for t in topics]
        return ScoreMatrix(self._values[rows][:, cols], new_systems, new_topics, self.measure)

    def with_system(self, name: str, scores) -> "ScoreMatrix":
        """A new matrix with one more system (``scores`` in this matrix's topic order)."""
        row = np.asarray(scores, dtype=np.float64).reshape(1, -1)
        if row.shape[1] != self.n_topics:
            raise InputError(f"system {name!r} has {row.shape[1]} scores but the matrix has {self.n_topics} topics")
        return ScoreMatrix(np.vstack([self._values, row]), self.systems + (str(name),), self.topics, self.measure)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_long(cls, systems, topics, scores, *, measure=None, missing="raise",
                  source: str | None = None, lines=None) -> "ScoreMatrix":
        """Pivot long-form triples (system, topic, score) into a matrix.

        Systems keep their order of first appearance; topics are sorted naturally.
        ``missing`` says what to do with (system, topic) cells that have no row: ``"raise"``,
        ``"drop"`` the topics any system lacks, or ``"zero"`` (as ``trec_eval -c``).
        ``source`` and ``lines`` (line number of each row) make errors name the file and line.

        References
        ----------
        Voorhees, E. M. & Harman, D. K. (eds.) (2005). TREC: Experiment and Evaluation in Information
        Retrieval. MIT Press.

        Examples
        --------
        >>> import fastrisk
        >>> m = fastrisk.ScoreMatrix.from_long(['bm25', 'bm25', 'rm3', 'rm3'], ['401', '402', '401', '402'], [0.5, 0.2, 0.4, 0.3])
        >>> m
        ScoreMatrix(2 systems x 2 topics)
        >>> m.scores_of('bm25').tolist()
        [0.5, 0.2]
        """
        check_missing_policy(missing)
        sys_labels = np.asarray([label(s) for s in systems], dtype=object)
        top_labels = np.asarray([label(t) for t in topics], dtype=object)
        try:
            vals = np.asarray(scores, dtype=np.float64)
        except (TypeError, ValueError):
            vals = None
        n = len(sys_labels)
        where = f" in {source}" if source else ""

        def at(row: int) -> str:
            if lines is not None:
                return f"{source or 'input'}, line {int(lines[row])}"
            return f"row {row}{where}"

        if vals is None or vals.shape != (n,) or len(top_labels) != n:
            if vals is None:
                for row, v in enumerate(scores):
                    try:
                        float(v)
                    except (TypeError, ValueError):
                        raise InputError(f"non-numeric score {v!r} at {at(row)}") from None
            raise InputError(f"systems, topics and scores must have the same length{where}")
        if n == 0:
            raise InputError(f"no scores{where}: the input is empty")
        for what, raw in (("system", systems), ("topic", topics)):
            for row, v in enumerate(raw):
                if _blank(v):
                    raise InputError(f"empty {what} at {at(row)}")
        bad = np.flatnonzero(~np.isfinite(vals))
        if bad.size:
            row = int(bad[0])
            raise InputError(
                f"score of system {sys_labels[row]!r} on topic {top_labels[row]!r} is {vals[row]} at {at(row)}; "
                "scores must be finite"
            )
        sys_order = list(dict.fromkeys(sys_labels.tolist()))
        top_order = sorted(dict.fromkeys(top_labels.tolist()), key=natural_key)
        s_index = {s: k for k, s in enumerate(sys_order)}
        t_index = {t: i for i, t in enumerate(top_order)}
        si = np.fromiter((s_index[s] for s in sys_labels), np.int64, n)
        ti = np.fromiter((t_index[t] for t in top_labels), np.int64, n)
        c = len(top_order)
        flat = si * c + ti
        order = np.argsort(flat, kind="stable")
        dup = np.flatnonzero(flat[order][1:] == flat[order][:-1])
        if dup.size:
            first, second = int(order[dup[0]]), int(order[dup[0] + 1])
            raise InputError(
                f"duplicate score for system {sys_labels[second]!r} on topic {top_labels[second]!r} "
                f"at {at(second)} (first given at {at(first)})"
            )
        matrix = np.zeros((len(sys_order), c))
        present = np.zeros((len(sys_order), c), dtype=bool)
        matrix.reshape(-1)[flat] = vals
        present.reshape(-1)[flat] = True
        matrix, sys_order, top_order = _apply_missing(matrix, present, sys_order, top_order, missing, source)
        return cls(matrix, sys_order, top_order, measure)

    @classmethod
    def from_arrow(cls, table: pa.Table, *, layout: str = "auto", system: str = "system", topic: str = "topic",
                   score: str = "score", topics=None, measure=None, missing="raise") -> "ScoreMatrix":
        """From an Arrow table in the native layout (zero-copy), long form or wide form.

        Long form: columns ``system``, ``topic``, ``score`` (names configurable). Wide form:
        one float column per system, one row per topic; topic ids from a ``topic`` column, from
        ``topics=``, or implied by row order (``"1".."c"``).

        References
        ----------
        Apache Arrow (2016-). Columnar format specification,
        https://arrow.apache.org/docs/format/Columnar.html.

        Examples
        --------
        >>> import fastrisk
        >>> import pyarrow as pa
        >>> table = pa.table({'system': ['bm25', 'bm25', 'rm3', 'rm3'], 'topic': ['401', '402', '401', '402'], 'score': [0.5, 0.2, 0.4, 0.3]})
        >>> fastrisk.ScoreMatrix.from_arrow(table, measure='AP')
        ScoreMatrix(2 systems x 2 topics, measure='AP')
        """
        if layout not in ("auto", "native", "long", "wide"):
            raise InputError(f"`layout` must be auto, native, long or wide; got {layout!r}")
        names = table.column_names
        meta = table.schema.metadata or {}
        if layout == "native" or (layout == "auto" and _META_TOPICS in meta and "scores" in names):
            return cls._from_native(table, measure)
        cols = long_columns(names, system, topic, score)
        if cols is None and layout != "wide" and "measure" in names \
                and long_columns(names + [system], system, topic, score) is not None:
            raise InputError(f"a per-query table ({', '.join(names)}) needs a column naming the system, e.g. "
                             f"df['run'] = 'BM25' (accepted names: {', '.join(ALIASES['system'])})")
        if layout == "long" or (layout == "auto" and cols is not None):
            if cols is None:
                raise InputError(f"long-form table needs columns {system}, {topic}, {score} (or run/qid/value); "
                                 f"it has {', '.join(names)}")
            system, topic, score = cols
            table, measure = pick_measure(table, measure)
            vals, absent = _float_column(table, score)
            return cls.from_long(table.column(system).to_pylist(), table.column(topic).to_pylist(),
                                 np.where(absent, np.nan, vals), measure=measure, missing=missing)
        return cls.from_wide(table, topic=topic, topics=topics, measure=measure, missing=missing)

    @classmethod
    def _from_native(cls, table: pa.Table, measure=None) -> "ScoreMatrix":
        meta = table.schema.metadata or {}
        topics = tuple(json.loads(meta[_META_TOPICS].decode()))
        measure = measure if measure is not None else (meta[_META_MEASURE].decode() if _META_MEASURE in meta else None)
        col = table.column("scores")
        if not pa.types.is_fixed_size_list(col.type) or col.type.list_size != len(topics) \
                or not pa.types.is_float64(col.type.value_type):
            raise InputError(f"native table's `scores` must be fixed_size_list<double>[{len(topics)}], got {col.type}")
        if col.null_count or (len(col) and col.combine_chunks().values.null_count):
            raise InputError("native table has null scores")
        systems = _labels(table.column("system").to_pylist(), "system")
        self = cls.__new__(cls)
        _check_finite(col.combine_chunks().values.to_numpy(zero_copy_only=False).reshape(len(systems), len(topics)),
                      systems, topics, None)
        if len(systems) == 0 or len(topics) == 0:
            raise InputError("empty score matrix: need at least one system and one topic")
        table = table.select(["system", "scores"])
        self._set(table, systems, topics, measure)
        return self

    @classmethod
    def from_wide(cls, table: pa.Table, *, topic: str = "topic", topics=None, measure=None, missing="raise",
                  source: str | None = None) -> "ScoreMatrix":
        """From a wide table: one column per system, one row per topic (empty cells are missing).

        References
        ----------
        Apache Arrow (2016-). Columnar format specification,
        https://arrow.apache.org/docs/format/Columnar.html.

        Examples
        --------
        >>> import fastrisk
        >>> import pyarrow as pa
        >>> table = pa.table({'topic': ['401', '402'], 'bm25': [0.5, 0.2], 'rm3': [0.4, 0.3]})
        >>> m = fastrisk.ScoreMatrix.from_wide(table)
        >>> m.systems, m.scores_of('rm3').tolist()
        (('bm25', 'rm3'), [0.4, 0.3])
        """
        check_missing_policy(missing)
        names = list(table.column_names)
        where = f" in {source}" if source else ""
        seen: dict[str, int] = {}
        for name in names:
            if label(name) in seen:
                raise InputError(f"duplicate system column {label(name)!r}{where} (columns {seen[label(name)] + 1} "
                                 f"and {names.index(name, seen[label(name)] + 1) + 1}; labels are compared "
                                 "without surrounding whitespace)")
            seen[label(name)] = names.index(name)
        if topic in names:
            if topics is not None:
                raise InputError(f"give topic ids either as a {topic!r} column or as `topics=`, not both")
            raw = table.column(topic).to_pylist()
            for row, t in enumerate(raw):
                if _blank(t):
                    raise InputError(f"empty topic id at {_where(row, source)}")
            topics = [label(t) for t in raw]
            names.remove(topic)
        elif topics is None:
            topics = [str(i + 1) for i in range(table.num_rows)]
        else:
            topics = [str(t) for t in topics]
            if len(topics) != table.num_rows:
                raise InputError(f"{len(topics)} topic ids given for {table.num_rows} rows"
                                 + (f" of {source}" if source else ""))
        if not names:
            raise InputError("wide table has no system columns" + (f" ({source})" if source else ""))
        if table.num_rows == 0:
            raise InputError("wide table has no rows" + (f" ({source})" if source else ""))
        cols = [_float_column(table, n, source=source, topic_labels=topics) for n in names]
        values = np.vstack([v for v, _ in cols])
        present = ~np.vstack([m for _, m in cols])
        if len(set(topics)) != len(topics):
            seen_topics: set[str] = set()
            dup = next(t for t in topics if t in seen_topics or seen_topics.add(t))
            raise InputError(f"duplicate topic {dup!r}" + (f" in {source}" if source else ""))
        values = np.where(present, values, 0.0)
        # canonical topic order, whatever the row order of the file (as from_long)
        order = sorted(range(len(topics)), key=lambda i: natural_key(topics[i]))
        values, present, topics = values[:, order], present[:, order], [topics[i] for i in order]
        values, names, topics = _apply_missing(values, present, [label(n) for n in names], topics, missing, source)
        return cls(values, names, topics, measure, source=source)

    @classmethod
    def from_pandas(cls, df, **kwargs) -> "ScoreMatrix":
        """From a pandas DataFrame in long or wide form (see `from_arrow`). A named
        index that is the topic column (as `to_pandas` writes it) is used as one.

        References
        ----------
        Apache Arrow (2016-). Columnar format specification,
        https://arrow.apache.org/docs/format/Columnar.html.

        Examples
        --------
        >>> import fastrisk
        >>> import pandas as pd
        >>> df = pd.DataFrame({'system': ['bm25', 'bm25', 'rm3', 'rm3'], 'topic': ['401', '402', '401', '402'], 'score': [0.5, 0.2, 0.4, 0.3]})
        >>> fastrisk.ScoreMatrix.from_pandas(df)
        ScoreMatrix(2 systems x 2 topics)
        """
        topic = kwargs.get("topic", "topic")
        names = [n for n in (df.index.names or []) if n is not None]
        if names and (topic in names or any(n in ALIASES["topic"] + ALIASES["system"] for n in names)):
            df = df.reset_index()
        if "measure" in df.columns and df["measure"].dtype == object:  # ir_measures' Measure objects
            df = df.assign(measure=df["measure"].map(str))
        try:
            table = pa.Table.from_pandas(df, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError) as exc:
            raise InputError(f"cannot read the DataFrame ({exc})") from None
        return cls.from_arrow(table, **kwargs)

    @classmethod
    def from_polars(cls, df, **kwargs) -> "ScoreMatrix":
        """From a polars DataFrame in long or wide form (see `from_arrow`).

        References
        ----------
        Apache Arrow (2016-). Columnar format specification,
        https://arrow.apache.org/docs/format/Columnar.html.

        Examples
        --------
        >>> import fastrisk
        >>> import polars as pl
        >>> df = pl.DataFrame({'system': ['bm25', 'bm25', 'rm3', 'rm3'], 'topic': ['401', '402', '401', '402'], 'score': [0.5, 0.2, 0.4, 0.3]})
        >>> fastrisk.ScoreMatrix.from_polars(df)
        ScoreMatrix(2 systems x 2 topics)
        """
        return cls.from_arrow(df.to_arrow(), **kwargs)

    # ------------------------------------------------------------------ export
    def to_arrow(self) -> pa.Table:
        """The native Arrow table (``system``, ``scores: fixed_size_list``), zero-copy."""
        return self._table

    def to_long(self) -> pa.Table:
        """Long form: one row per (system, topic) with columns ``system, topic, score``."""
        S, c = self.shape
        return pa.table({
            "system": pa.array(np.repeat(np.asarray(self.systems, dtype=object), c), pa.string()),
            "topic": pa.array(np.tile(np.asarray(self.topics, dtype=object), S), pa.string()),
            "score": pa.array(self._values.reshape(-1)),
        })

    def to_pandas(self, layout: str = "wide"):
        """A pandas DataFrame: ``wide`` (topics as rows, one column per system) or ``long``."""
        if layout != "wide" and layout != "long":
            raise InputError(f"`layout` must be 'wide' or 'long', got {layout!r}")
        pd = require("pandas", what="to_pandas()")
        if layout == "long":
            return self.to_long().to_pandas()

        return pd.DataFrame(self._values.T, index=pd.Index(self.topics, name="topic"), columns=list(self.systems))


def find_name(names: Sequence[str], name) -> int | None:
    """Position of ``name`` in ``names``: exact (after `label`), else the one name equal to it
    but for case; None if absent or ambiguous."""
    key = label(name)
    try:
        return list(names).index(key)
    except ValueError:
        folded = [k for k, n in enumerate(names) if n.casefold() == key.casefold()]
        return folded[0] if len(folded) == 1 else None


def did_you_mean(name, names, extra: Sequence[str] = ()) -> str:
    """`` (did you mean 'x'?)`` for the names of ``names`` (and ``extra``) closest to ``name``
    (`difflib.get_close_matches`, case-insensitive), or ""."""
    pool = {n.casefold(): n for n in (*extra, *names)}
    close = difflib.get_close_matches(str(name).casefold(), list(pool), n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(repr(pool[c]) for c in close)}?)" if close else ""


def long_columns(names, system: str = "system", topic: str = "topic", score: str = "score"):
    """The (system, topic, score) column names of a long-form table, or None.

    A name left at its default may also be one of its `ALIASES` (``run``, ``qid``,
    ``query_id``, ``value``, ...), as ranx, ir_measures and trec_eval users name them.
    """
    found = []
    for given, default in ((system, "system"), (topic, "topic"), (score, "score")):
        options = ALIASES[default] if given == default else (given,)
        match = next((n for n in options if n in names), None)
        if match is None:
            return None
        found.append(match)
    return tuple(found)


def pick_measure(table: pa.Table, measure, source: str | None = None):
    """Rows of one measure from a long table with a ``measure`` column; (table, measure)."""
    if "measure" not in table.column_names:
        return table, measure

    available = list(dict.fromkeys(table.column("measure").cast(pa.string()).to_pylist()))
    where = f"{source} " if source else ""
    if measure is None:
        if len(available) > 1:
            raise InputError(f"{where}has several measures ({', '.join(map(str, available[:10]))}); "
                             "pick one with `measure`")
        return table, available[0]
    if measure not in available:
        raise InputError(f"{where}has no measure {measure!r}; it has {', '.join(map(str, available[:10]))}")
    return table.filter(pc.equal(table.column("measure").cast(pa.string()), measure)), measure


def _float_column(table: pa.Table, name: str, *, source=None, topic_labels=None, check: bool = True):
    """Column ``name`` as float64 plus its missing mask (nulls and empty cells).

    A present cell that is not a finite number is an error naming the row (or file line).
    """
    col = table.column(name)
    missing = np.asarray(col.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    if pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_null(col.type):
        out = col.cast(pa.float64()).fill_null(0.0).to_numpy(zero_copy_only=False).copy()
        texts = None
    else:
        texts = col.cast(pa.string()).to_pylist()
        out = np.zeros(len(texts))
        for i, text in enumerate(texts):
            if text is None or text.strip() == "":
                missing[i] = True
                continue
            try:
                out[i] = float(text)
            except ValueError:
                raise InputError(f"non-numeric score {text!r} at {_where(i, source)}, column {name!r}"
                                 f"{_topic(topic_labels, i)}") from None
    bad = np.flatnonzero(~np.isfinite(out) & ~missing) if check else np.zeros(0)
    if bad.size:
        i = int(bad[0])
        shown = repr(texts[i]) if texts is not None else str(out[i])
        raise InputError(f"score {shown} of column {name!r}{_topic(topic_labels, i)} at {_where(i, source)} "
                         "is not finite; scores must be finite")
    return out, missing


def _where(row: int, source) -> str:
    return f"{source}, line {row + 2}" if source else f"row {row}"


def _topic(labels, row: int) -> str:
    return f" (topic {labels[row]!r})" if labels is not None else ""


def _apply_missing(values, present, systems, topics, missing, source):
    if present.all():
        return values, list(systems), list(topics)
    where = f" in {source}" if source else ""
    if missing == "raise":
        lacking = np.argwhere(~present)
        examples = "; ".join(f"system {systems[k]!r} lacks topic {topics[i]!r}" for k, i in lacking[:5])
        more = f" (and {len(lacking) - 5} more)" if len(lacking) > 5 else ""
        raise InputError(
            f"missing scores{where}: {examples}{more}. Pass missing='drop' to drop such topics "
            "or missing='zero' to score them 0 (as trec_eval -c)"
        )
    if missing == "zero":
        return np.where(present, values, 0.0), list(systems), list(topics)
    keep = present.all(axis=0)
    if not keep.any():
        raise InputError(f"no topic is scored for every system{where}; nothing is left after missing='drop'")
    return values[:, keep], list(systems), [t for t, k in zip(topics, keep) if k]



def is_frame(obj) -> bool:
    """True for a pandas or polars DataFrame or an Arrow table."""
    if isinstance(obj, pa.Table):
        return True
    module = type(obj).__module__.split(".")[0]
    return module in ("pandas", "polars") and type(obj).__name__ == "DataFrame"


def as_matrix(obj, name: str = "matrix", **kwargs) -> ScoreMatrix:
    """``obj`` as a `ScoreMatrix`: itself, or a pandas/polars DataFrame or Arrow table
    in long or wide form (``kwargs`` as `ScoreMatrix.from_arrow`)."""
    if isinstance(obj, ScoreMatrix):
        return obj
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    if isinstance(obj, pa.Table):
        return ScoreMatrix.from_arrow(obj, **kwargs)
    if is_frame(obj):
        if type(obj).__module__.startswith("pandas"):
            return ScoreMatrix.from_pandas(obj, **kwargs)
        return ScoreMatrix.from_polars(obj, **kwargs)
    if isinstance(obj, np.ndarray) and obj.ndim == 2:
        # A bare S x c array (a simulation's collection): systems and topics named by position.
        return ScoreMatrix.from_array(obj)
    raise InputError(f"`{name}` must be a ScoreMatrix, a 2-D array (systems x topics), a pandas or polars "
                     f"DataFrame or an Arrow table, got {type(obj).__name__}"
                     + (f" of shape {obj.shape}" if isinstance(obj, np.ndarray) else ""))
