"""What the simulation studies read of a collection: the measure (`canonical_measure`), its
support (simIReff's ``support``: discrete measures' lattice, None for continuous ones) and
the runs the study keeps (`kept_runs`: the study's ``R/common.R`` ``removeDuplicates``, then
``removeBottom(p = .1)`` on R's ``colMeans``, as ``R/01-margins.R`` and ``R/03-bicops.R``
call them)."""

from __future__ import annotations

import numpy as np

from fastrisk.errors import InputError
from fastrisk.simulate._r.rmath import r_quantile7

#: Measures of the study (names as in its ``R/common.R``) -> (kind, support or None).
CONTINUOUS = ("ap", "ndcg20", "err20")
DISCRETE = ("p10", "rr")
_ALIASES = {"ap": "ap", "map": "ap", "ndcg20": "ndcg20", "ndcg@20": "ndcg20", "err20": "err20", "err@20": "err20",
            "p10": "p10", "p@10": "p10", "rr": "rr", "mrr": "rr", "recip_rank": "rr"}


def canonical_measure(name) -> str:
    """'AP', 'nDCG@20', 'ERR@20', 'P@10', 'RR' (or 'ap', 'ndcg20', ...) -> the study's key."""
    key = _ALIASES.get(str(name).strip().lower())
    if key is None:
        raise InputError(f"unknown simulation measure {name!r}: one of AP, nDCG@20, ERR@20, P@10, RR")
    return key


def support(measure: str) -> np.ndarray | None:
    """Discrete support of a measure (simIReff ``support``), None for continuous measures."""
    m = canonical_measure(measure)
    if m == "rr":
        return np.concatenate([[0.0], 1.0 / np.arange(1000, 0, -1)])
    if m == "p10":
        return np.arange(11) / 10.0
    return None


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
