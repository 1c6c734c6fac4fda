"""The compiled copula log-likelihoods (`fastrisk._kernels.copulas`) against pyvinecopulib's,
and VineCopula's maximum-likelihood procedure built on them (`fastrisk.simulate.copulas`)
against brute force: a dense grid over VineCopula's box, evaluated with pyvinecopulib."""

from __future__ import annotations

import itertools

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from fastrisk._kernels import copulas as kc
from fastrisk.data.datasets import trec_matrix
from fastrisk.simulate import copulas, fits
from fastrisk.simulate.measures import kept_runs

pv = pytest.importorskip("pyvinecopulib")

#: VineCopula's box of (par, par2) magnitudes per family (``MLE_intern``), cut to pyvinecopulib's.
_BOX = {"gaussian": ((-0.9999, 0.9999),), "clayton": ((1e-4, 28.0),), "gumbel": ((1.0001, 50.0),),
        "frank": ((-35.0, 35.0),), "joe": ((1.0001, 30.0),), "student": ((-0.9999, 0.9999), (2.0001, 30.0)),
        "bb1": ((0.001, 5.0), (1.001, 6.0)), "bb6": ((1.001, 6.0), (1.001, 6.0)),
        "bb7": ((1.001, 5.0), (0.01, 6.0)), "bb8": ((1.001, 6.0), (0.001, 1.0)),
        "tawn": ((1.001, 20.0), (1e-4, 0.99))}


def _uniforms(n, seed):
    """Pseudo-observations rank / (n + 1) of n independent points (what the fits see)."""
    r = np.random.default_rng(seed).random((n, 2))
    return (np.argsort(np.argsort(r, axis=0), axis=0) + 1.0) / (n + 1.0)


def _pv_loglik(u, family, rotation, ttype, x):
    """pyvinecopulib's log-likelihood at VineCopula's (par, par2) magnitudes ``x``."""
    cop = pv.Bicop(family=getattr(pv.BicopFamily, family), rotation=rotation,
                   parameters=copulas._params(family, ttype, x))
    return float(cop.loglik(u))


def _rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


def _mp_cdf(family, u, v, p):
    """The textbook CDF C(u, v) of the family (rotation 0) in mpmath (Joe 2014, ch. 4)."""
    th = mp.mpf(p[0])
    if family == "clayton":
        return (u ** -th + v ** -th - 1) ** (-1 / th)
    if family == "gumbel":
        return mp.exp(-((-mp.log(u)) ** th + (-mp.log(v)) ** th) ** (1 / th))
    if family == "frank":
        return -1 / th * mp.log(1 + mp.expm1(-th * u) * mp.expm1(-th * v) / mp.expm1(-th))
    if family == "joe":
        a, b = (1 - u) ** th, (1 - v) ** th
        return 1 - (a + b - a * b) ** (1 / th)
    if family == "tawn":  # (psi1, psi2, theta)
        p1, p2, th = (mp.mpf(q) for q in p)
        x, y = -mp.log(u), -mp.log(v)
        w = y / (x + y)
        A = (1 - p1) * (1 - w) + (1 - p2) * w + ((p1 * (1 - w)) ** th + (p2 * w) ** th) ** (1 / th)
        return mp.exp(-(x + y) * A)
    de = mp.mpf(p[1])
    if family == "bb1":
        return (1 + ((u ** -th - 1) ** de + (v ** -th - 1) ** de) ** (1 / de)) ** (-1 / th)
    if family == "bb6":
        x, y = ((-mp.log(1 - (1 - z) ** th)) ** de for z in (u, v))
        return 1 - (1 - mp.exp(-(x + y) ** (1 / de))) ** (1 / th)
    if family == "bb7":
        x, y = ((1 - (1 - z) ** th) ** -de - 1 for z in (u, v))
        return 1 - (1 - (1 + x + y) ** (-1 / de)) ** (1 / th)
    eta = 1 - (1 - de) ** th  # bb8
    return (1 - (1 - (1 - (1 - de * u) ** th) * (1 - (1 - de * v) ** th) / eta) ** (1 / th)) / de


def _exact_logc(family, u, p):
    """log c at each point of ``u`` (rotation 0), independently of the kernels: the Gaussian
    and t densities from scipy.stats, the others the mixed derivative of `_mp_cdf` at 80 digits."""
    if family in ("gaussian", "student"):
        r = p[0]
        if family == "gaussian":
            z = stats.norm.ppf(u)
            return stats.multivariate_normal([0, 0], [[1, r], [r, 1]]).logpdf(z) - stats.norm.logpdf(z).sum(axis=1)
        z = stats.t.ppf(u, p[1])
        return stats.multivariate_t([0, 0], [[1, r], [r, 1]], df=p[1]).logpdf(z) - stats.t.logpdf(z, p[1]).sum(axis=1)
    with mp.workdps(80):
        return np.array([float(mp.log(mp.diff(lambda a, b: _mp_cdf(family, a, b, p), (mp.mpf(a), mp.mpf(b)), (1, 1))))
                         for a, b in u])


