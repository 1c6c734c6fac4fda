"""Publication tables (to_wide / to_markdown / to_latex): parse the output back and compare it
with the result's own arrays, not with a stored string."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fastrisk
from fastrisk.data.publication import format_pvalue, latex_escape
from fastrisk.errors import InputError

SYSTEMS = ["run1", "run2", "run24", "run22", "run21", "run8"]


@pytest.fixture(scope="module")
def small(bench_data):
    m = fastrisk.read_matrix(bench_data / "trec-matrices/web2012_err20.csv")
    return m.select(systems=SYSTEMS)


def parse_markdown(text):
    """(header, rows of (label, [(value, stars)])) of the first Markdown table in ``text``."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert re.fullmatch(r"\|:--\|(--:\|)+", lines[1])
    rows = []
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        parsed = []
        for c in cells[1:]:
            m = re.fullmatch(r"(–|-?∞|-?\d+\.\d+)(?:<sup>(\*+)</sup>)?", c)
            assert m, c
            v = {"–": "nan", "∞": "inf", "-∞": "-inf"}.get(m.group(1), m.group(1))
            parsed.append((float(v), len(m.group(2) or "")))
        rows.append((cells[0], parsed))
    return header, rows


def parse_latex(text):
    lines = text.splitlines()
    body = lines[lines.index("\\midrule") + 1:lines.index("\\bottomrule")]
    header = [c.strip() for c in lines[lines.index("\\toprule") + 1].removesuffix("\\\\").split("&")]
    rows = []
    for line in body:
        cells = [c.strip() for c in line.removesuffix("\\\\").split("&")]
        parsed = []
        for c in cells[1:]:
            m = re.fullmatch(r"--|\$(-?\\infty|-?\d+\.\d+)(?:\^\{(\*+)\})?\$", c)
            assert m, c
            v = "nan" if c == "--" else m.group(1).replace("\\infty", "inf")
            parsed.append((float(v), len(m.group(2) or "")))
        rows.append((cells[0], parsed))
    return header, rows


def check_against(result, rows, value, levels, digits):
    cells = getattr(result, value)
    for label, parsed in rows:
        k = result.systems.index(label)
        for j, (v, stars) in enumerate(parsed):
            want = cells[j, k]
            if np.isnan(want):
                assert np.isnan(v)
                continue
            assert v == pytest.approx(want, abs=0.5 * 10 ** -digits + 1e-12)
            p = result.pvalue[j, k]
            assert stars == sum(p < lev for lev in levels)


@pytest.mark.parametrize("digits", [2, 4])
def test_markdown_parses_back_to_the_result(small, digits):
    res = fastrisk.risk(small, "run24", alpha=[0, 1, 5, 10])
    text = res.to_markdown(digits=digits)
    header, rows = parse_markdown(text)
    assert header == ["system", "α = 0", "α = 1", "α = 5", "α = 10"]
    assert sorted(r[0] for r in rows) == sorted(SYSTEMS)
    check_against(res, rows, "trisk", (0.05,), digits)
    assert "<sup>*</sup> p < 0.05." in text
    # at least one marked and one unmarked cell: the markers are not all-or-nothing
    stars = [s for _, cells in rows for _, s in cells]
    assert 0 in stars and 1 in stars


def test_latex_parses_back_with_two_levels(small):
    res = fastrisk.risk(small, "run24", alpha=[0, 5])
    text = res.to_latex(significance=(0.01, 0.05), label="tab:risk", caption="Risk.")
    header, rows = parse_latex(text)
    assert header == ["System", "$\\alpha = 0$", "$\\alpha = 5$"]
    check_against(res, rows, "trisk", (0.05, 0.01), 4)
    assert "\\caption{Risk. $^{*}$: $p < 0.05$; $^{**}$: $p < 0.01$.}" in text
    assert "\\label{tab:risk}" in text and text.startswith("\\begin{table}")
    bare = res.to_latex(environment=False, significance=False)
    assert bare.startswith("\\begin{tabular}{lrr}") and "^{" not in bare


def test_rows_sorted_by_mean_value_nan_last(small):
    res = fastrisk.risk(small, "run24", alpha=[0, 1, 5])
    _, rows = parse_markdown(res.to_markdown("urisk", significance=False))
    labels = [r[0] for r in rows]
    means = {s: res.urisk[:, res.systems.index(s)].mean() for s in SYSTEMS}
    assert labels == sorted(SYSTEMS, key=lambda s: -means[s])
    _, rows = parse_markdown(res.to_markdown("trisk", sort="ascending"))
    assert rows[-1][0] == "run24"  # TRisk of the baseline against itself is NaN: last either way
    _, rows = parse_markdown(res.to_markdown("trisk", sort=None))
    assert [r[0] for r in rows] == list(res.systems)


