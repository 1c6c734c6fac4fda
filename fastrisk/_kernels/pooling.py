"""Pools as per-document membership bitmasks over systems; pooled scoring; Webber & Park.

Pool rows: topic ``t``'s depth-k pool candidates are its dense ids ``0 .. npool_t - 1``
(ids are ordered by best rank), stored at rows ``pool_offsets[t] + id`` of ``member``, a
``(rows, words)`` uint64 array whose bit ``s`` says system ``s`` ranks the document in its
top k. The pool of a system subset with bitmask ``mask`` is then ``member[row] & mask != 0``.

``ideal_norm[t, 0]`` is the normaliser (ideal DCG, or R) of topic ``t`` to use and
``ideal_norm[t, 1]`` its judged non-relevant documents (bpref's N), or NaN to compute both from
the judgments inside the pool being scored against.

Every random procedure draws from `fastrisk._kernels._random` streams, one per task,
so results do not depend on the number of threads.
"""

from __future__ import annotations

import numpy as np

from fastrisk._kernels._jit import helper, njit, stopped
from fastrisk._kernels._random import next_below, stream_state
from fastrisk._kernels.metrics import BPREF, in_pool, measure_value, needs_norm, ranked_grades, topic_norm

_ONE = np.uint64(1)


@helper
def set_bit(mask, s):
    mask[s >> 6] |= _ONE << np.uint64(s & 63)


@helper
def clear_bit(mask, s):
    mask[s >> 6] &= ~(_ONE << np.uint64(s & 63))


@njit
def build_membership(docs, lengths, pool_offsets, depth, member):
    """Set bit ``s`` of row ``pool_offsets[t] + d`` for every document ``d`` in system ``s``'s top ``depth``."""
    S, T = lengths.shape
    for t in range(T):
        base = pool_offsets[t]
        for s in range(S):
            word = s >> 6
            bit = _ONE << np.uint64(s & 63)
            n = min(depth, lengths[s, t])
            for i in range(n):
                member[base + docs[s, t, i], word] |= bit


@helper
def sort_desc_few_values(x):
    """Sort ``x`` descending in place, one pass per distinct value: grades take a few values,
    and no general sort is compiled for them (seconds of first-use compile, issue #20)."""
    n = x.shape[0]
    j = 0
    while j < n:
        top = x[j]
        for i in range(j + 1, n):
            if x[i] > top:
                top = x[i]
        for i in range(j, n):
            if x[i] == top:
                x[i] = x[j]
                x[j] = top
                j += 1


@helper
def pooled_ideal(t, grades, doc_offsets, member, pool_offsets, pos_offsets, pos_ids, mask, k, tmp, code, rel):
    """The measure's normaliser (ideal DCG@k, or R) from the positive judgments inside the pool
    ``mask`` of topic ``t``; ``tmp`` is scratch of ``grades``' dtype (the qrels' ideal grades
    have it too, so `topic_norm` compiles once)."""
    n = 0
    for j in range(pos_offsets[t], pos_offsets[t + 1]):
        d = pos_ids[j]
        if in_pool(member, pool_offsets[t] + d, mask):
            tmp[n] = grades[doc_offsets[t] + d]
            n += 1
    srt = tmp[:n]
    sort_desc_few_values(srt)
    return topic_norm(srt, k, code, rel)


@helper
def pooled_nonrelevant(t, grades, doc_offsets, member, pool_offsets, mask, rel):
    """Judged non-relevant documents (grade 0 .. ``rel`` - 1) inside the pool ``mask`` of topic
    ``t``: bpref's N (m_bpref.c) when only that pool is judged."""
    c = 0
    for d in range(pool_offsets[t + 1] - pool_offsets[t]):
        g = grades[doc_offsets[t] + d]
        if 0 <= g < rel and in_pool(member, pool_offsets[t] + d, mask):
            c += 1
    return float(c)


@helper
def score_pooled(s, t, docs, lengths, doc_offsets, grades, member, pool_offsets, pos_offsets,
                 pos_ids, ideal_norm, mask, mode, code, k, p, rel, maxg, residual, buf, tmp):
    """Score of system ``s`` on topic ``t`` when only the pool ``mask`` is judged."""
    npool = pool_offsets[t + 1] - pool_offsets[t]
    ranked_grades(docs[s, t], lengths[s, t], grades, doc_offsets[t], True, member,
                  pool_offsets[t], npool, mask, mode, k, buf)
    idcg = 0.0
    nonrel = 0.0
    if needs_norm(code):
        idcg = ideal_norm[t, 0]
        nonrel = ideal_norm[t, 1]
        if idcg != idcg:  # NaN: the normaliser of the judgments inside the pool
            idcg = pooled_ideal(t, grades, doc_offsets, member, pool_offsets, pos_offsets, pos_ids,
                                mask, k, tmp, code, rel)
            if code == BPREF:
                nonrel = pooled_nonrelevant(t, grades, doc_offsets, member, pool_offsets, mask, rel)
    return measure_value(buf, k, code, p, rel, maxg, idcg, nonrel, residual)


