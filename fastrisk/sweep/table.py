"""Job results -> one Arrow table: the job columns and one ``param_<name>`` column per parameter."""

from __future__ import annotations

import json
import numbers

import numpy as np
import pyarrow as pa

from fastrisk.sweep.grid import Job

#: Column names every sweep table starts with (then ``param_<name>`` per parameter).
JOB_COLUMNS = ("job", "experiment", "kind", "data", "seed", "status", "error", "warning", "params")


def _param_types(jobs: list[Job]) -> dict:
    """One Arrow type per parameter name over the whole grid (stable across resumes)."""
    values: dict[str, list] = {}
    for j in jobs:
        for k, v in j.params.items():
            values.setdefault(k, []).append(v)
    types = {}
    for k, vs in values.items():
        if all(isinstance(v, bool) for v in vs):
            types[k] = pa.bool_()
        elif all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in vs):
            types[k] = pa.int64()
        elif all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in vs):
            types[k] = pa.float64()
        else:
            types[k] = pa.string()
    return types


def _param_cell(v, typ):
    if v is None:
        return None
    if typ == pa.string():
        return v if isinstance(v, str) else json.dumps(v)
    if typ == pa.float64():
        return float(v)
    return v


def _job_columns(jobs: list[Job], status, errors, warnings_, types: dict) -> dict:
    cols = {
        "job": pa.array([j.job for j in jobs], pa.int64()),
        "experiment": pa.array([j.experiment for j in jobs], pa.string()),
        "kind": pa.array([j.kind for j in jobs], pa.string()),
        "data": pa.array([j.data for j in jobs], pa.string()),
        "seed": pa.array([j.seed for j in jobs], pa.int64()),
        "status": pa.array(status, pa.string()),
        "error": pa.array(errors, pa.string()),
        "warning": pa.array(warnings_, pa.string()),
        "params": pa.array([j.params_json for j in jobs], pa.string()),
    }
    for k, typ in types.items():
        cols[f"param_{k}"] = pa.array([_param_cell(j.params.get(k), typ) for j in jobs], typ)
    return cols


def _assemble(jobs: list[Job], results: list, types: dict) -> pa.Table:
    """One table for a finished batch: job columns repeated over each job's result rows
    (a failed job is one row with null results)."""
    status = ["ok" if r[1] is None else "error" for r in results]
    head = pa.table(_job_columns(jobs, status, [r[1] for r in results], [r[2] for r in results], types))
    blank = pa.table({"_": [None]}).drop_columns(["_"])
    tables = [blank if r[0] is None else r[0] for r in results]
    counts = np.array([t.num_rows for t in tables], dtype=np.int64)
    body = _concat(tables)
    idx = pa.array(np.repeat(np.arange(len(jobs), dtype=np.int64), counts))
    cols = {name: head.column(name).take(idx) for name in head.column_names}
    for name in body.column_names:
        cols[name if name not in cols else f"result_{name}"] = body.column(name)
    return pa.table(cols)


def _concat(tables: list[pa.Table]) -> pa.Table:
    tables = [t for t in tables if t is not None]
    if not tables:
        return pa.table({})
    try:
        return pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        # the same result column with different types in different kinds: fall back to strings
        names = list(dict.fromkeys(n for t in tables for n in t.column_names))
        types = {}
        for n in names:
            seen = {t.schema.field(n).type for t in tables if n in t.column_names}
            types[n] = seen.pop() if len(seen) == 1 else pa.string()
        fixed = [t.cast(pa.schema([(n, types[n]) for n in t.column_names])) for t in tables]
        return pa.concat_tables(fixed, promote_options="permissive")
