"""Simulated collections from a real one: topic resampling, and stochastic simulation after
Urbano & Nagler, "Stochastic Simulation of Test Collections: Evaluation Scores" (SIGIR 2018).

- `resample_topics`: K new topic sets of n topics drawn from the real ones (with
  replacement, the bootstrap, or without, subsampling): every system keeps its scores and
  the dependence between systems is the real one.
- `CollectionModel`: a fitted margin per system (`fit_hurdle_margin`) and a
  bivariate copula per pair of systems (``pyvinecopulib``, family chosen by AIC among the
  independence, Gaussian, Student t, Clayton, Gumbel, Frank and Joe copulas and their
  rotations, parameters by inversion of Kendall's tau), both fitted on first use and cached.
  A pair is simulated by drawing (u1, w) uniform, u2 = h1^{-1}(w | u1) from the copula
  (the inverse Rosenblatt transform), and x = F_a^{-1}(u1), y = F_b^{-1}(u2). Under the
  null both runs go through the *same* margin (Urbano, Lima & Hanjalic 2019); with an
  effect size delta, run b's margin is run a's tilted to mean mu_a + delta.

Copulas are fitted on pseudo-observations rank / (n + 1) with ties broken at random
(seeded by the pair), since discrete measures (P@10, RR) tie often.
"""

from __future__ import annotations

import numbers

import numpy as np

from fastrisk._kernels import simulate as _k
from fastrisk._runtime.aliases import SeedLike
from fastrisk._runtime.extras import require
from fastrisk._runtime.rng import resolve_seed
from fastrisk.data.matrix import ScoreMatrix, as_matrix
from fastrisk.errors import InputError
from fastrisk.simulate.margins import Margin, fit_hurdle_margin


def _positive(x, name):
    if isinstance(x, bool) or not isinstance(x, numbers.Integral) or x < 1:
        raise InputError(f"`{name}` must be a positive integer, got {x!r}")
    return int(x)


def resample_topics(matrix, n_topics: int, samples: int, *, replace: bool = True, rng: SeedLike = None) -> np.ndarray:
    """K = ``samples`` new collections of the systems of ``matrix`` over topics drawn from its
    topics, with replacement (bootstrap) or without.

    Parameters
    ----------
    matrix : ScoreMatrix or array_like
        Systems x topics.
    n_topics : int
        Topics of each new collection.
    samples : int
        Number K of collections.
    replace : bool
        Draw with replacement (False: subsets, ``n_topics`` at most the matrix's).
    rng : int, SeedSequence or Generator, optional
        Seed.

    Returns
    -------
    ndarray, shape (K, S, n_topics)
    """
    matrix = as_matrix(matrix)
    n = _positive(n_topics, "n_topics")
    K = _positive(samples, "samples")
    c = matrix.n_topics
    if not replace and n > c:
        raise InputError(f"`n_topics` ({n}) exceeds the {c} topics of the matrix; subsampling needs replace=True")
    gen = np.random.default_rng(resolve_seed(rng).kernel)
    if replace:
        idx = gen.integers(0, c, size=(K, n))
    else:
        idx = np.argsort(gen.random((K, c)), axis=1)[:, :n]
    return np.ascontiguousarray(np.moveaxis(matrix.values[:, idx], 1, 0))


def _family_set():
    pv = require("pyvinecopulib", what="a simulation")

    f = pv.BicopFamily
    return [f.indep, f.gaussian, f.student, f.clayton, f.gumbel, f.frank, f.joe]


def pseudo_observations(x, y, seed: int) -> np.ndarray:
    """(n, 2) ranks / (n + 1) of x and y, ties broken at random (seeded)."""
    gen = np.random.default_rng(seed)
    out = np.empty((len(x), 2))
    for j, v in enumerate((x, y)):
        order = np.lexsort((gen.random(len(v)), v))
        r = np.empty(len(v))
        r[order] = np.arange(1, len(v) + 1)
        out[:, j] = r / (len(v) + 1)
    return out


def fit_exchangeable_copula(x, y, *, seed: int = 0):
    """A ``pyvinecopulib.Bicop`` fitted to the pair (x, y) (family by AIC, itau).

    Parameters
    ----------
    x, y : array_like
        The two runs' scores over the same topics.
    seed : int
        Seed of the random tie-breaking of the pseudo-observations.

    Returns
    -------
    pyvinecopulib.Bicop
    """
    pv = require("pyvinecopulib", what="a simulation")

    ctl = pv.FitControlsBicop(family_set=_family_set(), parametric_method="itau", selection_criterion="aic")
    return pv.Bicop.from_data(pseudo_observations(np.asarray(x), np.asarray(y), seed), controls=ctl)


