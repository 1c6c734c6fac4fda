"""simIReff's truncated-normal margin fit (``effCont_norm``) as R computes it (fastrisk.simulate._r.rmath).

tests/data/rnorm_fits.csv is written by R 4.2.2 (tests/data/make_rnorm.R; provenance in
tests/data/README.md): the start (mean, sd), optim's par, value, convergence and counts, and
whether MASS::fitdistr succeeds, then whether effCont_norm's mean / variance integrals do, on
every 4th kept run of four collections."""

import csv
import functools
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import special, stats

import fastrisk.data.datasets
from fastrisk.simulate import simireff
from fastrisk.simulate._r import rmath
from fastrisk.simulate._r._kernels import rmath as _rm


def _rows():
    with open(Path(__file__).parent / "data" / "rnorm_fits.csv", newline="") as f:
        return list(csv.DictReader(f))


@functools.lru_cache(maxsize=None)
def _matrix(collection):
    m = fastrisk.data.datasets.trec_matrix(collection)
    return list(m.systems), m.values


def _scores(row):
    names, values = _matrix(row["collection"])
    return values[names.index(row["run"])]


def _check_row(row):
    x = _scores(row)
    assert rmath.r_mean(x) == float(row["mu0"]) and rmath.r_sd(x) == float(row["sd0"])
    if row["convergence"] == "NA":  # optim itself stopped with an error
        with pytest.raises(ValueError, match=row["error"]):
            rmath.optim_norm(x)
    else:  # R's optim bit for bit
        res = rmath.optim_norm(x)
        assert res.par == (float(row["mu"]), float(row["sigma"]))
        assert res.value == float(row["value"])
        assert (res.convergence, res.counts) == (int(row["convergence"]), int(row["counts"]))
    if row["ok"] == "TRUE":
        mu, sd, ll = rmath.fitdistr_norm(x)
        assert (mu, sd, -ll) == (float(row["mu"]), float(row["sigma"]), float(row["value"]))
        if row["moments_error"]:  # effCont_norm's integrals fail in R (after the fit): so do ours
            with pytest.raises(ValueError, match="integrate"):
                rmath.check_norm_moments(mu, sd)
            with pytest.raises(ValueError):
                simireff._norm(x)
        else:
            m = simireff._norm(x)
            assert (m.params["mu"], m.params["sigma"]) == (mu, sd)
    else:
        with pytest.raises(ValueError, match=row["error"].replace("(", r"\(").replace(")", r"\)")):
            rmath.fitdistr_norm(x)
        with pytest.raises(ValueError):
            simireff._norm(x)


def test_r_sample_has_both_outcomes():
    rows = _rows()
    assert {r["ok"] for r in rows} == {"TRUE", "FALSE"}
    assert {r["convergence"] for r in rows} >= {"0", "52", "NA"}
    assert any(r["moments_error"] for r in rows)


@pytest.mark.parametrize("k", range(0, 61, 5))
def test_fit_is_rs_bit_for_bit(k):
    _check_row(_rows()[k])


def test_fit_fails_where_rs_integrals_do():
    for row in _rows():
        if row["moments_error"]:
            _check_row(row)


@pytest.mark.slow
def test_fit_is_rs_bit_for_bit_every_row():
    for row in _rows():
        _check_row(row)


@settings(max_examples=300, deadline=None)
@given(st.floats(-60, 60, allow_nan=False))
def test_pnorm_is_the_normal_cdf(z):
    ref = special.ndtr(z)
    assert _rm.pnorm(z) == pytest.approx(ref, rel=1e-13 + 2e-15 * z * z, abs=1e-300)  # exp(-z^2 / 2): relative error grows as z^2


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=60))
def test_mean_and_sd_are_the_exact_ones_rounded(x):
    n = len(x)
    m = math.fsum(x) / n
    assert rmath.r_mean(x) == pytest.approx(m, rel=1e-15, abs=1e-300)
    sd = math.sqrt(math.fsum((v - m) ** 2 for v in x) / (n - 1))
    assert rmath.r_sd(x) == pytest.approx(sd, rel=1e-12, abs=1e-15)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=60), st.floats(-5, 2), st.floats(0.05, 3))
def test_nll_is_the_truncated_normal_likelihood(x, mu, sd):
    assume(-mu / sd < 5)  # beyond, R's Phi(b) - Phi(a) cancels (R's own inaccuracy, kept)
    a, b = (0 - mu) / sd, (1 - mu) / sd
    ref = -float(np.sum(stats.truncnorm.logpdf(np.asarray(x), a, b, loc=mu, scale=sd)))
    assert rmath.truncnorm_nll(x, mu, sd) == pytest.approx(ref, rel=1e-9, abs=1e-9)


def test_nll_is_uniform_where_the_normaliser_underflows():
    # truncnorm's fallback: density 1 / (b - a) once log(sd (Phi(1) - Phi(0))) is not finite
    assert rmath.truncnorm_nll([0.1, 0.5, 0.9], -60.0, 0.05) == 0.0


def test_solve_fails_where_r_does():
    with pytest.raises(ValueError, match="exactly singular"):
        rmath.r_solve2([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(ValueError, match="computationally singular"):
        rmath.r_solve2([[1.0, 1.0], [1.0, 1.0 + 4e-16]])  # R: rcond 1.1e-16
    inv = rmath.r_solve2([[4.0, 1.0], [2.0, 3.0]])
    assert np.allclose(np.array(inv) @ np.array([[4.0, 1.0], [2.0, 3.0]]), np.eye(2))


@settings(max_examples=60, deadline=None)
@given(st.floats(0, 1), st.floats(-3, 2), st.floats(0.05, 2))
def test_qtruncnorm_inverts_ptruncnorm(p, mu, sd):
    assume(-mu / sd < 5)  # beyond, R's Phi(1) - Phi(0) cancels: a staircase, kept (see below)
    q = rmath.qtruncnorm(p, mu, sd)
    assert 0.0 <= q <= 1.0
    ref = stats.truncnorm.cdf(q, -mu / sd, (1 - mu) / sd, loc=mu, scale=sd)
    assert ref == pytest.approx(p, abs=1e-9)


def test_qtruncnorm_is_rs_where_phi_cancels():
    # R 4.2.2, truncnorm 1.0.8: qtruncnorm(c(.5, .1, .9), 0, 1, mu, .25), %.17g
    assert [rmath.qtruncnorm(p, -3.0, 0.25) for p in (0.5, 0.1, 0.9)] == [3.1115076389305709e-61] * 3
    assert [rmath.qtruncnorm(p, -2.0, 0.25) for p in (0.5, 0.1, 0.9)] == [
        0.015625, 0.00057295546319724444, 0.073090268953398985]
