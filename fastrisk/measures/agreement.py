"""Rank agreement: RBO with ties, Kendall's tau-b, the Friedman test, prefix comparisons.

Rankings are sequences of items, best first; an element that is a ``tuple``, ``list``,
``set`` or ``frozenset`` is a group of tied items. A string is parsed with
`parse_ranking` (``"a (b c) d"``: ``b`` and ``c`` tied at ranks 2-3). Score vectors
become rankings with `ranking_from_scores` (higher score first, equal scores tied).

RBO is rank-biased overlap (Webber, Moffat and Zobel, TOIS 2010) with the three treatments
of ties of Corsi and Urbano (SIGIR 2024): ``"w"`` (tied items share the rank, for ties that
mean equality), ``"a"`` (the expected RBO over random tie-breaking) and ``"b"`` (corrected
for the information lost to ties). Without ties the three are the original RBO. Every
result reports the lower bound ``min`` (RBO_min), upper bound ``max``, residual
``res = max - min`` and extrapolated ``ext`` (RBO_ext).

Pairs. Every comparison here is symmetric, so the two rankings (or score vectors) of a pair
are the parameters ``a`` and ``b`` and the long-form columns ``a`` and ``b`` (their labels);
a dimension that only enumerates pairs is ``pair``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from fastrisk._kernels import agreement as _k
from fastrisk._runtime.threads import limit_threads, parallel
from fastrisk._runtime.validation import choice, open_unit
from fastrisk.data.results import Result, array, param
from fastrisk.errors import InputError

__all__ = [
    "RBOResult",
    "RBOMatrix",
    "PrefixAgreement",
    "KendallTauResult",
    "KendallTauMatrix",
    "FriedmanResult",
    "parse_ranking",
    "format_ranking",
    "ranking_from_scores",
    "rbo",
    "rbo_many",
    "rbo_matrix",
    "prefix_agreement",
    "kendall_tau",
    "kendall_tau_matrix",
    "friedman",
]

TIES = ("w", "a", "b")
_TIES_CODE = {"w": _k.TIES_W, "a": _k.TIES_A, "b": _k.TIES_B}
_GROUP_TYPES = (tuple, list, set, frozenset)
_TOKEN = re.compile(r"\(|\)|[^\s()]+")


# ---------------------------------------------------------------------------- rankings


def parse_ranking(text: str) -> list:
    """Parse ``"a (b c) d"`` into ``['a', ('b', 'c'), 'd']``: parentheses group ties.

    Parameters
    ----------
    text : str
        Items separated by spaces, tied items in parentheses: ``"a (b c) d"``.

    Returns
    -------
    list
        The ranking: items, tuples for tied items.

    References
    ----------
    Corsi, M. & Urbano, J. (2024). The treatment of ties in rank-biased overlap. SIGIR 2024.

    Examples
    --------
    >>> import fastrisk
    >>> fastrisk.parse_ranking('a (b c) d')
    ['a', ('b', 'c'), 'd']
    """
    if not isinstance(text, str):
        raise InputError(f"a ranking string must be a str, got {type(text).__name__}")
    out: list = []
    group: list | None = None
    for token in _TOKEN.findall(text):
        if token == "(":
            if group is not None:
                raise InputError(f"nested '(' in ranking {text!r}")
            group = []
        elif token == ")":
            if group is None:
                raise InputError(f"unmatched ')' in ranking {text!r}")
            if not group:
                raise InputError(f"empty tie group '()' in ranking {text!r}")
            out.append(tuple(group) if len(group) > 1 else group[0])
            group = None
        elif group is not None:
            group.append(token)
        else:
            out.append(token)
    if group is not None:
        raise InputError(f"unclosed '(' in ranking {text!r}")
    return out


def format_ranking(ranking) -> str:
    """The inverse of `parse_ranking`: ``['a', ('b', 'c')]`` -> ``"a (b c)"``.

    Parameters
    ----------
    ranking : sequence
        Items, tuples or sets for tied items.

    Returns
    -------
    str
        The ranking as text, tied items in parentheses.

    References
    ----------
    Corsi, M. & Urbano, J. (2024). The treatment of ties in rank-biased overlap. SIGIR 2024.

    Examples
    --------
    >>> import fastrisk
    >>> fastrisk.format_ranking(['a', ('b', 'c'), 'd'])
    'a (b c) d'
    """
    parts = []
    for element in _ranking_elements(ranking, "ranking"):
        if isinstance(element, _GROUP_TYPES):
            members = [str(m) for m in element]
            parts.append(members[0] if len(members) == 1 else "(" + " ".join(members) + ")")
        else:
            parts.append(str(element))
    return " ".join(parts)


def ranking_from_scores(scores, items: Sequence | None = None) -> list:
    """The ranking of ``items`` (default: positions 0..n-1) by decreasing ``scores``.

    Items with equal scores form a tie group (a tuple, in the order given).

    Parameters
    ----------
    scores : array_like
        One score per item.
    items : sequence, optional
        Item labels (default: positions).

    Returns
    -------
    list
        Items by descending score, equal scores tied.

    References
    ----------
    Corsi, M. & Urbano, J. (2024). The treatment of ties in rank-biased overlap. SIGIR 2024.

    Examples
    --------
    >>> import fastrisk
    >>> fastrisk.ranking_from_scores([0.3, 0.9, 0.3], items=['a', 'b', 'c'])
    ['b', ('a', 'c')]
    """
    x = _score_vector(scores, "scores")
    if items is None:
        items = list(range(x.size))
    elif len(items) != x.size:
        raise InputError(f"`items` has {len(items)} labels but `scores` has {x.size} values")
    n = x.size
    ids = np.empty(n, np.int64)
    top = np.empty(n, np.int64)
    bot = np.empty(n, np.int64)
    _k.ranking_from_scores(x, ids, top, bot)
    out: list = []
    i = 0
    while i < n:
        j = int(bot[i])
        if j == i:
            out.append(items[ids[i]])
        else:
            out.append(tuple(items[ids[k]] for k in range(i, j + 1)))
        i = j + 1
    return out


def _ranking_elements(ranking, name: str):
    if isinstance(ranking, str):
        return parse_ranking(ranking)
    if isinstance(ranking, np.ndarray):
        ranking = ranking.tolist()
    if not isinstance(ranking, (list, tuple)):
        raise InputError(f"`{name}` must be a list or tuple of items (or a ranking string), "
                         f"got {type(ranking).__name__}")
    return ranking


def _flatten(ranking, name: str):
    """(items, top, bot) of one ranking; top/bot are None when it has no ties."""
    elements = _ranking_elements(ranking, name)
    if not elements:
        raise InputError(f"`{name}` is an empty ranking")
    if not any(issubclass(t, _GROUP_TYPES) for t in set(map(type, elements))):
        return elements, None, None
    items: list = []
    top: list = []
    bot: list = []
    for element in elements:
        members = list(element) if isinstance(element, _GROUP_TYPES) else [element]
        pos = len(items)
        if not members:
            raise InputError(f"`{name}` has an empty tie group at rank {pos + 1}")
        if any(isinstance(m, _GROUP_TYPES) for m in members):
            raise InputError(f"`{name}` has a nested tie group at rank {pos + 1}")
        items.extend(members)
        top.extend([pos] * len(members))
        bot.extend([pos + len(members) - 1] * len(members))
    return items, top, bot


def _encode_many(rankings, names):
    """Concatenated (ids, top, bot, offsets) of the rankings, items coded densely."""
    all_items: list = []
    offsets = [0]
    tied = []
    for r, name in zip(rankings, names):
        items, top, bot = _flatten(r, name)
        all_items.extend(items)
        offsets.append(len(all_items))
        if top is not None:
            tied.append((offsets[-2], top, bot))
    try:
        index = {item: i for i, item in enumerate(dict.fromkeys(all_items))}
    except TypeError:
        bad = next(i for i in all_items if not _hashable(i))
        raise InputError(f"rankings must hold hashable items, got {bad!r}") from None
    n = len(all_items)
    ids = np.fromiter(map(index.__getitem__, all_items), np.int64, n)
    offsets = np.array(offsets, np.int64)
    lengths = np.diff(offsets)
    top = np.arange(n, dtype=np.int64) - np.repeat(offsets[:-1], lengths)
    bot = top.copy()
    for start, t, b in tied:
        top[start:start + len(t)] = t
        bot[start:start + len(b)] = b
    for k, name in enumerate(names):
        a, b = int(offsets[k]), int(offsets[k + 1])
        if len(set(all_items[a:b])) != b - a:
            seen = set()
            for i in range(a, b):
                if ids[i] in seen:
                    raise InputError(f"`{name}` ranks item {all_items[i]!r} more than once")
                seen.add(ids[i])
    return ids, top, bot, offsets


def _hashable(item) -> bool:
    try:
        hash(item)
    except TypeError:
        return False
    return True


# ---------------------------------------------------------------------------- validation


def _check_p(p) -> float:
    return open_unit(p, "p", "a persistence")


def _check_ties(ties) -> str:
    if ties not in TIES:
        raise InputError(f"`ties` must be one of 'w', 'a' or 'b', got {ties!r}")
    return ties


def _score_vector(x, name: str) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"`{name}` must be a 1-D array of numbers") from None
    if arr.ndim != 1:
        raise InputError(f"`{name}` must be 1-D, got shape {arr.shape}")
    if arr.size == 0:
        raise InputError(f"`{name}` is empty")
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise InputError(f"`{name}` must be finite; position {bad} is {arr[bad]}")
    return np.ascontiguousarray(arr)


def _score_table(scores, name: str, min_rows: int, min_cols: int) -> np.ndarray:
    try:
        arr = np.asarray(getattr(scores, "values", scores), dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"`{name}` must be a 2-D array of numbers") from None
    if arr.ndim != 2:
        raise InputError(f"`{name}` must be 2-D (rankings x items), got shape {arr.shape}")
    if arr.shape[0] < min_rows or arr.shape[1] < min_cols:
        raise InputError(f"`{name}` needs at least {min_rows} rows (rankings) and {min_cols} "
                         f"columns (items), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        r, c = np.argwhere(~np.isfinite(arr))[0]
        raise InputError(f"`{name}` must be finite; row {r}, column {c} is {arr[r, c]}")
    return np.ascontiguousarray(arr)


def _row_labels(labels, k: int, name: str = "labels", what: str = "rankings") -> tuple:
    if labels is None:
        labels = range(k)
    labels = tuple(str(v) for v in labels)
    if len(labels) != k:
        raise InputError(f"`{name}` has {len(labels)} entries for {k} {what}")
    return labels


def _upper_pairs(k: int):
    first, second = np.triu_indices(k)
    return first.astype(np.int64), second.astype(np.int64)


def _mirror(values: np.ndarray, first, second, k: int) -> np.ndarray:
    out = np.empty((k, k) + values.shape[1:])
    out[first, second] = values
    out[second, first] = values
    return out


# ---------------------------------------------------------------------------- RBO


@dataclass(frozen=True, repr=False)
class RBOResult(Result):
    """RBO of one pair (floats) or of many pairs (arrays ``[pair]``, one entry per pair).

    ``labels_a``/``labels_b`` name the two rankings of each pair (default ``"a"``/``"b"``
    for one pair, ``"a[i]"``/``"b[i]"`` for many).

    Long form (one row per pair): ``pair`` (0-based), ``a``, ``b``, ``ties``, ``ext``,
    ``min``, ``max``, ``res``, ``p``.
    """

    _coords = {"pair": {"pair": "pair_index", "a": "labels_a", "b": "labels_b"}}
    _constants = ("ties",)

    ties: str
    labels_a: tuple = param(doc="Name of the first ranking of each pair.")
    labels_b: tuple = param(doc="Name of the second ranking of each pair.")
    ext: float | np.ndarray = array("pair")
    min: float | np.ndarray = array("pair")
    max: float | np.ndarray = array("pair")
    res: float | np.ndarray = array("pair")
    p: float | np.ndarray = array("pair")

    @property
    def pair_index(self) -> np.ndarray:
        """Position of each pair, 0-based."""
        return np.arange(len(self.labels_a))


def _rbo_many_iv(xs, ys, p, ties, labels):
    ties = _check_ties(ties)
    xs = list(xs) if not isinstance(xs, (list, tuple)) else xs
    ys = list(ys) if not isinstance(ys, (list, tuple)) else ys
    if len(xs) != len(ys):
        raise InputError(f"`a` and `b` must hold as many rankings, got {len(xs)} and {len(ys)}")
    n = len(xs)
    if labels is None:
        labels = ([f"a[{i}]" for i in range(n)], [f"b[{i}]" for i in range(n)])
    if len(labels) != 2:
        raise InputError("`labels` must be two sequences: the labels of the `a` and of the `b` rankings")
    labels = tuple(_row_labels(lab, n, "labels", "pairs") for lab in labels)
    if np.ndim(p) == 0:
        pv = np.full(len(xs), _check_p(p))
    else:
        pv = np.asarray(p, dtype=np.float64)
        if pv.shape != (len(xs),):
            raise InputError(f"`p` must be a number or one per pair ({len(xs)}), got shape {pv.shape}")
        bad = ~((pv > 0.0) & (pv < 1.0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"`p` (persistence) must be strictly between 0 and 1, got {pv[i]} for pair {i}")
    return xs, ys, np.ascontiguousarray(pv), ties, labels


def rbo_many(a, b, *, p=0.9, ties: str = "a", labels: Sequence | None = None,
             threads: int | None = None) -> RBOResult:
    """RBO of each pair ``(a[i], b[i])`` of rankings in one parallel call.

    Parameters
    ----------
    a, b : sequence of rankings
        As many rankings each; pair i is ``(a[i], b[i])``.
    p : float or sequence of float
        Persistence, one for all pairs or one per pair.
    ties : {"w", "a", "b"}
        Treatment of ties (Corsi & Urbano 2024).
    labels : (sequence, sequence), optional
        Labels of the ``a`` and of the ``b`` rankings, for the long form's ``a``/``b`` columns.
    threads : int, optional
        Numba threads (default: all).

    Returns
    -------
    RBOResult
        Arrays ``[pair]``.

    References
    ----------
    Webber, W., Moffat, A. & Zobel, J. (2010). A similarity measure for indefinite rankings. ACM TOIS 28(4), 20.

    Corsi, M. & Urbano, J. (2024). The treatment of ties in rank-biased overlap. SIGIR 2024.

    Examples
    --------
    >>> import fastrisk
    >>> import numpy as np
    >>> res = fastrisk.rbo_many(['a b c', 'a b c'], ['a c b', 'c b a'], p=0.9)
    >>> print(np.round(res.ext, 4))
    [0.955 0.855]
    """
    xs, ys, pv, ties, labels = _rbo_many_iv(a, b, p, ties, labels)
    n = len(xs)
    names = [f"a[{i}]" for i in range(n)] + [f"b[{i}]" for i in range(n)]
    ids, top, bot, offsets = _encode_many(list(xs) + list(ys), names)
    first = np.arange(n, dtype=np.int64)
    second = first + n
    out = np.empty((n, 4))
    if n:
        with limit_threads(threads, 8 * ids.size):
            _kernel("rbo_batch", 8 * ids.size)(ids, top, bot, offsets, first, second, pv, _TIES_CODE[ties], out)
    return RBOResult(ext=out[:, 0], min=out[:, 1], max=out[:, 2], res=out[:, 3],
                     p=pv if np.ndim(p) else float(p), ties=ties, labels_a=labels[0], labels_b=labels[1])


def rbo(a, b, *, p: float = 0.9, ties: str = "a", labels: Sequence = ("a", "b")) -> RBOResult:
    """Rank-biased overlap of two rankings (Webber, Moffat & Zobel, TOIS 2010).

    ``RBO = (1 - p) sum_d p^(d-1) |A_d ∩ B_d| / d`` over prefix depths d, reported as its
    lower bound, upper bound, residual and extrapolation; ties as Corsi & Urbano (SIGIR 2024).

    Parameters
    ----------
    a, b : ranking
        Lists of items (tuples/sets for tied items) or strings such as ``"a (b c) d"``; they
        may have different lengths and need not share all items.
    p : float
        Persistence, 0 < p < 1 (expected depth 1/(1-p)).
    ties : {"w", "a", "b"}
        Treatment of ties.
    labels : (str, str)
        Names of the two rankings, for the long form's ``a``/``b`` columns.

    Returns
    -------
    RBOResult
        ``ext``, ``min``, ``max``, ``res`` as floats.

    References
    ----------
    Webber, W., Moffat, A. & Zobel, J. (2010). A similarity measure for indefinite rankings. ACM TOIS 28(4), 20.

    Corsi, M. & Urbano, J. (2024). The treatment of ties in rank-biased overlap. SIGIR 2024.

    Examples
    --------
    >>> import fastrisk
    >>> res = fastrisk.rbo('a b (c d) e', 'b a c d e', p=0.9)
    >>> round(float(res.ext), 4), round(float(res.min), 4), round(float(res.res), 4)
    (0.8865, 0.5585, 0.328)
    """
    p = _check_p(p)
    ties = _check_ties(ties)
    labels = _row_labels(labels, 2, "labels", "rankings")
    ids, top, bot, offsets = _encode_many([a, b], ["a", "b"])
    nx = int(offsets[1])
    out = np.empty(4)
    _k.rbo_pair(ids[:nx], top[:nx], bot[:nx], ids[nx:], top[nx:], bot[nx:],
                p, _TIES_CODE[ties], out)
    return RBOResult(ext=float(out[0]), min=float(out[1]), max=float(out[2]),
                     res=float(out[3]), p=p, ties=ties, labels_a=labels[:1], labels_b=labels[1:])


@dataclass(frozen=True, repr=False)
class RBOMatrix(Result):
    """RBO between every pair of the K rankings induced by K score vectors: arrays ``[a, b]``.

    Long form (one row per ordered pair, diagonal included): ``a``, ``b`` (the rankings'
    labels), ``p``, ``ties``, ``ext``, ``min``, ``max``, ``res``.
    """

    _coords = {"a": {"a": "labels"}, "b": {"b": "labels"}}
    _constants = ("p", "ties")

    labels: tuple
    p: float
    ties: str
    ext: np.ndarray = array("a", "b")
    min: np.ndarray = array("a", "b")
    max: np.ndarray = array("a", "b")
    res: np.ndarray = array("a", "b")


def _kernel(name: str, work: float):
    """The parallel driver ``name`` for ``work`` element-operations worth a thread pool, else
    its one-thread twin (same numbers; compiles several times faster on first use)."""
    return getattr(_k, name if parallel(work) else name + "_serial")


def _rankings_of(table: np.ndarray):
    k, n = table.shape
    ids = np.empty((k, n), np.int64)
    top = np.empty((k, n), np.int64)
    bot = np.empty((k, n), np.int64)
    _kernel("rankings_from_scores", 8 * table.size)(table, ids, top, bot)
    return ids, top, bot


def rbo_matrix(scores, *, p: float = 0.9, ties: str = "a", labels: Sequence | None = None,
               threads: int | None = None) -> RBOMatrix:
    """RBO between the orderings induced by each pair of rows of ``scores`` (K x n).

    Row k scores n items (e.g. the URisk of n systems under baseline k); each row induces a
    ranking, higher score first, equal scores tied. Every unordered pair (and the diagonal,
    which is below 1 under ``"a"``/``"b"`` when a ranking has ties) is computed once.

    Parameters
    ----------
    scores : array_like
        ``(K, n)``: K score vectors over the same n items, ranked by descending score.
    p : float
        Persistence.
    ties : {"w", "a", "b"}
        Treatment of ties.
    labels : sequence, optional
        Labels of the K rankings.
    threads : int, optional
        Numba threads (default: all).

    Returns
    -------
    RBOMatrix
        ``ext``, ``min``, ``max``, ``res``, ``[a, b]``.

    References
    ----------
    Webber, W., Moffat, A. & Zobel, J. (2010). A similarity measure for indefinite rankings. ACM TOIS 28(4), 20.

    Corsi, M. & Urbano, J. (2024). The treatment of ties in rank-biased overlap. SIGIR 2024.

    Examples
    --------
    >>> import fastrisk
    >>> import numpy as np
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> table = fastrisk.baseline_table(matrix, ['uogTrA44xi', 'srchvrs12c09', 'qutwb'], alpha=5)
    >>> res = fastrisk.rbo_matrix(table.urisk[0].T, labels=table.baselines)
    >>> print(np.round(res.ext, 3))
    [[0.997 0.543 0.718]
     [0.543 0.995 0.548]
     [0.718 0.548 0.997]]
    """
    p = _check_p(p)
    ties = _check_ties(ties)
    table = _score_table(scores, "scores", 1, 1)
    k, n = table.shape
    labels = _row_labels(labels, k)
    first, second = _upper_pairs(k)
    out = np.empty((first.size, 4))
    with limit_threads(threads, 16 * first.size * n):
        ids, top, bot = _rankings_of(table)
        offsets = np.arange(0, k * n + 1, n, dtype=np.int64)
        _kernel("rbo_batch", first.size * n)(ids.reshape(-1), top.reshape(-1), bot.reshape(-1), offsets, first, second,
                     np.full(first.size, p), _TIES_CODE[ties], out)
    full = _mirror(out, first, second, k)
    return RBOMatrix(ext=full[..., 0], min=full[..., 1], max=full[..., 2], res=full[..., 3],
                     labels=labels, p=p, ties=ties)


# ---------------------------------------------------------------------------- prefixes


@dataclass(frozen=True, repr=False)
class PrefixAgreement(Result):
    """RBO of the orderings two score vectors induce, over growing prefix depths.

    ``length_a``/``length_b`` are the prefix lengths actually compared: a tie group that
    straddles the depth is kept whole. Arrays ``[depth]``.

    Long form (one row per depth): ``depth``, ``p``, ``ties``, ``length_a``, ``length_b``,
    ``ext``, ``min``, ``max``, ``res``.
    """

    _coords = {"depth": {"depth": "depth"}}
    _constants = ("p", "ties")

    depth: np.ndarray = param(doc="Prefix depths compared (the labels of the ``depth`` dim).")
    p: float
    ties: str
    length_a: np.ndarray = array("depth", doc="Length of the compared prefix of ``a`` (a tie group straddling the depth"
                                              " is kept whole).")
    length_b: np.ndarray = array("depth", doc="Length of the compared prefix of ``b``.")
    ext: np.ndarray = array("depth")
    min: np.ndarray = array("depth")
    max: np.ndarray = array("depth")
    res: np.ndarray = array("depth")


def _prefix_agreement_iv(a, b, depths, p, ties):
    a = _score_vector(a, "a")
    b = _score_vector(b, "b")
    if a.size != b.size:
        raise InputError(f"`a` and `b` must score the same systems, got {a.size} and {b.size} values")
    if depths is None:
        d = np.arange(1, a.size + 1, dtype=np.int64)
    else:
        d = np.atleast_1d(np.asarray(depths))
        if d.ndim != 1 or d.size == 0 or not np.issubdtype(d.dtype, np.integer):
            raise InputError("`depths` must be a non-empty list of integers")
        bad = (d < 1) | (d > a.size)
        if bad.any():
            raise InputError(f"`depths` must lie in 1..{a.size} (the number of systems), "
                             f"got {int(d[bad][0])}")
        d = d.astype(np.int64)
    return a, b, np.ascontiguousarray(d), _check_p(p), _check_ties(ties)


def prefix_agreement(a, b, *, depths=None, p: float = 0.9, ties: str = "a",
                     threads: int | None = None) -> PrefixAgreement:
    """How the orderings induced by two score vectors agree at prefix depths 1..n.

    ``a`` and ``b`` score the same n systems (e.g. risk under the linear and the smooth
    value function); each induces an ordering (higher first, equal scores tied). For each
    depth k (default 1..n) the RBO of the two top-k prefixes is computed, as in Figure 4 of
    Benham et al. (2019).

    Parameters
    ----------
    a, b : ranking
        The two rankings.
    depths : sequence of int, optional
        Prefix depths (default: every depth).
    p : float
        Persistence.
    ties : {"w", "a", "b"}
        Treatment of ties.
    threads : int, optional
        Numba threads (default: all).

    Returns
    -------
    PrefixAgreement
        RBO of the two prefixes ``[depth]``.

    References
    ----------
    Webber, W., Moffat, A. & Zobel, J. (2010). A similarity measure for indefinite rankings. ACM TOIS 28(4), 20.

    Corsi, M. & Urbano, J. (2024). The treatment of ties in rank-biased overlap. SIGIR 2024.

    Examples
    --------
    >>> import fastrisk
    >>> import numpy as np
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> a, b = matrix.scores_of('uogTrA44xi'), matrix.scores_of('qutwb')
    >>> res = fastrisk.prefix_agreement(a, b, depths=[5, 10, 50])
    >>> print(np.round(res.ext, 3))
    [0.546 0.577 0.548]
    """
    a, b, d, p, ties = _prefix_agreement_iv(a, b, depths, p, ties)
    out = np.empty((d.size, 4))
    lengths = np.empty((d.size, 2), np.int64)
    with limit_threads(threads, 16 * int(d.sum())):
        ids, top, bot = _rankings_of(np.vstack([a, b]))
        _kernel("rbo_prefixes", 16 * int(d.sum()))(ids[0], top[0], bot[0], ids[1], top[1], bot[1], d, p,
                        _TIES_CODE[ties], out, lengths)
    return PrefixAgreement(depth=d, length_a=lengths[:, 0].copy(), length_b=lengths[:, 1].copy(),
                           ext=out[:, 0].copy(), min=out[:, 1].copy(), max=out[:, 2].copy(),
                           res=out[:, 3].copy(), p=p, ties=ties)


# ---------------------------------------------------------------------------- Kendall


@dataclass(frozen=True, repr=False)
class KendallTauResult(Result):
    """Kendall's tau-b and its two-sided p-value (as scipy.stats.kendalltau, method='auto').

    Long form: one row, ``statistic``, ``pvalue``.
    """

    statistic: float = array()
    pvalue: float = array()


def _dense(table: np.ndarray) -> np.ndarray:
    ranks = np.empty(table.shape, np.int64)
    _kernel("dense_ranks", 8 * table.size)(table, ranks)
    return ranks


def kendall_tau(a, b) -> KendallTauResult:
    """Kendall's tau-b between two score vectors over the same items (ties allowed).

    Equal to ``scipy.stats.kendalltau(a, b)``: the p-value is exact without ties and for
    n <= 33, asymptotic (with the tie-corrected variance) otherwise; NaN if either vector
    is constant.

    Parameters
    ----------
    a, b : array-like
        Scores of the same n items.

    Returns
    -------
    KendallTauResult
        ``statistic`` (tau-b) and ``pvalue`` (two-sided).

    References
    ----------
    Kendall, M. G. (1945). The treatment of ties in ranking problems. Biometrika 33(3), 239-251.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> res = fastrisk.kendall_tau(matrix.values.mean(axis=1), fastrisk.risk(matrix, baseline, alpha=5).urisk[0])
    >>> round(float(res.statistic), 3)
    0.782
    """
    x = _score_vector(a, "a")
    y = _score_vector(b, "b")
    if x.size != y.size:
        raise InputError(f"`a` and `b` must have the same length, got {x.size} and {y.size}")
    if x.size < 2:
        raise InputError(f"Kendall's tau needs at least 2 items, got {x.size}")
    ranks = _dense(np.vstack([x, y]))
    out = np.empty(2)
    _k.kendall_pair(ranks[0], ranks[1], out)
    return KendallTauResult(statistic=float(out[0]), pvalue=float(out[1]))


@dataclass(frozen=True, repr=False)
class KendallTauMatrix(Result):
    """Kendall's tau-b (and p-values) between every pair of K rankings: arrays ``[a, b]``.

    Long form (one row per ordered pair, diagonal included): ``a``, ``b``, ``statistic``,
    ``pvalue``.
    """

    _coords = {"a": {"a": "labels"}, "b": {"b": "labels"}}

    labels: tuple
    statistic: np.ndarray = array("a", "b")
    pvalue: np.ndarray = array("a", "b")


def kendall_tau_matrix(scores, *, labels: Sequence | None = None,
                       threads: int | None = None) -> KendallTauMatrix:
    """Kendall's tau-b between the rows of ``scores`` (K rankings x n items), in parallel.

    Each unordered pair is computed once (O(n log n), Knight's algorithm).

    Parameters
    ----------
    scores : array_like
        ``(K, n)``: K score vectors over the same n items.
    labels : sequence, optional
        Labels of the K vectors.
    threads : int, optional
        Numba threads (default: all).

    Returns
    -------
    KendallTauMatrix
        ``statistic`` and ``pvalue``, ``[a, b]``.

    References
    ----------
    Kendall, M. G. (1945). The treatment of ties in ranking problems. Biometrika 33(3), 239-251.

    Examples
    --------
    >>> import fastrisk
    >>> import numpy as np
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> table = fastrisk.baseline_table(matrix, ['uogTrA44xi', 'srchvrs12c09', 'qutwb'], alpha=5)
    >>> res = fastrisk.kendall_tau_matrix(table.urisk[0].T, labels=table.baselines)
    >>> print(np.round(res.statistic, 3))
    [[1.    0.854 0.813]
     [0.854 1.    0.792]
     [0.813 0.792 1.   ]]
    """
    table = _score_table(scores, "scores", 1, 2)
    k = table.shape[0]
    labels = _row_labels(labels, k)
    first, second = _upper_pairs(k)
    out = np.empty((first.size, 2))
    with limit_threads(threads, 8 * first.size * table.shape[1]):
        ranks = _dense(table)
        _kernel("kendall_pairs", first.size * table.shape[1])(ranks, first, second, out)
    full = _mirror(out, first, second, k)
    return KendallTauMatrix(statistic=full[..., 0], pvalue=full[..., 1], labels=labels)


# ---------------------------------------------------------------------------- Friedman


@dataclass(frozen=True, repr=False)
class FriedmanResult(Result):
    """Friedman test of K rankings (blocks) of n items (treatments).

    ``statistic`` and ``pvalue`` equal ``scipy.stats.friedmanchisquare(*scores.T)``;
    ``kendall_w = statistic / (K (n - 1))`` is Kendall's coefficient of concordance;
    ``mean_ranks[j]`` (``[item]``) is item j's mean rank across the K rankings, 1 = highest.
    ``blocks`` says which axis of the input held the blocks (the rankings): the items ranked
    within a block are the treatments.

    Long form (one row per item): ``item``, ``mean_rank``, ``statistic``, ``pvalue``,
    ``kendall_w`` (the test repeated on every row).
    """

    _coords = {"item": {"item": "items"}}

    items: tuple = param(doc="Labels of the ranked items (the treatments).")
    n_rankings: int = param(doc="Number K of rankings (blocks).")
    blocks: str = param(doc="Which axis of the input held the blocks (the rankings).")
    mean_ranks: np.ndarray = array("item", column="mean_rank", doc="Each item's mean rank across the K rankings (1 = "
                                                                   "highest).")
    statistic: float = array()
    pvalue: float = array()
    kendall_w: float = array(doc="Kendall's coefficient of concordance W = statistic / (K (n - 1)).")


def friedman(scores, *, items: Sequence | None = None, blocks: str = "rows",
             threads: int | None = None) -> FriedmanResult:
    """Friedman's chi-square test that K rankings of n items agree.

    The blocks are the rankings and the treatments the items ranked within each block.
    ``blocks="rows"`` (default): each row of ``scores`` (K x n) is a block, a ranking of the n
    columns, as ``scipy.stats.friedmanchisquare(*scores.T)``; for an all-baseline table, row k
    holds every system's risk under baseline k (blocks: baselines, treatments: systems).
    ``blocks="columns"``: each column is a block (``scores.T`` with rows as blocks). The
    result records the orientation in ``blocks``.

    Parameters
    ----------
    scores : array_like
        Scores, ``(K, n)`` for K rankings of n items (or transposed with ``blocks="columns"``).
    items : sequence, optional
        Item labels.
    blocks : {"rows", "columns"}
        The axis that holds the rankings.
    threads : int, optional
        Numba threads (default: all).

    Returns
    -------
    FriedmanResult
        ``statistic``, ``pvalue``, ``kendall_w`` and the items' mean ranks.

    References
    ----------
    Friedman, M. (1937). The use of ranks to avoid the assumption of normality implicit in the analysis of
    variance. JASA 32(200), 675-701.

    Dinçer, B. T., Ounis, I. & Macdonald, C. (2014). Tackling biased baselines in the risk-sensitive evaluation
    of retrieval systems. ECIR 2014.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> table = fastrisk.baseline_table(matrix, ['uogTrA44xi', 'srchvrs12c09', 'qutwb'], alpha=5)
    >>> res = fastrisk.friedman(table.urisk[0].T, items=table.systems)
    >>> round(float(res.statistic), 2), round(float(res.kendall_w), 3)
    (135.44, 0.961)
    """
    from scipy.stats import chi2  # scipy.stats: ~0.3 s to import, needed here only

    choice(blocks, "blocks", ("rows", "columns"))
    if blocks == "columns":
        scores = np.asarray(scores).T
    table = _score_table(scores, "scores", 2, 3)
    k, n = table.shape
    items = _row_labels(items, n, "items", "items")
    ranks = np.empty(table.shape)
    ties = np.empty(k)
    with limit_threads(threads, 8 * table.size):
        _kernel("friedman_ranks", 8 * table.size)(table, ranks, ties)
    c = 1.0 - ties.sum() / (n * (n * n - 1.0) * k)
    sums = ranks.sum(axis=0)
    if c <= 0.0:
        stat = math.nan
        pvalue = math.nan
    else:
        stat = (12.0 / (n * k * (n + 1.0)) * np.sum(sums**2) - 3.0 * k * (n + 1.0)) / c
        pvalue = float(chi2.sf(stat, n - 1))
    return FriedmanResult(statistic=float(stat), pvalue=pvalue, kendall_w=float(stat) / (k * (n - 1)),
                          mean_ranks=(n + 1.0) - sums / k, items=items, n_rankings=k, blocks=blocks)
