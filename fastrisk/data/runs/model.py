"""The data model of runs and qrels: `RunSet`, `Qrels` and their alignment.

A `RunSet` holds every system's ranking for every topic as one ``(S, T, D)`` int32
array of *dense per-topic document ids* (``-1`` pads rankings shorter than ``D``). Within a
topic, ids are assigned in order of each document's best rank over all systems (ties by
system order), so the documents of any depth-``k`` pool are exactly the ids below
``RunSet.pool_size(k)[t]``; the pooling kernels rely on that. The id -> document name
vocabulary of each topic is a pyarrow string array (``RunSet.to_arrow()`` gives the long
table with dictionary-encoded ``docid``).

Rankings follow the official TREC scripts (trec_eval, gdeval): a run is ordered by score
descending, ties broken by document id descending; the rank column is read and validated
but otherwise ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fastrisk._runtime.extras import require
from fastrisk.data.runs import ipc
from fastrisk.errors import InputError

__all__ = ["Judged", "Qrels", "RunSet", "align", "encode_rankings"]

def topic_order(topics: Iterable[str]) -> list[str]:
    """Numeric order when every topic id is an integer, else lexicographic."""
    topics = set(topics)
    try:
        return sorted(topics, key=lambda t: (int(t), t))
    except ValueError:
        return sorted(topics)


# ---------------------------------------------------------------------------------------
# RunSet


@dataclass(frozen=True, eq=False)
class RunSet:
    """Many systems' rankings over the same topics, in dense per-topic document ids.

    Attributes
    ----------
    systems, topics : tuple of str
    docs : (S, T, D) int32 ndarray
        ``docs[s, t, i]`` is the dense id (within topic ``t``) of the document system ``s``
        ranks at position ``i`` (0-based), or -1 past the end of its ranking.
    lengths : (S, T) int32 ndarray
        Number of documents each system returned for each topic (0 if none).
    vocab : sequence of pyarrow.StringArray, or None
        ``vocab[t][id]`` is the document name of id ``id`` in topic ``t`` (a tuple, or for a
        set read from files a sequence that gathers the names on first use). ``None``
        (synthetic sets) means document ``id`` is named ``str(id)``.
    best_rank : (n_docs_total,) int32 ndarray
        Best (smallest, 0-based) rank of each document over all systems, concatenated over
        topics by ``doc_offsets``; non-decreasing within a topic by construction.
    doc_offsets : (T + 1,) int64 ndarray
        Topic ``t``'s documents are global ids ``doc_offsets[t] .. doc_offsets[t+1]-1``.
    sources : tuple of str
        The file each system was read from ("" when built in memory).

    References
    ----------
    Voorhees, E. M. & Harman, D. K. (eds.) (2005). TREC: Experiment and Evaluation in Information Retrieval. MIT
    Press.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> runs = fastrisk.read_runs(datasets.path('trec2012-web/runs'), pattern='*filtered*')
    >>> qrels = fastrisk.read_qrels(datasets.path('trec2012-web/qrels.adhoc.txt'))
    >>> runs
    RunSet(4 systems x 50 topics, depth 837, 30627 distinct documents)
    >>> runs.systems[:2]
    ('indri-ql-cata-filtered', 'indri-ql-catb-filtered')
    """

    systems: tuple
    topics: tuple
    docs: np.ndarray
    lengths: np.ndarray
    doc_offsets: np.ndarray
    best_rank: np.ndarray
    vocab: tuple | None = None
    sources: tuple = ()
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    # -- construction --------------------------------------------------------------

    @classmethod
    def from_arrays(cls, docs, lengths=None, systems=None, topics=None, vocab=None, sources=()):
        """Build from a ``(S, T, D)`` array of per-topic document ids already in rank order.

        Ids may be arbitrary non-negative integers (``-1`` = padding); they are re-encoded
        densely by best rank. ``vocab[t][old_id]`` names the documents if given.

        References
        ----------
        Voorhees, E. M. & Harman, D. K. (eds.) (2005). TREC: Experiment and Evaluation in Information
        Retrieval. MIT Press.

        Examples
        --------
        >>> import fastrisk
        >>> import numpy as np
        >>> runs = fastrisk.RunSet.from_arrays(np.array([[[0, 1, 2]], [[2, 1, 0]]]), systems=['a', 'b'], topics=['401'])
        >>> runs
        RunSet(2 systems x 1 topics, depth 3, 3 distinct documents)
        """
        docs = np.asarray(docs)
        if docs.ndim != 3 or not np.issubdtype(docs.dtype, np.integer):
            raise InputError("`docs` must be a 3-d integer array (systems x topics x depth)")
        S, T, D = docs.shape
        if lengths is None:
            lengths = (docs >= 0).sum(axis=2)
        lengths = np.asarray(lengths, dtype=np.int32)
        if lengths.shape != (S, T):
            raise InputError(f"`lengths` must have shape {(S, T)}, got {lengths.shape}")
        systems = tuple(str(s) for s in (systems if systems is not None else range(S)))
        topics = tuple(str(t) for t in (topics if topics is not None else range(T)))
        if len(systems) != S or len(set(systems)) != S:
            raise InputError("`systems` must be S distinct names")
        if len(topics) != T or len(set(topics)) != T:
            raise InputError("`topics` must be T distinct names")
        out, offsets, best_rank, ranked = encode_rankings(docs, lengths, topics)
        new_vocab = None
        if vocab is not None:
            new_vocab = tuple(pa.array([str(vocab[t][int(i)]) for i in ranked[t]], type=pa.string())
                              for t in range(T))
        return cls(systems, topics, out, lengths, offsets, best_rank, new_vocab, tuple(sources))

    def __repr__(self) -> str:
        return (f"RunSet({self.n_systems} systems x {self.n_topics} topics, depth {self.depth}, "
                f"{int(self.doc_offsets[-1])} distinct documents)")

    def save(self, path) -> None:
        """Write to an Arrow IPC file that `read_runs` memory-maps back."""
        ipc.save_runs(self, path)

    @classmethod
    def load(cls, path) -> RunSet:
        """Memory-map a RunSet written by `save`.

        References
        ----------
        Apache Arrow (2016-). Columnar format specification,
        https://arrow.apache.org/docs/format/Columnar.html.

        Examples
        --------
        >>> import fastrisk
        >>> import numpy as np
        >>> import os, tempfile
        >>> runs = fastrisk.RunSet.from_arrays(np.array([[[0, 1, 2]], [[2, 1, 0]]]), systems=['a', 'b'], topics=['401'])
        >>> path = os.path.join(tempfile.mkdtemp(), 'runs.arrow')
        >>> runs.save(path)
        >>> fastrisk.RunSet.load(path)
        RunSet(2 systems x 1 topics, depth 3, 3 distinct documents)
        """
        return cls(*ipc.runs_fields(path))

    # -- shape ---------------------------------------------------------------------

    @property
    def n_systems(self) -> int:
        return len(self.systems)

    @property
    def n_topics(self) -> int:
        return len(self.topics)

    @property
    def depth(self) -> int:
        return self.docs.shape[2]

    def n_docs(self) -> np.ndarray:
        """Number of distinct documents retrieved per topic."""
        return np.diff(self.doc_offsets)

    def pool_size(self, depth: int) -> np.ndarray:
        """Per topic, the number of documents in the depth-``depth`` pool of all systems."""
        out = np.empty(self.n_topics, dtype=np.int64)
        for t in range(self.n_topics):
            br = self.best_rank[self.doc_offsets[t]:self.doc_offsets[t + 1]]
            out[t] = np.searchsorted(br, depth, side="left")
        return out

    def docid(self, t: int, i: int) -> str:
        if self.vocab is None:
            return str(i)
        return self.vocab[t][i].as_py()

    def topic_vocab(self, t: int) -> pa.Array:
        if self.vocab is None:
            n = int(self.doc_offsets[t + 1] - self.doc_offsets[t])
            return pa.array([str(i) for i in range(n)], type=pa.string())
        return self.vocab[t]

    def select(self, systems=None) -> RunSet:
        """The same encoding restricted to some systems (names or positions)."""
        if systems is None:
            return self
        idx = [self._system_index(s) for s in systems]
        return RunSet(tuple(self.systems[i] for i in idx), self.topics, self.docs[idx],
                      self.lengths[idx], self.doc_offsets, self.best_rank, self.vocab,
                      tuple(self.sources[i] for i in idx) if self.sources else ())

    def _system_index(self, s) -> int:
        if isinstance(s, (int, np.integer)):
            if not 0 <= s < self.n_systems:
                raise InputError(f"system position {s} out of range 0..{self.n_systems - 1}")
            return int(s)
        try:
            return self.systems.index(str(s))
        except ValueError:
            raise InputError(f"unknown system {s!r}") from None

    # -- export --------------------------------------------------------------------

    def to_arrow(self) -> pa.Table:
        """Long table ``system, topic, rank, docid`` (rank 1-based; dictionary-encoded strings)."""
        S, T, _ = self.docs.shape
        sys_col, top_col, rank_col, doc_col = [], [], [], []
        for t in range(T):
            voc = self.topic_vocab(t)
            for s in range(S):
                n = int(self.lengths[s, t])
                if n == 0:
                    continue
                ids = self.docs[s, t, :n]
                sys_col.append(np.full(n, s, np.int32))
                top_col.append(np.full(n, t, np.int32))
                rank_col.append(np.arange(1, n + 1, dtype=np.int32))
                doc_col.append(voc.take(pa.array(ids)))
        def dict_col(codes, labels):
            codes = np.concatenate(codes) if codes else np.zeros(0, np.int32)
            return pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(list(labels), pa.string()))
        docs = pa.chunked_array(doc_col, type=pa.string()) if doc_col else pa.chunked_array([], pa.string())
        return pa.table({
            "system": dict_col(sys_col, self.systems),
            "topic": dict_col(top_col, self.topics),
            "rank": pa.array(np.concatenate(rank_col) if rank_col else np.zeros(0, np.int32)),
            "docid": pc.dictionary_encode(docs),
        })

    def to_pandas(self):
        require("pandas", what="to_pandas()")
        return self.to_arrow().to_pandas()


def encode_rankings(docs: np.ndarray, lengths: np.ndarray, topics=None):
    """Re-encode ``(S, T, D)`` rankings of arbitrary non-negative ids into dense per-topic ids
    ordered by best rank.

    Parameters
    ----------
    docs : ndarray of int, shape (S, T, D)
        Document ids of each system's ranking of each topic (padding past ``lengths`` ignored).
    lengths : ndarray of int, shape (S, T)
        Length of each ranking.
    topics : sequence, optional
        Topic labels, for the error naming a topic with a negative id.

    Returns
    -------
    docs : ndarray of int32, shape (S, T, D)
        The dense ids (-1 past each ranking's end).
    doc_offsets : ndarray of int64, shape (T + 1,)
        Where each topic's dense ids start in the flat per-document arrays.
    best_rank : ndarray
        The best rank of each dense id, topic after topic.
    ranked : list of ndarray
        ``ranked[t][new_id]`` is the original id.
    """
    S, T, D = docs.shape
    out = np.full((S, T, D), -1, dtype=np.int32)
    offsets = np.zeros(T + 1, dtype=np.int64)
    best_parts, ranked_all = [], []
    cols = np.arange(D)
    for t in range(T):
        block = docs[:, t, :]
        mask = cols[None, :] < lengths[:, t][:, None]
        vals = block[mask]
        if np.any(vals < 0):
            name = topics[t] if topics is not None else t
            raise InputError(f"topic {name}: negative document id inside a ranking")
        flat = block.T[mask.T]  # rank-major: rank 0 of every system, then rank 1, ...
        uniq, first = np.unique(flat, return_index=True)
        order = np.argsort(first, kind="stable")  # first appearance in rank-major order
        new_of_sorted = np.empty(len(uniq), dtype=np.int32)
        new_of_sorted[order] = np.arange(len(uniq), dtype=np.int32)
        new_ids = new_of_sorted[np.searchsorted(uniq, vals)]
        sub = out[:, t, :]
        sub[mask] = new_ids
        out[:, t, :] = sub
        ranks = np.broadcast_to(cols, block.shape)[mask]
        best = np.full(len(uniq), np.iinfo(np.int32).max, dtype=np.int64)
        np.minimum.at(best, new_ids, ranks)
        best_parts.append(best.astype(np.int32))
        ranked_all.append(uniq[order])
        offsets[t + 1] = offsets[t] + len(uniq)
    best_rank = np.concatenate(best_parts) if best_parts else np.zeros(0, np.int32)
    return out, offsets, best_rank, ranked_all


# ---------------------------------------------------------------------------------------
# Qrels


@dataclass(frozen=True, eq=False)
class Qrels:
    """Graded relevance judgments: one row per (topic, document).

    ``grades`` are the judged grades with negative grades (spam, -2) counted as 0;
    ``raw_grades`` keeps the file's values. ``topic_offsets`` delimits each topic's rows.

    References
    ----------
    Voorhees, E. M. & Harman, D. K. (eds.) (2005). TREC: Experiment and Evaluation in Information Retrieval. MIT
    Press.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> qrels = fastrisk.read_qrels(datasets.path('trec2012-web/qrels.adhoc.txt'))
    >>> qrels.topics[:3], len(qrels.topics)
    (('151', '152', '153'), 50)
    """

    topics: tuple
    topic_offsets: np.ndarray
    docids: pa.Array
    grades: np.ndarray
    raw_grades: np.ndarray
    source: str = ""

    @classmethod
    def from_dict(cls, judgments: Mapping[str, Mapping[str, int]]) -> Qrels:
        """Build from ``{topic: {docid: grade}}``.

        References
        ----------
        Voorhees, E. M. & Harman, D. K. (eds.) (2005). TREC: Experiment and Evaluation in Information
        Retrieval. MIT Press.

        Examples
        --------
        >>> import fastrisk
        >>> qrels = fastrisk.Qrels.from_dict({'401': {'d1': 1, 'd2': 0}, '402': {'d3': 2}})
        >>> qrels
        Qrels(2 topics, 3 judgments)
        """
        topics = topic_order(str(t) for t in judgments)
        lookup = {str(t): v for t, v in judgments.items()}
        docs, grades, offsets = [], [], [0]
        for t in topics:
            for d, g in lookup[t].items():
                docs.append(str(d))
                grades.append(int(g))
            offsets.append(len(docs))
        raw = np.asarray(grades, dtype=np.int64)
        if raw.size and (raw.min() < -128 or raw.max() > 127):
            raise InputError("qrels grades must lie in -128..127, got "
                             f"{int(raw.min()) if raw.min() < -128 else int(raw.max())}")
        return cls(tuple(topics), np.asarray(offsets, np.int64), pa.array(docs, pa.string()),
                   np.maximum(raw, 0).astype(np.int8), raw)

    @classmethod
    def from_rows(cls, topic_dict, topic, docids, raw, source="") -> Qrels:
        """From per-row topic codes (into ``topic_dict``), document names and raw grades.

        References
        ----------
        Voorhees, E. M. & Harman, D. K. (eds.) (2005). TREC: Experiment and Evaluation in Information
        Retrieval. MIT Press.

        Examples
        --------
        >>> import fastrisk
        >>> import numpy as np
        >>> import pyarrow as pa
        >>> qrels = fastrisk.Qrels.from_rows(pa.array(['401', '402']), np.array([0, 0, 1]), pa.array(['d1', 'd2', 'd3']), np.array([1, 0, 2]))
        >>> qrels
        Qrels(2 topics, 3 judgments)
        """
        names = topic_dict.to_pylist()
        topics = topic_order(names)
        rank = {t: i for i, t in enumerate(topics)}
        pos = np.array([rank[t] for t in names], np.int64)[topic]
        order = np.argsort(pos, kind="stable")
        offsets = np.zeros(len(topics) + 1, np.int64)
        np.cumsum(np.bincount(pos, minlength=len(topics)), out=offsets[1:])
        raw = np.asarray(raw, np.int64)[order]
        return cls(tuple(topics), offsets, docids.take(pa.array(order)), np.maximum(raw, 0).astype(np.int8),
                   raw, str(source))

    @property
    def n_topics(self) -> int:
        return len(self.topics)

    def __repr__(self) -> str:
        src = f", source={self.source!r}" if self.source else ""
        return f"Qrels({self.n_topics} topics, {len(self.grades)} judgments{src})"

    def save(self, path) -> None:
        """Write to an Arrow IPC file that `read_qrels` memory-maps back."""
        ipc.save_qrels(self, path)

    @classmethod
    def load(cls, path) -> Qrels:
        """Memory-map a Qrels written by `save`.

        References
        ----------
        Apache Arrow (2016-). Columnar format specification,
        https://arrow.apache.org/docs/format/Columnar.html.

        Examples
        --------
        >>> import fastrisk
        >>> import os, tempfile
        >>> qrels = fastrisk.Qrels.from_dict({'401': {'d1': 1, 'd2': 0}, '402': {'d3': 2}})
        >>> path = os.path.join(tempfile.mkdtemp(), 'qrels.arrow')
        >>> qrels.save(path)
        >>> loaded = fastrisk.Qrels.load(path)
        >>> loaded.topics, len(loaded.docids)
        (('401', '402'), 3)
        """
        return cls(*ipc.qrels_fields(path))

    def topic_slice(self, t: int) -> slice:
        return slice(int(self.topic_offsets[t]), int(self.topic_offsets[t + 1]))

    def to_arrow(self) -> pa.Table:
        counts = np.diff(self.topic_offsets)
        codes = np.repeat(np.arange(self.n_topics, dtype=np.int32), counts)
        return pa.table({
            "topic": pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(list(self.topics), pa.string())),
            "docid": self.docids,
            "grade": pa.array(self.raw_grades),
        })

    def to_pandas(self):
        require("pandas", what="to_pandas()")
        return self.to_arrow().to_pandas()


# ---------------------------------------------------------------------------------------
# alignment of judgments with a RunSet's encoding


@dataclass(frozen=True)
class Judged:
    """Qrels aligned with a RunSet: what the kernels consume.

    grades : (n_docs_total,) int8, grade of each retrieved document, -1 if unjudged.
    ideal_offsets, ideal_grades : positive grades of every judged document of each topic
        (retrieved or not), sorted descending, concatenated by ``ideal_offsets``.
    has_relevant : (T,) bool, the topic has at least one positive judgment.
    """

    grades: np.ndarray
    ideal_offsets: np.ndarray
    ideal_grades: np.ndarray
    has_relevant: np.ndarray


def align(runs: RunSet, qrels: Qrels) -> Judged:
    """Map qrels onto ``runs``' per-topic document ids (cached per qrels object).

    Parameters
    ----------
    runs : RunSet
        The runs whose documents are judged.
    qrels : Qrels
        The relevance judgements.

    Returns
    -------
    Judged
        The grade of every ranked document (-1: unjudged), the ideal grades and which topics
        have a relevant document.
    """
    key = ("align", id(qrels))
    hit = runs._cache.get(key)
    if hit is not None and hit[0] is qrels:
        return hit[1]
    T = runs.n_topics
    grades = np.full(int(runs.doc_offsets[-1]), -1, dtype=np.int8)
    qtopic = {t: i for i, t in enumerate(qrels.topics)}
    ideal_parts, ideal_offsets = [], [0]
    has_rel = np.zeros(T, dtype=bool)
    dense_ids = runs._cache.get("dense_ids")  # set by the file reader: one compiled lookup for all rows
    if dense_ids is not None and runs.vocab is not None:
        out = _align_rows(runs, qrels, dense_ids(qrels.topics, np.diff(qrels.topic_offsets), qrels.docids))
        runs._cache[key] = (qrels, out)
        return out
    for t, name in enumerate(runs.topics):
        qi = qtopic.get(name)
        if qi is None:
            ideal_offsets.append(ideal_offsets[-1])
            continue
        sl = qrels.topic_slice(qi)
        g = qrels.grades[sl]
        pos = np.sort(g[g > 0])[::-1].astype(np.int8)
        ideal_parts.append(pos)
        ideal_offsets.append(ideal_offsets[-1] + len(pos))
        has_rel[t] = len(pos) > 0
        n_t = int(runs.doc_offsets[t + 1] - runs.doc_offsets[t])
        if n_t == 0:
            continue
        if runs.vocab is None:
            ids = np.array([int(d) if d.isdigit() else -1 for d in qrels.docids[sl].to_pylist()], np.int64)
            ids[ids >= n_t] = -1
        else:
            ids = pc.index_in(qrels.docids[sl], value_set=runs.vocab[t]).to_numpy(zero_copy_only=False)
            ids = np.where(np.isnan(ids), -1, ids).astype(np.int64) if ids.dtype.kind == "f" else ids.astype(np.int64)
        ok = ids >= 0
        grades[runs.doc_offsets[t] + ids[ok]] = g[ok]
    out = Judged(grades,
                 np.asarray(ideal_offsets, np.int64),
                 np.concatenate(ideal_parts) if ideal_parts else np.zeros(0, np.int8),
                 has_rel)
    runs._cache[key] = (qrels, out)
    return out


def _align_rows(runs: RunSet, qrels: Qrels, ids: np.ndarray) -> Judged:
    """`align` from every qrels row's dense id in its topic (-1: not retrieved), without a
    loop over topics."""
    T = runs.n_topics
    index = {name: t for t, name in enumerate(runs.topics)}
    row_t = np.repeat(np.array([index.get(name, -1) for name in qrels.topics], np.int64), np.diff(qrels.topic_offsets))
    grades = np.full(int(runs.doc_offsets[-1]), -1, dtype=np.int8)
    ok = (ids >= 0) & (row_t >= 0)
    grades[runs.doc_offsets[row_t[ok]] + ids[ok]] = qrels.grades[ok]
    pos = (qrels.grades > 0) & (row_t >= 0)
    g, t = qrels.grades[pos], row_t[pos]
    order = np.lexsort((-g.astype(np.int64), t))  # by topic, grade descending
    counts = np.bincount(t, minlength=T)
    offsets = np.zeros(T + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    return Judged(grades, offsets, g[order].astype(np.int8), counts > 0)
