"""The measures fastrisk computes: one record per measure family in `MEASURES`.

A record holds everything that names, parses, computes and explains a family: its
ir_measures name and accepted spellings, its parameters, its cutoff rule, the kernel code
(`fastrisk._kernels.metrics`), its trec_eval name, and the definition text that the
documentation table and the report's header show. `parse_measure` reads ir_measures
names (``nDCG@20``, ``P(rel=2)@10``, ``RBP(rel=1,p=0.8)@10``) and trec_eval's names, as
``ir_measures.parse_trec_measure`` reads them (``map``, ``P_10``, ``P.10``, ``ndcg_cut_20``,
``recip_rank``, ``Rprec``, ``recall_100``, ``map_cut_10``, ``ndcg``).

Adding a measure means adding a record here and its branch in
``_kernels/metrics.measure_value``. See CONTRIBUTING.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from fastrisk._kernels import metrics as _km
from fastrisk.errors import InputError

#: ERR's top grade (gdeval's ``$MAX_JUDGMENT``, the TREC Web track's scale 0..4).
ERR_MAX_GRADE = 4

_WITHIN = "{within}"


@dataclass(frozen=True)
class MeasureSpec:
    """One measure family.

    ``cutoff`` is ``"required"``, ``"optional"`` or ``"none"``. ``code`` gives the kernel code
    of a parsed `Measure`. ``summary`` is the documentation table's cell, and
    ``definition`` the report's sentence, a template over ``{k}``, ``{rel}``, ``{p}``,
    ``{gain}``, ``{at}`` and ``{within}``.
    """

    family: str
    spellings: tuple
    params: frozenset
    cutoff: str
    code: Callable
    trec_eval: str
    summary: str
    definition: str


def _ndcg_code(m) -> int:
    if m.dcg == "exp-log2":
        return _km.NDCG
    return _km.NDCG_LIN if m.cutoff is not None else _km.NDCG_LIN_FULL


_REL = "relevant documents (grade ≥ {rel})"

#: The registry: ir_measures family name -> its record.
MEASURES: dict[str, MeasureSpec] = {s.family: s for s in (
    MeasureSpec("P", ("p",), frozenset({"rel"}), "required", lambda m: _km.P, "P_k",
                "relevant (grade >= ``rel``) in the top k, / k",
                "precision at {k}: " + _REL + " in the top {k}, divided by {k} (trec_eval P)"),
    MeasureSpec("R", ("r", "recall"), frozenset({"rel"}), "required", lambda m: _km.RECALL, "recall_k",
                "relevant in the top k / R",
                "recall at {k}: " + _REL + " in the top {k}, divided by R, the number of relevant documents "
                "(trec_eval recall)"),
    MeasureSpec("AP", ("ap", "map"), frozenset({"rel"}), "optional", lambda m: _km.AP, "map, map_cut_k",
                "sum of precision at each relevant rank (within k) / R",
                "average precision{at}: the sum of the precision at the rank of each relevant document "
                "(grade ≥ {rel})" + _WITHIN + ", divided by R, the number of relevant documents (trec_eval map)"),
    MeasureSpec("RR", ("rr", "mrr"), frozenset({"rel"}), "optional", lambda m: _km.RR, "recip_rank",
                "1 / rank of the first relevant (within k)",
                "reciprocal rank of the first relevant document (grade ≥ {rel})" + _WITHIN
                + " (trec_eval recip_rank)"),
    MeasureSpec("Rprec", ("rprec",), frozenset({"rel"}), "none", lambda m: _km.RPREC, "Rprec",
                "relevant in the top R / R",
                "R-precision: " + _REL + " in the top R, divided by R (trec_eval Rprec)"),
    MeasureSpec("nDCG", ("ndcg",), frozenset({"dcg"}), "optional", _ndcg_code, "ndcg, ndcg_cut_k",
                "gain = grade (linear), discount log2(rank + 1), ideal from every judged document; "
                "``nDCG(dcg='exp-log2')@k`` is gdeval's (TREC Web track): gain 2^grade - 1",
                "normalised discounted cumulative gain{at} (Järvelin & Kekäläinen, TOIS 2002): DCG / ideal DCG, "
                "DCG = Σ gain(grade_r) / log2(r + 1) over ranks r" + _WITHIN + ", {gain}"),
    MeasureSpec("ERR", ("err",), frozenset(), "required", lambda m: _km.ERR, "",
                "gdeval: stop probability (2^grade - 1) / 2^4; grades above 4 are rejected, as gdeval "
                "rejects them",
                "expected reciprocal rank at {k} (Chapelle, Metzler, Zhang & Grinspan, CIKM 2009): "
                "Σ_{{r ≤ {k}}} (1/r) R_r Π_{{i < r}} (1 − R_i), stop probability R = (2^grade − 1) / 2^4, "
                "as the TREC Web track's gdeval computes it"),
    MeasureSpec("RBP", ("rbp",), frozenset({"rel", "p", "residual"}), "optional", lambda m: _km.RBP, "",
                "Moffat & Zobel's rank-biased precision, binary at grade >= ``rel`` (``residual=True`` adds "
                "the residual)",
                "rank-biased precision (Moffat & Zobel, TOIS 2008): (1 − p) Σ_r p^(r−1) rel_r with p = {p}, "
                "rel_r = 1 when grade ≥ {rel}" + _WITHIN),
    MeasureSpec("Judged", ("judged",), frozenset(), "optional", lambda m: _km.JUDGED, "",
                "judged share of the top min(k, run length) documents",
                "share of the top {k} documents that are judged"),
)}

_SPELLINGS = {sp: s.family for s in MEASURES.values() for sp in s.spellings}
_PATTERN = re.compile(r"^\s*([A-Za-z]+)\s*(?:\((.*)\))?\s*(?:@\s*(\S+))?\s*$")
#: trec_eval's names as ``ir_measures.parse_trec_measure`` reads them (one measure each).
_TREC_BARE = {"map": "AP", "recip_rank": "RR", "Rprec": "Rprec", "ndcg": "nDCG"}
_TREC_CUT = re.compile(r"^(P|recall|map_cut|ndcg_cut)[._]([0-9]+)$")
_TREC_CUT_FAMILY = {"P": "P", "recall": "R", "map_cut": "AP", "ndcg_cut": "nDCG"}


@dataclass(frozen=True)
class Measure:
    """A parsed measure: family, cutoff and parameters (see `parse_measure`)."""

    family: str
    cutoff: int | None
    rel: int = 1
    p: float = 0.8
    residual: bool = False
    dcg: str = "log2"
    max_grade: int = ERR_MAX_GRADE

    @property
    def spec(self) -> MeasureSpec:
        return MEASURES[self.family]

    @property
    def code(self) -> int:
        return self.spec.code(self)

    @property
    def name(self) -> str:
        """The canonical name, as ir_measures prints it (defaults omitted)."""
        params = []
        if self.family == "RBP":
            params.append(f"rel={self.rel}")
            if self.p != 0.8:
                params.append(f"p={self.p:g}")
            if self.residual:
                params.append("residual=True")
        elif "rel" in self.spec.params and self.rel != 1:
            params.append(f"rel={self.rel}")
        if self.family == "nDCG" and self.dcg != "log2":
            params.append(f"dcg='{self.dcg}'")
        base = self.family + (f"({','.join(params)})" if params else "")
        return base if self.cutoff is None else f"{base}@{self.cutoff}"

    def __str__(self) -> str:
        return self.name

    def depth(self, run_depth: int) -> int:
        """Number of ranks the measure looks at (without a cutoff: the whole run)."""
        return self.cutoff if self.cutoff is not None else max(int(run_depth), 1)

    def kernel_args(self):
        return self.code, float(self.p), int(self.rel), int(self.max_grade), bool(self.residual)

    def definition(self) -> str:
        """The report's one-sentence definition of this measure."""
        k = self.cutoff
        gain = ("gain 2^grade − 1 (gdeval, TREC Web track)" if self.dcg == "exp-log2"
                else "gain = grade (trec_eval ndcg_cut)")
        return self.spec.definition.format(k=k, rel=self.rel, p=f"{self.p:g}", gain=gain,
                                           at=f" at {k}" if k else "", within=f" within the top {k}" if k else "")


