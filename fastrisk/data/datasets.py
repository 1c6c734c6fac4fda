"""The real TREC data bundled with fastrisk (provenance: ``bench_data/README.md``)."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from fastrisk.data.io import read_matrix
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.errors import InputError

#: Known runs of the TREC 2012 Web track matrices (anonymised columns of the source data).
TREC2012_WEB_RUNS = {"run24": "uogTrA44xi", "run22": "srchvrs12c09", "run21": "qutwb"}
_MATRICES = {"web2010": range(51, 101), "web2011": range(101, 151), "web2012": range(151, 201),
             "web2013": range(201, 251)}
#: File suffix of a bundled matrix -> its measure as ir_measures writes it.
MEASURES = {"err20": "ERR@20", "ndcg20": "nDCG@20", "ap": "AP", "p10": "P@10", "rr": "RR"}


def path(name: str) -> Path:
    """Path of a bundled file, e.g. ``path("trec2012-web/baseline-indriCASP.csv")``: a name
    inside the bundled data, never a path out of it (``..``, an absolute path, a link).

    Parameters
    ----------
    name : str
        The file's path inside ``fastrisk/bench_data``.

    Returns
    -------
    pathlib.Path
        Where it is installed (`InputError` if there is no such file).
    """
    root = Path(str(resources.files("fastrisk.bench_data")))
    p = root / name
    parts = Path(name).parts
    if Path(name).is_absolute() or ".." in parts or not p.exists() \
            or not Path(os.path.realpath(p)).is_relative_to(os.path.realpath(root)):
        raise InputError(f"no bundled file {name!r}")
    return p


def bundled_matrices() -> tuple:
    """Names of the bundled per-topic matrices (``trec_matrix``'s names).

    Returns
    -------
    tuple of str
        ``COLLECTION_MEASURE`` names, sorted.
    """
    root = Path(str(resources.files("fastrisk.bench_data"))) / "trec-matrices"
    return tuple(sorted(p.stem for p in root.glob("*.csv")))


def trec_matrix(name: str) -> ScoreMatrix:
    """A bundled per-topic matrix, e.g. ``trec_matrix("web2012_err20")`` or ``"adhoc8_ap"``.

    Web-track topic ids are restored from the track (2012: 151-200); ad hoc topics are
    numbered by row. Run names are the anonymised ``run1``, ``run2``, ... of the source.

    Parameters
    ----------
    name : str
        ``COLLECTION_MEASURE``: a file of ``bench_data/trec-matrices`` without ``.csv``.

    Returns
    -------
    ScoreMatrix
        Systems x topics, its ``measure`` as ir_measures writes it.
    """
    if name not in bundled_matrices():
        raise InputError(f"no bundled matrix {name!r}: one of {', '.join(bundled_matrices())}")
    collection, _, measure = name.partition("_")
    topics = _MATRICES.get(collection)
    p = path(f"trec-matrices/{name}.csv")
    m = read_matrix(p, measure=MEASURES.get(measure, measure.upper()) if measure else None)
    if topics is not None and len(topics) == m.n_topics:
        m = ScoreMatrix(m.values, m.systems, list(topics), m.measure)
    return m


def trec2012_web(measure: str = "err20", *, rename: bool = True):
    """TREC 2012 Web track: the 48 runs' matrix and the official risk baseline indriCASP.

    Parameters
    ----------
    measure : {"ERR@20", "nDCG@20", "err20", "ndcg20"}
        The measure; the matrix's ``measure`` is written as ir_measures writes it.
    rename : bool
        Give the three runs of the published tables their real names (uogTrA44xi,
        srchvrs12c09, qutwb) instead of the anonymised ``runN``.

    Returns
    -------
    matrix : ScoreMatrix
        The 48 runs x 50 topics (151-200).
    baseline : dict
        Topic id -> score of indriCASP (the official gdeval output).
    """
    measure = {"ERR@20": "err20", "nDCG@20": "ndcg20"}.get(measure, measure)
    if measure not in ("err20", "ndcg20"):
        raise InputError(f"`measure` must be 'ERR@20' or 'nDCG@20' (or 'err20', 'ndcg20'), got {measure!r}")
    m = trec_matrix(f"web2012_{measure}")
    if rename:
        m = ScoreMatrix(m.values, [TREC2012_WEB_RUNS.get(s, s) for s in m.systems], m.topics, m.measure)
    base = read_matrix(path("trec2012-web/baseline-indriCASP.csv"))
    baseline = dict(zip(base.topics, base.scores_of(measure)))
    return m, baseline
