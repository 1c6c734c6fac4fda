"""Per-topic effectiveness measures over dense-id rankings (trec_eval / gdeval semantics).

A ranking is scored in two steps: `ranked_grades` turns the top of a system's
ranking into a vector of grades (-1 = unjudged, counted as non-relevant; -2 = past the end
of the ranking), optionally restricted to a pool given as a membership bitmask over
systems, and optionally *condensed* (unjudged documents removed, later ones moving up);
`measure_value` turns that vector into a score, given the topic's normaliser from
`topic_norm` (ideal DCG, or the number of relevant documents R).

Measure codes: see the constants below.
"""

from __future__ import annotations

import numpy as np

from fastrisk._kernels._jit import helper, njit

P, RBP, NDCG, ERR, AP, RR, RPREC, RECALL, NDCG_LIN, JUDGED, NDCG_LIN_FULL = range(11)
MODE_ASSUMED, MODE_CONDENSED = 0, 1
UNJUDGED, NO_DOC = -1, -2


@helper
def in_pool(member, row, mask):
    """True if pool row ``row`` has a bit of ``mask`` set (``member`` is (rows, words) uint64)."""
    for w in range(mask.shape[0]):
        if member[row, w] & mask[w]:
            return True
    return False


@helper
def ranked_grades(ranking, length, grades, goff, use_pool, member, poff, npool, mask, mode, k, buf):
    """Fill ``buf[:min(k, len(buf))]`` with the grades of the top of ``ranking``.

    ``grades[goff + d]`` is document ``d``'s grade (-1 unjudged). With ``use_pool`` a
    document counts as judged only if ``d < npool`` and its membership row ``poff + d``
    intersects ``mask``. Mode 0 keeps unjudged documents as -1; mode 1 (condensed) skips
    them. Positions past the end of the ranking are -2 (no document: non-relevant).
    Callers pass ``use_pool`` (and scoring's zero offsets) as literals on purpose: the
    specialisation per literal costs one more compile but scoring without a pool runs 15 %
    faster than with a runtime flag (``evaluate``, 48 runs x 50 topics, 2026-11-25).
    """
    k = min(k, buf.shape[0])
    j = 0
    for i in range(length):
        if j >= k:
            break
        d = ranking[i]
        g = grades[goff + d]
        judged = g >= 0
        if judged and use_pool:
            judged = d < npool and in_pool(member, poff + d, mask)
        if judged:
            buf[j] = g
            j += 1
        elif mode == MODE_ASSUMED:
            buf[j] = UNJUDGED
            j += 1
    while j < k:
        buf[j] = NO_DOC
        j += 1


@helper
def dcg_sorted(sorted_desc, k):
    """DCG@k (gain 2^g - 1, discount log2(rank + 1)) of grades already sorted descending."""
    total = 0.0
    n = min(k, sorted_desc.shape[0])
    for i in range(n):
        g = sorted_desc[i]
        if g > 0:
            total += (2.0 ** g - 1.0) / np.log2(i + 2.0)
    return total


@helper
def needs_norm(code):
    return (code == NDCG or code == NDCG_LIN or code == NDCG_LIN_FULL or code == AP or code == RPREC
            or code == RECALL)


@helper
def topic_norm(sorted_desc, k, code, rel):
    """Per-topic normaliser from the positive grades of the judged documents, sorted descending.

    nDCG: the ideal DCG@k (exponential gain for gdeval's variant, linear for trec_eval's;
    uncut for ``nDCG`` without cutoff); AP, Rprec, R@k: R, the number of grades >= ``rel``.
    """
    if code == NDCG:
        return dcg_sorted(sorted_desc, k)
    n = sorted_desc.shape[0]
    if code == NDCG_LIN or code == NDCG_LIN_FULL:
        m = n if code == NDCG_LIN_FULL else min(k, n)
        total = 0.0
        for i in range(m):
            if sorted_desc[i] > 0:
                total += sorted_desc[i] / np.log2(i + 2.0)
        return total
    if code == AP or code == RPREC or code == RECALL:
        c = 0
        for i in range(n):
            if sorted_desc[i] >= rel:
                c += 1
        return float(c)
    return 0.0