def _params(measure: str, family: str, text: str | None) -> dict:
    params = {}
    if text is None or not text.strip():
        return params
    allowed = MEASURES[family].params
    for item in text.split(","):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or key not in allowed:
            names = ", ".join(sorted(allowed)) or "none"
            raise InputError(f"measure {measure!r}: unknown parameter {item.strip()!r} (allowed: {names})")
        params[key] = value.strip().strip("'\"")
    return params


def _trec_eval(measure: str) -> Measure | None:
    """A trec_eval name (``P_10``, ``map``, ...) as the measure ir_measures reads it, or None."""
    name = measure.strip()
    if name in _TREC_BARE:
        return Measure(_TREC_BARE[name], None)
    m = _TREC_CUT.match(name)
    if m is None:
        return None
    cutoff = int(m.group(2))
    if cutoff < 1:
        raise InputError(f"measure {measure!r}: the cutoff must be a positive integer")
    return Measure(_TREC_CUT_FAMILY[m.group(1)], cutoff)


def _did_you_mean(measure: str) -> str:
    """" (did you mean 'nDCG@20')" for a misspelt family name, keeping its parameters and cutoff."""
    import difflib

    m = _PATTERN.match(measure)
    name = m.group(1) if m else re.split(r"[@(_.]", measure, maxsplit=1)[0]
    families = list(MEASURES)
    close = difflib.get_close_matches(name.lower(), [f.lower() for f in families], n=1, cutoff=0.5)
    if not close or not name:
        return ""
    family = families[[f.lower() for f in families].index(close[0])]
    return f" (did you mean {family + measure[len(name):]!r})"


