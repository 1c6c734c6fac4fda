"""Figures and reports: matplotlib figures (`plot`, the simulation studies' `figures`) and the
HTML/PDF risk report (`report`). matplotlib is imported only when a figure is drawn."""

from fastrisk._moved import lazy_submodules

__getattr__ = lazy_submodules(__name__)
