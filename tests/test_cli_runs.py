"""Every matrix command takes TREC runs plus --qrels/--measure; evaluate prints means."""

from __future__ import annotations

import pytest

from fastrisk.cli import main
from fastrisk.core.urisk import risk
from fastrisk.measures.metrics import evaluate

# the byte scanner as plain Python (the NUMBA_DISABLE_JIT pass) takes minutes on the bundled runs
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def web(bench_data):
    return bench_data / "trec2012-web"


def csv_rows(text):
    lines = text.replace('"', "").splitlines()
    head = lines[0].split(",")
    return [dict(zip(head, ln.split(","))) for ln in lines[1:]]


def test_evaluate_prints_per_system_means(web, capsys):
    assert main(["evaluate", str(web / "runs"), "--qrels", str(web / "qrels.adhoc.txt"), "--measure", "AP",
                 "--measure", "ERR@20", "--format", "csv"]) == 0
    rows = csv_rows(capsys.readouterr().out)
    assert len(rows) == 8 and set(rows[0]) == {"system", "AP", "ERR@20"}
    ev = evaluate(web / "runs", web / "qrels.adhoc.txt", ["AP", "ERR@20"])
    got = {r["system"]: float(r["AP"]) for r in rows}
    for i, s in enumerate(ev.systems):
        assert got[s] == pytest.approx(ev.values[0, i].mean(), abs=1e-9)


def test_risk_from_runs_equals_risk_of_evaluated_matrix(web, capsys):
    assert main(["risk", str(web / "runs"), "--qrels", str(web / "qrels.adhoc.txt"), "--measure", "AP",
                 "--baseline", "indri-ql-cata", "--alpha", "5", "--format", "csv"]) == 0
    rows = csv_rows(capsys.readouterr().out)
    mat = evaluate(web / "runs", web / "qrels.adhoc.txt", "AP")["AP"]
    want = risk(mat, "indri-ql-cata", alpha=5)
    tab = want.to_arrow()
    urisk = dict(zip(tab.column("system").to_pylist(), tab.column("urisk").to_pylist()))
    col = next(c for c in rows[0] if c.lower() == "urisk")
    assert {r["system"] for r in rows} <= set(urisk) and len(rows) >= 7
    for r in rows:
        assert float(r[col]) == pytest.approx(urisk[r["system"]], abs=1e-9)


@pytest.mark.parametrize("command", [["table", "--alpha", "1"], ["bootstrap", "--baseline", "indri-ql-cata",
                                                                   "--replicates", "200", "--seed", "1"],
                                     ["test", "--baseline", "indri-ql-cata"]])
def test_matrix_commands_accept_runs(web, capsys, command):
    args = [command[0], str(web / "runs"), "--qrels", str(web / "qrels.adhoc.txt"), "--measure", "P@10",
            *command[1:], "--format", "csv"]
    assert main(args) == 0, capsys.readouterr().err
    rows = csv_rows(capsys.readouterr().out)
    assert len(rows) >= 7 and "indri-rm-catb" in {r["system"] for r in rows}


def test_report_from_runs_is_one_command(web, tmp_path, capsys):
    out = tmp_path / "r.html"
    runs = [str(p) for p in sorted((web / "runs").glob("*.gz"))]  # as the shell expands runs/*.gz
    assert main(["report", *runs, "--qrels", str(web / "qrels.adhoc.txt"), "--measure", "AP",
                 "--baseline", "indri-ql-cata", "--out", str(out)]) == 0, capsys.readouterr().err
    assert out.stat().st_size > 1000 and "AP" in out.read_text()


def test_qrels_without_measure_is_a_clear_error(web, capsys):
    assert main(["risk", str(web / "runs"), "--qrels", str(web / "qrels.adhoc.txt"), "--baseline", "x"]) == 2
    assert "--qrels needs --measure" in capsys.readouterr().err
