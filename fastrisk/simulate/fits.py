"""The fitted models of one collection of Urbano, Lima & Hanjalic (SIGIR 2019): the runs kept
(`fastrisk.simulate.measures`), a margin per run (`fastrisk.simulate.simireff`) and a copula per
pair of runs (`fastrisk.simulate.copulas`), built once, in parallel, and cached in a versioned
JSON file keyed by the matrix's hash (`CollectionFit`, `fit_collections`)."""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import math
import numbers
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fastrisk._runtime.atomic import file_lock, write_text
from fastrisk._runtime.extras import require
from fastrisk._runtime.progress import Progress
from fastrisk._runtime.threads import blas_threads
from fastrisk.data.datasets import trec_matrix
from fastrisk.errors import CacheWarning, InputError
from fastrisk.simulate.copulas import bicop, fit_copula
from fastrisk.simulate.measures import canonical_measure, check_scores, kept_runs, read_collection, snap_to_support
from fastrisk.simulate.nulls import merge_transforms, null_transforms, protocol_baselines
from fastrisk.simulate.simireff import fit_margin, h1_transforms, margin_from

#: Version of the fitted-model files (bump when a fit changes).
FIT_VERSION = 8  # 8: compiled log-likelihoods, VineCopula's own MLE for the t and BB families (#31)


def _data_hash(values, measure: str, prefix: str = "") -> str:
    h = hashlib.sha256()
    h.update(f"{prefix}{canonical_measure(measure)}:{np.asarray(values).shape}".encode())
    h.update(np.ascontiguousarray(np.asarray(values, dtype=np.float64)).tobytes())
    return h.hexdigest()


def matrix_hash(values, measure: str, ties_seed: int = 0) -> str:
    """The key of a collection's fit: its scores, measure, `FIT_VERSION` and ``ties_seed``."""
    return _data_hash(values, measure, f"v{FIT_VERSION}:ties{int(ties_seed)}:")


def ties_base_seed(values, measure: str, ties_seed: int = 0) -> int:
    """Seed of the copulas' random tie-breaking (`pobs`) in a collection: from its scores,
    measure and ``ties_seed`` only, so a new `FIT_VERSION` does not draw new ties. The
    study's own draw cannot be repeated: ``R/03-bicops.R`` calls ``pobs(ties.method =
    "random")`` inside ``foreach %dopar%`` on forked workers, whose R seeds differ from run to
    run; ``ties_seed`` picks another draw, to measure how much the results depend on it."""
    return int(_data_hash(values, measure, f"ties{int(ties_seed)}:")[:8], 16)


def cache_dir(cache=None) -> Path:
    """``cache`` or ``$FASTRISK_CACHE/simulate`` or ``~/.cache/fastrisk/simulate``."""
    if cache not in (None, True):
        return Path(cache)
    base = os.environ.get("FASTRISK_CACHE")
    return (Path(base) if base else Path.home() / ".cache" / "fastrisk") / "simulate"


