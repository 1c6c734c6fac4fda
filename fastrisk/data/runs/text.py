"""Compiled readers for TREC run and qrels files: bytes -> columns, without a Python loop per line.

A file is read whole, decompressed (gzip, bz2, xz or zstd, detected from the magic bytes),
stripped of a UTF-8 byte-order mark and checked to be UTF-8; a numba scanner
(`fastrisk._kernels.parse`) finds the fields; string columns become Arrow string arrays,
dictionary-encoded by Arrow; scores are parsed by Arrow's correctly rounded parser. Every
malformed input raises `InputError` naming the file and the line of the
first fault (the same line a line-by-line reader stops at).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import threading
import warnings
import zlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fastrisk._kernels import parse as _kp
from fastrisk._runtime.validation import not_a_regular_file
from fastrisk.data.runs.model import Qrels, RunSet, topic_order
from fastrisk.errors import InputError, RunFileWarning

#: Judgment grades are stored as int8; anything outside this range is rejected.
GRADE_RANGE = (-128, 127)


# ---------------------------------------------------------------------------------------
# bytes


try:  # ISA-L's inflate: about twice zlib's speed, the same bytes (concatenated members too)
    from isal import isal_zlib
    from isal.igzip import decompress as _gunzip_members
except ImportError:  # pragma: no cover - isal is a dependency; zlib when a platform lacks a wheel
    isal_zlib = None
    _gunzip_members = gzip.decompress


def _gunzip(raw: bytes) -> bytes:
    """Inflate a gzip file: one member in one call (the usual file), else member by member."""
    if isal_zlib is not None:
        d = isal_zlib.decompressobj(31)
        out = d.decompress(raw)
        if d.eof and not d.unused_data.strip(b"\x00"):
            return out
    return _gunzip_members(raw)


def _decompress(path: Path, raw: bytes) -> bytes:
    try:
        if raw[:2] == b"\x1f\x8b":
            return _gunzip(raw)
        if raw[:3] == b"BZh":
            return bz2.decompress(raw)
        if raw[:6] == b"\xfd7zXZ\x00":
            return lzma.decompress(raw)
        if raw[:4] == b"\x28\xb5\x2f\xfd":
            with pa.CompressedInputStream(pa.BufferReader(raw), "zstd") as fh:
                return fh.read()
    except (EOFError, OSError, zlib.error, lzma.LZMAError, ValueError, pa.ArrowException) as exc:
        raise InputError(f"{path}: cannot decompress ({type(exc).__name__}: {exc}); "
                         "the file is truncated or corrupt") from None
    return raw


def line_of(data: bytes, pos: int) -> int:
    """1-based line number of byte ``pos`` (line breaks ``\\n``, ``\\r\\n``, lone ``\\r``)."""
    head = data[:pos]
    return head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n") + 1


def read_text_bytes(path) -> tuple[Path, np.ndarray, bytes]:
    """Decompressed, BOM-free, UTF-8-checked bytes of ``path`` (and a uint8 view of them)."""
    return _read_text(path)[:3]


def _read_text(path) -> tuple[Path, np.ndarray, bytes, int, bool]:
    """`read_text_bytes`, an upper bound on the number of lines and whether every byte is
    ASCII, in one pass."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    data = _decompress(path, raw)
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    view = np.frombuffer(data, dtype=np.uint8)
    ascii, lines = _kp.ascii_lines(view)
    if not ascii:  # ASCII (the usual case) is UTF-8; check the rest
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}, line {line_of(data, exc.start)}: not UTF-8 text "
                             f"(byte {data[exc.start]:#04x})") from None
    return path, view, data, int(lines), bool(ascii)


def _strings(data: np.ndarray, starts: np.ndarray, ends: np.ndarray, col: int, n: int) -> pa.StringArray:
    """Field ``col`` of records ``0..n-1`` (byte ranges ``starts``/``ends``) as an Arrow string array."""
    total = int(_kp.field_bytes(starts, ends, col, n))
    large = total >= 2**31 - 1
    offsets = np.empty(n + 1, np.int64 if large else np.int32)
    out = np.empty(max(total, 1), np.uint8)
    _kp.gather(data, starts, ends, col, n, offsets, out)
    typ = pa.large_string() if large else pa.string()
    return pa.Array.from_buffers(typ, n, [None, pa.py_buffer(offsets), pa.py_buffer(out)])


