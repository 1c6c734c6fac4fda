"""simIReff's Gaussian-kernel margin (effCont_nks) as R computes it (fastrisk.simulate._r.rks, issue
#18), against R (tests/data/rks_nks.csv, written by tests/data/make_rks.R with ks 1.14.0, see
tests/data/README.md), R's fft against the DFT, and the binned estimate against the exact one
(tests/reference/kde.py)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastrisk
from fastrisk.simulate import simireff
from fastrisk.simulate._r import rks, rmath
from fastrisk.simulate._r._kernels.rks import r_fft
from tests.reference.kde import exact_dpik, gauss_cdf, gauss_kde

# the same arithmetic as R's (R's fft, long-double sums, libm's exp / sin / cos / log): equal
# to the last bit on this machine; the tolerance only allows another libm's last-ulp rounding
_REL = 1e-12
_AT = (0.05, 0.2, 0.5, 0.8)
_PR = (0.1, 0.5, 0.9)


def _rows():
    with open(Path(__file__).parent / "data" / "rks_nks.csv", newline="") as f:
        return list(csv.DictReader(f))


_MATS = {}


def _scores(collection, run):
    if collection not in _MATS:
        _MATS[collection] = fastrisk.data.datasets.trec_matrix(collection)
    m = _MATS[collection]
    return m.values[list(m.systems).index(run)]


def _check_against_r(rows):
    failed = 0
    for r in rows:
        x = _scores(r["collection"], r["run"])
        if r["ok"] != "TRUE":  # R stops (qkde's findInterval on FFT noise); so do we
            failed += 1
            with pytest.raises(ValueError, match="sorted"):
                rks.KsMargin(x)
            continue
        k = rks.KsMargin(x)
        where = (r["collection"], r["run"])
        for key, got in (("h", k.h), ("df", k.df), ("loglik", k.loglik), ("aic", k.aic), ("mean", k.mean),
                         ("var", k.var), ("f0", k.f0), ("f1", k.f1)):
            assert got == pytest.approx(float(r[key]), rel=_REL, abs=1e-300), (where, key)
        for fn, cols, pts in ((k.density, "d", _AT), (k.cdf, "p", _AT), (k.quantile, "q", _PR)):
            want = [float(r[f"{cols}{p}"]) for p in pts]
            assert fn(np.array(pts)) == pytest.approx(want, rel=_REL, abs=1e-15), (where, cols)
    return failed


def test_nks_is_ks_and_simireff_in_r():
    rows = _rows()
    assert _check_against_r(rows) == 3  # R's three failures in the file, ours the same
    assert {r["collection"].split("_")[1] for r in rows} == {"ap", "ndcg20", "err20"}


def test_a_failure_in_r_is_one_here():
    r = next(r for r in _rows() if r["ok"] != "TRUE")
    with pytest.raises(ValueError, match="sorted"):
        rks.KsMargin(_scores(r["collection"], r["run"]))


@pytest.mark.parametrize("n", [1, 2, 4, 8, 64, 512, 1024, 2048])
def test_r_fft_is_the_dft(n):
    rng = np.random.default_rng(n)
    re, im = rng.standard_normal(n), rng.standard_normal(n)
    z = re + 1j * im
    fr, fi = r_fft(re, im, False)
    want = np.fft.fft(z)
    scale = np.abs(want).max()
    assert np.abs(fr + 1j * fi - want).max() <= 1e-13 * scale
    gr, gi = r_fft(re, im, True)  # unnormalised inverse, as R's fft(inverse = TRUE)
    assert np.abs(gr + 1j * gi - n * np.fft.ifft(z)).max() <= 1e-13 * scale


def test_r_fft_rejects_other_lengths():
    with pytest.raises(ValueError, match="power of two"):
        r_fft(np.zeros(12), np.zeros(12), False)


@settings(max_examples=25, deadline=None)
@given(a=st.floats(0.5, 8.0), b=st.floats(0.5, 8.0), n=st.integers(30, 120), seed=st.integers(0, 2 ** 31))
def test_binned_estimate_approximates_the_exact_one(a, b, n, seed):
    x = np.random.default_rng(seed).beta(a, b, n)
    h = rks.dpik(x)
    assert h == pytest.approx(exact_dpik(x), rel=0.08)  # dpik bins on 401 points (and drops the maximum)
    pts, est = rks.kde_grid(x, h)
    assert pts[0] == pytest.approx(x.min() - 3.7 * h) and pts[-1] == pytest.approx(x.max() + 3.7 * h)
    exact = gauss_kde(x, h, x)
    assert rks.dkde(x, pts, est) == pytest.approx(exact, rel=0.02, abs=1e-3 * exact.max())
    # pkde: the exact CDF plus, ks's arithmetic, the trapezoid of the cell holding q once more
    # (so not even monotone where the density falls): between the two, up to binning error
    q = np.linspace(pts[0], pts[-1], 60)
    cdf = gauss_cdf(x, h, q)
    extra = rks.pkde(q, pts, est) - cdf
    cell = (pts[1] - pts[0]) * est.max()
    assert np.all(extra >= -2e-3) and np.all(extra <= cell + 2e-3)
    assert extra.max() > 0.2 * cell  # the double-counted cell shows


def test_nks_margin_is_the_distribution_r_samples():
    x = _scores("web2010_err20", "run1")
    k = rks.KsMargin(x)
    g = simireff._nks(x)
    assert g.family == "nks" and g.params == {"h": k.h} and g.df == k.df and g.aic == k.aic
    assert (g.mean, g.variance) == (k.mean, k.var)  # simIReff's (R's integrals)
    # tabulated: the inverse of simIReff's truncated qkde (R's qeff), its atoms in the end cells
    p = (np.arange(400_000) + 0.5) / 400_000
    tab = simireff.SimMargin("t", {}, 0.0, 0.0, True, g.points, g.cdf)  # the tabulated CDF's own moments
    assert tab.mean == pytest.approx(k.quantile(p).mean(), abs=3e-7)
    assert tab.variance == pytest.approx(np.var(k.quantile(p)), abs=3e-7)
    assert g.quantile(np.array([0.1, 0.5, 0.9])) == pytest.approx(k.quantile(np.array([0.1, 0.5, 0.9])), abs=1e-3)
    # rebuilt from params + data
    again = simireff.margin_from("nks", g.params, x, "err20")
    assert again.aic == g.aic and np.array_equal(again.cdf, g.cdf)


@pytest.mark.parametrize("a, b", [(1.0, 1.0), (2.5, 1.0), (1.0, 1.7)])
def test_transformed_moments_integrate_qeff_of_qbeta(a, b):
    from scipy import special

    x = _scores("adhoc5_ap", "run2")
    k = rks.KsMargin(x)
    cases = [(k.rdata(), k.quantile, 400_000),  # the integrals by a midpoint rule on n points
             (rks.rdata("beta", {"shape1": 1.3, "shape2": 4.0}), lambda v: special.betaincinv(1.3, 4.0, v), 400_000),
             (rks.rdata("norm", {"mu": 0.2, "sigma": 0.15}),
              lambda v: np.array([rmath.qtruncnorm(t, 0.2, 0.15) for t in v]), 20_000)]
    for data, q, n in cases:
        e, v = rks.transformed_moments(data, a, b)
        qq = q(special.betaincinv(a, b, (np.arange(n) + 0.5) / n))
        assert e == pytest.approx(qq.mean(), abs=2e-6) and v == pytest.approx(qq.var(), abs=5e-6)
    if (a, b) == (1.0, 1.0):  # qbeta(p, 1, 1) = p: effContMean of the margin itself
        assert rks.transformed_moments(k.rdata(), 1.0, 1.0)[0] == pytest.approx(k.mean, rel=1e-12)


def test_qbeta_is_scipys_betaincinv_to_1e14():
    """R's qbeta in effTransform's integrands is a port (Cephes' incomplete beta, Halley steps
    in a bracket), not scipy's private Cython symbol: it agrees with
    ``scipy.special.betaincinv`` over the parameters effTransform searches (a, b >= 1) and
    below them, in the tails too."""
    from scipy import special

    from fastrisk.simulate._r._kernels.rmath import ibeta, qbeta

    ps = np.concatenate([[1e-12, 1e-9, 1e-6, 1e-4], np.linspace(0.001, 0.999, 167), [1 - 1e-4, 1 - 1e-6]])
    for a in (0.1, 0.5, 1.0, 1.05, 1.7, 2.5, 5.0, 10.0, 30.0, 50.0):
        for b in (0.3, 0.9, 1.0, 1.3, 2.0, 3.3, 7.5, 17.0, 50.0):
            want = special.betaincinv(a, b, ps)
            got = np.array([qbeta(p, a, b) for p in ps])
            np.testing.assert_allclose(got, want, rtol=2e-14, atol=0, err_msg=f"a={a}, b={b}")
            x = want[::20]  # and the incomplete beta itself, with its complement
            i, ic = np.array([ibeta(a, b, v) for v in x]).T
            np.testing.assert_allclose(i, special.betainc(a, b, x), rtol=2e-14, err_msg=f"a={a}, b={b}")
            np.testing.assert_allclose(ic, special.betaincc(a, b, x), rtol=2e-14, err_msg=f"a={a}, b={b}")
    assert qbeta(0.0, 2.0, 3.0) == 0.0 and qbeta(1.0, 2.0, 3.0) == 1.0 and qbeta(0.3, 1.0, 1.0) == 0.3
    assert np.isnan(qbeta(1.5, 2.0, 3.0)) and np.isnan(qbeta(0.5, -1.0, 3.0))
