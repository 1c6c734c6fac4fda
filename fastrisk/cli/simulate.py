"""``fastrisk simulate type1|power|type3|fit|grid|topics|pair|calibrated``: error-rate studies of paired tests on
simulated collections with the protocol of Urbano, Lima & Hanjalic (SIGIR 2019), run on the
sweep engine; ``fit`` builds (and caches) the fitted models; ``grid`` runs the paper's grid;
``topics`` plans a topic-set size (`fastrisk.simulate.topics`); ``pair`` checks the risk
inferences on the user's own pair of runs (`fastrisk.simulate.pair.pair_study`); ``calibrated``
tests that pair by TRisk with its null distribution simulated from the pair's own fitted model
(`fastrisk.simulate.calibrated.calibrated_trisk`)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from fastrisk._runtime import battery_tests as _bt
from fastrisk.cli._output import add_format_options, write_table
from fastrisk.errors import InputError

#: Largest number of resamples (as the resampling commands).
MAX_REPLICATES = 10**9
#: The study's effect sizes (``R/common.R``), the default of power, type3 and grid.
STUDY_DELTAS = "0.01,0.02,0.03,0.04,0.05,0.06,0.07,0.08,0.09,0.1"
_STUDIES = ("type1", "power", "type3")


def _floats(text: str, name: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"--{name} must be comma-separated numbers, got {text!r}") from None


def _ints(text: str, name: str) -> list[int]:
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"--{name} must be comma-separated integers, got {text!r}") from None


def _options(args, paper: bool = False, executor=None) -> tuple:
    """The study's options objects (`fastrisk.simulate.options`: Sampling, TestSelection,
    Execution), built once from the command line."""
    from fastrisk.simulate.options import Execution, Sampling, TestSelection  # imported when the command runs

    if args.replicates is None and not paper:
        args.replicates = 1000
    if args.replicates is not None and not 0 <= args.replicates <= MAX_REPLICATES:
        raise InputError(f"--replicates must be in [0, {MAX_REPLICATES:g}], got {args.replicates}")
    tests = [t.strip() for t in args.tests.split(",") if t.strip()] if args.tests else None
    sampling = Sampling(trials=args.trials, replicates=args.replicates, rng=args.seed,
                        shared_resamples=args.shared_resamples or False)
    selection = TestSelection(tests=tests, trisk_alpha=_trisk_alpha(args), min_diff=args.min_diff,
                              risk_nulls=not args.no_risk_nulls)
    # progress on stderr unless --quiet: a bar on a terminal, a line every 10 s into a log or a pipe
    execution = Execution(executor=executor, progress=not args.quiet, cache=args.cache,
                          ties_seed=args.ties_seed, resume=args.resume,
                          out=args.checkpoint if args.study in _STUDIES else None)
    return sampling, selection, execution


#: The library's keywords as the command line spells them (an error raised through the CLI names
#: the option the user typed).
_CLI_SPELLING = (("`risk_nulls=False`", "--no-risk-nulls"), ("risk_nulls=False", "--no-risk-nulls"),
                 ("`trisk_alpha`", "--trisk-alpha"), ("`tests`", "--tests"), ("`significance`", "--significance"),
                 ("`replicates`", "--replicates"), ("`trials`", "--trials"), ("`topics`", "--topics"),
                 ("`delta`", "--delta"), ("`min_topics`", "--min-topics"), ("`max_topics`", "--max-topics"),
                 ("`test`", "--test"), ("`power`", "--power"), ("`tails`", "--tails"), ("`min_diff`", "--min-diff"),
                 ("`collections`", "the collections"), ("`shared_resamples`", "--shared-resamples"))


def _cli_spelling(message: str) -> str:
    """``message`` with the library's keywords in the command line's spelling."""
    for python, cli in _CLI_SPELLING:
        message = message.replace(python, cli)
    return message


def _trisk_alpha(args) -> list[float]:
    """--trisk-alpha's alphas (default 1,5); with --no-risk-nulls, alphas > 0 named by the user
    are refused: their tests (trisk@A, bootstrap_risk@A) run only under their own null."""
    alphas = _floats(args.trisk_alpha if args.trisk_alpha is not None else "1,5", "trisk-alpha")
    if args.no_risk_nulls and args.trisk_alpha is not None and any(a > 0 for a in alphas):
        named = [f"{fam}@{a:g}" for a in alphas if a > 0 for fam in ("trisk", "bootstrap_risk")]
        raise InputError(f"--no-risk-nulls leaves out {', '.join(named)}, which --trisk-alpha {args.trisk_alpha} "
                         "asks for (at alpha > 0 they run only on pairs calibrated to their own null): drop "
                         "--no-risk-nulls to run them, or give --trisk-alpha 0 (trisk@0 and bootstrap_risk@0, "
                         "on the study's own pairs)")
    return alphas


def _cmd_simulate(args) -> int:
    try:
        return _simulate(args)
    except InputError as exc:
        text = _cli_spelling(str(exc))
        if text == str(exc):
            raise
        raise InputError(text) from exc


def _simulate(args) -> int:
    from fastrisk import simulate  # imported when the command runs: keeps `fastrisk --help` fast
    from fastrisk.cli.sweep import _executor  # imported when the command runs: keeps `fastrisk --help` fast

    collections = list(args.collection) + (args.collections.split(",") if args.collections else [])
    collections = collections or None
    if args.study != "grid" and args.paper_size:
        raise InputError("--paper-size is an option of simulate grid")
    if args.study not in ("grid", *_STUDIES) and args.tests:
        raise InputError("--tests is an option of simulate type1, power, type3 and grid")
    if args.study == "topics" and args.no_risk_nulls:
        raise InputError("--no-risk-nulls is an option of simulate type1, power, type3 and grid (simulate topics "
                         "simulates only the test it plans: --test)")
    if args.study != "grid" and args.paper_tests:
        raise InputError("--paper-tests is an option of simulate grid")
    if args.study == "pair":
        return _pair(args, collections)
    if args.study == "calibrated":
        return _calibrated(args, collections)
    if args.baseline is not None or args.system is not None or args.inferences is not None \
            or args.topic_grid is not None or args.nulls is not None:
        raise InputError("--baseline, --system, --inferences, --topic-grid and --nulls are options of simulate pair")
    if args.alpha == "smooth":
        raise InputError("--alpha smooth is an option of simulate calibrated")
    if args.alpha is not None:  # the old spelling: --alpha is the risk tests' own alpha in every other command
        print("fastrisk simulate: --alpha is deprecated for the significance level: use --significance (--alpha "
              "is the risk tests' own alpha in risk, table, bootstrap and report)", file=sys.stderr)
        args.significance = args.alpha
    if args.significance is None:
        args.significance = 0.05
    planned, args.test = args.test, "t" if args.test is None else args.test
    if args.study in ("type1", "power", "topics") and collections is not None and len(collections) == 1 \
            and not args.tests and not (args.study == "topics" and planned is not None):
        # a collection with fewer runs than the collection-level protocol needs: its pairs instead (#37)
        short = _too_few_runs(args, collections[0])
        if short is not None:
            return _pairs_instead(args, *short)
    if args.trials is None and not (args.study == "grid" and args.paper_size):
        args.trials = 10000
    executor, close = _executor(args)
    try:
        if args.study == "fit":
            return _fit(args, collections, executor)
        if args.study == "grid":
            return _grid(args, collections, executor)
        if args.study == "topics":
            return _topics(args, collections, executor)
        sampling, selection, execution = _options(args, executor=executor)
        common = dict(topics=args.topics, collections=collections, sampling=sampling, selection=selection,
                      execution=execution)
        if args.study == "type1":
            result = simulate.type1(args.measure, **common)
        else:
            fn = simulate.power if args.study == "power" else simulate.type3
            result = fn(args.measure, delta=_floats(args.delta or STUDY_DELTAS, "delta"), **common)
    finally:
        close()
    write_table(result.to_arrow(), args.format, args.out)  # first: a failure below keeps the study
    print(result.summary(args.significance, args.tails), file=sys.stderr)  # the verdict, after the table
    if args.tables:
        paths = result.write_tables(args.tables)
        print(f"{len(paths)} table(s) under {args.tables}", file=sys.stderr)
    if args.plot:
        from fastrisk.viz.figures import plot_studies  # imported when the command runs: keeps `fastrisk --help` fast

        plot_studies([result], args.plot)
    return 0


#: simulate pair's effect sizes by default (URisk_alpha = delta).
PAIR_DELTAS = "0.01,0.02,0.05"


def _pair(args, collections) -> int:
    """``simulate pair MATRIX --baseline B --system E --alpha A --topics N``: each risk
    inference's type I rate under the empirical and the copula null, its power and the topics it
    needs, for that pair (`fastrisk.simulate.pair.pair_study`); the table on stdout (or --out),
    the verdicts on stderr."""
    from fastrisk.simulate.pair import pair_study  # imported when the command runs: keeps `fastrisk --help` fast

    _one_pair_iv(args, collections, "pair")
    inferences = [v.strip() for v in args.inferences.split(",") if v.strip()] if args.inferences else None
    nulls = [v.strip() for v in args.nulls.split(",") if v.strip()] if args.nulls else ("empirical", "copula")
    grid = _ints(args.topic_grid, "topic-grid") if args.topic_grid else None
    result = pair_study(collections[0], args.baseline, args.system, alpha=5.0 if args.alpha is None else args.alpha,
                        topics=args.topics, trials=10000 if args.trials is None else args.trials,
                        deltas=_floats(args.delta or PAIR_DELTAS, "delta"), inferences=inferences,
                        level=0.05 if args.significance is None else args.significance, power=args.power,
                        topic_grid=grid, alternative={"one-tailed": "greater"}.get(args.tails, args.tails),
                        replicates=args.replicates, resampling_trials=args.resampling_trials, measure=args.measure,
                        nulls=nulls, seed=args.seed, ties_seed=args.ties_seed, progress=not args.quiet)
    write_table(result.to_arrow(), args.format, args.out)  # first: a failure below keeps the table
    print(result.summary(), file=sys.stderr)
    return 0


def _one_pair_iv(args, collections, action: str) -> None:
    """The checks of an action on one pair of runs (``pair``, ``calibrated``): one score-matrix
    file or bundled name, --baseline and --system, none of the collection studies' options."""
    if not collections or len(collections) != 1:
        raise InputError(f"simulate {action} takes one score-matrix file (or bundled matrix name): the file holding "
                         f"the two runs, got {len(collections or [])}")
    if args.baseline is None or args.system is None:
        raise InputError(f"simulate {action} needs --baseline B and --system E (the runs compared, by name)")
    if args.processes or args.scheduler or args.cache:
        raise InputError(f"simulate {action} fits its one pair in-process and caches nothing: --processes, "
                         "--scheduler and --cache are not options of it")


