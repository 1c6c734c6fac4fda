"""fastrisk: compiled, parallel risk-sensitive evaluation of retrieval systems.

>>> import fastrisk
>>> matrix, baseline = fastrisk.datasets.trec2012_web()
>>> fastrisk.risk(matrix, baseline, alpha=[0, 1, 5, 10]).to_pandas()  # doctest: +SKIP
"""

from fastrisk import datasets
from fastrisk.baselines import Baseline, resolve_baseline, virtual_baseline
from fastrisk.errors import InputError, ZeroVarianceWarning
from fastrisk.io import read_matrix, write_matrix
from fastrisk.matrix import ScoreMatrix
from fastrisk.risk import (AdaptiveRiskResult, RiskResult, RiskScores, TopicRiskResult, adaptive_risk, risk,
                           risk_scores, topic_risk)
from fastrisk.values import ValueFunction, resolve_value

__all__ = [
    "AdaptiveRiskResult", "Baseline", "InputError", "RiskResult", "RiskScores", "ScoreMatrix", "TopicRiskResult",
    "ValueFunction", "ZeroVarianceWarning", "adaptive_risk", "datasets", "read_matrix", "resolve_baseline",
    "resolve_value", "risk", "risk_scores", "topic_risk", "virtual_baseline", "write_matrix",
]
__version__ = "0.1.0"