@helper
def measure_value(buf, k, code, p, rel, max_grade, norm, residual):
    """Score of the grade vector ``buf[:k]`` (-1 unjudged, -2 no document: non-relevant).

    ``buf`` may be shorter than ``k`` (no deeper than the deepest ranking: a cutoff beyond it
    costs nothing); the missing positions are -2, which no measure counts, and ``k`` itself
    enters only P@k's denominator and RBP's residual p^k.
    """
    top = min(k, buf.shape[0])
    if code == P:
        c = 0
        for i in range(top):
            if buf[i] >= rel:
                c += 1
        return c / k
    if code == RBP:
        total = 0.0
        w = 1.0 - p
        for i in range(top):
            if buf[i] >= rel or (residual and buf[i] == UNJUDGED):
                total += w
            w *= p
        if residual:
            total += p ** k
        return total
    if code == NDCG or code == NDCG_LIN or code == NDCG_LIN_FULL:
        if norm <= 0.0:
            return 0.0
        total = 0.0
        for i in range(top):
            g = buf[i]
            if g > 0:
                gain = (2.0 ** g - 1.0) if code == NDCG else float(g)
                total += gain / np.log2(i + 2.0)
        return total / norm
    if code == ERR:  # gdeval: stop probability (2^g - 1) / 2^max_grade
        total = 0.0
        decay = 1.0
        denom = 2.0 ** max_grade
        for i in range(top):
            g = buf[i]
            if g > 0:
                r = (2.0 ** g - 1.0) / denom
                total += r * decay / (i + 1.0)
                decay *= 1.0 - r
        return total
    if code == AP:
        if norm <= 0.0:
            return 0.0
        hits = 0
        total = 0.0
        for i in range(top):
            if buf[i] >= rel:
                hits += 1
                total += hits / (i + 1.0)
        return total / norm
    if code == RR:
        for i in range(top):
            if buf[i] >= rel:
                return 1.0 / (i + 1.0)
        return 0.0
    if code == RPREC:
        if norm <= 0.0:
            return 0.0
        c = 0
        for i in range(min(top, int(norm))):
            if buf[i] >= rel:
                c += 1
        return c / norm
    if code == RECALL:
        if norm <= 0.0:
            return 0.0
        c = 0
        for i in range(top):
            if buf[i] >= rel:
                c += 1
        return c / norm
    # JUDGED: judged share of the documents in the top k (of min(k, length) documents)
    c = 0
    n = 0
    for i in range(top):
        if buf[i] != NO_DOC:
            n += 1
            if buf[i] >= 0:
                c += 1
    return c / n if n > 0 else 0.0


@njit
def topic_norms(ideal_offsets, ideal_grades, k, code, rel, out):
    """`topic_norm` of every topic from its positive grades (sorted descending)."""
    for t in range(out.shape[0]):
        out[t] = topic_norm(ideal_grades[ideal_offsets[t]:ideal_offsets[t + 1]], k, code, rel)


@njit
def score_all(start, step, docs, lengths, doc_offsets, grades, norm, code, k, p, rel, max_grade, residual, mode, out):
    """Driver: ``out[s, t]`` = measure of system ``s`` on topic ``t`` against all judgments, for
    the cells ``start, start + step, ...`` in row-major order (see `_jit.run_strided`)."""
    S, T = lengths.shape
    dummy_member = np.zeros((1, 1), dtype=np.uint64)
    dummy_mask = np.zeros(1, dtype=np.uint64)
    buf = np.empty(min(k, docs.shape[2]), dtype=np.int64)
    for st in range(start, S * T, step):
        s = st // T
        t = st - s * T
        ranked_grades(docs[s, t], lengths[s, t], grades, doc_offsets[t], False, dummy_member,
                      0, 0, dummy_mask, mode, k, buf)
        out[s, t] = measure_value(buf, k, code, p, rel, max_grade, norm[t], residual)
