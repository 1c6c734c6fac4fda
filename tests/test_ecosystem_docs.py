"""docs/ecosystem.md (issue #39): every ``python`` block runs, in order, in one namespace; a block
whose ``# needs:`` packages are not installed is skipped (the others still run), and a block
marked ``# not run`` is only shown."""

from __future__ import annotations

import importlib.util
import re
import warnings
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "docs" / "ecosystem.md"


def _blocks():
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_every_block_runs(capsys):
    namespace: dict = {}
    ran = 0
    for block in _blocks():
        first = block.splitlines()[0]
        if first.startswith("# not run"):
            continue
        needs = first.removeprefix("# needs:").split() if first.startswith("# needs:") else []
        if any(importlib.util.find_spec(n) is None for n in needs):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(block, str(PAGE), "exec"), namespace)  # noqa: S102 - the page's own examples
        ran += 1
    if ran == 0:
        pytest.skip("pandas is not installed")
    assert ran >= 2
    out = capsys.readouterr().out
    assert "AP TRisk(α=5)" in out and "| # | Model |" in out


def test_page_is_in_the_nav():
    nav = (PAGE.parents[1] / "mkdocs.yml").read_text(encoding="utf-8")
    assert "ecosystem.md" in nav
