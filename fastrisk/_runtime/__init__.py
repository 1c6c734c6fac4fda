"""The foundation every layer stands on (private): argument checks (`validation`), seeds
(`rng`), thread counts (`threads`), memory estimates (`resources`), compile-on-first-use
(`compile`), atomic writes (`atomic`), the numerical policy (`numerics`), Student-t inference
and the sign conventions (`tstat`), type aliases (`aliases`), progress bars (`progress`) and the
figure style (`style`). It imports nothing of fastrisk above `errors` and `_kernels`."""
