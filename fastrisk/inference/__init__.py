"""Inference: resampling (bootstrap, permutation, jackknife, t test; `resampling`) and
multiple comparisons (`multiple`)."""

from fastrisk._moved import lazy_submodules

__getattr__ = lazy_submodules(__name__)
