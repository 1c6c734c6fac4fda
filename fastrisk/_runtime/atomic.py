"""Atomic file writes: a temporary file in the target's directory, renamed over it on success.

A failure at any point (a full disk, an exception while formatting, Ctrl-C) removes the
temporary file and leaves the previous file, if any, exactly as it was. The rename is
``os.replace`` (atomic on POSIX and Windows within one file system); the data is fsynced
first, so a crash never leaves a renamed but empty file. Targets that are not regular files
(``/dev/stdout``, a FIFO) are written directly.

`file_lock` serialises processes that write one file (a sweep's result and checkpoint, a fit
cache entry): an advisory ``flock`` on a hidden ``.NAME.lock`` beside it while they write.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock; file_lock then locks nothing
    fcntl = None

__all__ = ["Locked", "atomic_open", "file_lock", "save_figure", "write_bytes", "write_parquet", "write_text"]

_UMASK_LOCK = threading.Lock()
_UMASK: int | None = None


def _umask() -> int:
    global _UMASK
    if _UMASK is None:
        with _UMASK_LOCK:
            if _UMASK is None:
                current = os.umask(0o022)
                os.umask(current)
                _UMASK = current
    return _UMASK


def _target(path, follow_symlinks: bool) -> Path:
    path = Path(path)
    return Path(os.path.realpath(path)) if follow_symlinks and path.is_symlink() else path


def _is_special(path: Path, follow_symlinks: bool) -> bool:
    try:
        mode = (path.stat() if follow_symlinks else path.lstat()).st_mode
    except FileNotFoundError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISLNK(mode))


@contextlib.contextmanager
def atomic_open(path, mode: str = "w", *, encoding: str | None = "utf-8", newline: str | None = None,
                follow_symlinks: bool = True):
    """``open(path, mode)`` that writes a temporary file and renames it to ``path`` only when
    the block ends without an exception. ``mode`` is ``"w"`` (text) or ``"wb"``.

    The temporary file is made by `tempfile.mkstemp` in the target's directory (a random name,
    ``O_CREAT | O_EXCL``: a file or symlink planted there is never opened). A user's output
    path that is a symlink is written through (its target is replaced); ``follow_symlinks=False``
    (the caches, in directories other users may share) replaces the link itself instead, so a
    planted link cannot make fastrisk overwrite the file it points to. Every error names the
    target and leaves no temporary file behind."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open mode must be 'w' or 'wb', got {mode!r}")
    target = _target(path, follow_symlinks)
    kwargs = {} if "b" in mode else {"encoding": encoding, "newline": newline}
    if _is_special(target, follow_symlinks):
        with open(target, mode, **kwargs) as fh:
            yield fh
        return
    directory = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:  # no such directory, no permission, a full disk: name the target, not the temporary
        raise OSError(exc.errno, f"cannot write {target}: {exc.strerror or exc}", str(target)) from None
    try:
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        try:
            st = target.stat() if follow_symlinks else target.lstat()
            if stat.S_ISLNK(st.st_mode):
                raise FileNotFoundError(str(target))  # a link replaced, not followed: default bits
            mode_bits = stat.S_IMODE(st.st_mode)
        except FileNotFoundError:
            mode_bits = 0o666 & ~_umask()
        os.chmod(tmp, mode_bits)
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError) and exc.errno is not None:
            raise OSError(exc.errno, f"cannot write {target}: {exc.strerror or exc} (the previous file, if any, "
                                     "is unchanged)", str(target)) from None
        raise
    _fsync_dir(directory)


def _fsync_dir(directory: Path) -> None:
    """Make the rename durable (best effort: not every platform can open a directory)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_bytes(path, data: bytes, *, follow_symlinks: bool = True) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path, "wb", follow_symlinks=follow_symlinks) as fh:
        fh.write(data)


def write_text(path, text: str, *, encoding: str = "utf-8", follow_symlinks: bool = True) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_open(path, "w", encoding=encoding, newline="", follow_symlinks=follow_symlinks) as fh:
        fh.write(text)


def write_parquet(table, path, **kwargs) -> None:
    """``pyarrow.parquet.write_table(table, path, **kwargs)``, atomically."""
    import pyarrow.parquet as pq  # ~0.15 s to import, needed for Parquet only

    with atomic_open(path, "wb") as fh:
        pq.write_table(table, fh, **kwargs)


def save_figure(fig, path, **kwargs) -> None:
    """``fig.savefig(path, **kwargs)``, atomically (the format from ``path``'s suffix unless given)."""
    kwargs.setdefault("format", Path(path).suffix.lstrip(".").lower() or None)
    with atomic_open(path, "wb") as fh:
        fig.savefig(fh, **kwargs)


class Locked(OSError):
    """`file_lock(..., wait=False)` found the lock held by another process."""


def lock_path(path) -> Path:
    """The lock file of ``path``: ``.NAME.lock`` in the same directory."""
    path = Path(path)
    return path.with_name(f".{path.name}.lock")


@contextlib.contextmanager
def file_lock(path, *, wait: bool = True):
    """Hold an exclusive advisory lock (``flock``) on ``path``'s lock file (`lock_path`) for the
    block: other processes taking it wait (``wait=True``) or get `Locked` (``wait=False``). The
    lock goes with the process (a killed holder releases it, leaving the empty lock file). The
    holder removes the lock file before it lets go, and a taker whose locked file is no longer
    the one at the path (removed meanwhile) takes the new one: no lock file stays behind, and
    no two processes ever hold the lock of one path. No lock where the platform has no
    ``flock`` (Windows)."""
    if fcntl is None:
        yield None
        return
    lock = lock_path(path)
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            try:
                same = os.stat(lock).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
        except BlockingIOError:
            os.close(fd)
            raise Locked(f"{path} is being written by another process (it holds {lock})") from None
        except BaseException:
            os.close(fd)
            raise
        if same:
            break
        os.close(fd)  # the holder before us removed that file: take the one at the path now
    try:
        yield lock
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock)
        os.close(fd)  # releases the lock
