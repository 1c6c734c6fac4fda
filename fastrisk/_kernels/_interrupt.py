"""Ctrl-C that cannot crash a jitted call, and stops a long one within a chunk.

Why a plain ``KeyboardInterrupt`` crashed the process: when a jitted function returns an
array, numba boxes it by calling a Python function (``numba.core.serialize._numba_unpickle``
fetches the array's Python type; ``runtime_build_excinfo_struct`` builds a raised
exception). Python runs pending signal handlers at the first bytecode it executes, so a
Ctrl-C that arrived while the kernel ran is handled *inside* that boxing; the default
handler raises ``KeyboardInterrupt`` there, numba does not check the result, and the call
returns a tuple holding NULL (``Py_INCREF(NULL)`` in ``tupleiter_next`` when it is unpacked:
a segmentation fault) or a value with an exception set (``SystemError: CPUDispatcher(...)
returned a result with an exception set``).

The mechanism, one for the whole package:

- `install` (run when the kernels are imported, in the main thread, only over
  Python's default handler or another Python-level one) puts `_on_sigint` in front of
  the SIGINT handler. The same crash happens when ``KeyboardInterrupt`` is raised while
  numba loads a cached kernel (inside LLVM's ctypes callbacks, which only print it and leave
  the engine broken: a segmentation fault at the next step), so the handler treats any
  frame of numba or llvmlite alike. Outside them it calls the previous handler (so
  ``KeyboardInterrupt`` is raised where it always was); inside it, it defers: within a
  stoppable call (below) it sets the stop flag, and the call raises when it is over;
  elsewhere a profile hook raises ``KeyboardInterrupt`` at the first call or return event
  outside numba, i.e. right after the jitted call returned (if a profiler is running, the
  watcher thread re-signals the main thread instead). No exception is ever raised or left
  set inside a jitted call.
- `stoppable` wraps a long kernel call: it yields a flag (``uint8[1]``) the kernel
  polls at chunk boundaries (``if stopped(stop): return`` early, with its partial result), and
  raises ``KeyboardInterrupt`` when the call is over if the flag was set. The flag is set
  from a watcher thread woken by ``signal.set_wakeup_fd`` (the C-level handler writes to it
  at once, while the Python-level one waits for the kernel to return). The wakeup fd is the
  process's one: the watcher passes every signal byte on to the fd it stands in for (an
  asyncio loop's self-pipe, whose ``add_signal_handler`` callbacks run from those bytes), so
  no signal, SIGINT included, is lost to its owner during a stoppable call. Outside the main
  thread the flag is a private one that nothing sets (signals reach the main thread only).
- Loops in Python over chunks need nothing: ``KeyboardInterrupt`` is raised between two
  kernel calls as it always was.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import signal
import sys
import threading
import time

import numpy as np

#: The flag the kernels of the main thread poll; 1 once Ctrl-C arrived during a stoppable call.
STOP = np.zeros(1, dtype=np.uint8)

_lock = threading.Lock()
_previous = None  # the handler _on_sigint stands in front of
_depth = 0  # nesting of stoppable() in the main thread
_pipe: tuple[int, int] | None = None
_saved_wakeup = -1
_forward = -1  # the wakeup fd stoppable() stands in for: the watcher writes every signal byte on to it


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _package_dirs() -> tuple[str, ...]:
    import llvmlite
    import numba

    return tuple(os.path.dirname(m.__file__) + os.sep for m in (numba, llvmlite))


_DEFER_IN: tuple[str, ...] = ()


def _in_numba(frame) -> bool:
    """True when ``frame`` (the running Python frame) or a caller is code of numba or llvmlite:
    boxing a jitted call's result, building its exception, or compiling and loading a kernel
    (ctypes callbacks of LLVM, where an exception is only printed and the state left broken)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith(_DEFER_IN):
            return True
        frame = frame.f_back
    return False


def _on_sigint(signum, frame):
    if _in_numba(frame):
        if _depth:
            STOP[0] = 1  # the stoppable call raises KeyboardInterrupt when it is over
        elif sys.getprofile() is None:
            sys.setprofile(_raise_outside_numba)  # raised at the first call or return outside numba
        else:  # a profiler is running: do not replace it; signal again a little later
            _retrip()
        return
    _previous_handler()(signum, frame)


def _previous_handler():
    return _previous if callable(_previous) else signal.default_int_handler