def _calibrated(args, collections) -> int:
    """``simulate calibrated MATRIX --baseline B --system E --alpha A``: TRisk of the pair with
    its p-values from a parametric bootstrap of the pair's fitted copula model calibrated to
    URisk_A = 0 (`fastrisk.simulate.calibrated.calibrated_trisk`); one row on stdout (or --out),
    a summary line and, without --seed, the seed drawn on stderr."""
    from fastrisk.cli._resampling import announce_seed, run_seed  # imported when the command runs
    from fastrisk.simulate.calibrated import REPLICATES, calibrated_trisk  # imported when the command runs

    _one_pair_iv(args, collections, "calibrated")
    extra = [o for o, v in (("--trials", args.trials), ("--delta", args.delta), ("--inferences", args.inferences),
                            ("--topic-grid", args.topic_grid), ("--nulls", args.nulls), ("--test", args.test))
             if v is not None]
    if extra:
        raise InputError(f"{', '.join(extra)}: not options of simulate calibrated (it tests the pair on its own "
                         "topics: --alpha, --replicates, --seed)")
    seed = run_seed(args, "simulate calibrated")
    result = calibrated_trisk(collections[0], args.baseline, args.system, alpha=5.0 if args.alpha is None else args.alpha,
                              replicates=REPLICATES if args.replicates is None else args.replicates,
                              measure=args.measure, seed=seed, ties_seed=args.ties_seed, progress=not args.quiet)
    write_table(result.to_arrow(), args.format, args.out)  # first: a failure below keeps the table
    print(result.summary(), file=sys.stderr)
    announce_seed(args, "simulate calibrated", seed)
    return 0


