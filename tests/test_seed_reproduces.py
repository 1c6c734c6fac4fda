"""Issue #41 item 7 for the library: a result's ``seed`` reproduces it when given back as ``rng=``
(``seed=`` for `pair_study`), whatever made it (None, an int, a Generator), and an integer
``rng`` gives the numbers it gave before results recorded it (digests computed on the commit
before the change, 12a5a8c)."""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np
import pyarrow as pa
import pytest

import fastrisk
from fastrisk.data import datasets
from fastrisk.data.matrix import ScoreMatrix


def _matrix(S: int = 6, c: int = 20) -> ScoreMatrix:
    m = datasets.trec_matrix("web2012_err20")
    return ScoreMatrix(m.values[:S, :c], m.systems[:S], m.topics[:c], m.measure)


def _runs_qrels():
    runs = fastrisk.read_runs(datasets.path("trec2012-web/runs"), pattern="*filtered*")
    qrels = fastrisk.read_qrels(datasets.path("trec2012-web/qrels.adhoc.txt"))
    return runs, qrels


def _bootstrap(rng):
    m = _matrix()
    return fastrisk.bootstrap(m, m.systems[0], alpha=[0, 5], replicates=300, rng=rng)


def _bootstrap_of_stack(rng):  # the batched kernel of a stack of collections
    m = _matrix()
    st = fastrisk.batch.stack([m, ScoreMatrix(m.values[:, ::-1].copy(), m.systems, m.topics, m.measure)])
    return fastrisk.bootstrap(st, m.systems[0], replicates=300, method=None, rng=rng)


def _bootstrap_interval_of_stack(rng):  # each collection on its own, seeded from the stack's seed
    m = _matrix()
    st = fastrisk.batch.stack([m, ScoreMatrix(m.values[:, ::-1].copy(), m.systems, m.topics, m.measure)])
    return fastrisk.bootstrap(st, m.systems[0], replicates=300, method="percentile", rng=rng)


def _permutation(rng):
    m = _matrix()
    return fastrisk.permutation_test(m, m.systems[0], alpha=0, replicates=300, rng=rng)


def _permutation_of_stack(rng):
    m = _matrix()
    st = fastrisk.batch.stack([m, ScoreMatrix(m.values[:, ::-1].copy(), m.systems, m.topics, m.measure)])
    return fastrisk.permutation_test(st, m.systems[0], alpha=0, replicates=300, rng=rng)


def _tukey(rng):
    return fastrisk.tukey_hsd(_matrix(), replicates=300, rng=rng)


def _discriminative_power(rng):
    return fastrisk.discriminative_power(_matrix(), replicates=100, rng=rng)


def _swap_rates(rng):
    return fastrisk.swap_rates(_matrix(c=30), sizes=[5, 10], trials=50, rng=rng)


def _effect_size(rng):
    m = _matrix()
    return fastrisk.effect_size(m, m.systems[0], replicates=100, rng=rng)


def _pooling_experiment(rng):
    runs, qrels = _runs_qrels()
    return fastrisk.pooling_experiment(runs, qrels, "AP", widths=[2], repeats=3, common_topics=[10],
                                       topic_repeats=10, rng=rng)


def _pooling_comparison(rng):
    runs, qrels = _runs_qrels()
    return fastrisk.pooling_comparison(runs, qrels, ["AP", "Bpref"], widths=[2], repeats=3, common_topics=[10],
                                       topic_repeats=10, rng=rng)


def _battery(rng):
    V = _matrix(4, 20).values
    return fastrisk.simulate.battery(np.stack([V[[0, 1]], V[[2, 3]]]), replicates=100, rng=rng)


def _pair_study(rng):
    m = _matrix()
    return fastrisk.simulate.pair_study(m, m.systems[0], m.systems[1], alpha=5, topics=10, trials=40,
                                        resampling_trials=20, inferences=["t", "bootstrap-t-symmetric"], nulls=["empirical"],
                                        topic_grid=[10], seed=rng, progress=False)


