"""Plain references for the risk inferences (`fastrisk._kernels.riskinference`): one function
per inference on one row of risk-reward scores, returning (two-sided, greater, less) p-values,
written from the papers' formulas with NumPy/SciPy and loops, never importing the kernels."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy import optimize, stats

from reference.resampling import Stream


def _moments(x):
    x = np.asarray(x, dtype=float)
    e = x - x.mean()
    return x.mean(), np.mean(e ** 2), np.mean(e ** 3), np.mean(e ** 4)


def _flat(x, mu0):
    mean, m2, _, _ = _moments(x)
    if m2 > 4 * len(x) * np.finfo(float).eps * (m2 + mean ** 2):
        return None
    if mean == mu0:
        return 1.0, 1.0, 1.0
    return 0.0, (0.0 if mean > mu0 else 1.0), (0.0 if mean < mu0 else 1.0)


def _normal(z):
    return 2 * stats.norm.sf(abs(z)), stats.norm.sf(z), stats.norm.cdf(z)


def edgeworth(x, mu0=0.0):
    """Hall (1992) §2.6: P(T <= z) = Phi + n^-1/2 q1 phi + n^-1 q2 phi for T = sqrt(n)(mean - mu)/sigma_hat."""
    if (f := _flat(x, mu0)) is not None:
        return f
    n = len(x)
    mean, m2, m3, m4 = _moments(x)
    g, k = m3 / m2 ** 1.5, m4 / m2 ** 2 - 3

    def F(z):
        q1 = g * (2 * z ** 2 + 1) / 6
        q2 = z * (k * (z ** 2 - 3) / 12 - g ** 2 * (z ** 4 + 2 * z ** 2 - 3) / 18 - (z ** 2 + 3) / 4)
        return stats.norm.cdf(z) + (q1 / math.sqrt(n) + q2 / n) * stats.norm.pdf(z)

    z = (mean - mu0) / math.sqrt(m2 / n)
    clip = lambda p: min(max(p, 0.0), 1.0)  # noqa: E731
    return clip(1 - F(abs(z)) + F(-abs(z))), clip(1 - F(z)), clip(F(z))


def johnson(x, mu0=0.0):
    """Johnson (1978): t_J against Student's t, n - 1 df."""
    if (f := _flat(x, mu0)) is not None:
        return f
    n = len(x)
    mean, m2, m3, _ = _moments(x)
    s2 = np.var(x, ddof=1)
    dev = mean - mu0
    t = (dev + m3 / (6 * s2 * n) + m3 * dev ** 2 / (3 * s2 ** 2)) / math.sqrt(s2 / n)
    return 2 * stats.t.sf(abs(t), n - 1), stats.t.sf(t, n - 1), stats.t.cdf(t, n - 1)


def hall(x, mu0=0.0):
    """Hall (1992, JRSS B): T = sqrt(n)(S + g S^2/3 + g^2 S^3/27 + g/(6n)) against N(0, 1)."""
    if (f := _flat(x, mu0)) is not None:
        return f
    n = len(x)
    mean, m2, m3, _ = _moments(x)
    g = m3 / m2 ** 1.5
    s = (mean - mu0) / math.sqrt(m2)
    return _normal(math.sqrt(n) * (s + g * s ** 2 / 3 + g ** 2 * s ** 3 / 27 + g / (6 * n)))


def el_bartlett(x, mu0=0.0):
    """Owen's empirical likelihood for the mean, Bartlett-corrected (DiCiccio, Hall & Romano 1991)."""
    if (f := _flat(x, mu0)) is not None:
        return f
    x = np.asarray(x, dtype=float)
    n = len(x)
    z = x - mu0
    mean, m2, m3, m4 = _moments(x)
    if z.min() >= 0 or z.max() <= 0:
        return _normal(math.inf if mean > mu0 else -math.inf)
    lo, hi = -1 / z.max(), -1 / z.min()
    w = hi - lo
    lam = optimize.brentq(lambda lam: np.sum(z / (1 + lam * z)), lo + 1e-12 * w, hi - 1e-12 * w, xtol=1e-15)
    W = max(2 * np.sum(np.log1p(lam * z)), 0.0)
    a = m4 / (2 * m2 ** 2) - m3 ** 2 / (3 * m2 ** 3)
    r = math.sqrt(W / (1 + a / n))
    return _normal(r if mean >= mu0 else -r)


def bootstrap_t_symmetric(x, seed, B, row=0, mu0=0.0):
    """Hall (1988): |T*| percentile; resample b of row r from stream r*B + b, index = below(n)."""
    if (f := _flat(x, mu0)) is not None:
        return f
    x = np.asarray(x, dtype=float)
    n = len(x)
    mean = x.mean()
    t = (mean - mu0) / (x.std(ddof=1) / math.sqrt(n))
    two = up = down = 0
    for b in range(B):
        s = Stream(seed, row * B + b)
        xs = np.array([x[s.below(n)] for _ in range(n)]) - mean
        mb, v2 = xs.mean(), np.var(xs, ddof=1)
        ts = mb / math.sqrt(v2 / n) if v2 > 0 else (0.0 if mb == 0 else math.copysign(math.inf, mb))
        two += abs(ts) >= abs(t)
        up += ts >= t
        down += ts <= t
    return (two + 1) / (B + 1), (up + 1) / (B + 1), (down + 1) / (B + 1)


