"""Risk-sensitive learning to rank: LambdaRank, URisk, SARO and FARO objectives for LightGBM.

>>> from fastrisk import ltr
>>> train, test = ltr.lightgbm_example()
>>> obj = ltr.objective("urisk", alpha=5, baseline=ltr.baseline_scores(train, feature=1))
>>> # lightgbm.train({"objective": obj, ...}, lightgbm.Dataset(train.features, train.labels, group=train.group))
"""

from fastrisk.ltr.letor import LetorData, letor_data, lightgbm_example, read_letor, write_letor
from fastrisk.ltr.objective import KINDS, LambdaObjective, objective, query_ndcg
from fastrisk.ltr.synthetic import synthetic_letor

__all__ = ["KINDS", "LambdaObjective", "LetorData", "letor_data", "lightgbm_example", "objective", "query_ndcg",
           "read_letor", "synthetic_letor", "write_letor"]