@dataclass
class _Fields:
    path: Path
    data: np.ndarray
    raw: bytes
    starts: np.ndarray
    ends: np.ndarray
    lines: np.ndarray
    n: int
    bad_line: int  # first line with a wrong number of fields (0 = none)
    bad_count: int

    def column(self, col: int) -> pa.StringArray:
        return _strings(self.data, self.starts, self.ends, col, self.n)

    def token(self, r: int, col: int) -> str:
        return self.raw[int(self.starts[r, col]):int(self.ends[r, col])].decode("utf-8")


def scan(path, ncols: int, comments: bool) -> _Fields:
    path, data, raw, cap, _ = _read_text(path)
    starts = np.empty((cap, ncols), np.int64)
    ends = np.empty((cap, ncols), np.int64)
    lines = np.empty(cap, np.int64)
    n, bad_line, bad_count = _kp.tokenize(data, ncols, comments, starts, ends, lines)
    return _Fields(path, data, raw, starts, ends, lines, int(n), int(bad_line), int(bad_count))


class _Faults:
    """The first fault of a file by line (ties: the order checks are added)."""

    def __init__(self, fields: _Fields):
        self.fields = fields
        self.best: tuple[int, int, str] | None = None
        self.k = 0
        if fields.bad_line:
            self.add_line(fields.bad_line, None)

    def add_line(self, line: int, message) -> None:
        key = (line, self.k)
        self.k += 1
        if self.best is None or key < self.best[:2]:
            self.best = (line, key[1], message)

    def add(self, record: int, message: str) -> None:
        if record >= 0:
            self.add_line(int(self.fields.lines[record]), message)

    def raise_first(self, column_message) -> None:
        if self.best is None:
            return
        line, _, message = self.best
        if message is None:
            message = column_message(self.fields.bad_count)
        raise InputError(f"{self.fields.path}, line {line}: {message}")


def _first_bad_int(f: _Fields, col: int) -> int:
    """First record whose field is not an integer by Python's ``int()`` (-1 if none)."""
    start = 0
    while start < f.n:
        r = int(_kp.first_bad_integer(f.data, f.starts[start:], f.ends[start:], col, f.n - start))
        if r < 0:
            return -1
        r += start
        try:
            int(f.token(r, col))
        except ValueError:
            return r
        start = r + 1
    return -1


def _floats(f: _Fields, col: int) -> tuple[np.ndarray, int]:
    """Field ``col`` as float64 (Python's ``float()`` semantics) and the first bad record."""
    strings = f.column(col)
    try:
        return pc.cast(strings, pa.float64()).to_numpy(zero_copy_only=False), -1
    except pa.ArrowInvalid:
        pass
    out = np.empty(f.n, np.float64)  # rare path: forms Arrow does not parse (e.g. "1_0")
    for r, s in enumerate(strings.to_pylist()):
        try:
            out[r] = float(s)
        except ValueError:
            return out, r
    return out, -1


def _codes(arr: pa.Array) -> tuple[np.ndarray, pa.Array]:
    enc = pc.dictionary_encode(arr)
    return enc.indices.to_numpy(zero_copy_only=False).astype(np.int32, copy=False), enc.dictionary


