"""One record per measure family: names (ir_measures' and trec_eval's), kernel code, definition."""

from __future__ import annotations

import re
import string

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastrisk import evaluate, parse_measure
from fastrisk._kernels import metrics as _km
from fastrisk.errors import InputError
from fastrisk.measures.names import MEASURES, measure_table
from fastrisk.viz.report import measure_definition

TREC_NAMES = ["map", "P_10", "P.10", "P_7", "ndcg_cut_20", "ndcg_cut.20", "recip_rank", "Rprec", "recall_100",
              "recall.5", "map_cut_10", "ndcg", "bpref", "infAP", "success_10", "success.5", "set_P", "set_relative_P",
              "set_recall", "set_F", "set_F_0.5", "set_map", "iprec_at_recall_0.50", "iprec_at_recall.1", "num_ret",
              "num_rel_ret", "num_rel", "num_q"]


@pytest.mark.parametrize("name", TREC_NAMES)
def test_trec_eval_names_read_as_ir_measures_reads_them(name):
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("pytrec_eval")  # ir_measures' trec_eval parser consults it
    (want,) = ir_measures.parse_trec_measure(name)
    assert parse_measure(name).name == str(want)


@pytest.mark.parametrize("name", ["P_", "P_x", "map_cut", "ndcg_cut_0", "gm_bpref", "P_10,20", "recip_rank_5", "MAP_10",
                                  "success", "iprec_at_recall", "set_F_x", "success_0"])
def test_other_trec_like_names_are_refused(name):
    with pytest.raises(InputError):
        parse_measure(name)


@pytest.mark.parametrize("family", sorted(MEASURES))
def test_every_record_parses_names_a_kernel_and_defines_itself(family):
    spec = MEASURES[family]
    name = family if spec.cutoff == "none" else f"{family}@0.5" if spec.cutoff == "recall" else f"{family}@10"
    m = parse_measure(name)
    assert m.family == family and m.spec is spec and parse_measure(m.name) == m
    assert m.code in range(_km.NUM_Q + 1)
    assert measure_definition(name) == m.definition() and len(m.definition()) > 20
    for spelling in spec.spellings:
        assert parse_measure(name.replace(family, spelling.upper(), 1)).family == family
    if spec.cutoff == "required":
        with pytest.raises(InputError, match="needs a cutoff"):
            parse_measure(family)
    if spec.cutoff == "none":
        with pytest.raises(InputError, match="takes no cutoff"):
            parse_measure(f"{family}@10")


def test_the_documentation_table_has_one_row_per_record():
    rows = measure_table().splitlines()[2:]
    assert len(rows) == len(MEASURES)
    for row, spec in zip(rows, MEASURES.values()):
        assert f"`{spec.family}" in row.split("|")[1]


def test_evaluate_takes_trec_eval_names(bench_data):
    web = bench_data / "trec2012-web"
    run = web / "runs" / "indri-rm-cata-filtered.run.gz"
    trec = evaluate(run, web / "qrels.adhoc.txt", ["P_10", "map", "ndcg_cut_20"])
    ir = evaluate(run, web / "qrels.adhoc.txt", ["P@10", "AP", "nDCG@20"])
    assert trec.measures == ir.measures == ("P@10", "AP", "nDCG@20")
    np.testing.assert_array_equal(trec.values, ir.values)
    np.testing.assert_array_equal(trec["P_10"].values, ir["P@10"].values)


def _suggestion(name):
    with pytest.raises(InputError) as err:
        parse_measure(name)
    found = re.search(r"did you mean '([^']*)'", str(err.value))
    return found.group(1) if found else None


@pytest.mark.parametrize("name, suggestion", [
    ("alpha_nDCG@20", None), ("Bpraf", "Bpref"), ("Succes@10", "Success@10"), ("nDGC@20", "nDCG@20"),
    ("IPrek@0.5", "IPrec@0.5"), ("SetFF(beta=2)", "SetF(beta=2)"), ("Succes", "Success@10"),
    ("Rprek@10", "Rprec"), ("AP_nDCG@20", "nDCG@20"),
])
def test_did_you_mean_names_a_real_measure(name, suggestion):
    got = _suggestion(name)
    assert got == suggestion
    if got is not None:
        parse_measure(got)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=string.ascii_letters + "_@().,=0123456789'", min_size=1, max_size=20))
def test_every_suggestion_parses(name):
    try:
        parse_measure(name)
    except InputError as err:
        found = re.search(r"did you mean '([^']*)'", str(err))
        if found:
            parse_measure(found.group(1))  # a suggestion is always a measure
