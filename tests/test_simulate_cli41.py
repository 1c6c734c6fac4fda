"""Issue 41 items 2, 8, 10, 11 through ``fastrisk simulate`` as a user types it: the
significance level has one name (``--significance``/``significance=``; ``alpha`` is the risk
tests' own), a verdict line per test after the table, ``--no-risk-nulls`` refuses the risk
tests the user named, errors name CLI options, and a risk test alone with no calibratable
pair is refused by name."""

from __future__ import annotations

import io
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fastrisk.cli import main
from fastrisk.data.datasets import trec_matrix
from fastrisk.data.io import write_matrix
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.errors import InputError
from fastrisk.simulate import topics, type1

pytest.importorskip("pyvinecopulib")


def _matrix(runs):
    m = trec_matrix("web2013_err20")
    return ScoreMatrix(m.values[:runs, :20], m.systems[:runs], m.topics[:20], m.measure)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("fits"))


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """9 runs (8 kept): type I pairs only, too few for H1 pairs and the risk nulls' pairs."""
    path = tmp_path_factory.mktemp("small") / "small.parquet"
    write_matrix(_matrix(9), path)
    return str(path)


def _type1_cli(small, cache, capsys, *extra):
    argv = ["simulate", "type1", small, "--no-risk-nulls", "--topics", "10", "--replicates", "0", "--trials", "200",
            "--tests", "t,wilcoxon,sign", "--seed", "1", "--format", "csv", "--quiet", "--cache", cache, *extra]
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_the_level_is_significance_everywhere_and_alpha_still_works(small, cache, capsys):
    """``--alpha`` was the level in simulate and the risk alpha everywhere else."""
    code, out, err = _type1_cli(small, cache, capsys)
    assert code == 0, err
    new = pd.read_csv(io.StringIO(out))
    assert "significance" in new.columns and "alpha" not in new.columns
    assert "deprecated" not in err
    code, old_out, err = _type1_cli(small, cache, capsys, "--alpha", "0.01")
    assert code == 0, err
    assert "--alpha is deprecated" in err and "--significance" in err
    assert old_out == out  # the same numbers: only the level of the verdict moved
    assert "at significance 0.01" in err
    # Python: the old keyword warns, names the new one, and gives the same numbers
    kw = dict(collections=[small], topics=10, trials=100, replicates=0, rng=2, tests=["t"], risk_nulls=False,
              progress=False, cache=cache)
    want = type1(significance=[0.01, 0.05], **kw)
    with pytest.warns(DeprecationWarning, match="use `significance=`"):
        got = type1(alphas=[0.01, 0.05], **kw)
    np.testing.assert_array_equal(got.rate, want.rate)
    assert got.significance == (0.01, 0.05)
    with pytest.warns(DeprecationWarning, match="significance"):
        assert got.alphas == got.significance
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "significance" in want.to_arrow().column_names


def test_topics_old_alpha_keyword_warns():
    with pytest.raises(InputError, match="give `significance` or its deprecated spelling `alpha`, not both"):
        topics(alpha=0.01, significance=0.01)
    with pytest.warns(DeprecationWarning, match="use `significance=`"), pytest.raises(InputError, match="`significance`"):
        topics(alpha=1.5)  # the old spelling is checked under the new name


def test_type1_prints_a_verdict_per_test_with_its_band(small, cache, capsys):
    """``simulate type1`` printed 342 rows and no summary."""
    code, out, err = _type1_cli(small, cache, capsys, "--significance", "0.05")
    assert code == 0, err
    table = pd.read_csv(io.StringIO(out))
    lines = [ln for ln in err.splitlines() if ln.startswith("  ")]
    assert [ln.split()[0] for ln in lines] == ["t", "wilcoxon", "sign"]
    assert "holds its level when the band covers 0.05" in err
    for ln in lines:
        test = ln.split()[0]
        row = table[(table.test == test) & (table.tails == "two-sided") & np.isclose(table.significance, 0.05)].iloc[0]
        rate, lo, hi, n = re.search(r"(\S+) \[(\S+), (\S+)\] n=(\d+)", ln).groups()
        assert float(rate) == pytest.approx(row.rate, abs=5e-5) and int(n) == row.n
        ci = stats.binomtest(int(round(row.rate * row.n)), int(row.n)).proportion_ci(0.95, method="wilson")
        assert float(lo) == pytest.approx(ci.low, abs=5e-5) and float(hi) == pytest.approx(ci.high, abs=5e-5)
        verdict = "liberal" if ci.low > 0.05 else "conservative" if ci.high < 0.05 else "holds its level"
        assert verdict in ln
    code, _, err = _type1_cli(small, cache, capsys, "--significance", "0.5")
    assert code == 2 and "significance 0.5 is not a level of this study" in err


def test_no_risk_nulls_refuses_the_risk_tests_named_by_trisk_alpha(small, cache, capsys):
    """``--no-risk-nulls --trisk-alpha 1,5`` silently dropped trisk@1, trisk@5, ..."""
    code, _, err = _type1_cli(small, cache, capsys, "--trisk-alpha", "1,5")
    assert code == 2
    assert "--no-risk-nulls leaves out trisk@1, bootstrap_risk@1, trisk@5, bootstrap_risk@5" in err
    assert "--trisk-alpha 1,5" in err
    code, _, err = _type1_cli(small, cache, capsys, "--trisk-alpha", "0")  # trisk@0: the study's own pairs
    assert code == 0, err


