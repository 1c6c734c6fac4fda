"""The README's examples run as written, from the root of a clone, on the bundled data."""

from __future__ import annotations

import re
import shlex
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
#: Commands that need what a test cannot have: a Dask cluster, a previous interrupted sweep, or
#: minutes of work (the full published sweep is exercised by test_sweep on a small grid).
SKIP = ("tcp://", "--scheduler local", "--resume", "sweep bench_data/sweeps/published.toml", "pip install")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def _commands() -> list[str]:
    out = []
    for block in _blocks("bash"):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("fastrisk ") and not any(s in line for s in SKIP):
                out.append(line)
    return out


@pytest.fixture
def clone(tmp_path, monkeypatch):
    """A working directory that looks like the root of a clone (bundled data reachable)."""
    (tmp_path / "bench_data").symlink_to(ROOT / "bench_data", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_readme_has_commands():
    assert len(_commands()) >= 8


@pytest.mark.slow
@pytest.mark.parametrize("command", _commands())
def test_readme_command_runs_as_written(clone, command, capsys):
    from fastrisk.cli import main

    argv = shlex.split(command)[1:]
    if argv[0] == "risk" and "web12.ERR@20.parquet" in command:  # the output of the evaluate example
        assert main(shlex.split(next(c for c in _commands() if " evaluate " in c))[1:]) == 0
    if argv[0] == "demo":
        pytest.importorskip("matplotlib")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        status = main(argv)
    err = capsys.readouterr().err
    assert status == 0, err


def test_the_readme_has_python_examples():
    assert len(_blocks("python")) >= 2  # the quickstart, runs and pooling


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_readme_python_example_runs_as_written(clone, index):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    code = _blocks("python")[index]
    if "lightgbm" in code:
        pytest.importorskip("lightgbm")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, "README.md", "exec"), {})  # noqa: S102 - running the README is the test
