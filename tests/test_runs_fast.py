"""The one-pass run reader (scanner + per-topic name interner) equals the line-by-line
reference, takes the files it is meant for, and leaves the rest to the general reader.

The compiled pieces are checked against plain Python: the exact score fast path against
``float()`` (bit for bit, or it declines), the eight-byte name operations against slices,
and the qrels alignment through the read's name table against an Arrow lookup per topic.
"""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import runs as ref

from fastrisk._kernels import parse as kp
from fastrisk.data.runs import Qrels, align, qrelsfile, read_runs, runfile
from fastrisk.errors import InputError

# score forms: the exact fast path (short decimals, exponents) and the ones it hands to Arrow
SCORE_FORMS = [
    lambda x: f"{x:.6f}", lambda x: f"{x:.4g}", lambda x: repr(x), lambda x: f"{x:.3e}",
    lambda x: f"{x:+.2f}", lambda x: f"{x:.0f}.", lambda x: f"{x * 1e-30!r}", lambda x: f"{x:.25f}",
]


def ranking(rs, s, t):
    return [rs.docid(t, int(d)) for d in rs.docs[s, t, : rs.lengths[s, t]]]


def sorted_run(rnd, tag, topics, docs, depth, form, ties):
    """A run as TREC tools write it: topic by topic, scores non-increasing."""
    lines = []
    for t in topics:
        chosen = rnd.sample(docs, min(rnd.randint(1, depth), len(docs)))
        scores = sorted((rnd.choice([2.0, 1.0]) if ties else rnd.uniform(-50, 50) for _ in chosen), reverse=True)
        texts = [form(x) for x in scores]
        order = sorted(range(len(chosen)), key=lambda i: -float(texts[i]))  # non-increasing as parsed
        lines += [f"{t} Q0 {chosen[i]} {k + 1} {texts[i]} {tag}" for k, i in enumerate(order)]
    return "\n".join(lines) + "\n"


def fast_calls(monkeypatch):
    """Record whether each file went through the one-pass reader."""
    taken = []
    real = runfile._scan_run_fast

    def spy(path, table):
        out = real(path, table)
        taken.append(out is not None)
        return out

    monkeypatch.setattr(runfile, "_scan_run_fast", spy)
    return taken


def doc_names(rnd, n):
    # lengths 1..40 around the eight-byte words, shared prefixes (one hash word alike)
    return [rnd.choice(["", "clueweb12-", "LA0101", "d"]) + "".join(rnd.choice("abcXYZ019-") for _ in range(
        rnd.randint(1, 30))) for _ in range(n)]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), form=st.sampled_from(range(len(SCORE_FORMS))), ties=st.booleans())
def test_fast_reader_equals_reference(tmp_path_factory, monkeypatch, seed, form, ties):
    rnd = random.Random(seed)
    tmp = tmp_path_factory.mktemp("fast")
    topics = rnd.sample(["1", "2", "10", "099", "301", "7", "q-long-topic-name"], rnd.randint(1, 5))
    docs = sorted(set(doc_names(rnd, rnd.randint(2, 40))))
    paths = []
    for s in range(rnd.randint(1, 5)):
        path = tmp / f"run{s}.txt"
        path.write_text(sorted_run(rnd, f"tag{s}", topics, docs, 12, SCORE_FORMS[form], ties))
        paths.append(path)
    with monkeypatch.context() as m:
        taken = fast_calls(m)
        rs = read_runs(paths, threads=rnd.choice([1, 2]))
    assert all(taken) and len(taken) == len(paths)
    want = [ref.read_run(p) for p in paths]
    assert rs.systems == tuple(tag for tag, _ in want)
    assert rs.topics == tuple(ref.topic_order(t for _, r in want for t in r))
    for s, (_, run) in enumerate(want):
        for j, t in enumerate(rs.topics):
            assert ranking(rs, s, j) == run.get(t, [])
    with monkeypatch.context() as m:  # the general reader gives the same set, byte for byte
        m.setattr(runfile, "_scan_run_fast", lambda path, table: None)
        general = read_runs(paths)
    for name in ("docs", "lengths", "doc_offsets", "best_rank"):
        assert np.array_equal(getattr(rs, name), getattr(general, name))
    assert [v.to_pylist() for v in rs.vocab] == [v.to_pylist() for v in general.vocab]