def _alpha_option(text: str):
    """--alpha: a number, or ``smooth`` (simulate calibrated: the smooth value function)."""
    if text.strip().lower() == "smooth":
        return "smooth"
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number (or smooth), got {text!r}") from None


def _too_few_runs(args, collection):
    """(name, ScoreMatrix, measure key, runs kept, runs needed, what needs them) when the one
    collection of a type1, power or topics study keeps fewer runs than the collection-level
    protocol needs (`fastrisk.simulate.studies.runs_needed`: 11 for H1 pairs and the risk nulls'
    pairs), else None."""
    import numpy as np

    from fastrisk.data.datasets import trec_matrix  # imported when the command runs: keeps --help fast
    from fastrisk.simulate import studies  # imported when the command runs: keeps `fastrisk --help` fast
    from fastrisk.simulate.measures import kept_runs, snap_to_support  # imported when the command runs

    key, items = studies.load_collections(args.measure, [collection])
    name, mat = next(iter(items.items()))
    mat = trec_matrix(name) if mat is None else mat
    values = np.asarray(mat.values, dtype=np.float64)
    if values.ndim != 2 or values.shape[0] < 2:
        return None  # nothing to pair: the study's own refusal names it
    kept, _ = kept_runs(snap_to_support(values, key))
    mode = "type1" if args.study == "type1" else "power"
    risk = args.study != "topics" and not args.no_risk_nulls
    needed, why = studies.runs_needed(mode, True, risk)
    if len(kept) >= needed:
        return None
    return name, mat, key, len(kept), needed, why


