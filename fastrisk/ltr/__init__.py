"""Risk-sensitive learning to rank: LETOR data for LambdaRank, URisk, SARO and FARO objectives."""

from fastrisk.ltr.letor import LetorData, letor_data, lightgbm_example, read_letor, write_letor
from fastrisk.ltr.synthetic import synthetic_letor

__all__ = ["LetorData", "letor_data", "lightgbm_example", "read_letor", "synthetic_letor", "write_letor"]
