"""Numba kernels of the R ports: plain arrays in, plain arrays out (they import only
`fastrisk._kernels`)."""
