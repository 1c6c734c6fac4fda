"""The one numerical policy of fastrisk: when a standard error counts as zero, what a statistic
divided by it is then, how that is reported, and how extreme scores are kept in range.

**Relative variance floor.** A standard error computed in floating point is never exactly 0
for scores that are constant over topics up to rounding: ``r - b`` for a system equal to its
baseline plus 0.3 differs from 0.3 by about one ulp of the scores, which gives TRisk ~ 1e16.
So the variance of per-topic scores ``x`` counts as zero when the centred sum of squares is
within rounding of the raw one::

    sum (x_i - mean)^2  <=  4 c eps sum x_i^2          (eps = 2.2e-16)

Since ``sum x^2 = sum (x - mean)^2 + c mean^2``, this needs only the mean, the standard error
and c. It is relative: scores of any magnitude, subnormal ones included, whose differences
vary are never called constant (the floor then lies far below the variance); it only bites
where ``|mean / SE|`` exceeds about ``1 / (2 sqrt(eps)) = 3.4e7``.

**±inf / NaN rule.** Where the standard error is zero (or below the floor), the
standardised statistic ``mean / SE`` is ±inf with the sign of the mean, and NaN where the
mean is 0 too; the standard error is reported as 0. A `ZeroVarianceWarning` names the
systems (never the baseline compared with itself).

**Extremes.** Kernels square scores; beyond about 1e154 squares overflow and below about
1e-154 they underflow. `power_of_two_scale` gives an exact power-of-two factor that
brings such data to unit magnitude (statistics such as TRisk are scale-invariant and the
others are scaled back exactly). The factor is chosen per system (per row with its
baseline, `row_exponents`; per pair in the all-baseline table), never per matrix: one
extreme system must not push the others' squares out of range; `check_finite` turns a result that still overflows
into a clear `InputError`. Risk weights are bounded by `MAX_ALPHA`.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from fastrisk._kernels import numerics as _kn
from fastrisk.errors import InputError, ZeroVarianceWarning

EPS = float(np.finfo(np.float64).eps)
#: Relative variance floor: a centred sum of squares at most ``VARIANCE_RTOL * c * sum x^2``
#: is rounding noise (4 eps; defined beside the kernels that apply it).
VARIANCE_RTOL = _kn.VARIANCE_RTOL
#: The largest risk weight alpha accepted (and loss weight 1 + alpha).
MAX_ALPHA = 1e12
#: Data whose largest magnitude lies outside [2^-SAFE_EXPONENT, 2^SAFE_EXPONENT] is rescaled.
SAFE_EXPONENT = 400
_LO, _HI = 2.0 ** -SAFE_EXPONENT, 2.0 ** SAFE_EXPONENT
#: The range [LO, HI] of magnitudes that needs no rescaling (kernels check their results against it).
LO, HI = _LO, _HI


def read_only(a: np.ndarray) -> np.ndarray:
    """``a``, or a read-only view of it: inputs reach the kernels read-only, as a matrix's
    values and a baseline's are, so that each kernel compiles one signature for them
    (numba compiles a kernel again for every read-only/writable mix of its arguments)."""
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


def negligible_se(mean, se, c: int) -> np.ndarray:
    """True where the standard error ``se`` of a mean over ``c`` topics is below the relative
    floor ``(c-1) se^2 <= 4 c eps ((c-1) se^2 + mean^2)`` (see the module doc), or is 0."""
    return floor_standardise(mean, se, c)[3]


def floor_standardise(mean, se, c: int, other=None):
    """(se, other, t, zero): standard errors below the relative floor (and ``other``, e.g. the
    jackknife SE, there) set to 0, ``t = mean / se`` by the ±inf/NaN rule, and the mask of
    those zeros; arrays of ``mean``'s shape, in one compiled pass."""
    mean = np.asarray(mean, dtype=np.float64)
    se = np.asarray(se, dtype=np.float64)
    if mean.shape != se.shape:
        mean, se = np.broadcast_arrays(mean, se)
    shape = mean.shape
    m = np.ascontiguousarray(mean).reshape(-1)
    s = np.ascontiguousarray(se).reshape(-1)
    o = s if other is None else np.ascontiguousarray(other, dtype=np.float64).reshape(-1)
    se_out, other_out, t, zero = _kn.floor_standardise(m, s, o, float(c), VARIANCE_RTOL)
    return se_out.reshape(shape), other_out.reshape(shape), t.reshape(shape), zero.reshape(shape)


