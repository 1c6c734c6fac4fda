"""Files of other tools into fastrisk without a silent change: summary rows, trec_eval with many
measures, byte-order marks, encodings, DataFrames, duplicate or padded labels, topic ids."""

from __future__ import annotations

import gzip
import json
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest

from fastrisk import (
    InputError,
    ScoreMatrix,
    bootstrap,
    read_matrix,
    resolve_baseline,
    risk,
    zrisk,
)
from fastrisk.core.baselines import Baseline
from fastrisk.errors import TopicMismatchWarning

BOM = "\ufeff"


# ---------------------------------------------------------------- 1. summary rows
IRM_ROWS = [("1", 0.5), ("2", 0.25), ("3", 1.0)]


def _irm_tsv(run=None, summary=True):
    lines = [f"{run + chr(9) if run else ''}{q}\tnDCG@10\t{v}" for q, v in IRM_ROWS]
    if summary:
        lines.append(f"{run + chr(9) if run else ''}all\tnDCG@10\t0.583")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name, fmt", [("sysA.txt", None), ("sysA.tsv", None), ("sysA", "ir_measures"),
                                       ("sysA.tsv", "ir_measures")])
def test_ir_measures_summary_rows_are_not_topics(tmp_path, name, fmt):
    p = tmp_path / name
    p.write_text(_irm_tsv())
    m = read_matrix(p, format=fmt)
    assert m.topics == ("1", "2", "3") and m.values.tolist() == [[0.5, 0.25, 1.0]] and m.measure == "nDCG@10"


def test_ir_measures_summary_rows_with_a_run_column_and_in_jsonl(tmp_path):
    p = tmp_path / "runs.tsv"
    p.write_text(_irm_tsv("a") + _irm_tsv("b"))
    m = read_matrix(p)
    assert m.systems == ("a", "b") and m.topics == ("1", "2", "3")
    js = tmp_path / "x.jsonl"
    js.write_text("\n".join(json.dumps({"query_id": q, "measure": "P@10", "value": v, "run_id": "a"})
                            for q, v in [*IRM_ROWS, ("all", 0.583)]))
    assert read_matrix(js).topics == ("1", "2", "3")


def test_a_wide_tsv_is_still_a_csv(tmp_path):
    p = tmp_path / "wide.tsv"
    p.write_text("topic\tA\tB\n1\t0.5\t0.25\n2\t0.125\t1\n")
    m = read_matrix(p)
    assert m.systems == ("A", "B") and m.values.tolist() == [[0.5, 0.125], [0.25, 1.0]]


# ---------------------------------------------------------------- 2. trec_eval -q with many measures
# The layout of trec_eval's own test output out.test.aq (-q -a): measure padded, qid, value; the
# per-topic blocks first, then the 'all' block with runid and num_q.
MEASURES = {"num_ret": (1000, 1000), "num_rel": (12, 30), "map": (0.4101, 0.0952), "Rprec": (0.4167, 0.1333),
            "P_10": (0.5, 0.2), "iprec_at_recall_0.00": (1.0, 0.5), "recip_rank": (1.0, 0.25),
            "ndcg_cut_10": (0.6313, 0.1821)}


def _aq_text():
    lines = []
    for q, col in (("301", 0), ("302", 1)):
        lines += [f"{m:<22}\t{q}\t{vals[col]}" for m, vals in MEASURES.items()]
    lines += ["runid                 \tall\ttestrun", "num_q                 \tall\t2"]
    lines += [f"{m:<22}\tall\t{sum(vals) / 2}" for m, vals in MEASURES.items()]
    return "\n".join(lines) + "\n"


def test_trec_eval_many_measures_detected_and_picked(tmp_path):
    p = tmp_path / "out.test.aq"
    p.write_text(_aq_text())
    m = read_matrix(p, measure="map")
    assert m.systems == ("testrun",) and m.topics == ("301", "302") and m.values.tolist() == [[0.4101, 0.0952]]
    assert read_matrix(p, measure="P_10").values.tolist() == [[0.5, 0.2]]
    with pytest.raises(InputError, match=r"several measures \(num_ret, num_rel, map, .*ndcg_cut_10\); pick one"):
        read_matrix(p)


