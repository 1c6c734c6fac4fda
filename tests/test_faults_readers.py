"""Fault suite, readers: arbitrary bytes, byte-order marks, other encodings and truncated
compression give an InputError naming the file (the API) or one line with exit 2 (the CLI),
never another exception or a silently different result.
"""

from __future__ import annotations

import gzip

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastrisk
from fastrisk.cli import main
from fastrisk.data.io import read_matrix
from fastrisk.data.runs import read_qrels, read_runs
from fastrisk.errors import InputError

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
WIDE = "topic,A,B\n1,0.5,0.25\n2,0.75,0.125\n3,0.0,1.0\n"
LONG = "system,topic,score\nA,1,0.5\nB,1,0.25\nA,2,0.75\nB,2,0.125\n"
RUN = "151 Q0 d1 1 2.0 r1\n151 Q0 d2 2 1.0 r1\n152 Q0 d3 1 1.0 r1\n"
QRELS = "151 0 d1 1\n151 0 d2 0\n152 0 d3 2\n"
SUFFIXES = [".csv", ".tsv", ".txt", ".dat", "", ".csv.gz", ".parquet"]
BOM = b"\xef\xbb\xbf"


def _clean_or_input_error(func, path):
    try:
        func(path)
    except InputError as exc:
        assert str(path) in str(exc), f"the message does not name the file: {exc}"


# ---------------------------------------------------------------------- the command line
@SETTINGS
@given(data=st.binary(max_size=400), suffix=st.sampled_from(SUFFIXES))
def test_cli_never_leaks_an_exception_on_arbitrary_bytes(tmp_path, capsys, data, suffix):
    path = tmp_path / f"scores{suffix}"
    path.write_bytes(data)
    try:  # what the library says about these bytes decides the one exit status expected
        fastrisk.risk(read_matrix(path), "mean")
        expected = 0
    except Exception:  # noqa: BLE001 - the CLI turns any of them into one line and status 2
        expected = 2
    status = main(["risk", str(path), "--baseline", "mean", "--format", "csv"])
    _, err = capsys.readouterr()
    assert status == expected, err
    if status == 2:
        assert err.startswith("fastrisk risk: error: ") and err.count("\n") == 1


# ---------------------------------------------------------------------- matrices
@pytest.mark.parametrize("text", [WIDE, LONG])
def test_a_byte_order_mark_changes_nothing_in_a_matrix(tmp_path, text):
    plain, marked = tmp_path / "plain.csv", tmp_path / "marked.csv"
    plain.write_text(text)
    marked.write_bytes(BOM + text.encode())
    a, b = read_matrix(plain), read_matrix(marked)
    assert (a.systems, a.topics) == (b.systems, b.topics) and (a.values == b.values).all()


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32", "cp1252-binary"])
def test_a_matrix_in_another_encoding_is_an_input_error(tmp_path, encoding):
    path = tmp_path / "m.csv"
    path.write_bytes(WIDE.encode(encoding) if encoding != "cp1252-binary" else b"topic,\xe9A\x00,B\n1,\xff,0\n")
    with pytest.raises(InputError, match=str(path)):
        read_matrix(path)


@SETTINGS
@given(data=st.binary(max_size=400), suffix=st.sampled_from(SUFFIXES))
def test_matrix_reader_gives_input_errors_on_arbitrary_bytes(tmp_path, data, suffix):
    path = tmp_path / f"scores{suffix}"
    path.write_bytes(data)
    _clean_or_input_error(read_matrix, path)


@pytest.mark.parametrize("keep", [10, 30, 60])
def test_a_truncated_gzip_matrix_is_an_input_error(tmp_path, keep):
    path = tmp_path / "m.csv.gz"
    path.write_bytes(gzip.compress(WIDE.encode() * 40)[:keep])
    with pytest.raises(InputError, match=str(path)):
        read_matrix(path)


# ---------------------------------------------------------------------- runs and qrels
@SETTINGS
@given(data=st.binary(max_size=300).filter(lambda b: b"\n" not in b or b.count(b"\n") < 20))
def test_run_and_qrels_readers_give_input_errors_on_arbitrary_bytes(tmp_path, data):
    path = tmp_path / "input"
    path.write_bytes(data)
    _clean_or_input_error(lambda p: read_runs([p]), path)
    _clean_or_input_error(read_qrels, path)


def test_a_byte_order_mark_changes_nothing_in_runs_and_qrels(tmp_path):
    for text, read in ((RUN, lambda p: read_runs([p])), (QRELS, read_qrels)):
        plain, marked = tmp_path / "plain", tmp_path / "marked"
        plain.write_text(text)
        marked.write_bytes(BOM + text.encode())
        assert read(plain).topics == read(marked).topics


def test_truncated_gzip_runs_and_qrels_are_input_errors(tmp_path):
    for text, read in ((RUN, lambda p: read_runs([p])), (QRELS, read_qrels)):
        path = tmp_path / "input.gz"
        path.write_bytes(gzip.compress(text.encode() * 40)[:40])
        with pytest.raises(InputError, match=str(path)):
            read(path)
