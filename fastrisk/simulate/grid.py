"""The whole grid of Urbano, Lima & Hanjalic (SIGIR 2019): type I for every measure and
topic-set size; power and type III (one run serves both, as the study's ``R/13-type_3.R``
reads ``R/12-type_2.R``'s output) by alpha and by delta. Writes one CSV per cell in the
study's layout and file names (``type_1/type_1_ap_50.csv``, ``type_2_by_alpha/delta0.05/
type_2_by_alpha_ap_50_delta0.05.csv``, ``type_2_by_delta/alpha0.050/...``, ``type_3_...``)
and the long tables (``type_1.parquet``, ``type_2.parquet``, ``type_3.parquet``). Each
cell is a sweep checkpointed under ``DIR/checkpoints``: ``resume=True`` computes only
what is missing. A cell's seed is derived from the grid seed, the measure and the size
(`cell_seed`), so the tables do not depend on the executor, the chunking or which cells ran
before; hence ``grid --seed 1`` and ``type1 --seed 1`` differ, and each cell's line on
standard error gives its seed: ``type1``/``power``/``type3`` with that ``--seed`` (the same
measure, topics, trials and replicates) reproduce the cell.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa

from fastrisk._runtime.atomic import write_parquet
from fastrisk._runtime.rng import resolve_seed
from fastrisk.errors import InputError
from fastrisk.simulate import studies as _s
from fastrisk.simulate.measures import canonical_measure, file_stem
from fastrisk.viz.figures import plot_studies

STUDIES = ("type1", "power", "type3")
PLOT_FORMATS = ("svg", "png", "pdf")


def cell_seed(seed: int, measure: str, topics: int) -> int:
    """The study seed of the grid's cell (``measure``, ``topics``) under grid seed ``seed``:
    ``SeedSequence([seed, index of measure in MEASURES, topics])``, 63 bits (a measure outside
    the study's five: its index is 5 + 48 bits of its name's SHA-256)."""
    if measure in _s.MEASURES:
        key = list(_s.MEASURES).index(measure)
    else:
        key = len(_s.MEASURES) + int(hashlib.sha256(measure.encode()).hexdigest()[:12], 16)
    return int(np.random.SeedSequence([int(seed), key, int(topics)]).generate_state(1, np.uint64)[0] >> np.uint64(1))


def run_grid(studies, directory, *, measures=None, collections=None, topics=_s.TOPICS, delta=_s.DELTAS, trials: int = 10000,
             replicates: int = 1000, rng=None, trisk_alpha=(1.0, 5.0), min_diff: float = 0.01, executor=None,
             progress=None, cache=None, resume: bool = False, plot=None, chunk: int = _s.CHUNK,
             ties_seed: int = 0, plot_format: str = "svg") -> dict:
    """Run ``studies`` (type1, power, type3) over ``measures`` x ``topics``; write the tables
    under ``directory``; returns {study: [StudyResult, ...]}. ``plot``: a directory for one
    figure per study, as ``plot_format`` (svg, png or pdf). ``collections``: bundled names or
    score-matrix files (`fastrisk.simulate.studies.load_collections`) instead of the study's
    collections, one measure (``measures``: at most one, for files that do not name theirs)."""
    if plot_format not in PLOT_FORMATS:
        raise InputError(f"`plot_format` must be one of {', '.join(PLOT_FORMATS)}, got {plot_format!r}")
    studies = tuple(studies)
    bad = [s for s in studies if s not in STUDIES]
    if bad or not studies:
        raise InputError(f"grid studies must be among {', '.join(STUDIES)}, got {', '.join(studies) or 'none'}")
    if collections is not None:
        if measures is not None and len(measures) > 1:
            raise InputError(f"with `collections`, give at most one measure, got {', '.join(map(str, measures))}")
        key, items = _s.load_collections(measures[0] if measures else None, collections)
        cells = [(key, items)]
    else:
        cells = [(canonical_measure(m), None) for m in (measures or _s.MEASURES)]
    root = resolve_seed(rng)
    out = Path(directory)
    ck = out / "checkpoints"
    ck.mkdir(parents=True, exist_ok=True)
    results: dict = {s: [] for s in studies}
    common = dict(trials=trials, replicates=replicates, trisk_alpha=trisk_alpha, min_diff=min_diff,
                  alphas=_s.ALPHAS, executor=executor, chunk=chunk, progress=progress, cache=cache,
                  protocol="urbano2019", ties_seed=ties_seed)
    h1 = tuple(s for s in ("power", "type3") if s in studies)
    for m, items in cells:
        stem = file_stem(m)
        for n in topics:
            seed = cell_seed(root, m, n)
            if "type1" in studies:
                f = ck / f"type1_{stem}_{n}.parquet"
                r = _s._run(("type1",), m, n, rng=seed, deltas=[0.0], out=f, resume=resume and _has(f),
                            collections=items, **common)["type1"]
                results["type1"].append(r)
                r.write_tables(out)
            if h1:
                f = ck / f"h1_{stem}_{n}.parquet"
                rs = _s._run(h1, m, n, rng=seed, deltas=list(delta), out=f, resume=resume and _has(f),
                             collections=items, **common)
                for s in h1:
                    results[s].append(rs[s])
                    rs[s].write_tables(out)
            print(f"grid: {m} n={n} done (cell seed {seed}: type1/power/type3 --seed {seed} reproduce it)",
                  file=sys.stderr)
    stems = {"type1": "type_1", "power": "type_2", "type3": "type_3"}
    for s, rs in results.items():
        write_parquet(pa.concat_tables([r.to_arrow() for r in rs]), out / f"{stems[s]}.parquet")
    if plot:
        for s, rs in results.items():
            plot_studies(rs, Path(plot) / f"{stems[s]}.{plot_format}")
    return results


def _has(path: Path) -> bool:
    return path.exists() or path.with_name(path.name + ".parts").exists()
