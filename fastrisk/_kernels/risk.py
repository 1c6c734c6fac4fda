"""Risk kernels: URisk/TRisk with parametric and jackknife standard errors, and per-topic risk,
for every system against one baseline at many alpha in one parallel pass (Wang, Bennett &
Collins-Thompson 2012; Dinçer, Macdonald & Ounis, SIGIR 2014)."""

from __future__ import annotations

import math

import numpy as np

from fastrisk._kernels._jit import helper, njit, pjit, prange, serial
from fastrisk._kernels.numerics import floored_t, t_lower_tails


@njit
def smooth_value(x):
    """The smooth cubic value function of Benham, Moffat & Culpepper (2019)."""
    return ((1.38426 * x - 0.51659) * x + 0.11578) * x


# The value function the value kernels (here, in zrisk and in tables) call: a module global, so
# that the smooth kernels load from numba's disk cache; `fastrisk._kernels._jit.with_value`
# binds a user's function instead.
_value = smooth_value


@helper
def risk_score(d, w):
    """The risk-reward score of a difference ``d`` at loss weight ``w`` = 1 + alpha:
    x = d + alpha min(d, 0), i.e. w d for a loss and d otherwise (Wang, Bennett &
    Collins-Thompson 2012). A select, not a branch (d * 1.0 is d), so loops over it vectorise.
    The one place the formula is written."""
    return d * (w if d < 0.0 else 1.0)


@helper
def risk_sums(r, b):
    """The sums every alpha's URisk, SE_x and SE_J come from, for one system ``r`` against ``b``.

    With d_i = r_i - b_i and n_i = min(d_i, 0), x_i = d_i + alpha n_i, so x_i - mean = e_i +
    alpha f_i for the centred e_i = d_i - mean(d), f_i = n_i - mean(n): three centred sums (of
    e^2, e f, f^2) give every alpha's sum of squares exactly, and the leave-one-out means
    theta_(i) = (c mean - x_i)/(c-1) deviate from the mean by -(e_i + alpha f_i)/(c-1), so
    var_J follows from the same sums (plus the rounding residue of sum(e), sum(f)). Two passes,
    branch-free (max/min); returns (gains, losses, s_ee, s_ef, s_ff, s_e, s_f). The one scalar
    core of the single-collection (`_linear_row`) and batched
    (`fastrisk._kernels.batch.risk_pair`) paths.
    """
    c = r.shape[0]
    gains = 0.0
    losses = 0.0
    for i in range(c):
        d = r[i] - b[i]
        gains += max(d, 0.0)
        losses += min(d, 0.0)
    mean_d = (gains + losses) / c
    mean_n = losses / c
    s_ee = 0.0
    s_ef = 0.0
    s_ff = 0.0
    s_e = 0.0
    s_f = 0.0
    for i in range(c):
        d = r[i] - b[i]
        e = d - mean_d
        f = min(d, 0.0) - mean_n
        s_ee += e * e
        s_ef += e * f
        s_ff += f * f
        s_e += e
        s_f += f
    return gains, losses, s_ee, s_ef, s_ff, s_e, s_f


#: Systems whose `risk_sums_rows` a kernel computes at once (a topic-major block in L1).
ROWS = 64


