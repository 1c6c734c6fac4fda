"""Byte scanners for whitespace-separated TREC text (runs and qrels), and the run encoder.

A file is scanned once as a ``uint8`` array. Lines end at ``\\n``, ``\\r\\n`` or a lone
``\\r`` (Python's universal newlines); fields are separated by runs of ASCII whitespace
(space, tab, ``\\v``, ``\\f``, ``\\x1c``-``\\x1f``, as ``str.split()`` does for ASCII).
Blank lines are skipped, and with ``comments`` so are lines whose first field starts
with ``#``.

Two tokenizers, on purpose. `tokenize` is the general one (any number of columns, comment
lines, the line of every record and of the first line with a wrong number of fields): the
qrels reader and every run file off the usual path use it, and the faults it finds are
reported by line. `scan_run` tokenizes only the usual run file (ASCII, six fields) and, in the
same pass, parses the scores, hashes the document names and finds the topic blocks; anything
unusual sends the file back to `tokenize`'s path, which gives the same result. Kept because
one pass is twice as fast as tokenizing first: the 8 TREC 2012 Web runs of
``benchmarks/bench_runs.py`` (259,144 lines, gzip) go from file to ranked, interned runs in
368 ms through `scan_run` and 757 ms through `tokenize` and the general path (medians of 7,
one thread, load average 8.3 on 2 cores; issue #40).
"""

from __future__ import annotations

import sys

import numba
import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

from fastrisk._kernels._jit import helper, njit

#: Byte classes: 0 field byte, 1 field separator, 2 line break.
_CLASS = np.zeros(256, np.uint8)
_CLASS[[32, 9, 11, 12, 28, 29, 30, 31]] = 1
_CLASS[[10, 13]] = 2


@helper
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


@helper
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


# ---------------------------------------------------------------------------------------
# the one-pass run scanner and the document interner (the fast path of `fastrisk.data.runs.runfile`)

#: Exact powers of ten: ``m * 10**e`` (or ``m / 10**-e``) with ``m <= 2**53`` and ``|e| <= 22``
#: is one correctly rounded operation on exact operands (Clinger's fast path).
_POW10 = np.array([10.0 ** k for k in range(23)], np.float64)
_TWO53 = np.uint64(1) << np.uint64(53)
_K1 = np.uint64(0x9E3779B97F4A7C15)
_K2 = np.uint64(0xBF58476D1CE4E5B9)
_K3 = np.uint64(0x94D049BB133111EB)


if numba.config.DISABLE_JIT:  # kernels run as plain Python
    def trailing_zeros(m):  # noqa: F811 - numba's intrinsic has no Python body
        """The number of trailing zero bits of ``m`` (not 0)."""
        m = int(m)
        return np.uint64((m & -m).bit_length() - 1)

    def prefetch(buf, i):
        """A hint that ``buf[i]`` will be read soon (nothing to do in plain Python)."""

    def load_u64(buf, i):
        """The eight bytes ``buf[i:i + 8]`` as one native-endian uint64 (any alignment)."""
        return np.frombuffer(buf[i:i + 8].tobytes(), np.uint64)[0]

    def store_u64(buf, i, v):
        """Write ``v`` to the eight bytes ``buf[i:i + 8]`` (native endianness, any alignment)."""
        buf[i:i + 8] = np.frombuffer(np.uint64(v).tobytes(), np.uint8)
