"""Seeds for the counter-based kernels: one 63-bit integer per procedure, and the seed a result
records, the one that reproduces it when given again as ``rng=``."""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from fastrisk.errors import InputError

_MAX = 2**63 - 1


class Seed(NamedTuple):
    """A resolved ``rng=``: the seed the kernels use and the seed a result records.

    ``kernel`` is the 63-bit integer the counter-based kernels draw from. ``recorded`` is the
    seed to show and store: given again as ``rng=recorded`` it gives the same ``kernel``, so the
    same numbers (an integer seed records itself; see `resolve_seed` for the one exception).
    """

    kernel: int
    recorded: int


def _derive(ss: np.random.SeedSequence) -> int:
    return int(ss.generate_state(1, np.uint64)[0] >> np.uint64(1))


def resolve_seed(rng=None, *, name: str = "rng") -> Seed:
    """Turn ``rng`` (None, an int, a SeedSequence or a Generator) into a `Seed`.

    - an int ``s`` (0 <= s < 2**63): ``kernel = SeedSequence(s).generate_state(1, uint64)[0] >> 1``,
      ``recorded = s``;
    - ``None``: an int ``s`` drawn from fresh entropy (63 bits), then as the int ``s``;
    - a Generator: an int ``s`` drawn from it (``integers(0, 2**63 - 1)``), then as the int
      ``s``;
    - a SeedSequence: ``kernel`` derived from it as for an int; ``recorded`` is its entropy
      when that reproduces it (an integer entropy below 2**63, no spawn key, the default pool
      size), else ``kernel`` itself, which then does NOT reproduce the run when given again as
      ``rng=`` (pass the SeedSequence again instead).

    So ``rng=res.seed`` repeats a result ``res`` exactly, whatever ``rng`` made it (but for such
    a SeedSequence). The numbers of an integer seed are those of every earlier release; those
    of a Generator changed when results began recording the drawn int (the kernels used to
    take the draw itself as their seed).
    """
    if rng is None:
        s = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))
        return Seed(_derive(np.random.SeedSequence(s)), s)
    if isinstance(rng, bool):
        raise InputError(f"`{name}` must be an integer seed, a SeedSequence or a Generator, not a bool")
    if isinstance(rng, numbers.Integral):
        if not 0 <= rng <= _MAX:  # recorded as given: it must fit the int64 columns and metadata that keep it
            raise InputError(f"`{name}` must be an integer seed in [0, 2**63 - 1], got {rng}")
        return Seed(_derive(np.random.SeedSequence(int(rng))), int(rng))
    if isinstance(rng, np.random.SeedSequence):
        kernel = _derive(rng)
        reproducible = (isinstance(rng.entropy, numbers.Integral) and 0 <= rng.entropy <= _MAX
                        and not rng.spawn_key and rng.pool_size == np.random.SeedSequence(0).pool_size)
        return Seed(kernel, int(rng.entropy) if reproducible else kernel)
    if isinstance(rng, np.random.Generator):
        s = int(rng.integers(0, _MAX))
        return Seed(_derive(np.random.SeedSequence(s)), s)
    raise InputError(
        f"`{name}` must be None, an integer seed, a SeedSequence or a Generator, got {type(rng).__name__}"
    )