@helper
def risk_sums_rows(R, B, k0, k1, out):
    """`risk_sums` of the systems ``k0 .. k1 - 1`` (rows of ``R``, against ``B[0]`` or their own
    row of ``B``) into ``out[0:7, 0:k1 - k0]``: the same operations in the same order for each
    system, so the same numbers bit for bit, but with the systems innermost (the differences
    copied topic-major first), so that the loops run over contiguous systems and vectorise
    without reassociating any sum; one system at a time, the accumulation chains leave the
    floating-point units mostly idle."""
    c = R.shape[1]
    n = k1 - k0
    D = np.empty((c, n))
    for k in range(n):
        b = B[k0 + k] if B.shape[0] > 1 else B[0]
        for i in range(c):
            D[i, k] = R[k0 + k, i] - b[i]
    gains = np.zeros(n)  # local, contiguous accumulators (``out`` may be a strided view)
    losses = np.zeros(n)
    s_ee = np.zeros(n)
    s_ef = np.zeros(n)
    s_ff = np.zeros(n)
    s_e = np.zeros(n)
    s_f = np.zeros(n)
    # few arrays per loop (LLVM vectorises a loop only if it can check at run time that the
    # arrays it writes do not overlap the others, and gives up beyond a few pairs), no row views
    # (each costs a reference-count update)
    for i in range(c):
        for k in range(n):
            gains[k] += max(D[i, k], 0.0)
            losses[k] += min(D[i, k], 0.0)
    mean_d = np.empty(n)
    mean_n = np.empty(n)
    for k in range(n):
        mean_d[k] = (gains[k] + losses[k]) / c
        mean_n[k] = losses[k] / c
    e = np.empty(n)
    f = np.empty(n)
    for i in range(c):
        for k in range(n):
            e[k] = D[i, k] - mean_d[k]
            f[k] = min(D[i, k], 0.0) - mean_n[k]
        for k in range(n):
            s_ee[k] += e[k] * e[k]
            s_e[k] += e[k]
        for k in range(n):
            s_ff[k] += f[k] * f[k]
            s_f[k] += f[k]
        for k in range(n):
            s_ef[k] += e[k] * f[k]
    for k in range(n):
        out[0, k] = gains[k]
        out[1, k] = losses[k]
        out[2, k] = s_ee[k]
        out[3, k] = s_ef[k]
        out[4, k] = s_ff[k]
        out[5, k] = s_e[k]
        out[6, k] = s_f[k]


@helper
def risk_at(alpha, c, gains, losses, s_ee, s_ef, s_ff, s_e, s_f):
    """(URisk, SE_x, SE_J) at ``alpha`` from the sums of `risk_sums`."""
    inv = 1.0 / (c - 1)
    urisk = (gains + (1.0 + alpha) * losses) / c
    ss = max(s_ee + 2.0 * alpha * s_ef + alpha * alpha * s_ff, 0.0)
    shift = -(s_e + alpha * s_f) * inv / c  # mean of theta_(i) - mean: 0 up to rounding
    return urisk, math.sqrt(ss * inv / c), math.sqrt(max((c - 1) / c * (ss * inv * inv - c * shift * shift), 0.0))


@helper
def value_moments(x, zero):
    """(mean, SE_x, SE_J) of per-topic values ``x`` (a value function's x_i = v(d_i)): `risk_sums`
    of x against ``zero`` (a zero vector: x_i - 0 = x_i exactly), then `risk_at` at alpha 0. The
    moments of every path come from these two kernels; SE_J is the jackknife of the mean
    (Dinçer, Macdonald & Ounis 2014), checked against explicit leave-one-out references in the
    tests."""
    gains, losses, s_ee, s_ef, s_ff, s_e, s_f = risk_sums(x, zero)
    return risk_at(0.0, x.shape[0], gains, losses, s_ee, s_ef, s_ff, s_e, s_f)


@helper
def risk_at_rows(alpha, c, sums, urisk, se, sej):
    """`risk_at` of every system at once, from the sums (7, S) of `risk_sums_rows`: the same
    expressions, in loops over the systems (vectorised)."""
    S = sums.shape[1]
    inv = 1.0 / (c - 1)
    w = 1.0 + alpha
    for k in range(S):
        urisk[k] = (sums[0, k] + w * sums[1, k]) / c
    for k in range(S):
        ss = max(sums[2, k] + 2.0 * alpha * sums[3, k] + alpha * alpha * sums[4, k], 0.0)
        se[k] = math.sqrt(ss * inv / c)
        shift = -(sums[5, k] + alpha * sums[6, k]) * inv / c
        sej[k] = math.sqrt(max((c - 1) / c * (ss * inv * inv - c * shift * shift), 0.0))


@helper
def all_risk_sums(R, B, sums):
    """`risk_sums` of every row of ``R`` into ``sums`` (7, S), blocks of `ROWS` systems (one
    thread; the parallel drivers write this loop with ``prange``)."""
    S = R.shape[0]
    for k0 in range(0, S, ROWS):
        risk_sums_rows(R, B, k0, min(k0 + ROWS, S), sums[:, k0:])


@helper
def _linear_row(r, b, alphas, urisk, se, sej):
    """URisk, SE_x and SE_J of one system at every alpha (`risk_sums`, then
    `risk_at` per alpha); returns (FReward, FRisk). The pass over topics does not
    depend on the number of alphas."""
    c = r.shape[0]
    gains, losses, s_ee, s_ef, s_ff, s_e, s_f = risk_sums(r, b)
    for a in range(alphas.shape[0]):
        urisk[a], se[a], sej[a] = risk_at(alphas[a], c, gains, losses, s_ee, s_ef, s_ff, s_e, s_f)
    return gains / c, -losses / c


