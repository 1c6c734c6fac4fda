"""The one result model: declared dims -> long form, parameters -> metadata."""

import json
from dataclasses import dataclass, fields

import numpy as np
import pytest

from fastrisk.data.results import ConfidenceInterval, Result, array


@dataclass(frozen=True, repr=False)
class _Example(Result):
    _constants = ("baseline",)
    _derived = {"double": ("alpha", "system")}

    systems: tuple
    topics: tuple
    alpha: np.ndarray
    loss_weight: np.ndarray
    baseline: str
    value: np.ndarray = array("alpha", "system")
    per_topic: np.ndarray = array("alpha", "system", "topic", column="x")
    per_system: np.ndarray = array("system")

    @property
    def double(self):
        return 2 * self.value


def _example():
    A, S, c = 2, 3, 4
    return _Example(("a", "b", "c"), ("t1", "t2", "t3", "t4"), np.array([0.0, 5.0]), np.array([1.0, 6.0]),
                    "base", np.arange(A * S, dtype=float).reshape(A, S),
                    np.arange(A * S * c, dtype=float).reshape(A, S, c), np.array([10.0, 20.0, 30.0]))


def test_long_form_of_the_largest_array_broadcasts_the_smaller_ones():
    r = _example()
    t = r.to_arrow()
    assert t.column_names == ["alpha", "loss_weight", "system", "topic", "baseline", "value", "x", "per_system",
                              "double"]
    assert t.num_rows == 2 * 3 * 4
    rows = t.to_pylist()
    # row (alpha=5, system=b, topic=t3): plain nested loops as the reference
    i = [k for k, row in enumerate(rows) if row["alpha"] == 5.0 and row["system"] == "b" and row["topic"] == "t3"]
    assert len(i) == 1
    row = rows[i[0]]
    assert row["x"] == r.per_topic[1, 1, 2] and row["value"] == r.value[1, 1]
    assert row["per_system"] == 20.0 and row["double"] == 2 * r.value[1, 1]
    assert row["loss_weight"] == 6.0 and row["baseline"] == "base"


def test_other_tables_and_metadata():
    r = _example()
    t = r.to_arrow(("alpha", "system"))
    assert t.num_rows == 6 and "x" not in t.column_names
    meta = json.loads(t.schema.metadata[b"fastrisk"])
    assert meta["result"] == "_Example" and meta["baseline"] == "base" and meta["dims"] == ["alpha", "system"]
    with pytest.raises(ValueError, match="no dimension 'replicate'"):
        r.to_arrow(("replicate",))
    assert "alpha=2, system=3, topic=4" in repr(r)
    assert "<table>" in r._repr_html_()


def test_confidence_interval_unpacks():
    low, high = ConfidenceInterval(np.zeros(2), np.ones(2))
    assert high.sum() == 2


@dataclass(frozen=True, repr=False)
class Documented(Result):
    """A result with its own docstring.

    Long form: ``system``, ``urisk``, ``odd``.
    """

    _derived = {"half": ("system",)}

    systems: tuple
    seed: int
    urisk: np.ndarray = array("system")
    odd: np.ndarray = array("alpha", "system", default=None, doc="A meaning of its own.")

    @property
    def half(self):
        """Half of ``urisk``.

        (Only the first paragraph goes into the Attributes section.)
        """
        return self.urisk / 2


def test_attributes_section_is_built_from_the_declarations():
    doc = Documented.__doc__
    assert doc.startswith("A result with its own docstring.\n\nLong form:")  # the class's own text is kept
    section = doc.split("Attributes\n----------\n", 1)[1]
    names = [line.split(" :")[0] for line in section.splitlines() if line and not line.startswith(" ")]
    assert names == ["systems", "seed", "urisk", "odd", "half"]  # fields in order, then derived arrays
    assert "urisk : ndarray ``[system]``\n    URisk: the mean per-topic" in section  # the glossary's meaning
    assert "odd : ndarray ``[alpha, system]``\n    A meaning of its own." in section  # doc= wins
    assert section.endswith("half : ndarray ``[system]``\n    Half of ``urisk``.")  # its property's docstring
    assert "Only the first" not in section
    assert "Attributes" not in (Result.__doc__ or "")  # the base documents no fields

    @dataclass(frozen=True, repr=False)
    class Sub(Documented):
        """A subclass: its parent's fields, then its own."""

        extra: float = 0.0

    assert Sub.__doc__.count("Attributes\n----------") == 1
    assert Sub.__doc__.rstrip().endswith("half : ndarray ``[system]``\n    Half of ``urisk``.")  # inherited property
    assert "\nextra : float\n" in Sub.__doc__


def test_deprecated_alias_warns_and_reads_the_new_name():
    from fastrisk.data.results import deprecated_alias

    @dataclass(frozen=True, repr=False)
    class Renamed(Result):
        """Renamed."""

        new: np.ndarray = array("system")
        old = deprecated_alias("old", "new")

    res = Renamed(new=np.arange(3.0))
    with pytest.warns(DeprecationWarning, match=r"`Renamed.old` is deprecated since .*; use `.new`"):
        assert res.old is res.new
    assert "old" not in Renamed.array_dims() and "old" not in res.to_arrow().column_names


def test_trusted_construction_equals_the_constructor():
    """`Result._trusted` (kernel results, no per-field frozen assignment) builds the same object
    as the dataclass constructor: every field, the defaults of those omitted, the cached
    properties; a missing or unknown field goes to the constructor, which refuses it."""
    import fastrisk
    from fastrisk.core.urisk import RiskResult

    m, b = fastrisk.data.datasets.trec2012_web()
    r = fastrisk.risk(m, b, alpha=[0.0, 5.0])
    values = {f.name: getattr(r, f.name) for f in fields(r)}
    fast, slow = RiskResult._trusted(**values), RiskResult(**values)
    assert type(fast) is RiskResult and fast.__dict__.keys() == slow.__dict__.keys()
    assert all(fast.__dict__[k] is slow.__dict__[k] for k in slow.__dict__)
    np.testing.assert_array_equal(fast.pvalue, slow.pvalue)
    del values["trisk"]
    with pytest.raises(TypeError, match="trisk"):
        RiskResult._trusted(**values)
    with pytest.raises(TypeError, match="nonsense"):
        RiskResult._trusted(**values, trisk=r.trisk, nonsense=1)
    t = fastrisk.t_test(m, b, alpha=[1.0])  # a result with defaults (convention, alternative)
    assert t.convention == "classic" and t.alternative == "two-sided"
