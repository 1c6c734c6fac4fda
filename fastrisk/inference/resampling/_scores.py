"""Per-topic scores the procedures resample: risk-reward scores against a baseline, pair
differences, or a plain array, with the sign convention applied."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from fastrisk._runtime import numerics as _numerics
from fastrisk._runtime.resources import check_memory
from fastrisk._runtime.validation import flag
from fastrisk.core.baselines import resolve_baseline
from fastrisk.core.urisk import value_scores
from fastrisk.core.values import resolve_value
from fastrisk.data.matrix import ScoreMatrix, as_matrix, is_frame
from fastrisk.data.results import ConfidenceInterval
from fastrisk.errors import InputError


@dataclass(frozen=True)
class _Scores:
    y: np.ndarray  # (A, K, c) per-topic scores; the statistic is computed from each row
    flipped: np.ndarray | None  # (A, K, c) the scores with the roles of system and baseline swapped
    systems: tuple
    baselines: tuple
    topics: tuple
    alpha: np.ndarray | None
    loss_weight: np.ndarray | None
    value: str | None

    def labels(self) -> dict:
        return dict(systems=self.systems, baselines=self.baselines, alpha=self.alpha,
                    loss_weight=self.loss_weight, value=self.value)


_SWAPPED = {"less": "greater", "greater": "less", "two-sided": "two-sided"}


def _oriented(alternative: str, convention: str) -> str:
    """The alternative to test on the classic statistic theta for one stated on the reported one."""
    return _SWAPPED[alternative] if convention == "minus" else alternative


def _in_convention(res, convention: str, alternative: str | None = None):
    """``res`` (computed on theta) reported in ``convention``: see `_Labelled`."""
    changes = {"convention": convention}
    if alternative is not None:
        changes["alternative"] = alternative
    if convention == "minus":
        for name in ("statistic", "urisk", "bias", "bootstrap_distribution", "null_distribution", "leave_one_out",
                     "pseudo_values"):
            value = getattr(res, name, None)
            if value is not None:
                changes[name] = -value
        ci = getattr(res, "confidence_interval", None)
        if ci is not None:
            changes["confidence_interval"] = ConfidenceInterval(-ci.high, -ci.low)
    return dataclasses.replace(res, **changes)


def _as_scores_array(data, name="data") -> np.ndarray:
    try:
        arr = np.array(data, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"`{name}` must be a ScoreMatrix or an array of per-topic scores, "
                         f"got {type(data).__name__}") from None
    if arr.ndim not in (1, 2):
        raise InputError(f"`{name}` must be 1-D (c topics), 2-D (S systems x c topics) or a 3-D batch "
                         f"(N collections x S x c, see fastrisk.core.batch), got shape {arr.shape}")
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.shape[1] < 2:
        raise InputError(f"resampling needs at least 2 topics, got {arr.shape[1]}")
    if arr.shape[0] < 1:
        raise InputError(f"`{name}` has no systems")
    bad = np.argwhere(~np.isfinite(arr))
    if bad.size:
        s, t = bad[0]
        raise InputError(f"`{name}` must be finite: system {s}, topic {t} is {arr[s, t]}")
    return arr


def _value_pair(R, Bv, vf, flipped: bool):
    """x = v(R - Bv) for every alpha (A, S, c), and v(Bv - R) if ``flipped``."""
    def scores(r, b):
        return value_scores(r, b, vf)  # small jobs on one thread: no parallel launch for 2,400 cells
    y = scores(R, Bv)
    _numerics.check_finite_fast(y, "a per-topic score (r - b, weighted)")
    if not flipped:
        return y, None
    full = np.ascontiguousarray(np.broadcast_to(Bv, R.shape))
    full.flags.writeable = R.flags.writeable  # as the matrix's values: the kernel's one compiled signature
    return y, scores(full, R)


def _self_columns(sc: _Scores) -> np.ndarray:
    """(K,) True for a column that compares the baseline with itself (all differences 0)."""
    return np.array([s == b for s, b in zip(sc.systems, sc.baselines)], dtype=bool)


def _without_system(y: np.ndarray, b: int) -> np.ndarray:
    """``y`` (A, S, c) without system ``b``: the rows compacted in place when ``y`` is this
    call's own contiguous array (no second copy of the scores), else a copy."""
    A, S, c = y.shape
    if not (y.flags.c_contiguous and y.flags.writeable):
        return y[:, np.arange(S) != b]
    flat = y.reshape(A * S, c)
    j = b
    for i in range(b + 1, A * S):
        if i % S != b:
            flat[j] = flat[i]
            j += 1
    return flat[:j].reshape(A, S - 1, c)


