"""Names are never paths, and every write goes through one atomic writer (issue #29, item 2):
collection names cannot reach outside the bundled data or the fit cache; a symlink planted in a
cache cannot make fastrisk overwrite what it points to; a full disk leaves no temporary file and
names the path; no module of fastrisk opens a file for writing by itself."""

from __future__ import annotations

import errno
import io
import os
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from fastrisk._runtime import atomic
from fastrisk.cli import main
from fastrisk.cli._output import write_table
from fastrisk.data import datasets
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.data.runs import RunSet
from fastrisk.errors import InputError
from fastrisk.simulate import fits, studies

ROOT = Path(__file__).resolve().parents[1] / "fastrisk"


def _toy_fit(monkeypatch):
    """fit_collections without pyvinecopulib: every margin a beta, every copula Gaussian."""
    monkeypatch.setattr(fits, "_fit_margins", lambda V, meas: [("beta", {"shape1": 2.0, "shape2": 3.0})] * len(V))
    monkeypatch.setattr(fits, "_fit_pairs", lambda V, pairs, seed: {
        f"{i},{j}": {"family": "gaussian", "rotation": 0, "parameters": [0.2], "vinecopula": 1, "loglik": 0.0,
                     "aic": 0.0} for i, j in pairs})
    rng = np.random.default_rng(0)
    return ScoreMatrix(rng.uniform(0.05, 0.9, (4, 12)), list("abcd"), [str(i) for i in range(12)], "AP")


def test_a_collection_name_cannot_write_outside_the_cache(tmp_path, monkeypatch):
    m = _toy_fit(monkeypatch)
    cache = tmp_path / "a" / "b" / "cache"
    got = fits.fit_collections({"../../escaped_ap": m, "/abs/x_ap": m, "plain_ap": m}, "AP", cache=cache)
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert all(p.parent == Path("a/b/cache") for p in written), written
    assert len(written) == 3 and any(p.name.startswith("plain_ap-") for p in written)
    again = fits.fit_collections({"../../escaped_ap": m}, "AP", cache=cache)  # found again under its hashed name
    assert again["../../escaped_ap"].source.startswith("cache:")
    assert got["../../escaped_ap"].name == "../../escaped_ap"


@pytest.mark.parametrize("name", ["../../../../outside/evil_err20", "web2012_err20/../web2012_err20", "Web2012_err20"])
def test_bundled_names_match_the_bundled_set_exactly(name, tmp_path, capsys):
    with pytest.raises(InputError, match="no bundled"):
        studies.resolve("ERR@20", [name])
    with pytest.raises(InputError, match="no bundled"):
        datasets.trec_matrix(name)
    code = main(["simulate", "fit", "--collections", name, "--measure", "ERR@20", "--cache", str(tmp_path / "c")])
    assert code != 0 and "no bundled" in capsys.readouterr().err


def test_an_existing_file_is_read_as_a_matrix_never_as_a_bundled_name(tmp_path, capsys):
    """A path is a collection of its own (issue #28: score-matrix files): read as a matrix, so a
    file that is not one is refused naming it, and nothing is written for it."""
    with pytest.raises(InputError, match="no bundled"):
        datasets.trec_matrix("/etc/passwd")
    with pytest.raises(InputError, match="/etc/passwd"):
        studies.resolve("ERR@20", ["/etc/passwd"])
    code = main(["simulate", "fit", "--collections", "/etc/passwd", "--measure", "ERR@20", "--cache", str(tmp_path / "c")])
    assert code != 0 and "/etc/passwd" in capsys.readouterr().err
    assert not any((tmp_path / "c").rglob("*")) if (tmp_path / "c").exists() else True
    assert not (tmp_path / "c").exists()
    assert "web2012_err20" in datasets.bundled_matrices()


def _plant(target: Path, victim: Path):
    """Symlinks at the temporary names the old writers used, and at the target itself."""
    for name in (f".{target.name}.{os.getpid()}.tmp", target.name):
        (target.parent / name).symlink_to(victim)


def _saves(tmp_path, monkeypatch):
    m = _toy_fit(monkeypatch)
    runs = RunSet.from_arrays(np.array([[[3, 1, 2]]]))
    fit = fits.fit_collections({"toy_ap": m}, "AP", cache=False)["toy_ap"]

    def fit_save(p):
        fit.path = p
        fit.save()

    return {"fit.json": fit_save, "runs.arrow": runs.save}


@pytest.mark.parametrize("what", ["fit.json", "runs.arrow"])
def test_a_planted_symlink_cannot_redirect_a_cache_write(tmp_path, monkeypatch, what):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    target = cache / what
    _plant(target, victim)
    _saves(tmp_path, monkeypatch)[what](target)
    assert victim.read_text() == "precious\n"
    assert not target.is_symlink() and target.stat().st_size > 0


class _Full(io.RawIOBase):
    def __init__(self, fd):
        os.close(fd)

    def writable(self):
        return True

    def write(self, b):
        raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("what", ["fit.json", "runs.arrow", "table"])
def test_a_full_disk_leaves_no_temporary_file_and_names_the_path(tmp_path, monkeypatch, what):
    saves = _saves(tmp_path, monkeypatch)
    real = os.fdopen
    monkeypatch.setattr(atomic.os, "fdopen", lambda fd, mode, **kw: (
        io.TextIOWrapper(io.BufferedWriter(_Full(fd)), **kw) if "b" not in mode else io.BufferedWriter(_Full(fd))))
    target = tmp_path / "out" / what
    target.parent.mkdir()
    with pytest.raises(OSError, match=re.escape(str(target))) as err:
        if what == "table":
            write_table(pa.table({"system": ["a"], "score": [0.5]}), "csv", str(target))
        else:
            saves[what](target)
    assert err.value.errno == errno.ENOSPC
    monkeypatch.setattr(atomic.os, "fdopen", real)
    assert list(target.parent.iterdir()) == []


def test_no_module_writes_a_file_but_the_atomic_writer():
    """Every write of fastrisk goes through `fastrisk._runtime.atomic` (mkstemp, fsync,
    os.replace, no planted link followed)."""
    pattern = re.compile(r"\.write_text\(|\.write_bytes\(|open\([^)]*['\"][wax]b?['\"]|(?<!pdf\.)savefig\((?!buf|fh)"
                         r"|pq\.write_table\((?![^,]*,\s*(buf|fh|sink))|to_csv\((?!fh)|np\.save")
    offenders = []
    for p in ROOT.rglob("*.py"):
        if p.name == "atomic.py":
            continue
        for n, line in enumerate(p.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if pattern.search(code) and "_atomic." not in code and "atomic_open" not in code:
                offenders.append(f"{p.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == []
