"""Inference: resampling (bootstrap, permutation, jackknife, t test; `resampling`) and
multiple comparisons (`multiple`), meta-evaluation (`metaeval`: discriminative power, swap
rates, effect sizes, topic set size design)."""

from fastrisk._moved import lazy_submodules

__getattr__ = lazy_submodules(__name__)
