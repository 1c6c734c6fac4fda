"""fastrisk.read_table: one-row-per-system tables in every tabular format."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

import fastrisk
from fastrisk.errors import InputError

TABLE = pa.table({"system": ["s1", "s2", "10"], "urisk": [0.1, -0.2, 0.3]})


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet", ".arrow"])
def test_read_table_formats(tmp_path, suffix):
    path = tmp_path / f"t{suffix}"
    if suffix == ".parquet":
        pq.write_table(TABLE, path)
    elif suffix == ".arrow":
        feather.write_feather(TABLE, path)
    else:
        sep = "\t" if suffix == ".tsv" else ","
        path.write_text(f"system{sep}urisk\ns1{sep}0.1\ns2{sep}-0.2\n10{sep}0.3\n")
    table = fastrisk.read_table(path)
    assert table.column("system").to_pylist() == ["s1", "s2", "10"]  # labels stay strings
    assert table.column("urisk").to_pylist() == [0.1, -0.2, 0.3]


def test_read_table_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        fastrisk.read_table(tmp_path / "missing.csv")
    path = tmp_path / "t.csv"
    path.write_text("run,urisk\na,1\n")
    with pytest.raises(InputError, match="no system column 'system'; the columns are run, urisk"):
        fastrisk.read_table(path)
    assert fastrisk.read_table(path, system="run").num_rows == 1
    trec = tmp_path / "t.txt"
    trec.write_text("runid all r1\nmap 1 0.5\nmap all 0.5\n")
    with pytest.raises(InputError, match="not trec_eval output"):
        fastrisk.read_table(trec)
