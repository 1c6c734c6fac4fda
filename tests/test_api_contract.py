"""The API contract, checked on every public name, so a new function cannot skip it: numpydoc
``Parameters``/``Returns`` for every public callable of every public sub-package (and
``Attributes`` for every result class), options keyword-only, results are
:class:`~fastrisk.data.results.Result` objects (long form, notebook view) whose arrays declare
their axes in the one order."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
import warnings

import numpy as np
import pytest

import fastrisk
from fastrisk.core import batch
from fastrisk.data.results import Result
from fastrisk.errors import InputError

PUBLIC = [(fastrisk, n) for n in fastrisk.__all__] + [(batch, n) for n in batch.__all__]
FUNCTIONS = [(m, n) for m, n in PUBLIC if inspect.isfunction(getattr(m, n))]

#: Every public sub-package (documented import path): its ``__all__``, or for a module without
#: one the public names it defines itself.
SUBPACKAGES = ("fastrisk", "fastrisk.core.batch", "fastrisk.simulate", "fastrisk.viz.plot", "fastrisk.viz.report",
               "fastrisk.viz.figures", "fastrisk.ltr", "fastrisk.sweep", "fastrisk.data.datasets", "fastrisk.data.runs",
               "fastrisk.inference.resampling", "fastrisk.inference.multiple", "fastrisk.measures.agreement",
               "fastrisk.measures.metrics", "fastrisk.measures.pooling", "fastrisk.core.pca", "fastrisk.core.tables")


def _public_names(module) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items() if not n.startswith("_")
                 and (inspect.isfunction(v) or inspect.isclass(v)) and v.__module__ == module.__name__]
    return sorted(names)


ALL_PUBLIC = sorted({(name, n) for name in SUBPACKAGES for n in _public_names(importlib.import_module(name))})
ALL_FUNCTIONS = [(m, n) for m, n in ALL_PUBLIC if inspect.isfunction(getattr(importlib.import_module(m), n))]
RESULTS = sorted({getattr(importlib.import_module(m), n) for m, n in ALL_PUBLIC
                  if inspect.isclass(getattr(importlib.import_module(m), n))
                  and issubclass(getattr(importlib.import_module(m), n), Result)}, key=lambda c: c.__name__)


def _subclasses(cls) -> set:
    return set(cls.__subclasses__()).union(*(_subclasses(c) for c in cls.__subclasses__()))


#: Every result class of fastrisk that the public modules load (the public ones and those a
#: public result holds, e.g. ``RankAgreement``, ``LooAdjustment``), so a new one is covered.
ALL_RESULTS = sorted({c for c in _subclasses(Result) | set(RESULTS)
                      if c.__module__.startswith("fastrisk.") and not c.__name__.startswith("_")},
                     key=lambda c: (c.__module__, c.__name__))

#: Positional parameters with a default that are data, not options (name -> why).
POSITIONAL_DATA = {
    "baseline": "what the scores are compared with, as in risk(matrix, baseline)",
    "measure": "what is scored (the pooling functions)",
    "measures": "what is scored (evaluate)",
    "qrels": "the judgments, as in evaluate(runs, qrels) (compare)",
    "items": "the labels of the scores (ranking_from_scores)",
    "n_components": "pca(matrix, k), as scikit-learn's PCA(n_components)",
    "depth": "build_pool(runs, depth): the pool itself",
    "method": "adjust_pvalues(p, 'holm'), as statsmodels' multipletests(p, alpha, method)",
    "value": "resolve_value(value): what is resolved",
}
#: Public functions that return data or helpers, not results (name -> what).
NOT_RESULTS = {"trisk_test": "a test callable for pt.Experiment", "read_matrix": "ScoreMatrix", "read_table": "an Arrow table", "read_runs": "RunSet",
               "read_qrels": "Qrels", "write_matrix": "nothing", "parse_measure": "Measure",
               "parse_ranking": "a ranking", "format_ranking": "text", "ranking_from_scores": "a ranking",
               "resolve_baseline": "(matrix, Baseline)", "virtual_baseline": "Baseline",
               "resolve_value": "ValueFunction", "register_kind": "JobKind", "build_pool": "Pool",
               "stack": "Stack", "is_stack": "bool", "t_pvalue": "an array",
               "score_against_pool": "ScoreMatrix (what every risk function takes)",
               "adjust_pvalues": "AdjustedPValues (an ndarray with to_arrow/to_pandas/_repr_html_)"}
#: The one axis order: parameters, then systems and baselines, then topics, resampled last.
AXIS_ORDER = ("batch", "alpha", "system", "baseline", "topic", "replicate")


@pytest.mark.parametrize("module, name", ALL_FUNCTIONS, ids=[f"{m}.{n}" for m, n in ALL_FUNCTIONS])
def test_numpydoc_sections(module, name):
    fn = getattr(importlib.import_module(module), name)
    doc = inspect.getdoc(fn) or ""
    params = [p.name for p in inspect.signature(fn).parameters.values()
              if p.name not in ("self", "kwargs") and p.kind is not p.VAR_KEYWORD]
    if params:
        assert re.search(r"^Parameters\n-{5,}$", doc, re.M), f"{name}: no numpydoc Parameters section"
        documented = set()
        section = doc.split("Parameters\n", 1)[1].split("\n\n", 1)[0]
        for line in re.findall(r"^(\S[^:\n]*?)(?: :.*)?$", section, re.M):
            documented |= {p.strip().lstrip("*") for p in line.split(",")}
        assert set(params) <= documented, f"{name}: undocumented {sorted(set(params) - documented)}"
    if inspect.signature(fn).return_annotation not in (None, "None"):
        assert re.search(r"^(Returns|Yields)\n-{5,}$", doc, re.M), f"{name}: no numpydoc Returns section"


@pytest.mark.parametrize("cls", RESULTS, ids=[c.__name__ for c in RESULTS])
def test_result_classes_document_their_attributes(cls):
    """Every public field and derived array is in the class's Attributes section (generated
    from the declarations by `fastrisk.data.results`), each with what it holds."""
    doc = inspect.getdoc(cls) or ""
    assert re.search(r"^Attributes\n-{5,}$", doc, re.M), f"{cls.__name__}: no numpydoc Attributes section"
    section = doc.split("Attributes\n", 1)[1]
    listed = set(re.findall(r"^(\w+) :", section, re.M))
    wanted = {f.name for f in dataclasses.fields(cls) if not f.name.startswith("_")}
    wanted |= {n for n in cls._derived if not n.startswith("_")}
    assert wanted <= listed, f"{cls.__name__}: Attributes misses {sorted(wanted - listed)}"


def _attribute_texts(cls) -> dict[str, str]:
    """Each entry of the generated ``Attributes`` section -> its text (empty if it has none)."""
    section = (inspect.getdoc(cls) or "").split("Attributes\n----------\n", 1)[-1]
    entries = re.findall(r"^(\w+) :[^\n]*\n((?:[ \t]+\S[^\n]*\n?)*)", section, re.M)
    return {name: " ".join(text.split()) for name, text in entries}


@pytest.mark.parametrize("cls", ALL_RESULTS, ids=[c.__name__ for c in ALL_RESULTS])
def test_every_result_field_says_what_it_holds(cls):
    """Every field and derived array of every result class has a description: its
    ``array(doc=...)`` / ``param(doc=...)`` text, its property's docstring or its `GLOSSARY` entry."""
    texts = _attribute_texts(cls)
    wanted = {f.name for f in dataclasses.fields(cls) if not f.name.startswith("_")}
    wanted |= {n for n in cls._derived if not n.startswith("_")}
    empty = sorted(n for n in wanted if not texts.get(n))
    assert not empty, f"{cls.__module__}.{cls.__name__}: no description of {empty} (give array(doc=...) or param(doc=...))"


