"""Fault suite, runtime: a corrupt numba cache, the workqueue threading layer, worker processes
outliving their parent, Ctrl-C in a long kernel, user statistics that index out of range."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _python(code: str, cwd, env=None, timeout=240):
    full = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(cwd)]), **(env or {})}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=full, capture_output=True, check=False,
                          text=True, timeout=timeout)


KERNEL = '''
import numpy as np
from fastrisk._kernels._jit import njit, pjit, prange

@njit
def plus_one(x):
    return x + 1.0

@pjit
def total(x):
    s = 0.0
    for i in prange(x.shape[0]):
        s += x[i]
    return s
'''


@pytest.mark.parametrize("damage", ["index-garbage", "index-truncated", "data-garbage", "data-truncated"])
def test_a_corrupt_numba_cache_is_rebuilt(tmp_path, damage):
    (tmp_path / "cachedkernel.py").write_text(KERNEL)
    run = "import numpy as np, cachedkernel as k; print(k.plus_one(1.0), k.total(np.arange(4.0)))"
    first = _python(run, tmp_path)
    assert first.returncode == 0 and first.stdout.split() == ["2.0", "6.0"], first.stderr
    files = sorted((tmp_path / "__pycache__").glob("cachedkernel.*.nb" + ("i" if "index" in damage else "c")))
    assert len(files) == 2
    for f in files:
        data = f.read_bytes()
        f.write_bytes(data[: len(data) // 3] if "truncated" in damage else data[:10] + os.urandom(len(data) - 10))
    second = _python(run, tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["2.0", "6.0"] and "Traceback" not in second.stderr
    third = _python(run, tmp_path)  # the rebuilt cache is sound: no warning any more
    assert third.returncode == 0 and third.stdout.split() == ["2.0", "6.0"] and "rebuilt" not in third.stderr


def test_parallel_kernels_from_many_threads_under_the_workqueue_layer(tmp_path):
    code = '''
    import threading, numpy as np
    from fastrisk.multiple import tukey_hsd
    from fastrisk._kernels._jit import threading_layer
    V = np.random.default_rng(0).random((12, 30))
    ref = tukey_hsd(V, replicates=500, rng=1).pvalue
    bad = []
    def go():
        for _ in range(10):
            if not (tukey_hsd(V, replicates=500, rng=1).pvalue == ref).all():
                bad.append(1)
    ts = [threading.Thread(target=go) for _ in range(4)]
    [t.start() for t in ts]; [t.join() for t in ts]
    print(threading_layer(), len(bad))
    '''
    res = _python(code, tmp_path, env={"NUMBA_THREADING_LAYER": "workqueue"})
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split() == ["workqueue", "0"]
