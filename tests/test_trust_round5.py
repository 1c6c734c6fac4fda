"""Trust and first contact, round 5 (issue #41): the calibration cache's ``nulls`` validated,
the environment checked before numba and pyarrow load, concurrent sweeps and calibrations
into one place, lattice measures snapped before hashing, printed seeds that reproduce."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from fastrisk.errors import CacheWarning
from fastrisk.simulate import fits

ROOT = Path(__file__).resolve().parent.parent

# ------------------------------------------------------------- item 1: the fit file's `nulls`


def _fit_doc(S=3):
    """A fit document as `CollectionFit.to_json` writes it, with one calibrated risk null."""
    import numpy as np

    values = np.random.default_rng(1).uniform(0.05, 0.95, (S, 25)).round(4)
    doc = {"version": fits.FIT_VERSION, "name": "toy_ap", "measure": "ap", "hash": "h" * 64, "ties_seed": 0,
           "kept": list(range(S)), "removed": {},
           "margins": [{"family": "beta", "params": {"shape1": 2.0 + i, "shape2": 3.0}, "df": 2.0, "aic": -1.0}
                       for i in range(S)],
           "copulas": {f"{i},{j}": {"family": "gaussian", "rotation": 0, "parameters": [0.3], "vinecopula": 1,
                                    "loglik": 1.0, "aic": 0.5} for i in range(S) for j in range(i + 1, S)},
           "h1": {"0.05": {"pairs": {"1": [[0, 2.5, 3.0]]}, "failed": 0}},
           "nulls": {"urisk:5:0": {"pairs": {"1": [[0, 1.2, 0.9, 0.41, 0.0], [2, 0.8, 1.1, 0.39, 0.0]]},
                                   "failed": 1, "calls": 12}},
           "values": values.tolist()}
    doc["sha256"] = fits.fit_checksum(doc)
    return doc


def _load(tmp_path, doc):
    p = tmp_path / "toy_ap-0123.json"
    p.write_text(json.dumps(doc))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = fits.load_fit(p, "h" * 64)
    return got, [w for w in caught if issubclass(w.category, CacheWarning)], p


def test_a_good_calibration_loads(tmp_path):
    got, warned, _ = _load(tmp_path, _fit_doc())
    assert not warned and got is not None and got.nulls["urisk:5:0"]["calls"] == 12


def _set(doc, path, value):
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value


NULLS = ("nulls", "urisk:5:0")


@pytest.mark.parametrize(("path", "value", "message"), [
    (NULLS + ("pairs", "1", 0, 1), -1.2, "beta shapes > 0"),
    (NULLS + ("pairs", "1", 0, 2), float("nan"), "beta shapes > 0"),
    (NULLS + ("pairs", "1", 0, 1), 0.0, "beta shapes > 0"),
    (NULLS + ("pairs", "1", 1, 0), 7, "other kept runs"),
    (NULLS + ("pairs", "1", 1, 0), 1, "other kept runs"),
    (NULLS + ("pairs", "1", 1), [2, 0.8, 1.1], "other kept runs"),
    (NULLS + ("pairs", "1", 0, 3), "0.4", "finite numbers"),
    (NULLS + ("pairs",), [], "not pairs and counts"),
    (NULLS + ("pairs",), "x", "not pairs and counts"),
    (NULLS + ("failed",), -1, "not pairs and counts"),
    (NULLS + ("calls",), 1.5, "not pairs and counts"),
    (NULLS, [], "not pairs and counts"),
    (("nulls",), [], "'nulls' is not an object"),
    (("nulls", "urisk:5:0", "pairs", "9"), [], "baseline 9"),
    (("h1", "0.05", "pairs", "1", 0, 1), -2.5, "beta shape that is not > 0"),
])
def test_a_damaged_calibration_is_refitted_with_a_warning_naming_the_file_and_key(tmp_path, path, value, message):
    doc = _fit_doc()
    _set(doc, path, value)
    doc["sha256"] = fits.fit_checksum(doc)  # a consistent checksum: the schema check must catch it
    got, warned, p = _load(tmp_path, doc)
    assert got is None
    assert len(warned) == 1 and str(p) in str(warned[0].message) and "refitted" in str(warned[0].message)
    assert message in str(warned[0].message)


@pytest.mark.parametrize("key", ["urisk:5", "cubic:0:0", "urisk:-1:0", "smooth:0:nan", 3])
def test_a_calibration_under_a_key_that_is_no_null_is_refitted(tmp_path, key):
    doc = _fit_doc()
    doc["nulls"] = {str(key): doc["nulls"]["urisk:5:0"]}
    doc["sha256"] = fits.fit_checksum(doc)
    got, warned, _ = _load(tmp_path, doc)
    assert got is None and len(warned) == 1 and "not a risk null's key" in str(warned[0].message)


# ------------------------------------- items 3 and 6: the environment, refused in one line


def _fastrisk(*args, env=None, preexec_fn=None, cwd=None, timeout=600):
    import os
    import subprocess
    import sys

    full = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "fastrisk", *args], capture_output=True, text=True, env=full,
                          preexec_fn=preexec_fn, cwd=cwd, timeout=timeout)


@pytest.mark.parametrize("value", ["0", "-2", "two", ""])
@pytest.mark.parametrize("command", [["info", "--help"], ["risk", "x.csv", "--baseline", "a"], ["warmup"]])
def test_numba_num_threads_that_is_no_thread_count_is_one_line_exit_2(value, command):
    got = _fastrisk(*command, env={"NUMBA_NUM_THREADS": value})
    assert got.returncode == 2, got.stderr
    assert got.stderr.count("\n") == 1 and "Traceback" not in got.stderr and not got.stdout
    assert f"NUMBA_NUM_THREADS={value!r} is not a thread count" in got.stderr and "whole number >= 1" in got.stderr


def test_a_positive_numba_num_threads_is_accepted():
    got = _fastrisk("info", "--help", env={"NUMBA_NUM_THREADS": "1"})
    assert got.returncode == 0 and "usage: fastrisk info" in got.stdout


@pytest.mark.skipif(__import__("sys").platform == "win32", reason="no address-space limit on Windows")
@pytest.mark.parametrize("megabytes", [400, 700])
def test_a_memory_limit_too_small_to_load_the_libraries_is_one_line_exit_2(megabytes):
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, resource.getrlimit(resource.RLIMIT_AS)[1]))

    got = _fastrisk("info", "bench_data/trec-matrices/web2012_err20.csv", preexec_fn=limit, cwd=ROOT, timeout=120)
    assert got.returncode == 2, got.stderr
    assert got.stderr.count("\n") == 1 and "Traceback" not in got.stderr
    assert f"the memory limit (ulimit -v) is {megabytes}.0 MiB, too small" in got.stderr
    assert "ulimit -v 1048576" in got.stderr


def test_a_library_that_cannot_be_mapped_under_a_limit_names_the_limit(monkeypatch):
    from fastrisk._runtime import resources

    monkeypatch.setattr(resources, "address_space_limit", lambda: 3 << 30)
    assert resources.address_space_problem() is None
    got = resources.address_space_problem(ImportError("libarrow.so.2600: failed to map segment from shared object"))
    assert got.startswith("the memory limit (ulimit -v) is 3.0 GiB, too small to load numba, SciPy and pyarrow "
                          "(ImportError: libarrow.so.2600: failed to map segment")
    assert "raise it to at least 6.0 GiB (ulimit -v 6291456)" in got
    monkeypatch.setattr(resources, "address_space_limit", lambda: None)
    assert resources.address_space_problem(ImportError("x")) is None


# ---------------------------------------------- item 7: every printed seed repeats its run

MATRIX = str(ROOT / "bench_data/trec-matrices/web2012_err20.csv")


def _main(capsys, *argv):
    import re

    from fastrisk.cli import main

    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert status == 0, err
    printed = re.findall(r"seed (\d+)", out + err)
    return out, err, printed


SEEDED = {
    "bootstrap": ["bootstrap", MATRIX, "--baseline", "run24", "--alpha", "0,1", "--replicates", "300"],
    "bootstrap-csv": ["bootstrap", MATRIX, "--baseline", "run24", "--replicates", "300", "--format", "csv"],
    "test-bootstrap": ["test", MATRIX, "--baseline", "run24", "--method", "bootstrap", "--replicates", "300"],
    "test-permutation": ["test", MATRIX, "--baseline", "run24", "--method", "permutation", "--replicates", "300"],
    "test-tukey": ["test", MATRIX, "--method", "tukey", "--replicates", "50"],
    "pool-bias": ["pool-bias", str(ROOT / "bench_data/trec2012-web/runs"), "--qrels",
                  str(ROOT / "bench_data/trec2012-web/qrels.adhoc.txt"), "--depth", "5", "--measure", "P@5",
                  "--widths", "4", "--repeats", "2", "--common-topics", "10", "--topic-repeats", "3"],
}


@pytest.mark.parametrize("command", sorted(SEEDED))
def test_an_unseeded_runs_printed_seed_repeats_it_byte_for_byte(capsys, command):
    out, err, printed = _main(capsys, *SEEDED[command])
    assert len(set(printed)) == 1, (out[:300], err)
    seed = printed[0]
    assert f"--seed {seed} repeats this run" in err
    again, _, printed_again = _main(capsys, *SEEDED[command], "--seed", seed)
    assert again == out
    assert printed_again in ([], [seed])  # a seed given is printed (bootstrap's caption) as given


def test_bootstrap_prints_the_seed_it_was_given_and_that_seed_repeats_it(capsys):
    out, err, printed = _main(capsys, *SEEDED["bootstrap"], "--seed", "1")
    assert printed == ["1"] and "seed" not in err
    again, _, _ = _main(capsys, *SEEDED["bootstrap"], "--seed", "1")
    assert again == out


def test_the_seed_is_recorded_in_the_outputs_metadata(capsys, tmp_path):
    from fastrisk.data.io import read_table

    out = tmp_path / "b.parquet"
    _main(capsys, *SEEDED["bootstrap"], "--seed", "7", "--format", "parquet", "--out", out)
    assert read_table(out).schema.metadata[b"seed"] == b"7"


def test_a_negative_seed_is_refused(capsys):
    from fastrisk.cli import main

    assert main([*SEEDED["bootstrap"], "--seed", "-1"]) == 2
    assert "--seed must be a non-negative integer, got -1" in capsys.readouterr().err


SWEEP = """
[[experiment]]
name = "boot"
kind = "bootstrap"
data = "{matrix}"
[experiment.params]
baseline = "run24"
replicates = 200
[experiment.grid]
alpha = [0, 5]
"""


def test_an_unseeded_sweeps_printed_root_seed_repeats_it(capsys, tmp_path):
    grid = tmp_path / "g.toml"
    grid.write_text(SWEEP.format(matrix=MATRIX))
    _, err, printed = _main(capsys, "sweep", grid, "--out", tmp_path / "a.parquet")
    seed = printed[0]
    assert f"--seed {seed} repeats this run" in err
    _, err2, printed2 = _main(capsys, "sweep", grid, "--out", tmp_path / "b.parquet", "--seed", seed)
    assert printed2 == [seed] and "repeats this run" not in err2
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()


# ------------------------------------- item 12: evaluate --matrix-out writes the file named

WEB = ROOT / "bench_data/trec2012-web"


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".arrow"])
def test_matrix_out_with_several_measures_writes_the_file_named_as_the_readme_says(capsys, tmp_path, suffix):
    import numpy as np

    import fastrisk
    from fastrisk.cli import main

    out = tmp_path / f"web12{suffix}"
    assert main(["evaluate", str(WEB / "runs"), "--qrels", str(WEB / "qrels.adhoc.txt"), "--measure", "nDCG@20",
                 "--measure", "ERR@20", "--matrix-out", str(out)]) == 0
    err = capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]
    assert f"wrote {out}: nDCG@20, ERR@20, 8 systems x 50 topics each" in err
    ev = fastrisk.evaluate(fastrisk.read_runs(WEB / "runs"), fastrisk.read_qrels(WEB / "qrels.adhoc.txt"),
                           ["nDCG@20", "ERR@20"])
    for measure in ("nDCG@20", "ERR@20"):
        got = fastrisk.read_matrix(out, measure=measure)
        assert got.measure == measure and got.systems == ev[measure].systems and got.topics == ev[measure].topics
        np.testing.assert_array_equal(got.values, ev[measure].values)
    if suffix == ".parquet":  # the README's next step
        assert main(["info", str(out)]) == 0
        text = capsys.readouterr().out
        assert "measure:  nDCG@20" in text and "measure:  ERR@20" in text and "8 systems x 50 topics" in text
        assert main(["info", str(out), "--measure", "ERR@20"]) == 0
        assert "nDCG@20" not in capsys.readouterr().out


def test_matrix_out_with_one_measure_is_that_scorematrix(capsys, tmp_path):
    import fastrisk
    from fastrisk.cli import main

    out = tmp_path / "m.parquet"
    assert main(["evaluate", str(WEB / "runs"), "--qrels", str(WEB / "qrels.adhoc.txt"), "--measure", "AP",
                 "--matrix-out", str(out)]) == 0
    assert f"wrote {out}: AP, 8 systems x 50 topics" in capsys.readouterr().err
    assert fastrisk.read_matrix(out).measure == "AP"


# ------------------------------ item 5: a lattice measure's scores snapped before hashing


def _respelled(values):
    """The same scores, computed another way: 3/10 as 0.30000000000000004 (0.1 + 0.2), every
    other lattice point one ulp off, alternately above and below."""
    import numpy as np

    V = np.array(values, dtype=np.float64)
    up = np.nextafter(V, 2.0)
    down = np.nextafter(V, -1.0)
    odd = (np.arange(V.size).reshape(V.shape) % 2).astype(bool)
    out = np.where(odd, up, down)
    out[V == 0.0] = 0.0  # 0 is not respelled (and must stay in [0, 1])
    out[V == 1.0] = 1.0
    out[V == 0.3] = 0.1 + 0.2
    return out


def test_snap_to_support_puts_noise_on_the_lattice_and_leaves_rounded_data_alone():
    import numpy as np

    from fastrisk.simulate.measures import snap_to_support

    V = np.arange(11, dtype=np.float64).reshape(1, -1) / 10
    np.testing.assert_array_equal(snap_to_support(_respelled(V), "P@10"), V)
    rr = np.array([[0.3333, 1 / 3 + 1e-12, 0.5, 0.0, 0.05 + 3e-17]])  # the study's RR is rounded to 4 decimals
    np.testing.assert_array_equal(snap_to_support(rr, "RR"), [[0.3333, 1 / 3, 0.5, 0.0, 0.05]])
    ap = np.array([[0.30000000000000004]])
    assert snap_to_support(ap, "AP")[0, 0] == 0.30000000000000004  # continuous: as given


def test_the_same_p10_matrix_spelled_two_ways_gets_the_same_fit(tmp_path):
    import numpy as np

    pytest.importorskip("pyvinecopulib")
    from fastrisk.data.datasets import trec_matrix
    from fastrisk.data.matrix import ScoreMatrix
    from fastrisk.simulate.fits import fit_collections

    m = trec_matrix("adhoc5_p10")
    V = m.values[:8]
    W = _respelled(V)
    assert (W != V).sum() > 100 and (W == 0.1 + 0.2).any()
    a = fit_collections({"p": ScoreMatrix(V, m.systems[:8], m.topics)}, "p10", cache=False)["p"]
    b = fit_collections({"p": ScoreMatrix(W, m.systems[:8], m.topics)}, "p10", cache=tmp_path)["p"]
    assert a.hash == b.hash
    np.testing.assert_array_equal(a.values, b.values)
    assert a.copulas == b.copulas
    assert [(x.family, x.params) for x in a.margins] == [(x.family, x.params) for x in b.margins]


# -------------------------- item 4: one writer at a time, merge on write for the fit cache

_HOLD = """
import sys
from fastrisk._runtime.atomic import file_lock
with file_lock(sys.argv[1]):
    print("locked", flush=True)
    sys.stdin.readline()
