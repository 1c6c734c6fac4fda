"""``fastrisk ltr TRAIN TEST``: the risk-sensitive learning-to-rank experiment (Table 3 of
Dinçer, Macdonald & Ounis, SIGIR 2014) with LightGBM."""

from __future__ import annotations

import sys
import warnings

from fastrisk.cli._args import parse_floats, parse_names
from fastrisk.cli._output import add_format_options, write_table
from fastrisk.errors import InputError
from fastrisk.ltr import lightgbm_example, ltr_experiment, read_letor
from fastrisk.ltr.letor import MAX_FEATURES

COLUMNS = ["model", "kind", "alpha", "ndcg1", "ndcg10", "risk_reward", "loss_win", "big_losses", "wins", "losses"]


def _cmd_ltr(args) -> None:
    if args.example:
        train, test = lightgbm_example()
    else:
        if args.train is None or args.test is None:
            raise InputError("give TRAIN and TEST (LETOR files) or --example")
        train = read_letor(args.train, query=args.train_query, max_features=args.max_features)
        test = read_letor(args.test, query=args.test_query, max_features=args.max_features)
        width = max(train.n_features, test.n_features)  # the largest feature id either file uses
        if test.n_features > train.n_features:
            warnings.warn(f"{args.test} uses feature ids up to {test.n_features}, beyond the {train.n_features} "
                          f"of {args.train}: those features were 0 in every training document, so the models "
                          "ignore them", stacklevel=2)
        if train.n_features < width:
            train = read_letor(args.train, query=args.train_query, n_features=width)
        if test.n_features < width:
            test = read_letor(args.test, query=args.test_query, n_features=width)
    result = ltr_experiment(train, test, baseline_feature=args.baseline_feature,
                            alpha=parse_floats(args.alpha, "--alpha"), kinds=parse_names(args.kinds),
                            rounds=args.rounds, rng=args.seed, threads=args.threads,
                            params={"learning_rate": args.learning_rate, "num_leaves": args.num_leaves})
    print(f"# baseline: {result.baseline}; {result.n_train_queries} training and {result.n_test_queries} test "
          f"queries; {result.rounds} rounds; seed {args.seed}", file=sys.stderr)
    write_table(result.to_arrow().select(COLUMNS), args.format, args.out)
    if args.figure:
        result.plot(args.figure)


def register(sub) -> None:
    p = sub.add_parser("ltr", help="risk-sensitive LambdaMART (URisk, SARO, FARO) with LightGBM",
                       description="Train LambdaRank and one risk-sensitive LambdaMART model per (kind, alpha) "
                                   "on TRAIN against a baseline feature and report, on TEST, NDCG@1, NDCG@10, "
                                   "risk/reward, loss/win and queries with a loss > 20%% (needs "
                                   "pip install 'fastrisk[ltr]').")
    p.add_argument("train", nargs="?", metavar="TRAIN", help="training data, svmlight/LETOR with qid: or a "
                                                             "TRAIN.query group file")
    p.add_argument("test", nargs="?", metavar="TEST", help="test data, same format")
    p.add_argument("--example", action="store_true", help="use the bundled LightGBM lambdarank example data")
    p.add_argument("--max-features", type=int, default=MAX_FEATURES, metavar="N",
                   help=f"largest LETOR feature id accepted (default {MAX_FEATURES:,}; features are stored densely)")
    p.add_argument("--train-query", metavar="FILE", help="LightGBM group file of TRAIN")
    p.add_argument("--test-query", metavar="FILE", help="LightGBM group file of TEST")
    p.add_argument("--baseline-feature", type=int, metavar="F",
                   help="LETOR feature id (1-based) ranking the baseline, e.g. BM25 (default: the feature "
                        "with the best training nDCG@10)")
    p.add_argument("--alpha", default="1,5,10,20", help="risk weights, comma-separated (default 1,5,10,20)")
    p.add_argument("--kinds", default="urisk,saro,faro", help="objectives (default urisk,saro,faro)")
    p.add_argument("--rounds", type=int, default=100, help="boosting rounds (default 100)")
    p.add_argument("--learning-rate", type=float, default=0.05, help="LightGBM learning rate (default 0.05)")
    p.add_argument("--num-leaves", type=int, default=31, help="LightGBM leaves per tree (default 31)")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--threads", type=int, help="threads of LightGBM and of the gradient kernel (default: LightGBM 1)")
    p.add_argument("--figure", metavar="PATH", help="write the NDCG@10 / losses>20%% vs alpha figure to PATH")
    add_format_options(p)
    p.set_defaults(func=_cmd_ltr)