@dataclass
class CollectionFit:
    """Fitted models of one collection: runs ``kept`` (rows of the matrix), their margins,
    the copula of each pair (i < j of positions in ``kept``)."""

    name: str
    measure: str
    hash: str
    kept: np.ndarray
    removed: dict
    margins: list
    copulas: dict
    values: np.ndarray = field(repr=False)
    source: str = "fitted"  # or "cache:<path>"
    path: Path | None = None
    h1: dict = field(default_factory=dict, repr=False)
    nulls: dict = field(default_factory=dict, repr=False)  # calibrated risk nulls (issue #28), by RiskNull.key
    ties_seed: int = 0
    _dirty: bool = field(default=False, repr=False)
    _bicops: dict = field(default_factory=dict, repr=False)
    _transforms: dict = field(default_factory=dict, repr=False)

    @property
    def n_runs(self) -> int:
        return len(self.kept)

    def copula(self, i: int, j: int):
        """Bicop of kept positions (i, j), i < j."""
        key = (i, j)
        if key not in self._bicops:
            self._bicops[key] = bicop(self.copulas[f"{i},{j}"])
        return self._bicops[key]

    def h1_pairs(self, delta: float):
        """The study's ``R/02-margins_transform.R`` for effect ``delta``: baselines are the
        bottom 75 % of runs by margin mean (the top round(0.25 S) dropped); for each, the 10
        other runs whose mean is closest to mu_b + delta, their own margin transformed to
        mean mu_b + delta (`SimMargin.transformed`). Returns ({baseline: [(e, (a, b)),
        ...]} for the baselines with at least one success, where e's margin transformed is
        ``margins[e].with_beta(a, b)``; the number of transformations that failed: those pairs
        are skipped, as the study's ``try`` skips them)."""
        key = f"{float(delta):.10g}"
        if key not in self._transforms:
            if key not in self.h1:
                self.h1[key] = h1_transforms(self.margins, float(delta))
                self._dirty = True
            doc = self.h1[key]
            pairs = {int(b): [(int(e), (float(a), float(bb))) for e, a, bb in lst] for b, lst in doc["pairs"].items()}
            self._transforms[key] = (pairs, int(doc["failed"]))
        return self._transforms[key]

    def null_pairs(self, null, target: float):
        """Pairs for which the risk statistic ``null`` (a `fastrisk.simulate.nulls.RiskNull`)
        has E[v(d)] = ``target`` under the fitted model (`fastrisk.simulate.nulls`), in
        `h1_pairs`'s form: ({baseline: [(e, (a, b)), ...]}, pairs skipped). Calibrated here
        unless `prepare_nulls` did it (kept under ``nulls`` in the cache file)."""
        key = null.key(target)
        cache_key = f"null:{key}"
        if cache_key not in self._transforms:
            if key not in self.nulls:
                self.nulls.update(null_transforms(self.margins, self.copulas, self.values,
                                                  [(null.family, null.alpha, float(target))]))
                self._dirty = True
            doc = self.nulls[key]
            pairs = {int(b): [(int(r[0]), (float(r[1]), float(r[2]))) for r in lst] for b, lst in doc["pairs"].items()}
            self._transforms[cache_key] = (pairs, int(doc["failed"]))
        return self._transforms[cache_key]

    def save(self) -> None:
        """Write the fit (with the transformations computed so far) to its cache file."""
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OSError(exc.errno, f"cannot write {self.path}: {exc.strerror or exc}", str(self.path)) from None
        with file_lock(self.path):  # another process may calibrate other nulls into this file now
            self._merge_saved()
            write_text(self.path, json.dumps(self.to_json()), follow_symlinks=False)
        self._dirty = False

    def _merge_saved(self) -> None:
        """Keep what another process saved to this fit's file since it was read: the h1
        transformations and calibrated nulls this fit lacks (merge on write, under the file's
        lock, so two processes calibrating different nulls into one cache both keep theirs).
        A file of another fit, another version or one that fails validation is replaced."""
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if not isinstance(doc, dict) or doc.get("version") != FIT_VERSION or doc.get("hash") != self.hash \
                or doc.get("kept") != self.kept.tolist() or _validate_fit_doc(doc) is not None:
            return
        for key, value in doc.get("h1", {}).items():
            self.h1.setdefault(key, value)
        for key, value in doc.get("nulls", {}).items():
            self.nulls.setdefault(key, value)

    def to_json(self) -> dict:
        """The cache file's document, with the SHA-256 of the rest (`fit_checksum`) under ``"sha256"``."""
        doc = {"version": FIT_VERSION, "name": self.name, "measure": self.measure, "hash": self.hash,
               "ties_seed": self.ties_seed, "kept": self.kept.tolist(), "removed": self.removed,
               "margins": [{"family": m.family, "params": m.params, "df": m.df, "aic": m.aic} for m in self.margins],
               "copulas": self.copulas, "h1": self.h1, "nulls": self.nulls, "values": self.values.tolist()}
        doc["sha256"] = fit_checksum(doc)
        return doc


