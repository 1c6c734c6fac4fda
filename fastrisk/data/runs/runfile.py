"""TREC run files (``topic Q0 docid rank score tag``) to runs in rank order: the usual file in
one compiled pass (`fastrisk._kernels.parse.scan_run`, its names interned in a `DocTable`), any
other through the general scan (`fastrisk.data.runs.fields`) that reports the first fault by
line; in-memory columns through the same checks, by row."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fastrisk._kernels import parse as _kp
from fastrisk.data.runs.doctable import DocTable, _string_layout
from fastrisk.data.runs.fields import RowFaults, _codes, _Faults, _first_bad_int, _floats, _strings, scan
from fastrisk.data.textfile import read_head, read_text
from fastrisk.errors import InputError


@dataclass
class ParsedRun:
    path: Path
    tag: str
    topic_dict: pa.Array  # distinct topic ids of the file
    topic: np.ndarray  # int32 index into topic_dict per record
    doc_dict: pa.Array
    doc: np.ndarray  # int32 index into doc_dict per record
    order: np.ndarray  # records in rank order within each topic (empty: file order)


def _column_message_run(found: int) -> str:
    return f"a TREC run line has 6 columns (topic Q0 docid rank score tag), found {found}"


def parse_run(path) -> ParsedRun:
    """Parse one run file (``topic Q0 docid rank score tag``)."""
    f = scan(path, 6, False)
    faults = _Faults(f)
    n = f.n
    r = _first_bad_int(f, 3)
    if r >= 0:
        faults.add(r, f"rank {f.token(r, 3)!r} is not an integer")
    score, r = _floats(f, 4)
    if r >= 0:
        faults.add(r, f"score {f.token(r, 4)!r} is not a number")
        n_ok = r
    else:
        n_ok = n
    nan = np.flatnonzero(np.isnan(score[:n_ok]))
    if nan.size:
        faults.add(int(nan[0]), "score is NaN")
    topic, topic_dict = _codes(f.column(0))
    doc, doc_dict = _codes(f.column(2))
    r = int(_kp.first_repeat_grouped(topic, doc, len(doc_dict)))
    if r == -2:
        key = topic.astype(np.int64) * max(len(doc_dict), 1) + doc
        order = np.argsort(key, kind="stable")
        ks = key[order]
        rep = order[1:][ks[1:] == ks[:-1]]
        r = int(rep.min()) if rep.size else -1
    if r >= 0:
        faults.add(r, f"document {f.token(r, 2)!r} appears twice for topic {f.token(r, 0)}")
    faults.raise_first(_column_message_run)
    if n == 0:
        raise InputError(f"{f.path}: run file is empty")
    tag = f.token(0, 5)
    order = np.empty(n, np.int32)
    if not _kp.rank_order(f.data, f.starts, f.ends, 2, topic, score, len(topic_dict), 64, order):  # by topic, score descending, document name descending
        rank_of = np.empty(len(doc_dict), np.int32)
        rank_of[pc.sort_indices(doc_dict).to_numpy()] = np.arange(len(doc_dict), dtype=np.int32)
        order = np.lexsort((rank_of[doc], score, -topic.astype(np.int64)))[::-1].astype(np.int32)
    if _kp.is_identity(order):
        order = np.zeros(0, np.int32)  # file order is rank order: nothing to keep
    return ParsedRun(f.path, tag, topic_dict, topic, doc_dict, doc, order)


def sniff_run(path) -> None:
    """Raise InputError unless the start of ``path`` reads as a TREC run (UTF-8, six fields
    on the first non-blank line). Reads at most 64 KiB of the (decompressed) file."""
    path = Path(path)
    head = read_head(path, 1 << 16)
    if head is None:  # zstd: not sniffed
        return
    cut = head.rfind(b"\n")
    head = head[:cut] if cut > 0 else head
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {head[exc.start]:#04x})") from None
    for line in text.splitlines():
        fields = line.split()
        if fields:
            if len(fields) != 6:
                raise InputError(f"{path}, line 1: {_column_message_run(len(fields))}")
            return
    raise InputError(f"{path}: run file is empty")


@dataclass
class RankedRun:
    """One run ready to be placed: its records in rank order, topic by topic, as global
    document codes of ``table``; ``topics[seg_topic[k]]`` holds the next ``seg_len[k]`` records."""

    path: Path
    tag: str
    topics: list
    seg_topic: np.ndarray
    seg_len: np.ndarray
    codes: np.ndarray
    table: DocTable


_NO_ORDER = np.zeros(0, np.int32)


def _segments(topic_seq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Runs of equal values in ``topic_seq``: their values and lengths."""
    if len(topic_seq) == 0:
        return np.zeros(0, np.int32), np.zeros(0, np.int64)
    starts = np.flatnonzero(np.r_[True, topic_seq[1:] != topic_seq[:-1]])
    return topic_seq[starts], np.diff(np.r_[starts, len(topic_seq)])


