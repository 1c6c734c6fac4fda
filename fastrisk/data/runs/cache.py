"""The opt-in parse cache: ``read_runs(..., cache=True)`` (or ``cache=DIR``) stores a saved
RunSet (`fastrisk.data.runs.ipc`) under a key made of every source file's absolute path, size,
modification time and a BLAKE2 hash of its first and last 64 KiB, so a sweep re-reading the
same runs parses them once. An entry is checksummed and bounds-checked on load
(`fastrisk.data.runs.ipc`); a damaged one is reparsed with a `CacheWarning` naming it. The default directory is ``$FASTRISK_CACHE`` or ``~/.cache/fastrisk/runs``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import warnings
from pathlib import Path

from fastrisk.data.runs import ipc
from fastrisk.data.runs.model import RunSet
from fastrisk.errors import CacheWarning, InputError


def cache_dir(cache) -> Path:
    if cache is True:
        base = os.environ.get("FASTRISK_CACHE") or Path.home() / ".cache" / "fastrisk" / "runs"
        return Path(base)
    if isinstance(cache, (str, os.PathLike)):
        return Path(cache)
    raise InputError(f"`cache` must be True or a directory, got {cache!r}")


def key(files, *, names=None) -> str:
    """Hash of the files' identities: absolute path, size, mtime and their first/last 64 KiB."""
    h = hashlib.blake2b(digest_size=20)
    h.update(json.dumps({"v": ipc.VERSION, "names": list(names) if names is not None else None}).encode())
    for f in files:
        st = os.stat(f)
        h.update(f"{Path(f).resolve()}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
        with open(f, "rb") as fh:
            h.update(fh.read(1 << 16))
            if st.st_size > 1 << 17:
                fh.seek(-(1 << 16), os.SEEK_END)
                h.update(fh.read(1 << 16))
    return h.hexdigest()


def lookup(cache, k: str):
    path = cache_dir(cache) / f"{k}.arrow"
    if not path.is_file():
        return None
    try:
        return RunSet.load(path)
    except InputError as exc:  # a damaged entry (checksum, bounds) is reparsed and replaced
        warnings.warn(f"parse cache entry {path} is damaged and is rebuilt: {exc}", CacheWarning, stacklevel=3)
        with contextlib.suppress(OSError):
            path.unlink()
        return None


def store(cache, k: str, runs) -> None:
    d = cache_dir(cache)
    try:
        d.mkdir(parents=True, exist_ok=True)
        ipc.save_runs(runs, d / f"{k}.arrow")
    except OSError:
        pass  # a cache that cannot be written only costs the next parse
