"""The package layout: `import fastrisk` is the package from anywhere; the licence is shipped."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_layout_is_simple_so_an_editable_install_is_a_plain_path():
    """setuptools installs a simple layout (every package at <root>/<dotted path>, one ``""``
    package-dir) editable as a path on sys.path, where a regular package beats the namespace
    package that a clone directory named ``fastrisk`` in the working directory would be.
    A mapped package (the old ``fastrisk.bench_data = bench_data``) makes it a meta-path
    finder that comes after that namespace package."""
    tool = _pyproject()["tool"]["setuptools"]
    assert tool.get("package-dir", {}) == {"": "."}
    assert tool["packages"]["find"]["include"] == ["fastrisk*"]
    # every folder of the package that holds Python code is a regular package, so `find` ships it
    for folder in {p.parent for p in (ROOT / "fastrisk").rglob("*.py")}:
        if "__pycache__" not in folder.parts:
            assert (folder / "__init__.py").is_file(), folder


def test_bundled_data_is_reachable_as_package_data():
    from fastrisk.data import datasets

    p = datasets.path("trec-matrices/web2012_err20.csv")
    assert p.is_file() and p.resolve() == (ROOT / "bench_data" / "trec-matrices" / "web2012_err20.csv").resolve()


def test_editable_install_imports_the_package_from_the_directory_that_holds_a_clone(tmp_path):
    """Build the editable wheel with setuptools, install it into a scratch site directory (its
    .pth processed as at start-up) and import fastrisk from a directory holding a clone named
    ``fastrisk``: the package, never the namespace package of the clone directory."""
    setuptools = pytest.importorskip("setuptools")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip(f"pyproject.toml needs setuptools >= 77, found {setuptools.__version__}")
    from setuptools import build_meta

    out = tmp_path / "wheel"
    out.mkdir()
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)
        name = build_meta.build_editable(str(out))
    finally:
        os.chdir(cwd)
        for junk in ("build", "fastrisk.egg-info"):
            shutil.rmtree(ROOT / junk, ignore_errors=True)
    scratch = tmp_path / "site"
    with zipfile.ZipFile(out / name) as whl:
        whl.extractall(scratch)
    work = tmp_path / "work"
    work.mkdir()
    (work / "fastrisk").symlink_to(ROOT, target_is_directory=True)  # a clone named fastrisk
    deps = [p for p in site.getsitepackages() if Path(p).is_dir()]
    code = (f"import site, sys; sys.path += {deps!r}; site.addsitedir({str(scratch)!r}); "
            "import fastrisk; print(fastrisk.__file__); fastrisk.risk")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # -S: only the scratch site's .pth is processed (not the environment's own install)
    proc = subprocess.run([sys.executable, "-S", "-c", code], cwd=work, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).resolve() == (ROOT / "fastrisk" / "__init__.py").resolve()


def test_the_licence_file_named_by_pyproject_exists():
    project = _pyproject()["project"]
    assert project["license"] == "MIT"
    for name in project["license-files"]:
        assert (ROOT / name).is_file(), name
    assert "MIT License" in (ROOT / "LICENSE").read_text()
