"""The first time: the README quickstarts with an empty numba cache (issue #20, "fast the first time").

Each case runs in a fresh subprocess whose ``NUMBA_CACHE_DIR`` is a new empty directory, so
every kernel it uses is compiled, as on a fresh install; ``extra_info`` holds the seconds,
the aim and the load average. ``warmup`` cases first run ``fastrisk warmup`` in the empty
cache (timed too), then the quickstart. One round each: a cold run is minutes of compiling.

    pytest benchmarks/bench_cold.py --benchmark-columns=median,rounds -k python

Which kernels a command compiles, and the seconds each takes: ``benchmarks/profile_compile.py``.

Figures (2026-11-24, 2 shared cores; "before" is main at 5e9905b, run side by side with "after"
in separate empty caches, so both saw the same load):

    command                      load   before   after    compiles before -> after
    table --alpha 5 --agreement  6-8    108 s    67 s     118 -> 64
    table --alpha 5 --agreement  1-3     46 s    22 s     118 -> 60 (one-thread twins, no slice
                                                          assignments, one argsort dtype)
    README Python quickstart     7-9    338 s    254 s    269 -> 196
    README Python quickstart     3-4    139 s    111 s

2026-11-25, "before" main at d809a8e (44 s wall at load 0.5, the lead's run), side by side with
"after" in separate empty caches; at load 10-14 wall times were 2-2.5x the CPU seconds, so the
table gives the process's CPU seconds (user, ``/usr/bin/time``):

    command                      load    before   after    compiles before -> after
    README Python quickstart     10-14   42 s     31 s     192 -> 152 (peak RSS 679 -> 599 MB)
    pool-bias (CLI quickstart)   10-11   18.0 s   11.4 s   (no parallel twins of the pooling kernels)
    evaluate (CLI quickstart)    10      8.2 s    7.1 s
    table --alpha 5 --agreement  9-12    13.6 s   13.9 s   (reads every agreement matrix: unchanged)

2026-11-25 03:45, helpers without CPython wrappers, no C-callable wrappers (``_jit.helper``),
side by side with 9af4c3c (``profile_compile.py``, CPU seconds of the process):

    README Python quickstart     8       33.4 s   30.4 s   174 -> 172
    README Python quickstart     10-11   35.9 s   32.2 s   174 -> 173 (peak RSS 601 -> 547 MB)
    fastrisk warmup (2 jobs)     6-9     51.5 s   46.6 s   (children's CPU; four disjoint groups
                                                          instead of five; wall 126 and 123 s)

This file's run on that code (2026-11-25 03:32-03:43, load 7-12: wall times are 3-5x the
CPU seconds, which are given): the quickstart cold 31.4 s; ``fastrisk warmup`` 48.8 s (all
four groups, children included), the quickstart after it 9.8 s (the user's lambda and its
kernel compile in every process; matplotlib); CLI commands cold 1.2 (info) to 14.8 s
(pool-bias): table --agreement 13.7, report 13.3, demo 12.6, evaluate 10.3, agree 9.9,
test --method t 8.4, table --baseline all 6.7, bootstrap 5.0, the rest 1.4-4.0; after warmup
1.3-2.3 s each (report 6.8, demo 5.8: figures), of which about 1.2 s is starting Python and
importing fastrisk.
"""

from __future__ import annotations

import os
import re
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import load_average

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
#: Commands of the CLI quickstart that need more than the bundled data or minutes of work.
SKIP = ("tcp://", "--scheduler local", "--resume", "sweep bench_data/sweeps/published.toml", "pip install")


def _python_quickstart() -> str:
    return re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)[0]


def _cli_quickstart() -> list[str]:
    """Every ``fastrisk`` command of the CLI quickstart section (all its bash blocks)."""
    section = README.split("## CLI quickstart", 1)[1].split("\n## ", 1)[0]
    lines = [line.split("  #")[0].strip() for block in re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL)
             for line in block.splitlines()]
    return [line for line in lines if line.startswith("fastrisk ") and not any(s in line for s in SKIP)]


def _env(cache: Path) -> dict:
    return {**os.environ, "NUMBA_CACHE_DIR": str(cache), "MPLBACKEND": "Agg", "FASTRISK_QUIET": "1",
            "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _timed(argv, env, cwd) -> dict:
    """Wall and CPU seconds (user + system, of the process and its children) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert proc.returncode == 0, proc.stderr[-2000:]
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"wall": round(wall, 2), "cpu": round(cpu, 2), "load": load_average()}


def _record(benchmark, seconds: dict, aim: float) -> None:
    benchmark.extra_info.update({"seconds": seconds, "aim_seconds": aim, "loadavg": load_average()})
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)  # the timing is in extra_info


def _clone(path: Path) -> Path:
    """A working directory like the root of a clone, with what the quickstarts read."""
    path.mkdir(exist_ok=True)
    (path / "bench_data").symlink_to(ROOT / "bench_data", target_is_directory=True)
    (path / "quickstart.py").write_text(_python_quickstart())
    return path


def _cli(command: str) -> list[str]:
    return [sys.executable, "-m", "fastrisk", *shlex.split(command)[1:]]


def _needs(command: str, cwd: Path, env: dict) -> None:
    """Make what ``command`` reads from an earlier quickstart command (the evaluate example's
    matrices), untimed."""
    if "web12." in command and " evaluate " not in command and not (cwd / "web12.ERR@20.parquet").exists():
        _timed(_cli(next(c for c in _cli_quickstart() if " evaluate " in c)), env, cwd)


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """A clone and a cache filled by ``fastrisk warmup`` (timed), shared by the after-warmup cases."""
    cwd = _clone(tmp_path_factory.mktemp("warm"))
    env = _env(cwd / "cache")
    return cwd, env, _timed([sys.executable, "-m", "fastrisk", "warmup"], env, cwd)


def test_python_quickstart_cold(benchmark, tmp_path):
    benchmark.group = "cold: README Python quickstart"
    cwd = _clone(tmp_path)
    _record(benchmark, {"quickstart": _timed([sys.executable, "quickstart.py"], _env(tmp_path / "cache"), cwd)},
            aim=15.0)


def test_python_quickstart_after_warmup(benchmark, warm):
    benchmark.group = "cold: README Python quickstart"
    cwd, env, warmup = warm
    _record(benchmark, {"warmup": warmup, "quickstart": _timed([sys.executable, "quickstart.py"], env, cwd)},
            aim=15.0)


@pytest.mark.parametrize("command", _cli_quickstart(), ids=lambda c: " ".join(shlex.split(c)[1:3]))
def test_cli_command_cold(benchmark, tmp_path, command):
    benchmark.group = "cold: README CLI quickstart, one command each"
    cwd = _clone(tmp_path)
    _needs(command, cwd, _env(tmp_path / "other-cache"))
    _record(benchmark, {"command": _timed(_cli(command), _env(tmp_path / "cache"), cwd)}, aim=4.0)


@pytest.mark.parametrize("command", _cli_quickstart(), ids=lambda c: " ".join(shlex.split(c)[1:3]))
def test_cli_command_after_warmup(benchmark, warm, command):
    benchmark.group = "after warmup: README CLI quickstart, one command each"
    cwd, env, _ = warm
    _needs(command, cwd, env)
    _record(benchmark, {"command": _timed(_cli(command), env, cwd)}, aim=4.0)
