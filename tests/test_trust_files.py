"""Files fastrisk saves and reads back (issue #29, item 1): a saved RunSet / Qrels, a parse-cache
entry and a fit-cache JSON are checksummed and bounds-checked; a damaged one is refused
(`InputError` naming the file) or rebuilt (a `CacheWarning` naming it), never a crash and never a
silently different number. Hypothesis fuzzes the bytes and the JSON."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastrisk.data.runs import ipc, read_qrels, read_runs
from fastrisk.errors import CacheWarning, InputError
from fastrisk.measures.metrics import evaluate
from fastrisk.simulate import fits

RUN_A = "".join(f"{t} Q0 d{t}-{i} {i + 1} {50 - i} alpha\n" for t in (1, 2, 3) for i in range(12))
RUN_B = "".join(f"{t} Q0 d{t}-{(i * 7) % 15} {i + 1} {50 - i} beta\n" for t in (1, 2, 3) for i in range(10))
QRELS = "".join(f"{t} 0 d{t}-{i} {(i + t) % 3}\n" for t in (1, 2, 3) for i in range(0, 15, 2))
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture
def saved(tmp_path):
    (tmp_path / "a.run").write_text(RUN_A)
    (tmp_path / "b.run").write_text(RUN_B)
    (tmp_path / "q.txt").write_text(QRELS)
    runs = read_runs([tmp_path / "a.run", tmp_path / "b.run"])
    qrels = read_qrels(tmp_path / "q.txt")
    runs.save(tmp_path / "set.arrow")
    qrels.save(tmp_path / "q.arrow")
    return tmp_path, evaluate(runs, qrels, ["AP", "nDCG@10"]).values


def _rewrite(path, **arrays):
    """Rewrite a saved RunSet with some arrays replaced, its checksum recomputed (a file a
    checksum cannot catch: only the bounds checks can)."""
    table = pa.ipc.open_file(str(path)).read_all()
    meta = json.loads(table.schema.metadata[b"fastrisk.meta"])
    cols = {}
    for name in table.column_names:
        if name in arrays:
            cols[name] = ipc._one(np.asarray(arrays[name]))
        else:
            cols[name] = table.column(name).chunk(0)
    new = pa.table(cols)
    numeric = [new.column(c).chunk(0).values.to_numpy() for c in ipc._RUN_COLUMNS]
    ipc._atomic_write(ipc._with_sum(new, b"RunSet", meta, numeric, [new.column("vocab").chunk(0).values]), path)


def test_out_of_range_document_id_is_refused_not_a_segfault(saved):
    d, _ = saved
    runs = read_runs(d / "set.arrow")
    docs = runs.docs.copy()
    docs[0, 0, 0] = 10**6
    _rewrite(d / "set.arrow", docs=docs)
    code = ("import sys\nfrom fastrisk.cli import main\nsys.exit(main(['evaluate', sys.argv[1], '--qrels', sys.argv[2], "
            "'--measure', 'AP']))")
    r = subprocess.run([sys.executable, "-c", code, str(d / "set.arrow"), str(d / "q.txt")], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode not in (0, -11, 139), r
    assert "set.arrow" in r.stderr and "document id outside" in r.stderr


@pytest.mark.parametrize("change", ["doc_offsets", "negative", "past_end", "best_rank", "lengths"])
def test_index_arrays_are_bounds_checked(saved, change):
    d, _ = saved
    runs = read_runs(d / "set.arrow")
    arrays = {
        "doc_offsets": {"doc_offsets": runs.doc_offsets * 2},
        "negative": {"docs": np.where(np.arange(runs.depth) == 0, -5, runs.docs)},
        "past_end": {"docs": np.where(runs.docs < 0, 0, runs.docs)},
        "best_rank": {"best_rank": runs.best_rank + runs.depth},
        "lengths": {"lengths": runs.lengths + runs.depth},
    }[change]
    _rewrite(d / "set.arrow", **arrays)
    with pytest.raises(InputError, match=r"set\.arrow: damaged saved fastrisk RunSet"):
        read_runs(d / "set.arrow")


def test_scaled_doc_offsets_with_the_old_checksum_are_refused(saved):
    d, _ = saved
    table = pa.ipc.open_file(str(d / "set.arrow")).read_all()
    cols = {n: table.column(n).chunk(0) for n in table.column_names}
    cols["doc_offsets"] = ipc._one(table.column("doc_offsets").chunk(0).values.to_numpy() * 3)
    new = pa.table(cols).replace_schema_metadata(table.schema.metadata)
    with pa.ipc.new_file(str(d / "set.arrow"), new.schema) as w:
        w.write_table(new)
    with pytest.raises(InputError, match="SHA-256 does not match"):
        read_runs(d / "set.arrow")


def test_unreadable_string_buffers_are_a_damaged_file(saved, monkeypatch):
    """A byte set inside a string column's offsets (found by the fuzz test below) made NumPy
    refuse the buffer while the checksum was computed: a bare ValueError, now an InputError
    naming the file."""
    from fastrisk.data.runs import ipc

    d, _ = saved

    def unreadable(*args):
        raise ValueError("buffer size must be a multiple of element size")

    monkeypatch.setattr(ipc, "_digest", unreadable)
    with pytest.raises(InputError, match=r"set\.arrow: damaged saved fastrisk .*string columns cannot be read"):
        read_runs(d / "set.arrow")


def test_edited_saved_qrels_are_refused(saved):
    d, _ = saved
    table = pa.ipc.open_file(str(d / "q.arrow")).read_all()
    grades = table.column("grade").to_numpy().copy()
    grades[0] = 2 if grades[0] != 2 else 1
    new = table.set_column(1, "grade", pa.array(grades)).replace_schema_metadata(table.schema.metadata)
    with pa.ipc.new_file(str(d / "q.arrow"), new.schema) as w:
        w.write_table(new)
    with pytest.raises(InputError, match=r"q\.arrow: .*SHA-256"):
        read_qrels(d / "q.arrow")


def _mutate(data: bytes, kind: str, at: float, value: int) -> bytes:
    b = bytearray(data)
    i = int(at * (len(b) - 1))
    if kind == "zero4k":
        b[i:i + 4096] = bytes(len(b[i:i + 4096]))
    elif kind == "flip":
        b[i] ^= 1 + value % 255
    elif kind == "set":
        b[i] = value % 256
    else:  # truncate
        del b[max(6, i):]
    return bytes(b)


@FUZZ
@given(kind=st.sampled_from(["zero4k", "flip", "set", "truncate"]), at=st.floats(0, 1), value=st.integers(0, 2**16))
def test_fuzz_saved_runs_and_qrels(saved, kind, at, value):
    """Any damage: the same numbers, or an InputError naming the file; never a crash."""
    d, expected = saved
    for name in ("set.arrow", "q.arrow"):
        original = (d / name).read_bytes()
        (d / name).write_bytes(_mutate(original, kind, at, value))
        try:
            try:
                runs = read_runs(d / "set.arrow")
                qrels = read_qrels(d / "q.arrow")
            except InputError as exc:
                assert name in str(exc)
                continue
            got = evaluate(runs, qrels, ["AP", "nDCG@10"]).values
            np.testing.assert_array_equal(got, expected)
        finally:
            (d / name).write_bytes(original)


@FUZZ
@given(kind=st.sampled_from(["zero4k", "flip", "set", "truncate"]), at=st.floats(0, 1), value=st.integers(0, 2**16))
def test_fuzz_parse_cache_entry_is_rebuilt(saved, kind, at, value):
    d, expected = saved
    cache = d / "cache"
    files = [d / "a.run", d / "b.run"]
    read_runs(files, cache=cache)
    entry = next(cache.glob("*.arrow"))
    original = entry.read_bytes()
    entry.write_bytes(_mutate(original, kind, at, value))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runs = read_runs(files, cache=cache)
    for w in caught:
        assert issubclass(w.category, CacheWarning) and str(entry) in str(w.message)
    np.testing.assert_array_equal(evaluate(runs, read_qrels(d / "q.txt"), ["AP", "nDCG@10"]).values, expected)
    entry.write_bytes(original)


# ---------------------------------------------------------------------------------------- fits


def _fit_doc(S=3, measure="ap"):
    """A fit document as `CollectionFit.to_json` writes it (no pyvinecopulib needed)."""
    rng = np.random.default_rng(1)
    values = rng.uniform(0.05, 0.95, (S, 25)).round(4)
    doc = {"version": fits.FIT_VERSION, "name": "toy_ap", "measure": measure, "hash": "h" * 64, "ties_seed": 0,
           "kept": list(range(S)), "removed": {},
           "margins": [{"family": "beta", "params": {"shape1": 2.0 + i, "shape2": 3.0}, "df": 2.0, "aic": -1.0}
                       for i in range(S)],
           "copulas": {f"{i},{j}": {"family": "gaussian", "rotation": 0, "parameters": [0.3], "vinecopula": 1,
                                    "loglik": 1.0, "aic": 0.5} for i in range(S) for j in range(i + 1, S)},
           "h1": {"0.05": {"pairs": {"1": [[0, 2.5, 3.0]]}, "failed": 0}}, "values": values.tolist()}
    doc["sha256"] = fits.fit_checksum(doc)
    return doc


def _load(tmp_path, doc, raw=None):
    p = tmp_path / "toy_ap-0123.json"
    p.write_text(raw if raw is not None else json.dumps(doc))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = fits.load_fit(p, "h" * 64)
    return got, [w for w in caught if issubclass(w.category, CacheWarning)], p


def test_a_good_fit_loads_and_unknown_keys_are_kept_out_of_the_way(tmp_path):
    doc = _fit_doc()
    doc["added_by_a_later_version"] = [1, 2]
    doc["sha256"] = fits.fit_checksum(doc)
    got, warned, _ = _load(tmp_path, doc)
    assert not warned and got is not None and [m.params for m in got.margins] == [m["params"] for m in doc["margins"]]


@pytest.mark.parametrize("damage", ["halved", "nan_shape", "list", "no_kept", "unknown_family", "bad_pair",
                                    "short_values", "not_json"])
def test_damaged_fit_is_refitted_with_a_warning_naming_the_file(tmp_path, damage):
    doc = _fit_doc()
    raw = None
    resign = True
    if damage == "halved":
        doc["margins"][0]["params"]["shape1"] /= 2
        resign = False  # edited by hand: only the checksum can tell
    elif damage == "nan_shape":
        doc["margins"][1]["params"]["shape2"] = float("nan")
    elif damage == "list":
        doc = [doc]
        resign = False
    elif damage == "no_kept":
        del doc["kept"]
    elif damage == "unknown_family":
        doc["margins"][0]["family"] = "cauchy"
    elif damage == "bad_pair":
        doc["h1"]["0.05"]["pairs"]["1"] = [[99, 1.0, 1.0]]
    elif damage == "short_values":
        doc["values"] = doc["values"][:2]
    else:
        raw = '{"version": 7, "kept": [0,'
    if resign and isinstance(doc, dict):
        doc["sha256"] = fits.fit_checksum(doc)  # a consistent checksum: the schema check must catch it
    got, warned, p = _load(tmp_path, doc, raw)
    assert got is None
    assert len(warned) == 1 and str(p) in str(warned[0].message) and "refitted" in str(warned[0].message)


@pytest.mark.parametrize("family", [[], {}, ["gaussian"]])
def test_a_copula_family_that_is_not_a_name_is_refitted(tmp_path, family):
    """Found by the fuzz test below: a list as a copula's family (checksum re-signed) raised
    TypeError (unhashable) inside the schema check instead of refitting with a warning."""
    doc = _fit_doc()
    doc["copulas"]["0,1"]["family"] = family
    doc["sha256"] = fits.fit_checksum(doc)
    got, warned, p = _load(tmp_path, doc)
    assert got is None and len(warned) == 1 and str(p) in str(warned[0].message)
    assert "copula 0,1: not a known family" in str(warned[0].message)


@FUZZ
@given(data=st.data())
def test_fuzz_fit_json(tmp_path, data):
    """Replace any value of a fit document with another JSON value: it loads identically (the
    same margins) or is refitted with a warning naming the file; never an exception."""
    doc = _fit_doc()
    text = json.dumps(doc)
    paths = []

    def walk(node, prefix):
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
        for k, v in items:
            paths.append(prefix + (k,))
            walk(v, prefix + (k,))

    walk(doc, ())
    where = data.draw(st.sampled_from(paths))
    new = data.draw(st.one_of(st.none(), st.booleans(), st.integers(-3, 10**6), st.floats(allow_nan=True),
                              st.text(max_size=4), st.just([]), st.just({})))
    resign = data.draw(st.booleans())
    mutated = json.loads(text)
    node = mutated
    for k in where[:-1]:
        node = node[k]
    node[where[-1]] = new
    if resign:
        mutated["sha256"] = fits.fit_checksum(mutated)
    got, warned, p = _load(tmp_path, mutated)
    if resign:  # a consistent checksum over a changed value: loaded or refitted, never an exception
        assert all(str(p) in str(w.message) for w in warned)
    elif got is None:
        same_version = mutated.get("version") == fits.FIT_VERSION and mutated.get("hash") == doc["hash"]
        assert len(warned) == (1 if same_version else 0)
        assert all(str(p) in str(w.message) for w in warned)
    else:
        assert not warned
        assert [(m.family, m.params) for m in got.margins] == [(m["family"], m["params"]) for m in doc["margins"]]
        np.testing.assert_array_equal(got.values, np.asarray(doc["values"]))
