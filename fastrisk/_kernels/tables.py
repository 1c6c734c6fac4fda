"""All-baseline table kernels (Dinçer, Ounis & Macdonald, ECIR 2014): URisk/TRisk of every system against every other.

With d = r - b, n = min(d, 0) and the risk-reward score x = d + alpha * n at alpha,

    sum x   = sum d   + alpha * sum n
    sum x^2 = sum d^2 + (2 alpha + alpha^2) * sum n^2      (since d * n = n^2)

and n = (d - |d|) / 2, n^2 = (d^2 - d|d|) / 2, so per unordered pair the pass over topics
needs three sums, of |d|, d|d| and d^2, once for all alphas; sum d = sum r - sum b comes from
the row sums. Only the upper triangle a < b is computed: the swapped pair has d' = -d exactly,
so its sums are the same numbers (|d|, d^2) or exactly negated (d|d|), and two identical systems
get bit-identical rows (whichever side of the diagonal their sums come from).

The pass is a GEMM-like S x S x c workload, blocked like one: tiles of ``block`` x ``block``
system pairs, topics in chunks of ``topic_block``. Each tile copies its chunk of both systems'
rows into small topic-major buffers (the transposition happens tile by tile, in cache: no
transposed copy of the matrix), and the innermost loop runs over contiguous baselines, two
systems at a time (each baseline value loaded once for both), and vectorises without fastmath.
Per pair and topic it costs five vector operations (d = x - r, |d| as a bit mask, one addition
and two fused multiply-adds `fma`): the kernel is bound by the processor's floating-point
throughput, not by memory (see ``benchmarks/bench_tables.py``). No reduction is reassociated:
every pair's sums are accumulated over topics in an order fixed by the topic index alone.

The corrected inferences of the table (Edgeworth, Johnson, Hall: `table_corrected_pvalues`)
also need Σd³ and Σ|d|³ (and Σd⁴, Σd³|d| for Edgeworth) per pair, since min(d, 0)³ =
(d³ − |d|³)/2 and min(d, 0)⁴ = (d⁴ − d³|d|)/2. They come from the same kernel body
(`_rows`, `_step`) at a compile-time literal ``order`` (2: the t table's three sums alone,
bit for bit as before; 3: + the third-order sums; 4: + the fourth-order ones), in the same
one pass: q = d·d and three fused multiply-adds a pair-topic at order 3, six at order 4, over
the same loaded data. The pass is bound by floating-point throughput, so its cost grows with
the operations: 8 and 11 a pair-topic against the t table's 5 (measured about 1.6x and 2x
the t pass; see ``benchmarks/bench_tables.py``, group ``table-corrected-*``). The higher
orders take one system at a time: two systems' fourteen accumulators no longer vectorise.
"""

from __future__ import annotations

import math

import numpy as np

from fastrisk._kernels._jit import helper, pjit, prange, serial, stopped
from fastrisk._kernels.agreement import ranking_from_scores
from fastrisk._kernels.numerics import floored_t, fma, outside
from fastrisk._kernels.risk import _value, risk_at, risk_sums, value_moments  # _value: see with_value
from fastrisk._kernels.riskinference import edgeworth_two_sided_from_moments, hall_from_moments, johnson_from_moments


@helper
def _chunk(V, s0, s1, i0, i1, out):
    """``out[i - i0, s - s0] = V[s, i]``: rows s0..s1 of ``V`` over topics i0..i1, topic-major."""
    for s in range(s0, s1):
        for i in range(i0, i1):
            out[i - i0, s - s0] = V[s, i]


@helper
def _quad(d0, d1, d2, d3, s_abs, s_sgn, s_sq):
    """The sums of one pair over four topics (d = x - r) added to its accumulators:
    s_abs + ((|d0| + |d1|) + (|d2| + |d3|)), and fma chains for d|d| and d^2 (see `_tile_sums`):
    five vector operations a pair-topic once the loop over baselines is vectorised."""
    e0 = abs(d0)
    e1 = abs(d1)
    e2 = abs(d2)
    e3 = abs(d3)
    return (s_abs + ((e0 + e1) + (e2 + e3)),
            fma(d3, e3, fma(d2, e2, fma(d1, e1, fma(d0, e0, s_sgn)))),
            fma(d3, d3, fma(d2, d2, fma(d1, d1, fma(d0, d0, s_sq)))))


