"""The shared argument checks: each names the parameter and the rule."""

from __future__ import annotations

import numpy as np
import pytest

from fastrisk._runtime.validation import choice, flag, float_array, level, open_unit, positive_int
from fastrisk.errors import InputError


def test_positive_int():
    assert positive_int(3, "n") == 3 and positive_int(np.int64(2), "n") == 2
    for bad in (0, -1, 1.5, True, "2", None):
        with pytest.raises(InputError, match="`n` must be a positive integer"):
            positive_int(bad, "n")


def test_choice_level_open_unit_flag():
    assert choice("a", "x", ("a", "b")) == "a"
    with pytest.raises(InputError, match="`x` must be one of 'a', 'b', got 'c'"):
        choice("c", "x", ("a", "b"))
    assert level(0.05) == 0.05
    for bad in (0, 1, 1.5, True, "0.05"):
        with pytest.raises(InputError, match=r"`significance` must be a level in \(0, 1\)"):
            level(bad)
    assert open_unit(0.9, "p") == 0.9
    with pytest.raises(InputError, match="`p` must be a number strictly between 0 and 1, got 1"):
        open_unit(1, "p")
    assert flag(np.bool_(True), "f") is True
    with pytest.raises(InputError, match="`f` must be True or False, got 1"):
        flag(1, "f")


def test_float_array():
    out = float_array([[1, 2], [3, 4]], "data")
    assert out.dtype == np.float64 and out.flags.c_contiguous
    assert float_array(np.asfortranarray(np.ones((2, 3))), "data").flags.c_contiguous
    with pytest.raises(InputError, match=r"`data` must be finite: element \(0, 1\) is nan"):
        float_array([[1.0, np.nan]], "data")
    with pytest.raises(InputError, match="`data` must have 1 or 2 dimension"):
        float_array(np.ones((2, 2, 2)), "data")
    with pytest.raises(InputError, match="`data` must be an array of numbers"):
        float_array([["a"]], "data")
