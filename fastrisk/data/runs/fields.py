"""The fields of a whitespace-separated TREC text file (runs, qrels): one compiled scan
(`fastrisk._kernels.parse.tokenize`) over the bytes of `fastrisk.data.textfile.read_text`,
string columns as Arrow arrays, numbers parsed with Python's semantics, and the first fault of
a file by line (`Faults`) or of an in-memory source by row (`RowFaults`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fastrisk._kernels import parse as _kp
from fastrisk.data.textfile import read_text
from fastrisk.errors import InputError


def _strings(data: np.ndarray, starts: np.ndarray, ends: np.ndarray, col: int, n: int) -> pa.StringArray:
    """Field ``col`` of records ``0..n-1`` (byte ranges ``starts``/``ends``) as an Arrow string array."""
    total = int(_kp.field_bytes(starts, ends, col, n))
    large = total >= 2**31 - 1
    offsets = np.empty(n + 1, np.int64 if large else np.int32)
    out = np.empty(max(total, 1), np.uint8)
    _kp.gather(data, starts, ends, col, n, offsets, out)
    typ = pa.large_string() if large else pa.string()
    return pa.Array.from_buffers(typ, n, [None, pa.py_buffer(offsets), pa.py_buffer(out)])


@dataclass
class _Fields:
    path: Path
    data: np.ndarray
    raw: bytes
    starts: np.ndarray
    ends: np.ndarray
    lines: np.ndarray
    n: int
    bad_line: int  # first line with a wrong number of fields (0 = none)
    bad_count: int

    def column(self, col: int) -> pa.StringArray:
        return _strings(self.data, self.starts, self.ends, col, self.n)

    def token(self, r: int, col: int) -> str:
        return self.raw[int(self.starts[r, col]):int(self.ends[r, col])].decode("utf-8")


def scan(path, ncols: int, comments: bool) -> _Fields:
    text = read_text(path)
    path, data, raw, cap = text.path, text.view, text.data, text.lines
    starts = np.empty((cap, ncols), np.int64)
    ends = np.empty((cap, ncols), np.int64)
    lines = np.empty(cap, np.int64)
    n, bad_line, bad_count = _kp.tokenize(data, ncols, comments, starts, ends, lines)
    return _Fields(path, data, raw, starts, ends, lines, int(n), int(bad_line), int(bad_count))


class _Faults:
    """The first fault of a file by line (ties: the order checks are added)."""

    def __init__(self, fields: _Fields):
        self.fields = fields
        self.best: tuple[int, int, str] | None = None
        self.k = 0
        if fields.bad_line:
            self.add_line(fields.bad_line, None)

    def add_line(self, line: int, message) -> None:
        key = (line, self.k)
        self.k += 1
        if self.best is None or key < self.best[:2]:
            self.best = (line, key[1], message)

    def add(self, record: int, message: str) -> None:
        if record >= 0:
            self.add_line(int(self.fields.lines[record]), message)

    def raise_first(self, column_message) -> None:
        if self.best is None:
            return
        line, _, message = self.best
        if message is None:
            message = column_message(self.fields.bad_count)
        raise InputError(f"{self.fields.path}, line {line}: {message}")


def _first_bad_int(f: _Fields, col: int) -> int:
    """First record whose field is not an integer by Python's ``int()`` (-1 if none)."""
    start = 0
    while start < f.n:
        r = int(_kp.first_bad_integer(f.data, f.starts[start:], f.ends[start:], col, f.n - start))
        if r < 0:
            return -1
        r += start
        try:
            int(f.token(r, col))
        except ValueError:
            return r
        start = r + 1
    return -1


def _floats(f: _Fields, col: int) -> tuple[np.ndarray, int]:
    """Field ``col`` as float64 (Python's ``float()`` semantics) and the first bad record."""
    strings = f.column(col)
    try:
        return pc.cast(strings, pa.float64()).to_numpy(zero_copy_only=False), -1
    except pa.ArrowInvalid:
        pass
    out = np.empty(f.n, np.float64)  # rare path: forms Arrow does not parse (e.g. "1_0")
    for r, s in enumerate(strings.to_pylist()):
        try:
            out[r] = float(s)
        except ValueError:
            return out, r
    return out, -1


def _codes(arr: pa.Array) -> tuple[np.ndarray, pa.Array]:
    enc = pc.dictionary_encode(arr)
    return enc.indices.to_numpy(zero_copy_only=False).astype(np.int32, copy=False), enc.dictionary


class RowFaults:
    """Faults of an in-memory source, reported by row (0-based) instead of file line."""

    def __init__(self, label: str):
        self.label = label
        self.best = None

    def add(self, record: int, message: str) -> None:
        if record >= 0 and (self.best is None or record < self.best[0]):
            self.best = (record, message)

    def raise_first(self, _column_message=None) -> None:
        if self.best is not None:
            raise InputError(f"{self.label}, row {self.best[0]}: {self.best[1]}")
