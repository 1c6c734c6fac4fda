"""Batched kernels: K independent collections (K x S x c) in one call, ``prange`` over K.

Risk (URisk, SE_x, SE_J; Wang et al. 2012, Dinçer et al. 2014) follows the algebra of
`fastrisk._kernels.risk` in a branch-free unit indexed in place; ZRisk/GeoRisk
(Dinçer et al. 2016) is computed per collection from its own totals. The resampling drivers take per-row scores ``Y`` (K x M x c)
and return tail counts, so nothing of size B is kept per collection.

Randomness: replicate ``b`` of collection ``k`` draws from the stream
``stream_state(stream_state(seed, 2 k + tag), b)`` (tag 0: bootstrap, 1: sign flips), so a
collection's numbers depend only on ``(seed, k, b)``: never on threads or on how K is
chunked (a chunk passes its global offset ``start``).
"""

from __future__ import annotations

import math

import numpy as np

from fastrisk._kernels._jit import njit, pjit, prange
from fastrisk._kernels._random import next_u64, stream_state
from fastrisk._kernels.numerics import VARIANCE_RTOL, floored_t
from fastrisk._kernels.risk import risk_at, risk_score, risk_sums
from fastrisk._kernels.zrisk import cell_sums, georisk_cell, topic_factors

_ONE = np.uint64(1)
_LOW32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)


# --------------------------------------------------------------------------- streams
@njit
def replicate_state(seed, k, tag, b):
    """Initial state of replicate ``b`` of collection ``k`` for procedure ``tag``."""
    return stream_state(stream_state(seed, np.uint64(2 * k + tag)), np.uint64(b))


@njit
def draw_topics(state, c, idx):
    """Fill ``idx`` with c uniform topics in {0..c-1}: two draws per 64 random bits
    (Lemire's multiply-shift on each 32-bit half; bias below c / 2^32). Returns the state."""
    cc = np.uint64(c)
    j = 0
    while j < c:
        state, z = next_u64(state)
        idx[j] = np.int64(((z & _LOW32) * cc) >> _S32)
        j += 1
        if j < c:
            idx[j] = np.int64(((z >> _S32) * cc) >> _S32)
            j += 1
    return state


# --------------------------------------------------------------------------- risk
@njit
def risk_pair(V, k, s, row, alphas, urisk, se, sej):
    """URisk, SE_x and SE_J of system ``s`` of collection ``k`` against row ``row`` at every
    alpha, written to ``urisk[k, a, s]`` etc. (the batch layout): the scalar core of the
    single-collection path (`fastrisk._kernels.risk.risk_sums` and ``risk_at``), so
    both paths give the same numbers. Returns (FReward, FRisk)."""
    c = V.shape[2]
    gains, losses, s_ee, s_ef, s_ff, s_e, s_f = risk_sums(V[k, s], V[k, row])
    for a in range(alphas.shape[0]):
        urisk[k, a, s], se[k, a, s], sej[k, a, s] = risk_at(alphas[a], c, gains, losses, s_ee, s_ef, s_ff, s_e, s_f)
    return gains / c, -losses / c