def test_to_wide_matches_arrays(small):
    res = fastrisk.risk(small, "run24", alpha=[0, 5])
    wide = res.to_wide("urisk")
    assert wide.column_names == ["system", "alpha=0", "alpha=5"]
    for row in wide.to_pylist():
        k = res.systems.index(row["system"])
        assert row["alpha=0"] == res.urisk[0, k] and row["alpha=5"] == res.urisk[1, k]


def test_baseline_table_at_one_alpha(small):
    t = fastrisk.baseline_table(small, alpha=[0, 5])
    header, rows = parse_markdown(t.to_markdown("trisk", at={"alpha": 5}, sort=None))
    assert header == ["system", *t.baselines]
    for label, cells in rows:
        k = t.systems.index(label)
        for b, (v, stars) in enumerate(cells):
            want = t.trisk[1, k, b]
            assert (np.isnan(v) and np.isnan(want)) or v == pytest.approx(want, abs=5e-5)
            assert stars == int(t.pvalue[1, k, b] < 0.05)
    with pytest.raises(InputError, match="`at`"):
        t.to_markdown("trisk")
    with pytest.raises(InputError, match="`at`: no alpha 3"):
        t.to_markdown("trisk", at={"alpha": 3})


def test_results_without_pvalues_have_no_markers(small):
    z = fastrisk.zrisk(small, alpha=[0, 5])
    header, rows = parse_markdown(z.to_markdown("georisk"))
    assert all(s == 0 for _, cells in rows for _, s in cells)
    assert "<sup>" not in z.to_markdown()


def test_pairs_are_labelled_with_both_systems(small):
    perm = fastrisk.permutation_test(small, pairs=True, alpha=0, rng=1, replicates=200)
    text = perm.to_markdown()
    assert " vs " in text


def test_validation(small):
    res = fastrisk.risk(small, "run24", alpha=5)
    with pytest.raises(InputError, match="`value`"):
        res.to_markdown("nope")
    with pytest.raises(InputError, match="`digits`"):
        res.to_latex(digits=-1)
    with pytest.raises(InputError, match="`significance`"):
        res.to_markdown(significance=1.5)
    with pytest.raises(InputError, match="`sort`"):
        res.to_markdown(sort="up")


def test_names_are_escaped():
    assert latex_escape("run_1 & 50%") == "run\\_1 \\& 50\\%"


@given(st.floats(0, 1))
def test_pvalue_format(p):
    text = format_pvalue(p)
    if p < 1e-4:
        assert text == "< 0.0001"
    else:
        assert float(text) == pytest.approx(p, abs=5e-5)


def test_sort_by_a_column_or_a_per_system_array(small):
    res = fastrisk.risk(small, "run24", alpha=[0, 5])
    _, rows = parse_markdown(res.to_markdown("urisk", sort_by=5, significance=False))
    at5 = {s: res.urisk[1, res.systems.index(s)] for s in SYSTEMS}
    assert [r[0] for r in rows] == sorted(SYSTEMS, key=lambda s: -at5[s])
    _, rows = parse_markdown(res.to_markdown("trisk", sort_by="ugain", sort="ascending"))
    ugain = {s: res.ugain[res.systems.index(s)] for s in SYSTEMS}
    assert [r[0] for r in rows] == sorted(SYSTEMS, key=lambda s: ugain[s])
    with pytest.raises(InputError, match="`sort_by`: no alpha 3"):
        res.to_markdown(sort_by=3)


def test_infinite_values_sort_as_numbers_and_nan_rows_last():
    import warnings

    from fastrisk.data.publication import wide_layout
    from fastrisk.errors import ZeroVarianceWarning

    rng = np.random.default_rng(1)
    base = rng.uniform(0.2, 0.5, 20)
    values = np.vstack([base, base + 0.25, base + rng.normal(0.05, 0.05, 20), base - 0.25])
    m = fastrisk.ScoreMatrix(values, ["base", "plus", "noisy", "minus"], [str(i) for i in range(20)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        res = fastrisk.risk(m, "base", alpha=[0])
    layout = wide_layout(res, "trisk")
    assert layout.rows == ["plus", "noisy", "minus", "base"]  # +inf, finite, -inf, NaN
    assert np.isposinf(layout.cells[0, 0]) and np.isneginf(layout.cells[2, 0]) and np.isnan(layout.cells[3, 0])
    asc = wide_layout(res, "trisk", sort="ascending")
    assert asc.rows == ["minus", "noisy", "plus", "base"]
    _, rows = parse_markdown(res.to_markdown())
    assert rows[0] == ("plus", [(np.inf, 1)]) and rows[2] == ("minus", [(-np.inf, 1)])
    _, rows = parse_latex(res.to_latex())
    assert rows[0] == ("plus", [(np.inf, 1)]) and rows[3][1][0][0] != rows[3][1][0][0]  # NaN
