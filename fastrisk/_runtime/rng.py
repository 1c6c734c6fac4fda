"""Seeds for the counter-based kernels: one 63-bit integer per procedure, recorded in results."""

from __future__ import annotations

import numbers

import numpy as np

from fastrisk.errors import InputError


def resolve_seed(rng=None, *, name: str = "rng") -> int:
    """Turn ``rng`` (None, an int, a SeedSequence or a Generator) into a 63-bit seed.

    ``None`` draws fresh entropy; the seed actually used is returned so results can record
    it and a run can be repeated exactly.
    """
    if rng is None:
        return int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))
    if isinstance(rng, bool):
        raise InputError(f"`{name}` must be an integer seed, a SeedSequence or a Generator, not a bool")
    if isinstance(rng, numbers.Integral):
        if rng < 0:
            raise InputError(f"`{name}` must be a non-negative integer seed, got {rng}")
        ss = np.random.SeedSequence(int(rng))
    elif isinstance(rng, np.random.SeedSequence):
        ss = rng
    elif isinstance(rng, np.random.Generator):
        return int(rng.integers(0, 2**63 - 1))
    else:
        raise InputError(
            f"`{name}` must be None, an integer seed, a SeedSequence or a Generator, got {type(rng).__name__}"
        )
    return int(ss.generate_state(1, np.uint64)[0] >> np.uint64(1))
