"""LambdaRank gradients and Hessians with risk-sensitive swap weights, and per-query nDCG@k.

Documents are stored query after query; query q holds rows ``boundaries[q]:boundaries[q+1]``.
Rankings sort scores descending with ties in document order (a stable sort, as LightGBM
does). Discount of 0-based rank r: 1 / log2(2 + r); gain of grade l: ``gains[l]``.
"""

from __future__ import annotations

import numpy as np

from fastrisk._kernels._jit import njit, pjit, prange


@njit
def _order(scores):
    return np.argsort(-scores, kind="mergesort")


@njit
def _discount(rank):
    return 1.0 / np.log2(2.0 + rank)


@njit
def ideal_dcg(labels, boundaries, gains, k):
    """DCG@k of the ideal ranking of every query (k <= 0: the whole query)."""
    nq = boundaries.shape[0] - 1
    out = np.zeros(nq)
    for q in range(nq):
        lab = np.sort(labels[boundaries[q]:boundaries[q + 1]])[::-1]
        depth = lab.shape[0] if k <= 0 else min(k, lab.shape[0])
        s = 0.0
        for r in range(depth):
            s += gains[lab[r]] * _discount(r)
        out[q] = s
    return out


@njit
def _ndcg_sorted(lab_sorted_by_score, gains, k, inv_idcg):
    """nDCG@k of a ranking given its labels in rank order; 1 when the query has no gain."""
    if inv_idcg == 0.0:
        return 1.0
    depth = min(k, lab_sorted_by_score.shape[0])
    s = 0.0
    for r in range(depth):
        s += gains[lab_sorted_by_score[r]] * _discount(r)
    return s * inv_idcg


@pjit
def ndcg(scores, labels, boundaries, gains, ks, inv_idcgs):
    """nDCG@k (columns: ``ks``) of the ranking by ``scores`` of every query (rows).

    ``inv_idcgs`` (nq, len(ks)): 1 / ideal DCG@k, 0 for a query without gain (nDCG 1).
    """
    nq = boundaries.shape[0] - 1
    out = np.empty((nq, ks.shape[0]))
    for q in prange(nq):
        a, b = boundaries[q], boundaries[q + 1]
        order = _order(scores[a:b])
        lab = labels[a:b][order]
        for t in range(ks.shape[0]):
            out[q, t] = _ndcg_sorted(lab, gains, ks[t], inv_idcgs[q, t])
    return out


@njit
def _loss_fraction(d, dm):
    """Share of the move d -> d + dm spent below 0 (a loss against the baseline)."""
    if dm == 0.0:
        return 1.0 if d < 0.0 else 0.0
    lo = min(d, d + dm)
    hi = max(d, d + dm)
    below = min(hi, 0.0) - lo
    if below <= 0.0:
        return 0.0
    return below / (hi - lo)


@njit
def query_gradients(scores, labels, gains, disc, inv_max_dcg, sigmoid, truncation, norm,
                    base_measure, alpha_q, faro, k, inv_idcg_k, grad, hess):
    """LambdaRank gradients of one query into ``grad``/``hess``; returns the query's nDCG@k.

    Pairs (i, j) of different grades with i among the top ``truncation`` of the current
    ranking; |ΔNDCG| = (g_h - g_l)|D(r_h) - D(r_l)| / maxDCG@truncation, divided by
    0.01 + |s_h - s_l| when ``norm`` (and the scores are not all equal); ρ = 1/(1+exp(σ(s_h-s_l))).
    λ_h -= σρ|ΔNDCG|w, λ_l += σρ|ΔNDCG|w, h += σ²ρ(1-ρ)|ΔNDCG|w (LightGBM's LambdarankNDCG).
    Risk weight w: FARO ``1 + alpha_q``; otherwise ``1 + alpha_q`` × the share of the swap's
    change of the measure (nDCG@k) that lies below the baseline (see fastrisk.ltr.objective).
    ``norm``: every λ and h of the query times log2(1 + S)/S, S = Σ 2σρ|ΔNDCG| of the
    unweighted pairs (so the normalisation leaves the risk weights in place).
    ``disc[r]`` = D(r) for every rank of the query.
    """
    cnt = scores.shape[0]
    for i in range(cnt):
        grad[i] = 0.0
        hess[i] = 0.0
    order = _order(scores)
    lab = labels[order]
    m = _ndcg_sorted(lab, gains, k, inv_idcg_k)
    if cnt < 2:
        return m
    d = m - base_measure
    # rank-ordered copies: the pair loop reads and writes contiguous memory
    ss = scores[order]
    gs = np.empty(cnt)
    for r in range(cnt):
        gs[r] = gains[lab[r]]
    gr = np.zeros(cnt)
    hr = np.zeros(cnt)
    scale = norm and ss[0] != ss[cnt - 1]
    top = min(cnt - 1, truncation) if truncation > 0 else cnt - 1
    risky = alpha_q != 0.0
    sum_lambdas = 0.0
    for i in range(top):
        for j in range(i + 1, cnt):
            if lab[i] == lab[j]:
                continue
            if lab[i] > lab[j]:
                rh, rl = i, j
            else:
                rh, rl = j, i
            dg = gs[rh] - gs[rl]
            ds = ss[rh] - ss[rl]
            delta = dg * abs(disc[i] - disc[j]) * inv_max_dcg
            if scale:
                delta /= 0.01 + abs(ds)
            w = 1.0
            if risky:
                if faro:
                    w = 1.0 + alpha_q
                else:
                    dk_h = disc[rh] if rh < k else 0.0
                    dk_l = disc[rl] if rl < k else 0.0
                    w = 1.0 + alpha_q * _loss_fraction(d, dg * (dk_l - dk_h) * inv_idcg_k)
            rho = 1.0 / (1.0 + np.exp(sigmoid * ds))
            lam = sigmoid * rho * delta
            h = sigmoid * lam * (1.0 - rho)
            gr[rh] -= lam * w
            gr[rl] += lam * w
            hr[rh] += h * w
            hr[rl] += h * w
            sum_lambdas += 2.0 * lam
    f = 1.0
    if norm and sum_lambdas > 0.0:
        f = np.log2(1.0 + sum_lambdas) / sum_lambdas
    for r in range(cnt):
        grad[order[r]] = gr[r] * f
        hess[order[r]] = hr[r] * f
    return m


@pjit
def lambdarank_gradients(scores, labels, boundaries, gains, inv_max_dcg, sigmoid, truncation, norm,
                         base_measure, alpha_q, faro, k, inv_idcg_k):
    """Gradients, Hessians (per document) and the model's nDCG@k (per query), parallel over queries.

    Per-query arrays: ``inv_max_dcg`` (1/maxDCG@truncation, 0 without gain), ``base_measure``
    (the baseline's nDCG@k), ``alpha_q`` (risk weight; 0 = plain LambdaRank), ``inv_idcg_k``.
    """
    nq = boundaries.shape[0] - 1
    n = scores.shape[0]
    grad = np.zeros(n)
    hess = np.zeros(n)
    m = np.empty(nq)
    longest = 0
    for q in range(nq):
        longest = max(longest, boundaries[q + 1] - boundaries[q])
    disc = np.empty(longest)
    for r in range(longest):
        disc[r] = _discount(r)
    for q in prange(nq):
        a, b = boundaries[q], boundaries[q + 1]
        m[q] = query_gradients(scores[a:b], labels[a:b], gains, disc, inv_max_dcg[q], sigmoid, truncation, norm,
                               base_measure[q], alpha_q[q], faro, k, inv_idcg_k[q], grad[a:b], hess[a:b])
    return grad, hess, m