else:
    _PREFETCH = "llvm.prefetch.p0" if llvm.llvm_version_info[0] >= 15 else "llvm.prefetch.p0i8"

    # Measured (2026-11-25, load 10, one thread, minima of 15 reads): without it the 8 TREC 2012
    # runs take 62 ms instead of 55-57, and interning the Robust-size set 96 ns a record instead of 42-55.
    @intrinsic
    def prefetch(typingctx, buf, i):
        """A hint that ``buf.flat[i]`` will be read soon (``llvm.prefetch``: read, all cache
        levels): a table probe's cache miss then overlaps the work on the records before it."""
        def codegen(context, builder, sig, args):
            data = context.make_array(sig.args[0])(context, builder, args[0]).data
            idx = context.cast(builder, args[1], sig.args[1], types.intp)
            i8p = ir.IntType(8).as_pointer()
            i32 = ir.IntType(32)
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                                _PREFETCH)
            builder.call(fn, [builder.bitcast(builder.gep(data, [idx]), i8p), ir.Constant(i32, 0),
                              ir.Constant(i32, 3), ir.Constant(i32, 1)])
            return context.get_dummy_value()

        return types.void(buf, i), codegen

    # Measured as `prefetch`: byte loops instead of eight-byte loads and stores (hashing, comparing,
    # copying names, finding field ends) read the 8 runs in 66 ms instead of 55-57; the stores alone 62.
    @intrinsic
    def load_u64(typingctx, buf, i):
        """The eight bytes ``buf[i:i + 8]`` as one native-endian uint64 (any alignment): one
        unaligned load instead of eight byte loads. The caller keeps ``i + 8 <= len(buf)``."""
        def codegen(context, builder, sig, args):
            data = context.make_array(sig.args[0])(context, builder, args[0]).data
            idx = context.cast(builder, args[1], sig.args[1], types.intp)
            ptr = builder.bitcast(builder.gep(data, [idx]), ir.IntType(64).as_pointer())
            return builder.load(ptr, align=1)

        return types.uint64(buf, i), codegen

    @intrinsic
    def store_u64(typingctx, buf, i, v):
        """Write ``v`` to the eight bytes ``buf[i:i + 8]`` (native endianness, any alignment)."""
        def codegen(context, builder, sig, args):
            data = context.make_array(sig.args[0])(context, builder, args[0]).data
            idx = context.cast(builder, args[1], sig.args[1], types.intp)
            ptr = builder.bitcast(builder.gep(data, [idx]), ir.IntType(64).as_pointer())
            builder.store(context.cast(builder, args[2], sig.args[2], types.uint64), ptr, align=1)
            return context.get_dummy_value()

        return types.void(buf, i, v), codegen


_ONES = np.uint64(0x0101010101010101)
_HIGHS = np.uint64(0x8080808080808080)


_LITTLE = sys.byteorder == "little"


@helper
def _below33(w):
    """The high bit of each byte of ``w`` below 33, for ASCII bytes (the ``hasless`` bit trick:
    a borrow can flag a byte above a flagged one, never below, so the lowest flag is exact)."""
    return (w - _ONES * np.uint64(33)) & ~w & _HIGHS


@helper
def hash_bytes(buf, s, e):
    """64-bit hash of ``buf[s:e]``: eight bytes per multiply, SplitMix64's finaliser at the end."""
    h = np.uint64(e - s) * _K1
    q = s
    while q + 8 <= e:
        h = (h ^ load_u64(buf, q)) * _K2
        h ^= h >> np.uint64(29)
        q += 8
    w = np.uint64(0)
    k = 0
    while q < e:
        w |= np.uint64(buf[q]) << np.uint64(8 * k)
        q += 1
        k += 1
    h = (h ^ w) * _K2
    h ^= h >> np.uint64(30)
    h *= _K3
    return h ^ (h >> np.uint64(31))


@njit
def hash_fields(buf, starts, ends, out):
    """`hash_bytes` of ``buf[starts[r, 0]:ends[r, 0]]`` for every record ``r``."""
    for r in range(out.shape[0]):
        out[r] = hash_bytes(buf, starts[r, 0], ends[r, 0])


@helper
def _same_bytes(a, sa, b, sb, n):
    """``a[sa:sa + n] == b[sb:sb + n]``, eight bytes at a time."""
    q = 0
    while q + 8 <= n:
        if load_u64(a, sa + q) != load_u64(b, sb + q):
            return False
        q += 8
    while q < n:
        if a[sa + q] != b[sb + q]:
            return False
        q += 1
    return True


@helper
def _copy_bytes(src, s, dst, d, n):
    """``dst[d:d + n] = src[s:s + n]``, eight bytes at a time."""
    q = 0
    while q + 8 <= n:
        store_u64(dst, d + q, load_u64(src, s + q))
        q += 8
    while q < n:
        dst[d + q] = src[s + q]
        q += 1


@helper
def _digits(data, q, e, m):
    """Append the decimal digits at ``data[q:e]`` to ``m``; returns ``(m, end of the digits)``."""
    while q < e:
        d = np.int64(data[q]) - 48  # widened: uint8 arithmetic would wrap
        if d < 0 or d > 9:
            break
        m = m * np.uint64(10) + np.uint64(d)
        q += 1
    return m, q


