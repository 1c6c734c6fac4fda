"""Runs read from files or in-memory sources, assembled into one `RunSet`: files that are not
runs skipped (`parse_skipping`), the runs' rankings placed and their document ids made dense
per topic (`build_rankings`), names gathered on demand (`Vocab`)."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from fastrisk._kernels import parse as _kp
from fastrisk.data.runs.doctable import DocTable
from fastrisk.data.runs.model import RunSet, topic_order
from fastrisk.data.runs.paths import stem
from fastrisk.data.runs.runfile import _NO_ORDER, RankedRun, parse_runs, ranked_from_parsed, sniff_run
from fastrisk.errors import InputError, RunFileWarning


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
        names = tags if len(set(tags)) == len(tags) else [stem(r.path) for r in parsed]
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
