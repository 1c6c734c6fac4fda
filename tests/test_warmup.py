"""``fastrisk warmup``: the groups it runs, its errors, and one group end to end (slow)."""

from __future__ import annotations

import pytest

from fastrisk import InputError
from fastrisk.cli._warmup import GROUPS, warmup


def test_an_unknown_group_is_refused_by_name():
    with pytest.raises(InputError, match="unknown warm-up group.*'?nope'?.*the groups are"):
        warmup(groups=["nope"])


def test_the_cli_offers_every_group(capsys):
    from fastrisk.cli import main

    with pytest.raises(SystemExit):
        main(["warmup", "--help"])
    out = capsys.readouterr().out
    assert all(g in out for g in GROUPS)


def test_one_group_runs_in_a_subprocess_and_reports(monkeypatch):
    """Only the groups asked for run, each as ``run_group`` in a new interpreter, and each is
    reported; a failed group is an error naming it (the subprocesses themselves, and the cache
    they fill: test_after_warmup_the_quickstarts_compile_nothing, which runs every group)."""
    import subprocess
    import sys
    from types import SimpleNamespace

    calls = []

    def run(argv, **kw):
        calls.append((argv, kw["env"]))
        return SimpleNamespace(returncode=0 if "('risk')" in argv[-1] else 1, stderr="Traceback\nZeroDivisionError\n")

    monkeypatch.setattr(subprocess, "run", run)
    seen = []
    out = warmup(1, groups=["risk"], report=lambda g, s, ok: seen.append((g, ok)))
    assert seen == [("risk", True)] and set(out) == {"risk"} and out["risk"] >= 0
    assert calls[0][0] == [sys.executable, "-c", "from fastrisk.cli._warmup import run_group; run_group('risk')"]
    assert calls[0][1]["FASTRISK_QUIET"] == "1"
    with pytest.raises(RuntimeError, match="warm-up group 'tables' failed: ZeroDivisionError"):
        warmup(1, groups=["tables"], report=lambda g, s, ok: seen.append((g, ok)))
    assert seen[-1] == ("tables", False)


#: Run in a subprocess: the README Python quickstart, then every command of its CLI quickstart,
#: printing (as JSON) each numba compile that is not of the user's own value function (the
#: quickstart's lambda and the kernel twin built around it are compiled in every process by
#: design: a user's function is never cached on disk).
_COUNT_COMPILES = r"""
import json, sys, warnings
from numba.core import event

stack, compiled = [], []

class Listener(event.Listener):
    def on_start(self, ev):
        func = getattr((ev.data or {}).get("dispatcher"), "py_func", None)
        name = f"{getattr(func, '__module__', None)}.{getattr(func, '__qualname__', func)}"
        stack.append(name)
        if not any(n.startswith("__main__.") or n.endswith("_user") for n in stack):
            compiled.append(f"{name} {(ev.data or {}).get('args')}")

    def on_end(self, ev):
        stack.pop()

event.register("numba:compile", Listener())
warnings.simplefilter("ignore")
quickstart, commands = json.loads(sys.argv[1])
exec(compile(quickstart, "README.md", "exec"), {"__name__": "__main__"})
from fastrisk.cli import main
for argv in commands:
    assert main(argv) == 0, argv
print(json.dumps(compiled))
"""


def _quickstarts():
    import re
    import shlex
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    python = re.findall(r"```python\n(.*?)```", readme, flags=re.DOTALL)[0]
    section = readme.split("## CLI quickstart", 1)[1].split("\n## ", 1)[0]
    lines = [line.split("  #")[0].strip() for block in re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL)
             for line in block.splitlines()]
    skip = ("tcp://", "--scheduler", "--resume", "sweep ", "pip install")  # a cluster, or minutes of work
    return python, [shlex.split(line)[1:] for line in lines
                    if line.startswith("fastrisk ") and not any(s in line for s in skip)]


@pytest.mark.slow
def test_after_warmup_the_quickstarts_compile_nothing(tmp_path, monkeypatch):
    """`fastrisk warmup` in an empty cache, then the README Python quickstart and each CLI
    quickstart command in a new process on that cache: no kernel is compiled (counted from
    numba's compile events, not timed)."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    pytest.importorskip("matplotlib")
    root = Path(__file__).resolve().parent.parent
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    seen = []
    warmup(report=lambda g, s, ok: seen.append((g, ok)))
    assert sorted(seen) == sorted((g, True) for g in GROUPS)
    assert any((tmp_path / "cache").rglob("*.nbi"))  # the kernels went to the (empty) cache given
    (tmp_path / "bench_data").symlink_to(root / "bench_data", target_is_directory=True)
    python, commands = _quickstarts()
    assert len(commands) >= 8 and any(c[0] == "pool-bias" for c in commands)
    proc = subprocess.run([sys.executable, "-c", _COUNT_COMPILES, json.dumps([python, commands])],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    compiled = json.loads(proc.stdout.strip().splitlines()[-1])
    assert compiled == []


class _Terminal:
    def __init__(self):
        self.text = ""

    def isatty(self):
        return True

    def write(self, s):
        self.text += s

    def flush(self):
        pass


def test_the_first_compile_of_a_fastrisk_kernel_says_so_once_on_a_terminal(monkeypatch):
    from types import SimpleNamespace

    from fastrisk._kernels import _jit
    from fastrisk._kernels.risk import risk_sums

    def start(dispatcher):
        _jit._CompileNote().on_start(SimpleNamespace(data={"dispatcher": dispatcher}))

    term = _Terminal()
    monkeypatch.setattr("sys.stderr", term)
    monkeypatch.delenv("FASTRISK_QUIET", raising=False)
    monkeypatch.setattr(_jit._CompileNote, "noted", False)
    start(SimpleNamespace(py_func=len))  # numba's own helpers (builtins here) say nothing
    assert term.text == ""
    start(risk_sums)
    start(risk_sums)
    assert term.text.count("\n") == 1 and "fastrisk warmup" in term.text
    monkeypatch.setattr(_jit._CompileNote, "noted", False)
    monkeypatch.setenv("FASTRISK_QUIET", "1")
    term.text = ""
    start(risk_sums)
    assert term.text == ""
