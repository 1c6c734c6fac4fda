"""Risk-sensitive learning to rank: LambdaRank, URisk, SARO and FARO objectives for LightGBM.

>>> from fastrisk import ltr
>>> train, test = ltr.lightgbm_example()
>>> obj = ltr.objective("urisk", alpha=5, baseline=ltr.baseline_scores(train, feature=1))
>>> # lightgbm.train({"objective": obj, ...}, lightgbm.Dataset(train.features, train.labels, group=train.group))
"""

from fastrisk.ltr.evaluation import RobustnessResult, baseline_scores, best_feature, ranking_matrix, robustness
from fastrisk.ltr.experiment import LTRExperiment, ltr_experiment
from fastrisk.ltr.letor import LetorData, letor_data, lightgbm_example, read_letor, write_letor
from fastrisk.ltr.objective import KINDS, LambdaObjective, objective, query_ndcg
from fastrisk.ltr.synthetic import synthetic_letor

__all__ = ["KINDS", "LTRExperiment", "LambdaObjective", "LetorData", "RobustnessResult", "baseline_scores",
           "best_feature", "letor_data", "lightgbm_example", "ltr_experiment", "objective", "query_ndcg",
           "ranking_matrix", "read_letor", "robustness", "synthetic_letor", "write_letor"]