# ---------------------------------------------------------------------------------------
# one run file


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
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        if head[:2] == b"\x1f\x8b":
            head = zlib.decompressobj(47).decompress(head, 1 << 16)
        elif head[:3] == b"BZh":
            head = bz2.BZ2Decompressor().decompress(head, 1 << 16)
        elif head[:6] == b"\xfd7zXZ\x00":
            head = lzma.LZMADecompressor().decompress(head, 1 << 16)
    except (OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
        raise InputError(f"{path}: cannot decompress ({exc})") from None
    if head[:4] == b"\x28\xb5\x2f\xfd":
        return
    head = head.removeprefix(b"\xef\xbb\xbf")
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


# ---------------------------------------------------------------------------------------
# the fast path: one pass per file, document names interned in one table shared by the runs


class DocTable:
    """The document names of one read, interned once, by the thread that scans each run
    (`fastrisk._kernels.parse.intern_run`): one open-addressing region per topic (small
    enough to stay in cache while a run's records of that topic go through it) over entries
    shared by all topics, so the codes that come out of the scan are global and no run's
    names are dictionary-encoded again afterwards. A lock serialises the runs' insertions;
    the codes are only an internal key (a RunSet's dense ids follow best rank, whatever
    order the runs were interned in)."""

    def __init__(self, names: int = 1 << 12, nbytes: int = 1 << 16, runs: int = 1):
        """``names``, ``nbytes``: the room to start with; ``runs``: how many runs will be
        interned (room grows to what ``runs`` runs like the first would need at most, capped:
        memory that is reserved but never written costs nothing, a copy on growth does)."""
        self.runs = runs
        self.lock = threading.Lock()
        self.tids: dict[str, int] = {}
        self.sbase = np.zeros(64, np.int64)
        self.ssize = np.zeros(64, np.int64)
        self.scount = np.zeros(64, np.int64)
        self.slots = np.empty(min(max(runs, 1) << 17, 1 << 24), np.int32)  # the topics' regions (`intern_run`)
        self.slots_used = 0
        self.ent = np.empty((names, 4), np.int64)  # hash, pool offset, length, last group
        self.pool = np.empty(nbytes, np.uint8)
        self.state = np.zeros(3, np.int64)  # entries, pool bytes used, topic-group counter

    @property
    def size(self) -> int:
        return int(self.state[0])

    def __getstate__(self):  # a RunSet keeps its table: picklable (to process workers), minus the lock
        return {k: v for k, v in self.__dict__.items() if k != "lock"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.lock = threading.Lock()

    def _tid(self, topic: str) -> int:
        t = self.tids.get(topic)
        if t is None:
            t = self.tids[topic] = len(self.tids)
            if t >= len(self.sbase):
                for name in ("sbase", "ssize", "scount"):
                    setattr(self, name, np.concatenate([getattr(self, name), np.zeros_like(getattr(self, name))]))
        return t

    def _reserve(self, n: int, nbytes: int, seg_tid: np.ndarray, seg_len: np.ndarray) -> None:
        used, pool_used = int(self.state[0]), int(self.state[1])
        if used + n > len(self.ent):
            new = np.empty((max(used + n, 2 * len(self.ent), min(n * self.runs, 1 << 22)), 4), np.int64)
            new[:used] = self.ent[:used]
            self.ent = new
        if pool_used + nbytes > len(self.pool):
            new = np.empty(max(pool_used + nbytes, 2 * len(self.pool), min(nbytes * self.runs, 1 << 27)), np.uint8)
            new[:pool_used] = self.pool[:pool_used]
            self.pool = new
        need = self.scount + np.bincount(seg_tid, weights=seg_len, minlength=len(self.scount)).astype(np.int64)
        grow = np.flatnonzero(2 * need > self.ssize)  # a region at most half full after the run
        if grow.size:
            sizes = np.array([1 << max(int(4 * x).bit_length(), 4) for x in need[grow].tolist()], np.int64)
            used, total = self.slots_used, int(sizes.sum())  # grown fourfold: few moves
            if used + total > len(self.slots):
                new = np.empty(max(used + total, 2 * len(self.slots)), np.int32)
                new[:used] = self.slots[:used]
                self.slots = new
            self.slots[used:used + total] = -1  # empty
            bases = used + np.cumsum(sizes) - sizes
            _kp.move_regions(self.slots, self.sbase, self.ssize, grow, bases, sizes, self.ent)
            self.slots_used = used + total

    def intern(self, buf, starts, ends, hashes, seq, topics, seg_topic, seg_len, nbytes: int):
        """Codes of a run's records taken in the sequence ``seq`` (empty: file order), of
        topic ``topics[seg_topic[k]]`` for the next ``seg_len[k]`` of them (``nbytes``: their
        names' total length); and the position of a document repeated within a topic (-1 if none)."""
        n = int(seg_len.sum())
        out = np.empty(n, np.int32)
        with self.lock:
            seg_tid = np.array([self._tid(t) for t in topics], np.int64)[seg_topic]
            self._reserve(n, nbytes, seg_tid, seg_len)
            bad = _kp.intern_run(buf, starts, ends, hashes.view(np.int64), seq, seg_tid, seg_len, self.sbase,
                                 self.ssize, self.scount, self.slots, self.ent, self.pool, self.state, out)
        return out, int(bad)

    def lookup(self, topics, counts, docids: pa.Array) -> np.ndarray:
        """The codes of ``docids`` (the first ``counts[k]`` of topic ``topics[k]``, the next
        ``counts[k + 1]`` of the next, ...), -1 where a name is not in its topic's table."""
        tid = np.array([self.tids.get(t, -1) for t in topics], np.int64)
        row_tid = np.repeat(tid, counts)
        offsets, buf = _string_layout(docids)
        starts = offsets[:-1].reshape(-1, 1)
        ends = offsets[1:].reshape(-1, 1)
        hashes = np.empty(len(docids), np.uint64)
        _kp.hash_fields(buf, starts, ends, hashes)
        out = np.empty(len(docids), np.int64)
        _kp.lookup_docs(buf, starts, ends, hashes.view(np.int64), row_tid, self.sbase, self.ssize, self.slots,
                        self.ent, self.pool, out)
        return out

    def names(self, codes: np.ndarray) -> pa.Array:
        """The names of ``codes`` as one Arrow string array."""
        total = int(self.ent[codes, 2].sum())
        large = total >= 2**31 - 1
        offsets = np.empty(len(codes) + 1, np.int64 if large else np.int32)
        out = np.empty(max(total, 1), np.uint8)
        _kp.gather_codes(self.pool, self.ent, codes, offsets, out)
        typ = pa.large_string() if large else pa.string()
        return pa.Array.from_buffers(typ, len(codes), [None, pa.py_buffer(offsets), pa.py_buffer(out)])


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
    path, data, raw, cap, ascii = _read_text(path)
    if not ascii:
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


def _string_layout(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(int64 offsets, uint8 bytes) of an Arrow string array."""
    wide = pa.types.is_large_string(arr.type)
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], np.int64 if wide else np.int32)[arr.offset:arr.offset + len(arr) + 1]
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.zeros(1, np.uint8)
    data.flags.writeable = False  # read-only, as a file's bytes: the kernels compile once for both
    return offsets.astype(np.int64), data


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


class Vocab(Sequence):
    """A RunSet's document names, topic by topic (``vocab[t][id]``: the name of dense id
    ``id`` of topic ``t``), gathered from the read's name table the first time they are
    asked for: scoring runs against qrels never needs them (`_DenseIds` aligns the qrels)."""

    def __init__(self, table: DocTable, codes: np.ndarray, offsets: np.ndarray):
        self._table, self._codes, self._offsets = table, codes, offsets
        self._lock = threading.Lock()
        self._arrays: tuple | None = None

    def _topics(self) -> tuple:
        with self._lock:
            if self._arrays is None:
                names = self._table.names(self._codes)
                off = self._offsets
                arrays = tuple(names.slice(off[t], off[t + 1] - off[t]) for t in range(len(off) - 1))
                if pa.types.is_large_string(names.type):  # past 2 GiB of names: string arrays per topic
                    arrays = tuple(v.cast(pa.string()) for v in arrays)
                self._arrays = arrays
            return self._arrays

    def __getitem__(self, t):
        return self._topics()[t]

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __iter__(self):
        return iter(self._topics())

    def __repr__(self) -> str:
        return f"Vocab({len(self)} topics)"

    def __reduce__(self):  # pickled as the plain tuple of arrays
        return tuple, (self._topics(),)


class _DenseIds:
    """Document names -> a RunSet's dense ids, through the name table of the read that built it."""

    def __init__(self, table: DocTable, dense: np.ndarray):
        self.table = table
        self.dense = dense

    def __call__(self, topics, counts, docids: pa.Array) -> np.ndarray:
        """Dense id within its topic of each name of ``docids`` (grouped by topic as in
        `DocTable.lookup`), -1 for a name no run retrieved."""
        codes = self.table.lookup(topics, counts, docids)
        return np.where(codes >= 0, self.dense[np.maximum(codes, 0)], -1)


def build_rankings(ranked: list[RankedRun], topics: list[str]):
    """``(docs, lengths, doc_offsets, best_rank, vocab, dense ids)`` of a RunSet from interned runs."""
    table = ranked[0].table
    S, T = len(ranked), len(topics)
    index = {t: i for i, t in enumerate(topics)}
    lengths = np.zeros((S, T), np.int32)
    seg_global = []
    for s, r in enumerate(ranked):
        g = np.array([index[t] for t in r.topics], np.int32)[r.seg_topic]
        np.add.at(lengths[s], g, r.seg_len)
        seg_global.append(g)
    D = max(int(lengths.max()) if lengths.size else 0, 1)
    docs = np.full((S, T, D), -1, np.int32)
    fill = np.zeros((S, T), np.int32)
    for s, r in enumerate(ranked):
        _kp.place(_NO_ORDER, np.repeat(seg_global[s], r.seg_len), r.codes, s, docs, fill)
    total = int(lengths.sum())
    codes = np.empty(total, np.int32)
    best = np.empty(total, np.int32)
    offsets = np.zeros(T + 1, np.int64)
    used = int(_kp.encode_dense(docs, lengths, max(table.size, 1), codes, best, offsets))
    codes = codes[:used]
    dense = np.full(max(table.size, 1), -1, np.int32)  # code -> dense id within its topic
    dense[codes] = np.arange(used, dtype=np.int32) - np.repeat(offsets[:-1], np.diff(offsets)).astype(np.int32)
    return docs, lengths, offsets, best[:used].copy(), Vocab(table, codes, offsets), _DenseIds(table, dense)


# ---------------------------------------------------------------------------------------
# qrels


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


class RowFaults:
    """Faults of an in-memory source, reported by row (0-based) instead of file line."""

    def __init__(self, label: str):
        self.label = label
        self.best = None

    def add(self, record: int, message: str) -> None:
        if record >= 0 and (self.best is None or record < self.best[0]):
            self.best = (record, message)

    def raise_first(self, _column_message=None) -> None:
        if self.best is not None:
            raise InputError(f"{self.label}, row {self.best[0]}: {self.best[1]}")


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


# ---------------------------------------------------------------------------------------
# files -> RunSet

_RUN_SUFFIXES = (".gz", ".run", ".txt", ".trec", ".res", ".tsv")


def expand_paths(paths, pattern=None) -> tuple[list[Path], list[bool]]:
    """Files to read, and whether each came from a directory listing without a pattern
    (such files are skipped, with a warning, when they are not runs)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if not isinstance(paths, (list, tuple)):
        raise InputError(f"`runs` must be run file paths, a directory or an in-memory source, got {type(paths).__name__}")
    out: list[Path] = []
    optional: list[bool] = []
    for p in paths:
        if not isinstance(p, (str, os.PathLike)):
            raise InputError(f"`runs` entries must be paths, got {type(p).__name__}")
        p = Path(p)
        if p.is_dir():
            files = sorted(q for q in (p.glob(pattern) if pattern else p.iterdir())
                           if q.is_file() and not q.name.startswith("."))
            if not files:
                raise InputError(f"run directory {str(p)!r} holds no files" + (f" matching {pattern!r}" if pattern else ""))
            out.extend(files)
            optional.extend([pattern is None] * len(files))
        elif p.is_file():
            out.append(p)
            optional.append(False)
        else:
            raise InputError(not_a_regular_file(p) or f"run file {str(p)!r} does not exist")
    if not out:
        raise InputError("`runs` must name at least one run file or directory")
    return out, optional


def _stem(path: Path) -> str:
    name = path.name
    changed = True
    while changed:
        changed = False
        for suf in _RUN_SUFFIXES:
            if name.lower().endswith(suf) and len(name) > len(suf):
                name = name[: -len(suf)]
                changed = True
    return name


def parse_skipping(files, optional, threads):
    if not any(optional):
        return parse_runs(files, threads)
    keep = []
    for f, opt in zip(files, optional):
        if not opt:
            keep.append(f)
            continue
        try:
            sniff_run(f)
            keep.append(f)
        except InputError as exc:
            warnings.warn(f"skipping {f}: not a TREC run ({exc})", RunFileWarning, stacklevel=4)
    if not keep:
        raise InputError(f"no run files among {[str(f) for f in files][:10]}")
    return parse_runs(keep, threads)


def runset_from_parsed(parsed, names=None, sources=()) -> RunSet:
    """Assemble a RunSet from parsed runs (files or in-memory sources)."""
    if names is not None:
        names = [str(n) for n in names]
        if len(names) != len(parsed):
            raise InputError(f"`names` has {len(names)} entries for {len(parsed)} run files")
    else:
        tags = [r.tag for r in parsed]
        names = tags if len(set(tags)) == len(tags) else [_stem(r.path) for r in parsed]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        files = {n: [str(r.path) for r, m in zip(parsed, names) if m == n] for n in dup}
        raise InputError(f"system names collide after using file names: {files}; pass `names=`")
    if not all(isinstance(r, RankedRun) for r in parsed):
        table = next((r.table for r in parsed if isinstance(r, RankedRun)), None) or DocTable()
        parsed = [r if isinstance(r, RankedRun) else ranked_from_parsed(r, table) for r in parsed]
    topics = topic_order(t for r in parsed for t in r.topics)
    docs, lengths, offsets, best_rank, vocab, ids = build_rankings(parsed, topics)
    out = RunSet(tuple(names), tuple(topics), docs, lengths, offsets, best_rank, vocab, tuple(sources))
    out._cache["dense_ids"] = ids  # qrels alignment through the read's name table (`fastrisk.data.runs.model.align`)
    return out