def _box_points(family, k, rng):
    """k random parameter vectors in VineCopula's box, its corners, centre and face middles."""
    box = np.array(_BOX[family])
    mid = box.mean(axis=1)
    pts = [mid] + [np.array(c) for c in itertools.product(*box)]
    for j in range(len(box)):
        for v in box[j]:
            q = mid.copy()
            q[j] = v
            pts.append(q)
    return pts + [box[:, 0] + rng.uniform(0, 1, len(box)) * (box[:, 1] - box[:, 0]) for _ in range(k)]


def _agrees(u, family, rotation, ttype, x) -> bool:
    """Whether the log-likelihood at ``x`` is pyvinecopulib's within 1e-9 (relative to
    max(1, |ll|)); where it is not (pyvinecopulib's own density losing digits), it must be
    within 1e-9 of the exact sum (`_exact_logc`) and nearer to it than pyvinecopulib's."""
    got, want = copulas._loglik_fn(u, family, rotation, ttype)(x), _pv_loglik(u, family, rotation, ttype, x)
    if _rel(got, want) < 1e-9:
        return True
    exact = _exact_logc(family, kc.rotated(u, rotation).T, copulas._params(family, ttype, x).reshape(-1)).sum()
    assert _rel(got, exact) < 1e-9 and abs(got - exact) < abs(want - exact), (family, x, got, want, exact)
    return False


#: The rotated Tawn and BB families, where pyvinecopulib's density loses digits and `_agrees` sums the
#: exact (mpmath) log-density: 3-14 s each. Their unrotated codes (104, 204, ...) and every rotation's
#: mapping (`test_rotations_are_pyvinecopulibs`) stay in the main pass, one rotation of each Tawn type
#: (180 degrees) in the slow pass; the 90 and 270 degree ones only mirror an axis of those.
_SLOW_CODES = {28, 124, 224}
_MIRRORED = {114, 134, 214, 234}


@pytest.mark.parametrize("code", [pytest.param(c, marks=pytest.mark.slow) if c in _SLOW_CODES else c
                                  for c in sorted(c for c in copulas.VC_FAMILIES if c) if c not in _MIRRORED])
def test_loglik_is_pyvinecopulibs_or_closer_to_exact(code):
    """Every VineCopula family code at random parameters in VineCopula's box, its corners,
    centre and faces, on 30 and 100 points (`_agrees`); most are pyvinecopulib's values."""
    family, rotation, ttype = copulas.VC_FAMILIES[code]
    rng = np.random.default_rng(code)
    checks = [_agrees(_uniforms(n, code + n), family, rotation, ttype, x)
              for n in (30, 100) for x in _box_points(family, 10, rng)]
    assert sum(checks) >= 0.4 * len(checks)  # the comparison with pyvinecopulib is not vacuous


@settings(max_examples=40, deadline=None)
@given(code=st.sampled_from([2, 7, 8, 9, 10, 37, 104, 234]), seed=st.integers(0, 10**6),
       s=st.floats(0, 1), t=st.floats(0, 1))
def test_loglik_is_pyvinecopulibs_or_closer_to_exact_anywhere(code, seed, s, t):
    family, rotation, ttype = copulas.VC_FAMILIES[code]
    box = np.array(_BOX[family])
    _agrees(_uniforms(40, seed), family, rotation, ttype, box[:, 0] + np.array([s, t])[:len(box)] * (box[:, 1] - box[:, 0]))


@pytest.mark.parametrize("code", [7, 28, 19, 40, 124, 204, 5, 1])
def test_compiled_objective_is_the_python_one_bit_for_bit(code):
    """`_LogLik.fg` (one compiled call) gives what `_r_lbfgsb`'s Python central differences
    over ``ll`` give, at points inside the box and on its bounds (steps cut there)."""
    family, rotation, ttype = copulas.VC_FAMILIES[code]
    u = _uniforms(50, code)
    ll = copulas._loglik_fn(u, family, rotation, ttype)
    box = np.array(_BOX[family])
    lo, hi = box[:, 0].copy(), box[:, 1].copy()
    for x in (box.mean(axis=1), lo + 2e-4, hi - 1e-4, lo, hi):
        x = np.array(x, dtype=np.float64)
        g = np.empty(len(x))
        for k in range(len(x)):
            up, dn = x.copy(), x.copy()
            up[k], dn[k] = min(x[k] + 1e-3, hi[k]), max(x[k] - 1e-3, lo[k])
            g[k] = (-ll(up) + ll(dn)) / (up[k] - dn[k])
        f, got = ll.fg(x, lo, hi)
        assert f == -ll(x) and got.tolist() == g.tolist()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_t_gradient_is_the_derivative_of_the_loglik(seed):
    """The t copula's analytic gradient (VineCopula's ``gr_LL``) against a fine central
    difference (step 1e-6) of the log-likelihood, inside the box and near its corners."""
    u = _sample("student", 0, (0.5, 4.0), 60, seed)
    ll = copulas._loglik_fn(u, "student", 0, 0)
    lo, hi = np.array([-0.9999, 2.0001]), np.array([0.9999, 30.0])
    for x in ([0.5, 4.0], [-0.3, 12.0], [0.99, 2.01], [0.9, 29.0]):
        x = np.array(x)
        f, g = ll.fg(x, lo, hi)
        fine = [(ll(x + e) - ll(x - e)) / 2e-6 for e in np.eye(2) * 1e-6]
        assert f == -ll(x)
        np.testing.assert_allclose(-g, fine, rtol=1e-5, atol=1e-4)


