"""A preliminary check of the risk inferences' type I error under the empirical-population null
(issue #37, item 3b): a real pair's topics are the population, x shifted so that the population
URisk_alpha is exactly 0, n topics drawn with replacement; per pair, the rejection rate at level
0.05 (two-sided) of every inference of `fastrisk.core.inference.INFERENCES`.

    python docs/_scripts/inference_sanity.py [PAIRS] [TRIALS] [ALPHA] [TOPICS]

Not the study (item 4): one collection (TREC 2012 Web, ERR@20, 48 runs and the baseline
indriCASP), random ordered pairs, the exact test with 100 orderings, the bootstrap with 399
resamples.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import fastrisk
from fastrisk.core.inference import INFERENCES, pvalues

PAIRS, TRIALS, ALPHA, N = (int(a) if i != 2 else float(a) for i, a in enumerate(sys.argv[1:5])) if len(
    sys.argv) > 4 else (200, 2000, 5.0, 25)
REPLICATES = {"exact": 100, "bootstrap-t-symmetric": 399, "bootstrap-t-double": 99}  # the double: R = C = 99


def main():
    m, b = fastrisk.data.datasets.trec2012_web("err20")
    m = m.with_system("indriCASP", [b[t] for t in m.topics])
    rng = np.random.default_rng(37)
    S = m.n_systems
    pairs = []
    while len(pairs) < PAIRS:
        e, base = rng.choice(S, 2, replace=False)
        d = m.values[e] - m.values[base]
        if (e, base) not in pairs and np.ptp(d) > 0:
            pairs.append((e, base))
    rates = {name: np.empty(PAIRS) for name in INFERENCES}
    t0 = time.perf_counter()
    for k, (e, base) in enumerate(pairs):
        d = m.values[e] - m.values[base]
        x = d + ALPHA * np.minimum(d, 0.0)
        mu = x.mean()
        pop = x - mu  # population URisk_alpha = 0 exactly
        idx = rng.integers(0, len(pop), size=(TRIALS, N))
        X = pop[idx]
        flat = np.ptp(X, axis=1) > 0  # a trial whose n draws are all one topic has no test: counted as no rejection
        for name, spec in INFERENCES.items():
            with np.errstate(divide="ignore", invalid="ignore"):
                p = pvalues(X[flat], spec, bounds=(-(1.0 + ALPHA) - mu, 1.0 - mu), replicates=REPLICATES.get(name, 0),
                            seed=k)
            rates[name][k] = np.sum(p <= 0.05) / TRIALS
    print(f"TREC 2012 Web ERR@20, {PAIRS} ordered pairs, alpha = {ALPHA:g}, n = {N}, {TRIALS} trials a pair, "
          f"level 0.05 two-sided ({time.perf_counter() - t0:.0f} s)")
    print("| inference | mean rate | share of pairs > 0.075 | worst pair | pairs > 0.05 + 3 SE |")
    print("|:--|--:|--:|--:|--:|")
    se = np.sqrt(0.05 * 0.95 / TRIALS)
    for name, r in rates.items():
        print(f"| {name} | {r.mean():.4f} | {np.mean(r > 0.075):.3f} | {r.max():.4f} | {np.mean(r > 0.05 + 3 * se):.3f} |")


if __name__ == "__main__":
    main()
