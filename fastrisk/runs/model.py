"""TREC run files and qrels: parsing, validation and a dense per-topic integer encoding.

A :class:`RunSet` holds every system's ranking for every topic as one ``(S, T, D)`` int32
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

import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fastrisk.errors import InputError, RunFileWarning

__all__ = ["Qrels", "RunFileWarning", "RunSet", "read_qrels", "read_runs"]

_RUN_SUFFIXES = (".gz", ".run", ".txt", ".trec", ".res", ".tsv")


# ---------------------------------------------------------------------------------------
# file helpers


def _expand_paths(paths, pattern=None) -> tuple[list[Path], list[bool]]:
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
            raise InputError(f"run file {str(p)!r} does not exist")
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


def _topic_order(topics: Iterable[str]) -> list[str]:
    """Numeric order when every topic id is an integer, else lexicographic."""
    topics = set(topics)
    try:
        return sorted(topics, key=lambda t: (int(t), t))
    except ValueError:
        return sorted(topics)


# ---------------------------------------------------------------------------------------
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
    vocab : tuple of pyarrow.StringArray, or None
        ``vocab[t][id]`` is the document name of id ``id`` in topic ``t``. ``None`` (synthetic
        sets) means document ``id`` is named ``str(id)``.
    best_rank : (n_docs_total,) int32 ndarray
        Best (smallest, 0-based) rank of each document over all systems, concatenated over
        topics by ``doc_offsets``; non-decreasing within a topic by construction.
    doc_offsets : (T + 1,) int64 ndarray
        Topic ``t``'s documents are global ids ``doc_offsets[t] .. doc_offsets[t+1]-1``.
    sources : tuple of str
        The file each system was read from ("" when built in memory).
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
        """Write to an Arrow IPC file that :func:`read_runs` memory-maps back."""
        from fastrisk import run_cache

        run_cache.save_runs(self, path)

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
        return self.to_arrow().to_pandas()


def encode_rankings(docs: np.ndarray, lengths: np.ndarray, topics=None):
    """Re-encode ``(S, T, D)`` rankings of arbitrary non-negative ids into dense per-topic ids
    ordered by best rank. Returns ``(dense docs, doc_offsets, best_rank, ranked)`` where
    ``ranked[t][new_id]`` is the original id."""
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


def read_runs(paths, *, names: Sequence[str] | None = None, pattern: str | None = None,
              threads: int | None = None, cache=None) -> RunSet:
    """Read TREC runs into a :class:`RunSet`.

    ``paths``: run files (plain, gzip, bz2, xz or zstd) and/or directories; a RunSet saved
    with :meth:`RunSet.save`; or an in-memory source (a pandas/polars/Arrow frame or a
    ``{name: frame}`` mapping with PyTerrier columns ``qid, docno, score``, pytrec_eval-style
    ``{name: {qid: {docno: score}}}`` dicts, ranx ``Run`` objects): see
    :func:`fastrisk.run_sources.runs_from`.

    Each file must have six whitespace-separated columns ``topic Q0 docid rank score tag``;
    a document listed twice for a topic is an error naming the file and line. The system
    name is the run tag, or the file name (without ``.gz``/``.run``/...) when two files
    share a tag. ``names`` overrides both. In a directory, only files matching ``pattern``
    (a glob, e.g. ``"*.gz"``) are read; without a pattern, files that are not runs (binary,
    or not six columns on their first line) are skipped with a :class:`RunFileWarning`.
    Files are parsed in parallel by a compiled scanner (``threads`` workers; default all
    cores). ``cache=True`` (or a directory) keeps the parsed set on disk, keyed by the files'
    paths, sizes, modification times and a hash of their ends, so the next read of the same
    files is a memory-mapped load.

    Parameters
    ----------
    paths : str or os.PathLike or sequence of them, or an in-memory source
        Run files and directories, a saved RunSet, or frames / dicts / ranx runs.
    names : sequence of str, optional
        System names, one per run.
    pattern : str, optional
        A glob selecting the run files of a directory.
    threads : int, optional
        Parser workers (default: all cores).
    cache : bool or str or os.PathLike, optional
        Keep the parsed set on disk (True: the default cache directory).

    Returns
    -------
    RunSet
        Every run's ranking per topic, with dense per-topic document ids.
    """
    from fastrisk import run_cache, run_sources

    if run_sources.is_in_memory(paths):
        return run_sources.runs_from(paths, names=names)
    if run_cache.is_saved(paths):
        return run_cache.load_runs(paths)
    files, optional = _expand_paths(paths, pattern)
    key = None
    if cache:
        key = run_cache.key(files, names=names)
        hit = run_cache.lookup(cache, key)
        if hit is not None:
            return hit
    parsed = _parse_skipping(files, optional, threads)
    files = [p.path for p in parsed]
    out = runset_from_parsed(parsed, names, tuple(str(p) for p in files))
    if key is not None:
        run_cache.store(cache, key, out)
    return out


def _parse_skipping(files, optional, threads):
    from fastrisk import _trec_text

    if not any(optional):
        return _trec_text.parse_runs(files, threads)
    keep = []
    for f, opt in zip(files, optional):
        if not opt:
            keep.append(f)
            continue
        try:
            _trec_text.sniff_run(f)
            keep.append(f)
        except InputError as exc:
            warnings.warn(f"skipping {f}: not a TREC run ({exc})", RunFileWarning, stacklevel=4)
    if not keep:
        raise InputError(f"no run files among {[str(f) for f in files][:10]}")
    return _trec_text.parse_runs(keep, threads)


def runset_from_parsed(parsed, names=None, sources=()) -> RunSet:
    """Assemble a RunSet from parsed runs (files or in-memory sources)."""
    from fastrisk import _trec_text

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
    topics = _topic_order(t for r in parsed for t in r.topic_dict.to_pylist())
    docs, lengths, offsets, best_rank, vocab = _trec_text.build_rankings(parsed, topics)
    return RunSet(tuple(names), tuple(topics), docs, lengths, offsets, best_rank, vocab, tuple(sources))


# ---------------------------------------------------------------------------------------
# Qrels


@dataclass(frozen=True, eq=False)
class Qrels:
    """Graded relevance judgments: one row per (topic, document).

    ``grades`` are the judged grades with negative grades (spam, -2) counted as 0;
    ``raw_grades`` keeps the file's values. ``topic_offsets`` delimits each topic's rows.
    """

    topics: tuple
    topic_offsets: np.ndarray
    docids: pa.Array
    grades: np.ndarray
    raw_grades: np.ndarray
    source: str = ""

    @classmethod
    def from_dict(cls, judgments: Mapping[str, Mapping[str, int]]) -> Qrels:
        """Build from ``{topic: {docid: grade}}``."""
        topics = _topic_order(str(t) for t in judgments)
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
        """From per-row topic codes (into ``topic_dict``), document names and raw grades."""
        names = topic_dict.to_pylist()
        topics = _topic_order(names)
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
        """Write to an Arrow IPC file that :func:`read_qrels` memory-maps back."""
        from fastrisk import run_cache

        run_cache.save_qrels(self, path)

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
        return self.to_arrow().to_pandas()


def read_qrels(path) -> Qrels:
    """Read TREC qrels (``topic iteration docid grade``; plain or compressed) into :class:`Qrels`.

    Negative grades count as 0 (judged non-relevant); grades must lie in -128..127. A
    document judged twice for a topic with different grades is an error naming the file and
    line. Blank lines and ``#`` comment lines are skipped, as trec_eval does. ``path`` may
    also be a saved Qrels (:meth:`Qrels.save`) or an in-memory source (a frame with columns
    ``qid, docno, label``, ``{qid: {docno: grade}}``, an ir_datasets qrels iterable, a ranx
    ``Qrels``): see :func:`fastrisk.run_sources.qrels_from`.

    Parameters
    ----------
    path : str or os.PathLike or Qrels or an in-memory source
        The qrels file (plain or compressed) or another source of judgments.

    Returns
    -------
    Qrels
        Grades per (topic, document).
    """
    from fastrisk import _trec_text, run_cache, run_sources

    if isinstance(path, Qrels):
        return path
    if run_sources.is_in_memory(path, qrels=True):
        return run_sources.qrels_from(path)
    if not isinstance(path, (str, os.PathLike)):
        raise InputError(f"`qrels` must be a path or an in-memory qrels source, got {type(path).__name__}")
    path = Path(path)
    if not path.is_file():
        raise InputError(f"qrels file {str(path)!r} does not exist")
    if run_cache.is_saved(path):
        return run_cache.load_qrels(path)
    return Qrels.from_rows(*_trec_text.parse_qrels(path), source=str(path))


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
    """Map qrels onto ``runs``' per-topic document ids (cached per qrels object)."""
    key = ("align", id(qrels))
    hit = runs._cache.get(key)
    if hit is not None and hit[0] is qrels:
        return hit[1]
    T = runs.n_topics
    grades = np.full(int(runs.doc_offsets[-1]), -1, dtype=np.int8)
    qtopic = {t: i for i, t in enumerate(qrels.topics)}
    ideal_parts, ideal_offsets = [], [0]
    has_rel = np.zeros(T, dtype=bool)
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