@helper
def _fast_float(data, s, e):
    """``(True, value)`` for ``[+-]?D+(.D+)?([eE][+-]?D+)?`` with at most 19 digits (leading
    zeros included), a mantissa up to 2**53 and a decimal exponent within 22 (then the value
    is exact: one correctly rounded operation on exact operands, Clinger's fast path);
    ``(False, 0.0)`` for anything else (the caller parses it)."""
    q = s
    neg = False
    if q < e and (data[q] == 45 or data[q] == 43):
        neg = data[q] == 45
        q += 1
    m, p = _digits(data, q, e, np.uint64(0))
    nd = p - q
    if nd == 0:
        return False, 0.0
    e10 = 0
    if p < e and data[p] == 46:
        m, q = _digits(data, p + 1, e, m)
        if q == p + 1:
            return False, 0.0
        e10 = p + 1 - q
        nd += q - p - 1
        p = q
    if nd > 19:
        return False, 0.0
    if p < e and (data[p] == 101 or data[p] == 69):
        p += 1
        eneg = False
        if p < e and (data[p] == 45 or data[p] == 43):
            eneg = data[p] == 45
            p += 1
        first = p
        x = 0
        while p < e and 48 <= data[p] <= 57:
            if x < 100000:
                x = x * 10 + (np.int64(data[p]) - 48)
            p += 1
        if p == first:
            return False, 0.0
        e10 += -x if eneg else x
    if p != e:
        return False, 0.0
    if m == 0:
        return True, -0.0 if neg else 0.0
    if m > _TWO53:
        return False, 0.0
    v = np.float64(np.int64(m))  # exact (m <= 2**53); the signed conversion is one instruction
    if 0 <= e10 <= 22:
        v = v * _POW10[e10]
    elif -22 <= e10 < 0:
        v = v / _POW10[-e10]
    else:
        return False, 0.0
    return True, -v if neg else v


@helper
def _skip_separators(data, i, n):
    while i < n and _CLASS[data[i]] == 1:
        i += 1
    return i


@helper
def _field_end(data, i, n):
    """End of the field starting at ``i`` (ASCII input): eight bytes at a time; on a
    little-endian machine the first byte below 33 is the lowest flagged one (`_below33`),
    found without a byte loop."""
    while i + 8 <= n:
        m = _below33(load_u64(data, i))
        if m == 0:
            i += 8
            continue
        if not _LITTLE:
            break
        p = i + np.int64(trailing_zeros(m) >> np.uint64(3))
        if _CLASS[data[p]] != 0:
            return p
        i = p + 1  # a control byte inside the field
    while i < n and (data[i] > 32 or _CLASS[data[i]] == 0):  # printable ASCII first
        i += 1
    return i


@helper
def _next_field(data, i, n):
    """``(start, end)`` of the next field of the line at ``i``, or ``(-1, i)`` at its end."""
    i = _skip_separators(data, i, n)
    if i >= n or _CLASS[data[i]] == 2:
        return -1, i
    return i, _field_end(data, i, n)


@njit
def scan_run(data, bounds, doc_start, doc_end, doc_hash, topic, score, slow_start, slow_end,
             topic_start, topic_end, topic_hash):
    """One pass over an ASCII run file (``topic Q0 docid rank score tag``) for the clean case.

    Per record ``r``: ``doc_start/doc_end[r, 0]`` the document's bytes, ``doc_hash[r]`` their
    `hash_bytes`, ``topic[r]`` a per-file topic code (first appearance; the codes' bytes in
    ``topic_start/topic_end``), ``score[r]`` the score when `_fast_float` takes it (else the
    field goes to ``slow_start/slow_end[k, 0]`` with ``score[r]`` = NaN, for the caller).
    ``bounds[0:2]`` receives the byte range of the first record's tag.

    Returns ``(n_records, n_topics, n_slow, doc_bytes)``, or ``n_records = -1`` at the first
    thing this path does not handle (a line without six fields, a rank that is not
    ``[+-]?[0-9]+``): the caller then reads the file with the general path, which reports
    faults by line.
    """
    n = data.shape[0]
    i = np.int64(0)  # not the literal 0: `_next_field` would be compiled for Literal[int](0) as well
    r = 0
    nt = 0
    ns = 0
    prev = -1
    total = 0
    while i < n:
        s0, e0 = _next_field(data, i, n)
        if s0 < 0:  # a blank line
            i = e0
        else:
            s1, e1 = _next_field(data, e0, n)  # past a line's end, (-1, the end) again
            s2, e2 = _next_field(data, e1, n)
            s3, e3 = _next_field(data, e2, n)
            s4, e4 = _next_field(data, e3, n)
            s5, e5 = _next_field(data, e4, n)
            s6, i = _next_field(data, e5, n)
            if min(s1, s2, s3, s4, s5) < 0 or s6 >= 0:  # not six fields
                return -1, 0, 0, 0
            # rank: [+-]?[0-9]+
            if data[s3] == 43 or data[s3] == 45:
                s3 += 1
            if s3 >= e3:
                return -1, 0, 0, 0
            for q in range(s3, e3):
                if data[q] < 48 or data[q] > 57:
                    return -1, 0, 0, 0
            # topic: the previous line's, or a lookup among the file's topics
            t = -1
            if prev >= 0 and topic_end[prev] - topic_start[prev] == e0 - s0 and \
                    _same_bytes(data, s0, data, topic_start[prev], e0 - s0):
                t = prev
            else:
                h = hash_bytes(data, s0, e0)
                for c in range(nt):
                    if topic_hash[c] == h and topic_end[c] - topic_start[c] == e0 - s0 and \
                            _same_bytes(data, s0, data, topic_start[c], e0 - s0):
                        t = c
                        break
                if t < 0:
                    t = nt
                    topic_start[nt] = s0
                    topic_end[nt] = e0
                    topic_hash[nt] = h
                    nt += 1
            prev = t
            topic[r] = t
            doc_start[r, 0] = s2
            doc_end[r, 0] = e2
            doc_hash[r] = hash_bytes(data, s2, e2)
            total += e2 - s2
            ok, v = _fast_float(data, s4, e4)
            if ok:
                score[r] = v
            else:
                score[r] = np.nan
                slow_start[ns, 0] = s4
                slow_end[ns, 0] = e4
                ns += 1
            if r == 0:
                bounds[0] = s5
                bounds[1] = e5
            r += 1
        if i < n:  # past the line break (\r\n is one)
            i += 2 if data[i] == 13 and i + 1 < n and data[i + 1] == 10 else 1
    return r, nt, ns, total