def _column_names(sc: _Scores) -> list:
    """A label per column: the system, or ``system/other`` for pairs."""
    if len(set(sc.baselines)) <= 1:
        return list(sc.systems)
    return [f"{s}/{b}" for s, b in zip(sc.systems, sc.baselines)]


def _scores(data, baseline, *, alpha, loss_weight, value, pairs, missing, flipped, exclude_self=False) -> _Scores:
    """Resolve the public inputs into per-topic scores (validation included)."""

    flag(pairs, "pairs")
    flag(exclude_self, "exclude_self")
    if is_frame(data) or (baseline is not None and not pairs and isinstance(data, np.ndarray) and data.ndim == 2):
        data = as_matrix(data, "data")  # with a baseline, a bare 2-D array is a systems x topics matrix
    if pairs:
        if baseline is not None:
            raise InputError("`baseline` must be None with pairs=True (every system is compared with every other)")
        if isinstance(data, ScoreMatrix):
            V, names, topics = data.values, data.systems, data.topics
        else:
            V = _as_scores_array(data)
            names, topics = tuple(str(i) for i in range(V.shape[0])), tuple(str(i) for i in range(V.shape[1]))
        if V.shape[0] < 2:
            raise InputError(f"pairs=True needs at least 2 systems, got {V.shape[0]}")
        if V.shape[1] < 2:
            raise InputError(f"resampling needs at least 2 topics, got {V.shape[1]}")
        vf = resolve_value(value, alpha=alpha, loss_weight=loss_weight)
        P = V.shape[0] * (V.shape[0] - 1) // 2
        A = len(vf.alpha) if vf.is_linear else 1
        check_memory(8.0 * A * P * V.shape[1] * (3 if flipped else 2),
                     f"the per-topic differences of {P:,} pairs of systems x {V.shape[1]:,} topics x {A} alpha(s)",
                     "compare with one baseline instead of every pair, or use fewer systems or alphas")
        I, J = np.triu_indices(V.shape[0], 1)
        y, fl = _value_pair(np.ascontiguousarray(V[I]), np.ascontiguousarray(V[J]), vf, flipped)
        return _Scores(y, fl, tuple(names[i] for i in I), tuple(names[j] for j in J), tuple(topics),
                       vf.alpha if vf.is_linear else None, vf.loss_weight if vf.is_linear else None, vf.name)
    if isinstance(data, ScoreMatrix):
        if baseline is None:
            raise InputError("`baseline` is required with a ScoreMatrix (or use pairs=True)")
        vf = resolve_value(value, alpha=alpha, loss_weight=loss_weight)
        matrix, base = resolve_baseline(data, baseline, missing=missing)
        if matrix.n_topics < 2:
            raise InputError(f"resampling needs at least 2 topics, got {matrix.n_topics}")
        y, fl = _value_pair(matrix.values, base.values, vf, flipped)
        systems = matrix.systems
        if exclude_self and base.system is not None:  # the baseline against itself: zero differences
            y, fl = _without_system(y, base.system), (_without_system(fl, base.system) if fl is not None else None)
            systems = tuple(s for k, s in enumerate(systems) if k != base.system)
        return _Scores(y, fl, systems, (base.name,) * len(systems), matrix.topics,
                       vf.alpha if vf.is_linear else None, vf.loss_weight if vf.is_linear else None, vf.name)
    if baseline is not None or alpha is not None or loss_weight is not None or value is not None:
        raise InputError("`alpha`, `loss_weight` and `value` apply to a matrix with a `baseline` or to pairs=True; "
                         "an array without a baseline is taken as per-topic scores (e.g. risk-reward scores x) "
                         "as they are")
    arr = _as_scores_array(data)
    y = arr[None]
    labels = tuple(str(i) for i in range(arr.shape[0]))
    return _Scores(y, -y if flipped else None, labels, ("",) * len(labels),
                   tuple(str(i) for i in range(arr.shape[1])), None, None, None)
