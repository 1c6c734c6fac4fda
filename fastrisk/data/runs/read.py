"""The entry points `read_runs` and `read_qrels`: a path or an in-memory source to
a `RunSet` / `Qrels`, through the text
readers (`fastrisk.data.runs.runfile`, `fastrisk.data.runs.qrelsfile`, assembled by
`fastrisk.data.runs.assemble`), a saved file (`fastrisk.data.runs.ipc`), the parse cache
(`fastrisk.data.runs.cache`) or an in-memory source (`fastrisk.data.runs.sources`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from fastrisk._runtime.validation import not_a_regular_file
from fastrisk.data.runs import cache as run_cache
from fastrisk.data.runs import ipc, sources
from fastrisk.data.runs.assemble import parse_skipping, runset_from_parsed
from fastrisk.data.runs.model import Qrels, RunSet
from fastrisk.data.runs.paths import expand_paths
from fastrisk.data.runs.qrelsfile import read_qrels_file
from fastrisk.errors import InputError

__all__ = ["read_qrels", "read_runs"]


def read_runs(paths, *, names: Sequence[str] | None = None, pattern: str | None = None,
              threads: int | None = None, cache=None) -> RunSet:
    """Read TREC runs into a `RunSet`.

    ``paths``: run files (plain, gzip, bz2, xz or zstd) and/or directories; a RunSet saved
    with `RunSet.save`; or an in-memory source (a pandas/polars/Arrow frame or a
    ``{name: frame}`` mapping with PyTerrier columns ``qid, docno, score``, pytrec_eval-style
    ``{name: {qid: {docno: score}}}`` dicts, ranx ``Run`` objects): see
    `fastrisk.data.runs.sources.runs_from`.

    Each file must have six whitespace-separated columns ``topic Q0 docid rank score tag``;
    a document listed twice for a topic is an error naming the file and line. The system
    name is the run tag, or the file name (without ``.gz``/``.run``/...) when two files
    share a tag. ``names`` overrides both. In a directory, only files matching ``pattern``
    (a glob, e.g. ``"*.gz"``) are read; without a pattern, files that are not runs (binary,
    or not six columns on their first line) are skipped with a `RunFileWarning`.
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

    References
    ----------
    Voorhees, E. M. & Harman, D. K. (eds.) (2005). TREC: Experiment and Evaluation in Information Retrieval. MIT
    Press.

    Clarke, C. L. A., Craswell, N. & Voorhees, E. M. (2012). Overview of the TREC 2012 Web Track. TREC 2012.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> runs = fastrisk.read_runs(datasets.path('trec2012-web/runs'), pattern='*filtered*')
    >>> runs.systems
    ('indri-ql-cata-filtered', 'indri-ql-catb-filtered', 'indri-rm-cata-filtered', 'indri-rm-catb-filtered')
    """
    if sources.is_in_memory(paths):
        return sources.runs_from(paths, names=names)
    if ipc.is_saved(paths):
        return RunSet.load(paths)
    files, optional = expand_paths(paths, pattern)
    key = None
    if cache:
        key = run_cache.key(files, names=names)
        hit = run_cache.lookup(cache, key)
        if hit is not None:
            return hit
    parsed = parse_skipping(files, optional, threads)
    files = [p.path for p in parsed]
    out = runset_from_parsed(parsed, names, tuple(str(p) for p in files))
    if key is not None:
        run_cache.store(cache, key, out)
    return out


def read_qrels(path) -> Qrels:
    """Read TREC qrels (``topic iteration docid grade``; plain or compressed) into `Qrels`.

    Negative grades count as 0 (judged non-relevant); grades must lie in -128..127. A
    document judged twice for a topic with different grades is an error naming the file and
    line. Blank lines and ``#`` comment lines are skipped, as trec_eval does. ``path`` may
    also be a saved Qrels (`Qrels.save`) or an in-memory source (a frame with columns
    ``qid, docno, label``, ``{qid: {docno: grade}}``, an ir_datasets qrels iterable, a ranx
    ``Qrels``): see `fastrisk.data.runs.sources.qrels_from`; or an ir_datasets id whose qrels are
    in its local cache (``"antique/test"``, PyTerrier's ``"irds:antique/test"``; see
    `fastrisk.data.runs.sources.qrels_from_dataset`).

    Parameters
    ----------
    path : str or os.PathLike or Qrels or an in-memory source
        The qrels file (plain or compressed), an ir_datasets id, or another source of judgments.

    Returns
    -------
    Qrels
        Grades per (topic, document).

    References
    ----------
    Voorhees, E. M. & Harman, D. K. (eds.) (2005). TREC: Experiment and Evaluation in Information Retrieval. MIT
    Press.

    Clarke, C. L. A., Craswell, N. & Voorhees, E. M. (2012). Overview of the TREC 2012 Web Track. TREC 2012.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> qrels = fastrisk.read_qrels(datasets.path('trec2012-web/qrels.adhoc.txt'))
    >>> len(qrels.topics), len(qrels.docids)
    (50, 16055)
    """
    if isinstance(path, Qrels):
        return path
    if sources.is_in_memory(path, qrels=True):
        return sources.qrels_from(path)
    if not isinstance(path, (str, os.PathLike)):
        raise InputError(f"`qrels` must be a path or an in-memory qrels source, got {type(path).__name__}")
    if sources.dataset_id(path) is not None:
        return sources.qrels_from_dataset(path)
    path = Path(path)
    if not path.is_file():
        raise InputError(not_a_regular_file(path) or f"qrels file {str(path)!r} does not exist")
    if ipc.is_saved(path):
        return Qrels.load(path)
    return read_qrels_file(path)