def test_rotations_are_pyvinecopulibs():
    u = _uniforms(7, 0)
    want = {0: u, 90: np.column_stack([u[:, 1], 1 - u[:, 0]]), 180: 1 - u,
            270: np.column_stack([1 - u[:, 1], u[:, 0]])}
    for r, w in want.items():
        np.testing.assert_array_equal(kc.rotated(u, r), w.T)


def _sample(family, rotation, params, n, seed):
    cop = pv.Bicop(family=getattr(pv.BicopFamily, family), rotation=rotation,
                   parameters=np.asarray(params, dtype=np.float64).reshape(-1, 1))
    return copulas.pobs(*cop.sample(n, seeds=[seed, seed + 1]).T, 0)


#: Two-parameter families (code, true pyvinecopulib parameters) whose fit is checked on a grid.
_GRID_CASES = [(2, (0.5, 6.0)), (7, (0.8, 1.6)), (8, (1.8, 1.4)), (9, (1.8, 1.2)), (10, (3.0, 0.8)),
               (37, (0.6, 1.5)), (104, (0.6, 1.0, 3.0)), (224, (1.0, 0.5, 2.5))]


@pytest.mark.parametrize("code,true", _GRID_CASES)
def test_two_parameter_mle_is_the_grid_maximum(code, true):
    """The maximum found (VineCopula's start and L-BFGS-B) against a 121 x 121 grid over the
    whole box (pyvinecopulib's log-likelihood): at least the grid's best and, where that best
    is interior, within two grid steps of it (the likelihood is smooth and unimodal here)."""
    family, rotation, ttype = copulas.VC_FAMILIES[code]
    u = _sample(family, rotation, true, 250, code)
    tau = copulas.kendall_tau(u)
    b = copulas._bounds(family, tau)
    got, x = copulas._fit_family(u, code, tau)
    assert all(lo <= v <= hi for v, (lo, hi) in zip(x, b))
    assert got == pytest.approx(_pv_loglik(u, family, rotation, ttype, x), rel=1e-9)
    g0, g1 = (np.linspace(lo, hi, 121) for lo, hi in b)
    grid = np.array([[_pv_loglik(u, family, rotation, ttype, (p, q)) for q in g1] for p in g0])
    i, j = np.unravel_index(np.argmax(grid), grid.shape)
    assert got >= grid[i, j] - 1e-6
    if 0 < i < 120 and 0 < j < 120:
        assert abs(x[0] - g0[i]) <= 2 * (g0[1] - g0[0]) and abs(x[1] - g1[j]) <= 2 * (g1[1] - g1[0])


@pytest.mark.parametrize("seed", [7, 11])
@pytest.mark.parametrize("family,rotation,params,code", [
    ("bb1", 0, (2.0, 1.5), 7), ("student", 0, (0.6, 3.0), 2), ("frank", 0, (-8.0,), 5),
    ("bb8", 180, (4.0, 0.9), 20)])
def test_select_copula_picks_the_simulating_family(family, rotation, params, code, seed):
    """`select_copula` on 1,500 points drawn from a known copula picks its family code, for
    families that nearby ones cannot mimic at this size (a Clayton sample is fitted as well
    by a survival Joe or BB6, a Gumbel one by BB6, which nests it, a Gaussian one by the t)."""
    u = _sample(family, rotation, params, 1500, seed)
    got = copulas.select_copula(u)
    assert got["vinecopula"] == code, got
    assert got["loglik"] == pytest.approx(copulas.bicop(got).loglik(u), rel=1e-9)


@pytest.mark.parametrize(("name", "measure", "pair", "best"), [("adhoc8_ap", "ap", (6, 10), 79.2338),
                                                              ("adhoc7_rr", "rr", (19, 64), 6.5020)])
def test_t_copula_starts_from_vinecopulas_profile_of_nu(name, measure, pair, best):
    """``BiCopEst.intern`` starts the t copula's L-BFGS-B at (sin(tau pi / 2), nu0), nu0 the
    maximum in nu at that rho (``cor.fixed = TRUE``). From nu = 8 instead the optimiser stopped
    short on these two real pairs (a step projected onto nu = 2.0001), at log-likelihoods 76.92
    and 5.21; ``best`` is the maximum that pyvinecopulib's own MLE finds (the FIT_VERSION 7 fits)."""
    v = np.asarray(trec_matrix(name).values, dtype=np.float64)
    kept, _ = kept_runs(v)
    got = fits._fit_pairs(v[kept], [pair], fits.ties_base_seed(v, measure))[f"{pair[0]},{pair[1]}"]
    assert got["family"] == "student" and got["loglik"] >= best
