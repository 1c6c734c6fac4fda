"""What the simulation studies read of a collection: the measure (`canonical_measure`), its
support (simIReff's ``support``: a lattice measure's points, None for continuous ones;
`check_scores` rejects scores off it) and the runs the study keeps (`kept_runs`: the study's
``R/common.R`` ``removeDuplicates``, then ``removeBottom(p = .1)`` on R's ``colMeans``, as
``R/01-margins.R`` and ``R/03-bicops.R`` call them).

Any measure with scores in [0, 1] can be simulated. The study's five keep their keys ('ap',
'ndcg20', 'err20', 'p10', 'rr') and supports; any other is named by its ir_measures name
(`fastrisk.measures.names.parse_measure`: 'nDCG@10', 'P@5', 'RR@10'). simIReff fits a
measure's margins by its support (``R/01-margins.R``: ``effContFitAndSelect`` for AP,
nDCG@20, ERR@20, ``effDiscFitAndSelect(x, support(measure))`` for P@10 and RR), so a lattice
measure gets the discrete families on its own lattice -- P@k and Judged@k: j / k, j = 0..k;
RR@k: 0 and 1 / r, r = 1..k (RR without a cutoff: r <= 1000, as the study's ``support("rr")``);
Success@k: {0, 1} -- and every other measure (AP, nDCG, ERR, RBP, R@k, Rprec, Bpref, infAP,
Judged without a cutoff, and names fastrisk does not compute, such as ir_measures'
alpha_nDCG) the four continuous families.
"""

from __future__ import annotations

import re

import numpy as np

from fastrisk.data.io import read_matrix
from fastrisk.errors import InputError
from fastrisk.measures.names import _PATTERN, MEASURES, parse_measure
from fastrisk.simulate._r.rmath import r_quantile7

#: Measures of the study (names as in its ``R/common.R``) -> (kind, support or None).
CONTINUOUS = ("ap", "ndcg20", "err20")
DISCRETE = ("p10", "rr")
_ALIASES = {"ap": "ap", "map": "ap", "ndcg20": "ndcg20", "ndcg@20": "ndcg20", "err20": "err20", "err@20": "err20",
            "p10": "p10", "p@10": "p10", "rr": "rr", "mrr": "rr", "recip_rank": "rr"}
#: Deepest rank of RR's support without a cutoff (the study's ``support("rr")``: 1 / 1000).
RR_DEPTH = 1000
#: simIReff's ``matchTol``: a score within this of a support point is on it.
MATCH_TOL = 1e-4
#: A name fastrisk does not compute (ir_measures' alpha_nDCG@20, NERR@10, ...).
_OTHER = re.compile(r"[A-Za-z][A-Za-z_]*(\([A-Za-z0-9_.=, ]*\))?(@[0-9]+)?")


def _family(text: str) -> str | None:
    """The family fastrisk knows a name by (None: a name it does not compute)."""
    m = _PATTERN.match(text)
    head = (m.group(1) if m else text).lower()
    for fam, spec in MEASURES.items():
        if head == fam.lower() or head in spec.spellings:
            return fam
    return None


def canonical_measure(name) -> str:
    """The key of a measure in the studies and their caches: the study's own for its five
    ('AP', 'nDCG@20', 'ERR@20', 'P@10', 'RR' or 'ap', 'ndcg20', ... -> 'ap', 'ndcg20', 'err20',
    'p10', 'rr'), else the ir_measures name `parse_measure` prints ('ndcg@10' -> 'nDCG@10',
    'P_5' -> 'P@5'), else the name as given (a measure fastrisk does not compute, e.g.
    alpha_nDCG@20: simulated as continuous on [0, 1])."""
    text = str(name).strip()
    if not text:
        raise InputError("the simulation measure is empty: name it (e.g. AP, nDCG@10, P@5, RR@10)")
    key = _ALIASES.get(text.lower())
    if key is not None:
        return key
    try:
        m = parse_measure(text)
    except InputError as exc:
        if _family(text) is not None or _OTHER.fullmatch(text) is None:  # a known family misused, or no name
            raise InputError(f"unknown simulation measure {text!r}: {exc}") from None
        return text
    if m.family.startswith("Num"):  # NumRet, NumRel, NumQ: counts
        raise InputError(f"{m.name} counts documents or topics: a simulation needs a measure on [0, 1]")
    return _ALIASES.get(m.name.lower(), m.name)


