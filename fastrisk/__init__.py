"""fastrisk: compiled, parallel risk-sensitive evaluation of retrieval systems.

>>> import fastrisk
>>> matrix, baseline = fastrisk.data.datasets.trec2012_web()
>>> fastrisk.risk(matrix, baseline, alpha=[0, 1, 5, 10]).to_pandas()  # doctest: +SKIP

The public names load on first use (PEP 562 ``__getattr__``, all of them at once, as an
eager import did): ``import fastrisk`` itself imports neither numba nor scipy, so it is
quick, and the command line (``fastrisk.__main__``) guards Ctrl-C before the heavy imports
start. Type checkers and the documentation read the
same names from the ``TYPE_CHECKING`` imports below.
"""

from __future__ import annotations

import importlib

from fastrisk import _moved
from fastrisk._version import __version__ as __version__
from fastrisk.errors import (
    AlphaInvariantWarning,
    InputError,
    ResourceError,
    RunFileWarning,
    TopicMismatchWarning,
    ZeroVarianceWarning,
)

#: ``typing.TYPE_CHECKING`` without importing typing (the start-up of the command line stays
#: short): type checkers, import-linter and the docs read the ``if TYPE_CHECKING`` imports below.
TYPE_CHECKING = False

#: Module -> the public names it defines, imported on first access.
_PUBLIC: dict[str, tuple[str, ...]] = {
    "fastrisk.core.baselines": ("Baseline", "resolve_baseline", "virtual_baseline"),
    "fastrisk.core.pca": ("PCAResult", "pca"),
    "fastrisk.core.tables": ("BaselineTable", "baseline_table"),
    "fastrisk.core.urisk": (
        "AdaptiveRiskResult", "RiskResult", "RiskScores", "TopicRiskResult", "adaptive_risk", "risk",
        "risk_scores", "topic_risk"
    ),
    "fastrisk.core.values": ("ValueFunction", "resolve_value"),
    "fastrisk.core.zrisk": ("ZRiskResult", "zrisk"),
    "fastrisk.data.io": ("read_matrix", "read_table", "write_matrix"),
    "fastrisk.data.matrix": ("ScoreMatrix",),
    "fastrisk.data.runs": ("Qrels", "RunSet", "read_qrels", "read_runs"),
    "fastrisk.inference.compare": ("CompareResult", "compare", "trisk_test"),
    "fastrisk.inference.multiple": ("TukeyHSDResult", "adjust_pvalues", "tukey_hsd"),
    "fastrisk.inference.paired": ("RankTestResult", "sign_test", "wilcoxon_test"),
    "fastrisk.inference.resampling": (
        "BootstrapResult", "ConfidenceInterval", "JackknifeResult", "PermutationResult", "QQData",
        "TTestResult", "bootstrap", "jackknife", "permutation_test", "t_test"
    ),
    "fastrisk.measures.agreement": (
        "FriedmanResult", "KendallTauMatrix", "KendallTauResult", "PrefixAgreement", "RBOMatrix", "RBOResult",
        "format_ranking", "friedman", "kendall_tau", "kendall_tau_matrix", "parse_ranking", "prefix_agreement",
        "ranking_from_scores", "rbo", "rbo_many", "rbo_matrix"
    ),
    "fastrisk.measures.metrics": ("Evaluation", "Measure", "evaluate", "parse_measure"),
    "fastrisk.measures.pooling": (
        "PoolingComparison", "PoolingExperiment", "build_pool", "common_topic_adjustment", "leave_one_out",
        "loo_adjustment", "pooling_comparison", "pooling_experiment", "score_against_pool"
    ),
    "fastrisk.sweep": ("Experiment", "Grid", "SweepResult", "register_kind"),
}
#: Public sub-modules bound as attributes: name -> module.
_MODULES = {"batch": "fastrisk.core.batch", "datasets": "fastrisk.data.datasets"}


def _load() -> None:
    """Import every public name at once (what ``import fastrisk`` did before it was lazy), so
    that after the first use every sub-module path works as it always did
    (``fastrisk.data.datasets``, ``fastrisk.core.urisk``)."""
    for module, names in _PUBLIC.items():
        loaded = importlib.import_module(module)
        globals().update((n, getattr(loaded, n)) for n in names)
    globals().update((n, importlib.import_module(m)) for n, m in _MODULES.items())


def __getattr__(name: str):
    """Load the public names (and a sub-package, ``fastrisk.sweep``) on first access."""
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    _load()
    if name in globals():
        return globals()[name]
    try:
        value = importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
    from fastrisk.core import batch  # static only
    from fastrisk.core.baselines import Baseline, resolve_baseline, virtual_baseline  # static only
    from fastrisk.core.pca import PCAResult, pca  # static only
    from fastrisk.core.tables import BaselineTable, baseline_table  # static only
    from fastrisk.core.urisk import (  # static only
        AdaptiveRiskResult,
        RiskResult,
        RiskScores,
        TopicRiskResult,
        adaptive_risk,
        risk,
        risk_scores,
        topic_risk,
    )
    from fastrisk.core.values import ValueFunction, resolve_value  # static only
    from fastrisk.core.zrisk import ZRiskResult, zrisk  # static only
    from fastrisk.data import datasets  # static only
    from fastrisk.data.io import read_matrix, read_table, write_matrix  # static only
    from fastrisk.data.matrix import ScoreMatrix  # static only
    from fastrisk.data.runs import Qrels, RunSet, read_qrels, read_runs  # static only
    from fastrisk.inference.compare import CompareResult, compare, trisk_test  # static only
    from fastrisk.inference.multiple import TukeyHSDResult, adjust_pvalues, tukey_hsd  # static only
    from fastrisk.inference.paired import RankTestResult, sign_test, wilcoxon_test  # static only
    from fastrisk.inference.resampling import (  # static only
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
    from fastrisk.measures.agreement import (  # static only
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
    from fastrisk.measures.metrics import Evaluation, Measure, evaluate, parse_measure  # static only
    from fastrisk.measures.pooling import (  # static only
        PoolingComparison,
        PoolingExperiment,
        build_pool,
        common_topic_adjustment,
        leave_one_out,
        loo_adjustment,
        pooling_comparison,
        pooling_experiment,
        score_against_pool,
    )
    from fastrisk.sweep import Experiment, Grid, SweepResult, register_kind  # static only

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
    "CompareResult",
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
    "PoolingComparison",
    "PoolingExperiment",
    "PrefixAgreement",
    "QQData",
    "RankTestResult",
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
    "compare",
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
    "pooling_comparison",
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
    "sign_test",
    "t_test",
    "topic_risk",
    "trisk_test",
    "tukey_hsd",
    "virtual_baseline",
    "wilcoxon_test",
    "write_matrix",
    "zrisk",
]
