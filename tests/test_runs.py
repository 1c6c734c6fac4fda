"""TREC run and qrels readers: ordering, naming, encoding, malformed files."""

from __future__ import annotations

import gzip

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import pooling as ref

from fastrisk.data.runs import Qrels, RunSet, align, read_qrels, read_runs
from fastrisk.errors import InputError

RUN_A = """\
1 Q0 dB 1 2.0 alpha
1 Q0 dA 2 2.0 alpha
1 Q0 dC 3 5.0 alpha
2 Q0 dZ 1 1.0 alpha
"""


def write(path, text, gz=False):
    if gz:
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    return path


def ranking(rs, s, t):
    return [rs.docid(t, int(d)) for d in rs.docs[s, t, : rs.lengths[s, t]]]


def test_order_by_score_then_docid_descending(tmp_path):
    rs = read_runs(write(tmp_path / "a.run", RUN_A))
    assert rs.systems == ("alpha",)
    assert rs.topics == ("1", "2")
    assert ranking(rs, 0, 0) == ["dC", "dB", "dA"]  # 5.0; then the 2.0 tie by docid descending
    assert ranking(rs, 0, 1) == ["dZ"]


def test_gzip_directory_and_tag_collision_uses_file_names(tmp_path):
    write(tmp_path / "one.run.gz", RUN_A, gz=True)
    write(tmp_path / "two.txt", RUN_A.replace("5.0", "0.5"))
    rs = read_runs(tmp_path)
    assert rs.systems == ("one", "two")
    assert ranking(rs, 1, 0) == ["dB", "dA", "dC"]
    # distinct tags are kept as names
    write(tmp_path / "two.txt", RUN_A.replace("alpha", "beta"))
    assert read_runs([tmp_path / "one.run.gz", tmp_path / "two.txt"]).systems == ("alpha", "beta")


@pytest.mark.slow  # the byte scanner as plain Python takes minutes on the bundled runs
def test_bundled_indri_runs_named_from_files(bench_data):
    rs = read_runs(bench_data / "trec2012-web" / "runs")
    assert len(rs.systems) == 8 and "indri-rm-cata-filtered" in rs.systems
    assert rs.n_topics == 50 and rs.depth == 1000
    # best ranks are non-decreasing within a topic: depth-k pools are id prefixes
    for t in range(rs.n_topics):
        br = rs.best_rank[rs.doc_offsets[t]:rs.doc_offsets[t + 1]]
        assert np.all(np.diff(br) >= 0)


def test_to_arrow_is_dictionary_encoded(tmp_path):
    rs = read_runs(write(tmp_path / "a.run", RUN_A))
    tab = rs.to_arrow()
    assert pa.types.is_dictionary(tab.schema.field("docid").type)
    assert pa.types.is_dictionary(tab.schema.field("system").type)
    assert tab.column("docid").to_pylist() == ["dC", "dB", "dA", "dZ"]
    assert tab.column("rank").to_pylist() == [1, 2, 3, 1]


@pytest.mark.parametrize("text, message", [
    ("1 Q0 d1 1 1.0\n", r"line 1: a TREC run line has 6 columns"),
    ("1 Q0 d1 1 1.0 x\n1 Q0 d2 x 1.0 x\n", r"line 2: rank 'x' is not an integer"),
    ("1 Q0 d1 1 abc x\n", r"line 1: score 'abc' is not a number"),
    ("1 Q0 d1 1 1.0 x\n2 Q0 d1 1 1.0 x\n1 Q0 d1 2 0.5 x\n", r"bad\.run, line 3: document 'd1' appears twice for topic 1"),
    ("\n", r"run file is empty"),
])
def test_malformed_run_files(tmp_path, text, message):
    with pytest.raises(InputError, match=message):
        read_runs(write(tmp_path / "bad.run", text))


def test_missing_paths_and_name_errors(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        read_runs(tmp_path / "nope.run")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds no files"):
        read_runs(tmp_path / "empty")
    write(tmp_path / "a.run", RUN_A)
    with pytest.raises(InputError, match="`names` has 2 entries for 1 run files"):
        read_runs(tmp_path / "a.run", names=["x", "y"])
    with pytest.raises(InputError, match="qrels file .* does not exist"):
        read_qrels(tmp_path / "q.txt")


def test_qrels_negative_grades_count_as_zero(tmp_path):
    q = read_qrels(write(tmp_path / "q.txt", "1 0 dA -2\n1 0 dB 3\n2 0 dC 0\n"))
    assert q.topics == ("1", "2")
    assert q.grades.tolist() == [0, 3, 0]
    assert q.raw_grades.tolist() == [-2, 3, 0]
    rs = read_runs(write(tmp_path / "a.run", RUN_A))
    j = align(rs, q)
    assert j.has_relevant.tolist() == [True, False]
    # spam (-2) is judged (grade 0), dC is unjudged (-1) for topic 1
    g = {rs.docid(0, d): int(j.grades[d]) for d in range(rs.doc_offsets[1])}
    assert g == {"dA": 0, "dB": 3, "dC": -1}


@pytest.mark.parametrize("text, message", [
    ("1 0 dA\n", r"q\.txt, line 1: a qrels line has 4 columns"),
    ("1 0 dA one\n", r"line 1: grade 'one' is not an integer"),
    ("1 0 dA 1\n1 0 dA 2\n", r"line 2: document 'dA' judged twice for topic 1 with different grades"),
    ("", r"qrels file is empty"),
])
def test_malformed_qrels(tmp_path, text, message):
    with pytest.raises(InputError, match=message):
        read_qrels(write(tmp_path / "q.txt", text))


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_encoding_round_trips_rankings(data):
    runs, qrels = ref.runs_and_qrels(data.draw)
    rs, _ = ref.build(runs, qrels)
    for i, s in enumerate(rs.systems):
        for j, t in enumerate(rs.topics):
            assert ranking(rs, i, j) == runs[s][t]
    for depth in (1, 3, 20):
        sizes = rs.pool_size(depth)
        for j, t in enumerate(rs.topics):
            assert sizes[j] == len(ref.pool(runs, rs.systems, t, depth))


def test_from_arrays_validation():
    with pytest.raises(InputError, match="3-d integer array"):
        RunSet.from_arrays(np.zeros((2, 2)))
    with pytest.raises(InputError, match="`systems` must be S distinct names"):
        RunSet.from_arrays(np.zeros((2, 1, 1), int), systems=["a", "a"])
    q = Qrels.from_dict({"1": {"a": 1}})
    assert q.to_arrow().num_rows == 1
