"""The risk-sensitive learning-to-rank experiment of Dinçer, Macdonald & Ounis (SIGIR 2014), Table 3.

One LambdaMART model (LightGBM) per (kind, α) — plain LambdaRank, URisk (Wang, Bennett &
Collins-Thompson, SIGIR 2012), SARO and FARO — trained on ``train`` against a baseline
ranking by one feature (the paper's BM25), and evaluated on ``test``: mean nDCG@1 and
nDCG@10, and against the baseline at nDCG@10 the risk/reward ratio, the loss/win ratio and
the number of queries with a relative loss above 20 % (`fastrisk.ltr.robustness`).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np

from fastrisk._runtime.aliases import AlphaLike, SeedLike
from fastrisk._runtime.atomic import save_figure
from fastrisk._runtime.extras import require
from fastrisk._runtime.rng import resolve_seed
from fastrisk._runtime.style import FONT_SIZE, LINESTYLES, MARKERS, OKABE_ITO, SMALL_FONT_SIZE, WIDE_FIGSIZE
from fastrisk._runtime.validation import positive_int
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.data.results import Result, array, param
from fastrisk.errors import InputError
from fastrisk.ltr.evaluation import (
    _check_data,
    _check_feature,
    baseline_scores,
    best_feature,
    ranking_matrix,
    robustness,
)
from fastrisk.ltr.objective import objective

#: LightGBM parameters of the experiment (LightGBM's defaults but a smaller learning rate;
#: one thread and ``deterministic`` so that the same seed gives the same models).
DEFAULT_PARAMS = {"learning_rate": 0.05, "num_leaves": 31, "min_data_in_leaf": 20, "deterministic": True,
                  "force_row_wise": True, "num_threads": 1, "verbose": -1}
RISK_KINDS = ("urisk", "saro", "faro")


@dataclass(frozen=True, repr=False)
class LTRExperiment(Result):
    """Table 3 rows: one per model (``baseline``, ``lambdarank``, then every (kind, α > 0)).

    Arrays over models: ``ndcg1``, ``ndcg10`` (test means), and against the baseline at
    nDCG@10: ``risk_reward``, ``loss_win``, ``big_losses`` (relative loss > 20 %),
    ``wins``, ``losses`` (NaN / 0 for the baseline row). ``matrix`` and ``matrix_at_1`` are
    the per-query test nDCG@10 and nDCG@1 of every model (a ScoreMatrix: apply any fastrisk
    risk measure or test to them, with ``baseline`` as the baseline system).
    """

    _coords = {"model": {"model": "models", "kind": "kinds", "alpha": "alphas"}}
    _constants = ("baseline",)
    models: tuple = param(doc="Name of each model (``baseline``, ``lambdarank``, then every risk-sensitive kind and "
                              "alpha).")
    kinds: tuple = param(doc="Objective of each model.")
    alphas: np.ndarray = param(doc="Risk aversion alpha of each model (0 for the baseline and LambdaRank).")
    baseline: str
    baseline_feature: int = param(doc="Index of the feature that ranks the baseline.")
    rounds: int = param(doc="Boosting rounds.")
    seed: int
    n_train_queries: int = param(doc="Number of training queries.")
    n_test_queries: int = param(doc="Number of test queries.")
    ndcg1: np.ndarray = array("model", doc="Mean test nDCG@1.")
    ndcg10: np.ndarray = array("model", doc="Mean test nDCG@10.")
    risk_reward: np.ndarray = array("model", doc="FRisk / FReward against the baseline at nDCG@10 (NaN for the baseline"
                                                 " row).")
    loss_win: np.ndarray = array("model", doc="Losses / wins against the baseline at nDCG@10.")
    big_losses: np.ndarray = array("model", doc="Test queries with a relative nDCG@10 loss above 20 %.")
    wins: np.ndarray = array("model", doc="Test queries better than the baseline at nDCG@10.")
    losses: np.ndarray = array("model", doc="Test queries worse than the baseline at nDCG@10.")
    matrix: ScoreMatrix | None = field(default=None, compare=False,
                                       metadata={"doc": "Per-query test nDCG@10 of every model (a `ScoreMatrix`)."})
    matrix_at_1: ScoreMatrix | None = field(default=None, compare=False,
                                            metadata={"doc": "Per-query test nDCG@1 of every model (a `ScoreMatrix`)."})

    def row(self, model: str) -> dict:
        """Every figure of one model."""
        i = self.models.index(model)
        return {name: getattr(self, name)[i] for name in
                ("ndcg1", "ndcg10", "risk_reward", "loss_win", "big_losses", "wins", "losses")}

    def plot(self, path=None):
        """Mean nDCG@10 and losses > 20 % against α for every kind (LambdaRank and the baseline as
        lines); saved to ``path`` if given. Returns the matplotlib Figure."""
        Figure = require("matplotlib.figure", what="the figure").Figure

        fig = Figure(figsize=WIDE_FIGSIZE, layout="constrained")
        axes = fig.subplots(1, 2)
        kinds = [k for k in RISK_KINDS if k in self.kinds]
        lam = self.models.index("lambdarank")
        base = self.models.index(self.baseline)
        for ax, name, label in ((axes[0], "ndcg10", "mean nDCG@10 (test)"),
                                (axes[1], "big_losses", "queries with a loss > 20 %")):
            values = getattr(self, name)
            for j, kind in enumerate(kinds):
                rows = [i for i, k in enumerate(self.kinds) if k == kind]
                ax.plot([0.0] + [self.alphas[i] for i in rows], [values[lam]] + [values[i] for i in rows],
                        color=OKABE_ITO[j], marker=MARKERS[j], linestyle=LINESTYLES[j % len(LINESTYLES)],
                        label=kind.upper() if kind != "urisk" else "URisk")
            ax.axhline(values[lam], color="#7F7F7F", linestyle=":", linewidth=1, label="LambdaRank")
            if name == "ndcg10":
                ax.axhline(values[base], color="#000000", linestyle="--", linewidth=1,
                           label=f"baseline (feature {self.baseline_feature})")
            ax.set_xlabel("α", fontsize=FONT_SIZE)
            ax.set_ylabel(label, fontsize=FONT_SIZE)
            ax.tick_params(labelsize=SMALL_FONT_SIZE)
        axes[0].legend(fontsize=SMALL_FONT_SIZE - 1, frameon=False)
        if path is not None:
            save_figure(fig, path)
        return fig


def _floats(values, name: str) -> tuple[float, ...]:
    if isinstance(values, numbers.Real):
        values = [values]
    try:
        out = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise InputError(f"`{name}` must be numbers, got {values!r}") from None
    if not out or any(not np.isfinite(v) or v < 0 for v in out):
        raise InputError(f"`{name}` must be one or more numbers >= 0, got {values!r}")
    return out


def _experiment_iv(train, test, baseline_feature, alpha, kinds, rounds, params, threads):
    train, test = _check_data(train), _check_data(test)
    if train.n_features != test.n_features:
        raise InputError(f"train and test must have the same features ({train.n_features} vs {test.n_features})")
    if baseline_feature is not None:
        _check_feature(train, baseline_feature)
    alphas = _floats(alpha, "alpha")
    if isinstance(kinds, str):
        kinds = [kinds]
    kinds = tuple(kinds)
    bad = [k for k in kinds if k not in RISK_KINDS]
    if bad or not kinds:
        raise InputError(f"`kinds` must be one or more of {', '.join(RISK_KINDS)}, got {list(kinds)!r}")
    positive_int(rounds, "rounds")
    if params is not None and not isinstance(params, dict):
        raise InputError("`params` must be a dict of LightGBM parameters")
    if params and "objective" in params:
        raise InputError("`params` must not set 'objective': the experiment chooses it")
    if threads is not None:
        positive_int(threads, "threads")
    return train, test, alphas, kinds, int(rounds)


def ltr_experiment(train, test, *, baseline_feature: int | None = None, alpha: AlphaLike = (1, 5, 10, 20),
                   kinds=RISK_KINDS, rounds: int = 100, params: dict | None = None, measure: str = "nDCG@10",
                   rng: SeedLike = 1, threads: int | None = None) -> LTRExperiment:
    """Train LambdaRank and every risk-sensitive (kind, α) model and compare them on ``test``.

    Parameters
    ----------
    train, test : LetorData
        Training and test queries.
    baseline_feature : int, optional
        LETOR feature id (1-based) of the baseline ranking (the paper's BM25); default: the
        feature with the best training nDCG@10 (`fastrisk.ltr.best_feature`).
    alpha : AlphaLike
        Risk weights; α = 0 is LambdaRank for every kind (trained once, the ``lambdarank`` row).
    kinds : sequence of {"urisk", "saro", "faro"}
        The risk-sensitive objectives.
    rounds : int
        Boosting rounds.
    params : dict, optional
        LightGBM parameters (over `DEFAULT_PARAMS`).
    measure : str
        The measure of the risk-sensitive objectives (default nDCG@10).
    rng : SeedLike
        Seed of LightGBM's randomness (``seed``), recorded in the result.
    threads : int, optional
        Threads of LightGBM (``num_threads``, default 1) and of the gradient kernel.

    Returns
    -------
    LTRExperiment
        nDCG@1, nDCG@10 and robustness (wins, losses, URisk against the baseline) per model.
    """
    lgb = require("lightgbm", what="the experiment")
    train, test, alphas, kinds, rounds = _experiment_iv(train, test, baseline_feature, alpha, kinds, rounds, params,
                                                           threads)
    rseed = resolve_seed(rng)
    seed = rseed.kernel
    if baseline_feature is None:
        baseline_feature = best_feature(train)
    base_train = baseline_scores(train, baseline_feature)
    lgb_params = {**DEFAULT_PARAMS, **(params or {}), "seed": seed % (2**31 - 1)}
    if threads is not None:
        lgb_params["num_threads"] = threads

    def fit(obj):
        data = lgb.Dataset(train.features, train.labels, group=train.group, free_raw_data=True)
        return lgb.train({**lgb_params, "objective": obj}, data, num_boost_round=rounds).predict(test.features)

    base_name = f"baseline(feature {baseline_feature})"
    predictions = {base_name: baseline_scores(test, baseline_feature),
                   "lambdarank": fit(objective("lambdarank", measure=measure, threads=threads))}
    model_kinds, model_alphas = ["baseline", "lambdarank"], [0.0, 0.0]
    for kind in kinds:
        for a in alphas:
            if a == 0:
                continue
            predictions[f"{kind}(alpha={a:g})"] = fit(objective(kind, alpha=a, baseline=base_train, measure=measure,
                                                                         threads=threads))
            model_kinds.append(kind)
            model_alphas.append(a)
    m10 = ranking_matrix(test, predictions, measure="nDCG@10")
    m1 = ranking_matrix(test, predictions, measure="nDCG@1")
    rob = robustness(m10, base_name, systems=list(predictions)[1:])

    def with_base(values, fill):
        return np.concatenate([[fill], np.asarray(values, dtype=float)])

    return LTRExperiment(
        models=tuple(predictions), kinds=tuple(model_kinds), alphas=np.asarray(model_alphas), baseline=base_name,
        baseline_feature=int(baseline_feature), rounds=rounds, seed=rseed.recorded, n_train_queries=train.n_queries,
        n_test_queries=test.n_queries, ndcg1=m1.values.mean(1), ndcg10=m10.values.mean(1),
        risk_reward=with_base(rob.risk_reward, np.nan), loss_win=with_base(rob.loss_win, np.nan),
        big_losses=with_base(rob.big_losses, 0).astype(np.int64), wins=with_base(rob.wins, 0).astype(np.int64),
        losses=with_base(rob.losses, 0).astype(np.int64),
        matrix=m10, matrix_at_1=m1,
    )
