"""The measures fastrisk computes: one record per measure family in `MEASURES`.

A record holds everything that names, parses, computes and explains a family: its
ir_measures name and accepted spellings, its parameters, its cutoff rule, the kernel code
(`fastrisk._kernels.metrics`), its trec_eval name, and the definition text that the
documentation table and the report's header show. `parse_measure` reads ir_measures
names (``nDCG@20``, ``P(rel=2)@10``, ``RBP(rel=1,p=0.8)@10``, ``SetF(beta=0.5)``, ``IPrec@0.5``,
``AP(judged_only=True)``) and trec_eval's names, as ``ir_measures.parse_trec_measure`` reads
them (``map``, ``P_10``, ``P.10``, ``ndcg_cut_20``, ``recip_rank``, ``Rprec``, ``recall_100``,
``map_cut_10``, ``ndcg``, ``bpref``, ``infAP``, ``success_10``, ``set_P``, ``set_relative_P``,
``set_recall``, ``set_F_0.5``, ``set_map``, ``iprec_at_recall_0.50``, ``num_ret``,
``num_rel_ret``, ``num_rel``, ``num_q``). A misspelt name gets a "did you mean" that is always a
measure; ir_measures' diversity measures are refused with the reason (no subtopic qrels).

Adding a measure means adding a record here and its branch in
``_kernels/metrics.measure_value``. See CONTRIBUTING.md.
"""

from __future__ import annotations

