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
from fastrisk.errors import AlphaInvariantWarning as AlphaInvariantWarning
from fastrisk.errors import InputError as InputError
from fastrisk.errors import ResourceError as ResourceError
from fastrisk.errors import RunFileWarning as RunFileWarning
from fastrisk.errors import TopicMismatchWarning as TopicMismatchWarning
from fastrisk.errors import ZeroVarianceWarning as ZeroVarianceWarning

#: ``typing.TYPE_CHECKING`` without importing typing (the start-up of the command line stays
#: short): type checkers, import-linter and the docs read the ``if TYPE_CHECKING`` imports below.
TYPE_CHECKING = False

#: THE list of public names: module -> the public names it defines. ``__all__`` and the lazy
#: loading below are built from it; the static imports (``fastrisk.errors`` above, the
#: ``TYPE_CHECKING`` block below) are what type checkers read, and ``tests/test_docstrings.py``
#: fails if they differ from it. Every name but the errors is imported on first access.
_PUBLIC: dict[str, tuple[str, ...]] = {
    "fastrisk.errors": (
        "AlphaInvariantWarning", "InputError", "ResourceError", "RunFileWarning", "TopicMismatchWarning",
        "ZeroVarianceWarning"
    ),
    "fastrisk.core.baselines": ("Baseline", "resolve_baseline", "virtual_baseline"),
    "fastrisk.core.inference": ("INFERENCES", "RiskInference"),
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
    "fastrisk.inference.metaeval": (
        "DiscriminativePowerResult", "EffectSizeResult", "SwapRateResult", "TopicSetSizeResult",
        "discriminative_power", "effect_size", "swap_rates", "topic_set_size"
    ),
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


if TYPE_CHECKING:  # the static view of `_PUBLIC`: explicit re-exports (``X as X``, PEP 484)
    from fastrisk.core import batch as batch  # static only
    from fastrisk.core.baselines import Baseline as Baseline  # static only
    from fastrisk.core.baselines import resolve_baseline as resolve_baseline  # static only
    from fastrisk.core.baselines import virtual_baseline as virtual_baseline  # static only
    from fastrisk.core.inference import INFERENCES as INFERENCES  # static only
    from fastrisk.core.inference import RiskInference as RiskInference  # static only
    from fastrisk.core.pca import PCAResult as PCAResult  # static only
    from fastrisk.core.pca import pca as pca  # static only
    from fastrisk.core.tables import BaselineTable as BaselineTable  # static only
    from fastrisk.core.tables import baseline_table as baseline_table  # static only
    from fastrisk.core.urisk import AdaptiveRiskResult as AdaptiveRiskResult  # static only
    from fastrisk.core.urisk import RiskResult as RiskResult  # static only
    from fastrisk.core.urisk import RiskScores as RiskScores  # static only
    from fastrisk.core.urisk import TopicRiskResult as TopicRiskResult  # static only
    from fastrisk.core.urisk import adaptive_risk as adaptive_risk  # static only
    from fastrisk.core.urisk import risk as risk  # static only
    from fastrisk.core.urisk import risk_scores as risk_scores  # static only
    from fastrisk.core.urisk import topic_risk as topic_risk  # static only
    from fastrisk.core.values import ValueFunction as ValueFunction  # static only
    from fastrisk.core.values import resolve_value as resolve_value  # static only
    from fastrisk.core.zrisk import ZRiskResult as ZRiskResult  # static only
    from fastrisk.core.zrisk import zrisk as zrisk  # static only
    from fastrisk.data import datasets as datasets  # static only
    from fastrisk.data.io import read_matrix as read_matrix  # static only
    from fastrisk.data.io import read_table as read_table  # static only
    from fastrisk.data.io import write_matrix as write_matrix  # static only
    from fastrisk.data.matrix import ScoreMatrix as ScoreMatrix  # static only
    from fastrisk.data.runs import Qrels as Qrels  # static only
    from fastrisk.data.runs import RunSet as RunSet  # static only
    from fastrisk.data.runs import read_qrels as read_qrels  # static only
    from fastrisk.data.runs import read_runs as read_runs  # static only
    from fastrisk.inference.compare import CompareResult as CompareResult  # static only
    from fastrisk.inference.compare import compare as compare  # static only
    from fastrisk.inference.compare import trisk_test as trisk_test  # static only
    from fastrisk.inference.metaeval import DiscriminativePowerResult as DiscriminativePowerResult  # static only
    from fastrisk.inference.metaeval import EffectSizeResult as EffectSizeResult  # static only
    from fastrisk.inference.metaeval import SwapRateResult as SwapRateResult  # static only
    from fastrisk.inference.metaeval import TopicSetSizeResult as TopicSetSizeResult  # static only
    from fastrisk.inference.metaeval import discriminative_power as discriminative_power  # static only
    from fastrisk.inference.metaeval import effect_size as effect_size  # static only
    from fastrisk.inference.metaeval import swap_rates as swap_rates  # static only
    from fastrisk.inference.metaeval import topic_set_size as topic_set_size  # static only
    from fastrisk.inference.multiple import TukeyHSDResult as TukeyHSDResult  # static only
    from fastrisk.inference.multiple import adjust_pvalues as adjust_pvalues  # static only
    from fastrisk.inference.multiple import tukey_hsd as tukey_hsd  # static only
    from fastrisk.inference.paired import RankTestResult as RankTestResult  # static only
    from fastrisk.inference.paired import sign_test as sign_test  # static only
    from fastrisk.inference.paired import wilcoxon_test as wilcoxon_test  # static only
    from fastrisk.inference.resampling import BootstrapResult as BootstrapResult  # static only
    from fastrisk.inference.resampling import ConfidenceInterval as ConfidenceInterval  # static only
    from fastrisk.inference.resampling import JackknifeResult as JackknifeResult  # static only
    from fastrisk.inference.resampling import PermutationResult as PermutationResult  # static only
    from fastrisk.inference.resampling import QQData as QQData  # static only
    from fastrisk.inference.resampling import TTestResult as TTestResult  # static only
    from fastrisk.inference.resampling import bootstrap as bootstrap  # static only
    from fastrisk.inference.resampling import jackknife as jackknife  # static only
    from fastrisk.inference.resampling import permutation_test as permutation_test  # static only
    from fastrisk.inference.resampling import t_test as t_test  # static only
    from fastrisk.measures.agreement import FriedmanResult as FriedmanResult  # static only
    from fastrisk.measures.agreement import KendallTauMatrix as KendallTauMatrix  # static only
    from fastrisk.measures.agreement import KendallTauResult as KendallTauResult  # static only
    from fastrisk.measures.agreement import PrefixAgreement as PrefixAgreement  # static only
    from fastrisk.measures.agreement import RBOMatrix as RBOMatrix  # static only
    from fastrisk.measures.agreement import RBOResult as RBOResult  # static only
    from fastrisk.measures.agreement import format_ranking as format_ranking  # static only
    from fastrisk.measures.agreement import friedman as friedman  # static only
    from fastrisk.measures.agreement import kendall_tau as kendall_tau  # static only
    from fastrisk.measures.agreement import kendall_tau_matrix as kendall_tau_matrix  # static only
    from fastrisk.measures.agreement import parse_ranking as parse_ranking  # static only
    from fastrisk.measures.agreement import prefix_agreement as prefix_agreement  # static only
    from fastrisk.measures.agreement import ranking_from_scores as ranking_from_scores  # static only
    from fastrisk.measures.agreement import rbo as rbo  # static only
    from fastrisk.measures.agreement import rbo_many as rbo_many  # static only
    from fastrisk.measures.agreement import rbo_matrix as rbo_matrix  # static only
    from fastrisk.measures.metrics import Evaluation as Evaluation  # static only
    from fastrisk.measures.metrics import Measure as Measure  # static only
    from fastrisk.measures.metrics import evaluate as evaluate  # static only
    from fastrisk.measures.metrics import parse_measure as parse_measure  # static only
    from fastrisk.measures.pooling import PoolingComparison as PoolingComparison  # static only
    from fastrisk.measures.pooling import PoolingExperiment as PoolingExperiment  # static only
    from fastrisk.measures.pooling import build_pool as build_pool  # static only
    from fastrisk.measures.pooling import common_topic_adjustment as common_topic_adjustment  # static only
    from fastrisk.measures.pooling import leave_one_out as leave_one_out  # static only
    from fastrisk.measures.pooling import loo_adjustment as loo_adjustment  # static only
    from fastrisk.measures.pooling import pooling_comparison as pooling_comparison  # static only
    from fastrisk.measures.pooling import pooling_experiment as pooling_experiment  # static only
    from fastrisk.measures.pooling import score_against_pool as score_against_pool  # static only
    from fastrisk.sweep import Experiment as Experiment  # static only
    from fastrisk.sweep import Grid as Grid  # static only
    from fastrisk.sweep import SweepResult as SweepResult  # static only
    from fastrisk.sweep import register_kind as register_kind  # static only

_moved.install()

#: Every public name, from `_PUBLIC` and `_MODULES` (the one list).
__all__ = sorted({*_MODULES, *(name for names in _PUBLIC.values() for name in names)})
