"""Inferences of URisk_α = E[x] = μ0 beyond Student's t: one row of risk-reward scores
x = d + α·min(d, 0) (or v(d)) per system (or pair), every row independent.

Each kernel takes ``X`` (m, n) (rows = systems or pairs, columns = topics) and writes, per row,
the p-values of the three alternatives ``out[:, ALT_TWO | ALT_GREATER | ALT_LESS]``
(``greater``: E[x] > μ0, e better than its baseline). The formulas and papers are in the
docstrings; `fastrisk.core.inference` is the registry that names them and
``tests/reference/riskinference.py`` the plain reference they are tested against.

Central sample moments m_k = n⁻¹ Σ (x_i − x̄)^k are computed in two passes (the mean first),
s² = n m₂ / (n − 1). Random draws (the betting test's permutations, the bootstrap's
resamples) are counter-based: row ``r``'s replicate ``b`` draws from stream ``r·B + b`` of
``seed`` (`fastrisk._kernels._random`; the double bootstrap's second level from streams with the
top bit set), so the numbers never depend on threads.
"""

from __future__ import annotations

import math

import numpy as np

from fastrisk._kernels._jit import helper, pjit, prange, serial, stopped
from fastrisk._kernels._random import next_below, stream_state
from fastrisk._kernels.numerics import t_lower_tails

ALT_TWO, ALT_GREATER, ALT_LESS = 0, 1, 2
_SQRT2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_EPS = float(np.finfo(np.float64).eps)
#: The bit that sets the double bootstrap's second-level streams apart from its first level's.
_INNER_STREAMS = np.uint64(1) << np.uint64(63)


@helper
def _ncdf(z):
    """Φ(z)."""
    return 0.5 * math.erfc(-z / _SQRT2)


@helper
def _clip01(p):
    if p < 0.0:
        return 0.0
    if p > 1.0:
        return 1.0
    return p


@helper
def central_moments(x):
    """(x̄, m₂, m₃, m₄) of one row, two passes (divisor n)."""
    n = x.shape[0]
    s = 0.0
    for i in range(n):
        s += x[i]
    mean = s / n
    m2 = 0.0
    m3 = 0.0
    m4 = 0.0
    for i in range(n):
        e = x[i] - mean
        e2 = e * e
        m2 += e2
        m3 += e2 * e
        m4 += e2 * e2
    return mean, m2 / n, m3 / n, m4 / n


@helper
def _write_normal(z, out, r):
    """p-values of a statistic referred to N(0, 1)."""
    out[r, ALT_TWO] = math.erfc(abs(z) / _SQRT2)
    out[r, ALT_GREATER] = 0.5 * math.erfc(z / _SQRT2)
    out[r, ALT_LESS] = 0.5 * math.erfc(-z / _SQRT2)


@helper
def _degenerate(mean, m2, n, mu0, out, r):
    """A row whose scores are constant (m₂ ≤ 4 n ε (m₂ + x̄²), the floor below which rounding
    leaves the variance, as `fastrisk.risk`'s): no spread to studentise by. p = 1 when the constant is
    μ0 (no evidence either way), else the data decide with certainty (p = 0 on the side of the
    constant). Returns True when it wrote the row."""
    if m2 > 4.0 * n * _EPS * (m2 + mean * mean):
        return False
    if mean == mu0:
        out[r, ALT_TWO] = 1.0
        out[r, ALT_GREATER] = 1.0
        out[r, ALT_LESS] = 1.0
    else:
        out[r, ALT_TWO] = 0.0
        out[r, ALT_GREATER] = 0.0 if mean > mu0 else 1.0
        out[r, ALT_LESS] = 0.0 if mean < mu0 else 1.0
    return True


