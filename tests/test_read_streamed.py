"""Long CSV read block by block with Arrow's streaming reader: the same matrix, or the same
error, as the whole-table reader, whatever the block size."""

from __future__ import annotations

import numpy as np
import pytest

from fastrisk import ScoreMatrix
from fastrisk.data import io as fio
from fastrisk.data.io import read_matrix
from fastrisk.errors import InputError

HEADER = "system,topic,score\n"
CASES = {
    "plain": "A,2,0.5\nB,10,0.25\nA,10,1\nB,2,0\n",
    "padded labels": " A,2,0.5\nB,10,0.25\nA ,10,1\nB,2,0\n",
    "missing cell": "A,2,0.5\nB,10,0.25\nA,10,1\n",
    "duplicate": "A,2,0.5\nB,10,0.25\nA,10,1\nB,2,0\nA,2,0.7\n",
    "nan score": "A,2,nan\nB,10,0.25\nA,10,1\nB,2,0\n",
    "text score": "A,2,abc\nB,10,0.25\nA,10,1\nB,2,0\n",
    "empty score": "A,2,\nB,10,0.25\nA,10,1\nB,2,0\n",
    "blank system": "  ,2,0.5\nB,10,0.25\nA,10,1\nB,2,0\n",
    "non-numeric topics": "A,q2,0.5\nB,nan,0.25\nA,nan,1\nB,q2,0\n",
}


def _whole(path, **kwargs):
    """The matrix (or error) of the whole-table reader."""
    saved = fio._stream_long_csv
    fio._stream_long_csv = lambda *a: None
    try:
        return _outcome(path, **kwargs)
    finally:
        fio._stream_long_csv = saved


def _outcome(path, **kwargs):
    try:
        m = read_matrix(path, **kwargs)
    except InputError as exc:
        return "error", str(exc)
    return m.systems, m.topics, m.values.tolist()


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("missing", ["raise", "zero", "drop"])
def test_streamed_long_csv_is_the_whole_read(tmp_path, name, missing):
    path = tmp_path / "m.csv"
    path.write_text(HEADER + CASES[name], encoding="utf-8")
    assert _outcome(path, missing=missing) == _whole(path, missing=missing)


def test_the_happy_path_is_streamed_and_irregular_files_fall_back(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text(HEADER + CASES["plain"], encoding="utf-8")
    assert fio._stream_long_csv(path, "system", "topic", "score", None, "raise") is not None
    for name in ("duplicate", "nan score", "text score", "empty score", "blank system"):
        path.write_text(HEADER + CASES[name], encoding="utf-8")
        assert fio._stream_long_csv(path, "system", "topic", "score", None, "raise") is None
    path.write_text("system,topic,measure,score\nA,1,AP,0.5\n", encoding="utf-8")  # a measure column: whole read
    assert fio._stream_long_csv(path, "system", "topic", "score", None, "raise") is None


@pytest.mark.parametrize("block", [64, 1 << 20])
def test_many_blocks_give_the_matrix_of_from_long(tmp_path, monkeypatch, block):
    rng = np.random.default_rng(7)
    S, c = 13, 41
    values = rng.random((S, c)).round(6)
    systems = [f"run{s}" for s in rng.permutation(S)]
    topics = [str(t) for t in rng.permutation(np.arange(100, 100 + c))]
    rows = [(systems[s], topics[t], float(values[s, t])) for s in range(S) for t in range(c)]
    order = rng.permutation(len(rows))
    path = tmp_path / "long.csv.gz"
    import gzip

    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("run,qid,value\n" + "".join(f"{rows[i][0]},{rows[i][1]},{rows[i][2]!r}\n" for i in order))
    monkeypatch.setattr(fio, "STREAM_BLOCK_BYTES", block)
    got = read_matrix(path)
    expected = ScoreMatrix.from_long([rows[i][0] for i in order], [rows[i][1] for i in order],
                                     np.array([rows[i][2] for i in order]))
    assert got == expected and got.systems == expected.systems and got.topics == expected.topics
    assert fio._stream_long_csv(path, "system", "topic", "score", None, "raise") is not None


# ---------------------------------------------------------------------- native Parquet in pieces
@pytest.mark.parametrize("batch_values", [1, 50, 1 << 20])  # one system a batch, a few, all
def test_native_parquet_read_in_batches_is_the_matrix(tmp_path, monkeypatch, batch_values):
    rng = np.random.default_rng(3)
    m = ScoreMatrix(rng.random((11, 17)), [f"s{i}" for i in range(11)], [f"q{j}" for j in range(17)], "nDCG@10")
    path = tmp_path / "m.parquet"
    fio.write_matrix(m, path)
    monkeypatch.setattr(fio, "NATIVE_BATCH_VALUES", batch_values)
    assert fio._read_native_parquet(path) is not None
    got = read_matrix(path)
    assert got == m and got.measure == "nDCG@10" and got.topics == m.topics


def test_other_parquet_files_are_read_whole(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    m = ScoreMatrix(np.eye(3) + 1, ["a", "b", "c"], ["1", "2", "3"])
    table = m.to_arrow()
    pq.write_table(table.append_column("note", pa.array(["x", "y", "z"])), tmp_path / "extra.parquet")
    assert fio._read_native_parquet(tmp_path / "extra.parquet") is None
    assert read_matrix(tmp_path / "extra.parquet") == m
    scores = pa.FixedSizeListArray.from_arrays(pa.array([1.0, None, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]), 3)
    pq.write_table(table.set_column(1, "scores", scores), tmp_path / "null.parquet")
    assert fio._read_native_parquet(tmp_path / "null.parquet") is None
    with pytest.raises(InputError, match="null scores"):
        read_matrix(tmp_path / "null.parquet")
    pq.write_table(m.to_long(), tmp_path / "long.parquet")
    assert fio._read_native_parquet(tmp_path / "long.parquet") is None and read_matrix(tmp_path / "long.parquet") == m