@pjit
def linear_risk(R, B, alphas):
    """All systems (rows of R) against baseline rows B ((1, c) shared or (S, c) per system).

    Returns freward (S,), frisk (S,), urisk (S, A), se (S, A), se_jack (S, A).
    """
    S, c = R.shape
    A = alphas.shape[0]
    freward = np.empty(S)
    frisk = np.empty(S)
    urisk = np.empty((S, A))
    se = np.empty((S, A))
    sej = np.empty((S, A))
    for k in prange(S):
        b = B[k] if B.shape[0] > 1 else B[0]
        freward[k], frisk[k] = _linear_row(R[k], b, alphas, urisk[k], se[k], sej[k])
    return freward, frisk, urisk, se, sej


@pjit
def linear_risk_table(R, B, alphas, rtol, lo, hi, crit, sign):
    """`linear_risk` and everything `fastrisk.risk` reports from it, in one call.

    Returns ``ok``; ``stats`` ``[4, alpha, system]``: URisk and TRisk (times ``sign``), SE_x
    and SE_J under the relative variance floor (`floored_t`, ``rtol``) in the order
    URisk, SE_x, SE_J, TRisk; ``flags`` ``[2, alpha, system]``: ``at_risk`` and ``rewarding``
    (classic TRisk beyond ∓ ``crit``); ``per_system`` ``[3, system]``: FReward, FRisk, UGain;
    ``zero`` ``[system]``: an SE was floored to 0 at some alpha, and their count; ``se_rmse`` ``[alpha]``: the
    RMSE of SE_x - SE_J over systems. ``ok`` is False when a URisk or SE is not finite or a
    non-zero magnitude lies outside [lo, hi] (the caller then rescales; the rest is unspecified).
    Few, packed outputs: each returned array costs a box on the way to Python.
    """
    S, c = R.shape
    A = alphas.shape[0]
    sums = np.empty((7, S))
    for t in prange((S + ROWS - 1) // ROWS):  # `all_risk_sums`, in parallel
        risk_sums_rows(R, B, t * ROWS, min(t * ROWS + ROWS, S), sums[:, t * ROWS:])
    per_system = np.empty((3, S))
    for k in range(S):
        per_system[0, k] = sums[0, k] / c
        per_system[1, k] = -sums[1, k] / c
        per_system[2, k] = per_system[0, k] - per_system[1, k]
    stats = np.empty((4, A, S))
    flags = np.empty((2, A, S), dtype=np.bool_)
    zero = np.zeros(S, dtype=np.bool_)
    se_rmse = np.zeros(A)
    sej = np.empty(S)
    ok = True
    for a in range(A):
        u_a = stats[0, a]
        s_a = stats[1, a]
        risk_at_rows(alphas[a], c, sums, u_a, s_a, sej)
        for k in range(S):
            m = u_a[k]
            s = s_a[k]
            am = abs(m)
            As = abs(s)
            if not (am <= hi and As <= hi) or (am < lo and am != 0.0) or (As < lo and As != 0.0):
                ok = False
            z, t = floored_t(m, s, float(c), rtol)
            sj = 0.0 if z else sej[k]
            s = 0.0 if z else s
            zero[k] |= z
            stats[0, a, k] = sign * m
            stats[1, a, k] = s
            stats[2, a, k] = sj
            stats[3, a, k] = sign * t
            flags[0, a, k] = t < -crit
            flags[1, a, k] = t > crit
            se_rmse[a] += (s - sj) * (s - sj)
    for a in range(A):
        se_rmse[a] = np.sqrt(se_rmse[a] / S)
    return ok, stats, flags, per_system, zero, zero.sum(), se_rmse


linear_risk_table_serial = serial(linear_risk_table)


@helper
def _differences(r, b, d):
    """d = r - b into ``d``; returns (sum of gains, sum of losses as a positive number)."""
    reward = 0.0
    risk = 0.0
    for i in range(r.shape[0]):
        d[i] = r[i] - b[i]
        if d[i] > 0.0:
            reward += d[i]
        else:
            risk -= d[i]
    return reward, risk


@pjit
def value_risk(R, B):
    """As `linear_risk` with x_i = _value(d_i) for the jitted scalar ``_value`` (A = 1; see
    `fastrisk._kernels._jit.with_value`)."""
    S, c = R.shape
    freward = np.empty(S)
    frisk = np.empty(S)
    urisk = np.empty((S, 1))
    se = np.empty((S, 1))
    sej = np.empty((S, 1))
    for k in prange(S):
        b = B[k] if B.shape[0] > 1 else B[0]
        d = np.empty(c)
        reward, risk = _differences(R[k], b, d)
        freward[k] = reward / c
        frisk[k] = risk / c
        for i in range(c):
            d[i] = _value(d[i])
        urisk[k, 0], se[k, 0], sej[k, 0] = value_moments(d, np.zeros(c))
    return freward, frisk, urisk, se, sej


value_risk_serial = serial(value_risk)


@pjit
def value_scores(R, B):
    """Per-topic x = _value(r - b) for every system: (S, c)."""
    S, c = R.shape
    X = np.empty((S, c))
    for k in prange(S):
        b = B[k] if B.shape[0] > 1 else B[0]
        for i in range(c):
            X[k, i] = _value(R[k, i] - b[i])
    return X


@pjit
def linear_scores(R, B, alphas):
    """Per-topic x = d + alpha * min(d, 0) for every alpha and system: (A, S, c)."""
    S, c = R.shape
    A = alphas.shape[0]
    X = np.empty((A, S, c))
    for k in prange(S):
        b = B[k] if B.shape[0] > 1 else B[0]
        for i in range(c):
            d = R[k, i] - b[i]
            for a in range(A):
                X[a, k, i] = risk_score(d, 1.0 + alphas[a])
    return X


@helper
def _topic_row(x, loo, tr, tj, influence, pseudo):
    """Exploratory risk of one row of per-topic scores ``x`` into the given rows; returns
    (jackknife bias, mean, SE_x) for theta = mean(x). ``loo``: scratch of length c."""
    c = x.shape[0]
    for i in range(c):
        loo[i] = 0.0
    theta, se, sej = value_moments(x, loo)
    sd = se * math.sqrt(c)
    jsd = sej * math.sqrt(c)
    loo_total = 0.0
    for i in range(c):
        loo[i] = (c * theta - x[i]) / (c - 1)
        loo_total += loo[i]
    for i in range(c):
        influence[i] = (c - 1) * (theta - loo[i])
        pseudo[i] = c * theta - (c - 1) * loo[i]
        tr[i] = x[i] / sd if sd > 0.0 else (math.nan if x[i] == 0.0 else math.copysign(math.inf, x[i]))
        inf_i = influence[i]
        tj[i] = inf_i / jsd if jsd > 0.0 else (math.nan if inf_i == 0.0 else math.copysign(math.inf, inf_i))
    return (c - 1) * (loo_total / c - theta), theta, se


linear_scores_serial = serial(linear_scores)
value_scores_serial = serial(value_scores)


@pjit
def topic_risk(X):
    """Exploratory per-topic risk of per-topic scores X (A, S, c).

    Returns TR_i = x_i / s_x, the leave-one-out influences (c-1)(theta - theta_(i)), the
    pseudo-values c*theta - (c-1)*theta_(i), TJ_i = influence / (sqrt(c) * SE_J) and the
    jackknife bias (c-1)(theta_(.) - theta), all for theta = mean(x).
    """
    A, S, c = X.shape
    tr = np.empty((A, S, c))
    tj = np.empty((A, S, c))
    influence = np.empty((A, S, c))
    pseudo = np.empty((A, S, c))
    bias = np.empty((A, S))
    for k in prange(S):
        loo = np.empty(c)
        for a in range(A):
            bias[a, k] = _topic_row(X[a, k], loo, tr[a, k], tj[a, k], influence[a, k], pseudo[a, k])[0]
    return tr, tj, influence, pseudo, bias


#: Rows of the ``stats`` of `linear_topic_risk_table`, read by `topic_influence`.
TOPIC_BIAS, TOPIC_ZERO, TOPIC_THETA, TOPIC_RJSD, TOPIC_JSD_POSITIVE = range(5)


@pjit
def linear_topic_risk_table(R, B, alphas, sign, crit, rtol, lo, hi, jackknife):
    """What `fastrisk.topic_risk` reports for the linear value function, in one call.

    Returns ``ok``; ``x`` ``[alpha, system, topic]`` and ``arrays`` ``[1 or 4, alpha, system,
    topic]``: TR and, with ``jackknife``, TJ, the influences and the pseudo-values, each times
    ``sign`` (TJ_i = influence_i / SD_J, ±inf or NaN where SD_J = 0 or SE_x is floored, by
    `_topic_row`'s rules); ``flags``
    ``[2, alpha, system, topic]``: loss and win (classic TR beyond ∓ ``crit``); ``stats``
    ``[5, alpha, system]``, rows `TOPIC_BIAS` ... : the jackknife bias times ``sign``,
    ``zero`` as 1.0 / 0.0 (SE_x below the relative floor of `floored_t`: TR is then x/0 by the
    ±inf/NaN rule and TJ NaN), the classic theta (URisk), 1 / SD_J (0 where SD_J is not > 0)
    and SD_J > 0 as 1.0 / 0.0; and the count of ``zero``. ``ok`` is False when a score x is
    not finite or a non-zero |x| lies outside [lo, hi] (the caller rescales; the rest is then
    unspecified). The formulas are `topic_risk`'s with the moments of `risk_sums` /
    `risk_at_rows` (the same URisk, SE_x and SE_J as `linear_risk_table`), every alpha's in
    loops over systems, the range check of every alpha's x once a system (from |d| and the
    extreme loss weights), then one pass per alpha and system writing x, TR and the flags, and
    one the jackknife arrays (x apart from the rest: an output in the same array as its input
    did not vectorise, nor one loop writing all seven). Few, packed outputs: each returned
    array costs a box on the way to Python.
    """
    S, c = R.shape
    A = alphas.shape[0]
    x = np.empty((A, S, c))
    arrays = np.empty((4 if jackknife else 1, A, S, c))
    flags = np.empty((2, A, S, c), dtype=np.bool_)
    stats = np.empty((5, A, S))
    inv = 1.0 / (c - 1)
    root_c = math.sqrt(c)
    sums = np.empty((7, S))
    for t in prange((S + ROWS - 1) // ROWS):  # `all_risk_sums`, in parallel
        risk_sums_rows(R, B, t * ROWS, min(t * ROWS + ROWS, S), sums[:, t * ROWS:])
    rsd = np.empty((A, S))  # 1 / SD_x, 0 where floored: x * (1/sd) is x / sd within an ulp
    se = np.empty(S)
    sej = np.empty(S)
    n_zero = 0
    for a in range(A):  # loops over systems: vectorised (divisions by numpy's rule: no zero check)
        theta = stats[TOPIC_THETA, a]
        risk_at_rows(alphas[a], c, sums, theta, se, sej)
        for k in range(S):
            stats[TOPIC_BIAS, a, k] = sign * (c - 1) * (-(sums[5, k] + alphas[a] * sums[6, k]) * inv / c)  # risk_at's shift
        for k in range(S):
            z = floored_t(theta[k], se[k], float(c), rtol)[0]
            stats[TOPIC_ZERO, a, k] = 1.0 if z else 0.0
            n_zero += z
        for k in range(S):
            rsd[a, k] = np.divide(1.0, se[k] * root_c) if stats[TOPIC_ZERO, a, k] == 0.0 else 0.0
        for k in range(S):
            jsd = sej[k] * root_c
            stats[TOPIC_RJSD, a, k] = np.divide(1.0, jsd) if jsd > 0.0 else 0.0
            stats[TOPIC_JSD_POSITIVE, a, k] = 1.0 if jsd > 0.0 else 0.0
    bad = np.zeros(S, dtype=np.bool_)
    c1 = c - 1.0
    w_lo = 1.0 + alphas.min()  # |x| of a loss is |d| w: the extremes of w bound every alpha's
    w_hi = 1.0 + alphas.max()
    for k in prange(S):
        b = B[k] if B.shape[0] > 1 else B[0]
        out_of_range = 0  # an integer count: a sum LLVM may vectorise (a boolean OR it did not)
        for i in range(c):  # every alpha's |x| in [lo, hi] (or 0), exactly: rounded products are monotone
            d = R[k, i] - b[i]
            m = abs(d)
            small = m * w_lo if d < 0.0 else m
            large = m * w_hi if d < 0.0 else m
            out_of_range += 1 if (not large <= hi) | ((small < lo) & (m != 0.0)) else 0  # NaN is out of range
        if out_of_range:
            bad[k] = True
        for a in range(A):  # no row views: each would cost two reference-count updates
            w = 1.0 + alphas[a]
            r = rsd[a, k]
            for i in range(c):  # simple loops, outputs apart from their input x (vectorisable)
                v = risk_score(R[k, i] - b[i], w)
                x[a, k, i] = v
                t = v * r
                arrays[0, a, k, i] = sign * t
                flags[0, a, k, i] = t < -crit
                flags[1, a, k, i] = t > crit
            if jackknife:  # theta_(i) = (c theta - x_i) / (c - 1), eq. 23 (`_topic_row`)
                theta = stats[TOPIC_THETA, a, k]
                ct = c * theta
                rjsd = stats[TOPIC_RJSD, a, k]
                for i in range(c):
                    loo = (ct - x[a, k, i]) * inv
                    influence = sign * (c1 * (theta - loo))
                    arrays[2, a, k, i] = influence
                    arrays[3, a, k, i] = sign * (ct - c1 * loo)
                    arrays[1, a, k, i] = influence * rjsd  # sign * (inf_i / jsd); rare cases below
            zero = stats[TOPIC_ZERO, a, k] != 0.0
            if zero:  # constant scores up to rounding: TR = x / 0
                for i in range(c):
                    t = math.nan if x[a, k, i] == 0.0 else math.copysign(math.inf, x[a, k, i])
                    arrays[0, a, k, i] = sign * t
                    flags[0, a, k, i] = t < -crit
                    flags[1, a, k, i] = t > crit
            if jackknife and (zero or stats[TOPIC_JSD_POSITIVE, a, k] == 0.0):
                for i in range(c):  # TJ: the influences are 0 / 0 when zero, else ±inf (NaN for 0 / 0)
                    inf_i = sign * arrays[2, a, k, i]
                    t = math.nan if zero or inf_i == 0.0 else math.copysign(math.inf, inf_i)
                    arrays[1, a, k, i] = sign * t
            if sign != 1.0:  # times 1.0 is exact: nothing to do in the classic convention
                for i in range(c):
                    x[a, k, i] *= sign
    return not bad.any(), x, arrays, flags, stats, n_zero


linear_topic_risk_table_serial = serial(linear_topic_risk_table)


@njit
def linear_t_test(R, B, alphas, rtol, lo, hi, self_row, alternative):
    """The paired t test of every system against baseline rows B at every alpha, in one serial
    call (the small-call path of ``fastrisk.t_test``): the same URisk, SE_x and floored t as
    `linear_risk_table` (`risk_sums`, `risk_at`, `floored_t`), t NaN in row ``self_row`` (the
    baseline against itself; -1 for none), and the p-values of `t_lower_tails` with df = c - 1
    (``alternative``: 0 two-sided, 1 less, 2 greater).

    Returns ``ok`` (as `linear_risk_table`: False when the scores need rescaling), ``stats``
    ``[3, alpha, system]`` (URisk, t, p), ``zero`` ``[system]`` and its count outside
    ``self_row``. Every alpha's moments in loops over systems (`risk_at_rows`: `risk_at`'s
    expressions, vectorised)."""
    S, c = R.shape
    A = alphas.shape[0]
    stats = np.empty((3, A, S))
    zero = np.zeros(S, dtype=np.bool_)
    ok = True
    sums = np.empty((7, S))
    all_risk_sums(R, B, sums)
    sej = np.empty(S)
    for a in range(A):
        mean = stats[0, a]
        se = stats[2, a]  # scratch until the p-values
        risk_at_rows(alphas[a], c, sums, mean, se, sej)
        for k in range(S):
            m = mean[k]
            s = se[k]
            am = abs(m)
            As = abs(s)
            if not (am <= hi and As <= hi) or (am < lo and am != 0.0) or (As < lo and As != 0.0):
                ok = False
            z, t = floored_t(m, s, float(c), rtol)
            zero[k] |= z
            stats[1, a, k] = math.nan if k == self_row else t
    n_zero = 0
    for k in range(S):
        n_zero += zero[k] and k != self_row
    t_flat = stats[1].reshape(-1)
    p_flat = stats[2].reshape(-1)
    t_lower_tails(t_flat, c - 1, p_flat)
    if alternative != 0:
        for i in range(p_flat.shape[0]):
            t = t_flat[i]
            small = t < 0.0 if alternative == 1 else t > 0.0  # the p-value is the smaller tail
            p_flat[i] = p_flat[i] if small or t != t else 1.0 - p_flat[i]
    else:
        for i in range(p_flat.shape[0]):
            p_flat[i] *= 2.0
    return ok, stats, zero, n_zero
