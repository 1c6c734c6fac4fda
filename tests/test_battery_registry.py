"""The battery registry (`fastrisk._runtime.battery_tests`) and the study options objects
(`fastrisk.simulate.options`): every record's kernel slots exist; a test added as one record
flows through the battery, the study's tables and the figures; the options objects give the
numbers of the keywords; and the battery's numbers are those of main before the registry
(golden digests, one per test, so a new record never breaks them)."""

from __future__ import annotations

import hashlib
import importlib

import numpy as np
import pytest

import fastrisk
from fastrisk._kernels import battery as _k
from fastrisk._runtime import battery_tests as bt
from fastrisk._runtime.rng import resolve_seed
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.errors import InputError
from fastrisk.simulate import studies
from fastrisk.simulate.battery import battery, battery_test_names
from fastrisk.simulate.options import Execution, Sampling, TestSelection
from fastrisk.viz import figures

sb = importlib.import_module("fastrisk.simulate.battery")  # the module (fastrisk.simulate.battery is also the function)

#: A toy member: the permutation test under another name, code and colour (its numbers must be
#: the permutation test's, bit for bit, wherever it goes).
TOY = bt.BatteryTest("mean_flip", "d symmetric about 0 (toy)", "mean(d)", "flip", stats=("MEAN",),
                     counts=("PERM_GE", "PERM_LE"), urbano_counts=("RPERM_GE", "RPERM_ABS"), passes=("flips",),
                     code="m", color="#123456", label="Mean flip", reference="a copy of the permutation test")


@pytest.fixture
def toy(monkeypatch):
    """The registry with TOY appended, swapped in (every reader reads it at call time)."""
    reg = dict(bt.BATTERY)
    reg[TOY.name] = TOY
    monkeypatch.setattr(bt, "BATTERY", reg)
    return reg


def _pairs(K=30, c=20, seed=1):
    rng = np.random.default_rng(seed)
    V = rng.random((K, 2, c))
    V[:, 1] = np.clip(V[:, 0] + rng.normal(0.02, 0.1, (K, c)), 0, 1)
    return V


def test_the_battery_is_the_registry_in_order():
    assert battery_test_names((1.0, 5.0)) == (
        "t", "wilcoxon", "sign", "bootstrap", "permutation", "trisk@1", "trisk@5", "zrisk", "georisk",
        "trisk_smooth", "bootstrap_risk@1", "bootstrap_risk@5")
    assert bt.paper_tests() == ("t", "wilcoxon", "sign", "bootstrap", "permutation")
    assert bt.codes() == {"t": "t", "wilcoxon": "w", "sign": "s", "bootstrap": "b", "permutation": "p"}


def test_every_record_names_kernel_slots_that_exist():
    sb._check_slots()  # the registry as shipped
    for b in bt.BATTERY.values():
        for name in (*b.stats, *b.counts, *b.urbano_counts, *([b.risk] if b.risk else [])):
            assert isinstance(getattr(_k, name), int), (b.name, name)
    bad = {"x": bt.BatteryTest("x", "h", "s", "flip", stats=("NO_SUCH_SLOT",))}
    with pytest.raises(ValueError, match="no kernel slot 'NO_SUCH_SLOT'"):
        sb._check_slots(bad)


def test_a_record_refuses_an_unknown_rule_pass_or_null():
    with pytest.raises(ValueError, match="unknown p-value rule"):
        bt.BatteryTest("x", "h", "s", "magic")
    with pytest.raises(ValueError, match="unknown kernel pass"):
        bt.BatteryTest("x", "h", "s", "flip", passes=("teleport",))
    with pytest.raises(ValueError, match="unknown null"):
        bt.BatteryTest("x", "h", "s", "flip", null="elsewhere")
    with pytest.raises(ValueError, match="a family"):
        bt.BatteryTest("x", "h", "s", "student_t", family=True)


def test_the_null_of_each_test_is_the_registry_s():
    assert bt.null_of("t") is None and bt.null_of("zrisk") is None
    assert bt.null_of("trisk@0") is None and bt.null_of("bootstrap_risk@0") is None  # URisk_0 is E[d]
    assert bt.null_of("trisk@5") == ("urisk", 5.0) and bt.null_of("bootstrap_risk@1") == ("urisk", 1.0)
    assert bt.null_of("trisk_smooth") == ("smooth", 0.0)
    assert [n.name for n in studies._nulls((1.0, 5.0))] == ["URisk_1", "URisk_5", "URisk_s"]
    with pytest.raises(KeyError):
        bt.lookup("trisk")  # a family's test needs its alpha
    with pytest.raises(KeyError):
        bt.lookup("t@1")


