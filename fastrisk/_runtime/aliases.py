"""Type aliases of the public API: what each kind of argument accepts.

They document signatures (``def risk(matrix: MatrixLike, baseline: BaselineLike, *, alpha:
AlphaLike | None = None, ...)``) and need no import of pandas or polars at run time: the
names they refer to are resolved only by type checkers.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Union

import numpy as np

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    from fastrisk.core.baselines import Baseline  # type checkers only (a layer above)
    from fastrisk.data.matrix import ScoreMatrix  # type checkers only (a layer above)

__all__ = ["AlphaLike", "BaselineLike", "MatrixLike", "PathLike", "SeedLike"]

#: A file path.
PathLike = Union[str, "os.PathLike[str]"]

#: A systems × topics score matrix: a `ScoreMatrix`, or a pandas/polars
#: DataFrame or Arrow table in long (system, topic, score) or wide form.
MatrixLike = Union["ScoreMatrix", "pa.Table", "pd.DataFrame", "pl.DataFrame"]

#: A baseline: a system of the matrix (its name), ``"mean"`` / ``"median"`` / ``"max"`` (a
#: virtual baseline), a file of per-topic scores, a mapping topic -> score, or a
#: `Baseline`.
BaselineLike = Union[str, "os.PathLike[str]", Mapping[str, float], "Baseline"]

#: A seed for ``rng=``: None (fresh entropy, recorded in the result), a non-negative int, a
#: `numpy.random.SeedSequence` or a `numpy.random.Generator`.
SeedLike = Union[None, int, np.random.SeedSequence, np.random.Generator]

#: One or more risk-sensitivity parameters α ≥ 0 (or loss weights 1 + α ≥ 1): a number, a
#: sequence or a 1-D array.
AlphaLike = Union[float, Sequence[float], np.ndarray]
