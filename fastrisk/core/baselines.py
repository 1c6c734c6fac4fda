"""Baselines: one system of the matrix, an external per-topic vector or file, or a virtual
system built per topic from several (MEAN, MEDIAN, MAX; Dinçer, Ounis & Macdonald, ECIR 2014).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fastrisk._kernels.numerics import out_of_range
from fastrisk._runtime.numerics import read_only
from fastrisk.data.io import read_matrix
from fastrisk.data.matrix import ScoreMatrix, check_missing_policy, did_you_mean, find_name, label
from fastrisk.errors import InputError, TopicMismatchWarning

VIRTUAL = ("mean", "median", "max")
_MAX = float(np.finfo(np.float64).max)
#: The baseline that is the system with the highest mean score (`best_system`).
BEST = "best"
WHAT_IS_A_BASELINE = ("a baseline is what every system is compared with, topic by topic: the name of a system "
                      "of the matrix, 'best' (the system with the highest mean), 'mean', 'median' or 'max' "
                      "(a virtual baseline over all systems), a file of per-topic scores, a mapping topic -> "
                      "score, or one score per topic")


@dataclass(frozen=True)
class Baseline:
    """A baseline aligned with a matrix's topics.

    ``values`` is ``(1, c)`` (one baseline for every system) or ``(S, c)`` (one row per system,
    e.g. a virtual baseline that leaves the evaluated system out). ``system`` is the row of the
    matrix that *is* the baseline, if any.

    References
    ----------
    Dinçer, B. T., Ounis, I. & Macdonald, C. (2014). Tackling biased baselines in the risk-sensitive evaluation
    of retrieval systems. ECIR 2014.

    Examples
    --------
    >>> import fastrisk
    >>> import numpy as np
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> b = fastrisk.Baseline('indriCASP', np.array([[baseline[t] for t in matrix.topics]]))
    >>> b.name, b.values.shape
    ('indriCASP', (1, 50))
    >>> round(float(fastrisk.risk(matrix, b, alpha=5).urisk[0, 0]), 4)
    -0.7665
    """

    name: str
    values: np.ndarray
    system: int | None = None

    def __post_init__(self):
        # read-only like the matrix's own rows, so every kernel compiles one signature for a
        # baseline, whether it is a row of the matrix or a computed one (a view: no copy)
        object.__setattr__(self, "values", read_only(np.ascontiguousarray(self.values, dtype=np.float64)))


def virtual_baseline(matrix: ScoreMatrix, kind: str, *, systems: Sequence[str] | None = None,
                     leave_out: bool = False) -> Baseline:
    """Per-topic MEAN, MEDIAN or MAX over ``systems`` (default: all).

    With ``leave_out=True`` each system is compared with the virtual baseline built from the
    *other* chosen systems (an unbiased baseline), so ``values`` has one row per system
    (Dinçer, Ounis & Macdonald, ECIR 2014).

    Parameters
    ----------
    matrix : ScoreMatrix
        The systems × topics scores.
    kind : {"mean", "median", "max"}
        The per-topic statistic.
    systems : sequence of str, optional
        The systems it is built from (default: all).
    leave_out : bool
        Build each system's baseline from the other systems only.

    Returns
    -------
    Baseline
        ``values`` ``(1, c)``, or ``(S, c)`` with ``leave_out``.

    References
    ----------
    Dinçer, B. T., Ounis, I. & Macdonald, C. (2014). Tackling biased baselines in the risk-sensitive evaluation
    of retrieval systems. ECIR 2014.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> b = fastrisk.virtual_baseline(matrix, 'mean')
    >>> b.name, b.values.shape, round(float(b.values[0, 0]), 4)
    ('MEAN', (1, 50), 0.2519)
    >>> res = fastrisk.risk(matrix, b, alpha=5)
    >>> round(float(res.urisk[0, res.systems.index('uogTrA44xi')]), 4)
    0.0123
    """
    kind = str(kind).lower()
    if kind not in VIRTUAL:
        raise InputError(f"virtual baseline must be one of {', '.join(VIRTUAL)}; got {kind!r}")
    rows = np.arange(matrix.n_systems) if systems is None else np.array([matrix.system_index(s) for s in systems])
    if rows.size == 0:
        raise InputError("a virtual baseline needs at least one system")
    X = matrix.values[rows]
    name = kind.upper() + ("" if systems is None else f"({len(rows)} systems)") + ("-loo" if leave_out else "")
    if not leave_out:
        reduce = {"mean": np.mean, "median": np.median, "max": np.max}[kind]
        return Baseline(name, np.ascontiguousarray(reduce(X, axis=0)[None, :]))
    if rows.size < 2:
        raise InputError("a leave-one-out virtual baseline needs at least two systems")
    return Baseline(name, _leave_one_out(matrix.values, rows, kind))


def _leave_one_out(values: np.ndarray, rows: np.ndarray, kind: str) -> np.ndarray:
    """Row k: the statistic over the chosen rows other than k (k itself if not chosen)."""
    S, c = values.shape
    X = values[rows]
    chosen = np.zeros(S, dtype=bool)
    chosen[rows] = True
    out = np.empty((S, c))
    if kind == "mean":
        total = X.sum(axis=0)
        n = rows.size
        out[:] = total / n
        out[chosen] = (total - values[chosen]) / (n - 1)
        return out
    order = np.sort(X, axis=0)  # (n, c) per-topic sorted values of the chosen systems
    n = rows.size
    if kind == "max":
        out[:] = order[-1]
        top_is_self = values[chosen] == order[-1]  # a tie at the top leaves the max unchanged
        out[chosen] = np.where(top_is_self, order[-2], order[-1])
        return out
    out[:] = np.median(X, axis=0)
    # median of the chosen rows without k: drop one copy of k's value from the sorted column
    pos = np.empty((n, c), dtype=np.int64)
    for j in range(c):
        pos[:, j] = np.searchsorted(order[:, j], X[:, j])
    m = n - 1
    lo, hi = (m - 1) // 2, m // 2
    take_lo = np.where(lo < pos, lo, lo + 1)
    take_hi = np.where(hi < pos, hi, hi + 1)
    cols = np.arange(c)
    out[chosen] = 0.5 * (order[take_lo, cols] + order[take_hi, cols])
    return out


def best_system(matrix: ScoreMatrix) -> int:
    """Row of the system with the highest mean score (the first of equal means): the
    ``"best"`` baseline, the state of the art among the systems compared."""
    return int(np.argmax(matrix.values.mean(axis=1)))


def resolve_baseline(matrix: ScoreMatrix, baseline, *, missing: str = "raise",
                     column: str | None = None) -> tuple[ScoreMatrix, Baseline]:
    """Align ``baseline`` with ``matrix``; returns the (possibly topic-reduced) matrix and it.

    ``baseline`` may be: the name of a system of the matrix, or its row index (an int, as for
    a bare array or a batch; a name that differs only in case from exactly one system's is
    that system); ``"best"`` (the system with the highest mean); ``"mean"``, ``"median"`` or
    ``"max"`` (a virtual baseline over all systems; a system with that name wins); a
    `Baseline`; a mapping or pandas Series topic -> score; a one-row
    `ScoreMatrix`; a 1-D array in the matrix's topic order; or a path to a file (a
    per-topic CSV with a ``topic`` column, or any matrix file; ``column`` picks the system).
    ``missing`` handles matrix topics the baseline lacks: ``raise``, ``drop`` them, or score
    the baseline ``zero`` there.

    Parameters
    ----------
    matrix : ScoreMatrix
        The systems × topics scores.
    baseline : BaselineLike
        See above.
    missing : {"raise", "drop", "zero"}
        Matrix topics the baseline lacks.
    column : str, optional
        The system (column) of a baseline file or matrix with several.

    Returns
    -------
    matrix : ScoreMatrix
        ``matrix``, without the dropped topics if any.
    baseline : Baseline
        Aligned with the returned matrix's topics.

    References
    ----------
    Dinçer, B. T., Ounis, I. & Macdonald, C. (2014). Tackling biased baselines in the risk-sensitive evaluation
    of retrieval systems. ECIR 2014.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> m, b = fastrisk.resolve_baseline(matrix, 'uogTrA44xi')
    >>> b.name, b.system, m.n_topics
    ('uogTrA44xi', 23, 50)
    >>> m, b = fastrisk.resolve_baseline(matrix, baseline)
    >>> b.name, b.system, round(float(b.values.mean()), 4)
    ('baseline', None, 0.1947)
    """
    check_missing_policy(missing)
    if baseline is None:
        raise InputError(f"no baseline given: {WHAT_IS_A_BASELINE}")
    if isinstance(baseline, Baseline):
        if baseline.values.ndim != 2 or baseline.values.shape[1] != matrix.n_topics \
                or baseline.values.shape[0] not in (1, matrix.n_systems):
            raise InputError(f"baseline {baseline.name!r} has shape {baseline.values.shape}; expected "
                             f"(1, {matrix.n_topics}) or ({matrix.n_systems}, {matrix.n_topics})")
        if not out_of_range(baseline.values.ravel(), 0.0, _MAX):  # all finite (values: float64, C order)
            return matrix, baseline
        values = np.asarray(baseline.values, dtype=np.float64)
        bad = np.argwhere(~np.isfinite(values))
        if bad.size:
            k, i = (int(j) for j in bad[0])
            row = f" (row {k})" if values.shape[0] > 1 else ""
            raise InputError(f"baseline {baseline.name!r} has a non-finite score {values[k, i]} on topic "
                             f"{matrix.topics[i]!r}{row}; baseline scores must be finite")
        return matrix, baseline
    if isinstance(baseline, (int, np.integer)) and not isinstance(baseline, bool):
        if not -matrix.n_systems <= baseline < matrix.n_systems:
            raise InputError(f"baseline index {baseline} is out of range for {matrix.n_systems} systems")
        baseline = matrix.systems[int(baseline)]
    if isinstance(baseline, str) and baseline in matrix.systems:
        k = matrix.system_index(baseline)
        return matrix, Baseline(baseline, np.ascontiguousarray(matrix.values[k:k + 1]), k)
    if isinstance(baseline, str) and baseline.lower() in VIRTUAL:
        return matrix, virtual_baseline(matrix, baseline)
    if isinstance(baseline, str) and baseline.lower() == BEST:
        k = best_system(matrix)
        return matrix, Baseline(matrix.systems[k], np.ascontiguousarray(matrix.values[k:k + 1]), k)
    if isinstance(baseline, (str, Path)):
        path = Path(baseline)
        if not path.is_file():
            k = find_name(matrix.systems, str(baseline)) if isinstance(baseline, str) else None
            if k is not None:  # the one system whose name differs only in case
                return matrix, Baseline(matrix.systems[k], np.ascontiguousarray(matrix.values[k:k + 1]), k)
            known = ", ".join(matrix.systems[:8]) + (", ..." if matrix.n_systems > 8 else "")
            raise InputError(f"unknown baseline {str(baseline)!r}"
                             f"{did_you_mean(baseline, matrix.systems, (*VIRTUAL, BEST))}: not a system of the matrix "
                             f"({known}), not one of {', '.join(VIRTUAL)} or {BEST}, and not a file")
        return _align(matrix, *_read_baseline_file(path, column), missing)
    if isinstance(baseline, ScoreMatrix):
        if baseline.n_systems != 1 and column is None:
            raise InputError(f"a baseline matrix must have one system (it has {baseline.n_systems}); "
                             "pick one with `column`")
        name = column or baseline.systems[0]
        return _align(matrix, name, dict(zip(baseline.topics, baseline.scores_of(name))), missing)
    if hasattr(baseline, "to_dict") and hasattr(baseline, "index"):  # pandas Series
        return _align(matrix, str(getattr(baseline, "name", None) or "baseline"),
                      {str(k): v for k, v in baseline.to_dict().items()}, missing)
    if isinstance(baseline, Mapping):
        return _align(matrix, "baseline", {str(k): v for k, v in baseline.items()}, missing)
    try:
        vec = np.asarray(baseline, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"cannot use {type(baseline).__name__} as a baseline") from None
    if vec.ndim != 1 or vec.shape[0] != matrix.n_topics:
        raise InputError(f"a baseline vector must have one score per topic ({matrix.n_topics}), got shape {vec.shape}")
    return _align(matrix, "baseline", dict(zip(matrix.topics, vec)), missing)


def _read_baseline_file(path: Path, column: str | None):
    """(name, {topic: score}) from a per-topic file."""

    m = read_matrix(path)
    if m.n_systems == 1 and column is None:
        return m.systems[0], dict(zip(m.topics, m.values[0]))
    if column is None:
        raise InputError(f"{path} has several columns ({', '.join(m.systems[:8])}); pick one with `column`")
    try:
        return f"{path.stem}:{column}", dict(zip(m.topics, m.scores_of(column)))
    except InputError:
        raise InputError(f"{path} has no column {column!r}; it has {', '.join(m.systems[:8])}") from None


def _align(matrix: ScoreMatrix, name: str, scores: dict, missing: str) -> tuple[ScoreMatrix, Baseline]:
    known = set(matrix.topics)
    if scores.keys() != known:  # labels compared without surrounding whitespace, as everywhere
        scores = {label(t): v for t, v in scores.items()}
    present = [t in scores for t in matrix.topics]
    if not any(present):
        raise InputError(f"baseline {name!r} shares no topic with the matrix "
                         f"(matrix topics {_shown(matrix.topics)}; baseline topics {_shown(list(scores))})"
                         f"{_lookalikes(matrix.topics, scores)}")
    extra = [t for t in scores if t not in known]
    lacking = [t for t, p in zip(matrix.topics, present) if not p]
    if lacking and missing == "raise":  # one error, no warning first that says what is not done
        raise InputError(f"baseline {name!r} lacks topic(s) {_shown(lacking)} of the matrix"
                         + (f" and has topic(s) {_shown(extra)} the matrix lacks" if extra else "")
                         + f"{_lookalikes(lacking, extra)}; pass missing='drop' (--missing drop) to drop them "
                         "or missing='zero' (--missing zero) to score the baseline 0 there")
    if extra or lacking:
        parts = []
        if lacking:
            how = "dropped from the matrix" if missing == "drop" else "scored 0 for the baseline"
            parts.append(f"matrix topic(s) the baseline lacks ({how}): {_shown(lacking)}")
        if extra:
            parts.append(f"baseline topic(s) not in the matrix (ignored): {_shown(extra)}")
        warnings.warn(f"topics of baseline {name!r} and the matrix match only partly; "
                      + "; ".join(parts) + _lookalikes(lacking, extra), TopicMismatchWarning, stacklevel=3)
    values = np.array([scores.get(t, 0.0) for t in matrix.topics], dtype=np.float64)
    if not np.isfinite(values).all():
        t = matrix.topics[int(np.flatnonzero(~np.isfinite(values))[0])]
        raise InputError(f"baseline {name!r} has a non-finite score on topic {t!r}")
    if not all(present):
        if missing == "drop":
            keep = [t for t, p in zip(matrix.topics, present) if p]
            matrix = matrix.select(topics=keep)
            values = values[np.asarray(present)]
    return matrix, Baseline(name, values[None, :].copy())


def _shown(topics, n: int = 10) -> str:
    topics = list(topics)
    return ", ".join(map(repr, topics[:n])) + (f" and {len(topics) - n} more" if len(topics) > n else "")


def _lookalikes(ours, theirs) -> str:
    """A hint when ids differ only in form (``0152`` vs ``152``, case, whitespace)."""
    def key(t: str) -> str:
        t = t.strip().lower()
        return t.lstrip("0") or "0" if t.isdigit() else t

    theirs_by_key = {key(t): t for t in theirs}
    pairs = [(t, theirs_by_key[key(t)]) for t in ours if key(t) in theirs_by_key and theirs_by_key[key(t)] != t]
    if not pairs:
        return ""
    shown = ", ".join(f"{a!r} ~ {b!r}" for a, b in pairs[:5])
    return f" (ids that differ only in form, e.g. leading zeros: {shown}; rename them to match)"
