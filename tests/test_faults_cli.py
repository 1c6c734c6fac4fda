"""Fault suite, command line: no traceback ever, one-line warnings, a closed pipe, atomic
outputs under a full disk (RLIMIT_FSIZE)."""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from fastrisk import cli
from fastrisk._runtime import atomic as _atomic
from fastrisk.errors import InputError, ResourceError

ROOT = Path(__file__).resolve().parent.parent
MATRIX = ROOT / "bench_data" / "trec-matrices" / "web2012_err20.csv"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _fake_command(monkeypatch, func, files=()):
    """``main`` runs ``func`` as the command ``fake`` (with ``files`` as its input)."""
    class Parser:
        def parse_args(self, argv):
            return argparse.Namespace(command="fake", func=func, inputs=list(files), out=None)

    monkeypatch.setattr(cli, "build_parser", lambda: Parser())


def _raise(exc):
    def func(args):
        raise exc
    return func


@pytest.mark.parametrize("exc, expected", [
    (InputError("`alpha` must be finite, got inf"), "error: `alpha` must be finite, got inf"),
    (ResourceError("bootstrap would need 298 GiB\nsecond line"), "error: bootstrap would need 298 GiB"),
    (MemoryError(), "error: not enough memory (MemoryError)"),
    (KeyError("system"), "error: unexpected KeyError: 'system'"),
    (TypeError("bad operand"), "error: unexpected TypeError: bad operand"),
    (FileNotFoundError(2, "No such file or directory", "x.csv"), "No such file or directory: 'x.csv'"),
    (EOFError("Compressed file ended before the end-of-stream marker was reached"), "truncated or corrupt"),
    (UnicodeDecodeError("utf-8", b"\x00\xff", 1, 2, "invalid start byte"), "not UTF-8 text (byte 0xff at offset 1)"),
])
def test_every_exception_is_one_line_with_exit_2(monkeypatch, capsys, tmp_path, exc, expected):
    src = tmp_path / "in.csv"
    src.write_text("x")
    _fake_command(monkeypatch, _raise(exc), [str(src)])
    assert cli.main([]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("fastrisk fake: error: ") and expected in err
    assert err.count("\n") == 1 and "Traceback" not in err
    if isinstance(exc, (EOFError, UnicodeDecodeError, KeyError)):
        assert str(src) in err  # the input file is named


def test_interrupt_exits_130_and_debug_shows_the_traceback(monkeypatch, capsys):
    _fake_command(monkeypatch, _raise(KeyboardInterrupt()))
    assert cli.main([]) == 130
    assert capsys.readouterr().err == "fastrisk fake: interrupted\n"
    _fake_command(monkeypatch, _raise(KeyError("k")))
    monkeypatch.setenv("FASTRISK_DEBUG", "1")
    with pytest.raises(KeyError):
        cli.main([])


def _cli(*argv, **kwargs):
    return subprocess.run([sys.executable, "-m", "fastrisk", *argv], env=ENV, capture_output=True, text=True, check=False,
                          timeout=300, **kwargs)


def test_real_bad_inputs_never_leak_a_traceback(tmp_path):
    binary = tmp_path / "scores.dat"
    binary.write_bytes(bytes(range(256)) * 8)
    truncated = tmp_path / "m.csv.gz"
    truncated.write_bytes(gzip.compress(MATRIX.read_bytes())[:400])
    grid = tmp_path / "grid.toml"
    grid.write_bytes(b"\x00\x01\xfe\xff binary")
    for argv, name in [(["risk", str(binary), "--baseline", "mean"], binary),
                       (["risk", str(truncated), "--baseline", "mean"], truncated),
                       (["sweep", str(grid), "--out", str(tmp_path / "o.parquet")], grid)]:
        res = _cli(*argv)
        assert res.returncode == 2, res.stderr
        assert "Traceback" not in res.stderr and res.stderr.count("\n") == 1, res.stderr
        assert str(name) in res.stderr


def test_warnings_print_one_clean_line(tmp_path):
    code = ("import argparse, sys, warnings, fastrisk.cli as c\n"
            "class P:\n"
            "    def parse_args(self, argv):\n"
            "        return argparse.Namespace(command='fake', func=lambda a: warnings.warn('two\\n  lines', UserWarning))\n"
            "c.build_parser = lambda: P()\n"
            "sys.exit(c.main([]))\n")
    res = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True, timeout=120,
                         check=False)
    assert res.returncode == 0 and res.stderr == "fastrisk fake: warning: two lines\n"


def test_a_closed_pipe_exits_quietly():
    proc = subprocess.Popen([sys.executable, "-m", "fastrisk", "demo"], env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()  # `| head -1`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == cli.EXIT_BROKEN_PIPE
    assert err == ""


# ---------------------------------------------------------------------- atomic outputs
def test_a_failed_write_leaves_the_previous_file(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("good\n")
    os.chmod(target, 0o640)

    with pytest.raises(RuntimeError), _atomic.atomic_open(target) as fh:
        fh.write("half")
        raise RuntimeError("formatting failed")
    assert target.read_text() == "good\n" and os.listdir(tmp_path) == ["out.csv"]
    _atomic.write_text(target, "new\n")
    assert target.read_text() == "new\n" and os.stat(target).st_mode & 0o777 == 0o640
    assert os.listdir(tmp_path) == ["out.csv"]
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    _atomic.write_text(link, "via link\n")
    assert link.is_symlink() and target.read_text() == "via link\n"


def _limit_file_size(limit):
    def set_limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return set_limit


@pytest.mark.skipif(not hasattr(resource, "RLIMIT_FSIZE"), reason="needs RLIMIT_FSIZE")
@pytest.mark.parametrize("fmt", ["csv", *(pytest.param(f, marks=pytest.mark.slow) for f in ("table", "json", "parquet"))])
def test_a_full_disk_leaves_the_previous_output_intact(tmp_path, fmt):
    argv = ["risk", str(MATRIX), "--baseline", "mean", "--alpha", "0,1,2,5,10", "--per-topic", "--format", fmt]
    warm = _cli(*argv, "--out", str(tmp_path / "warm"))  # compiles (and caches) the kernels first
    assert warm.returncode == 0, warm.stderr
    assert (tmp_path / "warm").stat().st_size > 20_000
    out = tmp_path / "out"
    out.write_bytes(b"the previous, good output\n")
    res = _cli(*argv, "--out", str(out), preexec_fn=_limit_file_size(8_192))
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr and "cannot write" in res.stderr and str(out) in res.stderr
    assert out.read_bytes() == b"the previous, good output\n"
    assert sorted(os.listdir(tmp_path)) == ["out", "warm"]