@helper
def _one(x0, r0, s_abs, s_sgn, s_sq):
    """`_quad` for one topic (the chunk's last ones)."""
    d0 = x0 - r0
    e0 = abs(d0)
    return s_abs + e0, fma(d0, e0, s_sgn), fma(d0, d0, s_sq)


@helper
def _higher(d0, d1, d2, d3, fourth, s_cu, s_acu, s_qu, s_qs):
    """The higher sums of one pair over four topics added to its accumulators: with q = d·d,
    fused multiply-add chains fma(q3, d3, fma(q2, d2, fma(q1, d1, fma(q0, d0, acc)))) for Σd³,
    and so with |d| for Σ|d|³, with q for Σd⁴ and with d|d| for Σd³|d| (only with ``fourth``,
    a literal): three operations a pair-topic, six with ``fourth`` (|d| is `_quad`'s own,
    computed once after inlining)."""
    e0 = abs(d0)
    e1 = abs(d1)
    e2 = abs(d2)
    e3 = abs(d3)
    q0 = d0 * d0
    q1 = d1 * d1
    q2 = d2 * d2
    q3 = d3 * d3
    s_cu = fma(q3, d3, fma(q2, d2, fma(q1, d1, fma(q0, d0, s_cu))))
    s_acu = fma(q3, e3, fma(q2, e2, fma(q1, e1, fma(q0, e0, s_acu))))
    if fourth:
        s_qu = fma(q3, q3, fma(q2, q2, fma(q1, q1, fma(q0, q0, s_qu))))
        s_qs = fma(q3, d3 * e3, fma(q2, d2 * e2, fma(q1, d1 * e1, fma(q0, d0 * e0, s_qs))))
    return s_cu, s_acu, s_qu, s_qs


@helper
def _step(x0, x1, x2, x3, r0, r1, r2, r3, j, order, A0, A1, A2, A3, A4, A5, A6):
    """One pair's accumulators ``A*[j]`` over four topics: the table's three sums (`_quad`), then
    with ``order`` 3 the third-order ones, with ``order`` 4 the third- and fourth-order ones
    (`_higher`). ``order`` is a compile-time literal (`pair_sums`, `pair_sums_higher`): the t
    table's loop holds `_quad` alone."""
    d0 = x0 - r0
    d1 = x1 - r1
    d2 = x2 - r2
    d3 = x3 - r3
    A0[j], A1[j], A2[j] = _quad(d0, d1, d2, d3, A0[j], A1[j], A2[j])
    if order == 3:
        A3[j], A4[j], _, _ = _higher(d0, d1, d2, d3, False, A3[j], A4[j], 0.0, 0.0)
    elif order == 4:
        A3[j], A4[j], A5[j], A6[j] = _higher(d0, d1, d2, d3, True, A3[j], A4[j], A5[j], A6[j])


@helper
def _step_one(x0, r0, j, order, A0, A1, A2, A3, A4, A5, A6):
    """`_step` for one topic (the chunk's last ones)."""
    A0[j], A1[j], A2[j] = _one(x0, r0, A0[j], A1[j], A2[j])
    if order >= 3:
        d0 = x0 - r0
        q0 = d0 * d0
        A3[j] = fma(q0, d0, A3[j])
        A4[j] = fma(q0, abs(d0), A4[j])
        if order >= 4:
            A5[j] = fma(q0, q0, A5[j])
            A6[j] = fma(q0, d0 * abs(d0), A6[j])