def test_the_description_check_finds_an_empty_field():
    from dataclasses import dataclass

    from fastrisk.data.results import array, param

    @dataclass(frozen=True, repr=False)
    class Probe(Result):
        """A probe."""

        said: np.ndarray = array("system", doc="Said.")
        unsaid: np.ndarray = array("system")
        scalar: int = param(3, doc="A scalar.")

    texts = _attribute_texts(Probe)
    assert texts == {"said": "Said.", "unsaid": "", "scalar": "A scalar."}


def test_every_result_name_has_one_meaning():
    """``statistic`` is a test statistic (a result with it has a ``pvalue``, except the
    jackknife's estimate); ZRisk results do not call ZRisk a statistic."""
    for cls in RESULTS:
        names = {f.name for f in dataclasses.fields(cls)} | set(cls._derived)
        if "statistic" in names or isinstance(getattr(cls, "statistic", None), property):
            if cls.__name__ in ("JackknifeResult",) or "zrisk" in names:
                continue
            assert "pvalue" in names, f"{cls.__name__}: a statistic without a p-value"
    for res in (fastrisk.zrisk(np.random.default_rng(0).random((2, 2, 4))), fastrisk.zrisk(fastrisk.ScoreMatrix(np.array([[1.0, 2, 3], [2.0, 1, 3]]), ("a", "b"), ("1", "2", "3")))):
        with pytest.warns(DeprecationWarning, match="use `.zrisk`"):
            assert res.statistic is res.zrisk
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the headline array is ZRisk, read without the alias
        assert res.to_markdown() == res.to_markdown(value="zrisk")


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
    # postponed annotations: resolve each class of a union (a single result or a stack's batch
    # result) by name where fn lives
    kinds = [getattr(inspect.getmodule(fn), k.strip(" '\""), None) for k in ret.split("|")] \
        if isinstance(ret, str) else [ret]
    for kind in kinds:
        assert inspect.isclass(kind) and issubclass(kind, Result), f"{name} returns {ret}, not a Result"


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


def test_a_stack_takes_the_options_of_one_matrix_and_returns_its_class():
    """A batch is a dimension: no option is refused on a stack only (tests/test_batch_dispatch.py
    checks each option's numbers)."""
    X = np.random.default_rng(2).random((2, 3, 8))
    for fn, options in ((fastrisk.bootstrap, {"method": "percentile", "confidence_level": 0.9, "keep_replicates": True,
                                              "chunk_size": 100, "progress": False}),
                        (fastrisk.permutation_test, {"keep_replicates": True, "chunk_size": 100, "progress": False})):
        for name, given in options.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", fastrisk.AlphaInvariantWarning)
                got = fn(X, 0, replicates=50, rng=1, **{name: given})
                one = fn(X[0], 0, replicates=50, rng=1, **{name: given})
            assert type(got) is type(one) and got.batched and got.sizes()["batch"] == 2, name
    for fn in (fastrisk.bootstrap, fastrisk.permutation_test):
        with pytest.raises(InputError, match="`chunk_size`"):
            fn(X, 0, replicates=50, chunk_size=0)
