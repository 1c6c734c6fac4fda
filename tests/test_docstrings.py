"""The public API's docstrings hold what CONTRIBUTING.md asks, checked on every name of
``fastrisk._PUBLIC`` (so a function another change adds is held to it at once): a numpydoc
``References`` section (the paper) and an ``Examples`` section on the bundled data, whose
examples run and print what the docstring says (doctest). Classes other than results are held
to it on their constructor (the class docstring) and their readers (``from_*``, ``load``);
results are documented by their generated ``Attributes`` (tests/test_api_contract.py).

Also: the static imports of ``fastrisk/__init__.py`` (what type checkers read) are exactly
``_PUBLIC`` and ``_MODULES``, the one list ``__all__`` and the lazy loading are built from.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import importlib.util
import inspect
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import fastrisk
from fastrisk.data.results import Result

ROOT = Path(__file__).resolve().parent.parent

#: Public names not held to the References/Examples rule, each with the reason. Keep it empty:
#: a name here is a gap, listed so that it is not silent.
EXEMPT: dict[str, str] = {}


def _public_objects() -> list[tuple[str, object]]:
    """(dotted name, object) of every public function, non-result class and class reader."""
    out = []
    for module, names in fastrisk._PUBLIC.items():
        if module == "fastrisk.errors":  # exception classes: no method to cite or run
            continue
        loaded = importlib.import_module(module)
        for name in names:
            obj = getattr(loaded, name)
            if inspect.isclass(obj):
                if issubclass(obj, Result):
                    continue
                out.append((name, obj))
                out += [(f"{name}.{k}", getattr(obj, k)) for k, v in vars(obj).items()
                        if isinstance(v, classmethod) and (k.startswith("from_") or k in ("load", "read"))]
            elif callable(obj):
                out.append((name, obj))
    return out


PUBLIC = _public_objects()
IDS = [n for n, _ in PUBLIC]


def _section(doc: str, title: str) -> str | None:
    m = re.search(rf"^{title}\n-{{{len(title)}}}\n(.*?)(?=^\S[^\n]*\n-{{3,}}\n|\Z)", doc, re.M | re.S)
    return m.group(1) if m else None


def test_the_public_objects_are_found():
    names = set(IDS)
    assert {"risk", "bootstrap", "read_runs", "ScoreMatrix", "ScoreMatrix.from_array", "Qrels.load"} <= names
    assert "RiskResult" not in names and "InputError" not in names


@pytest.mark.parametrize("name, obj", PUBLIC, ids=IDS)
def test_every_public_function_cites_its_source_and_shows_an_example(name, obj):
    if name in EXEMPT:
        pytest.skip(f"exempt: {EXEMPT[name]}")
    doc = inspect.getdoc(obj) or ""
    refs = _section(doc, "References")
    assert refs and refs.strip(), f"{name}: no numpydoc References section (the paper, with venue and year)"
    assert re.search(r"(19|20)\d\d", refs), f"{name}: its References give no year"
    examples = _section(doc, "Examples")
    assert examples and ">>>" in examples, f"{name}: no numpydoc Examples section with a runnable example"


@pytest.mark.parametrize("name, obj", PUBLIC, ids=IDS)
def test_every_public_example_prints_what_it_says(name, obj):
    doc = obj.__doc__ or ""
    if ">>>" not in doc:
        pytest.skip("no example (test_every_public_function_cites_its_source_and_shows_an_example fails)")
    test = doctest.DocTestParser().get_doctest(inspect.cleandoc(doc), {"fastrisk": fastrisk, "np": np}, name,
                                               inspect.getsourcefile(inspect.unwrap(obj)), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    failures: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runner.run(test, out=failures.append, clear_globs=True)
    assert runner.failures == 0, "".join(failures)[-4000:]


# ---------------------------------------------------------------------- the one list of names
def _static_imports() -> dict[str, set[str]]:
    """Module -> the names ``fastrisk/__init__.py`` imports from it at module level or under
    ``if TYPE_CHECKING`` (type checkers and the docs read these)."""
    tree = ast.parse((ROOT / "fastrisk" / "__init__.py").read_text(encoding="utf-8"))
    nodes = list(tree.body)
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            nodes += node.body
    found: dict[str, set[str]] = {}
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("fastrisk"):
            for alias in node.names:
                assert alias.asname in (None, alias.name), f"{alias.name} imported as {alias.asname}"
                found.setdefault(node.module, set()).add(alias.name)
    return found


def test_the_static_imports_are_the_public_table():
    """``_PUBLIC`` (and ``_MODULES``) is the one list: ``__all__`` and the lazy loading are built
    from it; the static imports are written out for type checkers, and must say the same. A name
    added to ``_PUBLIC`` needs its ``from <module> import <name> as <name>  # static only`` line."""
    static = _static_imports()
    static.pop("fastrisk._version", None)
    static.pop("fastrisk", None)  # `from fastrisk import _moved`
    wanted = {m: set(n) for m, n in fastrisk._PUBLIC.items()}
    for name, module in fastrisk._MODULES.items():
        parent, _, leaf = module.rpartition(".")
        assert leaf == name, (name, module)
        wanted.setdefault(parent, set()).add(name)
    lines = [f"from {m} import {n} as {n}" for m in sorted(wanted) for n in sorted(wanted[m] - static.get(m, set()))]
    extra = [f"{m}.{n}" for m in sorted(static) for n in sorted(static[m] - wanted.get(m, set()))]
    assert not lines, "static imports missing from fastrisk/__init__.py:\n" + "\n".join(lines)
    assert not extra, f"static imports not in _PUBLIC: {extra}"


def test_all_is_the_public_table():
    listed = [n for names in fastrisk._PUBLIC.values() for n in names] + list(fastrisk._MODULES)
    assert sorted(listed) == fastrisk.__all__ and len(set(listed)) == len(listed)
    for name in fastrisk.__all__:
        assert getattr(fastrisk, name) is not None


@pytest.mark.slow
def test_the_api_pages_show_what_each_result_field_holds():
    """mkdocstrings reads the source statically; the griffe extension of the docs build
    (docs/_hooks/result_fields.py) gives each field of a result class its generated text."""
    griffe = pytest.importorskip("griffe")
    spec = importlib.util.spec_from_file_location("result_fields", ROOT / "docs" / "_hooks" / "result_fields.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    pkg = griffe.load("fastrisk", search_paths=[str(ROOT)], extensions=griffe.Extensions(hook.ResultFields()))
    fields = pkg["core.urisk.RiskResult"].members
    assert fields["ugain"].docstring.value.startswith("UGain: ``freward - frisk``")
    assert fields["ugain"].docstring.value.endswith("``[system]``")
    assert "FReward" in fields["freward"].docstring.value  # a GLOSSARY text
    assert "Algorithm 2" in pkg["measures.pooling.PoolingExperiment"].members["adjusted_abs"].docstring.value
