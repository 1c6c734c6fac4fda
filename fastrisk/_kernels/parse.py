"""Byte scanners for whitespace-separated TREC text (runs and qrels), and the run encoder.

A file is scanned once as a ``uint8`` array. Lines end at ``\\n``, ``\\r\\n`` or a lone
``\\r`` (Python's universal newlines); fields are separated by runs of ASCII whitespace
(space, tab, ``\\v``, ``\\f``, ``\\x1c``-``\\x1f``, as ``str.split()`` does for ASCII).
Blank lines are skipped, and with ``comments`` so are lines whose first field starts
with ``#``.
"""

from __future__ import annotations

import numpy as np

from fastrisk._kernels._jit import njit

#: Byte classes: 0 field byte, 1 field separator, 2 line break.
_CLASS = np.zeros(256, np.uint8)
_CLASS[[32, 9, 11, 12, 28, 29, 30, 31]] = 1
_CLASS[[10, 13]] = 2


@njit
def _is_space(c):
    return c == 32 or c == 9 or c == 11 or c == 12 or (28 <= c <= 31)


@njit
def all_ascii(data):
    for i in range(data.shape[0]):
        if data[i] >= 128:
            return False
    return True


@njit
def count_lines(data):
    """Upper bound on the number of records: line breaks + 1."""
    n = 1
    for i in range(data.shape[0]):
        n += (data[i] == 10) | (data[i] == 13)
    return n


@njit
def ascii_lines(data):
    """(whether every byte is ASCII, `count_lines`) in one pass, without branches."""
    n = 1
    high = 0
    for i in range(data.shape[0]):
        c = data[i]
        n += (c == 10) | (c == 13)
        high |= c
    return high < 128, n


@njit
def tokenize(data, ncols, comments, starts, ends, lines):
    """Split ``data`` into records of exactly ``ncols`` fields.

    Fills ``starts[r, c]``/``ends[r, c]`` (byte offsets of field ``c`` of record ``r``) and
    ``lines[r]`` (1-based line number). Returns ``(n_records, bad_line, bad_count)``; on the
    first line with a number of fields other than ``ncols`` it stops with ``bad_line`` > 0
    and ``bad_count`` the number of fields found on that line.
    """
    n = data.shape[0]
    cls = _CLASS
    i = 0
    line = 1
    r = 0
    while i < n:
        # one line: [i, j) without its terminator
        j = i
        while j < n and cls[data[j]] != 2:
            j += 1
        nf = 0
        k = i
        skip = False
        while k < j:
            while k < j and cls[data[k]] == 1:
                k += 1
            if k >= j:
                break
            s = k
            while k < j and cls[data[k]] == 0:
                k += 1
            if nf == 0 and comments and data[s] == 35:
                skip = True
                break
            if nf < ncols:
                starts[r, nf] = s
                ends[r, nf] = k
            nf += 1
        if not skip and nf > 0:
            if nf != ncols:
                return r, line, nf
            lines[r] = line
            r += 1
        # past the terminator
        if j < n and data[j] == 13 and j + 1 < n and data[j + 1] == 10:
            j += 1
        i = j + 1
        line += 1
    return r, 0, 0


@njit
def gather(data, starts, ends, col, n, offsets, out):
    """Copy field ``col`` of records ``0..n-1`` into ``out`` (Arrow string layout, ``offsets``)."""
    pos = 0
    offsets[0] = 0
    for r in range(n):
        s = starts[r, col]
        e = ends[r, col]
        for q in range(s, e):
            out[pos] = data[q]
            pos += 1
        offsets[r + 1] = pos
    return pos


@njit
def field_bytes(starts, ends, col, n):
    total = 0
    for r in range(n):
        total += ends[r, col] - starts[r, col]
    return total


@njit
def first_bad_integer(data, starts, ends, col, n):
    """First record whose field ``col`` is not ``[+-]?[0-9]+`` (-1 if none)."""
    for r in range(n):
        s = starts[r, col]
        e = ends[r, col]
        if data[s] == 43 or data[s] == 45:
            s += 1
        if s >= e:
            return r
        for q in range(s, e):
            if data[q] < 48 or data[q] > 57:
                return r
    return -1


