"""The command line, end to end (in-process and as a real subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pyarrow.parquet as pq
import pytest

from fastrisk.cli import main


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_demo_prints_published_tables(capsys):
    status, out, _ = run(capsys, "demo")
    assert status == 0
    assert "uogTrA44xi" in out and "qutwb" in out
    line = next(l for l in out.splitlines() if l.startswith("uogTrA44xi") and " 10.0000" in l)
    assert "-0.5104" in line and "0.3091" in line and "-1.6512" in line
    assert "RMSE(SE_x, SE_J) over all 48 runs" in out


def test_risk_csv_and_json(capsys, bench_data, tmp_path):
    matrix = str(bench_data / "trec-matrices" / "web2012_err20.csv")
    base = str(bench_data / "trec2012-web" / "baseline-indriCASP.csv")
    status, out, _ = run(capsys, "risk", matrix, "--topics", "151-200", "--baseline", base,
                         "--baseline-column", "err20", "--alpha", "0,1", "--format", "csv")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].startswith("system,alpha,loss_weight,urisk,standard_error,se_jack,trisk,pvalue")
    assert len(lines) == 1 + 48 * 2
    status, out, _ = run(capsys, "risk", matrix, "--topics", "151-200", "--baseline", base,
                         "--baseline-column", "err20", "--loss-weight", "11", "--format", "json")
    row = next(json.loads(l) for l in out.splitlines() if json.loads(l)["system"] == "run24")
    assert row["alpha"] == 10 and round(row["trisk"], 4) == -1.6512


def test_risk_parquet_per_topic(capsys, bench_data, tmp_path):
    matrix = str(bench_data / "trec-matrices" / "web2011_ndcg20.csv")
    out_path = tmp_path / "t.parquet"
    status, _, _ = run(capsys, "risk", matrix, "--baseline", "run1", "--alpha", "5", "--per-topic",
                       "--format", "parquet", "--out", str(out_path))
    assert status == 0
    table = pq.read_table(out_path)
    assert table.column_names == ["system", "topic", "alpha", "x", "tr", "tj"]
    assert table.num_rows == 62 * 50


def test_virtual_baseline_and_smooth_minus(capsys, bench_data):
    matrix = str(bench_data / "trec-matrices" / "adhoc5_ap.csv")
    status, out, _ = run(capsys, "risk", matrix, "--baseline", "median", "--value", "smooth",
                         "--convention", "minus", "--format", "csv")
    assert status == 0 and len(out.splitlines()) == 1 + 61


def test_info(capsys, bench_data):
    status, out, _ = run(capsys, "info", str(bench_data / "trec-matrices" / "adhoc8_p10.csv"))
    assert status == 0 and "129 systems x 50 topics" in out


@pytest.mark.parametrize("argv,match", [
    (["risk", "FILE", "--baseline", "nope"], "unknown baseline 'nope'"),
    (["risk", "FILE", "--baseline", "run1", "--alpha", "x"], "--alpha must be comma-separated numbers"),
    (["risk", "FILE", "--baseline", "run1", "--alpha", "-1"], "`alpha` must be >= 0"),
    (["risk", "FILE", "--baseline", "run1", "--value", "smooth", "--alpha", "1"], "--alpha/--loss-weight apply"),
    (["risk", "missing.csv", "--baseline", "run1"], "missing.csv: no such file"),
])
def test_errors_exit_2_without_traceback(capsys, bench_data, argv, match):
    argv = [str(bench_data / "trec-matrices" / "web2012_err20.csv") if a == "FILE" else a for a in argv]
    status, out, err = run(capsys, *argv)
    assert status == 2 and match in err and "Traceback" not in err and out == ""


def test_console_entry_point_as_subprocess(bench_data):
    proc = subprocess.run([sys.executable, "-m", "fastrisk", "risk", str(bench_data / "trec-matrices" /
                          "web2013_err20.csv"), "--baseline", "bogus"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "unknown baseline 'bogus'" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_demo_report(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "demo.html"
    status, _, err = run(capsys, "demo", "--report", str(path))
    assert status == 0 and "report written" in err
    html = path.read_text()
    assert "uogTrA44xi" in html and "<svg" in html and "2.7295" in html


def test_leave_out_virtual_baseline(capsys, bench_data):
    matrix = str(bench_data / "trec-matrices" / "web2013_err20.csv")
    status, out, _ = run(capsys, "risk", matrix, "--baseline", "max", "--leave-out", "--alpha", "0", "--format", "json")
    assert status == 0
    rows = {r["system"]: r for r in map(json.loads, out.splitlines())}
    from fastrisk import read_matrix

    m = read_matrix(matrix)
    others = np.delete(m.values, 0, axis=0).max(axis=0)
    assert len(rows) == 34
    assert rows["run1"]["urisk"] == pytest.approx((m.values[0] - others).mean())
    status, _, err = run(capsys, "risk", matrix, "--baseline", "run1", "--leave-out")
    assert status == 2 and "--leave-out applies to --baseline mean, median or max" in err
