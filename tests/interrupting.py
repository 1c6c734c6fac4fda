"""Ctrl-C delivered to a long CLI command in a child process (used by the fault tests)."""

from __future__ import annotations

import signal
import subprocess
import time


def interrupt(argv, *, cwd, env, after: float = 8.0) -> tuple[int, float, str]:
    """Start ``argv``, send SIGINT ``after`` seconds in (past imports and reading: the command
    must still be running then), and return (exit status, seconds it took to stop, stderr)."""
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    try:
        time.sleep(after)
        assert proc.poll() is None, "the command ended before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        status = proc.wait(timeout=60)
        waited = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return status, waited, proc.stderr.read().strip()
