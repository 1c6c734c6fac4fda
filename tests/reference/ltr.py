"""Plain-Python references for fastrisk.ltr (never imports the kernels).

LambdaRank as LightGBM's ``LambdarankNDCG::GetGradientsForOneQuery`` defines it, written
pair by pair; the risk-sensitive weight is computed from its definition, the change of the
query's URisk contribution f(d) (f(x) = x, or (1 + α) x below 0) when the pair's documents
are actually swapped in the ranking and nDCG@k recomputed.
"""

from __future__ import annotations

import math

GAINS = [2.0**i - 1.0 for i in range(31)]


def dcg(labels_in_rank_order, k, gains=GAINS):
    return sum(gains[lab] / math.log2(2 + r) for r, lab in enumerate(labels_in_rank_order[:k]))


def ranking(scores):
    """Indices by descending score, ties in document order."""
    return sorted(range(len(scores)), key=lambda i: -scores[i])


def ndcg(scores, labels, k, gains=GAINS):
    """nDCG@k of one query; 1 when no document has a gain."""
    ideal = dcg(sorted(labels, reverse=True), k, gains)
    if ideal <= 0:
        return 1.0
    return dcg([labels[i] for i in ranking(scores)], k, gains) / ideal


def queries(group):
    start = 0
    for size in group:
        yield start, start + size
        start += size


def urisk_f(x, alpha):
    return x if x >= 0 else (1.0 + alpha) * x


def pair_terms(scores, labels, *, base=0.0, alpha=0.0, faro=False, k=10, sigmoid=1.0, truncation=30,
               norm=True, gains=GAINS):
    """One query's pairs as (high, low, c) with c = σ-free weight |ΔNDCG|·w (scaled as LightGBM),
    and the query's normalisation factor (1 without ``norm``)."""
    n = len(scores)
    order = ranking(scores)
    lab = [labels[i] for i in order]
    top = n - 1 if truncation <= 0 else min(n - 1, truncation)
    ideal_sorted = sorted(labels, reverse=True)
    maxdcg = dcg(ideal_sorted, n if truncation <= 0 else truncation, gains)
    inv_max = 1.0 / maxdcg if maxdcg > 0 else 0.0
    m = ndcg(scores, labels, k, gains)
    d = m - base
    scale = norm and scores[order[0]] != scores[order[-1]]
    terms, total = [], 0.0
    for i in range(top):
        for j in range(i + 1, n):
            if lab[i] == lab[j]:
                continue
            rh, rl = (i, j) if lab[i] > lab[j] else (j, i)
            high, low = order[rh], order[rl]
            ds = scores[high] - scores[low]
            delta = (gains[labels[high]] - gains[labels[low]]) * abs(1 / math.log2(2 + rh) - 1 / math.log2(2 + rl))
            delta *= inv_max
            if scale:
                delta /= 0.01 + abs(ds)
            if faro:
                w = 1.0 + alpha
            else:
                swapped = list(lab)
                swapped[rh], swapped[rl] = swapped[rl], swapped[rh]
                ideal = dcg(ideal_sorted, k, gains)
                dm = 0.0 if ideal <= 0 else (dcg(swapped, k, gains) - dcg(lab, k, gains)) / ideal
                if dm != 0.0:
                    w = (urisk_f(d + dm, alpha) - urisk_f(d, alpha)) / dm
                else:
                    w = 1.0 + alpha if d < 0 else 1.0
            rho = 1.0 / (1.0 + math.exp(sigmoid * ds))
            total += 2.0 * sigmoid * rho * delta
            terms.append((high, low, delta * w))
    factor = math.log2(1 + total) / total if norm and total > 0 else 1.0
    return terms, factor, m


def gradients(scores, labels, group, *, base=None, alpha=None, faro=False, k=10, sigmoid=1.0, truncation=30,
              norm=True, gains=GAINS):
    """Per-document gradients and Hessians, and the per-query nDCG@k of ``scores``."""
    n = len(scores)
    grad, hess, measures = [0.0] * n, [0.0] * n, []
    for q, (a, b) in enumerate(queries(group)):
        s, y = list(scores[a:b]), [int(v) for v in labels[a:b]]
        terms, factor, m = pair_terms(s, y, base=0.0 if base is None else base[q],
                                      alpha=0.0 if alpha is None else alpha[q], faro=faro, k=k,
                                      sigmoid=sigmoid, truncation=truncation, norm=norm, gains=gains)
        measures.append(m)
        for high, low, c in terms:
            rho = 1.0 / (1.0 + math.exp(sigmoid * (s[high] - s[low])))
            grad[a + high] -= factor * sigmoid * rho * c
            grad[a + low] += factor * sigmoid * rho * c
            h = factor * sigmoid * sigmoid * rho * (1 - rho) * c
            hess[a + high] += h
            hess[a + low] += h
    return grad, hess, measures


def smoothed_loss(scores, frozen, sigmoid=1.0):
    """Σ c log(1 + exp(−σ(s_h − s_l))) over frozen (high, low, c) terms: the RankNet cross-entropy
    weighted by |ΔM|, whose derivatives LambdaRank's λ and h are."""
    return sum(c * math.log1p(math.exp(-sigmoid * (scores[h] - scores[l]))) for h, l, c in frozen)


def adaptive_alpha(model, base, alpha):
    """α'_q = [1 − Φ(TR_q)] α with TR_q = x_q / s_x (Dinçer, Macdonald & Ounis 2014)."""
    x = [urisk_f(m - b, alpha) for m, b in zip(model, base)]
    mean = sum(x) / len(x)
    s = math.sqrt(sum((v - mean) ** 2 for v in x) / (len(x) - 1))
    return [(1 - 0.5 * (1 + math.erf((v / s) / math.sqrt(2)))) * alpha for v in x]
