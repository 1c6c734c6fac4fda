"""``python -m fastrisk`` and the ``fastrisk`` command (`run`, the console script's entry point).

A Ctrl-C while the command line loads (its imports take a second or two: numba, scipy,
pyarrow) ends it with one line, ``fastrisk: interrupted``, and status 130, as a Ctrl-C later
does (`fastrisk.cli.main`). ``import fastrisk`` loads none of them (its public names load on
first use), so the guard is in place before any heavy import starts, and no ``sys.excepthook``
is replaced.

Two settings of the environment that would make those imports fail with a library's traceback
are refused first, in one line with status 2: ``NUMBA_NUM_THREADS`` that is not a positive
integer (numba raises at import), and an address-space limit (``ulimit -v``) too small to
load numba, SciPy and pyarrow (`fastrisk._runtime.resources.MIN_ADDRESS_SPACE`; under it an
import fails, segfaults, or OpenBLAS raises SIGINT).
"""

import importlib.util
import os
import sys

from fastrisk._runtime.resources import address_space_problem

#: Exit status of a refused environment (as `fastrisk.cli.main`'s errors).
EXIT_ERROR = 2


def numba_threads_problem(environ=os.environ) -> str | None:
    """What is wrong with ``$NUMBA_NUM_THREADS`` (None if unset or a positive integer): numba
    raises "Number of threads specified must be > 0" at import for 0 or less, and ignores any
    other text with a warning."""
    text = environ.get("NUMBA_NUM_THREADS")
    if text is None:
        return None
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n >= 1:
        return None
    return (f"the environment variable NUMBA_NUM_THREADS={text!r} is not a thread count: set it to a whole number "
            f">= 1 (this machine has {os.cpu_count() or 1} cores) or unset it (numba then uses every core)")


def _refuse(message: str) -> int:
    sys.stderr.write(f"fastrisk: error: {message}\n")
    sys.stderr.flush()
    return EXIT_ERROR


def import_pandas_now() -> None:
    """Import pandas (when installed) inside the start-up's Ctrl-C guard.

    pyarrow imports pandas lazily, at its first conversion of an array, and its Cython shim
    (``pandas-shim.pxi``, ``_have_pandas_internal``) swallows a ``KeyboardInterrupt`` raised in
    that import: a Ctrl-C landing there was lost and the command ran on to its end with status 0.
    Imported here, a Ctrl-C ends the command (status 130) and pyarrow's later import is a lookup.
    """
    if importlib.util.find_spec("pandas") is None:
        return
    try:
        import pandas  # noqa: F401
        import pyarrow.pandas_compat  # noqa: F401
    except ImportError:  # a broken pandas: pyarrow then goes without it, as it would have
        pass


def run() -> int:
    """Load the command line inside a Ctrl-C guard and run it.

    Returns
    -------
    int
        The exit status of `fastrisk.cli.main` (130 after a Ctrl-C while loading).
    """
    problem = numba_threads_problem() or address_space_problem()
    if problem:
        return _refuse(problem)
    try:
        from fastrisk import cli  # the CLI's imports take a second or two: inside the Ctrl-C guard
        import_pandas_now()
    except KeyboardInterrupt:
        sys.stderr.write("fastrisk: interrupted\n")
        sys.stderr.flush()
        os._exit(130)  # not sys.exit: no exit handlers of half-imported libraries run
    except (ImportError, OSError, MemoryError) as exc:  # a library that cannot be mapped under `ulimit -v`
        problem = address_space_problem(exc)
        if problem is None:
            raise
        sys.stderr.write(f"fastrisk: error: {problem}\n")
        sys.stderr.flush()
        os._exit(EXIT_ERROR)  # as after Ctrl-C: no exit handlers of half-imported libraries run
    status = cli.main()
    if cli.STARTUP_INTERRUPTED:
        # A Ctrl-C while the commands' modules loaded can cross C code that leaves CPython's
        # "unhandled KeyboardInterrupt" mark set although `main` handled it; a normal exit then
        # kills the process with SIGINT (status -2, not 130). Nothing was written yet: leave now.
        sys.stderr.flush()
        os._exit(status)
    return status


if __name__ == "__main__":
    sys.exit(run())