def test_resampling_is_the_registry_s():
    from fastrisk.simulate.planning import needs_resamples

    for name in battery_test_names((0.0, 1.0)):
        assert needs_resamples(name, (0.0, 1.0)) == bt.lookup(name)[0].resampled, name


@pytest.mark.parametrize("protocol", ["standard", "urbano2019"])
def test_a_test_added_as_one_record_runs_in_the_battery(toy, protocol):
    V = _pairs()
    res = battery(V, replicates=300, rng=3, protocol=protocol)
    assert res.tests[-1] == "mean_flip"
    k, p = res.tests.index("mean_flip"), res.tests.index("permutation")
    np.testing.assert_array_equal(res.pvalue[:, k], res.pvalue[:, p])
    np.testing.assert_array_equal(res.statistic[:, k], res.statistic[:, p])
    # asked for alone, it runs the sign flips it declares (and only them)
    alone = battery(V, replicates=300, rng=3, protocol=protocol, tests=["mean_flip"])
    np.testing.assert_array_equal(alone.pvalue[:, k], res.pvalue[:, p])
    assert np.isnan(alone.pvalue[:, res.tests.index("bootstrap")]).all()


def test_a_test_added_as_one_record_flows_to_the_study_tables_and_figures(toy, tmp_path):
    m = fastrisk.data.datasets.trec_matrix("web2013_err20")
    tiny = ScoreMatrix(m.values[:4, :20], m.systems[:4], m.topics[:20], m.measure)
    r = fastrisk.simulate.type1(collections={"tiny": tiny}, measure="err20", topics=10, trials=60, replicates=100,
                                rng=5, risk_nulls=False, tests=("permutation", "mean_flip"), cache=tmp_path,
                                significance=(0.05, 0.1))
    assert r.tests == ("permutation", "mean_flip")
    np.testing.assert_array_equal(r.rate[:, 1], r.rate[:, 0])
    (table,) = r.tables().values()
    assert list(table.columns) == ["alpha", "p1", "m1", "p2", "m2"]
    np.testing.assert_array_equal(table["m2"], table["p2"])
    style = figures._style("mean_flip", 0)
    assert style["color"] == "#123456" and style["label"] == "Mean flip" and style["ls"] == "-"
    fig = figures.plot_studies([r], tmp_path / "rates.svg")
    labels = fig.legends[0].get_texts()
    assert any(t.get_text().startswith("Mean flip") for t in labels)


def test_the_figures_style_comes_from_the_registry():
    assert figures._style("t", 0)["color"] == bt.BATTERY["t"].color
    assert figures._style("permutation", 0)["ls"] == "--"
    risk = figures._style("trisk@1", 2, "URisk_1 = 0")
    assert risk["ls"] == ":" and risk["label"] == "trisk@1 [URisk_1 = 0]"
    assert figures._style("no_longer_a_test", 0)["ls"] == ":"  # an old result's test: the risk palette


# ---- the numbers of main before the registry (038bf3a), one digest per test and configuration

def _digest(a) -> str:
    return hashlib.sha256(np.ascontiguousarray(a, dtype=np.float64).tobytes()).hexdigest()[:16]


