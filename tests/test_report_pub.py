"""Report details for readers: heat map α, p-values below the precision, tables in the PDF,
the measure's definition and the provenance of a directory of runs."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from fastrisk.cli import main  # noqa: E402
from fastrisk.data.matrix import ScoreMatrix  # noqa: E402
from fastrisk.errors import InputError  # noqa: E402
from fastrisk.viz.report import Table, build_report, file_provenance, measure_definition, pvalue_text, write_report  # noqa: E402


@pytest.fixture(scope="module")
def matrix():
    rng = np.random.default_rng(7)
    base = rng.uniform(0.2, 0.6, size=30)
    values = np.vstack([base, base + 0.3 + rng.normal(0, 0.01, 30), base + rng.normal(0, 0.1, 30),
                        base - 0.05 + rng.normal(0, 0.1, 30)])
    return ScoreMatrix(np.clip(values, 0, 1), ["base", "strong", "noisy", "weak"],
                       [f"q{i}" for i in range(30)], "nDCG@10")


def _tables(sections):
    return {t.title: t for sec in sections for t in sec.tables}


def test_tiny_pvalues_print_as_less_than(matrix, tmp_path):
    sections, _, _ = build_report(matrix, "base", alpha=[0, 1])
    table = _tables(sections)["Risk against the baseline"]
    ps = [row[-1] for row in table.rows if row[0] == "strong"]
    assert ps == ["< 0.0001", "< 0.0001"]  # strong beats base on every topic by ~0.3
    text = write_report(tmp_path / "r.html", matrix, "base", alpha=[0, 1]).read_text()
    assert "&lt; 0.0001" in text
    every = _tables(sections)["All 4 systems"]
    p_cols = [j for j, h in enumerate(every.headers) if h.startswith("p (")]
    cells = [row[j] for row in every.rows for j in p_cols]
    assert "< 0.0001" in cells and all(isinstance(c, str) and c != "0.0000" for c in cells)
    assert pvalue_text(0.01234) == "0.0123" and pvalue_text(np.nan) == "–"


def test_heatmap_alpha_option(matrix):
    default, _, _ = build_report(matrix, "base", alpha=[0, 1, 5])
    chosen, _, _ = build_report(matrix, "base", alpha=[0, 1, 5], heatmap_alpha=2.5)
    cap = {s.title: s.caption for s in default}["Every system as the baseline"]
    assert "at α = 5 " in cap
    sec = {s.title: s for s in chosen}["Every system as the baseline"]
    assert "at α = 2.5 " in sec.caption and sec.figures[0][1].endswith("α = 2.5")
    with pytest.raises(InputError, match="`heatmap_alpha`"):
        build_report(matrix, "base", alpha=[0, 1], heatmap_alpha=-1)


def test_measure_definition_in_the_header(matrix):
    _, params, _ = build_report(matrix, "base", alpha=[0])
    measure = dict(params)["measure"]
    assert measure.startswith("nDCG@10 — normalised discounted cumulative gain at 10")
    assert "log2(r + 1)" in measure
    assert measure_definition("ERR@20").startswith("expected reciprocal rank at 20 (Chapelle")
    assert measure_definition("AP").startswith("average precision:")
    assert measure_definition("not a measure") is None and measure_definition(None) is None


def test_pdf_has_the_tables(matrix, tmp_path):
    sections, _, _ = build_report(matrix, "base", alpha=[0, 1])
    from fastrisk.viz.report import PDF_TABLE_ROWS

    n_tables = sum(max(1, -(-len(t.rows) // PDF_TABLE_ROWS)) for s in sections for t in s.tables)
    assert n_tables >= 5
    n_figures = sum(len(s.figures) for s in sections)
    out = write_report(tmp_path / "r.pdf", matrix, "base", alpha=[0, 1])
    data = out.read_bytes()
    pages = len(re.findall(rb"/Type\s*/Page\b", data))
    assert pages == 1 + n_figures + n_tables  # cover, figures, table pages of 40 rows


def test_long_tables_span_pages():
    from fastrisk.viz.report import PDF_TABLE_ROWS, _table_pages

    rows = [[f"s{i}", float(i), pvalue_text(1e-9)] for i in range(PDF_TABLE_ROWS * 2 + 1)]
    table = Table("t", ["system", "x", "p"], rows, None, [False, True, True])
    pages = _table_pages(table, "heading")
    assert len(pages) == 3
    texts = [c.get_text().get_text() for c in pages[2].axes[0].tables[0].get_celld().values()]
    assert f"s{PDF_TABLE_ROWS * 2}" in texts and "< 0.0001" in texts


def test_directory_provenance(tmp_path):
    d = tmp_path / "runs"
    (d / "sub").mkdir(parents=True)
    (d / "b.txt").write_bytes(b"bbb")
    (d / "sub" / "a.txt").write_bytes(b"a")
    prov = file_provenance(d)
    assert [f["name"] for f in prov["files"]] == ["b.txt", "sub/a.txt"]
    assert prov["bytes"] == 4
    assert prov["files"][0]["sha256"] == hashlib.sha256(b"bbb").hexdigest()
    listing = f"b.txt\t{hashlib.sha256(b'bbb').hexdigest()}\nsub/a.txt\t{hashlib.sha256(b'a').hexdigest()}\n"
    assert prov["sha256"] == hashlib.sha256(listing.encode()).hexdigest()
    with pytest.raises(InputError, match="no such file or directory"):
        file_provenance(tmp_path / "missing")


def test_cli_report_on_a_directory_of_runs(bench_data, tmp_path, capsys):
    runs = bench_data / "trec2012-web/runs"
    qrels = bench_data / "trec2012-web/qrels.adhoc.txt"
    out = tmp_path / "runs.html"
    status = main(["report", str(runs), "--qrels", str(qrels), "--measure", "ERR@20", "--baseline", "mean",
                   "--alpha", "0,5", "--heatmap-alpha", "1", "--out", str(out)])
    assert status == 0, capsys.readouterr().err
    text = out.read_text()
    head = text[:text.index("<section>")]
    assert "input directory" in head and "directory of 8 files" in head
    for f in sorted(runs.iterdir()):
        assert f.name in head and hashlib.sha256(f.read_bytes()).hexdigest() in head
    assert "qrels file" in head and hashlib.sha256(qrels.read_bytes()).hexdigest() in head
    assert "expected reciprocal rank at 20" in head
    assert "at α = 1 " in text


def test_pdf_cover_text_of_a_directory():
    from fastrisk.viz.report import _plain

    html_value = ("<code>runs</code> — directory of 1 files, 3 bytes, SHA-256 of the listing <code>ab</code>"
                  "<details><summary>files</summary><ul><li><code>a.run</code> — 3 bytes</li></ul></details>")
    assert _plain(html_value).splitlines() == ["runs — directory of 1 files, 3 bytes, SHA-256 of the listing ab",
                                               "  a.run — 3 bytes"]
