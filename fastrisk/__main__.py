"""``python -m fastrisk`` and the ``fastrisk`` command (`run`, the console script's entry point).

A Ctrl-C while the command line loads (its imports take a second or two: numba, scipy,
pyarrow) ends it with one line, ``fastrisk: interrupted``, and status 130, as a Ctrl-C later
does (`fastrisk.cli.main`). ``import fastrisk`` loads none of them (its public names load on
first use), so the guard is in place before any heavy import starts, and no ``sys.excepthook``
is replaced.
"""

import os
import sys


def run() -> int:
    """Load the command line inside a Ctrl-C guard and run it.

    Returns
    -------
    int
        The exit status of `fastrisk.cli.main` (130 after a Ctrl-C while loading).
    """
    try:
        from fastrisk import cli  # the CLI's imports take a second or two: inside the Ctrl-C guard
    except KeyboardInterrupt:
        sys.stderr.write("fastrisk: interrupted\n")
        sys.stderr.flush()
        os._exit(130)  # not sys.exit: no exit handlers of half-imported libraries run
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