def test_trec_eval_many_measures_through_the_cli(tmp_path, capsys):
    from fastrisk.cli import main

    p = tmp_path / "out.test.aq"
    p.write_text(_aq_text())
    assert main(["info", str(p)]) == 2
    assert "ndcg_cut_10" in capsys.readouterr().err
    assert main(["info", str(p), "--measure", "ndcg_cut_10"]) == 0


# ---------------------------------------------------------------- byte-order marks and encodings
@pytest.mark.parametrize("name, text", [
    ("long.csv", "system,topic,score\na,151,0.5\na,152,0.25\nb,151,1\nb,152,0\n"),
    ("te.txt", "runid\tall\ta\nmap\t151\t0.5\nmap\t152\t0.25\nmap\tall\t0.375\n"),
    ("irm.tsv", "151\tAP\t0.5\n152\tAP\t0.25\nall\tAP\t0.375\n"),
])
def test_a_byte_order_mark_changes_nothing(tmp_path, name, text):
    plain, marked = tmp_path / name, tmp_path / f"bom-{name}"
    plain.write_text(text, encoding="utf-8")
    marked.write_text(BOM + text, encoding="utf-8")
    a, b = read_matrix(plain), read_matrix(marked)
    assert a.topics == b.topics == ("151", "152") and np.array_equal(a.values, b.values)
    gz = tmp_path / f"{name}.gz"
    gz.write_bytes(gzip.compress((BOM + text).encode()))
    assert read_matrix(gz, format=None if name.endswith("csv") else ("trec_eval" if "te" in name else
                                                                      "ir_measures")).topics == a.topics


def test_a_baseline_file_with_a_byte_order_mark(tmp_path):
    m = ScoreMatrix([[0.5, 0.25], [0.75, 0.5]], ["a", "b"], ["151", "152"])
    p = tmp_path / "base.csv"
    p.write_text(BOM + "topic,base\n151,0.5\n152,0.25\n", encoding="utf-8")
    _, base = resolve_baseline(m, str(p))
    assert base.values.tolist() == [[0.5, 0.25]]


