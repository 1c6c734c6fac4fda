"""Deliberately plain reference implementations (loops, no fastrisk kernels)."""

from __future__ import annotations

import math


def urisk_ref(r, b, alpha):
    """URisk, SE_x, SE_J of one system against a baseline, by the textbook formulas."""
    c = len(r)
    x = []
    for ri, bi in zip(r, b):
        d = ri - bi
        x.append(d if d >= 0 else (1 + alpha) * d)
    mean = sum(x) / c
    s2 = sum((xi - mean) ** 2 for xi in x) / (c - 1)
    se = math.sqrt(s2 / c)
    loo = [(sum(x) - x[i]) / (c - 1) for i in range(c)]  # URisk without topic i
    loo_mean = sum(loo) / c
    se_j = math.sqrt((c - 1) / c * sum((t - loo_mean) ** 2 for t in loo))
    freward = sum(max(0.0, ri - bi) for ri, bi in zip(r, b)) / c
    frisk = sum(max(0.0, bi - ri) for ri, bi in zip(r, b)) / c
    return {"urisk": mean, "se": se, "se_j": se_j, "freward": freward, "frisk": frisk, "x": x,
            "loo": loo}


def topic_risk_ref(r, b, alpha):
    """TR_i = x_i / s_x and TJ_i = (c-1)(theta - theta_(i)) / (sqrt(c) SE_J)."""
    out = urisk_ref(r, b, alpha)
    c = len(r)
    s = out["se"] * math.sqrt(c)
    tr = [xi / s for xi in out["x"]]
    tj = [(c - 1) * (out["urisk"] - t) / (math.sqrt(c) * out["se_j"]) for t in out["loo"]]
    pseudo = [c * out["urisk"] - (c - 1) * t for t in out["loo"]]
    return tr, tj, pseudo


def smooth_ref(d):
    return 1.38426 * d ** 3 - 0.51659 * d ** 2 + 0.11578 * d