@helper
def _edgeworth_cdf(z, gamma, kappa, n):
    """Two-term Edgeworth expansion of the studentised mean's distribution,
    P(T ≤ z) ≈ Φ(z) + n^(-1/2) q₁(z) φ(z) + n⁻¹ q₂(z) φ(z), with
    q₁(z) = γ (2z² + 1) / 6 and
    q₂(z) = z {κ (z² − 3) / 12 − γ² (z⁴ + 2z² − 3) / 18 − (z² + 3) / 4}
    (Hall 1992, The Bootstrap and Edgeworth Expansion, §2.6, the Student t statistic
    T = √n (x̄ − μ) / σ̂ with σ̂² = m₂; γ the skewness, κ the excess kurtosis)."""
    phi = _INV_SQRT_2PI * math.exp(-0.5 * z * z)
    z2 = z * z
    q1 = gamma * (2.0 * z2 + 1.0) / 6.0
    q2 = z * (kappa * (z2 - 3.0) / 12.0 - gamma * gamma * (z2 * z2 + 2.0 * z2 - 3.0) / 18.0 - (z2 + 3.0) / 4.0)
    return _ncdf(z) + (q1 / math.sqrt(n) + q2 / n) * phi


@helper
def edgeworth_from_moments(mean, m2, m3, m4, n, mu0):
    """(two-sided, greater, less) p-values of `edgeworth` from a row's central moments (m₂ > 0)."""
    gamma = m3 / m2 ** 1.5
    kappa = m4 / (m2 * m2) - 3.0
    z = (mean - mu0) / math.sqrt(m2 / n)
    f = _edgeworth_cdf(z, gamma, kappa, n)
    return edgeworth_two_sided(z, gamma, kappa, n), _clip01(1.0 - f), _clip01(f)


@helper
def edgeworth_two_sided(z, gamma, kappa, n):
    """1 − F(|z|) + F(−|z|) of `_edgeworth_cdf`: q₁ is even, so the n^(-1/2) terms cancel and
    it is 2(1 − Φ(a)) − 2 q₂(a) φ(a) / n, a = |z| (clipped to [0, 1])."""
    a = abs(z)
    a2 = a * a
    q2 = a * (kappa * (a2 - 3.0) / 12.0 - gamma * gamma * (a2 * a2 + 2.0 * a2 - 3.0) / 18.0 - (a2 + 3.0) / 4.0)
    return _clip01(math.erfc(a / _SQRT2) - 2.0 * q2 * _INV_SQRT_2PI * math.exp(-0.5 * a2) / n)


@helper
def edgeworth_two_sided_from_moments(mean, m2, m3, m4, n):
    """The two-sided p-value of `edgeworth_from_moments` at μ0 = 0 alone (the table's)."""
    return edgeworth_two_sided(mean / math.sqrt(m2 / n), m3 / m2 ** 1.5, m4 / (m2 * m2) - 3.0, n)


@helper
def hall_from_moments(mean, m2, m3, n, mu0):
    """Hall's T_H of `hall` from a row's central moments (m₂ > 0)."""
    sd = math.sqrt(m2)
    g = m3 / (m2 * sd)
    s = (mean - mu0) / sd
    return math.sqrt(n) * (s + g * s * s / 3.0 + g * g * s * s * s / 27.0 + g / (6.0 * n))


@helper
def johnson_from_moments(mean, m2, m3, n, mu0):
    """Johnson's t_J of `johnson` from a row's central moments (m₂ > 0)."""
    s2 = n * m2 / (n - 1)
    dev = mean - mu0
    return (dev + m3 / (6.0 * s2 * n) + m3 * dev * dev / (3.0 * s2 * s2)) / math.sqrt(s2 / n)


@pjit
def edgeworth(X, mu0, out):
    """Edgeworth-corrected p-values of TRisk (see `_edgeworth_cdf`), the moments estimated by
    their sample values: T_n = (x̄ − μ0) / √(m₂ / n) (= TRisk √(n / (n − 1))),
    γ̂ = m₃ / m₂^{3/2}, κ̂ = m₄ / m₂² − 3; greater 1 − F(T_n), less F(T_n), two-sided
    1 − F(|T_n|) + F(−|T_n|) (the n^(-1/2) terms cancel: 2(1 − Φ) − 2 q₂ φ / n); each clipped
    to [0, 1]."""
    m, n = X.shape
    for r in prange(m):
        mean, m2, m3, m4 = central_moments(X[r])
        if _degenerate(mean, m2, n, mu0, out, r):
            continue
        out[r, ALT_TWO], out[r, ALT_GREATER], out[r, ALT_LESS] = edgeworth_from_moments(mean, m2, m3, m4, n, mu0)


