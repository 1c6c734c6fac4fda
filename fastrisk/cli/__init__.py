"""The ``fastrisk`` command. Each sub-command lives in its own module with a ``register``.

A module in ``_COMMANDS`` defines ``register(subparsers)``, which adds its parser and sets
``func`` (called with the parsed namespace; returns an exit status or None).

No traceback ever reaches the user: `main` turns every exception into one line on
standard error, ``fastrisk COMMAND: error: ...``, with exit status 2 (130 after Ctrl-C;
141, as for SIGPIPE, when the reader of standard output goes away, e.g. ``| head``).
Warnings print as one line, ``fastrisk COMMAND: warning: ...``. Set ``FASTRISK_DEBUG=1``
to see the traceback of an unexpected error.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import pickle
import sys
import warnings
import zlib

from fastrisk._runtime.extras import EXTRAS, install_hint
from fastrisk._version import __version__
from fastrisk.cli._output import invocation
from fastrisk.errors import InputError, ResourceError, WorkerTimeoutError

_COMMANDS = ("risk", "info", "demo", "table", "pca", "zrisk", "bootstrap", "test", "evaluate", "compare", "pool_bias", "agree", "report", "sweep", "simulate", "ltr", "warmup", "meta")

#: Exit statuses.
EXIT_ERROR, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 2, 130, 141

#: True once a Ctrl-C stopped `main` while it loaded the commands (the console script then exits
#: at once: `fastrisk.__main__.run`).
STARTUP_INTERRUPTED = False


class _Formatter(argparse.HelpFormatter):
    """argparse's help, wrapped at spaces only: a name such as ``trisk-bootstrap-t-double@A``
    or ``--resampling-trials`` is never split at one of its hyphens."""

    def _split_lines(self, text, width):
        import textwrap

        return textwrap.wrap(self._whitespace_matcher.sub(" ", text).strip(), width, break_on_hyphens=False)

    def _fill_text(self, text, width, indent):
        import textwrap

        return textwrap.fill(self._whitespace_matcher.sub(" ", text).strip(), width, initial_indent=indent,
                             subsequent_indent=indent, break_on_hyphens=False)


class _Parser(argparse.ArgumentParser):
    """argparse, with a hint on the errors a new user makes: "did you mean" for an unknown
    command or option, and comma-separated values for an option given several words; help
    wrapped at spaces only (`_Formatter`)."""

    argv: list = []

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message):
        super().error(message + _hint(self, message, _Parser.argv))


def _hint(parser, message: str, argv) -> str:
    import difflib
    import re

    m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if m:
        close = difflib.get_close_matches(m.group(1), re.findall(r"'([^']*)'", m.group(2)), n=1, cutoff=0.6)
        return f"; did you mean {close[0]!r}?" if close else ""
    m = re.match(r"unrecognized arguments: (.*)", message)
    if not m:
        return ""
    extra = m.group(1).split()
    for action in parser._actions:  # the root parser reports them: look in the command's own parser
        if isinstance(action, argparse._SubParsersAction):
            command = next((w for w in argv if w in action.choices), None)
            parser = action.choices[command] if command else parser
    options = [o for o in parser._option_string_actions if o.startswith("--")]
    for word in extra:
        if word.startswith("-"):
            close = difflib.get_close_matches(word.split("=")[0], options, n=1, cutoff=0.6)
            if close:
                return f"; did you mean {close[0]}?"
    words = [str(a) for a in argv]
    if extra and extra[0] in words:
        i = words.index(extra[0])
        run = [w for w in words[i:i + len(extra)] if not w.startswith("-")]
        j = i - 1
        while j >= 0 and not words[j].startswith("-"):
            j -= 1
        if j >= 0 and words[j] in parser._option_string_actions:
            values = words[j + 1:i] + run
            return f" (an option's values are comma-separated: {words[j]} {','.join(values)})"
    return ""


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="fastrisk",
        description="Risk-sensitive evaluation and meta-evaluation of retrieval systems.",
    )

    parser.add_argument("--version", action="version", version=f"fastrisk {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in _COMMANDS:
        importlib.import_module(f"fastrisk.cli.{name}").register(sub)
    return parser


def main(argv=None) -> int:
    """Entry point; errors go to stderr as one line with exit status 2 and no traceback."""
    _Parser.argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = build_parser().parse_args(argv)
    except KeyboardInterrupt:  # Ctrl-C while starting (imports can take a second)
        print("fastrisk: interrupted", file=sys.stderr)
        global STARTUP_INTERRUPTED
        STARTUP_INTERRUPTED = True
        return EXIT_INTERRUPTED
    command = args.command
    with _one_line_warnings(command):
        try:
            with invocation(args, sys.argv[1:] if argv is None else argv):
                status = args.func(args)
            sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        except KeyboardInterrupt:
            print(f"fastrisk {command}: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except BrokenPipeError:
            _silence_stdout()
            return EXIT_BROKEN_PIPE
        except Exception as exc:
            if os.environ.get("FASTRISK_DEBUG"):
                raise
            print(f"fastrisk {command}: error: {describe_error(exc, _input_files(args))}", file=sys.stderr)
            return EXIT_ERROR
    return 0 if status is None else int(status)


def _silence_stdout() -> None:
    """Point standard output at /dev/null so the interpreter's final flush cannot fail again."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


