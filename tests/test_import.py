"""Importing fastrisk compiles nothing and changes no numba configuration."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys, numba
before = numba.get_num_threads()
import fastrisk
from fastrisk._kernels import risk as k
from numba.core.registry import CPUDispatcher
compiled = [n for n in dir(k) if isinstance(getattr(k, n), CPUDispatcher) and getattr(k, n).signatures]
print(before == numba.get_num_threads(), compiled, 'matplotlib' in sys.modules, 'pandas' in sys.modules)
"""


def test_import_has_no_side_effects():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "[]", "False", "False"]
