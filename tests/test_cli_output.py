"""CLI outputs record what produced them: Parquet metadata always, a CSV comment header on request."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fastrisk
from fastrisk.cli import build_parser, main
from fastrisk.cli._output import invocation, table_metadata, write_table
from fastrisk.data.tabular import comment_header, parse_comment_header
from fastrisk.errors import InputError

MATRIX = "trec-matrices/web2012_err20.csv"


def run_command(argv):
    """Run a command as ``main`` does once it wraps commands in :func:`invocation`."""
    args = build_parser().parse_args(argv)
    with invocation(args, argv):
        args.func(args)


def test_parquet_records_the_command_baseline_and_parameters(bench_data, tmp_path):
    out = tmp_path / "r.parquet"
    argv = ["risk", str(bench_data / MATRIX), "--baseline", "run24", "--alpha", "0,5", "--measure", "ERR@20",
            "--format", "parquet", "--out", str(out)]
    run_command(argv)
    meta = {k.decode(): v.decode() for k, v in pq.read_schema(out).metadata.items()}
    assert meta["command"] == "risk"
    assert meta["baseline"] == "run24"
    assert meta["measure"] == "ERR@20"
    assert meta["alpha"] == "0,5"
    assert meta["convention"] == "classic"
    assert meta["significance"] == "0.05"
    assert meta["files"] == str(bench_data / MATRIX)
    assert meta["command_line"].startswith("fastrisk risk ")
    assert meta["fastrisk_version"] == fastrisk.__version__
    assert "threads" not in meta and "out" not in meta and "func" not in meta
    # the rows are unchanged by the metadata
    assert pq.read_table(out).num_rows == 2 * 48


def test_parquet_from_main_keeps_the_results_parameters(bench_data, tmp_path, capsys):
    out = tmp_path / "r.parquet"
    assert main(["risk", str(bench_data / MATRIX), "--baseline", "run24", "--convention", "minus",
                 "--format", "parquet", "--out", str(out)]) == 0
    meta = pq.read_schema(out).metadata
    assert meta[b"baseline"] == b"run24"
    assert meta[b"convention"] == b"minus"


def test_csv_has_no_header_unless_asked(bench_data, tmp_path):
    plain, commented = tmp_path / "plain.csv", tmp_path / "header.csv"
    base = ["risk", str(bench_data / MATRIX), "--baseline", "run24", "--alpha", "1", "--format", "csv"]
    run_command(base + ["--out", str(plain)])
    run_command(base + ["--header", "--out", str(commented)])
    assert not plain.read_text().startswith("#")
    text = commented.read_text()
    head = [line for line in text.splitlines() if line.startswith("#")]
    meta = parse_comment_header(head)
    assert meta["baseline"] == "run24" and meta["alpha"] == "1" and meta["command"] == "risk"
    body = text.splitlines()[len(head):]
    assert body == plain.read_text().splitlines()
    # read_table still reads it, and returns the header as metadata
    table = fastrisk.read_table(commented)
    assert table.to_pandas().equals(fastrisk.read_table(plain).to_pandas())  # NaN == NaN here
    assert table.schema.metadata[b"baseline"] == b"run24"


def test_header_round_trip_of_awkward_values():
    meta = {"title": "two\nlines", "path": r"C:\runs\new", "empty": "", "colon": "a: b"}
    lines = comment_header(meta).splitlines(keepends=True)
    assert len(lines) == 4 and all(line.startswith("# ") for line in lines)
    assert parse_comment_header(lines) == meta


def test_read_table_with_header_and_no_suffix(tmp_path):
    path = tmp_path / "scores"
    path.write_text("# baseline: b\n# measure: AP\nsystem\turisk\ns1\t0.5\n")
    table = fastrisk.read_table(path)
    assert table.column("urisk").to_pylist() == [0.5]
    assert table.schema.metadata[b"measure"] == b"AP"


def test_metadata_argument_wins_and_must_be_strings(capsys):
    table = pa.table({"system": ["a"], "x": [1.0]}).replace_schema_metadata(
        {"fastrisk": '{"baseline": "b", "n_topics": 50}'})
    assert table_metadata(table) == {"baseline": "b", "n_topics": "50"}
    assert table_metadata(table, {"baseline": "c", "measure": "AP"}) == {"baseline": "c", "n_topics": "50",
                                                                       "measure": "AP"}
    with pytest.raises(TypeError, match="metadata"):
        table_metadata(table, {"alpha": 5})
    write_table(table, "csv", metadata={"measure": "AP"}, header=True)
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == ["# baseline: b", "# n_topics: 50", "# measure: AP"] and out[3] == "system,x"


def test_parquet_to_stdout_carries_metadata(capsysbinary):
    table = pa.table({"system": ["a"], "x": [1.0]})
    write_table(table, "parquet", metadata={"measure": "AP"})
    data = capsysbinary.readouterr().out
    assert pq.read_schema(io.BytesIO(data)).metadata[b"measure"] == b"AP"


@pytest.mark.parametrize("fmt", ["latex", "markdown"])
def test_cli_latex_and_markdown(bench_data, capsys, fmt):
    assert main(["risk", str(bench_data / MATRIX), "--baseline", "run24", "--alpha", "0,5",
                 "--format", fmt]) == 0
    out = capsys.readouterr().out
    if fmt == "markdown":
        rows = [line.strip("|").split("|") for line in out.splitlines()]
        header, body = [c.strip() for c in rows[0]], rows[2:]
    else:
        lines = out.splitlines()
        body_lines = lines[lines.index("\\midrule") + 1:lines.index("\\bottomrule")]
        header = [c.strip().replace("\\_", "_") for c in lines[2].removesuffix("\\\\").split("&")]
        body = [line.removesuffix("\\\\").split("&") for line in body_lines]
    assert header[:3] == ["system", "alpha", "loss_weight"]
    assert len(body) == 2 * 48
    ref = fastrisk.risk(fastrisk.read_matrix(bench_data / MATRIX), "run24", alpha=[0, 5])
    first = [c.strip() for c in body[0]]
    assert first[0] == ref.systems[0]
    assert float(first[header.index("urisk")]) == pytest.approx(ref.urisk[0, 0], abs=5e-5)


def test_header_does_not_break_a_matrix_reader_error(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("# only a header\n")
    with pytest.raises(InputError):
        fastrisk.read_table(path)


def test_record_adds_to_the_running_commands_metadata(bench_data, tmp_path):
    from fastrisk.cli._output import record

    record(measure="ignored outside a command")  # no invocation: nothing to add to, no error
    args = build_parser().parse_args(["risk", str(bench_data / MATRIX), "--baseline", "run24", "--format",
                                      "parquet", "--out", str(tmp_path / "r.parquet")])
    with invocation(args) as meta:
        assert "measure" not in meta  # not given on the command line
        record(measure="ERR@20", ignored=None)
        args.func(args)
    schema = pq.read_schema(tmp_path / "r.parquet").metadata
    assert schema[b"measure"] == b"ERR@20" and b"ignored" not in schema


def test_main_records_the_command_and_honours_header(bench_data, tmp_path, capsys):
    out = tmp_path / "r.parquet"
    assert main(["risk", str(bench_data / MATRIX), "--baseline", "run24", "--alpha", "5", "--format", "parquet",
                 "--out", str(out)]) == 0
    meta = pq.read_schema(out).metadata
    assert meta[b"command"] == b"risk" and meta[b"alpha"] == b"5"
    assert meta[b"command_line"].startswith(b"fastrisk risk ")
    assert main(["risk", str(bench_data / MATRIX), "--baseline", "run24", "--alpha", "5", "--format", "csv",
                 "--header"]) == 0
    assert capsys.readouterr().out.startswith("# ")


def test_streamed_outputs_record_the_command_too(bench_data, tmp_path, capsys):
    out = tmp_path / "t.parquet"
    assert main(["risk", str(bench_data / MATRIX), "--baseline", "run24", "--alpha", "5", "--per-topic",
                 "--format", "parquet", "--out", str(out)]) == 0
    meta = pq.read_schema(out).metadata
    assert meta[b"command"] == b"risk" and meta[b"command_line"].startswith(b"fastrisk risk ")
    assert main(["table", str(bench_data / MATRIX), "--alpha", "5", "--format", "csv", "--header"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# ") and "\nsystem," in text
