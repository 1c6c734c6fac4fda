"""The single numba configuration point: every kernel is cached, none uses fastmath.

Four guards live here, so that no kernel module needs to know about them:

- A corrupt on-disk cache (a truncated or overwritten ``__pycache__/*.nbi`` index or
  ``*.nbc`` data file) is treated as a cache miss: the index is reset, the kernel compiled
  again and the cache rewritten, instead of an ``UnpicklingError`` on every run.
- A stale one: numba keys a cached kernel on its own file's time stamp and size only, so a
  kernel that inlines a helper of another file kept its old machine code when only that
  file changed (a silent wrong number after an update of a source tree). Every kernel's
  stamp here also covers the package's kernel files and those of the kernel's own folder
  (`kernel_files_stamp`).
- numba's ``workqueue`` threading layer (used when neither TBB nor OpenMP is available)
  aborts the process when two Python threads enter parallel kernels at once. Parallel
  kernels are therefore called through a thin wrapper that, under that layer only,
  serialises the calls with one lock.
- Ctrl-C: importing the kernels installs `fastrisk._kernels._interrupt`'s SIGINT handler, which
  never raises inside a jitted call.

Compile time (issue #20): no kernel builds numba's C-callable wrapper, and `helper` kernels
(called only by other kernels) not its CPython wrapper either; see `_Helper`.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import threading
import types
import warnings
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

import numba
from numba.core import event as _event
from numba.core.caching import FunctionCache
from numba.extending import intrinsic

from fastrisk._kernels import _interrupt

_interrupt.install()  # Ctrl-C is never handled inside a jitted call (see fastrisk._kernels._interrupt)
# OpenMP threads sleep between parallel regions instead of spinning (libgomp's default spins for
# a while): on a machine with few or busy cores, spinning workers left over from one parallel
# kernel took the cores from what ran next, e.g. a BLAS product 0.7 ms -> 13 ms, and the issue-20
# bootstrap (1e4 x 47, benchmarks/bench_resampling.py) 26 ms -> 13 ms. libgomp reads it when
# numba first loads it (the first parallel kernel); a value the user set is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
prange = numba.prange

# no_cfunc_wrapper: numba builds, for every compiled signature, a C-callable wrapper that only
# a kernel passed as a first-class function value would use (none is: value functions are
# bound as globals, see with_value); without it each compile is a few ms shorter (issue #20).
_OPTIONS = {"cache": True, "fastmath": False, "nogil": True, "no_cfunc_wrapper": True}


#: The folders of the package's kernels: any file there may hold a helper another kernel inlines.
KERNEL_DIRS = (Path(__file__).resolve().parent, Path(__file__).resolve().parents[1] / "simulate" / "_r" / "_kernels")


def tree_stamp(dirs) -> str:
    """A digest of the name, modification time and size of every ``*.py`` file in ``dirs``."""
    digest = hashlib.sha256()
    for folder in dirs:
        for path in sorted(Path(folder).glob("*.py")):
            st = path.stat()
            digest.update(f"{path.name}:{st.st_mtime_ns}:{st.st_size};".encode())
    return digest.hexdigest()[:20]


@functools.lru_cache(maxsize=None)
def kernel_files_stamp(folder: str) -> str:
    """`tree_stamp` of `KERNEL_DIRS` and ``folder``, once a process (the files do not change
    under a running one)."""
    return tree_stamp((*KERNEL_DIRS, folder))


#: numba's private cache API the two cache guards use (`_RebuildingCache`, `_safe_cache`), by the
#: object that holds it. numba may rename any of it in a minor release (pyproject.toml pins
#: numba below the next minor); tests/test_jit_numba_api.py checks it on the installed numba,
#: and `numba_api_missing` at run time, so that a rename is a warning, never a guard silently off.
NUMBA_CACHE_API = {
    "dispatcher": ("_cache",),
    "FunctionCache": ("_cache_file", "_name", "cache_path", "load_overload", "flush", "disable"),
    "FunctionCache._cache_file": ("_source_stamp",),
}


def numba_api_missing(dispatcher) -> list[str]:
    """The names of `NUMBA_CACHE_API` that ``dispatcher`` (a cached numba dispatcher) and its
    cache lack on the installed numba, as ``"holder.name"``; empty when the guards work."""
    cache = getattr(dispatcher, "_cache", None)
    holders = {"dispatcher": dispatcher, "FunctionCache": cache,
               "FunctionCache._cache_file": getattr(cache, "_cache_file", None)}
    return [f"{holder}.{name}" for holder, names in NUMBA_CACHE_API.items() for name in names
            if not hasattr(holders[holder], name)]


_warned_api = False


def _warn_numba_api(missing) -> None:
    """Once a process: the stale-cache guard cannot work on this numba."""
    global _warned_api
    if _warned_api:
        return
    _warned_api = True
    warnings.warn(f"numba {numba.__version__} lacks the private cache API fastrisk's kernel cache guards use "
                  f"({', '.join(missing)}): a cached kernel is no longer recompiled when a helper it inlines "
                  "changes in another file, nor rebuilt when its cache file is damaged. fastrisk is tested "
                  "with the numba versions pyproject.toml allows; install one of them, or delete the "
                  "__pycache__ folders of fastrisk/_kernels after every update of fastrisk.",
                  RuntimeWarning, stacklevel=3)


class _RebuildingCache(FunctionCache):
    """numba's function cache, except that an unreadable cache entry is a miss and is reset, and
    that an entry is valid only for the kernel files it was compiled from (`kernel_files_stamp`
    joins numba's stamp of the kernel's own file: a change to any of them recompiles)."""

    def __init__(self, py_func):
        super().__init__(py_func)
        index = getattr(self, "_cache_file", None)  # numba's private API (NUMBA_CACHE_API)
        if hasattr(index, "_source_stamp"):
            folder = os.path.dirname(os.path.abspath(py_func.__code__.co_filename))
            index._source_stamp = (index._source_stamp, kernel_files_stamp(folder))
        else:
            _warn_numba_api(["FunctionCache._cache_file" + ("" if index is None else "._source_stamp")])

    def load_overload(self, sig, target_context):
        try:
            return super().load_overload(sig, target_context)
        except Exception as exc:  # noqa: BLE001 - pickle/EOF/value errors from a damaged file
            warnings.warn(f"numba cache of {self._name} in {self.cache_path} was unreadable "
                          f"({type(exc).__name__}); it is rebuilt", RuntimeWarning, stacklevel=2)
            try:
                self.flush()  # a fresh, empty index; the data files are overwritten on save
            except OSError:
                self.disable()
            return None


def _safe_cache(dispatcher):
    cache = getattr(dispatcher, "_cache", None)
    if isinstance(cache, FunctionCache):
        dispatcher._cache = _RebuildingCache(dispatcher.py_func)
    elif cache is None:  # numba renamed the dispatcher's cache: the guards cannot be installed
        _warn_numba_api(["dispatcher._cache"])
    return dispatcher


def _decorator(options):
    def jit(*args, **kwargs):
        opts = {**options, **kwargs}
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return _finish(numba.njit(**opts)(args[0]), opts)
        inner = numba.njit(*args, **opts)
        return lambda func: _finish(inner(func), opts)

    return jit


def _finish(dispatcher, opts):
    if not hasattr(dispatcher, "py_func"):  # NUMBA_DISABLE_JIT=1: the plain Python function
        return dispatcher
    dispatcher = _safe_cache(dispatcher)
    if opts.get("parallel"):
        return _Serialised(dispatcher)
    return _Helper(dispatcher) if opts.get("no_cpython_wrapper") else dispatcher


# ---------------------------------------------------------------------- first-compile note
class _CompileNote(_event.Listener):
    """One line on stderr when the first fastrisk kernel of the process is compiled (a cache
    miss: loading a cached kernel is no compile event), so a first call that takes seconds
    says why. Only on a terminal, and never with ``FASTRISK_QUIET`` set."""

    noted = False

    def on_start(self, event):
        if _CompileNote.noted:
            return
        dispatcher = (event.data or {}).get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
        if not module.startswith("fastrisk."):
            return
        _CompileNote.noted = True
        if os.environ.get("FASTRISK_QUIET") or not getattr(sys.stderr, "isatty", lambda: False)():
            return
        print("fastrisk: compiling kernels on first use; they are cached on disk for the next runs "
              "(`fastrisk warmup` compiles them all ahead)", file=sys.stderr, flush=True)

    def on_end(self, event):
        pass


_event.register("numba:compile", _CompileNote())


# ---------------------------------------------------------------------- workqueue guard
_WORKQUEUE_LOCK = threading.RLock()
_layer: str | None = None


def threading_layer() -> str:
    """The threading layer numba uses for parallel kernels (launching its threads if needed)."""
    global _layer
    if _layer is None:
        from numba.np.ufunc import parallel

        parallel._launch_threads()
        _layer = numba.threading_layer()
    return _layer


class _Serialised:
    """A parallel dispatcher, called under a process-wide lock when the layer is ``workqueue``.

    Attribute access (``py_func``, ``signatures``, numba's own ``_numba_type_``) goes to the
    dispatcher, so kernels calling it from compiled code type it as the dispatcher itself.
    """

    __slots__ = ("__dict__", "__wrapped__", "_dispatcher")

    def __init__(self, dispatcher):
        self._dispatcher = dispatcher
        functools.update_wrapper(self, dispatcher.py_func)

    def __call__(self, *args, **kwargs):
        if (_layer or threading_layer()) == "workqueue":
            with _WORKQUEUE_LOCK:
                return self._dispatcher(*args, **kwargs)
        return self._dispatcher(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._dispatcher, name)

    def __repr__(self) -> str:
        return repr(self._dispatcher)


#: Serial kernel: one unit of work.
njit = _decorator(_OPTIONS)


class _Helper:
    """A kernel called only from other kernels, compiled without numba's CPython wrapper (the
    code that converts Python objects to machine arguments and back: about 20 ms of compiling
    per signature, for nothing when no Python code calls it; issue #20).

    Compiled code types it as the dispatcher itself (``_numba_type_`` comes through
    ``__getattr__``, as for `_Serialised`). A call from Python (tests, an interactive session)
    would jump into a missing wrapper, so it goes to a twin compiled with one
    (``<name>_py``, on first such call).
    """

    __slots__ = ("__dict__", "__wrapped__", "_dispatcher", "_python")

    def __init__(self, dispatcher):
        self._dispatcher = dispatcher
        self._python = None
        functools.update_wrapper(self, dispatcher.py_func)

    def __call__(self, *args, **kwargs):
        if self._python is None:
            self._python = _twin(self._dispatcher, "_py", f"{self.__name__} callable from Python.")
        return self._python(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._dispatcher, name)

    def __repr__(self) -> str:
        return repr(self._dispatcher)


#: A kernel only other kernels call (no CPython wrapper; see `_Helper`).
helper = _decorator({**_OPTIONS, "no_cpython_wrapper": True})

#: Parallel driver: ``prange`` over the outermost independent axis.
pjit = _decorator({**_OPTIONS, "parallel": True})



_POOL: list = []  # [(threads, ThreadPoolExecutor)]: kept between calls, no thread start per call
_POOL_LOCK = threading.Lock()


def helper_threads(threads: int) -> ThreadPoolExecutor:
    """The package's helper threads (at least ``threads``), started on first use and kept for
    every driver (`run_strided`, the resampling engine): a thread start per call cost a
    tenth of a millisecond, and a fresh thread waits to be scheduled on a busy machine. Its
    tasks are compiled kernels that never wait on the pool, so callers sharing it delay one
    another but never block."""
    with _POOL_LOCK:
        if not _POOL or _POOL[0][0] < threads:
            if _POOL:
                _POOL.pop()[1].shutdown(wait=False)
            _POOL.append((threads, ThreadPoolExecutor(threads, thread_name_prefix="fastrisk")))
        return _POOL[0][1]


def _forget_pool() -> None:
    """In a forked child the pool's threads do not exist: start new ones when needed."""
    _POOL.clear()


os.register_at_fork(after_in_child=_forget_pool)


def run_strided(kernel, n_threads: int, *args) -> None:
    """``kernel(start, n_threads, *args)`` for every ``start < n_threads``, each on its own
    thread (the calling thread runs ``start = 0``); one call when ``n_threads`` is 1.

    The parallel driver of a serial (``nogil``) kernel whose loop is
    ``for task in range(start, n, step)``: the kernel compiles once, as an ordinary function,
    instead of once more through numba's parfor passes (seconds per kernel, issue #20); the
    strided split balances tasks whose cost grows along the loop. Each task draws from its
    own random stream, so results do not depend on ``n_threads``.
    """
    if n_threads <= 1:
        kernel(0, 1, *args)
        return
    pool = helper_threads(n_threads - 1)
    futures = [pool.submit(kernel, start, n_threads, *args) for start in range(1, n_threads)]
    try:
        kernel(0, n_threads, *args)
    finally:
        wait(futures)  # no thread still writes the outputs once this returns, even on an error
    for future in futures:
        future.result()


@intrinsic
def _load_acquire(typingctx, flag):
    """``flag[0]`` (a uint8 array) read as an atomic acquire load, which LLVM never hoists
    out of a loop: numba marks the arrays of a prange body noalias, so a plain read of an
    array the loop never writes is read once, before the loop, and a change is never seen."""
    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        return builder.load_atomic(data, ordering="acquire", align=1)

    return numba.types.uint8(flag), codegen


if numba.config.DISABLE_JIT:  # kernels run as plain Python: a plain read is never hoisted
    def stopped(stop) -> bool:
        """Whether Ctrl-C asked the running kernel to stop (see the compiled version below)."""
        return stop[0] != 0
else:
    @helper
    def stopped(stop) -> bool:
        """Whether Ctrl-C asked the running kernel to stop (``stop``: the uint8 flag from
        `fastrisk._kernels._interrupt.stoppable`). Kernels poll it at chunk boundaries."""
        return _load_acquire(stop) != 0


def _twin(kernel, suffix: str, doc: str, bound=None, **options):
    """A new kernel compiled from ``kernel``'s code under the name ``<name><suffix>``, with
    ``bound`` replacing some of its module globals; ``options`` override its numba options."""
    func = getattr(kernel, "py_func", kernel)
    scope = {**func.__globals__, **bound} if bound else func.__globals__
    twin = types.FunctionType(func.__code__, scope, func.__name__ + suffix, func.__defaults__,
                              func.__closure__)
    twin.__qualname__ = func.__qualname__ + suffix
    twin.__module__ = func.__module__
    twin.__doc__ = doc
    opts = {**getattr(kernel, "targetoptions", {}), **options}
    return _decorator({**_OPTIONS, **{k: v for k, v in opts.items() if k in ("cache", "parallel")}})(twin)


def serial(kernel):
    """The one-thread twin of a parallel kernel: the same body compiled without ``parallel``
    (``prange`` runs as ``range``), cached under its own name (``<name>_serial``: numba's
    cache index is keyed by the function's name and bytecode, not by its flags).

    Small calls use it: no thread-pool wake-up, no thread-count switch around the call, and
    the numbers are the parallel kernel's (every kernel's result is thread-count independent).
    """
    name = getattr(kernel, "py_func", kernel).__name__
    return _twin(kernel, "_serial", f"{name} on one thread (same body, compiled without ``parallel``).",
                 parallel=False)


def with_value(kernel, value):
    """``kernel``, a value kernel whose body calls the module global ``_value`` (the built-in
    smooth value function: that kernel is cached on disk), with ``_value`` bound to another
    scalar function ``value``.

    A function passed to a kernel as an argument is never saved to numba's disk cache (every
    process compiles it again), and neither is a closure; a kernel that calls a global is. So
    the built-in value function is the global the value kernels are written against; another
    function defined in ``fastrisk._kernels`` gets a twin cached under ``<kernel>_<name>``, and
    a user's function a twin compiled once per function object (remembered on it) and never
    cached on disk (its code may change between runs while its name does not).
    """
    func = getattr(kernel, "py_func", kernel)
    if func.__globals__.get("_value") is value:
        return kernel
    twins = getattr(value, "_fastrisk_kernels", None)
    if twins is None:
        twins = {}
        try:
            value._fastrisk_kernels = twins
        except AttributeError:  # a callable without a __dict__: no memo, a twin per call
            pass
    twin = twins.get(func.__qualname__)
    if twin is None:
        py_value = getattr(value, "py_func", value)
        builtin = (getattr(py_value, "__module__", None) or "").startswith("fastrisk._kernels.")
        suffix = "_" + py_value.__name__ if builtin else "_user"
        twin = twins[func.__qualname__] = _twin(kernel, suffix, f"{func.__name__} with the value function "
                                                f"{py_value.__name__}.", {"_value": value}, cache=builtin)
    return twin
