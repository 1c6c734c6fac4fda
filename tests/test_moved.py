"""The old public module paths (`fastrisk._moved`): they load the module where it lives now,
warn with the new path and the release that removes them, and leave the real module alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fastrisk._moved import MOVED, REMOVED_IN, message, new_path

ROOT = Path(__file__).resolve().parents[1]


def _run(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.strip()


def test_the_message_names_the_new_path_and_the_release_that_removes_the_old():
    assert message("fastrisk.tables") == ("fastrisk.tables is deprecated and will be removed in fastrisk 0.2.0: "
                                          "import fastrisk.core.tables instead")
    assert new_path("fastrisk.runs.model") == "fastrisk.data.runs.model"
    assert new_path("fastrisk.data.runs") is None and new_path("fastrisk.tablesx") is None


def test_the_removal_release_is_still_ahead():
    """When the version reaches `REMOVED_IN`, the old paths must go (delete `_moved.MOVED`)."""
    import fastrisk

    def key(v):
        return tuple(int(p) for p in v.split(".")[:3])

    assert key(fastrisk.__version__) < key(REMOVED_IN)


#: Each old path imported in a fresh child of one interpreter (forked after ``import fastrisk``
#: and the heavy libraries, none of fastrisk's modules): its warnings and whether it is the new module.
_EACH_OLD_PATH = """
import importlib, json, os, sys, warnings
import numba, pyarrow, scipy.stats  # loaded once, before the forks
import fastrisk
from fastrisk._moved import MOVED
assert 'matplotlib' not in sys.modules
out = {}
for old in sorted(MOVED):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            module = importlib.import_module(old)
        seen = [module is importlib.import_module(MOVED[old]), [(x.category.__name__, str(x.message)) for x in caught]]
        os.write(w, json.dumps(seen).encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r, 'rb') as f:
        data = f.read()
    os.waitpid(pid, 0)
    out[old] = json.loads(data)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def each_old_path():
    import json

    return json.loads(_run(_EACH_OLD_PATH))


@pytest.mark.parametrize("old", sorted(MOVED))
def test_importing_an_old_path_warns_and_loads_the_same_module(old, each_old_path):
    """Each old path, in a fresh process: one DeprecationWarning with its message, pointing at
    the importing line; the module is the new one, matplotlib not imported by ``import fastrisk``."""
    same, caught = each_old_path[old]
    assert same, f"{old} is not {MOVED[old]}"
    assert [tuple(c) for c in caught] == [("DeprecationWarning", message(old))]


def test_the_warning_points_at_the_import_statement():
    code = (
        "import warnings\n"
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    from fastrisk.runs.model import Qrels\n"
        "    import fastrisk\n"
        "    fastrisk.plot\n"
        "print([(x.filename, x.lineno, str(x.message).split()[0]) for x in w])\n"
    )
    assert _run(code) == str([("<string>", 5, "fastrisk.runs"), ("<string>", 5, "fastrisk.runs.model"),
                              ("<string>", 7, "fastrisk.plot")])


def test_the_real_module_is_untouched_after_importing_its_old_path():
    """After ``import fastrisk.tables`` / ``fastrisk.runs``: the new module's ``__spec__`` is its
    own, ``importlib.reload`` runs it again, ``importlib.resources.files`` reads the package and
    ``importlib.util.find_spec`` finds the new path (they did nothing, raised TypeError, and
    returned the alias's spec)."""
    code = (
        "import importlib, importlib.resources, importlib.util, warnings\n"
        "warnings.simplefilter('ignore', DeprecationWarning)\n"
        "import fastrisk.tables, fastrisk.runs, fastrisk.runs.model, fastrisk.plot\n"
        "import fastrisk.core.tables as tables, fastrisk.data.runs as runs\n"
        "for name in ('fastrisk.core.tables', 'fastrisk.data.runs', 'fastrisk.data.runs.model', 'fastrisk.viz.plot'):\n"
        "    module = importlib.import_module(name)\n"
        "    assert module.__spec__.name == name, (name, module.__spec__)\n"
        "    assert importlib.util.find_spec(name).name == name\n"
        "    assert importlib.util.find_spec(name).origin == module.__file__\n"
        "before = tables.baseline_table\n"
        "assert importlib.reload(tables) is tables and tables.baseline_table is not before\n"
        "assert importlib.reload(fastrisk.tables) is tables\n"
        "assert (importlib.resources.files(runs) / 'model.py').is_file()\n"
        "assert importlib.resources.files('fastrisk.data.runs').name == 'runs'\n"
        "print('ok')\n"
    )
    assert _run(code) == "ok"


def test_the_new_paths_do_not_warn():
    code = (
        "import warnings\n"
        "warnings.simplefilter('error')\n"
        "import fastrisk, fastrisk.core.tables, fastrisk.data.runs.model, fastrisk.viz.plot\n"
        "fastrisk.risk, fastrisk.datasets, fastrisk.data.datasets\n"
        "print('ok')\n"
    )
    assert _run(code) == "ok"
