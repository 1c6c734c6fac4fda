"""Simulation studies on any collection and any measure on [0, 1] (issue #28, part 2): the
measure's key and support from its ir_measures name, scores checked against the support,
score-matrix files as collections, the cache file names, and a collection the project never
saw (the bundled TREC 2012 Web runs scored by ``fastrisk evaluate --matrix-out``) through
fit, type1, power and topics."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from fastrisk.cli import main
from fastrisk.data.datasets import path, trec_matrix
from fastrisk.data.io import write_matrix
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.errors import InputError
from fastrisk.simulate import fits, measures, power, simireff, studies, topics, type1
from fastrisk.simulate.grid import cell_seed, run_grid

CONTINUOUS = {"norm", "beta", "nks", "bks"}
DISCRETE = {"bbinom", "dks(1)", "dks(2)", "dks(5)", "dks(10)"}


# ----------------------------------------------------------------- keys and supports
@pytest.mark.parametrize("name, key", [
    ("AP", "ap"), ("map", "ap"), ("nDCG@20", "ndcg20"), ("ndcg20", "ndcg20"), ("ERR@20", "err20"),
    ("P@10", "p10"), ("P_10", "p10"), ("RR", "rr"), ("recip_rank", "rr"), ("MRR", "rr"),
    ("nDCG@10", "nDCG@10"), ("ndcg_cut_10", "nDCG@10"), ("P@5", "P@5"), ("RR@10", "RR@10"),
    ("Judged@10", "Judged@10"), ("Success@10", "Success@10"), ("infAP", "infAP"),
    ("RBP(rel=1,p=0.8)@10", "RBP(rel=1)@10"), ("P(rel=2)@10", "P(rel=2)@10")])
def test_measure_keys(name, key):
    assert measures.canonical_measure(name) == key


def test_study_measures_keep_their_supports_and_hashes():
    """The five keep the study's keys, supports (``R/common.R`` support()) and cache keys."""
    np.testing.assert_array_equal(measures.support("P@10"), np.arange(11) / 10.0)
    np.testing.assert_array_equal(measures.support("RR"), np.r_[0.0, 1.0 / np.arange(1000, 0, -1)])
    for m in ("ap", "ndcg20", "err20"):
        assert measures.support(m) is None
    V = trec_matrix("adhoc5_p10").values
    h = hashlib.sha256(f"v{fits.FIT_VERSION}:ties0:p10:{V.shape}".encode())
    h.update(np.ascontiguousarray(V, dtype=np.float64).tobytes())
    assert fits.matrix_hash(V, "P@10") == fits.matrix_hash(V, "p10") == h.hexdigest()


@pytest.mark.parametrize("name, points", [
    ("P@5", np.arange(6) / 5), ("P(rel=2)@3", np.arange(4) / 3), ("Judged@4", np.arange(5) / 4),
    ("RR@4", np.array([0, 1 / 4, 1 / 3, 1 / 2, 1])), ("Success@10", np.array([0.0, 1.0]))])
def test_lattice_supports(name, points):
    np.testing.assert_allclose(measures.support(name), points, rtol=0, atol=1e-15)
    assert set(simireff._candidates(name)) == DISCRETE


@pytest.mark.parametrize("name", ["AP", "AP@100", "nDCG@10", "nDCG(dcg='exp-log2')@20", "ERR@10", "RBP@10",
                                  "R@100", "Rprec", "Judged", "infAP", "alpha_nDCG@20"])
def test_continuous_measures(name):
    assert measures.support(name) is None
    assert set(simireff._candidates(name)) == CONTINUOUS


@pytest.mark.parametrize("name, match", [("P", "needs a cutoff"), ("P@x", "cutoff"), ("nDCG@0", "cutoff"),
                                         ("", "empty"), ("foo/../x", "unknown simulation measure"),
                                         ("ndcg10", "unknown simulation measure"),
                                         ("NumRet", "a measure on \\[0, 1\\]")])
def test_bad_measure_names(name, match):
    with pytest.raises(InputError, match=match):
        measures.canonical_measure(name)


def test_file_stem_is_a_plain_file_name():
    assert measures.file_stem("ap") == "ap"
    assert measures.file_stem("nDCG(dcg='exp-log2')@20") == "nDCG_dcg=_exp-log2_@20"


# ----------------------------------------------------------------- scores on the support
def _matrix(values, measure):
    V = np.asarray(values, dtype=np.float64)
    return ScoreMatrix(V, tuple(f"s{i}" for i in range(V.shape[0])), tuple(f"q{j}" for j in range(V.shape[1])),
                       measure)


