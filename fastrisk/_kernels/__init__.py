"""Numba kernels: plain arrays in, plain arrays out. The only place numba appears."""
