"""Per-topic effectiveness of many runs at once, from TREC runs and qrels.

Measures are named, parsed and computed as ir_measures (and so PyTerrier) names them:

========================== =================================================================
name                       definition (rankings by score descending, ties by docid descending)
========================== =================================================================
``P@k``                    trec_eval ``P_k``: relevant (grade >= ``rel``) in the top k, / k
``R@k``                    trec_eval ``recall_k``: relevant in the top k / R
``AP``, ``AP@k``           trec_eval ``map`` / ``map_cut_k``: sum of precision at each
                           relevant rank (within k) / R
``RR``, ``RR@k``           trec_eval ``recip_rank``: 1 / rank of the first relevant (within k)
``Rprec``                  trec_eval ``Rprec``: relevant in the top R / R
``nDCG``, ``nDCG@k``       trec_eval ``ndcg`` / ``ndcg_cut_k``: gain = grade (linear),
                           discount log2(rank + 1), ideal from every judged document
``nDCG(dcg='exp-log2')@k`` gdeval (TREC Web track): gain 2^grade - 1, discount log2(rank + 1)
``ERR@k``                  gdeval: stop probability (2^grade - 1) / 2^4; grades above 4 are
                           rejected, as gdeval rejects them
``RBP(rel=r,p=x)@k``       Moffat & Zobel's rank-biased precision, binary at grade >= r
                           (``residual=True`` adds the residual)
``Judged@k``               judged share of the top min(k, run length) documents
========================== =================================================================

R is the number of documents judged with grade >= ``rel`` (``rel=`` thresholds: default 1,
e.g. ``P(rel=2)@10``); negative grades count as 0. A system that returned nothing for a
topic scores 0 there (trec_eval's ``-c``). Topics whose judgments hold no relevant document
are left out with a :class:`TopicMismatchWarning` (as gdeval does); ``no_relevant="keep"`` scores
them (0 for every measure but Judged), as trec_eval does.

``convention="gdeval"`` reads the bare ``nDCG@k`` as gdeval's ``nDCG(dcg='exp-log2')@k``,
the one-line migration for code written against fastrisk's earlier names.
:func:`evaluate` returns an :class:`Evaluation` (``result["nDCG@20"]`` is a ScoreMatrix, so
every risk measure runs on raw runs; ``to_arrow()`` is the long table).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from fastrisk._kernels import metrics as _km
from fastrisk._results import Result, array
from fastrisk._threads import limit_threads
from fastrisk._validation import listing
from fastrisk.errors import InputError, TopicMismatchWarning
from fastrisk.matrix import ScoreMatrix
from fastrisk.runs import Qrels, RunSet, align, read_qrels, read_runs

__all__ = ["GDEVAL", "Evaluation", "Measure", "TopicMismatchWarning", "evaluate", "parse_measure"]


_FAMILIES = {"p": "P", "r": "R", "recall": "R", "ap": "AP", "map": "AP", "rr": "RR", "mrr": "RR",
             "rprec": "Rprec", "ndcg": "nDCG", "err": "ERR", "rbp": "RBP", "judged": "Judged"}
_ALLOWED = {"P": {"rel"}, "R": {"rel"}, "AP": {"rel"}, "RR": {"rel"}, "Rprec": {"rel"},
            "nDCG": {"dcg"}, "ERR": set(), "RBP": {"rel", "p", "residual"}, "Judged": set()}
_NEEDS_CUTOFF = {"P", "R", "ERR"}
_NO_CUTOFF = {"Rprec"}
#: ERR's top grade (gdeval's ``$MAX_JUDGMENT``, the TREC Web track's scale 0..4).
ERR_MAX_GRADE = 4
#: Below this many (system x topic x rank) steps, ``evaluate`` runs on one thread.
_SERIAL_WORK = 1_000_000
_PATTERN = re.compile(r"^\s*([A-Za-z]+)\s*(?:\((.*)\))?\s*(?:@\s*(\S+))?\s*$")

#: The measure names of fastrisk before it followed ir_measures: under ``convention="gdeval"``
#: a bare ``nDCG@k`` means gdeval's ``nDCG(dcg='exp-log2')@k``.
GDEVAL = "gdeval"


@dataclass(frozen=True)
class Measure:
    """A parsed measure: family, cutoff and parameters (see :func:`parse_measure`)."""

    family: str
    cutoff: int | None
    rel: int = 1
    p: float = 0.8
    residual: bool = False
    dcg: str = "log2"
    max_grade: int = ERR_MAX_GRADE

    @property
    def code(self) -> int:
        if self.family == "nDCG":
            if self.dcg == "exp-log2":
                return _km.NDCG
            return _km.NDCG_LIN if self.cutoff is not None else _km.NDCG_LIN_FULL
        return {"P": _km.P, "RBP": _km.RBP, "ERR": _km.ERR, "AP": _km.AP, "RR": _km.RR, "Rprec": _km.RPREC,
                "R": _km.RECALL, "Judged": _km.JUDGED}[self.family]

    @property
    def name(self) -> str:
        """The canonical name, as ir_measures prints it (defaults omitted)."""
        params = []
        if self.family == "RBP":
            params.append(f"rel={self.rel}")
            if self.p != 0.8:
                params.append(f"p={self.p:g}")
            if self.residual:
                params.append("residual=True")
        elif "rel" in _ALLOWED[self.family] and self.rel != 1:
            params.append(f"rel={self.rel}")
        if self.family == "nDCG" and self.dcg != "log2":
            params.append(f"dcg='{self.dcg}'")
        base = self.family + (f"({','.join(params)})" if params else "")
        return base if self.cutoff is None else f"{base}@{self.cutoff}"

    def __str__(self) -> str:
        return self.name

    def depth(self, run_depth: int) -> int:
        """Number of ranks the measure looks at (without a cutoff: the whole run)."""
        return self.cutoff if self.cutoff is not None else max(int(run_depth), 1)

    def kernel_args(self):
        return self.code, float(self.p), int(self.rel), int(self.max_grade), bool(self.residual)


def _params(measure: str, family: str, text: str | None) -> dict:
    params = {}
    if text is None or not text.strip():
        return params
    for item in text.split(","):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or key not in _ALLOWED[family]:
            allowed = ", ".join(sorted(_ALLOWED[family])) or "none"
            raise InputError(f"measure {measure!r}: unknown parameter {item.strip()!r} (allowed: {allowed})")
        params[key] = value.strip().strip("'\"")
    return params


def _did_you_mean(measure: str, match) -> str:
    """" (did you mean 'nDCG@20')" for a misspelt family name (same parameters and cutoff)."""
    import difflib
    import re

    trec = re.fullmatch(r"([A-Za-z]+)_?(\d+)", measure)  # trec_eval's P_10, or P10
    if trec and trec.group(1).lower() in _FAMILIES:
        return f" (did you mean '{_FAMILIES[trec.group(1).lower()]}@{trec.group(2)}')"
    name = match.group(1) if match else measure.split("@")[0].split("(")[0]
    names = sorted({f for f in _FAMILIES.values()})
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.5) or \
        difflib.get_close_matches(name.lower(), [n.lower() for n in names], n=1, cutoff=0.5)
    if not close:
        return ""
    family = next(n for n in names if n.lower() == close[0].lower())
    return f" (did you mean {family + measure[len(name):] if measure.startswith(name) else family!r})"


def parse_measure(measure, *, convention: str | None = None) -> Measure:
    """Parse an ir_measures name (``nDCG@20``, ``AP``, ``P(rel=2)@10``, ``RBP(rel=1,p=0.8)@10``,
    ``nDCG(dcg='exp-log2')@20``) or pass a :class:`Measure` through.

    ``convention="gdeval"`` reads a bare ``nDCG@k`` as ``nDCG(dcg='exp-log2')@k``.

    Parameters
    ----------
    measure : str or Measure
        The name.
    convention : {None, "gdeval"}
        How to read a bare ``nDCG@k``.

    Returns
    -------
    Measure
        Family, cutoff and parameters; ``str(measure)`` is the canonical name.
    """
    if isinstance(measure, Measure):
        return measure
    if not isinstance(measure, str):
        raise InputError(f"`measure` must be a string such as 'nDCG@20', got {type(measure).__name__}")
    if convention not in (None, GDEVAL):
        raise InputError(f"`convention` must be None or 'gdeval', got {convention!r}")
    m = _PATTERN.match(measure)
    family = _FAMILIES.get(m.group(1).lower()) if m else None
    if family is None:
        raise InputError(
            f"unknown measure {measure!r}{_did_you_mean(measure, m)}: expected one of P@k, R@k, AP, AP@k, RR, "
            "RR@k, Rprec, nDCG, nDCG@k, nDCG(dcg='exp-log2')@k, ERR@k, RBP(rel=1,p=0.8)@k, Judged@k")
    params = _params(measure, family, m.group(2))
    cutoff = None
    if m.group(3) is not None:
        try:
            cutoff = int(m.group(3))
        except ValueError:
            cutoff = -1
        if cutoff < 1:
            raise InputError(f"measure {measure!r}: the cutoff after '@' must be a positive integer")
        if family in _NO_CUTOFF:
            raise InputError(f"measure {measure!r}: {family} takes no cutoff")
    elif family in _NEEDS_CUTOFF:
        raise InputError(f"measure {measure!r} needs a cutoff, e.g. {family}@10")
    kw = {}
    try:
        if "rel" in params:
            kw["rel"] = int(params["rel"])
            if kw["rel"] < 1:
                raise ValueError
        if "p" in params:
            kw["p"] = float(params["p"])
            if not 0.0 < kw["p"] < 1.0:
                raise ValueError
        if "residual" in params:
            flag = params["residual"].lower()
            if flag not in ("true", "false", "1", "0"):
                raise ValueError
            kw["residual"] = flag in ("true", "1")
    except ValueError:
        raise InputError(
            f"measure {measure!r}: `rel` must be a positive integer, `p` in (0, 1), `residual` True or False"
        ) from None
    if family == "nDCG":
        dcg = params.get("dcg", "exp-log2" if convention == GDEVAL else "log2")
        if dcg not in ("log2", "exp-log2"):
            raise InputError(f"measure {measure!r}: `dcg` must be 'log2' (trec_eval) or 'exp-log2' (gdeval)")
        if dcg == "exp-log2" and cutoff is None:
            raise InputError(f"measure {measure!r}: gdeval's nDCG needs a cutoff, e.g. nDCG(dcg='exp-log2')@20")
        kw["dcg"] = dcg
    return Measure(family, cutoff, **kw)


def _as_runs(runs) -> RunSet:
    return runs if isinstance(runs, RunSet) else read_runs(runs)


def _as_qrels(qrels) -> Qrels:
    return qrels if isinstance(qrels, Qrels) else read_qrels(qrels)


def _measures_iv(measures, convention=None) -> list[Measure]:
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    if not isinstance(measures, (list, tuple)):
        raise InputError("`measures` must be a measure name such as 'nDCG@20' or a list of names, "
                         f"got {type(measures).__name__}")
    out = [parse_measure(m, convention=convention) for m in measures]
    if not out:
        raise InputError("`measures` must name at least one measure")
    names = [m.name for m in out]
    if len(set(names)) != len(names):
        raise InputError(f"`measures` names a measure twice: {sorted({n for n in names if names.count(n) > 1})}")
    return out


def _check_err_grades(qrels: Qrels, measure: Measure) -> None:
    if measure.family != "ERR" or not len(qrels.grades):
        return
    over = qrels.grades > measure.max_grade
    if over.any():
        topic_of = np.repeat(np.arange(qrels.n_topics), np.diff(qrels.topic_offsets))
        bad = sorted({qrels.topics[i] for i in topic_of[over]})
        raise InputError(f"{measure.name} (gdeval) is defined for grades 0..{measure.max_grade}; the qrels grade "
                         f"above {measure.max_grade} on topics {listing(bad)}")


def score_matrix_values(runs: RunSet, qrels: Qrels, measure: Measure, *, condensed: bool = False):
    """(S, T) scores of every system on every topic of ``runs`` (no topic filtering)."""
    _check_err_grades(qrels, measure)
    j = align(runs, qrels)
    k = measure.depth(runs.depth)
    code, p, rel, maxg, residual = measure.kernel_args()
    norm = np.zeros(runs.n_topics, dtype=np.float64)
    _km.topic_norms(j.ideal_offsets, j.ideal_grades, k, code, rel, norm)
    out = np.empty((runs.n_systems, runs.n_topics), dtype=np.float64)
    _km.score_all(runs.docs, runs.lengths, runs.doc_offsets, j.grades, norm, code, k, p, rel, maxg,
                  residual, int(condensed), out)
    return out


@dataclass(frozen=True, repr=False)
class Evaluation(Result):
    """Scores of every system on every scored topic: ``values[measure, system, topic]``.

    ``result["AP"]`` is the measure's :class:`~fastrisk.matrix.ScoreMatrix`; ``to_arrow()``
    the long table ``measure, system, topic, value`` (ir_measures' per-query results);
    :meth:`means` the per-system mean table.
    """

    _coords = {"measure": {"measure": "measures"}}
    measures: tuple
    systems: tuple
    topics: tuple
    values: np.ndarray = array("measure", "system", "topic", column="value")
    no_relevant: str = "skip"

    @property
    def matrices(self) -> dict:
        return {name: ScoreMatrix(self.values[i], self.systems, self.topics, measure=name)
                for i, name in enumerate(self.measures)}

    def __getitem__(self, measure):
        name = measure if measure in self.measures else parse_measure(measure).name
        if name not in self.measures:
            raise InputError(f"measure {name!r} was not evaluated; have {list(self.measures)}")
        i = self.measures.index(name)
        return ScoreMatrix(self.values[i], self.systems, self.topics, measure=name)

    def means(self):
        """Per-system mean over the scored topics: a table ``system, <measure>...``."""

        cols = {"system": pa.array(list(self.systems), pa.string())}
        for i, name in enumerate(self.measures):
            cols[name] = pa.array(self.values[i].mean(axis=1) if self.topics else np.full(len(self.systems), np.nan))
        return pa.table(cols)


def _topic_checks(runs: RunSet, qrels: Qrels, j, no_relevant: str) -> np.ndarray:
    run_topics, qrel_topics = set(runs.topics), set(qrels.topics)
    only_runs = sorted(run_topics - qrel_topics)
    only_qrels = sorted(qrel_topics - run_topics)
    if not (run_topics & qrel_topics):
        raise InputError(f"no topic of the runs is judged in the qrels (runs: {listing(sorted(run_topics), 5)}; "
                         f"qrels: {listing(sorted(qrel_topics), 5)})")
    if only_runs or only_qrels:
        warnings.warn(f"topics do not match between runs and qrels: {len(only_runs)} only in the runs "
                      f"({listing(only_runs, 20)}), {len(only_qrels)} only in the qrels ({listing(only_qrels, 20)}); "
                      "topics only in the runs are not scored, topics only in the qrels are left out",
                      TopicMismatchWarning, stacklevel=3)
    judged = np.array([t in qrel_topics for t in runs.topics])
    if no_relevant == "keep":
        return np.flatnonzero(judged)
    empty = judged & ~j.has_relevant
    if empty.any():
        names = [runs.topics[i] for i in np.flatnonzero(empty)]
        warnings.warn(f"{len(names)} judged topics have no relevant document and are left out: {listing(names, 20)} "
                      "(no_relevant='keep' scores them, as trec_eval does)", TopicMismatchWarning, stacklevel=3)
    keep = np.flatnonzero(j.has_relevant)
    if keep.size == 0:
        raise InputError("no topic of the runs has a positive judgment in the qrels")
    return keep


def _evaluate_iv(measures, convention, no_relevant, threads):
    if no_relevant not in ("skip", "keep"):
        raise InputError(f"`no_relevant` must be 'skip' or 'keep', got {no_relevant!r}")
    if threads is not None and (not isinstance(threads, (int, np.integer)) or threads < 1):
        raise InputError(f"`threads` must be a positive integer, got {threads!r}")
    return _measures_iv(measures, convention)


def evaluate(runs, qrels, measures: Sequence = ("nDCG@20", "ERR@20"), *, convention: str | None = None,
             no_relevant: str = "skip", threads=None) -> Evaluation:
    """Score every run on every judged topic, each measure as ir_measures defines it.

    A system that returned nothing for a scored topic scores 0 on it (trec_eval ``-c``).

    Parameters
    ----------
    runs : RunSet or str or os.PathLike or sequence of them
        The runs, or run files / directories (see :func:`fastrisk.read_runs`).
    qrels : Qrels or str or os.PathLike
        The judgments, or a qrels file.
    measures : sequence of str or Measure
        ir_measures names such as ``"nDCG@20"``, ``"ERR@20"``, ``"AP"`` (the module docstring
        defines each).
    convention : {None, "gdeval"}
        ``"gdeval"`` reads a bare ``nDCG@k`` as gdeval's ``nDCG(dcg='exp-log2')@k``.
    no_relevant : {"skip", "keep"}
        Topics whose judgments hold no relevant document: left out with a warning (``"skip"``,
        as gdeval) or scored (``"keep"``, as trec_eval).
    threads : int, optional
        Numba threads for this call (default: all cores, one for small jobs).

    Returns
    -------
    Evaluation
        ``result["ERR@20"]`` is the :class:`ScoreMatrix` of one measure; ``to_arrow()`` the
        long table (measure, system, topic, score).
    """

    measures = _evaluate_iv(measures, convention, no_relevant, threads)
    runs = _as_runs(runs)
    qrels = _as_qrels(qrels)
    for m in measures:
        _check_err_grades(qrels, m)
    j = align(runs, qrels)
    keep = _topic_checks(runs, qrels, j, no_relevant)
    topics = tuple(runs.topics[i] for i in keep)
    if threads is None and runs.n_systems * runs.n_topics * max(m.depth(runs.depth) for m in measures) < _SERIAL_WORK:
        threads = 1  # launching a thread team costs more than the work (and much more on a busy machine)
    values = np.empty((len(measures), runs.n_systems, len(keep)), np.float64)
    with limit_threads(threads):
        for i, m in enumerate(measures):
            values[i] = score_matrix_values(runs, qrels, m)[:, keep]
    return Evaluation(tuple(m.name for m in measures), runs.systems, topics, values, no_relevant)