def test_off_lattice_score_names_system_topic_and_value():
    rng = np.random.default_rng(0)
    V = rng.integers(0, 6, size=(5, 20)) / 5
    V[3, 7] = 0.3
    with pytest.raises(InputError, match=r"collection 'mine', system 's3', topic 'q7': score 0.3 is not on "
                                         r"P@5's lattice \(j/5"):
        fits.fit_collections({"mine": _matrix(V, "P@5")}, "P@5", cache=False)
    V[3, 7] = 1.2
    with pytest.raises(InputError, match=r"system 's3', topic 'q7': score 1.2 is not in \[0, 1\]"):
        fits.fit_collections({"mine": _matrix(V, "nDCG@10")}, "nDCG@10", cache=False)
    with pytest.raises(InputError, match=r"topic 'q2': score 0.25 is not on RR@3's lattice"):
        W = np.full((4, 6), 1 / 3)
        W[0, 2] = 0.25
        fits.fit_collections({"rr": _matrix(W, "RR@3")}, "RR@3", cache=False)


def test_bundled_lattice_collections_are_on_their_support():
    for name in ("adhoc5_p10", "adhoc5_rr"):
        m = trec_matrix(name)
        measures.check_scores(m.values, name.partition("_")[2], name=name)


def test_too_few_runs_say_how_many():
    base = np.linspace(0.1, 0.9, 12)
    V = np.vstack([base, base, base + 0.01])  # a duplicate, then the bottom 10 % leaves one run
    with pytest.raises(InputError, match=r"'tiny' has too few runs: it keeps 1 of its 3 .* at least 2 for its type I"):
        type1(collections={"tiny": _matrix(V, "AP")}, measure="AP", topics=5, trials=10, replicates=0,
              cache=False, progress=False, risk_nulls=False)  # more: tests/test_simulate_runs_needed.py


# ----------------------------------------------------------------- collections from files
def test_cache_names_never_paths():
    assert fits.cache_stem("adhoc8_ap") == "adhoc8_ap"
    for name in ("../../etc/passwd", "/tmp/x.parquet", "a b", ".hidden", "web12.P@5.parquet"):
        assert fits.cache_stem(name).startswith("collection-") and "/" not in fits.cache_stem(name)


def test_files_as_collections(tmp_path):
    rng = np.random.default_rng(1)
    V = rng.integers(0, 6, size=(6, 15)) / 5
    named, bare = tmp_path / "p5.parquet", tmp_path / "p5.csv"
    write_matrix(_matrix(V, "P@5"), named)
    write_matrix(_matrix(V, None), bare)
    key, items = studies.load_collections(None, [str(named)])
    assert key == "P@5" and np.array_equal(items[str(named)].values, V)
    assert studies.load_collections("P_5", [str(named)])[0] == "P@5"
    with pytest.raises(InputError, match="holds P@5, not 'nDCG@10'"):
        studies.load_collections("nDCG@10", [str(named)])
    with pytest.raises(InputError, match="does not name its measure"):
        studies.load_collections(None, [str(bare)])
    assert studies.load_collections("P@5", [str(bare)])[0] == "P@5"
    with pytest.raises(InputError, match="mix measures"):
        studies.load_collections(None, [str(named), "adhoc5_ap"])
    with pytest.raises(InputError, match="no bundled collections of P@5"):
        studies.load_collections("P@5")
    assert studies.load_collections(None, ["adhoc5_p10"]) == ("p10", {"adhoc5_p10": None})
    got = fits.fit_collections(str(named), cache=tmp_path / "cache")[str(named)]  # a path: its own measure
    assert got.measure == "P@5" and got.path.name.startswith("collection-") and got.path.parent == tmp_path / "cache"
    assert {m.family for m in got.margins} <= DISCRETE


def test_cell_seeds_of_the_study_are_unchanged():
    ref = int(np.random.SeedSequence([7, 2, 50]).generate_state(1, np.uint64)[0] >> np.uint64(1))
    assert cell_seed(7, "rr", 50) == ref  # 'rr' is the study's third measure
    assert cell_seed(7, "P@5", 50) != cell_seed(7, "nDCG@10", 50)


# ----------------------------------------------------------------- a collection never seen
@pytest.fixture(scope="module")
def trec2012(tmp_path_factory):
    """nDCG@10 and P@5 of the bundled TREC 2012 Web runs, written by fastrisk evaluate --matrix-out."""
    d = tmp_path_factory.mktemp("trec2012")
    data = path("trec2012-web")
    for m in ("nDCG@10", "P@5"):  # one file a measure (several go into one long table with a measure column)
        rc = main(["evaluate", str(data / "runs"), "--qrels", str(data / "qrels.adhoc.txt"), "--measure", m,
                   "--matrix-out", str(d / f"web12.{m}.parquet"), "--out", str(d / "means.csv")])
        assert rc in (0, None)
    return d / "web12.nDCG@10.parquet", d / "web12.P@5.parquet", d / "cache"


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """nDCG@10 and P@5 of 14 seeded synthetic runs (`fastrisk.bench_data.synthetic_runs`) over 50
    topics, written by fastrisk evaluate --matrix-out: enough runs for the study's H1 pairs."""
    from fastrisk.bench_data.synthetic_runs import generate, write  # test data generator, not a library module

    d = tmp_path_factory.mktemp("synthetic")
    runs, qrels = generate(n_systems=14, n_topics=50, depth=100, seed=28)
    write(runs, qrels, d / "runs")
    (d / "runs" / "qrels.txt").rename(d / "qrels.txt")
    for m in ("nDCG@10", "P@5"):
        rc = main(["evaluate", str(d / "runs"), "--qrels", str(d / "qrels.txt"), "--measure", m,
                   "--matrix-out", str(d / f"syn.{m}.parquet"), "--out", str(d / "means.csv")])
        assert rc in (0, None)
    return d / "syn.nDCG@10.parquet", d / "syn.P@5.parquet"