def _pairs_instead(args, name, mat, key, kept, needed, why) -> int:
    """``simulate type1|power|topics`` on a collection that keeps too few runs for the
    collection-level protocol: the pair-level study (`fastrisk.simulate.pair.pair_study`) of every
    pair of its runs (the run with the lower mean as the baseline) at each risk alpha of
    --trisk-alpha, one table of all pairs; said on stderr."""
    import numpy as np
    import pyarrow as pa

    from fastrisk._runtime.rng import resolve_seed  # imported when the command runs: keeps --help fast
    from fastrisk.simulate.pair import pair_study  # imported when the command runs: keeps `fastrisk --help` fast

    systems = [str(v) for v in mat.systems]
    V = np.asarray(mat.values, dtype=np.float64)
    mu = V.mean(axis=1)
    pairs = [(a, b) if mu[a] <= mu[b] else (b, a) for a in range(len(systems)) for b in range(a + 1, len(systems))
             if not np.array_equal(V[a], V[b])]
    alphas = _trisk_alpha(args)
    default = "0.05" if args.study == "topics" else PAIR_DELTAS
    deltas = _floats(args.delta or default, "delta")
    rseed = resolve_seed(args.seed, name="--seed")  # printed: `recorded` (--seed N prints N); run: `kernel`
    seed = rseed.kernel  # (each pair_study derives its own seed from this one, as since the fallback came)
    print(f"fastrisk simulate {args.study}: collection {name!r} keeps {kept} of its {len(systems)} runs; the "
          f"collection-level protocol needs at least {needed} for {why}. Running the pair-level study instead "
          f"(fastrisk simulate pair): each risk inference under the empirical-population and the copula null, its "
          f"power and the topics it needs, for each of its {len(pairs)} pair(s) of runs (the lower mean as the "
          f"baseline) at alpha = {', '.join(f'{a:g}' for a in alphas)}, seed {rseed.recorded} "
          f"(--seed {rseed.recorded} repeats this run)", file=sys.stderr)
    tables, lines = [], []
    for a in alphas:
        for bi, ei in pairs:
            r = pair_study(mat, systems[bi], systems[ei], alpha=a, topics=args.topics,
                           trials=10000 if args.trials is None else args.trials, deltas=deltas,
                           level=0.05 if args.significance is None else args.significance, power=args.power,
                           alternative={"one-tailed": "greater"}.get(args.tails, args.tails), measure=key, seed=seed,
                           ties_seed=args.ties_seed, progress=not args.quiet)
            tables.append(r.to_arrow().replace_schema_metadata(None))
            lines.append(r.summary())
    if not tables:
        raise InputError(f"collection {name!r}: every pair of its runs scores the same on every topic")
    write_table(pa.concat_tables(tables), args.format, args.out)
    print("\n".join(lines), file=sys.stderr)
    return 0


def _fit(args, collections, executor) -> int:
    import time

    import pyarrow as pa

    from fastrisk.simulate import fits, studies  # imported when the command runs: keeps `fastrisk --help` fast
    from fastrisk.simulate.measures import describe_support  # imported when the command runs: keeps --help fast

    groups = []
    if collections is not None:
        groups.append(studies.load_collections(args.measure, collections))
    else:
        for m in [args.measure] if args.measure else list(studies.MEASURES):
            groups.append(studies.load_collections(m))
    t0 = time.perf_counter()
    names = [n for _, items in groups for n in items]
    if len(groups) == 1:
        key, items = groups[0]
    else:  # every measure's bundled collections in one pass (each name's measure is its suffix): no idle tail per measure
        key, items = None, {n: m for _, group in groups for n, m in group.items()}
    got = fits.fit_collections(items, measure=key, executor=executor, cache=args.cache, refit=args.refit,
                               progress=not args.quiet, ties_seed=args.ties_seed)
    took = time.perf_counter() - t0
    rows = [{"collection": n, "measure": f.measure, "support": describe_support(f.measure), "runs": f.n_runs,
             "duplicates": len(f.removed["duplicates"]), "bottom": len(f.removed["bottom"]), "pairs": len(f.copulas),
             "source": f.source} for n, f in got.items()]
    print(f"fitted models of {len(names)} collection(s) in {took:.1f} s", file=sys.stderr)
    write_table(pa.Table.from_pylist(rows), args.format, args.out)
    return 0


def _topics(args, collections, executor) -> int:
    from fastrisk.simulate.planning import topics  # imported when the command runs: keeps `fastrisk --help` fast

    delta = _floats(args.delta or "0.05", "delta")
    if len(delta) != 1:
        raise InputError(f"simulate topics plans for one effect size: give one --delta, got {args.delta!r}")
    if args.replicates is not None and not 0 <= args.replicates <= MAX_REPLICATES:
        raise InputError(f"--replicates must be in [0, {MAX_REPLICATES:g}], got {args.replicates}")
    from fastrisk.simulate.options import Execution, Sampling  # imported when the command runs

    result = topics(collections, measure=args.measure, test=args.test, significance=args.significance,
                    delta=delta[0], power=args.power, tails=args.tails, trisk_alpha=_trisk_alpha(args),
                    min_diff=args.min_diff, min_topics=args.min_topics, max_topics=args.max_topics,
                    sampling=Sampling(trials=args.trials, replicates=args.replicates, rng=args.seed),
                    execution=Execution(executor=executor, progress=not args.quiet, cache=args.cache,
                                        ties_seed=args.ties_seed))
    print(result.summary(), file=sys.stderr)
    write_table(result.to_arrow(), args.format, args.out)  # first: a failure below keeps the curve
    if args.plot:
        result.plot(args.plot)
    return 0


