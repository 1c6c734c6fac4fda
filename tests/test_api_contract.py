"""The API contract, checked on every public name, so a new function cannot skip it: numpydoc
``Parameters``/``Returns``, options keyword-only, results are :class:`~fastrisk.data.results.Result`
objects (long form, notebook view) whose arrays declare their axes in the one order."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import fastrisk
from fastrisk.core import batch
from fastrisk.data.results import Result
from fastrisk.errors import InputError

PUBLIC = [(fastrisk, n) for n in fastrisk.__all__] + [(batch, n) for n in batch.__all__]
FUNCTIONS = [(m, n) for m, n in PUBLIC if inspect.isfunction(getattr(m, n))]
RESULTS = sorted({getattr(m, n) for m, n in PUBLIC if inspect.isclass(getattr(m, n))
                  and issubclass(getattr(m, n), Result)}, key=lambda c: c.__name__)

#: Positional parameters with a default that are data, not options (name -> why).
POSITIONAL_DATA = {
    "baseline": "what the scores are compared with, as in risk(matrix, baseline)",
    "measure": "what is scored (the pooling functions)",
    "measures": "what is scored (evaluate)",
    "items": "the labels of the scores (ranking_from_scores)",
    "n_components": "pca(matrix, k), as scikit-learn's PCA(n_components)",
    "depth": "build_pool(runs, depth): the pool itself",
    "method": "adjust_pvalues(p, 'holm'), as statsmodels' multipletests(p, alpha, method)",
    "value": "resolve_value(value): what is resolved",
}
#: Public functions that return data or helpers, not results (name -> what).
NOT_RESULTS = {"read_matrix": "ScoreMatrix", "read_table": "an Arrow table", "read_runs": "RunSet",
               "read_qrels": "Qrels", "write_matrix": "nothing", "parse_measure": "Measure",
               "parse_ranking": "a ranking", "format_ranking": "text", "ranking_from_scores": "a ranking",
               "resolve_baseline": "(matrix, Baseline)", "virtual_baseline": "Baseline",
               "resolve_value": "ValueFunction", "register_kind": "JobKind", "build_pool": "Pool",
               "stack": "Stack", "is_stack": "bool", "t_pvalue": "an array",
               "score_against_pool": "ScoreMatrix (what every risk function takes)",
               "adjust_pvalues": "AdjustedPValues (an ndarray with to_arrow/to_pandas/_repr_html_)"}
#: The one axis order: parameters, then systems and baselines, then topics, resampled last.
AXIS_ORDER = ("batch", "alpha", "system", "baseline", "topic", "replicate")


@pytest.mark.parametrize("module, name", FUNCTIONS, ids=[f"{m.__name__}.{n}" for m, n in FUNCTIONS])
def test_numpydoc_sections(module, name):
    fn = getattr(module, name)
    doc = inspect.getdoc(fn) or ""
    assert re.search(r"^Parameters\n-{5,}$", doc, re.M), f"{name}: no numpydoc Parameters section"
    documented = set()
    for line in re.findall(r"^(\S[^:\n]*?)(?: :.*)?$", doc.split("Parameters\n", 1)[1].split("\n\n", 1)[0], re.M):
        documented |= {p.strip() for p in line.split(",")}
    params = [p for p in inspect.signature(fn).parameters if p not in ("self", "kwargs")]
    assert set(params) <= documented, f"{name}: undocumented {sorted(set(params) - documented)}"
    if inspect.signature(fn).return_annotation not in (None, "None"):
        assert re.search(r"^Returns\n-{5,}$", doc, re.M), f"{name}: no numpydoc Returns section"


@pytest.mark.parametrize("module, name", FUNCTIONS, ids=[f"{m.__name__}.{n}" for m, n in FUNCTIONS])
def test_options_are_keyword_only(module, name):
    sig = inspect.signature(getattr(module, name))
    loose = [p.name for p in sig.parameters.values()
             if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is not p.empty and p.name not in POSITIONAL_DATA]
    assert not loose, f"{name}: options {loose} can be passed by position; make them keyword-only"


@pytest.mark.parametrize("module, name", FUNCTIONS, ids=[f"{m.__name__}.{n}" for m, n in FUNCTIONS])
def test_functions_return_results(module, name):
    if name in NOT_RESULTS:
        return
    fn = getattr(module, name)
    ret = inspect.signature(fn).return_annotation
    if isinstance(ret, str):  # postponed annotations: resolve the class by name where fn lives
        ret = getattr(inspect.getmodule(fn), ret.strip("'\""), None)
    assert inspect.isclass(ret) and issubclass(ret, Result), f"{name} returns {ret}, not a Result"


@pytest.mark.parametrize("cls", RESULTS, ids=[c.__name__ for c in RESULTS])
def test_result_axes_follow_the_one_order(cls):
    for array, dims in cls.array_dims().items():
        assert all(isinstance(d, str) and d for d in dims), (cls.__name__, array, dims)
        known = [AXIS_ORDER.index(d) for d in dims if d in AXIS_ORDER]
        assert known == sorted(known), f"{cls.__name__}.{array} has axes {dims}; the order is {AXIS_ORDER}"
    for method in ("to_arrow", "to_pandas", "_repr_html_"):
        assert callable(getattr(cls, method))


def test_long_form_of_an_unknown_dimension_is_an_input_error():
    res = fastrisk.kendall_tau([1.0, 2, 3], [1.0, 3, 2])
    with pytest.raises(InputError, match="no dimension 'alpha'"):
        res.to_arrow(("alpha",))


def test_a_stack_is_capped_like_a_matrix():
    X = np.random.default_rng(1).random((2, 3, 8))
    for fn in (fastrisk.bootstrap, fastrisk.permutation_test):
        with pytest.raises(InputError, match="at most 1,000,000,000"):
            fn(X, replicates=10**9 + 1)
        with pytest.raises(InputError, match="at most 1,000,000,000"):
            fn(X[0], 0, replicates=10**9 + 1)