@pjit
def risk_batch(V, row, alphas):
    """URisk, SE_x, SE_J, TRisk (K, A, S) and FReward, FRisk (K, S) of every system of every
    collection V (K, S, c) against the system in row ``row`` (the baseline row itself gets 0,
    TRisk NaN). TRisk = URisk / SE_x; an SE of 0 or below the relative variance floor is set
    to 0 with TRisk ±inf (NaN if URisk is 0 too), and ``zero[k]`` marks such a collection.

    Validation is fused into the pass: ``bad[k]`` is True when a sum over collection k is not
    finite (a NaN or infinite score), so the caller needs no separate pass over the stack.
    """
    K, S, c = V.shape
    A = alphas.shape[0]
    freward = np.empty((K, S))
    frisk = np.empty((K, S))
    urisk = np.empty((K, A, S))
    se = np.empty((K, A, S))
    sej = np.empty((K, A, S))
    trisk = np.empty((K, A, S))
    bad = np.zeros(K, np.bool_)
    zero = np.zeros(K, np.bool_)
    for k in prange(K):
        base = 0.0
        for i in range(c):
            base += V[k, row, i]
        if not math.isfinite(base):
            bad[k] = True
        for s in range(S):
            if s == row:
                freward[k, s] = 0.0
                frisk[k, s] = 0.0
                for a in range(A):
                    urisk[k, a, s] = 0.0
                    se[k, a, s] = 0.0
                    sej[k, a, s] = 0.0
                    trisk[k, a, s] = math.nan
                continue
            fr, fk = risk_pair(V, k, s, row, alphas, urisk, se, sej)
            freward[k, s] = fr
            frisk[k, s] = fk
            if not (math.isfinite(fr) and math.isfinite(fk)):
                bad[k] = True
            for a in range(A):
                z, trisk[k, a, s] = floored_t(urisk[k, a, s], se[k, a, s], c, VARIANCE_RTOL)
                if z:
                    se[k, a, s] = 0.0
                    sej[k, a, s] = 0.0
                    zero[k] = True
    return freward, frisk, urisk, se, sej, trisk, bad, zero


@pjit
def batch_scores(V, row, alphas):
    """Per-topic risk-reward scores x = `risk_score`(d, 1 + alpha) (K, A * S, c) of every system
    of every collection V (K, S, c) against the system in row ``row``, alpha-major."""
    K, S, c = V.shape
    A = alphas.shape[0]
    X = np.empty((K, A * S, c))
    for k in prange(K):
        for a in range(A):
            w = 1.0 + alphas[a]
            for s in range(S):
                for i in range(c):
                    X[k, a * S + s, i] = risk_score(V[k, s, i] - V[k, row, i], w)
    return X


@njit
def _zrisk_one(X, pos, neg, eff, tt):
    """Sums of positive and negative standardised cells of each system of one collection.

    e_ik = T_i S_k / N, z_ik = (X[k, i] - e_ik) / sqrt(e_ik), 0 where e_ik = 0.
    """
    S, c = X.shape
    grand = 0.0
    for i in range(c):
        t = 0.0
        for s in range(S):
            t += X[s, i]
        tt[i] = t
        grand += t
    share, root = topic_factors(tt, grand)
    for s in range(S):
        sk = 0.0
        for i in range(c):
            sk += X[s, i]
        eff[s] = sk / c
        pos[s], neg[s] = cell_sums(X[s], share, root, sk)


@pjit
def zrisk_batch(V, loss_weights, sign):
    """ZRisk and GeoRisk (K, S, A) of every collection; ``sign`` -1 for the minus convention.

    ZRisk = pos + w neg (w = 1 + alpha), GeoRisk = sign sqrt(Eff * Phi(ZRisk / c)) (`georisk_cell`).
    """
    K, S, c = V.shape
    A = loss_weights.shape[0]
    z = np.empty((K, S, A))
    geo = np.empty((K, S, A))
    eff = np.empty((K, S))
    for k in prange(K):
        pos = np.empty(S)
        neg = np.empty(S)
        tt = np.empty(c)
        _zrisk_one(V[k], pos, neg, eff[k], tt)
        for s in range(S):
            for a in range(A):
                zz = sign * (pos[s] + loss_weights[a] * neg[s])
                z[k, s, a] = zz
                geo[k, s, a] = georisk_cell(eff[k, s], zz, c, sign)
    return z, geo, eff


