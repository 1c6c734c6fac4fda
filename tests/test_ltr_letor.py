"""LETOR reader, writer and the seeded synthetic generator."""

from __future__ import annotations

import numpy as np
import pytest

from fastrisk.errors import InputError
from fastrisk.ltr import letor_data, lightgbm_example, read_letor, synthetic_letor, write_letor


def test_lightgbm_example_shape(bench_data):
    train, test = lightgbm_example()
    assert (train.n_queries, train.n_documents, train.n_features) == (201, 3005, 300)
    assert (test.n_queries, test.n_documents, test.n_features) == (50, 768, 300)
    assert set(train.labels.tolist()) == {0, 1, 2, 3, 4}
    sizes = [int(v) for v in (bench_data / "letor-lightgbm/rank.train.query").read_text().split()]
    assert train.group.tolist() == sizes
    # the first line of rank.train: label 0, feature 10 = 0.89, feature 11 = 0.75, feature 1 absent
    assert train.labels[0] == 0
    assert train.features[0, 9] == 0.89 and train.features[0, 10] == 0.75 and train.features[0, 0] == 0.0


def test_qid_grouping_and_comments(tmp_path):
    f = tmp_path / "a.txt"
    f.write_text("2 qid:7 1:0.5 3:1.5 # doc a\n0 qid:7 2:1\n\n1 qid:3 1:2 # other\n")
    d = read_letor(f)
    assert d.qids == ("7", "3")
    assert d.group.tolist() == [2, 1]
    assert d.labels.tolist() == [2, 0, 1]
    np.testing.assert_array_equal(d.features, [[0.5, 0, 1.5], [0, 1, 0], [2, 0, 0]])


def test_query_file_beside_data_is_found(tmp_path):
    f = tmp_path / "b.train"
    f.write_text("1 1:1\n0 1:2\n3 2:1\n")
    (tmp_path / "b.train.query").write_text("2\n1\n")
    assert read_letor(f).group.tolist() == [2, 1]


def test_round_trip(tmp_path):
    d = synthetic_letor(5, (2, 6), 4, rng=3)
    write_letor(d, tmp_path / "s.txt", query_file=True)
    back = read_letor(tmp_path / "s.txt", n_features=4)
    np.testing.assert_array_equal(back.features, d.features)
    np.testing.assert_array_equal(back.labels, d.labels)
    assert back.group.tolist() == d.group.tolist() and back.qids == d.qids
    via_query = read_letor(tmp_path / "s.txt", query=tmp_path / "s.txt.query", n_features=4)
    assert via_query.group.tolist() == d.group.tolist()


@pytest.mark.parametrize("text, message", [
    ("1 qid:1 1:nan\n", "feature 1 is nan"),
    ("x qid:1 1:1\n", "label 'x'"),
    ("1.5 qid:1 1:1\n", "integer grade"),
    ("-1 qid:1 1:1\n", "integer grade"),
    ("1 qid:1 0:1\n", "start at 1"),
    ("1 qid:1 1:1\n0 qid:2 1:1\n1 qid:1 1:1\n", "not contiguous"),
    ("1 1:1\n", "no 'qid:'"),
    ("1 qid:1 abc\n", "line 1"),
])
def test_bad_files_name_the_line(tmp_path, text, message):
    f = tmp_path / "bad.txt"
    f.write_text(text)
    with pytest.raises(InputError, match=message):
        read_letor(f)


def test_bad_query_file(tmp_path):
    f = tmp_path / "c.txt"
    f.write_text("1 1:1\n0 1:2\n")
    q = tmp_path / "c.query"
    q.write_text("3\n")
    with pytest.raises(InputError, match="add up to 3"):
        read_letor(f, query=q)
    with pytest.raises(InputError, match="no query"):
        read_letor(f, query=tmp_path / "missing")
    with pytest.raises(InputError, match="no LETOR file"):
        read_letor(tmp_path / "missing.txt")


def test_letor_data_validation():
    with pytest.raises(InputError, match="feature 2 of document 1"):
        letor_data([[0, 0], [0, np.nan]], [0, 1], [2])
    with pytest.raises(InputError, match="add up to"):
        letor_data([[0], [1]], [0, 1], [3])
    with pytest.raises(InputError, match="integer grades"):
        letor_data([[0], [1]], [0, 0.5], [2])


def test_synthetic_is_seeded_and_shaped():
    a = synthetic_letor(30, 12, 8, rng=7)
    b = synthetic_letor(30, 12, 8, rng=7)
    c = synthetic_letor(30, 12, 8, rng=8)
    np.testing.assert_array_equal(a.features, b.features)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert not np.array_equal(a.features, c.features)
    assert (a.n_queries, a.n_documents, a.n_features) == (30, 360, 8)
    assert a.labels.min() == 0 and a.labels.max() == 4
    # grade proportions follow MSLR-WEB10K's: about half the documents are not relevant
    big = synthetic_letor(200, 50, 8, rng=1)
    assert 0.45 < np.mean(big.labels == 0) < 0.6
    # the baseline feature 1 correlates with the grades
    assert np.corrcoef(big.features[:, 0], big.labels)[0, 1] > 0.2
    with pytest.raises(InputError, match="n_queries"):
        synthetic_letor(0)


def test_subset():
    d = synthetic_letor(6, (2, 5), 3, rng=2)
    s = d.subset([4, 1])
    assert s.qids == (d.qids[4], d.qids[1])
    np.testing.assert_array_equal(s.features[: d.group[4]], d.features[d.boundaries[4]:d.boundaries[5]])
