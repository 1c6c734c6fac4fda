"""Runs and qrels from frames, dicts, ir_datasets-style iterables and ranx equal the files;
binary save/load and the parse cache; directories with files that are not runs."""

from __future__ import annotations

import collections
import os
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from fastrisk.data.runs import RunFileWarning, read_qrels, read_runs
from fastrisk.errors import InputError
from fastrisk.measures.metrics import evaluate

RUN_A = "1 Q0 dB 1 2.0 alpha\n1 Q0 dA 2 2.0 alpha\n1 Q0 dC 3 5.0 alpha\n2 Q0 dZ 1 1.0 alpha\n"
RUN_B = "1 Q0 dA 1 9.0 beta\n2 Q0 dY 1 3.0 beta\n2 Q0 dZ 2 1.0 beta\n"
QRELS = "1 0 dA 1\n1 0 dC 2\n2 0 dZ 1\n2 0 dQ -2\n"


def same_runs(a, b):
    assert a.systems == b.systems and a.topics == b.topics
    assert np.array_equal(a.lengths, b.lengths) and np.array_equal(a.best_rank, b.best_rank)
    assert np.array_equal(a.docs, b.docs) and np.array_equal(a.doc_offsets, b.doc_offsets)
    assert [v.to_pylist() for v in a.vocab] == [v.to_pylist() for v in b.vocab]


def ranking_names(rs, s, t):
    return [rs.docid(t, int(d)) for d in rs.docs[s, t, : rs.lengths[s, t]]]


def same_qrels(a, b):
    assert a.topics == b.topics and np.array_equal(a.topic_offsets, b.topic_offsets)
    assert a.docids.to_pylist() == b.docids.to_pylist() and np.array_equal(a.raw_grades, b.raw_grades)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "a.run").write_text(RUN_A)
    (tmp_path / "b.run").write_text(RUN_B)
    (tmp_path / "q.txt").write_text(QRELS)
    return tmp_path


def frame(text):
    rows = [ln.split() for ln in text.splitlines()]
    return pd.DataFrame({"qid": [r[0] for r in rows], "docno": [r[2] for r in rows],
                         "score": [float(r[4]) for r in rows], "rank": [int(r[3]) for r in rows]})


def nested(text):
    out = collections.defaultdict(dict)
    for r in (ln.split() for ln in text.splitlines()):
        out[r[0]][r[2]] = float(r[4])
    return dict(out)


def test_frames_and_dicts_give_the_same_runset_as_files(files):
    want = read_runs([files / "a.run", files / "b.run"])
    same_runs(read_runs({"alpha": frame(RUN_A), "beta": frame(RUN_B)}), want)
    same_runs(read_runs({"alpha": nested(RUN_A), "beta": nested(RUN_B)}), want)
    both = pd.concat([frame(RUN_A).assign(run_id="alpha"), frame(RUN_B).assign(run_id="beta")])
    same_runs(read_runs(both), want)
    same_runs(read_runs(pa.Table.from_pandas(both, preserve_index=False)), want)
    pl = pytest.importorskip("polars")
    same_runs(read_runs(pl.from_pandas(both)), want)
    one = read_runs(nested(RUN_A), names=["alpha"])
    same_runs(one, read_runs(files / "a.run"))


def test_qrels_sources_equal_the_file(files):
    want = read_qrels(files / "q.txt")
    rows = [ln.split() for ln in QRELS.splitlines()]
    df = pd.DataFrame({"qid": [r[0] for r in rows], "docno": [r[2] for r in rows], "label": [int(r[3]) for r in rows]})
    same_qrels(read_qrels(df), want)
    nest = collections.defaultdict(dict)
    for r in rows:
        nest[r[0]][r[2]] = int(r[3])
    same_qrels(read_qrels(dict(nest)), want)
    Qrel = collections.namedtuple("Qrel", "query_id doc_id relevance iteration")
    same_qrels(read_qrels(iter([Qrel(r[0], r[2], int(r[3]), "0") for r in rows])), want)


def test_ranx_objects(files):
    ranx = pytest.importorskip("ranx")
    run = ranx.Run(nested(RUN_A), name="alpha")
    run_b = ranx.Run(nested(RUN_B), name="beta")
    same_runs(read_runs([run, run_b]), read_runs([files / "a.run", files / "b.run"]))
    q = collections.defaultdict(dict)
    for r in (ln.split() for ln in QRELS.splitlines()):
        if int(r[3]) >= 0:
            q[r[0]][r[2]] = int(r[3])
    got = read_qrels(ranx.Qrels(dict(q)))
    assert got.topics == ("1", "2") and sorted(got.docids.to_pylist()) == ["dA", "dC", "dZ"]


