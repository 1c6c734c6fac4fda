"""fastrisk: compiled, parallel risk-sensitive evaluation of retrieval systems.

>>> import fastrisk
>>> matrix, baseline = fastrisk.data.datasets.trec2012_web()
>>> fastrisk.risk(matrix, baseline, alpha=[0, 1, 5, 10]).to_pandas()  # doctest: +SKIP
"""

import sys as _sys

if _sys.argv and (_sys.argv[0] == "-m" or _sys.argv[0].rsplit("/", 1)[-1] == "fastrisk"):  # the CLI starting
    def _interrupted_while_starting(kind, value, tb, _previous=_sys.excepthook):
        """Ctrl-C during the CLI's imports: its one line and status 130, not a traceback (once
        running, ``fastrisk.cli.main`` handles it)."""
        if issubclass(kind, KeyboardInterrupt):
            import os

            _sys.stderr.write("fastrisk: interrupted\n")
            _sys.stderr.flush()
            os._exit(130)
        _previous(kind, value, tb)

    _sys.excepthook = _interrupted_while_starting

from fastrisk import _moved
from fastrisk._version import __version__ as __version__
from fastrisk.core import batch
from fastrisk.core.baselines import Baseline, resolve_baseline, virtual_baseline
from fastrisk.core.pca import PCAResult, pca
from fastrisk.core.tables import BaselineTable, baseline_table
from fastrisk.core.urisk import (
    AdaptiveRiskResult,
    RiskResult,
    RiskScores,
    TopicRiskResult,
    adaptive_risk,
    risk,
    risk_scores,
    topic_risk,
)
from fastrisk.core.values import ValueFunction, resolve_value
from fastrisk.core.zrisk import ZRiskResult, zrisk
from fastrisk.data import datasets
from fastrisk.data.io import read_matrix, read_table, write_matrix
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.data.runs import Qrels, RunSet, read_qrels, read_runs
from fastrisk.errors import (
    AlphaInvariantWarning,
    InputError,
    ResourceError,
    RunFileWarning,
    TopicMismatchWarning,
    ZeroVarianceWarning,
)
from fastrisk.inference.multiple import TukeyHSDResult, adjust_pvalues, tukey_hsd
from fastrisk.inference.resampling import (
    BootstrapResult,
    ConfidenceInterval,
    JackknifeResult,
    PermutationResult,
    QQData,
    TTestResult,
    bootstrap,
    jackknife,
    permutation_test,
    t_test,
)
from fastrisk.measures.agreement import (
    FriedmanResult,
    KendallTauMatrix,
    KendallTauResult,
    PrefixAgreement,
    RBOMatrix,
    RBOResult,
    format_ranking,
    friedman,
    kendall_tau,
    kendall_tau_matrix,
    parse_ranking,
    prefix_agreement,
    ranking_from_scores,
    rbo,
    rbo_many,
    rbo_matrix,
)
from fastrisk.measures.metrics import Evaluation, Measure, evaluate, parse_measure
from fastrisk.measures.pooling import (
    PoolingExperiment,
    build_pool,
    common_topic_adjustment,
    leave_one_out,
    loo_adjustment,
    pooling_experiment,
    score_against_pool,
)
from fastrisk.sweep import Experiment, Grid, SweepResult, register_kind

_moved.install()

__all__ = [
    "AlphaInvariantWarning",
    "ResourceError",
    "RunFileWarning",
    "TopicMismatchWarning",
    "batch",
    "AdaptiveRiskResult",
    "Baseline",
    "BaselineTable",
    "BootstrapResult",
    "ConfidenceInterval",
    "Evaluation",
    "Experiment",
    "FriedmanResult",
    "Grid",
    "InputError",
    "JackknifeResult",
    "KendallTauMatrix",
    "KendallTauResult",
    "Measure",
    "PCAResult",
    "PermutationResult",
    "PoolingExperiment",
    "PrefixAgreement",
    "QQData",
    "Qrels",
    "RBOMatrix",
    "RBOResult",
    "RiskResult",
    "RiskScores",
    "RunSet",
    "ScoreMatrix",
    "SweepResult",
    "TTestResult",
    "TopicRiskResult",
    "TukeyHSDResult",
    "ValueFunction",
    "ZRiskResult",
    "ZeroVarianceWarning",
    "adaptive_risk",
    "adjust_pvalues",
    "baseline_table",
    "bootstrap",
    "build_pool",
    "common_topic_adjustment",
    "datasets",
    "evaluate",
    "format_ranking",
    "friedman",
    "jackknife",
    "kendall_tau",
    "kendall_tau_matrix",
    "leave_one_out",
    "loo_adjustment",
    "parse_measure",
    "parse_ranking",
    "pca",
    "permutation_test",
    "pooling_experiment",
    "prefix_agreement",
    "ranking_from_scores",
    "rbo",
    "rbo_many",
    "rbo_matrix",
    "read_matrix",
    "read_qrels",
    "read_runs",
    "read_table",
    "register_kind",
    "resolve_baseline",
    "resolve_value",
    "risk",
    "risk_scores",
    "score_against_pool",
    "t_test",
    "topic_risk",
    "tukey_hsd",
    "virtual_baseline",
    "write_matrix",
    "zrisk",
]
