"""Checkpoints: finished batches as Parquet parts in ``OUT.parts/``, read back on resume."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
import uuid
import warnings
from pathlib import Path

import pyarrow as pa

from fastrisk._runtime.atomic import write_bytes
from fastrisk.sweep.table import _concat

_META_KEY = b"fastrisk.sweep"


class CheckpointWarning(RuntimeWarning):
    """A checkpoint part failed its checksum or could not be read: its jobs are recomputed."""


def _sha256(data) -> str:
    return hashlib.sha256(data).hexdigest()


class _Checkpoint:
    """Finished batches as Parquet files in ``OUT.parts/``, flushed every few seconds.

    Each part is written atomically (a temporary file renamed when complete) with Parquet page
    checksums and a ``.sha256`` sidecar, written before the part appears. On resume a part is
    reused only if its SHA-256 matches and it reads back with its page checksums verified; any
    other part is reported by name, moved aside (``.corrupt``) and its jobs are recomputed.
    """

    def __init__(self, out: Path | None, meta: dict, every: float):
        self.out = out
        self.dir = None if out is None else out.with_name(out.name + ".parts")
        self.meta = {_META_KEY: json.dumps(meta).encode()}
        self.every = every
        self.buffer: list[pa.Table] = []
        self.last = time.monotonic()
        self.count = 0
        self._loaded: list[pa.Table] | None = None

    # ------------------------------------------------------------ reading, verified
    def _parts(self) -> list[Path]:
        return sorted(self.dir.glob("part-*.parquet")) if self.dir is not None and self.dir.exists() else []

    @staticmethod
    def _read_verified(data: bytes) -> pa.Table:
        import pyarrow.parquet as pq  # ~150 ms to import; only checkpointed sweeps need it

        return pq.read_table(pa.BufferReader(data), page_checksum_verification=True)

    def _check_part(self, p: Path) -> pa.Table:
        """The part's table, or an exception whose message says why it cannot be trusted."""
        sidecar = p.with_name(p.name + ".sha256")
        data = p.read_bytes()
        try:
            expected = sidecar.read_text(encoding="ascii").split()[0]
        except (OSError, UnicodeDecodeError, IndexError):
            raise ValueError(f"its checksum file {sidecar.name} is missing or unreadable") from None
        if _sha256(data) != expected:
            raise ValueError(f"its SHA-256 does not match {sidecar.name} (size {len(data)} bytes)")
        return self._read_verified(data)

    def _quarantine(self, p: Path, why: str) -> None:
        warnings.warn(f"checkpoint part {p} is corrupt ({why}); it is not reused and its jobs are "
                      f"recomputed (moved to {p.name}.corrupt)", CheckpointWarning, stacklevel=4)
        for q in (p, p.with_name(p.name + ".sha256")):
            with contextlib.suppress(OSError):
                os.replace(q, q.with_name(q.name + ".corrupt"))

    def _drop_orphans(self) -> None:
        """Delete checksum files whose part was never written (a write that failed before the
        cleanup in `flush` could run, e.g. the process was killed)."""
        if self.dir is None or not self.dir.exists():
            return
        for sidecar in self.dir.glob("part-*.parquet.sha256"):
            if not sidecar.with_name(sidecar.name[:-len(".sha256")]).exists():
                with contextlib.suppress(OSError):
                    sidecar.unlink()

    def existing(self) -> list[pa.Table]:
        """The verified tables of the finished result file and the parts (read once)."""
        if self._loaded is not None:
            return self._loaded
        tables = []
        if self.out is not None and self.out.exists():
            try:
                tables.append(self._read_verified(self.out.read_bytes()))
            except (pa.ArrowException, OSError, ValueError) as exc:
                warnings.warn(f"the previous result {self.out} cannot be read back intact ({_reason(exc)}); "
                              "it is not reused and will be replaced", CheckpointWarning, stacklevel=3)
        self._drop_orphans()
        for p in self._parts():
            try:
                tables.append(self._check_part(p))
            except (pa.ArrowException, OSError, ValueError, EOFError) as exc:
                self._quarantine(p, _reason(exc))
        self._loaded = tables
        return tables

    def read_meta(self) -> dict | None:
        for t in self.existing():
            md = t.schema.metadata or {}
            if _META_KEY in md:
                try:
                    return json.loads(md[_META_KEY])
                except ValueError:
                    continue
        return None

    # ------------------------------------------------------------ writing, atomic
    def add(self, table: pa.Table) -> None:
        if self.dir is None:
            return
        self.buffer.append(table)
        if time.monotonic() - self.last >= self.every:
            self.flush()

    def _serialise(self, table: pa.Table) -> bytes:
        import pyarrow.parquet as pq  # ~150 ms to import; only checkpointed sweeps need it

        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **self.meta})
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, write_page_checksum=True)
        return sink.getvalue().to_pybytes()

    def flush(self) -> None:
        if self.dir is None or not self.buffer:
            return

        self.dir.mkdir(parents=True, exist_ok=True)
        data = self._serialise(_concat(self.buffer))
        name = f"part-{time.time_ns():020d}-{uuid.uuid4().hex[:6]}.parquet"
        # the sidecar first: a part never exists without the checksum that vouches for it
        sidecar = self.dir / (name + ".sha256")
        write_bytes(sidecar, f"{_sha256(data)}  {name}\n".encode("ascii"))
        try:
            write_bytes(self.dir / name, data)
        except BaseException:  # a full disk, say: no checksum file may stay behind without its part
            with contextlib.suppress(OSError):
                sidecar.unlink()
            raise
        self.buffer.clear()
        self.last = time.monotonic()

    def finish(self, table: pa.Table) -> None:
        if self.out is None:
            return

        self.buffer.clear()
        write_bytes(self.out, self._serialise(table))
        if self.dir.exists():
            shutil.rmtree(self.dir)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
