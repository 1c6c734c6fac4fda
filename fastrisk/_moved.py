"""The public module paths from before the layout of sub-packages (``fastrisk.matrix``,
``fastrisk.plot``, ``fastrisk.runs``, ...), deprecated: ``import fastrisk.plot`` and
``from fastrisk.tables import baseline_table`` still load the module where it lives now
(``fastrisk.viz.plot``, ``fastrisk.core.tables``), the same module object, lazily (so
``import fastrisk`` still does not import matplotlib), and warn with a `DeprecationWarning`
that names the new path and the release that removes the old one (`REMOVED_IN`), as scipy's
and numpy's ``_sub_module_deprecation`` do.

The real module is left as it was: its ``__spec__`` (which the import system writes on any
module a loader hands it) is put back once the alias is bound, so ``importlib.reload``,
``importlib.resources.files`` and ``importlib.util.find_spec`` of the new path behave as if
the old path had never been imported."""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import sys
import warnings

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

#: The release that removes the old paths (the next minor release after 0.1; a test checks
#: that `fastrisk.__version__` has not reached it).
REMOVED_IN = "0.2.0"

# Frames that are the import machinery or this package's own lazy loading, not the code that
# asked for the old path: the warning points past them (``warnings.warn``'s
# ``skip_file_prefixes`` needs Python 3.12).
_INTERNAL = ("<frozen importlib.", os.path.dirname(importlib.__file__), __file__,
             os.path.join(os.path.dirname(__file__), "__init__.py"))


def new_path(old: str) -> str | None:
    """Where the module of the old path ``old`` (or of a sub-module of one, ``fastrisk.runs.model``)
    lives now; None if ``old`` is not an old path."""
    head = next((o for o in MOVED if old == o or old.startswith(o + ".")), None)
    return None if head is None else MOVED[head] + old[len(head):]


def message(old: str) -> str:
    """The deprecation warning's text for the old path ``old``."""
    return (f"{old} is deprecated and will be removed in fastrisk {REMOVED_IN}: "
            f"import {new_path(old)} instead")


def _warn(old: str) -> None:
    """Warn, attributed to the first frame outside the import system and fastrisk's lazy loading
    (the ``import`` statement or the attribute access of the caller)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_INTERNAL):
        frame = frame.f_back
    if frame is None:  # pragma: no cover - an import from nowhere
        warnings.warn(message(old), DeprecationWarning, stacklevel=2)
        return
    glob = frame.f_globals
    warnings.warn_explicit(message(old), DeprecationWarning, frame.f_code.co_filename, frame.f_lineno,
                           module=glob.get("__name__", "<string>"),
                           registry=glob.setdefault("__warningregistry__", {}))


class _Alias:
    """Finds an old path of `MOVED` and loads it as the module it names now (a meta path
    finder and its loader, by protocol: ``importlib.abc`` would cost the command line's
    start-up tens of milliseconds before its Ctrl-C guard, `fastrisk.__main__`)."""

    def find_spec(self, fullname, path=None, target=None):
        # a moved sub-package's own sub-modules (fastrisk.runs.model) resolve too
        if not fullname.startswith("fastrisk.") or new_path(fullname) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec):
        module = importlib.import_module(new_path(spec.name))
        # the import system is about to overwrite the real module's __spec__ with the alias's
        spec.loader_state = module.__spec__
        return module

    def exec_module(self, module):
        """The module ran when it was imported under its own name: put its own ``__spec__``
        back and warn."""
        spec = module.__spec__
        if isinstance(spec.loader, _Alias) and spec.loader_state is not None:
            module.__spec__ = spec.loader_state
        _warn(spec.name)


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.insert(0, _Alias())


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