_CASES = {
    "standard": dict(replicates=500, rng=3),
    "urbano2019": dict(replicates=500, rng=3, protocol="urbano2019"),
    "exact": dict(replicates=1000, rng=6),
    "shared": dict(replicates=300, rng=7, shared_resamples=True, start=11),
}
#: sha256 (16 hex digits) of each test's p-values (K, 3) on `_pairs` (K = 30, c = 20; "exact": the
#: first 8 topics), computed at main 038bf3a, before the registry.
GOLDEN = {
    "standard": {
        "t": "d22604fa0d25b8f7", "wilcoxon": "24c1a2532df977e1", "sign": "04099b8a8fc9f31d",
        "bootstrap": "6abc2d4b4400daf2", "permutation": "19b742c596c49ae7", "trisk@0": "d22604fa0d25b8f7",
        "trisk@1": "8717ab0f657140b8", "trisk@5": "8d27aa9125f55a1e", "zrisk": "873ffdaf9d028700",
        "georisk": "6f1458428f859706", "trisk_smooth": "475a676551ef7b97", "bootstrap_risk@0": "6abc2d4b4400daf2",
        "bootstrap_risk@1": "89dd3beeab881cad", "bootstrap_risk@5": "b16a3c2fc7bf5480",
    },
    "urbano2019": {
        "t": "d46acc45bfa51a88", "wilcoxon": "4ad33a8ecc9027c4", "sign": "a2cfa2413f2a1a9c",
        "bootstrap": "fcb9dad321df3e69", "permutation": "1aea4860117d512f", "trisk@0": "d46acc45bfa51a88",
        "trisk@1": "2401f74ac0b63663", "trisk@5": "b4f7e22cfa7e3606", "zrisk": "4ff1e13db5b25ea1",
        "georisk": "3331174602d87e62", "trisk_smooth": "7c56a24305d6fc5a", "bootstrap_risk@0": "b3e22a7d65d8ed93",
        "bootstrap_risk@1": "b9c971a26c412637", "bootstrap_risk@5": "5b367b0219f02e54",
    },
    "exact": {
        "t": "7d8bbaf0dfbb0e0b", "wilcoxon": "7164e368da8cd6c7", "sign": "140150a4e7af0b57",
        "bootstrap": "e6a8d655440509e8", "permutation": "0927fda029e4433b", "trisk@0": "7d8bbaf0dfbb0e0b",
        "trisk@1": "c09962e661f58aae", "trisk@5": "7a952dcc85194927", "zrisk": "c8e2393380e95a10",
        "georisk": "53c15e644594e5e6", "trisk_smooth": "91e52f6086ca0ee9", "bootstrap_risk@0": "e6a8d655440509e8",
        "bootstrap_risk@1": "fc0e27e7b389e2cc", "bootstrap_risk@5": "ad1ed8bf76f8f984",
    },
    "shared": {
        "t": "d22604fa0d25b8f7", "wilcoxon": "24c1a2532df977e1", "sign": "04099b8a8fc9f31d",
        "bootstrap": "0a06e43f09a2aa93", "permutation": "241961421743d886", "trisk@0": "d22604fa0d25b8f7",
        "trisk@1": "8717ab0f657140b8", "trisk@5": "8d27aa9125f55a1e", "zrisk": "c7149500b41f934d",
        "georisk": "73b686734f2d5a12", "trisk_smooth": "475a676551ef7b97", "bootstrap_risk@0": "0a06e43f09a2aa93",
        "bootstrap_risk@1": "4d3b9dc9a7abab33", "bootstrap_risk@5": "477083d92d2054aa",
    },
}


def _case(name):
    kw = dict(_CASES[name])
    V = _pairs()
    return battery(V[:, :, :8] if name == "exact" else V, trisk_alpha=(0.0, 1.0, 5.0), **kw)


@pytest.mark.parametrize("case", sorted(_CASES))
def test_the_battery_s_numbers_are_main_s(case):
    res = _case(case)
    got = {t: _digest(res.pvalue[:, k]) for k, t in enumerate(res.tests)}
    want = GOLDEN[case]
    assert {t: got[t] for t in want} == want


# ---- the options objects


def test_the_options_objects_give_the_keywords_numbers(tmp_path):
    m = fastrisk.data.datasets.trec_matrix("web2013_err20")
    tiny = {"tiny": ScoreMatrix(m.values[:4, :20], m.systems[:4], m.topics[:20], m.measure)}
    kw = dict(collections=tiny, measure="err20", topics=10)
    a = fastrisk.simulate.type1(trials=40, replicates=50, rng=2, risk_nulls=False, tests=("t", "bootstrap"),
                                significance=(0.05,), cache=tmp_path, **kw)
    b = fastrisk.simulate.type1(sampling=Sampling(trials=40, replicates=50, rng=2),
                                selection=TestSelection(tests=("t", "bootstrap"), risk_nulls=False, significance=(0.05,)),
                                execution=Execution(cache=tmp_path), **kw)
    np.testing.assert_array_equal(a.rate, b.rate)
    assert a.tests == b.tests and a.seed == b.seed


def test_an_option_given_twice_is_named():
    with pytest.raises(InputError, match=r"give `trials` in `sampling` or as keyword\(s\), not both"):
        fastrisk.simulate.type1(trials=5, sampling=Sampling(trials=5))
    with pytest.raises(InputError, match=r"`selection` must be a fastrisk.simulate.TestSelection"):
        fastrisk.simulate.power(selection={"tests": ["t"]})
    with pytest.raises(InputError, match="topics draws independent resamples"):
        fastrisk.simulate.topics(sampling=Sampling(shared_resamples=True))