def test_in_memory_validation_names_system_and_row():
    bad = frame(RUN_A)
    bad.loc[3, "docno"] = "dB"
    bad.loc[3, "qid"] = "1"
    with pytest.raises(InputError, match=r"system 'x', row 3: document 'dB' appears twice for topic 1"):
        read_runs({"x": bad})
    nan = frame(RUN_A)
    nan.loc[2, "score"] = np.nan
    with pytest.raises(InputError, match=r"system 'x', row 2: score is NaN"):
        read_runs({"x": nan})
    with pytest.raises(InputError, match="needs a score column"):
        read_runs({"x": frame(RUN_A).drop(columns="score")})
    with pytest.raises(InputError, match=r"qrels, row 1: grade 300 is outside the supported range"):
        read_qrels(pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "label": [1, 300]}))
    with pytest.raises(InputError, match=r"qrels, row 1: document 'a' judged twice for topic 1"):
        read_qrels(pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "a"], "label": [1, 2]}))


def test_evaluate_takes_frames(files):
    ev_files = evaluate([files / "a.run", files / "b.run"], files / "q.txt", ["AP", "nDCG@5"])
    ev_mem = evaluate({"alpha": frame(RUN_A), "beta": frame(RUN_B)}, read_qrels(files / "q.txt"), ["AP", "nDCG@5"])
    assert np.array_equal(ev_files.values, ev_mem.values)


def test_save_and_memory_mapped_load(files, tmp_path):
    runs = read_runs([files / "a.run", files / "b.run"])
    runs.save(tmp_path / "set.arrow")
    back = read_runs(tmp_path / "set.arrow")
    same_runs(back, runs)
    assert not back.docs.flags.owndata  # a view of the mapped file
    q = read_qrels(files / "q.txt")
    q.save(tmp_path / "q.arrow")
    same_qrels(read_qrels(tmp_path / "q.arrow"), q)
    with pytest.raises(InputError, match="not a saved fastrisk RunSet"):
        read_runs(tmp_path / "q.arrow")
    assert "RunSet(2 systems x 2 topics, depth 3" in repr(runs) and "Qrels(2 topics, 4 judgments" in repr(q)


def test_parse_cache_hits_and_invalidates(files, tmp_path, monkeypatch):
    from fastrisk.data.runs import assemble as _assemble

    cache = tmp_path / "cache"
    paths = [files / "a.run", files / "b.run"]
    first = read_runs(paths, cache=cache)
    assert len(list(cache.glob("*.arrow"))) == 1
    calls = []
    real = _assemble.parse_runs
    monkeypatch.setattr(_assemble, "parse_runs", lambda *a, **k: calls.append(1) or real(*a, **k))
    same_runs(read_runs(paths, cache=cache), first)
    assert calls == []  # served from the cache
    (files / "b.run").write_text(RUN_B.replace("3.0", "0.5"))
    os.utime(files / "b.run", ns=(1, 1))
    changed = read_runs(paths, cache=cache)
    assert calls == [1] and ranking_names(changed, 1, 1) == ["dZ", "dY"] != ranking_names(first, 1, 1)
    next(cache.glob("*.arrow")).write_bytes(b"ARROW1 damaged")  # damaged entries are rebuilt
    read_runs(paths, cache=cache)


def test_directory_skips_files_that_are_not_runs(files):
    (files / "plot.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    (files / "README").write_text("These are the runs of the track.\n")
    os.remove(files / "q.txt")
    with pytest.warns(RunFileWarning) as record:
        rs = read_runs(files)
    assert rs.systems == ("alpha", "beta")
    assert sorted(str(w.message).split(":")[0] for w in record) == [f"skipping {files / 'README'}",
                                                                    f"skipping {files / 'plot.png'}"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_runs(files, pattern="*.run").systems == ("alpha", "beta")
    with pytest.raises(InputError, match=r"run file .*plot\.png.* not UTF-8|plot\.png, line 1: not UTF-8"):
        read_runs([files / "a.run", files / "plot.png"])  # named explicitly: an error


def test_name_collisions_name_the_files(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    (tmp_path / "x" / "r.run").write_text(RUN_A)
    (tmp_path / "y" / "r.run").write_text(RUN_A)
    with pytest.raises(InputError, match=r"collide.*'r': \[.*x/r\.run', .*y/r\.run'\]"):
        read_runs([tmp_path / "x" / "r.run", tmp_path / "y" / "r.run"])


def test_streamed_synthetic_set_reads_back(tmp_path, bench_data):
    import importlib.util

    spec = importlib.util.spec_from_file_location("synthetic_runs", bench_data / "synthetic_runs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    write_streamed = module.write_streamed

    n = write_streamed(tmp_path, 4, 6, 30, seed=3, first_topic=301)
    assert n == 4 * 6 * 30
    rs = read_runs(tmp_path, pattern="*.run.gz")
    q = read_qrels(tmp_path / "qrels.txt")
    assert rs.systems == ("sys000", "sys001", "sys002", "sys003") and rs.topics == tuple(str(t) for t in range(301, 307))
    assert (rs.lengths == 30).all() and q.topics == rs.topics
    # the qrels are the depth-100 (here: whole) pool, so every retrieved document is judged
    ev = evaluate(rs, q, ["Judged@30"])
    assert np.allclose(ev.values, 1.0)
