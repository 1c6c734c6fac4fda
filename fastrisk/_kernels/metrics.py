"""Per-topic effectiveness measures over dense-id rankings (trec_eval / gdeval semantics).

A ranking is scored in two steps: `ranked_grades` turns the top of a system's
ranking into a vector of grades (-1 = unjudged, counted as non-relevant; -2 = past the end
of the ranking), optionally restricted to a pool given as a membership bitmask over
systems, and optionally *condensed* (unjudged documents removed, later ones moving up);
`measure_value` turns that vector into a score, given the topic's normaliser from
`topic_norm` (ideal DCG, or the number of relevant documents R).

Measure codes: see the constants below. The trec_eval measures follow trec_eval 9.0.8's C source
(usnistgov/trec_eval, cited per measure in `measure_value`): a retrieved document is *nonpool*
(``-1``, absent from the qrels), *pooled but unjudged* (``-3``, a negative grade in the qrels,
``form_res_rels.c``: "In pool, but unjudged (eg, infAP uses a sample of pool)") or judged with
its grade; ``-2`` is past the end of the ranking. Grades ``-3`` reach a kernel only from the
judgments `fastrisk.measures.metrics` builds for the measures that tell them apart (bpref,
infAP, ``judged_only``); the others see a negative grade as 0.
"""

from __future__ import annotations

import numpy as np

from fastrisk._kernels._jit import helper, njit

P, RBP, NDCG, ERR, AP, RR, RPREC, RECALL, NDCG_LIN, JUDGED, NDCG_LIN_FULL = range(11)
(BPREF, INFAP, SUCCESS, SET_P, SET_REL_P, SET_R, SET_F, SET_AP, IPREC, NUM_RET, NUM_REL_RET, NUM_REL,
 NUM_Q) = range(11, 24)
MODE_ASSUMED, MODE_CONDENSED = 0, 1
UNJUDGED, NO_DOC, POOL_UNJUDGED = -1, -2, -3
#: trec_eval.h's ``INFAP_EPSILON``.
INFAP_EPSILON = 0.00001


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
    intersects ``mask`` (else it is -1, nonpool). Mode 0 keeps unjudged documents as -1
    (nonpool) or -3 (pooled but unjudged); mode 1 (condensed) skips them, as trec_eval's
    ``-J`` does (``form_res_rels.c``, ``judged_docs_only_flag``). Positions past the end of the ranking are -2 (no document: non-relevant).
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
        if use_pool and g != UNJUDGED and not (d < npool and in_pool(member, poff + d, mask)):
            g = UNJUDGED  # judged (or pooled) but outside the pool scored against: nonpool
        if g >= 0:
            buf[j] = g
            j += 1
        elif mode == MODE_ASSUMED:
            buf[j] = g
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
    return code == NDCG or code == NDCG_LIN or code == NDCG_LIN_FULL or counts_relevant(code)


@helper
def counts_relevant(code):
    """The measure's normaliser is R, the number of judged documents with grade >= ``rel``."""
    return (code == AP or code == RPREC or code == RECALL or code == BPREF or code == INFAP or code == SET_REL_P
            or code == SET_R or code == SET_F or code == SET_AP or code == IPREC or code == NUM_REL)


