"""The one exception family of fastrisk, and its warnings."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input: the message names the parameter, file and line, or system and topic."""


class ResourceError(MemoryError):
    """A request that would exceed the machine's memory (or another resource): the message
    gives the estimate, what is available and the option that avoids it."""


class WorkerTimeoutError(RuntimeError):
    """A Dask sweep had no worker for longer than its bounded wait (``worker_timeout=``,
    ``--worker-timeout``): the message says how long, and how to resume. (Not a `ResourceError`:
    it was one, a `MemoryError`, until 0.1.)"""


class ZeroVarianceWarning(RuntimeWarning):
    """A standardised statistic was asked of scores with zero standard error."""


class AlphaInvariantWarning(UserWarning):
    """A procedure asked for at alpha > 0 gives the same answer for every alpha (the sign-flip
    permutation test): it does not test the risk-sensitive null URisk_alpha = 0."""


class TopicMismatchWarning(UserWarning):
    """Two inputs (a matrix and its baseline, or runs and qrels) share only some of their
    topics, or some topics are left out of the scores; the message lists them."""


class RunFileWarning(UserWarning):
    """A file in a run directory is not a run and was skipped."""


class CacheWarning(UserWarning):
    """A cache file (a parsed run set, a collection's fit) was damaged or unreadable: the
    message names it; it is rebuilt."""
