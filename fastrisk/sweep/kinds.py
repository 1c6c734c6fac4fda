"""Job kinds: what a sweep can run (`KINDS`) and `register_kind`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import pyarrow as pa

from fastrisk.core.tables import baseline_table
from fastrisk.core.urisk import risk, topic_risk
from fastrisk.core.zrisk import zrisk
from fastrisk.data.datasets import trec2012_web
from fastrisk.errors import InputError
from fastrisk.inference.metaeval import discriminative_power, effect_size, swap_rates
from fastrisk.inference.resampling import bootstrap, permutation_test
from fastrisk.measures.pooling import pooling_experiment


@dataclass(frozen=True)
class JobKind:
    """A procedure a sweep can run: ``func(data, **params) -> pyarrow.Table``.

    ``data`` says what a data source must load to (``"matrix"``: a ScoreMatrix; ``"runs"``:
    a ``(RunSet, Qrels)`` pair); ``seed`` names the keyword that receives the job's seed
    (None: the procedure is not random); ``threads`` whether ``func`` accepts ``threads=``.
    """

    name: str
    func: Callable
    data: str = "matrix"
    seed: str | None = None
    threads: bool = True

    def __call__(self, data, params: Mapping, seed: int, threads: int | None) -> pa.Table:
        kwargs = dict(params)
        if self.seed is not None:
            kwargs[self.seed] = seed
        if self.threads:
            kwargs["threads"] = threads
        table = self.func(data, **kwargs)
        if not isinstance(table, pa.Table):
            table = table.to_arrow()
        return table


#: The registry of job kinds: name -> `JobKind`.
KINDS: dict[str, JobKind] = {}


#: Job kinds registered by optional modules when a grid first names them (kind -> module).
PLUGIN_KINDS = {"simulate_errors": "fastrisk.simulate"}


def register_kind(name: str, func: Callable, *, data: str = "matrix", seed: str | None = None,
                  threads: bool = True, replace: bool = False) -> JobKind:
    """Add a job kind: ``func(data, **params)`` returning a pyarrow Table (or a result with
    ``to_arrow()``). ``func`` must be importable by name (a module-level function) for
    process and Dask workers to find it.

    Parameters
    ----------
    name : str
        The kind's name in grids.
    func : callable
        ``func(data, **params)``, a module-level function.
    data : {"matrix", "runs"}
        What a data source loads to: a ScoreMatrix, or a ``(RunSet, Qrels)`` pair.
    seed : str, optional
        The keyword that receives each job's seed (None: not random).
    threads : bool
        Whether ``func`` accepts ``threads=``.
    replace : bool
        Replace a kind of the same name.

    Returns
    -------
    JobKind
        The registered kind.

    References
    ----------
    Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling. Proceedings of
    the 14th Python in Science Conference (SciPy 2015), 130-136.

    Examples
    --------
    >>> import fastrisk
    >>> import pyarrow as pa
    >>> def mean_score(data, **params):
    ...     return pa.table({'system': list(data.systems), 'mean': data.values.mean(axis=1)})
    >>> fastrisk.register_kind('mean_score', mean_score, replace=True).name
    'mean_score'
    """
    if data not in ("matrix", "runs"):
        raise InputError(f"`data` must be 'matrix' or 'runs', got {data!r}")
    if name in KINDS and not replace:
        raise InputError(f"job kind {name!r} is already registered (pass replace=True to replace it)")
    KINDS[name] = kind = JobKind(name, func, data, seed, threads)
    return kind


def _baseline_ref(baseline, matrix):
    """``"trec2012-web:indriCASP"`` -> the official per-topic baseline for the matrix's measure."""
    if isinstance(baseline, str) and baseline.lower() == "trec2012-web:indricasp":
        measure = (matrix.measure or "err20").lower().replace("@", "")
        return dict(trec2012_web(measure)[1])
    return baseline


def _risk_job(matrix, *, baseline, inference="t", **params) -> pa.Table:
    # inference: how the p-values test URisk = 0 (fastrisk.core.inference.INFERENCES; its column
    # and metadata name it); a resampling one takes `rng` among the grid's parameters
    return risk(matrix, _baseline_ref(baseline, matrix), inference=inference, **params).to_arrow()


def _topic_risk_job(matrix, *, baseline, **params) -> pa.Table:
    return topic_risk(matrix, _baseline_ref(baseline, matrix), **params).to_arrow()


def _pool_bias_job(data, **params) -> pa.Table:
    runs, qrels = data
    return pooling_experiment(runs, qrels, **params).mae_long()


def _bootstrap_job(matrix, *, baseline=None, **params) -> pa.Table:
    params.setdefault("keep_replicates", False)
    return bootstrap(matrix, _baseline_ref(baseline, matrix), progress=False, **params).to_arrow()


def _permutation_job(matrix, *, baseline=None, **params) -> pa.Table:
    params.setdefault("keep_replicates", False)
    return permutation_test(matrix, _baseline_ref(baseline, matrix), progress=False, **params).to_arrow()


def _zrisk_job(matrix, **params) -> pa.Table:
    return zrisk(matrix, **params).to_arrow()


def _table_job(matrix, *, baseline="all", inference="t", **params) -> pa.Table:
    return baseline_table(matrix, _baseline_ref(baseline, matrix), inference=inference, **params).to_arrow()


register_kind("risk", _risk_job)
register_kind("topic_risk", _topic_risk_job)
register_kind("bootstrap", _bootstrap_job, seed="rng")
register_kind("permutation", _permutation_job, seed="rng")
register_kind("pool_bias", _pool_bias_job, data="runs", seed="rng")
register_kind("zrisk", _zrisk_job)
register_kind("table", _table_job)


def _discriminative_power_job(matrix, *, summary=True, **params) -> pa.Table:
    """Sakai's discriminative power (`fastrisk.discriminative_power`): one summary row per job
    (``summary=False``: one row per pair)."""
    r = discriminative_power(matrix, progress=False, **params)
    return r.summary() if summary else r.to_arrow()


def _swap_rates_job(matrix, **params) -> pa.Table:
    return swap_rates(matrix, **params).to_arrow()


def _effect_size_job(matrix, *, baseline, **params) -> pa.Table:
    return effect_size(matrix, baseline, **params).to_arrow()


register_kind("discriminative_power", _discriminative_power_job, seed="rng")
register_kind("swap_rates", _swap_rates_job, seed="rng")
register_kind("effect_size", _effect_size_job, seed="rng", threads=False)