@helper
def topic_norm(sorted_desc, k, code, rel):
    """Per-topic normaliser from the positive grades of the judged documents, sorted descending.

    nDCG: the ideal DCG@k (exponential gain for gdeval's variant, linear for trec_eval's;
    uncut for ``nDCG`` without cutoff); AP, Rprec, R@k and the trec_eval measures of
    `counts_relevant`: R, the number of grades >= ``rel``.
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
    if counts_relevant(code):
        c = 0
        for i in range(n):
            if sorted_desc[i] >= rel:
                c += 1
        return float(c)
    return 0.0


@helper
def measure_value(buf, k, code, p, rel, max_grade, norm, nonrel, residual):
    """Score of the grade vector ``buf[:k]`` (-1 unjudged, -2 no document: non-relevant).

    ``norm`` is `topic_norm`'s normaliser, ``nonrel`` the number of judged non-relevant
    documents of the topic (bpref's N); ``p`` is RBP's persistence, SetF's beta or IPrec's
    recall level.

    ``buf`` may be shorter than ``k`` (no deeper than the deepest ranking: a cutoff beyond it
    costs nothing); the missing positions are -2, which no measure counts, and ``k`` itself
    enters only P@k's denominator and RBP's residual p^k.
    """
    top = min(k, buf.shape[0])
    if code >= BPREF:
        return trec_value(buf, top, code, p, rel, norm, nonrel)
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


@helper
def infap_term(j, rels, nonrels, unjudged):
    """m_infap.c's contribution of the relevant document at 0-based rank ``j`` after ``rels - 1``
    relevant, ``nonrels`` judged non-relevant and ``unjudged`` pooled-but-unjudged documents
    (the C expression, evaluated in its order)."""
    if j == 0:
        return 1.0
    fj = float(j)
    return (1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((rels - 1 + nonrels + unjudged) / fj)
            * ((rels - 1 + INFAP_EPSILON) / (rels - 1 + nonrels + 2 * INFAP_EPSILON)))


@helper
def iprec_value(buf, n, c, recall, rel, R):
    """m_iprec_at_recall.c: the largest precision at any rank at or below the rank where the run
    has retrieved ``cut = (long) (recall * R + 0.9)`` relevant documents (0 if it never does);
    ``n`` documents retrieved, ``c`` of them relevant. The ``+ 0.9`` truncation is trec_eval
    9.0.x's (usnistgov/trec_eval at dc0c991, the version pytrec_eval bundles: "the default 11
    percentages should have same cutoffs as historical MAP implementations"); later trec_eval
    (2a9e214) rounds with ``lround`` instead."""
    cut = int(recall * R + 0.9)
    if cut > c or n == 0:
        return 0.0
    best = c / n
    rels = c
    i = n
    while i > 0 and rels > 0:
        precis = rels / i
        if best < precis:
            best = precis
        if buf[i - 1] >= rel:
            if rels == cut:
                return best
            rels -= 1
        i -= 1
    return best


@helper
def trec_value(buf, top, code, p, rel, R, nonrel):
    """The trec_eval measures over the ranking's grades ``buf[:top]`` (see the module doc for the
    negative codes). ``R`` relevant and ``nonrel`` judged non-relevant documents in the qrels.

    - bpref (m_bpref.c): Σ over judged relevant documents of 1 - min(n_r, R) / min(N, R)
      (1 when n_r = 0), n_r the judged non-relevant documents above it; / R. Nonpool and
      pooled-but-unjudged documents are skipped.
    - infAP (m_infap.c): `infap_term` summed over the judged relevant documents, / R.
    - Success@k (m_success.c): 1 if a relevant document is in the top k.
    - SetP (m_set_P.c), SetP(relative=True) (m_set_rel_P.c: / min(n, R)), SetR
      (m_set_recall.c), SetF (m_set_F.c: (β + 1) P R / (β P + R), 0 without a relevant
      document retrieved), SetAP (m_set_map.c: c² / (n R)) over the n retrieved documents,
      c of them relevant.
    - IPrec@r: `iprec_value`.
    - NumRet (m_num_ret.c: n), NumRet(rel=r) (m_num_rel_ret.c: c), NumRel (m_num_rel.c: R),
      NumQ (m_num_q.c: 1).
    """
    if code == BPREF:
        if R <= 0.0:
            return 0.0
        nR = int(R)
        denom = float(min(nonrel, nR))
        seen = 0
        total = 0.0
        for i in range(top):
            g = buf[i]
            if g < 0:
                continue
            if g < rel:
                seen += 1
            elif seen > 0:
                total += 1.0 - float(min(seen, nR)) / denom
            else:
                total += 1.0
        return total / R
    if code == INFAP:
        rels = 0
        nonrels = 0
        unjudged = 0
        total = 0.0
        for i in range(top):
            g = buf[i]
            if g == POOL_UNJUDGED:
                unjudged += 1
            elif g >= rel:
                rels += 1
                total += infap_term(i, rels, nonrels, unjudged)
            elif g >= 0:
                nonrels += 1
        return total / R if R > 0.0 else 0.0
    if code == SUCCESS:
        for i in range(top):
            if buf[i] >= rel:
                return 1.0
        return 0.0
    n = 0
    c = 0
    for i in range(top):
        if buf[i] != NO_DOC:
            n += 1
            if buf[i] >= rel:
                c += 1
    if code == NUM_RET:
        return float(n)
    if code == NUM_REL_RET:
        return float(c)
    if code == NUM_REL:
        return R
    if code == NUM_Q:
        return 1.0
    if code == SET_P:
        return c / n if n > 0 else 0.0
    if n == 0 or R <= 0.0:
        return 0.0
    if code == SET_REL_P:
        return c / min(float(n), R)
    if code == SET_R:
        return c / R
    if code == SET_AP:
        return (float(c) * float(c)) / (float(n) * R)
    if code == SET_F:
        if c == 0:
            return 0.0
        prec = c / n
        rec = c / R
        return (p + 1.0) * prec * rec / (p * prec + rec)
    return iprec_value(buf, n, c, p, rel, R)


@njit
def topic_norms(ideal_offsets, ideal_grades, judged, k, code, rel, out):
    """``out[t, 0]``: `topic_norm` of every topic from its positive grades (sorted descending);
    ``out[t, 1]``: its judged non-relevant documents, ``judged[t]`` (judgments with a grade
    >= 0) minus those with grade >= ``rel`` (bpref's N: m_bpref.c sums ``rel_levels`` below
    the relevance level)."""
    for t in range(out.shape[0]):
        pos = ideal_grades[ideal_offsets[t]:ideal_offsets[t + 1]]
        out[t, 0] = topic_norm(pos, k, code, rel)
        c = 0
        for i in range(pos.shape[0]):
            if pos[i] >= rel:
                c += 1
        out[t, 1] = judged[t] - c


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
        out[s, t] = measure_value(buf, k, code, p, rel, max_grade, norm[t, 0], norm[t, 1], residual)
