"""LETOR data: documents grouped by query, with graded relevance labels and features.

Reads the svmlight/LETOR text format (``label qid:Q 1:v 3:v ... # comment``, feature ids
1-based, absent features are 0) and LightGBM's ``.query`` group files (one query size per
line, queries in file order), as in LETOR 4.0 / MSLR-WEB and LightGBM's lambdarank example.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fastrisk._runtime.atomic import atomic_open, write_text
from fastrisk._runtime.resources import check_memory, format_bytes
from fastrisk._runtime.validation import positive_int
from fastrisk.data.datasets import path
from fastrisk.errors import InputError


@dataclass(frozen=True, eq=False)
class LetorData:
    """Documents of ``n_queries`` queries stored query after query.

    ``features`` (n, F) float64, ``labels`` (n,) int64 grades >= 0, ``boundaries``
    (n_queries + 1,) int64 offsets (query q holds rows ``boundaries[q]:boundaries[q+1]``),
    ``qids`` the query ids (strings), ``source`` where the data came from.
    """

    features: np.ndarray
    labels: np.ndarray
    boundaries: np.ndarray
    qids: tuple
    source: str | None = None

    @property
    def n_queries(self) -> int:
        return len(self.qids)

    @property
    def n_documents(self) -> int:
        return int(self.labels.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.features.shape[1])

    @property
    def group(self) -> np.ndarray:
        """Query sizes, the ``group`` of a LightGBM Dataset."""
        return np.diff(self.boundaries)

    def __repr__(self) -> str:
        return (f"LetorData(queries={self.n_queries}, documents={self.n_documents}, "
                f"features={self.n_features}, grades={sorted(set(self.labels.tolist()))})")

    def subset(self, queries) -> LetorData:
        """The data of the queries at positions ``queries`` (in that order)."""
        idx = np.asarray(queries, dtype=np.int64)
        rows = np.concatenate([np.arange(self.boundaries[q], self.boundaries[q + 1]) for q in idx]) \
            if idx.size else np.zeros(0, np.int64)
        sizes = self.group[idx]
        return LetorData(self.features[rows], self.labels[rows], np.concatenate([[0], np.cumsum(sizes)]),
                         tuple(self.qids[q] for q in idx), self.source)


def letor_data(features, labels, group, *, qids=None, source: str | None = None) -> LetorData:
    """Validated `LetorData` from arrays.

    Labels must be integer grades >= 0, features finite, every query non-empty.

    Parameters
    ----------
    features : array_like, shape (n_documents, n_features)
        The documents' features, query after query.
    labels : array_like of int, shape (n_documents,)
        Relevance grades.
    group : array_like of int
        The query sizes (LightGBM's ``group``).
    qids : sequence, optional
        Query ids (default ``"0", "1", ...``).
    source : str, optional
        Where the data come from (shown in results).

    Returns
    -------
    LetorData
    """
    where = f" in {source}" if source else ""
    X = np.array(features, dtype=np.float64, order="C", copy=True)
    y = np.asarray(labels)
    if X.ndim != 2:
        raise InputError(f"`features` must be a 2-d array (documents x features), got {X.ndim} dimension(s)")
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise InputError(f"`labels` must have one grade per document ({X.shape[0]}), got shape {y.shape}")
    yf = y.astype(np.float64)
    bad = ~np.isfinite(yf) | (yf < 0) | (yf != np.round(yf))
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"`labels` must be integer grades >= 0; document {i}{where} has label {y[i]!r}")
    finite = np.isfinite(X)
    if not finite.all():
        i, j = (int(v) for v in np.argwhere(~finite)[0])
        raise InputError(f"feature {j + 1} of document {i}{where} is {X[i, j]}; features must be finite "
                         f"({int((~finite).sum())} non-finite value(s) in all)")
    g = np.asarray(group)
    if g.ndim != 1 or g.size == 0 or not np.issubdtype(g.dtype, np.number) or (g != np.round(g)).any() \
            or (g < 1).any():
        raise InputError(f"`group` must be a non-empty list of positive query sizes{where}")
    g = g.astype(np.int64)
    if int(g.sum()) != X.shape[0]:
        raise InputError(f"`group` sizes add up to {int(g.sum())} documents but there are {X.shape[0]}{where}")
    if qids is None:
        qids = tuple(str(q) for q in range(len(g)))
    else:
        qids = tuple(str(q) for q in qids)
        if len(qids) != len(g):
            raise InputError(f"`qids` must name every query ({len(g)}), got {len(qids)}")
        if len(set(qids)) != len(qids):
            raise InputError(f"`qids` must be unique{where}")
    return LetorData(X, yf.astype(np.int64), np.concatenate([[0], np.cumsum(g)]).astype(np.int64), qids, source)


#: Feature ids above this are refused unless ``max_features`` (``--max-features``) allows
#: them: the features are stored densely (documents x largest id x 8 bytes), and public LETOR
#: sets use at most a few hundred (MSLR-WEB 136, Yahoo! 700, Istella 220).
MAX_FEATURES = 10_000


def _parse_svmlight(path: Path, n_features: int | None, max_features: int = MAX_FEATURES):
    labels, qids, rows, cols, vals = [], [], [], [], []
    n = 0
    limit = max(max_features, n_features or 0)
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            tokens = line.split()
            try:
                labels.append(float(tokens[0]))
            except ValueError:
                raise InputError(f"{path}, line {lineno}: the label {tokens[0]!r} is not a number") from None
            qid = None
            seen = set()
            for tok in tokens[1:]:
                key, sep, value = tok.partition(":")
                if not sep:
                    raise InputError(f"{path}, line {lineno}: expected 'feature:value', got {tok!r}")
                if key == "qid":
                    qid = value
                    continue
                try:
                    j, v = int(key), float(value)
                except ValueError:
                    raise InputError(f"{path}, line {lineno}: bad feature {tok!r}") from None
                if j < 1:
                    raise InputError(f"{path}, line {lineno}: feature ids start at 1, got {j}")
                if j in seen:
                    raise InputError(f"{path}, line {lineno}: feature {j} appears twice on the line")
                seen.add(j)
                if j > limit:
                    raise InputError(f"{path}, line {lineno}: feature id {j} is beyond the limit of {limit:,} "
                                     f"features (they are stored densely: each document would take "
                                     f"{format_bytes(8 * j)}); if the id is right, raise the limit with "
                                     f"--max-features {j} (max_features= in the API)")
                if not math.isfinite(v):
                    raise InputError(f"{path}, line {lineno}: feature {j} is {value}; features must be finite")
                rows.append(n)
                cols.append(j - 1)
                vals.append(v)
            qids.append(qid)
            n += 1
    if n == 0:
        raise InputError(f"{path}: no documents")
    width = (max(cols) + 1) if cols else 0
    if n_features is not None:
        if width > n_features:
            raise InputError(f"{path}: feature {width} exceeds `n_features` = {n_features}")
        width = n_features
    check_memory(8.0 * n * width, f"{path}: {n:,} documents x {width:,} features",
                 "use fewer features (renumber the ids) or fewer documents")
    X = np.zeros((n, width))
    X[np.asarray(rows, np.int64), np.asarray(cols, np.int64)] = vals
    return X, np.asarray(labels), qids


def _check_labels(path, labels) -> None:
    bad = (labels < 0) | (labels != np.round(labels))
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"{path}, document {i + 1}: label {labels[i]} is not an integer grade >= 0")


def read_letor(path, *, query=None, n_features: int | None = None, max_features: int = MAX_FEATURES) -> LetorData:
    """Read an svmlight/LETOR file, grouping documents by ``qid:`` or by a ``.query`` file.

    A query's documents must be contiguous; a feature id twice on one line is an error.

    Parameters
    ----------
    path : str or path-like
        The svmlight file.
    query : str or path-like, optional
        LightGBM's group file (one query size per line). If omitted, the ``qid:`` fields group
        the documents; if there are none, ``<path>.query`` is used when it exists.
    n_features : int, optional
        The width (so that train and test files agree); default the largest feature id present.
    max_features : int
        Feature ids above it are refused, naming the line (default `MAX_FEATURES`).

    Returns
    -------
    LetorData
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"no LETOR file {str(path)!r}")
    X, labels, qids = _parse_svmlight(path, n_features, positive_int(max_features, "max_features"))
    _check_labels(path, labels)
    has_qid = [q is not None for q in qids]
    if query is None and not any(has_qid) and Path(str(path) + ".query").is_file():
        query = Path(str(path) + ".query")
    if query is not None:
        query = Path(query)
        if not query.is_file():
            raise InputError(f"no query (group) file {str(query)!r}")
        try:
            sizes = [int(t) for t in query.read_text().split()]
        except ValueError:
            raise InputError(f"{query}: every line must be a query size (an integer)") from None
        if any(s < 1 for s in sizes):
            raise InputError(f"{query}: query sizes must be positive")
        if sum(sizes) != X.shape[0]:
            raise InputError(f"{query}: the query sizes add up to {sum(sizes)} documents but {path} has "
                             f"{X.shape[0]}")
        return letor_data(X, labels, sizes, source=str(path))
    if not all(has_qid):
        i = has_qid.index(False)
        raise InputError(f"{path}: document {i + 1} has no 'qid:' and no .query group file was given")
    sizes, names, seen = [], [], set()
    for i, q in enumerate(qids):
        if names and q == names[-1]:
            sizes[-1] += 1
            continue
        if q in seen:
            raise InputError(f"{path}: the documents of qid {q} are not contiguous (document {i + 1})")
        seen.add(q)
        names.append(q)
        sizes.append(1)
    return letor_data(X, labels, sizes, qids=names, source=str(path))


