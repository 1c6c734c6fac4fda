"""Simulation studies: the paired-test battery, simulated collections and error-rate studies.

- `battery`: t, Wilcoxon, sign, bootstrap, permutation, TRisk, ZRisk and GeoRisk tests
  on K pairs of runs at once;
- `fit_collections`, `CollectionFit`, `fit_margin`, `fit_copula`: the fitted models of
  Urbano, Lima & Hanjalic (SIGIR 2019): simIReff margins and copulas as VineCopula's
  `BiCopSelect` (every family, MLE, AIC), cached;
- `type1`, `power`, `type3`, `grid`: their error-rate studies, with
  the published protocol, on the sweep engine, on the bundled collections or any score
  matrix of any measure on [0, 1] (margins by the measure's support);
- `Sampling`, `TestSelection`, `Execution`: the studies' options as objects, shared by the
  studies, the grid and the CLI (or built from the old keywords);
- `topics`: topic-set-size planning, the smallest number of topics whose simulated power
  reaches a target (`TopicsResult`);
- `pair_study`: the user's own pair of runs: each risk inference's type I rate under the
  empirical-population and the copula null, its power and the topics it needs (`PairResult`);
- `calibrated_trisk`: TRisk of one pair with its null distribution simulated from the pair's
  own fitted margins and copula calibrated to URisk_alpha = 0 (`CalibratedTRiskResult`);
- `resample_topics`, `CollectionModel` (`fit_hurdle_margin`, `fit_exchangeable_copula`),
  `simulate_pairs`: new topic sets
  from a real collection by resampling, or by a simpler stochastic model (hurdle margins,
  exchangeable copulas; not the published protocol, not used by the studies).
"""

from fastrisk.simulate.battery import BatteryResult, battery
from fastrisk.simulate.calibrated import CalibratedTRiskResult, calibrated_trisk
from fastrisk.simulate.collections import (
           CollectionModel,
           fit_exchangeable_copula,
           resample_topics,
           simulate_pairs,
)
from fastrisk.simulate.copulas import fit_copula
from fastrisk.simulate.fits import CollectionFit, fit_collections
from fastrisk.simulate.margins import Margin, fit_hurdle_margin
from fastrisk.simulate.options import Execution, Sampling, TestSelection
from fastrisk.simulate.pair import PairResult, pair_study
from fastrisk.simulate.planning import TopicsResult, topics
from fastrisk.simulate.simireff import SimMargin, fit_margin
from fastrisk.simulate.studies import ALPHAS, DELTAS, MEASURES, TOPICS, StudyResult, power, type1, type3

__all__ = ["ALPHAS", "DELTAS", "MEASURES", "TOPICS", "BatteryResult", "CalibratedTRiskResult", "CollectionFit", "CollectionModel", "Execution",
           "Margin", "PairResult", "Sampling", "SimMargin", "StudyResult", "TestSelection", "TopicsResult", "battery", "calibrated_trisk", "fit_collections", "fit_copula", "fit_exchangeable_copula",
           "fit_hurdle_margin", "fit_margin", "pair_study", "power",
           "resample_topics", "simulate_pairs", "topics", "type1", "type3"]