@helper
def _rows(X, R, q, two, lo, hi, m_topics, order, A0, A1, A2, A3, A4, A5, A6):
    """Add to the accumulator rows ``A*[q, lo:hi]`` (and ``A*[q + 1, lo:hi]`` if ``two``) the
    sums over the chunk's topics of system ``X[:, q]`` (and ``X[:, q + 1]``) against the
    baselines ``R[:, lo:hi]`` (`_step`: |d|, d|d|, d², and by ``order`` d³, |d|³, d⁴, d³|d|).
    Two systems at once load each baseline value once for both, with the same operations in
    the same order: the same numbers."""
    m = hi - lo
    p = q + 1 if two else q
    aa, ag, a2, a3, a4, a5, a6 = A0[q, lo:hi], A1[q, lo:hi], A2[q, lo:hi], A3[q, lo:hi], A4[q, lo:hi], A5[q, lo:hi], A6[q, lo:hi]
    ba, bg, b2, b3, b4, b5, b6 = A0[p, lo:hi], A1[p, lo:hi], A2[p, lo:hi], A3[p, lo:hi], A4[p, lo:hi], A5[p, lo:hi], A6[p, lo:hi]
    i = 0
    while i + 4 <= m_topics:
        x0, x1, x2, x3 = X[i, q], X[i + 1, q], X[i + 2, q], X[i + 3, q]
        y0, y1, y2, y3 = X[i, p], X[i + 1, p], X[i + 2, p], X[i + 3, p]
        r0 = R[i, lo:hi]
        r1 = R[i + 1, lo:hi]
        r2 = R[i + 2, lo:hi]
        r3 = R[i + 3, lo:hi]
        if two:
            for j in range(m):
                _step(x0, x1, x2, x3, r0[j], r1[j], r2[j], r3[j], j, order, aa, ag, a2, a3, a4, a5, a6)
                _step(y0, y1, y2, y3, r0[j], r1[j], r2[j], r3[j], j, order, ba, bg, b2, b3, b4, b5, b6)
        else:
            for j in range(m):
                _step(x0, x1, x2, x3, r0[j], r1[j], r2[j], r3[j], j, order, aa, ag, a2, a3, a4, a5, a6)
        i += 4
    while i < m_topics:
        x0 = X[i, q]
        y0 = X[i, p]
        r0 = R[i, lo:hi]
        for j in range(m):
            _step_one(x0, r0[j], j, order, aa, ag, a2, a3, a4, a5, a6)
            if two:
                _step_one(y0, r0[j], j, order, ba, bg, b2, b3, b4, b5, b6)
        i += 1


@helper
def _tile_sums(V, a0, a1, b0, b1, topic_block, order, sums, stop):
    """The sums of `_rows` (d = V[a] - V[b]) of every pair (a, b), a in [a0, a1), b in [b0, b1),
    into ``sums[:, a, b]``: one tile; ``order`` (a literal: 2, 3 or 4) says which.

    Topics are taken four at a time: |d| is added to its accumulator as ((t0 + t1) + (t2 + t3)),
    and the products by a chain of fused multiply-adds
    fma(d3, |d3|, fma(d2, |d2|, fma(d1, |d1|, fma(d0, |d0|, acc)))) (and so for d^2). The grouping
    is fixed by the topic index alone (``topic_block`` is a multiple of 4), and the mirror pair
    has d' = -d exactly, so its sums are exactly the same (|d|, d^2, |d|³, d⁴) or negated (d|d|,
    d³, d³|d|) numbers. Systems go two at a time (`_rows`). On a diagonal tile (a0 == b0) only
    the pairs a < b are computed. ``stop[0]`` set (Ctrl-C) ends the tile at the next block of
    topics.
    """
    c = V.shape[1]
    na = a1 - a0
    nb = b1 - b0
    diagonal = a0 == b0
    A0 = np.zeros((na, nb))
    A1 = np.zeros((na, nb))
    A2 = np.zeros((na, nb))
    # the higher sums' accumulators (at order 2 never written: the first one stands in)
    A3 = np.zeros((na, nb)) if order >= 3 else A0
    A4 = np.zeros((na, nb)) if order >= 3 else A0
    A5 = np.zeros((na, nb)) if order >= 4 else A0
    A6 = np.zeros((na, nb)) if order >= 4 else A0
    X = np.empty((topic_block, na))
    R = X if diagonal else np.empty((topic_block, nb))
    for i0 in range(0, c, topic_block):
        if stopped(stop):
            break
        i1 = min(i0 + topic_block, c)
        _chunk(V, a0, a1, i0, i1, X)
        if not diagonal:
            _chunk(V, b0, b1, i0, i1, R)
        m_topics = i1 - i0
        for q in range(0, na, 2 if order == 2 else 1):
            if order > 2:  # the higher sums a system at a time (two: too many accumulators to vectorise)
                _rows(X, R, q, False, q + 1 if diagonal else 0, nb, m_topics, order, A0, A1, A2, A3, A4, A5, A6)
                continue
            two = q + 1 < na
            if two and diagonal:  # the pair (q, q + 1), then both rows from q + 2 on
                _rows(X, R, q, False, q + 1, q + 2, m_topics, order, A0, A1, A2, A3, A4, A5, A6)
            _rows(X, R, q, two, (q + 2 if two else q + 1) if diagonal else 0, nb, m_topics, order,
                  A0, A1, A2, A3, A4, A5, A6)
    # element loops, not slice assignments: a 2-D slice assignment compiles numba's shape-mismatch
    # message (string formatting), seconds of first-use compile for a check that cannot fail here
    K = sums.shape[0]
    for q in range(na):
        for j in range(nb):
            sums[0, a0 + q, b0 + j] = A0[q, j]
            sums[1, a0 + q, b0 + j] = A1[q, j]
            sums[2, a0 + q, b0 + j] = A2[q, j]
            if K > 3:
                sums[3, a0 + q, b0 + j] = A3[q, j]
                sums[4, a0 + q, b0 + j] = A4[q, j]
            if K > 5:
                sums[5, a0 + q, b0 + j] = A5[q, j]
                sums[6, a0 + q, b0 + j] = A6[q, j]


