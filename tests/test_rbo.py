"""RBO with ties: the 10,000 reference vectors of Corsi & Urbano, references, properties."""

from __future__ import annotations

import csv
import math

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.agreement import rbo_min_over_tie_breaks, rbo_reference, rbo_webber_untied

from fastrisk.errors import InputError
from fastrisk.measures.agreement import (
    RBOResult,
    format_ranking,
    parse_ranking,
    ranking_from_scores,
    rbo,
    rbo_many,
    rbo_matrix,
)

SCORES = ("ext", "min", "max", "res")


@pytest.fixture(scope="module")
def reference_vectors(bench_data):
    with open(bench_data / "rbo-ties" / "test.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    if numba.config.DISABLE_JIT:  # the kernels run as Python: a tenth of the rows suffices
        rows = rows[::10]
    return rows


def test_reference_file_has_all_rows(bench_data):
    with open(bench_data / "rbo-ties" / "test.csv", newline="") as fh:
        assert sum(1 for _ in fh) == 10_001


@pytest.mark.parametrize("ties", ["w", "a", "b"])
def test_reproduces_every_reference_vector(reference_vectors, ties):
    xs = [r["x"] for r in reference_vectors]
    ys = [r["y"] for r in reference_vectors]
    p = np.array([float(r["p"]) for r in reference_vectors])
    got = rbo_many(xs, ys, p=p, ties=ties)
    for score in SCORES:
        want = np.array([float(r[f"{ties}.{score}"]) for r in reference_vectors])
        np.testing.assert_allclose(getattr(got, score), want, rtol=1e-10, atol=1e-12,
                                   err_msg=f"ties={ties} score={score}")


def test_single_pair_matches_batch(reference_vectors):
    row = reference_vectors[3]
    one = rbo(row["x"], row["y"], p=float(row["p"]), ties="b")
    for score in SCORES:
        assert getattr(one, score) == pytest.approx(float(row[f"b.{score}"]), abs=1e-12)


# ---------------------------------------------------------------------------- properties

items = st.integers(0, 14)


@st.composite
def tied_rankings(draw, max_len=8):
    members = draw(st.lists(items, min_size=1, max_size=max_len, unique=True))
    groups, i = [], 0
    while i < len(members):
        k = draw(st.integers(1, 3))
        groups.append(members[i:i + k])
        i += k
    return groups


def _as_api(groups):
    return [tuple(g) if len(g) > 1 else g[0] for g in groups]


persistence = st.floats(0.05, 0.98)


@settings(max_examples=40, deadline=None)
@given(tied_rankings(), tied_rankings(), persistence, st.sampled_from(["w", "a", "b"]))
def test_matches_plain_reference(x, y, p, ties):
    got = rbo(_as_api(x), _as_api(y), p=p, ties=ties)
    want = rbo_reference(x, y, p, ties)
    for score in SCORES:
        assert getattr(got, score) == pytest.approx(want[score], abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(items, min_size=1, max_size=9, unique=True),
       st.lists(items, min_size=1, max_size=9, unique=True), persistence)
def test_without_ties_all_treatments_are_webber_rbo(x, y, p):
    want = rbo_webber_untied(x, y, p)
    for ties in "wab":
        got = rbo(x, y, p=p, ties=ties)
        assert got.min == pytest.approx(want["min"], abs=1e-12)
        assert got.ext == pytest.approx(want["ext"], abs=1e-12)
        assert got.min - 1e-12 <= got.ext <= got.max + 1e-12
        assert got.res == pytest.approx(got.max - got.min, abs=1e-15)
        assert 0.0 <= got.min and got.max <= 1.0 + 1e-12


@settings(max_examples=30, deadline=None)
@given(tied_rankings(max_len=5), tied_rankings(max_len=5), persistence)
def test_treatment_a_min_is_expectation_over_tie_breaking(x, y, p):
    assert rbo(_as_api(x), _as_api(y), p=p, ties="a").min == pytest.approx(
        rbo_min_over_tie_breaks(x, y, p), abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(tied_rankings(), tied_rankings(), persistence, st.sampled_from(["w", "a", "b"]))
def test_symmetric_in_its_arguments(x, y, p, ties):
    a = rbo(_as_api(x), _as_api(y), p=p, ties=ties)
    b = rbo(_as_api(y), _as_api(x), p=p, ties=ties)
    for score in SCORES:
        assert getattr(a, score) == pytest.approx(getattr(b, score), abs=1e-13)


def test_identical_untied_rankings_and_disjoint_rankings():
    same = rbo("a b c d", "a b c d", p=0.8)
    assert same.ext == pytest.approx(1.0)
    # seen part: 1 - p^4; unseen: X_4 = 4 items keep agreeing with weight 4/d at depth d > 4
    tail = sum(4 / d * 0.8**d for d in range(5, 2000))
    assert same.min == pytest.approx(1.0 - 0.8**4 + 0.2 / 0.8 * tail, abs=1e-12)
    assert same.max == pytest.approx(1.0)
    none = rbo("a b c", "d e f", p=0.8)
    assert none.min == 0.0 and none.ext == 0.0
    # best case: from depth 4 on, the lists exchange items, agreement (2d - 6)/d until 6
    best = sum((2 * d - 6) / d * 0.8**d for d in range(4, 7)) + 0.8**7 / 0.2
    assert none.max == pytest.approx(0.2 / 0.8 * best, abs=1e-12)


def test_known_value_first_items_swapped():
    # depth 1 agreement 0, then 1 for ever: RBO = (1-p)/p * sum_{d>=2} p^d = p
    r = rbo("a b", "b a", p=0.9)
    assert r.ext == pytest.approx(0.9) and r.max == pytest.approx(0.9)
    # the lower bound keeps the 2 items and nothing more: (1-p)/p (p^2 + 2 sum_{d>2} p^d/d)
    tail = sum(2 / d * 0.9**d for d in range(3, 5000))
    assert r.min == pytest.approx(0.1 / 0.9 * (0.81 + tail), abs=1e-12)


# ---------------------------------------------------------------------------- rankings


def test_parse_and_format_round_trip():
    assert parse_ranking("a (b c) d") == ["a", ("b", "c"), "d"]
    assert parse_ranking(" ( x ) y ") == ["x", "y"]
    assert format_ranking(["a", ("b", "c"), "d"]) == "a (b c) d"
    assert format_ranking(parse_ranking("r1 (r2 r3 r4) r5")) == "r1 (r2 r3 r4) r5"


def test_ranking_from_scores_groups_equal_scores_higher_first():
    assert ranking_from_scores([0.2, 0.5, 0.5, 0.1], items=["w", "x", "y", "z"]) == [("x", "y"), "w", "z"]
    assert ranking_from_scores([3.0, 1.0]) == [0, 1]


def test_groups_may_be_sets_lists_or_tuples():
    a = rbo(["a", {"b", "c"}, "d"], ["b", ["a", "c"], "d"], p=0.7)
    b = rbo("a (b c) d", "b (a c) d", p=0.7)
    assert a == b


def test_rbo_matrix_matches_pairwise_calls():
    rng = np.random.default_rng(5)
    scores = rng.integers(0, 4, size=(4, 7)).astype(float)
    m = rbo_matrix(scores, p=0.85, ties="b", labels=list("ABCD"))
    for i in range(4):
        for j in range(4):
            r = rbo(ranking_from_scores(scores[i]), ranking_from_scores(scores[j]), p=0.85, ties="b")
            assert m.ext[i, j] == pytest.approx(r.ext, abs=1e-14)
            assert m.min[i, j] == pytest.approx(r.min, abs=1e-14)
            assert m.max[i, j] == pytest.approx(r.max, abs=1e-14)
    t = m.to_arrow()
    assert t.column_names == ["a", "b", "p", "ties", "ext", "min", "max", "res"] and t.num_rows == 16
    assert t.column("ext").to_pylist()[1] == m.ext[0, 1]
    assert t.column("a").to_pylist()[:5] == ["A", "A", "A", "A", "B"]


def test_rbo_many_result_table():
    res = rbo_many(["a b", "a (b c)"], ["b a", "c b a"], p=0.6, ties="w")
    assert isinstance(res, RBOResult) and res.ext.shape == (2,)
    t = res.to_arrow()
    assert t.column_names == ["pair", "a", "b", "ties", "ext", "min", "max", "res", "p"]
    assert t.column("pair").to_pylist() == [0, 1]
    assert t.column("a").to_pylist() == ["a[0]", "a[1]"] and t.column("b").to_pylist() == ["b[0]", "b[1]"]
    assert t.column("ext").to_pylist() == res.ext.tolist()
    assert t.column("p").to_pylist() == [0.6, 0.6]
    assert rbo_many([], [], p=0.5).ext.shape == (0,)


# ---------------------------------------------------------------------------- errors


@pytest.mark.parametrize("p", [0, 1, 1.5, -0.1, True, "0.9", math.nan])
def test_p_must_be_in_open_unit_interval(p):
    with pytest.raises(InputError, match=r"`p` must be a persistence strictly between 0 and 1"):
        rbo("a b", "b a", p=p)


def test_p_per_pair_checked():
    with pytest.raises(InputError, match=r"strictly between 0 and 1, got 1.0 for pair 1"):
        rbo_many(["a", "b"], ["a", "b"], p=[0.5, 1.0])
    with pytest.raises(InputError, match=r"`p` must be a number or one per pair \(2\)"):
        rbo_many(["a", "b"], ["a", "b"], p=[0.5])


def test_ties_must_be_known():
    with pytest.raises(InputError, match="`ties` must be one of 'w', 'a' or 'b', got 'c'"):
        rbo("a", "a", ties="c")


@pytest.mark.parametrize(
    ("x", "message"),
    [
        ([], "`a` is an empty ranking"),
        ("", "`a` is an empty ranking"),
        (["a", "a"], "`a` ranks item 'a' more than once"),
        (["a", ("b", "a")], "`a` ranks item 'a' more than once"),
        (["a", ()], "`a` has an empty tie group at rank 2"),
        (["a", (("b", "c"),)], "`a` has a nested tie group at rank 2"),
        ([{"a": 1}], "rankings must hold hashable items, got {'a': 1}"),
        (3, "`a` must be a list or tuple of items"),
        ("a (b c", r"unclosed '\(' in ranking"),
        ("a b) c", r"unmatched '\)' in ranking"),
        ("a (b (c)) d", r"nested '\(' in ranking"),
        ("a () b", r"empty tie group '\(\)' in ranking"),
    ],
)
def test_bad_rankings(x, message):
    with pytest.raises(InputError, match=message):
        rbo(x, ["a"])


def test_rbo_many_lengths_must_agree():
    with pytest.raises(InputError, match="`a` and `b` must hold as many rankings, got 2 and 1"):
        rbo_many(["a", "b"], ["a"])
    with pytest.raises(InputError, match=r"`a\[1\]` ranks item 'b' more than once"):
        rbo_many(["a", "b b"], ["a", "b"])


def test_ranking_from_scores_errors():
    with pytest.raises(InputError, match="`items` has 1 labels but `scores` has 2 values"):
        ranking_from_scores([1.0, 2.0], items=["a"])
    with pytest.raises(InputError, match="`scores` must be finite; position 1 is nan"):
        ranking_from_scores([1.0, math.nan])


def test_rbo_matrix_errors():
    with pytest.raises(InputError, match=r"`scores` must be 2-D \(rankings x items\), got shape \(3,\)"):
        rbo_matrix([1.0, 2.0, 3.0])
    with pytest.raises(InputError, match="`scores` must be finite; row 0, column 1 is inf"):
        rbo_matrix([[1.0, math.inf]])
    with pytest.raises(InputError, match="`labels` has 1 entries for 2 rankings"):
        rbo_matrix([[1.0, 2.0], [2.0, 1.0]], labels=["a"])
