"""Pairs of runs under a risk-sensitive test's own null (or at a given effect on its own scale).

The study's H0 pairs (both runs through one margin) have E[d] = 0, so URisk_alpha =
E[d] + alpha E[min(d, 0)] < 0 there for alpha > 0: TRisk's own null (Dinçer, Macdonald & Ounis
2014; H0: URisk_alpha = 0) is false on them. This module builds pairs for which a risk
statistic's expectation E[v(d)] equals a target exactly under the fitted model -- 0 for type I,
delta for power -- the way the study builds its H1 pairs (`fastrisk.simulate.simireff.h1_transforms`,
the study's ``R/02-margins_transform.R``, sampled as ``R/12-type_2.R`` samples them):

- baselines b: the bottom 75 % of runs by margin mean (the top round(0.25 S) dropped), as there;
- experimental runs e: the 10 other runs whose mean is nearest mu_b + m0, where m0 is a first
  cheap estimate of the mean difference that gives E[v(d)] = target: the root of the Gaussian
  expectation g(m) = E[v(N(m, s^2))] = target (closed forms: `gaussian_expectation`), s the
  median over b's 10 nearest runs in mean of the standard deviation of their observed
  differences with b. This is the one change to the study's rule, which orders the runs by
  |mu - mu_b - delta| with delta known (``order(abs(mu - effi$mean - delta))``): here the
  target mean difference depends on the pair's joint law and is only known after calibration;
- e's own margin transformed by simIReff's ``effTransform`` (`SimMargin.transformed`) to the
  mean mu_e that solves E[v(E - B)] = target under the pair's joint law (b's margin, e's
  transformed margin, the pair's fitted copula, columns swapped when it was fitted for (e, b),
  exactly what `fastrisk.simulate.studies` samples). mu_e is found by Newton steps on the
  requested mean, each step one ``effTransform`` (R's optimizer, as the study's), started at
  the root along effTransform's own path computed cheaply (`_surrogate_mean`); the slope is
  E[v'(d)], the derivative of E[v(d)] under a shift of e, then the secant.
  A pair is accepted when |E[v(d)] - target| <= `TOL` within `MAX_STEPS` transformations;
  otherwise (or where ``effTransform`` fails, as for H1) it is skipped and counted. One
  deviation from the study's ``try``: a search of ``effTransform`` that costs more than
  `BUDGET` evaluations of its integrand counts as failed (a few searches on truncated-normal
  margins cost 10-100 times the others; what a search returns is always effTransform's margin).

E[v(d)] is integrated numerically (`PairLaw`), not simulated. Conditionally on b's copula
uniform u, P(E <= y | u) = h(u, G(y)) with h the copula's h-function (pyvinecopulib's ``hfunc1``
/ ``hfunc2``, closed forms) and G e's tabulated CDF, so

    E[v(d)] = sum_i w_i sum_k [h(u_i, G(y_{k+1})) - h(u_i, G(y_k))] E[v(y - beta_i) | y in cell k]

with beta_i = F_b^-1(u_i) at the midpoints of `NODES` equal strata of u (split at b's atoms
for a discrete margin), e's cells its tabulated grid coarsened to `CELLS` intervals (a
discrete margin: its support points, exactly), the within-cell expectation exact for a uniform
cell through the antiderivative of v, and h tabulated once per pair on `GRID_G` points of g
(denser near 0 and 1) and interpolated linearly: the table does not depend on e's transform,
so each Newton step costs array arithmetic, not h-function calls. Its error against the same
rule with four times the strata and g points is about 3e-6 on AP pairs; the tests check it
against a plain Monte-Carlo of the sampler and, on a Gaussian joint law, against the closed
form E[min(d, 0)] = mu Phi(-mu/sigma) - sigma phi(mu/sigma) (tests/test_simulate_risk_null.py).

Value functions (`RiskNull`): ``urisk`` at alpha, v(d) = d + alpha min(d, 0) (URisk_alpha,
Dinçer et al. 2014); ``smooth``, v(d) = s(d) = 1.38426 d^3 - 0.51659 d^2 + 0.11578 d (Benham,
Moffat & Culpepper 2019, `fastrisk.core.values`), null E[s(d)] = 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from fastrisk.errors import InputError
from fastrisk.simulate._r import rks
from fastrisk.simulate._r.roptim import EPS, optim_lbfgsb
from fastrisk.simulate.copulas import bicop
from fastrisk.simulate.simireff import TRANSFORM_TOL, UNREACHED

#: Strata of b's copula uniform (before merging the u of b's scores), two Gauss-Legendre points each.
NODES = 48
#: A stratum of u narrower than this between two atoms of a discrete b gets one node, its
#: midpoint (error O(width^3) of h's second derivative in u: on RR and P@10 pairs E[v(d)] moves
#: by < 1e-8; RR's many atoms of little mass make a third of its strata this narrow).
NARROW = 1e-5
#: Cells of e's continuous margin (its 4096-interval table coarsened).
CELLS = 512
#: Points of the h-function table in g (e's copula uniform).
GRID_G = 513
#: A calibrated pair's |E[v(d)] - target| is at most this (effTransform itself reaches its
#: target mean to ~1e-5, so E[v(d)] moves by up to (1 + alpha) 1e-5 between two requests).
TOL = 1e-4
#: ``effTransform`` calls per pair at most.
MAX_STEPS = 6
#: A search of ``effTransform`` (`transformed`) whose integrals have computed more values of
#: qfun than this counts as failed (`NUDGES` are tried, then the pair is skipped). Most searches
#: cost 5e3 to 5e4; on an adhoc5_ap sample 17 of 117 cost more than 1e5 (up to 1.4e6: truncated
#: normal margins whose integrals run to R's 500 subdivisions), and their CPU was 3/4 of the
#: searches'. Capping them there cut that sample's CPU by 40 % and skipped 5 more of its 150
#: candidate pairs.
BUDGET = 1e5
#: Neighbours per baseline (the study's ``js[1:10]``).
NEIGHBOURS = 10
#: The smooth value function's coefficients (Benham, Moffat & Culpepper 2019).
SMOOTH = (1.38426, -0.51659, 0.11578)


@dataclass(frozen=True)
class RiskNull:
    """The statistic E[v(d)] of a risk-sensitive test: ``family`` "urisk" (v(d) = d + alpha
    min(d, 0)) or "smooth" (v = s, Benham et al.'s cubic)."""

    family: str
    alpha: float = 0.0

    def __post_init__(self):
        if self.family not in ("urisk", "smooth"):
            raise InputError(f"risk null family must be 'urisk' or 'smooth', got {self.family!r}")
        if not (math.isfinite(self.alpha) and self.alpha >= 0):
            raise InputError(f"risk null alpha must be finite and >= 0, got {self.alpha!r}")

    @property
    def name(self) -> str:
        """``URisk_1`` (alpha = 1), ``URisk_s`` (smooth)."""
        return "URisk_s" if self.family == "smooth" else f"URisk_{self.alpha:g}"

    def key(self, target: float) -> str:
        """Cache key of its calibration at ``target``, e.g. ``urisk:1:0``, ``smooth:0:0.05``."""
        return f"{self.family}:{self.alpha:g}:{float(target):.10g}"

    def value(self, d):
        """v(d)."""
        d = np.asarray(d, dtype=np.float64)
        if self.family == "smooth":
            a3, a2, a1 = SMOOTH
            return ((a3 * d + a2) * d + a1) * d
        return d + self.alpha * np.minimum(d, 0.0)

    def slope(self, d):
        """v'(d) (the right derivative at 0)."""
        d = np.asarray(d, dtype=np.float64)
        if self.family == "smooth":
            a3, a2, a1 = SMOOTH
            return (3 * a3 * d + 2 * a2) * d + a1
        return 1.0 + self.alpha * (d < 0)

    def antiderivative(self, d):
        """V(d) = int_0^d v."""
        d = np.asarray(d, dtype=np.float64)
        if self.family == "smooth":
            a3, a2, a1 = SMOOTH
            return ((a3 / 4 * d + a2 / 3) * d + a1 / 2) * d * d
        return 0.5 * d * d + 0.5 * self.alpha * np.minimum(d, 0.0) ** 2


def gaussian_expectation(null: RiskNull, m, s):
    """E[v(D)] for D ~ N(m, s^2), closed forms: URisk_alpha = m + alpha (m Phi(-m/s) - s phi(m/s))
    (E[min(D, 0)] = m Phi(-m/s) - s phi(m/s)); smooth: from E[D^2] = m^2 + s^2 and
    E[D^3] = m^3 + 3 m s^2."""
    m = np.asarray(m, dtype=np.float64)
    if null.family == "smooth":
        a3, a2, a1 = SMOOTH
        return a3 * (m ** 3 + 3 * m * s * s) + a2 * (m * m + s * s) + a1 * m
    z = m / s
    return m + null.alpha * (m * special.ndtr(-z) - s * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi))