@pytest.mark.slow
def test_unseen_collection_fit_type1_power_topics(trec2012, synthetic, capsys):
    ndcg, p5, cache = trec2012
    for file, key, families in ((ndcg, "nDCG@10", CONTINUOUS), (p5, "P@5", DISCRETE)):
        assert main(["simulate", "fit", str(file), "--cache", str(cache), "--format", "csv"]) in (0, None)
        out = capsys.readouterr().out
        assert key in out and ("continuous on [0, 1]" if key == "nDCG@10" else "j/5, j = 0..5") in out
        fit = fits.fit_collections(*reversed(studies.load_collections(None, [str(file)])), cache=cache)[str(file)]
        assert fit.source.startswith("cache:") and fit.n_runs == 7
        assert {m.family for m in fit.margins} <= families
        if key == "P@5":
            for m in fit.margins:
                np.testing.assert_array_equal(m.points, np.arange(6) / 5)  # sampled on the lattice only
        t1 = type1(collections=[str(file)], topics=50, trials=1000, replicates=0, rng=1, cache=cache,
                   significance=[0.05], progress=False, risk_nulls=False)  # type I pairs: any two of the 7 runs
        assert t1.measure == key
        k = t1.tests.index("t")
        assert abs(t1.rate[0, k, 1, 0] - 0.05) < 4 * np.sqrt(0.05 * 0.95 / 1000)  # t is valid here
        # 7 runs: too few for H1 pairs (a baseline and its 10 nearest runs)
        with pytest.raises(InputError, match=r"keeps 7 of its 8 .* needs at least 11 for its H1 pairs"):
            power(collections=[str(file)], delta=[0.05], topics=50, trials=10, replicates=0, cache=cache,
                  progress=False, risk_nulls=False)
        with pytest.raises(InputError, match=r"keeps 7 of its 8 .* needs at least 11"):
            topics(str(file), test="t", delta=0.05, trials=10, cache=cache)
    for file, key in zip(synthetic, ("nDCG@10", "P@5")):  # 14 runs: the whole protocol
        fit = fits.fit_collections(*reversed(studies.load_collections(None, [str(file)])), cache=cache)[str(file)]
        assert fit.measure == key and fit.n_runs >= 11
        t1 = type1(collections=[str(file)], topics=50, trials=1000, replicates=0, rng=1, cache=cache,
                   significance=[0.05], progress=False, risk_nulls=False)
        k = t1.tests.index("t")
        pw = power(collections=[str(file)], delta=[0.05], topics=50, trials=1000, replicates=0, rng=1,
                   cache=cache, significance=[0.05], progress=False, risk_nulls=False)
        assert pw.measure == key and pw.rate[0, k, 1, 0] > t1.rate[0, k, 1, 0] + 0.1
        plan = topics(str(file), test="t", delta=0.05, trials=500, rng=2, cache=cache, max_topics=300)
        assert plan.measure == key and plan.topics is not None
        i = plan.n.index(plan.topics)
        assert plan.power[i] >= 0.8 and all(p < 0.8 for n, p in zip(plan.n, plan.power) if n == plan.topics - 1)
    # the CLI: topics on the file, with the figure; grid with a file collection
    p5 = synthetic[1]
    assert main(["simulate", "topics", str(p5), "--test", "sign", "--delta", "0.1", "--trials", "200", "--seed",
                 "1", "--cache", str(cache), "--max-topics", "200", "--plot", str(cache / "t.svg"), "--quiet",
                 "--format", "csv"]) in (0, None)
    out = capsys.readouterr()
    assert out.out.startswith("n,measure,test,tails,power,se,low,high,trials") and "topics reach power" in out.err
    assert (cache / "t.svg").stat().st_size > 1000
    res = run_grid(["type1"], cache / "grid", collections=[str(p5)], topics=[10], trials=200, replicates=0, rng=1,
                   cache=cache, progress=False, risk_nulls=False)
    assert res["type1"][0].measure == "P@5"
    assert (cache / "grid" / "type_1" / "type_1_P@5_10.csv").exists()
