"""The public module paths from before the layout of sub-packages (``fastrisk.matrix``,
``fastrisk.plot``, ``fastrisk.runs``, ...), kept working: ``import fastrisk.plot`` and
``from fastrisk.tables import baseline_table`` load the module where it lives now
(``fastrisk.viz.plot``, ``fastrisk.core.tables``), the same module object, lazily (so
``import fastrisk`` still does not import matplotlib)."""

from __future__ import annotations

import importlib
import importlib.machinery
import sys

#: old public path -> where the module lives now (ARCHITECTURE.md)
MOVED = {
    "fastrisk.matrix": "fastrisk.data.matrix",
    "fastrisk.io": "fastrisk.data.io",
    "fastrisk.datasets": "fastrisk.data.datasets",
    "fastrisk.runs": "fastrisk.data.runs",
    "fastrisk.metrics": "fastrisk.measures.metrics",
    "fastrisk.pooling": "fastrisk.measures.pooling",
    "fastrisk.agreement": "fastrisk.measures.agreement",
    "fastrisk.tables": "fastrisk.core.tables",
    "fastrisk.values": "fastrisk.core.values",
    "fastrisk.baselines": "fastrisk.core.baselines",
    "fastrisk.resampling": "fastrisk.inference.resampling",
    "fastrisk.multiple": "fastrisk.inference.multiple",
    "fastrisk.plot": "fastrisk.viz.plot",
    "fastrisk.report": "fastrisk.viz.report",
    "fastrisk.simulate.figures": "fastrisk.viz.figures",
    "fastrisk.simulate.roptim": "fastrisk.simulate._r.roptim",
    "fastrisk.simulate.rks": "fastrisk.simulate._r.rks",
    "fastrisk.simulate.rmath": "fastrisk.simulate._r.rmath",
}


class _Alias:
    """Finds an old path of `MOVED` and loads it as the module it names now (a meta path
    finder and its loader, by protocol: ``importlib.abc`` would cost the command line's
    start-up tens of milliseconds before its Ctrl-C guard, `fastrisk.__main__`)."""

    def find_spec(self, fullname, path=None, target=None):
        # a moved sub-package's own sub-modules (fastrisk.runs.text) resolve too
        head = next((old for old in MOVED if fullname == old or fullname.startswith(old + ".")), None)
        if head is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec):
        head = next(old for old in MOVED if spec.name == old or spec.name.startswith(old + "."))
        return importlib.import_module(MOVED[head] + spec.name[len(head):])

    def exec_module(self, module):
        """The module ran when it was imported under its own name."""


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once) and bind the already imported moved
    modules as attributes of their old parents (``fastrisk.tables`` after ``import fastrisk``)."""
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.insert(0, _Alias())
    for old, new in MOVED.items():
        if new in sys.modules and old not in sys.modules:
            parent, _, leaf = old.rpartition(".")
            sys.modules[old] = sys.modules[new]
            if parent in sys.modules:
                setattr(sys.modules[parent], leaf, sys.modules[new])


def lazy_submodules(package: str):
    """A module ``__getattr__`` for ``package``: ``fastrisk.data.datasets`` resolves after any
    ``import fastrisk...`` (the sub-module is imported on first access), as it did when
    ``import fastrisk`` loaded everything eagerly."""

    def __getattr__(name: str):
        if not name.startswith("_"):
            try:
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