def newton_root(f, x0: float, target: float, *, tol: float = TOL, steps: int = MAX_STEPS, lo=-np.inf, hi=np.inf):
    """Newton's method for f = ``target``: ``f(x)`` returns (x', value, slope) at a point x'
    it chose near x (x itself, or a neighbour where x cannot be evaluated), or None. At most
    ``steps`` evaluations, steps clipped to [lo, hi]; once two points are known the secant
    slope replaces f's. Returns (x', value, evaluations) of the point closest to the target
    (None if the first evaluation fails)."""
    x = float(x0)
    best = None
    prev = None
    for k in range(1, steps + 1):
        got = f(x)
        if got is None:
            return best
        x, val, slope = got
        if best is None or abs(val - target) < abs(best[1] - target):
            best = (x, float(val), k)
        if abs(val - target) <= tol:
            return best
        if prev is not None and prev[0] != x and prev[1] != val:
            secant = (val - prev[1]) / (x - prev[0])
            slope = secant if secant > 0 else slope
        prev = (x, val)
        if not slope > 0:
            return best
        x = min(max(x + (target - val) / slope, lo), hi)
    return best


def gaussian_shift(null: RiskNull, s: float, target: float) -> float:
    """m with E[v(N(m, s^2))] = target (the first cheap estimate of a pair's mean difference)."""
    s = max(float(s), 1e-6)

    def g(m):
        return float(gaussian_expectation(null, m, s)) - target

    lo, hi = -1.0, 1.0
    while g(lo) > 0:
        lo *= 2
    while g(hi) < 0:
        hi *= 2
    return float(optimize.brentq(g, lo, hi, xtol=1e-14, rtol=1e-14))


