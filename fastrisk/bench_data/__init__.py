"""Real TREC data bundled with fastrisk (see README.md in this folder for provenance).

Installed as the package ``fastrisk.bench_data`` so that ``fastrisk demo`` works from any
installation; use `fastrisk.datasets` to load it.
"""
