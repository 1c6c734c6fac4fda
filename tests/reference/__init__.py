"""Plain NumPy/Python references the kernels are tested against: one module per family
(risk, multibase, batch, resampling, agreement, pooling, runs, ltr, ranktests), written for clarity, never
for speed, and never importing the code under test."""
