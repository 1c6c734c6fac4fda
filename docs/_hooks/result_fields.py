"""griffe extension: the API pages show what each field of a result holds.

mkdocstrings reads the source statically, so it sees neither the ``Attributes`` section that
`fastrisk.data.results` builds when a result class is created nor the texts it is built from.
This gives every public field and derived array of every `Result` subclass the text of its
generated ``Attributes`` entry (its ``array(doc=...)`` / ``param(doc=...)`` text, its property's
docstring or its ``GLOSSARY`` entry) as its docstring, with its dims, so that each attribute of
the page says what it holds. Registered in ``mkdocs.yml`` (``extensions:`` of the python handler).
"""

from __future__ import annotations

import importlib
import inspect
import re

import griffe


def _entries(doc: str) -> dict[str, str]:
    """Name -> text and ``[dims]`` of each entry of a generated ``Attributes`` section."""
    section = doc.split("Attributes\n----------\n", 1)[-1]
    out = {}
    for name, head, text in re.findall(r"^(\w+) :([^\n]*)\n((?:[ \t]+\S[^\n]*\n?)*)", section, re.M):
        dims = re.search(r"``\[[^]]*\]``", head)
        body = " ".join(text.split())
        out[name] = f"{body} {dims.group(0)}" if dims and body else body
    return out


def _modules(module: griffe.Module):
    yield module
    for sub in module.modules.values():
        if not sub.is_alias:
            yield from _modules(sub)


class ResultFields(griffe.Extension):
    """Docstrings for the fields of fastrisk's result classes, from their declarations."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs) -> None:
        if pkg.name != "fastrisk":
            return
        from fastrisk.data.results import Result  # the docs build imports fastrisk anyway

        for module in _modules(pkg):
            if module.name == "__main__" or module.path.startswith("fastrisk.cli") or not module.classes:
                continue  # the entry point and the commands define no result
            try:
                runtime = importlib.import_module(module.path)
            except ImportError:  # an optional dependency the docs environment lacks
                continue
            for cls in module.classes.values():
                obj = getattr(runtime, cls.name, None)
                if not (inspect.isclass(obj) and issubclass(obj, Result)):
                    continue
                for name, text in _entries(inspect.getdoc(obj) or "").items():
                    member = cls.members.get(name)
                    if member is not None and not member.is_alias and not member.docstring and text:
                        member.docstring = griffe.Docstring(text, parent=member)