@helper
def _tiles(S, block):
    """The first system of each side of the tiles on and above the diagonal of an S x S table
    of ``block`` x ``block`` tiles, the cheaper diagonal ones (half a tile's pairs) spread
    evenly through the list, so that the equal shares of a static schedule cost about the same."""
    nblocks = (S + block - 1) // block
    ntiles = nblocks * (nblocks + 1) // 2
    tiles_a = np.empty(ntiles, dtype=np.int64)
    tiles_b = np.empty(ntiles, dtype=np.int64)
    t = 0
    d = 0
    for i in range(nblocks):
        for j in range(i + 1, nblocks):
            while d < nblocks and (d * ntiles) // nblocks <= t:  # diagonal tile d at about d / nblocks of the list
                tiles_a[t] = d
                tiles_b[t] = d
                t += 1
                d += 1
            tiles_a[t] = i
            tiles_b[t] = j
            t += 1
    while d < nblocks:
        tiles_a[t] = d
        tiles_b[t] = d
        t += 1
        d += 1
    return tiles_a * block, tiles_b * block


@helper
def _row_sums(v):
    """The sum and the sum of absolute values of one row, in topic order."""
    acc = 0.0
    acc_abs = 0.0
    for i in range(v.shape[0]):
        acc += v[i]
        acc_abs += abs(v[i])
    return acc, acc_abs


@pjit
def pair_sums(V, block, topic_block, stop):
    """sum |d|, sum d|d|, sum d^2 (S, S) of every pair a < b (the upper triangle; the rest is
    unspecified) of the (S, c) score matrix ``V`` (d = V[a] - V[b]), every row's sum and sum of
    absolute values (S,) (the latter bounds the rounding of sum d, see `table_moments`),
    each over topics in a fixed order: the mirror pair (b, a) has the same sums of |d| and
    d^2 and the negated sum of d|d| (`table_moments` reads it so). The tiles on and above the
    diagonal are computed in parallel (`_tiles`). Once ``stop[0]`` is set (Ctrl-C,
    `fastrisk._kernels._interrupt`) every tile ends at its next block of topics and the partial
    sums are returned, for the caller to discard.
    """
    S = V.shape[0]
    tiles_a, tiles_b = _tiles(S, block)
    sums = np.zeros((3, S, S))
    for t in prange(tiles_a.shape[0]):
        a0, b0 = tiles_a[t], tiles_b[t]
        _tile_sums(V, a0, min(a0 + block, S), b0, min(b0 + block, S), topic_block, 2, sums, stop)
    row = np.empty(S)
    mag = np.empty(S)
    for a in prange(S):
        row[a], mag[a] = _row_sums(V[a])
    return sums[0], sums[1], sums[2], row, mag


