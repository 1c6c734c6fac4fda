"""Simulation studies: the paired-test battery, simulated collections and error-rate studies.

- :func:`battery`: t, Wilcoxon, sign, bootstrap, permutation, TRisk, ZRisk and GeoRisk tests
  on K pairs of runs at once;
- :func:`resample_topics`, :class:`CollectionModel`, :func:`simulate_pairs`: new topic sets
  from a real collection (Urbano & Nagler, SIGIR 2018);
- :func:`type1`, :func:`power`, :func:`type3`: error-rate studies (Urbano, Lima & Hanjalic,
  SIGIR 2019) on the sweep engine.
"""

from fastrisk.simulate.battery import BatteryResult, battery
from fastrisk.simulate.collections import (
           CollectionModel,
           fit_copula,
           resample_topics,
           simulate_pairs,
)
from fastrisk.simulate.margins import Margin, fit_margin
from fastrisk.simulate.studies import ALPHAS, MEASURES, power, type1, type3

__all__ = ["ALPHAS", "MEASURES", "BatteryResult", "CollectionModel", "Margin", "battery", "fit_copula", "fit_margin",
           "power", "resample_topics", "simulate_pairs", "type1", "type3"]
