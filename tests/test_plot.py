"""Every figure of fastrisk.viz.plot renders headless (Agg) from bundled data, and its structure
(bars, lines, labels, critical lines) is what the results say."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402

from fastrisk.core.baselines import Baseline  # noqa: E402
from fastrisk.core.urisk import risk, risk_scores, topic_risk  # noqa: E402
from fastrisk.data.datasets import trec2012_web  # noqa: E402
from fastrisk.errors import InputError, ZeroVarianceWarning  # noqa: E402
from fastrisk.viz import plot  # noqa: E402

NAMED = ["uogTrA44xi", "srchvrs12c09", "qutwb"]
ALPHAS = [1.0, 5.0, 10.0]


@pytest.fixture(scope="module")
def data():
    m, b = trec2012_web("err20")
    base = Baseline("indriCASP", np.array([[b[t] for t in m.topics]]))
    return m, base


@pytest.fixture(scope="module")
def trisk_result(data):
    m, base = data
    return risk(m, base, alpha=np.linspace(0, 10, 21))


@pytest.fixture(scope="module")
def topic_result(data):
    m, base = data
    return topic_risk(m, base, alpha=ALPHAS)


@pytest.fixture(autouse=True)
def _no_show_and_close(monkeypatch):
    import matplotlib.pyplot as plt

    def fail(*a, **k):
        raise AssertionError("fastrisk.viz.plot must never call plt.show()")

    monkeypatch.setattr(plt, "show", fail)
    yield
    plt.close("all")


def _axes():
    return Figure().add_subplot()


def _by_gid(ax, gid):
    return [a for a in ax.get_children() if a.get_gid() == gid]


def _render(ax):
    ax.figure.canvas.draw() if hasattr(ax.figure.canvas, "draw") else None
    import io

    buf = io.BytesIO()
    ax.figure.savefig(buf, format="png", dpi=60)
    assert buf.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------------- import hygiene
def test_importing_fastrisk_does_not_import_matplotlib():
    code = ("import sys, fastrisk, fastrisk.viz.plot, fastrisk.viz.report, fastrisk.cli, fastrisk.cli.report; "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_system_styles_are_okabe_ito_then_vary_line_style():
    names = [f"s{k}" for k in range(10)]
    st = plot.system_styles(names)
    assert [st[n]["color"] for n in names[:8]] == list(plot.OKABE_ITO)
    assert st["s8"]["color"] == plot.OKABE_ITO[0] and st["s8"]["linestyle"] != st["s0"]["linestyle"]


# ---------------------------------------------------------------------- TRisk vs alpha
def test_trisk_alpha_structure(trisk_result):
    ax = _axes()
    out = plot.trisk_alpha(trisk_result, NAMED, ax=ax)
    assert out is ax
    lines = [ln for ln in ax.get_lines() if (ln.get_gid() or "").startswith("system:")]
    assert [ln.get_label() for ln in lines] == NAMED
    k = trisk_result.systems.index("qutwb")
    np.testing.assert_allclose(lines[2].get_ydata(), trisk_result.trisk[:, k])
    np.testing.assert_allclose(lines[2].get_xdata(), trisk_result.alpha)
    (up,), (lo,) = _by_gid(ax, "critical-upper"), _by_gid(ax, "critical-lower")
    assert up.get_ydata()[0] == pytest.approx(2.0096, abs=1e-4) == trisk_result.critical_t
    assert lo.get_ydata()[0] == pytest.approx(-trisk_result.critical_t)
    assert "\u03b1" in ax.get_xlabel() and "TRisk" in ax.get_ylabel() and "indriCASP" in ax.get_ylabel()
    # the same system list keeps the colours of system_styles
    assert lines[1].get_color() == plot.system_styles(NAMED)["srchvrs12c09"]["color"]
    _render(ax)


def test_trisk_alpha_urisk_loss_weight_and_minus(data):
    m, base = data
    res = risk(m, base, loss_weight=[1, 2, 6], convention="minus")
    ax = plot.trisk_alpha(res, ["qutwb"], show="urisk", ax=_axes())
    (line,) = [ln for ln in ax.get_lines() if ln.get_gid() == "system:qutwb"]
    np.testing.assert_allclose(line.get_xdata(), [1, 2, 6])
    np.testing.assert_allclose(line.get_ydata(), res.urisk[:, res.systems.index("qutwb")])
    assert line.get_ydata()[-1] > 0  # URisk- of qutwb is positive: it is riskier than the baseline
    assert "loss weight" in ax.get_xlabel() and "URisk\u207b" in ax.get_ylabel()
    assert not _by_gid(ax, "critical-upper")  # no t lines on the URisk scale


def test_trisk_alpha_creates_its_own_column_width_figure(trisk_result):
    ax = plot.trisk_alpha(trisk_result, NAMED)
    assert tuple(ax.figure.get_size_inches()) == pytest.approx(plot.COLUMN_FIGSIZE)
    assert ax.xaxis.label.get_size() == plot.FONT_SIZE
    _render(ax)


def test_trisk_alpha_errors(trisk_result, data):
    with pytest.raises(InputError, match="unknown system 'nope'"):
        plot.trisk_alpha(trisk_result, ["nope"], ax=_axes())
    with pytest.raises(InputError, match="`show` must be one of 'trisk', 'urisk', got 'x'"):
        plot.trisk_alpha(trisk_result, show="x", ax=_axes())
    with pytest.warns(DeprecationWarning, match="use `show=`"):  # the old name still works, with a warning
        ax = plot.trisk_alpha(trisk_result, statistic="urisk", ax=_axes())
    assert ax.get_ylabel().startswith("URisk")
    m, base = data
    smooth = risk(m, base, value="smooth")
    with pytest.raises(InputError, match="smooth"):
        plot.trisk_alpha(smooth, ax=_axes())


# ---------------------------------------------------------------------- per-topic bars
def test_topic_risk_bars_structure(topic_result):
    res = topic_result
    k = res.systems.index("uogTrA44xi")
    ax = plot.topic_risk_bars(res, "uogTrA44xi", show="both", ax=_axes())
    c = len(res.topics)
    bars = [p for p in ax.patches if (p.get_gid() or "").startswith("bar:")]
    assert len(bars) == len(ALPHAS) * c
    heights = np.array([p.get_height() for p in bars]).reshape(len(ALPHAS), c)
    np.testing.assert_allclose(heights, res.tr[:, k])
    (up,), (lo,) = _by_gid(ax, "critical-upper"), _by_gid(ax, "critical-lower")
    assert up.get_ydata()[0] == pytest.approx(res.critical_t)
    assert lo.get_ydata()[0] == pytest.approx(-res.critical_t)
    (loss,), (win,) = _by_gid(ax, "significant-loss"), _by_gid(ax, "significant-win")
    assert len(loss.get_xdata()) == int(res.loss[:, k].sum()) > 0
    assert len(win.get_xdata()) == int(res.win[:, k].sum())
    # significant losses are drawn below their (negative) bars
    assert (np.asarray(loss.get_ydata()) < -res.critical_t).all()
    tj = [ln for ln in ax.get_lines() if (ln.get_gid() or "").startswith("tj:")]
    assert len(tj) == len(ALPHAS)
    np.testing.assert_allclose(tj[0].get_ydata(), res.tj[0, k])
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == list(res.topics)
    bold = {t.get_text() for t in ax.get_xticklabels() if t.get_fontweight() == "bold"}
    assert bold == {res.topics[i] for i in np.flatnonzero((res.loss[:, k] | res.win[:, k]).any(axis=0))}
    assert "166" in bold  # the paper's worst topic for uogTrA44xi
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"\u03b1 = 1", "\u03b1 = 5", "\u03b1 = 10"} <= set(legend)
    _render(ax)


def test_topic_risk_bars_tj_subset_and_sort(topic_result):
    res = topic_result
    k = res.systems.index("qutwb")
    ax = plot.topic_risk_bars(res, "qutwb", alpha=[10], show="tj", sort=True, ax=_axes())
    bars = [p for p in ax.patches if p.get_gid() == "bar:0"]
    h = np.array([p.get_height() for p in bars])
    np.testing.assert_allclose(h, np.sort(res.tj[2, k])[::-1])
    (loss,) = _by_gid(ax, "significant-loss")
    assert len(loss.get_xdata()) == int((res.tj[2, k] < -res.critical_t).sum())


def test_topic_risk_bars_errors(topic_result):
    with pytest.raises(InputError, match="alpha=3 was not computed"):
        plot.topic_risk_bars(topic_result, "qutwb", alpha=[3], ax=_axes())
    with pytest.raises(InputError, match="`show` must be one of 'tr', 'tj', 'both', got 'z'"):
        plot.topic_risk_bars(topic_result, "qutwb", show="z", ax=_axes())
    with pytest.raises(InputError, match="unknown system"):
        plot.topic_risk_bars(topic_result, "zzz", ax=_axes())


# ---------------------------------------------------------------------- per-topic URisk distributions
def test_urisk_distribution_box(topic_result):
    res = topic_result
    ax = plot.urisk_distribution(res, alpha=5, kind="box", colors=plot.system_styles(NAMED), ax=_axes())
    S = len(res.systems)
    boxes = [p for p in ax.patches if (p.get_gid() or "").startswith("box:")]
    assert len(boxes) == S
    (means,) = _by_gid(ax, "urisk")
    expected = np.sort(res.x[1].mean(axis=1))[::-1]
    np.testing.assert_allclose(means.get_ydata(), expected)
    names = [t.get_text() for t in ax.get_xticklabels()]
    assert names[0] == res.systems[int(np.argmax(res.x[1].mean(axis=1)))]
    colored = {p.get_gid()[4:] for p in boxes if p.get_facecolor()[:3] != matplotlib.colors.to_rgb("#C6DBEF")}
    assert colored == set(NAMED)
    assert "\u03b1 = 5" in ax.get_ylabel()


def test_urisk_distribution_sorted_from_risk_scores(data):
    m, base = data
    scores = risk_scores(m, base, alpha=[0, 5])
    ax = plot.urisk_distribution(scores, NAMED, kind="sorted", alpha=5, ax=_axes())
    lines = [ln for ln in ax.get_lines() if (ln.get_gid() or "").startswith("system:")]
    assert [ln.get_label() for ln in lines] == NAMED
    y = np.asarray(lines[0].get_ydata())
    assert (np.diff(y) <= 0).all() and y.size == m.n_topics
    np.testing.assert_allclose(y.mean(), scores.x[1, scores.systems.index(NAMED[0])].mean())
    with pytest.raises(InputError, match="`kind` must be 'box' or 'sorted'"):
        plot.urisk_distribution(scores, kind="violin", ax=_axes())


# ---------------------------------------------------------------------- results of other modules
def test_qq_of_bootstrap_replicates(data):
    resampling = pytest.importorskip("fastrisk.inference.resampling")
    m, base = data
    sub = m.select(systems=NAMED)
    lin = resampling.bootstrap(sub, base, alpha=[0, 5], replicates=400, rng=7, keep_replicates=True)
    smooth = resampling.bootstrap(sub, base, value="smooth", replicates=400, rng=7, keep_replicates=True)
    ax = plot.qq({"linear": lin, "smooth": smooth}, "qutwb", points=100, ax=_axes())
    curves = [ln for ln in ax.get_lines() if (ln.get_gid() or "").startswith("qq:")]
    assert [ln.get_label() for ln in curves] == ["linear, \u03b1 = 0", "linear, \u03b1 = 5", "smooth"]
    assert all(len(ln.get_xdata()) == 100 for ln in curves)
    x, y = curves[0].get_xdata(), curves[0].get_ydata()
    assert (np.diff(x) > 0).all() and (np.diff(y) >= 0).all()
    assert abs(np.corrcoef(x, y)[0, 1]) > 0.95  # bootstrap means of 50 topics are close to normal
    (diag,) = _by_gid(ax, "diagonal")
    assert diag.get_xdata()[0] == diag.get_ydata()[0]
    assert ax.get_xlabel() == "standard normal quantile"
    _render(ax)


def test_rbo_prefix_bars_and_residual_band(data):
    agreement = pytest.importorskip("fastrisk.measures.agreement")
    m, base = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        lin = risk(m, base, alpha=5)
        smooth = risk(m, base, value="smooth")
    res = agreement.prefix_agreement(lin.urisk[0], smooth.urisk[0], p=0.9)
    ax = plot.rbo_prefix(res, label_a="linear", label_b="smooth", ax=_axes())
    low = [p for p in ax.patches if p.get_gid() == "rbo-min"]
    band = [p for p in ax.patches if p.get_gid() == "rbo-residual"]
    assert len(low) == len(band) == m.n_systems
    np.testing.assert_allclose([p.get_height() for p in low], res.min)
    np.testing.assert_allclose([p.get_y() + p.get_height() for p in band], res.min + res.res)
    (ext,) = _by_gid(ax, "rbo-ext")
    np.testing.assert_allclose(ext.get_ydata(), res.ext)
    assert ax.get_ylim() == (0.0, 1.0) and "p = 0.9" in ax.get_ylabel()
    _render(ax)


def test_baseline_heatmap_marks_significant_cells(data):
    tables = pytest.importorskip("fastrisk.core.tables")
    from scipy import stats

    m, _ = data
    sub = m.select(systems=NAMED + ["run1", "run2"])
    table = tables.baseline_table(sub, alpha=[0, 5])
    ax = plot.baseline_heatmap(table, alpha=5, ax=_axes())
    (image,) = _by_gid(ax, "heatmap")
    V = image.get_array()
    assert V.shape == (5, 5) and V.mask.diagonal().all()  # a system against itself is NaN: grey
    np.testing.assert_allclose(V.filled(np.nan), table.trisk[1])
    crit = stats.t.isf(0.025, table.df)
    (dots,) = _by_gid(ax, "significant")
    T = table.trisk[1]
    assert len(dots.get_offsets()) == int((np.isfinite(T) & (np.abs(T) > crit)).sum()) > 0
    assert [t.get_text() for t in ax.get_yticklabels()] == list(sub.systems)
    ordered = plot.baseline_heatmap(table, alpha=0, order="mean", colorbar=False, ax=_axes())
    first = ordered.get_yticklabels()[0].get_text()
    assert first == sub.systems[int(np.argmax(np.nanmean(table.urisk[0], axis=1)))]
    shown = plot.baseline_heatmap(table, alpha=5, show="urisk", colorbar=False, ax=_axes())
    np.testing.assert_allclose(_by_gid(shown, "heatmap")[0].get_array().filled(np.nan), table.urisk[1])
    _render(ax)


@pytest.mark.slow
def test_pooling_bias_and_mae():
    pooling = pytest.importorskip("fastrisk.measures.pooling")
    try:
        from fastrisk.bench_data.synthetic_runs import generate
    except ImportError:
        pytest.skip("fastrisk.bench_data.synthetic_runs is not available")
    runs, qrels = generate(n_systems=12, n_topics=30, depth=20, seed=5)
    res = pooling.pooling_experiment(runs, qrels, widths=(2, 4, 8), repeats=12, common_topics=(5, 10, 20),
                                     topic_repeats=10, rng=3)
    ax = plot.pooling_bias(res, ax=plot.new_axes(pyplot=False))
    assert _legend_overlap(ax) == 0.0
    boxes = _by_gid(ax, "quartiles")
    assert len(boxes) == 3
    q1, q3 = np.quantile(res.bias, [0.25, 0.75], axis=1)
    np.testing.assert_allclose([p.get_y() for p in boxes], q1)
    np.testing.assert_allclose([p.get_y() + p.get_height() for p in boxes], q3)
    (mean,) = _by_gid(ax, "mean")
    np.testing.assert_allclose(mean.get_ydata(), res.bias.mean(axis=1))
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "4", "8"]
    ax = plot.pooling_mae(res, estimators=("adjusted", "mixed", "unadjusted"), ax=_axes())
    lines = [ln for ln in ax.get_lines() if (ln.get_gid() or "").startswith("mae:")]
    assert len(lines) == 9
    (adj4,) = [ln for ln in lines if ln.get_gid() == "mae:adjusted:4"]
    np.testing.assert_allclose(adj4.get_xdata(), [5, 10, 20])
    np.testing.assert_allclose(adj4.get_ydata(), res.adjusted_abs[1].mean(axis=0))
    with pytest.raises(InputError, match="width 3 was not simulated"):
        plot.pooling_mae(res, widths=[3], ax=_axes())
    _render(ax)


def test_topic_risk_bars_minus_convention_marks_losses_above(data):
    m, base = data
    res = topic_risk(m, base, alpha=[5], convention="minus")
    k = res.systems.index("uogTrA44xi")
    ax = plot.topic_risk_bars(res, "uogTrA44xi", ax=_axes())
    (loss,) = _by_gid(ax, "significant-loss")
    assert len(loss.get_xdata()) == int(res.loss[0, k].sum()) > 0
    assert (np.asarray(loss.get_ydata()) > res.critical_t).all()  # TR- of a loss is positive
    assert "minus" in ax.get_ylabel()


def test_pca_map_systems_highlights_and_virtual_baselines(data):
    from fastrisk.core.baselines import virtual_baseline
    from fastrisk.core.pca import pca

    m, _ = data
    res = pca(m, 2, extra=[virtual_baseline(m, k) for k in ("mean", "median", "max")])
    ax = plot.pca_map(res, highlight=NAMED, ax=_axes())
    assert len(_by_gid(ax, "pca-systems")[0].get_xdata()) == 48
    assert all(len(_by_gid(ax, f"pca-{name}")) == 1 for name in NAMED)
    extra = _by_gid(ax, "pca-extra")
    assert len(extra) == 3 and [t.get_text() for t in ax.texts] == ["MEAN", "MEDIAN", "MAX"]
    np.testing.assert_allclose([extra[0].get_xdata()[0], extra[0].get_ydata()[0]], 0.0, atol=1e-12)  # MEAN at 0
    k = list(res.systems).index("qutwb")
    np.testing.assert_allclose(_by_gid(ax, "pca-qutwb")[0].get_xdata(), res.scores[k, 0])
    assert ax.get_xlabel().startswith("PC1 (") and "% of variance" in ax.get_ylabel()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["systems"] + NAMED
    _render(ax)
    with pytest.raises(InputError, match="two different components"):
        plot.pca_map(res, components=(1, 1))


# ---------------------------------------------------------------------- legends never cover data
def _legend_overlap(ax) -> float:
    """Area (display units) where the legend's box and the axes' data area overlap."""
    ax.figure.canvas.draw()
    legend = ax.get_legend()
    assert legend is not None
    box = legend.get_window_extent()
    area = ax.get_window_extent()
    w = min(box.x1, area.x1) - max(box.x0, area.x0)
    h = min(box.y1, area.y1) - max(box.y0, area.y0)
    return max(w, 0.0) * max(h, 0.0)


def test_legends_sit_outside_the_data_area(data, trisk_result, topic_result):
    from fastrisk.inference.resampling import bootstrap

    m, base = data
    boot = bootstrap(m.select(systems=NAMED), base, alpha=[1, 5], replicates=200, rng=1, keep_replicates=True)
    axes = [
        plot.trisk_alpha(trisk_result, NAMED + ["run1", "run2", "run3"], ax=plot.new_axes(pyplot=False)),
        plot.topic_risk_bars(topic_result, NAMED[0], show="both", ax=plot.new_axes((7.2, 3), pyplot=False)),
        plot.urisk_distribution(topic_result, kind="box", ax=plot.new_axes((7.2, 3), pyplot=False)),
        plot.urisk_distribution(topic_result, NAMED, kind="sorted", ax=plot.new_axes(pyplot=False)),
        plot.qq(boot, NAMED[0], points=50, ax=plot.new_axes((3, 3), pyplot=False)),
    ]
    for ax in axes:
        assert _legend_overlap(ax) == 0.0, ax.get_ylabel()