# ---- the risk inferences of fastrisk.core.inference as opt-in battery tests (issue #37)

RISK_INFERENCE_TESTS = ("edgeworth", "johnson", "hall", "el-bartlett", "bootstrap-t-symmetric", "exact",
                        "bootstrap-t-double")


def test_the_risk_inferences_are_opt_in_records():
    from fastrisk.core.inference import INFERENCES

    for name in RISK_INFERENCE_TESTS:
        b = bt.BATTERY[f"trisk-{name}"]
        assert b.opt_in and b.family and b.inference == name and b.null == "urisk" and b.inference in INFERENCES
        assert b.resampled == INFERENCES[name].resampling
        assert bt.null_of(f"trisk-{name}@5") == ("urisk", 5.0)
    # the default battery (and so the studies' default tests, CSVs and curves) is unchanged; named, they join it
    assert not any(t.startswith("trisk-") for t in battery_test_names((1.0, 5.0)))
    assert battery_test_names((1.0, 5.0), ["trisk-hall@5"])[-1] == "trisk-hall@5"
    assert len(battery_test_names((1.0, 5.0), True)) == 12 + 2 * len(RISK_INFERENCE_TESTS)
    assert not any(t.startswith("trisk-") for t in battery(_pairs(K=3), replicates=0).tests)
    with pytest.raises(ValueError, match="rule 'inference'"):
        bt.BatteryTest("x", "h", "s", "inference", risk="TRISK", family=True)
    with pytest.raises(ValueError, match="rule 'inference'"):
        bt.BatteryTest("x", "h", "s", "student_t", risk="TRISK", family=True, inference="hall")
    bad = {"x": bt.BatteryTest("x", "h", "s", "inference", risk="TRISK", family=True, inference="telepathy")}
    with pytest.raises(ValueError, match="no risk inference 'telepathy'"):
        sb._check_slots(bad)


def _core_pvalues(V, name, alpha, B, seed, keys):
    """`fastrisk.core.inference.pvalues` of each pair's x = d + A min(d, 0), each pair on the
    streams of its own key, (K, 3) [two-sided, less, greater]."""
    from fastrisk.core import inference

    spec = inference.INFERENCES[name]
    d = V[:, 1] - V[:, 0]
    x = d + alpha * np.minimum(d, 0.0)
    return np.stack([np.concatenate([
        inference.pvalues(x[k:k + 1], spec, bounds=(-(1.0 + alpha), 1.0), alternative=alt,
                          replicates=B if spec.resampling else 0, seed=seed, row0=int(keys[k])) for k in range(len(V))])
        for alt in ("two-sided", "less", "greater")], axis=1)


@pytest.mark.parametrize("start", ["run", "keys", "shared"])
def test_a_risk_inference_s_battery_pvalues_are_core_inference_s(start):
    V = _pairs(K=12, c=20, seed=4)
    wanted = [f"trisk-{n}@{a:g}" for n in RISK_INFERENCE_TESTS for a in (0.0, 5.0)]
    kw = {"run": dict(start=5), "keys": dict(start=np.array([9, 3, 4, 5, 40, 41, 2, 7, 8, 100, 101, 102])),
          "shared": dict(start=11, shared_resamples=True)}[start]
    res = battery(V, replicates=60, rng=8, trisk_alpha=(0.0, 5.0), tests=wanted, **kw)
    keys = np.full(12, 11) if start == "shared" else np.arange(5, 17) if start == "run" else kw["start"]
    for t in wanted:
        name, alpha = t[len("trisk-"):].split("@")
        want = _core_pvalues(V, name, float(alpha), 60, resolve_seed(res.seed).kernel, keys)
        np.testing.assert_array_equal(res.pvalue[:, res.tests.index(t)], want, err_msg=t)
        np.testing.assert_allclose(res.statistic[:, res.tests.index(t)],  # its statistic: TRisk_A (trisk@0 is t's)
                                   res.statistic[:, res.tests.index(f"trisk@{alpha}")], rtol=1e-12)
    assert np.isfinite(res.pvalue[:, res.tests.index("trisk-exact@5")]).all()
    assert (res.pvalue[:, [res.tests.index(t) for t in wanted]] <= 1.0).all()