@njit
def mean_pooled(s, topic_idx, docs, lengths, doc_offsets, grades, member, pool_offsets,
                pos_offsets, pos_ids, ideal_norm, mask, mode, code, k, p, rel, maxg, residual, buf, tmp, out):
    """Per-topic pooled scores of ``s`` over ``topic_idx`` into ``out``; returns their mean."""
    total = 0.0
    for i in range(topic_idx.shape[0]):
        v = score_pooled(s, topic_idx[i], docs, lengths, doc_offsets, grades, member, pool_offsets,
                         pos_offsets, pos_ids, ideal_norm, mask, mode, code, k, p, rel, maxg, residual, buf, tmp)
        out[i] = v
        total += v
    return total / topic_idx.shape[0]


@njit
def pooled_scores(start, step, systems, topic_idx, docs, lengths, doc_offsets, grades, member, pool_offsets,
                  pos_offsets, pos_ids, ideal_norm, max_pos, mask, mode, code, k, p, rel, maxg, residual, out):
    """Driver: ``out[i, j]`` = score of ``systems[i]`` on ``topic_idx[j]`` against pool ``mask``, for
    the cells ``start, start + step, ...`` in row-major order (see `_jit.run_strided`)."""
    n, c = out.shape
    for ij in range(start, n * c, step):
        i = ij // c
        j = ij - i * c
        buf = np.empty(min(k, docs.shape[2]), dtype=np.int64)
        tmp = np.empty(max(max_pos, 1), dtype=grades.dtype)
        out[i, j] = score_pooled(systems[i], topic_idx[j], docs, lengths, doc_offsets, grades, member,
                                 pool_offsets, pos_offsets, pos_ids, ideal_norm, mask, mode, code, k, p, rel, maxg,
                                 residual, buf, tmp)


@njit
def leave_one_out_scores(start, step, held_out, pool_systems_mask, topic_idx, docs, lengths, doc_offsets, grades,
                         member, pool_offsets, pos_offsets, pos_ids, ideal_norm, max_pos, mode, code, k, p, rel,
                         maxg, residual, out, stop):
    """Driver: iteration ``i`` scores system ``held_out[i]`` against the pool of
    ``pool_systems_mask`` without it; ``out[i]`` is its mean over ``topic_idx``. Iterations
    are skipped once ``stop[0]`` is set (Ctrl-C; the caller discards ``out``). Iterations
    ``start, start + step, ...`` (see `_jit.run_strided`)."""
    for it in range(start, held_out.shape[0], step):
        if stopped(stop):
            continue
        s = held_out[it]
        mask = pool_systems_mask.copy()
        clear_bit(mask, s)
        buf = np.empty(min(k, docs.shape[2]), dtype=np.int64)
        tmp = np.empty(max(max_pos, 1), dtype=grades.dtype)
        scratch = np.empty(topic_idx.shape[0], dtype=np.float64)
        out[it] = mean_pooled(s, topic_idx, docs, lengths, doc_offsets, grades, member, pool_offsets,
                              pos_offsets, pos_ids, ideal_norm, mask, mode, code, k, p, rel, maxg, residual, buf,
                              tmp, scratch)


@njit
def loo_adjustment(pooled, r, topic_idx, docs, lengths, doc_offsets, grades, member, pool_offsets,
                   pos_offsets, pos_ids, ideal_norm, mask, mode, code, k, p, rel, maxg, residual, buf, tmp,
                   scratch, deltas):
    """Algorithm 1: for each pooled ``s``, its mean score on the pool ``mask`` minus on the
    pool with ``s`` withdrawn and ``r`` added; ``deltas[i]`` for ``pooled[i]``; returns the mean."""
    m2 = mask.copy()
    total = 0.0
    for i in range(pooled.shape[0]):
        s = pooled[i]
        full = mean_pooled(s, topic_idx, docs, lengths, doc_offsets, grades, member, pool_offsets,
                           pos_offsets, pos_ids, ideal_norm, mask, mode, code, k, p, rel, maxg, residual, buf,
                           tmp, scratch)
        for w in range(mask.shape[0]):  # not ``m2[:] = mask``: see _kernels.tables._tile_sums
            m2[w] = mask[w]
        clear_bit(m2, s)
        set_bit(m2, r)
        loo = mean_pooled(s, topic_idx, docs, lengths, doc_offsets, grades, member, pool_offsets,
                          pos_offsets, pos_ids, ideal_norm, m2, mode, code, k, p, rel, maxg, residual, buf,
                          tmp, scratch)
        deltas[i] = full - loo
        total += full - loo
    return total / pooled.shape[0]


