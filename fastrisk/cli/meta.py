"""``fastrisk meta``: meta-evaluation -- discriminative power, swap rates, effect sizes, topic set size.

``fastrisk meta power FILE``: Sakai's discriminative power of one or more statistics (one table,
a ``statistic`` column; ``--plot`` draws their ASL curves). ``fastrisk meta swap FILE``: Voorhees
& Buckley's swap rates (``--plot``: swap rate against difference). ``fastrisk meta effect FILE
--baseline NAME``: effect sizes with bootstrap intervals. ``fastrisk meta topics``: Sakai's topic
set size design (no matrix).
"""

from __future__ import annotations

import pyarrow as pa

from fastrisk._runtime.atomic import save_figure
from fastrisk.cli._args import add_matrix_arguments, load_matrix, parse_floats, parse_names
from fastrisk.cli._output import add_format_options, write_table
from fastrisk.errors import InputError


def _power_specs(args):
    """(statistic, alpha) of every requested test: the mean once, each risk statistic at every α."""
    stats = parse_names(args.statistic)
    alphas = parse_floats(args.alpha, "--alpha") if args.alpha else [1.0, 5.0]
    out = []
    for s in stats:
        out += [(s, 0.0)] if s == "mean" else [(s, a) for a in alphas]
    return out


def _cmd_power(args) -> None:
    from fastrisk.inference.metaeval import discriminative_power  # the command's work, kept out of --help

    m = load_matrix(args)
    tables, results = [], {}
    for stat, a in _power_specs(args):
        r = discriminative_power(m, statistic=stat, alpha=a, replicates=args.replicates, level=args.level,
                                 rng=args.seed, threads=args.threads)
        label = stat if stat == "mean" else f"{stat}@{a:g}"
        results[label] = r
        if args.summary:
            tables.append(r.summary())
        else:
            t = r.to_arrow()
            t = t.add_column(0, "alpha", pa.array([a] * t.num_rows))
            tables.append(t.add_column(0, "statistic", pa.array([stat] * t.num_rows)))
    write_table(pa.concat_tables(tables), args.format, args.out)
    if args.plot:
        from fastrisk.viz.metaeval import asl_curves  # matplotlib: only for --plot

        ax = asl_curves(results)
        save_figure(ax.figure, args.plot)


def _cmd_swap(args) -> None:
    from fastrisk.inference.metaeval import swap_rates  # the command's work, kept out of --help

    m = load_matrix(args)
    sizes = [int(v) for v in parse_floats(args.sizes, "--sizes")] if args.sizes else None
    bins = parse_floats(args.bins, "--bins") if args.bins else None
    r = swap_rates(m, statistic=args.statistic, alpha=args.alpha, sizes=sizes, trials=args.trials, bins=bins,
                   relative=args.relative, rng=args.seed, threads=args.threads)
    write_table(r.to_arrow(), args.format, args.out)
    if args.plot:
        from fastrisk.viz.metaeval import swap_rate_curves  # matplotlib: only for --plot

        save_figure(swap_rate_curves(r).figure, args.plot)


def _cmd_effect(args) -> None:
    from fastrisk.inference.metaeval import effect_size  # the command's work, kept out of --help

    m = load_matrix(args)
    name = args.baseline
    if name not in m.systems:
        low = [s for s in m.systems if s.lower() == name.lower()]
        if len(low) != 1:
            raise InputError(f"--baseline {name!r} is not a system of the matrix")
        name = low[0]
    r = effect_size(m, name, ci=args.ci, replicates=args.replicates, rng=args.seed)
    write_table(r.to_arrow(), args.format, args.out)


def _cmd_topics(args) -> None:
    from fastrisk.inference.metaeval import topic_set_size  # the command's work, kept out of --help

    r = topic_set_size(method=args.method, alpha=args.alpha_level, beta=args.beta,
                       min_difference=args.min_difference, variance=args.variance, systems=args.systems)
    write_table(pa.table({k: [v] for k, v in r.parameters().items()}), args.format, args.out)