"""


def _holder(path):
    import os
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-c", _HOLD, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, env=os.environ.copy())
    assert p.stdout.readline().strip() == "locked"
    return p


def test_a_sweep_into_an_out_another_process_is_writing_is_refused_and_leaves_it_alone(tmp_path):
    grid = tmp_path / "g.toml"
    grid.write_text(SWEEP.format(matrix=MATRIX))
    out = tmp_path / "r.parquet"
    holder = _holder(out)  # another process writing OUT (a sweep between two checkpoints)
    try:
        (tmp_path / "r.parquet.parts").mkdir()
        (tmp_path / "r.parquet.parts" / "part-1.parquet").write_bytes(b"theirs")
        got = _fastrisk("sweep", str(grid), "--out", str(out), "--seed", "1", cwd=tmp_path)
        assert got.returncode == 2 and got.stderr.count("\n") == 1, got.stderr
        assert f"another sweep is writing {out} (and its checkpoint {out}.parts) now" in got.stderr
        assert (tmp_path / "r.parquet.parts" / "part-1.parquet").read_bytes() == b"theirs"  # not removed
    finally:
        holder.communicate("\n")
    (tmp_path / "r.parquet.parts" / "part-1.parquet").unlink()
    (tmp_path / "r.parquet.parts").rmdir()
    got = _fastrisk("sweep", str(grid), "--out", str(out), "--seed", "1", cwd=tmp_path)
    assert got.returncode == 0 and out.exists() and not (tmp_path / "r.parquet.parts").exists()


def test_two_sweeps_started_together_into_one_out_leave_one_intact_result(tmp_path):
    import os
    import subprocess
    import sys

    grid = tmp_path / "g.toml"
    grid.write_text(SWEEP.format(matrix=MATRIX).replace("replicates = 200", "replicates = 20000"))
    out = tmp_path / "r.parquet"
    argv = [sys.executable, "-m", "fastrisk", "sweep", str(grid), "--out", str(out), "--seed", "3", "--quiet"]
    procs = [subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=os.environ.copy()) for _ in range(2)]
    results = [(p.wait(timeout=600), p.stderr.read()) for p in procs]
    for status, err in results:
        assert status == 0 or (status == 2 and "another sweep is writing" in err), err
    assert any(status == 0 for status, _ in results)
    assert not (tmp_path / "r.parquet.parts").exists()
    again = _fastrisk("sweep", str(grid), "--out", str(tmp_path / "s.parquet"), "--seed", "3", "--quiet")
    assert again.returncode == 0 and out.read_bytes() == (tmp_path / "s.parquet").read_bytes()


_CALIBRATE = """
import json, sys, time
from pathlib import Path
from fastrisk.simulate import fits
path, key, go = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
fit = fits.load_fit(path, "h" * 64)
assert fit is not None
print("loaded", flush=True)
while not go.exists():
    time.sleep(0.01)