@pjit
def pair_sums_higher(V, block, topic_block, fourth, stop):
    """`pair_sums` with, per unordered pair a < b, the sums of d³, |d|³, d⁴ and d³|d| as well, in
    the same one pass over the topics (`_rows` at ``order`` 4, or 3 without ``fourth``):
    ``sums`` (7, S, S) (or (5, S, S)): |d|, d|d|, d² (`pair_sums`' bit for bit), d³, |d|³
    [, d⁴, d³|d|], and the row sums and sums of absolute values of `pair_sums`, for the
    corrected inferences of the table (`table_corrected_pvalues`); the mirror pair negates the
    odd ones (d|d|, d³, d³|d|). The higher sums go through c = (d·d)·d: Σd³ and Σ|d|³ by
    additions (|c| = |d|³), Σd⁴ = Σ c·d and Σd³|d| = Σ c·|d| by fused multiply-adds."""
    S = V.shape[0]
    tiles_a, tiles_b = _tiles(S, block)
    sums = np.zeros((7 if fourth else 5, S, S))
    for t in prange(tiles_a.shape[0]):
        a0, b0 = tiles_a[t], tiles_b[t]
        if fourth:  # literal orders: each `_rows` loop compiled with exactly its sums
            _tile_sums(V, a0, min(a0 + block, S), b0, min(b0 + block, S), topic_block, 4, sums, stop)
        else:
            _tile_sums(V, a0, min(a0 + block, S), b0, min(b0 + block, S), topic_block, 3, sums, stop)
    row = np.empty(S)
    mag = np.empty(S)
    for a in prange(S):
        row[a], mag[a] = _row_sums(V[a])
    return sums, row, mag


@helper
def _corrected_cell(sums, row, a, b, alphas, c, kind, rtol, out):
    """`table_corrected_pvalues` of the cell (·, a, b)."""
    A = alphas.shape[0]
    if a == b:
        for k in range(A):
            out[k, a, b] = np.nan
        return
    lo = np.int64(min(np.int64(a), np.int64(b)))  # a parfor index is unsigned: min(uint, int) is a float
    hi = np.int64(max(np.int64(a), np.int64(b)))
    sg = 1.0 if a < b else -1.0  # the mirror pair: d' = -d
    ab = sums[0, lo, hi]
    dd = sg * sums[1, lo, hi]
    sq = sums[2, lo, hi]
    cu = sg * sums[3, lo, hi]
    acu = sums[4, lo, hi]
    fourth = sums.shape[0] > 5  # else only the third-order sums (Johnson, Hall)
    qu = sums[5, lo, hi] if fourth else 0.0
    qs = sg * sums[6, lo, hi] if fourth else 0.0
    sd = row[a] - row[b]
    n1 = 0.5 * (sd - ab)
    n2 = 0.5 * (sq - dd)
    n3 = 0.5 * (cu - acu)
    n4 = 0.5 * (qu - qs)
    for k in range(A):
        w = 1.0 + alphas[k]
        s1 = sd + (w - 1.0) * n1
        s2 = sq + (w * w - 1.0) * n2
        s3 = cu + (w * w * w - 1.0) * n3
        s4 = qu + (w * w * w * w - 1.0) * n4
        mean = s1 / c
        m2 = (s2 - s1 * s1 / c) / c
        if m2 <= 4.0 * c * rtol * (m2 + mean * mean):
            out[k, a, b] = np.nan if kind == 2 else (1.0 if mean == 0.0 else 0.0)
            continue
        e2 = s2 / c
        e3 = s3 / c
        m3 = e3 - 3.0 * mean * e2 + 2.0 * mean * mean * mean
        m4 = s4 / c - 4.0 * mean * e3 + 6.0 * mean * mean * e2 - 3.0 * mean * mean * mean * mean
        if kind == 1:
            out[k, a, b] = edgeworth_two_sided_from_moments(mean, m2, m3, m4, c)
        elif kind == 2:
            out[k, a, b] = johnson_from_moments(mean, m2, m3, c, 0.0)
        else:
            out[k, a, b] = math.erfc(abs(hall_from_moments(mean, m2, m3, c, 0.0)) / math.sqrt(2.0))


@pjit
def table_corrected_pvalues(sums, row, alphas, c, kind, rtol):
    """Two-sided p-values ``[alpha, system, baseline]`` of URisk_α = 0 by a corrected inference
    (``kind`` 1 Edgeworth, 2 Johnson, 3 Hall: `fastrisk._kernels.riskinference`) from the
    one-pass sums of `pair_sums_higher`: with n = min(d, 0), Σn^k = (Σd^k − Σd^{k−1}|d|) / 2
    (n³ = (d³ − |d|³)/2, n⁴ = (d⁴ − d³|d|)/2) and x^k = d^k + ((1 + α)^k − 1) n^k, the raw sums
    of x, x², x³, x⁴, then the central moments m₂ = (Σx² − (Σx)²/c)/c,
    m₃ = Σx³/c − 3x̄Σx²/c + 2x̄³, m₄ = Σx⁴/c − 4x̄Σx³/c + 6x̄²Σx²/c − 3x̄⁴. Johnson's cells hold
    t_J (the caller refers them to Student's t). The diagonal is NaN; constant pairs (m₂ at
    the floor of `fastrisk.risk`) p = 1 if URisk is 0, else 0."""
    S = row.shape[0]
    A = alphas.shape[0]
    out = np.empty((A, S, S))
    for a in prange(S):
        for b in range(S):
            _corrected_cell(sums, row, a, b, alphas, c, kind, rtol, out)
    return out


