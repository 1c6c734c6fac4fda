"""The compiled run/qrels reader equals the plain line-by-line reader, faults included."""

from __future__ import annotations

import bz2
import gzip
import lzma
import random

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import runs as ref

from fastrisk.data.runs import read_qrels, read_runs
from fastrisk.errors import InputError

SEPS = [" ", "  ", "\t", " \t "]
ENDS = ["\n", "\r\n", "\r"]


def ranking(rs, s, t):
    return [rs.docid(t, int(d)) for d in rs.docs[s, t, : rs.lengths[s, t]]]


def random_run(rnd, tag, topics, docs, max_depth, ties):
    rows = []
    for t in topics:
        n = rnd.randint(0, max_depth)
        for i, d in enumerate(rnd.sample(docs, min(n, len(docs)))):
            score = rnd.choice([1.0, 2.5, -0.0, 0.0]) if ties else rnd.uniform(-5, 5)
            rows.append([t, "Q0", d, str(i + 1), repr(score), tag])
    rnd.shuffle(rows) if rnd.random() < 0.5 else None
    sep, end = rnd.choice(SEPS), rnd.choice(ENDS)
    lead = rnd.choice(["", "\n", "\ufeff"])
    return lead + "".join(sep.join(r) + end for r in rows)


def write_bytes(path, text, codec):
    raw = text.encode("utf-8")
    path.write_bytes({"plain": raw, "gzip": gzip.compress(raw), "bz2": bz2.compress(raw),
                      "xz": lzma.compress(raw)}[codec])
    return path


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), ties=st.booleans(), codec=st.sampled_from(["plain", "gzip", "bz2", "xz"]))
def test_reader_equals_line_by_line_reference(tmp_path_factory, seed, ties, codec):
    rnd = random.Random(seed)
    tmp = tmp_path_factory.mktemp("r")
    topics = rnd.sample(["1", "2", "10", "099", "301", "7"], rnd.randint(1, 4))
    docs = [f"d{i}" for i in range(rnd.randint(1, 12))] + ["clueweb09-en0000-00-00001", "Z", "é"]
    paths = []
    for s in range(rnd.randint(1, 4)):
        text = random_run(rnd, f"tag{s}", topics, docs, 8, ties)
        if not text.strip("\ufeff\n"):
            text = f"1 Q0 x 1 1.0 tag{s}\n"
        paths.append(write_bytes(tmp / f"run{s}.txt", text, codec))
    want = [ref.read_run(p) for p in paths]
    rs = read_runs(paths, threads=rnd.choice([1, 2]))
    assert rs.systems == tuple(tag for tag, _ in want)
    assert rs.topics == tuple(ref.topic_order(t for _, r in want for t in r))
    for s, (_, run) in enumerate(want):
        for j, t in enumerate(rs.topics):
            assert ranking(rs, s, j) == run.get(t, [])
    # best ranks: first appearance in rank-major order
    for j in range(rs.n_topics):
        br = rs.best_rank[rs.doc_offsets[j]:rs.doc_offsets[j + 1]]
        assert np.all(np.diff(br) >= 0)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_qrels_equal_reference(tmp_path_factory, seed):
    rnd = random.Random(seed)
    tmp = tmp_path_factory.mktemp("q")
    rows = []
    for t in rnd.sample(["1", "2", "10", "301"], rnd.randint(1, 4)):
        for d in rnd.sample([f"d{i}" for i in range(9)], rnd.randint(1, 9)):
            rows.append(f"{t} 0 {d} {rnd.choice([-2, 0, 1, 2, 4, 127])}")
    rnd.shuffle(rows)
    rows.insert(rnd.randint(0, len(rows)), "# a comment line 1 2 3")
    rows += rows[: rnd.randint(0, 3)]  # repeated identical judgments are fine
    path = tmp / "q.txt"
    path.write_text(rnd.choice(["", "\ufeff"]) + "\n".join(rows) + "\n")
    want = ref.read_qrels(path)
    q = read_qrels(path)
    assert q.topics == tuple(ref.topic_order(want))
    for i, t in enumerate(q.topics):
        sl = q.topic_slice(i)
        assert dict(zip(q.docids[sl].to_pylist(), q.raw_grades[sl].tolist())) == want[t]
        assert q.docids[sl].to_pylist() == list(want[t])


RUN_FAULTS = [
    "1 Q0 d1 1 1.0\n",
    "1 Q0 d1 1 1.0 x\n1 Q0 d2 x 1.0 x\n",
    "1 Q0 d1 1 abc x\n",
    "1 Q0 d1 1 nan x\n",
    "1 Q0 d1 1 1.0 x\n2 Q0 d1 1 1.0 x\n1 Q0 d1 2 0.5 x\n",
    "1 Q0 d1 1 1.0 x\n1 Q0 d1 2 0.5 x\n1 Q0 d2 3 0.4\n",  # duplicate before a short line
    "1 Q0 d1 1 1.0 x\n1 Q0 d2 3 0.4\n1 Q0 d1 2 0.5 x\n",  # short line before a duplicate
    "1 Q0 d1 z 1.0 x\n1 Q0 d2 1 q x\n",
    "1 Q0 d1 z q x\n",
    "\n\n",
    "1 Q0 d1 1 1.0 x\r\n\r\n1 Q0 d2 1_0 1e400 x\r\n1 Q0 d3 1 1.0\r\n",
]


