"""TREC qrels files (``topic iteration docid grade``) to `Qrels`: the usual file (each topic's
lines together, no document twice) through a fast path, any other through the general one,
which reports the first fault by line; in-memory columns through the same checks, by row."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from fastrisk._kernels import parse as _kp
from fastrisk.data.runs.doctable import DocTable
from fastrisk.data.runs.fields import RowFaults, _codes, _Faults, _Fields, _strings, scan
from fastrisk.data.runs.model import Qrels, topic_order
from fastrisk.errors import InputError

#: Judgment grades are stored as int8; anything outside this range is rejected.
GRADE_RANGE = (-128, 127)

_NO_ORDER = np.zeros(0, np.int32)


def _column_message_qrels(found: int) -> str:
    return f"a qrels line has 4 columns (topic iteration docid grade), found {found}"


def read_qrels_file(path) -> Qrels:
    """A qrels file as `Qrels`: the usual file (each topic's lines together, no document
    twice) through `_qrels_fast`, any other through `parse_qrels`."""
    f = scan(path, 4, True)
    n = f.n
    grades = np.zeros(n, np.int64)
    r = int(_kp.parse_small_int(f.data, f.starts, f.ends, 3, n, GRADE_RANGE[0], GRADE_RANGE[1], grades))
    if r < 0 and not f.bad_line and n:
        fast = _qrels_fast(f, grades)
        if fast is not None:
            return fast
    return Qrels.from_rows(*parse_qrels(f), source=str(f.path))


def parse_qrels(path):
    """``(topic names, topic codes, doc names per row, raw grades)`` of a qrels file (or of
    its `scan`).

    Rows are one per (topic, document), in order of first appearance; ``#`` comment lines
    and blank lines are skipped (as trec_eval does).
    """
    f = path if isinstance(path, _Fields) else scan(path, 4, True)
    faults = _Faults(f)
    n = f.n
    grades = np.zeros(n, np.int64)
    r = int(_kp.parse_small_int(f.data, f.starts, f.ends, 3, n, GRADE_RANGE[0], GRADE_RANGE[1], grades))
    if r >= 0:
        tok = f.token(r, 3)
        try:
            int(tok)
            msg = (f"grade {tok} is outside the supported range {GRADE_RANGE[0]}..{GRADE_RANGE[1]}")
        except ValueError:
            msg = f"grade {tok!r} is not an integer"
        faults.add(r, msg)
        n = r  # later records are not parsed
    topic, topic_dict = _codes(f.column(0)[:n] if n < f.n else f.column(0))
    doc, doc_dict = _codes(f.column(2)[:n] if n < f.n else f.column(2))
    return _qrels_rows(topic, topic_dict, doc, doc_dict, grades[:n], faults,
                       lambda r: (f.token(r, 0), f.token(r, 2)), str(f.path), "qrels file")


def _qrels_fast(f: _Fields, grades: np.ndarray) -> Qrels | None:
    """The `Qrels` of a clean file whose topics come in blocks: the blocks found by
    comparing each topic with the line before, the documents interned per topic (a repeat
    sends the file to the general path, which reports it or keeps the first row), the names
    gathered once. None when the file is not of that kind."""
    n = f.n
    bounds = np.empty(n + 1, np.int64)
    k = int(_kp.field_runs(f.data, f.starts, f.ends, 0, n, bounds))
    bounds[k] = n
    bounds = bounds[:k + 1]
    names = [f.token(int(b), 0) for b in bounds[:-1]]
    if len(set(names)) != k:
        return None
    starts = np.ascontiguousarray(f.starts[:n, 2:3])
    ends = np.ascontiguousarray(f.ends[:n, 2:3])
    hashes = np.empty(n, np.uint64)
    _kp.hash_fields(f.data, starts, ends, hashes)
    lengths = np.diff(bounds)
    nbytes = int((ends - starts).sum())
    _, bad = DocTable(n, nbytes).intern(f.data, starts, ends, hashes, _NO_ORDER, names, np.arange(k), lengths, nbytes)
    if bad >= 0:
        return None
    topics = topic_order(names)
    if topics != names:  # blocks in topic order
        at = {t: i for i, t in enumerate(names)}
        order = np.concatenate([np.arange(bounds[at[t]], bounds[at[t] + 1]) for t in topics])
        starts, ends, grades, lengths = starts[order], ends[order], grades[order], lengths[[at[t] for t in topics]]
    offsets = np.zeros(k + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    raw = grades[:n]
    return Qrels(tuple(topics), offsets, _strings(f.data, starts, ends, 0, n), np.maximum(raw, 0).astype(np.int8),
                 raw, str(f.path))


def _qrels_rows(topic, topic_dict, doc, doc_dict, grades, faults, names, label, what):
    """One row per (topic, document) in order of first appearance; conflicting grades are
    reported through ``faults`` (``names(r)`` gives record ``r``'s topic and document)."""
    n = len(topic)
    key = topic.astype(np.int64) * max(len(doc_dict), 1) + doc
    order = np.argsort(key, kind="stable")
    ks = key[order]
    same = np.r_[False, ks[1:] == ks[:-1]] if n else np.zeros(0, bool)
    first_of = np.maximum.accumulate(np.where(same, 0, np.arange(n))) if n else np.zeros(0, np.int64)
    head = order[first_of]
    conflict = same & (grades[order] != grades[head])
    if conflict.any():
        rows = order[conflict]
        i = int(np.argmin(rows))
        r = int(rows[i])
        prev = int(grades[head[conflict][i]])
        t, d = names(r)
        faults.add(r, f"document {d!r} judged twice for topic {t} with different grades ({prev} and {int(grades[r])})")
    faults.raise_first(_column_message_qrels)
    if n == 0:
        raise InputError(f"{label}: {what} is empty")
    keep = np.sort(order[~same])  # first appearance of each (topic, doc), in record order
    return topic_dict, topic[keep], doc_dict.take(pa.array(doc[keep])), grades[keep]


def qrels_from_columns(label, topics: pa.Array, docs: pa.Array, grades: np.ndarray):
    """`parse_qrels`' result from in-memory columns (same validation, by row)."""
    faults = RowFaults(label)
    grades = np.asarray(grades)
    if grades.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(grades) | (grades != np.round(grades)))
        if bad.size:
            faults.add(int(bad[0]), f"grade {grades[bad[0]]!r} is not an integer")
    elif grades.dtype.kind not in "iub":
        raise InputError(f"{label}: grades must be integers, got dtype {grades.dtype}")
    n = len(grades)
    bad = np.flatnonzero((grades < GRADE_RANGE[0]) | (grades > GRADE_RANGE[1]))
    if bad.size:
        faults.add(int(bad[0]), f"grade {grades[bad[0]]} is outside the supported range "
                                f"{GRADE_RANGE[0]}..{GRADE_RANGE[1]}")
    faults.raise_first()
    grades = np.nan_to_num(grades).astype(np.int64)
    topic, topic_dict = _codes(topics)
    doc, doc_dict = _codes(docs)
    return _qrels_rows(topic, topic_dict, doc, doc_dict, grades[:n], faults,
                       lambda r: (topics[r].as_py(), docs[r].as_py()), label, "qrels")