@helper
def sums_moments(sx, sx2, c, rtol):
    """(URisk, SE, TRisk, zero) from the one-pass sums of x over ``c`` topics: the centred sum of
    squares sx2 - sx^2 / c, then the moments kernel `risk_at` (URisk = sx / c, SE =
    sqrt(ss / (c - 1) / c)) and the zero-variance rule of `floored_t` (SE reported 0 where
    ``zero``)."""
    u, s, _ = risk_at(0.0, c, sx, 0.0, sx2 - sx * sx / c, 0.0, 0.0, 0.0, 0.0)
    z, t = floored_t(u, s, float(c), rtol)
    return u, 0.0 if z else s, t, z


#: The unit roundoff of float64.
U = 2.0 ** -53
#: A cell is recomputed where the rounding bound of its sum x could move TRisk by more than this.
MEAN_TOL = 1e-7


@helper
def _row(sx, sx2, err, c, rtol, refine_ratio, lo, hi, urisk, se, trisk, cancelled, zero):
    """`sums_moments` of one row of cells (contiguous outputs); flags ``cancelled`` where sum x^2
    > ``refine_ratio`` * sum (x - mean)^2 (the one-pass variance lost digits) or where ``err``,
    a bound on the rounding error of sum x, exceeds `MEAN_TOL` times sqrt(c/(c-1) sum (x -
    mean)^2) (TRisk's denominator times c: nearly identical systems, whose sum d is the
    difference of two nearly equal row sums), and ORs the zero SEs into ``zero``. Returns True
    if a URisk or SE is out of range."""
    bad = False
    for b in range(sx.shape[0]):
        u, s, t, z = sums_moments(sx[b], sx2[b], c, rtol)
        urisk[b] = u
        se[b] = s
        trisk[b] = t
        ss = sx2[b] - sx[b] * sx[b] / c
        cancelled[b] = ((refine_ratio * ss <= sx2[b] and sx2[b] > 0.0)
                        or err[b] * err[b] > MEAN_TOL * MEAN_TOL * max(ss, 0.0) * c / (c - 1))
        zero[b] |= z
        bad |= outside(u, lo, hi) or outside(s, lo, hi)
    return bad


