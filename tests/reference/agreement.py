"""Deliberately plain references for rank agreement; never imports fastrisk's kernels.

Rankings here are lists of groups (lists of items), best first.
"""

from __future__ import annotations

import itertools
import math


def flatten(groups):
    """[(item, top, bottom)] with 0-based top/bottom positions of each item's tie group."""
    out = []
    pos = 0
    for g in groups:
        for item in g:
            out.append((item, pos, pos + len(g) - 1))
        pos += len(g)
    return out


def share(t, b, d, ties):
    """An item's contribution, tied over positions t..b, to the prefix of depth d + 1."""
    if d < t:
        return 0.0
    if ties == "w" or d >= b:
        return 1.0
    return (d - t + 1) / (b - t + 1)


def rbo_reference(x, y, p, ties):
    """RBO ext/min/max/res straight from the definitions, with dense item x depth loops."""
    fx = flatten(x)
    fy = flatten(y)
    S, L = (fy, fx) if len(fx) >= len(fy) else (fx, fy)
    s, l = len(S), len(L)
    pos_s = {item: (t, b) for item, t, b in S}
    pos_l = {item: (t, b) for item, t, b in L}
    l_only = [item for item, _, _ in L if item not in pos_s]  # in L's order

    def c_s(item, d):
        return share(*pos_s[item], d, ties) if item in pos_s else 0.0

    def c_l(item, d):
        return share(*pos_l[item], d, ties) if item in pos_l else 0.0

    items = list(pos_s) + l_only

    def agreement(x_d, d, s_size_sum, s_sq_sum):
        l_sum = sum(c_l(i, d) for i in pos_l)
        l_sq = sum(c_l(i, d) ** 2 for i in pos_l)
        if ties == "w":
            return 2 * x_d / (s_size_sum + l_sum)
        if ties == "a":
            return x_d / (d + 1)
        return x_d / math.sqrt(s_sq_sum) / math.sqrt(l_sq)

    a_min, a_max, a_ext = [], [], []
    for d in range(l):
        x_d = sum(c_s(i, d) * c_l(i, d) for i in items)
        if d < s:
            a = agreement(x_d, d, sum(c_s(i, d) for i in pos_s), sum(c_s(i, d) ** 2 for i in pos_s))
            a_min.append(a)
            a_max.append(a)
            a_ext.append(a)
            continue
        a_s = a_min[s - 1]
        # upper bound: S continues with L's items it lacks, one per depth
        unseen_max = sum(c_l(item, d) for item in l_only[: d - s + 1])
        positive = [c_l(item, d) for item in l_only if c_l(item, d) > 0]
        unseen_ext = (d - s + 1) * a_s * sum(positive) / len(positive)
        a_min.append(agreement(x_d, d, d + 1, d + 1))
        a_max.append(agreement(x_d + unseen_max, d, d + 1, d + 1))
        a_ext.append(agreement(x_d + unseen_ext, d, d + 1, d + 1))

    x_l = sum(1 for i in pos_s if i in pos_l)
    tail_min = x_l * (math.log(1 / (1 - p)) - sum(p**d / d for d in range(1, l + 1)))
    f = l + s - x_l
    tail_max = sum((2 * d - l - s + x_l) / d * p**d for d in range(l + 1, f + 1)) + p ** (f + 1) / (1 - p)
    tail_ext = (x_l + (l - s) * a_min[s - 1]) / l * p ** (l + 1) / (1 - p)

    def total(a, tail):
        return (1 - p) / p * (sum(v * p ** (d + 1) for d, v in enumerate(a)) + tail)

    lo = total(a_min, tail_min)
    hi = total(a_max, tail_max)
    return {"ext": total(a_ext, tail_ext), "min": lo, "max": hi, "res": hi - lo}


def rbo_webber_untied(x, y, p):
    """Webber, Moffat & Zobel (2010) eqs. 11 and 32 for untied lists (items, best first)."""
    S, L = (y, x) if len(x) >= len(y) else (x, y)
    s, l = len(S), len(L)

    def overlap(d):
        return len(set(S[:d]) & set(L[:d]))

    xs = overlap(s)
    xl = overlap(l)
    # the lower bound counts only the overlap seen up to depth l (eq. 11 past l)
    rbo_min = (1 - p) / p * (
        sum(overlap(d) / d * p**d for d in range(1, l + 1))
        + xl * (math.log(1 / (1 - p)) - sum(p**d / d for d in range(1, l + 1)))
    )
    rbo_ext = (1 - p) / p * (
        sum(overlap(d) / d * p**d for d in range(1, l + 1))
        + sum(xs * (d - s) / (s * d) * p**d for d in range(s + 1, l + 1))
    ) + ((xl - xs) / l + xs / s) * p**l
    return {"min": rbo_min, "ext": rbo_ext}


def rbo_min_over_tie_breaks(x, y, p):
    """Mean RBO_min over every way of breaking the ties of x and y (equal weights)."""
    def breaks(groups):
        return [sum((list(g) for g in combo), []) for combo in
                itertools.product(*[itertools.permutations(g) for g in groups])]

    values = [rbo_webber_untied(a, b, p)["min"] for a in breaks(x) for b in breaks(y)]
    return sum(values) / len(values)


def kendall_tau_b(x, y):
    """Kendall's tau-b by counting all pairs; None if either vector is constant."""
    x = [float(v) for v in x]
    y = [float(v) for v in y]
    n = len(x)
    con = dis = tx = ty = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx = (x[i] > x[j]) - (x[i] < x[j])
            dy = (y[i] > y[j]) - (y[i] < y[j])
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tx += 1
            elif dy == 0:
                ty += 1
            elif dx == dy:
                con += 1
            else:
                dis += 1
    denom = math.sqrt((con + dis + tx) * (con + dis + ty))
    return None if denom == 0 else (con - dis) / denom