def test_unusual_files_go_to_the_general_reader(tmp_path, monkeypatch):
    runs = {
        "plain.run": "1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n",
        "accent.run": "1 Q0 é 1 2.0 u\n1 Q0 b 2 1.0 u\n",  # not ASCII
        "rising.run": "1 Q0 a 1 1.0 v\n1 Q0 b 2 2.0 v\n",  # not in score order
        "plusrank.run": "1 Q0 a ¹ 2.0 w\n",  # a rank the scanner does not take
        "inf.run": "1 Q0 a 1 inf x\n1 Q0 b 2 1e400 x\n",  # scores parsed by Arrow (slow forms)
    }
    paths = []
    for name, text in runs.items():
        (tmp_path / name).write_text(text)
        paths.append(tmp_path / name)
    taken = fast_calls(monkeypatch)
    with pytest.raises(InputError, match=r"plusrank.run, line 1: rank '¹' is not an integer"):
        read_runs(paths, threads=1)
    rs = read_runs(paths[:3] + paths[4:], threads=1)
    assert taken[:5] == [True, False, False, False, True]
    assert ranking(rs, 2, 0) == ["b", "a"] and ranking(rs, 1, 0) == ["é", "b"]


@pytest.mark.parametrize("text, message", [
    ("1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n1 Q0 a 3 0.5 t\n", "line 3: document 'a' appears twice for topic 1"),
    ("1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0\n", "line 2: a TREC run line has 6 columns"),
    ("1 Q0 a 1 2.0 t\n1 Q0 b x 1.0 t\n", "line 2: rank 'x' is not an integer"),
    ("1 Q0 a 1 2.0 t\n1 Q0 b 2 nan t\n", "line 2: score is NaN"),
    ("1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0.0 t\n", "line 2: score '1.0.0' is not a number"),
])
def test_faults_found_on_the_fast_path_name_file_and_line(tmp_path, text, message):
    good = tmp_path / "good.run"
    good.write_text("1 Q0 a 1 2.0 g\n")
    bad = tmp_path / "bad.run"
    bad.write_text(text)
    with pytest.raises(InputError, match=f"bad.run, {message}"):
        read_runs([good, bad], threads=2)


DECIMALS = st.builds(
    lambda sign, ip, fp, ex: f"{sign}{ip}{'.' + fp if fp is not None else ''}{'e' + str(ex) if ex is not None else ''}",
    st.sampled_from(["", "-", "+"]), st.text("0123456789", min_size=0, max_size=20),
    st.none() | st.text("0123456789", min_size=0, max_size=20), st.none() | st.integers(-400, 400))


@settings(max_examples=400, deadline=None)
@given(text=DECIMALS | st.floats(allow_nan=False, allow_infinity=False).map(repr)
       | st.text("0123456789.eE+-", max_size=12))
def test_fast_float_is_exact_or_declines(text):
    data = np.frombuffer(text.encode() or b" ", np.uint8)
    ok, value = kp._fast_float(data, 0, len(text))
    if ok:
        want = float(text)
        assert np.float64(value).tobytes() == np.float64(want).tobytes()


@settings(max_examples=200, deadline=None)
@given(a=st.binary(max_size=40), b=st.binary(max_size=40), pad=st.integers(0, 9))
def test_word_operations_equal_byte_slices(a, b, pad):
    buf = np.frombuffer(bytes(pad) + a + b + bytes(8), np.uint8).copy()
    sa, sb = pad, pad + len(a)
    n = min(len(a), len(b))
    assert kp._same_bytes(buf, sa, buf, sb, n) == (a[:n] == b[:n])
    assert (kp.hash_bytes(buf, sa, sa + len(a)) == kp.hash_bytes(np.frombuffer(a + bytes(8), np.uint8), 0, len(a)))
    out = np.zeros(len(a) + 8, np.uint8)
    kp._copy_bytes(buf, sa, out, 0, len(a))
    assert out[:len(a)].tobytes() == a


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_alignment_through_the_name_table_equals_arrow_lookup(tmp_path_factory, seed):
    rnd = random.Random(seed)
    tmp = tmp_path_factory.mktemp("align")
    topics = ["1", "2", "3"]
    docs = sorted(set(doc_names(rnd, 30)))
    paths = []
    for s in range(3):
        path = tmp / f"r{s}.run"
        path.write_text(sorted_run(rnd, f"s{s}", topics, docs, 15, SCORE_FORMS[0], False))
        paths.append(path)
    rs = read_runs(paths)
    judged = {t: {d: rnd.randint(-1, 3) for d in rnd.sample(docs + ["unretrieved", "é"], 12)}
              for t in ["2", "3", "4"]}
    qrels = Qrels.from_dict(judged)
    fast = align(rs, qrels)
    plain = type(rs)(rs.systems, rs.topics, rs.docs, rs.lengths, rs.doc_offsets, rs.best_rank, rs.vocab)
    want = align(plain, qrels)  # no name table: an Arrow lookup per topic
    for name in ("grades", "ideal_offsets", "ideal_grades", "has_relevant"):
        assert np.array_equal(getattr(fast, name), getattr(want, name))
    for t, topic in enumerate(rs.topics):  # and both equal a dict
        grades = fast.grades[rs.doc_offsets[t]:rs.doc_offsets[t + 1]]
        names = rs.topic_vocab(t).to_pylist()
        assert [max(judged.get(topic, {}).get(d, -1), 0) if d in judged.get(topic, {}) else -1
                for d in names] == grades.tolist()