@helper
def common_topic_draws(true_t, unpooled_t, n, J, state, tperm, out_stats):
    """Algorithm 2 repeated ``J`` times on ``n`` topics drawn without replacement.

    ``out_stats`` (5,) accumulates: sum |adjusted error|, sum |mixed error|, sum adjusted
    signed error, sum squared adjusted error, sum of the variance estimate (eq. 7).
    Returns the advanced stream state.
    """
    N = true_t.shape[0]
    true_sum = 0.0
    unp_sum = 0.0
    for t in range(N):
        true_sum += true_t[t]
        unp_sum += unpooled_t[t]
    true_mean = true_sum / N
    unp_mean = unp_sum / N
    for j in range(J):
        for a in range(n):  # partial Fisher-Yates: tperm[:n] is a uniform n-subset
            state, b = next_below(state, N - a)
            x = tperm[a]
            tperm[a] = tperm[a + b]
            tperm[a + b] = x
        dsum = 0.0
        tsum = 0.0
        usum = 0.0
        for a in range(n):
            t = tperm[a]
            dsum += true_t[t] - unpooled_t[t]
            tsum += true_t[t]
            usum += unpooled_t[t]
        dbar = dsum / n
        ss = 0.0
        for a in range(n):
            t = tperm[a]
            e = true_t[t] - unpooled_t[t] - dbar
            ss += e * e
        s2 = ss / (n - 1) if n > 1 else 0.0
        adjusted = unp_mean + dbar
        mixed = (tsum + unp_sum - usum) / N
        err = adjusted - true_mean
        out_stats[0] += abs(err)
        out_stats[1] += abs(mixed - true_mean)
        out_stats[2] += err
        out_stats[3] += err * err
        out_stats[4] += (N - n) / N * s2 / n
    return state


@njit
def algorithm3(start, step, seed, widths, repeats, ns, J, S, true_scores, topic_idx, docs, lengths, doc_offsets,
               grades, member, pool_offsets, pos_offsets, pos_ids, ideal_norm, max_pos, mode, code, k, p, rel,
               maxg, residual, nwords, out_sys, out_true, out_unpooled, out_loo, out_stats, out_cond, stop):
    """Driver for the resampling experiment: one task (and one random stream) per (width, repeat).

    out_sys (W, I, 1 + max width): r then the pooled systems (-1 padded)
    out_true, out_unpooled, out_loo (W, I): r's true mean, unpooled mean, LOO adjustment a
    out_stats (W, I, len(ns), 5): sums over the J topic draws (see common_topic_draws)
    out_cond (W, I, len(ns)): eq. 6 holds (bias^2 > (N-n)/(nN) sigma_a^2, population values)
    Tasks are skipped once ``stop[0]`` is set (Ctrl-C; the caller discards the outputs).
    Tasks ``start, start + step, ...`` (see `_jit.run_strided`: wider pools come later, so a
    strided split balances the threads).
    """
    W = widths.shape[0]
    N = topic_idx.shape[0]
    for task in range(start, W * repeats, step):
        if stopped(stop):
            continue
        wi = task // repeats
        i = task - wi * repeats
        state = stream_state(seed, task)
        w = widths[wi]
        perm = np.arange(S)
        for a in range(w + 1):
            state, b = next_below(state, S - a)
            x = perm[a]
            perm[a] = perm[a + b]
            perm[a + b] = x
        r = perm[w]
        pooled = perm[:w].copy()
        mask = np.zeros(nwords, dtype=np.uint64)
        for a in range(w):
            set_bit(mask, pooled[a])
        out_sys[wi, i, 0] = r
        for a in range(w):
            out_sys[wi, i, 1 + a] = pooled[a]
        buf = np.empty(min(k, docs.shape[2]), dtype=np.int64)
        tmp = np.empty(max(max_pos, 1), dtype=grades.dtype)
        scratch = np.empty(N, dtype=np.float64)
        unpooled_t = np.empty(N, dtype=np.float64)
        true_t = np.empty(N, dtype=np.float64)
        unp_mean = mean_pooled(r, topic_idx, docs, lengths, doc_offsets, grades, member, pool_offsets,
                               pos_offsets, pos_ids, ideal_norm, mask, mode, code, k, p, rel, maxg, residual, buf,
                               tmp, unpooled_t)
        true_mean = 0.0
        for a in range(N):
            true_t[a] = true_scores[r, topic_idx[a]]
            true_mean += true_t[a]
        true_mean /= N
        deltas = np.empty(w, dtype=np.float64)
        out_loo[wi, i] = loo_adjustment(pooled, r, topic_idx, docs, lengths, doc_offsets, grades,
                                        member, pool_offsets, pos_offsets, pos_ids, ideal_norm, mask, mode, code,
                                        k, p, rel, maxg, residual, buf, tmp, scratch, deltas)
        out_true[wi, i] = true_mean
        out_unpooled[wi, i] = unp_mean
        # population variance of the per-topic bias, for the accuracy condition (eq. 6)
        bias = true_mean - unp_mean
        ss = 0.0
        for a in range(N):
            e = true_t[a] - unpooled_t[a] - bias
            ss += e * e
        sigma2 = ss / (N - 1) if N > 1 else 0.0
        tperm = np.arange(N)
        for ni in range(ns.shape[0]):
            n = ns[ni]
            state = common_topic_draws(true_t, unpooled_t, n, J, state, tperm, out_stats[wi, i, ni])
            out_cond[wi, i, ni] = bias * bias > (N - n) / (n * N) * sigma2