def _local_workers(scheduler) -> int | None:
    """N of ``--scheduler local:N`` (the cores the estimate divides by), else None."""
    head, _, n = (scheduler or "").partition(":")
    return int(n) if head == "local" and n.isdigit() and int(n) > 0 else None


def _grid(args, collections, executor) -> int:
    from fastrisk.simulate.grid import PAPER_TESTS, run_grid  # loaded when the command runs: keeps --help fast

    if not args.tables:
        raise InputError("simulate grid needs --tables DIR (where the tables and the long table go)")
    studies = [s.strip() for s in args.studies.split(",") if s.strip()]
    measures = [m.strip() for m in args.measures.split(",") if m.strip()] if args.measures else None
    if collections is not None and args.measure:
        measures = [args.measure]
    if args.paper_tests and args.tests:
        raise InputError("give --paper-tests or --tests, not both (--paper-tests is --tests "
                         f"{','.join(PAPER_TESTS)})")
    sampling, selection, execution = _options(args, paper=args.paper_size, executor=executor)
    if args.paper_tests:
        selection = replace(selection, tests=PAPER_TESTS)
    run_grid(studies, args.tables, measures=measures, collections=collections,
             topics=_ints(args.topic_sizes, "topic-sizes"), delta=_floats(args.delta or STUDY_DELTAS, "delta"),
             plot=args.plot, plot_format=args.plot_format, paper_size=args.paper_size,
             workers=args.processes or _local_workers(args.scheduler), sampling=sampling, selection=selection,
             execution=execution)
    return 0


#: What each action does (the description of ``fastrisk simulate ACTION --help``).
ACTIONS = {
    "type1": "Type I error rates: per trial, two runs of one simulated system (H0 true), the battery at every "
             "level.",
    "power": "Power: per trial, a baseline and an experimental run whose means differ by --delta (H1 true), "
             "the share of trials in which each test rejects.",
    "type3": "Type III error rates: the share of H1 trials in which a test rejects in the wrong direction.",
    "fit": "Fit and cache the models of collections (margins and copulas): the bundled ones of --measure, or "
           "the collections given (bundled names or score-matrix files), or by default every bundled collection "
           "of all five measures.",
    "grid": "The paper's whole grid (--studies x --measures x --topic-sizes): one CSV per cell under --tables "
            "and the long tables.",
    "topics": "Topic-set-size planning: the smallest number of topics at which --test reaches --power against "
              "an effect --delta at --significance, simulated on the collections' fitted models; only the planned "
              "test's trials are simulated (a risk test's on pairs calibrated to its own null), every size on the "
              "same trials with nested topic sets. Search: sizes guessed from the normal approximation of power "
              "(growing by at most a doubling) until the target is reached, then regula falsi between the last "
              "size below and the first above: the answer of doubling and bisection with fewer sizes simulated.",
    "pair": "Your own comparison: for one pair of runs of a score matrix (MATRIX --baseline B --system E), each "
            "risk inference's type I rate at --topics under two nulls of URisk_--alpha = 0 (the pair's topics as "
            "the population, e shifted; the two runs' own fitted margins and copula, e calibrated), its power at "
            "URisk = --delta, the topics it needs for --power (the smallest size of --topic-grid from which power "
            "stays above it: power is not assumed to grow with topics) and a one-line verdict. Works with two runs.",
    "calibrated": "A model-calibrated TRisk for one pair of runs of a score matrix (MATRIX --baseline B --system E): "
                  "TRisk over its topics, its p-values (two-sided and both one-sided) from --replicates samples of "
                  "the pair's own fitted simIReff margins and copula with e calibrated to URisk_--alpha = 0 (a "
                  "parametric bootstrap test), and Student's p-value beside them. Works with two runs.",
}
#: The actions each option applies to; an option not listed applies to every action.
_ONLY = {
    "--topics": _STUDIES, "--trials": _STUDIES + ("grid", "topics"),
    "--replicates": _STUDIES + ("grid", "topics"), "--delta": ("power", "type3", "grid", "topics"),
    "--trisk-alpha": _STUDIES + ("grid", "topics"), "--min-diff": _STUDIES + ("grid", "topics"),
    "--seed": _STUDIES + ("grid", "topics"), "--refit": ("fit",),
    "--tables": _STUDIES + ("grid",), "--plot": _STUDIES + ("grid", "topics"),
    "--checkpoint": _STUDIES, "--resume": _STUDIES + ("grid",),
    "--studies": ("grid",), "--plot-format": ("grid",), "--measures": ("grid",), "--topic-sizes": ("grid",),
    "--paper-size": ("grid",), "--shared-resamples": _STUDIES + ("grid",), "--tests": _STUDIES + ("grid",),
    "--paper-tests": ("grid",), "--no-risk-nulls": _STUDIES + ("grid", "fit"),
    "--measure": _STUDIES + ("fit", "grid", "topics"), "--collections": _STUDIES + ("fit", "grid", "topics"),
    "--test": ("topics",), "--significance": _STUDIES + ("topics",), "--power": ("topics",),
    "--tails": _STUDIES + ("topics",),
    "--min-topics": ("topics",), "--max-topics": ("topics",),
    "--format": _STUDIES + ("fit", "topics"), "--out": _STUDIES + ("fit", "topics"),
    "--header": _STUDIES + ("fit", "topics"), "--precision": _STUDIES + ("fit", "topics"),
    "--baseline": ("pair",), "--system": ("pair",), "--inferences": ("pair",), "--topic-grid": ("pair",),
    "--nulls": ("pair",), "--resampling-trials": ("pair",), "--alpha": ("pair", "calibrated"),
}
for _opt in ("--topics", "--trials", "--replicates", "--delta", "--seed", "--significance", "--power", "--tails",
             "--measure", "--format", "--out", "--header", "--precision"):
    _ONLY[_opt] = (*_ONLY[_opt], "pair")