def test_binary_and_truncated_input_is_a_clear_error(tmp_path):
    binary = tmp_path / "scores"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00\x01" * 10)
    with pytest.raises(InputError, match=r"scores: not UTF-8 text"):
        read_matrix(binary, format="trec_eval")
    latin = tmp_path / "latin.csv"
    latin.write_bytes("system,topic,score\nd\xe9j\xe0,1,0.5\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"latin.csv: malformed CSV"):
        read_matrix(latin)
    truncated = tmp_path / "te.txt.gz"
    text = "".join(f"map\t{q}\t0.{q % 97}\n" for q in range(5000))
    truncated.write_bytes(gzip.compress(text.encode())[:2000])
    with pytest.raises(InputError, match=r"te.txt.gz: cannot be read"):
        read_matrix(truncated, format="trec_eval")


# ---------------------------------------------------------------- DataFrames wherever a matrix goes
def _m():
    return ScoreMatrix(np.random.default_rng(0).random((3, 6)), ["a", "b", "c"], [str(i) for i in range(1, 7)])


@pytest.mark.parametrize("convert", [lambda m: m.to_pandas(), lambda m: m.to_pandas("long"),
                                     lambda m: pl.from_pandas(m.to_pandas("long")), lambda m: m.to_long()])
def test_frames_are_accepted_wherever_a_matrix_is(convert):
    m = _m()
    frame = convert(m)
    assert read_matrix(frame) == m
    np.testing.assert_array_equal(risk(frame, "a", alpha=1).trisk, risk(m, "a", alpha=1).trisk)
    np.testing.assert_array_equal(zrisk(frame).zrisk, zrisk(m).zrisk)
    np.testing.assert_array_equal(bootstrap(frame, "a", replicates=50, rng=1).pvalue,
                                  bootstrap(m, "a", replicates=50, rng=1).pvalue)


def test_something_else_is_refused_by_name():
    with pytest.raises(InputError, match=r"`matrix` must be a ScoreMatrix, a 2-D array \(systems x topics\), a pandas or polars DataFrame"):
        risk({"a": [1, 2]}, "a")
    with pytest.raises(InputError, match=r"`path` must be a file path"):
        read_matrix(3.5)


# ---------------------------------------------------------------- labels
def test_duplicate_system_columns_of_a_wide_csv(tmp_path):
    p = tmp_path / "wide.csv"
    p.write_text("topic,A,B,A\n1,0.5,0.25,0.5\n2,0.1,0.2,0.3\n")
    with pytest.raises(InputError, match=r"duplicate system column 'A' in .*wide.csv \(columns 2 and 4"):
        read_matrix(p)


def test_padded_labels_are_one_label(tmp_path):
    long = tmp_path / "long.csv"
    long.write_text("system,topic,score\nA,1,0.5\n A, 2,0.25\nB ,1,1\nB,2 ,0\n")
    m = read_matrix(long)
    assert m.systems == ("A", "B") and m.topics == ("1", "2")
    wide = tmp_path / "wide.csv"
    wide.write_text("topic, A,A\n1,0.5,0.25\n")
    with pytest.raises(InputError, match=r"duplicate system column 'A'"):
        read_matrix(wide)
    with pytest.raises(InputError, match=r"duplicate system 'A'"):
        ScoreMatrix([[1.0], [2.0]], [" A", "A"], ["1"])
    assert m.system_index(" A") == 0


def test_topic_ids_nan_and_row_order_give_one_canonical_order(tmp_path):
    rows = [("nan", 0.1, 0.2), ("10", 0.3, 0.5), ("2", 0.6, 0.1), ("inf", 0.9, 0.4), ("q7", 0.2, 0.2)]
    orders = [rows, rows[::-1], rows[2:] + rows[:2]]
    matrices = []
    for k, order in enumerate(orders):
        p = tmp_path / f"wide{k}.csv"
        p.write_text("topic,A,B\n" + "".join(f"{t},{a},{b}\n" for t, a, b in order))
        matrices.append(read_matrix(p))
    assert matrices[0].topics == ("2", "10", "inf", "nan", "q7")
    assert matrices[0] == matrices[1] == matrices[2]
    draws = [bootstrap(m, "B", replicates=200, rng=7, method="percentile").confidence_interval.low for m in matrices]
    np.testing.assert_array_equal(draws[0], draws[1])
    np.testing.assert_array_equal(draws[0], draws[2])


def test_empty_topic_ids_are_refused(tmp_path):
    p = tmp_path / "wide.csv"
    p.write_text("topic,A\n1,0.5\n,0.25\n")
    with pytest.raises(InputError, match=r"empty topic id at .*wide.csv, line 3"):
        read_matrix(p)


# ---------------------------------------------------------------- baselines
def test_a_baseline_object_holding_nan_is_refused():
    m = ScoreMatrix([[0.5, 0.25], [0.75, 0.5]], ["a", "b"], ["1", "2"])
    with pytest.raises(InputError, match=r"baseline 'mine' has a non-finite score nan on topic '2'"):
        risk(m, Baseline("mine", np.array([[0.5, np.nan]])))


def test_partial_topic_mismatch_with_a_baseline_is_warned_with_the_lists():
    m = ScoreMatrix(np.random.default_rng(1).random((2, 4)), ["a", "b"], ["151", "152", "153", "154"])
    base = {"151": 0.5, "152": 0.25, "0153": 0.1, "0154": 0.3, "999": 0.4}
    with pytest.warns(TopicMismatchWarning, match=r"'153', '154'.*'0153', '0154', '999'.*'153' ~ '0153'"):
        r = risk(m, base, alpha=0, missing="drop")
    assert r.n_topics == 2
    with pytest.raises(InputError, match=r"lacks topic\(s\) '153', '154'.*leading zeros"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", TopicMismatchWarning)
        risk(m, base, alpha=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TopicMismatchWarning)
        risk(m, {"151": 0.5, "152": 0.25, "153": 0.1, "154": 0.3}, alpha=0)  # a full match is quiet


def test_a_frame_with_padded_system_names_is_one_system():
    df = pd.DataFrame({"system": ["A", " A"], "topic": ["1", "2"], "score": [0.5, 0.25]})
    assert read_matrix(df).systems == ("A",)
