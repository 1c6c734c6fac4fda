"""Issue 29 item 7, first contact as a new user: a missing extra names its ``pip install``,
``--baseline best`` and forgiving system names, ``write_report(out=)``, what a baseline is,
integer ranks, the bootstrap table's caption, reports without absolute paths, a help per
``simulate`` action, figures that can be read, and ``grid --plot-format``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fastrisk
from fastrisk.cli import describe_error, main
from fastrisk.data.datasets import trec_matrix
from fastrisk.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
MATRIX = ROOT / "bench_data" / "trec-matrices" / "web2012_err20.csv"


def _block(monkeypatch, top: str) -> None:
    """Make ``top`` (and its submodules) impossible to import, as on a machine without it."""
    for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, top, None)
    for sub in ("pyplot", "figure", "backends.backend_pdf"):
        monkeypatch.setitem(sys.modules, f"{top}.{sub}", None)


# ---------------------------------------------------------------------- optional extras
_BLOCKER = """
import sys
class _Missing:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == {top!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, _Missing())
"""


def _run_without(top: str, code: str) -> subprocess.CompletedProcess:
    """``code`` in a new interpreter on which ``top`` cannot be imported (pyarrow's pandas
    shim keeps what it found for the process, so pandas is hidden in a process of its own)."""
    return subprocess.run([sys.executable, "-c", _BLOCKER.format(top=top) + code], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)


def test_a_missing_extra_names_its_pip_install():
    proc = _run_without("pandas", """
import fastrisk
from fastrisk._runtime.extras import MissingExtraError
m = fastrisk.data.datasets.trec_matrix("web2012_err20")
for call in (m.to_pandas, fastrisk.risk(m, "mean", alpha=1).to_pandas):
    try:
        call()
    except MissingExtraError as exc:
        assert isinstance(exc, ModuleNotFoundError) and exc.name == "pandas"
        print(exc)
