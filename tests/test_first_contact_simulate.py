"""Issue 29 item 4: simulation outputs. Table names are exact and unique, a repeated effect
size is refused, tables are written atomically and never cost the study, a cache that cannot
be written warns and the study goes on, Ctrl-C during an in-process fit keeps every finished
collection, and a grid cell names the seed that reproduces it."""

from __future__ import annotations

import errno
import re

import numpy as np
import pandas as pd
import pytest

import fastrisk
from fastrisk._runtime.rng import resolve_seed
from fastrisk.cli import main
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.errors import InputError
from fastrisk.simulate import fits, grid, power, studies

pytest.importorskip("pyvinecopulib")


def _tiny(runs=13, topics=20, first=0):  # 13 runs: the study keeps 11, the fewest its H1 pairs allow
    m = fastrisk.data.datasets.trec_matrix("web2013_err20")
    rows = slice(first, first + runs)
    return ScoreMatrix(m.values[rows, :topics], m.systems[rows], m.topics[:topics], m.measure)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("fits")


@pytest.fixture(scope="module")
def two_deltas(cache):
    return power("err20", collections={"tiny": _tiny()}, delta=[0.011, 0.014], topics=10, trials=30, replicates=0,
                 rng=3, progress=False, cache=cache, risk_nulls=False)  # table names: the study's tests suffice


def test_close_effect_sizes_get_their_own_exact_tables(two_deltas, tmp_path):
    """``--delta 0.011,0.014`` wrote one ``delta0.01`` table holding 0.014's rates."""
    tables = two_deltas.tables()
    by_alpha = sorted(n for n in tables if "_by_alpha/" in n)
    assert by_alpha == ["type_2_by_alpha/delta0.011/type_2_by_alpha_err20_10_delta0.011",
                        "type_2_by_alpha/delta0.014/type_2_by_alpha_err20_10_delta0.014"]
    t1 = two_deltas.tests.index("t")
    for d, name in enumerate(by_alpha):
        np.testing.assert_array_equal(tables[name]["t1"].to_numpy(), two_deltas.rate[d, t1, 0])
    paths = two_deltas.write_tables(tmp_path)
    assert len(paths) == len(set(paths)) == len(tables)
    # the published layout's names are kept where two decimals are exact
    assert studies._label(0.05, 2) == "0.05" and studies._label(0.1, 2) == "0.10"
    assert studies._label(0.05, 3) == "0.050" and studies._label(0.0125, 3) == "0.0125"


def test_a_repeated_effect_size_is_refused_before_any_work(cache):
    """``--delta 0.01,0.01`` reported n = 1,000 for 500 trials."""
    with pytest.raises(InputError, match="`delta` lists 0.01 more than once"):
        power("err20", collections={"tiny": _tiny()}, delta=[0.01, 0.02, 0.01], topics=10, trials=30, replicates=0,
              rng=3, progress=False, cache=cache)
    assert main(["simulate", "power", "--collections", "web2013_err20", "--delta", "0.01,0.01", "--trials", "5"]) == 2


def test_tables_are_written_atomically(two_deltas, tmp_path, monkeypatch):
    """A full disk left a 0-byte CSV: now no file, no temporary, and the error names the file."""
    real = pd.DataFrame.to_csv

    def full_disk(self, fh, **kwargs):
        real(self.head(1), fh, **kwargs)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", full_disk)
    with pytest.raises(OSError, match=r"cannot write .*delta0\.011.*No space left"):
        two_deltas.write_tables(tmp_path)
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_a_table_failure_does_not_cost_the_study(two_deltas, tmp_path, capsys, monkeypatch):
    """The study is written to --out before the tables, so a failure there keeps it."""
    import fastrisk.simulate

    monkeypatch.setattr(fastrisk.simulate, "power", lambda *a, **k: two_deltas)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    out = tmp_path / "study.csv"
    code = main(["simulate", "power", "--collections", "web2013_err20", "--delta", "0.011,0.014", "--quiet",
                 "--tables", str(blocker / "tables"), "--format", "csv", "--out", str(out)])
    assert code != 0
    assert out.exists() and out.read_text().startswith("delta,test,hypothesis,tails,significance,study")
    assert str(blocker) in capsys.readouterr().err


def test_a_cache_that_cannot_be_written_warns_and_the_study_goes_on(tmp_path):
    """A read-only (or full) fit cache aborted the study after fitting."""
    blocked = tmp_path / "file"
    blocked.write_text("x")
    cache = blocked / "fits"  # a directory under a regular file: every write fails
    with pytest.warns(RuntimeWarning, match=r"the fit of 'tiny' was not cached in .*file/fits"):
        res = power("err20", collections={"tiny": _tiny()}, delta=[0.02], topics=10, trials=20, replicates=0,
                    rng=3, progress=False, cache=cache, risk_nulls=False)
    assert res.n.sum() > 0


def test_ctrl_c_during_an_in_process_fit_keeps_the_finished_collections(tmp_path, monkeypatch):
    """Ctrl-C during an in-process ``simulate fit`` lost every finished collection."""
    real = fits._fit_margins
    calls = []

    def interrupted(values, measure):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(values, measure)

    monkeypatch.setattr(fits, "_fit_margins", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fits.fit_collections({"first": _tiny(6), "second": _tiny(6, first=6)}, "err20", cache=tmp_path)
    saved = [p.name for p in tmp_path.iterdir()]
    assert len(saved) == 1 and saved[0].startswith("first-")
    again = fits.fit_collections({"first": _tiny(6)}, "err20", cache=tmp_path)["first"]
    assert again.source.startswith("cache:")


def test_a_grid_cell_names_the_seed_that_reproduces_it(monkeypatch, tmp_path, capsys):
    """``grid --seed 1`` and ``type1 --seed 1`` gave different numbers with nothing saying why:
    the grid derives each cell's seed (`cell_seed`), prints it, and runs the very study that
    ``type1`` runs with that seed."""
    seen = []

    class _Stub:
        def write_tables(self, directory):
            return []

        def to_arrow(self):
            import pyarrow as pa

            return pa.table({"x": [1]})

    def fake_run(modes, measure, topics, **kw):
        seen.append((measure, topics, kw["sampling"].rng))
        return {m: _Stub() for m in modes}

    monkeypatch.setattr(studies, "_run", fake_run)
    grid.run_grid(["type1"], tmp_path, measures=["ap"], topics=[25], rng=1)
    (measure, topics, seed), = seen
    assert seed == grid.cell_seed(resolve_seed(1).kernel, measure, 25) and topics == 25
    err = capsys.readouterr().err
    assert re.search(rf"grid: ap n=25 done \(cell seed {seed}: type1/power/type3 --seed {seed} reproduce it\)", err)
