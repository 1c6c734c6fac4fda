"""The model-calibrated TRisk (`fastrisk.simulate.calibrated_trisk`, issue #37 item 2): the cost of
one call, and a small check of its level under the empirical-population null.

    python docs/_scripts/calibrated_check.py [TRIALS] [REPLICATES] [PAIRS]    (default 200 999 3)

1. **Cost**: one call on one pair of adhoc8_ap (AP) and one of web2012_err20 (ERR@20), split into
   the fit (simIReff margins and the copula, `CopulaNull`), the calibration (e's effTransform to
   URisk_5 = 0) and the simulation (R samples of the pair's n = 50 topics and their T*), at
   R = 999 and at the default R (`REPLICATES`); CPU seconds (process time) and wall seconds, the
   median of 5. (``cost`` only: ``python docs/_scripts/calibrated_check.py 0``.)
2. **Level**: for PAIRS pairs of adhoc8_ap, the empirical-population null at alpha = 5
   (`fastrisk.simulate.empirical.population(d, 5, 0)`: e shifted by the constant c that makes
   the population URisk_5 exactly 0; the pairs are taken where c > 0 and e + c <= 1 on every
   topic, so the shifted scores stay in [0, 1] and the margins can be fitted), TRIALS trials of
   n = 25 topics drawn with replacement (`fastrisk.simulate.empirical.draw`'s streams); each trial
   calls `calibrated_trisk` on its 25 topics (so it fits its own model, as a user's call does)
   with R = REPLICATES, and `t` (`fastrisk.core.inference.risk_pvalue(x, inference="t")`) on the
   same x; the rejection rates at level 0.05, two-sided, with their binomial SE. A trial whose 25
   draws have no variation, or whose model cannot be calibrated, counts as no rejection (said).
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from fastrisk._runtime.threads import limit_threads
from fastrisk.core.inference import risk_pvalue
from fastrisk.data.datasets import trec_matrix
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.errors import InputError
from fastrisk.simulate import calibrated_trisk, empirical
from fastrisk.simulate.calibrated import CHUNK, REPLICATES, trisk_statistics
from fastrisk.simulate.measures import canonical_measure
from fastrisk.simulate.nulls import RiskNull
from fastrisk.simulate.pair import CopulaNull

TRIALS, R, PAIRS = (int(a) for a in (sys.argv[1:4] + ["200", "999", "3"][len(sys.argv[1:4]):]))
ALPHA, N, LEVEL = 5.0, 25, 0.05


def _ranked(m, a: int, b: int) -> tuple[str, str]:
    """(baseline, system): the runs of mean rank a and b (0: the best)."""
    o = np.argsort(-m.values.mean(axis=1), kind="stable")
    return m.systems[o[a]], m.systems[o[b]]


def cost(name: str, base: str, system: str) -> None:
    m = trec_matrix(name)
    key = canonical_measure(m.measure)
    rows = m.values[[m.systems.index(base), m.systems.index(system)]]
    null = RiskNull("urisk", ALPHA)
    n = rows.shape[1]
    for reps in (999, REPLICATES):
        cpu, wall = [], []
        for k in range(5):
            marks = [(time.process_time(), time.perf_counter())]
            cn = CopulaNull(rows, key)
            marks.append((time.process_time(), time.perf_counter()))
            cn.calibrate(ALPHA, 0.0, null)
            marks.append((time.process_time(), time.perf_counter()))
            with limit_threads(None, work=2 * reps * n):  # as calibrated_trisk draws
                for lo in range(0, reps, CHUNK):
                    idx = np.arange(lo, min(lo + CHUNK, reps), dtype=np.int64)
                    trisk_statistics(null.value(cn.draw(0.0, 0.0, n, 1 + k, idx)))
            marks.append((time.process_time(), time.perf_counter()))
            calibrated_trisk(m, base, system, alpha=ALPHA, replicates=reps, seed=1 + k)
            marks.append((time.process_time(), time.perf_counter()))
            cpu.append(np.diff([c for c, _ in marks]))
            wall.append(np.diff([w for _, w in marks]))
        c, w = np.median(cpu, axis=0), np.median(wall, axis=0)
        print(f"cost | {name} | {system} vs {base} | b {cn.b.family}, e {cn.e.family}, copula {cn.spec['family']} | "
              f"R = {reps} | CPU (wall) s, median of 5: fit {c[0]:.2f} ({w[0]:.2f}) | calibrate {c[1]:.2f} ({w[1]:.2f}) "
              f"| simulate {c[2]:.2f} ({w[2]:.2f}) | whole call {c[3]:.2f} ({w[3]:.2f})", flush=True)


def level_pairs(m, count: int) -> list[tuple[int, int, float]]:
    """(baseline row, system row, shift c) of the first ``count`` pairs (by mean rank, a fixed
    walk) whose shift keeps e + c in [0, 1]."""
    o = np.argsort(-m.values.mean(axis=1), kind="stable")
    out = []
    for a, b in ((30, 12), (25, 15), (40, 20), (60, 35), (20, 10), (50, 45), (70, 30), (15, 5), (80, 60)):
        bi, ei = int(o[a]), int(o[b])
        d = m.values[ei] - m.values[bi]
        c = empirical.risk_shift(d, ALPHA, 0.0)
        if c > 0 and (m.values[ei] + c).max() <= 1.0 and len(out) < count:
            out.append((bi, ei, c))
    return out


def level(name: str = "adhoc8_ap") -> None:
    m = trec_matrix(name)
    N_all = m.values.shape[1]
    for bi, ei, c in level_pairs(m, PAIRS):
        b, e = m.values[bi], m.values[ei] + c
        pop = empirical.risk_value(e - b, ALPHA)  # = empirical.population(d, ALPHA, 0)[0]
        assert abs(pop.mean()) <= 1e-12
        seed = 3700 + bi * 1000 + ei
        idx = empirical.draw(np.arange(N_all, dtype=np.float64), N, seed, np.arange(TRIALS)).astype(np.int64)
        X = pop[idx]  # what empirical.draw(pop, N, seed, trials) draws
        flat = np.ptp(X, axis=1) == 0
        t_rej = (risk_pvalue(X, inference="t") <= LEVEL) & ~flat
        c_rej = np.zeros(TRIALS, dtype=bool)
        failed = 0
        t0 = time.process_time()
        for k in range(TRIALS):
            if flat[k]:
                continue
            sm = ScoreMatrix(np.vstack([b[idx[k]], e[idx[k]]]), ["b", "e"], [str(i) for i in range(N)], m.measure)
            try:
                res = calibrated_trisk(sm, "b", "e", alpha=ALPHA, replicates=R, seed=k)
            except InputError:
                failed += 1
                continue
            c_rej[k] = float(res.pvalue) <= LEVEL
        cpu = time.process_time() - t0

        def rate(r):
            p = r.mean()
            return f"{p:.3f} ± {math.sqrt(p * (1 - p) / TRIALS):.3f}"

        print(f"level | {name} | {m.systems[ei]} vs {m.systems[bi]} (e shifted by {c:+.4f}) | n = {N}, alpha = "
              f"{ALPHA:g}, level {LEVEL:g} two-sided, {TRIALS} trials, R = {R} | calibrated {rate(c_rej)} | "
              f"t {rate(t_rej)} | {int(flat.sum())} without variation, {failed} not calibrated | "
              f"{cpu / TRIALS:.2f} s CPU per trial", flush=True)


if __name__ == "__main__":
    t0 = time.process_time()
    calibrated_trisk("adhoc8_ap", "run10", "run20", replicates=99, seed=0)  # imports, compiled kernels
    for name in ("adhoc8_ap", "web2012_err20"):
        cost(name, *_ranked(trec_matrix(name), 30, 12))
    if TRIALS:
        level()
    print(f"total CPU {time.process_time() - t0:.0f} s")
