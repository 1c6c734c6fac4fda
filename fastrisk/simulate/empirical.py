"""The empirical-population null of a pair of runs (issue #37, item 3b): the pair's own observed
topics are the population, the experimental run shifted by a constant c so that the population
URisk_alpha is exactly a target (0 for type I, delta for power), and n topics drawn with
replacement per trial. It needs no fitted model and works for any two runs.

With d_i = e_i - b_i over the N observed topics and v(d) = d + alpha min(d, 0) (URisk_alpha;
Dinçer, Macdonald & Ounis 2014), the population statistic of the shifted pair,

    U(c) = (1/N) sum_i v(d_i + c),

is continuous, piecewise linear and increasing in c (slope 1 + alpha m(c)/N >= 1, m(c) the
number of d_i + c < 0), with breakpoints at c = -d_i. `risk_shift` solves U(c) = target
exactly: with s_1 <= ... <= s_N the sorted d and S_m the sum of the m smallest, on the piece
where exactly the m smallest are negative U(c) = mean(d) + alpha S_m / N + c (1 + alpha m / N),
so c_m = (target - mean(d) - alpha S_m / N) / (1 + alpha m / N), and the root is the c_m whose
piece holds it (s_m + c_m <= 0 <= s_{m+1} + c_m). The population risk-reward scores are then
x_i = v(d_i + c).

Trial t draws its n topics from the counter-based stream (seed, t)
(`fastrisk._kernels.simulate.trial_uniforms`, first row): topic k = floor(u_k N), so a trial's
draws depend on the seed and t only, never on threads or chunking; its first m draws are those
of the same trial at m topics (nested topic sets).
"""

from __future__ import annotations

import numpy as np

from fastrisk._kernels import simulate as _k


def risk_value(d, alpha: float):
    """v(d) = d + alpha min(d, 0), the risk-reward score of URisk_alpha."""
    d = np.asarray(d, dtype=np.float64)
    return d + alpha * np.minimum(d, 0.0)


def risk_shift(d, alpha: float, target: float = 0.0) -> float:
    """The shift c of the experimental run with mean(v(d + c)) = ``target`` exactly (see the
    module docstring: the root on the piece of the piecewise-linear, increasing U(c) that holds
    it)."""
    s = np.sort(np.asarray(d, dtype=np.float64).reshape(-1))
    N = s.size
    m = np.arange(N + 1)
    S = np.concatenate([[0.0], np.cumsum(s)])
    c = (float(target) - s.mean() - alpha * S / N) / (1.0 + alpha * m / N)
    below = np.concatenate([[-np.inf], s])  # s_m (the largest negative term), none for m = 0
    above = np.concatenate([s, [np.inf]])  # s_{m+1} (the smallest non-negative term)
    ok = (below + c <= 0.0) & (above + c >= 0.0)
    k = np.flatnonzero(ok)
    if k.size == 0:  # rounding at a breakpoint: the candidate whose population value is nearest
        k = np.array([int(np.argmin([abs(risk_value(s + v, alpha).mean() - target) for v in c]))])
    return float(c[k[0]])


def population(d, alpha: float, target: float = 0.0) -> tuple[np.ndarray, float]:
    """(x_i = v(d_i + c), c): the population risk-reward scores of the shifted pair, whose mean
    is ``target``, and the shift c (`risk_shift`)."""
    c = risk_shift(d, alpha, target)
    return risk_value(np.asarray(d, dtype=np.float64) + c, alpha), c


def draw(pop: np.ndarray, n: int, seed: int, trials: np.ndarray) -> np.ndarray:
    """(T, n) risk-reward scores: trial ``trials[q]`` draws n topics of ``pop`` with replacement
    from its stream (seed, trials[q]), topic floor(u N)."""
    N = len(pop)
    U = _k.trial_uniforms(int(seed), np.asarray(trials, dtype=np.int64), int(n))[:, 0, :]
    idx = np.minimum((U * N).astype(np.int64), N - 1)
    return pop[idx]


__all__ = ["draw", "population", "risk_shift", "risk_value"]
