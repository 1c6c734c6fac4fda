"""MkDocs hook: replace ``<!-- fastrisk-cli-help -->`` in a page with the ``--help`` text of
every ``fastrisk`` command, so the command-line page never drifts from the parser."""

from __future__ import annotations

MARKER = "<!-- fastrisk-cli-help -->"


def _commands():
    from fastrisk.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    helps = {a.dest: a.help for a in sub._choices_actions}
    for name, p in sub.choices.items():
        yield name, helps.get(name, ""), p.format_help()


def cli_reference(width: int = 100) -> str:
    """Every command's summary and ``--help`` text, wrapped at ``width`` columns."""
    import os

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)  # argparse wraps help at the terminal's width
    try:
        parts = [f"### `fastrisk {name}`\n\n{summary[:1].upper() + summary[1:]}.\n\n```text\n{text}```\n"
                 for name, summary, text in _commands()]
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    return "\n".join(parts)


def on_page_markdown(markdown, page, config, files):
    if MARKER in markdown:
        return markdown.replace(MARKER, cli_reference())
    return markdown
