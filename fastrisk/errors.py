"""The one exception family of fastrisk, and its warnings."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input: the message names the parameter, file and line, or system and topic."""


class ResourceError(MemoryError):
    """A request that would exceed the machine's memory (or another resource): the message
    gives the estimate, what is available and the option that avoids it."""


class ZeroVarianceWarning(RuntimeWarning):
    """A standardised statistic was asked of scores with zero standard error."""
