"""Optional dependencies: the one way fastrisk imports them, and the one message when one is
missing, which names the ``pip install "fastrisk[EXTRA]"`` that brings it (the extras of
``pyproject.toml``)."""

from __future__ import annotations

import importlib

from fastrisk.errors import InputError

#: The extra of ``pyproject.toml`` that installs each optional top-level module.
EXTRAS = {"pandas": "pandas", "matplotlib": "plot", "pyvinecopulib": "simulate", "distributed": "dask",
          "dask": "dask", "tqdm": "progress", "lightgbm": "ltr"}


class MissingExtraError(InputError, ModuleNotFoundError):
    """An optional dependency is not installed; the message gives the ``pip install`` that fixes
    it. An `InputError` (the command line prints it as one line) and a ``ModuleNotFoundError``
    (code that falls back when a module is missing keeps working)."""


def install_hint(module: str, extra: str | None = None) -> str:
    """``pip install "fastrisk[EXTRA]"`` for ``module`` (its top-level package)."""
    top = module.partition(".")[0]
    return f'pip install "fastrisk[{extra or EXTRAS.get(top, top)}]"'


def require(module: str, extra: str | None = None, *, what: str | None = None):
    """Import and return ``module`` (e.g. ``"matplotlib.pyplot"``); if it (or its top-level
    package) is not installed, raise `MissingExtraError`: "``what`` needs ``package``, which is
    not installed: pip install "fastrisk[``extra``]"" (``extra`` defaults to `EXTRAS`'s)."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = module.partition(".")[0]
        if exc.name is not None and exc.name.partition(".")[0] != top:
            raise  # the package is there but one of its own dependencies is not: its message says which
        err = MissingExtraError(f"{what or 'this'} needs {top}, which is not installed: {install_hint(top, extra)}")
        err.name = top
        raise err from None