_ONLY["--topics"] = (*_STUDIES, "pair")
for _opt in ("--baseline", "--system", "--replicates", "--seed", "--measure", "--format", "--out", "--header",
             "--precision"):
    _ONLY[_opt] = (*_ONLY[_opt], "calibrated")
for _opt in ("--cache", "--processes", "--scheduler"):
    _ONLY.setdefault(_opt, tuple(a for a in ACTIONS if a not in ("pair", "calibrated")))
#: Options' help where an action's differs from the studies' (the action's own text only).
_ACTION_HELP = {
    "fit": {"--measure": "fit the bundled collections of this measure: AP, nDCG@20, ERR@20, P@10 or RR (also ap, "
                         "ndcg20, err20, p10, rr), default every collection of all five measures; with matrix "
                         "files that do not name theirs, their measure (any measure on [0, 1])"},
    "topics": {
        "--measure": "the bundled collections of AP, nDCG@20, ERR@20, P@10 or RR (default AP), or the measure of "
                     "matrix files that do not name theirs (any measure on [0, 1])",
        "--trials": "simulated pairs per size searched (default 10000; Monte-Carlo SE <= 0.5 / sqrt(trials))",
        "--replicates": "resamples per trial of a resampling test (default 1000 if --test needs them, else 0)",
        "--delta": "the effect size planned for (one; default 0.05; a risk test at A > 0: URisk_A = delta)",
        "--test": "the test planned for, any of the battery: " + ", ".join(
            f"{b.name}@A" if b.family else b.name for b in _bt.BATTERY.values()) + " (A among --trisk-alpha; "
            "default t)",
        "--significance": "the significance level planned for (default 0.05)",
        "--tails": "two-sided (default, as Sakai's topic set size design) or one-tailed (H1: e > b)",
        "--trisk-alpha": "the risk alphas a --test trisk@A or bootstrap_risk@A may name (default 1,5)",
        "--seed": "study seed, common to every size (default: fresh entropy)",
        "--plot": "draw power against topics with its 95 %% Wilson band (SVG/PNG/PDF)",
        "--quiet": "no progress on stderr (by default the fit and each size simulated, with its power)",
    },
    "pair": {
        "--topics": "your number of topics n (default 50): the type I and power columns",
        "--trials": "trials per cell of the analytic inferences (default 10000)",
        "--replicates": "orderings of exact and resamples of bootstrap-t-symmetric (default 100 and 399); "
                        "bootstrap-t-double: R first-level resamples (default 99), each resampled R times",
        "--delta": "effect sizes URisk_alpha = delta of power and topics (default 0.01,0.02,0.05)",
        "--significance": "significance level (default 0.05)",
        "--power": "the power the topic search looks for (default 0.8)",
        "--tails": "two-sided (default) or one-tailed (H1: e better than b)",
        "--measure": "the measure of the matrix when its file does not name it (the copula null's margins)",
        "--seed": "study seed (default: fresh entropy, recorded in the table's metadata)",
        "--quiet": "no progress on stderr (by default the fit, the calibration and a bar of the trials)",
    },
    "calibrated": {
        "--alpha": "the risk alpha of URisk_alpha (default 5), or smooth (the smooth value function, E[s(d)] = 0)",
        "--replicates": "samples of the calibrated model (default 1999)",
        "--measure": "the measure of the matrix when its file does not name it (the fitted margins' family)",
        "--seed": "seed of the samples (default: fresh entropy, printed on stderr and recorded in the table's "
                  "metadata)",
        "--quiet": "no progress on stderr (by default a line per stage: fit and calibrate, simulate)",
    },
}