def _calibrated_trisk(rng):
    pytest.importorskip("pyvinecopulib")
    m = _matrix(c=30)
    return fastrisk.simulate.calibrated_trisk(m, m.systems[0], m.systems[2], alpha=5, replicates=99, seed=rng)


def _type1(rng, tmp_path):
    m = _matrix(4, 20)
    return fastrisk.simulate.type1(collections={"tiny": m}, measure="err20", topics=10, trials=20, replicates=50,
                                   rng=rng, risk_nulls=False, tests=("t", "bootstrap"), significance=(0.05,),
                                   cache=tmp_path, progress=False)


def _synthetic_letor(rng):
    from fastrisk.ltr import synthetic_letor

    return synthetic_letor(12, (2, 6), 4, rng=rng)


def _ltr_experiment(rng):
    pytest.importorskip("lightgbm")
    from fastrisk.ltr import ltr_experiment, synthetic_letor

    train, test = synthetic_letor(40, (4, 8), 5, rng=1), synthetic_letor(20, (4, 8), 5, rng=2)
    return ltr_experiment(train, test, baseline_feature=1, alpha=[0, 5], kinds=["urisk"], rounds=2, rng=rng,
                          threads=1)


CASES = {
    "bootstrap": _bootstrap, "bootstrap_of_stack": _bootstrap_of_stack,
    "bootstrap_interval_of_stack": _bootstrap_interval_of_stack, "permutation_test": _permutation,
    "permutation_of_stack": _permutation_of_stack, "tukey_hsd": _tukey,
    "discriminative_power": _discriminative_power, "swap_rates": _swap_rates, "effect_size": _effect_size,
    "pooling_experiment": _pooling_experiment, "pooling_comparison": _pooling_comparison, "battery": _battery,
    "pair_study": _pair_study, "calibrated_trisk": _calibrated_trisk, "type1": _type1, "ltr_experiment": _ltr_experiment,
}

#: sha256 (first 16 hex digits) of every float/int array of each case's result for rng=1, computed
#: with `_digests` on the commit before results recorded the seed they were given (12a5a8c)
BASE_DIGESTS = {
    "bootstrap": "9fd4026caebbfb96",
    "bootstrap_of_stack": "ffa94901cca8350d",
    "bootstrap_interval_of_stack": "87579ac75ae20e0a",
    "permutation_test": "5f8cb745f9532a26",
    "permutation_of_stack": "59925dfebb961c32",
    "tukey_hsd": "15af65f530c7f922",
    "discriminative_power": "9cd2ca6a91b12144",
    "swap_rates": "5d34a93876af41db",
    "effect_size": "23a98419f2d76e89",
    "pooling_experiment": "bfe7681812ca9971",
    "pooling_comparison": "5dc498552290276c",
    "battery": "dc7a287002cfaf8c",
    "pair_study": "24b7f3558244a114",
    "type1": "4ebfe3b507506b08",
    "ltr_experiment": "cf785665a4e534ec",
}


def _call(name, rng, tmp_path):
    f = CASES[name]
    return f(rng, tmp_path) if name == "type1" else f(rng)


def _seed_of(res):
    return res.seed


def _values(obj, path="res"):
    """(path, value) of every leaf of a result: dataclass fields, tuples, arrays, Arrow tables."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            yield from _values(getattr(obj, f.name), f"{path}.{f.name}")
    elif isinstance(obj, (tuple, list)) and not isinstance(obj, str):
        for i, v in enumerate(obj):
            yield from _values(v, f"{path}[{i}]")
    else:
        yield path, obj


def _same(a, b) -> None:
    va, vb = list(_values(a)), list(_values(b))
    assert [p for p, _ in va] == [p for p, _ in vb]
    for (p, x), (_, y) in zip(va, vb):
        if p == "res.fits":  # a study's note of where its fits came from: fitted, then read from the cache
            continue
        if isinstance(x, np.ndarray):
            assert x.shape == y.shape and np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"), p
        elif isinstance(x, pa.Table):
            assert x.equals(y), p
        elif isinstance(x, float) and np.isnan(x):
            assert isinstance(y, float) and np.isnan(y), p
        else:
            assert x == y, p


def _digest(res) -> str:
    h = hashlib.sha256()
    for p, v in _values(res):
        if isinstance(v, np.ndarray) and v.dtype.kind in "fiub":
            h.update(p.encode())
            h.update(np.ascontiguousarray(v).tobytes())
    return h.hexdigest()[:16]


def _digests(tmp_path) -> dict:
    """Every case's `_digest` for rng=1 (run on the base commit to fill `BASE_DIGESTS`)."""
    out = {}
    for name in CASES:
        try:
            out[name] = _digest(_call(name, 1, tmp_path))
        except pytest.skip.Exception:
            pass
    return out


