"""Memory that grows with topics, replicates or systems is bounded or estimated first (issue #29,
item 5): the bootstrap's draws per thread, the battery's sign test, the default text table."""

from __future__ import annotations

import importlib
import io
import tracemalloc

import numpy as np
import pyarrow as pa
import pytest
from scipy import stats

import fastrisk
from fastrisk.data import streaming, tabular
from fastrisk.errors import ResourceError
from fastrisk.inference.resampling import _engine

battery = importlib.import_module("fastrisk.simulate.battery")  # the module (the package exports a function of this name)


def _peak(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_bootstrap_draws_per_thread_are_bounded_whatever_the_topics(monkeypatch):
    monkeypatch.setattr(_engine, "DRAW_BYTES", 2**20)  # 1 MiB of draws a thread (32 MiB by default)
    c = 20_000
    y = np.random.default_rng(0).uniform(0, 1, (1, c))
    scores = fastrisk.ScoreMatrix(np.vstack([y, y * 0.9]), ["a", "b"], [str(i) for i in range(c)])
    fastrisk.bootstrap(scores.select(topics=scores.topics[:50]), "b", alpha=0, replicates=100, rng=1, threads=1)
    peak = _peak(lambda: fastrisk.bootstrap(scores, "b", alpha=0, replicates=1024, rng=1, threads=1))
    assert peak < 3 * _engine.DRAW_BYTES + 40 * c * 8  # was 1,024 x c doubles (160 MB) per thread
    monkeypatch.undo()
    assert _engine._draw_rows(2_000_000) * 8 * 2_000_000 <= _engine.DRAW_BYTES
    assert _engine._draw_rows(4096) == _engine.BLOCK


def test_bootstrap_numbers_barely_depend_on_the_draw_block(monkeypatch):
    """The draw block is a function of the topics only (the numbers never depend on the
    threads); a smaller one changes a BLAS product's shape, so a sum by at most an ulp."""
    m = fastrisk.ScoreMatrix(np.random.default_rng(2).uniform(0, 1, (3, 40)), list("abc"),
                             [str(i) for i in range(40)])
    kw = dict(alpha=[0, 1], replicates=3000, rng=7)
    whole = fastrisk.bootstrap(m, "a", **kw)
    perm = fastrisk.permutation_test(m, "a", **{**kw, "alpha": 0})
    monkeypatch.setattr(_engine, "DRAW_BYTES", 8 * 40 * 7)  # 7 replicates' draws at a time
    assert _engine._draw_rows(40) == 7
    split = fastrisk.bootstrap(m, "a", **kw)
    np.testing.assert_array_equal(split.pvalue, whole.pvalue)
    np.testing.assert_allclose(split.standard_error, whole.standard_error, rtol=1e-13)
    np.testing.assert_array_equal(fastrisk.permutation_test(m, "a", **{**kw, "alpha": 0}).pvalue, perm.pvalue)


def test_a_bootstrap_too_large_is_refused_with_the_estimate_first(monkeypatch):
    monkeypatch.setattr(_engine, "check_memory", lambda n, what, avoid: (_ for _ in ()).throw(
        ResourceError(f"{what} needs about {n:.0f} bytes: {avoid}")))
    m = fastrisk.ScoreMatrix(np.random.default_rng(2).uniform(0, 1, (3, 40)), list("abc"),
                             [str(i) for i in range(40)])
    with pytest.raises(ResourceError, match="needs about .* fewer"):
        fastrisk.bootstrap(m, "a", replicates=1000, rng=1)


def test_sign_test_needs_no_mesh_and_matches_scipy():
    rng = np.random.default_rng(5)
    n = np.concatenate([rng.integers(0, 60, 200), [0, 1, 1_000_000, 999_999]])
    k = np.array([rng.integers(0, v + 1) for v in n])
    peak = _peak(lambda: battery._sign_p(k, n))
    assert peak < 2**20 * 8  # an (n + 1)^2 table was 8 TB at n = 10^6
    got = battery._sign_p(k, n)
    for i in range(len(n)):
        if n[i] == 0:
            assert np.isnan(got[i]).all()
            continue
        for j, alt in enumerate(("two-sided", "less", "greater")):
            assert got[i, j] == pytest.approx(stats.binomtest(int(k[i]), int(n[i]), 0.5, alternative=alt).pvalue,
                                              rel=1e-9, abs=1e-300)


def _long(rows):
    rng = np.random.default_rng(1)
    return pa.table({"system": pa.array([f"s{i % 97}" for i in range(rows)]),
                     "baseline": pa.array([f"b{i % 13}" for i in range(rows)]),
                     "urisk": rng.normal(0, 1, rows), "rank": rng.integers(1, 100, rows).astype(np.float64)})


def test_text_table_streams_a_slice_at_a_time(monkeypatch):
    table = _long(12_000)
    expected = tabular.format_text(table)
    monkeypatch.setattr(tabular, "TEXT_SLICE_ROWS", 500)
    pieces = [table.slice(lo, 3000) for lo in range(0, table.num_rows, 3000)]
    sink = io.BytesIO()

    def run():
        with streaming.TableStream("table", None, rows=table.num_rows, columns=4) as stream:
            stream._sink = sink  # standard output, kept to compare
            for p in pieces:
                stream.write(p)

    peak = _peak(run)
    got = sink.getvalue().decode()
    assert got == expected
    assert peak < 3 * len(got)  # the text written plus a slice, not 128 bytes a cell of the whole table


def test_text_table_estimate_counts_the_held_columns_not_every_string():
    rows, cols = 2000 * 2000 * 4, 7  # `fastrisk table` of 2,000 systems, four alphas
    assert streaming.text_table_bytes(rows, cols) < rows * cols * 20
