"""Fault suite, runtime: a corrupt numba cache, the workqueue threading layer, worker processes
outliving their parent, Ctrl-C in a long kernel, user statistics that index out of range."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from interrupting import interrupt

ROOT = Path(__file__).resolve().parent.parent


def _python(code: str, cwd, env=None, timeout=240):
    full = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}  # the cache beside the module
    full = {**full, "PYTHONPATH": os.pathsep.join([str(ROOT), str(cwd)]), **(env or {})}
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


@pytest.mark.parametrize("damage", ["index-garbage", *(pytest.param(d, marks=pytest.mark.slow) for d in
                                                      ("index-truncated", "data-garbage", "data-truncated"))])
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
    from fastrisk.inference.multiple import tukey_hsd
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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_pool_workers_die_with_their_parent(tmp_path):
    import signal
    import time

    code = '''
    import os, sys, time
    from fastrisk.sweep import process_pool
    pool = process_pool(2)
    pids = set()
    while len(pids) < 2:
        pids |= {f.result() for f in [pool.submit(os.getpid) for _ in range(8)]}
    print(*sorted(pids), flush=True)
    time.sleep(600)
    '''
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    workers = [int(p) for p in proc.stdout.readline().split()]
    assert len(workers) == 2 and all(_alive(p) for p in workers)
    proc.send_signal(signal.SIGKILL)  # kill -9 of the sweep
    proc.wait(timeout=60)
    deadline = time.monotonic() + 30  # a liveness bound, not a speed claim: the watch polls every 0.5 s
    while any(_alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in workers)


@pytest.mark.slow
def test_tukey_hsd_is_interruptible_from_the_cli(tmp_path):

    matrix = ROOT / "bench_data" / "trec-matrices" / "web2012_err20.csv"
    warm = _python(f"from fastrisk.cli import main; main(['test', {str(matrix)!r}, '--method', 'tukey', "
                   "'--replicates', '10', '--format', 'csv'])", tmp_path)
    assert warm.returncode == 0, warm.stderr
    status, waited, err = interrupt([sys.executable, "-m", "fastrisk", "test", str(matrix), "--method", "tukey",
                                     "--replicates", "20000000", "--seed", "1"],  # minutes of work
                                    cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert status == 130 and err == "fastrisk test: interrupted", err
    assert waited < 20  # generous bound for a loaded CI machine; a chunk is about 0.25 s


def test_tukey_null_is_the_same_whatever_the_chunks(monkeypatch):
    import numpy as np

    from fastrisk.inference import multiple

    V = np.random.default_rng(3).random((6, 25))
    whole = multiple.tukey_hsd(V, replicates=997, rng=9, threads=1)
    monkeypatch.setattr(multiple, "CHUNK_WORK", 6 * 25 * 7)  # chunks of 7 (or 14) replicates
    chunked = multiple.tukey_hsd(V, replicates=997, rng=9, threads=2)
    assert np.array_equal(whole.null_distribution, chunked.null_distribution)
    assert np.array_equal(whole.pvalue, chunked.pvalue)


def test_replicates_beyond_memory_are_refused_with_the_estimate():
    import numpy as np

    from fastrisk._runtime.resources import check_memory
    from fastrisk.errors import ResourceError
    from fastrisk.inference.multiple import tukey_hsd

    with pytest.raises(ResourceError, match=r"Tukey HSD with 1000000000000 replicates .* needs about 14\.6 TiB .*"
                                            r"use fewer replicates"):
        tukey_hsd(np.random.default_rng(0).random((4, 10)), replicates=10**12, rng=1)
    with pytest.raises(ResourceError, match=r"x needs about 2\.0 KiB of memory, 1\.0 KiB is available: do y"):
        check_memory(2048, "x", "do y", available=1024)
    check_memory(1024, "x", "do y", available=1024)


def test_user_statistics_are_bounds_checked():
    import numba
    import numpy as np

    from fastrisk._runtime.compile import compile_checked
    from fastrisk.errors import InputError

    def last_plus_one(x):
        return x[x.shape[0]]

    for func in (last_plus_one, numba.njit(last_plus_one)):  # a plain function and a ready dispatcher
        with pytest.raises(InputError, match="indexes out of range on a 1-D float array of 3 value"):
            compile_checked(func, np.array([0.25, 0.5, 1.0]), what="`statistic`", argument="a 1-D float array")

    def far(x):
        return x[int(x[0] * 1000)] if x.shape[0] > 3 else 0.0

    checked = compile_checked(far, np.array([0.25, 0.5, 1.0]), what="`statistic`", argument="a 1-D float array")
    with pytest.raises(IndexError):  # passed the probe; out of range later: an error, not a wild read
        checked(np.full(50, 0.9))


def test_the_available_memory_is_read_once_a_second_not_once_a_call(monkeypatch):
    from fastrisk._runtime import resources as _resources

    reads = []
    monkeypatch.setattr(_resources, "_read_available_memory", lambda: reads.append(1) or 123)
    monkeypatch.setattr(_resources, "_reading", (float("-inf"), None))
    assert [_resources.available_memory() for _ in range(100)] == [123] * 100 and len(reads) == 1
    monkeypatch.setattr(_resources, "_reading", (_resources._reading[0] - 2 * _resources.MEMORY_READING_TTL, 123))
    assert _resources.available_memory() == 123 and len(reads) == 2


@pytest.mark.parametrize("given", [None, "ACTIVE"])
def test_openmp_workers_sleep_between_kernels_unless_the_user_chose(given):
    """Importing the kernels asks libgomp for passive waiting (spinning workers left by one
    parallel kernel took the cores from the next step); a policy the user set is kept."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if given:
        env["OMP_WAIT_POLICY"] = given
    code = "import os, fastrisk._kernels._jit; print(os.environ['OMP_WAIT_POLICY'])"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == (given or "PASSIVE")


