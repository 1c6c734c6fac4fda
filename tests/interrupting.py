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


def interrupt_at_random(argv, *, cwd, env, lo: float, hi: float, times: int, seed: int) -> list[tuple[float, int, float, str]]:
    """``times`` runs of ``argv``, each interrupted at a moment drawn uniformly from [lo, hi]
    seconds (a seeded draw, so a failure can be replayed); (moment, status, seconds to stop,
    stderr) of each."""
    import random

    draw = random.Random(seed)
    out = []
    for _ in range(times):
        after = draw.uniform(lo, hi)
        status, waited, err = interrupt(argv, cwd=cwd, env=env, after=after)
        out.append((after, status, waited, err))
    return out
