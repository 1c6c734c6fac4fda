"""Deliberately plain trec_eval measures over one ranked list (never imports fastrisk).

``ranking`` is a list of document ids in rank order, ``judged`` a ``{docid: raw grade}`` dict.
A grade below 0 is pooled but unjudged, a document absent from ``judged`` is unpooled
(trec_eval's form_res_rels.c). Each measure is written from its definition, not from
fastrisk's kernel; infAP follows Yilmaz & Aslam's (CIKM 2006) expected precision at a relevant
document: 1/k + (k-1)/k * (pooled above / (k-1)) * (relevant above + eps) / (judged above + 2 eps).
"""

from __future__ import annotations

EPS = 0.00001


def labels(ranking, judged, judged_only=False):
    """Per rank: the grade, "unpooled" or "unjudged" (``judged_only`` keeps only the grades)."""
    out = []
    for d in ranking:
        g = judged.get(d)
        label = "unpooled" if g is None else "unjudged" if g < 0 else g
        if not judged_only or not isinstance(label, str):
            out.append(label)
    return out


def measure(name, ranking, judged, *, rel=1, k=None, beta=1.0, recall=0.0, judged_only=False):
    grades = labels(ranking, judged, judged_only)
    is_rel = [not isinstance(g, str) and g >= rel for g in grades]
    R = sum(1 for g in judged.values() if g >= rel)
    N = sum(1 for g in judged.values() if 0 <= g < rel)
    n, c = len(grades), sum(is_rel)
    if name == "bpref":
        total, nonrel = 0.0, 0
        for g, r in zip(grades, is_rel):
            if isinstance(g, str):
                continue
            if not r:
                nonrel += 1
            else:
                total += 1.0 - min(nonrel, R) / min(N, R) if nonrel else 1.0
        return total / R if R else 0.0
    if name == "infAP":
        total = 0.0
        for i, r in enumerate(is_rel):
            if not r:
                continue
            above = grades[:i]
            if i == 0:
                total += 1.0
                continue
            pooled = sum(1 for g in above if g != "unpooled")
            rels = sum(is_rel[:i])
            judged_above = sum(1 for g in above if not isinstance(g, str))
            total += 1 / (i + 1) + i / (i + 1) * (pooled / i) * ((rels + EPS) / (judged_above + 2 * EPS))
        return total / R if R else 0.0
    if name == "success":
        return 1.0 if any(is_rel[:k]) else 0.0
    if name == "num_ret":
        return float(n)
    if name == "num_rel_ret":
        return float(c)
    if name == "num_rel":
        return float(R)
    if name == "set_P":
        return c / n if n else 0.0
    if name == "set_relative_P":
        return c / min(n, R) if n and R else 0.0
    if name == "set_recall":
        return c / R if R else 0.0
    if name == "set_map":
        return c * c / (n * R) if n and R else 0.0
    if name == "set_F":
        if not c:
            return 0.0
        p, r = c / n, c / R
        return (beta + 1) * p * r / (beta * p + r)
    if name == "iprec":
        cut = int(recall * R + 0.9)
        if cut > c or not n:
            return 0.0
        precisions = [sum(is_rel[:i + 1]) / (i + 1) for i in range(n)]
        first = 0 if cut == 0 else [i for i, r in enumerate(is_rel) if r][cut - 1]
        return max(precisions[first:])
    if name == "P":
        return sum(is_rel[:k]) / k
    if name == "AP":
        hits = [i for i, r in enumerate(is_rel) if r]
        return sum((j + 1) / (i + 1) for j, i in enumerate(hits)) / R if R else 0.0
    raise ValueError(name)
