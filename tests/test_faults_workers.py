"""Issue 21: distributed runs fail fast (no worker, or every worker lost) and workers are quiet."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fastrisk.cli import main
from fastrisk.errors import InputError, WorkerTimeoutError
from fastrisk.sweep import backends

ROOT = Path(__file__).resolve().parent.parent
GRID = ROOT / "fastrisk" / "bench_data" / "sweeps" / "published.toml"


def test_local_zero_workers_is_refused_at_once(capsys):
    for command in (["sweep", str(GRID)], ["simulate", "type1", "--trials", "10"]):
        assert main(command + ["--scheduler", "local:0"]) == 2
        err = capsys.readouterr().err
        assert err.endswith("error: --scheduler local:0 starts no worker: give local:N with N >= 1 (or local for "
                            "one per core)\n"), err


def test_a_cluster_without_workers_stops_after_the_bounded_wait(tmp_path):
    pytest.importorskip("distributed")
    from fastrisk.sweep import local_client, sweep

    client = local_client(0)  # a scheduler that never gets a worker (as every worker lost)
    try:
        with pytest.raises(WorkerTimeoutError, match=r"no Dask worker for \d+ s \(none was started, or every "
                                                     r"worker was lost\): the sweep stops; .*--resume.*--worker-timeout"
                           ) as caught:
            sweep(GRID, executor=client, out=tmp_path / "o.parquet", worker_timeout=1, progress=False)
    finally:
        client.close()
    # a timeout, not an out-of-memory error (it was a MemoryError subclass); the CLI's one line
    assert isinstance(caught.value, RuntimeError) and not isinstance(caught.value, MemoryError)
    from fastrisk.cli import describe_error

    assert describe_error(caught.value) == str(caught.value).splitlines()[0]
    assert describe_error(caught.value).startswith("no Dask worker for ")


def test_the_worker_timeout_comes_from_the_argument_the_environment_or_the_default(monkeypatch):
    monkeypatch.delenv(backends.WORKER_TIMEOUT_ENV, raising=False)
    assert backends.worker_timeout_seconds() == backends.WORKER_TIMEOUT
    monkeypatch.setenv(backends.WORKER_TIMEOUT_ENV, "5")
    assert backends.worker_timeout_seconds() == 5.0 and backends.worker_timeout_seconds(2) == 2.0
    monkeypatch.setenv(backends.WORKER_TIMEOUT_ENV, "soon")
    with pytest.raises(InputError, match="FASTRISK_WORKER_TIMEOUT must be a non-negative number of seconds"):
        backends.worker_timeout_seconds()
    with pytest.raises(InputError, match="`worker_timeout` must be a non-negative number of seconds"):
        backends.worker_timeout_seconds(-1)


_NOISY_EXIT = """
import atexit, os, sys
os.environ.update({env})
atexit.register(lambda: print("leaked 76 instances!", file=sys.stderr))  # first in: runs last, as a teardown
from fastrisk.sweep import backends
backends._init_worker({{}})
print("the worker's own output", file=sys.stderr)
"""


@pytest.mark.parametrize("verbose", [False, True])
def test_a_worker_says_nothing_at_exit_unless_verbose(verbose, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(backends.VERBOSE_ENV, None)
    code = _NOISY_EXIT.format(env={backends.VERBOSE_ENV: "1"} if verbose else {})
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "the worker's own output" in out.stderr and ("leaked" in out.stderr) == verbose, out.stderr


# ---------------------------------------------------------------------- checkpoint on a full disk
def test_a_full_disk_leaves_no_orphan_checksum_and_a_resume_drops_old_ones(tmp_path, monkeypatch):
    import errno

    import pyarrow as pa

    from fastrisk.sweep import checkpoint

    ck = checkpoint._Checkpoint(tmp_path / "o.parquet", {}, 0.0)
    real = checkpoint.write_bytes

    def full(path, data):
        if not str(path).endswith(".sha256"):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(checkpoint, "write_bytes", full)
    ck.buffer.append(pa.table({"job": [0]}))
    with pytest.raises(OSError, match="No space left"):
        ck.flush()
    assert list(ck.dir.iterdir()) == []  # the sidecar went with the failed part
    (ck.dir / "part-1.parquet.sha256").write_text("0" * 64 + "  part-1.parquet\n")  # left by a killed run
    assert checkpoint._Checkpoint(tmp_path / "o.parquet", {}, 0.0).existing() == []
    assert list(ck.dir.iterdir()) == []
