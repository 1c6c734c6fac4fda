"""Trust and first contact, round 5 (issue #41): the calibration cache's ``nulls`` validated,
the environment checked before numba and pyarrow load, concurrent sweeps and calibrations
into one place, lattice measures snapped before hashing, printed seeds that reproduce."""

from __future__ import annotations

import json
import warnings

import pytest

from fastrisk.errors import CacheWarning
from fastrisk.simulate import fits

# ------------------------------------------------------------- item 1: the fit file's `nulls`


def _fit_doc(S=3):
    """A fit document as `CollectionFit.to_json` writes it, with one calibrated risk null."""
    import numpy as np

    values = np.random.default_rng(1).uniform(0.05, 0.95, (S, 25)).round(4)
    doc = {"version": fits.FIT_VERSION, "name": "toy_ap", "measure": "ap", "hash": "h" * 64, "ties_seed": 0,
           "kept": list(range(S)), "removed": {},
           "margins": [{"family": "beta", "params": {"shape1": 2.0 + i, "shape2": 3.0}, "df": 2.0, "aic": -1.0}
                       for i in range(S)],
           "copulas": {f"{i},{j}": {"family": "gaussian", "rotation": 0, "parameters": [0.3], "vinecopula": 1,
                                    "loglik": 1.0, "aic": 0.5} for i in range(S) for j in range(i + 1, S)},
           "h1": {"0.05": {"pairs": {"1": [[0, 2.5, 3.0]]}, "failed": 0}},
           "nulls": {"urisk:5:0": {"pairs": {"1": [[0, 1.2, 0.9, 0.41, 0.0], [2, 0.8, 1.1, 0.39, 0.0]]},
                                   "failed": 1, "calls": 12}},
           "values": values.tolist()}
    doc["sha256"] = fits.fit_checksum(doc)
    return doc


def _load(tmp_path, doc):
    p = tmp_path / "toy_ap-0123.json"
    p.write_text(json.dumps(doc))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = fits.load_fit(p, "h" * 64)
    return got, [w for w in caught if issubclass(w.category, CacheWarning)], p


def test_a_good_calibration_loads(tmp_path):
    got, warned, _ = _load(tmp_path, _fit_doc())
    assert not warned and got is not None and got.nulls["urisk:5:0"]["calls"] == 12


def _set(doc, path, value):
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value


NULLS = ("nulls", "urisk:5:0")


@pytest.mark.parametrize(("path", "value", "message"), [
    (NULLS + ("pairs", "1", 0, 1), -1.2, "beta shapes > 0"),
    (NULLS + ("pairs", "1", 0, 2), float("nan"), "beta shapes > 0"),
    (NULLS + ("pairs", "1", 0, 1), 0.0, "beta shapes > 0"),
    (NULLS + ("pairs", "1", 1, 0), 7, "other kept runs"),
    (NULLS + ("pairs", "1", 1, 0), 1, "other kept runs"),
    (NULLS + ("pairs", "1", 1), [2, 0.8, 1.1], "other kept runs"),
    (NULLS + ("pairs", "1", 0, 3), "0.4", "finite numbers"),
    (NULLS + ("pairs",), [], "not pairs and counts"),
    (NULLS + ("pairs",), "x", "not pairs and counts"),
    (NULLS + ("failed",), -1, "not pairs and counts"),
    (NULLS + ("calls",), 1.5, "not pairs and counts"),
    (NULLS, [], "not pairs and counts"),
    (("nulls",), [], "'nulls' is not an object"),
    (("nulls", "urisk:5:0", "pairs", "9"), [], "baseline 9"),
    (("h1", "0.05", "pairs", "1", 0, 1), -2.5, "beta shape that is not > 0"),
])
def test_a_damaged_calibration_is_refitted_with_a_warning_naming_the_file_and_key(tmp_path, path, value, message):
    doc = _fit_doc()
    _set(doc, path, value)
    doc["sha256"] = fits.fit_checksum(doc)  # a consistent checksum: the schema check must catch it
    got, warned, p = _load(tmp_path, doc)
    assert got is None
    assert len(warned) == 1 and str(p) in str(warned[0].message) and "refitted" in str(warned[0].message)
    assert message in str(warned[0].message)


@pytest.mark.parametrize("key", ["urisk:5", "cubic:0:0", "urisk:-1:0", "smooth:0:nan", 3])
def test_a_calibration_under_a_key_that_is_no_null_is_refitted(tmp_path, key):
    doc = _fit_doc()
    doc["nulls"] = {str(key): doc["nulls"]["urisk:5:0"]}
    doc["sha256"] = fits.fit_checksum(doc)
    got, warned, _ = _load(tmp_path, doc)
    assert got is None and len(warned) == 1 and "not a risk null's key" in str(warned[0].message)