fit.nulls[key] = {"pairs": {"1": [[0, 1.5, 0.5, 0.4, 0.0]]}, "failed": 0, "calls": 3}
fit.save()
"""


def test_two_processes_calibrating_different_nulls_into_one_cache_file_both_keep_theirs(tmp_path):
    import os
    import subprocess
    import sys

    path = tmp_path / "toy_ap-0123.json"
    path.write_text(json.dumps(_fit_doc()))
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", _CALIBRATE, str(path), key, str(go)], stdout=subprocess.PIPE,
                              text=True, env=os.environ.copy()) for key in ("urisk:1:0", "smooth:0:0")]
    for p in procs:  # both read the file before either writes: the race of two `simulate` runs
        assert p.stdout.readline().strip() == "loaded"
    go.touch()
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    got, warned, _ = _load(tmp_path, json.loads(path.read_text()))
    assert not warned and sorted(got.nulls) == ["smooth:0:0", "urisk:1:0", "urisk:5:0"]


# ------------------------------------------------------------------ item 14: first contact


def test_risk_with_the_smooth_value_function_names_it_instead_of_nan_alpha(capsys):
    from fastrisk.cli import main

    for fmt in ("table", "csv"):
        assert main(["risk", MATRIX, "--baseline", "median", "--value", "smooth", "--convention", "minus",
                     "--format", fmt]) == 0
        out = capsys.readouterr().out
        header = out.splitlines()[0].replace(",", " ").split()
        assert header[:3] == ["system", "value", "urisk"] and "alpha" not in header and "loss_weight" not in header
        assert "nan" not in out.splitlines()[1] and "smooth" in out.splitlines()[1]
    assert main(["risk", MATRIX, "--baseline", "run24", "--alpha", "1", "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("system,alpha,loss_weight,urisk")


def test_to_markdown_says_what_the_cells_are_and_how_the_rows_are_sorted():
    import fastrisk

    m = fastrisk.read_matrix(MATRIX)
    res = fastrisk.risk(m, "run24", alpha=[0, 5])
    first = res.to_markdown().splitlines()[0]
    assert first == ("TRisk of every system against the baseline run24, one column per α; rows sorted by the mean "
                     "of their cells, descending (rows without a value last).")
    assert res.to_markdown(sort_by=5, sort="ascending").splitlines()[0].endswith(
        "rows sorted by the column α = 5, ascending (rows without a value last).")
    assert res.to_markdown(sort=None).splitlines()[0].endswith("rows in the result's order.")
    assert res.to_markdown(caption="").startswith("| system |")
    assert res.to_markdown(caption="Mine.").splitlines()[0] == "Mine."


def test_the_demo_prints_the_published_values_beside_its_own_and_the_largest_difference(capsys):
    from fastrisk.cli import main

    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("system") and "urisk_paper" in line).split()
    assert header.index("urisk_paper") == header.index("urisk") + 1
    assert header.index("pvalue_paper") == header.index("pvalue") + 1
    row = next(line for line in out.splitlines() if line.startswith("qutwb") and " 10.0000" in line).split()
    assert row[header.index("trisk")] == "-2.7295" and row[header.index("trisk_paper")] == "-2.7295"
    assert row[header.index("pvalue_paper")] == "0.0090"
    line = next(line for line in out.splitlines() if line.startswith("Largest difference"))
    assert "the 8 cells recorded" in line and "all within the published rounding" in line


def _python_blocks(text):
    import re

    return re.findall(r"```python\n(.*?)```", text, re.S)


@pytest.mark.slow
@pytest.mark.parametrize("page", ["README.md", "docs/quickstart.md"])
def test_the_first_python_examples_run_without_a_warning(page, tmp_path, monkeypatch):
    (tmp_path / "bench_data").symlink_to(ROOT / "bench_data", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    blocks = _python_blocks((ROOT / page).read_text(encoding="utf-8"))
    code = blocks[0] if page == "README.md" else "\n".join(blocks)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the duplicate runs' ZeroVarianceWarning was the first thing a user saw
        exec(compile(code, page, "exec"), {})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench_data"]  # nothing written into the clone


def test_the_quickstarts_shell_lines_write_into_a_temporary_directory():
    import re

    text = (ROOT / "docs/quickstart.md").read_text(encoding="utf-8")
    block = re.findall(r"```bash\n(.*?)```", text, re.S)[-1]
    assert block.startswith("out=$(mktemp -d)\n")
    outs = re.findall(r"--out (\S+)", block)
    assert outs and all(o.startswith('"$out/') for o in outs)


def test_the_bundled_datas_readme_says_why_runs_are_duplicates():
    import itertools

    import numpy as np

    from fastrisk.data.datasets import trec_matrix

    text = (ROOT / "fastrisk/bench_data/README.md").read_text(encoding="utf-8")
    m = trec_matrix("web2012_err20")
    same = [f"`{m.systems[i]}`/`{m.systems[j]}`" for i, j in itertools.combinations(range(m.n_systems), 2)
            if np.array_equal(m.values[i], m.values[j])]
    assert same == ["`run5`/`run31`", "`run6`/`run32`"]
    assert all(pair in text for pair in same) and "Urbano" in text and "ZeroVarianceWarning" in text


def test_the_built_documentation_is_ignored_by_git():
    assert "site/" in (ROOT / ".gitignore").read_text(encoding="utf-8").split()