@pjit
def johnson(X, mu0, out):
    """Johnson's (1978, JASA 73, 536-544) modified t of every row:
    t_J = [(x̄ − μ0) + μ̂₃ / (6 s² n) + μ̂₃ (x̄ − μ0)² / (3 s⁴)] / √(s² / n), μ̂₃ = m₃,
    s² = n m₂ / (n − 1), referred to Student's t with n − 1 degrees of freedom (two-sided
    2 P(T ≤ −|t_J|), greater P(T ≥ t_J), less P(T ≤ t_J))."""
    m, n = X.shape
    stat = np.zeros(m)
    flat = np.zeros(m, np.bool_)
    for r in prange(m):
        mean, m2, m3, m4 = central_moments(X[r])
        if _degenerate(mean, m2, n, mu0, out, r):
            flat[r] = True
            continue
        stat[r] = johnson_from_moments(mean, m2, m3, n, mu0)
    tail = np.empty(m)
    t_lower_tails(stat, np.int64(n - 1), tail)
    for r in prange(m):
        if flat[r]:
            continue
        t = stat[r]
        out[r, ALT_TWO] = 2.0 * tail[r]
        out[r, ALT_GREATER] = tail[r] if t > 0.0 else 1.0 - tail[r]
        out[r, ALT_LESS] = tail[r] if t < 0.0 else 1.0 - tail[r]


@pjit
def hall(X, mu0, out):
    """Hall's (1992, JRSS B 54, 221-228) cubic transformation of the studentised mean:
    S = (x̄ − μ0) / σ̂, σ̂² = m₂, γ̂ = m₃ / σ̂³,
    T_H = √n (S + γ̂ S² / 3 + γ̂² S³ / 27 + γ̂ / (6n)), monotone in S
    (dT_H/dS = √n (1 + γ̂S/3)² ≥ 0), referred to N(0, 1)."""
    m, n = X.shape
    for r in prange(m):
        mean, m2, m3, m4 = central_moments(X[r])
        if _degenerate(mean, m2, n, mu0, out, r):
            continue
        _write_normal(hall_from_moments(mean, m2, m3, n, mu0), out, r)


@helper
def _el_lambda(x, mu0, zmin, zmax):
    """The root λ of Σ z_i / (1 + λ z_i) = 0, z = x − μ0, on (−1/z_max, −1/z_min): the sum is
    decreasing in λ there; Newton steps safeguarded by bisection to 1e-14 of the bracket."""
    n = x.shape[0]
    lo = -1.0 / zmax
    hi = -1.0 / zmin
    w = hi - lo
    lo += 1e-12 * w
    hi -= 1e-12 * w
    lam = 0.0
    for _ in range(200):
        g = 0.0
        dg = 0.0
        for i in range(n):
            z = x[i] - mu0
            q = 1.0 / (1.0 + lam * z)
            g += z * q
            dg -= z * z * q * q
        if g > 0.0:
            lo = lam
        else:
            hi = lam
        step = lam - g / dg if dg < 0.0 else 0.5 * (lo + hi)
        if not (lo < step < hi):
            step = 0.5 * (lo + hi)
        if abs(step - lam) <= 1e-14 * (1.0 + abs(lam)) or hi - lo <= 1e-15 * (1.0 + abs(lam)):
            lam = step
            break
        lam = step
    return lam


