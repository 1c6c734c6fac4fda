"""Seeded synthetic LETOR data shaped like MSLR-WEB10K (for benchmarks and larger tests).

Each query q has a latent relevance per document, u = X·w + b_q + ε, where the features X
are standard normal, w decays over the first ``n_informative`` features (the others are
noise), b_q is a query effect and ε noise. Grades 0–4 come from fixed quantiles of u over
the whole collection, in MSLR-WEB10K's proportions (about 52/32/13/2/1 %). Feature 1 is a
"BM25-like" baseline: u plus heavy noise, a fair but weak ranker.
"""

from __future__ import annotations

import numbers

import numpy as np

from fastrisk._runtime.rng import resolve_seed
from fastrisk._runtime.validation import positive_int
from fastrisk.errors import InputError
from fastrisk.ltr.letor import LetorData

#: Cumulative grade proportions of MSLR-WEB10K (grades 0..3; grade 4 takes the rest).
MSLR_GRADES = (0.52, 0.84, 0.97, 0.99)


_positive = positive_int


def synthetic_letor(n_queries: int = 10_000, docs_per_query: int = 120, n_features: int = 136, *,
                    n_informative: int = 20, noise: float = 1.0, rng=None) -> LetorData:
    """A synthetic LETOR set (default: MSLR-WEB10K's shape, 10,000 x 120 x 136).

    Grades come from a latent score (informative features, a query effect and noise) cut at
    MSLR-WEB10K's grade proportions; feature 1 is a noisy copy of the latent score (a
    BM25-like baseline).

    Parameters
    ----------
    n_queries : int
        Number of queries.
    docs_per_query : int or (int, int)
        Documents per query, or ``(low, high)``: a uniform random size in [low, high] each.
    n_features : int
        Features per document.
    n_informative : int
        Features that carry the latent score (weights ``1 / sqrt(j)``).
    noise : float
        SD of the latent score's noise.
    rng : int, SeedSequence or Generator, optional
        Seed; the same ``rng`` always gives the same data.

    Returns
    -------
    LetorData
    """
    n_queries = _positive(n_queries, "n_queries")
    n_features = _positive(n_features, "n_features")
    n_informative = min(_positive(n_informative, "n_informative"), n_features)
    if isinstance(docs_per_query, tuple):
        lo, hi = (_positive(v, "docs_per_query") for v in docs_per_query)
        if lo > hi:
            raise InputError(f"`docs_per_query` must be (low, high) with low <= high, got {docs_per_query}")
    else:
        lo = hi = _positive(docs_per_query, "docs_per_query")
    if not (isinstance(noise, numbers.Real) and noise >= 0):
        raise InputError(f"`noise` must be a number >= 0, got {noise!r}")
    rseed = resolve_seed(rng)
    gen = np.random.default_rng(rseed.kernel)
    sizes = gen.integers(lo, hi + 1, size=n_queries) if hi > lo else np.full(n_queries, lo)
    n = int(sizes.sum())
    X = gen.standard_normal((n, n_features), dtype=np.float32).astype(np.float64)
    w = np.zeros(n_features)
    w[:n_informative] = 1.0 / np.sqrt(np.arange(1, n_informative + 1))
    w /= np.linalg.norm(w)
    query_effect = np.repeat(gen.normal(0.0, 0.5, n_queries), sizes)
    u = X @ w + query_effect + noise * gen.standard_normal(n)
    cuts = np.quantile(u, MSLR_GRADES)
    labels = np.searchsorted(cuts, u).astype(np.int64)
    X[:, 0] = u + 2.0 * gen.standard_normal(n)
    boundaries = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return LetorData(X, labels, boundaries, tuple(str(q + 1) for q in range(n_queries)),
                     f"synthetic_letor(rng={rseed.recorded})")