def test_name_table_grows_and_keeps_codes(tmp_path):
    # many topics and names: regions and entries grow (moved regions keep their codes)
    lines = [f"{t} Q0 doc-{t}-{i:05d} {i + 1} {-i} big" for t in range(40) for i in range(700)]
    path = tmp_path / "big.run"
    path.write_text("\n".join(lines) + "\n")
    other = tmp_path / "other.run"
    other.write_text("".join(line.replace(" big", " other\n") for line in lines if int(line.split()[3]) % 3 == 1))
    rs = read_runs([path, other], threads=1)
    assert rs.n_docs().tolist() == [700] * 40
    assert ranking(rs, 1, 5)[:3] == ["doc-5-00000", "doc-5-00003", "doc-5-00006"]
    table = rs._cache["dense_ids"].table
    names = pa.array([f"doc-{t}-{i:05d}" for t in range(40) for i in (0, 699, 700)])
    codes = table.lookup([str(t) for t in range(40)], [3] * 40, names)
    assert (codes.reshape(40, 3)[:, :2] >= 0).all() and (codes.reshape(40, 3)[:, 2] == -1).all()
    got = table.names(codes[codes >= 0])
    assert pc.all(pc.equal(got, names.filter(pa.array(codes >= 0)))).as_py()


def test_gzip_members_and_padding(tmp_path):
    import gzip

    one = "1 Q0 a 1 2.0 t\n"
    two = "1 Q0 b 2 1.0 t\n"
    (tmp_path / "members.run.gz").write_bytes(gzip.compress(one.encode()) + gzip.compress(two.encode()))
    (tmp_path / "padded.run.gz").write_bytes(gzip.compress((one + two).encode()) + b"\0" * 5)
    for name in ("members.run.gz", "padded.run.gz"):
        assert ranking(read_runs(tmp_path / name), 0, 0) == ["a", "b"]
    (tmp_path / "cut.run.gz").write_bytes(gzip.compress((one + two).encode())[:-6])
    with pytest.raises(InputError, match="cut.run.gz: cannot decompress"):
        read_runs(tmp_path / "cut.run.gz")


def test_a_set_read_from_files_pickles(tmp_path):
    import pickle

    path = tmp_path / "a.run"
    path.write_text("1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n2 Q0 c 1 1.0 t\n")
    rs = read_runs(path)
    back = pickle.loads(pickle.dumps(rs))
    assert [v.to_pylist() for v in back.vocab] == [["a", "b"], ["c"]]
    qrels = Qrels.from_dict({"1": {"b": 1}, "2": {"c": 2, "z": 1}})
    assert align(back, qrels).grades.tolist() == align(rs, qrels).grades.tolist() == [-1, 1, 2]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), repeat=st.sampled_from(["none", "same", "other", "split"]))
def test_qrels_fast_path_equals_general_path(tmp_path_factory, monkeypatch, seed, repeat):
    from fastrisk.data.runs import read_qrels

    rnd = random.Random(seed)
    tmp = tmp_path_factory.mktemp("q")
    topics = rnd.sample(["1", "2", "10", "099", "301", "q7"], rnd.randint(1, 5))
    lines = []
    for t in topics:  # each topic's lines together, in any topic order
        lines += [f"{t} 0 {d} {rnd.randint(-2, 3)}" for d in sorted(set(doc_names(rnd, rnd.randint(1, 15))))]
    if repeat == "same":  # a repeated judgment with the same grade: kept once
        lines.insert(1, lines[0])
    elif repeat == "other":  # with another grade: an error naming the line
        t, it, d, g = lines[0].split()
        lines.insert(1, f"{t} {it} {d} {int(g) + 1}")
    elif repeat == "split" and len(topics) > 1:  # a topic's lines in two places
        t, it, _, g = lines[0].split()  # (str.replace on the line would also hit the topic or grade)
        lines.append(f"{t} {it} extra-doc {g}")
    path = tmp / "q.txt"
    path.write_text("# comment\n" + "\n".join(lines) + "\n")
    calls = []
    real = qrelsfile._qrels_fast
    monkeypatch.setattr(qrelsfile, "_qrels_fast", lambda f, g: calls.append(1) or real(f, g))
    try:
        fast = read_qrels(path)
    except InputError as exc:
        fast = str(exc)
    monkeypatch.setattr(qrelsfile, "_qrels_fast", lambda f, g: None)
    try:
        general = read_qrels(path)
    except InputError as exc:
        general = str(exc)
    assert calls == [1]
    if isinstance(general, str):
        assert fast == general and "judged twice" in general
        return
    for name in ("topics", "topic_offsets", "grades", "raw_grades", "source"):
        assert np.array_equal(getattr(fast, name), getattr(general, name)) if name != "topics" and name != "source" \
            else getattr(fast, name) == getattr(general, name)
    assert fast.docids.to_pylist() == general.docids.to_pylist()
