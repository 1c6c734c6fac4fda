"""MkDocs hook: replace ``<!-- fastrisk-measures -->`` in a page with the table of measures built
from ``fastrisk.measures.names.MEASURES``, so the documented measures are the ones fastrisk computes."""

from __future__ import annotations

MARKER = "<!-- fastrisk-measures -->"


def on_page_markdown(markdown, page, config, files):
    if MARKER in markdown:
        from fastrisk.measures.names import measure_table  # the docs build imports fastrisk only here

        return markdown.replace(MARKER, measure_table())
    return markdown