def _g_grid(n: int) -> np.ndarray:
    t = np.linspace(0.0, 1.0, n)
    return 0.5 * (1.0 - np.cos(np.pi * t))


class PairLaw:
    """The joint law of (B, E) for a baseline margin, a copula and which column is b; E's
    margin is given per call (`expectation`). See the module docstring for the quadrature."""

    def __init__(self, b_margin, copula, b_first: bool, *, nodes: int = NODES, grid: int = GRID_G,
                 cells: int = CELLS):
        self.cells = cells
        self._means = {}  # (null, e's grid) -> cell means of v and v' given each node (`expectation`)
        # strata of u: a grid denser near 0 and 1 (where tail dependence makes h steep) merged
        # with the u of equally spaced scores of b (where its quantile is steep); a discrete b:
        # split at its atoms, so beta is constant within each stratum
        if b_margin.continuous:
            step = max(1, (len(b_margin.points) - 1) // nodes)
            at = b_margin.cdf[::step]
        else:
            at = b_margin.cdf
        cuts = np.unique(np.concatenate([_g_grid(nodes + 1), np.clip(at, 0.0, 1.0)]))
        w = np.diff(cuts)
        keep = w > 0
        mid, half = 0.5 * (cuts[:-1] + cuts[1:])[keep], 0.5 * w[keep]
        # two Gauss-Legendre points per stratum (beta is smooth within one: b's atoms are cut
        # points); a discrete b: one (the midpoint) in a stratum narrower than `NARROW`
        two = np.ones(len(half), dtype=bool) if b_margin.continuous else half >= NARROW / 2
        self.u = np.concatenate([mid[two] - half[two] / math.sqrt(3.0), mid[two] + half[two] / math.sqrt(3.0),
                                 mid[~two]])
        self.w = np.concatenate([half[two], half[two], 2 * half[~two]])
        self.beta = b_margin.quantile(self.u)
        self.g = _g_grid(grid)
        U = np.repeat(self.u, grid)
        G = np.tile(self.g, len(self.u))
        if b_first:  # P(U2 <= g | U1 = u)
            h = copula.hfunc1(np.column_stack([U, G]))
        else:  # copula fitted for (e, b): P(U1 <= g | U2 = u)
            h = copula.hfunc2(np.column_stack([G, U]))
        h = np.asarray(h, dtype=np.float64).reshape(len(self.u), grid)
        h[:, 0], h[:, -1] = 0.0, 1.0
        self.h = np.maximum.accumulate(np.clip(h, 0.0, 1.0), axis=1)

    def _cells(self, e_margin):
        """(cell probabilities given each node (n, K), cell bounds y0, y1 (K,), discrete?)."""
        if e_margin.continuous:
            step = max(1, (len(e_margin.points) - 1) // self.cells)
            y = e_margin.points[::step]
            G = np.clip(e_margin.cdf[::step], 0.0, 1.0)
        else:  # e's atoms of mass 0 keep it under every transform (a beta CDF of equal values): left out
            keep = _atoms(e_margin)
            y = e_margin.points[keep]
            G = np.clip(e_margin.cdf[keep], 0.0, 1.0)
        j = np.clip(np.searchsorted(self.g, G, side="right") - 1, 0, len(self.g) - 2)
        t = (G - self.g[j]) / (self.g[j + 1] - self.g[j])
        H = self.h[:, j] * (1.0 - t) + self.h[:, j + 1] * t
        if e_margin.continuous:
            H[:, 0], H[:, -1] = 0.0, 1.0
            return np.diff(H, axis=1), y[:-1], y[1:], False
        H[:, -1] = 1.0
        return np.diff(H, axis=1, prepend=0.0), y, y, True

    def expectation(self, null: RiskNull, e_margin) -> tuple[float, float]:
        """(E[v(E - B)], E[v'(E - B)]) with E through ``e_margin`` (a `SimMargin`). The cells'
        means of v and v' depend on e's grid, not on its transform: computed once per null and
        grid, and every transform of e (each Newton step) only weighs them anew."""
        P, y0, y1, discrete = self._cells(e_margin)
        key = (null, discrete, y0.tobytes(), y1.tobytes())
        if key not in self._means:
            b = self.beta[:, None]
            if discrete:
                ev = null.value(y0[None, :] - b)
                es = null.slope(y0[None, :] - b)
            else:
                width = (y1 - y0)[None, :]
                ev = (null.antiderivative(y1[None, :] - b) - null.antiderivative(y0[None, :] - b)) / width
                es = (null.value(y1[None, :] - b) - null.value(y0[None, :] - b)) / width
            self._means[key] = ev, es
        ev, es = self._means[key]
        return float(self.w @ (P * ev).sum(axis=1)), float(self.w @ (P * es).sum(axis=1))


def _atoms(m) -> np.ndarray:
    """The support points of a discrete margin that carry mass under its own CDF, and its last
    point (where `PairLaw` puts what its CDF leaves below 1): a transform ``with_beta`` keeps
    the others' mass 0 (equal CDF values stay equal under a beta CDF), so their cells add 0."""
    keep = np.diff(m.cdf, prepend=0.0) > 0
    keep[-1] = True
    return keep


#: Where ``effTransform`` fails at a requested mean, the neighbours tried instead (offsets).
NUDGES = (0.0, 1e-3, -1e-3, 3e-3)


def _surrogate(e_margin, s: float):
    """effTransform's path, cheaply: from (a, b) = (1, 1) with a, b >= 1 its search raises the
    mean by a alone and lowers it by b alone (the other shape sits on its bound), so
    Beta(1 + s, 1) (s >= 0) or Beta(1, 1 - s) spans the transforms it returns."""
    return e_margin.with_beta(1.0 + s, 1.0) if s >= 0 else e_margin.with_beta(1.0, 1.0 - s)


def _surrogate_mean(law: PairLaw, e_margin, null: RiskNull, target: float) -> float:
    """The first mean requested from effTransform: E[v(d)] = target solved along `_surrogate`
    (no R call: each step is a beta CDF of e's table and an `PairLaw.expectation`), then that
    transform's mean moved by simIReff's ``$mean`` - the tabulated mean of e (what
    effTransform's target refers to). None when that path misses the target by more than
    `fastrisk.simulate.simireff.UNREACHED` (effTransform's own rule for a target out of reach)."""
    own = e_margin.mean - _table_mean(e_margin)

    def f(s):
        t = _surrogate(e_margin, s)
        val, slope = law.expectation(null, t)
        m, h = _table_mean(t), 1e-4
        dm = (_table_mean(_surrogate(e_margin, s + h)) - m) / h
        return s, val, slope * dm

    got = newton_root(f, 0.0, target, tol=TOL / 10, steps=12)
    if abs(got[1] - target) > UNREACHED:  # out of effTransform's reach: skip the pair without R's optimizer
        return None
    return _table_mean(_surrogate(e_margin, got[0])) + own


def _table_mean(m) -> float:
    """The mean of what a margin samples (its tabulated CDF)."""
    if m.continuous:
        return float(np.sum((1.0 - 0.5 * (m.cdf[:-1] + m.cdf[1:])) * np.diff(m.points)))
    return float(np.dot(m.points, np.diff(np.concatenate([[0.0], m.cdf]))))


class _OverBudget(ValueError):
    """A search of `transformed` that has cost more than `BUDGET` values of qfun."""


def transformed(e_margin, target: float, moments: dict, budget: float = math.inf):
    """``e_margin.transformed(target)`` (`SimMargin.transformed`: simIReff's ``effTransform``,
    R's L-BFGS-B from (a, b) = (1, 1) on the squared gap of effTransform_inner's mean, by R's
    ``integrate``, to ``target``), the same margin bit for bit, with those integrals
    (`fastrisk.simulate._r.rks.transformed_moments`, where nearly all of its time goes) kept in
    ``moments`` by (a, b): every search of one margin starts at (1, 1), evaluates R's
    finite-difference gradient there and takes the same first step (L-BFGS-B's first step has
    length 1 along the projected gradient, whose direction depends only on the side of the
    target), so the calls of one margin share about 10 of their 23 integrals. Margins without
    integrals (kernel-beta, discrete: `SimMargin.with_beta`'s mean) go to
    `SimMargin.transformed` itself.

    ``budget``: None (a failed search) once the search's integrals have cost more than this many
    values of qfun (`fastrisk.simulate._r.rks.evaluations`; an integral kept in ``moments``
    counts its cost again, so where a search stops does not depend on what other searches
    computed before it). What it returns otherwise is effTransform's margin, as without it."""
    if e_margin.rdata is None:
        return e_margin.transformed(target)
    target = float(target)
    rdata = e_margin.rdata.copy()
    spent = [0]

    def gap2(p):  # as SimMargin.transformed's
        key = (float(p[0]), float(p[1]))
        if key not in moments:
            try:
                moments[key] = rks.transformed_moments(rdata, key[0], key[1])[0], rks.evaluations()
            except ValueError as exc:  # R's integrate stops: so does every search that gets here
                moments[key] = exc, rks.evaluations()
        got, cost = moments[key]
        spent[0] += cost
        if isinstance(got, ValueError):
            raise got
        if spent[0] > budget:
            raise _OverBudget(f"more than {budget} values of qfun")
        d = got - target
        return d * d

    try:
        res = optim_lbfgsb(gap2, [1.0, 1.0], lower=[1.0, 1.0], factr=TRANSFORM_TOL * TRANSFORM_TOL / EPS)
    except ValueError:
        return None
    if res.convergence != 0:
        return None
    out = e_margin.with_beta(*res.par)
    return out if abs(out.mean - target) <= UNREACHED else None


def calibrate_pair(law: PairLaw, e_margin, null: RiskNull, target: float, memo: dict | None = None):
    """The transformed e (`SimMargin.transformed`) whose pair has E[v(d)] = target: (margin,
    requested mean, achieved E[v(d)], effTransform calls) or None (skipped). Where R's
    optimizer fails at a requested mean, the nearest of `NUDGES` that succeeds is used (the
    next Newton step corrects for it). ``memo``: e's transformations by requested mean (R's
    optimizer is deterministic, so a repeated request -- Newton steps that cycle between a
    mean where it fails and its nudge do -- is answered without calling it again) and, under
    ``"moments"``, its integrals (`transformed`); shared by every pair with this e. ``calls``
    counts the new transformations."""
    memo = {"moments": {}} if memo is None else memo
    made = {"calls": 0}

    def f(mu):
        for off in NUDGES:
            x = min(max(mu + off, 1e-4), 1 - 1e-4)
            if x not in memo:
                memo[x] = transformed(e_margin, x, memo["moments"], BUDGET)
                made["calls"] += 1
            t = memo[x]
            if t is not None:
                made[x] = t
                return (x, *law.expectation(null, t))
        return None

    start = _surrogate_mean(law, e_margin, null, target)
    if start is None:
        return None
    got = newton_root(f, start, target, lo=1e-4, hi=1 - 1e-4)
    if got is None or abs(got[1] - target) > TOL:
        return None
    mu, val, _ = got
    return made[mu], mu, val, made["calls"]


def _spread(values, b: int, mu) -> float:
    """The first estimate's s: the median sd of d over b's `NEIGHBOURS` nearest runs in mean."""
    js = [int(j) for j in np.argsort(np.abs(mu - mu[b]), kind="stable") if j != b][:NEIGHBOURS]
    return float(np.median([np.std(values[j] - values[b], ddof=1) for j in js]))


def protocol_baselines(margins) -> list[int]:
    """The baselines of the study's H1 pairs (``R/02-margins_transform.R``): the bottom 75 % of
    runs by margin mean (the top round(0.25 S) dropped), from the best down."""
    mu = np.array([m.mean for m in margins])
    return [int(v) for v in np.argsort(-mu, kind="stable")[round(len(mu) * 0.25):]]


def null_transforms(margins, copulas: dict, values, specs, baselines=None) -> dict:
    """The calibrated pairs of one collection for each spec (family, alpha, target) of
    ``specs`` (a job of `fastrisk.simulate.fits.prepare_nulls`; see the module docstring):
    {`RiskNull.key`: {"pairs": {baseline: [[e, a, b, mu_e, value], ...]}, "failed": n,
    "calls": effTransform calls of the accepted pairs}}, e's margin transformed
    ``margins[e].with_beta(a, b)``. ``baselines``: a part of `protocol_baselines` (default
    all; the parts' results combine with `merge_transforms`). A pair's h-function table is
    built once for every spec that picked it; e's transformations and their integrals are
    shared by all its pairs (`calibrate_pair`)."""
    nulls = [(RiskNull(f, float(a)), float(t)) for f, a, t in specs]
    mu = np.array([m.mean for m in margins])
    values = np.asarray(values, dtype=np.float64)
    if baselines is None:
        baselines = protocol_baselines(margins)
    out = {null.key(t): {"pairs": {}, "failed": 0, "calls": 0} for null, t in nulls}
    cops, memos = {}, {}
    for i in sorted(int(v) for v in baselines):
        s_i = _spread(values, i, mu)
        picks = []
        for null, t in nulls:
            m0 = gaussian_shift(null, s_i, t)
            picks.append([int(j) for j in np.argsort(np.abs(mu - mu[i] - m0), kind="stable") if j != i][:NEIGHBOURS])
        for j in sorted({j for p in picks for j in p}):
            key = f"{min(i, j)},{max(i, j)}"
            if key not in cops:
                cops[key] = bicop(copulas[key])
            law = PairLaw(margins[i], cops[key], b_first=i < j)
            for (null, t), p in zip(nulls, picks):
                if j not in p:
                    continue
                doc = out[null.key(t)]
                got = calibrate_pair(law, margins[j], null, t, memos.setdefault(j, {"moments": {}}))
                if got is None:
                    doc["failed"] += 1
                    continue
                tr, mu_e, val, calls = got
                doc["calls"] += calls
                doc["pairs"].setdefault(str(i), []).append([j, tr.transform[0], tr.transform[1], mu_e, val])
        for (null, t), p in zip(nulls, picks):  # partners in the study's order (nearest first)
            lst = out[null.key(t)]["pairs"].get(str(i))
            if lst:
                lst.sort(key=lambda r: p.index(r[0]))
    return out


def merge_transforms(parts) -> dict:
    """`null_transforms`'s results for disjoint parts of the baselines, as one call on all of
    them gives: pairs by baseline (ascending), failures and calls summed."""
    out = {}
    for part in parts:
        for key, doc in part.items():
            got = out.setdefault(key, {"pairs": {}, "failed": 0, "calls": 0})
            got["pairs"].update(doc["pairs"])
            got["failed"] += doc["failed"]
            got["calls"] += doc["calls"]
    for doc in out.values():
        doc["pairs"] = dict(sorted(doc["pairs"].items(), key=lambda kv: int(kv[0])))
    return out
