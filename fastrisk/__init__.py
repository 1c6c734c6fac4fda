"""fastrisk: compiled, parallel risk-sensitive evaluation of retrieval systems."""

from fastrisk.errors import InputError, ZeroVarianceWarning

__all__ = ["InputError", "ZeroVarianceWarning"]
__version__ = "0.1.0"
