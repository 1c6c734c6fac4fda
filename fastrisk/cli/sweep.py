"""``fastrisk sweep GRID.toml``: run a grid of experiments, in-process, in a process pool or on
a Dask cluster, checkpointed to Parquet and resumable."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from fastrisk._runtime.extras import require
from fastrisk.errors import InputError
from fastrisk.sweep import load_grid, local_client, process_pool, sweep
from fastrisk.sweep.backends import VERBOSE_ENV


def _executor(args):
    """(executor, closer) from --processes / --scheduler."""
    if args.processes is not None:
        pool = process_pool(args.processes)
        return pool, lambda: pool.shutdown(cancel_futures=True)
    if args.scheduler is None:
        return None, lambda: None
    if args.scheduler == "local" or args.scheduler.startswith("local:"):
        n = args.scheduler.partition(":")[2] or None
        try:
            n = None if n is None else int(n)
        except ValueError:
            raise InputError(f"--scheduler local:N needs a number of workers, got {args.scheduler!r}") from None
        if n is not None and n < 1:
            raise InputError(f"--scheduler {args.scheduler} starts no worker: give local:N with N >= 1 "
                             "(or local for one per core)")
        client = local_client(n)
        return client, client.close
    Client = require("distributed", what="--scheduler").Client
    try:
        client = Client(args.scheduler, timeout="20s")
    except (OSError, TimeoutError) as exc:
        raise InputError(f"cannot connect to the Dask scheduler at {args.scheduler}: {exc}") from None
    return client, client.close


def _cmd_sweep(args) -> int:
    grid = load_grid(args.grid)
    drawn = grid.seed is None and args.seed is None  # sweep() draws the root: printed, with how to repeat it
    if args.seed is not None:
        if args.seed < 0:
            raise InputError(f"--seed must be a non-negative integer, got {args.seed}")
        grid.seed = args.seed  # the root itself, as a grid file's [sweep] seed = N
    out = Path(args.out) if args.out else Path(Path(args.grid).stem + ".parquet")
    if args.verbose:  # workers inherit it: their third-party exit reports are kept
        os.environ[VERBOSE_ENV] = "1"
    executor, close = _executor(args)
    try:
        result = sweep(grid, executor=executor, out=out, resume=args.resume, retry_errors=args.retry_errors,
                       progress=False if args.quiet else None, batch_seconds=args.batch_seconds,
                       retries=args.retries, worker_timeout=args.worker_timeout)
    except KeyboardInterrupt:
        print(f"fastrisk sweep: interrupted; finished batches are kept in {out}.parts: "
              f"rerun with --resume to compute only the rest", file=sys.stderr)
        raise
    finally:
        close()
    errors = result.errors()
    if errors.num_rows:
        print(f"fastrisk sweep: {errors.num_rows} job(s) failed:", file=sys.stderr)
        for row in errors.slice(0, 10).to_pylist():
            print(f"  job {row['job']} ({row['experiment']}, {row['kind']} on {row['data']}, {row['params']}): "
                  f"{row['error']}", file=sys.stderr)
        if errors.num_rows > 10:
            print(f"  ... and {errors.num_rows - 10} more (status == 'error' in {out})", file=sys.stderr)
        print("fastrisk sweep: a failed job is kept as failed by --resume; to compute the failed jobs again, "
              "fix their cause and rerun with --resume --retry-errors", file=sys.stderr)
    if not args.quiet or not result.complete:
        print(f"fastrisk sweep: {result.n_jobs} jobs (root seed {result.seed}"
              + (f"; --seed {result.seed} repeats this run" if drawn else "") + f"): {result.n_computed} computed, "
              f"{result.n_reused} reused from the checkpoint, {result.n_failed} failed, {result.n_missing} missing"
              + (f" ({result.n_retried} resubmitted after a lost worker)" if result.n_retried else "") + "; "
              + (f"results in {out}" if result.complete else f"checkpoint in {out}.parts: rerun with --resume"),
              file=sys.stderr)
    return 0 if result.complete and result.n_failed == 0 else 1


def register(sub) -> None:
    p = sub.add_parser(
        "sweep", help="run a grid of experiments (in-process, process pool or Dask), resumable",
        description="Expand GRID.toml into jobs (every data source x grid axis combination of every "
                    "[[experiment]]), run them in batches and gather one Parquet table with the jobs' "
                    "parameters and seeds as columns. Finished batches are checkpointed to OUT.parts/; "
                    "--resume recomputes only what is missing. Exit status 1 if a job failed or was lost.")
    p.add_argument("grid", metavar="GRID.toml", help="the grid (see bench_data/sweeps/README.md)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="run on a Dask cluster: a scheduler address (tcp://host:8786), or local[:N] "
                            "to start a local cluster of N one-thread worker processes")
    where.add_argument("--processes", type=int, metavar="N", help="run in a pool of N worker processes")
    p.add_argument("--out", metavar="PATH", help="result Parquet file (default: GRID.parquet here)")
    p.add_argument("--seed", type=int, metavar="N",
                   help="root seed of the jobs' seeds, instead of the grid's [sweep] seed (default: the grid's, "
                        "else a fresh one, printed in the summary)")
    p.add_argument("--resume", action="store_true", help="reuse the checkpoint, compute only missing jobs")
    p.add_argument("--retry-errors", action="store_true", help="with --resume, also recompute failed jobs")
    p.add_argument("--batch-seconds", type=float, default=0.2, metavar="S",
                   help="target seconds of work per task (default 0.2)")
    p.add_argument("--retries", type=int, default=2, metavar="N",
                   help="resubmit a batch lost with its worker up to N times, then record it as missing "
                        "(default 2)")
    p.add_argument("--worker-timeout", type=float, metavar="S",
                   help="with --scheduler: stop (checkpointed, resumable) after S seconds without any worker "
                        "(default 60, or $FASTRISK_WORKER_TIMEOUT)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar or summary (the bar is shown only when stderr is a terminal)")
    p.add_argument("--verbose", action="store_true",
                   help="keep what worker processes print when they exit (third-party leak reports)")
    p.set_defaults(func=_cmd_sweep)