def support(measure: str) -> np.ndarray | None:
    """Discrete support of a measure (simIReff ``support``), None for continuous measures.

    P@k, Judged@k: j / k (j = 0..k); RR@k: 0 and 1 / r (r = k..1); RR: r <= `RR_DEPTH` (the
    study's); Success@k: {0, 1}. Points ascending, as simIReff's ``support``."""
    m = canonical_measure(measure)
    if m == "rr":
        return np.concatenate([[0.0], 1.0 / np.arange(RR_DEPTH, 0, -1)])
    if m == "p10":
        return np.arange(11) / 10.0
    if _family(m) is None:  # a measure fastrisk does not compute: continuous on [0, 1]
        return None
    parsed = parse_measure(m)
    family, k = parsed.family, parsed.cutoff
    if family == "Success":
        return np.array([0.0, 1.0])
    if family in ("P", "Judged") and k is not None:
        return np.arange(k + 1) / float(k)
    if family == "RR":
        return np.concatenate([[0.0], 1.0 / np.arange(RR_DEPTH if k is None else k, 0, -1)])
    return None


def read_collection(item, measure=None):
    """(measure key, ScoreMatrix) of a score-matrix file (any format `fastrisk.read_matrix`
    reads): the file's own measure (a Parquet written by ``fastrisk evaluate --matrix-out``
    carries it) or ``measure``; both, and different, are an error."""
    try:
        mat = read_matrix(item)
    except InputError:
        if measure is None:
            raise
        mat = read_matrix(item, measure=str(measure))  # trec_eval / ir_measures output with several measures
    own = getattr(mat, "measure", None)
    if own is None and measure is None:
        raise InputError(f"{item}: the matrix does not name its measure; give it (--measure, measure=), "
                         f"e.g. nDCG@10 or P@5")
    key = canonical_measure(own if own is not None else measure)
    if measure is not None and canonical_measure(measure) != key:
        raise InputError(f"{item} holds {own}, not {measure!r}: give --measure {own} or another matrix")
    return key, mat


def file_stem(measure: str) -> str:
    """A measure key as it goes into file names (``P(rel=2)@10`` -> ``P_rel=2_@10``)."""
    return re.sub(r"[^A-Za-z0-9@.=_-]+", "_", canonical_measure(measure))


def describe_support(measure: str) -> str:
    """'continuous on [0, 1]' or the lattice in words (for messages and tables)."""
    sup = support(measure)
    if sup is None:
        return "continuous on [0, 1]"
    if len(sup) == 2:
        return "{0, 1}"
    if sup[-1] == 1.0 and sup[1] < sup[-1] and np.allclose(np.diff(sup), sup[1]):
        return f"j/{len(sup) - 1}, j = 0..{len(sup) - 1}"
    return f"0 and 1/r, r = 1..{len(sup) - 1}"


#: Scores within this (absolute) of a lattice point are that point (`snap_to_support`): the
#: noise of a score computed or printed another way (0.30000000000000004 for 3/10), far below
#: any lattice's spacing (RR's deepest: 1/999 - 1/1000 = 1e-6) and below any rounding of the
#: data (the study's RR matrices are rounded to 4 decimals: 0.3333, not 1/3).
SNAP_TOL = 1e-9