def fit_checksum(doc: dict) -> str:
    """SHA-256 of a fit document without its ``"sha256"`` key (keys sorted, floats as
    ``json.dumps`` writes them, which round-trip exactly)."""
    rest = {k: v for k, v in doc.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(rest, sort_keys=True).encode()).hexdigest()


#: pyvinecopulib's number of parameters of each family `select_copula` can choose
#: (`fastrisk.simulate.copulas.VC_FAMILIES`; Tawn's three: psi1, psi2, theta).
_COPULA_PARAMETERS = {"indep": 0, "gaussian": 1, "frank": 1, "clayton": 1, "gumbel": 1, "joe": 1,
                      "student": 2, "bb1": 2, "bb6": 2, "bb7": 2, "bb8": 2, "tawn": 3}


def _finite(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def _index(x, n) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x < n


def _validate_fit_doc(doc) -> str | None:
    """What is wrong with a fit document (None if nothing): its checksum, then its schema —
    types, finite numbers, known margin families, lengths consistent with ``kept``. Unknown
    extra keys are allowed."""
    if not isinstance(doc, dict):
        return f"a JSON {type(doc).__name__}, not an object"
    if doc.get("sha256") != fit_checksum(doc):
        return "its SHA-256 does not match its content (changed after it was written)"
    for key, kind in (("name", str), ("measure", str), ("hash", str), ("kept", list), ("removed", dict),
                      ("margins", list), ("copulas", dict)):
        if not isinstance(doc.get(key), kind):
            return f"{key!r} is missing or not a {kind.__name__}"
    try:
        canonical_measure(doc["measure"])
    except InputError as exc:
        return str(exc)
    kept, S = doc["kept"], len(doc["kept"])
    if not all(isinstance(k, int) and not isinstance(k, bool) and k >= 0 for k in kept) or len(set(kept)) != S:
        return "'kept' is not a list of distinct row numbers"
    if not _index(doc.get("ties_seed", 0), 2**32):
        return "'ties_seed' is not an integer in [0, 2**32)"
    if len(doc["margins"]) != S:
        return f"{len(doc['margins'])} margins for {S} runs kept"
    for i, m in enumerate(doc["margins"]):
        if not isinstance(m, dict) or not isinstance(m.get("family"), str):
            return f"margin {i}: no family"
        params = m.get("params")
        if not isinstance(params, dict) or not all(_finite(v) for v in params.values()):
            return f"margin {i}: parameters that are not finite numbers"
        if any(v < 0 for k, v in params.items() if k != "mu"):  # shapes, scales, bandwidths, mult
            return f"margin {i}: a negative parameter"
    if set(doc["copulas"]) != {f"{i},{j}" for i in range(S) for j in range(i + 1, S)}:
        return "the copulas are not one per pair of runs kept"
    for key, c in doc["copulas"].items():
        if not isinstance(c, dict) or not isinstance(c.get("family"), str) or c["family"] not in _COPULA_PARAMETERS \
                or c.get("rotation") not in (0, 90, 180, 270) or not isinstance(c.get("parameters"), list) \
                or len(c["parameters"]) != _COPULA_PARAMETERS[c["family"]] or not all(_finite(v) for v in c["parameters"]):
            return f"copula {key}: not a known family, a rotation and its finite parameters"
    h1 = doc.get("h1", {})
    if not isinstance(h1, dict):
        return "'h1' is not an object"
    for delta, d in h1.items():
        if not isinstance(d, dict) or not _index(d.get("failed"), 2**63) or not isinstance(d.get("pairs"), dict):
            return f"h1 {delta}: not pairs and a count of failures"
        for b, lst in d["pairs"].items():
            if not (b.isdigit() and int(b) < S) or not isinstance(lst, list) or not all(
                    isinstance(t, list) and len(t) == 3 and _index(t[0], S) and _finite(t[1]) and _finite(t[2])
                    for t in lst):
                return f"h1 {delta}: baseline {b}: not [run, a, b] triples of kept runs and finite numbers"
            if any(t[0] == int(b) or not (t[1] > 0 and t[2] > 0) for t in lst):
                return f"h1 {delta}: baseline {b}: a pair of the baseline with itself or a beta shape that is not > 0"
    problem = _validate_nulls(doc.get("nulls", {}), S)
    if problem is not None:
        return problem
    if "values" in doc:
        v = doc["values"]
        if not isinstance(v, list) or len(v) != S or not all(isinstance(r, list) for r in v) \
                or len({len(r) for r in v}) > 1 or not all(_finite(x) for r in v for x in r):
            return f"'values' is not {S} rows of finite scores of one length"
    return None


_NULL_KEY = re.compile(r"(urisk|smooth):([^:]+):([^:]+)")


def _validate_nulls(nulls, S: int) -> str | None:
    """What is wrong with a fit document's ``nulls`` (the calibrated risk nulls,
    `fastrisk.simulate.nulls.null_transforms`'s form: {`RiskNull.key`: {"pairs": {baseline:
    [[e, a, b, mu_e, value], ...]}, "failed": n, "calls": n}}), None if nothing: keys that
    parse, baselines and partners among the ``S`` runs kept (never the baseline itself), beta
    shapes a, b finite and > 0, finite means and values, counts that are integers >= 0."""
    if not isinstance(nulls, dict):
        return "'nulls' is not an object"
    for key, d in nulls.items():
        m = _NULL_KEY.fullmatch(key)
        try:
            ok = m is not None and math.isfinite(float(m[2])) and float(m[2]) >= 0 and math.isfinite(float(m[3]))
        except ValueError:
            ok = False
        if not ok:
            return f"nulls {key!r}: not a risk null's key (family:alpha:target)"
        if not isinstance(d, dict) or not _index(d.get("failed"), 2**63) or not _index(d.get("calls", 0), 2**63) \
                or not isinstance(d.get("pairs"), dict):
            return f"nulls {key}: not pairs and counts of failures and calls"
        for b, lst in d["pairs"].items():
            if not (b.isdigit() and int(b) < S) or not isinstance(lst, list) or not all(
                    isinstance(r, list) and len(r) == 5 and _index(r[0], S) and r[0] != int(b)
                    and all(_finite(x) for x in r[1:]) and r[1] > 0 and r[2] > 0 for r in lst):
                return (f"nulls {key}: baseline {b}: not [run, a, b, mean, value] rows of other kept runs, "
                        "beta shapes > 0 and finite numbers")
    return None


def prepare_h1(fits, deltas, *, executor=None) -> None:
    """Compute the transformations ``fits`` lack for ``deltas`` (one job per collection and
    delta, on ``executor`` as `fit_collections` runs its jobs; R's optimizer takes ~8 ms a
    transformation), keep them in each fit and write its cache file."""
    submit = _submitter(executor)
    jobs = []
    for fit in fits:
        for delta in deltas:
            key = f"{float(delta):.10g}"
            if key not in fit.h1:
                jobs.append((fit, key, submit(h1_transforms, fit.margins, float(delta))))
    for fit, key, job in jobs:
        fit.h1[key] = _result(job, fit.name)
        fit._dirty = True
    for fit in {id(f): f for f, _, _ in jobs}.values():
        cache_fit(fit)


#: Baselines per calibration job of `prepare_nulls` (neighbours in mean: they share partners).
NULL_CHUNK = 6


def prepare_nulls(fits, nulls, targets, *, executor=None) -> None:
    """Calibrate the risk nulls ``fits`` lack (`fastrisk.simulate.nulls`: each
    `RiskNull` of ``nulls`` at each of ``targets``) and keep them in each fit, writing its cache
    file. On ``executor`` (as `prepare_h1`), one job per `NULL_CHUNK` baselines adjacent in
    mean (their partners overlap, so do the transformations a job shares), the largest
    collections first, so that every worker is busy to the end; in-process, one job per
    collection."""
    submit = _submitter(executor)
    jobs = []
    for fit in sorted(fits, key=lambda f: -f.n_runs):
        specs = [(n.family, n.alpha, float(t)) for n in nulls for t in targets if n.key(t) not in fit.nulls]
        if specs:
            base = protocol_baselines(fit.margins)
            parts = [base] if executor is None else _chunks(base, NULL_CHUNK)
            jobs.append((fit, [submit(null_transforms, fit.margins, fit.copulas, fit.values, specs, p) for p in parts]))
    for fit, parts in jobs:
        fit.nulls.update(merge_transforms(_result(job, fit.name) for job in parts))
        fit._dirty = True
        cache_fit(fit)


def _fit_pairs(values, pairs, base_seed) -> dict:
    """Worker: copulas of the given (i, j) pairs of rows of ``values``."""
    with blas_threads(1):  # scipy's L-BFGS-B calls BLAS on 2-vectors: a thread pool costs ~2 ms a call
        return {f"{i},{j}": fit_copula(values[i], values[j], seed=base_seed + i * 100_003 + j) for i, j in pairs}


def _fit_margins(values, measure) -> list:
    with blas_threads(1):
        return [(m.family, m.params) for m in (fit_margin(v, measure) for v in values)]


def load_fit(path, h: str | None = None, values=None) -> CollectionFit | None:
    """The fit stored at ``path`` (None if missing, unreadable, of another version or, when
    ``h`` is given, of another matrix). ``values``: the matrix (systems x topics), needed only
    for files written without the kept runs' scores."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return _damaged(path, f"unreadable ({exc})")
    if isinstance(doc, dict) and (doc.get("version") != FIT_VERSION or (h is not None and doc.get("hash") != h)):
        return None  # another version or matrix: refitted and replaced, as expected
    problem = _validate_fit_doc(doc)
    if problem is not None:
        return _damaged(path, problem)
    kept = np.asarray(doc["kept"], dtype=np.int64)
    try:
        if "values" in doc:
            V = np.asarray(doc["values"], dtype=np.float64).reshape(len(kept), -1)
        else:
            if values is None:
                values = trec_matrix(doc["name"]).values
            values = np.asarray(values, dtype=np.float64)
            if len(kept) and kept.max() >= len(values):
                return _damaged(path, f"'kept' names row {int(kept.max())} of a matrix of {len(values)}")
            V = values[kept]
        measure = doc["measure"]
        margins = []
        for i, m in enumerate(doc["margins"]):
            try:
                margins.append(margin_from(m["family"], m["params"], V[i], measure))
            except KeyError as exc:
                return _damaged(path, f"margin {i}: unknown family {m['family']!r} or parameter {exc}")
    except (InputError, ValueError, TypeError, ArithmeticError) as exc:
        return _damaged(path, f"a margin cannot be rebuilt ({type(exc).__name__}: {exc})")
    return CollectionFit(doc["name"], measure, doc["hash"], kept, doc["removed"], margins, doc["copulas"], V,
                         source=f"cache:{path}", path=path, h1=doc.get("h1", {}), nulls=doc.get("nulls", {}), ties_seed=int(doc.get("ties_seed", 0)))


def _damaged(path, problem: str) -> None:
    """A damaged cache file: warn naming it; the caller refits and replaces it."""
    warnings.warn(f"fit cache file {path} is damaged and is refitted: {problem}", CacheWarning, stacklevel=3)


_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")


def cache_stem(name: str) -> str:
    """A collection name as a cache file name: the name itself when it is plain
    (letters, digits, ``_ . + -``, not starting with a dot, at most 64 characters), else a
    hash of it — never a path, so no name can write outside the cache directory."""
    name = str(name)
    if _SAFE_NAME.fullmatch(name) and ".." not in name:
        return name
    return "collection-" + hashlib.sha256(name.encode()).hexdigest()[:16]


def fit_collections(collections, measure=None, *, executor=None, cache=None, refit: bool = False,
                    progress=None, ties_seed: int = 0) -> dict:
    """Fitted models of collections: loaded from the cache when its hash and version match,
    otherwise fitted and stored.

    Parameters
    ----------
    collections : str, path-like, sequence of them, or dict
        Bundled collections (names, e.g. ``"web2012_ap"``), score-matrix files (paths) or
        ``{name: ScoreMatrix}``.
    measure : str, optional
        The measure of the scores (default: a file's own, or each name's suffix).
    executor : optional
        Where pairs are fitted, in chunks: any ``concurrent.futures`` executor or a Dask client
        (None: in-process).
    cache : str, path-like or False, optional
        The directory of the fitted models (default ``$FASTRISK_CACHE/simulate`` or
        ``~/.cache/fastrisk/simulate``; False: no cache).
    refit : bool
        Fit again even when the cache has the models.
    progress : bool, optional
        A progress bar of the pairs fitted (and of the collections) on standard error
        (default: on a terminal, after a second).
    ties_seed : int
        Which draw of the copulas' random tie-breaking (`ties_base_seed`).

    Returns
    -------
    dict
        Name -> the collection's fitted model (margins of its runs, copulas of its pairs).
    """
    require("pyvinecopulib", what="a simulation")  # here, not in a job: one clear line when it is missing
    if isinstance(collections, (str, Path)):
        collections = [collections]
    items = dict(collections) if isinstance(collections, dict) else {str(n): None for n in collections}
    if isinstance(ties_seed, bool) or not isinstance(ties_seed, numbers.Integral) or not 0 <= ties_seed < 2**32:
        raise InputError(f"`ties_seed` must be an integer in [0, 2**32), got {ties_seed!r}")
    out, todo = {}, {}
    cdir = cache_dir(cache) if cache is not False else None
    for name, mat in items.items():
        if mat is None and Path(name).is_file():  # a score-matrix file, with its own measure
            meas, mat = read_collection(name, measure)
        else:
            meas = canonical_measure(measure if measure is not None else name.partition("_")[2])
        mat = mat if mat is not None else trec_matrix(name)
        values = np.asarray(getattr(mat, "values", mat), dtype=np.float64)
        if values.ndim == 2:  # a lattice measure's scores on its lattice before anything is hashed or fitted
            values = snap_to_support(values, meas)
        if values.ndim != 2 or values.shape[0] < 3:
            raise InputError(f"collection {name!r}: a fit needs a systems x topics matrix with >= 3 systems, "
                             f"it has {values.shape[0] if values.ndim == 2 else 'no'}")
        h = matrix_hash(values, meas, ties_seed)
        path = None if cdir is None else cdir / f"{cache_stem(name)}-{h[:16]}.json"
        got = None if (refit or path is None) else load_fit(path, h, values)
        if got is not None:
            out[name] = got
        else:
            check_scores(values, meas, name=name, systems=getattr(mat, "systems", None),
                         topics=getattr(mat, "topics", None))
            todo[name] = (meas, values, h, path)
    if todo:
        _fit_todo(todo, executor, progress, ties_seed, out)
    return {n: out[n] for n in items}


#: Pairs of runs a job fits at most (~2-3 s of one core): small enough that the two processes
#: finish within one job of each other, large enough that shipping a job costs nothing.
PAIRS_PER_JOB = 200


def _fit_todo(todo, executor, progress, ties_seed, out) -> None:
    """Fit the collections of ``todo`` ({name: (measure, values, hash, path)}) into ``out``: per
    collection one margins job, then its pairs in jobs of at most `PAIRS_PER_JOB` (equal
    sizes), all submitted at once in that order (a process pool runs them first in, first
    out: both processes stay busy to the last job); the bar counts pairs and collections."""
    plan = []
    for name, (meas, values, h, path) in todo.items():
        kept, removed = kept_runs(values)
        S = len(kept)
        pairs = [(i, j) for i in range(S) for j in range(i + 1, S)]
        plan.append((name, kept, removed, values[kept], _chunks(pairs, PAIRS_PER_JOB),
                     ties_base_seed(values, meas, ties_seed)))
    total = sum(len(c) for *_, chunks, _ in plan for c in chunks)
    bar = Progress(total, progress, _fitted(0, len(plan)), unit="pairs", delay=1.0)

    def finish(name, kept, removed, V, margins, copulas):
        meas, values, h, path = todo[name]
        margins = [margin_from(f, p, V[i], meas) for i, (f, p) in enumerate(margins)]
        fit = CollectionFit(name, meas, h, kept, removed, margins, copulas, V, path=path, ties_seed=int(ties_seed))
        if path is not None and cache_fit(fit):
            fit.source = f"fitted:{path}"
        out[name] = fit

    try:
        if executor is None:  # in-process: each collection cached when done, so that Ctrl-C keeps it
            for k, (name, kept, removed, V, chunks, seed) in enumerate(plan):
                margins, copulas = _fit_margins(V, todo[name][0]), {}
                for c in chunks:
                    copulas.update(_fit_pairs(V, c, seed))
                    bar.update(len(c))
                finish(name, kept, removed, V, margins, copulas)
                bar.describe(_fitted(k + 1, len(plan)))
            return
        submit = _submitter(executor)
        jobs = [(submit(_fit_margins, V, todo[name][0]), [(len(c), submit(_fit_pairs, V, c, seed)) for c in chunks])
                for name, kept, removed, V, chunks, seed in plan]
        for k, ((name, kept, removed, V, _, _), (fm, fcs)) in enumerate(zip(plan, jobs)):
            margins, copulas = _result(fm, name), {}
            for n, f in fcs:
                copulas.update(_result(f, name))
                bar.update(n)
            finish(name, kept, removed, V, margins, copulas)
            bar.describe(_fitted(k + 1, len(plan)))
    finally:
        bar.close()


def _fitted(done: int, total: int) -> str:
    return f"fitting copulas, collections {done}/{total}"


def _chunks(pairs, n):
    """``pairs`` in ceil(len / n) consecutive runs whose lengths differ by at most one."""
    k = -(-len(pairs) // n)
    q, r = divmod(len(pairs), max(k, 1))
    ends = [i * q + min(i, r) for i in range(k + 1)]
    return [pairs[a:b] for a, b in zip(ends, ends[1:])]


def cache_fit(fit) -> bool:
    """``fit.save()``; a cache that cannot be written (read-only, full) is a warning naming the
    file, never an error: the fit is in memory and the study goes on (as the runs cache)."""
    try:
        fit.save()
    except OSError as exc:
        warnings.warn(f"the fit of {fit.name!r} was not cached in {fit.path}: {exc.strerror or exc}; it is "
                      "fitted again next time (give a writable --cache / cache=)", RuntimeWarning, stacklevel=3)
        return False
    return True


class _Done:
    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


def _submitter(executor):
    if executor is None:
        return lambda fn, *a: _Done(fn(*a))
    if hasattr(executor, "get_executor") and not hasattr(executor, "map_async"):
        executor = executor.get_executor()  # a Dask client
    return executor.submit


def _result(f, name):
    """A fit job's result; a job lost with its worker (a broken pool, a killed Dask worker) is an
    `InputError` naming the collection (the collections fitted before it stay cached)."""
    try:
        return f.result()
    except (cf.BrokenExecutor, cf.CancelledError) as exc:
        lost = exc
    except Exception as exc:
        if type(exc).__name__ != "KilledWorker":
            raise
        lost = exc
    raise InputError(f"fitting collection {name!r}: a job was lost with its worker "
                     f"({type(lost).__name__}: {lost}); run again") from lost
