"""The copula fits' fast paths give scipy's numbers bit for bit (issue #31: fits in minutes,
the fitted models unchanged): Brent's fmin and the L-BFGS-B loop without scipy's wrappers,
Kendall's tau and the normal scores of the preselection; the whole `select_copula` against
the same code run through scipy's public calls; the jobs' sizes and the progress bar."""

from __future__ import annotations

import concurrent.futures as cf
import functools
import math
import sys
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats

import fastrisk
from fastrisk.cli import main
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.simulate import copulas, fits
from fastrisk.simulate.measures import kept_runs

pytest.importorskip("pyvinecopulib")


def _scipy_brent(f, lo, hi, xatol, maxiter=500):
    res = optimize.minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": xatol, "maxiter": maxiter})
    return float(res.x), float(res.fun)


@functools.lru_cache(maxsize=None)
def _pairs_of(name="web2013_err20", n=40, stride=7):
    """Pseudo-observations of ``n`` pairs of runs of a bundled collection, as `fit_collections` draws them."""
    v = np.asarray(fastrisk.data.datasets.trec_matrix(name).values, dtype=np.float64)
    kept, _ = kept_runs(v)
    V = v[kept]
    seed = fits.ties_base_seed(v, name.partition("_")[2])
    S = len(kept)
    pairs = [(i, j) for i in range(S) for j in range(i + 1, S)][::stride][:n]
    return [copulas.pobs(V[i], V[j], seed + i * 100_003 + j) for i, j in pairs]


@settings(max_examples=200, deadline=None)
@given(c=st.floats(-50, 50), w=st.floats(0.01, 100), p=st.sampled_from([2, 4, 1.5]), lo=st.floats(-60, 0),
       width=st.floats(1e-3, 120), xatol=st.sampled_from([copulas._R_TOL, 1e-6, 1e-2]))
def test_brent_is_scipys_bounded_minimiser_bit_for_bit(c, w, p, lo, width, xatol):
    f = lambda x: w * abs(x - c) ** p + math.sin(x)  # noqa: E731  (several minima: every branch)
    assert copulas._brent(f, lo, lo + width, xatol) == _scipy_brent(f, lo, lo + width, xatol)


def test_brent_stops_after_maxiter_as_scipy():
    f = lambda x: (x - 0.3) ** 2  # noqa: E731
    assert copulas._brent(f, 0.0, 1.0, 1e-12, maxiter=4) == _scipy_brent(f, 0.0, 1.0, 1e-12, maxiter=4)


@pytest.mark.parametrize("code", [104, 224, 20, 37])
def test_lbfgsb_loop_is_scipys_minimize_bit_for_bit(code, monkeypatch):
    """Tawn and BB fits by `_r_lbfgsb` on real pairs, through the setulb loop and through
    ``optimize.minimize``."""
    family, rotation, ttype = copulas.VC_FAMILIES[code]
    cases = []
    for u in _pairs_of(n=6):
        tau = copulas.kendall_tau(u)
        b = copulas._bounds(family, tau)
        start = (1 + 6 * abs(tau), min(abs(tau) + 0.1, 0.999)) if family == "tawn" else [
            lo + 0.37 * (hi - lo) for lo, hi in b]
        cases.append((copulas._loglik_fn(u, family, rotation, ttype), start, b))
    fast = [copulas._r_lbfgsb(*c) for c in cases]
    short = [copulas._r_lbfgsb(*c, maxit=2) for c in cases]  # stopped by maxit as scipy stops
    monkeypatch.setattr(copulas, "_SETULB_DIRECT", False)
    assert fast == [copulas._r_lbfgsb(*c) for c in cases]
    assert short == [copulas._r_lbfgsb(*c, maxit=2) for c in cases]


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 60).flatmap(lambda n: st.tuples(st.lists(st.integers(0, 6), min_size=n, max_size=n),
                                                      st.lists(st.integers(0, 6), min_size=n, max_size=n))))
def test_kendall_tau_is_scipys_bit_for_bit(xy):
    x, y = (np.asarray(v, dtype=np.float64) for v in xy)
    got = copulas.kendall_tau(np.column_stack([x, y]))
    want = stats.kendalltau(x, y).statistic
    assert got == want or (math.isnan(got) and math.isnan(want))


