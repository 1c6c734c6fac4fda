"""Deliberately plain, line-by-line readers for TREC runs and qrels (the pre-compiled readers).

Never imports fastrisk. ``read_run`` returns ``(tag, {topic: [docid, ...]})`` with each
topic's documents ordered as trec_eval/gdeval order them (score descending, document id
descending); ``read_qrels`` returns ``{topic: {docid: grade}}`` in order of first appearance.
Malformed lines raise ``ValueError`` with ``"<path>, line <n>: ..."``. As the compiled reader
does, a UTF-8 byte-order mark is dropped and qrels ``#`` comment lines are skipped.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import math


def _lines(path):
    with open(path, "rb") as fh:
        raw = fh.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    elif raw[:3] == b"BZh":
        raw = bz2.decompress(raw)
    elif raw[:6] == b"\xfd7zXZ\x00":
        raw = lzma.decompress(raw)
    text = raw.decode("utf-8")
    text = text.removeprefix("\ufeff")
    # universal newlines, as Python's text mode reads them
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def read_run(path):
    per_topic: dict[str, list] = {}
    seen: dict[str, set] = {}
    tag = None
    for lineno, line in enumerate(_lines(path), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6:
            raise ValueError(f"{path}, line {lineno}: a TREC run line has 6 columns "
                             f"(topic Q0 docid rank score tag), found {len(parts)}")
        topic, _q0, doc, rank, score, run_tag = parts
        try:
            int(rank)
        except ValueError:
            raise ValueError(f"{path}, line {lineno}: rank {rank!r} is not an integer") from None
        try:
            value = float(score)
        except ValueError:
            raise ValueError(f"{path}, line {lineno}: score {score!r} is not a number") from None
        if math.isnan(value):
            raise ValueError(f"{path}, line {lineno}: score is NaN")
        if doc in seen.setdefault(topic, set()):
            raise ValueError(f"{path}, line {lineno}: document {doc!r} appears twice for topic {topic}")
        seen[topic].add(doc)
        tag = run_tag if tag is None else tag
        per_topic.setdefault(topic, []).append((value, doc))
    if tag is None:
        raise ValueError(f"{path}: run file is empty")
    return tag, {t: [d for _, d in sorted(v, reverse=True)] for t, v in per_topic.items()}


def read_qrels(path):
    judg: dict[str, dict[str, int]] = {}
    for lineno, line in enumerate(_lines(path), 1):
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        if len(parts) != 4:
            raise ValueError(f"{path}, line {lineno}: a qrels line has 4 columns "
                             f"(topic iteration docid grade), found {len(parts)}")
        topic, _it, doc, grade = parts
        try:
            g = int(grade)
        except ValueError:
            raise ValueError(f"{path}, line {lineno}: grade {grade!r} is not an integer") from None
        prev = judg.setdefault(topic, {}).get(doc)
        if prev is not None and prev != g:
            raise ValueError(f"{path}, line {lineno}: document {doc!r} judged twice for topic {topic} "
                             f"with different grades ({prev} and {g})")
        judg[topic][doc] = g
    if not judg:
        raise ValueError(f"{path}: qrels file is empty")
    return judg


def topic_order(topics):
    """Numeric order when every topic id is an integer, else lexicographic."""
    topics = set(topics)
    try:
        return sorted(topics, key=lambda t: (int(t), t))
    except ValueError:
        return sorted(topics)