@pytest.mark.parametrize("given", ["none", "int", "generator"])
@pytest.mark.parametrize("name", list(CASES))
def test_the_recorded_seed_reproduces_the_result(name, given, tmp_path):
    rng = {"none": None, "int": 20260, "generator": np.random.default_rng(7)}[given]
    res = _call(name, rng, tmp_path)
    seed = _seed_of(res)
    assert isinstance(seed, int) and 0 <= seed < 2**63
    if given == "int":
        assert seed == 20260  # an int records itself
    again = _call(name, seed, tmp_path)
    assert _seed_of(again) == seed
    _same(res, again)


def test_synthetic_letor_names_the_seed_that_reproduces_it():
    d = _synthetic_letor(np.random.default_rng(3))
    seed = int(d.source.split("rng=")[1].rstrip(")"))
    again = _synthetic_letor(seed)
    assert again.source == d.source
    np.testing.assert_array_equal(again.features, d.features)
    np.testing.assert_array_equal(again.labels, d.labels)


@pytest.mark.parametrize("name", list(CASES))
def test_an_integer_seed_gives_the_numbers_it_gave_before(name, tmp_path):
    if name not in BASE_DIGESTS:
        pytest.skip(f"{name}: no digest from the base commit (added after it, or an optional dependency was missing)")
    assert _digest(_call(name, 1, tmp_path)) == BASE_DIGESTS[name]


def test_resolve_seed_records_what_reproduces_it():
    from fastrisk._runtime.rng import Seed, resolve_seed

    s = resolve_seed(1)
    assert s == Seed(3717377837946358015, 1)  # the kernel seed of rng=1 is the one it always was
    assert resolve_seed(np.uint32(1)) == s
    # a SeedSequence of one integer records that integer: the same kernel seed as the int
    assert resolve_seed(np.random.SeedSequence(1)) == s
    # one that an int cannot give again records its derived seed (documented limit)
    spawned = np.random.SeedSequence(1, spawn_key=(3,))
    k = resolve_seed(spawned)
    assert k.recorded == k.kernel != s.kernel
    wide = np.random.SeedSequence(2**100)
    assert resolve_seed(wide).recorded == resolve_seed(wide).kernel
    # None and a Generator: an int drawn, then as that int
    for rng in (None, np.random.default_rng(5)):
        d = resolve_seed(rng)
        assert resolve_seed(d.recorded) == d
    assert resolve_seed(np.random.default_rng(5)).recorded == int(np.random.default_rng(5).integers(0, 2**63 - 1))


def test_the_sweep_root_seed_reproduces_the_sweep():
    exp = fastrisk.Experiment("bootstrap", "trec:web2012_err20", params={"baseline": "mean", "replicates": 50},
                              grid={"alpha": [0, 5]})
    first = fastrisk.sweep.sweep(fastrisk.Grid([exp]), progress=False)
    again = fastrisk.sweep.sweep(fastrisk.Grid([exp], rng=first.seed), progress=False)
    assert again.seed == first.seed
    assert first.table.to_pylist() == again.table.to_pylist()  # (no NaN in a bootstrap's columns)
    gen = fastrisk.Grid([exp], rng=np.random.default_rng(4))
    assert fastrisk.Grid([exp], rng=gen.seed).jobs() == gen.jobs()
    ss = fastrisk.Grid([exp], rng=np.random.SeedSequence(9))
    assert fastrisk.Grid([exp], rng=ss.seed).jobs() == ss.jobs()
