"""The document names of one read, interned once (`DocTable`): the codes the run scanner and
the qrels reader give every name, shared by all the runs of a read."""

from __future__ import annotations

import threading

import numpy as np
import pyarrow as pa

from fastrisk._kernels import parse as _kp


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


def _string_layout(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(int64 offsets, uint8 bytes) of an Arrow string array."""
    wide = pa.types.is_large_string(arr.type)
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], np.int64 if wide else np.int32)[arr.offset:arr.offset + len(arr) + 1]
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.zeros(1, np.uint8)
    data.flags.writeable = False  # read-only, as a file's bytes: the kernels compile once for both
    return offsets.astype(np.int64), data