@pjit
def el_bartlett(X, mu0, out):
    """Owen's (1988, 1990) empirical likelihood ratio for the mean with DiCiccio, Hall &
    Romano's (1991, Ann. Statist. 19, 1053-1061) Bartlett correction:
    W = 2 Σ log(1 + λ z_i), z = x − μ0, λ the root of Σ z / (1 + λ z) = 0;
    W_B = W / (1 + a / n), a = m₄ / (2 m₂²) − m₃² / (3 m₂³) (the sample value of
    ½ μ₄/μ₂² − ⅓ μ₃²/μ₂³); two-sided p = P(χ²₁ > W_B), one-sided from the signed root
    r = sign(x̄ − μ0) √W_B against N(0, 1). μ0 outside the scores' range: W = ∞ (p = 0 on the
    data's side)."""
    m, n = X.shape
    for r in prange(m):
        x = X[r]
        mean, m2, m3, m4 = central_moments(x)
        if _degenerate(mean, m2, n, mu0, out, r):
            continue
        zmin = np.inf
        zmax = -np.inf
        for i in range(n):
            z = x[i] - mu0
            zmin = min(zmin, z)
            zmax = max(zmax, z)
        if zmin >= 0.0 or zmax <= 0.0:  # μ0 on or outside the convex hull: likelihood ratio 0
            _write_normal(np.inf if mean > mu0 else -np.inf, out, r)
            continue
        lam = _el_lambda(x, mu0, zmin, zmax)
        w = 0.0
        for i in range(n):
            w += math.log1p(lam * (x[i] - mu0))
        w = max(2.0 * w, 0.0)
        a = m4 / (2.0 * m2 * m2) - m3 * m3 / (3.0 * m2 * m2 * m2)
        wb = w / (1.0 + a / n)
        root = math.sqrt(wb)
        _write_normal(root if mean >= mu0 else -root, out, r)


@pjit
def bootstrap_t_symmetric(X, mu0, replicates, seed, row0, out):
    """Hall's (1988, Ann. Statist. 16, 927-953) symmetric bootstrap-t: T = (x̄ − μ0) / (s / √n);
    B resamples of the row with replacement (replicate b of row r from stream
    (r + row0)·B + b), T* = (x̄* − x̄) / (s* / √n); p two-sided (#{|T*| ≥ |T|} + 1) / (B + 1),
    greater (#{T* ≥ T} + 1) / (B + 1), less (#{T* ≤ T} + 1) / (B + 1). A resample with s* = 0
    has T* = ±∞ (0 when x̄* = x̄)."""
    m, n = X.shape
    for r in prange(m):
        x = X[r]
        mean, m2, m3, m4 = central_moments(x)
        if _degenerate(mean, m2, n, mu0, out, r):
            continue
        t = (mean - mu0) / math.sqrt(m2 / (n - 1))
        at = abs(t)
        two = 0
        up = 0
        down = 0
        for b in range(replicates):
            state = stream_state(seed, (r + row0) * replicates + b)
            s1 = 0.0
            s2 = 0.0
            for i in range(n):
                state, k = next_below(state, n)
                v = x[k] - mean
                s1 += v
                s2 += v * v
            mb = s1 / n
            v2 = (s2 - n * mb * mb) / (n - 1)
            if v2 > 0.0:
                ts = mb / math.sqrt(v2 / n)
            elif mb == 0.0:
                ts = 0.0
            else:
                ts = np.inf if mb > 0.0 else -np.inf
            if abs(ts) >= at:
                two += 1
            if ts >= t:
                up += 1
            if ts <= t:
                down += 1
        out[r, ALT_TWO] = (two + 1.0) / (replicates + 1.0)
        out[r, ALT_GREATER] = (up + 1.0) / (replicates + 1.0)
        out[r, ALT_LESS] = (down + 1.0) / (replicates + 1.0)