def standardise(num, den) -> np.ndarray:
    """num / den; where den is 0: ±inf with the sign of num, NaN if num is 0 too."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = num / np.where(den > 0, den, 1.0)
    return np.where(den > 0, out, np.where(num == 0, np.nan, np.copysign(np.inf, num)))


def warn_zero_variance(labels, what: str = "system(s)", where: str = "", stacklevel: int = 3) -> None:
    """The one `ZeroVarianceWarning`, naming ``labels`` (at most ten)."""
    labels = list(labels)
    if not labels:
        return
    shown = ", ".join(map(str, labels[:10])) + (f" and {len(labels) - 10} more" if len(labels) > 10 else "")
    warnings.warn(f"zero standard error for {what} {shown}{where}: their per-topic differences are the same on "
                  "every topic (a shifted copy, or a spread within rounding of their magnitude), so the "
                  "standardised statistic is ±inf (NaN where the mean is 0 too)",
                  ZeroVarianceWarning, stacklevel=stacklevel)


def zero_rows(zero: np.ndarray, labels, skip=None) -> list:
    """Labels of the rows of a (rows, ...) mask that are zero anywhere, except row ``skip``."""
    zero = np.asarray(zero, dtype=bool).reshape(len(labels), -1).any(axis=1)
    return [labels[k] for k in np.flatnonzero(zero) if k != skip]


def absmax(*arrays) -> float:
    """Largest magnitude over ``arrays`` (0.0 if all are empty)."""
    out = 0.0
    for a in arrays:
        a = np.asarray(a)
        if a.size:
            out = max(out, float(a.max()), -float(a.min()))
    return out


def out_of_range(*arrays) -> bool:
    """True if any value is not finite, or any non-zero magnitude lies outside
    [2^-SAFE_EXPONENT, 2^SAFE_EXPONENT]: the results may have overflowed or underflowed."""
    # one array at a time: concatenating them would copy every result (peak memory)
    return any(_kn.out_of_range(np.ascontiguousarray(np.ravel(a), dtype=np.float64), _LO, _HI) for a in arrays)


def check_finite_fast(values: np.ndarray, what: str) -> None:
    """`check_finite` of a large array in one compiled pass, without a temporary."""
    flat = np.ascontiguousarray(values, dtype=np.float64).reshape(-1)
    if _kn.out_of_range(flat, 0.0, float(np.finfo(np.float64).max)):
        check_finite(flat, what)


def power_of_two_scale(magnitude: float, *, target: int = 0) -> int:
    """Exponent k such that ``magnitude * 2**k`` is about ``2**target``, or 0 when ``magnitude``
    is 0 or already within [2^-SAFE_EXPONENT, 2^SAFE_EXPONENT] (ordinary data stays untouched,
    so its numbers are bit-identical). Scaling by 2**k is exact."""
    if not magnitude or not math.isfinite(magnitude):
        return 0
    e = math.frexp(magnitude)[1]
    if -SAFE_EXPONENT <= e <= SAFE_EXPONENT:
        return 0
    return target - e


def row_exponents(R: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Per-row exponents k (int64, one per row of ``R``): `power_of_two_scale` of the
    largest magnitude of row s of ``R`` and of its baseline row (``B`` is (1, c) shared or
    (S, c)). Scaling each system with its own k keeps an extreme system from pushing the
    others out of range (a matrix-wide factor made their squares underflow to 0)."""
    with np.errstate(invalid="ignore"):
        mag = np.maximum(np.abs(R).max(axis=1, initial=0.0), np.abs(B).max(axis=1, initial=0.0))
    e = np.frexp(mag)[1].astype(np.int64)
    ordinary = (mag == 0) | ~np.isfinite(mag) | ((e >= -SAFE_EXPONENT) & (e <= SAFE_EXPONENT))
    return np.where(ordinary, 0, -e)


def rms(x: np.ndarray, axis: int = 0) -> np.ndarray:
    """Root mean square over ``axis`` without overflow or underflow of the squares."""
    m = np.abs(x).max(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = np.where(m > 0, x / np.where(m > 0, m, 1.0), 0.0)
    return np.squeeze(m, axis=axis) * np.sqrt(np.mean(scaled ** 2, axis=axis))


def mean_t(y: np.ndarray, what: str):
    """(mean, SE, t, zero) over the last axis of ``y``: SE = s / sqrt(c) under the relative
    floor (``zero`` marks where it is 0) and t = mean / SE by the ±inf/NaN rule. Computed on
    ``y`` rescaled by an exact power of two when its magnitude is extreme (squares would
    overflow or underflow); an overflowed ``y`` is an `InputError`."""
    c = y.shape[-1]
    check_finite(y, what)
    k = power_of_two_scale(absmax(y))
    ys = np.ldexp(y, k) if k else y
    mean = ys.mean(axis=-1)
    se, _, t, zero = floor_standardise(mean, ys.std(axis=-1, ddof=1) / math.sqrt(c), c)
    if k:
        with np.errstate(over="ignore", under="ignore"):
            mean, se = np.ldexp(mean, -k), np.ldexp(se, -k)
    return mean, se, t, zero


def check_finite(value, what: str, hint: str = "rescale the scores (e.g. divide them by a power of ten)") -> None:
    """Raise `InputError` if ``value`` has an infinity or NaN produced by overflow;
    ``value`` and ``what`` may be sequences (checked in order)."""
    pairs = zip(value, what) if isinstance(what, (list, tuple)) else [(value, what)]
    for v, name in pairs:
        if not np.isfinite(np.asarray(v, dtype=np.float64)).all():
            raise InputError(f"{name} overflows the range of float64 (±1.8e308) for these scores; {hint}")


def check_alpha_range(values: np.ndarray, name: str) -> None:
    """Risk weights above `MAX_ALPHA` are refused (their squares overflow float64 and
    every loss already outweighs every gain)."""
    limit = MAX_ALPHA + (1.0 if name == "loss_weight" else 0.0)
    big = values[values > limit]
    if big.size:
        raise InputError(f"`{name}` must be at most {limit:g}, got {big.tolist()[:5]}; larger weights only "
                         "rank losses (and their squares overflow float64)")
