"""Too few runs is an error (issue #28): a collection that keeps fewer runs than the
protocol needs (Urbano, Lima & Hanjalic 2019: type I pairs any two distinct runs; H1 pairs a
baseline and its 10 nearest runs in mean, so 11; the risk nulls' pairs are drawn as H1 pairs)
raises an `InputError` naming the collection, the runs it keeps after the study's removal rule
(duplicates, then the bottom 10 % by mean) and the runs needed -- from the API and the CLI,
for type1, power, type3 and topics; fitting works on any count."""

from __future__ import annotations

import re

import numpy as np
import pytest

from fastrisk.cli import main
from fastrisk.data.datasets import trec_matrix
from fastrisk.data.io import write_matrix
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.errors import InputError
from fastrisk.simulate import fits, power, topics, type1, type3
from fastrisk.simulate.studies import H1_NEIGHBOURS, check_runs, runs_needed

pytest.importorskip("pyvinecopulib")

RUNS = 9  # web2013_err20's first 9 runs over 20 topics: the study keeps 8 (one of the bottom 10 % dropped)


def _small():
    m = trec_matrix("web2013_err20")
    return ScoreMatrix(m.values[:RUNS, :20], m.systems[:RUNS], m.topics[:20], m.measure)


def _kept():
    """Runs the study keeps, counted here by its rule (R's removeDuplicates with tolerance 1e-5,
    then the runs whose mean is below the 10 % quantile, type 7)."""
    V = _small().values
    rows = [i for i in range(len(V)) if not any(np.all(np.abs(V[i] - V[j]) <= 1e-5) for j in range(i))]
    mu = V[rows].mean(axis=1)
    return int((mu >= np.quantile(mu, 0.1)).sum())


def _message(path, needed):
    return re.escape(f"collection {str(path)!r} has too few runs: it keeps {_kept()} of its {RUNS} (") + \
        rf".*the study needs at least {needed} for "


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("fits")


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """The collection as a file (``fastrisk evaluate --matrix-out``'s format), fitted once."""
    path = tmp_path_factory.mktemp("small") / "small.parquet"
    write_matrix(_small(), path)
    return str(path)


def test_the_reference_count_is_below_h1s():
    assert 2 <= _kept() < H1_NEIGHBOURS + 1 == 11


@pytest.mark.parametrize("study", [power, type3])
def test_h1_studies_need_a_baseline_and_ten_neighbours(study, small, cache):
    with pytest.raises(InputError, match=_message(small, 11) + r"its H1 pairs \(a baseline and its 10 nearest"):
        study(collections=[small], delta=[0.05], topics=10, trials=10, replicates=0,
              progress=False, cache=cache, risk_nulls=False)


def test_type1_needs_eleven_only_for_the_risk_nulls(small, cache):
    kw = dict(collections=[small], topics=10, trials=20, replicates=0, rng=1, progress=False, cache=cache)
    with pytest.raises(InputError, match=_message(small, 11) + r"the risk tests' pairs under their own null"):
        type1(**kw)
    with pytest.raises(InputError, match=_message(small, 11)):
        type1(tests=("t", "trisk@5"), **kw)
    # type I pairs are any two distinct runs (the study's R/11-type_1.R): no risk null, no need for 11
    res = type1(risk_nulls=False, **kw)
    assert np.isfinite(res.rate[:, res.tests.index("t")]).all() and res.n.max() == 20
    assert type1(tests=("t", "zrisk"), **kw).tests == ("t", "zrisk")


def test_type1_needs_two_runs():
    base = np.linspace(0.1, 0.9, 12)
    V = np.vstack([base, base, base + 0.01])  # a duplicate, then the bottom 10 % leaves one run
    m = ScoreMatrix(V, ("s0", "s1", "s2"), tuple(f"q{j}" for j in range(12)), "AP")
    with pytest.raises(InputError, match=r"'tiny' has too few runs: it keeps 1 of its 3 \(1 duplicate\(s\) and 1 of "
                                         r"the bottom 10 % .* at least 2 for its type I pairs \(two distinct runs\)"):
        type1(collections={"tiny": m}, measure="AP", topics=5, trials=10, replicates=0, cache=False, progress=False,
              risk_nulls=False)


def test_topics_needs_eleven(small, cache):
    with pytest.raises(InputError, match=_message(small, 11) + "its H1 pairs"):
        topics(small, test="t", trials=10, cache=cache)
    with pytest.raises(InputError, match=_message(small, 11) + "the risk tests' pairs"):
        topics(small, test="trisk@5", trials=10, replicates=0, cache=cache)


def test_the_cli_names_the_count_and_fit_works_on_any_count(small, cache, capsys):
    args = ["--cache", str(cache), "--trials", "10", "--quiet"]
    assert main(["simulate", "fit", str(small), "--format", "csv", *args[:2]]) == 0
    assert f"{small},err20" in capsys.readouterr().out.replace('"', "")
    # (type1, power and topics without a named test run the pair-level study over the pairs of a single
    # collection this small instead, #37: tests/test_simulate_pair.py)
    for argv in (["power", str(small), "--delta", "0.05", "--no-risk-nulls", "--tests", "t"], ["type3", str(small)],
                 ["topics", str(small), "--test", "t"], ["type1", str(small), "--tests", "t,trisk@5"]):
        assert main(["simulate", *argv, *args]) == 2
        err = capsys.readouterr().err
        assert re.search(_message(small, 11), err), err
        assert "Traceback" not in err
    assert main(["simulate", "type1", str(small), "--no-risk-nulls", "--topics", "10", "--replicates", "0",
                 "--format", "csv", *args]) == 0


def test_check_runs_counts_kept_runs(small, cache):
    fit = fits.fit_collections([small], cache=cache)[small]
    assert fit.n_runs == _kept()
    check_runs([fit], *runs_needed("type1", True, []))  # two runs suffice
    for mode, own, nulls in (("power", True, []), ("type1", True, ["a null"]), ("power", False, ["a null"])):
        with pytest.raises(InputError, match=_message(small, 11)):
            check_runs([fit], *runs_needed(mode, own, nulls))
    with pytest.raises(InputError, match=_message(small, 9) + "its type I pairs"):
        check_runs([fit], 9, "its type I pairs")