def test_errors_suggest_only_what_helps_in_cli_spelling(small, cache, capsys, tmp_path):
    """A refusal suggested ``--no-risk-nulls`` for ``simulate topics``, where it cannot help, and
    named ``risk_nulls=False``."""
    base = ["--topics", "10", "--trials", "10", "--replicates", "0", "--quiet", "--cache", cache]
    other = tmp_path / "small2.parquet"  # two collections: one alone this small runs its pairs instead (#37)
    other.write_bytes(open(small, "rb").read())
    assert main(["simulate", "type1", small, str(other), *base]) == 2  # the risk tests by default: dropping them helps
    err = capsys.readouterr().err
    assert "--no-risk-nulls leaves them out" in err and "risk_nulls=False" not in err
    for argv in (["topics", small, "--test", "trisk@5", "--trials", "10", "--quiet", "--cache", cache],
                 ["type1", small, "--tests", "trisk@5", *base]):
        assert main(["simulate", *argv]) == 2
        err = capsys.readouterr().err
        assert "too few runs" in err and "URisk_5" in err
        assert "no-risk-nulls" not in err and "risk_nulls" not in err, err
    assert main(["simulate", "type1", small, "--tests", "nope", *base]) == 2
    err = capsys.readouterr().err
    assert "--tests: 'nope'" in err and "`tests`" not in err and "--trisk-alpha" in err


@pytest.mark.slow
def test_a_risk_test_alone_with_no_calibratable_pair_is_named(tmp_path, cache, capsys):
    """``--tests trisk@1e+06`` exited with "a sweep grid needs at least one experiment"."""
    path = tmp_path / "tiny.parquet"
    write_matrix(_matrix(13), path)  # 13 runs: the study keeps 11, enough for the risk nulls' pairs
    base = ["simulate", "type1", str(path), "--trisk-alpha", "1e6", "--topics", "10", "--trials", "50",
            "--replicates", "0", "--seed", "1", "--quiet", "--format", "csv", "--cache", cache]
    assert main([*base, "--tests", "trisk@1e+06"]) == 2
    err = capsys.readouterr().err
    assert "sweep grid" not in err
    assert re.search(r"trisk@1e\+06: no pair of runs of .*tiny.parquet could be calibrated to its own null "
                     r"URisk_1e\+06 = 0 \(\d+ pair\(s\) tried failed", err), err
    assert "--trisk-alpha" in err and "`trisk_alpha`" not in err
    assert main([*base, "--tests", "t,trisk@1e+06"]) == 0  # beside a test that runs: NaN, n = 0, as documented
    out, err = capsys.readouterr()
    rows = pd.read_csv(io.StringIO(out))
    assert rows[rows.test == "trisk@1e+06"].n.eq(0).all() and rows[rows.test == "trisk@1e+06"].rate.isna().all()
    assert re.search(r"trisk@1e\+06\s+n=0\s+no trials", err), err


def test_progress_goes_to_stderr_outside_a_terminal_unless_quiet(small, cache, capsys):
    """``simulate type1 ... --out F`` outside a terminal printed nothing for minutes."""
    code, _, err = _type1_cli(small, cache, capsys)  # --quiet
    assert code == 0 and "fit:" not in err and "sweep:" not in err and "ETA" not in err
    argv = ["simulate", "type1", small, "--no-risk-nulls", "--topics", "10", "--replicates", "0", "--trials", "200",
            "--tests", "t", "--seed", "1", "--format", "csv", "--cache", cache]
    assert main(argv) == 0
    err = capsys.readouterr().err  # captured: not a terminal, so plain lines
    assert re.search(r"type1: fit: the models of 1 collection\(s\) of err20", err), err
    assert re.search(r"type1: simulate: \d+ group\(s\) of trials .* of 200 trials each", err), err
    assert re.search(r"^sweep: 200/200 trial, ETA 0 s$", err, re.M), err
    assert "\r" not in err
    argv = ["simulate", "topics", small, "--test", "t", "--trials", "20", "--max-topics", "4", "--power", "0.01",
            "--cache", cache, "--format", "csv"]
    main(argv)
    err = capsys.readouterr().err
    assert "topics: fit:" in err and "topics: simulate 20 trials at n = " in err, err


def test_topics_help_is_its_own_and_lists_the_registry(capsys):
    """``simulate topics --help`` omitted trisk_smooth and bootstrap_risk@A, described the old
    search and showed other subcommands' text."""
    from fastrisk._runtime import battery_tests

    with pytest.raises(SystemExit):
        main(["simulate", "topics", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for b in battery_tests.BATTERY.values():
        assert (f"{b.name}@A" if b.family else b.name) in text
    assert "regula falsi" in text and "doubling, then bisection" not in text
    for other in ("grid", "type1", "power / type3", "fit:", "--no-risk-nulls", "--alpha "):
        assert other not in text, other


def test_no_risk_nulls_is_refused_where_it_cannot_help(small, cache, capsys):
    assert main(["simulate", "topics", small, "--no-risk-nulls", "--quiet", "--cache", cache]) == 2
    assert "--no-risk-nulls is an option of simulate type1, power, type3 and grid" in capsys.readouterr().err