@helper
def _resample_t(s1, s2, sa, n, scale):
    """T* = z̄* / (s* / √n) of a resample of centred values z with Σ z* = ``s1``, Σ z*² = ``s2``,
    Σ |z*| = ``sa``; s*² = (s2 − n z̄*²) / (n − 1). A mean difference within rounding of 0,
    |s1| ≤ 4 n ε (sa + n ``scale``) (``scale`` = max |x|: the centring's own rounding), is 0: a
    resample with the same values as its centre's sample (a permutation of it) has T* = 0
    exactly, so that its ties with other such resamples do not fall by rounding. s* = 0 gives
    T* = ±∞ (0 when z̄* = 0), as `bootstrap_t_symmetric`."""
    raw = s1 / n
    v2 = (s2 - n * raw * raw) / (n - 1)
    mb = 0.0 if abs(s1) <= 4.0 * n * _EPS * (sa + n * scale) else raw
    if v2 > 0.0:
        return mb / math.sqrt(v2 / n)
    if mb == 0.0:
        return 0.0
    return np.inf if mb > 0.0 else -np.inf


@helper
def _as_extreme(ts, t, at):
    """(|ts| >= ``at``, ts >= t, ts <= t) as 0/1: whether a resample's statistic ``ts`` counts
    against T = t (``at`` = |t|) two-sided, in the ``greater`` and in the ``less`` tail."""
    return int(abs(ts) >= at), int(ts >= t), int(ts <= t)


@pjit
def bootstrap_t_double(X, mu0, replicates, inner, seed, row0, stop, out):
    """The double (iterated) bootstrap calibration of the bootstrap-t p-value (Beran 1988, JASA
    83, 687-697, prepivoting; Hall & Martin 1988; Davison & Hinkley 1997, §4.5, the double
    bootstrap test). First level, as `bootstrap_t_symmetric` (the same streams and statistics,
    but for `_resample_t`'s rounding rule): T = (x̄ − μ0) /
    (s / √n); R = ``replicates`` resamples x*_b of the row (stream (r + row0)·R + b),
    T*_b = (x̄*_b − x̄) / (s*_b / √n); p = (1 + #{|T*_b| ≥ |T|}) / (R + 1) (``greater``:
    T*_b ≥ T, ``less``: T*_b ≤ T). Second level: C = ``inner`` resamples x**_bc of each x*_b
    (stream 2^63 + ((r + row0)·R + b)·C + c: the same numbers whatever the threads, never a
    first-level stream), T**_bc = (x̄** − x̄*_b) / (s** / √n),
    u*_b = (1 + #{|T**_bc| ≥ |T*_b|}) / (C + 1) (one-sided likewise, T*_b in place of T): the
    p-value the single bootstrap gives in the bootstrap world whose truth is x̄.
    Adjusted p = (1 + #{u*_b ≤ p}) / (R + 1) (Davison & Hinkley §4.5, p_adj = Pr*(P* ≤ p) in
    their Monte Carlo form: the share of the bootstrap worlds' p-values at most the observed
    one, ties counted, with the (1 + #)/(R + 1) of their Monte Carlo tests), the comparison made
    in integers, (1 + k)(R + 1) ≤ (1 + j)(C + 1), so that no rounding decides a tie. A resample
    x*_b with no spread (one value drawn n times) leaves every x**_bc equal to it: T** = 0.
    Mean differences within rounding of 0 are 0 (`_resample_t`). Resampling the centred z = x − x̄
    (and at the second level x*_b − x̄*_b) is resampling from the null-fitted data, as Davison &
    Hinkley's double bootstrap test does at both levels; for the studentised mean it is the same
    as studentising around x̄ (and x̄*_b). The row's degenerate cases are `_degenerate`'s. Polls
    ``stop`` before each row."""
    m, n = X.shape
    for r in prange(m):
        if stopped(stop):
            continue
        x = X[r]
        mean, m2, m3, m4 = central_moments(x)
        if _degenerate(mean, m2, n, mu0, out, r):
            continue
        t = (mean - mu0) / math.sqrt(m2 / (n - 1))
        at = abs(t)
        z = np.empty(n)
        scale = 0.0
        for i in range(n):
            z[i] = x[i] - mean
            scale = max(scale, abs(x[i]))
        zs = np.empty(n)
        k_two = np.empty(replicates, np.int64)
        k_up = np.empty(replicates, np.int64)
        k_down = np.empty(replicates, np.int64)
        two = 0
        up = 0
        down = 0
        for b in range(replicates):
            first = (r + row0) * replicates + b
            state = stream_state(seed, first)
            s1 = 0.0
            s2 = 0.0
            sa = 0.0
            lo = np.inf
            hi = -np.inf
            for i in range(n):
                state, k = next_below(state, n)
                v = z[k]
                zs[i] = v
                s1 += v
                s2 += v * v
                sa += abs(v)
                lo = min(lo, v)
                hi = max(hi, v)
            ts = _resample_t(s1, s2, sa, n, scale)
            e2, eu, ed = _as_extreme(ts, t, at)
            two += e2
            up += eu
            down += ed
            a2 = 0
            a_up = 0
            a_down = 0
            if lo == hi:  # no spread: every second-level resample is this one, T** = 0
                a2 = inner if ts == 0.0 else 0
                a_up = inner if ts <= 0.0 else 0
                a_down = inner if ts >= 0.0 else 0
            else:
                mb = s1 / n
                for i in range(n):  # the resample centred at its own mean: x̄*_b is its truth
                    zs[i] -= mb
                ats = abs(ts)
                for c in range(inner):
                    state = stream_state(seed, _INNER_STREAMS + np.uint64(first * inner + c))
                    q1 = 0.0
                    q2 = 0.0
                    qa = 0.0
                    for i in range(n):
                        state, k = next_below(state, n)
                        v = zs[k]
                        q1 += v
                        q2 += v * v
                        qa += abs(v)
                    e2, eu, ed = _as_extreme(_resample_t(q1, q2, qa, n, scale), ts, ats)
                    a2 += e2
                    a_up += eu
                    a_down += ed
            k_two[b] = a2
            k_up[b] = a_up
            k_down[b] = a_down
        R1 = replicates + 1
        C1 = inner + 1
        adj_two = 0
        adj_up = 0
        adj_down = 0
        for b in range(replicates):
            if (1 + k_two[b]) * R1 <= (1 + two) * C1:
                adj_two += 1
            if (1 + k_up[b]) * R1 <= (1 + up) * C1:
                adj_up += 1
            if (1 + k_down[b]) * R1 <= (1 + down) * C1:
                adj_down += 1
        out[r, ALT_TWO] = (adj_two + 1.0) / R1
        out[r, ALT_GREATER] = (adj_up + 1.0) / R1
        out[r, ALT_LESS] = (adj_down + 1.0) / R1


