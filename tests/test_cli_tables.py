"""``fastrisk table`` and ``fastrisk zrisk`` end to end on the bundled TREC 2012 Web data."""

from __future__ import annotations

import json

import pytest

from fastrisk.cli import main
from fastrisk.data.datasets import trec2012_web


@pytest.fixture(scope="module")
def web49(tmp_path_factory):
    """The 48 runs plus indriCASP as one wide CSV (rows = topics 151-200)."""
    m, base = trec2012_web("err20", rename=False)
    m = m.with_system("indriCASP", [base[t] for t in m.topics])
    path = tmp_path_factory.mktemp("cli") / "web2012_49.csv"
    m.to_pandas().to_csv(path)
    return str(path)


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_zrisk_published_values(capsys, web49):
    status, out, _ = run(capsys, "zrisk", web49, "--loss-weight", "2", "--convention", "minus", "--format", "json")
    assert status == 0
    rows = {r["system"]: r for r in map(json.loads, out.splitlines())}
    assert len(rows) == 49
    assert list(rows["run24"]) == ["system", "alpha", "loss_weight", "convention", "zrisk", "georisk"]
    assert rows["run24"]["zrisk"] == pytest.approx(5.779, abs=5e-4)
    assert rows["run21"]["georisk"] == pytest.approx(-0.307, abs=5e-4)  # Benham et al. Table 2 prints it negative
    status, out, _ = run(capsys, "zrisk", web49, "--value", "smooth", "--convention", "minus", "--format", "csv")
    line = next(l for l in out.splitlines() if l.startswith("run24,"))
    assert line.split(",")[3] == "minus"
    assert float(line.split(",")[4]) == pytest.approx(1.038, abs=5e-4)


@pytest.mark.filterwarnings("ignore::fastrisk.errors.ZeroVarianceWarning")
def test_table_all_and_named(capsys, web49):
    status, out, _ = run(capsys, "table", web49, "--alpha", "0,10", "--format", "csv")
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "system,baseline,alpha,urisk,trisk,pvalue,inference,rank"
    assert len(lines) == 1 + 49 * 49 * 2
    status, out, _ = run(capsys, "table", web49, "--baseline", "run24", "--alpha", "10", "--format", "json")
    rows = {r["system"]: r for r in map(json.loads, out.splitlines())}
    assert len(rows) == 49 and rows["run22"]["baseline"] == "run24"
    assert rows["run22"]["urisk"] == pytest.approx(-1.027, abs=5e-4)
    assert rows["run24"]["urisk"] == 0.0
    status, out, _ = run(capsys, "table", web49, "--baseline", "max", "--format", "json")
    assert all(json.loads(l)["urisk"] <= 0 for l in out.splitlines())
    status, out, _ = run(capsys, "table", web49, "--value", "smooth", "--convention", "minus", "--format", "csv")
    assert status == 0 and len(out.splitlines()) == 1 + 49 * 49


def test_errors(capsys, web49, tmp_path):
    status, _, err = run(capsys, "table", web49, "--value", "smooth", "--alpha", "1")
    assert status == 2 and "linear value function" in err
    neg = tmp_path / "neg.csv"
    neg.write_text("a,b\n0.1,-0.2\n0.3,0.4\n")
    status, _, err = run(capsys, "zrisk", str(neg))
    assert status == 2 and "non-negative" in err