@pytest.mark.parametrize("text", RUN_FAULTS)
def test_run_faults_name_file_and_line_like_reference(tmp_path, text):
    path = tmp_path / "bad.run"
    path.write_text(text, newline="")
    try:
        ref.read_run(path)
        expected = None
    except ValueError as exc:
        expected = str(exc)
    if expected is None:
        assert read_runs(path).n_systems == 1
        return
    with pytest.raises(InputError) as info:
        read_runs(path)
    assert str(info.value) == expected


QRELS_FAULTS = [
    "1 0 dA\n",
    "1 0 dA one\n",
    "1 0 dA 1\n1 0 dB 1\n1 0 dA 2\n",
    "1 0 dA 1\n1 0 dA 1\n1 0 dA 3\n1 0 dA x\n",
    "# only a comment\n",
    "",
]


@pytest.mark.parametrize("text", QRELS_FAULTS)
def test_qrels_faults_like_reference(tmp_path, text):
    path = tmp_path / "q.txt"
    path.write_text(text)
    with pytest.raises(ValueError) as want:
        ref.read_qrels(path)
    with pytest.raises(InputError) as got:
        read_qrels(path)
    assert str(got.value) == str(want.value)


def test_grades_beyond_int8_are_rejected_not_wrapped(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("1 0 a 127\n1 0 b 128\n")
    with pytest.raises(InputError, match=r"q\.txt, line 2: grade 128 is outside the supported range -128\.\.127"):
        read_qrels(path)


def test_bom_crlf_and_comments(tmp_path):
    run = tmp_path / "a.run"
    run.write_bytes(b"\xef\xbb\xbf151 Q0 d1 1 2.0 t\r\n151 Q0 d2 2 1.0 t\r\n")
    rs = read_runs(run)
    assert rs.topics == ("151",) and ranking(rs, 0, 0) == ["d1", "d2"]
    q = tmp_path / "q.txt"
    q.write_bytes(b"\xef\xbb\xbf# trec_eval style comment\n151 0 d1 4\n")
    assert read_qrels(q).topics == ("151",)


def test_truncated_and_corrupt_compression_name_the_file(tmp_path):
    raw = gzip.compress(b"1 Q0 d1 1 1.0 t\n" * 1000)
    path = tmp_path / "cut.run.gz"
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(InputError, match=r"cut\.run\.gz: cannot decompress"):
        read_runs(path)
    path.write_bytes(bz2.compress(b"1 Q0 d1 1 1.0 t\n")[:-4])
    with pytest.raises(InputError, match=r"cut\.run\.gz: cannot decompress"):
        read_runs(path)


def test_zstd_is_read(tmp_path):
    text = b"1 Q0 d1 1 1.0 t\n1 Q0 d2 2 0.5 t\n"
    path = tmp_path / "a.run.zst"
    with pa.CompressedOutputStream(pa.OSFile(str(path), "wb"), "zstd") as fh:
        fh.write(text)
    assert ranking(read_runs(path), 0, 0) == ["d1", "d2"]


def test_non_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "bin.run"
    path.write_bytes(b"1 Q0 d1 1 1.0 t\n1 Q0 d\xff 2 0.5 t\n")
    with pytest.raises(InputError, match=r"bin\.run, line 2: not UTF-8 text \(byte 0xff\)"):
        read_runs(path)
    q = tmp_path / "q.bin"
    q.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(InputError, match=r"q\.bin, line 1: not UTF-8"):
        read_qrels(q)


@pytest.mark.slow  # the byte scanner as plain Python takes minutes on the bundled runs
def test_bundled_runs_equal_reference(bench_data):
    paths = sorted((bench_data / "trec2012-web" / "runs").glob("*.gz"))[:3]
    rs = read_runs(paths)
    for s, p in enumerate(paths):
        _, run = ref.read_run(p)
        for j, t in enumerate(rs.topics):
            assert ranking(rs, s, j) == run.get(t, [])


@pytest.mark.parametrize("n_tied", [3, 65, 300])
def test_long_tie_groups_and_interleaved_topics(tmp_path, n_tied):
    rnd = random.Random(n_tied)
    rows = [f"7 Q0 doc{i:04d} {i} 1.5 t" for i in rnd.sample(range(n_tied), n_tied)]
    rows += [f"3 Q0 x{i} {i} {10 - i} t" for i in range(5)]
    rows.insert(2, "3 Q0 early 9 0.25 t")  # topic 3 appears before and after topic 7
    path = tmp_path / "ties.run"
    path.write_text("\n".join(rows) + "\n")
    _, want = ref.read_run(path)
    rs = read_runs(path)
    for j, t in enumerate(rs.topics):
        assert ranking(rs, 0, j) == want[t]