def _raise_outside_numba(frame, event, arg):
    """Profile hook of a deferred Ctrl-C: at the first call or return event outside numba
    (right after the jitted call returned, whatever follows it: the next kernel call of a loop
    included) it removes itself and raises ``KeyboardInterrupt`` there. A re-signal from a
    thread instead (`_retrip`) would land during the next nogil kernel of such a loop,
    be deferred again at its boxing, and so on."""
    if frame.f_code.co_filename.startswith(_DEFER_IN) or _in_numba(frame):
        return
    sys.setprofile(None)
    _previous_handler()(signal.SIGINT, frame)


def install() -> bool:
    """Put `_on_sigint` in front of the SIGINT handler (main thread, Python-level handler
    only; idempotent). Returns whether it is in place."""
    global _previous, _DEFER_IN
    if not _main_thread():
        return False
    current = signal.getsignal(signal.SIGINT)
    if current is _on_sigint:
        return True
    if not callable(current):  # SIG_IGN, SIG_DFL or set outside Python: not ours to change
        return False
    _previous = current
    _DEFER_IN = _package_dirs()
    _wakeup_pipe()  # the watcher thread runs before any deferral needs it
    signal.signal(signal.SIGINT, _on_sigint)
    return True


#: Seconds the watcher waits before re-signalling (boxing a result takes microseconds).
RETRIP_DELAY = 0.002
_retrip_requested = False
_RETRIP = 0  # byte asking the watcher to signal the main thread again (signal numbers are >= 1)


def _watch(read_fd: int) -> None:
    """The watcher thread: sets `STOP` when the C-level handler reports SIGINT on the
    wakeup fd, passes every signal byte on to the wakeup fd it stands in for (`_forward`),
    and re-signals the main thread when `_on_sigint` deferred it."""
    while True:
        try:
            data = os.read(read_fd, 512)
        except OSError:
            return
        if not data:
            return
        if signal.SIGINT in data:
            STOP[0] = 1
        signals = data.replace(bytes([_RETRIP]), b"")
        if signals and _forward >= 0:
            # as the C-level handler writes: a full or closed fd loses the byte, never blocks
            with contextlib.suppress(OSError):
                os.write(_forward, signals)
        if _RETRIP in data:
            time.sleep(RETRIP_DELAY)  # let the main thread leave the boxing first
            global _retrip_requested
            _retrip_requested = False
            _thread.interrupt_main()


def _retrip() -> None:
    global _retrip_requested
    if _retrip_requested:  # one re-signal per Ctrl-C, however often the handler is deferred
        return
    _retrip_requested = True
    with contextlib.suppress(OSError):
        os.write(_wakeup_pipe()[1], bytes([_RETRIP]))


def _wakeup_pipe() -> tuple[int, int]:
    global _pipe
    with _lock:
        if _pipe is None:
            r, w = os.pipe()
            os.set_blocking(w, False)
            threading.Thread(target=_watch, args=(r,), name="fastrisk-sigint", daemon=True).start()
            _pipe = (r, w)
    return _pipe


def interrupted() -> bool:
    """True when Ctrl-C arrived during the current stoppable call (main thread)."""
    return bool(_depth and STOP[0] and _main_thread())


@contextlib.contextmanager
def stoppable():
    """Context of a long kernel call: yields the flag to pass to the kernel (it returns early,
    normally, once the flag is 1); raises ``KeyboardInterrupt`` at the end if Ctrl-C arrived."""
    global _depth, _saved_wakeup, _forward
    if not _main_thread() or not install():
        yield np.zeros(1, dtype=np.uint8)  # nothing sets it: the call runs to its end
        return
    if _depth == 0:
        STOP[0] = 0
        try:
            _saved_wakeup = signal.set_wakeup_fd(_wakeup_pipe()[1], warn_on_full_buffer=False)
        except (ValueError, OSError):
            _saved_wakeup = None
        # kept after the call: a byte written just before the fd is restored is still passed on
        _forward = -1 if _saved_wakeup is None else _saved_wakeup
    _depth += 1
    try:
        yield STOP
    finally:
        _depth -= 1
        stopped = bool(STOP[0])
        if _depth == 0:
            if _saved_wakeup is not None:
                signal.set_wakeup_fd(_saved_wakeup)
            STOP[0] = 0
    if stopped:
        raise KeyboardInterrupt
