"""The built-in smooth value function's kernels load from numba's disk cache (issue #20: a
kernel given a function as an argument is compiled again in every process); a user's value
function gets its own, uncached twin of each value kernel, with the same numbers."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest
from numba.core.caching import FunctionCache, NullCache

import fastrisk
from fastrisk._kernels import risk as risk_k
from fastrisk._kernels import tables as tables_k
from fastrisk._kernels import zrisk as zrisk_k
from fastrisk._kernels._jit import with_value
from fastrisk.core.values import resolve_value

KERNELS = (risk_k.value_risk, risk_k.value_risk_serial, risk_k.value_scores, risk_k.value_scores_serial,
           zrisk_k.zrisk_value, zrisk_k.zrisk_value_serial, tables_k.value_pair_sums, tables_k.value_pair_sums_serial)


def _matrix():
    return fastrisk.ScoreMatrix.from_array(np.random.default_rng(3).random((5, 12)))


def _smooth_calls(m, value="smooth"):
    b = m.systems[0]
    return [fastrisk.risk(m, b, value=value).urisk, fastrisk.zrisk(m, value=value).zrisk,
            fastrisk.baseline_table(m, value=value).urisk, fastrisk.risk_scores(m, b, value=value).x]


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="no compiled kernels")
def test_every_smooth_specialisation_is_in_the_disk_cache_index():
    _smooth_calls(_matrix())
    used = [k for k in KERNELS if k.overloads]
    assert {risk_k.value_risk_serial, zrisk_k.zrisk_value_serial, tables_k.value_pair_sums_serial} <= set(used)
    for kernel in used:
        assert resolve_value("smooth").kernel(kernel) is kernel  # smooth: the module kernel itself
        saved = {key[0] for key in kernel._cache._cache_file._load_index()}
        assert set(kernel.overloads) <= saved, kernel.py_func.__name__


def test_a_user_function_gets_its_own_uncached_twin_with_the_same_numbers():
    m = _matrix()
    same = resolve_value(lambda x: ((1.38426 * x - 0.51659) * x + 0.11578) * x)  # the smooth cubic
    twin = same.kernel(risk_k.value_risk_serial)
    assert twin is not risk_k.value_risk_serial and twin is same.kernel(risk_k.value_risk_serial)  # remembered
    if os.environ.get("NUMBA_DISABLE_JIT") != "1":
        assert isinstance(twin._cache, NullCache)
    for a, b in zip(_smooth_calls(m), _smooth_calls(m, same.func)):
        np.testing.assert_array_equal(a, b)
    doubled = fastrisk.risk(m, m.systems[0], value=lambda x: 2.0 * x).urisk  # another twin, other numbers
    np.testing.assert_allclose(doubled, 2 * fastrisk.risk(m, m.systems[0], value=lambda x: x).urisk, rtol=1e-15)


def test_a_function_defined_by_exec_without_a_module_works():
    """A lambda from ``exec(code, {})`` (a notebook cell runner, the README test) has
    ``__module__`` None: it is a user's function like any other."""
    m = _matrix()
    f = eval("lambda d: d if d > 0 else 3 * d", {})  # noqa: S307 - the point of the test
    assert f.__module__ is None
    got = fastrisk.risk(m, m.systems[0], value=f).urisk
    want = fastrisk.risk(m, m.systems[0], value=lambda d: d if d > 0 else 3 * d).urisk
    np.testing.assert_array_equal(got, want)


def test_another_builtin_value_function_gets_a_cached_twin_named_after_it():
    def cubic(x):
        return x * x * x

    cubic.__module__ = "fastrisk._kernels.risk"  # as if shipped beside smooth_value
    twin = with_value(risk_k.value_risk_serial, numba.njit(cubic))
    assert getattr(twin, "py_func", twin).__name__ == "value_risk_serial_cubic"
    if os.environ.get("NUMBA_DISABLE_JIT") != "1":
        assert isinstance(twin._cache, FunctionCache) and not twin.targetoptions.get("parallel")


_PROBE = textwrap.dedent("""
    import numpy as np
    from numba.core import event

    compiled = set()

    class Listener(event.Listener):
        def on_start(self, ev):
            func = getattr((ev.data or {}).get("dispatcher"), "py_func", None)
            compiled.add(getattr(func, "__module__", "") + "." + getattr(func, "__qualname__", ""))

        def on_end(self, ev):
            pass

    event.register("numba:compile", Listener())
    import fastrisk

    m = fastrisk.ScoreMatrix.from_array(np.random.default_rng(3).random((5, 12)))
    fastrisk.risk(m, m.systems[0], value="smooth")
    fastrisk.risk(m, m.systems[0], value="smooth", threads=2)
    fastrisk.zrisk(m, value="smooth")
    fastrisk.baseline_table(m, value="smooth")
    fastrisk.risk_scores(m, m.systems[0], value="smooth")
    print(sorted(n for n in compiled if n.startswith("fastrisk.")))
""")


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="no compiled kernels")
def test_a_second_process_compiles_no_kernel_for_the_smooth_value(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "FASTRISK_QUIET": "1"}

    def run():
        out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True)
        return out.stdout.strip().splitlines()[-1]

    first = run()
    assert "fastrisk._kernels.risk.value_risk_serial" in first  # the empty cache was filled
    assert run() == "[]"
