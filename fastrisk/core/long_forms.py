"""Long forms computed piece by piece, in the order of the whole long form, for streaming.

The per-topic risk of a system (Dinçer, Macdonald & Ounis, SIGIR 2014, eqs. 21-23) depends
on that system's scores and the baseline only, and one alpha at a time: the long form
``[alpha, system, topic]`` is produced for one alpha and a block of systems at a time, so
the pieces, concatenated, are exactly ``topic_risk(...).to_arrow()``. The all-baseline table
(Dinçer, Ounis & Macdonald, ECIR 2014) is computed whole (its arrays are ``A x S x S``, as
large as their long form's numeric columns) and its long form ``[alpha, system, baseline]``
is cut into blocks of systems, so the text columns and the p-values exist for one block at a
time.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from fastrisk.core.baselines import Baseline
from fastrisk.core.urisk import topic_risk
from fastrisk.core.values import resolve_value
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.data.streaming import chunk_size

__all__ = ["topic_risk_pieces", "table_pieces", "alpha_steps"]


def alpha_steps(kwargs: dict) -> list[dict]:
    """One keyword set per alpha (or loss weight); a value function is one step."""
    for name in ("alpha", "loss_weight"):
        if kwargs.get(name) is not None:
            rest = {k: v for k, v in kwargs.items() if k != name}
            return [{**rest, name: [v]} for v in np.atleast_1d(np.asarray(kwargs[name], dtype=object))]
    return [dict(kwargs)]


def _block(matrix: ScoreMatrix, base: Baseline, lo: int, hi: int):
    """Systems ``lo:hi`` of ``matrix`` and the baseline aligned with them."""
    sub = ScoreMatrix(matrix.values[lo:hi], matrix.systems[lo:hi], matrix.topics, matrix.measure)
    values = base.values if base.values.shape[0] == 1 else base.values[lo:hi]
    system = base.system - lo if base.system is not None and lo <= base.system < hi else None
    return sub, Baseline(base.name, np.ascontiguousarray(values), system)


def topic_risk_pieces(matrix: ScoreMatrix, base: Baseline, columns=None, *, rows: int | None = None, **kwargs):
    """Yield the long form of ``topic_risk(matrix, base, **kwargs)`` (``columns`` of it) in
    pieces of about ``rows`` rows; warnings are issued once each, after the last piece."""

    resolve_value(kwargs.get("value"), alpha=kwargs.get("alpha"), loss_weight=kwargs.get("loss_weight"))  # all alphas
    step = chunk_size(matrix.n_topics, rows)
    seen = {}
    for kw in alpha_steps(kwargs):
        for lo in range(0, matrix.n_systems, step):
            sub, sub_base = _block(matrix, base, lo, min(lo + step, matrix.n_systems))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                piece = topic_risk(sub, sub_base, **kw).to_arrow()
            for w in caught:
                seen.setdefault((w.category, str(w.message)), w)
            yield piece if columns is None else piece.select(columns)
    for w in seen.values():
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def table_pieces(result, columns=None, *, rows: int | None = None):
    """Yield the long form of a `BaselineTable` (``columns`` of it)
    for one alpha and a block of systems at a time."""
    n_base = len(result.baselines)
    step = chunk_size(n_base, rows)
    S = len(result.systems)
    for a in range(len(result.alpha)):
        for lo in range(0, S, step):
            hi = min(lo + step, S)
            part = dataclasses.replace(
                result, systems=result.systems[lo:hi], alpha=result.alpha[a:a + 1],
                loss_weight=result.loss_weight[a:a + 1],
                _rank=result.rank[a:a + 1, lo:hi],
                _pvalue=None if result._pvalue is None else result._pvalue[a:a + 1, lo:hi],
                **{name: getattr(result, name)[a:a + 1, lo:hi] for name in ("urisk", "standard_error", "trisk")})
            piece = part.to_arrow()
            yield piece if columns is None else piece.select(columns)