# --------------------------------------------------------------------------- resampling
@njit
def _bootstrap_rows(Y, seed, k, B, counts, moments):
    """Shift-to-the-null bootstrap of the mean of each row of Y (M, c) of collection ``k``.

    d*_b = mean(Y[m, idx_b]) - mean(Y[m]); counts[m] = #{d* >= obs - g}, #{d* <= obs + g},
    #{|d*| >= |obs| - g} with obs = mean(Y[m]), g a rounding tolerance; moments[m] = mean
    and standard deviation of the replicate means.
    """
    M, c = Y.shape
    idx = np.empty(c, np.int64)
    theta = np.empty(M)
    tol = np.empty(M)
    s1 = np.zeros(M)
    s2 = np.zeros(M)
    for m in range(M):
        t = 0.0
        a = 0.0
        for i in range(c):
            t += Y[m, i]
            a += abs(Y[m, i])
        theta[m] = t / c
        tol[m] = 1e-12 * a / c
        counts[m, 0] = 0
        counts[m, 1] = 0
        counts[m, 2] = 0
    for b in range(B):
        state = replicate_state(seed, k, 0, b)
        draw_topics(state, c, idx)
        for m in range(M):
            t = 0.0
            for j in range(c):
                t += Y[m, idx[j]]
            d = t / c - theta[m]
            obs = theta[m]
            if d >= obs - tol[m]:
                counts[m, 0] += 1
            if d <= obs + tol[m]:
                counts[m, 1] += 1
            if abs(d) >= abs(obs) - tol[m]:
                counts[m, 2] += 1
            s1[m] += d
            s2[m] += d * d
    for m in range(M):
        mu = s1[m] / B
        moments[m, 0] = theta[m] + mu
        moments[m, 1] = math.sqrt(max(s2[m] - s1[m] * mu, 0.0) / (B - 1)) if B > 1 else math.nan


@pjit
def bootstrap_batch(Y, seed, start, B):
    """`_bootstrap_rows` for every collection of Y (K, M, c); collection k is global
    collection ``start + k``. Returns counts (K, M, 3) and moments (K, M, 2)."""
    K, M, _ = Y.shape
    counts = np.empty((K, M, 3), np.int64)
    moments = np.empty((K, M, 2))
    for k in prange(K):
        _bootstrap_rows(Y[k], seed, start + k, B, counts[k], moments[k])
    return counts, moments


@njit
def flip_signs(state, c, sign):
    """Fill ``sign`` with c fair +-1 values, 64 per random draw (lowest bit first)."""
    bits = np.uint64(0)
    left = 0
    for j in range(c):
        if left == 0:
            state, bits = next_u64(state)
            left = 64
        sign[j] = 1.0 if (bits & _ONE) == _ONE else -1.0
        bits = bits >> _ONE
        left -= 1
    return state


@njit
def _permutation_rows(H, seed, k, B, exact, counts):
    """Sign-flip test of each row of ``H`` (M, c; the half-differences): replicate statistic
    sum(s_i h_i) against obs = sum(h_i); counts[m] = #{>= obs - g}, #{<= obs + g}.
    ``exact``: all 2^c patterns (pattern code b: bit i set -> +1), else B random ones."""
    M, c = H.shape
    sign = np.empty(c)
    obs = np.empty(M)
    tol = np.empty(M)
    for m in range(M):
        t = 0.0
        a = 0.0
        for i in range(c):
            t += H[m, i]
            a += abs(H[m, i])
        obs[m] = t
        tol[m] = 1e-12 * a
        counts[m, 0] = 0
        counts[m, 1] = 0
    n = (1 << c) if exact else B
    for b in range(n):
        if exact:
            for i in range(c):
                sign[i] = 1.0 if (b >> i) & 1 else -1.0
        else:
            flip_signs(replicate_state(seed, k, 1, b), c, sign)
        for m in range(M):
            t = 0.0
            for i in range(c):
                t += sign[i] * H[m, i]
            if t >= obs[m] - tol[m]:
                counts[m, 0] += 1
            if t <= obs[m] + tol[m]:
                counts[m, 1] += 1


@pjit
def permutation_batch(H, seed, start, B, exact):
    """`_permutation_rows` for every collection of H (K, M, c). Returns counts (K, M, 2)."""
    K, M, _ = H.shape
    counts = np.empty((K, M, 2), np.int64)
    for k in prange(K):
        _permutation_rows(H[k], seed, start + k, B, exact, counts[k])
    return counts
