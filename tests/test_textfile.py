"""The bytes layer of every text reader (`fastrisk.data.textfile`): one compression sniffing,
byte-order mark and UTF-8 check, used by the matrix readers and the run and qrels readers."""

from __future__ import annotations

import bz2
import gzip
import lzma
import re
from pathlib import Path

import pyarrow as pa
import pytest

from fastrisk.data import textfile
from fastrisk.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
TEXT = b"\xef\xbb\xbf151 Q0 d1 1 1.0 t\n151 Q0 d2 2 0.5 t\n"


def _write(path: Path, kind: str | None, data: bytes = TEXT) -> Path:
    if kind == "zstd":
        with pa.CompressedOutputStream(pa.OSFile(str(path), "wb"), "zstd") as fh:
            fh.write(data)
        return path
    packed = {None: bytes, "gzip": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[kind](data)
    path.write_bytes(packed)
    return path


@pytest.mark.parametrize("kind", [None, "gzip", "bz2", "xz", "zstd"])
def test_every_compression_is_sniffed_from_its_magic_bytes_not_its_suffix(tmp_path, kind):
    path = _write(tmp_path / "file.txt", kind)  # the suffix says nothing
    assert textfile.compression(path) == kind
    text = textfile.read_text(path)
    assert text.data == TEXT[3:] and text.ascii and text.lines >= 2  # the BOM dropped
    with textfile.open_text(path) as fh:
        assert fh.read() == TEXT[3:].decode()
    assert textfile.read_head(path, 1 << 16) == (None if kind == "zstd" else TEXT[3:])


def test_not_utf8_names_the_file_line_and_byte(tmp_path):
    path = _write(tmp_path / "bad.txt.gz", "gzip", b"a b\nc \xff\n")
    with pytest.raises(InputError, match=r"bad\.txt\.gz, line 2: not UTF-8 text \(byte 0xff\)"):
        textfile.read_text(path)


def test_damaged_or_unreadable_files_name_the_file(tmp_path):
    raw = gzip.compress(TEXT * 1000)
    cut = tmp_path / "cut.gz"
    cut.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(InputError, match=r"cut\.gz: cannot decompress \(EOFError: .*truncated or corrupt"):
        textfile.read_text(cut)
    assert textfile.read_head(cut, 100) == (TEXT * 1000)[3:100]  # what the start inflates to: no error
    with pytest.raises(InputError, match=r"missing\.txt: cannot read"):
        textfile.read_text(tmp_path / "missing.txt")
    with pytest.raises(InputError, match=r"missing\.txt: cannot read"):
        textfile.read_head(tmp_path / "missing.txt", 10)
    bad = tmp_path / "bad.gz"
    bad.write_bytes(b"\x1f\x8b" + b"\xff" * 40)  # not deflate
    with pytest.raises(InputError, match=r"bad\.gz: cannot decompress"):
        textfile.read_head(bad, 10)


def test_line_of_counts_every_line_break():
    assert [textfile.line_of(b"a\nb\r\nc\rd", p) for p in (0, 2, 5, 7)] == [1, 2, 3, 4]


def test_compression_is_sniffed_in_one_module_only():
    """The magic bytes are written once: the matrix readers and the run readers share them."""
    magic = re.compile(r"\\x1f\\x8b|BZh|\\xfd7zXZ|\\x28\\xb5\\x2f\\xfd")
    holders = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "fastrisk").rglob("*.py")
                     if magic.search(p.read_text(encoding="utf-8")))
    assert holders == ["fastrisk/data/textfile.py"]
