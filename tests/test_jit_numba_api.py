"""numba's private cache API that `fastrisk._kernels._jit`'s cache guards use: present on the
installed numba, pinned in pyproject.toml, and a loud warning (not a silent guard off) when
missing."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numba
import pytest
from numba.core.caching import FunctionCache

from fastrisk._kernels import _jit

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fresh_warning(monkeypatch):
    monkeypatch.setattr(_jit, "_warned_api", False)


def _kernel():
    def add_one(x):
        return x + 1.0
    return _jit.njit(add_one)


def test_the_installed_numba_has_every_private_name_the_cache_guards_use():
    dispatcher = _kernel()
    assert _jit.numba_api_missing(dispatcher) == []
    assert isinstance(dispatcher._cache, _jit._RebuildingCache)
    stamp = dispatcher._cache._cache_file._source_stamp
    assert isinstance(stamp, tuple) and stamp[1] == _jit.kernel_files_stamp(str(Path(__file__).parent))
    # the names are numba's own, not ones the guard created
    assert {"_cache_file", "_name"} <= set(vars(FunctionCache(dispatcher.py_func)))
    for name in _jit.NUMBA_CACHE_API["FunctionCache"]:
        assert hasattr(FunctionCache(dispatcher.py_func), name), name


def test_numba_is_pinned_below_the_next_minor_of_the_tested_version():
    """The upper bound in pyproject.toml is the next minor release after the installed numba."""
    text = (ROOT / "pyproject.toml").read_text()
    bound = re.search(r'"numba>=[\d.]+,<(\d+)\.(\d+)"', text)
    assert bound, "numba has no upper bound in pyproject.toml"
    major, minor = (int(p) for p in numba.__version__.split(".")[:2])
    assert (int(bound[1]), int(bound[2])) == (major, minor + 1)


def test_a_missing_source_stamp_warns_instead_of_turning_the_guard_off(monkeypatch, fresh_warning):
    class Renamed:
        def __init__(self, *args, **kwargs):
            self._stamp_renamed = 1

    monkeypatch.setattr("numba.core.caching.IndexDataCacheFile", Renamed)
    with pytest.warns(RuntimeWarning, match=r"lacks the private cache API .*FunctionCache\._cache_file\._source_stamp"
                                            r".*no longer recompiled when a helper it inlines changes"):
        _jit._RebuildingCache(_kernel().py_func)
    assert _jit.numba_api_missing(object()) == [
        "dispatcher._cache", *(f"FunctionCache.{n}" for n in _jit.NUMBA_CACHE_API["FunctionCache"]),
        "FunctionCache._cache_file._source_stamp"]


def test_a_renamed_dispatcher_cache_warns(monkeypatch, fresh_warning):
    class Dispatcher:
        py_func = staticmethod(lambda x: x)

    with pytest.warns(RuntimeWarning, match=r"lacks the private cache API .*\(dispatcher\._cache\)"):
        _jit._safe_cache(Dispatcher())


def test_the_warning_is_given_once_a_process(monkeypatch, fresh_warning):
    with pytest.warns(RuntimeWarning):
        _jit._warn_numba_api(["x"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _jit._warn_numba_api(["x"])