@njit
def parse_small_int(data, starts, ends, col, n, lo, hi, out):
    """Parse ``[+-]?[0-9]+`` fields into ``out``; returns the first record outside ``[lo, hi]``
    or not of that form (-1 if none)."""
    for r in range(n):
        s = starts[r, col]
        e = ends[r, col]
        neg = False
        if data[s] == 43 or data[s] == 45:
            neg = data[s] == 45
            s += 1
        if s >= e:
            return r
        v = 0
        for q in range(s, e):
            c = np.int64(data[q])  # widened: uint8 arithmetic would wrap (plain Python under NUMBA_DISABLE_JIT)
            if c < 48 or c > 57:
                return r
            if v <= hi + 1:
                v = v * 10 + (c - 48)
        if neg:
            v = -v
        if v < lo or v > hi:
            return r
        out[r] = v
    return -1


@njit
def first_repeat_grouped(topic, doc, n_docs):
    """First record whose (topic, doc) pair occurred before, when every topic's records are
    contiguous (checked: returns -2 if a topic reappears after another); -1 if none."""
    n = topic.shape[0]
    mark = np.full(n_docs, -1, np.int64)
    seen = np.zeros(n + 1, np.bool_)
    seg = -1
    for r in range(n):
        if r == 0 or topic[r] != topic[r - 1]:
            if seen[topic[r]]:
                return -2
            seen[topic[r]] = True
            seg += 1
        d = doc[r]
        if mark[d] == seg:
            return r
        mark[d] = seg
    return -1


@njit
def _bytes_greater(data, s1, e1, s2, e2):
    """``data[s1:e1] > data[s2:e2]`` bytewise (UTF-8 byte order is code point order)."""
    n1 = e1 - s1
    n2 = e2 - s2
    for q in range(min(n1, n2)):
        a = data[s1 + q]
        b = data[s2 + q]
        if a != b:
            return a > b
    return n1 > n2


@njit
def rank_order(data, starts, ends, doc_col, topic, score, n_topics, max_tie, order):
    """Records in rank order within topics (score descending, document name descending).

    Fast path for the usual file layout: each topic's records contiguous with scores
    non-increasing; only groups of tied scores (at most ``max_tie`` records) are sorted, by
    insertion on the name bytes. Fills ``order`` and returns True, or returns False when the
    layout does not fit (the caller then sorts everything).
    """
    n = topic.shape[0]
    seen = np.zeros(n_topics, np.bool_)
    for r in range(n):
        order[r] = r
        if r == 0 or topic[r] != topic[r - 1]:
            if seen[topic[r]]:
                return False
            seen[topic[r]] = True
        elif score[r - 1] < score[r]:
            return False
    r = 0
    while r < n:
        e = r + 1
        while e < n and topic[e] == topic[r] and score[e] == score[r]:
            e += 1
        if e - r > max_tie:
            return False
        for i in range(r + 1, e):  # insertion sort of order[r:e], names descending
            x = order[i]
            j = i - 1
            while j >= r and _bytes_greater(data, starts[x, doc_col], ends[x, doc_col],
                                            starts[order[j], doc_col], ends[order[j], doc_col]):
                order[j + 1] = order[j]
                j -= 1
            order[j + 1] = x
        r = e
    return True


@njit
def is_identity(order):
    for i in range(order.shape[0]):
        if order[i] != i:
            return False
    return True


@njit
def place(order, topic, gdoc, s, out, lengths):
    """Write system ``s``'s records into ``out[s, t, rank]`` (global document codes), taking
    records in the sequence ``order`` (rank order within each topic; empty: file order)."""
    ident = order.shape[0] == 0
    for i in range(topic.shape[0]):
        r = i if ident else order[i]
        t = topic[r]
        out[s, t, lengths[s, t]] = gdoc[r]
        lengths[s, t] += 1


@njit
def encode_dense(docs, lengths, n_global, ranked, best_rank, offsets):
    """Re-encode global document codes in ``docs`` (in place) to dense per-topic ids.

    Within a topic, ids follow first appearance in rank-major order (rank, then system), i.e.
    by best rank. ``ranked[offsets[t] + id]`` receives the global code of each id and
    ``best_rank`` its best (0-based) rank.
    """
    S, T, D = docs.shape
    stamp = np.full(n_global, -1, np.int64)
    newid = np.zeros(n_global, np.int32)
    pos = 0
    offsets[0] = 0
    for t in range(T):
        start = pos
        for r in range(D):
            for s in range(S):
                if r < lengths[s, t]:
                    g = docs[s, t, r]
                    if stamp[g] != t:
                        stamp[g] = t
                        newid[g] = pos - start
                        ranked[pos] = g
                        best_rank[pos] = r
                        pos += 1
                    docs[s, t, r] = newid[g]
        offsets[t + 1] = pos
    return pos
