"""PCA of the system x topic matrix: loop-built covariance reference, extra points, errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from reference import multibase as ref

from fastrisk.core.baselines import virtual_baseline
from fastrisk.core.pca import pca
from fastrisk.data.datasets import trec2012_web
from fastrisk.errors import InputError

_matrix = ref.matrix_of


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(2, 7), st.integers(1, 6)), elements=st.floats(0, 1)))
def test_matches_covariance_eigendecomposition(V):
    r = pca(_matrix(V))
    mean, C = ref.covariance(V.tolist())
    eig = np.sort(np.linalg.eigvalsh(np.array(C)))[::-1][: r.explained_variance.size]
    np.testing.assert_allclose(r.explained_variance, eig, atol=1e-10)
    np.testing.assert_allclose(r.mean, mean, atol=1e-12)
    # scores reproduce the centred data; components are orthonormal
    np.testing.assert_allclose(r.scores @ r.components, V - np.asarray(mean), atol=1e-9)
    np.testing.assert_allclose(r.components @ r.components.T, np.eye(r.components.shape[0]), atol=1e-9)
    total = np.trace(np.array(C))
    if total > 1e-12:
        np.testing.assert_allclose(r.explained_variance_ratio.sum(), 1.0, atol=1e-9)
    # deterministic signs: every component's largest-magnitude loading is non-negative
    assert all(row[np.argmax(np.abs(row))] >= 0 for row in r.components)


def test_virtual_baselines_as_extra_points():
    m, _ = trec2012_web()
    extra = [virtual_baseline(m, k) for k in ("mean", "median", "max")]
    r = pca(m, 2, extra=extra)
    assert r.extra_names == ("MEAN", "MEDIAN", "MAX")
    np.testing.assert_allclose(r.extra_scores[0], 0.0, atol=1e-12)  # the centre
    np.testing.assert_allclose(r.extra_scores, r.transform(np.vstack([b.values for b in extra])))
    same = pca(m, 2, extra={"MAX": extra[2].values[0]})
    np.testing.assert_allclose(same.extra_scores[0], r.extra_scores[2])
    assert r.explained_variance_ratio[0] > r.explained_variance_ratio[1] > 0
    t = r.coordinates()
    assert t.column_names == ["name", "kind", "pc1", "pc2"]
    assert t.num_rows == m.n_systems + 3
    assert t.column("kind").to_pylist()[-1] == "extra"


def test_array_extra_with_names():
    m = _matrix([[0.1, 0.2, 0.3], [0.3, 0.1, 0.0], [0.5, 0.5, 0.4]])
    r = pca(m, extra=[[0.2, 0.2, 0.2], [0.0, 0.0, 0.0]], extra_names=["a", "b"])
    assert r.extra_names == ("a", "b") and r.extra_scores.shape == (2, 3)
    assert pca(m, extra=np.zeros(3)).extra_names == ("extra1",)


def test_errors():
    m = _matrix([[0.1, 0.2, 0.3], [0.3, 0.1, 0.0]])
    with pytest.raises(InputError, match=r"`n_components` must be an integer in \[1, 2\]"):
        pca(m, 3)
    with pytest.raises(InputError, match="at least 2 systems"):
        pca(m.select(systems=["s0"]))
    with pytest.raises(InputError, match="extra point 'x' must have one score per topic"):
        pca(m, extra={"x": [1.0, 2.0]})
    with pytest.raises(InputError, match="`extra_names` has 1 name"):
        pca(m, extra=np.zeros((2, 3)), extra_names=["a"])
    with pytest.raises(InputError, match="`extra_names` given without"):
        pca(m, extra_names=["a"])
    with pytest.raises(InputError, match="non-finite"):
        pca(m, extra={"x": [np.nan, 0, 0]})
    with pytest.raises(InputError, match="one score per topic"):
        pca(m).transform(np.zeros(2))


def test_long_form_columns():
    m, _ = trec2012_web()
    r = pca(m, 2, extra=[virtual_baseline(m, "mean")])
    t = r.to_arrow()
    assert t.column_names == ["system", "component", "score", "explained_variance", "explained_variance_ratio",
                              "singular_value"]
    assert t.num_rows == 2 * m.n_systems
    row = t.to_pylist()[2 * 3 + 1]  # system 3, component 1
    assert row["system"] == m.systems[3] and row["score"] == r.scores[3, 1]
    e = r.to_arrow(("extra", "component"))
    assert e.column("extra").to_pylist() == ["MEAN", "MEAN"] and "extra_score" in e.column_names


def test_uncentred_decomposition():
    """center=False: the SVD of the raw matrix (Dinçer, Ounis & Macdonald 2014's percentages)."""
    m = _matrix([[0.1, 0.2, 0.3], [0.3, 0.1, 0.0], [0.5, 0.5, 0.4], [0.2, 0.0, 0.1]])
    r = pca(m, center=False)
    s = np.linalg.svd(m.values, compute_uv=False)
    np.testing.assert_allclose(r.explained_variance_ratio, s ** 2 / (s ** 2).sum(), rtol=1e-12)
    np.testing.assert_allclose(r.mean, 0.0)
    np.testing.assert_allclose(np.abs(r.scores), np.abs(m.values @ r.components.T), rtol=1e-12)
    assert r.to_arrow().schema.metadata[b"fastrisk"].find(b'"center": false') >= 0
    centred = pca(m)
    assert centred.center and not np.allclose(centred.explained_variance_ratio, r.explained_variance_ratio)
    with pytest.raises(InputError, match="`center` must be True or False"):
        pca(m, center="no")