def _reference_module(monkeypatch):
    """The copula selection run through scipy's public calls (the code before issue #31)."""
    monkeypatch.setattr(copulas, "_brent", _scipy_brent)
    monkeypatch.setattr(copulas, "_SETULB_DIRECT", False)
    monkeypatch.setattr(copulas, "kendall_tau", lambda u: float(stats.kendalltau(u[:, 0], u[:, 1]).statistic))
    monkeypatch.setattr(copulas, "special", types.SimpleNamespace(ndtri=stats.norm.ppf, stdtrit=copulas.special.stdtrit,
                                                                   psi=copulas.special.psi))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["web2013_err20", "adhoc5_rr"])
def test_selected_copulas_are_those_of_scipys_calls_bit_for_bit(name, monkeypatch):
    """Family, rotation, parameters, log-likelihood and AIC of every selected copula: equal,
    not close (the fast paths change no number)."""
    us = _pairs_of(name, n=25, stride=31)
    fast = [copulas.select_copula(u) for u in us]
    corners = [copulas.corner_correlations(u, copulas.kendall_tau(u)) for u in us]
    _reference_module(monkeypatch)
    assert [copulas.corner_correlations(u, copulas.kendall_tau(u)) for u in us] == corners
    assert [copulas.select_copula(u) for u in us] == fast
    assert len({c["family"] for c in fast}) >= 3  # several families (and paths) exercised


@given(n=st.integers(0, 2000), size=st.integers(1, 300))
def test_jobs_cover_the_pairs_in_equal_sizes(n, size):
    pairs = list(range(n))
    chunks = fits._chunks(pairs, size)
    assert [p for c in chunks for p in c] == pairs
    assert all(0 < len(c) <= size for c in chunks) and len(chunks) == -(-n // size)
    assert max(map(len, chunks), default=0) - min(map(len, chunks), default=0) <= 1


def _toy(monkeypatch, runs=5):
    monkeypatch.setattr(fits, "_fit_margins", lambda V, meas: [("beta", {"shape1": 2.0, "shape2": 3.0})] * len(V))
    monkeypatch.setattr(fits, "_fit_pairs", lambda V, pairs, seed: {
        f"{i},{j}": {"family": "gaussian", "rotation": 0, "parameters": [0.2], "vinecopula": 1, "loglik": 0.0,
                     "aic": 0.0} for i, j in pairs})
    monkeypatch.setattr(fits, "PAIRS_PER_JOB", 3)
    rng = np.random.default_rng(0)
    return ScoreMatrix(rng.uniform(0.05, 0.9, (runs, 12)), list("abcdefgh"[:runs]), [str(i) for i in range(12)], "AP")


@pytest.mark.parametrize("executor", [None, "threads"])
def test_the_progress_bar_counts_pairs_and_collections(executor, monkeypatch, capsys):
    m = _toy(monkeypatch)
    for mod in ("tqdm", "tqdm.auto"):  # the plain line (first and last counts): what it prints is checked
        monkeypatch.setitem(sys.modules, mod, None)
    pool = cf.ThreadPoolExecutor(2) if executor else None
    try:
        fits.fit_collections({"a_ap": m, "b_ap": m}, "AP", cache=False, progress=True, executor=pool)
    finally:
        if pool:
            pool.shutdown()
    err = capsys.readouterr().err
    S = len(kept_runs(m.values)[0])
    total = S * (S - 1)  # two collections
    assert f"{total}/{total} pairs" in err and "collections 1/2" in err and f"3/{total} pairs" in err
    fits.fit_collections({"a_ap": m}, "AP", cache=False, progress=False)
    fits.fit_collections({"a_ap": m}, "AP", cache=False)  # default: only on a terminal
    assert capsys.readouterr().err == ""


def test_cli_fit_is_one_pass_over_every_measure_and_quiet_when_asked(monkeypatch, tmp_path, capsys):
    seen = []
    monkeypatch.setattr(fits, "fit_collections", lambda items, **kw: seen.append((list(items), kw)) or {})
    assert main(["simulate", "fit", "--cache", str(tmp_path), "--quiet"]) == 0
    (names, kw), = seen
    assert kw["measure"] is None and kw["progress"] is False and len(names) == 20
    assert {fastrisk.simulate.measures.canonical_measure(n.partition("_")[2]) for n in names} == {
        "ap", "p10", "rr", "ndcg20", "err20"}
    seen.clear()
    assert main(["simulate", "fit", "--measure", "RR", "--cache", str(tmp_path)]) == 0
    assert seen[0][1]["measure"] == "rr" and seen[0][1]["progress"] is True and len(seen[0][0]) == 4
