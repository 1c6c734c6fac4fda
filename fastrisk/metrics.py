"""Per-topic effectiveness of many runs at once, from TREC runs and qrels.

Measures are named as ir_measures names them and parsed from those strings:
``P@10``, ``nDCG@20``, ``ERR@20``, ``RBP(rel=1,p=0.8)@10`` (``RBP(p=0.8,residual=True)@10``
adds the RBP residual). Semantics follow the TREC Web track's official ``gdeval`` script
(SPEC section 6): rankings by score descending, ties by document id descending; nDCG gain
``2^g - 1`` with discount ``log2(rank + 1)`` and the ideal ranking built from *every*
positive judgment of the topic; ERR stop probability ``(2^g - 1) / 2^4``; negative grades
count as 0; topics without any positive judgment are skipped. ``P`` and ``RBP`` count a
document relevant when its grade is at least ``rel`` (default 1); P@k divides by k.

:func:`evaluate` returns one :class:`~fastrisk.matrix.ScoreMatrix` per measure (so every
risk measure runs on raw runs) and the long table ``system, topic, measure, value``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyarrow as pa

from fastrisk._kernels import metrics as _km
from fastrisk.errors import InputError
from fastrisk.runs import Qrels, RunSet, align, read_qrels, read_runs

__all__ = ["Measure", "parse_measure", "evaluate", "Evaluation"]

_FAMILIES = {"p": "P", "rbp": "RBP", "ndcg": "nDCG", "err": "ERR"}
_CODES = {"P": _km.P, "RBP": _km.RBP, "nDCG": _km.NDCG, "ERR": _km.ERR}
_ALLOWED = {"P": {"rel"}, "RBP": {"rel", "p", "residual"}, "nDCG": set(), "ERR": set()}
#: Below this many (system x topic x rank) steps, ``evaluate`` runs on one thread.
_SERIAL_WORK = 1_000_000
_PATTERN = re.compile(r"^\s*([A-Za-z]+)\s*(?:\((.*)\))?\s*(?:@\s*(\S+))?\s*$")


@dataclass(frozen=True)
class Measure:
    """A parsed measure: family, cutoff and parameters (see :func:`parse_measure`)."""

    family: str
    cutoff: int | None
    rel: int = 1
    p: float = 0.8
    residual: bool = False
    max_grade: int = 4

    @property
    def code(self) -> int:
        return _CODES[self.family]

    @property
    def name(self) -> str:
        if self.family == "RBP":
            params = f"rel={self.rel},p={self.p:g}" + (",residual=True" if self.residual else "")
            base = f"RBP({params})"
        elif self.family == "P" and self.rel != 1:
            base = f"P(rel={self.rel})"
        else:
            base = self.family
        return base if self.cutoff is None else f"{base}@{self.cutoff}"

    def __str__(self) -> str:
        return self.name

    def depth(self, run_depth: int) -> int:
        """Number of ranks the measure looks at (RBP without a cutoff: the whole run)."""
        return self.cutoff if self.cutoff is not None else max(int(run_depth), 1)

    def kernel_args(self):
        return self.code, float(self.p), int(self.rel), int(self.max_grade), bool(self.residual)


def parse_measure(measure) -> Measure:
    """Parse an ir_measures-style name (``nDCG@20``, ``RBP(rel=1,p=0.8)@10``) or pass a Measure."""
    if isinstance(measure, Measure):
        return measure
    if not isinstance(measure, str):
        raise InputError(f"`measure` must be a string such as 'nDCG@20', got {type(measure).__name__}")
    m = _PATTERN.match(measure)
    family = _FAMILIES.get(m.group(1).lower()) if m else None
    if family is None:
        raise InputError(
            f"unknown measure {measure!r}: expected one of P@k, nDCG@k, ERR@k, RBP(rel=1,p=0.8)@k"
        )
    params = {}
    if m.group(2) is not None and m.group(2).strip():
        for item in m.group(2).split(","):
            key, eq, value = item.partition("=")
            key = key.strip()
            if not eq or key not in _ALLOWED[family]:
                allowed = ", ".join(sorted(_ALLOWED[family])) or "none"
                raise InputError(f"measure {measure!r}: unknown parameter {item.strip()!r} (allowed: {allowed})")
            params[key] = value.strip()
    cutoff = None
    if m.group(3) is not None:
        try:
            cutoff = int(m.group(3))
        except ValueError:
            cutoff = -1
        if cutoff < 1:
            raise InputError(f"measure {measure!r}: the cutoff after '@' must be a positive integer")
    elif family != "RBP":
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
    return Measure(family, cutoff, **kw)


def _as_runs(runs) -> RunSet:
    return runs if isinstance(runs, RunSet) else read_runs(runs)


def _as_qrels(qrels) -> Qrels:
    return qrels if isinstance(qrels, Qrels) else read_qrels(qrels)


def _measures_iv(measures) -> list[Measure]:
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    out = [parse_measure(m) for m in measures]
    if not out:
        raise InputError("`measures` must name at least one measure")
    return out


def score_matrix_values(runs: RunSet, qrels: Qrels, measure: Measure, *, condensed: bool = False):
    """(S, T) scores of every system on every topic of ``runs`` (no topic filtering)."""
    j = align(runs, qrels)
    k = measure.depth(runs.depth)
    idcg = np.zeros(runs.n_topics, dtype=np.float64)
    _km.ideal_dcgs(j.ideal_offsets, j.ideal_grades, k, idcg)
    out = np.empty((runs.n_systems, runs.n_topics), dtype=np.float64)
    code, p, rel, maxg, residual = measure.kernel_args()
    _km.score_all(runs.docs, runs.lengths, runs.doc_offsets, j.grades, idcg, code, k, p, rel, maxg,
                  residual, int(condensed), out)
    return out


@dataclass(frozen=True)
class Evaluation:
    """Scores of every system on every judged topic, one ScoreMatrix per measure."""

    matrices: dict
    measures: tuple
    systems: tuple
    topics: tuple

    def __getitem__(self, measure) -> "object":
        name = parse_measure(measure).name
        try:
            return self.matrices[name]
        except KeyError:
            raise InputError(f"measure {name!r} was not evaluated; have {list(self.matrices)}") from None

    def to_arrow(self) -> pa.Table:
        """Long table ``system, topic, measure, value`` (as ir_measures' per-query results)."""
        S, T = len(self.systems), len(self.topics)
        parts = []
        for name in self.measures:
            vals = np.asarray(self.matrices[name].values)
            parts.append(pa.table({
                "system": pa.array(np.repeat(np.array(self.systems, dtype=object), T), pa.string()),
                "topic": pa.array(np.tile(np.array(self.topics, dtype=object), S), pa.string()),
                "measure": pa.array([name] * (S * T), pa.string()),
                "value": pa.array(vals.reshape(-1)),
            }))
        return pa.concat_tables(parts)

    def to_pandas(self):
        return self.to_arrow().to_pandas()


def evaluate(runs, qrels, measures: Sequence = ("nDCG@20", "ERR@20"), *, threads=None) -> Evaluation:
    """Score every run on every topic that has a positive judgment.

    ``runs``: a :class:`RunSet` or run file/directory paths; ``qrels``: a :class:`Qrels` or a
    path. A system that returned nothing for a judged topic scores 0 on it. Returns an
    :class:`Evaluation` (``result["nDCG@20"]`` is a ScoreMatrix; ``to_arrow()`` the long table).
    """
    from fastrisk._threads import limit_threads
    from fastrisk.matrix import ScoreMatrix

    measures = _measures_iv(measures)
    runs = _as_runs(runs)
    qrels = _as_qrels(qrels)
    j = align(runs, qrels)
    keep = np.flatnonzero(j.has_relevant)
    if keep.size == 0:
        raise InputError("no topic of the runs has a positive judgment in the qrels")
    topics = tuple(runs.topics[i] for i in keep)
    matrices = {}
    if threads is None and runs.n_systems * runs.n_topics * max(m.depth(runs.depth) for m in measures) < _SERIAL_WORK:
        threads = 1  # launching a thread team costs more than the work (and much more on a busy machine)
    with limit_threads(threads):
        for m in measures:
            vals = score_matrix_values(runs, qrels, m)[:, keep]
            matrices[m.name] = ScoreMatrix(vals, runs.systems, topics, measure=m.name)
    return Evaluation(matrices, tuple(matrices), runs.systems, topics)
