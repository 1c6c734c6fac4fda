"""Value functions applied to per-topic differences d = r - b (Benham, Moffat & Culpepper 2019).

- ``linear``: l(d) = d for gains, alpha_hat * d for losses (alpha_hat = 1 + alpha), many alpha
  at once; the URisk/TRisk of Wang et al. (2012) and Dinçer et al. (2014).
- ``smooth``: s(d) = 1.38426 d^3 - 0.51659 d^2 + 0.11578 d, which already weights losses.
- any scalar function compiled with ``numba.njit`` (a plain Python function is compiled for
  you): ``fastrisk.risk(m, "base", value=my_value)``.

Risk sensitivity is given either as ``alpha`` (0 <= alpha <= 1e12) or as ``loss_weight``
(alpha_hat = 1 + alpha), never both; results record both and which one the user gave.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from fastrisk._kernels._jit import with_value
from fastrisk._kernels.risk import smooth_value
from fastrisk._runtime.compile import compile_checked
from fastrisk._runtime.numerics import MAX_ALPHA, check_alpha_range
from fastrisk.errors import InputError

DEFAULT_ALPHAS = (0.0, 1.0, 5.0, 10.0)


@dataclass(frozen=True)
class ValueFunction:
    """A resolved value function: ``name``; for ``linear`` the alphas and loss weights (A,);
    otherwise ``func``, a numba-compiled scalar function, with A = 1 and alpha undefined.

    References
    ----------
    Benham, R., Moffat, A. & Culpepper, J. S. (2019). On the pluses and minuses of risk. AIRS 2019.

    Wang, L., Bennett, P. N. & Collins-Thompson, K. (2012). Robust ranking models via risk-sensitive
    optimization. SIGIR 2012.

    Examples
    --------
    >>> import fastrisk
    >>> vf = fastrisk.resolve_value(alpha=[0, 5])
    >>> vf.name, vf.alpha.tolist(), vf.loss_weight.tolist()
    ('linear', [0.0, 5.0], [1.0, 6.0])
    >>> fastrisk.resolve_value('smooth').name
    'smooth'
    """

    name: str
    alpha: np.ndarray
    loss_weight: np.ndarray
    given: str  # "alpha", "loss_weight" or "none"
    func: object = None

    @property
    def is_linear(self) -> bool:
        return self.func is None

    def kernel(self, kernel):
        """``kernel``, a value kernel, computing with ``func``: the kernel itself (cached on
        disk) for the built-in smooth function, a twin compiled for a user's function."""
        return with_value(kernel, self.func)


def _as_float_array(values, name: str) -> np.ndarray:
    if isinstance(values, numbers.Real) and not isinstance(values, bool):
        values = [values]
    try:
        arr = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f"`{name}` must be a number or a sequence of numbers, got {values!r}") from None
    if arr.size == 0:
        raise InputError(f"`{name}` must not be empty")
    if not np.isfinite(arr).all():
        raise InputError(f"`{name}` must be finite, got {arr.tolist()}")
    return arr


def _fast_alphas(values, lo=0.0, hi=MAX_ALPHA):
    """A short vector of valid weights (finite, in [lo, hi]: alphas, or loss weights with
    lo = 1, hi = MAX_ALPHA + 1) as a 1-D float64 array, without the per-check reductions of
    the general path; None when it is anything else (the general path then gives the precise
    error)."""
    if type(values) in (tuple, list) and 0 < len(values) <= 64 and all(type(v) is float for v in values):
        values = np.array(values)
    if type(values) is np.ndarray and values.dtype == np.float64 and values.ndim == 1 and 0 < values.size <= 64:
        if all(lo <= v <= hi for v in values.tolist()):  # NaN fails both comparisons
            return values
    return None


def resolve_alphas(alpha=None, loss_weight=None, *, default=DEFAULT_ALPHAS):
    """(alpha, loss_weight, given) from exactly one of ``alpha`` / ``loss_weight`` (or the default)."""
    if alpha is not None and loss_weight is not None:
        raise InputError("give either `alpha` (>= 0) or `loss_weight` (= 1 + alpha, >= 1), not both")
    if loss_weight is not None:
        lw = _fast_alphas(loss_weight, 1.0, MAX_ALPHA + 1.0)
        if lw is not None:
            return lw - 1.0, lw, "loss_weight"
        lw = _as_float_array(loss_weight, "loss_weight")
        if (lw < 1).any():
            raise InputError(f"`loss_weight` must be >= 1 (it is 1 + alpha), got {lw[lw < 1].tolist()}")
        check_alpha_range(lw, "loss_weight")
        return lw - 1.0, lw, "loss_weight"
    given = "alpha" if alpha is not None else "none"
    a = _fast_alphas(default if alpha is None else alpha)
    if a is not None:
        return a, a + 1.0, given
    a = _as_float_array(default if alpha is None else alpha, "alpha")
    if (a < 0).any():
        raise InputError(f"`alpha` must be >= 0, got {a[a < 0].tolist()}")
    check_alpha_range(a, "alpha")
    return a, a + 1.0, given


