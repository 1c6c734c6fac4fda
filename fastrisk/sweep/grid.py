"""The grid: experiments, their jobs and `load_grid` (TOML files or mappings)."""

from __future__ import annotations

import importlib
import itertools
import json
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fastrisk._runtime.rng import resolve_seed
from fastrisk._runtime.validation import non_negative_int
from fastrisk.errors import InputError
from fastrisk.sweep.data import _expand_source, _source_kind
from fastrisk.sweep.kinds import KINDS, PLUGIN_KINDS


def _param_value(value, where: str):
    """Grid values must be TOML-like: numbers, strings, bools or lists of them."""
    if isinstance(value, (bool, str, numbers.Real)):
        return value
    if isinstance(value, (list, tuple)):
        return [_param_value(v, where) for v in value]
    raise InputError(f"{where}: parameter values must be numbers, strings, booleans or lists, got "
                     f"{type(value).__name__}")


@dataclass(frozen=True)
class Experiment:
    """One job kind over data sources x grid axes; ``params`` are passed to every job.

    ``data``: a source spec (``"trec:web2012_err20"``, ``"trec:adhoc*_ap"``,
    ``"trec2012-web:err20"``, a file path), an in-memory object (a ScoreMatrix), a list of
    them, or a mapping name -> spec/object. ``grid``: parameter name -> list of values, one
    job per combination (data outermost, then the axes in order).

    References
    ----------
    Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling. Proceedings of
    the 14th Python in Science Conference (SciPy 2015), 130-136.

    Urbano, J., Lima, H. & Hanjalic, A. (2019). Statistical significance testing in information retrieval: an
    empirical analysis of type I, type II and type III errors. SIGIR 2019.

    Examples
    --------
    >>> import fastrisk
    >>> exp = fastrisk.Experiment('risk', 'trec:web2012_err20', params={'baseline': 'mean'}, grid={'alpha': [0, 5]})
    >>> len(fastrisk.Grid([exp], rng=1).jobs())
    2
    """

    kind: str
    data: object
    params: Mapping = field(default_factory=dict)
    grid: Mapping = field(default_factory=dict)
    name: str | None = None


@dataclass(frozen=True)
class Job:
    """One call: experiment ``experiment`` (index ``e``), position ``position`` in it."""

    job: int
    e: int
    position: int
    experiment: str
    kind: str
    data: str
    params: dict
    seed: int

    @property
    def params_json(self) -> str:
        return json.dumps(self.params, sort_keys=True)


_EXPERIMENT_KEYS = {"kind", "data", "params", "grid", "name"}
_RESERVED = {"threads", "progress", "rng", "seed"}


