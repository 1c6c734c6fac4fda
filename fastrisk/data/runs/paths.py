"""The run files a read names: paths and directories expanded to files (`expand_paths`), and a
system's name from its file name when the runs' tags collide (`stem`)."""

from __future__ import annotations

import os
from pathlib import Path

from fastrisk._runtime.validation import not_a_regular_file
from fastrisk.errors import InputError

_RUN_SUFFIXES = (".gz", ".run", ".txt", ".trec", ".res", ".tsv")


def expand_paths(paths, pattern=None) -> tuple[list[Path], list[bool]]:
    """Files to read, and whether each came from a directory listing without a pattern
    (such files are skipped, with a warning, when they are not runs)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if not isinstance(paths, (list, tuple)):
        raise InputError(f"`runs` must be run file paths, a directory or an in-memory source, got {type(paths).__name__}")
    out: list[Path] = []
    optional: list[bool] = []
    for p in paths:
        if not isinstance(p, (str, os.PathLike)):
            raise InputError(f"`runs` entries must be paths, got {type(p).__name__}")
        p = Path(p)
        if p.is_dir():
            files = sorted(q for q in (p.glob(pattern) if pattern else p.iterdir())
                           if q.is_file() and not q.name.startswith("."))
            if not files:
                raise InputError(f"run directory {str(p)!r} holds no files" + (f" matching {pattern!r}" if pattern else ""))
            out.extend(files)
            optional.extend([pattern is None] * len(files))
        elif p.is_file():
            out.append(p)
            optional.append(False)
        else:
            raise InputError(not_a_regular_file(p) or f"run file {str(p)!r} does not exist")
    if not out:
        raise InputError("`runs` must name at least one run file or directory")
    return out, optional


def stem(path: Path) -> str:
    name = path.name
    changed = True
    while changed:
        changed = False
        for suf in _RUN_SUFFIXES:
            if name.lower().endswith(suf) and len(name) > len(suf):
                name = name[: -len(suf)]
                changed = True
    return name