@contextlib.contextmanager
def _one_line_warnings(command: str):
    """Warnings as ``fastrisk COMMAND: warning: message`` (no source line, no file name);
    recording (``warnings.catch_warnings(record=True)``, pytest) is unaffected."""
    def formatwarning(message, category, filename, lineno, line=None):
        text = " ".join(str(message).split())
        return f"fastrisk {command}: warning: {text}\n"

    previous = warnings.formatwarning
    warnings.formatwarning = formatwarning
    try:
        yield
    finally:
        warnings.formatwarning = previous


def _input_files(args) -> list[str]:
    """The existing files named on the command line (not the output), to name in messages."""
    found = []
    for name, value in vars(args).items():
        if name in ("out", "func") or value is None:
            continue
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(v, (str, os.PathLike)) and os.path.isfile(v):
                found.append(os.fspath(v))
    return list(dict.fromkeys(found))


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def describe_error(exc: BaseException, files=()) -> str:
    """One line for ``exc``: fastrisk's own errors as they are, the others translated and, for
    errors of reading, the input file(s) named."""

    where = ", ".join(files) if files else "the input"
    if isinstance(exc, (InputError, ResourceError, WorkerTimeoutError)):
        return str(exc) if isinstance(exc, InputError) else _first_line(exc)
    if isinstance(exc, UnicodeDecodeError):
        return (f"{where}: not {exc.encoding.upper()} text (byte 0x{exc.object[exc.start]:02x} at offset "
                f"{exc.start}); is it binary, or in another encoding? Convert it to UTF-8")
    if isinstance(exc, (EOFError, zlib.error)) or type(exc).__name__ in ("BadGzipFile", "LZMAError", "ZstdError"):
        return f"{where}: truncated or corrupt compressed data ({_first_line(exc)})"
    if isinstance(exc, MemoryError):
        return (f"not enough memory ({_first_line(exc)}); reduce the problem (fewer replicates, systems or "
                "topics; summaries instead of per-topic or per-replicate output)")
    if isinstance(exc, OSError):
        return str(exc) if exc.filename or not files else f"{where}: {exc}"
    if isinstance(exc, pickle.UnpicklingError):
        return f"a cache or checkpoint file is corrupt ({_first_line(exc)}); delete it and rerun"
    if type(exc).__module__.startswith("pyarrow"):
        return f"{where}: {_first_line(exc)}"
    if isinstance(exc, RecursionError):
        return f"{where}: nested too deeply to process ({_first_line(exc)})"
    missing = (getattr(exc, "name", None) or "").partition(".")[0] if isinstance(exc, ModuleNotFoundError) else ""
    if missing in EXTRAS:  # an optional dependency imported without `require`
        return f"{missing} is not installed: {install_hint(missing)}"
    return (f"unexpected {type(exc).__name__}: {_first_line(exc)} (while processing {where}; this is a bug in "
            "fastrisk, please report it; FASTRISK_DEBUG=1 shows the traceback)")