@pjit
def table_moments(s_abs, s_sgn, s_sq, row, mag, alphas, c, rtol, refine_ratio, lo, hi):
    """URisk, SE and TRisk ``[alpha, system, baseline]`` from the upper-triangle sums and row
    sums of `pair_sums`, for every alpha (`sums_moments`: the zero-variance rule of
    `floored_t`), in the table's final layout. Per pair: sum d = row[a] - row[b],
    sum n = (sum d - sum |d|) / 2 and sum n^2 = (sum d^2 - sum d|d|) / 2 (n = min(d, 0)), then
    sum x = sum d + alpha sum n and sum x^2 = sum d^2 + (2 alpha + alpha^2) sum n^2.
    ``cancelled`` (same shape): the cells whose one-pass variance lost digits, or whose sum d
    (a difference of row sums, off by at most (c - 1) u (mag[a] + mag[b]) + u |sum d|, u =
    2^-53: Higham 2002, §4.2) could move TRisk by more than `MEAN_TOL` (the caller
    recomputes them, `refine_linear`); ``zero`` (S, S): an SE is 0 at some alpha; ``ok``: every
    URisk and SE finite and, where non-zero, within [lo, hi] (else the caller rescales). The
    diagonal is URisk 0, SE 0, TRisk NaN.
    """
    S = s_abs.shape[0]
    A = alphas.shape[0]
    urisk = np.empty((A, S, S))
    se = np.empty((A, S, S))
    trisk = np.empty((A, S, S))
    cancelled = np.empty((A, S, S), dtype=np.bool_)
    zero = np.zeros((S, S), dtype=np.bool_)
    bad = 0  # rows with a result out of range (a prange reduction: no array to reduce after)
    for a in prange(S):
        n = np.empty(S)
        n2 = np.empty(S)
        sd = np.empty(S)
        sd2 = np.empty(S)
        sx = np.empty(S)
        sx2 = np.empty(S)
        err_d = np.empty(S)
        err = np.empty(S)
        for b in range(S):
            if a < b:
                ab, sg, sq = s_abs[a, b], s_sgn[a, b], s_sq[a, b]
            elif a > b:  # the mirror pair: d' = -d
                ab, sg, sq = s_abs[b, a], -s_sgn[b, a], s_sq[b, a]
            else:
                ab, sg, sq = 0.0, 0.0, 0.0
            d = row[a] - row[b]
            # sum |d| = 0: every difference is exactly 0 (the diagonal, identical systems), the sums exact
            err_d[b] = U * ((c - 1) * (mag[a] + mag[b]) + abs(d)) if ab > 0.0 else 0.0
            n[b] = 0.5 * (d - ab)
            n2[b] = 0.5 * (sq - sg)
            sd[b] = d
            sd2[b] = sq
        row_bad = False
        for k in range(A):
            al = alphas[k]
            w2 = 2.0 * al + al * al
            for b in range(S):
                sx[b] = sd[b] + al * n[b]
                sx2[b] = sd2[b] + w2 * n2[b]
                err[b] = (1.0 + al) * err_d[b]
            row_bad |= _row(sx, sx2, err, c, rtol, refine_ratio, lo, hi, urisk[k, a], se[k, a], trisk[k, a],
                            cancelled[k, a], zero[a])
        bad += 1 if row_bad else 0
    return urisk, se, trisk, cancelled, zero, bad == 0


@pjit
def value_table_moments(sx, sx2, c, rtol, refine_ratio, lo, hi):
    """`table_moments` for the sums of `value_pair_sums` (every ordered pair; A = 1)."""
    S = sx.shape[0]
    urisk = np.empty((1, S, S))
    se = np.empty((1, S, S))
    trisk = np.empty((1, S, S))
    cancelled = np.empty((1, S, S), dtype=np.bool_)
    zero = np.zeros((S, S), dtype=np.bool_)
    bad = 0
    exact = np.zeros(S)  # each ordered pair's sums run over its own differences: no row sums to cancel
    for a in prange(S):
        bad += 1 if _row(sx[a], sx2[a], exact, c, rtol, refine_ratio, lo, hi, urisk[0, a], se[0, a], trisk[0, a],
                         cancelled[0, a], zero[a]) else 0
    return urisk, se, trisk, cancelled, zero, bad == 0


@pjit
def refine_linear(V, cells, alphas, rtol, urisk, se, trisk):
    """URisk, SE and TRisk of the cells (k, a, b) in ``cells`` (n, 3) recomputed, in place, as
    `fastrisk.risk` computes them: the centred sums of `risk_sums`, `risk_at` and `floored_t`
    (the same numbers, bit for bit). For the cells whose one-pass sums cancelled."""
    c = V.shape[1]
    for j in prange(cells.shape[0]):
        k, a, b = cells[j, 0], cells[j, 1], cells[j, 2]
        gains, losses, s_ee, s_ef, s_ff, s_e, s_f = risk_sums(V[a], V[b])
        u, s, _ = risk_at(alphas[k], c, gains, losses, s_ee, s_ef, s_ff, s_e, s_f)
        z, t = floored_t(u, s, float(c), rtol)
        urisk[k, a, b] = u
        se[k, a, b] = 0.0 if z else s
        trisk[k, a, b] = t


@helper
def _rank_desc(values, ids, top, bot, out, ordinal):
    """Ranks of ``values`` (1 = largest); ties averaged unless ``ordinal`` (then by position)."""
    ranking_from_scores(values, ids, top, bot)
    for k in range(values.shape[0]):
        out[ids[k]] = (k + 1.0) if ordinal else (top[k] + bot[k] + 2) / 2.0


