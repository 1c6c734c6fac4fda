"""What the risk results share: the sign conventions, TRisk = URisk / SE and its Student-t
inference (Dinçer, Macdonald & Ounis, SIGIR 2014), so no public module imports another's
private names."""

from __future__ import annotations

import functools

import numpy as np
from scipy import special

#: ``classic``: larger is better; ``minus``: URisk⁻, TRisk⁻, ZRisk⁻ (larger is riskier; Benham,
#: Moffat & Culpepper 2019).
CONVENTIONS = ("classic", "minus")


def sign(convention: str) -> float:
    """-1 for the ``minus`` convention, +1 for ``classic``."""
    return -1.0 if convention == "minus" else 1.0


@functools.lru_cache(maxsize=256)
def t_critical(significance: float, df: int) -> float:
    """The two-sided critical value t(significance/2, df) of Student's t (remembered: small
    calls repeat the same few levels and topic counts)."""
    return float(special.stdtrit(df, 1.0 - significance / 2))


class TRiskInference:
    """``statistic`` (TRisk, scipy's name) and its two-sided Student-t ``pvalue`` with ``df``
    = c - 1 degrees of freedom, computed on first use, for results with ``trisk`` and ``df``."""

    @property
    def statistic(self) -> np.ndarray:
        return self.trisk

    @functools.cached_property
    def pvalue(self) -> np.ndarray:
        return 2.0 * special.stdtr(self.df, -np.abs(self.trisk))
