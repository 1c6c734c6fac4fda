"""The inferences of a risk statistic: how a p-value of URisk_α = E[x] = 0 is formed from the
risk-reward scores x_i = d_i + α·min(d_i, 0) of the topics.

`INFERENCES` is the one registry (name, what it assumes, whether its level is exact, whether it
resamples, its citation, its kernel); `fastrisk.risk`, `fastrisk.baseline_table`, the CLI and
the sweeps take its names as ``inference=``. The default ``t`` is the published TRisk (Dinçer,
Macdonald & Ounis, SIGIR 2014): Student's t with c − 1 degrees of freedom, which
docs/risk-tests.md measured liberal at α ≥ 2 with fewer than 100 topics (`t_level_note`).

It lives in `fastrisk.core` because `fastrisk.core.urisk` and `fastrisk.core.tables` call it
and it imports only the kernels and `fastrisk._runtime`: in `fastrisk.inference` (a layer
above core) the risk functions could not reach it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastrisk._kernels import _interrupt
from fastrisk._kernels import riskinference as _k
from fastrisk._runtime.rng import resolve_seed
from fastrisk._runtime.threads import run
from fastrisk._runtime.tstat import t_pvalue
from fastrisk._runtime.validation import choice, level
from fastrisk._runtime.validation import replicates as _replicates
from fastrisk.errors import InputError

ALTERNATIVES = ("two-sided", "greater", "less")
_ALT = {"two-sided": _k.ALT_TWO, "greater": _k.ALT_GREATER, "less": _k.ALT_LESS}


@dataclass(frozen=True)
class RiskInference:
    """One way of testing E[x] = 0 from a row of risk-reward scores.

    ``name``: the ``inference=`` value; ``assumes``: what its level rests on; ``exact``: its
    type I error is at most the level for every law and every n (within what it assumes);
    ``resampling``: it draws random numbers (``replicates``, ``rng``); ``citation``: the
    paper; ``kernel``: the compiled function (`fastrisk._kernels.riskinference`);
    ``default_replicates``: resamples or orderings when it resamples; ``levels``: 2 for a
    double (iterated) bootstrap, whose second level draws as many resamples of each first-level
    resample as the first level draws of the data (`inner_replicates`: C = R = ``replicates``),
    so that one ``replicates`` sets both counts on every path and the second level's p-values
    are those of the same Monte Carlo procedure as the observed one.

    References
    ----------
    Dinçer, B. T., Macdonald, C. & Ounis, I. (2014). Hypothesis testing for the risk-sensitive
    evaluation of retrieval systems. SIGIR 2014.

    Waudby-Smith, I. & Ramdas, A. (2024). Estimating means of bounded random variables by
    betting. Journal of the Royal Statistical Society, Series B 86(1), 1-27.

    Davison, A. C. & Hinkley, D. V. (1997). Bootstrap Methods and their Application, §4.5.
    Cambridge University Press.

    Examples
    --------
    >>> import fastrisk
    >>> spec = fastrisk.INFERENCES["exact"]
    >>> spec.exact, spec.resampling, spec.default_replicates
    (True, True, 1000)
    >>> sorted(fastrisk.INFERENCES)[:3]
    ['bootstrap-t-double', 'bootstrap-t-symmetric', 'edgeworth']
    >>> fastrisk.INFERENCES["bootstrap-t-double"].inner_replicates(499)
    499
    """

    name: str
    assumes: str
    exact: bool
    resampling: bool
    citation: str
    kernel: str
    default_replicates: int = 0
    levels: int = 1

    def inner_replicates(self, replicates: int) -> int:
        """Second-level resamples C of each first-level one when ``replicates`` = R: R for a
        double bootstrap, 0 for one level. C = R rather than fewer (the economy of Booth & Hall
        1994, Biometrika 81, 331-340): p_adj counts the second-level p-values
        u* = (1 + k)/(C + 1) at most p = (1 + j)/(R + 1); with C = R both are p-values of one
        Monte Carlo procedure (P(u* ≤ p) = p when u* is uniform on its grid), with C < R u* lies
        on a coarser grid and the test turns liberal, an O(1/C) error (measured on 6,000 rows of
        25 N(0, 1) scores, rates at 0.05 two-sided / greater / less: 0.047 / 0.049 / 0.055 with
        C = R = 99 and 0.049 / 0.049 / 0.052 with C = R = 199; 0.061 / 0.063 / 0.067 with R = 99,
        C = 24 and 0.058 / 0.059 / 0.059 with R = 199, C = 49; Monte Carlo SE 0.003)."""
        return int(replicates) if self.levels == 2 else 0


#: The registry of risk inferences, by name.
INFERENCES: dict[str, RiskInference] = {r.name: r for r in (
    RiskInference("t", "x̄ approximately normal: Student's t with c − 1 df (liberal for skewed x)", False, False,
                  "Dinçer, Macdonald & Ounis (SIGIR 2014), TRisk", "fastrisk._kernels.risk (TRisk)"),
    RiskInference("exact", "topics i.i.d. (exchangeable) and scores within `score_bounds`; nothing else", True, True,
                  "Waudby-Smith & Ramdas (JRSS B 2024), betting with predictable plug-in bets, hedged",
                  "fastrisk._kernels.riskinference.betting", 1000),
    RiskInference("edgeworth", "the two-term Edgeworth expansion of the studentised mean, moments estimated",
                  False, False, "Hall (1992), The Bootstrap and Edgeworth Expansion, §2.6",
                  "fastrisk._kernels.riskinference.edgeworth"),
    RiskInference("johnson", "one-term skewness correction of t (Cornish-Fisher), Student's t with c − 1 df",
                  False, False, "Johnson (1978), JASA 73, 536-544", "fastrisk._kernels.riskinference.johnson"),
    RiskInference("hall", "Hall's monotone cubic transformation removing the n^-1/2 skewness term, normal",
                  False, False, "Hall (1992), JRSS B 54, 221-228", "fastrisk._kernels.riskinference.hall"),
    RiskInference("bootstrap-t-symmetric", "the bootstrap law of |T*| approximates that of |T| (error O(n^-2))",
                  False, True, "Hall (1988), Ann. Statist. 16, 927-953",
                  "fastrisk._kernels.riskinference.bootstrap_t_symmetric", 2000),
    RiskInference("el-bartlett", "empirical likelihood ratio ~ χ²₁ after Bartlett correction (error O(n^-2))",
                  False, False, "Owen (1988); DiCiccio, Hall & Romano (1991), Ann. Statist. 19, 1053-1061",
                  "fastrisk._kernels.riskinference.el_bartlett"),
    RiskInference("bootstrap-t-double", "the bootstrap worlds' own bootstrap-t p-values calibrate the observed one "
                  "(one iteration: level error n^-1/2 smaller one-sided, n^-1 two-sided)", False, True,
                  "Beran (1988), JASA 83, 687-697; Hall & Martin (1988), Biometrika 75, 661-671; "
                  "Davison & Hinkley (1997), §4.5", "fastrisk._kernels.riskinference.bootstrap_t_double", 499,
                  levels=2),
)}

#: TRisk's t test under its own null, per pair (docs/risk-tests.md, "Every inference, per pair";
#: `python docs/_scripts/inference_study.py note DIR`): its two-sided rejection rate at level 0.05
#: of a true URisk_alpha = 0, by (alpha, topics): (mean over the pairs of runs of the 20 bundled
#: collections under the copula null, mean under the empirical-population null, share of pairs
#: above 0.075 under the copula null, the worst pair's rate there, pairs).
_MEASURED_T = {
    (2, 10): (0.100, 0.127, 0.78, 0.37, 184),
    (2, 25): (0.078, 0.087, 0.48, 0.30, 184),
    (2, 50): (0.065, 0.070, 0.16, 0.16, 184),
    (5, 10): (0.193, 0.210, 0.98, 0.38, 190),
    (5, 25): (0.124, 0.126, 0.95, 0.39, 190),
    (5, 50): (0.089, 0.089, 0.72, 0.22, 190),
    (10, 10): (0.306, 0.306, 0.99, 0.49, 194),
    (10, 25): (0.188, 0.171, 1.00, 0.49, 194),
    (10, 50): (0.120, 0.112, 0.97, 0.30, 194),
}


def t_level_note(alphas, n_topics: int) -> str | None:
    """The one line a `t` table at some α ≥ 2 with fewer than 100 topics carries: the level that
    docs/risk-tests.md measured for TRisk per pair at the measured cell nearest to the table's
    largest α (on a log scale) and its number of topics, and the option that holds the level.
    None when no α ≥ 2 or n ≥ 100."""
    big = sorted({float(a) for a in np.atleast_1d(alphas) if np.isfinite(a) and a >= 2})
    if not big or n_topics >= 100:
        return None
    cell_a = min({a for a, _ in _MEASURED_T}, key=lambda a: abs(np.log(a) - np.log(big[-1])))
    cell_n = min({n for _, n in _MEASURED_T}, key=lambda n: (abs(n - n_topics), n))
    copula, empirical, share, worst, pairs = _MEASURED_T[(cell_a, cell_n)]
    nearest = "" if big == [cell_a] and n_topics == cell_n else (
        f", the measured cell nearest to this table's α = {', '.join(f'{a:g}' for a in big)} and {n_topics} topics")
    return (f"TRisk's t test is liberal at α ≥ 2 with fewer than 100 topics: docs/risk-tests.md measured its "
            f"two-sided rejection rate of a true URisk_{cell_a:g} = 0 at level 0.05 with {cell_n} topics as "
            f"{copula:.3f} on average over {pairs} pairs of runs of the 20 bundled collections (copula null; "
            f"{empirical:.3f} under the empirical-population null), above 0.075 for {share:.0%} of the pairs (worst "
            f"{worst:.2f}){nearest}; inference='exact' holds the level for every distribution of scores in [0, 1].")


def _inference_iv(inference, replicates, rng):
    if not isinstance(inference, str) or inference not in INFERENCES:
        raise InputError(f"`inference` must be one of {', '.join(map(repr, INFERENCES))}, got {inference!r}")
    spec = INFERENCES[inference]
    if spec.resampling:
        B = spec.default_replicates if replicates is None else _replicates(replicates)
        _inner_iv(spec, B)
        return spec, B, resolve_seed(rng).kernel  # (a risk table records no seed)
    return spec, 0, 0


#: The fewest resamples a double bootstrap takes: its p-value is at least 1/(R + 1).
_LEAST_DOUBLE = 19


def _inner_iv(spec: RiskInference, replicates: int) -> int:
    """The second-level count of a double bootstrap (0 for one level); InputError when its
    ``replicates`` are fewer than 19, with which p_adj >= 1/(R + 1) could never reach 0.05."""
    if spec.levels == 2 and replicates < _LEAST_DOUBLE:
        raise InputError(f"inference={spec.name!r} needs `replicates` >= {_LEAST_DOUBLE}, got {replicates}: its "
                         "p-value is at least 1/(replicates + 1), so fewer could never reach 0.05")
    return spec.inner_replicates(replicates)


def _matrix_inference_iv(inference, replicates, rng, n_topics: int):
    """`_inference_iv` for a matrix of ``n_topics`` topics: the default ``t`` without a check,
    any other inference with at least 3 topics (its moments or resamples need them)."""
    if inference == "t" and replicates is None and rng is None:  # the default: nothing to check
        return INFERENCES["t"], 0, 0
    spec, B, seed = _inference_iv(inference, replicates, rng)
    if spec.name != "t" and n_topics < 3:
        raise InputError(f"inference={spec.name!r} needs at least 3 topics; the matrix has {n_topics}")
    return spec, B, seed


def _bounds_iv(score_bounds):
    try:
        lo, hi = (float(v) for v in score_bounds)
    except (TypeError, ValueError):
        raise InputError(f"`score_bounds` must be a pair (low, high) of numbers, got {score_bounds!r}") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise InputError(f"`score_bounds` must be finite with low < high, got {score_bounds!r}")
    return lo, hi


def check_scores_within(values: np.ndarray, lo: float, hi: float, rows, what: str, topics=None) -> None:
    """InputError naming the first row (``rows`` labels) and topic of ``values`` outside [lo, hi]."""
    bad = ~((values >= lo) & (values <= hi))
    if bad.any():
        r, i = (int(v) for v in np.argwhere(bad)[0])
        topic = topics[i] if topics is not None else i
        raise InputError(f"inference='exact' assumes every score within score_bounds [{lo:g}, {hi:g}]; {what} "
                         f"{rows[r]!r} scores {float(values[r, i])!r} on topic {topic!r}. Pass the measure's bounds as "
                         f"`score_bounds=(low, high)`")


def pvalues(X: np.ndarray, spec: RiskInference, *, bounds=None, alternative: str = "two-sided",
            significance: float = 0.05, replicates: int = 0, seed: int = 0, threads=None,
            row0: int = 0) -> np.ndarray:
    """p-values of E[x] = 0 for every row of ``X`` (..., n), validated arguments: ``bounds``
    (lo, hi) of x for ``exact``; row r draws from streams (r + ``row0``)·B + b (a double
    bootstrap's second level ``spec.inner_replicates(B)`` more per stream). Returns an array
    of shape ``X.shape[:-1]``, or ``X.shape[:-1] + (3,)`` (the `ALTERNATIVES` in order, from one
    pass of the kernel) when ``alternative`` is ``"all"``."""
    shape = X.shape[:-1]
    n = X.shape[-1]
    flat = np.ascontiguousarray(X, dtype=np.float64).reshape(-1, n)
    out = np.empty((flat.shape[0], 3))
    inner = _inner_iv(spec, replicates) if spec.resampling else 0
    work = flat.size * max(replicates, 1) * max(inner, 1)
    name = spec.name
    if name == "t":
        mean = flat.mean(axis=1)
        sd = flat.std(axis=1, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = mean / (sd / np.sqrt(n))
        if alternative == "all":
            return np.stack([t_pvalue(t, n - 1, a) for a in ALTERNATIVES], axis=-1).reshape(shape + (3,))
        return t_pvalue(t, n - 1, alternative).reshape(shape)
    if name == "exact":
        lo, hi = bounds
        run(_k.betting, _k.betting_serial, work, threads, flat, float(lo), float(hi), 0.0, float(significance), 0.5,
            np.int64(replicates), np.uint64(seed), np.int64(row0), out)
    elif name == "bootstrap-t-symmetric":
        run(_k.bootstrap_t_symmetric, _k.bootstrap_t_symmetric_serial, work, threads, flat, 0.0,
            np.int64(replicates), np.uint64(seed), np.int64(row0), out)
    elif name == "bootstrap-t-double":  # seconds per row at large counts: Ctrl-C stops it between rows
        with _interrupt.stoppable() as stop:
            run(_k.bootstrap_t_double, _k.bootstrap_t_double_serial, work, threads, flat, 0.0, np.int64(replicates),
                np.int64(inner), np.uint64(seed), np.int64(row0), stop, out)
    else:
        kernel = {"edgeworth": _k.edgeworth, "johnson": _k.johnson, "hall": _k.hall, "el-bartlett": _k.el_bartlett}[name]
        run(kernel, getattr(_k, kernel.__name__ + "_serial"), work, threads, flat, 0.0, out)
    if alternative == "all":
        return out[:, [_ALT[a] for a in ALTERNATIVES]].reshape(shape + (3,))
    return out[:, _ALT[alternative]].reshape(shape)


def risk_pvalue(x, *, inference: str = "t", alternative: str = "two-sided", score_bounds=None,
                significance: float = 0.05, replicates: int | None = None, rng=None,
                threads: int | None = None) -> np.ndarray:
    """p-values of URisk = E[x] = 0 from risk-reward scores ``x`` (topics on the last axis).

    ``inference`` names an entry of `INFERENCES`:

    - ``t``: TRisk = x̄ / (s / √n) against Student's t, n − 1 df (Dinçer et al. 2014).
    - ``exact``: the betting test of Waudby-Smith & Ramdas (2024), valid for every law of
      x on [lo, hi] and every n: y = (x − lo)/(hi − lo), m = −lo/(hi − lo), capital
      K⁺ = Π(1 + λ⁺_t (y_t − m)), K⁻ = Π(1 − λ⁻_t (y_t − m)) with their predictable plug-in
      bets for a fixed n, λ_t = √(2 log(2/level) / (n σ̂²_{t−1})) (log(1/level) one-sided),
      truncated at ½/m and ½/(1 − m) (their hedged capital process); two-sided capital
      max(K⁺, K⁻)/2, one-sided K⁺ or K⁻; averaged over ``replicates`` random orderings of the
      topics so that the answer does not depend on their order; p = min(1, 1/K̄) (Ville's /
      Markov's inequality: P(K̄ ≥ 1/level) ≤ level under E[x] = 0).
      Why this one: W-S&R's betting intervals dominate Hoeffding's and the empirical-Bernstein
      bounds (Maurer & Pontil 2009) in every experiment of theirs, and adapt to the variance,
      which Hoeffding-Bentkus (Bates et al. 2021) uses only through a variance bound and
      Anderson's (1969) and Romano & Wolf's (2000) CDF-band methods not at all; the hedged
      process gives a two-sided test directly.
    - ``edgeworth``: the two-term Edgeworth expansion of the studentised mean (Hall 1992, §2.6):
      P(T ≤ z) ≈ Φ(z) + n^-½ γ(2z² + 1)φ(z)/6
      + n⁻¹ z{κ(z² − 3)/12 − γ²(z⁴ + 2z² − 3)/18 − (z² + 3)/4}φ(z), T = √n x̄/σ̂, σ̂² = m₂.
    - ``johnson``: t_J = [x̄ + m₃/(6s²n) + m₃x̄²/(3s⁴)]/(s/√n), Student's t (Johnson 1978).
    - ``hall``: √n(S + γ̂S²/3 + γ̂²S³/27 + γ̂/(6n)), S = x̄/σ̂, against N(0, 1) (Hall 1992).
    - ``bootstrap-t-symmetric``: (#{|T*| ≥ |T|} + 1)/(B + 1), T* = (x̄* − x̄)/(s*/√n) (Hall 1988).
    - ``bootstrap-t-double``: that p-value calibrated by a second level of resampling (Beran
      1988; Davison & Hinkley 1997, §4.5): for each of the R first-level resamples x*_r,
      C resamples x** of x*_r give u*_r = (1 + #{|T**| ≥ |T*_r|})/(C + 1),
      T** = (x̄** − x̄*_r)/(s**/√n); p_adj = (1 + #{u*_r ≤ p})/(R + 1), R = C = ``replicates``.
      Costs R²·n draws a row: about 6·10⁶ at n = 25 by default.
    - ``el-bartlett``: empirical likelihood ratio W, W/(1 + a/n) against χ²₁,
      a = m₄/(2m₂²) − m₃²/(3m₂³) (Owen 1988; DiCiccio, Hall & Romano 1991).

    Parameters
    ----------
    x : array_like
        Risk-reward scores, topics on the last axis (at least 3).
    inference : str
        A name of `INFERENCES` (default ``"t"``).
    alternative : {"two-sided", "greater", "less"}
        ``greater``: E[x] > 0 (the system is better than its baseline).
    score_bounds : (float, float), optional
        Bounds (lo, hi) that every x lies within; required by ``exact`` (for d of scores in
        [0, 1] at α: (−(1 + α), 1)).
    significance : float
        The level the betting test's bets are tuned to (``exact`` only; its p-value is valid at
        every level).
    replicates : int, optional
        Orderings (``exact``, default 1,000) or bootstrap resamples (default 2,000;
        ``bootstrap-t-double``: R first-level resamples, each resampled R times, default 499,
        at least 19).
    rng : int, SeedSequence or Generator, optional
        Seed of the counter-based draws (the same p-values whatever the threads).
    threads : int, optional
        Numba threads (default: all cores; small jobs run on one).

    Returns
    -------
    numpy.ndarray
        p-values, shape ``x.shape[:-1]``.

    References
    ----------
    Waudby-Smith, I. & Ramdas, A. (2024). Estimating means of bounded random variables by
    betting. JRSS B 86(1), 1-27. Hall, P. (1992). The Bootstrap and Edgeworth Expansion.
    Springer. Johnson, N. J. (1978). Modified t tests and confidence intervals for asymmetrical
    populations. JASA 73, 536-544. Hall, P. (1992). On the removal of skewness by
    transformation. JRSS B 54, 221-228. Hall, P. (1988). Theoretical comparison of bootstrap
    confidence intervals. Ann. Statist. 16, 927-953. DiCiccio, T., Hall, P. & Romano, J.
    (1991). Empirical likelihood is Bartlett-correctable. Ann. Statist. 19, 1053-1061. Beran, R.
    (1988). Prepivoting test statistics: a bootstrap view of asymptotic refinements. JASA 83,
    687-697. Hall, P. & Martin, M. A. (1988). On bootstrap resampling and iteration. Biometrika
    75, 661-671. Davison, A. C. & Hinkley, D. V. (1997). Bootstrap Methods and their
    Application, §4.5. Cambridge University Press.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.core.inference import risk_pvalue
    >>> m, b = fastrisk.data.datasets.trec2012_web("err20")
    >>> x = fastrisk.risk_scores(m, b, alpha=5).x[0]          # [system, topic]
    >>> p = risk_pvalue(x, inference="exact", score_bounds=(-6, 1), rng=1)
    >>> p.shape, bool(((0 <= p) & (p <= 1)).all())
    ((48,), True)
    """
    X = np.asarray(x, dtype=np.float64)
    spec, B, seed = _inference_iv(inference, replicates, rng)
    choice(alternative, "alternative", ALTERNATIVES)
    level(significance)
    if X.ndim == 0 or X.shape[-1] < 3:
        raise InputError(f"a risk inference needs at least 3 topics; `x` has {0 if X.ndim == 0 else X.shape[-1]}")
    if not np.isfinite(X).all():
        raise InputError("`x` must be finite")
    flat = X.reshape(-1, X.shape[-1])
    if spec.name != "t" and (zero := np.flatnonzero((flat == 0.0).all(axis=1))).size:
        raise InputError(f"`x` row {int(zero[0])} is 0 on every topic (identical runs, all d = 0): "
                         f"inference={spec.name!r} has no test of a pair without differences")
    bounds = None
    if spec.name == "exact":
        if score_bounds is None:
            raise InputError("inference='exact' needs `score_bounds` (low, high) of x: for scores in [0, 1] at α, "
                             "(-(1 + α), 1)")
        bounds = _bounds_iv(score_bounds)
        check_scores_within(flat, *bounds, [f"row {r}" for r in range(flat.shape[0])], "x")
        if not (bounds[0] < 0.0 < bounds[1]):
            raise InputError(f"`score_bounds` {score_bounds!r} must contain 0, the null value of E[x]")
    return pvalues(X, spec, bounds=bounds, alternative=alternative, significance=significance, replicates=B,
                   seed=seed, threads=threads)


def inference_table():
    """The registry as rows (name, assumes, exact, resampling, citation, kernel), for docs and
    ``fastrisk risk --inference help``."""
    return [(r.name, r.assumes, r.exact, r.resampling, r.citation, r.kernel) for r in INFERENCES.values()]


__all__ = ["INFERENCES", "RiskInference", "risk_pvalue", "t_level_note", "ALTERNATIVES"]
