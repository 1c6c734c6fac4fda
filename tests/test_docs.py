"""The documentation site: the worked example's numbers are what fastrisk computes, the
quickstart runs, the CLI page covers every command, and ``mkdocs build --strict`` passes."""

from __future__ import annotations

import doctest
import importlib.util
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _blocks(page: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", (DOCS / page).read_text(encoding="utf-8"), flags=re.DOTALL)


def test_worked_example_outputs_are_what_fastrisk_computes():
    text = "\n".join(_blocks("example.md", "pycon"))
    assert text.count(">>>") >= 15
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {}, "docs/example.md", str(DOCS / "example.md"), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 15 and result.failed == 0


def test_cli_page_documents_every_command():
    sys.path.insert(0, str(DOCS / "_hooks"))
    try:
        import cli_help
    finally:
        sys.path.pop(0)
    from fastrisk.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    page = cli_help.on_page_markdown((DOCS / "cli.md").read_text(encoding="utf-8"), None, None, None)
    assert cli_help.MARKER not in page
    for name in sub.choices:
        assert f"### `fastrisk {name}`" in page and f"usage: fastrisk {name}" in page


def test_every_api_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in (DOCS / "api").glob("*.md"):
        assert f"api/{page.name}" in nav
    for page in DOCS.glob("*.md"):
        assert page.name in nav


@pytest.mark.slow
def test_quickstart_runs_as_written(tmp_path, monkeypatch):
    (tmp_path / "bench_data").symlink_to(ROOT / "bench_data", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    code = "\n".join(_blocks("quickstart.md", "python"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, "docs/quickstart.md", "exec"), {})


@pytest.mark.slow
def test_mkdocs_build_strict(tmp_path):
    for module in ("mkdocs", "mkdocstrings", "material"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[docs]')")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    site = tmp_path / "site"
    assert (site / "example" / "index.html").is_file()
    assert "fastrisk pool-bias" in (site / "cli" / "index.html").read_text(encoding="utf-8")
    # mkdocstrings renders Markdown, not Sphinx: a role left in a docstring shows up raw
    raw = re.compile(r":(?:py:)?(?:class|func|mod|meth|attr|data|exc|obj):(?:`|<code>)")
    found = [f"{page.relative_to(site)}: {m.group(0)}" for page in sorted(site.rglob("*.html"))
             for m in raw.finditer(page.read_text(encoding="utf-8"))]
    assert not found, f"{len(found)} raw Sphinx roles in the built site, e.g. {found[:5]}"
