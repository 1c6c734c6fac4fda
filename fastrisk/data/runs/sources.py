"""Runs and qrels from in-memory sources, with the same validation as files.

Runs: a pandas/polars DataFrame or Arrow table with PyTerrier's columns ``qid, docno,
score`` (``rank`` is ignored; a ``system``/``run_id``/``name`` column splits several systems),
a ``{name: frame}`` mapping, pytrec_eval-style dicts (``{qid: {docno: score}}`` for one run,
``{name: {qid: {docno: score}}}`` for several), ranx ``Run`` objects, or a list of these.
ranx's frames (``Run.to_dataframe()``: ``q_id, doc_id, score``) are read as they are.
Qrels: a frame with ``qid, docno, label`` (or ir_datasets' ``query_id, doc_id, relevance``, or
ranx's ``q_id, doc_id, score``, where ``score`` is the grade), ``{qid: {docno: grade}}``, an
ir_datasets qrels iterable (``dataset.qrels_iter()``), a ranx ``Qrels``, or an ir_datasets id
(``"antique/test"``, PyTerrier's ``"irds:antique/test"``) whose qrels are in ir_datasets' local
cache (`qrels_from_dataset`). `scores_from_pytrec_eval` turns pytrec_eval's results
(``{qid: {measure: value}}`` per run) into score arrays. Topic and document ids are read as
strings. Bad input raises `InputError` naming the system and the row.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fastrisk.data.runs.assemble import runset_from_parsed
from fastrisk.data.runs.model import Qrels
from fastrisk.data.runs.qrelsfile import qrels_from_columns
from fastrisk.data.runs.runfile import run_from_columns
from fastrisk.errors import InputError

__all__ = ["qrels_from", "qrels_from_dataset", "runs_from", "scores_from_pytrec_eval"]

_QID = ("qid", "query_id", "q_id", "topic")
_DOCNO = ("docno", "doc_id", "docid")
_SCORE = ("score",)
_LABEL = ("label", "relevance", "grade", "rel", "score")  # "score": ranx's Qrels.to_dataframe()
_SYSTEM = ("system", "run_id", "run", "name")


def _is_frame(obj) -> bool:
    if isinstance(obj, (pa.Table, pa.RecordBatch)):
        return True
    mod = type(obj).__module__
    return type(obj).__name__ == "DataFrame" and mod.startswith(("pandas", "polars"))


def _is_ranx(obj, kind: str) -> bool:
    return type(obj).__name__ == kind and type(obj).__module__.startswith("ranx")


def is_in_memory(obj, *, qrels: bool = False) -> bool:
    """True if ``obj`` is not a path (or a list of paths) but an in-memory source."""
    if isinstance(obj, (str, os.PathLike)):
        return False
    if isinstance(obj, (list, tuple)):
        return any(not isinstance(x, (str, os.PathLike)) for x in obj)
    return _is_frame(obj) or isinstance(obj, Mapping) or _is_ranx(obj, "Qrels" if qrels else "Run") or (
        qrels and isinstance(obj, Iterable))


def _to_table(frame) -> pa.Table:
    if isinstance(frame, pa.Table):
        return frame
    if isinstance(frame, pa.RecordBatch):
        return pa.Table.from_batches([frame])
    if type(frame).__module__.startswith("polars"):
        return frame.to_arrow()
    return pa.Table.from_pandas(frame, preserve_index=False)


def _column(table: pa.Table, names, what: str, label: str) -> pa.Array:
    for n in names:
        if n in table.column_names:
            col = table.column(n).combine_chunks()
            if pa.types.is_dictionary(col.type):
                col = col.cast(col.type.value_type)
            return col
    raise InputError(f"{label}: needs a {what} column (one of {', '.join(names)}); has {table.column_names}")


def _as_strings(col: pa.Array, what: str, label: str) -> pa.Array:
    if col.null_count:
        raise InputError(f"{label}, row {int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])}: "
                         f"{what} is missing")
    try:
        return pc.cast(col, pa.string())
    except pa.ArrowException:
        raise InputError(f"{label}: the {what} column ({col.type}) cannot be read as text") from None


def _run_from_table(table: pa.Table, tag: str, label: str):
    topics = _as_strings(_column(table, _QID, "query id", label), "qid", label)
    docs = _as_strings(_column(table, _DOCNO, "document id", label), "docno", label)
    score = _column(table, _SCORE, "score", label)
    if not (pa.types.is_integer(score.type) or pa.types.is_floating(score.type)):
        raise InputError(f"{label}: the score column must be numeric, got {score.type}")
    values = score.cast(pa.float64()).to_numpy(zero_copy_only=False)  # missing -> NaN, reported by row
    return run_from_columns(label, tag, topics, docs, values)


def _nested_to_table(run: Mapping, value: str) -> pa.Table:
    qids, docs, vals = [], [], []
    for q, per in run.items():
        if not isinstance(per, Mapping):
            raise InputError(f"a nested dict source maps each query id to {{docno: {value}}}, got "
                             f"{type(per).__name__} for {q!r}")
        qids.extend([str(q)] * len(per))
        docs.extend(str(d) for d in per)
        vals.extend(per.values())
    try:
        arr = np.asarray(vals, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"nested dict source: every {value} must be a number") from None
    return pa.table({"qid": pa.array(qids, pa.string()), "docno": pa.array(docs, pa.string()), value: arr})


def _is_single_nested(d: Mapping) -> bool:
    """``{qid: {docno: number}}`` (one run) rather than ``{name: {qid: {...}}}``."""
    for per in d.values():
        if isinstance(per, Mapping):
            for v in per.values():
                return not isinstance(v, Mapping)
    return True


def _one_system(obj, name: str):
    label = f"system {name!r}"
    if _is_frame(obj):
        table = _to_table(obj)
        if any(c in table.column_names for c in _SYSTEM):
            raise InputError(f"{label}: a frame with a system column cannot be one system of a mapping")
        return _run_from_table(table, name, label)
    if _is_ranx(obj, "Run"):
        return _run_from_table(_nested_to_table(obj.to_dict(), "score"), name, label)
    if isinstance(obj, Mapping):
        return _run_from_table(_nested_to_table(obj, "score"), name, label)
    raise InputError(f"{label}: expected a frame, a {{qid: {{docno: score}}}} dict or a ranx Run, "
                     f"got {type(obj).__name__}")


def _parsed_runs(source, names):
    if _is_frame(source):
        table = _to_table(source)
        sys_col = next((c for c in _SYSTEM if c in table.column_names), None)
        if sys_col is None:
            return [_run_from_table(table, (names or ["run"])[0], "run frame")]
        systems = _as_strings(_column(table, (sys_col,), "system", "run frame"), "system", "run frame")
        enc = pc.dictionary_encode(systems)
        codes = enc.indices.to_numpy(zero_copy_only=False)
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(enc.dictionary) + 1))
        out = []
        for i, name in enumerate(enc.dictionary.to_pylist()):
            rows = table.take(pa.array(order[bounds[i]:bounds[i + 1]]))
            out.append(_run_from_table(rows, name, f"system {name!r}"))
        return out
    if _is_ranx(source, "Run"):
        return [_one_system(source, getattr(source, "name", None) or "run")]
    if isinstance(source, Mapping):
        if _is_single_nested(source) and not any(_is_frame(v) or _is_ranx(v, "Run") for v in source.values()):
            return [_one_system(source, (names or ["run"])[0])]
        return [_one_system(v, str(k)) for k, v in source.items()]
    if isinstance(source, (list, tuple)):
        out = []
        for i, item in enumerate(source):
            name = getattr(item, "name", None) if _is_ranx(item, "Run") else None
            out.append(_one_system(item, name or f"run{i}"))
        return out
    raise InputError(f"`runs`: unsupported source {type(source).__name__}")


def runs_from(source, *, names=None):
    """A `RunSet` from an in-memory source (see the module docstring)."""
    parsed = _parsed_runs(source, names)
    if not parsed:
        raise InputError("`runs` holds no run")
    return runset_from_parsed(parsed, names)


def qrels_from(source):
    """A `Qrels` from an in-memory source (see the module docstring)."""
    if _is_ranx(source, "Qrels"):
        source = source.to_dict()
    if _is_frame(source):
        table = _to_table(source)
    elif isinstance(source, Mapping):
        table = _nested_to_table(source, "label")
    elif isinstance(source, Iterable) and not isinstance(source, (str, bytes)):
        qids, docs, grades = [], [], []
        for i, row in enumerate(source):
            try:
                qids.append(str(row.query_id))
                docs.append(str(row.doc_id))
                grades.append(int(row.relevance))
            except (AttributeError, TypeError, ValueError):
                raise InputError(f"qrels iterable, row {i}: expected ir_datasets qrels "
                                 "(query_id, doc_id, relevance)") from None
        table = pa.table({"qid": pa.array(qids, pa.string()), "docno": pa.array(docs, pa.string()),
                          "label": pa.array(grades, pa.int64())})
    else:
        raise InputError(f"`qrels`: unsupported source {type(source).__name__}")
    label = "qrels"
    topics = _as_strings(_column(table, _QID, "query id", label), "qid", label)
    docs = _as_strings(_column(table, _DOCNO, "document id", label), "docno", label)
    grade = _column(table, _LABEL, "label", label)
    if not (pa.types.is_integer(grade.type) or pa.types.is_floating(grade.type)):
        raise InputError(f"qrels: the label column must be numeric, got {grade.type}")
    if grade.null_count:
        raise InputError("qrels: the label column has missing values")
    return Qrels.from_rows(*qrels_from_columns(label, topics, docs, grade.to_numpy(zero_copy_only=False)))


# ---------------------------------------------------------------------------- ir_datasets ids
IRDS_PREFIX = "irds:"


def dataset_id(obj) -> str | None:
    """The ir_datasets id ``obj`` names: ``"irds:<id>"`` (PyTerrier's prefix) always, a bare
    ``"<id>"`` when it is not a path on disk and ir_datasets (installed) registers it; else None."""
    if not isinstance(obj, str):
        return None
    if obj.startswith(IRDS_PREFIX):
        return obj[len(IRDS_PREFIX):]
    if "/" not in obj or os.path.exists(obj):
        return None
    try:
        import ir_datasets  # optional and slow to import (~0.5 s): only for a string that is no file
    except ImportError:
        return None
    return obj if obj in ir_datasets.registry else None


def _download_cached(dlc, depth: int = 0) -> bool | None:
    """Whether an ir_datasets download object's file is on disk (its ``_cache_path`` or
    ``_path``; wrappers' ``_streamer``/``_dlc`` followed); None when that cannot be told."""
    if dlc is None or depth > 8:
        return None
    for attr in ("_cache_path", "_path"):
        path = getattr(dlc, attr, None)
        if isinstance(path, (str, os.PathLike)):
            return os.path.exists(path)
    for attr in ("_streamer", "_dlc", "dlc"):
        inner = getattr(dlc, attr, None)
        if inner is not None:
            return _download_cached(inner, depth + 1)
    return None


def qrels_from_dataset(name: str):
    """The qrels of ir_datasets' dataset ``name`` (``"irds:"`` prefix allowed), read from its local
    cache: an `InputError` naming the id and how to download it when they are not there (fastrisk
    never downloads), or when ir_datasets is not installed or does not know the id."""
    ident = name[len(IRDS_PREFIX):] if name.startswith(IRDS_PREFIX) else name
    try:
        import ir_datasets  # optional dependency, imported only when a dataset id is given
    except ImportError:
        raise InputError(f"qrels {name!r} looks like an ir_datasets id, but ir_datasets is not installed "
                         "(pip install ir_datasets)") from None
    if ident not in ir_datasets.registry:
        raise InputError(f"qrels {name!r}: ir_datasets knows no dataset {ident!r} (and no such file exists)")
    dataset = ir_datasets.load(ident)
    if not dataset.has_qrels():
        raise InputError(f"qrels {name!r}: ir_datasets' dataset {ident!r} has no qrels")
    handler = dataset.qrels_handler()
    cached = _download_cached(getattr(handler, "_qrels_dlc", None))
    if not cached:
        why = "are not in ir_datasets' local cache" if cached is False else "cannot be found in a local cache"
        raise InputError(f"qrels {name!r}: the qrels of ir_datasets' {ident!r} {why} ({ir_datasets.util.home_path()}) "
                         f"and fastrisk does not download; on a machine with network run `ir_datasets export "
                         f"{ident} qrels > qrels.txt` and pass that file, or call "
                         f"ir_datasets.load({ident!r}).qrels_iter() once to fill the cache")
    return qrels_from(dataset.qrels_iter())


# ---------------------------------------------------------------------------- pytrec_eval results
def scores_from_pytrec_eval(results, names=None):
    """pytrec_eval's per-topic results as score arrays.

    ``results``: one run's ``RelevanceEvaluator.evaluate`` output ``{qid: {measure: value}}``, a
    ``{name: {qid: {measure: value}}}`` mapping, or a list of the former (named by ``names``, else
    ``run0``, ``run1``, ...). Every run must report the same topics and measures.

    Returns ``(measures, systems, topics, values)`` with ``values[measure, system, topic]``;
    measures and topics in the order of the first run.
    """
    if isinstance(results, Mapping) and results and all(
            isinstance(v, Mapping) and all(not isinstance(x, Mapping) for x in v.values()) for v in results.values()):
        results = [results]  # one run: {qid: {measure: value}}
    if isinstance(results, Mapping):
        keys, runs = [str(k) for k in results], list(results.values())
    elif isinstance(results, (list, tuple)):
        keys, runs = [f"run{i}" for i in range(len(results))], list(results)
    else:
        raise InputError(f"`results` must be pytrec_eval results ({{qid: {{measure: value}}}} per run), got "
                         f"{type(results).__name__}")
    if names is not None:
        names = [str(n) for n in names]
        if len(names) != len(runs):
            raise InputError(f"`names` has {len(names)} entries for {len(runs)} runs of pytrec_eval results")
        keys = names
    if not runs:
        raise InputError("`results` holds no run")
    first = runs[0]
    if not isinstance(first, Mapping) or not first:
        raise InputError(f"pytrec_eval results of {keys[0]!r}: expected {{qid: {{measure: value}}}} with at least "
                         "one topic")
    topics = [str(q) for q in first]
    measures = list(next(iter(first.values())))
    values = np.empty((len(measures), len(runs), len(topics)))
    for s, (key, run) in enumerate(zip(keys, runs)):
        if not isinstance(run, Mapping) or {str(q) for q in run} != set(topics):
            got = set(map(str, run)) if isinstance(run, Mapping) else set()
            raise InputError(f"pytrec_eval results of {key!r}: topics differ from {keys[0]!r}'s "
                             f"(missing {sorted(set(topics) - got)[:5]}, extra {sorted(got - set(topics))[:5]})")
        by_topic = {str(q): v for q, v in run.items()}
        for t, q in enumerate(topics):
            row = by_topic[q]
            if not isinstance(row, Mapping):
                raise InputError(f"pytrec_eval results of {key!r}, topic {q!r}: expected {{measure: value}}")
            for i, m in enumerate(measures):
                try:
                    values[i, s, t] = float(row[m])
                except KeyError:
                    raise InputError(f"pytrec_eval results of {key!r}, topic {q!r}: no measure {m!r}") from None
                except (TypeError, ValueError):
                    raise InputError(f"pytrec_eval results of {key!r}, topic {q!r}, measure {m!r}: not a "
                                     "number") from None
    return measures, keys, topics, values