def _scan_run_fast(path, table: DocTable) -> RankedRun | None:
    """The usual run file in one compiled pass (`fastrisk._kernels.parse.scan_run`), or None
    when anything is out of the ordinary (non-ASCII bytes, a fault, a ranking that is not
    in score order): the general `parse_run` then reads it and reports faults by line."""
    text = read_text(path)
    path, data, raw, cap = text.path, text.view, text.data, text.lines
    if not text.ascii:
        return None
    bounds = np.zeros(2, np.int64)
    doc_start = np.empty((cap, 1), np.int64)
    doc_end = np.empty((cap, 1), np.int64)
    doc_hash = np.empty(cap, np.uint64)
    topic = np.empty(cap, np.int32)
    score = np.empty(cap, np.float64)
    slow_start = np.empty((cap, 1), np.int64)
    slow_end = np.empty((cap, 1), np.int64)
    t_start = np.empty(cap, np.int64)
    t_end = np.empty(cap, np.int64)
    t_hash = np.empty(cap, np.uint64)
    n, nt, n_slow, nbytes = (int(x) for x in _kp.scan_run(
        data, bounds, doc_start, doc_end, doc_hash, topic, score, slow_start, slow_end, t_start, t_end, t_hash))
    if n <= 0:
        return None
    topic, score = topic[:n], score[:n]
    if n_slow:  # forms the exact fast path does not take: Arrow's correctly rounded parser
        try:
            values = pc.cast(_strings(data, slow_start, slow_end, 0, n_slow), pa.float64())
        except pa.ArrowInvalid:
            return None
        values = values.to_numpy(zero_copy_only=False)
        if np.isnan(values).any():
            return None
        score[np.isnan(score)] = values
    order = np.empty(n, np.int32)
    if not _kp.rank_order(data, doc_start, doc_end, 0, topic, score, nt, 64, order):
        return None
    seq = _NO_ORDER if _kp.is_identity(order) else order
    topics = [raw[int(t_start[c]):int(t_end[c])].decode("ascii") for c in range(nt)]
    seg_topic, seg_len = _segments(topic if seq is _NO_ORDER else topic[seq])
    codes, bad = table.intern(data, doc_start, doc_end, doc_hash, seq, topics, seg_topic, seg_len, nbytes)
    if bad >= 0:
        return None
    tag = raw[int(bounds[0]):int(bounds[1])].decode("ascii")
    return RankedRun(path, tag, topics, seg_topic, seg_len, codes, table)


def ranked_from_parsed(p: ParsedRun, table: DocTable) -> RankedRun:
    """A `ParsedRun` (the general reader, an in-memory source) interned into ``table``."""
    n = len(p.topic)
    seq = p.order if len(p.order) else np.arange(n, dtype=np.int32)
    offsets, buf = _string_layout(p.doc_dict)
    doc = p.doc[seq]
    starts = offsets[doc].reshape(-1, 1)
    ends = offsets[doc + 1].reshape(-1, 1)
    hashes = np.empty(n, np.uint64)
    _kp.hash_fields(buf, starts, ends, hashes)
    topics = p.topic_dict.to_pylist()
    seg_topic, seg_len = _segments(p.topic[seq])
    codes, _ = table.intern(buf, starts, ends, hashes, _NO_ORDER, topics, seg_topic, seg_len,
                           int((ends - starts).sum()))
    return RankedRun(p.path, p.tag, topics, seg_topic, seg_len, codes, table)


def _read_run(path, table: DocTable) -> RankedRun:
    return _scan_run_fast(path, table) or ranked_from_parsed(parse_run(path), table)


def parse_runs(files, threads=None) -> list[RankedRun]:
    """Read run files in parallel threads (the scanner, the interner and the inflate release
    the GIL), into one shared `DocTable`. A file's faults are raised in file order."""
    table = DocTable(runs=len(files))
    workers = min(len(files), threads or os.cpu_count() or 1)
    if workers <= 1:
        return [_read_run(p, table) for p in files]
    with ThreadPoolExecutor(workers) as ex:
        return list(ex.map(lambda p: _read_run(p, table), files))


def run_from_columns(label, tag, topics: pa.Array, docs: pa.Array, scores: np.ndarray) -> ParsedRun:
    """A `ParsedRun` from in-memory columns (same validation as a file, by row)."""
    faults = RowFaults(label)
    scores = np.asarray(scores, np.float64)
    nan = np.flatnonzero(np.isnan(scores))
    if nan.size:
        faults.add(int(nan[0]), "score is NaN")
    topic, topic_dict = _codes(topics)
    doc, doc_dict = _codes(docs)
    key = topic.astype(np.int64) * max(len(doc_dict), 1) + doc
    order = np.argsort(key, kind="stable")
    ks = key[order]
    rep = order[1:][ks[1:] == ks[:-1]]
    if rep.size:
        r = int(rep.min())
        faults.add(r, f"document {docs[r].as_py()!r} appears twice for topic {topics[r].as_py()}")
    faults.raise_first()
    if len(scores) == 0:
        raise InputError(f"{label}: run is empty")
    rank_of = np.empty(len(doc_dict), np.int32)
    rank_of[pc.sort_indices(doc_dict).to_numpy()] = np.arange(len(doc_dict), dtype=np.int32)
    order = np.lexsort((rank_of[doc], scores, -topic.astype(np.int64)))[::-1].astype(np.int32)
    return ParsedRun(Path(label), str(tag), topic_dict, topic, doc_dict, doc, order)