import difflib
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

    ``cutoff`` is ``"required"``, ``"optional"``, ``"none"`` or ``"recall"`` (IPrec: ``@`` gives a
    recall level). ``code`` gives the kernel code
    of a parsed `Measure`. ``summary`` is the documentation table's cell, and
    ``definition`` the report's sentence, a template over ``{k}``, ``{rel}``, ``{p}``,
    ``{gain}``, ``{at}`` and ``{within}``. ``aggregate`` is how a system's per-topic values
    summarise over topics: ``"mean"``, or ``"sum"`` for the counts (NumRet, NumRel, NumQ), as
    trec_eval's ``all`` line, ir_measures' ``calc_aggregate`` and PyTerrier sum them.
    """

    family: str
    spellings: tuple
    params: frozenset
    cutoff: str
    code: Callable
    trec_eval: str
    summary: str
    definition: str
    aggregate: str = "mean"


def _ndcg_code(m) -> int:
    if m.dcg == "exp-log2":
        return _km.NDCG
    return _km.NDCG_LIN if m.cutoff is not None else _km.NDCG_LIN_FULL


_REL = "relevant documents (grade ≥ {rel})"

#: The registry: ir_measures family name -> its record.
MEASURES: dict[str, MeasureSpec] = {s.family: s for s in (
    MeasureSpec("P", ("p",), frozenset({"rel", "judged_only"}), "required", lambda m: _km.P, "P_k",
                "relevant (grade >= ``rel``) in the top k, / k",
                "precision at {k}: " + _REL + " in the top {k}, divided by {k} (trec_eval P)"),
    MeasureSpec("R", ("r", "recall"), frozenset({"rel", "judged_only"}), "required", lambda m: _km.RECALL, "recall_k",
                "relevant in the top k / R",
                "recall at {k}: " + _REL + " in the top {k}, divided by R, the number of relevant documents "
                "(trec_eval recall)"),
    MeasureSpec("AP", ("ap", "map"), frozenset({"rel", "judged_only"}), "optional", lambda m: _km.AP, "map, map_cut_k",
                "sum of precision at each relevant rank (within k) / R",
                "average precision{at}: the sum of the precision at the rank of each relevant document "
                "(grade ≥ {rel})" + _WITHIN + ", divided by R, the number of relevant documents (trec_eval map)"),
    MeasureSpec("RR", ("rr", "mrr"), frozenset({"rel", "judged_only"}), "optional", lambda m: _km.RR, "recip_rank",
                "1 / rank of the first relevant (within k)",
                "reciprocal rank of the first relevant document (grade ≥ {rel})" + _WITHIN
                + " (trec_eval recip_rank)"),
    MeasureSpec("Rprec", ("rprec",), frozenset({"rel", "judged_only"}), "none", lambda m: _km.RPREC, "Rprec",
                "relevant in the top R / R",
                "R-precision: " + _REL + " in the top R, divided by R (trec_eval Rprec)"),
    MeasureSpec("nDCG", ("ndcg",), frozenset({"dcg", "judged_only"}), "optional", _ndcg_code, "ndcg, ndcg_cut_k",
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
    MeasureSpec("Bpref", ("bpref",), frozenset({"rel"}), "none", lambda m: _km.BPREF, "bpref",
                "judged-only: Σ over relevant of 1 - min(nonrelevant above, R) / min(N, R), / R "
                "(unjudged documents skipped)",
                "bpref (Buckley & Voorhees, SIGIR 2004): for each judged relevant document (grade ≥ {rel}), "
                "1 − min(n, R) / min(N, R) with n the judged non-relevant documents above it, N and R the "
                "judged non-relevant and relevant documents of the topic; summed, divided by R; unjudged "
                "documents are skipped (trec_eval bpref)"),
    MeasureSpec("infAP", ("infap",), frozenset({"rel"}), "none", lambda m: _km.INFAP, "infAP",
                "inferred AP: a qrels grade < 0 is pooled but unjudged (sampled out), absent is unpooled",
                "inferred average precision (Yilmaz & Aslam, CIKM 2006), trec_eval's estimator: at each judged "
                "relevant document (grade ≥ {rel}) at rank k, 1/k + (k−1)/k · (pooled above)/(k−1) · (relevant "
                "above + ε)/(judged above + 2ε), summed and divided by R; a qrels grade below 0 marks a pooled but "
                "unjudged document, a document absent from the qrels is unpooled (trec_eval infAP)"),
    MeasureSpec("Success", ("success",), frozenset({"rel", "judged_only"}), "required", lambda m: _km.SUCCESS,
                "success_k", "1 if a relevant document is in the top k",
                "success at {k}: 1 if a document with grade ≥ {rel} is in the top {k}, else 0 (trec_eval success)"),
    MeasureSpec("SetP", ("setp", "setrelp"), frozenset({"rel", "relative", "judged_only"}), "none",
                lambda m: _km.SET_REL_P if m.relative else _km.SET_P, "set_P, set_relative_P",
                "relevant retrieved / retrieved (``relative=True``: / min(retrieved, R))",
                "set precision: " + _REL + " retrieved, divided by {relative}"),
    MeasureSpec("SetR", ("setr",), frozenset({"rel"}), "none", lambda m: _km.SET_R, "set_recall",
                "relevant retrieved / R",
                "set recall: " + _REL + " retrieved, divided by R (trec_eval set_recall)"),
    MeasureSpec("SetF", ("setf",), frozenset({"rel", "beta", "judged_only"}), "none", lambda m: _km.SET_F,
                "set_F", "(β + 1) P R / (β P + R) of SetP and SetR (``beta``, default 1)",
                "set F (van Rijsbergen's E variant): (β + 1)·P·R / (β·P + R) with β = {beta}, P and R the set "
                "precision and recall of " + _REL + " (trec_eval set_F)"),
    MeasureSpec("SetAP", ("setap",), frozenset({"rel", "judged_only"}), "none", lambda m: _km.SET_AP, "set_map",
                "SetP × SetR: relevant retrieved² / (retrieved × R)",
                "unranked set AP: set precision × set recall of " + _REL + " (trec_eval set_map)"),
    MeasureSpec("IPrec", ("iprec",), frozenset({"rel", "judged_only"}), "recall", lambda m: _km.IPREC,
                "iprec_at_recall_r", "interpolated precision at recall r (``IPrec@0.5``): the best precision "
                "at or below the rank reaching ⌊r R + 0.9⌋ relevant",
                "interpolated precision at recall {recall}: the largest precision at any rank at or below the rank "
                "where ⌊{recall} · R + 0.9⌋ " + _REL + " are retrieved (trec_eval iprec_at_recall)"),
    MeasureSpec("NumRet", ("numret", "numrelret"), frozenset({"rel"}), "none",
                lambda m: _km.NUM_REL_RET if m.relevant_only else _km.NUM_RET, "num_ret, num_rel_ret",
                "documents retrieved (``rel=r``: relevant documents retrieved)",
                "number of documents retrieved{relevant_only} (trec_eval num_ret, num_rel_ret)", "sum"),
    MeasureSpec("NumRel", ("numrel",), frozenset({"rel"}), "none", lambda m: _km.NUM_REL, "num_rel",
                "R, the relevant documents in the qrels",
                "R, the number of " + _REL + " in the qrels (trec_eval num_rel)", "sum"),
    MeasureSpec("NumQ", ("numq",), frozenset(), "none", lambda m: _km.NUM_Q, "num_q",
                "1 per scored topic (its sum is the number of topics)", "1 for every scored topic (trec_eval num_q)",
                "sum"),
)}

_SPELLINGS = {sp: s.family for s in MEASURES.values() for sp in s.spellings}
_PATTERN = re.compile(r"^\s*([A-Za-z_]+)\s*(?:\((.*)\))?\s*(?:@\s*(\S+))?\s*$")
#: trec_eval's names as ``ir_measures.parse_trec_measure`` reads them (one measure each).
_TREC_BARE = {"map": "AP", "recip_rank": "RR", "Rprec": "Rprec", "ndcg": "nDCG", "bpref": "Bpref",
              "infAP": "infAP", "set_P": "SetP", "set_relative_P": "SetP(relative=True)", "set_recall": "SetR",
              "set_F": "SetF", "set_map": "SetAP", "num_ret": "NumRet", "num_rel_ret": "NumRet(rel=1)",
              "num_rel": "NumRel", "num_q": "NumQ"}
_TREC_CUT = re.compile(r"^(P|recall|map_cut|ndcg_cut|success)[._]([0-9]+)$")
_TREC_CUT_FAMILY = {"P": "P", "recall": "R", "map_cut": "AP", "ndcg_cut": "nDCG", "success": "Success"}
#: trec_eval's measures with a float parameter: set_F_<beta>, iprec_at_recall_<r>.
_TREC_FLOAT = re.compile(r"^(set_F|iprec_at_recall)[._]([0-9]+(?:\.[0-9]*)?)$")
#: ir_measures' measures fastrisk does not compute, and why (instead of a "did you mean").
_NOT_COMPUTED = {
    **{name.lower(): "a diversity measure: it needs subtopic (diversity) qrels, which fastrisk does not read"
       for name in ("alpha_nDCG", "alpha_DCG", "nERR_IA", "ERR_IA", "NRBP", "nNRBP", "AP_IA", "MAP_IA", "P_IA",
                    "StRecall", "nERR")},
    **{name.lower(): "not a measure of ir_measures' trec_eval or gdeval providers"
       for name in ("SDCG", "INST", "INSQ", "BPM", "Accuracy", "Compat", "NERR8", "NERR9", "NERR10", "NERR11")},
}


@dataclass(frozen=True)
class Measure:
    """A parsed measure: family, cutoff and parameters (see `parse_measure`).

    References
    ----------
    MacAvaney, S., Macdonald, C. & Ounis, I. (2022). Streamlining evaluation with ir-measures. ECIR 2022.

    Examples
    --------
    >>> import fastrisk
    >>> m = fastrisk.parse_measure('RBP(rel=1,p=0.8)@10')
    >>> m.family, m.cutoff, m.p
    ('RBP', 10, 0.8)
    """

    family: str
    cutoff: int | None
    rel: int = 1
    p: float = 0.8
    residual: bool = False
    dcg: str = "log2"
    max_grade: int = ERR_MAX_GRADE
    judged_only: bool = False
    beta: float = 1.0
    relative: bool = False
    recall: float | None = None
    relevant_only: bool = False

    @property
    def spec(self) -> MeasureSpec:
        return MEASURES[self.family]

    @property
    def aggregate(self) -> str:
        """``"sum"`` for a count (NumRet, NumRel, NumQ: trec_eval sums them over topics), else ``"mean"``."""
        return self.spec.aggregate

    def summarise(self, values, axis: int = -1):
        """The per-system summary of per-topic ``values`` along ``axis``: their sum for a count,
        else their mean (trec_eval's ``all`` line; ``NumQ`` sums to the number of topics)."""
        return values.sum(axis=axis) if self.aggregate == "sum" else values.mean(axis=axis)

    @property
    def code(self) -> int:
        return self.spec.code(self)

    @property
    def trec_judgments(self) -> bool:
        """Scored against judgments that keep a negative qrels grade apart (pooled but unjudged,
        trec_eval's ``form_res_rels.c``): bpref, infAP and the ``judged_only`` measures."""
        return self.family in ("Bpref", "infAP") or self.judged_only

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
        elif self.family == "NumRet":
            if self.relevant_only:
                params.append(f"rel={self.rel}")
        elif "rel" in self.spec.params and self.rel != 1:
            params.append(f"rel={self.rel}")
        if self.family == "nDCG" and self.dcg != "log2":
            params.append(f"dcg='{self.dcg}'")
        if self.relative:
            params.append("relative=True")
        if self.family == "SetF" and self.beta != 1.0:
            params.append(f"beta={self.beta:g}")
        if self.judged_only:
            params.append("judged_only=True")
        base = self.family + (f"({','.join(params)})" if params else "")
        if self.recall is not None:
            return f"{base}@{float(self.recall)!r}"
        return base if self.cutoff is None else f"{base}@{self.cutoff}"

    def __str__(self) -> str:
        return self.name

    def depth(self, run_depth: int) -> int:
        """Number of ranks the measure looks at (without a cutoff: the whole run)."""
        return self.cutoff if self.cutoff is not None else max(int(run_depth), 1)

    def kernel_args(self):
        """``(code, p, rel, max_grade, residual)``; ``p`` carries SetF's beta and IPrec's recall."""
        p = self.beta if self.family == "SetF" else self.recall if self.family == "IPrec" else self.p
        return self.code, float(p), int(self.rel), int(self.max_grade), bool(self.residual)

    def definition(self) -> str:
        """The report's one-sentence definition of this measure."""
        k = self.cutoff
        gain = ("gain 2^grade − 1 (gdeval, TREC Web track)" if self.dcg == "exp-log2"
                else "gain = grade (trec_eval ndcg_cut)")
        text = self.spec.definition.format(
            k=k, rel=self.rel, p=f"{self.p:g}", gain=gain, beta=f"{self.beta:g}", recall=f"{self.recall:g}"
            if self.recall is not None else "", at=f" at {k}" if k else "", within=f" within the top {k}" if k else "",
            relative="min(number retrieved, R) (trec_eval set_relative_P)" if self.relative
            else "the number retrieved (trec_eval set_P)",
            relevant_only=f" with grade ≥ {self.rel}" if self.relevant_only else "")
        if self.judged_only:
            text += "; unjudged documents are removed from the ranking first (condensed list, trec_eval -J)"
        return text


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
    """A trec_eval name (``P_10``, ``map``, ``bpref``, ``set_F_0.5``, ...) as the measure
    ``ir_measures.parse_trec_measure`` reads it, or None."""
    name = measure.strip()
    if name in _TREC_BARE:
        return _parse_ir(_TREC_BARE[name], measure)
    m = _TREC_CUT.match(name)
    if m is not None:
        cutoff = int(m.group(2))
        if cutoff < 1:
            raise InputError(f"measure {measure!r}: the cutoff must be a positive integer")
        return Measure(_TREC_CUT_FAMILY[m.group(1)], cutoff)
    m = _TREC_FLOAT.match(name)
    if m is not None:
        value = m.group(2)
        return _parse_ir(f"SetF(beta={value})" if m.group(1) == "set_F" else f"IPrec@{value}", measure)
    if name in ("success", "iprec_at_recall"):
        raise InputError(f"measure {measure!r} stands for several measures in trec_eval; name one, e.g. "
                         + ("success_10 (Success@10)" if name == "success" else "iprec_at_recall_0.50 (IPrec@0.5)"))
    return None


def _did_you_mean(measure: str) -> str:
    """" (did you mean 'nDCG@20')" for a misspelt family name, keeping its parameters and cutoff
    when the result parses, else only the family's name: a suggestion is always a measure."""
    m = _PATTERN.match(measure)
    name = m.group(1) if m else re.split(r"[@(_.]", measure, maxsplit=1)[0]
    families = list(MEASURES)
    close = difflib.get_close_matches(name.lower(), [f.lower() for f in families], n=1, cutoff=0.5)
    if not close or not name:
        return ""
    spec = MEASURES[families[[f.lower() for f in families].index(close[0])]]
    for suggestion in (spec.family + measure.strip()[len(name):], _example(spec)):
        try:
            _parse_ir(suggestion, suggestion, suggest=False)
        except InputError:
            continue
        return f" (did you mean {suggestion!r})"
    return ""


def _example(spec: MeasureSpec) -> str:
    return spec.family + {"required": "@10", "recall": "@0.5"}.get(spec.cutoff, "")


def _unknown(measure, suggest: bool = True) -> InputError:
    m = _PATTERN.match(measure)
    why = _NOT_COMPUTED.get(m.group(1).lower()) if m else None
    if why is not None:
        return InputError(f"measure {measure!r} is not computed by fastrisk: {why}")
    names = ", ".join(_example(s).replace("@10", "@k").replace("@0.5", "@r") for s in MEASURES.values())
    hint = _did_you_mean(measure) if suggest else ""
    return InputError(f"unknown measure {measure!r}{hint}: expected an ir_measures name ({names}, with parameters "
                      "such as P(rel=2)@10, RBP(rel=1,p=0.8)@10, nDCG(dcg='exp-log2')@20, SetF(beta=0.5), "
                      "AP(judged_only=True)) or a trec_eval name "
                      "(map, P_10, ndcg_cut_20, recip_rank, Rprec, recall_100, bpref, infAP, success_10, set_F, "
                      "iprec_at_recall_0.50, num_rel_ret)")


def _flag(value: str) -> bool:
    flag = value.lower()
    if flag not in ("true", "false", "1", "0"):
        raise ValueError
    return flag in ("true", "1")


def _values(params: dict) -> dict:
    """The parameters' values, checked; ValueError for a bad one."""
    kw = {}
    if "rel" in params:
        kw["rel"] = int(params["rel"])
        if kw["rel"] < 1:
            raise ValueError
    if "p" in params:
        kw["p"] = float(params["p"])
        if not 0.0 < kw["p"] < 1.0:
            raise ValueError
    if "beta" in params:
        kw["beta"] = float(params["beta"])
        if not kw["beta"] >= 0.0:
            raise ValueError
    for flag in ("residual", "judged_only", "relative"):
        if flag in params:
            kw[flag] = _flag(params[flag])
    return kw


def parse_measure(measure) -> Measure:
    """Parse a measure name, or pass a `Measure` through.

    Accepts ir_measures names (``nDCG@20``, ``AP``, ``P(rel=2)@10``, ``RBP(rel=1,p=0.8)@10``,
    ``nDCG(dcg='exp-log2')@20``, ``Bpref``, ``SetF(beta=0.5)``, ``IPrec@0.5``,
    ``AP(judged_only=True)``) and trec_eval names as ir_measures reads them (``map``,
    ``P_10``, ``ndcg_cut_20``, ``recip_rank``, ``Rprec``, ``recall_100``, ``bpref``,
    ``success_10``, ``set_F_0.5``, ``iprec_at_recall_0.50``, ``num_rel_ret``), ir_measures'
    measure objects (``from ir_measures import nDCG; nDCG@10``) and ``Metric`` tuples by their
    canonical name, and ranx's metric names where a fastrisk measure computes ranx's definition
    (``ranx.metrics``): ``precision@k`` = P@k, ``precision`` = SetP, ``recall@k`` = R@k,
    ``recall`` = SetR, ``hit_rate@k`` = Success@k, ``r-precision`` = Rprec, ``mrr[@k]`` = RR[@k],
    ``map[@k]`` = AP[@k], ``ndcg[@k]`` = nDCG[@k] (linear gain), ``ndcg_burges@k`` =
    nDCG(dcg='exp-log2')@k, and ``-l<r>`` = ``rel=r``. ranx's ``hits``, ``f1``, ``dcg``,
    ``dcg_burges``, ``rbp.95`` (graded), ``ndcg-l2`` and ``bpref-l2`` (negative grades and
    lower levels count as judged non-relevant) are refused with the reason; plain ``bpref`` is
    trec_eval's.

    Parameters
    ----------
    measure : str or Measure or ir_measures measure
        The name.

    Returns
    -------
    Measure
        Family, cutoff and parameters; ``str(measure)`` is the canonical (ir_measures) name.

    References
    ----------
    MacAvaney, S., Macdonald, C. & Ounis, I. (2022). Streamlining evaluation with ir-measures. ECIR 2022.

    Examples
    --------
    >>> import fastrisk
    >>> fastrisk.parse_measure('nDCG@20').cutoff
    20
    >>> fastrisk.parse_measure('P.10').family
    'P'
    """
    if isinstance(measure, Measure):
        return measure
    if not isinstance(measure, str):
        measure = _ir_measures_name(measure)
    trec = _trec_eval(measure)
    if trec is not None:
        return trec
    ranx = _ranx(measure)
    if ranx is not None:
        return ranx
    return _parse_ir(measure, measure)


def _ir_measures_name(obj) -> str:
    """The canonical name of an ir_measures measure object (``nDCG@10``, ``P(rel=2)@5``) or of
    the measure of an ir_measures ``Metric`` tuple (``Metric(query_id, measure, value)``)."""
    mod = type(obj).__module__ or ""
    if mod.startswith("ir_measures") and hasattr(obj, "measure") and hasattr(obj, "query_id"):
        obj = obj.measure  # a Metric tuple: its measure
        mod = type(obj).__module__ or ""
    if mod.startswith("ir_measures") and hasattr(obj, "NAME"):
        return str(obj)
    try:
        shown = repr(obj)
    except Exception:  # noqa: BLE001 - any object may be passed; its type is named instead
        shown = "?"
    raise InputError(f"`measure` must be a name such as 'nDCG@20', an ir_measures measure (nDCG@10) or an "
                     f"ir_measures Metric, got {type(obj).__name__} {shown[:60]}")


#: ranx's metric names (``ranx.metrics.metric_switch``, ``meta.evaluate.extract_metric_and_params``:
#: ``name[@k][-l<rel>]``, RBP ``rbp.95``) -> the fastrisk family whose definition equals ranx's code,
#: with the rule for a missing k; None: refused, with why.
_RANX = re.compile(r"^(bpref-l[0-9]+|hits|hit_rate|precision|recall|f1|r-precision|mrr|map|dcg|dcg_burges|ndcg|ndcg_burges|bpref|"
                   r"rbp\.[0-9]+)(?:@([0-9]+))?(?:-l([0-9]+))?$")
_RANX_FAMILY = {"precision": ("P", "SetP"), "recall": ("R", "SetR"), "hit_rate": ("Success", None),
                "r-precision": (None, "Rprec"), "mrr": ("RR", "RR"), "map": ("AP", "AP"), "ndcg": ("nDCG", "nDCG"),
                "ndcg_burges": ("nDCG(dcg='exp-log2')", None), "bpref": (None, "Bpref")}
_RANX_REFUSED = {
    "hits": "ranx's hits is a count of relevant documents in the top k, not a fastrisk measure (P@k is hits / k)",
    "f1": "ranx's f1@k (F1 of precision and recall at k) is not a fastrisk measure (SetF is the unranked set F)",
    "dcg": "ranx's dcg is not normalised; fastrisk computes nDCG (ranx's ndcg)",
    "dcg_burges": "ranx's dcg_burges is not normalised; fastrisk computes nDCG(dcg='exp-log2')@k (ranx's "
                  "ndcg_burges@k)",
    "bpref": "ranx's bpref counts a negative grade as judged non-relevant (and a grade below the level as "
             "non-relevant at -l2), where trec_eval's bpref (fastrisk's Bpref) reads a negative grade as pooled but "
             "unjudged; on qrels without negative grades Bpref equals ranx's bpref",
    "rbp": "ranx's rbp weights each document by its grade; fastrisk's RBP (ir_measures', Moffat & Zobel) is binary "
           "at grade >= rel: write RBP(rel=1,p=0.8) if that is what you mean",
}


def _ranx(measure: str) -> Measure | None:
    """A ranx metric name (``precision@10``, ``recall@100``, ``r-precision``, ``hit_rate@10``,
    ``mrr``, ``map@100``, ``ndcg@10``, ``ndcg_burges@10``, a ``-l2`` relevance-level
    suffix; ``rbp.95``, and not ``rbp@k``, which is ir_measures' RBP@k) as the fastrisk measure that computes ranx's definition, or None if ``measure`` is not
    in ranx's syntax. ranx's names without an equal fastrisk measure are refused, saying why."""
    m = _RANX.match(measure.strip())
    if m is None:
        return None
    name, k, rel = m.group(1), m.group(2), m.group(3)
    if name.startswith("rbp."):  # ranx's persistence form; ``rbp@k`` stays ir_measures' RBP@k
        name = "rbp"
    if name.startswith("bpref"):  # plain ``bpref`` is trec_eval's name (read above); ``bpref-l2`` is ranx's
        name = "bpref"
    if name in _RANX_REFUSED:
        raise InputError(f"measure {measure!r} (ranx) is not computed by fastrisk: {_RANX_REFUSED[name]}")
    with_k, without_k = _RANX_FAMILY[name]
    family = with_k if k is not None else without_k
    if family is None:
        raise InputError(f"measure {measure!r} (ranx): " + (
            "ranx's hit_rate needs a cutoff in fastrisk, e.g. hit_rate@10 (Success@10)" if name == "hit_rate" else
            f"ranx's {name} takes no cutoff" if k is not None else
            "ranx's ndcg_burges without a cutoff has no fastrisk equal; give one, e.g. ndcg_burges@10"))
    if k is not None and int(k) < 1:
        raise InputError(f"measure {measure!r}: the cutoff after '@' must be a positive integer")
    if rel is not None and int(rel) != 1:
        if name in ("ndcg", "ndcg_burges"):
            raise InputError(f"measure {measure!r} (ranx): ranx's {name} at relevance level {rel} removes documents "
                             "graded below it from the gains and the ideal; fastrisk's nDCG has no such level")
        if int(rel) < 1:
            raise InputError(f"measure {measure!r}: the relevance level after '-l' must be a positive integer")
        family = (family[:-1] + f",rel={rel})") if family.endswith(")") else f"{family}(rel={rel})"
    return _parse_ir(family + (f"@{int(k)}" if k is not None else ""), measure)


def _parse_ir(text: str, measure: str, suggest: bool = True) -> Measure:
    """An ir_measures name; errors quote ``measure`` (what the user wrote)."""
    m = _PATTERN.match(text)
    family = _SPELLINGS.get(m.group(1).lower()) if m else None
    if family is None:
        raise _unknown(measure, suggest)
    spec = MEASURES[family]
    params = _params(measure, family, m.group(2))
    if m.group(1).lower() == "setrelp":
        params.setdefault("relative", "True")
    if m.group(1).lower() == "numrelret":
        params.setdefault("rel", "1")
    cutoff = recall = None
    if m.group(3) is not None:
        if spec.cutoff == "recall":
            try:
                recall = float(m.group(3))
            except ValueError:
                recall = -1.0
            if not 0.0 <= recall <= 1.0:
                raise InputError(f"measure {measure!r}: the recall level after '@' must be a number in [0, 1]")
        else:
            try:
                cutoff = int(m.group(3))
            except ValueError:
                cutoff = -1
            if cutoff < 1:
                raise InputError(f"measure {measure!r}: the cutoff after '@' must be a positive integer")
            if spec.cutoff == "none":
                raise InputError(f"measure {measure!r}: {family} takes no cutoff")
    elif spec.cutoff in ("required", "recall"):
        needs = "a recall level" if spec.cutoff == "recall" else "a cutoff"
        raise InputError(f"measure {measure!r} needs {needs}, e.g. {_example(spec)}")
    try:
        kw = _values(params)
    except ValueError:
        raise InputError(
            f"measure {measure!r}: `rel` must be a positive integer, `p` in (0, 1), `beta` >= 0, `residual`, "
            "`judged_only` and `relative` True or False"
        ) from None
    if family == "NumRet":
        kw["relevant_only"] = "rel" in params
    if family == "nDCG":
        dcg = params.get("dcg", "log2")
        if dcg not in ("log2", "exp-log2"):
            raise InputError(f"measure {measure!r}: `dcg` must be 'log2' (trec_eval) or 'exp-log2' (gdeval)")
        if dcg == "exp-log2" and cutoff is None:
            raise InputError(f"measure {measure!r}: gdeval's nDCG needs a cutoff, e.g. nDCG(dcg='exp-log2')@20")
        if dcg == "exp-log2" and kw.get("judged_only"):
            raise InputError(f"measure {measure!r}: judged_only is trec_eval's (-J); gdeval's nDCG has no such option")
        kw["dcg"] = dcg
    return Measure(family, cutoff, recall=recall, **kw)


def measure_table() -> str:
    """The Markdown table of every measure family (the documentation builds it from here)."""
    rows = ["| ir_measures name | trec_eval name | definition |", "|---|---|---|"]
    for s in MEASURES.values():
        name = {"required": f"`{s.family}@k`", "none": f"`{s.family}`", "recall": f"`{s.family}@r`"}.get(
            s.cutoff, f"`{s.family}`, `{s.family}@k`")
        trec = ", ".join(f"`{t.strip()}`" for t in s.trec_eval.split(",")) if s.trec_eval else "—"
        rows.append(f"| {name} | {trec} | {s.summary.replace('``', '`')} |")
    return "\n".join(rows) + "\n"