@pjit
def baseline_ranks(stat, ordinal, bblock, skip, stop):
    """Rank of every system (axis 1) under every baseline (axis 2) and alpha (axis 0) of
    ``stat`` (A, S, B), in the same layout (the table's final one: no copy to reorder).

    ``skip[b]`` is the system left out of baseline ``b``'s ranking (its rank is NaN and the
    others are ranked among themselves, 1..S-1), or -1 to rank every system. Baselines are
    taken ``bblock`` at a time so the gather reads rows of ``stat`` contiguously. Blocks
    are skipped once ``stop[0]`` is set (Ctrl-C; the caller discards the partial ranks).
    """
    A, S, B = stat.shape
    ranks = np.empty((A, S, B))
    nblocks = (B + bblock - 1) // bblock
    for t in prange(nblocks):
        if stopped(stop):
            continue
        b0 = t * bblock
        nb = min(b0 + bblock, B) - b0
        cols = np.empty((nb, A, S))
        out = np.empty((nb, A, S))
        ids = np.empty(S, dtype=np.int64)
        top = np.empty(S, dtype=np.int64)
        bot = np.empty(S, dtype=np.int64)
        part = np.empty(S)
        part_out = np.empty(S)
        for k in range(A):
            for a in range(S):
                for j in range(nb):
                    cols[j, k, a] = stat[k, a, b0 + j]
        for j in range(nb):
            s = skip[b0 + j]
            for k in range(A):
                if s < 0:
                    _rank_desc(cols[j, k], ids, top, bot, out[j, k], ordinal)
                    continue
                m = 0
                for a in range(S):
                    if a != s:
                        part[m] = cols[j, k, a]
                        m += 1
                _rank_desc(part[:m], ids[:m], top[:m], bot[:m], part_out[:m], ordinal)
                m = 0
                for a in range(S):
                    if a == s:
                        out[j, k, a] = np.nan
                    else:
                        out[j, k, a] = part_out[m]
                        m += 1
        for k in range(A):
            for a in range(S):
                for j in range(nb):
                    ranks[k, a, b0 + j] = out[j, k, a]
    return ranks


@pjit
def value_pair_sums(V, stop):
    """sum x and sum x^2 (S, S) of x_i = _value(V[a, i] - V[b, i]) for every ordered pair.

    For a non-linear value function (the jitted scalar ``_value``, see
    `fastrisk._kernels._jit.with_value`): no antisymmetry to exploit,
    every ordered pair is one pass over the two contiguous rows of ``V`` (S, c). Rows are
    skipped once ``stop[0]`` is set (Ctrl-C; the caller discards the partial sums).
    """
    S, c = V.shape
    sx = np.empty((S, S))
    sx2 = np.empty((S, S))
    for a in prange(S):
        if stopped(stop):
            continue
        for b in range(S):
            acc = 0.0
            acc2 = 0.0
            for i in range(c):
                x = _value(V[a, i] - V[b, i])
                acc += x
                acc2 += x * x
            sx[a, b] = acc
            sx2[a, b] = acc2
    return sx, sx2


@pjit
def refine_value(V, cells, rtol, urisk, se, trisk):
    """`refine_linear` for the value function ``_value``: x = _value(d) over topics and its
    moments by `fastrisk._kernels.risk.value_moments`, as `fastrisk.risk` with that value
    function computes them (the same numbers, bit for bit)."""
    c = V.shape[1]
    for j in prange(cells.shape[0]):
        a, b = cells[j, 1], cells[j, 2]
        x = np.empty(c)
        for i in range(c):
            x[i] = _value(V[a, i] - V[b, i])
        u, s, _ = value_moments(x, np.zeros(c))
        z, t = floored_t(u, s, float(c), rtol)
        urisk[0, a, b] = u
        se[0, a, b] = 0.0 if z else s
        trisk[0, a, b] = t


# One-thread twins (same bodies, compiled without ``parallel``): tables of a few dozen systems
# use them, which compile several times faster than the parallel drivers on first use.
pair_sums_serial = serial(pair_sums)
table_moments_serial = serial(table_moments)
value_table_moments_serial = serial(value_table_moments)
refine_linear_serial = serial(refine_linear)
refine_value_serial = serial(refine_value)
baseline_ranks_serial = serial(baseline_ranks)
value_pair_sums_serial = serial(value_pair_sums)
pair_sums_higher_serial = serial(pair_sums_higher)
table_corrected_pvalues_serial = serial(table_corrected_pvalues)