def write_letor(data: LetorData, path, *, query_file: bool = False) -> None:
    """Write ``data`` in svmlight format with ``qid:`` (and a ``.query`` file if asked).

    Parameters
    ----------
    data : LetorData
        What is written.
    path : str or path-like
        The svmlight file.
    query_file : bool
        Also write LightGBM's group file ``<path>.query``.
    """
    path = Path(path)
    qid_of = np.repeat(np.arange(data.n_queries), data.group)
    with atomic_open(path, "w") as fh:
        for i in range(data.n_documents):
            nz = np.flatnonzero(data.features[i])
            feats = " ".join(f"{j + 1}:{data.features[i, j]:.17g}" for j in nz)
            fh.write(f"{data.labels[i]} qid:{data.qids[qid_of[i]]} {feats}\n")
    if query_file:
        write_text(Path(str(path) + ".query"), "".join(f"{s}\n" for s in data.group))


def _bundled(name: str) -> Path:
    try:
        return path(name)
    except InputError:  # a source tree whose bench_data is not the installed one
        p = Path(__file__).resolve().parents[2] / "bench_data" / name
        if not p.exists():
            raise
        return p


def lightgbm_example() -> tuple[LetorData, LetorData]:
    """LightGBM's lambdarank example data (MIT): 201 training and 50 test queries, 300 features.

    Returns
    -------
    train, test : LetorData
    """
    train = read_letor(_bundled("letor-lightgbm/rank.train"), query=_bundled("letor-lightgbm/rank.train.query"),
                       n_features=300)
    test = read_letor(_bundled("letor-lightgbm/rank.test"), query=_bundled("letor-lightgbm/rank.test.query"),
                      n_features=300)
    return train, test
