"""Inference: resampling (bootstrap, permutation, jackknife, t test; `resampling`) and
multiple comparisons (`multiple`)."""