def _battery_names() -> str:
    """The battery's tests for a help text (the registry's; a family as ``name@A``)."""
    return ", ".join(f"{b.name}@A" if b.family else b.name for b in _bt.BATTERY.values())


class _ActionHelp(argparse.Action):
    """``-h``: after an action (``simulate fit --help``) only that action's options, with its
    own defaults; before one, every option."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        study = getattr(namespace, "study", None)
        if study in ACTIONS:
            parser.prog = f"{parser.prog} {study}"
            parser.description = ACTIONS[study]
            for action in parser._actions:
                name = action.option_strings[-1] if action.option_strings else None
                if name in _ONLY and study not in _ONLY[name]:
                    action.help = argparse.SUPPRESS
                elif name in _ACTION_HELP.get(study, {}):
                    action.help = _ACTION_HELP[study][name]
                elif action.dest == "study":
                    action.help = argparse.SUPPRESS
        parser.print_help()
        parser.exit()


def register(sub) -> None:
    p = sub.add_parser("simulate", add_help=False,
                       help="type I / power / type III error rates of paired tests on simulated collections "
                            "(Urbano, Lima & Hanjalic 2019); topic-set-size planning",
                       description="Error-rate study with the protocol of Urbano, Lima & Hanjalic (SIGIR 2019): "
                                   "per trial, a collection, two of its runs and n topics simulated from "
                                   "their fitted margins and copula; the battery (t, Wilcoxon, sign, bootstrap, "
                                   "permutation, TRisk, ZRisk, GeoRisk; TRisk, TRisk with the smooth value function and the "
                                   "bootstrap test of URisk each on pairs calibrated to its own null, every rate "
                                   "naming its hypothesis) at every level. 'fit' builds the fitted "
                                   "models (cached); 'grid' runs the paper's grid and writes its tables; 'topics' "
                                   "finds the smallest number of topics whose simulated power reaches --power. "
                                   "Collections: the bundled ones or your own score matrices, any measure on [0, 1].")
    p.add_argument("-h", "--help", action=_ActionHelp, help="show this help (after an action: that action's)")
    p.add_argument("study", choices=tuple(ACTIONS), help="; ".join(f"{k}: {v.split(':')[0].split('.')[0]}"
                                                               for k, v in ACTIONS.items()))
    p.add_argument("collection", nargs="*",
                   help="collections: bundled matrices (e.g. web2012_err20) or score-matrix files (e.g. written "
                        "by fastrisk evaluate --matrix-out); default: the study's four of --measure")
    p.add_argument("--measure", default=None,
                   help="the study's AP, nDCG@20, ERR@20, P@10 or RR (default AP; fit: every measure), or the "
                        "measure of matrix files that do not name theirs (any measure on [0, 1], e.g. nDCG@10, "
                        "P@5, RR@10)")
    p.add_argument("--collections", help="comma-separated collections (as the positional ones)")
    p.add_argument("--topics", type=int, default=50, help="topics per simulated collection (default 50)")
    p.add_argument("--trials", type=int, default=None,
                   help="simulated pairs (default 10000; grid: per type I cell and per power/type III effect size)")
    p.add_argument("--replicates", type=int, default=None,
                   help="bootstrap / permutation resamples per trial (default 1000, at most 1e9; 0 skips them; "
                        "topics: 1000 if --test needs them, else 0)")
    p.add_argument("--delta", default=None,
                   help="effect sizes for power / type3 (default the study's 0.01..0.1); topics: one (default 0.05)")
    p.add_argument("--test", default=None,
                   help=f"topics: the test planned for ({_battery_names()}; default t)")
    p.add_argument("--significance", type=float, default=None,
                   help="significance level (default 0.05): topics: the level planned for; type1, power, type3: "
                        "the level of the one-line-per-test verdict printed after the table (the table holds "
                        "every level)")
    p.add_argument("--alpha", type=_alpha_option, default=None,
                   help="pair, calibrated: the risk alpha of URisk_alpha (default 5; calibrated: or smooth); "
                        "elsewhere the deprecated spelling of --significance")
    p.add_argument("--baseline", metavar="B", help="pair, calibrated: the baseline run b, by name")
    p.add_argument("--system", metavar="E", help="pair, calibrated: the experimental run e, by name")
    p.add_argument("--inferences", metavar="NAMES",
                   help="pair: risk inferences, comma-separated (default all of fastrisk.INFERENCES but "
                        "bootstrap-t-double, minutes a cell: name it to run it)")
    p.add_argument("--nulls", metavar="NAMES", help="pair: empirical,copula (default both)")
    p.add_argument("--topic-grid", metavar="SIZES",
                   help="pair: numbers of topics of the topic search (default 10,15,20,25,30,40,50,60,80,100,125,150,"
                        "200; --topics is added)")
    p.add_argument("--resampling-trials", type=int, default=2000, metavar="N",
                   help="pair: trials per cell of the resampling inferences, exact, bootstrap-t-symmetric and "
                        "bootstrap-t-double (default 2000)")
    p.add_argument("--power", type=float, default=0.8, help="topics: target power (default 0.8)")
    p.add_argument("--tails", default="two-sided", choices=("two-sided", "one-tailed"),
                   help="two-sided (default; topics: as Sakai's topic set size design) or one-tailed (e > b): "
                        "topics: the test planned; type1, power, type3: the verdict's tails")
    p.add_argument("--min-topics", type=int, default=2, help="topics: smallest size searched (default 2)")
    p.add_argument("--max-topics", type=int, default=1000, help="topics: largest size searched (default 1000)")
    p.add_argument("--trisk-alpha", default=None,
                   help="the risk tests' own alphas: TRisk and the bootstrap test of URisk at each (default 1,5)")
    p.add_argument("--no-risk-nulls", action="store_true",
                   help="leave out the risk tests scored under their own null (TRisk and bootstrap URisk at "
                        "alpha > 0, smooth TRisk): no calibration of their pairs")
    p.add_argument("--min-diff", type=float, default=0.01, help="sign test: |d| <= this is a tie (default 0.01)")
    p.add_argument("--seed", type=int, default=None,
                   help="study seed (default: fresh entropy); grid derives each cell's seed from it and prints "
                        "it, so the same --seed gives a grid cell and type1 different numbers")
    p.add_argument("--cache", help="directory of the fitted models (default $FASTRISK_CACHE/simulate)")
    p.add_argument("--refit", action="store_true", help="fit: ignore the cache and fit again")
    p.add_argument("--ties-seed", type=int, default=0, metavar="N",
                   help="which draw of the copulas' random tie-breaking (pobs) the fits use (default 0)")
    p.add_argument("--tables", dest="tables", metavar="DIR",
                   help="also write the study's tables (one CSV per cell, the paper's layout) under DIR")
    p.add_argument("--plot", metavar="FILE", help="draw the curves (SVG/PNG/PDF; grid: a directory; topics: power "
                                                  "against topics with its Monte-Carlo band)")
    p.add_argument("--plot-format", choices=("svg", "png", "pdf"), default="svg",
                   help="grid: the figures' format in the --plot directory (default svg)")
    p.add_argument("--checkpoint", metavar="FILE.parquet", help="checkpoint the sweep there (resumable)")
    p.add_argument("--resume", action="store_true", help="resume from --checkpoint (grid: from its directory)")
    p.add_argument("--studies", default="type1", help="grid: type1,power,type3 (power and type3 share runs)")
    p.add_argument("--measures", help="grid: measures (default all five)")
    p.add_argument("--topic-sizes", default="25,50,100", help="grid: topic-set sizes (default 25,50,100)")
    p.add_argument("--paper-size", action="store_true",
                   help="grid: the paper's size, 1,667,000 type I trials a cell, 167,000 a cell and effect size for "
                        "power/type III, 10^6 replicates (--trials/--replicates still override)")
    p.add_argument("--tests", metavar="NAMES",
                   help="type1, power, type3, grid: only these tests of the battery, comma-separated (e.g. "
                        "t,wilcoxon,bootstrap or t,trisk@5; default all): the others are not resampled, the "
                        "study's own pairs are simulated only for one of their tests and a risk null's pairs (and "
                        "its calibration) only for one of its")
    p.add_argument("--paper-tests", action="store_true",
                   help=f"grid: the paper's own battery, --tests {','.join(_bt.paper_tests())} (no ZRisk/"
                        "GeoRisk flips, no risk nulls)")
    p.add_argument("--shared-resamples", nargs="?", type=int, const=True, default=None, metavar="TRIALS",
                   help="common random numbers: each block of 1000 (or TRIALS) trials of a collection shares its "
                        "bootstrap resamples and sign flips (rates unbiased, between-job standard errors; "
                        "--trials a job must be a multiple)")
    p.add_argument("--processes", type=int, metavar="N", help="run the jobs in N worker processes")
    p.add_argument("--scheduler", metavar="ADDR", help="Dask scheduler (tcp://HOST:PORT, or local:N)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress on stderr (by default each stage, fit, calibrate, simulate, is named with its "
                        "counts, and the simulation shows trials done and an ETA: a bar on a terminal, a line "
                        "every 10 s otherwise)")
    add_format_options(p)
    p.set_defaults(func=_cmd_simulate)