#: How many records ahead `intern_run` starts fetching what a record's probe will read.
_AHEAD = 12


@helper
def _record(seq, i):
    return i if seq.shape[0] == 0 else seq[i]


@helper
def _fetch(slots, ent, pool, base, mask, h, stage):
    """Prefetch what a probe for hash ``h`` reads first: its slot (stage 0), the slot's entry
    (1), the entry's name bytes (2); a later stage reads what an earlier one fetched."""
    if stage == 0:
        prefetch(slots, base + (h & mask))
        return
    c = slots[base + (h & mask)]
    if c < 0:
        return
    if stage == 1:
        prefetch(ent, 4 * c)
    else:
        prefetch(pool, ent[c, 1])
        prefetch(pool, ent[c, 1] + ent[c, 2] - 1)


@njit(inline="always")  # inlined at numba's level: as a call, interning was 7 % slower
def _probe(slots, base, mask, ent, pool, h, buf, s, ln):
    """``(slot, code)`` of the name ``buf[s:s + ln]`` (hash ``h``) in the region at ``base``:
    its code, or -1 and the empty slot where it would go."""
    j = h & mask
    while True:
        c = slots[base + j]
        if c < 0 or (ent[c, 0] == h and ent[c, 2] == ln and _same_bytes(pool, ent[c, 1], buf, s, ln)):
            return base + j, c
        j = (j + 1) & mask


