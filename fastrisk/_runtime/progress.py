"""The one progress bar (the resampling procedures and sweeps): tqdm on standard error when it
is installed (``fastrisk[progress]``), else a plain line updated at most once a second.

``progress=True`` always shows it: on a terminal as a bar, into a log file or a pipe as a
plain line every `PERIOD` seconds (and at the end); ``False`` never; ``None`` only when
standard error is a terminal and the run is long (``work`` at least `MIN_WORK`).
"""

from __future__ import annotations

import math
import sys
import time

#: Runs with less work than this (replicates x columns x topics) never show a bar by default.
MIN_WORK = 2e9
#: Seconds between two progress lines when standard error is not a terminal.
PERIOD = 10.0


def stderr_is_terminal() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced by an object without isatty, or closed
        return False


class Progress:
    """``Progress(total, progress, desc, unit=..., initial=..., work=..., delay=...)``: call
    `update` with the units done (`describe` to relabel) and `close` at the end. ``delay`` seconds pass
    before tqdm draws (a short run stays silent)."""

    def __init__(self, total: int, progress: bool | None, desc: str, *, unit: str = "it", initial: int = 0,
                 work: float = math.inf, delay: float = 0.0):
        self.bar = None
        self.enabled = bool(progress) or (progress is None and work >= MIN_WORK and stderr_is_terminal())
        if not self.enabled:
            return
        self.desc, self.unit = desc, unit
        self.total, self.done, self.t0, self.last = total, initial, time.monotonic(), -math.inf
        self.lines = not stderr_is_terminal()  # a log file or a pipe: whole lines, every PERIOD seconds
        if self.lines:
            return
        try:
            from tqdm.auto import tqdm  # optional dependency (fastrisk[progress])
        except ImportError:
            return
        self.bar = tqdm(total=total, initial=initial, desc=desc, unit=unit, file=sys.stderr, leave=False,
                        dynamic_ncols=True, delay=delay)

    def update(self, n: int) -> None:
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.update(n)
            return
        self.done += n
        now = time.monotonic()
        if now - self.last >= (PERIOD if self.lines else 1.0) or self.done == self.total:
            rate = self.done / max(now - self.t0, 1e-9)
            eta = (self.total - self.done) / rate if rate > 0 else math.inf
            text = f"{self.desc}: {self.done}/{self.total} {self.unit}, ETA {eta:.0f} s"
            print(text if self.lines else f"\r{text}", end="\n" if self.lines else "", file=sys.stderr, flush=True)
            self.last = now

    def describe(self, desc: str) -> None:
        """Change the label (e.g. a count of finished parts), shown from the next update."""
        if self.bar is not None:
            self.bar.set_description_str(desc, refresh=False)
        elif self.enabled:
            self.desc = desc

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.enabled and not self.lines:
            print(file=sys.stderr)