def _unknown(measure) -> InputError:
    names = ", ".join(f"{s.family}@k" if s.cutoff == "required" else s.family for s in MEASURES.values())
    return InputError(f"unknown measure {measure!r}{_did_you_mean(measure)}: expected an ir_measures name ({names}, with parameters "
                      "such as P(rel=2)@10, RBP(rel=1,p=0.8)@10, nDCG(dcg='exp-log2')@20) or a trec_eval name "
                      "(map, P_10, ndcg_cut_20, recip_rank, Rprec, recall_100)")


def parse_measure(measure) -> Measure:
    """Parse a measure name, or pass a `Measure` through.

    Accepts ir_measures names (``nDCG@20``, ``AP``, ``P(rel=2)@10``, ``RBP(rel=1,p=0.8)@10``,
    ``nDCG(dcg='exp-log2')@20``) and trec_eval names as ir_measures reads them (``map``,
    ``P_10``, ``ndcg_cut_20``, ``recip_rank``, ``Rprec``, ``recall_100``).

    Parameters
    ----------
    measure : str or Measure
        The name.

    Returns
    -------
    Measure
        Family, cutoff and parameters; ``str(measure)`` is the canonical (ir_measures) name.
    """
    if isinstance(measure, Measure):
        return measure
    if not isinstance(measure, str):
        raise InputError(f"`measure` must be a string such as 'nDCG@20', got {type(measure).__name__}")
    trec = _trec_eval(measure)
    if trec is not None:
        return trec
    m = _PATTERN.match(measure)
    family = _SPELLINGS.get(m.group(1).lower()) if m else None
    if family is None:
        raise _unknown(measure)
    spec = MEASURES[family]
    params = _params(measure, family, m.group(2))
    cutoff = None
    if m.group(3) is not None:
        try:
            cutoff = int(m.group(3))
        except ValueError:
            cutoff = -1
        if cutoff < 1:
            raise InputError(f"measure {measure!r}: the cutoff after '@' must be a positive integer")
        if spec.cutoff == "none":
            raise InputError(f"measure {measure!r}: {family} takes no cutoff")
    elif spec.cutoff == "required":
        raise InputError(f"measure {measure!r} needs a cutoff, e.g. {family}@10")
    kw = {}
    try:
        if "rel" in params:
            kw["rel"] = int(params["rel"])
            if kw["rel"] < 1:
                raise ValueError
        if "p" in params:
            kw["p"] = float(params["p"])
            if not 0.0 < kw["p"] < 1.0:
                raise ValueError
        if "residual" in params:
            flag = params["residual"].lower()
            if flag not in ("true", "false", "1", "0"):
                raise ValueError
            kw["residual"] = flag in ("true", "1")
    except ValueError:
        raise InputError(
            f"measure {measure!r}: `rel` must be a positive integer, `p` in (0, 1), `residual` True or False"
        ) from None
    if family == "nDCG":
        dcg = params.get("dcg", "log2")
        if dcg not in ("log2", "exp-log2"):
            raise InputError(f"measure {measure!r}: `dcg` must be 'log2' (trec_eval) or 'exp-log2' (gdeval)")
        if dcg == "exp-log2" and cutoff is None:
            raise InputError(f"measure {measure!r}: gdeval's nDCG needs a cutoff, e.g. nDCG(dcg='exp-log2')@20")
        kw["dcg"] = dcg
    return Measure(family, cutoff, **kw)


def measure_table() -> str:
    """The Markdown table of every measure family (the documentation builds it from here)."""
    rows = ["| ir_measures name | trec_eval name | definition |", "|---|---|---|"]
    for s in MEASURES.values():
        name = {"required": f"`{s.family}@k`", "none": f"`{s.family}`"}.get(s.cutoff, f"`{s.family}`, `{s.family}@k`")
        trec = ", ".join(f"`{t.strip()}`" for t in s.trec_eval.split(",")) if s.trec_eval else "—"
        rows.append(f"| {name} | {trec} | {s.summary.replace('``', '`')} |")
    return "\n".join(rows) + "\n"
