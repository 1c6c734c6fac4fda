"""Long outputs streamed in pieces (``risk --per-topic``, ``table``): the same bytes as the
materialised long form, Parquet in several row groups, atomic files, the text table refused
before it would exhaust memory."""

from __future__ import annotations

import io
import json
import warnings

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fastrisk import ScoreMatrix
from fastrisk.cli import main
from fastrisk.cli._output import write_table
from fastrisk.core.baselines import resolve_baseline
from fastrisk.core.long_forms import alpha_steps, table_pieces, topic_risk_pieces
from fastrisk.core.tables import baseline_table
from fastrisk.core.urisk import topic_risk
from fastrisk.data import streaming as _streaming
from fastrisk.data.io import write_matrix
from fastrisk.data.streaming import TableStream, write_pieces
from fastrisk.errors import ResourceError

PER_TOPIC = ["system", "topic", "alpha", "x", "tr", "tj"]
TABLE = ["system", "baseline", "alpha", "urisk", "trisk", "pvalue", "inference", "rank"]


@pytest.fixture
def matrix():
    rng = np.random.default_rng(5)
    V = rng.random((7, 9))
    V[4] = V[2] + 0.125  # constant difference from s2: a zero-variance warning against baseline s2
    return ScoreMatrix(V, [f"s{i}" for i in range(7)], [str(151 + j) for j in range(9)], "AP")


@pytest.fixture
def small_groups(monkeypatch):
    monkeypatch.setattr(_streaming, "ROW_GROUP_ROWS", 20)  # 2 systems x 9 topics per piece


def _materialised(table: pa.Table, fmt: str) -> bytes:
    """What ``write_table`` (the non-streamed path) writes to standard output."""
    import sys

    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="")
    saved, sys.stdout = sys.stdout, out
    try:
        write_table(table, fmt, None)
        out.flush()
        return out.buffer.getvalue()
    finally:
        sys.stdout = saved


def _same(a, b) -> None:
    import pandas.testing

    pandas.testing.assert_frame_equal(a, b, check_exact=True)


def _streamed(capsysbinary, argv) -> bytes:
    assert main(argv) == 0
    return capsysbinary.readouterr().out


@pytest.mark.parametrize("fmt", ["csv", "json", "table"])
def test_per_topic_stream_is_the_materialised_long_form(matrix, tmp_path, fmt, small_groups, capsysbinary):
    path = tmp_path / "m.parquet"
    write_matrix(matrix, path)
    with warnings.catch_warnings(record=True) as whole_warnings:
        warnings.simplefilter("always")
        whole = topic_risk(matrix, "s2", alpha=[0, 1, 5]).to_arrow().select(PER_TOPIC)
    expected = _materialised(whole, fmt)
    with warnings.catch_warnings(record=True) as streamed_warnings:
        warnings.simplefilter("always")
        got = _streamed(capsysbinary, ["risk", str(path), "--baseline", "s2", "--alpha", "0,1,5", "--per-topic",
                                       "--format", fmt])
    assert got == expected
    assert sorted(str(w.message) for w in streamed_warnings) == sorted(str(w.message) for w in whole_warnings)
    assert any("s4" in str(w.message) for w in streamed_warnings)  # once, though s4 is in one block of three alphas


def test_per_topic_parquet_has_row_groups_and_metadata(matrix, tmp_path, small_groups):
    src = tmp_path / "m.parquet"
    write_matrix(matrix, src)
    out = tmp_path / "per_topic.parquet"
    assert main(["risk", str(src), "--baseline", "mean", "--loss-weight", "1,2", "--per-topic", "--format",
                 "parquet", "--out", str(out)]) == 0
    whole = topic_risk(matrix, "mean", loss_weight=[1, 2]).to_arrow().select(PER_TOPIC)
    got = pq.read_table(out)
    assert got.equals(whole)
    meta = pq.ParquetFile(out)
    assert meta.num_row_groups == 2 * 4  # two loss weights x blocks of 2, 2, 2 and 1 systems
    assert b"fastrisk" in meta.schema_arrow.metadata