""")
    assert proc.returncode == 0, proc.stderr
    line = 'to_pandas() needs pandas, which is not installed: pip install "fastrisk[pandas]"'
    assert proc.stdout.splitlines() == [line, line]


def test_report_without_matplotlib_is_an_error_line_not_a_bug(monkeypatch, tmp_path, capsys):
    """It said "unexpected ImportError: fastrisk.plot needs matplotlib ... this is a bug"."""
    _block(monkeypatch, "matplotlib")
    assert main(["report", str(MATRIX), "--baseline", "run1", "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert 'needs matplotlib, which is not installed: pip install "fastrisk[plot]"' in err
    assert "this is a bug" not in err and not (tmp_path / "r.html").exists()


def test_simulate_without_pyvinecopulib_says_which_extra(monkeypatch, capsys):
    """It said "1 simulation job(s) failed: ModuleNotFoundError: pyvinecopulib"."""
    _block(monkeypatch, "pyvinecopulib")
    assert main(["simulate", "type1", "--collections", "web2013_err20", "--trials", "5", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert 'a simulation needs pyvinecopulib, which is not installed: pip install "fastrisk[simulate]"' in err
    assert "job(s) failed" not in err


def test_any_missing_optional_module_is_described_with_its_extra():
    exc = ModuleNotFoundError("No module named 'lightgbm'", name="lightgbm")
    assert describe_error(exc) == 'lightgbm is not installed: pip install "fastrisk[ltr]"'


# ---------------------------------------------------------------------- baselines and names
def test_baseline_best_is_the_system_with_the_highest_mean(capsys):
    m = trec_matrix("web2012_err20")
    best = m.systems[int(np.argmax(m.values.mean(axis=1)))]
    assert fastrisk.risk(m, "best", alpha=[0, 5]).baseline == best == "run44"
    assert main(["risk", str(MATRIX), "--baseline", "best", "--alpha", "5", "--format", "csv"]) == 0
    by_best = capsys.readouterr().out
    assert main(["risk", str(MATRIX), "--baseline", best, "--alpha", "5", "--format", "csv"]) == 0
    assert capsys.readouterr().out == by_best


def test_system_names_match_regardless_of_case_and_misses_suggest(capsys):
    m = trec_matrix("web2012_err20")
    assert fastrisk.risk(m, "RUN7", alpha=1).baseline == "run7"
    assert m.select(systems=["RUN2", "run3"]).systems == ("run2", "run3")
    with pytest.raises(InputError, match=r"unknown baseline 'rnu7' \(did you mean 'run7'"):
        fastrisk.risk(m, "rnu7")
    with pytest.raises(InputError, match=r"unknown baseline 'bset' \(did you mean 'best'\?\)"):
        fastrisk.risk(m, "bset")
    with pytest.raises(InputError, match=r"unknown system 'rn12' \(did you mean 'run12'"):
        m.system_index("rn12")
    assert main(["risk", str(MATRIX), "--baseline", "Run1x"]) == 2
    assert "did you mean 'run1'" in capsys.readouterr().err


def test_ambiguous_case_is_not_guessed():
    from fastrisk.data.matrix import ScoreMatrix

    m = ScoreMatrix(np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]), ["BM25", "bm25", "x"], ["1", "2"])
    with pytest.raises(InputError, match="unknown baseline 'Bm25'"):
        fastrisk.risk(m, "Bm25")
    assert fastrisk.risk(m, "bm25").baseline == "bm25"


def test_no_baseline_says_what_a_baseline_is():
    """``risk(m, None)`` said "got shape ()"."""
    with pytest.raises(InputError, match=r"no baseline given: a baseline is what every system is compared with, "
                                         r"topic by topic: the name of a system of the matrix, 'best'"):
        fastrisk.risk(trec_matrix("web2012_err20"), None)


# ---------------------------------------------------------------------- reports and tables
def test_write_report_takes_out_as_a_keyword_and_the_path_first(tmp_path):
    from fastrisk.viz.report import write_report

    m = trec_matrix("web2012_err20").select(systems=["run1", "run2", "run3", "run4"])
    a = write_report(m, "run1", out=tmp_path / "a.html", alpha=[0, 5], systems=["run2"])
    b = write_report(tmp_path / "b.html", m, "run1", alpha=[0, 5], systems=["run2"])
    assert a.read_text().count("<svg") == b.read_text().count("<svg") > 0
    with pytest.raises(InputError, match="give the file once"):
        write_report(m, "run1", "run2", out=tmp_path / "c.html")
    with pytest.raises(InputError, match=r"needs the file \(out=\)"):
        write_report(m, "run1")


def test_reports_name_their_inputs_without_their_directories(tmp_path):
    html = tmp_path / "r.html"
    assert main(["report", str(MATRIX.resolve()), "--baseline", "run1", "--alpha", "0,5", "--systems", "run2",
                 "--out", str(html)]) == 0
    text = html.read_text()
    assert "web2012_err20.csv" in text and str(MATRIX.resolve().parent) not in text
    assert re.search(r"SHA-256 <code>[0-9a-f]{64}</code>", text)


def test_table_prints_ranks_as_ranks(capsys):
    assert main(["table", str(MATRIX), "--alpha", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[-1] == "rank"
    ranks = [line.split()[-1] for line in lines[1:]]
    assert all(re.fullmatch(r"\d+(\.5)?", r) for r in ranks) and "2" in ranks


def test_the_bootstrap_table_states_its_interval(capsys):
    assert main(["bootstrap", str(MATRIX), "--baseline", "run1", "--alpha", "1", "--replicates", "100",
                 "--method", "percentile", "--confidence-level", "0.9", "--seed", "1"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("# ci_low, ci_high: 0.9 percentile bootstrap interval (two-sided)")
    assert "100 replicates" in first


# ---------------------------------------------------------------------- simulate's help
def test_each_simulate_action_has_its_own_help(capsys):
    with pytest.raises(SystemExit):
        main(["simulate", "fit", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps the help at the terminal's width
    assert text.startswith("usage: fastrisk simulate fit")
    assert "every collection of all five measures" in text and "default AP" not in text
    for other in ("--delta", "--trials", "--topic-sizes", "--checkpoint", "--plot-format"):
        assert other not in text
    with pytest.raises(SystemExit):
        main(["simulate", "grid", "--help"])
    text = capsys.readouterr().out
    assert "--topic-sizes" in text and "--plot-format" in text and "--refit" not in text
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--refit" in text and "--topic-sizes" in text and "fit: every measure" in text


# ---------------------------------------------------------------------- figures
@pytest.fixture(scope="module")
def type1_result(tmp_path_factory):
    pytest.importorskip("pyvinecopulib")
    from fastrisk.data.matrix import ScoreMatrix
    from fastrisk.simulate import type1

    m = trec_matrix("web2013_err20")
    tiny = ScoreMatrix(m.values[:6, :20], m.systems[:6], m.topics[:20], m.measure)
    return type1("err20", collections={"tiny": tiny}, topics=10, trials=40, replicates=0, rng=3, progress=False,
                 cache=tmp_path_factory.mktemp("fits"), risk_nulls=False)  # 6 runs: type I pairs only (no H1-like pairs)


def test_simulation_figures_are_readable_with_the_legend_beside_the_curves(type1_result, tmp_path):
    """They were 286 x 506 px with the legend over the curves and the band unlabelled."""
    pytest.importorskip("matplotlib")
    from fastrisk.viz.figures import plot_studies

    fig = plot_studies([type1_result], tmp_path / "t1.png")
    width, height = fig.get_size_inches() * 150
    assert width >= 700 and height >= 700
    header = (tmp_path / "t1.png").read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(header[16:20], "big") >= 700
    fig.canvas.draw() if hasattr(fig.canvas, "draw") else None
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    (legend,) = fig.legends
    box = legend.get_window_extent(renderer)
    for ax in fig.axes:
        assert not box.overlaps(ax.get_window_extent(renderer)), "the legend covers a panel"
    labels = [t.get_text() for t in legend.get_texts()]
    assert any("Monte-Carlo" in t for t in labels) and "nominal (rate = level)" in labels


def test_grid_writes_figures_in_the_format_asked(type1_result, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from fastrisk.simulate import studies

    monkeypatch.setattr(studies, "_run", lambda modes, *a, **k: {m: type1_result for m in modes})
    assert main(["simulate", "grid", "--studies", "type1", "--measures", "err20", "--topic-sizes", "10",
                 "--tables", str(tmp_path / "t"), "--plot", str(tmp_path / "p"), "--plot-format", "png",
                 "--quiet"]) == 0
    assert (tmp_path / "p" / "type_1.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(SystemExit):
        main(["simulate", "grid", "--tables", str(tmp_path / "t"), "--plot-format", "gif"])


@pytest.mark.slow
def test_an_in_process_fit_prints_no_nanobind_leak_report(tmp_path):
    """An in-process ``simulate fit`` printed 18-19 "nanobind: leaked ..." lines at exit."""
    pytest.importorskip("pyvinecopulib")
    proc = subprocess.run([sys.executable, "-m", "fastrisk", "simulate", "fit", "--collections", "web2013_err20",
                           "--cache", str(tmp_path), "--format", "csv"], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "nanobind" not in proc.stderr and "leaked" not in proc.stderr
    assert "fitted models of 1 collection(s)" in proc.stderr
