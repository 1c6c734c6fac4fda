"""Bootstrap, permutation (randomisation) tests and the jackknife over topics.

Every procedure works on per-topic scores: the risk-reward scores ``x_i`` of every system
against a baseline (``fastrisk.risk_scores``; URisk = mean x), the differences of every
pair of systems (``pairs=True``), or a plain array of per-topic scores. With a ``baseline``,
a bare S x c array is a matrix (systems and topics named by position, an int baseline a row),
as in `fastrisk.risk`; without one, it is taken as per-topic scores as they are.

Speed. The statistics users mostly resample (mean score, mean difference, URisk at any
alpha, any value function applied per topic) are *linear* in the resampling weights: the
replicate means of every system are one BLAS product of a (B x c) matrix of multinomial
counts by the (c x K) per-topic scores, and sums of squares (for bootstrap-t) come from the
same product. Permutation tests flip signs, again a (B x c) matrix product. Any other
statistic (a jitted function of the per-topic vector) runs in a parallel gather loop that
resamples the very same topics. Replicates are processed in chunks (multiples of
`BLOCK`), and summaries (standard errors, exact quantiles for the intervals,
p-values) are streamed, so a million replicates never need a million-row array.

Determinism. Replicate ``b`` draws from its own counter-based stream ``(seed, b)``: the same
seed gives the same replicates with any number of threads and in any chunking. Sums are
accumulated per block of `BLOCK` replicates and the blocks are added in order, so
standard errors are bit-identical too; quantiles and p-values are exact order statistics and
counts. (The linear path relies on the BLAS product giving the same per-element results for
the same rows, which holds for a given BLAS library and build; the tests check it.)

Modules: `results` (the result classes) <-
`_scores` (what is resampled) <- `_engine`
(chunks, streams, replicate sources, progress) <- `procedures`
(the public functions).
"""

from fastrisk.data.results import ConfidenceInterval
from fastrisk.inference.resampling.procedures import TTestResult, bootstrap, jackknife, permutation_test, t_test
from fastrisk.inference.resampling.results import BootstrapResult, JackknifeResult, PermutationResult, QQData

__all__ = ["BootstrapResult", "ConfidenceInterval", "JackknifeResult", "PermutationResult", "QQData",
           "TTestResult", "bootstrap", "jackknife", "permutation_test", "t_test"]
