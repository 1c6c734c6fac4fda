"""The risk-sensitive core: URisk / TRisk and per-topic risk (`urisk`), ZRisk / GeoRisk
(`zrisk`), baselines and virtual baselines (`baselines`), value functions (`values`), the
all-baseline table (`tables`), many matrices at once (`batch`), PCA of systems (`pca`) and
the streamed long forms of the CLI (`long_forms`)."""

from fastrisk._moved import lazy_submodules

__getattr__ = lazy_submodules(__name__)