class CollectionModel:
    """Margins and copulas of one real collection (``matrix``), fitted lazily and cached."""

    def __init__(self, matrix: ScoreMatrix, *, kind: str = "auto"):
        matrix = as_matrix(matrix)
        if matrix.n_systems < 2 or matrix.n_topics < 3:
            raise InputError(f"a collection model needs at least 2 systems and 3 topics, got {matrix.shape}")
        self.matrix = matrix
        self.kind = kind
        self._margins: dict[int, Margin] = {}
        self._copulas: dict[tuple[int, int], object] = {}
        self._tilted: dict[tuple[int, float], Margin] = {}

    @property
    def n_systems(self) -> int:
        return self.matrix.n_systems

    def margin(self, s: int) -> Margin:
        if s not in self._margins:
            self._margins[s] = fit_hurdle_margin(self.matrix.values[s], kind=self.kind)
        return self._margins[s]

    def copula(self, a: int, b: int):
        if (a, b) not in self._copulas:
            V = self.matrix.values
            self._copulas[(a, b)] = fit_exchangeable_copula(V[a], V[b], seed=a * 1_000_003 + b)
        return self._copulas[(a, b)]

    def _shifted(self, s: int, delta: float) -> Margin:
        key = (s, float(delta))
        if key not in self._tilted:
            m = self.margin(s)
            self._tilted[key] = m.tilt(m.mean + delta)
        return self._tilted[key]

    def simulate_pair(self, a: int, b: int, uniforms: np.ndarray, *, delta: float = 0.0) -> np.ndarray:
        """Pairs (T, 2, n) from uniforms (T, 2, n): dependence of runs (a, b), both through run
        a's margin, run b's shifted by ``delta`` in expected value (H1) when delta != 0. If
        mu_a + delta leaves the support, run a's margin is moved to mu_a - delta instead (the
        effect stays +delta)."""
        T, _, n = uniforms.shape
        u1 = uniforms[:, 0].reshape(-1)
        u2 = self.copula(a, b).hinv1(np.column_stack([u1, uniforms[:, 1].reshape(-1)]))
        u2 = np.clip(np.asarray(u2, dtype=np.float64), 1e-15, 1 - 1e-15)
        ma = mb = self.margin(a)
        if delta != 0.0:
            try:
                mb = self._shifted(a, delta)
            except InputError:
                ma = self._shifted(a, -delta)
        out = np.empty((T, 2, n))
        x = np.empty(T * n)
        _k.quantiles(ma.cdf, ma.values, ma.continuous, np.ascontiguousarray(u1), x)
        out[:, 0] = x.reshape(T, n)
        _k.quantiles(mb.cdf, mb.values, mb.continuous, np.ascontiguousarray(u2), x)
        out[:, 1] = x.reshape(T, n)
        return out


def simulate_pairs(matrix, a: int, b: int, n_topics: int, samples: int, *, delta: float = 0.0, rng: SeedLike = None,
                   start: int = 0, model: CollectionModel | None = None) -> np.ndarray:
    """K = ``samples`` simulated pairs of runs ``a`` and ``b`` of ``matrix`` (see
    `CollectionModel`); sample k uses the stream (seed, start + k).

    Parameters
    ----------
    matrix : ScoreMatrix or array_like
        The collection (systems x topics) the model is fitted to.
    a, b : int
        Rows of the two runs.
    n_topics : int
        Topics of each simulated pair.
    samples : int
        Number K of pairs.
    delta : float
        The effect: run ``b``'s margin is run ``a``'s tilted to mean mu_a + delta (H1 when
        not 0; see `CollectionModel.simulate_pair`).
    rng : int, SeedSequence or Generator, optional
        Seed.
    start : int
        Stream of the first sample (chunks give the numbers of the whole).
    model : CollectionModel, optional
        A model of ``matrix`` fitted already (default: fitted here).

    Returns
    -------
    ndarray, shape (K, 2, n_topics)
    """
    model = model or CollectionModel(matrix)
    S = model.n_systems
    for name, v in (("a", a), ("b", b)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 0 <= v < S:
            raise InputError(f"`{name}` must be a system row in [0, {S}), got {v!r}")
    if a == b:
        raise InputError("`a` and `b` must be two different systems")
    n = _positive(n_topics, "n_topics")
    K = _positive(samples, "samples")
    seed = resolve_seed(rng).kernel
    u = _k.trial_uniforms(seed, np.arange(start, start + K, dtype=np.int64), n)
    return model.simulate_pair(int(a), int(b), u, delta=float(delta))
