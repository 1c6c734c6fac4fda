"""Data sources of a sweep: bundled names and files, loaded (and cached) where they are used."""

from __future__ import annotations

import fnmatch
import functools
from dataclasses import dataclass
from pathlib import Path

from fastrisk.data import datasets
from fastrisk.data.datasets import path
from fastrisk.data.io import read_matrix
from fastrisk.data.runs import read_qrels, read_runs
from fastrisk.errors import InputError

_TREC2012_MEASURES = ("err20", "ndcg20")


def _bundled_matrix_names() -> list[str]:
    return sorted(p.stem for p in path("trec-matrices").glob("*.csv"))


def _expand_source(spec, base_dir: Path | None) -> list:
    """A data source spec -> one or more concrete specs (glob patterns of bundled matrices),
    checked to exist: ``trec:NAME`` (``trec:web*`` patterns), ``trec2012-web:err20``,
    ``trec2012-web:runs``, or a file path (relative to the grid file)."""
    if not isinstance(spec, str):
        return [spec]
    if spec.startswith("trec:"):
        pattern = spec[5:]
        names = _bundled_matrix_names()
        found = [n for n in names if fnmatch.fnmatchcase(n, pattern)]
        if not found:
            raise InputError(f"data source {spec!r} matches no bundled matrix (known: {', '.join(names)})")
        return [f"trec:{n}" for n in found]
    if spec.startswith("trec2012-web:"):
        what = spec.partition(":")[2]
        if what not in _TREC2012_MEASURES + ("runs",):
            raise InputError(f"data source {spec!r}: expected trec2012-web:err20, trec2012-web:ndcg20 or "
                             "trec2012-web:runs")
        return [spec]
    p = Path(spec)
    if not p.is_absolute() and base_dir is not None and (base_dir / p).exists():
        p = base_dir / p
    if not p.exists():
        raise InputError(f"data source {spec!r} is not a bundled name (trec:NAME, trec2012-web:MEASURE) "
                         f"nor an existing file")
    return [str(p.resolve())]


def _source_kind(spec: str) -> str:
    return "runs" if spec == "trec2012-web:runs" or Path(spec).is_dir() else "matrix"


@dataclass(frozen=True)
class _Source:
    """A data source to be loaded where it is used (and cached there)."""

    spec: str
    what: str


def _load(spec: str, what: str):
    if what == "runs":
        return _load_runs(spec)
    if spec.startswith("trec:"):
        return datasets.trec_matrix(spec[5:])
    if spec.startswith("trec2012-web:"):
        return datasets.trec2012_web(spec.partition(":")[2])[0]

    return read_matrix(spec)


def _load_runs(spec: str):
    if spec == "trec2012-web:runs":
        return read_runs(sorted(path("trec2012-web/runs").glob("*.run*"))), read_qrels(
            path("trec2012-web/qrels.adhoc.txt"))
    p = Path(spec)
    if p.is_dir():
        qrels = sorted(p.glob("qrels*"))
        if len(qrels) != 1:
            raise InputError(f"a runs directory needs exactly one qrels* file; {p} has {len(qrels)}")
        runs = sorted(f for f in p.iterdir() if f.is_file() and f != qrels[0])
        return read_runs(runs), read_qrels(qrels[0])
    raise InputError(f"runs data source {spec!r} must be trec2012-web:runs or a directory of runs and one qrels")


@functools.lru_cache(maxsize=8)
def _load_cached(spec: str, what: str):
    return _load(spec, what)


def _materialise(data):
    return _load_cached(data.spec, data.what) if isinstance(data, _Source) else data