def _studentised(xs, centre, scale):
    """(mean(xs) − centre) / (s / √n), s from np.var(ddof=1); a mean difference within rounding
    of 0 (|Σ(xs − centre)| <= 4 n eps (Σ|xs − centre| + n scale)) is 0; s = 0: ±inf, or 0."""
    n = len(xs)
    dev = xs - centre
    mb = 0.0 if abs(dev.sum()) <= 4 * n * np.finfo(float).eps * (np.abs(dev).sum() + n * scale) else dev.mean()
    v2 = 0.0 if np.ptp(xs) == 0 else np.var(xs, ddof=1)
    return mb / math.sqrt(v2 / n) if v2 > 0 else (0.0 if mb == 0 else math.copysign(math.inf, mb))


def bootstrap_t_double(x, seed, R, row=0, mu0=0.0, details=False, C=None):
    """Beran (1988) / Davison & Hinkley (1997, §4.5): the bootstrap-t p-value p (Hall 1988,
    resample b of row r from stream r*R + b) calibrated by C resamples (default R) of each
    first-level resample (stream 2**63 + (r*R + b)*C + c): u*_b = (1 + #{|T**| >= |T*_b|})/(C + 1),
    T** = (mean(x**) - mean(x*_b))/(s**/sqrt(n)); p_adj = (1 + #{u*_b <= p})/(R + 1) (<= in exact
    fractions). One-sided: T*_b >= T (greater), <= T (less), likewise at the second level."""
    if (f := _flat(x, mu0)) is not None:
        return f
    x = np.asarray(x, dtype=float)
    n = len(x)
    C = R if C is None else C
    mean = x.mean()
    scale = np.abs(x).max()
    t = (mean - mu0) / (x.std(ddof=1) / math.sqrt(n))
    tests = {"two": lambda a, b: abs(a) >= abs(b), "greater": lambda a, b: a >= b, "less": lambda a, b: a <= b}
    first = {k: 0 for k in tests}
    inner = {k: [] for k in tests}
    for b in range(R):
        s = Stream(seed, row * R + b)
        xs = np.array([x[s.below(n)] for _ in range(n)])
        ts = _studentised(xs, mean, scale)
        for k, beats in tests.items():
            first[k] += beats(ts, t)
        counts = {k: 0 for k in tests}
        for c in range(C):
            s2 = Stream(seed, 2 ** 63 + (row * R + b) * C + c)
            xss = np.array([xs[s2.below(n)] for _ in range(n)])
            tss = 0.0 if np.ptp(xs) == 0 else _studentised(xss, xs.mean(), scale)
            for k, beats in tests.items():
                counts[k] += beats(tss, ts)
        for k in tests:
            inner[k].append(Fraction(1 + counts[k], C + 1))
    p = {k: Fraction(1 + first[k], R + 1) for k in tests}
    adj = tuple((1 + sum(u <= p[k] for u in inner[k])) / (R + 1) for k in tests)
    if details:
        return adj, tuple(float(p[k]) for k in tests), {k: [float(u) for u in inner[k]] for k in tests}
    return adj


def betting(x, lo, hi, seed, permutations, row=0, mu0=0.0, level=0.05, c=0.5):
    """Waudby-Smith & Ramdas (2024): hedged capital with predictable plug-in bets for a fixed n,
    averaged over random orderings (Fisher-Yates from stream row*B + b); p = min(1, 1/mean K)."""
    x = np.asarray(x, dtype=float)
    n = len(x)
    y = (x - lo) / (hi - lo)
    m = (mu0 - lo) / (hi - lo)
    K2, Kg, Kl = [], [], []
    for b in range(permutations):
        s = Stream(seed, row * permutations + b)
        order = list(range(n))
        for i in range(n - 1, 0, -1):
            k = s.below(i + 1)
            order[i], order[k] = order[k], order[i]
        yy = y[order]
        logs = {}
        for name, ell in (("two", 2 * math.log(2 / level)), ("one", 2 * math.log(1 / level))):
            kp = km = 0.0
            for t in range(n):
                prev = yy[:t]
                mus = [(0.5 + prev[:i + 1].sum()) / (i + 2) for i in range(t)]
                var = (0.25 + sum((prev[i] - mus[i]) ** 2 for i in range(t))) / (t + 1)
                lam = math.sqrt(ell / (n * var))
                kp += math.log1p(min(lam, c / m) * (yy[t] - m))
                km += math.log1p(-min(lam, c / (1 - m)) * (yy[t] - m))
            logs[name] = (kp, km)
        K2.append(max(math.exp(logs["two"][0]), math.exp(logs["two"][1])) / 2)
        Kg.append(math.exp(logs["one"][0]))
        Kl.append(math.exp(logs["one"][1]))
    return tuple(min(1.0, 1.0 / np.mean(K)) for K in (K2, Kg, Kl))


def pair_higher_sums(V):
    """Σ|d|, Σd|d|, Σd², Σd³, Σ|d|³, Σd⁴, Σd³|d| of d = V[a] − V[b] for every ordered pair (7, S, S)."""
    V = np.asarray(V, dtype=float)
    S = V.shape[0]
    out = np.zeros((7, S, S))
    for a in range(S):
        for b in range(S):
            d = V[a] - V[b]
            e = np.abs(d)
            out[:, a, b] = [e.sum(), (d * e).sum(), (d ** 2).sum(), (d ** 3).sum(), (e ** 3).sum(), (d ** 4).sum(),
                            (d ** 3 * e).sum()]
    return out
