"""Plain-Python references of simIReff's discrete margins (issue #18).

`np_cv_ls`: the least-squares cross-validation objective of ``np::npudensbw(bwmethod =
"cv.ls")`` for one ordered variable with the Wang & van Ryzin kernel, written from np's C
sources term by term, one pair of observations at a time:

- kernel (``src/kernel.c``, ``np_owang_van_ryzin``): 1 - lambda if x = y, else
  (1 - lambda) / 2 * lambda^|x - y|;
- integral of fhat^2 (``kernel_ordered_convolution``): for each pair (x_i, x_l), the sum over
  the categories z of K(x_i, z) K(x_l, z), the categories being the distinct values observed
  in the data (``determine_categorical_vals`` in ``src/jksum.c``), averaged over all n^2 pairs;
- minus twice the leave-one-out term: the mean over i of (1 / (n - 1)) sum_{l != i} K(x_i, x_l).
"""

from __future__ import annotations


def np_wvr(x, y, lam):
    return 1.0 - lam if x == y else 0.5 * (1.0 - lam) * lam ** abs(x - y)


def np_cv_ls(obs, lam):
    obs = [int(v) for v in obs]
    n = len(obs)
    cats = sorted(set(obs))
    conv = 0.0
    loo = 0.0
    for i in range(n):
        for m in range(n):
            conv += sum(np_wvr(obs[i], z, lam) * np_wvr(obs[m], z, lam) for z in cats)
            if m != i:
                loo += np_wvr(obs[i], obs[m], lam)
    return conv / (n * n) - 2.0 * loo / (n * (n - 1))