def test_pieces_follow_the_long_form_order(matrix):
    base = resolve_baseline(matrix, "s6")[1]
    pieces = list(topic_risk_pieces(matrix, base, rows=10, alpha=[0.0, 2.0]))
    assert len(pieces) == 2 * 7  # 10 rows hold one system of 9 topics
    whole = topic_risk(matrix, base, alpha=[0.0, 2.0]).to_pandas()
    _same(pa.concat_tables(pieces).to_pandas(), whole)  # NaN where the baseline meets itself
    assert alpha_steps({"value": "smooth"}) == [{"value": "smooth"}]
    assert alpha_steps({"alpha": [0, 1], "convention": "minus"}) == [{"convention": "minus", "alpha": [0]},
                                                                     {"convention": "minus", "alpha": [1]}]


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_table_stream_is_the_materialised_long_form(matrix, tmp_path, fmt, small_groups, capsysbinary):
    path = tmp_path / "m.parquet"
    write_matrix(matrix, path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _materialised(baseline_table(matrix, alpha=[0, 2]).to_arrow().select(TABLE), fmt)
        got = _streamed(capsysbinary, ["table", str(path), "--alpha", "0,2", "--format", fmt])
    assert got == expected


def test_table_pieces_are_the_long_form(matrix):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = baseline_table(matrix, alpha=[0, 1, 5])
    pieces = list(table_pieces(result, TABLE, rows=15))  # two systems of 7 baselines
    assert len(pieces) == 3 * 4
    _same(pa.concat_tables(pieces).to_pandas(), result.to_pandas()[TABLE])


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")  # the writer's finaliser wrote to
def test_a_failure_mid_stream_leaves_the_previous_file(tmp_path):                # the closed file (#41)
    out = tmp_path / "out.parquet"
    pq.write_table(pa.table({"x": [1.0, 2.0]}), out)
    before = out.read_bytes()

    def pieces():
        yield pa.table({"x": [3.0]})
        raise KeyboardInterrupt  # Ctrl-C between two row groups

    for fmt in ("parquet", "csv", "json"):
        with pytest.raises(KeyboardInterrupt):
            write_pieces(pieces(), fmt, out)
        assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.parquet"]  # no temporary file left


def test_parquet_metadata_argument(tmp_path):
    out = tmp_path / "m.parquet"
    write_pieces([pa.table({"x": [1]}), pa.table({"x": [2]})], "parquet", out, metadata={"measure": "AP"})
    f = pq.ParquetFile(out)
    assert f.schema_arrow.metadata[b"measure"] == b"AP" and f.num_row_groups == 2
    assert pq.read_table(out).column("x").to_pylist() == [1, 2]


def test_json_lines_write_nan_as_null(tmp_path):
    out = tmp_path / "t.jsonl"
    write_pieces([pa.table({"x": [1.5, float("nan")]})], "json", out)
    assert [json.loads(line) for line in out.read_text().splitlines()] == [{"x": 1.5}, {"x": None}]


def test_a_text_table_beyond_memory_is_refused_before_computing(matrix, tmp_path, monkeypatch, capsys):
    from fastrisk._runtime import resources as _resources

    monkeypatch.setattr(_resources, "available_memory", lambda: 1000)
    with pytest.raises(ResourceError, match=r"aligned text table of 189 rows needs about .* --format parquet"):
        TableStream("table", None, rows=189, columns=6)
    path = tmp_path / "m.parquet"
    write_matrix(matrix, path)
    assert main(["risk", str(path), "--baseline", "s0", "--alpha", "0,1,5", "--per-topic"]) == 2
    assert "fastrisk risk: error: an aligned text table of 189 rows" in capsys.readouterr().err
    assert main(["risk", str(path), "--baseline", "s0", "--per-topic", "--format", "csv",
                 "--out", str(tmp_path / "t.csv")]) == 0  # the streamed formats need no such memory


def test_an_output_directory_that_does_not_exist_is_named(matrix, tmp_path, capsys):
    path = tmp_path / "m.parquet"
    write_matrix(matrix, path)
    target = tmp_path / "no" / "such" / "out.parquet"
    assert main(["risk", str(path), "--baseline", "s0", "--per-topic", "--format", "parquet", "--out",
                 str(target)]) == 2
    err = capsys.readouterr().err
    assert f"cannot write {target}: No such file or directory" in err and ".tmp" not in err
