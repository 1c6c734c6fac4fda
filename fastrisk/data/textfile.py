"""The bytes layer of every text reader: compression sniffed from a file's first bytes (gzip,
bz2, xz, zstd; never its suffix), decompression, the UTF-8 byte-order mark, and UTF-8
validation whose error names the file and line.

Two ways in, one sniffing: `read_text` reads a file whole (the TREC run and qrels readers,
`fastrisk.data.runs`: they scan all of it at once), `open_binary` / `open_text` stream it (the
matrix readers, `fastrisk.data.io`: Arrow's CSV reader and line-by-line formats), `read_head`
inflates only the start (telling a run from another file)."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from fastrisk._kernels import parse as _kp
from fastrisk.errors import InputError

#: Compression by magic bytes (the file's first bytes).
MAGIC = (("gzip", b"\x1f\x8b"), ("bz2", b"BZh"), ("xz", b"\xfd7zXZ\x00"), ("zstd", b"\x28\xb5\x2f\xfd"))
#: Suffixes of compressed files (any case): not the file's format, which the suffix before says.
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".zstd")
#: The UTF-8 byte-order mark (dropped at the start of a file).
BOM = b"\xef\xbb\xbf"
#: What a damaged compressed stream raises (gzip, bz2, xz, and Arrow's zstd codec).
DECOMPRESS_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError, ValueError, pa.ArrowException)


def compression_of(head: bytes) -> str | None:
    """``gzip``, ``bz2``, ``xz`` or ``zstd`` from a file's first (at least 6) bytes, else None."""
    return next((kind for kind, magic in MAGIC if head.startswith(magic)), None)


def compression(path) -> str | None:
    """`compression_of` the first bytes of the file ``path``."""
    with open(path, "rb") as fh:
        return compression_of(fh.read(6))


def open_binary(path):
    """The decompressed bytes of ``path`` as a stream (gzip, bz2 and xz by the standard library,
    zstd by pyarrow's codec), or the file itself."""
    kind = compression(path)
    if kind == "gzip":
        return gzip.open(path, "rb")
    if kind == "bz2":
        return bz2.open(path, "rb")
    if kind == "xz":
        return lzma.open(path, "rb")
    if kind == "zstd":
        return io.BufferedReader(pa.CompressedInputStream(pa.OSFile(str(path)), "zstd"))  # lines, as the others
    return open(path, "rb")


def open_text(path):
    """A text handle on `open_binary` that drops a UTF-8 byte-order mark (``utf-8-sig``)."""
    return io.TextIOWrapper(open_binary(path), encoding="utf-8-sig")


try:  # ISA-L's inflate: about twice zlib's speed, the same bytes (concatenated members too)
    from isal import isal_zlib
    from isal.igzip import decompress as _gunzip_members
except ImportError:  # pragma: no cover - isal is a dependency; zlib when a platform lacks a wheel
    isal_zlib = None
    _gunzip_members = gzip.decompress


def _gunzip(raw: bytes) -> bytes:
    """Inflate a gzip file: one member in one call (the usual file), else member by member."""
    if isal_zlib is not None:
        d = isal_zlib.decompressobj(31)
        out = d.decompress(raw)
        if d.eof and not d.unused_data.strip(b"\x00"):
            return out
    return _gunzip_members(raw)


def decompress(path, raw: bytes) -> bytes:
    """The whole file ``raw`` (read from ``path``) decompressed by its magic bytes; a damaged
    stream is an `InputError` naming the file."""
    kind = compression_of(raw[:6])
    try:
        if kind == "gzip":
            return _gunzip(raw)
        if kind == "bz2":
            return bz2.decompress(raw)
        if kind == "xz":
            return lzma.decompress(raw)
        if kind == "zstd":
            with pa.CompressedInputStream(pa.BufferReader(raw), "zstd") as fh:
                return fh.read()
    except DECOMPRESS_ERRORS as exc:
        raise InputError(f"{path}: cannot decompress ({type(exc).__name__}: {exc}); "
                         "the file is truncated or corrupt") from None
    return raw


def read_head(path, nbytes: int) -> bytes | None:
    """The decompressed start of ``path``: what its first ``nbytes`` bytes inflate to (at most
    ``nbytes``; a stream cut there is no error), without a byte-order mark. None for zstd
    (Arrow's codec inflates no partial stream). Unreadable or damaged: an `InputError` naming it."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(nbytes)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    kind = compression_of(head[:6])
    try:
        if kind == "gzip":
            head = zlib.decompressobj(47).decompress(head, nbytes)
        elif kind == "bz2":
            head = bz2.BZ2Decompressor().decompress(head, nbytes)
        elif kind == "xz":
            head = lzma.LZMADecompressor().decompress(head, nbytes)
        elif kind == "zstd":
            return None
    except (OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
        raise InputError(f"{path}: cannot decompress ({exc})") from None
    return head.removeprefix(BOM)


def line_of(data: bytes, pos: int) -> int:
    """1-based line number of byte ``pos`` (line breaks ``\\n``, ``\\r\\n``, lone ``\\r``)."""
    head = data[:pos]
    return head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n") + 1


@dataclass
class TextBytes:
    """A text file read whole: ``data`` decompressed, without a byte-order mark and checked to
    be UTF-8; ``view`` the same bytes as uint8; ``lines`` an upper bound on its number of lines;
    ``ascii`` whether every byte is ASCII."""

    path: Path
    view: np.ndarray
    data: bytes
    lines: int
    ascii: bool


def read_text(path) -> TextBytes:
    """``path`` read whole as `TextBytes` (decompression, byte-order mark, UTF-8 check and line
    count in one pass over the text). Not UTF-8: an `InputError` naming the file, the line and
    the byte."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    data = decompress(path, raw)
    if data[:3] == BOM:
        data = data[3:]
    view = np.frombuffer(data, dtype=np.uint8)
    ascii, lines = _kp.ascii_lines(view)
    if not ascii:  # ASCII (the usual case) is UTF-8; check the rest
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}, line {line_of(data, exc.start)}: not UTF-8 text "
                             f"(byte {data[exc.start]:#04x})") from None
    return TextBytes(path, view, data, int(lines), bool(ascii))
