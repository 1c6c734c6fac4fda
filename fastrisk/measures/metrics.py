"""Per-topic effectiveness of many runs at once, from TREC runs and qrels.

Measures are named, parsed and computed as ir_measures (and so PyTerrier) names them; trec_eval's
names (``map``, ``P_10``, ``ndcg_cut_20``, ...) are read as ir_measures reads them. Each family is
one record of `fastrisk.measures.names.MEASURES` (its definition, parameters, cutoff rule and
kernel code); the documentation's table of measures is built from it. Rankings are by score
descending, ties by document id descending.

R is the number of documents judged with grade >= ``rel`` (``rel=`` thresholds: default 1,
e.g. ``P(rel=2)@10``); negative grades count as 0, except for bpref, infAP and the
``judged_only`` measures, which read them as trec_eval does: pooled but unjudged (see
`trec_qrels`). A system that returned nothing for a
topic scores 0 there (trec_eval's ``-c``). Topics whose judgments hold no relevant document
are left out with a `TopicMismatchWarning` (as gdeval does); ``no_relevant="keep"`` scores
them (0 for every measure but Judged), as trec_eval does.

`evaluate` returns an `Evaluation` (``result["nDCG@20"]`` is a ScoreMatrix, so
every risk measure runs on raw runs; ``to_arrow()`` is the long table).
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from fastrisk._kernels import metrics as _km
from fastrisk._kernels._jit import run_strided
from fastrisk._runtime.threads import limit_threads, thread_count
from fastrisk._runtime.validation import listing
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.data.results import Result, array, param
from fastrisk.data.runs import Qrels, RunSet, align, read_qrels, read_runs
from fastrisk.data.runs.sources import scores_from_pytrec_eval
from fastrisk.errors import InputError, TopicMismatchWarning
from fastrisk.measures.names import Measure, parse_measure

__all__ = ["Evaluation", "Measure", "TopicMismatchWarning", "evaluate", "parse_measure"]


#: Below this many (system x topic x rank) steps, ``evaluate`` runs on one thread.
_SERIAL_WORK = 1_000_000



def _as_runs(runs, names=None) -> RunSet:
    if not isinstance(runs, RunSet):
        return read_runs(runs, names=names)
    if names is None:
        return runs
    names = tuple(str(n) for n in names) if isinstance(names, (list, tuple)) else None
    if names is None or len(names) != runs.n_systems or len(set(names)) != len(names):
        raise InputError(f"`names` must be {runs.n_systems} distinct names, one per system of the RunSet")
    out = RunSet(names, runs.topics, runs.docs, runs.lengths, runs.doc_offsets, runs.best_rank, runs.vocab,
                 runs.sources)
    out._cache.update(runs._cache)  # the alignment tables belong to the same rankings
    return out


def _as_qrels(qrels) -> Qrels:
    return qrels if isinstance(qrels, Qrels) else read_qrels(qrels)


def _measures_iv(measures) -> list[Measure]:
    if isinstance(measures, (str, Measure)) or (type(measures).__module__ or "").startswith("ir_measures"):
        measures = [measures]  # one name, or one ir_measures measure object
    if isinstance(measures, (set, frozenset)):
        measures = sorted(measures, key=str)  # ir_measures code passes sets of measures
    if not isinstance(measures, (list, tuple)):
        raise InputError("`measures` must be a measure name such as 'nDCG@20' or a list of names, "
                         f"got {type(measures).__name__}")
    out = [parse_measure(m) for m in measures]
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
                         f"above {measure.max_grade} on topics [{listing(bad, 10, repr)}]")


#: Per Qrels object, the same judgments with every negative grade as -3 (see `trec_qrels`).
_TREC_QRELS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def trec_qrels(qrels: Qrels) -> Qrels:
    """``qrels`` with a negative grade kept apart as -3, *pooled but unjudged*.

    trec_eval's ``form_res_rels.c`` reads a qrels grade below 0 as "in pool, but unjudged (eg,
    infAP uses a sample of pool)" and counts it neither relevant nor non-relevant: bpref and
    infAP skip such a document, and ``-J`` (``judged_only``) removes it. The other measures
    read it as grade 0, as ``Qrels.grades`` holds it.
    """
    hit = _TREC_QRELS.get(qrels)
    if hit is None:
        grades = np.where(qrels.raw_grades < 0, _km.POOL_UNJUDGED, qrels.grades).astype(np.int8)
        hit = Qrels(qrels.topics, qrels.topic_offsets, qrels.docids, grades, qrels.raw_grades, qrels.source)
        _TREC_QRELS[qrels] = hit
    return hit


def judgments(runs: RunSet, qrels: Qrels, measure: Measure):
    """The aligned judgments ``measure`` is scored against (`trec_qrels`' for bpref, infAP and
    ``judged_only``) and, per topic of ``runs``, the number of judgments with a grade >= 0."""
    q = trec_qrels(qrels) if measure.trec_judgments else qrels
    topic_of = np.repeat(np.arange(qrels.n_topics), np.diff(qrels.topic_offsets))
    per_topic = np.bincount(topic_of[qrels.raw_grades >= 0], minlength=qrels.n_topics)
    index = {t: i for i, t in enumerate(qrels.topics)}
    judged = np.array([per_topic[index[name]] if name in index else 0 for name in runs.topics], np.int64)
    return align(runs, q), judged


def topic_normalisers(j, judged: np.ndarray, measure: Measure, k: int) -> np.ndarray:
    """``(T, 2)``: per topic the measure's normaliser (ideal DCG or R) and bpref's N."""
    code, _, rel, _, _ = measure.kernel_args()
    norm = np.zeros((len(judged), 2), dtype=np.float64)
    _km.topic_norms(j.ideal_offsets, j.ideal_grades, judged, k, code, rel, norm)
    return norm


def score_matrix_values(runs: RunSet, qrels: Qrels, measure: Measure, *, condensed: bool = False):
    """(S, T) scores of every system on every topic of ``runs`` (no topic filtering);
    ``condensed`` (or a ``judged_only`` measure) removes unjudged documents first."""
    _check_err_grades(qrels, measure)
    j, judged = judgments(runs, qrels, measure)
    k = measure.depth(runs.depth)
    code, p, rel, maxg, residual = measure.kernel_args()
    norm = topic_normalisers(j, judged, measure, k)
    out = np.empty((runs.n_systems, runs.n_topics), dtype=np.float64)
    run_strided(_km.score_all, thread_count(out.size * k), runs.docs, runs.lengths, runs.doc_offsets, j.grades,
                norm, code, k, p, rel, maxg, residual, int(condensed or measure.judged_only), out)
    return out


@dataclass(frozen=True, repr=False)
class Evaluation(Result):
    """Scores of every system on every scored topic: ``values[measure, system, topic]``.

    ``result["AP"]`` is the measure's `ScoreMatrix`; ``to_arrow()``
    the long table ``measure, system, topic, value`` (ir_measures' per-query results);
    `means` the per-system mean table.
    """

    _coords = {"measure": {"measure": "measures"}}
    measures: tuple = param(doc="Names of the measures (the labels of the ``measure`` dim).")
    systems: tuple
    topics: tuple
    values: np.ndarray = array("measure", "system", "topic", column="value", doc="Score of each system on each scored "
                                                                                 "topic, per measure.")
    no_relevant: str = param("skip", doc="What happened to topics without a positive judgment (``skip``: left out).")

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

    def summary(self) -> np.ndarray:
        """``[measure, system]``: each measure's per-system summary over the scored topics, the
        mean, or the sum for the counts NumRet, NumRel and NumQ (as trec_eval's ``all`` line,
        ir_measures' ``calc_aggregate`` and PyTerrier report them; NumQ is the number of topics)."""
        out = np.full((len(self.measures), len(self.systems)), np.nan)
        for i, name in enumerate(self.measures):
            m = _known(name)
            if m is not None and (self.topics or m.aggregate == "sum"):
                out[i] = m.summarise(self.values[i], axis=1)
            elif self.topics:
                out[i] = self.values[i].mean(axis=1)
        return out

    @classmethod
    def from_pytrec_eval(cls, results, *, names=None) -> Evaluation:
        """An Evaluation of pytrec_eval's per-topic results.

        ``results``: ``RelevanceEvaluator.evaluate``'s ``{qid: {measure: value}}`` of one run, a
        ``{name: {qid: {measure: value}}}`` mapping, or a list of them (named by ``names``).
        trec_eval's measure names become ir_measures' (``P_10`` -> ``P@10``, ``map`` -> ``AP``)
        where fastrisk knows them, and stay as they are otherwise.

        Examples
        --------
        >>> from fastrisk.measures.metrics import Evaluation
        >>> ev = Evaluation.from_pytrec_eval({"bm25": {"q1": {"map": 0.5, "P_10": 0.4},
        ...                                            "q2": {"map": 0.1, "P_10": 0.2}}})
        >>> ev.measures, ev["AP"].values.tolist()
        (('AP', 'P@10'), [[0.5, 0.1]])
        """
        measures, systems, topics, values = scores_from_pytrec_eval(results, names)
        canonical = []
        for m in measures:
            known = _known(m)
            canonical.append(known.name if known is not None else m)
        if len(set(canonical)) != len(canonical):
            canonical = list(measures)
        return cls(tuple(canonical), tuple(systems), tuple(topics), values, "keep")

    def means(self):
        """Per-system summary over the scored topics: a table ``system, <measure>...``: the
        mean, and for the counts NumRet, NumRel and NumQ the sum, as trec_eval, ir_measures and
        PyTerrier aggregate them (see `summary`)."""

        cols = {"system": pa.array(list(self.systems), pa.string())}
        for name, row in zip(self.measures, self.summary()):
            cols[name] = pa.array(row)
        return pa.table(cols)


def _known(name: str) -> Measure | None:
    """The parsed measure of a name, or None for a name fastrisk does not compute (a pytrec_eval
    result's ``gm_map``)."""
    try:
        return parse_measure(name)
    except InputError:
        return None


def _topic_checks(runs: RunSet, qrels: Qrels, j, no_relevant: str) -> np.ndarray:
    run_topics, qrel_topics = set(runs.topics), set(qrels.topics)
    only_runs = sorted(run_topics - qrel_topics)
    only_qrels = sorted(qrel_topics - run_topics)
    if not (run_topics & qrel_topics):
        raise InputError(f"no topic of the runs is judged in the qrels (runs: {listing(sorted(run_topics), 5)}; "
                         f"qrels: {listing(sorted(qrel_topics), 5)})")
    if only_runs or only_qrels:
        warnings.warn(f"topics do not match between runs and qrels: {len(only_runs)} only in the runs "
                      f"[{listing(only_runs, 20, repr)}], {len(only_qrels)} only in the qrels [{listing(only_qrels, 20, repr)}]; "
                      "topics only in the runs are not scored, topics only in the qrels are left out",
                      TopicMismatchWarning, stacklevel=3)
    judged = np.array([t in qrel_topics for t in runs.topics])
    if no_relevant == "keep":
        return np.flatnonzero(judged)
    empty = judged & ~j.has_relevant
    if empty.any():
        names = [runs.topics[i] for i in np.flatnonzero(empty)]
        warnings.warn(f"{len(names)} judged topics have no relevant document and are left out: [{listing(names, 20, repr)}] "
                      "(no_relevant='keep' scores them, as trec_eval does)", TopicMismatchWarning, stacklevel=3)
    keep = np.flatnonzero(j.has_relevant)
    if keep.size == 0:
        raise InputError("no topic of the runs has a positive judgment in the qrels")
    return keep


def _evaluate_iv(measures, no_relevant, threads):
    if no_relevant not in ("skip", "keep"):
        raise InputError(f"`no_relevant` must be 'skip' or 'keep', got {no_relevant!r}")
    if threads is not None and (not isinstance(threads, (int, np.integer)) or threads < 1):
        raise InputError(f"`threads` must be a positive integer, got {threads!r}")
    return _measures_iv(measures)


def evaluate(runs, qrels, measures: Sequence = ("nDCG@20", "ERR@20"), *, no_relevant: str = "skip",
             threads=None, names=None) -> Evaluation:
    """Score every run on every judged topic, each measure as ir_measures defines it.

    A system that returned nothing for a scored topic scores 0 on it (trec_eval ``-c``).

    Parameters
    ----------
    runs : RunSet or str or os.PathLike or sequence of them
        The runs, or run files / directories, or in-memory runs: PyTerrier result frames, ranx
        ``Run`` objects or frames, ``{qid: {docno: score}}`` dicts, a list or mapping of these
        (see `fastrisk.read_runs`).
    qrels : Qrels or str or os.PathLike
        The judgments: a qrels file, a frame (PyTerrier's, ir_datasets', ranx's), a dict, a ranx
        ``Qrels``, or an ir_datasets id in its local cache (``"irds:antique/test"``).
    measures : sequence of str or Measure
        ir_measures names such as ``"nDCG@20"``, ``"ERR@20"``, ``"AP"`` (the module docstring
        defines each), ir_measures measure objects (``nDCG@10``), trec_eval or ranx names
        (`parse_measure`).
    no_relevant : {"skip", "keep"}
        Topics whose judgments hold no relevant document: left out with a warning (``"skip"``,
        as gdeval) or scored (``"keep"``, as trec_eval).
    threads : int, optional
        Numba threads for this call (default: all cores, one for small jobs).
    names : sequence of str, optional
        System names, one per run (e.g. for a list of result frames, which are otherwise named
        ``run0``, ``run1``, ...).

    Returns
    -------
    Evaluation
        ``result["ERR@20"]`` is the `ScoreMatrix` of one measure; ``to_arrow()`` the
        long table (measure, system, topic, score).

    References
    ----------
    MacAvaney, S., Macdonald, C. & Ounis, I. (2022). Streamlining evaluation with ir-measures. ECIR 2022.

    Voorhees, E. M. & Harman, D. K. (eds.) (2005). TREC: Experiment and Evaluation in Information Retrieval. MIT
    Press.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> runs = fastrisk.read_runs(datasets.path('trec2012-web/runs'), pattern='*filtered*')
    >>> qrels = fastrisk.read_qrels(datasets.path('trec2012-web/qrels.adhoc.txt'))
    >>> res = fastrisk.evaluate(runs, qrels, ['nDCG@20', 'AP'])
    >>> res['AP']
    ScoreMatrix(4 systems x 50 topics, measure='AP')
    >>> round(float(res['AP'].scores_of(runs.systems[0]).mean()), 4)
    0.112
    """

    measures = _evaluate_iv(measures, no_relevant, threads)
    runs = _as_runs(runs, names)
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
