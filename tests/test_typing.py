"""Type information: the aliases of fastrisk._runtime.aliases, their use in public signatures, and the
py.typed marker shipped in the wheel (PEP 561)."""

from __future__ import annotations

import inspect
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import fastrisk
from fastrisk._runtime import aliases as _typing

ROOT = Path(__file__).resolve().parent.parent


def test_aliases_exist_and_need_no_dataframe_library():
    for name in ("MatrixLike", "BaselineLike", "SeedLike", "AlphaLike"):
        assert hasattr(_typing, name)
    code = "import sys, fastrisk._runtime.aliases; print('pandas' in sys.modules, 'polars' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]


@pytest.mark.parametrize("func, params", [
    (fastrisk.risk, {"matrix": "MatrixLike", "baseline": "BaselineLike", "alpha": "AlphaLike | None"}),
    (fastrisk.topic_risk, {"matrix": "MatrixLike", "baseline": "BaselineLike"}),
    (fastrisk.tukey_hsd, {"rng": "SeedLike"}),
    (fastrisk.core.batch.bootstrap, {"rng": "SeedLike", "alpha": "AlphaLike | None"}),
])
def test_public_signatures_use_the_aliases(func, params):
    sig = inspect.signature(func)
    for name, annotation in params.items():
        assert sig.parameters[name].annotation == annotation


def test_py_typed_is_package_data():
    import tomllib

    assert (ROOT / "fastrisk" / "py.typed").is_file()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "py.typed" in data["fastrisk"]


@pytest.mark.slow
def test_the_wheel_ships_py_typed(tmp_path):
    setuptools = pytest.importorskip("setuptools")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip(f"pyproject.toml needs setuptools >= 77, found {setuptools.__version__}")
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__",
                                                             ".pytest_cache", "site"), symlinks=True)
    out = tmp_path / "dist"
    proc = subprocess.run([sys.executable, "-c", f"from setuptools import build_meta; "
                           f"print(build_meta.build_wheel({str(out)!r}))"], cwd=src, capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    wheel = out / proc.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
    assert "fastrisk/py.typed" in names
    assert "fastrisk/_runtime/aliases.py" in names