def test_a_resampling_risk_inference_needs_replicates_and_is_the_same_whatever_the_threads():
    V = _pairs(K=10, c=20, seed=6)
    tests = ["trisk-exact@5", "trisk-bootstrap-t-symmetric@5", "trisk-hall@5"]
    none = battery(V, replicates=0, trisk_alpha=(5.0,), tests=tests)
    assert np.isnan(none.p("trisk-exact@5")).all() and np.isnan(none.p("trisk-bootstrap-t-symmetric@5")).all()
    assert np.isfinite(none.p("trisk-hall@5")).all()
    one = battery(V, replicates=80, rng=2, trisk_alpha=(5.0,), tests=tests, threads=1)
    two = battery(V, replicates=80, rng=2, trisk_alpha=(5.0,), tests=tests, threads=2)
    np.testing.assert_array_equal(one.pvalue, two.pvalue)
    # a chunk of the pairs (their own stream keys) gives the same p-values as the whole
    part = battery(V[4:], replicates=80, rng=2, trisk_alpha=(5.0,), tests=tests, start=4)
    np.testing.assert_array_equal(part.pvalue, one.pvalue[4:])


def test_the_default_study_tests_do_not_include_the_opt_in_ones():
    assert not any(t.startswith("trisk-") for t in studies._group_tests((1.0, 5.0), studies.RiskNull("urisk", 5.0)))
    assert studies._group_tests((1.0, 5.0), studies.RiskNull("urisk", 5.0), tests=("trisk-exact@5", "trisk@1")) == {
        "trisk-exact@5"}
    assert studies._tests_iv(["trisk-johnson@5"], (5.0,), True) == ("trisk-johnson@5",)
    with pytest.raises(InputError, match="'trisk-johnson@2' is not a test of the battery"):
        studies._tests_iv(["trisk-johnson@2"], (5.0,), True)
    with pytest.raises(InputError, match="runs under its own null"):
        studies._tests_iv(["trisk-johnson@5"], (5.0,), False)


@pytest.mark.slow
def test_the_risk_inferences_flow_to_the_study_tables(tmp_path):
    """~20 s: a type I study of TRisk@5 and two corrected inferences under URisk_5's null."""
    m = fastrisk.data.datasets.trec_matrix("web2013_err20")
    small = ScoreMatrix(m.values[:14, :20], m.systems[:14], m.topics[:20], m.measure)
    tests = ("trisk@5", "trisk-edgeworth@5", "trisk-exact@5")
    r = fastrisk.simulate.type1(collections={"small": small}, measure="err20", topics=10, trials=40, replicates=50,
                                rng=5, tests=tests, trisk_alpha=(5.0,), cache=tmp_path, significance=(0.05, 0.1))
    assert r.tests == tests and set(r.hypotheses) == {"URisk_5 = 0"}
    assert (r.n[0] == 40).all() and np.isfinite(r.rate).all()
    (table,) = r.tables().values()
    assert list(table.columns) == ["alpha", "trisk5_1 [URisk_5 = 0]", "trisk-edgeworth5_1 [URisk_5 = 0]",
                                   "trisk-exact5_1 [URisk_5 = 0]", "trisk5_2 [URisk_5 = 0]",
                                   "trisk-edgeworth5_2 [URisk_5 = 0]", "trisk-exact5_2 [URisk_5 = 0]"]
    assert figures._style("trisk-exact@5", 2, "URisk_5 = 0")["label"] == "trisk-exact@5 [URisk_5 = 0]"
    fig = figures.plot_studies([r], tmp_path / "rates.svg")
    assert any(t.get_text().startswith("trisk-edgeworth@5") for t in fig.legends[0].get_texts())


def test_topic_planning_takes_the_opt_in_risk_inferences():
    """`simulate topics --test trisk-edgeworth@5` was refused although the help lists it: the
    planner's names and its resample check now see the opt-in tests."""
    from fastrisk.simulate import planning

    assert not planning.needs_resamples("trisk-edgeworth@5", (5.0,))
    assert planning.needs_resamples("trisk-exact@5", (5.0,))
    ok = planning._topics_iv("trisk-edgeworth@5", 0.05, 0.05, 0.8, "two-sided", 100, None, (5.0,), 2, 100)
    assert ok == 0
    with pytest.raises(InputError, match="`test` must be a test of the battery"):
        planning._topics_iv("trisk-nope@5", 0.05, 0.05, 0.8, "two-sided", 100, None, (5.0,), 2, 100)