@helper
def _log_capital(y, order, m, lam_two, lam_one, c, n):
    """log K⁺ and log K⁻ of one ordering of y ∈ [0, 1] at the null mean m, for the two-sided
    bet size (``lam_two`` = 2 log(2/level)) and the one-sided one (``lam_one`` = 2 log(1/level)):
    returns (log K⁺₂, log K⁻₂, log K⁺₁, log K⁻₁). Predictable plug-in bets (Waudby-Smith &
    Ramdas 2024, the fixed-n choice of their §5): λ_t = √(ℓ / (n σ̂²_{t−1})), truncated at c/m
    (K⁺) and c/(1 − m) (K⁻) as their hedged capital process truncates them;
    μ̂_t = (1/2 + Σ_{i≤t} y_i) / (t + 1), σ̂²_t = (1/4 + Σ_{i≤t} (y_i − μ̂_i)²) / (t + 1)."""
    up = c / m
    dn = c / (1.0 - m)
    ratio = math.sqrt(lam_one / lam_two)
    s = 0.0
    ss = 0.0
    var = 0.25
    kp2 = 0.0
    km2 = 0.0
    kp1 = 0.0
    km1 = 0.0
    # the capital as running products, their logs taken every 32 factors: each factor lies in
    # [1 - c, 1 + c max(m, 1 - m) / min(m, 1 - m)], so 32 of them neither overflow nor underflow
    pp2 = 1.0
    pm2 = 1.0
    pp1 = 1.0
    pm1 = 1.0
    for t in range(n):
        v = y[order[t]]
        base2 = math.sqrt(lam_two / (n * var))
        base1 = base2 * ratio
        e = v - m
        pp2 *= 1.0 + min(base2, up) * e
        pm2 *= 1.0 - min(base2, dn) * e
        pp1 *= 1.0 + min(base1, up) * e
        pm1 *= 1.0 - min(base1, dn) * e
        if t % 32 == 31 or t == n - 1:
            kp2 += math.log(pp2)
            km2 += math.log(pm2)
            kp1 += math.log(pp1)
            km1 += math.log(pm1)
            pp2 = 1.0
            pm2 = 1.0
            pp1 = 1.0
            pm1 = 1.0
        s += v
        mu = (0.5 + s) / (t + 2.0)
        ss += (v - mu) * (v - mu)
        var = (0.25 + ss) / (t + 2.0)
    return kp2, km2, kp1, km1


