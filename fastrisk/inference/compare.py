"""`compare`: PyTerrier's ``pt.Experiment`` / ranx's ``compare`` table, with risk.

One row per system; for each measure its mean (the sum for the counts), the topics better and
worse than the baseline (``+``, ``-``), a paired test's p-value, the corrected p-value and the
rejection at ``level``, and URisk, TRisk and TRisk's p-value at each α. It lives in the
inference layer because it needs the measures (`evaluate`), the core (URisk/TRisk through the
all-baseline table) and the inference tests and corrections.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from fastrisk._runtime.validation import listing
from fastrisk.core.tables import baseline_table
from fastrisk.core.urisk import risk
from fastrisk.core.values import resolve_value
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.data.results import Result, array, param
from fastrisk.errors import InputError
from fastrisk.inference.multiple import adjust_pvalues, correction_name
from fastrisk.inference.paired import sign_test, wilcoxon_test
from fastrisk.inference.resampling import bootstrap, permutation_test
from fastrisk.measures.metrics import Evaluation, _known, evaluate

__all__ = ["CompareResult", "compare", "trisk_test"]

TESTS = ("t", "wilcoxon", "sign", "bootstrap", "permutation")
_TEST_ALIASES = {"t": "t", "ttest": "t", "t-test": "t", "student": "t", "wilcoxon": "wilcoxon", "sign": "sign",
                 "bootstrap": "bootstrap", "permutation": "permutation", "fisher": "permutation",
                 "randomization": "permutation"}
_LATEX_CHARS = "abcdefghijklmnopqrstuvwxyz"
_SUPERSCRIPT = dict(zip("abcdefghijklmnoprstuvwxyz", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ"))  # no superscript q


@dataclass(frozen=True, repr=False)
class CompareResult(Result):
    """Systems compared with one or more baselines on several measures, with risk.

    Arrays ``[measure, system]``: ``mean`` (the mean over topics; the sum for NumRet, NumRel,
    NumQ). ``[measure, system, baseline]``: ``better``/``worse`` (topics where the system scores
    above/below the baseline), ``statistic`` and ``pvalue`` of the paired ``test``,
    ``pvalue_adjusted`` (``correction`` over every comparison of a measure) and ``reject``
    (``pvalue_adjusted <= level``). ``[measure, alpha, system, baseline]``: ``urisk``,
    ``trisk``, ``trisk_pvalue``. ``values`` ``[measure, system, topic]`` the per-topic scores.
    The baseline against itself is NaN (never a member of the correction's family).

    `table` is ``pt.Experiment``'s wide table (one row per system, PyTerrier's column names plus
    the risk columns); `perquery` the per-topic long table in PyTerrier's or ir_measures'
    layout; `to_latex`/`to_markdown` ranx's report with superscript markers; `to_arrow` /
    `to_pandas` the long form (one row per measure, alpha, system, baseline).
    """

    _coords = {"measure": {"measure": "measures"}}
    _table = ("measure", "alpha", "system", "baseline")
    _constants = ("test", "correction")

    measures: tuple = param(doc="The measures compared, as named (the ``measure`` dim).")
    systems: tuple
    baselines: tuple
    topics: tuple
    alpha: np.ndarray
    loss_weight: np.ndarray
    test: str
    correction: str = param(doc="The multiple-comparison correction over every comparison of a measure (a statsmodels name).")
    level: float = param(doc="The significance level of ``reject``.")
    rounding: object = param(None, doc="Digits the tables round to (``round=``), or None.")
    mean: np.ndarray = array("measure", "system", default=None,
                             doc="mean over topics (sum for NumRet, NumRel, NumQ, as trec_eval)")
    better: np.ndarray = array("measure", "system", "baseline", default=None,
                               doc="topics where the system scores above the baseline (PyTerrier's '+')")
    worse: np.ndarray = array("measure", "system", "baseline", default=None,
                              doc="topics where the system scores below the baseline (PyTerrier's '-')")
    statistic: np.ndarray = array("measure", "system", "baseline", default=None)
    pvalue: np.ndarray = array("measure", "system", "baseline", default=None)
    pvalue_adjusted: np.ndarray = array("measure", "system", "baseline", default=None,
                                        doc="p-value after the correction over a measure's comparisons")
    reject: np.ndarray = array("measure", "system", "baseline", default=None,
                               doc="pvalue_adjusted <= level")
    urisk: np.ndarray = array("measure", "alpha", "system", "baseline", default=None)
    trisk: np.ndarray = array("measure", "alpha", "system", "baseline", default=None)
    trisk_pvalue: np.ndarray = array("measure", "alpha", "system", "baseline", default=None,
                                     doc="two-sided p-value of TRisk (Student t, c - 1 df)")
    values: np.ndarray = array("measure", "system", "topic", default=None, column="value",
                               doc="Per-topic score of each system on each measure (the ``perquery`` values).")

    # ------------------------------------------------------------------ tables
    def _round(self, measure: str, value):
        r = self.rounding
        digits = r.get(measure) if isinstance(r, dict) else r
        return value if digits is None else np.round(value, digits)

    def table(self, baseline=None) -> pa.Table:
        """``pt.Experiment``'s table: ``name``, each measure's mean, then per measure
        ``<m> +``, ``<m> -``, ``<m> p-value``, ``<m> reject``, ``<m> p-value corrected`` and per α
        ``<m> URisk(α=a)``, ``<m> TRisk(α=a)``, ``<m> TRisk p-value(α=a)``; against ``baseline``
        (default: the first of `baselines`). The baseline's own row has nulls there."""
        b = self._baseline_index(baseline)
        cols = {"name": pa.array(list(self.systems), pa.string())}
        for i, m in enumerate(self.measures):
            cols[m] = pa.array(self._round(m, self.mean[i]))
        self_row = self.systems.index(self.baselines[b]) if self.baselines[b] in self.systems else -1

        def masked(x, kind=None):
            x = np.asarray(x, dtype=kind) if kind is not None else np.asarray(x)
            mask = np.zeros(len(x), dtype=bool)
            if self_row >= 0:
                mask[self_row] = True
            return pa.array(x, mask=mask)

        for i, m in enumerate(self.measures):
            cols[f"{m} +"] = masked(self.better[i, :, b])
            cols[f"{m} -"] = masked(self.worse[i, :, b])
            cols[f"{m} p-value"] = masked(self.pvalue[i, :, b])
            cols[f"{m} reject"] = masked(self.reject[i, :, b])
            cols[f"{m} p-value corrected"] = masked(self.pvalue_adjusted[i, :, b])
            for a, alpha in enumerate(self.alpha):
                tag = f"(α={alpha:g})"
                cols[f"{m} URisk{tag}"] = masked(self.urisk[i, a, :, b])
                cols[f"{m} TRisk{tag}"] = masked(self.trisk[i, a, :, b])
                cols[f"{m} TRisk p-value{tag}"] = masked(self.trisk_pvalue[i, a, :, b])
        return pa.table(cols)

    def _baseline_index(self, baseline) -> int:
        if baseline is None:
            return 0
        if isinstance(baseline, (int, np.integer)) and not isinstance(baseline, bool):
            if 0 <= baseline < len(self.baselines):
                return int(baseline)
        elif str(baseline) in self.baselines:
            return self.baselines.index(str(baseline))
        raise InputError(f"`baseline` must be one of the compared baselines {list(self.baselines)} or its "
                         f"position, got {baseline!r}")

    def perquery(self, layout: str = "pyterrier") -> pa.Table:
        """The per-topic scores, long: PyTerrier's ``name, qid, measure, value``
        (``layout="pyterrier"``) or ir_measures' ``run_id, query_id, measure, value``
        (``layout="ir_measures"``)."""
        names = {"pyterrier": ("name", "qid"), "ir_measures": ("run_id", "query_id")}.get(layout)
        if names is None:
            raise InputError(f"`layout` must be 'pyterrier' or 'ir_measures', got {layout!r}")
        M, S, T = self.values.shape
        m_idx, s_idx, t_idx = (a.reshape(-1) for a in np.indices((M, S, T)))
        order = np.lexsort((t_idx, m_idx, s_idx))  # by system, then measure, then topic
        values = np.concatenate([self._round(m, self.values[i].reshape(-1)) for i, m in enumerate(self.measures)])
        return pa.table({names[0]: pa.array(np.asarray(self.systems, dtype=object)[s_idx[order]], pa.string()),
                         names[1]: pa.array(np.asarray(self.topics, dtype=object)[t_idx[order]], pa.string()),
                         "measure": pa.array(np.asarray(self.measures, dtype=object)[m_idx[order]], pa.string()),
                         "value": pa.array(values[order])})

    # ------------------------------------------------------------------ ranx's report
    def _markers(self, digits: int):
        """Per measure and system: the formatted mean, its superscript letters (the systems it is
        significantly better than: ``reject`` and a higher mean) and whether it is the best."""
        letters = {s: _LATEX_CHARS[i % 26] * (1 + i // 26) for i, s in enumerate(self.systems)}
        out = []
        for i, m in enumerate(self.measures):
            best = int(np.nanargmax(self.mean[i]))
            row = []
            for s, name in enumerate(self.systems):
                marks = []
                for b, base in enumerate(self.baselines):
                    if base == name or base not in letters:
                        continue
                    bi = self.systems.index(base)
                    if self.reject[i, s, b] and self.mean[i, s] > self.mean[i, bi]:
                        marks.append(letters[base])
                row.append((f"{self.mean[i, s]:.{digits}f}", "".join(sorted(marks)), s == best))
            out.append(row)
        return letters, out

    def to_latex(self, digits: int = 3, caption: str | None = None) -> str:
        """ranx's LaTeX report: one row per system (letter, name), each measure's mean in bold for
        the best and with superscript letters of the baselines it is significantly better than
        (corrected p <= ``level``), and a column of TRisk at each α against the first baseline."""
        letters, cells = self._markers(digits)
        b = 0
        heads = [m for m in self.measures] + [f"TRisk$_{{{a:g}}}$ {m}" for m in self.measures for a in self.alpha]
        lines = ["\\begin{table*}[ht]", "\\centering",
                 "\\caption{" + (caption or (f"Effectiveness and risk against {self.baselines[b]}. The best results "
                                             "are in boldface; superscripts denote significant improvements over "
                                             f"the lettered system ({self.test} test, {self.correction} correction, "
                                             f"$p \\le {self.level:g}$).")).replace("_", "\\_") + "}",
                 "\\begin{tabular}{c|l" + "|c" * len(heads) + "}", "\\toprule",
                 "\\textbf{\\#} & \\textbf{Model} & " + " & ".join(f"\\textbf{{{h.replace('_', '_')}}}"
                                                                   for h in heads) + " \\\\", "\\midrule"]
        for s, name in enumerate(self.systems):
            row = [letters[name], name.replace("_", "\\_")]
            for i in range(len(self.measures)):
                value, marks, best = cells[i][s]
                text = f"\\textbf{{{value}}}" if best else value
                row.append(text + (f"$^{{{marks}}}$" if marks else ""))
            for i in range(len(self.measures)):
                for a in range(len(self.alpha)):
                    t = self.trisk[i, a, s, b]
                    row.append("--" if np.isnan(t) else f"{t:.2f}")
            lines.append(" & ".join(row) + " \\\\")
        lines += ["\\bottomrule", "\\end{tabular}", "\\end{table*}"]
        return "\n".join(lines)

    def to_markdown(self, digits: int = 3) -> str:
        """ranx's report as Markdown: ``#``, ``Model``, each measure's mean with Unicode
        superscript letters of the systems it is significantly better than, then TRisk at each α
        against the first baseline."""
        letters, cells = self._markers(digits)
        heads = ["#", "Model", *self.measures, *(f"TRisk(α={a:g}) {m}" for m in self.measures for a in self.alpha)]
        lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
        for s, name in enumerate(self.systems):
            row = [letters[name], name]
            for i in range(len(self.measures)):
                value, marks, best = cells[i][s]
                text = f"**{value}**" if best else value
                row.append(text + "".join(_SUPERSCRIPT.get(c, c) for c in marks))
            for i in range(len(self.measures)):
                for a in range(len(self.alpha)):
                    t = self.trisk[i, a, s, 0]
                    row.append("–" if np.isnan(t) else f"{t:.2f}")
            lines.append("| " + " | ".join(row) + " |")
        return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- validation
def _compare_iv(test, correction, level, alpha, rounding, replicates):
    if callable(test):
        name = getattr(test, "__name__", type(test).__name__)
    elif isinstance(test, str) and test.lower() in _TEST_ALIASES:
        name = _TEST_ALIASES[test.lower()]
    else:
        raise InputError(f"`test` must be one of {', '.join(TESTS)} or a callable (system scores, baseline scores) "
                         f"-> (statistic, p-value) such as scipy.stats.ttest_rel, got {test!r}")
    correction = correction_name(correction if correction is not None else "none")
    if not (isinstance(level, numbers.Real) and 0 < level < 1):
        raise InputError(f"`level` must be a number in (0, 1), got {level!r}")
    vf = resolve_value(None, alpha=alpha, loss_weight=None)
    if rounding is not None and not (isinstance(rounding, numbers.Integral) and rounding >= 0) and not (
            isinstance(rounding, dict) and all(isinstance(v, numbers.Integral) for v in rounding.values())):
        raise InputError(f"`round` must be a number of digits or a {{measure: digits}} dict, got {rounding!r}")
    if not (isinstance(replicates, numbers.Integral) and replicates > 0):
        raise InputError(f"`replicates` must be a positive integer, got {replicates!r}")
    return name, correction, vf


def _baselines_iv(baseline, systems) -> list[int]:
    if baseline is None:
        return list(range(len(systems)))
    items = list(baseline) if isinstance(baseline, (list, tuple)) else [baseline]
    if not items:
        raise InputError("`baseline` must be a system (name or position), a list of them, or None (every system)")
    out = []
    for b in items:
        if isinstance(b, (int, np.integer)) and not isinstance(b, bool):
            if not -len(systems) <= b < len(systems):
                raise InputError(f"`baseline` position {b} is out of range for {len(systems)} systems")
            out.append(int(b) % len(systems))
        elif isinstance(b, str) and b in systems:
            out.append(systems.index(b))
        else:
            raise InputError(f"`baseline` {b!r} is not a system; systems: [{listing(list(systems), 10, repr)}]")
    if len(set(out)) != len(out):
        raise InputError(f"`baseline` names a system twice: {[systems[i] for i in out]}")
    return out


def _evaluation(runs, qrels, measures, names, no_relevant, threads) -> Evaluation:
    if isinstance(runs, Evaluation):
        if measures is None:
            return runs
        wanted = [measures] if isinstance(measures, str) else list(measures)
        mats = [runs[m] for m in wanted]
        return Evaluation(tuple(m.measure for m in mats), runs.systems, runs.topics,
                          np.stack([m.values for m in mats]), runs.no_relevant)
    if qrels is None:
        raise InputError("`qrels` is required unless `runs` is an Evaluation (e.g. Evaluation.from_pytrec_eval)")
    return evaluate(runs, qrels, measures if measures is not None else ("nDCG@20", "ERR@20"),
                    no_relevant=no_relevant, threads=threads, names=names)


# ---------------------------------------------------------------------- the tests
def _test_pvalues(test, name, matrix: ScoreMatrix, bases: list[int], replicates, rng):
    """``(statistic, pvalue)`` ``[system, baseline]`` of the paired test."""
    S, B = matrix.n_systems, len(bases)
    stat = np.full((S, B), np.nan)
    p = np.full((S, B), np.nan)
    V = matrix.values
    for j, b in enumerate(bases):
        if callable(test):
            for s in range(S):
                if s == b:
                    continue
                try:
                    out = test(V[s], V[b])
                    stat[s, j], p[s, j] = float(out[0]), float(out[1])
                except (TypeError, IndexError, ValueError) as exc:
                    raise InputError(f"`test` {name} must return (statistic, p-value) for two arrays of per-topic "
                                     f"scores, as scipy.stats.ttest_rel does; on system {matrix.systems[s]!r} "
                                     f"it raised or returned something else ({exc})") from None
            continue
        if name == "wilcoxon":
            res = wilcoxon_test(matrix, b, alpha=0)
        elif name == "sign":
            res = sign_test(matrix, b, alpha=0)
        elif name == "bootstrap":
            res = bootstrap(matrix, b, alpha=0, replicates=replicates, rng=rng, method="percentile",
                            keep_replicates=False)
        else:
            res = permutation_test(matrix, b, alpha=0, replicates=replicates, rng=rng, keep_replicates=False)
        stat[:, j], p[:, j] = res.statistic[0], res.pvalue[0]
        stat[b, j] = p[b, j] = np.nan
    return stat, p


def compare(runs, qrels=None, measures=None, *, baseline=0, alpha=(0, 1, 5), test="t", correction="holm",
            level: float = 0.05, names=None, round=None, replicates: int = 10000, rng=None,
            no_relevant: str = "skip", threads=None) -> CompareResult:
    """Compare systems with a baseline on several measures: PyTerrier's ``pt.Experiment`` and
    ranx's ``compare`` table, with URisk and TRisk at each α.

    For each measure and each (system, baseline) pair with per-topic scores r and b:
    ``+`` = #{i: r_i > b_i}, ``-`` = #{i: r_i < b_i}; the paired ``test``'s p-value; the
    ``correction`` over every comparison of the measure (all systems × all baselines, the
    baseline against itself left out), ``reject`` = corrected p <= ``level``; and, with
    x_i = d_i + α min(d_i, 0), d = r − b: URisk_α = mean(x) (Wang, Bennett & Collins-Thompson,
    SIGIR 2012), TRisk_α = URisk_α / (s_x / √c) with its two-sided Student-t p-value, c − 1
    df (Dinçer, Macdonald & Ounis, SIGIR 2014). The t test is TRisk at α = 0 (=
    ``scipy.stats.ttest_rel``), all from one all-baseline pass (`fastrisk.baseline_table`).

    Parameters
    ----------
    runs : runs, or Evaluation
        What `fastrisk.evaluate` reads (run files, PyTerrier result frames, ranx runs, ...), or an
        `Evaluation` (then ``qrels`` is not needed; e.g. `Evaluation.from_pytrec_eval`).
    qrels : qrels, optional
        What `fastrisk.evaluate` reads (a file, a frame, an ir_datasets id, ...).
    measures : sequence, optional
        ir_measures names or objects, trec_eval or ranx names (default nDCG@20 and ERR@20).
    baseline : str or int or list of them, or None
        The baseline system (name or position; default the first), several (each compared, all
        in the correction's family), or None: every system (ranx's all pairs).
    alpha : AlphaLike
        The α of the URisk/TRisk columns (default 0, 1, 5).
    test : {"t", "wilcoxon", "sign", "bootstrap", "permutation"} or callable
        The paired test of the p-value columns (`fastrisk.t_test`, `fastrisk.wilcoxon_test`,
        `fastrisk.sign_test`, `fastrisk.bootstrap` (percentile, shift), `fastrisk.permutation_test`),
        or, as PyTerrier accepts, any ``f(system_scores, baseline_scores) -> (statistic, p)``
        (``scipy.stats.ttest_rel``).
    correction : str or None
        statsmodels' ``multipletests`` name or alias (``"holm"``, ``"hs"``, ``"fdr_bh"``, ...;
        `fastrisk.adjust_pvalues`), or None.
    level : float
        The significance level of ``reject`` (PyTerrier's ``correction_alpha``, ranx's ``max_p``).
    names : sequence of str, optional
        System names (PyTerrier's ``names=``).
    round : int or dict, optional
        Digits of the means and per-topic values (PyTerrier's ``round=``; an int or
        ``{measure: digits}``).
    replicates, rng
        Of the bootstrap and permutation tests.
    no_relevant, threads
        As `fastrisk.evaluate`.

    Returns
    -------
    CompareResult
        ``table()`` (``pt.Experiment``'s layout), ``perquery()``, ``to_latex()`` and
        ``to_markdown()`` (ranx's report), ``to_arrow()``/``to_pandas()`` (long form).

    References
    ----------
    C. Macdonald, N. Tonellotto, S. MacAvaney & I. Ounis, "PyTerrier: declarative
    experimentation in Python from BM25 to dense retrieval", CIKM 2021. E. Bassani, "ranx: a
    blazing-fast Python library for ranking evaluation and comparison", ECIR 2022.
    L. Wang, P. N. Bennett & K. Collins-Thompson, SIGIR 2012. B. T. Dinçer, C. Macdonald &
    I. Ounis, "Hypothesis testing for the risk-sensitive evaluation of retrieval systems",
    SIGIR 2014.

    Examples
    --------
    >>> import warnings
    >>> import fastrisk
    >>> web = fastrisk.datasets.path("trec2012-web")
    >>> with warnings.catch_warnings():  # topics without a relevant document are left out, with a warning
    ...     warnings.simplefilter("ignore")
    ...     res = fastrisk.compare(web / "runs", web / "qrels.adhoc.txt", ["AP", "nDCG@20"], baseline=0,
    ...                            alpha=[0, 5], test="wilcoxon", correction="fdr_bh")
    >>> res.table().column_names[:7]
    ['name', 'AP', 'nDCG@20', 'AP +', 'AP -', 'AP p-value', 'AP reject']
    """
    name, correction, vf = _compare_iv(test, correction, level, alpha, round, replicates)
    ev = _evaluation(runs, qrels, measures, names, no_relevant, threads)
    if len(ev.topics) < 2:
        raise InputError(f"compare needs at least 2 scored topics, got {len(ev.topics)}")
    systems = tuple(ev.systems)
    bases = _baselines_iv(baseline, systems)
    alphas = np.asarray(vf.alpha, dtype=np.float64)
    table_alpha = alphas if (alphas == 0).any() else np.concatenate([[0.0], alphas])
    a0 = int(np.flatnonzero(table_alpha == 0)[0])
    keep = np.array([int(np.flatnonzero(table_alpha == a)[0]) for a in alphas])
    M, S, B, A = len(ev.measures), len(systems), len(bases), len(alphas)
    stat = np.empty((M, S, B))
    p = np.empty((M, S, B))
    urisk = np.empty((M, A, S, B))
    trisk = np.empty((M, A, S, B))
    tp = np.empty((M, A, S, B))
    better = np.empty((M, S, B), dtype=np.int64)
    worse = np.empty((M, S, B), dtype=np.int64)
    for i, m in enumerate(ev.measures):
        matrix = ScoreMatrix(ev.values[i], systems, ev.topics, measure=m)
        tab = baseline_table(matrix, "all" if B == S and bases == list(range(S)) else [systems[b] for b in bases],
                             alpha=table_alpha, threads=threads)
        pv = np.asarray(tab.pvalue)
        urisk[i], trisk[i], tp[i] = tab.urisk[keep], tab.trisk[keep], pv[keep]
        V = ev.values[i]
        d = V[:, None, :] - V[bases][None, :, :]
        better[i] = (d > 0).sum(axis=-1)
        worse[i] = (d < 0).sum(axis=-1)
        if callable(test) or name != "t":
            stat[i], p[i] = _test_pvalues(test, name, matrix, bases, replicates, rng)
        else:
            stat[i], p[i] = tab.trisk[a0], pv[a0]
    own = np.zeros((S, B), dtype=bool)
    own[bases, np.arange(B)] = True
    for arr in (stat, p):
        arr[:, own] = np.nan
    for arr in (urisk, trisk, tp):
        arr[:, :, own] = np.nan
    padj = np.asarray(adjust_pvalues(p.reshape(M, S * B), correction, level=level)).reshape(M, S, B)
    means = np.stack([_summary(m, ev.values[i]) for i, m in enumerate(ev.measures)])
    return CompareResult(measures=tuple(ev.measures), systems=systems, baselines=tuple(systems[b] for b in bases),
                         topics=tuple(ev.topics), alpha=alphas, loss_weight=1.0 + alphas, test=name,
                         correction=correction, level=float(level), rounding=round, mean=means, better=better,
                         worse=worse, statistic=stat, pvalue=p, pvalue_adjusted=padj,
                         reject=np.where(np.isnan(padj), False, padj <= level), urisk=urisk, trisk=trisk,
                         trisk_pvalue=tp, values=ev.values)


def _summary(name: str, values: np.ndarray) -> np.ndarray:
    m = _known(name)
    return m.summarise(values, axis=1) if m is not None else values.mean(axis=1)



class _TRiskTest:
    """``f(system_scores, baseline_scores) -> (TRisk, p)`` at one α (`trisk_test`)."""

    def __init__(self, alpha: float):
        self.alpha = alpha
        self.__name__ = f"trisk_test(alpha={alpha:g})"

    def __call__(self, system, baseline):
        try:
            r = np.asarray(system, dtype=np.float64)
            b = np.asarray(baseline, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError("trisk_test: the per-topic scores must be numbers") from None
        if r.ndim != 1 or r.shape != b.shape or r.size < 2:
            raise InputError(f"trisk_test: needs two 1-D arrays of per-topic scores of the same length >= 2, got "
                             f"shapes {r.shape} and {b.shape}")
        res = risk(ScoreMatrix(np.stack([r, b]), ("system", "baseline"), tuple(str(i) for i in range(r.size))),
                   "baseline", alpha=self.alpha)
        return float(res.trisk[0, 0]), float(res.pvalue[0, 0])

    def __repr__(self) -> str:
        return self.__name__


def trisk_test(*, alpha: float = 5.0):
    """A paired test for PyTerrier's ``pt.Experiment(..., test=fastrisk.trisk_test(alpha=5))``:
    TRisk at ``alpha`` and its p-value.

    ``pt.Experiment`` calls ``test(system_scores, baseline_scores)`` on the per-topic scores of a
    measure and reads ``[1]`` of the result as the p-value (``scipy.stats.ttest_rel``'s calling
    convention). This returns ``(TRisk_α, p)`` with x_i = d_i + α min(d_i, 0),
    d = system − baseline, TRisk_α = mean(x) / (s_x / √c) and p two-sided from Student's t with
    c − 1 df (at α = 0, ``scipy.stats.ttest_rel``'s), so the experiment table's p-value columns
    (and their correction) test risk-adjusted improvement.

    Parameters
    ----------
    alpha : float
        Risk sensitivity α >= 0 (a loss counts 1 + α times).

    Returns
    -------
    callable
        ``f(system_scores, baseline_scores) -> (TRisk, p)``.

    References
    ----------
    B. T. Dinçer, C. Macdonald & I. Ounis, "Hypothesis testing for the risk-sensitive
    evaluation of retrieval systems", SIGIR 2014.

    Examples
    --------
    >>> import fastrisk
    >>> t, p = fastrisk.trisk_test(alpha=5)([0.5, 0.4, 0.9, 0.3], [0.4, 0.5, 0.6, 0.2])
    >>> round(t, 4), round(p, 4)
    (-0.1267, 0.9072)
    """
    if not (isinstance(alpha, numbers.Real) and alpha >= 0 and np.isfinite(alpha)):
        raise InputError(f"`alpha` must be a number >= 0, got {alpha!r}")
    return _TRiskTest(float(alpha))
