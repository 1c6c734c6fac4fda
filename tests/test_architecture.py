"""The layers of ARCHITECTURE.md hold: import-linter's contracts in pyproject.toml are kept."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_are_kept():
    exe = shutil.which("lint-imports")
    if exe is None:
        pytest.skip("import-linter is not installed (the test extra has it)")
    proc = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout


def _function_level_imports(tree):
    """(line, module) of every import of fastrisk below module level (in a function, a class or
    an ``if TYPE_CHECKING`` block)."""
    import ast

    found = []
    for node in ast.walk(tree):
        if node in tree.body or not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
        if isinstance(node, ast.ImportFrom) and node.level:
            names = ["fastrisk (relative)"]
        found += [(node.lineno, n) for n in names if n == "fastrisk" or n.startswith("fastrisk")]
    return found


def test_every_internal_function_level_import_says_why():
    """ARCHITECTURE.md: an import of fastrisk inside a function is never a way around a cycle;
    where one is needed (type checkers only, a CLI command's work kept out of ``--help``), its
    line carries the reason."""
    import ast

    bare = []
    for path in sorted((ROOT / "fastrisk").rglob("*.py")):
        lines = path.read_text().splitlines()
        for lineno, module in _function_level_imports(ast.parse("\n".join(lines))):
            if "#" not in lines[lineno - 1]:
                bare.append(f"{path.relative_to(ROOT)}:{lineno} imports {module}")
    assert not bare, "function-level imports of fastrisk without a reason comment:\n" + "\n".join(bare)


def test_the_check_finds_a_bare_function_level_import():
    import ast

    tree = ast.parse("import os\n\ndef f():\n    from fastrisk.core import tables\n    return tables\n")
    assert _function_level_imports(tree) == [(4, "fastrisk.core")]


def test_the_top_level_reads_as_the_layers():
    """The package's top level holds the layers' folders; the only modules there are the package
    itself, ``python -m fastrisk``, the public errors, the version and the old paths' finder."""
    flat = sorted(p.name for p in (ROOT / "fastrisk").glob("*.py"))
    assert flat == ["__init__.py", "__main__.py", "_moved.py", "_version.py", "errors.py"]


def test_a_sub_module_resolves_as_an_attribute_whatever_was_imported_first():
    """``import fastrisk.data.matrix`` before ``fastrisk.data.datasets`` (a benchmark did): the
    lazily loaded package still resolves its documented sub-module paths (fresh interpreter)."""
    import sys

    code = ("import fastrisk.data.matrix, fastrisk\n"
            "assert callable(fastrisk.data.datasets.trec2012_web)\n"
            "assert fastrisk.core.tables.baseline_table is fastrisk.baseline_table\n"
            "try:\n    fastrisk.data.nothing\nexcept AttributeError:\n    print('ok')\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "ok", proc.stderr[-2000:]