@helper
def _logmeanexp_add(acc_max, acc_sum, v):
    """Running log-mean-exp: (max, Σ exp(v − max)) with v added."""
    if v == -np.inf:
        return acc_max, acc_sum
    if v > acc_max:
        return v, acc_sum * math.exp(acc_max - v) + 1.0
    return acc_max, acc_sum + math.exp(v - acc_max)


@pjit
def betting(X, lo, hi, mu0, level, c, permutations, seed, row0, out):
    """The betting test of E[x] = μ0 for x ∈ [lo, hi] (Waudby-Smith & Ramdas 2024): y = (x − lo)
    / (hi − lo), m = (μ0 − lo) / (hi − lo); K⁺ = Π (1 + λ⁺_t (y_t − m)), K⁻ = Π (1 − λ⁻_t (y_t − m))
    (`_log_capital`); the hedged capital max(K⁺/2, K⁻/2) for the two-sided test, K⁺ for
    ``greater``, K⁻ for ``less``, each averaged over ``permutations`` random orderings of the
    topics (ordering b of row r from stream (r + row0)·B + b, Fisher–Yates): each is a
    nonnegative martingale of mean 1 under E[y] = m for any law on [0, 1], so is the average
    (the topics are exchangeable), and p = min(1, 1 / mean K) by Markov's inequality."""
    m_rows, n = X.shape
    w = hi - lo
    mnull = (mu0 - lo) / w
    lam_two = 2.0 * math.log(2.0 / level)
    lam_one = 2.0 * math.log(1.0 / level)
    for r in prange(m_rows):
        y = np.empty(n)
        for i in range(n):
            y[i] = (X[r, i] - lo) / w
        order = np.empty(n, np.int64)
        t_max, t_sum = -np.inf, 0.0
        g_max, g_sum = -np.inf, 0.0
        l_max, l_sum = -np.inf, 0.0
        for b in range(permutations):
            for i in range(n):
                order[i] = i
            state = stream_state(seed, (r + row0) * permutations + b)
            for i in range(n - 1, 0, -1):
                state, k = next_below(state, i + 1)
                tmp = order[i]
                order[i] = order[k]
                order[k] = tmp
            kp2, km2, kp1, km1 = _log_capital(y, order, mnull, lam_two, lam_one, c, n)
            t_max, t_sum = _logmeanexp_add(t_max, t_sum, max(kp2, km2) - math.log(2.0))
            g_max, g_sum = _logmeanexp_add(g_max, g_sum, kp1)
            l_max, l_sum = _logmeanexp_add(l_max, l_sum, km1)
        out[r, ALT_TWO] = min(1.0, math.exp(-(t_max + math.log(t_sum / permutations))))
        out[r, ALT_GREATER] = min(1.0, math.exp(-(g_max + math.log(g_sum / permutations))))
        out[r, ALT_LESS] = min(1.0, math.exp(-(l_max + math.log(l_sum / permutations))))


edgeworth_serial = serial(edgeworth)
johnson_serial = serial(johnson)
hall_serial = serial(hall)
el_bartlett_serial = serial(el_bartlett)
bootstrap_t_symmetric_serial = serial(bootstrap_t_symmetric)
bootstrap_t_double_serial = serial(bootstrap_t_double)
betting_serial = serial(betting)
