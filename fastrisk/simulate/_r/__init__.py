"""R, ported where the simulation studies need R's own numbers (private): R's optimisers
(`roptim`: optim's L-BFGS-B), ks's binned kernel density estimate
(`rks`) and R's distribution functions (`rmath`); their compiled kernels in `_kernels`."""