class Grid:
    """A declarative sweep: experiments and the root of the per-job seeds.

    Parameters
    ----------
    experiments : sequence of Experiment
        What to run.
    rng : int, numpy.random.SeedSequence or numpy.random.Generator, optional
        The root seed (an int is the root itself, recorded as ``seed``; a Generator gives the
        int it draws, a SeedSequence its 63-bit derived seed: either way ``rng=grid.seed`` gives
        the same jobs). None: `sweep` draws one and records it.
    base_dir : str or os.PathLike, optional
        Where relative data paths are resolved (a grid file's directory).

    References
    ----------
    Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling. Proceedings of
    the 14th Python in Science Conference (SciPy 2015), 130-136.

    Urbano, J., Lima, H. & Hanjalic, A. (2019). Statistical significance testing in information retrieval: an
    empirical analysis of type I, type II and type III errors. SIGIR 2019.

    Examples
    --------
    >>> import fastrisk
    >>> exp = fastrisk.Experiment('risk', 'trec:web2012_err20', params={'baseline': 'mean'}, grid={'alpha': [0, 5]})
    >>> grid = fastrisk.Grid([exp], rng=2019)
    >>> len(grid), grid.seed
    (2, 2019)
    """

    def __init__(self, experiments: Sequence[Experiment], *, rng=None, base_dir: str | Path | None = None):
        if rng is None or isinstance(rng, bool):
            self.seed = None if rng is None else resolve_seed(rng).recorded  # (a bool: refused)
        elif isinstance(rng, numbers.Integral):
            if rng < 0:
                raise InputError(f"`rng` must be a non-negative integer seed, got {rng!r}")
            self.seed = int(rng)  # the root itself, so a grid file's seed = N means N
        else:  # the root an int gives again: a Generator's draw, a SeedSequence's 63-bit derived seed
            rseed = resolve_seed(rng)
            self.seed = rseed.kernel if isinstance(rng, np.random.SeedSequence) else rseed.recorded
        self.base_dir = None if base_dir is None else Path(base_dir)
        if not experiments:
            raise InputError("a sweep grid needs at least one experiment")
        self.experiments = tuple(experiments)
        self._sources: dict[str, object] = {}   # data label -> spec string or in-memory object
        self._expanded = [self._expand(e, x) for e, x in enumerate(self.experiments)]

    # ------------------------------------------------------------ construction
    @classmethod
    def from_dict(cls, spec: Mapping, *, base_dir=None) -> "Grid":
        """From the TOML structure: ``[sweep] seed = ...`` and ``[[experiment]]`` tables.

        References
        ----------
        Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling.
        Proceedings of the 14th Python in Science Conference (SciPy 2015), 130-136.

        Examples
        --------
        >>> import fastrisk
        >>> spec = {'sweep': {'seed': 1}, 'experiment': [{'kind': 'risk', 'data': 'trec:web2012_err20', 'params': {'baseline': 'mean'}, 'grid': {'alpha': [0, 5]}}]}
        >>> len(fastrisk.Grid.from_dict(spec))
        2
        """
        if not isinstance(spec, Mapping):
            raise InputError("a sweep grid must be a table with [[experiment]] entries")
        unknown = set(spec) - {"sweep", "experiment"}
        if unknown:
            raise InputError(f"unknown top-level key(s) {', '.join(sorted(unknown))} in the grid; "
                             "expected [sweep] and [[experiment]]")
        head = spec.get("sweep", {})
        bad = set(head) - {"seed"}
        if bad:
            raise InputError(f"unknown key(s) {', '.join(sorted(bad))} in [sweep]; expected seed")
        exps = spec.get("experiment", [])
        if not isinstance(exps, list):
            raise InputError("`experiment` must be an array of tables ([[experiment]])")
        out = []
        for i, x in enumerate(exps):
            extra = set(x) - _EXPERIMENT_KEYS
            if extra:
                raise InputError(f"experiment {i + 1}: unknown key(s) {', '.join(sorted(extra))}; expected "
                                 f"{', '.join(sorted(_EXPERIMENT_KEYS))}")
            for key in ("kind", "data"):
                if key not in x:
                    raise InputError(f"experiment {i + 1}: missing `{key}`")
            out.append(Experiment(x["kind"], x["data"], x.get("params", {}), x.get("grid", {}), x.get("name")))
        seed = head.get("seed")
        if seed is not None:
            non_negative_int(seed, "seed")
        return cls(out, rng=seed, base_dir=base_dir)

    @classmethod
    def from_toml(cls, path) -> "Grid":
        """Read a grid file: the TOML form of `from_dict`, data paths relative to its directory.

        Parameters
        ----------
        path : str or os.PathLike
            The TOML file (``[sweep] seed = ...`` and ``[[experiment]]`` tables).

        Returns
        -------
        Grid

        References
        ----------
        Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling.
        Proceedings of the 14th Python in Science Conference (SciPy 2015), 130-136.

        Urbano, J., Lima, H. & Hanjalic, A. (2019). Statistical significance testing in information
        retrieval: an empirical analysis of type I, type II and type III errors. SIGIR 2019.

        Examples
        --------
        >>> import fastrisk
        >>> from fastrisk.data import datasets
        >>> grid = fastrisk.Grid.from_toml(datasets.path('sweeps/resampling.toml'))
        >>> grid.seed, len(grid) > 0
        (2019, True)
        """
        path = Path(path)
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            import tomli as tomllib
        try:
            with open(path, "rb") as fh:
                spec = tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"{path}: {exc}") from None
        return cls.from_dict(spec, base_dir=path.parent)

    # ------------------------------------------------------------ expansion
    def _expand(self, e: int, x: Experiment):
        name = x.name or f"{x.kind}-{e + 1}"
        where = f"experiment {name!r}"
        if x.kind not in KINDS and x.kind in PLUGIN_KINDS:
            importlib.import_module(PLUGIN_KINDS[x.kind])  # registers the kind
        if x.kind not in KINDS:
            raise InputError(f"{where}: unknown job kind {x.kind!r}; known: {', '.join(sorted(KINDS))}")
        if not isinstance(x.params, Mapping) or not isinstance(x.grid, Mapping):
            raise InputError(f"{where}: `params` and `grid` must be tables (name = value)")
        params = {k: _param_value(v, f"{where}, parameter {k!r}") for k, v in x.params.items()}
        axes = {}
        for k, v in x.grid.items():
            if not isinstance(v, (list, tuple)) or not v:
                raise InputError(f"{where}: grid axis {k!r} must be a non-empty list, got {v!r}")
            axes[k] = [_param_value(u, f"{where}, grid axis {k!r}") for u in v]
        clash = (set(params) & set(axes)) | ((set(params) | set(axes)) & _RESERVED)
        if clash:
            raise InputError(f"{where}: parameter(s) {', '.join(sorted(clash))} given twice or reserved "
                             f"(the sweep sets {', '.join(sorted(_RESERVED))})")
        labels = []
        items = x.data.items() if isinstance(x.data, Mapping) else \
            [(None, d) for d in (x.data if isinstance(x.data, (list, tuple)) else [x.data])]
        for label, d in items:
            for spec in _expand_source(d, self.base_dir):
                if isinstance(spec, str) and KINDS[x.kind].data != _source_kind(spec):
                    raise InputError(f"{where}: job kind {x.kind!r} needs a {KINDS[x.kind].data} data source, "
                                     f"{d!r} is a {_source_kind(spec)} source")
                lab = label if label is not None else (spec if isinstance(spec, str) else f"data-{id(spec):x}")
                if lab in self._sources and self._sources[lab] is not spec and self._sources[lab] != spec:
                    raise InputError(f"{where}: data label {lab!r} names two different sources")
                self._sources[lab] = spec
                labels.append(lab)
        if not labels:
            raise InputError(f"{where}: `data` lists no source")
        return name, labels, params, axes

    def jobs(self, seed: int | None = None) -> list[Job]:
        """Every job, in grid order, with its seed spawned from ``seed`` (default: the grid's)."""
        root = self.seed if seed is None else seed
        if root is None:
            raise InputError("the grid has no root seed; set [sweep] seed = N (sweep() draws one if unset)")
        out = []
        n = 0
        for e, (name, labels, params, axes) in enumerate(self._expanded):
            kind = self.experiments[e].kind
            combos = itertools.product(labels, *axes.values())
            for j, combo in enumerate(combos):
                p = dict(params)
                p.update(zip(axes, combo[1:]))
                ss = np.random.SeedSequence(root, spawn_key=(e, j))
                seed = int(ss.generate_state(1, np.uint64)[0] >> np.uint64(1))
                out.append(Job(n, e, j, name, kind, combo[0], p, seed))
                n += 1
        return out

    def source(self, label: str):
        return self._sources[label]

    def __len__(self) -> int:
        return sum(len(labels) * math.prod(len(v) for v in axes.values())
                   for _, labels, _, axes in self._expanded)


def load_grid(grid) -> Grid:
    """A `Grid` from a Grid, a TOML path or a mapping.

    Parameters
    ----------
    grid : Grid, str, path-like or mapping
        A grid, a TOML file (see ``bench_data/sweeps/``) or the equivalent mapping.

    Returns
    -------
    Grid
    """
    if isinstance(grid, Grid):
        return grid
    if isinstance(grid, (str, Path)):
        if not Path(grid).is_file():
            raise InputError(f"grid file {str(grid)!r} does not exist")
        return Grid.from_toml(grid)
    if isinstance(grid, Mapping):
        return Grid.from_dict(grid)
    raise InputError(f"`grid` must be a Grid, a TOML file path or a mapping, got {type(grid).__name__}")