def test_a_helper_is_called_by_kernels_and_from_python_and_cached(tmp_path):
    """`_jit.helper`: compiled without a CPython wrapper for kernels, a wrapped twin for Python
    (calling the unwrapped one from Python would crash); both load from the cache next time."""
    (tmp_path / "helped.py").write_text(
        "from fastrisk._kernels._jit import helper, njit\n\n"
        "@helper\ndef twice(x):\n    return 2.0 * x\n\n"
        "@njit\ndef caller(x):\n    return twice(x) + 1.0\n")
    run = ("import helped as k; print(k.caller(1.5), k.twice(4.0), len(k.twice.signatures), "
           "len(k.twice._python.signatures))")
    first = _python(run, tmp_path)
    assert first.returncode == 0 and first.stdout.split() == ["4.0", "8.0", "1", "1"], first.stderr
    names = sorted(p.name.split("-")[0] for p in (tmp_path / "__pycache__").glob("helped.*.nbi"))
    assert names == ["helped.caller", "helped.twice", "helped.twice_py"]
    second = _python(run, tmp_path)  # the caller loads with the helper's code inside: no helper signature
    assert second.returncode == 0 and second.stdout.split() == ["4.0", "8.0", "0", "1"], second.stderr


def test_a_kernel_is_recompiled_when_a_helper_it_inlines_changes_in_another_file(tmp_path):
    """numba keys a cached kernel on its own file only: a kernel inlining a helper of another
    file kept the old helper's code (`_jit.kernel_files_stamp` joins the stamp of every file
    of its folder and of the package's kernel folders)."""
    (tmp_path / "parts.py").write_text("from fastrisk._kernels._jit import helper\n\n"
                                       "@helper\ndef scale(x):\n    return 2.0 * x\n")
    (tmp_path / "user.py").write_text("from fastrisk._kernels._jit import njit\nfrom parts import scale\n\n"
                                      "@njit\ndef caller(x):\n    return scale(x) + 1.0\n")
    run = "import user; print(user.caller(1.5))"
    assert _python(run, tmp_path).stdout.split() == ["4.0"]
    assert _python(run, tmp_path).stdout.split() == ["4.0"]  # from the cache
    (tmp_path / "parts.py").write_text((tmp_path / "parts.py").read_text().replace("2.0 * x", "3.0 * x"))
    again = _python(run, tmp_path)
    assert again.returncode == 0 and again.stdout.split() == ["5.5"], again.stderr
