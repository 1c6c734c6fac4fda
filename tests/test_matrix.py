"""ScoreMatrix construction, Arrow zero-copy layout, readers/writers and bad input."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pyarrow as pa
import pytest

from fastrisk import InputError, ScoreMatrix, read_matrix
from fastrisk.data.datasets import trec_matrix
from fastrisk.data.io import write_matrix


def small():
    return ScoreMatrix([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], ["a", "b"], ["1", "2", "10"], measure="AP")


def test_values_are_a_zero_copy_view_of_the_arrow_buffer():
    m = small()
    child = m.to_arrow().column("scores").chunk(0).values
    assert child.buffers()[1].address == m.values.__array_interface__["data"][0]
    assert m.values.flags.c_contiguous and not m.values.flags.writeable
    assert m.to_arrow().schema.field("scores").type == pa.list_(pa.float64(), 3)


@pytest.mark.parametrize("suffix", [".parquet", ".arrow", ".csv"])
def test_round_trip(tmp_path, suffix):
    m = small()
    write_matrix(m, tmp_path / f"m{suffix}")
    back = read_matrix(tmp_path / f"m{suffix}", measure="AP")
    assert back == m


def test_ipc_is_memory_mapped_zero_copy(tmp_path):
    m = small()
    write_matrix(m, tmp_path / "m.arrow")
    back = read_matrix(tmp_path / "m.arrow")
    child = back.to_arrow().column("scores").chunk(0).values
    assert child.buffers()[1].address == back.values.__array_interface__["data"][0]


def test_wide_csv_real_data_and_topics():
    m = trec_matrix("web2012_err20")
    assert m.shape == (48, 50) and m.topics[0] == "151" and m.topics[-1] == "200"
    assert m.systems[:2] == ("run1", "run2")


def test_wide_csv_with_topic_column_and_csv_wide_writer(tmp_path):
    m = small()
    write_matrix(m, tmp_path / "w.csv", format="csv-wide")
    assert (tmp_path / "w.csv").read_text().splitlines()[0] == "topic,a,b"
    assert read_matrix(tmp_path / "w.csv", measure="AP") == m


def test_long_form_sorts_topics_naturally_and_keeps_system_order():
    m = ScoreMatrix.from_long(["z", "z", "a", "a"], ["10", "2", "2", "10"], [1, 2, 3, 4])
    assert m.systems == ("z", "a") and m.topics == ("2", "10")
    np.testing.assert_array_equal(m.values, [[2, 1], [3, 4]])


def test_from_arrow_long_and_wide_and_pandas():
    long = pa.table({"run": ["a", "a", "b", "b"], "qid": ["1", "2", "1", "2"], "val": [0.1, 0.2, 0.3, 0.4]})
    m = ScoreMatrix.from_arrow(long, system="run", topic="qid", score="val")
    np.testing.assert_array_equal(m.values, [[0.1, 0.2], [0.3, 0.4]])
    wide = pa.table({"topic": ["1", "2"], "a": [0.1, 0.2], "b": [0.3, 0.4]})
    assert ScoreMatrix.from_arrow(wide) == m
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"system": ["a", "a", "b", "b"], "topic": ["1", "2", "1", "2"],
                       "score": [0.1, 0.2, 0.3, 0.4]}).astype({"system": "string", "topic": "string"})
    assert ScoreMatrix.from_pandas(df) == m
    assert m.to_pandas().shape == (2, 2)


def test_polars_when_installed():
    pl = pytest.importorskip("polars")
    df = pl.DataFrame({"system": ["a", "b"], "topic": ["1", "1"], "score": [0.5, 0.25]})
    assert ScoreMatrix.from_polars(df).values.tolist() == [[0.5], [0.25]]


def test_select_and_with_system():
    m = small()
    sub = m.select(systems=["b"], topics=["10", "1"])
    assert sub.values.tolist() == [[0.6, 0.4]]
    bigger = m.with_system("c", [1, 2, 3])
    assert bigger.systems == ("a", "b", "c") and bigger.scores_of("c").tolist() == [1, 2, 3]
    with pytest.raises(InputError, match="unknown topic"):
        m.select(topics=["99"])
    with pytest.raises(InputError, match=r"unknown system 'x'; the matrix has: a, b"):
        m.select(systems=["x"])


def test_trec_eval_q_output(tmp_path):
    p = tmp_path / "runA.treceval"
    p.write_text("runid\tall\tmyrun\nmap\t1\t0.5\nmap\t2\t0.25\nP_10\t1\t0.3\nP_10\t2\t0.1\nmap\tall\t0.375\n")
    m = read_matrix(p, measure="map")
    assert m.systems == ("myrun",) and m.values.tolist() == [[0.5, 0.25]] and m.measure == "map"
    with pytest.raises(InputError, match=r"several measures \(map, P_10\); pick one"):
        read_matrix(p)
    with pytest.raises(InputError, match=r"no measure 'ndcg'"):
        read_matrix(p, measure="ndcg")


def test_ir_measures_tsv_and_jsonl(tmp_path):
    tsv = tmp_path / "sysA.tsv.txt"
    tsv.write_text("1\tnDCG@20\t0.5\n2\tnDCG@20\t0.25\n")
    m = read_matrix(tsv, format="ir_measures")
    assert m.systems == ("sysA",) and m.measure == "nDCG@20"
    js = tmp_path / "x.jsonl"
    js.write_text("\n".join(json.dumps({"query_id": q, "measure": "P@10", "value": v, "run_id": r})
                            for r, q, v in [("a", "1", 0.5), ("a", "2", 0.1), ("b", "1", 0.2), ("b", "2", 0.3)]))
    m2 = read_matrix(js)
    assert m2.systems == ("a", "b") and m2.values.tolist() == [[0.5, 0.1], [0.2, 0.3]]


def test_several_trec_eval_files_are_one_matrix(tmp_path):
    for name, vals in [("r1", (0.5, 0.25)), ("r2", (0.125, 1.0))]:
        (tmp_path / f"{name}.txt").write_text(f"ndcg\t1\t{vals[0]}\nndcg\t2\t{vals[1]}\nndcg\tall\t0\n")
    m = read_matrix([tmp_path / "r1.txt", tmp_path / "r2.txt"], format="trec_eval")
    assert m.systems == ("r1", "r2") and m.values.tolist() == [[0.5, 0.25], [0.125, 1.0]]


# ---------------------------------------------------------------------- bad input
def write(tmp_path, text, name="m.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_nan_in_long_csv_names_file_line_system_topic(tmp_path):
    p = write(tmp_path, "system,topic,score\na,1,0.5\na,2,nan\n")
    with pytest.raises(InputError, match=r"system 'a' on topic '2'.*m.csv, line 3"):
        read_matrix(p)


def test_duplicate_rows_name_both_lines(tmp_path):
    p = write(tmp_path, "system,topic,score\na,1,0.5\nb,1,0.4\na,1,0.6\n")
    with pytest.raises(InputError, match=r"duplicate score for system 'a' on topic '1' at .*line 4 \(first given at .*line 2\)"):
        read_matrix(p)


def test_missing_topics_raise_drop_zero(tmp_path):
    p = write(tmp_path, "system,topic,score\na,1,0.5\na,2,0.5\nb,1,0.25\n")
    with pytest.raises(InputError, match=r"system 'b' lacks topic '2'.*missing='drop'"):
        read_matrix(p)
    assert read_matrix(p, missing="drop").topics == ("1",)
    assert read_matrix(p, missing="zero").values.tolist() == [[0.5, 0.5], [0.25, 0.0]]


def test_non_numeric_cell_in_wide_csv_names_line_and_column(tmp_path):
    p = write(tmp_path, "a,b\n0.5,0.25\n0.1,oops\n")
    with pytest.raises(InputError, match=r"non-numeric score 'oops' at .*m.csv, line 3, column 'b' \(topic '2'\)"):
        read_matrix(p)


def test_empty_cell_in_wide_csv_is_missing(tmp_path):
    p = write(tmp_path, "a,b\n0.5,0.25\n0.1,\n")
    with pytest.raises(InputError, match=r"system 'b' lacks topic '2'"):
        read_matrix(p)
    assert read_matrix(p, missing="drop").values.tolist() == [[0.5], [0.25]]


def test_inf_in_wide_csv(tmp_path):
    p = write(tmp_path, "a,b\n0.5,inf\n")
    with pytest.raises(InputError, match=r"column 'b' \(topic '1'\).*not finite"):
        read_matrix(p)


def test_empty_and_header_only_files(tmp_path):
    with pytest.raises(InputError, match="empty"):
        read_matrix(write(tmp_path, "", "e.txt"))
    with pytest.raises(InputError, match="no rows"):
        read_matrix(write(tmp_path, "a,b\n"))
    with pytest.raises(InputError, match="no such file"):
        read_matrix(tmp_path / "absent.csv")


def test_ragged_csv_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match=r"m.csv: malformed CSV"):
        read_matrix(write(tmp_path, "a,b\n0.1,0.2,0.3\n"))


def test_malformed_trec_eval_line(tmp_path):
    p = write(tmp_path, "map\t1\t0.5\nmap 2\n", "r.txt")
    with pytest.raises(InputError, match=r"r.txt, line 2: expected 'measure qid value'"):
        read_matrix(p, format="trec_eval")


def test_constructor_validation():
    with pytest.raises(InputError, match="duplicate system 'a'"):
        ScoreMatrix([[1.0], [2.0]], ["a", "a"], ["1"])
    with pytest.raises(InputError, match="empty score matrix"):
        ScoreMatrix(np.zeros((0, 3)), [], ["1", "2", "3"])
    with pytest.raises(InputError, match=r"system 'b' on topic '2' is nan"):
        ScoreMatrix([[1.0, 2.0], [3.0, np.nan]], ["a", "b"], ["1", "2"])
    with pytest.raises(InputError, match="shape"):
        ScoreMatrix([[1.0, 2.0]], ["a", "b"], ["1", "2"])
    with pytest.raises(InputError, match="2-D"):
        ScoreMatrix([1.0, 2.0], ["a"], ["1", "2"])
    with pytest.raises(InputError, match="numeric"):
        ScoreMatrix([["x"]], ["a"], ["1"])


def test_gzip_trec_eval(tmp_path):
    p = tmp_path / "run.txt.gz"
    with gzip.open(p, "wt") as fh:
        fh.write("P_10\t1\t0.5\nP_10\t2\t0.25\n")
    assert read_matrix(p, format="trec_eval").values.tolist() == [[0.5, 0.25]]


def test_long_csv_with_common_aliases_and_a_measure_column(tmp_path):
    p = write(tmp_path, "run_id,query_id,measure,value\na,1,P@10,0.5\na,1,AP,0.25\nb,1,P@10,0.125\nb,1,AP,1\n")
    with pytest.raises(InputError, match=r"several measures \(P@10, AP\); pick one"):
        read_matrix(p)
    m = read_matrix(p, measure="AP")
    assert m.systems == ("a", "b") and m.values.tolist() == [[0.25], [1.0]] and m.measure == "AP"
    with pytest.raises(InputError, match="no measure 'nDCG'"):
        read_matrix(p, measure="nDCG")
    table = pa.table({"run": ["x", "y"], "qid": ["7", "7"], "score": [0.5, 0.25]})
    assert ScoreMatrix.from_arrow(table).values.tolist() == [[0.5], [0.25]]