def test_table_agreement_across_baselines(capsys, bench_data):
    import json

    from fastrisk.cli import main

    path = str(bench_data / "trec-matrices" / "web2013_err20.csv")
    assert main(["table", path, "--alpha", "0,5", "--agreement", "--format", "json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 2 * 34 * 33 // 2
    assert {r["alpha"] for r in rows} == {0.0, 5.0}
    assert all(-1 <= r["kendall_tau"] <= 1 and 0 <= r["rbo_min"] <= r["rbo_ext"] <= 1 + 1e-12 for r in rows)
    # at alpha = 0 URisk is the mean difference, so every baseline ranks the systems alike
    at0 = [r for r in rows if r["alpha"] == 0]
    assert all(r["kendall_tau"] == pytest.approx(1.0) and r["kendall_w"] == pytest.approx(1.0) for r in at0)
    assert any(r["kendall_tau"] < 0.99 for r in rows if r["alpha"] == 5)


def test_pca_command(capsys, bench_data):
    import json

    from fastrisk.cli import main

    path = str(bench_data / "trec-matrices" / "web2012_err20.csv")
    assert main(["pca", path, "--components", "3", "--baselines", "mean,max", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 48 + 2 and rows[-2]["name"] == "MEAN" and rows[-1]["kind"] == "extra"
    assert set(rows[0]) == {"name", "kind", "pc1", "pc2", "pc3"}
    assert abs(rows[-2]["pc1"]) < 1e-12  # the MEAN baseline sits at the centre
    assert "explained variance PC1" in err
    assert main(["pca", path, "--baselines", "min"]) == 2
    assert "--baselines takes mean, median, max; got min" in capsys.readouterr().err
    assert main(["pca", path, "--uncentred", "--baselines", "mean", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert abs(json.loads(out.splitlines()[-1])["pc1"]) > 0.01  # no longer the centre
    from fastrisk import pca
    from fastrisk.data import datasets

    want = pca(datasets.trec_matrix("web2012_err20"), 2, center=False).explained_variance_ratio[0]
    assert f"PC1 {100 * want:.1f}%" in err


@pytest.mark.filterwarnings("ignore::fastrisk.errors.ZeroVarianceWarning")
def test_table_exclude_self(capsys, web49):
    """--exclude-self: the baseline run has no rank under itself, the others rank 1..48."""
    status, out, _ = run(capsys, "table", web49, "--baseline", "run24", "--alpha", "10", "--exclude-self",
                         "--format", "json")
    assert status == 0
    rows = {r["system"]: r for r in map(json.loads, out.splitlines())}
    assert rows["run24"]["rank"] is None
    ranks = sorted(r["rank"] for s, r in rows.items() if s != "run24")
    assert ranks[0] >= 1 and ranks[-1] <= 48
    _, out, _ = run(capsys, "table", web49, "--baseline", "run24", "--alpha", "10", "--format", "json")
    full = {r["system"]: r for r in map(json.loads, out.splitlines())}
    below = [s for s in rows if s != "run24" and full[s]["rank"] > full["run24"]["rank"]]
    assert below and all(rows[s]["rank"] == full[s]["rank"] - 1 for s in below)


@pytest.mark.filterwarnings("ignore::fastrisk.errors.ZeroVarianceWarning")
def test_table_and_risk_inference_option(capsys, web49, tmp_path):
    """--inference names itself in every row and in the metadata; a t table at alpha >= 2 with
    fewer than 100 topics carries the one line of docs/risk-tests.md's measured level."""
    import pyarrow.parquet as pq

    status, out, err = run(capsys, "table", web49, "--alpha", "5", "--inference", "hall", "--format", "csv")
    assert status == 0 and {line.split(",")[-2] for line in out.splitlines()[1:]} == {"hall"}
    assert "note:" not in err
    status, _, err = run(capsys, "table", web49, "--alpha", "5")
    assert status == 0 and err.count("note: TRisk's t test is liberal") == 1 and "URisk_5 = 0" in err and "50 topics" in err
    path = tmp_path / "r.parquet"
    status, _, _ = run(capsys, "risk", web49, "--baseline", "run24", "--alpha", "5", "--inference", "exact",
                       "--inference-seed", "1", "--format", "parquet", "--out", str(path))
    meta = pq.read_table(path).schema.metadata
    assert status == 0 and meta[b"inference"] == b"exact"
    assert set(pq.read_table(path).column("inference").to_pylist()) == {"exact"}
    path = tmp_path / "t.parquet"
    run(capsys, "risk", web49, "--baseline", "run24", "--alpha", "1,5", "--format", "parquet", "--out", str(path))
    assert b"docs/risk-tests.md" in pq.read_table(path).schema.metadata[b"level_note"]