def register(sub) -> None:
    p = sub.add_parser("meta", help="meta-evaluation: discriminative power, swap rates, effect sizes, topic set size",
                       description="Meta-evaluation of measures and risk statistics: Sakai's discriminative power "
                                   "(SIGIR 2006), Voorhees & Buckley's swap rates (SIGIR 2002), effect sizes with "
                                   "bootstrap intervals, and Sakai's topic set size design (IRJ 2016).")
    msub = p.add_subparsers(dest="meta_command", metavar="{power,swap,effect,topics}", required=True)

    q = msub.add_parser("power", help="discriminative power: Sakai's paired bootstrap test of every pair",
                        description="The ASL of every pair of systems (Sakai's paired studentized bootstrap), the "
                                    "share of pairs with ASL < --level and the estimated difference required, for "
                                    "each --statistic (risk statistics at every --alpha).")
    add_matrix_arguments(q)
    q.add_argument("--statistic", default="mean",
                   help="comma-separated: mean, urisk, trisk, zrisk, georisk (default: mean)")
    q.add_argument("--alpha", help="risk aversion of the risk statistics, comma-separated (default: 1,5)")
    q.add_argument("--replicates", type=int, default=1000, help="bootstrap resamples B (default 1000)")
    q.add_argument("--level", type=float, default=0.05, help="significance level (default 0.05)")
    q.add_argument("--seed", type=int, help="random seed (default: fresh entropy, recorded in the output)")
    q.add_argument("--summary", action="store_true", help="one row per statistic instead of one per pair")
    q.add_argument("--plot", metavar="FILE", help="draw the ASL curves (SVG/PNG/PDF)")
    add_format_options(q)
    q.set_defaults(func=_cmd_power)

    q = msub.add_parser("swap", help="swap rates over disjoint topic halves (Voorhees & Buckley 2002)",
                        description="How often two disjoint topic sets of n topics order a pair of systems "
                                    "differently, by the size of the difference, with the exponential fit of the "
                                    "rate against n.")
    add_matrix_arguments(q)
    q.add_argument("--statistic", default="mean", choices=("mean", "urisk", "trisk", "zrisk", "georisk"),
                   help="what is compared on the two halves (default: mean)")
    q.add_argument("--alpha", type=float, default=0.0, help="risk aversion of a risk statistic (default 0)")
    q.add_argument("--sizes", help="topic-set sizes, comma-separated (default: 5 sizes up to half the topics)")
    q.add_argument("--trials", type=int, default=1000, help="random splits per size (default 1000)")
    q.add_argument("--bins", help="bin lower edges, comma-separated (default: 0, 0.01, ..., 0.2 for the mean)")
    q.add_argument("--relative", action="store_true", help="bin by the relative difference (Sanderson & Zobel)")
    q.add_argument("--seed", type=int, help="random seed")
    q.add_argument("--plot", metavar="FILE", help="draw swap rate against difference (SVG/PNG/PDF)")
    add_format_options(q)
    q.set_defaults(func=_cmd_swap)

    q = msub.add_parser("effect", help="effect sizes against a baseline with bootstrap intervals",
                        description="Sakai's paired effect size mean(d) / sd(d) of every system against "
                                    "--baseline, with its percentile bootstrap interval.")
    add_matrix_arguments(q)
    q.add_argument("--baseline", required=True, metavar="NAME", help="the system every other is compared with")
    q.add_argument("--ci", type=float, default=0.95, help="confidence level (default 0.95)")
    q.add_argument("--replicates", type=int, default=1000, help="bootstrap resamples (default 1000)")
    q.add_argument("--seed", type=int, help="random seed")
    add_format_options(q)
    q.set_defaults(func=_cmd_effect)

    q = msub.add_parser("topics", help="topic set size design in closed form (Sakai 2016)",
                        description="The smallest number of topics for a paired t test, a one-way ANOVA over "
                                    "--systems systems, or a confidence interval of width --min-difference.")
    q.add_argument("--method", choices=("paired_t", "anova", "ci"), default="paired_t", help="the design")
    q.add_argument("--alpha", dest="alpha_level", type=float, default=0.05, help="type I error rate (default 0.05)")
    q.add_argument("--beta", type=float, default=0.20, help="type II error rate (default 0.20)")
    q.add_argument("--min-difference", type=float, required=True, help="minD_t, minD or the CI width")
    q.add_argument("--variance", type=float, required=True, help="variance of the differences (or within systems)")
    q.add_argument("--systems", type=int, default=2, help="systems compared (anova)")
    add_format_options(q)
    q.set_defaults(func=_cmd_topics)
