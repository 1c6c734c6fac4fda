"""ARCHITECTURE.md and CONTRIBUTING.md name what exists: every file path, package and
``fastrisk.…`` module they name is there, every module of a ``←`` chain or a ``>`` chain of the
layer diagram is a module of its package, and every package of fastrisk is named in
ARCHITECTURE.md. A file that moves, or a package that is added, fails here until the documents
say so."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from fastrisk._moved import MOVED

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "fastrisk"
DOCS = ("ARCHITECTURE.md", "CONTRIBUTING.md")


def _text(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def _packages() -> list[str]:
    """Every package of fastrisk, as its path under ``fastrisk/`` (``data/runs``)."""
    return sorted(str(p.parent.relative_to(PKG)) for p in PKG.rglob("__init__.py") if p.parent != PKG)


def _exists(token: str) -> bool:
    """A path named in the documents: from the repository root or from ``fastrisk/``, a file,
    a directory or a module named without ``.py`` (``data/tabular``); a bare file name
    (``kinds.py``, named beside its package) anywhere in fastrisk, tests or benchmarks."""
    token = token.rstrip("/")
    for base in (ROOT, PKG):
        p = base / token
        if p.exists() or p.with_suffix(".py").exists():
            return True
    if "/" not in token:
        return any(any(d.rglob(token)) for d in (PKG, ROOT / "tests", ROOT / "benchmarks"))
    return False


def _code_spans(text: str) -> list[str]:
    return re.findall(r"`([^`\n]+)`", text)


PATHLIKE = re.compile(r"^[\w.\-]+(/[\w.\-]*)+$|^[\w\-]+\.(py|md|toml|json)$")


@pytest.mark.parametrize("doc", DOCS)
def test_every_named_path_exists(doc):
    missing = [t for t in _code_spans(_text(doc)) if PATHLIKE.match(t) and not _exists(t)]
    assert not missing, f"{doc} names paths that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS)
def test_every_named_fastrisk_module_exists(doc):
    missing = []
    for token in _code_spans(_text(doc)):
        m = re.match(r"^(fastrisk(?:\.\w+)+)$", token)
        if not m or any(token == old or token.startswith(old + ".") for old in MOVED):
            continue  # an old path named as such (it exists, with a DeprecationWarning: tests/test_moved.py)
        parts = m.group(1).split(".")
        for k in range(len(parts), 0, -1):  # the longest importable prefix, then attributes
            try:
                obj = importlib.import_module(".".join(parts[:k]))
            except ModuleNotFoundError:
                continue
            try:
                for attr in parts[k:]:
                    obj = getattr(obj, attr)
            except AttributeError:
                missing.append(token)
            break
        else:
            missing.append(token)
    assert not missing, f"{doc} names fastrisk modules or names that do not exist: {missing}"


def _modules_of(package: str) -> set[str]:
    d = PKG / package
    return {p.stem for p in d.glob("*.py")} | {p.parent.name for p in d.glob("*/__init__.py")}


def test_every_chain_of_what_lives_where_names_modules_of_its_package():
    """The bullets ``**X** (`fastrisk/pkg/`): `a` ← `b` ...`` of ARCHITECTURE.md."""
    text = _text("ARCHITECTURE.md")
    checked = 0
    for bullet in re.split(r"\n- ", text):
        m = re.search(r"\(`fastrisk/([\w/]+)/`\)", bullet)
        if not m or "←" not in bullet:
            continue
        package = m.group(1)
        chain = bullet[m.end():]
        while re.search(r"\([^()]*\)", chain):  # what a module holds, in parentheses, is not the chain
            chain = re.sub(r"\([^()]*\)", "", chain)
        names = set(re.findall(r"`(\w+)`", chain))
        unknown = sorted(names - _modules_of(package))
        assert not unknown, f"ARCHITECTURE.md's {package} chain names no such module: {unknown}"
        checked += len(names)
    assert checked >= 15


def _tree() -> dict[str, str]:
    """The layer diagram of ARCHITECTURE.md: each package line (``simulate/``) -> its text."""
    block = re.search(r"```\nfastrisk/\n(.*?)```", _text("ARCHITECTURE.md"), re.S).group(1)
    entries: dict[str, str] = {}
    current = None
    for line in block.splitlines():
        head = re.match(r"^  (\S.*?)(?:\s{2,}(.*))?$", line)
        if head:
            current = head.group(1)
            entries[current] = head.group(2) or ""
        elif current is not None:
            entries[current] += " " + re.sub(r"^\s*│?\s*", "", line)
    return entries


def test_the_layer_diagram_names_packages_and_modules_that_exist():
    entries = _tree()
    assert len(entries) >= 8
    for head, text in entries.items():
        for word in head.split():
            if word.endswith("/"):
                assert (PKG / word.rstrip("/") / "__init__.py").exists(), f"no package fastrisk/{word}"
            else:
                assert (PKG / f"{word}.py").exists(), f"no module fastrisk/{word}.py"
        packages = [w.rstrip("/") for w in head.split() if w.endswith("/")]
        if len(packages) != 1:
            continue
        # a ">" chain outside parentheses names the package's modules, highest first
        flat = re.sub(r"\([^()]*\)", "", text)
        for chain in re.findall(r"(?:[\w, ]+ > )+[\w, ]+", flat):
            names = {w for part in chain.split(">") for w in re.split(r"[,\s]+", part) if w}
            names = {n for n in names if n not in ("and",)}
            unknown = sorted(names - _modules_of(packages[0]))
            assert not unknown, f"ARCHITECTURE.md's {packages[0]}/ chain names no such module: {unknown}"


def test_the_simulate_chain_names_every_simulate_module():
    text = _tree()["simulate/"]
    modules = {m for m in _modules_of("simulate") if m != "__init__"}
    named = set(re.findall(r"\b(\w+)\b", text))
    assert modules - {"_r"} <= named, f"simulate/ in ARCHITECTURE.md misses {sorted(modules - named)}"


def test_every_package_is_named_in_architecture():
    text = _text("ARCHITECTURE.md")
    missing = [p for p in _packages() if f"{p}/" not in text and "fastrisk." + p.replace("/", ".") not in text]
    assert not missing, f"ARCHITECTURE.md names no package {missing}"


def test_the_checks_find_what_is_missing():
    assert not _exists("fastrisk/no_such_module.py") and not _exists("no_such_module.py")
    assert _exists("data/tabular") and _exists("pyproject.toml") and _exists("kinds.py")
    assert PATHLIKE.match("tests/reference/runs.py") and not PATHLIKE.match("a b")
    assert "data/runs" in _packages() and "simulate/_r/_kernels" in _packages()