#: Resolved linear value functions by their inputs (`_linear_key`): a loop of small calls
#: validates its alphas once. Their arrays are read-only copies, so no caller can change them.
_LINEAR: dict = {}


def _linear_key(alpha, loss_weight, default):
    """A hashable key of the alpha inputs when they are a short float64 vector, a tuple of floats
    or None (the usual calls), else None (not cached)."""
    if alpha is not None and loss_weight is not None:
        return None  # the error is raised by resolve_alphas
    values, which = (loss_weight, "loss_weight") if loss_weight is not None else (alpha, "alpha")
    if values is None:
        return (which, "default", default) if type(default) is tuple else None
    if type(values) is np.ndarray and values.dtype == np.float64 and values.ndim == 1 and values.size <= 64:
        return which, "array", values.tobytes()
    if type(values) is tuple and len(values) <= 64 and all(type(v) is float for v in values):
        return which, "tuple", values
    return None


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float64)
    a.flags.writeable = False
    return a


def resolve_value(value=None, *, alpha=None, loss_weight=None, default_alphas=DEFAULT_ALPHAS) -> ValueFunction:
    """Resolve ``value`` (None/"linear", "smooth", or a scalar function) with its alphas.

    Parameters
    ----------
    value : {None, "linear", "smooth"} or callable
        The value function of d = r − b: linear l(d) = d for gains and (1 + α) d for losses;
        smooth s(d) = 1.38426 d³ − 0.51659 d² + 0.11578 d (Benham, Moffat & Culpepper 2019);
        or a scalar function (compiled with numba).
    alpha, loss_weight : AlphaLike, optional
        The linear function's α (≥ 0) or loss weight 1 + α; never both, and neither for the
        other value functions.
    default_alphas : sequence of float
        The α used when neither is given.

    Returns
    -------
    ValueFunction
        ``name``, ``alpha`` and ``loss_weight`` (NaN for non-linear ones), ``given`` and the
        compiled ``func`` (None for linear).

    References
    ----------
    Benham, R., Moffat, A. & Culpepper, J. S. (2019). On the pluses and minuses of risk. AIRS 2019.

    Wang, L., Bennett, P. N. & Collins-Thompson, K. (2012). Robust ranking models via risk-sensitive
    optimization. SIGIR 2012.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> fastrisk.resolve_value(loss_weight=[1, 6]).alpha.tolist()
    [0.0, 5.0]
    >>> res = fastrisk.risk(matrix, baseline, value='smooth')
    >>> round(float(res.urisk[0, res.systems.index('uogTrA44xi')]), 5)
    0.01613
    """
    if value is None or (isinstance(value, str) and value == "linear"):
        key = _linear_key(alpha, loss_weight, default_alphas)
        vf = _LINEAR.get(key) if key is not None else None
        if vf is None:
            a, lw, given = resolve_alphas(alpha, loss_weight, default=default_alphas)
            vf = ValueFunction("linear", a, lw, given)
            if key is not None:
                if len(_LINEAR) >= 64:
                    _LINEAR.clear()
                vf = _LINEAR[key] = ValueFunction("linear", _frozen(a), _frozen(lw), given)
        return vf
    if alpha is not None or loss_weight is not None:
        raise InputError("`alpha`/`loss_weight` apply to the linear value function only; "
                         f"the {value if isinstance(value, str) else 'given'} value function weights losses itself")
    nan = np.array([np.nan])
    if isinstance(value, str):
        if value != "smooth":
            raise InputError(f"`value` must be 'linear', 'smooth' or a function, got {value!r}")
        return ValueFunction("smooth", nan, nan, "none", smooth_value)
    if not callable(value):
        raise InputError(f"`value` must be 'linear', 'smooth' or a function, got {type(value).__name__}")
    return ValueFunction(getattr(value, "__name__", "custom"), nan, nan, "none", _compile(value))


def _compile(func):
    """A numba dispatcher for ``func``, checked to map a float to a float; compiled once per
    function object and remembered on it (a fresh dispatcher per call compiled every value
    kernel's twin again: about a second a call), and the checked dispatcher is its own."""
    checked = getattr(func, "_fastrisk_checked", None)
    if checked is not None:
        return checked
    checked = compile_checked(func, 0.5, what="value function", argument="a float argument",
                              hint="; write it with numba-supported operations on a float")
    for target in (func, checked):
        try:
            target._fastrisk_checked = checked
        except AttributeError:  # a callable without a __dict__: checked on every call
            pass
    return checked
