"""Plain references of the rank and sign statistics (`fastrisk._kernels.battery.rank_sign_stats`):
scipy's ranks, NumPy's counts; never imports the kernels."""

from __future__ import annotations

import numpy as np
from scipy import stats


def signed_rank_stats(d) -> dict:
    """W+ (average ranks of |d| over the non-zero d), n, the tie term Σ(t³ − t), the zeros, and the
    counts of d > 0 and d < 0."""
    d = np.asarray(d, dtype=np.float64)
    nz = d[d != 0]
    ranks = stats.rankdata(np.abs(nz))
    _, counts = np.unique(np.abs(nz), return_counts=True)
    return {"wplus": float(ranks[nz > 0].sum()), "n": int(nz.size), "ties": float((counts ** 3 - counts).sum()),
            "zeros": int((d == 0).sum()), "above": int((d > 0).sum()), "below": int((d < 0).sum())}
