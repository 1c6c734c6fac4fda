"""The options of the error-rate studies, grouped by what travels together (as scipy's
``BootstrapMethod``/``PermutationMethod`` group a resampling's options): `Sampling` (how many
simulated pairs and resamples, from which seed), `TestSelection` (which tests of the battery,
how configured, at which levels) and `Execution` (where and how the sweep runs, which fitted
models it reads). `fastrisk.simulate.type1`, `power`, `type3`, `topics`, the grid
(`fastrisk.simulate.grid.run_grid`) and the CLI share them: each function takes the objects
(``sampling=``, ``selection=``, ``execution=``) or, as before, their fields as keywords, which
build the objects (`from_keywords`). The objects hold values as given; the study functions
check them (`fastrisk.simulate.studies`), so a bad value is named the same way either way.
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass, fields

import numpy as np

from fastrisk._runtime.aliases import SeedLike
from fastrisk.errors import InputError

#: Significance levels of the study (``R/common.R``): 0.001..0.009, 0.01..0.09, 0.1.
ALPHAS = tuple(np.round(np.concatenate([np.arange(1, 10) / 1000, np.arange(1, 10) / 100, [0.1]]), 3))
#: Trials per sweep job.
CHUNK = 1000


@dataclass(frozen=True)
class Sampling:
    """How many simulated pairs and resamples, from which seed.

    Attributes
    ----------
    trials : int or None
        Simulated pairs of runs per effect size (None: the function's default, e.g. the grid's
        paper size).
    replicates : int or None
        Resamples of the bootstrap and permutation tests (None: the function's default, e.g.
        `fastrisk.simulate.topics`: 1000 if the planned test needs them, else 0).
    rng : int, SeedSequence or Generator, optional
        The study's seed.
    shared_resamples : bool or int
        Common random numbers: each block of trials of a collection shares its resamples (see
        `fastrisk.simulate.type1`).
    """

    trials: int | None = 10000
    replicates: int | None = 1000
    rng: SeedLike = None
    shared_resamples: bool | int = False


@dataclass(frozen=True)
class TestSelection:
    """Which tests of the battery, how configured, and the levels their rates are counted at.

    Attributes
    ----------
    tests : sequence of str, optional
        Only these tests of the battery (None: all; `fastrisk._runtime.battery_tests`).
    trisk_alpha : sequence of float
        The alphas of the battery's families (TRisk, the bootstrap test of URisk).
    min_diff : float
        The sign test's tie threshold.
    risk_nulls : bool
        Score the risk tests on pairs calibrated to their own null (False: leave them out).
    significance : sequence of float
        The significance levels at which rates are counted (``alpha`` is kept for the risk
        tests' own alpha, ``trisk_alpha``).
    protocol : {"urbano2019"}
        The published protocol (the only one).
    """

    __test__ = False  # not a pytest test class

    tests: tuple | None = None
    trisk_alpha: tuple = (1.0, 5.0)
    min_diff: float = 0.01
    risk_nulls: bool = True
    significance: tuple = ALPHAS
    protocol: str = "urbano2019"


@dataclass(frozen=True)
class Execution:
    """Where and how a study's sweep runs and which fitted models it reads (none of it changes
    a number, but ``ties_seed``, which picks the fits' draw of tie-breaking).

    Attributes
    ----------
    executor : optional
        As `fastrisk.sweep.sweep` (None: in-process; a process pool; a Dask client).
    chunk : int
        Trials per sweep job.
    progress : bool, optional
        A progress bar on standard error (default: on a terminal).
    cache : str or path-like, optional
        The directory of the fitted models.
    out : str or path-like, optional
        A Parquet file the sweep is checkpointed to.
    resume : bool
        Resume the sweep checkpointed at ``out``.
    ties_seed : int
        Which draw of the copulas' random tie-breaking the fits use.
    """

    executor: object = None
    chunk: int = CHUNK
    progress: bool | None = None
    cache: object = None
    out: object = None
    resume: bool = False
    ties_seed: int = 0


GROUPS = (("sampling", Sampling), ("selection", TestSelection), ("execution", Execution))


def from_keywords(fn, values: dict, only=None) -> tuple:
    """(`Sampling`, `TestSelection`, `Execution`) of a call of ``fn`` whose arguments are
    ``values`` (its ``locals()``): an object given as ``sampling=``/``selection=``/``execution=``
    is used as is, else it is built from ``fn``'s keywords of its fields (a field that ``fn``
    does not take keeps the object's default). A keyword given beside its group's object (its
    value not ``fn``'s default) is an `InputError`. ``only``: the groups ``fn`` takes (names)."""
    params = inspect.signature(fn).parameters
    out = []
    for param, cls in GROUPS:
        if only is not None and param not in only:
            continue
        obj = values.get(param)
        names = [f.name for f in fields(cls) if f.name in params]
        if obj is None:
            out.append(cls(**{n: values[n] for n in names}))
            continue
        if not isinstance(obj, cls):
            raise InputError(f"`{param}` must be a fastrisk.simulate.{cls.__name__}, got {obj!r}")
        clash = [n for n in names if values[n] is not params[n].default]
        if clash:
            raise InputError(f"give {', '.join(f'`{n}`' for n in clash)} in `{param}` or as keyword(s), not both")
        out.append(obj)
    return tuple(out)


def renamed(fn, values: dict, **names) -> dict:
    """``values`` (a call of ``fn``'s ``locals()``) with each deprecated keyword given (``old``:
    not None) moved to its new name (``names``: old -> new), with a `DeprecationWarning` naming
    the new one; both given is an `InputError`."""
    params = inspect.signature(fn).parameters
    values = dict(values)
    for old, new in names.items():
        if values.get(old) is None:
            continue
        if values[new] is not params[new].default:
            raise InputError(f"give `{new}` or its deprecated spelling `{old}`, not both")
        warnings.warn(f"`{old}=` is deprecated: use `{new}=` (`alpha` names the risk tests' own alpha)",
                      DeprecationWarning, stacklevel=3)
        values[new] = values.pop(old)
    return values