def snap_to_support(values, measure: str) -> np.ndarray:
    """``values`` (float64) with every score within `SNAP_TOL` of a point of ``measure``'s
    support (`support`) replaced by that point; continuous measures and other scores unchanged.

    The same P@10 matrix printed as 0.3 or as 0.30000000000000004 is then one matrix: one cache
    key, one tie-breaking seed (`fastrisk.simulate.fits.ties_base_seed` hashes the scores) and
    the same ties in ``pobs``, so the same copulas and rates. Only floating-point noise is
    snapped, not `MATCH_TOL`: scores rounded in the data (the study's RR, 0.3333) stay as the
    study fits them (``R/03-bicops.R`` takes ``pobs`` of the scores as read)."""
    V = np.array(values, dtype=np.float64)
    sup = support(measure)
    if sup is None or V.size == 0:
        return V
    i = np.clip(np.searchsorted(sup, V), 1, len(sup) - 1)
    lo, hi = sup[i - 1], sup[i]
    near = np.where(np.abs(V - lo) <= np.abs(V - hi), lo, hi)
    close = np.abs(V - near) <= SNAP_TOL  # NaN and scores off the lattice stay (check_scores names them)
    V[close] = near[close]
    return V


def check_scores(values, measure: str, *, name: str = "", systems=None, topics=None) -> None:
    """`InputError` naming the collection, system, topic and value of the first score that is
    not finite, outside [0, 1], or (lattice measures) off the support by more than
    `MATCH_TOL` (simIReff's ``matchTol``)."""
    V = np.asarray(values, dtype=np.float64)
    sup = support(measure)
    bad = ~np.isfinite(V) | (V < 0) | (V > 1)
    rule = "in [0, 1]"
    if sup is not None and not bad.any():
        i = np.clip(np.searchsorted(sup, V), 1, len(sup) - 1)
        bad = np.minimum(np.abs(V - sup[i - 1]), np.abs(V - sup[i])) > MATCH_TOL
        rule = f"on {canonical_measure(measure)}'s lattice ({describe_support(measure)}, within {MATCH_TOL:g})"
    if not bad.any():
        return
    s, t = (int(v[0]) for v in np.nonzero(bad))
    sys_ = systems[s] if systems is not None else f"row {s}"
    top = topics[t] if topics is not None else f"column {t}"
    where = f"collection {name!r}, " if name else ""
    raise InputError(f"{where}system {sys_!r}, topic {top!r}: score {float(V[s, t])!r} is not {rule} "
                     f"({int(bad.sum())} such score(s)); give the matrix's own measure (--measure)")


# ================================================================== runs kept
def kept_runs(values: np.ndarray, *, tol: float = 1e-5, bottom: float = 0.1) -> tuple[np.ndarray, dict]:
    """Rows of ``values`` (systems x topics) kept by the study: duplicates, then the bottom 10 %.

    Returns (kept row indices, {"duplicates": [...], "bottom": [...]})."""
    V = np.asarray(values, dtype=np.float64)
    S = V.shape[0]
    dup = set()
    for i in range(S - 1):  # removeDuplicates: j is dropped if it duplicates any earlier i
        close = np.all(np.abs(V[i + 1:] - V[i]) <= tol, axis=1)
        dup.update((i + 1 + np.flatnonzero(close)).tolist())
    rest = np.array([s for s in range(S) if s not in dup], dtype=np.int64)
    mu = r_col_means(V[rest])
    q = r_quantile7(mu, bottom)
    keep = mu >= q
    return rest[keep], {"duplicates": sorted(dup), "bottom": rest[~keep].tolist()}


def r_col_means(V) -> np.ndarray:
    """R's ``colMeans`` of each row of ``V``: a sequential sum in extended precision divided
    by n, rounded to double (R's ``do_colsum``). On lattice scores (P@10) a run's mean can sit
    on the 10 % quantile exactly, and a double sum one ulp below it drops a run R keeps
    (adhoc8_p10 run25: 0.18999999999999997 against R's 0.19)."""
    X = np.asarray(V, dtype=np.longdouble)
    return (np.cumsum(X, axis=-1)[..., -1] / X.shape[-1]).astype(np.float64)