@njit
def intern_run(buf, starts, ends, hashes, seq, seg_tid, seg_len, sbase, ssize, scount, slots, ent, pool, state, out):
    """Give a run's records codes in one table of document names per topic.

    Records are taken in the sequence ``seq`` (empty: 0, 1, ...): the next ``seg_len[k]``
    belong to topic ``seg_tid[k]``; record ``r``'s name is ``buf[starts[r, 0]:ends[r, 0]]``,
    its `hash_bytes` ``hashes[r]`` (as int64). Topic ``t``'s table is the open-addressing
    region ``slots[sbase[t]:sbase[t] + ssize[t]]`` (a power of two; -1 empty) of codes, shared
    by the topics: code ``c`` is ``ent[c]`` = (hash, offset of its bytes in ``pool``, length,
    the last topic group that met it). ``state`` = (codes, pool bytes used, group counter),
    updated. The caller makes room for every record first (codes, pool bytes, a region at
    most half full afterwards).

    A probe reads a slot, then its entry, then the name's bytes: three dependent cache misses
    once the tables outgrow the cache. They are fetched ahead in three stages (the slot
    `_AHEAD` records before the probe, its entry two thirds of the way, the bytes one third),
    so the misses of consecutive records overlap instead of following one another.

    ``out[i]`` receives the code of the ``i``-th record of the sequence. Returns -1, or the
    position of the first record whose document already appeared in its topic group.
    """
    ne = state[0]
    pu = state[1]
    stamp = state[2]
    i = np.int64(0)  # not the literal 0 (a second compile of `_record` for Literal[int](0))
    bad = -1
    for k in range(seg_tid.shape[0]):
        tid = seg_tid[k]
        base = sbase[tid]
        mask = ssize[tid] - 1
        stamp += 1
        added = 0
        end = i + seg_len[k]
        for _ in range(seg_len[k]):
            if i + _AHEAD < end:
                prefetch(slots, base + (hashes[_record(seq, i + _AHEAD)] & mask))
            if i + 2 * _AHEAD // 3 < end:
                c = slots[base + (hashes[_record(seq, i + 2 * _AHEAD // 3)] & mask)]
                if c >= 0:
                    prefetch(ent, 4 * c)
            if i + _AHEAD // 3 < end:
                c = slots[base + (hashes[_record(seq, i + _AHEAD // 3)] & mask)]
                if c >= 0:
                    prefetch(pool, ent[c, 1])
                    prefetch(pool, ent[c, 1] + ent[c, 2] - 1)
            r = _record(seq, i)
            h = hashes[r]
            s = starts[r, 0]
            ln = ends[r, 0] - s
            q, c = _probe(slots, base, mask, ent, pool, h, buf, s, ln)
            if c < 0:
                c = ne
                ne += 1
                added += 1
                slots[q] = c
                ent[c, 0] = h
                ent[c, 1] = pu
                ent[c, 2] = ln
                ent[c, 3] = stamp
                _copy_bytes(buf, s, pool, pu, ln)
                pu += ln
            else:
                bad = i if ent[c, 3] == stamp else -1  # met before in this topic group
                ent[c, 3] = stamp
            if bad >= 0:
                break
            out[i] = c
            i += 1
        scount[tid] += added
        if bad >= 0:
            break
    state[0] = ne
    state[1] = pu
    state[2] = stamp
    return bad


@njit
def move_regions(slots, sbase, ssize, topics, bases, sizes, ent):
    """Give each topic ``topics[k]`` the empty region of ``sizes[k]`` slots at ``bases[k]``,
    re-inserting the codes of its old region (see `intern_run`)."""
    for k in range(topics.shape[0]):
        t = topics[k]
        mask = sizes[k] - 1
        for q in range(sbase[t], sbase[t] + ssize[t]):
            c = slots[q]
            if c >= 0:
                j = ent[c, 0] & mask
                while slots[bases[k] + j] >= 0:
                    j = (j + 1) & mask
                slots[bases[k] + j] = c
        sbase[t] = bases[k]
        ssize[t] = sizes[k]


@njit
def gather_codes(pool, ent, codes, offsets, out):
    """The names of codes ``codes`` (see `intern_run`) as one Arrow string layout (``offsets``, ``out``)."""
    pos = 0
    offsets[0] = 0
    for i in range(codes.shape[0]):
        c = codes[i]
        _copy_bytes(pool, ent[c, 1], out, pos, ent[c, 2])
        pos += ent[c, 2]
        offsets[i + 1] = pos
    return pos


@njit
def lookup_docs(buf, starts, ends, hashes, row_tid, sbase, ssize, slots, ent, pool, out):
    """The code of each name ``buf[starts[i, 0]:ends[i, 0]]`` (`hash_bytes` ``hashes[i]``, as
    int64) in topic ``row_tid[i]``'s table (see `intern_run`, whose fetching ahead it shares),
    or -1 (no such topic or name)."""
    n = out.shape[0]
    for i in range(n):
        for stage, a in ((0, i + _AHEAD), (1, i + 2 * _AHEAD // 3), (2, i + _AHEAD // 3)):
            if a < n and row_tid[a] >= 0 and ssize[row_tid[a]] > 0:
                _fetch(slots, ent, pool, sbase[row_tid[a]], ssize[row_tid[a]] - 1, hashes[a], stage)
        out[i] = -1
        tid = row_tid[i]
        if tid >= 0 and ssize[tid] > 0:
            out[i] = _probe(slots, sbase[tid], ssize[tid] - 1, ent, pool, hashes[i], buf, starts[i, 0],
                            ends[i, 0] - starts[i, 0])[1]


@njit
def field_runs(data, starts, ends, col, n, out):
    """Rows where field ``col`` differs from the row before (row 0 included) into ``out``;
    returns how many (the runs of equal values: a qrels file's topics, usually)."""
    k = 0
    for r in range(n):
        if r == 0 or ends[r, col] - starts[r, col] != ends[r - 1, col] - starts[r - 1, col] or \
                not _same_bytes(data, starts[r, col], data, starts[r - 1, col], ends[r, col] - starts[r, col]):
            out[k] = r
            k += 1
    return k
