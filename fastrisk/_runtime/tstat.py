"""What the risk results share: the sign conventions, TRisk = URisk / SE and its Student-t
inference (Dinçer, Macdonald & Ounis, SIGIR 2014), so no public module imports another's
private names."""

from __future__ import annotations

import functools

import numpy as np
from scipy import special

from fastrisk._kernels import numerics as _numk
from fastrisk._runtime.validation import choice

#: Degrees of freedom up to which `t_tails` uses the compiled Cephes algorithm (relative error
#: <= 1e-12 against ``scipy.special.stdtr``, tests/test_risk.py); beyond, scipy (its series
#: would run df / 2 terms and the log-gamma difference loses digits).
COMPILED_DF = 1000

#: ``classic``: larger is better; ``minus``: URisk⁻, TRisk⁻, ZRisk⁻ (larger is riskier; Benham,
#: Moffat & Culpepper 2019).
CONVENTIONS = ("classic", "minus")

#: The alternative hypotheses of a t test (scipy's names).
ALTERNATIVES = ("two-sided", "less", "greater")


def sign(convention: str) -> float:
    """-1 for the ``minus`` convention, +1 for ``classic``."""
    return -1.0 if convention == "minus" else 1.0


@functools.lru_cache(maxsize=256)
def t_critical(significance: float, df: int) -> float:
    """The two-sided critical value t(significance/2, df) of Student's t (remembered: small
    calls repeat the same few levels and topic counts)."""
    return float(special.stdtrit(df, 1.0 - significance / 2))


def t_tails(t, df: int) -> np.ndarray:
    """``P(T <= -|t|)`` for Student's t with ``df`` degrees of freedom, elementwise: what
    ``scipy.special.stdtr(df, -np.abs(t))`` gives, about ten times faster (a compiled Cephes
    ``stdtr``, `fastrisk._kernels.numerics.t_lower_tails`, for integer df <= 1000; scipy's Boost
    incomplete beta costs about 0.3 us a value)."""
    t = np.asarray(t, dtype=np.float64)
    if not (isinstance(df, (int, np.integer)) and 1 <= df <= COMPILED_DF):
        return special.stdtr(df, -np.abs(t))
    flat = np.ascontiguousarray(t).reshape(-1)
    if not flat.flags.writeable:  # one compiled signature: a writeable array
        flat = flat.copy()
    out = np.empty(flat.shape[0])
    _numk.t_lower_tails(flat, np.int64(df), out)
    return out.reshape(t.shape)


def t_pvalue(t, df: int, alternative: str = "two-sided") -> np.ndarray:
    """p-values of Student's t statistics ``t``: ``two-sided`` 2 P(T <= -|t|), ``greater``
    P(T >= t), ``less`` P(T <= t) (as ``scipy.stats.t.sf``/``cdf``), the smaller tail from
    `t_tails` and the larger as its complement. Another ``alternative`` is an `InputError`."""
    choice(alternative, "alternative", ALTERNATIVES)
    tail = t_tails(t, df)
    if alternative == "two-sided":
        return 2.0 * tail
    t = np.asarray(t, dtype=np.float64)
    below = t < 0 if alternative == "less" else t > 0  # the p-value is the small tail
    return np.where(below | np.isnan(t), tail, 1.0 - tail)


class TRiskInference:
    """``statistic`` (TRisk, scipy's name) and its two-sided Student-t ``pvalue`` with ``df``
    = c - 1 degrees of freedom, computed on first use, for results with ``trisk`` and ``df``
    (or the p-values of another inference, stored in ``_pvalue``)."""

    @property
    def statistic(self) -> np.ndarray:
        return self.trisk

    @functools.cached_property
    def pvalue(self) -> np.ndarray:
        given = getattr(self, "_pvalue", None)
        if given is not None:  # another inference than Student's t (``inference=``) gave them
            return given
        # scipy, not `t_pvalue`: computed on first use for whole tables, where the compiled
        # kernel's first compilation (about a second) would cost more than it saves
        return 2.0 * special.stdtr(self.df, -np.abs(self.trisk))
